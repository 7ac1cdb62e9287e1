"""Figures from results (matplotlib).

Views (:data:`VIEWS`, one file each; a view is drawn only when some run has
something for it):

* ``throughput_links``: throughput (Gb/s) vs time (ms) of the links named in
  ``summary["plot"]["links"]`` (output queues "NODE->PEER");
* ``throughput_flows``: delivered throughput (Gb/s) vs time of the flows named
  in ``summary["plot"]["flows"]``;
* ``queue_occupancy``: time-averaged occupancy vs time of the queues named in
  ``summary["plot"]["queues"]``, in the scenario's own kilobytes (KiB where
  ``kilobyte = 1024``), with dashed lines at the thresholds compared with
  those queues' occupancy (ECN Kmin/Kmax or K, global PAUSE XOFF/XON, the
  congestion point's Qeq), one legend entry per distinct value, a threshold
  with more than ``thresholds.MAX_DISTINCT`` values among them left out;
* ``drops``: total frames dropped per run (bar chart);
* ``drops_over_time`` (runs that dropped frames): frames dropped per bin, a
  row per queue (the queues that dropped most), darker for more;
* ``pause`` (runs that sent PAUSE or PFC XOFF): XOFF frames sent per bin, a
  row per queue (the queues that sent most), darker for more;
* ``rate_limiters`` (runs with a congestion-notification scheme): each
  limiter's current rate (CR) and, for QCN, its target rate (TR), the flows
  held furthest below their own peak;
* ``pfc_timeline`` (runs with PFC): when each (transmitter, class) was held
  by PFC, one row per pair, the most-paused pairs;
* ``buffer_use`` (runs with shared-buffer switches): shared pool and
  headroom in use vs time per switch, the fullest, with the pool's size and
  the lossless XOFF threshold (static, or α × the free pool bin by bin).
* ``fct_slowdown`` (runs with workloads): FCT slowdown against the
  flow-size percentile bin (``fct_bins``), median and 99th percentile, one
  colour per run, sizes marked on a second axis (the HPCC paper's figure);
* ``fct_cdf`` (runs with workloads): CDFs of the workload flows' FCT, one
  per run.

If a list of the plot section is missing or empty: all flows, and the 4
queues with the highest maximum occupancy. No panel shows more than
``MAX_SERIES`` lines: beyond that a view keeps the top ones by its measure and
its title says so ("the 12 busiest of 240 flows"). With one result, each
time-series view has one line per item. With several results (variants of a
scenario), each item gets its own panel (at most ``MAX_PANELS``) and the
variants are overlaid on it; the per-queue and per-flow views get one panel
per result.

Later lines are drawn thinner and in another dash pattern over earlier ones,
so that identical series (C1->S1 under C3->S1) both stay visible. Legends sit
to the right of their panel, inside the figure.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

# Figures are made outside pyplot, each with an Agg canvas of its own: importing this
# module leaves matplotlib's backend alone (a notebook's inline plots keep working).
import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from . import thresholds
from .console import format_seconds
from .outputs import KIND_FIGURES, Reservation, reserve
from .results import FIGURES_DIR, Result

FORMATS = ("png", "svg")
FALLBACK_QUEUES = 4
#: Lines in one panel; beyond, a view keeps the top ones by its measure.
MAX_SERIES = 12
#: Item panels of a comparison of several results.
MAX_PANELS = 6
TOP_PAUSED = MAX_SERIES
TOP_BUFFERS = 4
PFC_QUANTUM_BITS = 512
WIDTH_IN = 8.0
#: Titles are wrapped at this many characters so they fit the figure's width.
TITLE_CHARS = 70
#: Legend entries are wrapped at this many characters so the legend leaves room for the panel.
LEGEND_CHARS = 28
#: Dash patterns of successive lines (dotted is kept for QCN's target rate).
_DASHES = ("-", "--", "-.", (0, (6, 2, 1, 2, 1, 2)))


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
    """Draw every view the results have something for into a reserved figure directory;
    return the file names."""
    results = _result_list(results, fmt)
    labels = variant_labels(results)
    for name in views_for(results):
        fig = VIEWS[name].draw(results, labels, VIEWS[name].title)
        slot.write(f"{name}.{fmt}", lambda path, fig=fig: _save(fig, path))
    return list(slot.written)


def views_for(results: Result | Sequence[Result]) -> list[str]:
    """The names of the views that have something to draw for these results, in :data:`VIEWS` order."""
    results = _result_list(results)
    return [name for name, view in VIEWS.items() if any(view.applies(r) for r in results)]


def figure(results: Result | Sequence[Result], view: str, labels: Sequence[str] | None = None) -> Figure:
    """One view (a name of :data:`VIEWS`) of one result, or of several overlaid, as a matplotlib Figure.

    Raises ValueError for an unknown view or one with nothing to draw for these
    results (e.g. ``rate_limiters`` of a run without a congestion-notification scheme).
    """
    results = _result_list(results)
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; views: {', '.join(VIEWS)}")
    spec = VIEWS[view]
    if not any(spec.applies(r) for r in results):
        raise ValueError(f"view {view!r} draws {spec.needs}, which these results do not have; "
                         f"views with something to draw: {', '.join(views_for(results))}")
    labels = list(labels) if labels is not None else variant_labels(results)
    return spec.draw(results, labels, spec.title)


def _result_list(results: Result | Sequence[Result], fmt: str = "png") -> list[Result]:
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
    names = {f"{view}.{fmt}" for view in VIEWS for fmt in FORMATS}
    return names if all(e.name in names for e in directory.iterdir()) else None


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


def queue_unit(results: Result | Sequence[Result]) -> tuple[int, str]:
    """Bytes per unit and the axis label's unit for sizes: the scenarios' own kilobyte
    (``Result.kilobyte``), decimal when the results disagree."""
    kilobytes = {r.kilobyte for r in _result_list(results)}
    kb = kilobytes.pop() if len(kilobytes) == 1 else 1000
    return kb, "KiB = 1024 B" if kb == 1024 else "KB = 1000 B"


# --------------------------------------------------------------------------- item choice


def _items(results: Sequence[Result], kind: str) -> list[str]:
    """Names to plot for a view: the first result that names some, else the fallback."""
    for result in results:
        plot_spec = result.summary.get("plot") or {}
        names = [str(n) for n in (plot_spec.get(kind) or [])]
        if names:
            return names
    if kind == "flows":
        # The rows of the throughput series: the sources' flows, and one
        # per workload (its flows' bytes together).
        names = []
        for result in results:
            names += [n for n in result.flow_throughput["flow"].unique() if n not in names]
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


def _top(names: Sequence[str], score: Callable[[str], float], limit: int) -> list[str]:
    """All names in their order if they fit, else the `limit` with the highest score."""
    if len(names) <= limit:
        return list(names)
    return sorted(names, key=lambda n: -score(n))[:limit]  # stable: ties keep their order


def _kept(shown: int, total: int, which: str, noun: str) -> str:
    """The title's note when a view keeps only its top items: " (the 12 busiest of 240 flows)"."""
    return f" (the {shown} {which} of {total} {noun})" if total > shown else ""


