"""Terminal summary of a run (rich tables), as printed by ``cnsim run``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .results import Result


def print_run_report(result: Result, out: Path, figures: Sequence[Path] = (), console: Console | None = None) -> None:
    console = console or Console(soft_wrap=True)
    s = result.summary
    ended = s.get("flows_finished_s")
    simulated = (f"{format_seconds(ended)} simulated (every workload flow had finished; limit "
                 f"{format_seconds(result.duration_s)})" if ended is not None
                 else f"{format_seconds(result.duration_s)} simulated")
    console.print(
        f"[bold]{escape(result.name)}[/bold]  seed {result.seed}  ·  {simulated}  ·  "
        f"bins of {format_seconds(result.bin_s)}"
    )
    if _source_flows(result).shape[0] or not s.get("workloads"):
        console.print(flow_table(result))
    fct = fct_table(result)
    if fct is not None:
        console.print(fct)
    queues = queue_table(result)
    if queues is not None:
        console.print(queues)
    totals = s.get("totals") or {}
    pfc = f"  ·  PFC frames sent: {_int(s['pfc'].get('frames_sent'))}" if s.get("pfc") else ""
    console.print(
        f"total drops: [bold]{_int(totals.get('dropped_frames'))}[/bold] frames "
        f"({_int(totals.get('dropped_bytes'))} B)  ·  pause frames sent: {_int(totals.get('pause_frames_sent'))}{pfc}"
    )
    console.print(performance_line(s))
    print_notes(result, console)
    print_warnings(result, console)
    console.print(f"results: {escape(str(out))}/ (summary.json, {len(result.tables())} Parquet tables)")
    if figures:
        console.print(f"figures: {escape(str(Path(figures[0]).parent))}/ ({', '.join(Path(f).name for f in figures)})")


def warnings_of(summary: dict[str, Any]) -> list[str]:
    """What a person must not miss in a run: it stopped early, or PAUSE got stuck."""
    out = []
    partial = summary.get("partial")
    fct = summary.get("fct") or {}
    if fct.get("unfinished"):
        out.append(f"{fct['unfinished']:,} of {fct['flows']:,} workload flows had not finished when the run ended "
                   f"(flows table: finish_s is NaN)")
    if partial:
        reached = partial.get("reached_s", partial["at_s"])
        out.append(f"PARTIAL RESULT: {partial['reason']} at {format_seconds(reached)} of simulated time"
                   + (f" (results to {format_seconds(partial['at_s'])}, the end of that window)"
                      if partial["at_s"] != reached else ""))
    watchdog = summary.get("watchdog") or {}
    for d in watchdog.get("deadlocks", ()):
        if d.get("classes") is None:
            out.append(f"PAUSE deadlock at {format_seconds(d['noticed_s'])}: cycle of paused ports "
                       + " -> ".join(d["queues"]))
        else:
            out.append(f"PFC deadlock at {format_seconds(d['noticed_s'])}: cycle of paused (port, class) "
                       + " -> ".join(f"{q} class {c}" for q, c in zip(d["queues"], d["classes"])))
    long_pauses = watchdog.get("long_pauses", ())
    if long_pauses:
        def where(p: dict[str, Any]) -> str:
            return p["queue"] if p.get("class") is None else f"{p['queue']} class {p['class']}"

        shown = ", ".join(f"{where(p)} (from {format_seconds(p['since_s'])})" for p in long_pauses[:6])
        more = f" and {len(long_pauses) - 6} more" if len(long_pauses) > 6 else ""
        out.append(f"{len(long_pauses)} port(s) paused for longer than "
                   f"{format_seconds(watchdog['threshold_s'])} without a break: {shown}{more}")
    return out


def print_warnings(result: Result, console: Console | None = None) -> None:
    console = console or Console(stderr=True, soft_wrap=True)
    for line in warnings_of(result.summary):
        console.print(f"[bold yellow]warning:[/bold yellow] {escape(line)}")


def notes_of(summary: dict[str, Any]) -> list[str]:
    """What a person should know of how a run was executed: it ran on fewer threads than
    asked for, and why (the results are the same on any number)."""
    requested, used = summary.get("threads_requested"), summary.get("threads_used")
    if not (isinstance(requested, int) and isinstance(used, int) and used < requested):
        return []
    why = summary.get("threads_note")
    return [f"ran on {used} thread{'' if used == 1 else 's'}, not the {requested} requested"
            + (f": {why}" if why else "")]


def print_notes(result: Result, console: Console | None = None) -> None:
    console = console or Console(soft_wrap=True)
    for line in notes_of(result.summary):
        console.print(f"[bold]note:[/bold] {escape(line)}")


#: Rows of a per-flow or per-queue table; the rest is counted in one closing line.
MAX_ROWS = 12


def _source_flows(result: Result) -> pd.DataFrame:
    """The sources' flows (workload flows are summarised by :func:`fct_table`)."""
    flows = result.flows
    return flows[flows["workload"].isna()] if "workload" in flows else flows


