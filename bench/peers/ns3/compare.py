#!/usr/bin/env python3
"""Side-by-side runs of cnsim and ns-3 on the same scenario.

    python bench/peers/ns3/compare.py [--scenario drop_tail|fat_tree] [--seeds N] [--repeats R]
                                      [--json OUT] [--cnsim PATH] [--duration T]
                                      [--k K] [--load L] [--ecmp hash|random]

Two scenarios, each written once for cnsim and once as an ns-3 C++ program:

* ``drop_tail`` (the default): study A's drop-tail scenario,
  ``scenarios/baseline/no_cm.toml`` and ``drop_tail.cc``;
* ``fat_tree``: a k-ary fat tree with drop-tail queues, ECMP and uniform
  random traffic, ``bench/peers/ns3/fat_tree.toml`` and ``fat_tree.cc``
  (``--k`` 4 or 8, ``--load``, ``--ecmp``).

What it does:

1. creates ``bench/peers/ns3/.venv`` if missing and installs the ns-3 wheel
   from PyPI into it (``pip install --no-deps ns3==3.44.post0``: headers and
   shared libraries only, no Python bindings are used);
2. compiles the scenario's program with the system ``g++`` against the
   wheel, caching the binary beside it (``drop_tail``, ``fat_tree``) and
   rebuilding it when the program or ``common.h`` is newer;
3. for each seed 1..N, R times, runs ns-3's program and then cnsim
   (``cnsim run SCENARIO --seed S --out TMP -q``), so the two engines
   alternate (ns-3, cnsim, ns-3, cnsim, ...) and drift in the machine's
   speed hits both alike;
4. checks that the engines agree, seed by seed, on the scenario's compared
   outputs (below), each within its tolerance. The engines draw from
   different random streams, so they agree statistically, not frame by
   frame;
5. prints a table per seed and engine: run time measured inside the program
   (ns-3: ``Simulator::Run()`` under std::chrono::steady_clock; cnsim: the
   summary's ``wall_time_s``), whole-process wall time, events executed,
   the compared outputs; then the speed ratio ns-3/cnsim, the median over
   the interleaved pairs of the per-pair ratios (once for in-program time,
   once for process time). If the engines disagree, the ratio is withheld
   and the exit status is 1.

Compared outputs:

* ``drop_tail``: frames dropped at CORE's port toward S1 and in total
  (within 5%), throughput delivered to S1 and S2 (within 2%);
* ``fat_tree``: frames dropped in total (within 10% or 30 frames, whichever
  is more), delivered throughput of all hosts together (within 1%), mean
  frame latency (within 5%), and that both route alike: the root mean
  square over the directed links of z = (ns-3 frames - cnsim frames) /
  sqrt(ns-3 frames + cnsim frames), at most 2 (sampling noise alone gives
  about 1; a different ECMP rule gives 5 to 10). README.md justifies the
  tolerances.

Throughput is cnsim's ``Result.flows.delivered_gbps`` rule applied to all
flows to a sink (``drop_tail``: per sink; ``fat_tree``: all flows): delivered
bytes over the span from the bin of the first delivery to the bin of the
last, both included. For cnsim it is computed from ``summary.json``
(flows' ``delivered_bytes``, ``first_delivery_ps``, ``last_delivery_ps``,
``bin_s``); ns-3's programs compute the same. Mean latency is cnsim's flows'
``latency_sum_ps`` over their delivered frames; per link, frames are cnsim's
queues' ``tx_bytes`` / 1500.

The ns-3 build is the PyPI wheel: its libraries have logging and asserts
compiled in (an upstream optimized build runs the same program faster).
cnsim runs with its default invariant checks on, on one thread unless
``--threads N`` is given.

Exit status: 0 the engines agree; 1 they disagree (or a run's outputs change
between repeats); 2 setup or a run failed.

``--json OUT`` writes (schema 2)::

    {
      "schema": 2,
      "case": "drop_tail" | "fat_tree",
      "scenario": "scenarios/baseline/no_cm.toml" | "bench/peers/ns3/fat_tree.toml",
      "options": {} | {"k": 8, "load": 0.6, "ecmp": "hash"},
      "duration": "100ms" | null,          # null: the scenario's own
      "seeds": [1, 2, ...], "repeats": R,
      "tolerances": {"<field>": f, ...},    # relative, per compared field
      "absolute_slack": {"<field>": n, ...},# also accepted: |difference| <= n
      "limits": {"<check>": f, ...},        # fat_tree: {"link_z_rms": 2.0}
      "ns3":   {"version": "3.44", "build": "...", "binary": "..."},
      "cnsim_threads": N,                   # --threads: cnsim's, ns-3 runs on one
      "cnsim": {"executable": "...", "version": "...", "engine_id": "..."},
      "runs": [                           # in the order run, interleaved
        {"seed": 1, "repeat": 0, "engine": "ns-3" | "cnsim",
         "run_wall_s": float, "process_wall_s": float, "events": int,
         <the case's fields>}, ...
      ],
      "per_seed": [                        # medians of the wall times over repeats
        {"seed": 1, "ns-3": {<run fields>}, "cnsim": {<run fields>},
         "rel_diff": {"<field>": f, ...}, "checks": {"<check>": f, ...},
         "agree": bool}, ...
      ],
      "means": {"ns-3": {...}, "cnsim": {...}, "rel_diff": {...}},  # over seeds
                                           # (events and the compared fields)
      "agree": bool,
      "problems": ["..."],                 # why not, if not
      "ratio": {"pairs": n,                # null when the engines disagree
                "run_wall_median": f, "run_wall_min": f, "run_wall_max": f,
                "process_wall_median": f} | null
    }

Run fields: ``drop_tail``: ``drops_core_s1``, ``drops_total``,
``throughput_gbps_s1``, ``throughput_gbps_s2``; ``fat_tree``:
``drops_total``, ``throughput_gbps``, ``latency_mean_us``, ``frame_hops``,
``offered_frames``, ``drops_by_stage`` ({host_up, edge_up, agg_up,
core_down, agg_down, edge_down}: output ports by where they are).
``rel_diff`` is (ns-3 - cnsim) / cnsim.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
VENV = HERE / ".venv"
COMMON = HERE / "common.h"

NS3_REQUIREMENT = "ns3==3.44.post0"
NS3_VERSION = "3.44"
NS3_LIBS = ["applications", "internet", "point-to-point", "traffic-control", "network", "core"]

RUN_TIMEOUT_S = 1800
CNSIM_ATTEMPTS = 3
CNSIM_RETRY_WAIT_S = 60
FRAME_BYTES = 1500

#: fat_tree: the stages of output ports, as the ns-3 program names them, by
#: the kinds of the port's node and its peer (cnsim's queue "NODE->PEER").
STAGES = {"HE": "host_up", "EA": "edge_up", "AC": "agg_up", "CA": "core_down", "AE": "agg_down", "EH": "edge_down"}


class SetupError(Exception):
    pass


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- scenarios -----------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """A column of the table: a run field, its heading and how a value prints."""

    field: str
    heading: str
    fmt: Callable[[float], str]


@dataclass(frozen=True)
class Case:
    """One scenario as both engines run it."""

    name: str
    program: str  # the ns-3 program's source, beside this file
    scenario_rel: str  # cnsim's scenario, from the repository's root
    fields: tuple[str, ...]  # compared outputs (run fields), in table order
    tolerance: dict[str, float]  # relative, per compared field
    ns3_args: Callable[[argparse.Namespace], list[str]]
    cnsim_sets: Callable[[argparse.Namespace], list[str]]
    from_ns3: Callable[[dict], dict]  # the program's JSON line -> run fields
    from_cnsim: Callable[[dict], dict]  # cnsim's summary.json -> run fields
    columns: tuple[Column, ...]  # the table's columns after events
    note: str  # what the table's columns mean
    default_duration: str
    absolute_slack: dict[str, float] = field(default_factory=dict)
    #: Checks on a (ns-3 run, cnsim run) pair of a seed, each at most its limit.
    pair_checks: Callable[[dict, dict], dict[str, float]] | None = None
    limits: dict[str, float] = field(default_factory=dict)
    #: Run fields kept in the report, not compared.
    extra_fields: tuple[str, ...] = ()

    @property
    def source(self) -> Path:
        return HERE / self.program

    @property
    def binary(self) -> Path:
        return HERE / Path(self.program).stem

    @property
    def scenario(self) -> Path:
        return REPO / self.scenario_rel

    def describe_options(self, args: argparse.Namespace) -> dict:
        return {"k": args.k, "load": args.load, "ecmp": args.ecmp} if self.name == "fat_tree" else {}


def _count(x: float) -> str:
    return f"{x:,.0f}"


def _gbps(x: float) -> str:
    return f"{x:.4f}"


def sink_throughput(summary: dict, sink: str | None = None) -> float:
    """cnsim's per-flow delivered_gbps rule (results.py ``_active_rate``) over all flows to ``sink``
    (all flows if None)."""
    flows = [f for f in summary["flows"] if (sink is None or f["dst"] == sink) and f["delivered_frames"] > 0]
    if not flows:
        return 0.0
    bin_ps = round(summary["bin_s"] * 1e12)
    last_bin = summary["n_bins"] - 1
    first = min(min(f["first_delivery_ps"] for f in flows) // bin_ps, last_bin)
    last = min(max(f["last_delivery_ps"] for f in flows) // bin_ps, last_bin)
    span_s = (last - first + 1) * bin_ps * 1e-12
    return sum(f["delivered_bytes"] for f in flows) * 8 / span_s / 1e9


# drop_tail -----------------------------------------------------------------------


def drop_tail_from_ns3(out: dict) -> dict:
    if out.get("reverse_frames", 0) != 0:
        raise SetupError(
            f"ns-3 run: {out['reverse_frames']} frames went against the traffic's direction, "
            "so folding the switch latency into the links' delay is not exact"
        )
    return {f: out[f] for f in DROP_TAIL.fields}


def drop_tail_from_cnsim(summary: dict) -> dict:
    queues = {q["name"]: q for q in summary["queues"]}
    return {
        "drops_core_s1": queues["CORE->S1"]["drops_frames"],
        "drops_total": summary["totals"]["dropped_frames"],
        "throughput_gbps_s1": sink_throughput(summary, "S1"),
        "throughput_gbps_s2": sink_throughput(summary, "S2"),
    }


DROP_TAIL = Case(
    name="drop_tail",
    program="drop_tail.cc",
    scenario_rel="scenarios/baseline/no_cm.toml",
    fields=("drops_core_s1", "drops_total", "throughput_gbps_s1", "throughput_gbps_s2"),
    tolerance={"drops_core_s1": 0.05, "drops_total": 0.05, "throughput_gbps_s1": 0.02, "throughput_gbps_s2": 0.02},
    ns3_args=lambda a: ["--duration", a.duration] if a.duration else [],
    cnsim_sets=lambda a: [f"duration={a.duration}"] if a.duration else [],
    from_ns3=drop_tail_from_ns3,
    from_cnsim=drop_tail_from_cnsim,
    columns=(
        Column("drops_core_s1", "drops CORE->S1", _count),
        Column("drops_total", "drops total", _count),
        Column("throughput_gbps_s1", "S1 Gb/s", _gbps),
        Column("throughput_gbps_s2", "S2 Gb/s", _gbps),
    ),
    note="Gb/s: delivered to the sink over its first to last delivery bin",
    default_duration="100ms",
)


# fat_tree ------------------------------------------------------------------------


def link_z_rms(ns3_frames: dict[str, int], cnsim_frames: dict[str, int]) -> float:
    """Root mean square over the directed links of (a - b) / sqrt(a + b), a and b the frames each
    engine sent on the link (a link neither used counts 0). With the same routes in both engines the
    differences are sampling noise and z is about N(0, 1) or narrower; different routes make it
    much wider. The links must be the same."""
    if set(ns3_frames) != set(cnsim_frames):
        only = sorted(set(ns3_frames) ^ set(cnsim_frames))[:5]
        raise SetupError(f"the engines' links differ (e.g. {only}): not the same topology")
    if not ns3_frames:
        return 0.0
    total = 0.0
    for name, a in ns3_frames.items():
        b = cnsim_frames[name]
        total += 0.0 if a + b == 0 else (a - b) ** 2 / (a + b)
    return math.sqrt(total / len(ns3_frames))


def fat_tree_from_ns3(out: dict) -> dict:
    for key in ("drops_device_queue", "drops_ip", "drops_unclassified"):
        if out.get(key, 0) != 0:
            raise SetupError(f"ns-3 run: {out[key]} {key} (expected 0: all drops at output queues)")
    return {
        "drops_total": out["drops_total"],
        "throughput_gbps": out["throughput_gbps"],
        "latency_mean_us": out["latency_mean_us"],
        "frame_hops": out["frame_hops"],
        "offered_frames": out["offered_frames"],
        "drops_by_stage": {s: out["drops_by_stage"][s] for s in STAGES.values()},
        "_link_frames": {name: b // FRAME_BYTES for name, b in out["link_tx_bytes"].items()},
    }


def fat_tree_from_cnsim(summary: dict) -> dict:
    stages = dict.fromkeys(STAGES.values(), 0)
    for q in summary["queues"]:
        node, peer = q["name"].split("->")
        stages[STAGES[node[0] + peer[0]]] += q["drops_frames"]
    delivered = sum(f["delivered_frames"] for f in summary["flows"])
    latency_ps = sum(f["latency_sum_ps"] for f in summary["flows"])
    return {
        "drops_total": summary["totals"]["dropped_frames"],
        "throughput_gbps": sink_throughput(summary),
        "latency_mean_us": latency_ps / delivered * 1e-6 if delivered else 0.0,
        "frame_hops": summary["frame_hops"],
        "offered_frames": summary["totals"]["offered_frames"],
        "drops_by_stage": stages,
        "_link_frames": {q["name"]: q["tx_bytes"] // FRAME_BYTES for q in summary["queues"]},
    }


def fat_tree_ns3_args(a: argparse.Namespace) -> list[str]:
    return [
        "--k",
        str(a.k),
        "--load",
        repr(a.load),
        "--ecmp",
        a.ecmp,
        "--duration",
        a.duration or FAT_TREE.default_duration,
    ]


def fat_tree_cnsim_sets(a: argparse.Namespace) -> list[str]:
    sets = [f"params.k={a.k}", f"params.half={a.k // 2}", f"defaults.source.load={a.load!r}"]
    return sets + ([f"duration={a.duration}"] if a.duration else [])


FAT_TREE = Case(
    name="fat_tree",
    program="fat_tree.cc",
    scenario_rel="bench/peers/ns3/fat_tree.toml",
    fields=("drops_total", "throughput_gbps", "latency_mean_us"),
    tolerance={"drops_total": 0.10, "throughput_gbps": 0.01, "latency_mean_us": 0.05},
    absolute_slack={"drops_total": 30},
    ns3_args=fat_tree_ns3_args,
    cnsim_sets=fat_tree_cnsim_sets,
    from_ns3=fat_tree_from_ns3,
    from_cnsim=fat_tree_from_cnsim,
    columns=(
        Column("frame_hops", "frame-hops", _count),
        Column("_hops_per_s", "M hops/s", lambda x: f"{x / 1e6:.2f}"),
        Column("drops_total", "drops", _count),
        Column("throughput_gbps", "Gb/s", lambda x: f"{x:.3f}"),
        Column("latency_mean_us", "latency us", lambda x: f"{x:.3f}"),
    ),
    note="M hops/s: frame-hops per second of run time; Gb/s: delivered by all hosts over the first to "
    "last delivery bin; latency: mean from the frame's creation to its last bit at the destination",
    default_duration="50ms",
    pair_checks=lambda ns, cn: {"link_z_rms": link_z_rms(ns["_link_frames"], cn["_link_frames"])},
    limits={"link_z_rms": 2.0},
    extra_fields=("frame_hops", "offered_frames", "drops_by_stage"),
)

CASES = {c.name: c for c in (DROP_TAIL, FAT_TREE)}


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


def ns3_build(case: Case) -> str:
    return (
        f"PyPI wheel {NS3_REQUIREMENT} (libraries with logging and asserts compiled in); "
        f"{case.program} compiled with g++ -O2"
    )


def compile_command(case: Case, prefix: Path) -> list[str]:
    inc, lib = prefix / "include", prefix / "lib64"
    return (
        ["g++", "-std=c++20", "-O2"]
        # The defines the wheel's libraries were built with.
        + ["-DNS3_BUILD_PROFILE_RELEASE", "-DNS3_LOG_ENABLE", "-DNS3_ASSERT_ENABLE"]
        + [f"-I{inc}", str(case.source), "-o", str(case.binary), f"-L{lib}", f"-Wl,-rpath,{lib}"]
        + [f"-lns{NS3_VERSION}-{m}" for m in NS3_LIBS]
    )


def ensure_binary(case: Case, prefix: Path) -> Path:
    binary = case.binary
    newest = max(case.source.stat().st_mtime, COMMON.stat().st_mtime)
    if binary.exists() and binary.stat().st_mtime >= newest:
        return binary
    if shutil.which("g++") is None:
        raise SetupError("g++ not found (install the system C++ compiler, e.g. apt-get install g++)")
    cmd = compile_command(case, prefix)
    log("compiling " + case.program + ": " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        binary.unlink(missing_ok=True)
        raise SetupError(f"compiling {case.program} failed:\n{r.stderr}")
    return binary


# --- runs --------------------------------------------------------------------


def parse_ns3_output(case: Case, stdout: str) -> dict:
    """Run fields from the ns-3 program's output: its last line that starts with "{"."""
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SetupError(f"printed no JSON line:\n{stdout}")
    out = json.loads(lines[-1])
    return {"engine": "ns-3", "run_wall_s": out["run_wall_s"], "events": out["events"], **case.from_ns3(out)}


