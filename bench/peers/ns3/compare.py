#!/usr/bin/env python3
"""Side-by-side runs of cnsim and ns-3 on study A's drop-tail scenario.

    python bench/peers/ns3/compare.py [--seeds N] [--repeats R] [--json OUT]
                                      [--cnsim PATH] [--duration T]

What it does:

1. creates ``bench/peers/ns3/.venv`` if missing and installs the ns-3 wheel
   from PyPI into it (``pip install --no-deps ns3==3.44.post0``: headers and
   shared libraries only, no Python bindings are used);
2. compiles ``drop_tail.cc`` (the ns-3 program equivalent to
   ``scenarios/baseline/no_cm.toml``) with the system ``g++`` against the
   wheel, caching the binary as ``bench/peers/ns3/drop_tail`` and rebuilding
   it when the source is newer;
3. for each seed 1..N, R times, runs ns-3's program and then cnsim
   (``cnsim run scenarios/baseline/no_cm.toml --seed S --out TMP -q``), so
   the two engines alternate (ns-3, cnsim, ns-3, cnsim, ...) and drift in
   the machine's speed hits both alike;
4. checks that the engines agree, seed by seed: frames dropped at CORE's
   port toward S1 and in total within 5%, throughput delivered to S1 and S2
   within 2%. The engines draw from different random streams, so they
   agree statistically, not frame by frame;
5. prints a table per seed and engine: run time measured inside the program
   (ns-3: ``Simulator::Run()`` under std::chrono::steady_clock; cnsim: the
   summary's ``wall_time_s``), whole-process wall time, events executed,
   drops, throughputs; then the speed ratio ns-3/cnsim, the median over the
   interleaved pairs of the per-pair ratios (once for in-program time, once
   for process time). If the engines disagree, the ratio is withheld and the
   exit status is 1.

Throughput to a sink is cnsim's ``Result.flows.delivered_gbps`` rule applied
to all flows to that sink: delivered bytes (1500 B frames on the wire) over
the span from the 100 us bin of the first delivery to the bin of the last,
both included. For cnsim it is computed from ``summary.json`` (flows'
``delivered_bytes``, ``first_delivery_ps``, ``last_delivery_ps``, ``bin_s``);
ns-3's program computes the same.

The ns-3 build is the PyPI wheel: its libraries have logging and asserts
compiled in (an upstream optimized build runs the same program faster).
cnsim runs with its default invariant checks on.

Exit status: 0 the engines agree; 1 they disagree (or a run's outputs change
between repeats); 2 setup or a run failed.

``--json OUT`` writes (schema 1)::

    {
      "schema": 1,
      "scenario": "scenarios/baseline/no_cm.toml",
      "duration": "100ms" | null,          # null: the scenario's own (100 ms)
      "seeds": [1, 2, ...], "repeats": R,
      "tolerances": {"drops": 0.05, "throughput": 0.02},
      "ns3":   {"version": "3.44", "build": "...", "binary": "..."},
      "cnsim": {"executable": "...", "version": "...", "engine_id": "..."},
      "runs": [                           # in the order run, interleaved
        {"seed": 1, "repeat": 0, "engine": "ns-3" | "cnsim",
         "run_wall_s": float, "process_wall_s": float, "events": int,
         "drops_core_s1": int, "drops_total": int,
         "throughput_gbps_s1": float, "throughput_gbps_s2": float}, ...
      ],
      "per_seed": [                        # medians of the wall times over repeats
        {"seed": 1, "ns-3": {<run fields>}, "cnsim": {<run fields>},
         "rel_diff": {"drops_core_s1": f, "drops_total": f,
                      "throughput_gbps_s1": f, "throughput_gbps_s2": f},
         "agree": bool}, ...
      ],
      "means": {"ns-3": {...}, "cnsim": {...}, "rel_diff": {...}},  # over seeds
                                           # (events and the four compared fields)
      "agree": bool,
      "problems": ["..."],                 # why not, if not
      "ratio": {"pairs": n,                # null when the engines disagree
                "run_wall_median": f, "run_wall_min": f, "run_wall_max": f,
                "process_wall_median": f} | null
    }

``rel_diff`` is (ns-3 - cnsim) / cnsim.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
VENV = HERE / ".venv"
SOURCE = HERE / "drop_tail.cc"
BINARY = HERE / "drop_tail"
SCENARIO_REL = "scenarios/baseline/no_cm.toml"
SCENARIO = REPO / SCENARIO_REL

NS3_REQUIREMENT = "ns3==3.44.post0"
NS3_VERSION = "3.44"
NS3_BUILD = (
    f"PyPI wheel {NS3_REQUIREMENT} (libraries with logging and asserts compiled in); drop_tail.cc compiled with g++ -O2"
)
NS3_LIBS = ["applications", "internet", "point-to-point", "traffic-control", "network", "core"]

TOL_DROPS = 0.05
TOL_THROUGHPUT = 0.02
FIELDS = ["drops_core_s1", "drops_total", "throughput_gbps_s1", "throughput_gbps_s2"]
TOLERANCE = {
    "drops_core_s1": TOL_DROPS,
    "drops_total": TOL_DROPS,
    "throughput_gbps_s1": TOL_THROUGHPUT,
    "throughput_gbps_s2": TOL_THROUGHPUT,
}
RUN_TIMEOUT_S = 1800
CNSIM_ATTEMPTS = 3
CNSIM_RETRY_WAIT_S = 60


class SetupError(Exception):
    pass


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- ns-3: wheel and program -------------------------------------------------


def ns3_prefix() -> Path | None:
    """The wheel's ``ns3`` folder (headers and libraries) in the venv, if installed."""
    for site in sorted(VENV.glob("lib/python3*/site-packages")):
        prefix = site / "ns3"
        if (prefix / "include" / "ns3" / "simulator.h").is_file() and (prefix / "lib64").is_dir():
            return prefix
    return None