def fct_table(result: Result) -> Table | None:
    """Per workload: flows, finished, and FCT slowdown (median, 95th and 99th
    percentile) overall and of short and long flows; None without workloads."""
    fct = result.summary.get("fct")
    if not fct:
        return None
    table = Table(title="Workload flows: completion time over the ideal (slowdown)", title_justify="left",
                  show_edge=False, pad_edge=False)
    for column in ("flows", "count", "finished", "median", "95th pct", "99th pct", "mean FCT"):
        table.add_column(column, justify="left" if column == "flows" else "right")
    short_kb, long_mb = fct["short_below_bytes"] / 1e3, fct["long_from_bytes"] / 1e6
    for key, label in (("overall", "all"), ("short", f"short (< {short_kb:g} KB)"),
                       ("long", f"long (≥ {long_mb:g} MB)")):
        g = fct[key]
        num = (lambda v: "–" if v is None else f"{v:.2f}")
        table.add_row(label, _int(g["flows"]), _int(g["finished"]), num(g["slowdown_median"]),
                      num(g["slowdown_p95"]), num(g["slowdown_p99"]),
                      "–" if g["fct_mean_s"] is None else format_seconds(g["fct_mean_s"]))
    if fct["unfinished"]:
        table.caption = f"{fct['unfinished']:,} flows had not finished when the run ended"
        table.caption_justify = "left"
    return table


def flow_table(result: Result) -> Table:
    """One row per flow; beyond MAX_ROWS flows, those that dropped most, then delivered most."""
    flows, more = _first_rows(_source_flows(result), ("dropped_frames", "delivered_bytes"))
    table = Table(title=_title("Flows", len(flows), more, "most drops, then bytes delivered"), title_justify="left",
                  show_edge=False, pad_edge=False)
    table.add_column("flow")
    table.add_column("src → dst")
    table.add_column("offered Gb/s", justify="right")
    table.add_column("delivered Gb/s", justify="right")
    table.add_column("dropped frames", justify="right")
    for row in flows.to_dict("records"):
        table.add_row(
            escape(str(row["name"])),
            escape(f"{row['src']} → {row['dst']}"),
            f"{row.get('offered_gbps', 0.0):.3f}",
            f"{row.get('delivered_gbps', 0.0):.3f}",
            _int(row.get("dropped_frames")),
        )
    _more_row(table, more, "flows")
    return table


def queue_table(result: Result) -> Table | None:
    """Queues that dropped frames or sent PAUSE frames; None if there are none. Beyond
    MAX_ROWS queues, those that dropped most, then sent most."""
    q = result.queues
    if q.empty:
        return None
    mask = pd.Series(False, index=q.index)
    for column in ("drops_frames", "pause_frames_sent", "paused_time_s"):
        if column in q:
            mask |= q[column].fillna(0) > 0
    busy = q[mask]
    if busy.empty:
        return None
    busy, more = _first_rows(busy, ("drops_frames", "tx_bytes"))
    table = Table(
        title=_title("Queues with drops or PAUSE (sent or received)", len(busy), more, "most drops, then bytes sent"),
        title_justify="left", show_edge=False, pad_edge=False,
    )
    table.add_column("queue")
    table.add_column("drops (frames)", justify="right")
    table.add_column("max occupancy (B)", justify="right")
    table.add_column("pause frames sent", justify="right")
    table.add_column("paused (ms)", justify="right")
    for row in busy.to_dict("records"):
        table.add_row(
            escape(str(row["name"])),
            _int(row.get("drops_frames")),
            _int(row.get("max_occupancy_bytes")),
            _int(row.get("pause_frames_sent")),
            f"{(row.get('paused_time_s') or 0.0) * 1e3:.3f}",
        )
    _more_row(table, more, "queues")
    return table


