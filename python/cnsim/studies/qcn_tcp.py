"""Study C, `qcn_tcp`: QCN and PAUSE under TCP NewReno (Atikoglu and Prabhakar, Apr 2008).

docs/studies.md#study-c-qcn_tcp. Two scenario files, every variant a set of
overrides of one of them:

* ``qcn_tcp/hotspot.toml`` — C1, a multi-stage output-generated hotspot (N7
  drains at 500 Mb/s for the whole 500 ms run), and C2, the same for 1 s with
  N7 slow for the first 100 ms of every 200 ms. Victim flows go to N7,
  innocent flows elsewhere.
* ``qcn_tcp/pause_propagation.toml`` — C3, N1 -> N3 and N2 -> N4 at line
  rate through a Center switch; N3 drains at 1 Gb/s during [250, 750] ms.

Schemes: TCP alone (drop tail, 150 KB per output queue), TCP + QCN,
TCP + QCN + PAUSE, QCN + PAUSE over UDP (C1, C2) and TCP + PAUSE (C3). With
PAUSE the switches have no output limit and pause per input at 130 / 110 KB
(C3's Center switch: global PAUSE on its output queues).

Throughput windows (``time_s`` is the start of a 1 ms bin): C1 and C2 from
50 ms to the end; C3 [300, 750) ms while N3 is slow and [800 ms, 1 s) after
it recovers. The --quick runs are shorter (C1 100 ms, C2 200 ms, C3 300 ms
with N3 slow during [100, 250] ms; C3's windows are then [150, 250) and
[270, 300) ms).

TCP flows count application goodput (1460 B of payload per 1500 B frame),
UDP flows frame bytes.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..results import Result
from ..stats import mean_text
from . import Metric, Runs, Sensitivity, Study, register

HOTSPOT, PROPAGATION = "hotspot", "pause_propagation"
FILES = {HOTSPOT: "qcn_tcp/hotspot.toml", PROPAGATION: "qcn_tcp/pause_propagation.toml"}

QCN = {"qcn.enabled": True}
UDP = {"defaults.source.transport": "udp"}
VOQ = {"defaults.host.voq": True}
PAUSE = {"defaults.switch.buffer_model": "unlimited", "defaults.switch.pause.mode": "per_input"}
PAUSE_C3 = {**PAUSE, "switches[CENTER].pause.mode": "global", "switches[CENTER].pause.xoff": "130KB",
            "switches[CENTER].pause.xon": "110KB"}
C2 = {"duration": "1s", "hosts[N7].service.end": "1s", "hosts[N7].service.period": "200ms",
      "hosts[N7].service.reduced": "100ms"}

#: scheme -> (overrides, label); C1 and C2 share the schemes (C2 without the shared-adapter one)
HOTSPOT_SCHEMES = {
    "tcp": ({}, "TCP only"),
    "tcp-qcn": (QCN, "TCP + QCN"),
    "tcp-qcn-pause": ({**QCN, **PAUSE}, "TCP + QCN + PAUSE"),
    "qcn-pause": ({**QCN, **PAUSE, **UDP, **VOQ}, "QCN + PAUSE (UDP, per-destination adapter queues)"),
    "qcn-pause-shared": ({**QCN, **PAUSE, **UDP}, "QCN + PAUSE (UDP, one shared adapter path)"),
}
C3_SCHEMES = {
    "tcp": ({}, "TCP only"),
    "tcp-pause": (PAUSE_C3, "TCP + PAUSE"),
    "tcp-qcn-pause": ({**QCN, **PAUSE_C3}, "TCP + QCN + PAUSE"),
}

VARIANTS: dict[str, dict] = {}
BASES: dict[str, str] = {}
LABELS: dict[str, str] = {}
for _scheme, (_overrides, _label) in HOTSPOT_SCHEMES.items():
    VARIANTS[f"c1-{_scheme}"], BASES[f"c1-{_scheme}"], LABELS[f"c1-{_scheme}"] = dict(_overrides), HOTSPOT, _label
for _scheme, (_overrides, _label) in HOTSPOT_SCHEMES.items():
    if _scheme != "qcn-pause-shared":
        VARIANTS[f"c2-{_scheme}"], BASES[f"c2-{_scheme}"] = {**_overrides, **C2}, HOTSPOT
        LABELS[f"c2-{_scheme}"] = _label
for _scheme, (_overrides, _label) in C3_SCHEMES.items():
    VARIANTS[f"c3-{_scheme}"], BASES[f"c3-{_scheme}"], LABELS[f"c3-{_scheme}"] = dict(_overrides), PROPAGATION, _label

C1_VARIANTS = [v for v in VARIANTS if v.startswith("c1-")]
C2_VARIANTS = [v for v in VARIANTS if v.startswith("c2-")]
C3_VARIANTS = [v for v in VARIANTS if v.startswith("c3-")]

#: --quick: every variant, one seed, shortened runs (C2 keeps its 200 ms period: one slow and one fast phase)
C3_QUICK = {"duration": "300ms", "hosts[N3].service.start": "100ms", "hosts[N3].service.end": "250ms"}
QUICK_OVERRIDES = {**{v: {"duration": "100ms"} for v in C1_VARIANTS},
                   **{v: {"duration": "200ms"} for v in C2_VARIANTS},
                   **{v: dict(C3_QUICK) for v in C3_VARIANTS}}
QUICK = list(VARIANTS)

#: the hot destination of C1 and C2, and the start of their measurement window (s)
HOT_NODE = "N7"
SETTLED_FROM = 0.05
#: C2: N7 is slow for the first 100 ms of every 200 ms
PERIOD_S, SLOW_S = 0.2, 0.1
#: C3 (full run, 1 s): N3 slow, the congested window, the recovery window (s)
C3_FULL = {"slow": (0.25, 0.75), "congested": (0.30, 0.75), "recovered": (0.80, 1.00)}
C3_SHORT = {"slow": (0.10, 0.25), "congested": (0.15, 0.25), "recovered": (0.27, 0.30)}
#: TCP goodput per wire bit: 1460 B of payload per 1500 B frame
GOODPUT = 1460 / 1500


# --------------------------------------------------------------------------- measures


def _in(frame: pd.DataFrame, r: Result, start: float, end: float) -> pd.DataFrame:
    half = r.bin_s / 2
    return frame[(frame["time_s"] >= start - half) & (frame["time_s"] < end - half)]


def _aggregate(r: Result, flows) -> pd.Series:
    """Delivered Gb/s of these flows together, per bin (index time_s)."""
    ft = r.flow_throughput
    return ft[ft["flow"].isin(list(flows))].groupby("time_s")["delivered_gbps"].sum()


def victims(r: Result) -> list[str]:
    return r.flows.loc[r.flows["dst"] == HOT_NODE, "name"].tolist()


def innocents(r: Result) -> list[str]:
    return r.flows.loc[r.flows["dst"] != HOT_NODE, "name"].tolist()


def _mean_from(series: pd.Series, r: Result, start: float, mask=None) -> float:
    s = series[series.index >= start - r.bin_s / 2]
    if mask is not None:
        s = s[mask(s.index.to_numpy())]
    return float(s.mean()) if len(s) else float("nan")


def _slow(times: np.ndarray) -> np.ndarray:
    ms = np.rint(times * 1e3).astype(int)
    return ms % round(PERIOD_S * 1e3) < round(SLOW_S * 1e3)


def innocent_gbps(r: Result) -> float:
    return _mean_from(_aggregate(r, innocents(r)), r, SETTLED_FROM)


def victim_gbps(r: Result) -> float:
    return _mean_from(_aggregate(r, victims(r)), r, SETTLED_FROM)


def victim_slow_gbps(r: Result) -> float:
    return _mean_from(_aggregate(r, victims(r)), r, SETTLED_FROM, _slow)


def victim_fast_gbps(r: Result) -> float:
    return _mean_from(_aggregate(r, victims(r)), r, SETTLED_FROM, lambda t: ~_slow(t))


def c3_windows(r: Result) -> dict[str, tuple[float, float]]:
    """C3's windows: the study's for the 1 s run, shorter ones for the 300 ms --quick run."""
    return C3_FULL if r.duration_s >= 1.0 - 1e-9 else C3_SHORT


def _flow_gbps(r: Result, flow: str, window: str) -> float:
    start, end = c3_windows(r)[window]
    ft = r.flow_throughput
    w = _in(ft[ft["flow"] == flow], r, start, end)
    return float(w["delivered_gbps"].mean()) if len(w) else float("nan")


def n2_congested_gbps(r: Result) -> float:
    return _flow_gbps(r, "N2", "congested")


def n1_congested_gbps(r: Result) -> float:
    return _flow_gbps(r, "N1", "congested")


def n1_recovered_gbps(r: Result) -> float:
    return _flow_gbps(r, "N1", "recovered")


# --------------------------------------------------------------------------- tables


def _over_seeds(values: list[float], decimals: int) -> str:
    """Mean over seeds ± the half-width of its 95% confidence interval, and the range."""
    values = [v for v in values if not np.isnan(v)]
    fmt = f"{{:,.{decimals}f}}"
    text = mean_text(values, fmt)
    if values and fmt.format(min(values)) != fmt.format(max(values)):
        text += f" ({fmt.format(min(values))}–{fmt.format(max(values))})"
    return text


def _transport(rs) -> str:
    return "/".join(sorted(set(rs[0].flows["transport"]))) if rs else "—"


def hotspot_table(runs: Runs) -> pd.DataFrame:
    rows = []
    for variant in C1_VARIANTS + C2_VARIANTS:
        rs = runs.get(variant) or []
        if not rs:
            continue
        c2 = variant.startswith("c2-")
        rows.append({
            "scenario": "C2 periodic" if c2 else "C1 constant",
            "variant": variant,
            "scheme": LABELS[variant],
            "innocent (ideal 24)": _over_seeds([innocent_gbps(r) for r in rs], 2),
            "victim (ideal 0.5 / mean 1.75)": _over_seeds([victim_gbps(r) for r in rs], 3),
            "victim, slow phases (0.5)": _over_seeds([victim_slow_gbps(r) for r in rs], 3) if c2 else "",
            "victim, fast phases (3)": _over_seeds([victim_fast_gbps(r) for r in rs], 3) if c2 else "",
        })
    return pd.DataFrame(rows)


def propagation_table(runs: Runs) -> pd.DataFrame:
    rows = []
    for variant in C3_VARIANTS:
        rs = runs.get(variant) or []
        if not rs:
            continue
        w = c3_windows(rs[0])
        ms = {k: f"[{a * 1e3:.0f}, {b * 1e3:.0f}) ms" for k, (a, b) in w.items()}
        rows.append({
            "variant": variant,
            "scheme": LABELS[variant],
            f"N2 (innocent), {ms['congested']}": _over_seeds([n2_congested_gbps(r) for r in rs], 2),
            f"N1, {ms['congested']}": _over_seeds([n1_congested_gbps(r) for r in rs], 3),
            f"N1, {ms['recovered']}": _over_seeds([n1_recovered_gbps(r) for r in rs], 2),
        })
    return pd.DataFrame(rows)


def _sum_flows(column: str):
    return lambda r: float(r.flows[column].sum()) if column in r.flows else float("nan")


def _sum_queues(column: str, scale: float = 1.0):
    return lambda r: float(r.queues[column].sum()) * scale


COUNTERS = (
    ("frames dropped (switches)", _sum_queues("drops_frames"), 0),
    ("TCP segments dropped", _sum_flows("segments_dropped"), 0),
    ("TCP ACKs dropped", _sum_flows("acks_dropped"), 0),
    ("retransmissions", _sum_flows("retransmissions"), 0),
    ("fast retransmits", _sum_flows("fast_retransmits"), 0),
    ("timeouts", _sum_flows("timeouts"), 0),
    ("XOFF sent", _sum_queues("xoff_sent"), 0),
    ("paused port time (ms)", _sum_queues("paused_time_s", 1e3), 0),
    ("CNMs sent", lambda r: float(r.totals.get("notifications_sent", 0)), 0),
)


def counters_table(runs: Runs) -> pd.DataFrame:
    rows = []
    for variant in VARIANTS:
        rs = runs.get(variant) or []
        if rs:
            rows.append({"variant": variant, "transport": _transport(rs),
                         **{label: _over_seeds([f(r) for r in rs], d) for label, f, d in COUNTERS}})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- figures


def _smooth(series: pd.Series, bins: int = 5) -> pd.Series:
    """Means over consecutive groups of `bins` bins, indexed by the group's start."""
    if not len(series):
        return series
    groups = np.arange(len(series)) // bins
    means = series.groupby(groups).mean()
    means.index = series.index.to_numpy()[::bins][: len(means)]
    return means