# --------------------------------------------------------------------------- time series


@dataclass(frozen=True)
class _Series:
    """A binned series of one item per row: ``table[value]`` where ``table[key] == item``."""

    table: str
    key: str
    value: str
    ylabel: str
    #: how one item's series ranks for the top-N ("sum" or "max"), and the word for it
    rank: str
    which: str
    noun: str
    #: the values are sizes, shown in the scenario's kilobytes
    sizes: bool = False


SERIES = {
    "links": _Series("link_throughput", "queue", "gbps", "throughput (Gb/s)", "sum", "busiest", "links"),
    "flows": _Series("flow_throughput", "flow", "delivered_gbps", "delivered throughput (Gb/s)", "sum", "busiest",
                     "flows"),
    "queues": _Series("queue_occupancy", "queue", "mean_bytes", "mean occupancy", "max", "fullest", "queues",
                      sizes=True),
}


def _steps(result: Result, time_s: pd.Series, values: pd.Series) -> pd.DataFrame:
    """Bin-start times in ms plus a closing point at the end of the last bin (for steps-post)."""
    t = np.append(time_s.to_numpy(dtype=float), float(time_s.iloc[-1]) + result.bin_s) * 1e3
    y = values.to_numpy(dtype=float)
    return pd.DataFrame({"t_ms": t, "y": np.append(y, y[-1])})


