"""Sweeps: run the points of a sweep, resumably, on local threads or a Dask cluster.

    import cnsim
    df = cnsim.sweep("scenarios/baseline/no_cm.toml", axes={"sources[C1->S1].load": [0.3, 0.4]},
                     seeds=5, out="results/sweeps/load")
    res = cnsim.load_point("results/sweeps/load", df.point_id[0])

A sweep directory holds::

    sweep.json                  what was swept: arguments, cnsim version, files and SHA-256, points
    summary.parquet             one row per point (also summary.csv)
    summary.csv
    points/<point id>/          the point's result (Result.save: summary.json, Parquet tables,
                                .cnsim-result with every file's size and SHA-256)
    points/<point id>.error.json  why the point failed (removed when a re-run succeeds)

A point whose directory has a ``summary.json`` is complete (results are
written to a temporary name and renamed) and is not run again if its files
still have the sizes and SHA-256 recorded when they were written; failed,
missing and damaged points are run by the next invocation with the same
arguments. See ``docs/sweeps.md`` and ``docs/output-and-safety.md``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import threading
import time
import traceback
import uuid
import warnings
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import filelock
import pandas as pd

from . import _core
from .metrics import MetricEvaluator, builtin_metrics
from .outputs import check_path_length, temp_name_pattern, write_atomically
from .points import POINT_ID_PATTERN, POINTS_DIR, Plan, Point, SweepError, display_value, plan
from .results import SUMMARY_FILE, Result, ResultError, verify

__all__ = [
    "SUMMARY_CSV",
    "SUMMARY_PARQUET",
    "SWEEP_FILE",
    "Point",
    "SweepError",
    "SweepWarning",
    "load_point",
    "load_sweep",
    "run_point",
    "sweep",
    "sweep_points",
]

SWEEP_FILE = "sweep.json"
SUMMARY_PARQUET = "summary.parquet"
SUMMARY_CSV = "summary.csv"
ERROR_SUFFIX = ".error.json"
LOCK_FILE = ".lock"

#: Totals copied from each point's summary into the summary table, in this order
#: (any further totals the engine reports follow them).
TOTALS = (
    "offered_frames",
    "offered_bytes",
    "delivered_frames",
    "delivered_bytes",
    "dropped_frames",
    "dropped_bytes",
    "in_flight_frames",
    "in_flight_bytes",
    "pause_frames_sent",
    "notifications_sent",
)
#: Columns of builtin_metrics (cnsim.metrics), after the totals.
BUILTIN_METRIC_COLUMNS = ("jain_index", "fairness_jain", "fairness_dev_max", "fairness_dev_rms",
                          "time_to_stability_s", "deadlocks")
#: Columns that are not axes, before and after the axis columns.
LEADING_COLUMNS = ("point_id", "variant", "scenario")
TRAILING_COLUMNS = ("seed", "status", "partial", "error", "wall_time_s", "events", "frame_hops", "fingerprint", *TOTALS)

#: How long a sweep waits for a first Dask worker by default (seconds).
DASK_WAIT_S = 120.0

STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_PENDING = "pending"

#: What cnsim writes at the top of a sweep directory (besides points/); the
#: report of ``cnsim reproduce`` is written there too.
REPORT_FILE = "report.html"
_TOP_TEMP_NAMES = temp_name_pattern("|".join(re.escape(n) for n in (SWEEP_FILE, SUMMARY_PARQUET, SUMMARY_CSV,
                                                                     REPORT_FILE)))
_POINT_TEMP_NAMES = temp_name_pattern(f"{POINT_ID_PATTERN}(?:{re.escape(ERROR_SUFFIX)})?")


class SweepWarning(UserWarning):
    """Something a sweep did that a person should know: e.g. a damaged point is run again."""


# --------------------------------------------------------------------------- public API


def sweep(
    scenario: Any,
    *,
    axes: Mapping[str, Sequence[Any]] | None = None,
    variants: Mapping[str, Mapping[str, Any]] | None = None,
    seeds: int | None = None,
    seed_list: Sequence[int] | None = None,
    set: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
    out: str | os.PathLike,
    jobs: int | None = None,
    dask: Any = None,
    dask_wait_s: float = DASK_WAIT_S,
    progress: bool = False,
    metrics: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Run every point of a sweep that is not complete in *out*; return the summary table.

    scenario
        A scenario file, a scenario dict, a list of files (one variant per
        file, named by the file stem) or a ``{variant: path}`` mapping. A
        file's ``[sweep]`` section (seeds, named variants, axes) applies to
        that file's points.
    axes
        ``{override key: [values]}``; added to each file's axes (a key the file
        also sweeps replaces it). Strings are override strings as for
        ``cnsim.run(set=...)`` (``"150KB"``, ``"0.3"``); other values are typed.
    variants
        ``{name: {override key: value}}``; added to each file's named variants.
    seeds, seed_list
        Seeds 1..seeds, or these seeds; replace the files' own. Without
        either (here or in the file) the scenario's ``seed`` is used.
    set
        Overrides applied to every point (before the variant's and the axes').
    out
        The sweep directory (created; a re-run resumes it).
    jobs
        Local threads (default: ``os.cpu_count()``); ignored with *dask*.
    dask
        A ``dask.distributed.Client``, a scheduler address
        (``"tcp://host:8786"``) or a scheduler file (``dask scheduler
        --scheduler-file FILE``): run the points on that cluster. Results come
        back to this process, which writes them.
    dask_wait_s
        How long to wait for a first worker of the Dask cluster (seconds)
        before giving up with a :class:`SweepError`.
    progress
        Show a progress bar (points done / failed / remaining, ETA) on stderr.
    metrics
        ``{column name: fn(result) -> float or expression}``: user-defined summary
        columns, computed from each point's :class:`Result` in this process (also with
        *dask*), from several threads at once with the local backend; added to the
        files' ``[sweep] metrics``. Expressions: see :mod:`cnsim.metrics`. A metric
        that raises or is not a number is NaN on that point, with one
        :class:`SweepWarning` per metric.

    The returned DataFrame has one row per point (columns ``point_id``,
    ``variant``, ``scenario``, one per axis key, ``seed``, ``status`` — "ok",
    "failed" or, after an interruption, "pending" — ``partial`` (True if
    the run stopped early: deadlock stop, wall-time or event limit), ``error``,
    ``wall_time_s``, ``events``, ``frame_hops``, ``fingerprint``, the totals, ``jain_index``, the
    scenario's derived metrics, the user's metrics and ``dir``), as
    written to ``out/summary.parquet``. Failed points do not raise: check
    ``df.status`` (and ``df.partial``). A complete point whose files no longer
    match the sizes and SHA-256 recorded when they were written is run again,
    with a :class:`SweepWarning` saying so. Bad input raises :class:`SweepError` (a
    :class:`cnsim.ScenarioError` and a ``ValueError``) before anything runs or
    is written; Ctrl-C writes the summary and raises ``KeyboardInterrupt``.
    """
    the_plan = plan(scenario, axes=axes, variants=variants, seeds=seeds, seed_list=seed_list, set=set,
                    metrics=metrics)
    return run_plan(the_plan, out, jobs=jobs, dask=dask, dask_wait_s=dask_wait_s, progress=progress)


