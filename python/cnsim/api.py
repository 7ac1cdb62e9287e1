"""The Python API: run or validate a scenario.

A scenario is either the path of a TOML file or a dict with the same structure
(sent to the engine as JSON). Parameters can be changed without editing the
file, with the same dotted paths as ``cnsim run --set``::

    import cnsim
    res = cnsim.run("scenarios/baseline/no_cm.toml", seed=3, duration="50ms",
                    set={"switches[CORE].buffer": "150KB"})
    res.flows            # pandas DataFrame, one row per flow
    res.save("results/my_run")
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from typing import Any

from . import _core
from .overrides import SetLike, override_pairs, plain_value
from .results import Result, reserve_result
from .scenario import ScenarioLike, scenario_source

#: A progress bar is shown only for runs that last longer than this (seconds).
PROGRESS_DELAY_S = 1.0
#: How often the progress handle is polled (seconds).
PROGRESS_POLL_S = 0.1
#: Limits of ``max_events`` (the engine counts in 64 bits) and ``max_wall_s``.
MAX_EVENTS = 2**64 - 1
MAX_WALL_S = 1e9


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    *,
    set: SetLike = None,  # noqa: A002 - mirrors ``cnsim run --set``
    out: str | os.PathLike | None = None,
    force: bool = False,
    progress: bool = False,
    max_events: int | None = None,
    max_wall_s: float | None = None,
    checks: bool = True,
    threads: int | None = None,
    **overrides: Any,
) -> Result:
    """Run one simulation and return its :class:`Result`.

    scenario
        Path of a TOML scenario file, or a dict with the same structure.
    seed
        Run seed; ``None`` uses the scenario's own seed.
    set
        Overrides by dotted path, e.g. ``{"switches[CORE].buffer": "150KB"}``
        (a mapping or an iterable of ``(key, value)`` pairs).
    out
        If given, the result is saved there (atomically) before returning.
        The directory is checked and claimed before the run starts: a new
        or empty directory, or with *force* an earlier cnsim result
        (:meth:`Result.save`).
    progress
        Show a progress bar on stderr when the run lasts more than a second.
    max_events, max_wall_s
        Stop the run after this many events or seconds of wall time. The
        result then covers the simulated time up to the stop (an event limit:
        to the end of the run's window in which it is reached) and its
        summary says so: ``summary["partial"] = {"reason": ..., "reached_s":
        ..., "at_s": ...}`` (``None`` for a complete run; :attr:`Result.partial`).
    checks
        Check the model's invariants while running (conservation, occupancy
        within buffers, PAUSE obeyed, in-order delivery, limiter rates); a
        violation raises :class:`cnsim.SimulationError` naming the invariant,
        time, node, port and seed. ``False`` skips them.
    threads
        Split the run over this many threads (the scenario's ``threads``
        otherwise, 1 by default): its switches are divided into as many
        partitions, synchronised once per window of the least
        switch-to-switch delay (docs/parallel.md). The results are the same,
        bit for bit, for any number.
    **overrides
        Top-level keys, e.g. ``duration="50ms"``; applied after ``set``.

    Raises :class:`cnsim.ScenarioError` for bad input (the message names the
    file, line and field) and :class:`cnsim.SimulationError` for a failure
    while running. Ctrl-C (SIGINT in the main thread) stops the run within
    a fraction of a second and raises ``KeyboardInterrupt``.
    """
    text, origin, fmt = scenario_source(scenario)
    pairs = override_pairs(set, overrides)
    if seed is not None:
        seed = _check_seed(seed)
    limits = _limits(max_events, max_wall_s)
    limits["checks"] = bool(checks)
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 256:
            raise ValueError(f"threads must be an integer from 1 to 256, got {threads!r}")
        limits["threads"] = threads
    with reserve_result(out, force=force) if out is not None else contextlib.nullcontext() as slot:
        raw = _run_core(text, origin, pairs, fmt, seed, progress, limits)
        try:
            result = Result.from_core(raw, scenario_file=origin, consume=True)
        except MemoryError:
            del raw
            raise _core.SimulationError(
                "out of memory while building the result tables (the run's memory estimate, which "
                "'cnsim validate --json' shows as memory_estimate_bytes, was exceeded); "
                "use a wider 'bin', a shorter 'duration' or fewer flows"
            ) from None
        if slot is not None:
            result.save_into(slot)
    return result


def validate(
    scenario: ScenarioLike,
    set: SetLike = None,  # noqa: A002
    **overrides: Any,
) -> dict[str, Any]:
    """Check a scenario without running it; return the resolved scenario as a dict.

    The dict has ``name``, ``duration_s``, ``seed``, ``bin_s``, ``nodes``,
    ``links``, ``flows``, ``queues`` and ``plot``. Raises
    :class:`cnsim.ScenarioError` if the scenario is not valid.
    """
    text, origin, fmt = scenario_source(scenario)
    pairs = override_pairs(set, overrides)
    resolved = json.loads(_core.validate(text, origin, pairs, fmt=fmt))
    resolved.setdefault("scenario_file", origin)
    return resolved


# --------------------------------------------------------------------------- helpers


def _limits(max_events: Any, max_wall_s: Any) -> dict[str, Any]:
    if max_events is not None:
        if hasattr(max_events, "item") and not isinstance(max_events, bool):
            max_events = max_events.item()  # numpy integers
        if isinstance(max_events, bool) or not isinstance(max_events, int) or not 1 <= max_events <= MAX_EVENTS:
            raise ValueError(f"max_events must be an integer from 1 to 2^64-1, got {max_events!r}")
    if max_wall_s is not None:
        if isinstance(max_wall_s, bool) or not isinstance(max_wall_s, (int, float)) or not 0 < max_wall_s <= MAX_WALL_S:
            raise ValueError(f"max_wall_s must be a number of seconds in (0, {MAX_WALL_S:g}], got {max_wall_s!r}")
        max_wall_s = float(max_wall_s)
    return {"max_events": max_events, "max_wall_s": max_wall_s}


def _check_seed(seed: Any) -> int:
    seed = plain_value(seed)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an integer, not {type(seed).__name__}")
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be in 0..2^64-1, got {seed}")
    return seed


def _run_core(
    text: str,
    origin: str,
    pairs: list[tuple[str, str]],
    fmt: str,
    seed: int | None,
    progress: bool,
    limits: dict[str, Any] | None = None,
) -> dict[str, Any]:
    limits = limits or {}
    if not progress:
        return _core.run(text, origin, pairs, fmt=fmt, seed=seed, progress=None, **limits)

    handle = _core.Progress()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = _core.run(text, origin, pairs, fmt=fmt, seed=seed, progress=handle, **limits)
        except BaseException as exc:  # handed to the calling thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="cnsim-run", daemon=True)
    started = time.monotonic()
    worker.start()
    bar = None
    try:
        while worker.is_alive():
            worker.join(PROGRESS_POLL_S)
            if not worker.is_alive():
                break
            if bar is None and time.monotonic() - started > PROGRESS_DELAY_S:
                bar = _ProgressBar(handle, started)
            if bar is not None:
                bar.update(handle)
    except KeyboardInterrupt:
        handle.cancel()
        worker.join()
        raise
    finally:
        if bar is not None:
            bar.close()
    if "error" in box:
        raise box["error"]
    return box["value"]


class _ProgressBar:
    """A rich progress bar on stderr showing simulated time reached."""

    def __init__(self, handle: Any, started: float) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn

        self._started = started
        self._progress = Progress(
            TextColumn("simulating"),
            BarColumn(),
            TextColumn("{task.fields[sim]}"),
            TextColumn("{task.fields[events]} events"),
            TextColumn("{task.fields[wall]}"),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task("run", total=None, sim="", events="0", wall="")
        self.update(handle)
        self._progress.start()

    def update(self, handle: Any) -> None:
        total = handle.duration_s or None
        done = handle.sim_time_s
        sim = f"{done * 1e3:.1f} / {total * 1e3:g} ms" if total else ""
        wall = time.monotonic() - self._started
        eta = ""
        if total and done > 0:
            eta = f", ~{max(wall * (total - done) / done, 0.0):.0f} s left"
        self._progress.update(
            self._task, total=total, completed=done, sim=sim, events=f"{handle.events:,}", wall=f"{wall:.0f} s{eta}"
        )

    def close(self) -> None:
        self._progress.stop()