def _series(result: Result, spec: _Series, name: str, scale: float = 1.0) -> pd.DataFrame | None:
    df = getattr(result, spec.table)
    sel = df[df[spec.key] == name]
    if sel.empty:
        return None
    return _steps(result, sel["time_s"], sel[spec.value] / scale)


def _scores(results: Sequence[Result], spec: _Series) -> dict[str, float]:
    """Each item's rank measure, the largest over the results."""
    scores: dict[str, float] = {}
    for result in results:
        df = getattr(result, spec.table)
        for name, value in df.groupby(spec.key)[spec.value].agg(spec.rank).items():
            scores[name] = max(scores.get(name, value), value)
    return scores


def time_figure(results: Sequence[Result], labels: Sequence[str], kind: str, items: Sequence[str],
                title: str | None) -> Figure:
    """One figure of a time-series view: `kind` is "links", "flows" or "queues".

    With ``title=None`` the figure has no title (a page that captions it).
    """
    results, labels, spec = list(results), list(labels), SERIES[kind]
    scale, ylabel = 1.0, spec.ylabel
    if spec.sizes:
        scale, unit = queue_unit(results)
        ylabel = f"{spec.ylabel} ({unit})"
    scores = _scores(results, spec)
    several = len(results) > 1
    shown = _top(items, lambda n: scores.get(n, 0.0), MAX_PANELS if several else MAX_SERIES)
    note = _kept(len(shown), len(items), spec.which, spec.noun)

    if not several:
        fig, (ax,) = _panels(1, 4.5)
        for i, name in enumerate(shown):
            data = _series(results[0], spec, name, scale)
            if data is not None:
                _step(ax, data, i, len(shown), name)
        if spec.sizes:
            _threshold_lines(ax, results, shown, scale)
        _decorate(ax, ylabel)
        _legend(ax)
        _title(fig, title and f"{title}: {labels[0]}{note}")
        return fig

    fig, axes = _panels(max(len(shown), 1), 2.6)
    for ax, name in zip(axes, shown or [None]):
        for i, (result, label) in enumerate(zip(results, labels)):
            data = _series(result, spec, name, scale) if name is not None else None
            if data is not None:
                _step(ax, data, i, len(results), label)
        if spec.sizes and name is not None:
            _threshold_lines(ax, results, [name], scale)
        if len(shown) > 1:
            ax.set_title(name, fontsize="medium")
        _decorate(ax, ylabel, xlabel=ax is axes[-1])
    _legend(axes[0], _handles(axes))
    if title and len(shown) == 1:
        title = f"{title}: {shown[0]}"
    _title(fig, title and title + note)
    return fig


def _threshold_lines(ax, results: Sequence[Result], queues: Sequence[str], scale: float) -> None:
    """Dashed horizontal lines at the thresholds of the plotted queues that are compared with their
    occupancy (:func:`cnsim.thresholds.queue_lines`), one legend entry per distinct value; only over
    a panel that has data."""
    if not ax.lines:
        return
    unit = queue_unit(results)[1].split()[0]
    for label, colour, values in thresholds.queue_lines((r.queues for r in results), queues):
        for value in values:
            ax.axhline(value / scale, color=colour, linestyle=(0, (5, 3)), linewidth=1.0,
                       label=f"{label} {value / scale:.4g} {unit}")


def _time_view(kind: str):
    def draw(results, labels, title):
        return time_figure(results, labels, kind, _items(results, kind), title)

    return draw


# --------------------------------------------------------------------------- per-queue counts, rate limiters