def sweep_points(
    scenario: Any,
    *,
    axes: Mapping[str, Sequence[Any]] | None = None,
    variants: Mapping[str, Mapping[str, Any]] | None = None,
    seeds: int | None = None,
    seed_list: Sequence[int] | None = None,
    set: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
) -> list[Point]:
    """The points :func:`sweep` would run with these arguments, checked, without running anything.

    Each :class:`Point` has ``point_id``, ``variant``, ``scenario``, ``axes``
    (axis key → value), ``seed``, ``overrides`` (all of them, sorted) and
    ``dir`` (``"points/<id>"``, relative to the sweep directory).
    """
    return plan(scenario, axes=axes, variants=variants, seeds=seeds, seed_list=seed_list, set=set).points


def load_point(out: str | os.PathLike, point_id: str) -> Result:
    """The result of one point of the sweep in *out* (:class:`ResultError` naming the file
    if it is damaged)."""
    base = Path(out) / POINTS_DIR
    path = base / point_id
    if (path / SUMMARY_FILE).is_file():
        return Result.load(path)
    error = base / f"{point_id}{ERROR_SUFFIX}"
    if error.is_file():
        info = _read_json(error) or {}
        raise ResultError(f"{out}: point {point_id} failed: {info.get('error', '?')}")
    raise ResultError(f"{out}: no result for point {point_id!r}")


