"""Study F, `fct_fabric`: flow completion times on the HPCC paper's 320-host fabric (Li et al., SIGCOMM 2019).

docs/studies.md#study-f-fct_fabric. One scenario file (the fabric of the HPCC
simulator's mix/fat.txt with DCQCN, web search and incast workloads); the
variants switch the congestion control (DCQCN, DCTCP, PFC alone) and leave
the incasts in or out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import fct, plots
from ..results import Result
from . import Metric, Runs, Study, register

#: DCTCP as that repository's run.py sets it at 100 Gb/s hosts: step marking at 30 KB per 10 Gb/s of the
#: port's rate (300 KB at 100 Gb/s, 1200 KB at 400 Gb/s) and g = 1/16; cnsim runs it on TCP (1000 B
#: segments in the same 1048 B frames, an ACK per segment like the RoCE variants, an initial window of
#: 10 segments as Linux's).
DCTCP = {
    "dcqcn.enabled": False,
    "workloads[web].transport": "tcp",
    "workloads[incast].transport": "tcp",
    "tcp.ecn": "dctcp",
    "tcp.dctcp_g": 0.0625,
    "tcp.header": "48B",
    "tcp.initial_window": 10,
    "tcp.delayed_ack": False,
    "defaults.switch.ecn": {"rule": "step", "k": "300KB", "at": "dequeue",
                            "rates": [{"rate": "400Gbps", "k": "1200KB"}]},
}
SCHEMES = {"dcqcn": {}, "dctcp": DCTCP, "pfc": {"dcqcn.enabled": False}}
#: The paper's other schemes, and Swift, which cnsim does not model yet. Each takes its place in SCHEMES
#: (its overrides) when it does, and every table and figure of the study picks its variants up.
PLANNED = {
    "hpcc": "HPCC (a window from in-band telemetry of every hop's queue and rate)",
    "timely": "TIMELY (a rate from the gradient of measured round-trip times)",
    "swift": "Swift (a window held at a target delay)",
}
TRAFFIC = {"web": {"workloads[incast].enabled": False}, "incast": {}}
VARIANTS = {f"{scheme}-{traffic}": {**s, **t} for traffic, t in TRAFFIC.items() for scheme, s in SCHEMES.items()}
#: --quick: 0.5 ms of arrivals instead of 100 ms
QUICK_OVERRIDES = {"workloads[web].stop": "500us", "workloads[incast].stop": "500us"}

#: Switch tiers of mix/fat.txt by node id: ToR 320-339, aggregation 340-359, core 360-375.
TIERS = (("ToR", 320, 340), ("aggregation", 340, 360), ("core", 360, 376))


def _tier(node: str) -> str:
    if node.startswith("h"):
        return "host"
    n = int(node[1:])
    return next(name for name, lo, hi in TIERS if lo <= n < hi)


def _stat(r: Result, group: str, key: str) -> float:
    v = (r.summary.get("fct") or {}).get(group, {}).get(key)
    return float("nan") if v is None else float(v)


def _metric(variant: str, group: str, key: str, label: str) -> Metric:
    return Metric(label=label, variant=variant, measure=lambda r: _stat(r, group, key), published=None,
                  note="the paper publishes this as a figure", decimals=2)


METRICS = tuple(
    m
    for v in VARIANTS
    for m in (
        _metric(v, "overall", "slowdown_median", "median FCT slowdown, all flows"),
        _metric(v, "short", "slowdown_p99", "99th percentile slowdown, flows below 100 KB"),
        _metric(v, "long", "slowdown_median", "median slowdown, flows of 10 MB and more"),
    )
)


def _first(runs: Runs) -> dict[str, Result]:
    return {name: rs[0] for name, rs in runs.items() if rs}


def summary_table(runs: Runs) -> pd.DataFrame:
    rows = []
    for name, r in sorted(_first(runs).items()):
        s = r.summary.get("fct") or {}
        rows.append({
            "variant": name,
            "flows": s.get("flows", 0),
            "unfinished": s.get("unfinished", 0),
            "median": _stat(r, "overall", "slowdown_median"),
            "p95": _stat(r, "overall", "slowdown_p95"),
            "p99": _stat(r, "overall", "slowdown_p99"),
            "short p99": _stat(r, "short", "slowdown_p99"),
            "long median": _stat(r, "long", "slowdown_median"),
            "frames dropped": int((r.summary.get("totals") or {}).get("dropped_frames", 0)),
            "last flow done (ms)": (r.summary.get("flows_finished_s") or float("nan")) * 1e3,
        })
    return pd.DataFrame(rows).round(2)


def bins_table(runs: Runs) -> pd.DataFrame:
    """Median and 99th percentile slowdown per flow-size bin, a pair of columns per variant."""
    out = None
    for name, r in sorted(_first(runs).items()):
        b = r.fct_bins
        if b.empty:
            continue
        cols = b[["percentile_high", "size_max_bytes", "slowdown_median", "slowdown_p99"]].rename(
            columns={"slowdown_median": f"{name} median", "slowdown_p99": f"{name} p99"})
        if out is None:
            out = cols.rename(columns={"percentile_high": "up to percentile", "size_max_bytes": "largest (B)"})
        else:
            out = out.join(cols[[f"{name} median", f"{name} p99"]])
    return (out if out is not None else pd.DataFrame()).round(2)


def pause_table(runs: Runs) -> pd.DataFrame:
    """PFC: time transmitters were held, summed over the (port, class) pairs of each tier of switches
    (the port's own node: a ToR's uplink held by its aggregation switch counts for the ToR)."""
    rows = []
    for name, r in sorted(_first(runs).items()):
        c = r.classes
        node = c["queue"].str.split("->").str[0]
        paused = c.groupby(node.map(_tier))["paused_time_s"].sum() * 1e3
        row = {"variant": name, "PFC frames sent": int((r.summary.get("pfc") or {}).get("frames_sent", 0))}
        for tier in ("host", "ToR", "aggregation", "core"):
            row[f"{tier} ports held (ms, summed)"] = float(paused.get(tier, 0.0))
        rows.append(row)
    return pd.DataFrame(rows).round(3)


def buffer_table(runs: Runs) -> pd.DataFrame:
    """Peak shared-buffer use per tier (the fullest switch of the tier)."""
    rows = []
    for name, r in sorted(_first(runs).items()):
        row = {"variant": name}
        for b in r.summary.get("buffers") or ():
            key = f"{_tier(b['switch'])} peak shared (MB)"
            row[key] = max(row.get(key, 0.0), b["max_shared_used_bytes"] / 1e6)
            hkey = f"{_tier(b['switch'])} peak headroom (KB)"
            row[hkey] = max(row.get(hkey, 0.0), b["max_headroom_used_bytes"] / 1e3)
        rows.append(row)
    return pd.DataFrame(rows).round(2)


def cost_table(runs: Runs) -> pd.DataFrame:
    """What each run cost this machine."""
    rows = []
    for name, r in sorted(_first(runs).items()):
        s = r.summary
        rows.append({"variant": name, "wall time (s)": s.get("wall_time_s"),
                     "simulated (ms)": (s.get("flows_finished_s") or s.get("duration_s", np.nan)) * 1e3,
                     "events (M)": s.get("events", 0) / 1e6, "frame-hops (M)": s.get("frame_hops", 0) / 1e6,
                     "M frame-hops/s": s.get("frame_hops_per_s", 0) / 1e6,
                     "peak memory (MB)": (s.get("peak_memory_bytes") or 0) / 1e6})
    return pd.DataFrame(rows).round(2)


def _slowdown_figure(traffic: str):
    def draw(runs: Runs):
        chosen = {n: r for n, r in _first(runs).items() if n.endswith(f"-{traffic}") and not r.fct_bins.empty}
        names = sorted(chosen)
        return plots.figure([chosen[n] for n in names], "fct_slowdown", labels=[n.split("-")[0] for n in names])
    return draw


def _cdf_figure(runs: Runs):
    first = _first(runs)
    names = sorted(first)
    return plots.figure([first[n] for n in names], "fct_cdf", labels=names)


def _finished_statement(runs: Runs) -> str | None:
    first = _first(runs)
    if not first:
        return None
    parts = []
    for name, r in sorted(first.items()):
        s = r.summary.get("fct") or {}
        parts.append(f"{name}: {s.get('finished', 0):,} of {s.get('flows', 0):,} flows finished"
                     + (f" by {r.summary['flows_finished_s'] * 1e3:.1f} ms" if r.summary.get("flows_finished_s")
                        else ""))
    return "Every run lasts until its last flow has finished (limit 1 s). " + "; ".join(parts) + "."


register(
    Study(
        name="fct_fabric",
        title="Study F — flow completion times on a 320-host lossless fabric",
        source="Li et al., \"HPCC: High Precision Congestion Control\", SIGCOMM 2019, Fig. 11 (the setting of its "
               "FCT experiment), with the fabric and settings of its simulator (alibaba-edu/"
               "High-Precision-Congestion-Control: mix/fat.txt, run.py)",
        variants={"base": "fct_fabric/fabric.toml"},
        sweep_variants=VARIANTS,
        quick_sweep_variants=tuple(VARIANTS),
        # the three longest runs (docs/performance.md, "Study F"): started last, one of them kept a
        # core busy alone for minutes at the end of the study
        run_first=("pfc-incast", "dcqcn-incast", "pfc-web"),
        seeds=1,
        quick_seeds=1,
        quick_overrides=QUICK_OVERRIDES,
        metrics=METRICS,
        views=(),
        drops_figure=False,
        findings=(
            "FCT slowdown by flow size: short flows suffer from queueing behind long ones, long flows from "
            "sharing bandwidth; the tail (99th percentile) of short flows is where schemes differ most.",
            "Adding incasts worsens the tail of every scheme; with DCQCN the incasts' PFC pauses spread to "
            "flows that do not go to the incast's receiver.",
            "The paper shows these results as figures; no numbers are transcribed here, so each metric is "
            "reported without a published value.",
        ),
        differences=(
            _finished_statement,
            "The paper's figure also has HPCC and TIMELY; cnsim has no model of them, nor of Swift, yet: "
            + "; ".join(PLANNED.values()) + ". Their variants join this study when they exist.",
            "FCT is measured at the receiver (the last byte delivered), and the ideal FCT is the flow alone on "
            "its own path with every frame's header, store and forward (docs/model.md); the HPCC simulator "
            "stops the clock at the sender's last ACK and its ideal adds a base round trip, so its slowdowns of "
            "small flows are lower than ours for the same network behaviour.",
            "DCTCP runs on cnsim's TCP (a window, ACK per segment), not the HPCC simulator's rate-based NIC "
            "version; its switches mark at 300 KB (100 Gb/s) and 1200 KB (400 Gb/s) as that repository's run.py "
            "sets them.",
            "Incasts are a Poisson process whose bytes are 2% of the hosts' summed capacity (60 senders x 500 KB "
            "per event, receiver drawn per event); web search flows use the distribution that repository's "
            "traffic generator uses, at 30% of each host's link, for 100 ms of arrivals.",
            "The switches' PFC threshold is one alpha (1/8) per switch; the HPCC simulator raises it on ports "
            "faster than the hosts' (the 400 Gb/s ones).",
        ),
        extra_tables=(
            ("FCT slowdown per variant", summary_table),
            ("Slowdown by flow-size percentile (median and 99th percentile)", bins_table),
            ("PFC pause time per tier", pause_table),
            ("Shared buffer: peak use per tier", buffer_table),
            ("Run cost on this machine", cost_table),
        ),
        extra_figures=(
            ("FCT slowdown by flow size, web search at 30%", _slowdown_figure("web")),
            ("FCT slowdown by flow size, web search at 30% with incasts", _slowdown_figure("incast")),
            ("FCT distributions", _cdf_figure),
        ),
    )
)