def _hotspot_figure(runs: Runs, chosen: list[str], ideal_victim: list[tuple[str, float]], periodic: bool):
    fig, axes = plt.subplots(2, 1, figsize=(12, 7), sharex=True, constrained_layout=True)
    for variant in chosen:
        rs = runs.get(variant) or []
        if not rs:
            continue
        r = rs[0]
        for ax, flows in ((axes[0], innocents(r)), (axes[1], victims(r))):
            s = _smooth(_aggregate(r, flows))
            ax.plot(s.index * 1e3, s.values, lw=0.9, label=f"{variant}: {LABELS[variant]}")
    axes[0].axhline(24, color="k", ls="--", lw=0.9, label="ideal 24 Gb/s")
    for label, value in ideal_victim:
        axes[1].axhline(value, color="k", ls="--", lw=0.9, label=label)
    if periodic:
        end = max((rs[0].duration_s for v, rs in runs.items() if v in chosen and rs), default=0.0)
        for ax in axes:
            for start in np.arange(0.0, end, PERIOD_S):
                ax.axvspan(start * 1e3, (start + SLOW_S) * 1e3, color="tab:red", alpha=0.06, lw=0)
    axes[0].set_ylabel("innocent aggregate (Gb/s)")
    axes[1].set_ylabel("victim aggregate, to N7 (Gb/s)")
    axes[1].set_xlabel("time (ms); 5 ms means, first seed" + ("; shaded: N7 at 500 Mb/s" if periodic else ""))
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def c1_figure(runs: Runs):
    return _hotspot_figure(runs, C1_VARIANTS, [("ideal 0.5 Gb/s", 0.5)], periodic=False)