def load_sweep(out: str | os.PathLike) -> pd.DataFrame:
    """The summary table of the sweep in *out* (``summary.parquet``)."""
    path = Path(out) / SUMMARY_PARQUET
    if not path.is_file():
        raise ResultError(f"{out}: not a sweep directory (no {SUMMARY_PARQUET})")
    return pd.read_parquet(path)


def run_point(
    text: str, origin: str, fmt: str, overrides: Sequence[tuple[str, str]], seed: int, progress: Any = None
) -> dict[str, Any]:
    """Run one point in this process: the raw result of ``cnsim._core.run`` (summary JSON + numpy arrays)."""
    return _core.run(text, origin, list(overrides), fmt=fmt, seed=seed, progress=progress)


def remote_run_point(
    text: str, origin: str, fmt: str, overrides: Sequence[tuple[str, str]], seed: int
) -> tuple[bool, dict[str, Any]]:
    """The task sent to Dask workers: ``(True, raw result)`` or ``(False, error)``.

    Errors come back as plain data, so the client needs nothing but this
    package to read them.
    """
    try:
        return True, run_point(text, origin, fmt, overrides, seed)
    except Exception as exc:
        return False, _error_info(exc)


def worker_version() -> str:
    """cnsim's version in this process (checked on Dask workers before a sweep)."""
    from . import __version__

    return __version__


# --------------------------------------------------------------------------- running a plan