def run_ns3(case: Case, binary: Path, seed: int, args: argparse.Namespace) -> dict:
    cmd = [str(binary), "--seed", str(seed), *case.ns3_args(args)]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=RUN_TIMEOUT_S)
    process_wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SetupError(f"ns-3 run (seed {seed}) failed with status {r.returncode}:\n{r.stderr}")
    try:
        run = parse_ns3_output(case, r.stdout)
    except SetupError as e:
        raise SetupError(f"ns-3 run (seed {seed}): {e}") from None
    return {**run, "process_wall_s": process_wall}


def parse_cnsim_summary(case: Case, summary: dict, info: dict) -> dict:
    """Run fields from cnsim's summary.json; notes the version and engine in ``info``."""
    if summary.get("partial"):
        raise SetupError(f"stopped early: {summary['partial']}")
    for key in ("flows", "queues"):
        if not isinstance(summary.get(key), list):
            raise SetupError(f"no '{key}' records (from summary.json or the result's tables)")
    info.setdefault("version", summary.get("cnsim_version"))
    info.setdefault("engine_id", summary.get("engine_id"))
    return {
        "engine": "cnsim",
        "run_wall_s": summary["wall_time_s"],
        "events": summary["events"],
        **case.from_cnsim(summary),
    }


#: Prints a result's flows and queues tables as JSON lists of records.
_RECORDS = (
    "import json, sys, pandas as pd\n"
    "d = sys.argv[1]\n"
    "print(json.dumps({t: pd.read_parquet(f'{d}/{t}.parquet').to_dict('records') for t in ('flows', 'queues')}))"
)