def c2_figure(runs: Runs):
    return _hotspot_figure(runs, C2_VARIANTS, [("ideal 0.5 / 3 Gb/s", 0.5), ("_nolegend_", 3.0),
                                                 ("ideal mean 1.75 Gb/s", 1.75)], periodic=True)


def c3_figure(runs: Runs):
    chosen = [v for v in C3_VARIANTS if runs.get(v)]
    fig, axes = plt.subplots(max(len(chosen), 1), 2, figsize=(12, 2.9 * max(len(chosen), 1) + 0.6), sharex=True,
                             squeeze=False, constrained_layout=True)
    for row, variant in enumerate(chosen):
        r = runs[variant][0]
        lt, q = r.link_throughput, r.queue_occupancy
        for queue, label in (("SW1->CENTER", "Switch 1 (N1 -> N3)"), ("SW2->CENTER", "Switch 2 (N2 -> N4)")):
            s = lt[lt["queue"] == queue]
            axes[row, 0].plot(s["time_s"] * 1e3, s["gbps"], lw=0.9, label=label)
        for queue, label in (("SW1->CENTER", "Switch 1"), ("SW2->CENTER", "Switch 2"), ("CENTER->N3", "Center -> N3")):
            s = q[q["queue"] == queue]
            axes[row, 1].plot(s["time_s"] * 1e3, s["mean_bytes"] / 1e3, lw=0.9, label=label)
        start, end = c3_windows(r)["slow"]
        for ax in axes[row]:
            ax.axvspan(start * 1e3, end * 1e3, color="tab:red", alpha=0.06, lw=0)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7, loc="upper right")
        axes[row, 0].set_ylabel(f"{variant}\nnet throughput (Gb/s)")
        axes[row, 0].set_ylim(0, 10.8)
        axes[row, 1].set_ylabel("queue (KB)")
    for ax in axes[-1]:
        ax.set_xlabel("time (ms); shaded: N3 at 1 Gb/s")
    return fig


