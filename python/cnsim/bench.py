"""``cnsim bench``: the benchmark set in ``bench/benchmarks.toml``, run and tabulated.

Every benchmark is a shipped scenario run in this process, one run at a
time on one thread, with the invariant checks on (as a user runs it). The
numbers are the engine's own (each run's summary): wall time, events,
frame-hops (frame transmissions, PAUSE and notification frames included),
their rates, the slow-down against simulated time and the peak memory of
the process during the run. With ``peers`` the side-by-side comparison
against ns-3 (``bench/peers/ns3/compare.py``) runs afterwards.
"""

from __future__ import annotations

import os
import platform
import shutil
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


def bench_dir() -> Path:
    """The benchmark set: $CNSIM_BENCH, else the package's (the repository's ``bench/``)."""
    return shipped_dir("bench", "CNSIM_BENCH")


_FIELDS = {"name", "about", "scenario", "seeds", "set", "quick"}
_QUICK_FIELDS = {"seeds", "set"}


def load_benchmarks(path: Path | None = None) -> list[Benchmark]:
    """Read the benchmark manifest; errors name the file and the entry."""
    path = path or bench_dir() / "benchmarks.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"{path}: benchmark manifest not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise BenchError(f"{path}: {exc}") from None
    entries = data.get("benchmark")
    if not isinstance(entries, list) or not entries:
        raise BenchError(f"{path}: expected [[benchmark]] entries, found none")
    out = []
    for i, e in enumerate(entries):
        where = f"{path}: benchmark[{i}]"
        unknown = set(e) - _FIELDS
        if unknown:
            raise BenchError(f"{where}: unknown field '{sorted(unknown)[0]}'; expected one of {sorted(_FIELDS)}")
        for key in ("name", "scenario"):
            if not isinstance(e.get(key), str):
                raise BenchError(f"{where}.{key}: expected a string, found {e.get(key)!r}")
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