def _first_rows(frame: pd.DataFrame, order: Sequence[str]) -> tuple[pd.DataFrame, int]:
    """All rows in their order if they fit in MAX_ROWS, else the first MAX_ROWS by the
    columns `order` (largest first); and how many were left out."""
    if len(frame) <= MAX_ROWS:
        return frame, 0
    by = [c for c in order if c in frame]
    ranked = frame.sort_values(by, ascending=False, kind="stable") if by else frame
    return ranked.head(MAX_ROWS), len(frame) - MAX_ROWS


def _title(title: str, shown: int, more: int, order: str) -> str:
    return f"{title}: the {shown} with the {order}, of {shown + more}" if more else title


def _more_row(table: Table, more: int, noun: str) -> None:
    if more:
        table.caption, table.caption_justify = f"… and {more:,} more {noun}", "left"


def performance_line(summary: dict[str, Any]) -> str:
    wall = summary.get("wall_time_s")
    parts = [f"wall time {wall:.3f} s" if isinstance(wall, (int, float)) else "wall time ?"]
    parts.append(f"{_int(summary.get('events'))} events")
    eps = summary.get("events_per_s")
    if isinstance(eps, (int, float)):
        parts.append(f"{eps / 1e6:.2f} M events/s")
    fhps = summary.get("frame_hops_per_s")
    if isinstance(fhps, (int, float)):
        parts.append(f"{fhps / 1e6:.2f} M frame-hops/s")
    slowdown = summary.get("slowdown")
    if isinstance(slowdown, (int, float)):
        parts.append(f"slowdown {slowdown:.3g}×")
    growth = summary.get("rss_growth_bytes")
    if isinstance(growth, (int, float)):
        parts.append(f"run memory +{growth / 1e6:.0f} MB")
    peak = summary.get("peak_memory_bytes")
    if isinstance(peak, (int, float)):
        parts.append(f"process peak {peak / 1e6:.0f} MB")
    return "  ·  ".join(parts)


def bench_table(rows: Sequence[dict[str, Any]]) -> Table:
    """`cnsim bench`: one row per benchmark, engine numbers summed over its runs."""
    t = Table(show_edge=False, header_style="bold")
    t.add_column("benchmark", no_wrap=True)
    for name in ("runs", "simulated", "wall", "events", "M ev/s", "frame-hops", "M fh/s", "slowdown", "run MB",
                 "process peak MB"):
        t.add_column(name, justify="right", no_wrap=True)
    for r in rows:
        eps, fhps = r.get("events_per_s"), r.get("frame_hops_per_s")
        t.add_row(
            r["name"],
            str(r["runs"]),
            format_seconds(r["simulated_s"]),
            format_seconds(r["wall_s"]),
            _int(r["events"]),
            f"{eps / 1e6:.2f}" if eps else "?",
            _int(r["frame_hops"]),
            f"{fhps / 1e6:.2f}" if fhps else "?",
            f"{r['slowdown']:.3g}×" if r.get("slowdown") else "?",
            f"+{r['rss_growth_bytes'] / 1e6:.0f}" if r.get("rss_growth_bytes") is not None else "?",
            f"{r['peak_memory_bytes'] / 1e6:.0f}" if r.get("peak_memory_bytes") else "?",
        )
    return t


def ratio_table(rows: Sequence[dict[str, Any]]) -> Table:
    """`cnsim bench`: each ratio of two benchmarks per frame-hop, the median
    of its rounds, their range and the target."""
    t = Table(show_edge=False, header_style="bold")
    t.add_column("per frame-hop", no_wrap=True)
    for name in ("median", "rounds", "range", "at most"):
        t.add_column(name, justify="right", no_wrap=True)
    for r in rows:
        target = "" if r["at_most"] is None else f"{r['at_most']:.3g}× " + ("✓" if r["within"] else "✗")
        t.add_row(f"{r['of']} / {r['to']}", f"{r['median']:.3f}×", str(len(r["each"])),
                  f"{min(r['each']):.3f}–{max(r['each']):.3f}", target)
    return t


def _int(value: Any) -> str:
    if value is None:
        return "?"
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return str(value)


def format_seconds(seconds: float) -> str:
    """Human-readable duration: 100 ms, 2.5 s, 500 µs."""
    if seconds == 0:
        return "0 s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds / 1e-12:.4g} ps"