def cwnd_figure(runs: Runs):
    variant = "c3-tcp-qcn-pause"
    fig, axes = plt.subplots(2, 1, figsize=(11, 6), sharex=True, constrained_layout=True)
    rs = runs.get(variant) or []
    if rs:
        r = rs[0]
        t = r.transport[r.transport["flow"] == "N1"]
        axes[0].plot(t["time_s"] * 1e3, t["cwnd_bytes"] / 1e3, lw=0.9, color="tab:blue", label="cwnd")
        axes[0].set_yscale("log")
        retx = t["retransmissions"].diff().fillna(t["retransmissions"]).to_numpy() > 0
        if retx.any():
            axes[0].plot(t["time_s"][retx] * 1e3, t["cwnd_bytes"][retx] / 1e3, "rx", ms=4, label="retransmission")
        rl = r.rate_limiters[r.rate_limiters["flow"] == "N1"]
        axes[1].plot(rl["time_s"] * 1e3, rl["rate_gbps"], lw=0.9, label="CR (current rate)")
        target = rl["target_gbps"].where(rl["target_gbps"] > 0)
        axes[1].plot(rl["time_s"] * 1e3, target, lw=0.9, ls="--", label="TR (target rate)")
        ft = r.flow_throughput[r.flow_throughput["flow"] == "N1"]
        axes[1].plot(ft["time_s"] * 1e3, ft["delivered_gbps"], lw=0.7, color="0.5", alpha=0.8,
                     label="N1 delivered (goodput)")
        start, end = c3_windows(r)["slow"]
        for ax in axes:
            ax.axvspan(start * 1e3, end * 1e3, color="tab:red", alpha=0.06, lw=0)
    axes[0].set_ylabel("N1 congestion window (KB, log)")
    axes[1].set_ylabel("N1 rate limiter (Gb/s)")
    axes[1].set_xlabel("time (ms), first seed; shaded: N3 at 1 Gb/s; TR shown once a limiter is installed")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    return fig


# --------------------------------------------------------------------------- statements
# What the report says about the runs, with every number taken from them;
# None when a variant it needs was not run.