def run_plan(
    the_plan: Plan,
    out: str | os.PathLike,
    *,
    jobs: int | None = None,
    dask: Any = None,
    dask_wait_s: float = DASK_WAIT_S,
    progress: bool = False,
    command: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Run the incomplete points of *the_plan* into *out*; see :func:`sweep`."""
    out = Path(out)
    jobs = _check_jobs(jobs)
    _check_metric_names(the_plan)
    check_sweep_dir(out)
    client, own_client, address = _dask_client(dask, dask_wait_s) if dask is not None else (None, False, None)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / POINTS_DIR).mkdir(exist_ok=True)
        with _locked(out):
            _remove_leftovers(out)
            states = {p.point_id: _point_state(out, p) for p in the_plan.points}
            done_before = [p for p in the_plan.points if states[p.point_id] is None]
            for p in done_before:
                _error_path(out, p).unlink(missing_ok=True)
            damaged = {pid: why for pid, why in states.items() if why and why != _OTHER_ENGINE}
            for pid, why in damaged.items():
                warnings.warn(f"point {pid}: {why}; running it again", SweepWarning, stacklevel=2)
            done_ids = {p.point_id for p in done_before}
            todo = [p for p in the_plan.points if p.point_id not in done_ids]
            arguments = dict(the_plan.arguments)
            arguments.update(out=os.fspath(out), jobs=None if client is not None else jobs, dask=address)
            _write_sweep_json(out, the_plan, arguments, command)

            rows: dict[str, dict[str, Any]] = {}
            evaluator = MetricEvaluator(the_plan.metrics)
            partial_before = sum(_is_partial(out, p) for p in done_before)
            tracker = _Tracker(len(the_plan.points), len(done_before), partial_before, progress)
            started = time.monotonic()
            interrupted = False
            try:
                if todo:
                    if client is not None:
                        _run_dask(client, out, todo, rows, tracker, evaluator)
                    else:
                        _run_local(out, todo, min(jobs, len(todo)), rows, tracker, evaluator)
            except KeyboardInterrupt:
                interrupted = True
                raise
            finally:
                tracker.close()
                frame = _summary_frame(out, the_plan, rows, evaluator, verified={p.point_id for p in done_before})
                frame.attrs.update(
                    out=os.fspath(out),
                    points=len(the_plan.points),
                    done_before=len(done_before),
                    ran=len(todo),
                    failed=frame.loc[frame["status"] == STATUS_FAILED, "point_id"].tolist(),
                    partial=frame.loc[frame["partial"], "point_id"].tolist(),
                    damaged=damaged,
                    interrupted=interrupted,
                    wall_time_s=time.monotonic() - started,
                )
                _write_summary(out, frame)
                for message in evaluator.messages():
                    warnings.warn(message, SweepWarning, stacklevel=2)
    finally:
        if own_client:
            with contextlib.suppress(Exception):
                client.close()
    return frame


def _check_metric_names(the_plan: Plan) -> None:
    """A user's metric may not take the name of another column of the summary."""
    taken = {*LEADING_COLUMNS, *TRAILING_COLUMNS, "dir", *the_plan.axis_keys, *BUILTIN_METRIC_COLUMNS}
    clash = sorted(set(the_plan.metrics) & taken)
    if clash:
        raise SweepError(f"metrics: {', '.join(map(repr, clash))} {'is' if len(clash) == 1 else 'are'} already "
                         "a column of the summary; give the metric another name")


def _check_jobs(jobs: Any) -> int:
    if jobs is None:
        return os.cpu_count() or 1
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise SweepError(f"jobs must be a positive integer, got {jobs!r}")
    return jobs


def check_sweep_dir(out: Path) -> None:
    """Refuse a sweep directory that is not new, empty or a cnsim sweep (before anything runs)."""
    try:
        check_path_length(out)
    except ResultError as exc:
        raise SweepError(str(exc)) from None
    if out.is_symlink() and not out.exists():
        raise SweepError(f"{out}: dangling symbolic link")
    if not out.exists():
        return
    if not out.is_dir():
        raise SweepError(f"{out}: exists and is not a directory")
    entries = sorted(e.name for e in out.iterdir())
    if entries and not _is_sweep_dir(out):
        shown = ", ".join(entries[:3]) + (f" and {len(entries) - 3} more" if len(entries) > 3 else "")
        raise SweepError(
            f"{out}: exists and is not a cnsim sweep directory (no cnsim {SWEEP_FILE}; it holds {shown}); "
            "refusing to write into it"
        )


def _is_sweep_dir(out: Path) -> bool:
    """Does *out* hold a sweep.json that cnsim wrote (or only the lock and empty points/ of a
    sweep that is starting)?"""
    doc = _read_json(out / SWEEP_FILE)
    if isinstance(doc, dict) and "cnsim_version" in doc and isinstance(doc.get("points"), list):
        return True
    points = out / POINTS_DIR
    return {e.name for e in out.iterdir()} <= {LOCK_FILE, POINTS_DIR} and points.is_dir() and not any(
        points.iterdir()
    )


@contextlib.contextmanager
def _locked(out: Path):
    """Hold an exclusive lock on the sweep directory, or refuse at once if another sweep holds it.

    filelock's FileLock is an flock(2) lock on ``out/.lock`` on POSIX systems (the file stays
    in place): the system releases it when the process dies, so a killed sweep never leaves
    its directory locked.
    """
    lock = filelock.FileLock(out / LOCK_FILE, timeout=0)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise SweepError(f"{out}: another sweep is writing into this directory") from None
    try:
        yield
    finally:
        lock.release()


def _remove_leftovers(out: Path) -> None:
    """Temporary files and directories of an interrupted save (never complete results):
    only the names cnsim makes for its own files (see cnsim.outputs)."""
    for folder, names in ((out, _TOP_TEMP_NAMES), (out / POINTS_DIR, _POINT_TEMP_NAMES)):
        for entry in folder.iterdir():
            if names.fullmatch(entry.name):
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)


def _point_path(out: Path, point: Point) -> Path:
    return out / POINTS_DIR / point.point_id


def _error_path(out: Path, point: Point) -> Path:
    return out / POINTS_DIR / f"{point.point_id}{ERROR_SUFFIX}"


_NO_RESULT = ""
_OTHER_ENGINE = "computed by another engine build"


def _point_state(out: Path, point: Point, *, hashes: bool = True) -> str | None:
    """None if the point is done, else why not ("" if it has no result).

    A point is done if its result is complete, came from this engine build
    (after any change to the engine the points are computed again) and its
    files have the sizes and SHA-256 recorded when they were written.
    """
    summary = _read_json(_point_path(out, point) / SUMMARY_FILE)
    if not isinstance(summary, dict):
        return _NO_RESULT
    if summary.get("engine_id") != _core.ENGINE_ID:
        return _OTHER_ENGINE
    return verify(_point_path(out, point), hashes=hashes)


