"""Study `cc_compare`: congestion-control schemes side by side on one hotspot.

docs/studies.md#comparison-cc_compare. One scenario file,
``cc_compare/leaf_spine.toml``: a leaf-spine of two leaves and a spine,
hosts at 10 Gb/s, uplinks at 40 Gb/s; four hot flows H1..H4 -> R (a 4-to-1
incast on R's port L2->R) and one innocent flow I -> J that shares leaf L1,
the uplinks and the spine with them but not the hotspot. Every variant is a
set of overrides of that file, so all carry the same traffic:

* ``newreno``   TCP NewReno, drop tail (the file as it is);
* ``dctcp``     TCP with DCTCP, step ECN marking at K;
* ``dcqcn_pfc`` RoCE with DCQCN, RED ECN marking, PFC on class 0;
* ``qcn_pause`` UDP with QCN, 802.3x PAUSE per input;
* ``pfc_only``  RoCE over PFC without congestion control: the reference for
  what flow control alone does to the innocent flow (head-of-line blocking).

No study published these numbers: cnsim compares the schemes with one
another (``Metric.published`` is None). Throughput, fairness and the hotspot
queue are measured from 20 ms to the end (--quick: from 10 ms); drops, paused
times, XOFFs and congestion signals are totals over the whole run.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..results import Result
from ..stats import mean_interval, mean_text
from . import Metric, Runs, Sensitivity, Study, View, register

FILE = "cc_compare/leaf_spine.toml"

#: the lossless fabric: per-input partitions of 500 KB (the lossy variants have 500 KB per output queue)
LOSSLESS = {"defaults.switch.buffer_model": "per_input"}
FLOW_CONTROL = {"classes": [0], "xoff": "400KB", "xon": "380KB"}
PAUSE = {"mode": "per_input", "xoff": "400KB", "xon": "380KB"}
#: DCTCP's step marking: K = 65 frames of 1500 B on 10 Gb/s ports, four times that on 40 Gb/s ones
STEP = {"rule": "step", "k": "97500B", "rates": [{"rate": "40Gbps", "k": "390KB"}]}
#: DCQCN's RED marking: the paper's 40 Gb/s thresholds, a quarter of them on 10 Gb/s ports
RED = {"rule": "red", "kmin": "1250B", "kmax": "50KB", "pmax": 0.01,
       "rates": [{"rate": "40Gbps", "kmin": "5KB", "kmax": "200KB", "pmax": 0.01}]}

VARIANTS: dict[str, dict] = {
    "newreno": {},
    "dctcp": {"tcp.ecn": "dctcp", "defaults.switch.ecn": STEP},
    "dcqcn_pfc": {**LOSSLESS, "defaults.switch.pfc": FLOW_CONTROL, "defaults.switch.ecn": RED,
                  "defaults.source.transport": "roce", "dcqcn.enabled": True},
    "qcn_pause": {**LOSSLESS, "defaults.switch.pause": PAUSE, "defaults.source.transport": "udp",
                  "qcn.enabled": True},
    "pfc_only": {**LOSSLESS, "defaults.switch.pfc": FLOW_CONTROL, "defaults.source.transport": "roce"},
}
LABELS = {
    "newreno": "TCP NewReno, drop tail",
    "dctcp": "DCTCP, step ECN (K = 97.5 KB)",
    "dcqcn_pfc": "RoCE + DCQCN + PFC, RED ECN",
    "qcn_pause": "UDP + QCN + PAUSE",
    "pfc_only": "RoCE + PFC, no congestion control (reference)",
}
#: --quick: every variant, one seed, 30 ms
QUICK_OVERRIDES = {"duration": "30ms"}

HOT = ("H1", "H2", "H3", "H4")
INNOCENT = "I"
HOTSPOT = "L2->R"
LINE_GBPS = 10.0
FRAME = 1500
#: payload per 1500 B frame of each transport; UDP counts frame bytes
PAYLOAD = {"tcp": 1460, "roce": 1442, "udp": 1500}


# --------------------------------------------------------------------------- measures


def settled_from(r: Result) -> float:
    """Start of the measurement window (s): 20 ms in the 200 ms run, 10 ms in a shorter (--quick) one."""
    return 0.02 if r.duration_s >= 0.1 - 1e-9 else 0.01


def _window(frame: pd.DataFrame, r: Result) -> pd.DataFrame:
    return frame[frame["time_s"] >= settled_from(r) - r.bin_s / 2]


def flow_gbps(r: Result, flow: str) -> float:
    """A flow's mean delivered rate over the window (Gb/s; TCP and RoCE: goodput, UDP: frame bytes)."""
    ft = _window(r.flow_throughput, r)
    s = ft.loc[ft["flow"] == flow, "delivered_gbps"]
    return float(s.mean()) if len(s) else float("nan")