def _avg(runs: Runs, variant: str, measure, decimals: int) -> str | None:
    rs = runs.get(variant) or []
    return _over_seeds([measure(r) for r in rs], decimals) if rs else None


def _queue_drops(queue: str):
    return lambda r: float(r.queues.loc[r.queues["name"] == queue, "drops_frames"].sum())


def _other_drops(queue: str):
    return lambda r: float(r.queues.loc[r.queues["name"] != queue, "drops_frames"].sum())


def _all(*values: str | None) -> bool:
    return all(v is not None for v in values)


def _seeds_statement(runs: Runs) -> str | None:
    n = max((len(rs) for rs in runs.values()), default=0)
    if not n:
        return None
    return (f"The study published its results in words and ideal values only; the values in the first table are "
            f"those ideals. Ours are means over {n} seed{'s' if n != 1 else ''} (± the 95% confidence interval, range in brackets), from "
            f"{SETTLED_FROM * 1e3:.0f} ms to the end of the run for C1 and C2. TCP throughput is application "
            f"goodput, so a TCP flow saturating a link shows {GOODPUT:.1%} of its rate ({0.5 * GOODPUT:.3f} of "
            f"N7's 0.5 Gb/s, {10 * GOODPUT:.2f} of 10 Gb/s); UDP throughput counts frame bytes.")


def _c1_statement(runs: Runs) -> str | None:
    inn = {s: _avg(runs, f"c1-{s}", innocent_gbps, 2) for s in ("tcp", "tcp-qcn", "tcp-qcn-pause", "qcn-pause")}
    vic = {s: _avg(runs, f"c1-{s}", victim_gbps, 3) for s in ("tcp", "tcp-qcn", "tcp-qcn-pause", "qcn-pause")}
    drops = {s: _avg(runs, f"c1-{s}", _sum_queues("drops_frames"), 0) for s in ("tcp", "tcp-qcn", "tcp-qcn-pause")}
    if not _all(*inn.values(), *vic.values(), *drops.values()):
        return None
    hot = _avg(runs, "c1-tcp-qcn", _queue_drops("SW2->N7"), 0)
    return (f"C1: innocent aggregate TCP only {inn['tcp']}, TCP + QCN {inn['tcp-qcn']}, TCP + QCN + PAUSE "
            f"{inn['tcp-qcn-pause']} Gb/s (ideal 24); victims {vic['tcp']}, {vic['tcp-qcn']} and "
            f"{vic['tcp-qcn-pause']} Gb/s of goodput (N7 drains 0.5). The schemes differ mostly in losses: frames "
            f"dropped per run {drops['tcp']} (TCP only; retransmissions "
            f"{_avg(runs, 'c1-tcp', _sum_flows('retransmissions'), 0)}, timeouts "
            f"{_avg(runs, 'c1-tcp', _sum_flows('timeouts'), 0)}), {drops['tcp-qcn']} with QCN ({hot} of them at "
            f"SW2->N7), {drops['tcp-qcn-pause']} with PAUSE. QCN + PAUSE over UDP with per-destination adapter "
            f"queues: innocent {inn['qcn-pause']}, victim {vic['qcn-pause']}.")


def _c1_shared_statement(runs: Runs) -> str | None:
    shared = _avg(runs, "c1-qcn-pause-shared", innocent_gbps, 2)
    if shared is None:
        return None
    return (f"C1, UDP with one shared adapter path (c1-qcn-pause-shared, not a scheme of the study): a source whose "
            f"hot flow's limiter queue is full waits, and with it all its other destinations. The innocent "
            f"aggregate falls to {shared} Gb/s: head-of-line blocking at the source. The study's QCN + PAUSE "
            f"result needs per-destination queues at the adapter (c1-qcn-pause).")


def _c2_statement(runs: Runs) -> str | None:
    inn = {s: _avg(runs, f"c2-{s}", innocent_gbps, 2) for s in ("tcp", "tcp-qcn", "tcp-qcn-pause")}
    if not _all(*inn.values()):
        return None
    return (f"C2: innocent aggregate TCP only {inn['tcp']}, TCP + QCN {inn['tcp-qcn']}, TCP + QCN + PAUSE "
            f"{inn['tcp-qcn-pause']} Gb/s. Without QCN, when N7 speeds up the victims' backlog leaves at up to "
            f"10 Gb/s: frames dropped per run {_avg(runs, 'c2-tcp', _sum_queues('drops_frames'), 0)}, of which "
            f"{_avg(runs, 'c2-tcp', _other_drops('SW2->N7'), 0)} away from SW2->N7, with "
            f"{_avg(runs, 'c2-tcp', _sum_flows('timeouts'), 0)} timeouts. With QCN "
            f"{_avg(runs, 'c2-tcp-qcn', _sum_queues('drops_frames'), 0)} (away from SW2->N7: "
            f"{_avg(runs, 'c2-tcp-qcn', _other_drops('SW2->N7'), 0)}); with PAUSE "
            f"{_avg(runs, 'c2-tcp-qcn-pause', _sum_queues('drops_frames'), 0)}.")


