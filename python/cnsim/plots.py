"""Figures from results (matplotlib, Agg backend).

Views (one file each):

* ``throughput_links``: throughput (Gb/s) vs time (ms) of the links named in
  ``summary["plot"]["links"]`` (output queues "NODE->PEER");
* ``throughput_flows``: delivered throughput (Gb/s) vs time of the flows named
  in ``summary["plot"]["flows"]``;
* ``queue_occupancy``: time-averaged occupancy (KB) vs time of the queues named
  in ``summary["plot"]["queues"]``;
* ``drops``: total frames dropped per run (bar chart);
* ``pfc_timeline`` (runs with PFC): when each (transmitter, class) was held
  by PFC, one row per pair, the most-paused ``TOP_PAUSED`` pairs;
* ``buffer_use`` (runs with shared-buffer switches): shared pool and
  headroom in use (KB) vs time per switch, the ``TOP_BUFFERS`` fullest.

If a list is missing or empty: all flows, and the 4 queues with the highest
maximum occupancy. With one result, each view has one line per item. With
several results (variants of a scenario), each item gets its own panel and
the variants are overlaid on it, labelled with the scenario name.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .outputs import KIND_FIGURES, Reservation, reserve  # noqa: E402
from .results import FIGURES_DIR, Result  # noqa: E402

FORMATS = ("png", "svg")
FALLBACK_QUEUES = 4
TOP_PAUSED = 12
TOP_BUFFERS = 4
PFC_QUANTUM_BITS = 512
KB = 1000.0  # figures show decimal kilobytes


def figures_dir(result_dir: str | os.PathLike) -> Path:
    """Where ``cnsim run --plot`` puts the figures of a result directory."""
    return Path(result_dir) / FIGURES_DIR


def plot(
    results: Result | Sequence[Result],
    out: str | os.PathLike,
    fmt: str = "png",
    *,
    force: bool = False,
) -> list[Path]:
    """Draw all views for one result or overlay several into the figure directory *out*;
    return the files written.

    The directory is written as a whole, like a result (temporary name, marker,
    rename): a new or empty directory is written, earlier figures from cnsim
    are replaced only with ``force=True``, anything else is refused
    (:class:`cnsim.results.ResultError`).
    """
    results = _result_list(results, fmt)
    with reserve_figures(out, force=force) as slot:
        names = draw_into(results, slot, fmt)
        target = slot.commit()
    return [target / name for name in names]


def reserve_figures(out: str | os.PathLike, *, force: bool = False) -> Reservation:
    """Check and claim the figure directory *out* before drawing (see :func:`plot`)."""
    return reserve(out, KIND_FIGURES, force=force, unmarked=_unmarked_figures)


def draw_into(results: Result | Sequence[Result], slot: Reservation, fmt: str = "png") -> list[str]:
    """Draw all views into a reserved figure directory; return the file names."""
    results = _result_list(results, fmt)
    labels = variant_labels(results)
    for filename, kind, title in VIEWS:
        fig = time_figure(results, labels, kind, _items(results, kind), title)
        slot.write(f"{filename}.{fmt}", lambda path, fig=fig: _save(fig, path))
    drops = _drops_view(results, labels)
    slot.write(f"drops.{fmt}", lambda path: _save(drops, path))
    if any(not r.pfc_events.empty for r in results):
        timeline = _pfc_timeline_view(results, labels)
        slot.write(f"pfc_timeline.{fmt}", lambda path: _save(timeline, path))
    if any(not r.buffer_occupancy.empty for r in results):
        buffers = _buffer_view(results, labels)
        slot.write(f"buffer_use.{fmt}", lambda path: _save(buffers, path))
    return list(slot.written)


def _result_list(results: Result | Sequence[Result], fmt: str) -> list[Result]:
    if isinstance(results, Result):
        results = [results]
    results = list(results)
    if not results:
        raise ValueError("nothing to plot: no results given")
    if fmt not in FORMATS:
        raise ValueError(f"unknown figure format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return results


def _unmarked_figures(directory: Path) -> set[str] | None:
    """Figure directories drawn before the marker existed: nothing but view files."""
    views = (*(v[0] for v in VIEWS), "drops", "pfc_timeline", "buffer_use")
    names = {f"{view}.{fmt}" for view in views for fmt in FORMATS}
    return names if all(e.name in names for e in directory.iterdir()) else None


def time_figure(results: Sequence[Result], labels: Sequence[str], kind: str, items: Sequence[str], title: str):
    """One figure of a time-series view: `kind` is "links", "flows" or "queues"."""
    series, ylabel = SERIES[kind]
    return _time_view(list(results), list(labels), list(items), series, ylabel, title)


def variant_labels(results: Sequence[Result]) -> list[str]:
    """Scenario names, disambiguated by seed or directory name when they repeat."""
    names = [r.name or (r.path.name if r.path else f"run {i + 1}") for i, r in enumerate(results)]
    if len(set(names)) == len(names):
        return names
    with_seed = [f"{n} (seed {r.seed})" for n, r in zip(names, results)]
    if len(set(with_seed)) == len(with_seed):
        return with_seed
    with_dir = [f"{n} [{r.path.name}]" if r.path else n for n, r in zip(names, results)]
    if len(set(with_dir)) == len(with_dir):
        return with_dir
    return [f"{n} #{i + 1}" for i, n in enumerate(names)]


# --------------------------------------------------------------------------- item choice


def _items(results: Sequence[Result], kind: str) -> list[str]:
    """Names to plot for a view: the first result that names some, else the fallback."""
    for result in results:
        plot_spec = result.summary.get("plot") or {}
        names = [str(n) for n in (plot_spec.get(kind) or [])]
        if names:
            return names
    if kind == "flows":
        names = []
        for result in results:
            names += [n for n in result.flows["name"] if n not in names]
        return names
    return _busiest_queues(results)


def _busiest_queues(results: Sequence[Result]) -> list[str]:
    best: dict[str, tuple[float, float]] = {}
    for result in results:
        q = result.queues
        if q.empty:
            continue
        occ = q["max_occupancy_bytes"] if "max_occupancy_bytes" in q else pd.Series(0, index=q.index)
        tx = q["tx_bytes"] if "tx_bytes" in q else pd.Series(0, index=q.index)
        for name, o, t in zip(q["name"], occ, tx):
            key = (float(o or 0), float(t or 0))
            best[name] = max(best.get(name, key), key)
    ranked = sorted(best, key=lambda n: best[n], reverse=True)
    return ranked[:FALLBACK_QUEUES]


# --------------------------------------------------------------------------- series


def _link_series(result: Result, name: str) -> pd.DataFrame | None:
    df = result.link_throughput
    sel = df[df["queue"] == name]
    if sel.empty:
        return None
    return _steps(result, sel["time_s"], sel["gbps"])


def _flow_series(result: Result, name: str) -> pd.DataFrame | None:
    df = result.flow_throughput
    sel = df[df["flow"] == name]
    if sel.empty:
        return None
    return _steps(result, sel["time_s"], sel["delivered_gbps"])


def _queue_series(result: Result, name: str) -> pd.DataFrame | None:
    df = result.queue_occupancy
    sel = df[df["queue"] == name]
    if sel.empty:
        return None
    return _steps(result, sel["time_s"], sel["mean_bytes"] / KB)


def _steps(result: Result, time_s: pd.Series, values: pd.Series) -> pd.DataFrame:
    """Bin-start times in ms plus a closing point at the end of the last bin (for steps-post)."""
    t = np.append(time_s.to_numpy(dtype=float), float(time_s.iloc[-1]) + result.bin_s) * 1e3
    y = values.to_numpy(dtype=float)
    return pd.DataFrame({"t_ms": t, "y": np.append(y, y[-1])})


# --------------------------------------------------------------------------- figures


def _time_view(results, labels, items, series, ylabel, title):
    if len(results) == 1:
        fig, ax = plt.subplots(figsize=(8, 4.5), constrained_layout=True)
        result = results[0]
        drawn = 0
        for name in items:
            data = series(result, name)
            if data is None:
                continue
            ax.plot(data["t_ms"], data["y"], drawstyle="steps-post", linewidth=1.2, label=name)
            drawn += 1
        _decorate(ax, ylabel, legend=drawn > 0)
        ax.set_title(f"{title} — {labels[0]}")
        if not drawn:
            _empty(ax)
        return fig

    n = max(len(items), 1)
    fig, axes = plt.subplots(n, 1, figsize=(8, 2.6 * n + 0.6), sharex=True, squeeze=False, constrained_layout=True)
    for ax, name in zip(axes[:, 0], items or [None]):
        drawn = 0
        for result, label in zip(results, labels):
            data = series(result, name) if name is not None else None
            if data is None:
                continue
            ax.plot(data["t_ms"], data["y"], drawstyle="steps-post", linewidth=1.2, label=label)
            drawn += 1
        ax.set_title(name or "")
        _decorate(ax, ylabel, legend=drawn > 0, xlabel=ax is axes[-1, 0])
        if not drawn:
            _empty(ax)
    fig.suptitle(f"{title}: {' vs '.join(labels)}")
    return fig


def _decorate(ax, ylabel: str, legend: bool, xlabel: bool = True) -> None:
    if xlabel:
        ax.set_xlabel("time (ms)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    if legend:
        ax.legend(loc="best", fontsize="small")


def _empty(ax) -> None:
    ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center", color="grey")


def _drops_view(results, labels):
    drops = [int((r.summary.get("totals") or {}).get("dropped_frames", 0)) for r in results]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.4 * len(results) + 2), 4), constrained_layout=True)
    bars = ax.bar(range(len(results)), drops, color="tab:red", width=0.6)
    ax.set_xticks(range(len(results)), labels, rotation=20 if len(results) > 3 else 0)
    ax.bar_label(bars, labels=[f"{d:,}" for d in drops], padding=2)
    ax.set_ylabel("frames dropped")
    ax.set_title("Frames dropped per run")
    ax.set_ylim(0, max(drops + [1]) * 1.15)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def pause_intervals(result: Result) -> pd.DataFrame:
    """When each (transmitter, class) was held by PFC: queue, class, start_s, end_s.

    Built from the received PFC events: a frame with quanta > 0 holds the class
    for quanta x 512 bit times of the link (or until a later frame for that
    class, which replaces the timer); quanta 0 releases it.
    """
    rows = []
    ev = result.pfc_events
    ev = ev[ev["direction"] == "received"]
    rates = dict(zip(result.queues["name"], result.queues.get("rate_gbps", pd.Series(dtype=float)) * 1e9))
    for (queue, cls), group in ev.groupby(["queue", "class"], sort=True):
        quantum_s = PFC_QUANTUM_BITS / rates[queue]
        start = until = None
        for t, quanta in zip(group["time_s"].to_numpy(), group["quanta"].to_numpy()):
            if start is not None and until <= t:
                rows.append((queue, cls, start, until))
                start = None
            if quanta == 0:
                if start is not None:
                    rows.append((queue, cls, start, t))
                    start = None
                continue
            if start is None:
                start = t
            until = t + quanta * quantum_s
        if start is not None:
            rows.append((queue, cls, start, min(until, result.duration_s)))
    return pd.DataFrame(rows, columns=["queue", "class", "start_s", "end_s"])


def _pfc_timeline_view(results, labels):
    per_run = [pause_intervals(r) for r in results]
    fig, axes = plt.subplots(
        len(results),
        1,
        figsize=(8, sum(1.2 + 0.28 * min(TOP_PAUSED, max(1, _n_pairs(p))) for p in per_run)),
        squeeze=False,
        constrained_layout=True,
    )
    for ax, result, label, intervals in zip(axes[:, 0], results, labels, per_run):
        paused = (intervals["end_s"] - intervals["start_s"]).groupby([intervals["queue"], intervals["class"]]).sum()
        pairs = list(paused.sort_values(ascending=False, kind="stable").index[:TOP_PAUSED])
        for row, (queue, cls) in enumerate(pairs):
            sel = intervals[(intervals["queue"] == queue) & (intervals["class"] == cls)]
            spans = list(zip(sel["start_s"] * 1e3, (sel["end_s"] - sel["start_s"]) * 1e3))
            ax.broken_barh(spans, (row - 0.4, 0.8), color=plt.cm.tab10(int(cls) % 10))
        ax.set_yticks(range(len(pairs)), [f"{q} class {c}" for q, c in pairs], fontsize="small")
        ax.set_ylim(len(pairs) - 0.5 if pairs else 0.5, -0.5)
        ax.set_xlim(0, result.duration_s * 1e3)
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_xlabel("time (ms)")
        n_pairs = _n_pairs(intervals)
        more = f" (the {len(pairs)} most paused of {n_pairs})" if n_pairs > len(pairs) else ""
        ax.set_title(f"{label}: transmitters held by PFC{more}", fontsize="medium")
        if not pairs:
            _empty(ax)
    fig.suptitle("PFC pause timeline")
    return fig


def _n_pairs(intervals: pd.DataFrame) -> int:
    return len(intervals[["queue", "class"]].drop_duplicates())


def _buffer_view(results, labels):
    peak: dict[str, float] = {}
    for result in results:
        for name, value in result.buffer_occupancy.groupby("switch")["shared_max_bytes"].max().items():
            peak[name] = max(peak.get(name, 0), value)
    switches = sorted(peak, key=lambda n: -peak[n])[:TOP_BUFFERS]
    fig, axes = plt.subplots(
        len(switches), 1, figsize=(8, 2.8 * len(switches) + 0.6), sharex=True, squeeze=False, constrained_layout=True
    )
    several = len(results) > 1
    for ax, switch in zip(axes[:, 0], switches):
        for i, (result, label) in enumerate(zip(results, labels)):
            sel = result.buffer_occupancy[result.buffer_occupancy["switch"] == switch]
            if sel.empty:
                continue
            color = plt.cm.tab10(i % 10)
            prefix = f"{label}: " if several else ""
            shared = _steps(result, sel["time_s"], sel["shared_mean_bytes"] / KB)
            headroom = _steps(result, sel["time_s"], sel["headroom_mean_bytes"] / KB)
            ax.plot(shared["t_ms"], shared["y"], drawstyle="steps-post", color=color, label=f"{prefix}shared pool")
            ax.plot(
                headroom["t_ms"], headroom["y"], drawstyle="steps-post", color=color, linestyle="--",
                label=f"{prefix}headroom",
            )
            pool = next(b["shared_pool_bytes"] for b in result.summary["buffers"] if b["switch"] == switch)
            ax.axhline(pool / KB, color=color, linestyle=":", linewidth=1, label=f"{prefix}pool size")
        ax.set_title(switch, fontsize="medium")
        _decorate(ax, "mean in use (KB = 1000 B)", legend=True, xlabel=ax is axes[-1, 0])
    fig.suptitle(f"Shared buffer in use: {' vs '.join(labels)}")
    return fig


# kind -> (series of one item, y-axis label); file name, kind and title of each view.
SERIES = {
    "links": (_link_series, "throughput (Gb/s)"),
    "flows": (_flow_series, "delivered throughput (Gb/s)"),
    "queues": (_queue_series, "mean occupancy (KB = 1000 B)"),
}
VIEWS = (
    ("throughput_links", "links", "Link throughput"),
    ("throughput_flows", "flows", "Flow throughput"),
    ("queue_occupancy", "queues", "Queue occupancy"),
)


def _save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