def cnsim_records(cnsim: str, out_dir: Path) -> dict:
    """The flows' and queues' records of the result in ``out_dir``: cnsim keeps them in its
    ``flows`` and ``queues`` tables (Parquet), which the Python that runs ``cnsim`` reads (its
    entry point's ``#!`` line names it), as ``summary.json`` listed them before."""
    exe = shutil.which(cnsim) or cnsim
    try:
        first = Path(exe).read_bytes()[:512].split(b"\n", 1)[0].decode()
    except OSError as e:
        raise SetupError(f"cannot read {exe}: {e}") from None
    python = first[2:].strip() if first.startswith("#!") else str(Path(exe).with_name("python"))
    r = subprocess.run([python, "-c", _RECORDS, str(out_dir)], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SetupError(f"reading the flows and queues of {out_dir} with {python} failed:\n{r.stderr}")
    return json.loads(r.stdout)


def run_cnsim(case: Case, cnsim: str, seed: int, args: argparse.Namespace, info: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="cnsim-vs-ns3-") as tmp:
        out_dir = Path(tmp) / "run"
        cmd = [cnsim, "run", str(case.scenario), "--seed", str(seed), "--out", str(out_dir), "-q"]
        if args.threads > 1:
            cmd += ["--threads", str(args.threads)]
        for s in case.cnsim_sets(args):
            cmd += ["--set", s]
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
        if "flows" not in summary:
            summary.update(cnsim_records(cnsim, out_dir))
    try:
        run = parse_cnsim_summary(case, summary, info)
    except SetupError as e:
        raise SetupError(f"cnsim run (seed {seed}): {e}") from None
    return {**run, "process_wall_s": process_wall}


# --- comparison and report ---------------------------------------------------


def rel_diff(a: float, b: float) -> float | None:
    """(a - b) / b; None when b is 0 and a is not (no finite ratio)."""
    if b == 0:
        return 0.0 if a == 0 else None
    return (a - b) / b


def within(case: Case, f: str, ns3: float, cnsim: float) -> bool:
    """Whether ns-3's value of compared field ``f`` is within tolerance of cnsim's: relative, or
    within the field's absolute slack if it has one."""
    if abs(ns3 - cnsim) <= case.absolute_slack.get(f, 0):
        return True
    d = rel_diff(ns3, cnsim)
    return d is not None and abs(d) <= case.tolerance[f]


def _tolerance_text(case: Case, f: str) -> str:
    slack = case.absolute_slack.get(f)
    return f"{case.tolerance[f]:.0%}" + (f" or {slack:g}" if slack else "")


def per_seed_rows(case: Case, runs: list[dict], seeds: list[int], problems: list[str]) -> list[dict]:
    kept = ["events", *case.fields, *(f for f in case.extra_fields if f not in case.fields)]
    rows = []
    for seed in seeds:
        row: dict = {"seed": seed}
        first: dict = {}
        for engine in ("ns-3", "cnsim"):
            mine = [r for r in runs if r["seed"] == seed and r["engine"] == engine]
            first[engine] = mine[0]
            for f in kept:
                if any(r[f] != mine[0][f] for r in mine):
                    problems.append(f"seed {seed}: {engine}'s {f} changed between repeats: {[r[f] for r in mine]}")
            row[engine] = {
                "run_wall_s": statistics.median(r["run_wall_s"] for r in mine),
                "process_wall_s": statistics.median(r["process_wall_s"] for r in mine),
                **{f: mine[0][f] for f in kept},
            }
        row["rel_diff"] = {f: rel_diff(row["ns-3"][f], row["cnsim"][f]) for f in case.fields}
        bad = [f for f in case.fields if not within(case, f, row["ns-3"][f], row["cnsim"][f])]
        for f in bad:
            problems.append(
                f"seed {seed}: {f} differs by {_pct(row['rel_diff'][f])} "
                f"(ns-3 {row['ns-3'][f]}, cnsim {row['cnsim'][f]}; tolerance {_tolerance_text(case, f)})"
            )
        row["checks"] = case.pair_checks(first["ns-3"], first["cnsim"]) if case.pair_checks else {}
        for name, value in row["checks"].items():
            if value > case.limits[name]:
                bad.append(name)
                problems.append(f"seed {seed}: {name} is {value:.2f} (at most {case.limits[name]:g})")
        row["agree"] = not bad
        rows.append(row)
    return rows


def means(case: Case, rows: list[dict]) -> dict:
    """Means over seeds of each engine's outputs, and their relative difference."""
    extra = [f for f in case.extra_fields if f not in case.fields and f != "drops_by_stage"]  # numbers only
    numeric = ["events", *case.fields, *extra]
    out: dict = {}
    for engine in ("ns-3", "cnsim"):
        out[engine] = {f: statistics.fmean(r[engine][f] for r in rows) for f in numeric}
    out["rel_diff"] = {f: rel_diff(out["ns-3"][f], out["cnsim"][f]) for f in case.fields}
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


def _cell(column: Column, values: dict) -> str:
    if column.field == "_hops_per_s":
        return column.fmt(values["frame_hops"] / values["run_wall_s"]) if values.get("run_wall_s") else ""
    return column.fmt(values[column.field])


def print_report(case: Case, doc: dict, rows: list[dict]) -> None:
    dur = doc["duration"] or f"the scenario's {case.default_duration}"
    opts = "".join(f", {k} {v}" for k, v in doc["options"].items())
    print(
        f"scenario {doc['scenario']}{opts}, {dur}; seeds {doc['seeds'][0]}..{doc['seeds'][-1]}, "
        f"{doc['repeats']} repeat(s) each, runs interleaved ns-3, cnsim, ns-3, ..."
    )
    print(f"ns-3 {doc['ns3']['version']}: {doc['ns3']['build']}")
    c = doc["cnsim"]
    threads = doc.get("cnsim_threads", 1)
    print(f"cnsim {c.get('version')} (engine {c.get('engine_id')}): {c['executable']}, invariant checks on"
          + (f", {threads} threads" if threads > 1 else ""))
    print()
    compared = [col for col in case.columns if col.field in case.fields]
    head = ["seed", "engine", "run s", "process s", "events", *(col.heading for col in case.columns)]
    table = [head]

    def diff_row(label: str, diffs: dict) -> list[str]:
        return [label, "diff", "", "", "", *(_pct(diffs[col.field]) if col in compared else "" for col in case.columns)]

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
                    *(_cell(col, e) for col in case.columns),
                ]
            )
        table.append(diff_row("", row["rel_diff"]))
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
                    *("" if col.field.startswith("_") else col.fmt(e[col.field]) for col in case.columns),
                ]
            )
        table.append(diff_row("", m["rel_diff"]))
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for i, r in enumerate(table):
        print("  ".join(cell.ljust(w) if j < 2 else cell.rjust(w) for j, (cell, w) in enumerate(zip(r, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print(
        "(run s: in-program run time, median over repeats -- ns-3 Simulator::Run() under steady_clock, "
        "cnsim summary wall_time_s; process s: whole process, median over repeats; "
        f"diff: (ns-3 - cnsim)/cnsim; {case.note})"
    )
    if case.name == "fat_tree":
        for row in rows:
            stages = ", ".join(
                f"{s} {row['ns-3']['drops_by_stage'][s]:,}/{row['cnsim']['drops_by_stage'][s]:,}"
                for s in STAGES.values()
            )
            checks = ", ".join(f"{k} {v:.2f}" for k, v in row["checks"].items())
            print(f"seed {row['seed']}: {checks}; drops by stage (ns-3/cnsim): {stages}")
    print()
    if doc["agree"]:
        worst = ", ".join(
            f"{col.heading} {max(abs(r['rel_diff'][col.field] or 0) for r in rows):.2%} "
            f"(tolerance {_tolerance_text(case, col.field)})"
            for col in compared
        )
        checks = "".join(
            f"; {name} at most {max(r['checks'][name] for r in rows):.2f} (limit {limit:g})"
            for name, limit in case.limits.items()
        )
        print(f"outputs agree: largest differences {worst}{checks}")
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


def public(run: dict) -> dict:
    """A run without its internal fields (those starting with "_")."""
    return {k: v for k, v in run.items() if not k.startswith("_")}


def build_doc(case: Case, args: argparse.Namespace, seeds: list[int], runs: list[dict], binary: Path,
              cnsim_info: dict) -> tuple[dict, list[dict]]:
    problems: list[str] = []
    rows = per_seed_rows(case, runs, seeds, problems)
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
        "schema": 2,
        "case": case.name,
        "scenario": case.scenario_rel,
        "options": case.describe_options(args),
        "duration": args.duration,
        "seeds": seeds,
        "repeats": args.repeats,
        "tolerances": dict(case.tolerance),
        "absolute_slack": dict(case.absolute_slack),
        "limits": dict(case.limits),
        "ns3": {"version": NS3_VERSION, "build": ns3_build(case), "binary": str(binary)},
        "cnsim": cnsim_info,
        "cnsim_threads": args.threads,
        "runs": [public(r) for r in runs],
        "per_seed": [{**r, "ns-3": public(r["ns-3"]), "cnsim": public(r["cnsim"])} for r in rows],
        "means": means(case, rows),
        "agree": agree,
        "problems": problems,
        "ratio": ratio,
    }
    return doc, rows


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description="Run cnsim and ns-3 side by side on the same scenario, check that they agree, and "
        "report the speed ratio. Scenarios: drop_tail (study A's drop-tail scenario, "
        f"{DROP_TAIL.scenario_rel}) and fat_tree (a k-ary fat tree, {FAT_TREE.scenario_rel}).",
        epilog="The first run creates bench/peers/ns3/.venv and installs the ns-3 wheel from PyPI.",
    )
    ap.add_argument("--scenario", choices=sorted(CASES), default="drop_tail", help="which scenario (default drop_tail)")
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
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="cnsim's threads (default 1; ns-3 runs on one). More than one compares N cores with one: "
        "the time a user waits, not the work each engine does",
    )
    ap.add_argument(
        "--duration",
        metavar="T",
        default=None,
        help="override the simulated time for both engines (e.g. 20ms; default: the scenario's, drop_tail "
        "100ms, fat_tree 50ms). Short runs carry more sampling noise: under ~20 ms drop_tail's S2 "
        "throughput can differ by over 2%% by chance",
    )
    ft = ap.add_argument_group("fat_tree")
    ft.add_argument("--k", type=int, default=8, help="pods (even; 4: 16 hosts, 8: 128 hosts; default 8)")
    ft.add_argument("--load", type=float, default=0.6, help="each host's source load (default 0.6)")
    ft.add_argument(
        "--ecmp",
        choices=["hash", "random"],
        default="hash",
        help="ns-3's ECMP: hash (cnsim's per-flow hash, default) or random (ns-3's own per-packet "
        "RandomEcmpRouting; routes differ from cnsim's, so the outputs are expected to disagree)",
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.seeds < 1 or args.repeats < 1:
        ap.error("--seeds and --repeats must be at least 1")
    if args.k < 2 or args.k % 2 or args.k > 64:
        ap.error("--k must be even, 2..64")
    if not 0 < args.load <= 1:
        ap.error("--load must be in (0, 1]")
    case = CASES[args.scenario]
    if case.name != "fat_tree":
        defaults = (("--k", args.k, 8), ("--load", args.load, 0.6), ("--ecmp", args.ecmp, "hash"))
        given = [option for option, value, default in defaults if value != default]
        if given:
            ap.error(f"only with --scenario fat_tree: {', '.join(given)}")

    try:
        if not Path(args.cnsim).exists() and shutil.which(args.cnsim) is None:
            raise SetupError(f"cnsim executable {args.cnsim} not found (run `make build`, or pass --cnsim PATH)")
        prefix = ensure_ns3()
        binary = ensure_binary(case, prefix)
        seeds = list(range(1, args.seeds + 1))
        cnsim_info: dict = {"executable": args.cnsim}
        runs: list[dict] = []
        for seed in seeds:
            for rep in range(args.repeats):
                log(f"seed {seed}, repeat {rep + 1}/{args.repeats}: ns-3 ...")
                runs.append({"seed": seed, "repeat": rep, **run_ns3(case, binary, seed, args)})
                log(f"seed {seed}, repeat {rep + 1}/{args.repeats}: cnsim ...")
                runs.append({"seed": seed, "repeat": rep, **run_cnsim(case, args.cnsim, seed, args, cnsim_info)})
    except (SetupError, subprocess.TimeoutExpired) as e:
        log(f"error: {e}")
        return 2

    doc, rows = build_doc(case, args, seeds, runs, binary, cnsim_info)
    print_report(case, doc, rows)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 0 if doc["agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
