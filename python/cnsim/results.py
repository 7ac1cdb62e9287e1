"""Results of one run: the summary and pandas tables, saved as JSON + Parquet.

A result directory holds::

    summary.json                 run metadata and counters (see Result.summary)
    flows.parquet                one row per flow
    queues.parquet               one row per output queue ("NODE->PEER"), with its thresholds
    flow_throughput.parquet      time_s, flow, offered_gbps, delivered_gbps
    link_throughput.parquet      time_s, queue, gbps
    queue_occupancy.parquet      time_s, queue, mean_bytes, max_bytes, drops, xoff
    rate_limiters.parquet        time_s, flow, rate_gbps, target_gbps, queue_mean_bytes,
                                 queue_max_bytes, alpha (rows only for flows that had a rate
                                 limiter; target_gbps is QCN's and DCQCN's TR,
                                 alpha DCQCN's, else NaN)
    transport.parquet            time_s, flow, cwnd_bytes, retransmissions, timeouts, alpha
                                 (rows only for TCP flows; alpha is DCTCP's, else NaN)
    classes.parquet              queue, class and per-class counters (with [priorities] or PFC)
    pfc_events.parquet           time_s, queue, node, class, quanta, direction (with PFC)
    buffer_occupancy.parquet     time_s, switch, shared_mean_bytes, shared_max_bytes,
                                 headroom_mean_bytes, headroom_max_bytes and the switch's
                                 pool and MMU thresholds (shared-buffer switches)
    ingress_occupancy.parquet    time_s, switch, from, class, mean_bytes, max_bytes (with
                                 [metrics] ingress_occupancy)
    fct_bins.parquet             slowdown per flow-size percentile bin (with [[workloads]])
    figures/                     only if plots were asked for
    .cnsim-result                marker: written by cnsim, with every file's size and SHA-256

Time series are long-format with one row per (bin, flow|queue); ``time_s`` is
the start of the bin and rates are ``bytes * 8 / bin_s / 1e9`` Gb/s.
"""

from __future__ import annotations

import functools
import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from . import _core, fct, metrics, thresholds
from .outputs import KIND_RESULT, Reservation, ResultError, check_files, read_marker, reserve

SUMMARY_FILE = "summary.json"
TABLES = (
    "flows",
    "queues",
    "flow_throughput",
    "link_throughput",
    "queue_occupancy",
    "rate_limiters",
    "transport",
    "classes",
    "pfc_events",
    "buffer_occupancy",
    "ingress_occupancy",
    "fct_bins",
)
# Results saved before these tables existed load with them empty.
_OPTIONAL_TABLES = ("transport", "classes", "pfc_events", "buffer_occupancy", "ingress_occupancy", "fct_bins")
FIGURES_DIR = "figures"

_FLOW_META = ("name", "source", "src", "dst")
_QUEUE_META = ("name", "node", "peer", "node_kind")
# The engine's binned series by name: what their rows are ("flows", "queues",
# "buffers" or "ingress") and their dtype, as cnsim-py declares them.
_SERIES = {name: (rows, np.dtype(dtype)) for name, rows, dtype in _core.SERIES}


