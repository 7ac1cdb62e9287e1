"""``cnsim bench``: the benchmark set in ``bench/benchmarks.toml``, run and tabulated.

Every benchmark is a shipped scenario run in this process, one run at a
time on one thread, with the invariant checks on (as a user runs it). The
numbers are the engine's own (each run's summary): wall time, events,
frame-hops (frame transmissions, PAUSE and notification frames included),
their rates, the slow-down against simulated time and the peak memory of
the process during the run. With ``peers`` the side-by-side comparison
against ns-3 (``bench/peers/ns3/compare.py``) runs afterwards.

A machine's speed drifts by several percent within seconds, so one run of
each benchmark can tell two builds or two models apart only by chance.
``rounds`` repeats the set, each round in the opposite order of the one
before (ABBA), and reports each benchmark's median. The manifest's
``[[ratio]]`` entries compare two benchmarks per frame-hop (a model's cost
against its baseline's); a ratio is taken within each round, where both
ran side by side, and its median over the rounds is reported against the
entry's ``at_most``.
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .api import run
from .data import shipped_dir


class BenchError(ValueError):
    """A bad benchmark manifest or selection."""


@dataclass(frozen=True)
class Benchmark:
    name: str
    about: str
    scenario: Path
    seeds: int = 1
    overrides: dict[str, Any] = field(default_factory=dict)
    quick_seeds: int | None = None
    quick_overrides: dict[str, Any] = field(default_factory=dict)

    def plan(self, quick: bool) -> tuple[int, dict[str, Any]]:
        """Seeds to run and overrides, full or quick."""
        if not quick:
            return self.seeds, dict(self.overrides)
        seeds = self.quick_seeds if self.quick_seeds is not None else self.seeds
        return seeds, {**self.overrides, **self.quick_overrides}


@dataclass(frozen=True)
class Ratio:
    """The cost per frame-hop of benchmark `of` against benchmark `to`."""

    name: str
    about: str
    of: str
    to: str
    at_most: float | None = None


def bench_dir() -> Path:
    """The benchmark set: $CNSIM_BENCH, else the package's (the repository's ``bench/``)."""
    return shipped_dir("bench", "CNSIM_BENCH")


_FIELDS = {"name", "about", "scenario", "seeds", "set", "quick"}
_QUICK_FIELDS = {"seeds", "set"}
_RATIO_FIELDS = {"name", "about", "of", "to", "at_most"}


def _read_manifest(path: Path | None) -> tuple[Path, dict[str, Any]]:
    path = path or bench_dir() / "benchmarks.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"{path}: benchmark manifest not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise BenchError(f"{path}: {exc}") from None
    unknown = set(data) - {"benchmark", "ratio"}
    if unknown:
        raise BenchError(f"{path}: unknown table '{sorted(unknown)[0]}'; expected [[benchmark]] and [[ratio]]")
    return path, data


def load_manifest(path: Path | None = None) -> tuple[list[Benchmark], list[Ratio]]:
    """Read the benchmark manifest: its benchmarks and ratios. Errors name
    the file, the entry and the field."""
    path, data = _read_manifest(path)
    benchmarks = _benchmarks(path, data)
    return benchmarks, _ratios(path, data, {b.name for b in benchmarks})


def load_benchmarks(path: Path | None = None) -> list[Benchmark]:
    """The manifest's benchmarks."""
    return load_manifest(path)[0]