def ensure_ns3() -> Path:
    prefix = ns3_prefix()
    if prefix is not None:
        return prefix
    python = VENV / "bin" / "python"
    if not python.exists():
        log(f"creating {VENV}")
        r = subprocess.run([sys.executable, "-m", "venv", str(VENV)], capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise SetupError(f"python -m venv failed:\n{r.stderr}")
    log(f"installing {NS3_REQUIREMENT} (--no-deps: headers and libraries for C++ use)")
    r = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", NS3_REQUIREMENT],
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        raise SetupError(
            f"pip install {NS3_REQUIREMENT} failed (the wheel is for CPython 3.11 on x86_64 Linux; "
            f"{VENV} was made with {sys.executable}):\n{r.stdout}{r.stderr}"
        )
    prefix = ns3_prefix()
    if prefix is None:
        raise SetupError(f"{NS3_REQUIREMENT} installed but no ns3/include or ns3/lib64 under {VENV}")
    return prefix


def compile_command(prefix: Path) -> list[str]:
    inc, lib = prefix / "include", prefix / "lib64"
    return (
        ["g++", "-std=c++20", "-O2"]
        # The defines the wheel's libraries were built with.
        + ["-DNS3_BUILD_PROFILE_RELEASE", "-DNS3_LOG_ENABLE", "-DNS3_ASSERT_ENABLE"]
        + [f"-I{inc}", str(SOURCE), "-o", str(BINARY), f"-L{lib}", f"-Wl,-rpath,{lib}"]
        + [f"-lns{NS3_VERSION}-{m}" for m in NS3_LIBS]
    )


def ensure_binary(prefix: Path) -> Path:
    if BINARY.exists() and BINARY.stat().st_mtime >= SOURCE.stat().st_mtime:
        return BINARY
    if shutil.which("g++") is None:
        raise SetupError("g++ not found (install the system C++ compiler, e.g. apt-get install g++)")
    cmd = compile_command(prefix)
    log("compiling " + SOURCE.name + ": " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        BINARY.unlink(missing_ok=True)
        raise SetupError(f"compiling {SOURCE.name} failed:\n{r.stderr}")
    return BINARY


# --- runs --------------------------------------------------------------------


def run_ns3(binary: Path, seed: int, duration: str | None) -> dict:
    cmd = [str(binary), "--seed", str(seed)]
    if duration:
        cmd += ["--duration", duration]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=RUN_TIMEOUT_S)
    process_wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SetupError(f"ns-3 run (seed {seed}) failed with status {r.returncode}:\n{r.stderr}")
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SetupError(f"ns-3 run (seed {seed}) printed no JSON line:\n{r.stdout}{r.stderr}")
    out = json.loads(lines[-1])
    if out.get("reverse_frames", 0) != 0:
        raise SetupError(
            f"ns-3 run (seed {seed}): {out['reverse_frames']} frames went against the traffic's direction, "
            "so folding the switch latency into the links' delay is not exact"
        )
    return {
        "engine": "ns-3",
        "run_wall_s": out["run_wall_s"],
        "process_wall_s": process_wall,
        "events": out["events"],
        "drops_core_s1": out["drops_core_s1"],
        "drops_total": out["drops_total"],
        "throughput_gbps_s1": out["throughput_gbps_s1"],
        "throughput_gbps_s2": out["throughput_gbps_s2"],
    }


def sink_throughput(summary: dict, sink: str) -> float:
    """cnsim's per-flow delivered_gbps rule (results.py ``_active_rate``) over all flows to ``sink``."""
    flows = [f for f in summary["flows"] if f["dst"] == sink and f["delivered_frames"] > 0]
    if not flows:
        return 0.0
    bin_ps = round(summary["bin_s"] * 1e12)
    last_bin = summary["n_bins"] - 1
    first = min(min(f["first_delivery_ps"] for f in flows) // bin_ps, last_bin)
    last = min(max(f["last_delivery_ps"] for f in flows) // bin_ps, last_bin)
    span_s = (last - first + 1) * bin_ps * 1e-12
    return sum(f["delivered_bytes"] for f in flows) * 8 / span_s / 1e9


def run_cnsim(cnsim: str, seed: int, duration: str | None, info: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="cnsim-vs-ns3-") as tmp:
        out_dir = Path(tmp) / "run"
        cmd = [cnsim, "run", str(SCENARIO), "--seed", str(seed), "--out", str(out_dir), "-q"]
        if duration:
            cmd += ["--set", f"duration={duration}"]
        for attempt in range(1, CNSIM_ATTEMPTS + 1):
            t0 = time.perf_counter()
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=RUN_TIMEOUT_S, cwd=REPO)
                failure = None if r.returncode == 0 else f"status {r.returncode}:\n{r.stderr}"
            except OSError as e:  # e.g. the executable is being replaced
                failure = str(e)
            process_wall = time.perf_counter() - t0
            if failure is None:
                break
            if attempt == CNSIM_ATTEMPTS:
                raise SetupError(f"cnsim run (seed {seed}) failed: {failure}")
            log(f"cnsim run (seed {seed}) failed ({failure.strip()}); retrying in {CNSIM_RETRY_WAIT_S} s")
            time.sleep(CNSIM_RETRY_WAIT_S)
        summary = json.loads((out_dir / "summary.json").read_text())
    if summary.get("partial"):
        raise SetupError(f"cnsim run (seed {seed}) stopped early: {summary['partial']}")
    info.setdefault("version", summary.get("cnsim_version"))
    info.setdefault("engine_id", summary.get("engine_id"))
    queues = {q["name"]: q for q in summary["queues"]}
    return {
        "engine": "cnsim",
        "run_wall_s": summary["wall_time_s"],
        "process_wall_s": process_wall,
        "events": summary["events"],
        "drops_core_s1": queues["CORE->S1"]["drops_frames"],
        "drops_total": summary["totals"]["dropped_frames"],
        "throughput_gbps_s1": sink_throughput(summary, "S1"),
        "throughput_gbps_s2": sink_throughput(summary, "S2"),
    }


# --- comparison and report ---------------------------------------------------


def rel_diff(a: float, b: float) -> float | None:
    """(a - b) / b; None when b is 0 and a is not (no finite ratio)."""
    if b == 0:
        return 0.0 if a == 0 else None
    return (a - b) / b


def per_seed_rows(runs: list[dict], seeds: list[int], problems: list[str]) -> list[dict]:
    rows = []
    for seed in seeds:
        row: dict = {"seed": seed}
        for engine in ("ns-3", "cnsim"):
            mine = [r for r in runs if r["seed"] == seed and r["engine"] == engine]
            for f in ["events", *FIELDS]:
                if len({r[f] for r in mine}) > 1:
                    problems.append(f"seed {seed}: {engine}'s {f} changed between repeats: {[r[f] for r in mine]}")
            row[engine] = {
                "run_wall_s": statistics.median(r["run_wall_s"] for r in mine),
                "process_wall_s": statistics.median(r["process_wall_s"] for r in mine),
                **{f: mine[0][f] for f in ["events", *FIELDS]},
            }
        row["rel_diff"] = {f: rel_diff(row["ns-3"][f], row["cnsim"][f]) for f in FIELDS}
        bad = [f for f in FIELDS if row["rel_diff"][f] is None or abs(row["rel_diff"][f]) > TOLERANCE[f]]
        row["agree"] = not bad
        for f in bad:
            problems.append(
                f"seed {seed}: {f} differs by {_pct(row['rel_diff'][f])} "
                f"(ns-3 {row['ns-3'][f]}, cnsim {row['cnsim'][f]}; tolerance {TOLERANCE[f]:.0%})"
            )
        rows.append(row)
    return rows


def means(rows: list[dict]) -> dict:
    """Means over seeds of each engine's outputs, and their relative difference."""
    out: dict = {}
    for engine in ("ns-3", "cnsim"):
        out[engine] = {f: statistics.fmean(r[engine][f] for r in rows) for f in ["events", *FIELDS]}
    out["rel_diff"] = {f: rel_diff(out["ns-3"][f], out["cnsim"][f]) for f in FIELDS}
    return out


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.2%}"


def pair_ratios(runs: list[dict], key: str) -> list[float]:
    """ns-3/cnsim for each interleaved pair (a ns-3 run and the cnsim run right after it)."""
    ratios = []
    for a, b in zip(runs[0::2], runs[1::2]):
        assert a["engine"] == "ns-3" and b["engine"] == "cnsim" and a["seed"] == b["seed"]
        if b[key] > 0:
            ratios.append(a[key] / b[key])
    return ratios


def print_report(doc: dict, rows: list[dict]) -> None:
    dur = doc["duration"] or "the scenario's 100 ms"
    print(
        f"scenario {doc['scenario']}, {dur}; seeds {doc['seeds'][0]}..{doc['seeds'][-1]}, "
        f"{doc['repeats']} repeat(s) each, runs interleaved ns-3, cnsim, ns-3, ..."
    )
    print(f"ns-3 {doc['ns3']['version']}: {doc['ns3']['build']}")
    c = doc["cnsim"]
    print(f"cnsim {c.get('version')} (engine {c.get('engine_id')}): {c['executable']}, invariant checks on")
    print()
    head = ["seed", "engine", "run s", "process s", "events", "drops CORE->S1", "drops total", "S1 Gb/s", "S2 Gb/s"]
    table = [head]
    for row in rows:
        for engine in ("ns-3", "cnsim"):
            e = row[engine]
            table.append(
                [
                    str(row["seed"]),
                    engine,
                    f"{e['run_wall_s']:.3f}",
                    f"{e['process_wall_s']:.3f}",
                    f"{e['events']:,}",
                    f"{e['drops_core_s1']:,}",
                    f"{e['drops_total']:,}",
                    f"{e['throughput_gbps_s1']:.4f}",
                    f"{e['throughput_gbps_s2']:.4f}",
                ]
            )
        d = row["rel_diff"]
        table.append(["", "diff", "", "", "", *(_pct(d[f]) for f in FIELDS)])
    if len(rows) > 1:
        m = doc["means"]
        for engine in ("ns-3", "cnsim"):
            e = m[engine]
            table.append(
                [
                    "mean",
                    engine,
                    "",
                    "",
                    f"{e['events']:,.0f}",
                    f"{e['drops_core_s1']:,.0f}",
                    f"{e['drops_total']:,.0f}",
                    f"{e['throughput_gbps_s1']:.4f}",
                    f"{e['throughput_gbps_s2']:.4f}",
                ]
            )
        table.append(["", "diff", "", "", "", *(_pct(m["rel_diff"][f]) for f in FIELDS)])
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for i, r in enumerate(table):
        print("  ".join(cell.ljust(w) if j < 2 else cell.rjust(w) for j, (cell, w) in enumerate(zip(r, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print(
        "(run s: in-program run time, median over repeats -- ns-3 Simulator::Run() under steady_clock, "
        "cnsim summary wall_time_s; process s: whole process, median over repeats; "
        "diff: (ns-3 - cnsim)/cnsim; Gb/s: delivered to the sink over its first to last delivery bin)"
    )
    print()
    if doc["agree"]:
        worst = {f: max(abs(r["rel_diff"][f]) for r in rows) for f in FIELDS}
        print(
            f"outputs agree: largest differences drops CORE->S1 {worst['drops_core_s1']:.2%}, "
            f"total {worst['drops_total']:.2%} (tolerance {TOL_DROPS:.0%}); throughput S1 "
            f"{worst['throughput_gbps_s1']:.2%}, S2 {worst['throughput_gbps_s2']:.2%} "
            f"(tolerance {TOL_THROUGHPUT:.0%})"
        )
        r = doc["ratio"]
        print(
            f"speed ratio ns-3/cnsim, median over {r['pairs']} interleaved pairs: "
            f"in-program {r['run_wall_median']:.1f}x (pairs {r['run_wall_min']:.1f}x..{r['run_wall_max']:.1f}x), "
            f"whole process {r['process_wall_median']:.1f}x"
        )
    else:
        bar = "!" * 72
        print(bar)
        print(
            "OUTPUTS DISAGREE beyond tolerance -- the engines may not simulate the same thing; no speed ratio is given:"
        )
        for p in doc["problems"]:
            print("  * " + p)
        print(bar)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Run cnsim and ns-3 side by side on study A's drop-tail scenario "
        f"({SCENARIO_REL}), check that they agree, and report the speed ratio.",
        epilog="The first run creates bench/peers/ns3/.venv and installs the ns-3 wheel from PyPI.",
    )
    ap.add_argument("--seeds", type=int, default=3, metavar="N", help="seeds 1..N (default 3)")
    ap.add_argument(
        "--repeats", type=int, default=1, metavar="R", help="interleaved (ns-3, cnsim) pairs per seed (default 1)"
    )
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the numbers to OUT (schema in the docstring)")
    ap.add_argument(
        "--cnsim",
        default=str(REPO / ".venv" / "bin" / "cnsim"),
        metavar="PATH",
        help="cnsim executable (default: the repo's .venv/bin/cnsim, made by `make build`)",
    )
    ap.add_argument(
        "--duration",
        metavar="T",
        default=None,
        help="override the simulated time for both engines (e.g. 20ms; default: the scenario's 100ms). "
        "Short runs carry more sampling noise: under ~20 ms S2's throughput can differ by over 2%% "
        "by chance",
    )
    args = ap.parse_args(argv)
    if args.seeds < 1 or args.repeats < 1:
        ap.error("--seeds and --repeats must be at least 1")

    try:
        if not Path(args.cnsim).exists() and shutil.which(args.cnsim) is None:
            raise SetupError(f"cnsim executable {args.cnsim} not found (run `make build`, or pass --cnsim PATH)")
        prefix = ensure_ns3()
        binary = ensure_binary(prefix)
        seeds = list(range(1, args.seeds + 1))
        cnsim_info: dict = {"executable": args.cnsim}
        runs: list[dict] = []
        for seed in seeds:
            for rep in range(args.repeats):
                log(f"seed {seed}, repeat {rep + 1}/{args.repeats}: ns-3 ...")
                runs.append({"seed": seed, "repeat": rep, **run_ns3(binary, seed, args.duration)})
                log(f"seed {seed}, repeat {rep + 1}/{args.repeats}: cnsim ...")
                runs.append({"seed": seed, "repeat": rep, **run_cnsim(args.cnsim, seed, args.duration, cnsim_info)})
    except (SetupError, subprocess.TimeoutExpired) as e:
        log(f"error: {e}")
        return 2

    problems: list[str] = []
    rows = per_seed_rows(runs, seeds, problems)
    agree = not problems
    ratio = None
    if agree:
        run_r = pair_ratios(runs, "run_wall_s")
        proc_r = pair_ratios(runs, "process_wall_s")
        ratio = {
            "pairs": len(run_r),
            "run_wall_median": statistics.median(run_r),
            "run_wall_min": min(run_r),
            "run_wall_max": max(run_r),
            "process_wall_median": statistics.median(proc_r),
        }
    doc = {
        "schema": 1,
        "scenario": SCENARIO_REL,
        "duration": args.duration,
        "seeds": seeds,
        "repeats": args.repeats,
        "tolerances": {"drops": TOL_DROPS, "throughput": TOL_THROUGHPUT},
        "ns3": {"version": NS3_VERSION, "build": NS3_BUILD, "binary": str(binary)},
        "cnsim": cnsim_info,
        "runs": runs,
        "per_seed": rows,
        "means": means(rows),
        "agree": agree,
        "problems": problems,
        "ratio": ratio,
    }
    print_report(doc, rows)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