class Result:
    """Outcome of one simulation run.

    Attributes
    ----------
    summary : dict
        The engine's summary (name, seed, cnsim_version, scenario_hash,
        duration_s, wall_time_s, events, frame_hops, totals, plot, ...) plus
        ``scenario_file``, ``bin_s``, ``n_bins`` and ``jain_index`` (Jain's
        index over the sources' flows' delivered bytes; None without
        sources). ``threads_requested`` and ``threads_used`` are the threads
        the run was asked to split over and the partitions it ran as;
        ``threads_note`` says why fewer were used (None when as many; results
        saved by earlier versions have none of the three). The per-flow and
        per-queue records are the ``flows`` and ``queues`` tables, not part of
        the summary.
    flows : DataFrame
        One row per flow: name, source, src, dst, transport, the flow's
        counters, and ``offered_gbps`` / ``delivered_gbps``: mean rates over the
        span of bins in which the flow offered / delivered anything. With
        ``[[workloads]]``, one more row per workload flow (``NAME#K``), with
        ``workload``, ``transport``, ``priority``, ``size_bytes``,
        ``start_s``, ``finish_s`` (NaN if it never finished), ``fct_s``,
        ``ideal_fct_s`` and ``slowdown`` (``fct_s / ideal_fct_s``); these
        columns are empty (NaN) for the sources' flows, and the workload
        flows' rates are NaN (their bytes are binned per workload in
        ``flow_throughput``, under the workload's name).
    queues : DataFrame
        One row per output queue: name ("NODE->PEER"), node, peer, node_kind
        and the queue's counters, then the thresholds of its
        control loops in bytes, NaN where one does not apply
        (:mod:`cnsim.thresholds`): ecn_kmin_bytes and ecn_kmax_bytes (a step
        rule's K as both), pause_output_xoff_bytes and pause_output_xon_bytes
        (global PAUSE, on this queue's occupancy), pause_input_xoff_bytes and
        pause_input_xon_bytes (per-input PAUSE, on the bytes that arrived
        from the peer), qeq_bytes (the BCN, E2CM or QCN congestion point's
        equilibrium).
    flow_throughput : DataFrame
        time_s, flow, offered_gbps, delivered_gbps.
    link_throughput : DataFrame
        time_s, queue, gbps (bytes that left that output port).
    queue_occupancy : DataFrame
        time_s, queue, mean_bytes (time-averaged), max_bytes, drops (frames),
        xoff (XOFF PAUSE frames this port sent upstream).
    rate_limiters : DataFrame
        time_s, flow, rate_gbps (time-averaged rate of the flow's rate limiter;
        the line rate while none is installed), target_gbps (QCN's and
        DCQCN's target rate TR; NaN for other schemes), queue_mean_bytes and
        queue_max_bytes (the limiter's queue), alpha (DCQCN's α,
        time-averaged, 0 before the flow's first CNP; NaN for other
        schemes). Rows only for the flows whose reaction point installed a
        rate limiter at some time in the run (``flows.rl_installs`` > 0, or
        a limiter that held frames); the others kept their line rate and an
        empty limiter queue throughout. Empty without a
        congestion-notification scheme.
    transport : DataFrame
        time_s, flow, cwnd_bytes (time-averaged congestion window),
        retransmissions (segments), timeouts and alpha (DCTCP's α,
        time-averaged; NaN otherwise), for TCP flows only.
    classes : DataFrame
        One row per (output queue, traffic class) when the scenario has
        ``[priorities]`` or PFC: queue, class, tx_bytes, drops_frames,
        drops_bytes, max_occupancy_bytes, paused_time_s and paused_fraction
        (the class held by PFC at that transmitter), pfc_xoff_sent and
        pfc_xon_sent (PFC frames this port sent upstream for the class),
        ecn_marked (frames of the class this queue marked CE), pfc_xoff_bytes
        and pfc_xon_bytes (static PFC thresholds of a lossless class on the
        bytes of the class that arrived from the peer; NaN otherwise).
        Empty otherwise.
    pfc_events : DataFrame
        One row per class of each PFC frame at each end, in time order:
        time_s, queue (the port that sent it, or whose transmitter it
        reached), node, class, quanta (0 resumes), direction ("sent" when
        its last bit left, "received" when it took effect). Empty without
        PFC.
    buffer_occupancy : DataFrame
        time_s, switch, shared_mean_bytes and shared_max_bytes (the shared
        pool in use, time-averaged and peak over the bin),
        headroom_mean_bytes and headroom_max_bytes (headroom in use), one
        row per shared-buffer switch and bin, and the switch's constants:
        shared_pool_bytes, lossless_xoff_bytes or lossless_xoff_alpha (the
        lossless XOFF threshold, static or α × the free pool),
        resume_offset_bytes, lossy_egress_bytes or lossy_egress_alpha.
        Empty without shared buffers.
    ingress_occupancy : DataFrame
        time_s, switch, from (the neighbour the frames came from), class,
        mean_bytes and max_bytes (bytes the switch holds that arrived on
        that port in that class, time-averaged and peak over the bin), one
        row per switch ingress (port, class) and bin. Recorded only with
        ``[metrics] ingress_occupancy = true`` (a cost on every frame);
        empty otherwise.
    fct_bins : DataFrame
        Workload flows sorted by size in 20 bins of 5% of the count
        (:func:`cnsim.fct.bins`): bin, percentile_low/high, flows,
        finished, size_min/max_bytes, slowdown_median/p95/p99. Empty
        without workloads. ``summary["fct"]`` has the overall, short and
        long statistics and the unfinished count.
    path : Path or None
        The directory this result was saved to or loaded from.
    """

    def __init__(
        self,
        summary: dict[str, Any],
        flows: pd.DataFrame,
        queues: pd.DataFrame,
        flow_throughput: pd.DataFrame,
        link_throughput: pd.DataFrame,
        queue_occupancy: pd.DataFrame,
        rate_limiters: pd.DataFrame | None = None,
        transport: pd.DataFrame | None = None,
        path: Path | None = None,
        classes: pd.DataFrame | None = None,
        pfc_events: pd.DataFrame | None = None,
        buffer_occupancy: pd.DataFrame | None = None,
        fct_bins: pd.DataFrame | None = None,
        ingress_occupancy: pd.DataFrame | None = None,
    ) -> None:
        self.summary = summary
        self.flows = flows
        self.queues = queues
        self.flow_throughput = flow_throughput
        self.link_throughput = link_throughput
        self.queue_occupancy = queue_occupancy
        self.rate_limiters = rate_limiters if rate_limiters is not None else _empty_rate_limiters()
        self.transport = transport if transport is not None else _empty_transport()
        self.classes = classes if classes is not None else _empty_classes()
        self.pfc_events = pfc_events if pfc_events is not None else _empty_pfc_events()
        self.buffer_occupancy = buffer_occupancy if buffer_occupancy is not None else _empty_buffer_occupancy()
        self.fct_bins = fct_bins if fct_bins is not None else fct.empty_bins()
        self.ingress_occupancy = ingress_occupancy if ingress_occupancy is not None else _empty_ingress_occupancy()
        self.path = path

    # ------------------------------------------------------------------ accessors

    @property
    def name(self) -> str:
        return str(self.summary.get("name", ""))

    @property
    def partial(self) -> dict[str, Any] | None:
        """``{"reason", "reached_s", "at_s"}`` if the run stopped before its end, else
        ``None``: the stop was reached at ``reached_s``; the results cover the run to
        ``at_s``, the end of the run's window that holds it (results saved before
        windows have ``at_s`` only)."""
        return self.summary.get("partial")

    @property
    def seed(self) -> int | None:
        return self.summary.get("seed")

    @property
    def bin_s(self) -> float:
        return float(self.summary["bin_s"])

    @property
    def duration_s(self) -> float:
        return float(self.summary.get("duration_s", self.bin_s * self.summary.get("n_bins", 0)))

    @property
    def totals(self) -> dict[str, Any]:
        return dict(self.summary.get("totals", {}))

    @property
    def kilobyte(self) -> int:
        """Bytes in a "KB" of this run's scenario, 1000 or 1024: the summary's ``kilobyte``
        if it has one, else the scenario file's top-level ``kilobyte``, else 1000 (the
        default, and what a scenario given as a dict or a file no longer there counts as)."""
        kilobyte = self.summary.get("kilobyte")
        if kilobyte is None:
            try:
                with open(self.summary.get("scenario_file", ""), "rb") as fh:
                    kilobyte = tomllib.load(fh).get("kilobyte")
            except (OSError, tomllib.TOMLDecodeError):
                kilobyte = None
        return kilobyte if kilobyte in (1000, 1024) else 1000

    def plot(self, view: str) -> Any:
        """One view of this run as a matplotlib Figure; ``cnsim.plots.VIEWS`` names them
        (``throughput_links``, ``queue_occupancy``, ``rate_limiters``, ...) and
        ``cnsim.plots.views_for(result)`` those this run has something for."""
        from . import plots

        return plots.figure(self, view)

    def tables(self) -> dict[str, pd.DataFrame]:
        """All tables by name."""
        return {name: getattr(self, name) for name in TABLES}

    def __repr__(self) -> str:
        n_bins = self.summary.get("n_bins", "?")
        return (
            f"<cnsim.Result {self.name!r} seed={self.seed}: {len(self.flows)} flows, "
            f"{len(self.queues)} queues, {n_bins} bins of {self.bin_s * 1e6:g} us>"
        )

    #: Rows of the flows table a notebook shows (:meth:`_repr_html_`).
    HTML_FLOWS = 5

    def _repr_html_(self) -> str:
        """A short summary for Jupyter: name, seed, duration, totals and the first rows of the
        flows table (``res.flows`` has them all)."""
        from html import escape

        from .console import format_seconds

        def count(n: int, noun: str) -> str:
            return f"{n:,} {noun}{'' if n == 1 else 's'}"

        facts = [f"seed {self.seed}", f"{format_seconds(self.duration_s)} simulated",
                 count(len(self.flows), "flow"), count(len(self.queues), "queue")]
        partial = self.partial
        if partial:
            facts.append(f"<b>partial result</b> at {format_seconds(float(partial.get('at_s') or 0.0))}: "
                         f"{escape(str(partial.get('reason', '')))}")
        totals = self.totals
        head = "".join(f"<th>{escape(str(k).replace('_', ' '))}</th>" for k in totals)
        values = "".join(
            f"<td>{v:,}</td>" if isinstance(v, int) and not isinstance(v, bool) else f"<td>{escape(str(v))}</td>"
            for v in totals.values()
        )
        columns = [c for c in ("name", "src", "dst", "offered_gbps", "delivered_gbps", "dropped_frames")
                   if c in self.flows.columns]
        flows = self.flows[columns].head(self.HTML_FLOWS).to_html(index=False, border=0, float_format="{:.3f}".format)
        shown = (f"first {self.HTML_FLOWS} of {len(self.flows):,} flows" if len(self.flows) > self.HTML_FLOWS
                 else "flows")
        return (
            f"<div class='cnsim-result'><p><b>cnsim.Result</b> {escape(self.name)}: {', '.join(facts)}</p>"
            f"<table><tr>{head}</tr><tr style='text-align:right'>{values}</tr></table>"
            f"<p>{shown} (<code>.flows</code>; also <code>.queues</code>, <code>.flow_throughput</code>, "
            f"<code>.link_throughput</code>, <code>.queue_occupancy</code>)</p>{flows}</div>"
        )

    def equals(self, other: Result, *, ignore_timing: bool = True) -> bool:
        """True if both results have equal tables and summaries.

        With ``ignore_timing`` (the default) the fields of the summary that
        describe how the run was executed, not what it computed, are not
        compared: the wall-clock fields (wall time, the rates derived from it,
        memory) and the threads (``threads_requested``, ``threads_used``,
        ``threads_note``), so runs on different numbers of threads compare
        equal.
        """
        if not isinstance(other, Result):
            return False
        if _comparable_summary(self.summary, ignore_timing) != _comparable_summary(other.summary, ignore_timing):
            return False
        return all(getattr(self, t).equals(getattr(other, t)) for t in TABLES)

    # ------------------------------------------------------------------ building

    @classmethod
    def from_core(cls, raw: Mapping[str, Any], scenario_file: str | None = None, *,
                  consume: bool = False) -> Result:
        """Build a Result from the dict returned by ``cnsim._core.run``.

        With *consume* (*raw* must then be a dict), the per-flow records and
        series are removed from *raw* once their tables hold them, so that a
        run with a million flows does not hold both at once.
        """
        summary = raw["summary"]
        summary = json.loads(summary) if isinstance(summary, (str, bytes)) else dict(summary)
        bin_s = float(raw["bin_s"])
        n_bins = int(raw["n_bins"])
        if scenario_file is not None:
            summary.setdefault("scenario_file", scenario_file)
        summary.setdefault("bin_s", bin_s)
        summary.setdefault("n_bins", n_bins)

        flows = _record_frame(raw.pop("flows") if consume else raw["flows"], _FLOW_META)
        queues = _record_frame(raw["queues"], _QUEUE_META)
        n_flows, n_queues = len(flows), len(queues)
        # The flow series have a row per source flow, then one per workload.
        workload_names = np.array([w["name"] for w in summary.get("workloads") or ()], dtype=object)
        n_rows = n_flows + len(workload_names)

        buffer_names = np.array([b["switch"] for b in summary.get("buffers") or ()], dtype=object)
        ingress_rows = summary.get("ingress") or []
        # The source flows that had a rate limiter: the rows of the limiter series.
        rl_flows = np.asarray(raw.get("flow_rl_flows", ()), dtype=np.int64)
        rows = {"flows": n_rows, "limiters": len(rl_flows), "queues": n_queues, "buffers": len(buffer_names),
                "ingress": len(ingress_rows)}

        def series(name: str) -> np.ndarray:
            # Converted where used: a run without a scheme's series allocates none.
            kind, dtype = _SERIES[name]
            return _matrix(raw[name], rows[kind], n_bins, dtype)

        tx, rx = series("flow_tx_bytes"), series("flow_rx_bytes")

        to_gbps = 8.0 / bin_s / 1e9
        times = np.arange(n_bins, dtype=np.float64) * bin_s

        # Jain's index over the sources' flows' delivered bytes (builtin_metrics).
        summary["jain_index"] = metrics.jain(flows["delivered_bytes"]) if n_flows else None
        flows["offered_gbps"] = _active_rate(tx[:n_flows], bin_s)
        flows["delivered_gbps"] = _active_rate(rx[:n_flows], bin_s)
        for column in thresholds.QUEUE_COLUMNS:
            # null where a threshold does not apply: NaN, also when no queue has it.
            if column in queues:
                queues[column] = queues[column].astype(np.float64)
        fct_bins = fct.empty_bins()
        if raw.get("workload_flows") is not None:
            flows = _with_workload_flows(flows, raw["workload_flows"])
            fct_bins = fct.bins(flows)
            summary["fct"] = fct.summary(flows)

        flow_names = flows["name"].to_numpy(dtype=object)[:n_flows]
        row_names = np.concatenate([flow_names, workload_names])
        queue_names = queues["name"].to_numpy(dtype=object)
        flow_throughput = pd.DataFrame(
            {
                "time_s": np.tile(times, n_rows),
                "flow": _repeat_names(row_names, n_bins),
                "offered_gbps": tx.ravel().astype(np.float64) * to_gbps,
                "delivered_gbps": rx.ravel().astype(np.float64) * to_gbps,
            },
            copy=False,
        )
        del tx, rx
        if consume:
            del raw["flow_tx_bytes"], raw["flow_rx_bytes"]
        link_throughput = pd.DataFrame(
            {
                "time_s": np.tile(times, n_queues),
                "queue": _repeat_names(queue_names, n_bins),
                "gbps": series("queue_tx_bytes").ravel().astype(np.float64) * to_gbps,
            },
            copy=False,
        )
        queue_occupancy = pd.DataFrame(
            {
                "time_s": np.tile(times, n_queues),
                "queue": _repeat_names(queue_names, n_bins),
                "mean_bytes": series("queue_occ_mean").ravel(),
                "max_bytes": series("queue_occ_max").ravel().astype(np.int64),
                "drops": series("queue_drops").ravel().astype(np.int64),
                "xoff": series("queue_xoff").ravel().astype(np.int64),
            },
            copy=False,
        )
        rate_limiters = _empty_rate_limiters()
        if len(rl_flows):
            # Rows only for the flows that had a limiter (the others kept their line rate).
            # The target rate is QCN's; other schemes have none. α is DCQCN's, a row per flow.
            n_rl = len(rl_flows)
            if _has_rows(raw, "flow_rl_target_mean"):
                rl_target = series("flow_rl_target_mean")
            else:
                rl_target = np.full((n_rl, n_bins), np.nan)
            alpha = (series("flow_alpha_mean")[rl_flows] if _has_rows(raw, "flow_alpha_mean")
                     else np.full((n_rl, n_bins), np.nan))
            rate_limiters = pd.DataFrame(
                {
                    "time_s": np.tile(times, n_rl),
                    "flow": _repeat_names(flow_names[rl_flows], n_bins),
                    "rate_gbps": series("flow_rl_rate_mean").ravel() / 1e9,
                    "target_gbps": rl_target.ravel() / 1e9,
                    "queue_mean_bytes": series("flow_rl_occ_mean").ravel(),
                    "queue_max_bytes": series("flow_rl_occ_max").ravel().astype(np.int64),
                    "alpha": alpha.ravel(),
                },
                copy=False,
            )
        transport = _empty_transport()
        if _has_rows(raw, "flow_cwnd_mean"):
            transports = flows.get("transport", pd.Series("udp", index=flows.index)).to_numpy()[:n_flows]
            tcp_rows = np.flatnonzero(transports == "tcp")
            alpha = series("flow_alpha_mean") if _has_rows(raw, "flow_alpha_mean") else np.full((n_flows, n_bins), np.nan)
            transport = pd.DataFrame(
                {
                    "time_s": np.tile(times, len(tcp_rows)),
                    "flow": _repeat_names(flow_names[tcp_rows], n_bins),
                    "cwnd_bytes": series("flow_cwnd_mean")[tcp_rows].ravel(),
                    "retransmissions": series("flow_retransmissions")[tcp_rows].ravel().astype(np.int64),
                    "timeouts": series("flow_timeouts")[tcp_rows].ravel().astype(np.int64),
                    "alpha": alpha[tcp_rows].ravel(),
                },
                copy=False,
            )
        classes = _empty_classes()
        if summary.get("classes"):
            classes = pd.DataFrame.from_records(summary["classes"], columns=list(_CLASS_COLUMNS))
            classes = classes.astype(_CLASS_COLUMNS)
        pfc_events = _empty_pfc_events()
        if raw.get("pfc_events") is not None:
            pfc_events = pd.DataFrame({c: raw["pfc_events"][c] for c in _PFC_EVENT_COLUMNS}).astype(_PFC_EVENT_COLUMNS)
        buffer_occupancy = _empty_buffer_occupancy()
        if len(buffer_names):
            # Each switch's thresholds (constants) beside its bins.
            per_switch = {
                column: np.repeat(np.array([b.get(column) for b in summary["buffers"]], dtype=dtype), n_bins)
                for column, dtype in _BUFFER_THRESHOLD_COLUMNS.items()
            }
            buffer_occupancy = pd.DataFrame(
                {
                    "time_s": np.tile(times, len(buffer_names)),
                    "switch": _repeat_names(buffer_names, n_bins),
                    "shared_mean_bytes": series("buffer_shared_mean").ravel(),
                    "shared_max_bytes": series("buffer_shared_max").ravel().astype(np.int64),
                    "headroom_mean_bytes": series("buffer_headroom_mean").ravel(),
                    "headroom_max_bytes": series("buffer_headroom_max").ravel().astype(np.int64),
                    **per_switch,
                },
                copy=False,
            )
        ingress_occupancy = _empty_ingress_occupancy()
        if ingress_rows:
            def column(key: str, dtype: Any) -> np.ndarray:
                return np.repeat(np.array([r[key] for r in ingress_rows], dtype=dtype), n_bins)

            ingress_occupancy = pd.DataFrame(
                {
                    "time_s": np.tile(times, len(ingress_rows)),
                    "switch": column("switch", object),
                    "from": column("from", object),
                    "class": column("class", np.int64),
                    "mean_bytes": series("ingress_occ_mean").ravel(),
                    "max_bytes": series("ingress_occ_max").ravel().astype(np.int64),
                }
            )
        return cls(
            summary,
            flows,
            queues,
            flow_throughput,
            link_throughput,
            queue_occupancy,
            rate_limiters,
            transport,
            classes=classes,
            pfc_events=pfc_events,
            buffer_occupancy=buffer_occupancy,
            fct_bins=fct_bins,
            ingress_occupancy=ingress_occupancy,
        )

    # ------------------------------------------------------------------ persistence

    def save(self, directory: str | os.PathLike, *, force: bool = False, figures: str | None = None) -> Path:
        """Write ``summary.json``, one Parquet file per table and the ``.cnsim-result``
        marker into *directory*.

        Everything is written into a temporary sibling directory which is then
        renamed into place, so an interrupted save never leaves a directory
        that looks like a complete result. A new or empty directory is
        written; an earlier cnsim result there is replaced only with
        ``force=True``, and anything cnsim did not write is never replaced
        (:class:`ResultError`, naming it). With *figures* (``"png"`` or
        ``"svg"``) the figures are drawn into ``figures/`` as well.
        """
        with reserve_result(directory, force=force) as slot:
            return self.save_into(slot, figures=figures)

    def save_into(self, slot: Reservation, *, figures: str | None = None) -> Path:
        """Save into a destination claimed before the run (:func:`reserve_result`).

        With *figures* (``"png"`` or ``"svg"``), the figures are drawn into
        ``figures/`` first, so they appear with the result, as one directory.
        """
        for name in TABLES:
            table = getattr(self, name)
            slot.write(f"{name}.parquet", lambda path, table=table: table.to_parquet(path, index=False))

        def write_summary(path: Path) -> None:
            with open(path, "w", encoding="utf-8") as fh:
                json.dump(self.summary, fh, indent=2, sort_keys=False)
                fh.write("\n")

        slot.write(SUMMARY_FILE, write_summary)
        if figures is not None:
            from . import plots

            plots.plot(self, plots.figures_dir(slot.temp), figures)
        self.path = slot.commit(engine_id=self.summary.get("engine_id"))
        return self.path

    @classmethod
    def load(cls, directory: str | os.PathLike) -> Result:
        """Read a result directory written by :meth:`save`."""
        path = Path(directory)
        if not path.is_dir():
            raise ResultError(f"{path}: no such result directory")
        summary_file = path / SUMMARY_FILE
        if not summary_file.is_file():
            raise ResultError(f"{path}: not a cnsim result directory (no {SUMMARY_FILE})")
        problem = verify(path)
        if problem:
            raise ResultError(f"{path}: {problem}")
        try:
            summary = json.loads(summary_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ResultError(f"{summary_file}: cannot read: {exc}") from None
        tables = {}
        for name in TABLES:
            file = path / f"{name}.parquet"
            if not file.is_file() and name in _OPTIONAL_TABLES:
                continue
            if not file.is_file():
                raise ResultError(f"{path}: incomplete result directory (no {file.name})")
            try:
                tables[name] = _read_flows(file) if name == "flows" else pd.read_parquet(file)
            except Exception as exc:  # pyarrow raises several kinds
                raise ResultError(f"{file}: cannot read: {exc}") from None
        return cls(summary, path=path, **tables)


def _read_flows(file: Path) -> pd.DataFrame:
    """The flows table.

    Results saved by earlier builds hold the workload flows' priorities as one
    bytes object (every flow's priority, a byte each) repeated on every workload
    row. Those load with one integer per row, as results saved now hold, without
    reading the repeated bytes (n² of them for n flows) into memory.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = [c for c in pq.read_schema(file).names if c != "__index_level_0__"]
    if "priority" not in names:
        return pd.read_parquet(file)
    kind = pq.read_schema(file).field("priority").type
    if not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
        return pd.read_parquet(file)
    frame = pd.read_parquet(file, columns=[c for c in names if c != "priority"])
    # Read as a dictionary: its one value is the bytes object, its indices mark the workload rows.
    column = pq.read_table(file, columns=["priority"], read_dictionary=["priority"]).column("priority")
    workload_rows = column.is_valid().to_numpy(zero_copy_only=False)
    values = {v for chunk in column.chunks for v in chunk.dictionary.to_pylist()}
    blob = values.pop() if len(values) == 1 else b""
    if len(blob) != workload_rows.sum():
        raise ResultError(f"{file}: the 'priority' column holds bytes, not one priority per workload flow")
    priority: np.ndarray = np.frombuffer(blob, dtype=np.uint8).astype(np.int64)
    if not workload_rows.all():  # the sources' flows have none
        priority = np.where(workload_rows, 0.0, np.nan)
        priority[workload_rows] = np.frombuffer(blob, dtype=np.uint8)
    frame.insert(names.index("priority"), "priority", priority)
    return frame


def load(directory: str | os.PathLike) -> Result:
    """Shorthand for :meth:`Result.load`."""
    return Result.load(directory)


def reserve_result(directory: str | os.PathLike, *, force: bool = False) -> Reservation:
    """Check and claim *directory* for a result before running (see :meth:`Result.save`)."""
    return reserve(directory, KIND_RESULT, force=force, unmarked=_unmarked_result_files)


def verify(directory: str | os.PathLike, *, hashes: bool = True) -> str | None:
    """What is wrong with the files of the result in *directory* ("flows.parquet truncated
    (expected N bytes, found M)"), checked against the sizes and SHA-256 its marker
    recorded; None if they are as written (or the result predates markers)."""
    marker = read_marker(Path(directory))
    return check_files(Path(directory), marker, hashes=hashes) if marker is not None else None


def _unmarked_result_files(directory: Path) -> set[str] | None:
    """Results saved before the marker existed: a summary.json with an engine id, beside
    which only the names a result has count as cnsim's."""
    try:
        summary = json.loads((directory / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict) or "engine_id" not in summary:
        return None
    return {SUMMARY_FILE, *(f"{name}.parquet" for name in TABLES)}


# --------------------------------------------------------------------------- helpers

#: What the machine measured: differs between two runs of the same scenario.
_TIMING_KEYS = ("wall_time_s", "events_per_s", "frame_hops_per_s", "slowdown", "peak_memory_bytes", "rss_growth_bytes")
#: How the run was executed, not what it computed: the timing, and the threads it was asked to
#: use and used (the results are the same on any number; docs/parallel.md).
_EXECUTION_KEYS = (*_TIMING_KEYS, "threads_requested", "threads_used", "threads_note")


def _repeat_names(names: np.ndarray, n: int) -> Any:
    """``np.repeat(names, n)``, each name ``n`` times, as the column pandas makes of it.

    Where pandas keeps strings in Arrow (pandas 3's ``str``), the repetition is made
    there, by index: converting a Python object per row cost 2.5 s per ten million
    rows (a k = 16 fat tree's million flows over ten bins). Elsewhere, numpy's.
    """
    base = pd.Series(names, copy=False)
    dtype = base.dtype
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        indices = pa.array(np.repeat(np.arange(len(names), dtype=np.int64), n))
        return pd.array(pa.array(base.array).take(indices), dtype=dtype)
    return np.repeat(names, n)


def _comparable_summary(summary: Mapping[str, Any], ignore_execution: bool) -> dict[str, Any]:
    out = dict(summary)
    if ignore_execution:
        for key in _EXECUTION_KEYS:
            out.pop(key, None)
    return out


def _empty_per_flow(**columns: type) -> pd.DataFrame:
    """An empty per-flow time-series table: time_s, flow, then ``columns`` with their dtypes."""
    dtypes = {"time_s": np.float64, "flow": object, **columns}
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in dtypes.items()})


def _empty_rate_limiters() -> pd.DataFrame:
    return _empty_per_flow(
        rate_gbps=np.float64,
        target_gbps=np.float64,
        queue_mean_bytes=np.float64,
        queue_max_bytes=np.int64,
        alpha=np.float64,
    )


_CLASS_COLUMNS = {
    "queue": str,
    "class": np.int64,
    "tx_bytes": np.int64,
    "drops_frames": np.int64,
    "drops_bytes": np.int64,
    "max_occupancy_bytes": np.int64,
    "paused_time_s": np.float64,
    "paused_fraction": np.float64,
    "pfc_xoff_sent": np.int64,
    "pfc_xon_sent": np.int64,
    "ecn_marked": np.int64,
    **{column: np.float64 for column in thresholds.CLASS_COLUMNS},
}
_PFC_EVENT_COLUMNS = {
    "time_s": np.float64,
    "queue": str,
    "node": str,
    "class": np.int64,
    "quanta": np.int64,
    "direction": str,
}


def _empty_classes() -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in _CLASS_COLUMNS.items()})