def _is_partial(out: Path, point: Point) -> bool:
    summary = _read_json(_point_path(out, point) / SUMMARY_FILE) or {}
    return bool(summary.get("partial"))


# --------------------------------------------------------------------------- one point


def _save_point(out: Path, point: Point, raw: Mapping[str, Any]) -> Result:
    """Build the Result from the raw engine output and save it; returns it."""
    result = Result.from_core(raw, scenario_file=point.scenario)
    # Replaces an outdated or damaged result of this point (only ever cnsim's own files).
    result.save(_point_path(out, point), force=True)
    _error_path(out, point).unlink(missing_ok=True)
    return result


def _record_failure(out: Path, point: Point, info: dict[str, Any]) -> None:
    record = {
        **point.to_dict(),
        "error": f"{info['type']}: {info['message']}",
        "type": info["type"],
        "message": info["message"],
        "traceback": info.get("traceback"),
        "time": _now(),
    }
    write_atomically(_error_path(out, point), lambda p: p.write_text(json.dumps(record, indent=2) + "\n"))


def _error_info(exc: BaseException) -> dict[str, Any]:
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    }


def _finish(
    out: Path, point: Point, raw: Mapping[str, Any] | None, error: dict[str, Any] | None, evaluator: MetricEvaluator
) -> dict[str, Any]:
    """Save a point's result or record its failure; return its summary row."""
    if error is None:
        try:
            result = _save_point(out, point, raw)
        except Exception as exc:  # e.g. disk full: the point failed, the sweep goes on
            error = _error_info(exc)
        else:
            return _row(point, STATUS_OK, summary=result.summary, metrics=evaluator.evaluate(result, point.point_id))
    message = f"{error['type']}: {error['message']}"
    try:
        _record_failure(out, point, error)
    except OSError as exc:  # e.g. the disk is full: the summary still says so
        message += f" (and it could not be recorded: {exc})"
    return _row(point, STATUS_FAILED, error=message)


# --------------------------------------------------------------------------- local threads


def _run_local(
    out: Path, todo: list[Point], jobs: int, rows: dict[str, dict[str, Any]], tracker: _Tracker,
    evaluator: MetricEvaluator,
) -> None:
    stop = threading.Event()
    in_flight: dict[str, Any] = {}  # point id -> engine progress handle

    def work(point: Point) -> dict[str, Any] | None:
        if stop.is_set():
            return None
        handle = _core.Progress()
        in_flight[point.point_id] = handle
        try:
            raw = run_point(
                point.source.text, point.scenario, point.source.fmt, point.engine_overrides, point.seed, handle
            )
        except Exception as exc:
            if stop.is_set() and isinstance(exc, _core.SimulationError):
                return None  # cancelled by Ctrl-C: not a failure, still to do
            return _finish(out, point, None, _error_info(exc), evaluator)
        finally:
            in_flight.pop(point.point_id, None)
        return _finish(out, point, raw, None, evaluator)

    def collect(future: Any) -> None:
        row = future.result()
        if row is not None:
            rows[row["point_id"]] = row
            tracker.point_done(row["status"], row["partial"])

    executor = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="cnsim-sweep")
    futures = [executor.submit(work, p) for p in todo]
    pending = set(futures)
    try:
        while pending:
            finished, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in finished:
                collect(future)
            tracker.refresh(_partial(in_flight.values()))
    except BaseException:
        stop.set()
        for handle in list(in_flight.values()):
            handle.cancel()
        executor.shutdown(wait=True, cancel_futures=True)
        for future in pending:
            if future.done() and not future.cancelled():
                collect(future)
        raise
    executor.shutdown(wait=True)


def _partial(handles: Iterable[Any]) -> float:
    """How much of the points in flight is done, in points."""
    total = 0.0
    for handle in list(handles):
        with contextlib.suppress(Exception):
            if handle.duration_s:
                total += min(handle.sim_time_s / handle.duration_s, 1.0)
    return total


# --------------------------------------------------------------------------- Dask