def innocent_gbps(r: Result) -> float:
    return flow_gbps(r, INNOCENT)


def transport(r: Result) -> str:
    return str(r.flows.set_index("name").loc[INNOCENT, "transport"])


def ceiling_gbps(r: Result) -> float:
    """What one flow of this run's transport delivers at 10 Gb/s line rate."""
    return LINE_GBPS * PAYLOAD[transport(r)] / FRAME


def innocent_share(r: Result) -> float:
    """The innocent flow's throughput as a fraction of its transport's ceiling."""
    return innocent_gbps(r) / ceiling_gbps(r)


def hot_gbps(r: Result) -> float:
    return float(sum(flow_gbps(r, f) for f in HOT))


def hotspot_link_gbps(r: Result) -> float:
    """What left the hotspot port L2 -> R over the window, on the wire (Gb/s)."""
    lt = _window(r.link_throughput, r)
    return float(lt.loc[lt["queue"] == HOTSPOT, "gbps"].mean())


def hot_jain(r: Result) -> float:
    """Jain's index of the four hot flows' delivered rates over the window."""
    x = np.array([flow_gbps(r, f) for f in HOT])
    return float(x.sum() ** 2 / (len(x) * (x ** 2).sum())) if (x ** 2).sum() > 0 else 0.0


def _hotspot_occupancy(r: Result) -> pd.DataFrame:
    q = _window(r.queue_occupancy, r)
    return q[q["queue"] == HOTSPOT]


def hotspot_queue_kb(r: Result) -> float:
    """The hotspot queue's time-averaged occupancy over the window (KB)."""
    return float(_hotspot_occupancy(r)["mean_bytes"].mean() / 1e3)


def hotspot_queue_max_kb(r: Result) -> float:
    """The hotspot queue's largest occupancy in the window (KB)."""
    return float(_hotspot_occupancy(r)["max_bytes"].max() / 1e3)


def drops(r: Result) -> float:
    """Frames dropped by every switch queue over the run (TCP's lost segments included)."""
    return float(r.queues["drops_frames"].sum())


def hotspot_drops(r: Result) -> float:
    return float(r.queues.set_index("name").loc[HOTSPOT, "drops_frames"])


def paused_ms(queue: str):
    """Time the transmitter of `queue` was held by PAUSE or by PFC (any class) over the run (ms)."""
    def measure(r: Result) -> float:
        t = float(r.queues.set_index("name").loc[queue, "paused_time_s"])
        c = r.classes
        if len(c):
            t += float(c.loc[c["queue"] == queue, "paused_time_s"].sum())
        return t * 1e3
    measure.__name__ = f"paused_ms_{queue}"
    return measure


def hot_senders_paused_ms(r: Result) -> float:
    """The hot senders' ports into L1, mean time held over the run (ms)."""
    return float(np.mean([paused_ms(f"{h}->L1")(r) for h in HOT]))


def xoff_sent(r: Result) -> float:
    """PAUSE and PFC XOFF frames sent by every switch port (refreshes included)."""
    n = float(r.queues["pause_frames_sent"].sum())
    if len(r.classes):
        n += float(r.classes["pfc_xoff_sent"].sum())
    return n


def last_xoff_ms(r: Result) -> float:
    """End of the last bin in which any switch port sent XOFF (PAUSE or PFC), in ms; 0 if none did."""
    q = r.queue_occupancy
    sent = q.loc[q["xoff"] > 0, "time_s"]
    return float((sent.max() + r.bin_s) * 1e3) if len(sent) else 0.0


def _flow_sum(column: str):
    def measure(r: Result) -> float:
        f = r.flows
        return float(f[column].sum()) if column in f else float("nan")
    return measure


def signals(r: Result) -> float:
    """Congestion signals of the run's scheme: segments received CE-marked (DCTCP), CNPs sent
    (DCQCN), CNMs sent (QCN); NaN for a scheme without any."""
    f, q = r.flows, r.queues
    if "ce_received" in f and f["ce_received"].sum() > 0:
        return float(f["ce_received"].sum())
    if "cnps_sent" in f and f["cnps_sent"].sum() > 0:
        return float(f["cnps_sent"].sum())
    if "cn_negative" in q and q["cn_negative"].sum() > 0:
        return float(q["cn_negative"].sum())
    return float("nan")


