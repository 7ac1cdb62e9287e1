"""Figures from results (matplotlib, Agg backend).

Views (one file each):

* ``throughput_links``: throughput (Gb/s) vs time (ms) of the links named in
  ``summary["plot"]["links"]`` (output queues "NODE->PEER");
* ``throughput_flows``: delivered throughput (Gb/s) vs time of the flows named
  in ``summary["plot"]["flows"]``;
* ``queue_occupancy``: time-averaged occupancy (KB) vs time of the queues named
  in ``summary["plot"]["queues"]``;
* ``drops``: total frames dropped per run (bar chart).

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
    names = {f"{view}.{fmt}" for view in (*(v[0] for v in VIEWS), "drops") for fmt in FORMATS}
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