def _dask_client(dask: Any, wait_s: float = DASK_WAIT_S) -> tuple[Any, bool, str]:
    """(client, whether we created it, address for sweep.json)."""
    wait_s = _check_dask_wait(wait_s)
    if isinstance(dask, (str, os.PathLike)):
        try:
            from distributed import Client
        except ImportError:
            raise SweepError("--dask needs dask.distributed: pip install 'cnsim[dask]'") from None
        address = os.fspath(dask)  # as given, for sweep.json
        scheduler = _scheduler_address(address)
        try:
            # The wait for the scheduler is Dask's distributed.comm.timeouts.connect (30 s by default).
            client = Client(scheduler, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise SweepError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}") from None
        own = True
    elif hasattr(dask, "submit") and hasattr(dask, "cancel"):
        client, own = dask, False
        address = str(getattr(getattr(client, "scheduler", None), "address", None) or repr(client))
    else:
        raise SweepError(f"dask must be a scheduler address or a dask.distributed.Client, not {type(dask).__name__}")
    try:
        _wait_for_workers(client, wait_s)
        _check_workers(client)
    except BaseException:
        if own:
            with contextlib.suppress(Exception):
                client.close()
        raise
    return client, own, address


def _check_dask_wait(wait_s: Any) -> float:
    if isinstance(wait_s, bool) or not isinstance(wait_s, (int, float)) or not 0 <= wait_s <= 1e6:
        raise SweepError(f"dask_wait_s must be a number of seconds from 0 to 1e6, got {wait_s!r}")
    return float(wait_s)


_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?[^\s/:]+:\d{1,5}$|^[a-z][a-z0-9+.-]*://\S+$", re.IGNORECASE)


def _scheduler_address(text: str) -> str:
    """The scheduler address of ``--dask``: given, or read from a scheduler file.

    Checked here because Dask, given something else, waits for its connect
    timeout and then fails with an unrelated message.
    """
    if os.path.isfile(text):
        try:
            with open(text, encoding="utf-8") as fh:
                info = json.load(fh)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise SweepError(f"{text}: not a Dask scheduler file (expected JSON with an 'address'): {exc}") from None
        address = info.get("address") if isinstance(info, dict) else None
        if not isinstance(address, str) or not _ADDRESS.match(address):
            raise SweepError(f"{text}: not a Dask scheduler file: expected an 'address' like tcp://host:8786, "
                             f"found {address!r}")
        return address
    if os.path.exists(text):
        raise SweepError(f"{text}: not a Dask scheduler file (not a regular file)")
    if not _ADDRESS.match(text):
        raise SweepError(f"--dask: expected a scheduler address (tcp://host:8786 or host:8786) or a scheduler file, "
                         f"found {text!r}")
    return text


def _wait_for_workers(client: Any, wait_s: float) -> None:
    """Wait for a first worker, saying so: a scheduler without workers would run nothing, forever."""
    try:
        info = client.scheduler_info()
        if info.get("workers"):
            return
        address = info.get("address") or client.scheduler.address
    except Exception:  # an old or mocked client: let the version check speak
        return
    print(f"waiting up to {wait_s:g} s for a Dask worker to join the scheduler at {address} "
          "(--dask-wait sets the limit)", file=sys.stderr, flush=True)
    try:
        client.wait_for_workers(1, timeout=wait_s)
    except (TimeoutError, OSError):
        raise SweepError(f"no Dask worker joined the scheduler at {address} within {wait_s:g} s "
                         "(start workers, or wait longer with --dask-wait)") from None


def _check_workers(client: Any) -> None:
    """Workers must run the same cnsim (same version ⇒ same results)."""
    from . import __version__

    try:
        versions = client.run(worker_version)
    except Exception as exc:
        raise SweepError(f"Dask workers cannot run cnsim (is it installed on the workers?): {exc}") from None
    wrong = {w: v for w, v in versions.items() if v != __version__}
    if wrong:
        shown = ", ".join(f"{w}: {v}" for w, v in sorted(wrong.items()))
        raise SweepError(f"Dask workers run another cnsim version than this one ({__version__}): {shown}")