def _c2_victim_statement(runs: Runs) -> str | None:
    schemes = ("tcp", "tcp-qcn", "tcp-qcn-pause", "qcn-pause")
    mean = {s: _avg(runs, f"c2-{s}", victim_gbps, 2) for s in schemes}
    fast = {s: _avg(runs, f"c2-{s}", victim_fast_gbps, 2) for s in schemes}
    slow = {s: _avg(runs, f"c2-{s}", victim_slow_gbps, 3) for s in schemes}
    if not _all(*mean.values(), *fast.values(), *slow.values()):
        return None
    names = {"tcp": "TCP only", "tcp-qcn": "TCP + QCN", "tcp-qcn-pause": "TCP + QCN + PAUSE",
             "qcn-pause": "QCN + PAUSE"}
    each = "; ".join(f"{names[s]} {mean[s]} (slow {slow[s]}, fast {fast[s]})" for s in schemes)
    return (f"C2, the victims, two readings. The study's ideal mean of 1.75 Gb/s (0.5 while N7 is slow, 3 while "
            f"it is fast) assumes that what is offered during a slow phase and not delivered is lost. cnsim's "
            f"sources never discard offered data (TCP send buffers and per-destination queues hold it), so the "
            f"backlog of a slow phase is delivered in the next fast phase and the fast phases exceed 3 Gb/s. "
            f"Victim goodput, mean over the run and per phase (Gb/s): {each}. The slow-phase figures are the "
            f"reading comparable with the ideal 0.5; the fast phases carry the study's 3 Gb/s plus the backlog.")


def _c2_slow_statement(runs: Runs) -> str | None:
    qcn = _avg(runs, "c2-tcp-qcn", victim_slow_gbps, 3)
    pause = _avg(runs, "c2-tcp-qcn-pause", victim_slow_gbps, 3)
    if not _all(qcn, pause):
        return None
    return (f"C2, slow phases: victim goodput {qcn} Gb/s with TCP + QCN, {pause} with PAUSE (no drops). Goodput "
            f"is counted when data arrive in order: with drops at SW2->N7 "
            f"({_avg(runs, 'c2-tcp-qcn', _queue_drops('SW2->N7'), 0)} a run with QCN) and "
            f"{_avg(runs, 'c2-tcp-qcn', _sum_flows('timeouts'), 0)} retransmission timeouts a run (minimum RTO "
            f"200 ms), data behind a lost segment is credited only once the loss is repaired, which can fall into "
            f"the next fast phase.")


def _c3_statement(runs: Runs) -> str | None:
    v = {s: (_avg(runs, f"c3-{s}", n2_congested_gbps, 2), _avg(runs, f"c3-{s}", n1_congested_gbps, 3))
         for s in ("tcp", "tcp-pause", "tcp-qcn-pause")}
    if not _all(*(x for pair in v.values() for x in pair)):
        return None
    rs = runs["c3-tcp"]
    window = "[{:.0f}, {:.0f}) ms".format(*(x * 1e3 for x in c3_windows(rs[0])["congested"]))
    return (f"C3, while N3 is slow ({window}): TCP alone (drop tail) N2 {v['tcp'][0]} Gb/s, N1 {v['tcp'][1]}, "
            f"with {_avg(runs, 'c3-tcp', _sum_queues('drops_frames'), 0)} drops; TCP + PAUSE N2 "
            f"{v['tcp-pause'][0]}, N1 {v['tcp-pause'][1]} (the Center switch pauses both inputs: "
            f"{_avg(runs, 'c3-tcp-pause', _sum_queues('xoff_sent'), 0)} XOFFs, "
            f"{_avg(runs, 'c3-tcp-pause', _sum_queues('drops_frames'), 0)} drops); TCP + QCN + PAUSE N2 "
            f"{v['tcp-qcn-pause'][0]}, N1 {v['tcp-qcn-pause'][1]} "
            f"({_avg(runs, 'c3-tcp-qcn-pause', _sum_queues('xoff_sent'), 0)} XOFFs): QCN keeps the innocent flow "
            f"at its rate, as published.")