def _entries(path: Path, data: dict[str, Any], table: str, fields: set[str],
             strings: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
    """The manifest's `[[table]]` entries, each with where it is, checked
    for unknown fields and for the `strings` it must have."""
    entries = data.get(table, [])
    if not isinstance(entries, list):
        raise BenchError(f"{path}: {table}: expected [[{table}]] entries, found {entries!r}")
    out = []
    for i, e in enumerate(entries):
        where = f"{path}: {table}[{i}]"
        if not isinstance(e, dict):
            raise BenchError(f"{where}: expected a table, found {e!r}")
        unknown = set(e) - fields
        if unknown:
            raise BenchError(f"{where}: unknown field '{sorted(unknown)[0]}'; expected one of {sorted(fields)}")
        for key in strings:
            if not isinstance(e.get(key), str):
                raise BenchError(f"{where}.{key}: expected a string, found {e.get(key)!r}")
        out.append((where, e))
    return out


def _ratios(path: Path, data: dict[str, Any], names: set[str]) -> list[Ratio]:
    out = []
    for where, e in _entries(path, data, "ratio", _RATIO_FIELDS, ("name", "of", "to")):
        for key in ("of", "to"):
            if e[key] not in names:
                raise BenchError(f"{where}.{key}: expected the name of a benchmark, found {e[key]!r}")
        at_most = e.get("at_most")
        if at_most is not None and (isinstance(at_most, bool) or not isinstance(at_most, (int, float))
                                    or not at_most > 0):
            raise BenchError(f"{where}.at_most: expected a number > 0, found {at_most!r}")
        out.append(Ratio(name=e["name"], about=e.get("about", ""), of=e["of"], to=e["to"],
                         at_most=float(at_most) if at_most is not None else None))
    return out


def _benchmarks(path: Path, data: dict[str, Any]) -> list[Benchmark]:
    if not data.get("benchmark"):
        raise BenchError(f"{path}: expected [[benchmark]] entries, found none")
    out = []
    for where, e in _entries(path, data, "benchmark", _FIELDS, ("name", "scenario")):
        quick = e.get("quick", {})
        if not isinstance(quick, dict) or set(quick) - _QUICK_FIELDS:
            raise BenchError(f"{where}.quick: expected a table with 'seeds' and/or 'set', found {quick!r}")
        for key, value in (("seeds", e.get("seeds", 1)), ("quick.seeds", quick.get("seeds", 1))):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise BenchError(f"{where}.{key}: expected an integer >= 1, found {value!r}")
        for key, value in (("set", e.get("set", {})), ("quick.set", quick.get("set", {}))):
            if not isinstance(value, dict):
                raise BenchError(f"{where}.{key}: expected a table of overrides, found {value!r}")
        out.append(
            Benchmark(
                name=e["name"],
                about=e.get("about", ""),
                scenario=(path.parent / e["scenario"]).resolve(),
                seeds=e.get("seeds", 1),
                overrides=dict(e.get("set", {})),
                quick_seeds=quick.get("seeds"),
                quick_overrides=dict(quick.get("set", {})),
            )
        )
    return out


def reset_peak_memory() -> None:
    """Start a new peak-RSS measurement (Linux: VmHWM is reset by writing 5
    to clear_refs); elsewhere the peak covers the whole process."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def run_benchmark(b: Benchmark, quick: bool = False, threads: int = 1) -> dict[str, Any]:
    """Run one benchmark, each run split over *threads*; totals over its seeds."""
    seeds, overrides = b.plan(quick)
    totals = {"wall_s": 0.0, "simulated_s": 0.0, "events": 0, "frame_hops": 0, "peak_memory_bytes": 0,
              "rss_growth_bytes": 0}
    started = time.perf_counter()
    used, notes = threads, set()
    for seed in range(1, seeds + 1):
        reset_peak_memory()
        s = run(b.scenario, seed=seed, set=overrides, threads=threads).summary
        totals["wall_s"] += s["wall_time_s"]
        totals["simulated_s"] += s["duration_s"]
        totals["events"] += s["events"]
        totals["frame_hops"] += s["frame_hops"]
        totals["peak_memory_bytes"] = max(totals["peak_memory_bytes"], s.get("peak_memory_bytes") or 0)
        totals["rss_growth_bytes"] = max(totals["rss_growth_bytes"], s.get("rss_growth_bytes") or 0)
        used = min(used, s.get("threads_used", threads))
        if s.get("threads_note"):
            notes.add(s["threads_note"])
    wall = totals["wall_s"]
    return {
        "name": b.name,
        "about": b.about,
        "scenario": str(b.scenario),
        "overrides": overrides,
        "runs": seeds,
        "threads": threads,
        # Fewer when a run could not be split as asked (the summary's reason).
        "threads_used": used,
        "threads_note": "; ".join(sorted(notes)) or None,
        **totals,
        "events_per_s": totals["events"] / wall if wall > 0 else None,
        "frame_hops_per_s": totals["frame_hops"] / wall if wall > 0 else None,
        "slowdown": wall / totals["simulated_s"] if totals["simulated_s"] > 0 else None,
        "process_wall_s": time.perf_counter() - started,
    }


def run_rounds(chosen: list[Benchmark], rounds: int, quick: bool = False, threads: int = 1,
               progress: Any = None) -> list[list[dict[str, Any]]]:
    """Every benchmark `rounds` times, round by round, each round in the
    opposite order of the one before: per benchmark its rounds' rows.
    `progress(benchmark, round)` is called before each run."""
    each: dict[str, list[dict[str, Any]]] = {b.name: [] for b in chosen}
    for r in range(rounds):
        for b in (chosen if r % 2 == 0 else chosen[::-1]):
            if progress is not None:
                progress(b, r)
            each[b.name].append(run_benchmark(b, quick=quick, threads=threads))
    return [each[b.name] for b in chosen]


def median_row(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One benchmark's row over its rounds: the median wall time, the rates
    from it, the peaks' largest, and each round's wall time. A round that
    did other work than the first (events, frame-hops) is an error: the
    runs are deterministic."""
    first = rounds[0]
    for r in rounds[1:]:
        if (r["events"], r["frame_hops"]) != (first["events"], first["frame_hops"]):
            raise BenchError(f"{first['name']}: rounds differ in events or frame-hops "
                             f"({first['events']:,} and {r['events']:,} events)")
    walls = [r["wall_s"] for r in rounds]
    wall = statistics.median(walls)
    return {
        **first,
        "rounds": len(rounds),
        "wall_s": wall,
        "wall_s_each": walls,
        "events_per_s": first["events"] / wall if wall > 0 else None,
        "frame_hops_per_s": first["frame_hops"] / wall if wall > 0 else None,
        "slowdown": wall / first["simulated_s"] if first["simulated_s"] > 0 else None,
        "peak_memory_bytes": max(r["peak_memory_bytes"] for r in rounds),
        "rss_growth_bytes": max(r["rss_growth_bytes"] for r in rounds),
        "process_wall_s": sum(r["process_wall_s"] for r in rounds),
    }


def per_hop(row: dict[str, Any]) -> float:
    """Wall time per frame-hop of one run."""
    return row["wall_s"] / row["frame_hops"]


def ratio_rows(ratios: list[Ratio], each: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The ratios whose two benchmarks ran: per round the cost per
    frame-hop of `of` over that of `to`, and their median."""
    out = []
    for q in ratios:
        if q.of not in each or q.to not in each:
            continue
        values = [per_hop(a) / per_hop(b) for a, b in zip(each[q.of], each[q.to], strict=True)]
        median = statistics.median(values)
        out.append({"name": q.name, "about": q.about, "of": q.of, "to": q.to, "median": median,
                    "each": values, "at_most": q.at_most,
                    "within": None if q.at_most is None else median <= q.at_most})
    return out


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from . import _core

    return {"nproc": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "engine_id": _core.ENGINE_ID, "build": _core.BUILD}


def select(benchmarks: list[Benchmark], names: tuple[str, ...]) -> list[Benchmark]:
    """Benchmarks whose name starts with one of `names`, ignoring case (all if none given)."""
    if not names:
        return benchmarks
    chosen = [b for b in benchmarks if any(b.name.lower().startswith(n.lower()) for n in names)]
    if not chosen:
        known = ", ".join(repr(b.name) for b in benchmarks)
        raise BenchError(f"no benchmark matches {', '.join(map(repr, names))}; known: {known}")
    return chosen


def peers_command(seeds: int, json_out: Path | None) -> list[str]:
    """The ns-3 side-by-side script, run with this cnsim."""
    script = bench_dir() / "peers" / "ns3" / "compare.py"
    if not script.is_file():  # wheels carry the benchmark set, not the ns-3 comparison
        raise BenchError(f"{script}: not found; the ns-3 comparison runs from a clone of the repository")
    # This interpreter's own cnsim first: another one on PATH may be older.
    beside = Path(sys.executable).with_name("cnsim")
    cnsim = str(beside) if beside.exists() else (shutil.which("cnsim") or "cnsim")
    cmd = [sys.executable, str(script), "--seeds", str(seeds), "--cnsim", cnsim]
    if json_out is not None:
        cmd += ["--json", str(json_out)]
    return cmd


def run_peers(seeds: int, json_out: Path | None) -> int:
    """Run the ns-3 comparison, its output straight to the terminal; its exit status."""
    return subprocess.call(peers_command(seeds, json_out))