def _run_dask(
    client: Any, out: Path, todo: list[Point], rows: dict[str, dict[str, Any]], tracker: _Tracker,
    evaluator: MetricEvaluator,
) -> None:
    from distributed import as_completed

    token = uuid.uuid4().hex[:8]
    futures = {}
    for p in todo:
        future = client.submit(
            remote_run_point,
            p.source.text,
            p.scenario,
            p.source.fmt,
            p.engine_overrides,
            p.seed,
            key=f"cnsim-{p.point_id}-{token}",
            pure=False,
        )
        futures[future] = p
    try:
        for future in as_completed(list(futures), loop=client.loop):
            point = futures.pop(future)
            try:
                ok, payload = future.result()
            except Exception as exc:  # KilledWorker, lost connection, ...
                ok, payload = False, _error_info(exc)
            finally:
                future.release()
            row = _finish(out, point, payload if ok else None, None if ok else payload, evaluator)
            rows[point.point_id] = row
            tracker.point_done(row["status"], row["partial"])
    except BaseException:
        with contextlib.suppress(Exception):
            client.cancel(list(futures))
        raise


# --------------------------------------------------------------------------- summary


def _row(
    point: Point, status: str, summary: Mapping[str, Any] | None = None, error: str | None = None,
    metrics: Mapping[str, float] | None = None,
) -> dict:
    row: dict[str, Any] = {
        "point_id": point.point_id,
        "variant": point.variant,
        "scenario": point.scenario,
        **{f"axis:{k}": v for k, v in point.axes.items()},
        "seed": point.seed,
        "status": status,
        "partial": bool(summary is not None and summary.get("partial")),
        "error": error,
    }
    if summary is not None:
        row["wall_time_s"] = summary.get("wall_time_s")
        row["events"] = summary.get("events")
        row["frame_hops"] = summary.get("frame_hops")
        row["fingerprint"] = summary.get("fingerprint")
        totals = summary.get("totals") or {}
        for key, value in totals.items():
            if not isinstance(value, (dict, list)):
                row[key] = value
        row.update(builtin_metrics(summary))
        row.update({f"metric:{name}": value for name, value in (metrics or {}).items()})
        row["dir"] = point.dir
    return row


def _row_from_disk(out: Path, point: Point, verified: bool, evaluator: MetricEvaluator) -> dict[str, Any]:
    # Points checked at the start are not hashed again; the sizes still are.
    if _point_state(out, point, hashes=not verified) is None:
        summary = _read_json(_point_path(out, point) / SUMMARY_FILE)
        if summary is not None:
            # The user's metrics need the tables: only then is the result loaded.
            metrics = evaluator.evaluate_saved(_point_path(out, point), point.point_id)
            return _row(point, STATUS_OK, summary=summary, metrics=metrics)
    info = _read_json(_error_path(out, point)) if _error_path(out, point).is_file() else None
    if info is not None:
        return _row(point, STATUS_FAILED, error=str(info.get("error", "?")))
    return _row(point, STATUS_PENDING)


def _summary_frame(
    out: Path, the_plan: Plan, rows: Mapping[str, dict[str, Any]], evaluator: MetricEvaluator,
    verified: Iterable[str] = (),
) -> pd.DataFrame:
    """One row per point: from this run's results, else from the points on disk."""
    verified = set(verified)
    records = [rows.get(p.point_id) or _row_from_disk(out, p, p.point_id in verified, evaluator)
               for p in the_plan.points]
    extra_totals: list[str] = []
    for r in records:
        for key in r:
            known = key in LEADING_COLUMNS or key in TRAILING_COLUMNS or key == "dir" or key.startswith(("axis:", "metric:"))
            if not known and key not in extra_totals:
                extra_totals.append(key)
    data: dict[str, Any] = {}
    for col in LEADING_COLUMNS:
        data[col] = pd.Series([r[col] for r in records], dtype="string")
    for key in the_plan.axis_keys:
        data[key] = _axis_column([r.get(f"axis:{key}", _MISSING) for r in records])
    seeds = [r["seed"] for r in records]
    data["seed"] = pd.Series(seeds, dtype="int64" if max(seeds, default=0) < 2**63 else "uint64")
    data["status"] = pd.Series([r["status"] for r in records], dtype="string")
    data["partial"] = pd.Series([bool(r.get("partial")) for r in records], dtype="bool")
    data["error"] = pd.Series([r.get("error") for r in records], dtype="string")
    data["wall_time_s"] = pd.Series([r.get("wall_time_s") for r in records], dtype="float64")
    for col in ("events", "frame_hops"):
        data[col] = _number_column([r.get(col) for r in records])
    data["fingerprint"] = pd.Series([r.get("fingerprint") for r in records], dtype="string")
    for col in (*TOTALS, *extra_totals):
        data[col] = _number_column([r.get(col) for r in records])
    for name in the_plan.metrics:
        data[name] = pd.Series([r.get(f"metric:{name}", float("nan")) for r in records], dtype="float64")
    data["dir"] = pd.Series([r.get("dir") for r in records], dtype="string")
    return pd.DataFrame(data)