def _line_rate_again_ms(r: Result) -> float:
    """When N1's limiter is back at the line rate after N3 recovers (ms; nan if never).
    A flow that never had a limiter has no rows in ``rate_limiters``: it was at the line
    rate throughout, so from the first bin after N3 recovers."""
    end_slow = c3_windows(r)["slow"][1]
    rl = r.rate_limiters[(r.rate_limiters["flow"] == "N1") & (r.rate_limiters["time_s"] >= end_slow)]
    if not (r.rate_limiters["flow"] == "N1").any():
        rl = r.flow_throughput[(r.flow_throughput["flow"] == "N1") & (r.flow_throughput["time_s"] >= end_slow)]
        return float(rl["time_s"].iloc[0] * 1e3) if len(rl) else float("nan")
    back = rl[rl["rate_gbps"] >= 10 * 0.999]
    return float(back["time_s"].iloc[0] * 1e3) if len(back) else float("nan")


def _c3_recovery_statement(runs: Runs) -> str | None:
    qcn = _avg(runs, "c3-tcp-qcn-pause", n1_recovered_gbps, 2)
    pause = _avg(runs, "c3-tcp-pause", n1_recovered_gbps, 2)
    if not _all(qcn, pause):
        return None
    r = runs["c3-tcp-qcn-pause"][0]
    start, end = c3_windows(r)["recovered"]
    back = _avg(runs, "c3-tcp-qcn-pause", _line_rate_again_ms, 0)
    when = (f"is at the line rate again at {back} ms" if back != "—"
            else "does not reach the line rate again before the run ends")
    return (f"C3, after N3 recovers ({c3_windows(r)['slow'][1] * 1e3:.0f} ms), N1's QCN limiter climbs back "
            f"slowly: its current rate {when}, so N1 averages {qcn} Gb/s over "
            f"[{start * 1e3:.0f}, {end * 1e3:.0f}) ms under TCP + QCN + PAUSE, against {pause} without QCN.")


def _cwnd_statement(runs: Runs) -> str | None:
    rs = runs.get("c3-tcp-qcn-pause") or []
    if not rs:
        return None
    t = rs[0].transport
    peak = t.loc[t["flow"] == "N1", "cwnd_bytes"].max() / 1e3
    lost = _avg(runs, "c3-tcp-qcn-pause", _sum_flows("segments_dropped"), 0)
    return (f"TCP adapts to the rate limiter: with PAUSE {lost} segments are lost, and N1's sending rate follows "
            f"the limiter because the limiter's queue and the adapter block the sender. Its window grows only "
            f"while it limits the sender (cwnd validation), so it stays bounded (at most {peak:,.0f} KB in the "
            f"first seed) instead of growing without bound.")


# --------------------------------------------------------------------------- metrics


def _metric(label, variant, measure, published, note, decimals) -> Metric:
    return Metric(label, variant, measure, published=published, note=note, unit="Gb/s", decimals=decimals)


def _victim_note(variant: str) -> str:
    if VARIANTS[variant].get("defaults.source.transport") == "udp":
        return "ideal: N7's drain; UDP counts frame bytes"
    return f"ideal: N7's drain; TCP goodput at most {0.5 * GOODPUT:.3f}"


METRICS = (
    *(m for v in C1_VARIANTS for m in (
        _metric("C1 innocent aggregate, [50 ms, end)", v, innocent_gbps, 24.0, "ideal: the innocent demand", 2),
        _metric("C1 victim aggregate, [50 ms, end)", v, victim_gbps, 0.5, _victim_note(v), 3),
    )),
    *(m for v in C2_VARIANTS for m in (
        _metric("C2 innocent aggregate, [50 ms, end)", v, innocent_gbps, 24.0, "ideal: the innocent demand", 2),
        _metric("C2 victim aggregate, [50 ms, end)", v, victim_gbps, 1.75, "ideal mean of 0.5 and 3", 3),
        _metric("C2 victim, slow phases", v, victim_slow_gbps, 0.5, _victim_note(v), 3),
        _metric("C2 victim, fast phases", v, victim_fast_gbps, 3.0, "ideal: the victim demand", 3),
    )),
    *(m for v in C3_VARIANTS for m in (
        _metric("C3 N2 (innocent), while N3 is slow", v, n2_congested_gbps, 10.0,
                f"ideal: line rate; TCP goodput at most {10 * GOODPUT:.2f}; window in the C3 table", 2),
        _metric("C3 N1, while N3 is slow", v, n1_congested_gbps, 1.0,
                f"ideal: N3's 1 Gb/s drain; TCP goodput at most {GOODPUT:.3f}; window in the C3 table", 3),
        _metric("C3 N1 after N3 recovers", v, n1_recovered_gbps, 10.0,
                f"ideal: line rate; TCP goodput at most {10 * GOODPUT:.2f}; window in the C3 table", 2),
    )),
)