# --------------------------------------------------------------------------- tables and statements


ORDER = list(VARIANTS)


def _cell(rs, measure, decimals: int | str) -> str:
    """Mean over seeds ± the half-width of its 95% interval, and the range when the seeds differ;
    with ``decimals = "max"`` the largest value over the seeds, in whole numbers."""
    values = [v for v in (measure(r) for r in rs) if not np.isnan(v)]
    if not values:
        return "—"
    if decimals == "max":
        return f"{max(values):,.0f}"
    fmt = f"{{:,.{decimals}f}}"
    text = mean_text(values, fmt)
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return text + (f" ({lo}–{hi})" if lo != hi else "")


#: the rows of the side-by-side table: (label, measure of one run, decimals, or "max": the largest over seeds)
ROWS = (
    ("innocent I → J (Gb/s)", innocent_gbps, 3),
    ("innocent, share of its transport's 10 Gb/s ceiling (%)", lambda r: 100 * innocent_share(r), 1),
    ("hot flows H1–H4 → R together (Gb/s)", hot_gbps, 3),
    ("hotspot link L2 → R on the wire (Gb/s)", hotspot_link_gbps, 3),
    ("Jain's index of the hot flows", hot_jain, 4),
    ("hotspot queue L2 → R, mean (KB)", hotspot_queue_kb, 1),
    ("hotspot queue L2 → R, largest (KB)", hotspot_queue_max_kb, 1),
    ("frames dropped, all switches (run)", drops, 0),
    ("frames dropped at L2 → R (run)", hotspot_drops, 0),
    ("S → L2 held by PAUSE/PFC (ms of the run)", paused_ms("S->L2"), 2),
    ("L1 → S held (ms of the run)", paused_ms("L1->S"), 2),
    ("I → L1, the innocent sender, held (ms of the run)", paused_ms("I->L1"), 2),
    ("H1–H4 → L1, the hot senders, held, mean (ms of the run)", hot_senders_paused_ms, 2),
    ("XOFF frames sent, all ports (run)", xoff_sent, 0),
    ("last XOFF sent, latest over the seeds: end of its 1 ms bin (ms; 0: none)", last_xoff_ms, "max"),
    ("congestion signals: CE-marked segments (DCTCP), CNPs (DCQCN), CNMs (QCN) (run)", signals, 0),
    ("TCP retransmissions (run)", _flow_sum("retransmissions"), 0),
    ("TCP retransmission timeouts (run)", _flow_sum("timeouts"), 0),
)


def side_by_side(runs: Runs) -> pd.DataFrame:
    """One row per quantity, one column per variant (mean over seeds ± 95% CI, range in brackets)."""
    present = [v for v in ORDER if runs.get(v)]
    rows = [{"": "scheme", **{v: LABELS[v] for v in present}},
            {"": "transport", **{v: transport(runs[v][0]) for v in present}}]
    for label, measure, decimals in ROWS:
        rows.append({"": label, **{v: _cell(runs[v], measure, decimals) for v in present}})
    return pd.DataFrame(rows)


def _avg(runs: Runs, variant: str, measure, decimals: int) -> str | None:
    rs = runs.get(variant) or []
    values = [v for v in (measure(r) for r in rs) if not np.isnan(v)]
    if not values:
        return None
    return f"{{:,.{decimals}f}}".format(mean_interval(values)[0])


def _all(*values) -> bool:
    return all(v is not None for v in values)


def _window_statement(runs: Runs) -> str | None:
    rs = next((rs for rs in runs.values() if rs), None)
    if not rs:
        return None
    r, n = rs[0], max(len(x) for x in runs.values())
    return (f"No study published these numbers; cnsim compares the schemes with one another on identical traffic. "
            f"Means over {n} seed{'s' if n != 1 else ''} (± the 95% confidence interval, range in brackets). "
            f"Throughput, Jain's index and the queue are measured from {settled_from(r) * 1e3:.0f} ms to the end of "
            f"the {r.duration_s * 1e3:.0f} ms run; drops, paused times, XOFFs and signals count the whole run. "
            f"TCP and RoCE throughput is goodput (1460 and 1442 B of payload per 1500 B frame: ceilings 9.733 and "
            f"9.613 Gb/s at 10 Gb/s), UDP counts frame bytes (10 Gb/s); the hotspot link counts wire bytes. Goodput "
            f"counts data when it reaches the application in order, so over a window it can exceed what the link "
            f"carried: data that arrived before the window behind a lost segment is credited once the loss is "
            f"repaired (NewReno's hot flows).")