def _count_view(column: str, unit: str, which: str, cmap: str):
    """Frames per bin and queue from a column of ``queue_occupancy`` ("drops", "xoff"), as a
    raster: a row per queue (the highest totals), a cell per bin, darker for more. Unlike
    lines, rows never hide each other, and sparse events stay visible."""

    def draw(results, labels, title):
        totals = [_totals(r, column) for r in results]
        heights = [1.3 + 0.3 * max(1, min(MAX_SERIES, len(t))) for t in totals]
        fig = _figure((WIDTH_IN, sum(heights) + 0.4))
        axes = fig.subplots(len(results), 1, sharex=True, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
        for ax, result, label, total in zip(axes, results, labels, totals):
            shown = list(total.index[:MAX_SERIES])
            q = result.queue_occupancy
            counts = np.array([q.loc[q["queue"] == name, column].to_numpy() for name in shown], dtype=float)
            if shown:
                edges = np.arange(counts.shape[1] + 1) * result.bin_s * 1e3
                cells = ax.pcolormesh(edges, np.arange(len(shown) + 1) - 0.5, np.ma.masked_equal(counts, 0),
                                      cmap=_from_light(cmap), vmin=0)
                bar = fig.colorbar(cells, ax=ax, label=f"{unit} per {format_seconds(result.bin_s)}", pad=0.01)
                bar.locator = MaxNLocator(integer=True)
                bar.update_ticks()
            else:
                _empty(ax)
            ax.set_yticks(range(len(shown)), [f"{n} ({total[n]:,})" for n in shown], fontsize="small")
            ax.set_ylim(len(shown) - 0.5 if shown else 0.5, -0.5)
            ax.set_xlim(0, result.duration_s * 1e3)
            ax.grid(True, axis="x", alpha=0.3)
            if ax is axes[-1]:
                ax.set_xlabel("time (ms)")
            _panel_title(fig, ax, title, label, _kept(len(shown), len(total), which, "queues"), len(results))
        return fig

    return draw


def _from_light(name: str) -> ListedColormap:
    """A sequential colour map without its palest quarter: one frame in a bin still shows
    against the white of a bin without any."""
    return ListedColormap(matplotlib.colormaps[name](np.linspace(0.25, 1.0, 256)))


def _totals(result: Result, column: str) -> pd.Series:
    """Each queue's total of a ``queue_occupancy`` column, the non-zero ones, highest first."""
    totals = result.queue_occupancy.groupby("queue", sort=False)[column].sum()
    return totals[totals > 0].sort_values(ascending=False, kind="stable")


def _rate_limiter_view(results, labels, title):
    fig, axes = _panels(len(results), 4.5 if len(results) == 1 else 3.2)
    for ax, result, label in zip(axes, results, labels):
        rl = result.rate_limiters
        # How far below its own peak each limiter held its flow, over the run.
        cut = (rl.groupby("flow")["rate_gbps"].transform("max") - rl["rate_gbps"]).groupby(rl["flow"]).sum()
        with_target = bool(rl["target_gbps"].notna().any())
        # With QCN every flow draws two lines (CR and TR).
        shown = list(cut.sort_values(ascending=False, kind="stable").index[: MAX_SERIES // (2 if with_target else 1)])
        for i, flow in enumerate(shown):
            sel = rl[rl["flow"] == flow]
            style = _step(ax, _steps(result, sel["time_s"], sel["rate_gbps"]), i, len(shown), f"{flow} CR")
            if sel["target_gbps"].notna().any():
                tr = _steps(result, sel["time_s"], sel["target_gbps"])
                ax.plot(tr["t_ms"], tr["y"], drawstyle="steps-post", color=style["color"], linestyle=":",
                        linewidth=1.0, label=f"{flow} TR")
        _decorate(ax, "rate (Gb/s)", xlabel=ax is axes[-1])
        _legend(ax)
        what = "current (CR) and target (TR) rate" if with_target else "current rate (CR)"
        _panel_title(fig, ax, f"{title}: {what}", label, _kept(len(shown), len(cut), "most limited", "flows with a limiter"),
                     len(results))
    return fig


# --------------------------------------------------------------------------- drops, PFC, buffers


def _drops_view(results, labels, title):
    drops = [int((r.summary.get("totals") or {}).get("dropped_frames", 0)) for r in results]
    fig = _figure((max(4.0, 1.4 * len(results) + 2), 4))
    ax = fig.subplots()
    bars = ax.bar(range(len(results)), drops, color="tab:red", width=0.6)
    ax.set_xticks(range(len(results)), [textwrap.fill(label, 18) for label in labels],
                  rotation=20 if len(results) > 3 else 0)
    ax.bar_label(bars, labels=[f"{d:,}" for d in drops], padding=2)
    ax.set_ylabel("frames dropped")
    ax.set_ylim(0, max(drops + [1]) * 1.15)
    ax.grid(True, axis="y", alpha=0.3)
    _title(fig, title)
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


def _pfc_timeline_view(results, labels, title):
    per_run = [pause_intervals(r) for r in results]
    heights = [1.4 + 0.28 * min(TOP_PAUSED, max(1, _n_pairs(p))) for p in per_run]
    fig = _figure((WIDTH_IN, sum(heights) + 0.4))
    axes = fig.subplots(len(results), 1, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
    for ax, result, label, intervals in zip(axes, results, labels, per_run):
        paused = (intervals["end_s"] - intervals["start_s"]).groupby([intervals["queue"], intervals["class"]]).sum()
        pairs = list(paused.sort_values(ascending=False, kind="stable").index[:TOP_PAUSED])
        for row, (queue, cls) in enumerate(pairs):
            sel = intervals[(intervals["queue"] == queue) & (intervals["class"] == cls)]
            spans = list(zip(sel["start_s"] * 1e3, (sel["end_s"] - sel["start_s"]) * 1e3))
            ax.broken_barh(spans, (row - 0.4, 0.8), color=matplotlib.colormaps["tab10"](int(cls) % 10))
        ax.set_yticks(range(len(pairs)), [f"{q} class {c}" for q, c in pairs], fontsize="small")
        ax.set_ylim(len(pairs) - 0.5 if pairs else 0.5, -0.5)
        ax.set_xlim(0, result.duration_s * 1e3)
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_xlabel("time (ms)")
        more = _kept(len(pairs), _n_pairs(intervals), "most paused", "(transmitter, class) pairs")
        _panel_title(fig, ax, title, label, more, len(results))
        if not pairs:
            _empty(ax)
    return fig


def _n_pairs(intervals: pd.DataFrame) -> int:
    return len(intervals[["queue", "class"]].drop_duplicates())


def _buffer_view(results, labels, title):
    peak: dict[str, float] = {}
    for result in results:
        for name, value in result.buffer_occupancy.groupby("switch")["shared_max_bytes"].max().items():
            peak[name] = max(peak.get(name, 0), value)
    switches = sorted(peak, key=lambda n: -peak[n])[:TOP_BUFFERS]
    scale, unit = queue_unit(results)
    fig, axes = _panels(len(switches), 2.8)
    several = len(results) > 1
    for ax, switch in zip(axes, switches):
        for i, (result, label) in enumerate(zip(results, labels)):
            sel = result.buffer_occupancy[result.buffer_occupancy["switch"] == switch]
            if sel.empty:
                continue
            color = f"C{i % 10}"
            prefix = f"{label}: " if several else ""
            shared = _steps(result, sel["time_s"], sel["shared_mean_bytes"] / scale)
            headroom = _steps(result, sel["time_s"], sel["headroom_mean_bytes"] / scale)
            ax.plot(shared["t_ms"], shared["y"], drawstyle="steps-post", color=color, label=f"{prefix}shared pool")
            ax.plot(headroom["t_ms"], headroom["y"], drawstyle="steps-post", color=color, linestyle="--",
                    label=f"{prefix}headroom")
            pool = next(b["shared_pool_bytes"] for b in result.summary["buffers"] if b["switch"] == switch)
            ax.axhline(pool / scale, color=color, linestyle=":", linewidth=1, label=f"{prefix}pool size")
            _xoff_line(ax, result, sel, scale, color, prefix)
        if len(switches) > 1:
            ax.set_title(switch, fontsize="medium")
        _decorate(ax, f"mean in use ({unit})", xlabel=ax is axes[-1])
        _legend(ax)
    more = _kept(len(switches), len(peak), "fullest", "switches")
    _title(fig, f"{title}: {switches[0]}{more}" if len(switches) == 1 else title + more)
    return fig


def _xoff_line(ax, result: Result, sel: pd.DataFrame, scale: float, color: str, prefix: str) -> None:
    """A switch's lossless XOFF threshold: a level when static, else α × the free pool, bin by bin."""
    xoff = thresholds.lossless_xoff(sel)
    if np.isnan(xoff).all():
        return
    alpha = sel["lossless_xoff_alpha"].iloc[0]
    what = "static" if np.isnan(alpha) else f"{alpha:g} × free pool"
    line = _steps(result, sel["time_s"], pd.Series(xoff / scale))
    ax.plot(line["t_ms"], line["y"], drawstyle="steps-post", color=color, linestyle="-.", linewidth=1,
            label=f"{prefix}lossless XOFF ({what})")


def _fct_slowdown_view(results, labels, title):
    fig = _figure((WIDTH_IN, 4.2))
    ax = fig.subplots()
    n = len(results)
    for i, (result, label) in enumerate(zip(results, labels)):
        b = result.fct_bins
        if b.empty:
            continue
        x = (b["percentile_low"] + b["percentile_high"]) / 2
        style = _style(i, n)
        ax.plot(x, b["slowdown_median"], marker="o", markersize=3, label=f"{label}: median", **style)
        ax.plot(x, b["slowdown_p99"], marker="^", markersize=3, label=f"{label}: 99th pct",
                **{**style, "linestyle": "--"})
    ax.set_yscale("log")
    ax.set_xlabel("flow size percentile (%)")
    ax.set_ylabel("FCT slowdown (FCT / ideal)")
    ax.grid(True, which="both", alpha=0.3)
    # The sizes at the bins' upper edges, from the first run with flows.
    first = next((r.fct_bins for r in results if not r.fct_bins.empty), None)
    if first is not None:
        top = ax.secondary_xaxis("top")
        ticks = first["percentile_high"].to_numpy()[::4]
        top.set_xticks(ticks)
        sizes = first["size_max_bytes"].to_numpy()[::4]
        top.set_xticklabels([_bytes_label(s) for s in sizes], fontsize="small")
        top.set_xlabel("flow size (bin's largest)")
    if not ax.lines:
        _empty(ax)
    _legend(ax)
    _title(fig, title)
    return fig


def _bytes_label(b: float) -> str:
    for unit, scale in (("MB", 1e6), ("KB", 1e3)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b:.0f} B"


def _fct_cdf_view(results, labels, title):
    fig = _figure((WIDTH_IN, 3.8))
    ax = fig.subplots()
    n = len(results)
    for i, (result, label) in enumerate(zip(results, labels)):
        fct = np.sort(result.flows["fct_s"].dropna().to_numpy()) if "fct_s" in result.flows else np.array([])
        if len(fct) == 0:
            continue
        ax.plot(fct * 1e3, np.arange(1, len(fct) + 1) / len(fct), drawstyle="steps-post", label=label,
                **_style(i, n))
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (ms)")
    ax.set_ylabel("fraction of finished flows")
    ax.set_ylim(0, 1.02)
    ax.grid(True, which="both", alpha=0.3)
    if not ax.lines:
        _empty(ax)
    _legend(ax)
    _title(fig, title)
    return fig


# --------------------------------------------------------------------------- drawing helpers


def _figure(size: tuple[float, float]) -> Figure:
    """A figure outside pyplot (no global state to close), laid out so that titles,
    labels and legends stay inside it."""
    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _panels(n: int, height_in: float) -> tuple[Figure, list]:
    fig = _figure((WIDTH_IN, height_in * n + (0.4 if n > 1 else 0)))
    return fig, list(fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0])


def _style(i: int, n: int) -> dict:
    """Line `i` of `n`: later lines are thinner and dashed differently, so one drawn over an
    identical earlier one leaves it visible."""
    width = 2.8 - 1.8 * i / (n - 1) if n > 1 else 1.4
    return {"color": f"C{i % 10}", "linestyle": _DASHES[i % len(_DASHES)], "linewidth": width}


def _step(ax, data: pd.DataFrame, i: int, n: int, label: str) -> dict:
    style = _style(i, n)
    ax.plot(data["t_ms"], data["y"], drawstyle="steps-post", label=label, **style)
    return style


def _decorate(ax, ylabel: str, xlabel: bool = True) -> None:
    if xlabel:
        ax.set_xlabel("time (ms)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    if not ax.lines:
        _empty(ax)


def _handles(axes) -> tuple[list, list]:
    """The legend entries of several panels, each label once."""
    found: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            found.setdefault(label, handle)
    return list(found.values()), list(found)


def _legend(ax, entries: tuple[list, list] | None = None) -> None:
    """To the right of the panel, outside it: it never covers the lines, and the
    constrained layout narrows the panel to keep it inside the figure."""
    handles, labels = entries or ax.get_legend_handles_labels()
    if labels:
        ax.legend(handles, [textwrap.fill(label, LEGEND_CHARS) for label in labels], loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small")


def _title(fig: Figure, text: str | None) -> None:
    """One title per figure, wrapped to its width."""
    if text:
        fig.suptitle(textwrap.fill(text, TITLE_CHARS))


def _panel_title(fig: Figure, ax, title: str, label: str, note: str, n_panels: int) -> None:
    """A view with one panel per result: the figure's title names the run when there is one,
    else each panel does."""
    if n_panels == 1:
        _title(fig, f"{title}: {label}{note}")
    else:
        _title(fig, title)
        ax.set_title(textwrap.fill(label + note, TITLE_CHARS + 10), fontsize="medium")


def _empty(ax) -> None:
    ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center", color="grey")


def _save(fig, path: Path) -> Path:
    # "tight" also keeps anything a layout could not fit (it should be nothing).
    fig.savefig(path, dpi=120, bbox_inches="tight", pad_inches=0.1)
    return path


# --------------------------------------------------------------------------- the views


@dataclass(frozen=True)
class View:
    """A figure :func:`plot` draws: its file name, title, how it is drawn from the results
    and their labels, whether a result has something for it, and what that is."""

    name: str
    title: str
    draw: Callable[[list[Result], list[str], str], Figure]
    applies: Callable[[Result], bool]
    needs: str = ""


def _always(result: Result) -> bool:
    return True


def _has_drops(result: Result) -> bool:
    return bool(result.queue_occupancy["drops"].any())


def _has_xoff(result: Result) -> bool:
    return bool(result.queue_occupancy["xoff"].any())


VIEWS: dict[str, View] = {
    v.name: v
    for v in (
        View("throughput_links", "Link throughput", _time_view("links"), _always),
        View("throughput_flows", "Flow throughput", _time_view("flows"), _always),
        View("queue_occupancy", "Queue occupancy", _time_view("queues"), _always),
        View("drops", "Frames dropped per run", _drops_view, _always),
        View("drops_over_time", "Frames dropped", _count_view("drops", "frames dropped", "dropping most", "Reds"),
             _has_drops, "drops over time (a run that dropped frames)"),
        View("pause", "XOFF sent (PAUSE, PFC)", _count_view("xoff", "XOFF frames", "sending most", "Purples"),
             _has_xoff, "XOFF frames (a run that sent PAUSE or PFC XOFF)"),
        View("rate_limiters", "Rate limiters", _rate_limiter_view, lambda r: not r.rate_limiters.empty,
             "rate limiters (a run with a congestion-notification scheme)"),
        View("pfc_timeline", "Transmitters held by PFC", _pfc_timeline_view, lambda r: not r.pfc_events.empty,
             "PFC events (a run with PFC)"),
        View("buffer_use", "Shared buffer in use", _buffer_view, lambda r: not r.buffer_occupancy.empty,
             "shared buffers (a run with shared-buffer switches)"),
        View("fct_slowdown", "FCT slowdown by flow size", _fct_slowdown_view, lambda r: not r.fct_bins.empty,
             "flow completion times (a run with [[workloads]])"),
        View("fct_cdf", "Flow completion times", _fct_cdf_view, lambda r: not r.fct_bins.empty,
             "flow completion times (a run with [[workloads]])"),
    )
}