register(
    Study(
        name="qcn_tcp",
        title="Study C — QCN and PAUSE under TCP NewReno",
        source="B. Atikoglu and B. Prabhakar (Stanford), \"Effects of Pause and QCN on TCP Sources: NewReno\", "
               "IEEE 802.1Qau, 24 Apr 2008",
        variants=FILES,
        sweep_variants=VARIANTS,
        sweep_bases=BASES,
        quick_sweep_variants=QUICK,
        quick_variant_overrides=QUICK_OVERRIDES,
        seeds=3,
        quick_seeds=1,
        quick_overrides={},
        metrics=METRICS,
        views=(),
        drops_figure=False,
        findings=(
            "C1 and C2 (hotspot at N7): the schemes are judged by the aggregate throughput of innocent flows "
            "(ideal 24 Gb/s) and of victim flows to N7 (ideal 0.5 Gb/s while N7 is slow, 3 Gb/s otherwise, "
            "1.75 Gb/s on average in C2).",
            "C3: with PAUSE, TCP alone cannot see the ultimate bottleneck (N3's slow link): the Center switch "
            "pauses both of its inputs and the innocent N2 -> N4 flow suffers with N1 -> N3.",
            "C3: QCN moves the bottleneck to the rate limiter at N1's edge, to which TCP then adapts; the "
            "innocent flow keeps its throughput.",
        ),
        differences=(
            _seeds_statement,
            _c1_statement,
            _c1_shared_statement,
            _c2_statement,
            _c2_victim_statement,
            _c2_slow_statement,
            _c3_statement,
            _c3_recovery_statement,
            _cwnd_statement,
            "The topologies (edge and core switches, per-hop delays set to the study's 16 and 24 µs loop "
            "latencies), the global PAUSE trigger at the Center switch, the measurement windows and the run "
            "lengths are our reconstruction (see the scenario files' notes below).",
        ),
        sensitivities=(
            Sensitivity(
                "TCP's minimum retransmission timeout", "tcp.min_rto", ("10ms", "200ms", "1s"), "200ms",
                "The study does not give it; 200 ms is the common practice of ns-2 and Linux (RFC 6298 says 1 s).",
                "c2-tcp-qcn", (("victim mean (Gb/s)", victim_gbps, 1.75),
                               ("victim, slow phases (Gb/s)", victim_slow_gbps, 0.5))),
            Sensitivity(
                "Rounding of QCN's quantized feedback", "qcn.quantize", ("floor", "round"), "floor",
                "The standard's text does not fix it; floor never overstates the congestion.",
                "c2-tcp-qcn", (("victim mean (Gb/s)", victim_gbps, 1.75),
                               ("victim, slow phases (Gb/s)", victim_slow_gbps, 0.5))),
            Sensitivity(
                "CNMs expedited past queued data", "qcn.expedite", (False, True), False,
                "The study says nothing; CNMs are frames, queued like data.",
                "c2-tcp-qcn", (("victim, slow phases (Gb/s)", victim_slow_gbps, 0.5),
                               ("innocent aggregate (Gb/s)", innocent_gbps, 24.0),
                               ("frames dropped", _sum_queues("drops_frames"), None))),
        ),
        extra_tables=(
            ("C1 and C2: aggregate innocent and victim throughput (Gb/s, mean over seeds ± 95% CI, range in brackets). "
             "TCP flows count application goodput (1460 B per 1500 B frame: a saturated 10 Gb/s link shows "
             "9.73 Gb/s), UDP flows frame bytes", hotspot_table),
            ("C3: flows N2 (innocent) and N1 (Gb/s, TCP goodput, mean over seeds ± 95% CI)", propagation_table),
            ("Drops, retransmissions, timeouts, PAUSE and CNMs per variant (mean over seeds ± 95% CI, range in brackets). "
             "Frames dropped are the switch queues' counters; the Runs table's dropped_frames stays 0 for TCP "
             "flows, whose lost segments are retransmitted. Paused port time is summed over all ports",
             counters_table),
        ),
        extra_figures=(
            ("C1: aggregate innocent and victim throughput per scheme", c1_figure),
            ("C2: aggregate innocent and victim throughput per scheme (N7 slow for 100 ms of every 200 ms)",
             c2_figure),
            ("C3: net throughput at Switch 1 and 2 (left) and queue lengths at Switch 1, Switch 2 and Center "
             "(right), per scheme", c3_figure),
            ("C3, TCP + QCN + PAUSE: N1's TCP congestion window and its QCN rate limiter (CR, TR)", cwnd_figure),
        ),
    )
)