_MISSING = object()


def _axis_column(values: list[Any]) -> pd.Series:
    present = [v for v in values if v is not _MISSING]
    clean = [None if v is _MISSING else v for v in values]
    if present and all(isinstance(v, bool) for v in present):
        return pd.Series(clean, dtype="boolean")
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.Series(clean, dtype="Int64")
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pd.Series([float("nan") if v is None else float(v) for v in clean], dtype="float64")
    return pd.Series(
        [None if v is None else (v if isinstance(v, str) else display_value(v)) for v in clean], dtype="string"
    )


def _number_column(values: list[Any]) -> pd.Series:
    present = [v for v in values if v is not None]
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.Series(values, dtype="Int64")
    return pd.Series([float("nan") if v is None else float(v) for v in values], dtype="float64")


def _write_summary(out: Path, frame: pd.DataFrame) -> None:
    try:
        write_atomically(out / SUMMARY_PARQUET, lambda p: frame.to_parquet(p, index=False))
        write_atomically(out / SUMMARY_CSV, lambda p: frame.to_csv(p, index=False))
    except OSError:
        # An old summary would disagree with the points on disk: none is better
        # (the next run of the same command writes it again).
        for name in (SUMMARY_PARQUET, SUMMARY_CSV):
            (out / name).unlink(missing_ok=True)
        raise


def _write_sweep_json(out: Path, the_plan: Plan, arguments: dict[str, Any], command: Sequence[str] | None) -> None:
    from . import __version__

    doc = {
        "cnsim_version": __version__,
        "command": list(command) if command is not None else None,
        "arguments": arguments,
        "updated": _now(),
        "files": [
            {"path": s.origin, "label": s.label, "sha256": s.sha256, "content_hash": s.content_hash}
            for s in the_plan.sources
        ],
        "axes": list(the_plan.axis_keys),
        "points": [p.to_dict() for p in the_plan.points],
    }
    text = json.dumps(doc, indent=2, default=str) + "\n"
    write_atomically(out / SWEEP_FILE, lambda p: p.write_text(text, encoding="utf-8"))


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --------------------------------------------------------------------------- progress


class _Tracker:
    """Counts finished points and drives a rich progress bar on stderr (if asked for)."""

    def __init__(self, total: int, done_before: int, partial_before: int, show: bool) -> None:
        self.total = total
        self.ok = done_before
        self.partial = partial_before  # also counted in ok: done, but stopped early
        self.failed = 0
        self._lock = threading.Lock()
        self._bar = None
        if show and total > done_before:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("sweep"),
                BarColumn(),
                TextColumn(
                    "{task.fields[done]}/{task.total:.0f} done · {task.fields[partial]} partial · "
                    "{task.fields[failed]} failed · "
                    "{task.fields[left]} left ·"
                ),
                TimeElapsedColumn(),
                TextColumn("· ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._task = self._bar.add_task("sweep", total=total, completed=done_before, **self._fields())
            self._bar.start()

    def _fields(self) -> dict[str, Any]:
        done = self.ok + self.failed
        return {"done": done, "partial": self.partial, "failed": self.failed, "left": self.total - done}

    def point_done(self, status: str, partial: bool) -> None:
        with self._lock:
            if status == STATUS_OK:
                self.ok += 1
                self.partial += partial
            else:
                self.failed += 1
            self.refresh()

    def refresh(self, partial: float = 0.0) -> None:
        if self._bar is not None:
            done = self.ok + self.failed
            self._bar.update(self._task, completed=min(done + partial, self.total), **self._fields())

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