def _percent_of_run(queue: str):
    return lambda r: 100 * paused_ms(queue)(r) / (r.duration_s * 1e3)


def _hol_statement(runs: Runs) -> str | None:
    ref = _avg(runs, "pfc_only", innocent_gbps, 2)
    each = _avg(runs, "pfc_only", lambda r: hot_gbps(r) / len(HOT), 2)
    held = {q: _avg(runs, "pfc_only", _percent_of_run(q), 0) for q in ("S->L2", "L1->S", "I->L1")}
    dq = _avg(runs, "dcqcn_pfc", innocent_gbps, 3)
    qp = _avg(runs, "qcn_pause", innocent_gbps, 3)
    if not _all(ref, each, *held.values(), dq, qp):
        return None
    last = {v: max(last_xoff_ms(r) for r in runs[v]) for v in ("dcqcn_pfc", "qcn_pause")}
    idle = " and ".join(
        f"{name} never sends XOFF" if not t else
        f"{name} sends its last XOFF within the first {'millisecond' if t <= 1 else f'{t:.0f} ms'}"
        for name, t in (("DCQCN + PFC", last["dcqcn_pfc"]), ("QCN + PAUSE", last["qcn_pause"])))
    return (f"Flow control alone (pfc_only) is lossless but spreads the hotspot upstream: L2 holds the spine's "
            f"port S → L2 ({held['S->L2']}% of the run), the spine holds L1's uplink ({held['L1->S']}%), and L1 "
            f"holds every sender on it, the innocent I included ({held['I->L1']}%). The innocent flow gets {ref} "
            f"Gb/s, a hot flow's share ({each} Gb/s each): head-of-line blocking. With congestion control on the "
            f"same lossless fabric the hot flows slow down at their sources ({idle}, in every seed) and the "
            f"innocent flow keeps its ceiling: {dq} Gb/s with DCQCN + PFC, {qp} Gb/s with QCN + PAUSE.")


def _lossy_statement(runs: Runs) -> str | None:
    nr = {k: _avg(runs, "newreno", m, d) for k, m, d in
          (("drops", drops, 0), ("q", hotspot_queue_kb, 0), ("jain", hot_jain, 3), ("to", _flow_sum("timeouts"), 1),
           ("inn", innocent_gbps, 3))}
    dc = {k: _avg(runs, "dctcp", m, d) for k, m, d in
          (("drops", drops, 0), ("q", hotspot_queue_kb, 0), ("qmax", hotspot_queue_max_kb, 0), ("jain", hot_jain, 3),
           ("inn", innocent_gbps, 3))}
    if not _all(*nr.values(), *dc.values()):
        return None
    rs = runs["newreno"]
    where = ("all of them at L2 → R" if all(hotspot_drops(r) == drops(r) for r in rs)
             else f"{_avg(runs, 'newreno', hotspot_drops, 0)} of them at L2 → R")
    jn, jd = (mean_interval(hot_jain(r) for r in runs[v])[0] for v in ("newreno", "dctcp"))
    order = "less" if jn < jd else "more"
    return (f"On the lossy fabric the hotspot never backs up into the uplinks, so the innocent flow keeps its "
            f"ceiling under both TCP variants ({nr['inn']} and {dc['inn']} Gb/s). NewReno fills the 500 KB "
            f"output queue (mean {nr['q']} KB) and loses {nr['drops']} frames a run, {where}, with {nr['to']} "
            f"retransmission timeouts a run. DCTCP holds the queue near K (mean {dc['q']} KB, at most "
            f"{dc['qmax']} KB) and drops {dc['drops']} frames. NewReno's hot flows share R's link {order} evenly "
            f"than DCTCP's (Jain {nr['jain']} against {dc['jain']}).")