def _empty_pfc_events() -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in _PFC_EVENT_COLUMNS.items()})


def _empty_ingress_occupancy() -> pd.DataFrame:
    dtypes = {
        "time_s": np.float64,
        "switch": object,
        "from": object,
        "class": np.int64,
        "mean_bytes": np.float64,
        "max_bytes": np.int64,
    }
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in dtypes.items()})


# The pool size is always there; a threshold may not apply (NaN).
_BUFFER_THRESHOLD_COLUMNS = {column: np.float64 for column in thresholds.BUFFER_COLUMNS} | {"shared_pool_bytes": np.int64}


def _empty_buffer_occupancy() -> pd.DataFrame:
    dtypes = {
        "time_s": np.float64,
        "switch": object,
        "shared_mean_bytes": np.float64,
        "shared_max_bytes": np.int64,
        "headroom_mean_bytes": np.float64,
        "headroom_max_bytes": np.int64,
        **_BUFFER_THRESHOLD_COLUMNS,
    }
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in dtypes.items()})


def _empty_transport() -> pd.DataFrame:
    return _empty_per_flow(cwnd_bytes=np.float64, retransmissions=np.int64, timeouts=np.int64, alpha=np.float64)


def _record_frame(columns: Mapping[str, Any], names: Sequence[str]) -> pd.DataFrame:
    """The engine's records (flows or queues) as a frame: one column per field, in the
    records' field order; the naming *names* alone when there are none.

    Text comes as pyarrow string arrays and becomes the column pandas makes of a list of
    ``str``; the numbers stay in their arrays (no copy into one block: a million flows'
    counters are 250 MB)."""
    if not columns:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in names})
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"engine returned columns of unequal length: { {c: len(v) for c, v in columns.items()} }")
    return pd.DataFrame({c: _text_column(v) if isinstance(v, pa.Array) else v for c, v in columns.items()},
                        copy=False)