def _rate_statement(runs: Runs) -> str | None:
    dq_link = _avg(runs, "dcqcn_pfc", hotspot_link_gbps, 2)
    dq_q = _avg(runs, "dcqcn_pfc", hotspot_queue_kb, 1)
    dq_jain = _avg(runs, "dcqcn_pfc", hot_jain, 4)
    qp_q = _avg(runs, "qcn_pause", hotspot_queue_kb, 1)
    qp_jain = _avg(runs, "qcn_pause", hot_jain, 3)
    qp_link = _avg(runs, "qcn_pause", hotspot_link_gbps, 2)
    if not _all(dq_link, dq_q, dq_jain, qp_q, qp_jain, qp_link):
        return None
    return (f"The two rate-based schemes differ in how they share and fill the hotspot. DCQCN shares evenly "
            f"(Jain {dq_jain}) but leaves R's link partly idle ({dq_link} Gb/s on the wire, queue mean {dq_q} KB): "
            f"the four flows are cut together, their sum falls below R's 10 Gb/s, the queue drains to about a frame "
            f"and the link runs below its rate until the rates have climbed back. QCN keeps the link full "
            f"({qp_link} Gb/s) with the queue near Qeq (mean {qp_q} KB), but its limiters settle at unequal rates "
            f"(Jain {qp_jain}; the figure of the hot flows): once the queue sits near Qeq the CP sends little "
            f"feedback, so the multiplicative cuts that would even the rates out are rare.")


def _threshold_statement(runs: Runs) -> str:
    return ("The queue each scheme holds is set by its own threshold (DCTCP's K, DCQCN's Kmin–Kmax, QCN's Qeq), "
            "each as its authors published it and scaled to the port's rate; the queues compare those settings as "
            "much as the algorithms. 'cnsim reproduce cc_compare --sensitivity' sweeps K, DCQCN's Kmax and "
            "NewReno's minimum RTO.")


# --------------------------------------------------------------------------- figures


def summary_figure(runs: Runs):
    """Bars per variant: the innocent flow's share of its ceiling, the hotspot link, the hotspot queue, drops."""
    present = [v for v in ORDER if runs.get(v)]
    panels = (
        ("innocent I → J,\n% of its ceiling", lambda r: 100 * innocent_share(r), "{:.0f}"),
        ("hotspot link L2 → R\n(Gb/s, wire)", hotspot_link_gbps, "{:.2f}"),
        ("hotspot queue L2 → R,\nmean (KB)", hotspot_queue_kb, "{:.0f}"),
        ("frames dropped\n(run)", drops, "{:,.0f}"),
        ("innocent sender held\n(% of the run)", lambda r: 100 * paused_ms("I->L1")(r) / (r.duration_s * 1e3),
         "{:.0f}"),
    )
    fig, axes = plt.subplots(1, len(panels), figsize=(13, 3.6), constrained_layout=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (title, measure, fmt) in zip(axes, panels):
        means, halves = [], []
        for v in present:
            m, h = mean_interval(measure(r) for r in runs[v])
            means.append(0.0 if np.isnan(m) else m)
            halves.append(0.0 if np.isnan(h) else h)
        bars = ax.bar(range(len(present)), means, yerr=halves, capsize=3,
                      color=[colors[i % len(colors)] for i in range(len(present))])
        ax.bar_label(bars, labels=[fmt.format(m) for m in means], padding=2, fontsize=7)
        ax.set_xticks(range(len(present)), present, rotation=40, ha="right", fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.set_ylim(0, max(means + [1e-9]) * 1.25 or 1)
        ax.grid(True, axis="y", alpha=0.3)
    return fig


def hot_flows_figure(runs: Runs):
    """Each hot flow's delivered throughput over time, one panel per variant (first seed)."""
    present = [v for v in ORDER if runs.get(v)]
    fig, axes = plt.subplots(len(present), 1, figsize=(9, 1.55 * len(present) + 0.6), sharex=True,
                             constrained_layout=True, squeeze=False)
    for ax, v in zip(axes[:, 0], present):
        r = runs[v][0]
        ft = r.flow_throughput
        for f in HOT:
            s = ft[ft["flow"] == f]
            ax.step(s["time_s"] * 1e3, s["delivered_gbps"], where="post", lw=0.9, label=f)
        ax.axhline(LINE_GBPS * PAYLOAD[transport(r)] / FRAME / len(HOT), color="k", ls=":", lw=0.8)
        ax.set_ylabel("Gb/s")
        ax.set_title(f"{v} (seed {r.seed})", fontsize=9, loc="left")
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=4, loc="upper right")
    axes[-1, 0].set_xlabel("time (ms)")
    return fig


# --------------------------------------------------------------------------- metrics

NOTE = "none: the variants are compared with one another"


def _metrics() -> tuple[Metric, ...]:
    out = []
    for v in ORDER:
        out += [
            Metric("innocent I → J", v, innocent_gbps, note=NOTE, unit="Gb/s", decimals=3),
            Metric("Jain's index of the hot flows", v, hot_jain, note=NOTE, decimals=4),
            Metric("hotspot queue L2 → R, mean", v, hotspot_queue_kb, note=NOTE, unit="KB", decimals=1),
            Metric("frames dropped, all switches (run)", v, drops, note=NOTE, decimals=0),
        ]
    return tuple(out)


register(
    Study(
        name="cc_compare",
        title="Congestion control compared — NewReno, DCTCP, DCQCN + PFC, QCN + PAUSE on one hotspot",
        source="cnsim's own comparison (no published study): a 4-to-1 incast on a two-leaf, one-spine fabric "
               "at 10/40 Gb/s with an innocent flow on the hot flows' path",
        variants={"leaf_spine": FILE},
        sweep_variants=VARIANTS,
        seeds=5,
        quick_seeds=1,
        quick_overrides=QUICK_OVERRIDES,
        metrics=_metrics(),
        views=(
            View("Innocent flow I → J: delivered throughput", "flows", (INNOCENT,)),
            View("Hotspot link L2 → R: throughput on the wire", "links", (HOTSPOT,)),
            View("Hotspot queue L2 → R: occupancy", "queues", (HOTSPOT,)),
        ),
        drops_figure=False,
        metrics_heading="Our numbers (no published ones)",
        findings_heading="What the mechanisms predict",
        differences_heading="What the runs show",
        quick_note="The numbers below are a smoke test\nand are not comparable with those of the full run.",
        findings=(
            "Expected from the mechanisms: on a lossy fabric the hotspot costs the hot flows drops (NewReno) or "
            "nothing (DCTCP) but never reaches the innocent flow.",
            "On a lossless fabric flow control alone spreads the hotspot upstream and the innocent flow is held "
            "with the hot ones (head-of-line blocking); congestion control at the sources (DCQCN, QCN) keeps the "
            "flow control idle and the innocent flow at its line rate.",
        ),
        differences=(
            _window_statement,
            _hol_statement,
            _lossy_statement,
            _rate_statement,
            _threshold_statement,
        ),
        sensitivities=(
            Sensitivity(
                "DCTCP's marking threshold K on 10 Gb/s ports", "defaults.switch.ecn.k",
                ("30KB", "97500B", "200KB"), "97500B",
                "65 frames of 1500 B, the DCTCP paper's setting at 10 Gb/s; 30 KB is about 1.4 times the "
                "fabric's bandwidth-delay product (21 KB).",
                "dctcp", (("hotspot queue, mean (KB)", hotspot_queue_kb, None),
                          ("hotspot link (Gb/s)", hotspot_link_gbps, None),
                          ("Jain's index of the hot flows", hot_jain, None))),
            Sensitivity(
                "DCQCN's Kmax on 10 Gb/s ports (Kmin 1.25 KB, Pmax 1%)", "defaults.switch.ecn.kmax",
                ("25KB", "50KB", "200KB"), "50KB",
                "A quarter of the paper's 200 KB at 40 Gb/s: the same 40 µs of queueing at 10 Gb/s. 200 KB is "
                "the paper's value unscaled.",
                "dcqcn_pfc", (("hotspot link (Gb/s)", hotspot_link_gbps, None),
                              ("hotspot queue, mean (KB)", hotspot_queue_kb, None),
                              ("S → L2 held (ms)", paused_ms("S->L2"), None))),
            Sensitivity(
                "TCP's minimum retransmission timeout (NewReno)", "tcp.min_rto", ("1ms", "10ms", "200ms"), "10ms",
                "25 times the deepest queueing delay of the fabric (0.4 ms) and short against the 200 ms run; "
                "200 ms is Linux's default.",
                "newreno", (("Jain's index of the hot flows", hot_jain, None),
                            ("hot flows together (Gb/s)", hot_gbps, None),
                            ("frames dropped", drops, None))),
        ),
        extra_tables=(
            ("Side by side: one column per variant (mean over seeds ± 95% CI, range in brackets). Throughput, "
             "Jain's index and the queue from 20 ms to the end (--quick: 10 ms); drops, held times, XOFFs, "
             "signals and TCP counters over the whole run", side_by_side),
        ),
        extra_figures=(
            ("The hot flows H1–H4, each, per variant (first seed); dotted: a quarter of the transport's ceiling",
             hot_flows_figure),
            ("Per variant: the innocent flow, the hotspot link and queue, drops, and how long the innocent sender "
             "was held (mean over seeds, 95% CI)", summary_figure),
        ),
    )
)