def _text_column(values: pa.Array) -> Any:
    """A pyarrow string array as the column pandas makes of the same strings in a list:
    its ``str`` dtype where that keeps strings in Arrow (pandas 3), which takes the array
    as it is; else Python objects."""
    dtype = _list_string_dtype()
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        return pd.array(values, dtype=dtype)
    return np.asarray(values.to_pylist(), dtype=object)


@functools.cache
def _list_string_dtype() -> Any:
    """The dtype pandas gives a column made from a list of ``str``."""
    return pd.Series(["x"]).dtype


def _has_rows(raw: Mapping[str, Any], name: str) -> bool:
    """Does the run have this series? The engine leaves those of a scheme or transport the
    run does not have empty."""
    return np.asarray(raw.get(name, ())).size > 0


def _matrix(values: Any, rows: int, cols: int, dtype: np.dtype) -> np.ndarray:
    arr = np.asarray(values, dtype=dtype)
    if arr.size == 0:
        return np.zeros((rows, cols), dtype=dtype)
    if arr.shape != (rows, cols):
        if arr.size != rows * cols:
            raise ValueError(f"engine returned an array of shape {arr.shape}, expected {(rows, cols)}")
        arr = arr.reshape(rows, cols)
    return arr


def _with_workload_flows(flows: pd.DataFrame, columns: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """The sources' flows, then the workload flows (with their completion times)."""
    n = len(columns["name"])
    for key, values in columns.items():
        # A bytes or str value is one object, which pandas would repeat on every row.
        if isinstance(values, (bytes, str)) or len(values) != n:
            raise ValueError(f"engine returned the workload flows' {key!r} as {type(values).__name__} "
                             f"of length {len(values)}, expected one value per flow ({n})")
    w = pd.DataFrame(dict(columns))
    w["source"] = w["workload"]
    w["slowdown"] = w["fct_s"] / w["ideal_fct_s"]
    w["offered_gbps"] = np.nan
    w["delivered_gbps"] = np.nan
    if flows.empty:
        return w.reset_index(drop=True)
    return pd.concat([flows, w], ignore_index=True)


def _active_rate(matrix: np.ndarray, bin_s: float) -> np.ndarray:
    """Mean Gb/s of each row over the span from its first to its last non-zero bin."""
    rates = np.zeros(matrix.shape[0], dtype=np.float64)
    if matrix.size == 0:
        return rates
    nonzero = matrix != 0
    active = nonzero.any(axis=1)
    first = nonzero.argmax(axis=1)
    last = matrix.shape[1] - 1 - nonzero[:, ::-1].argmax(axis=1)
    span = (last - first + 1)[active] * bin_s
    total = matrix.sum(axis=1)[active].astype(np.float64)
    rates[active] = total * 8.0 / span / 1e9
    return rates
