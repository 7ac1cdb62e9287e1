"""Study E, `cn_sim_baseline`: the CN-SIM calibration scenario (Bergamasco, Sep 2006).

docs/studies.md#study-e-cn_sim_baseline. Fairness of the four sources over
20–80 ms against the fair share T = 2.5 Gb/s, per seed and over 25 seeds;
the best and the worst seed drawn in full.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..results import Result
from ..stats import mean_interval
from . import Metric, Runs, Sensitivity, Study, View, register
from .baseline import drops, link_gbps

VARIANTS = ("bcn", "bcn00", "pause", "pause_bcn00")
FAIRNESS = (("dev_max", "Dev_max"), ("dev_rms", "Dev_rms"), ("jain", "Jain's index"))
#: The deck's BCN variant over its 25 seeds, R_i over 20–80 ms: (min, mean, max).
PUBLISHED = {"dev_max": (0.083, 0.216, 0.383), "dev_rms": (0.057, 0.144, 0.261), "jain": (0.937, 0.977, 0.997)}


def fairness(key: str):
    def measure(r: Result) -> float:
        return float(r.summary["fairness"][key])

    return measure


#: The deck's fairness numbers for BCN, as sensitivity metrics: (label, measure, published mean).
_FAIRNESS_METRICS = tuple((label, fairness(key), PUBLISHED[key][1]) for key, label in reversed(FAIRNESS))


def per_seed_table(runs: Runs) -> pd.DataFrame:
    rows = []
    for variant in VARIANTS:
        for r in runs.get(variant, ()):
            f = r.summary["fairness"]
            row = {"variant": variant, "seed": r.seed}
            row.update({label: f"{f[key]:.3f}" for key, label in FAIRNESS})
            row["rates (Gb/s)"] = ", ".join(f"{x / 1e9:.2f}" for x in f["rates_bps"])
            rows.append(row)
    return pd.DataFrame(rows)


def range_table(runs: Runs) -> pd.DataFrame:
    """min / mean / max over seeds with the mean's 95% interval, and the deck's BCN row beside."""
    rows = []
    for variant in VARIANTS:
        results = runs.get(variant, ())
        if not results:
            continue
        f = results[0].summary["fairness"]
        row = {"variant": variant, "seeds": len(results), "window": f"[{f['start_s'] * 1e3:.0f}, {f['end_s'] * 1e3:.0f}) ms"}
        for key, label in FAIRNESS:
            v = np.array([r.summary["fairness"][key] for r in results])
            mean, half = mean_interval(v)
            ci = f" (± {half:.3f})" if np.isfinite(half) else ""
            row[f"{label} min / mean (95% CI) / max"] = f"{v.min():.3f} / {mean:.3f}{ci} / {v.max():.3f}"
        rows.append(row)
    deck = {"variant": "the deck (BCN)", "seeds": 25, "window": "[20, 80) ms"}
    for key, label in FAIRNESS:
        lo, mean, hi = PUBLISHED[key]
        deck[f"{label} min / mean (95% CI) / max"] = f"{lo:.3f} / {mean:.3f} / {hi:.3f}"
    return pd.DataFrame(rows + [deck])


def _best_and_worst(results) -> list[tuple[str, Result]]:
    by_jain = sorted(results, key=lambda r: r.summary["fairness"]["jain"])
    return [("worst", by_jain[0]), ("best", by_jain[-1])] if by_jain else []


def best_worst_figure(variant: str):
    """Per-source throughput, the hot queue and the rate-limiter queues of the best and worst seed (by Jain)."""

    def draw(runs: Runs):
        picks = _best_and_worst(runs.get(variant, ()))
        fig, axes = plt.subplots(len(picks) or 1, 2, figsize=(11, 3.2 * max(len(picks), 1)),
                                 constrained_layout=True, squeeze=False)
        for row, (which, r) in enumerate(picks):
            ax_t, ax_q = axes[row]
            ft = r.flow_throughput
            for flow in sorted(ft["flow"].unique()):
                s = ft[ft["flow"] == flow]
                ax_t.plot(s["time_s"] * 1e3, s["delivered_gbps"], lw=0.9, label=flow)
            ax_t.axhline(2.5, color="k", ls=":", lw=0.8)
            ax_t.set_ylabel("Gb/s")
            ax_t.set_title(f"{variant}, {which} seed {r.seed} (Jain {r.summary['fairness']['jain']:.3f})",
                           fontsize=9)
            ax_t.legend(fontsize=7, ncol=4, loc="upper right")
            occ = r.queue_occupancy
            hot = occ[occ["queue"] == "B0->D"]
            ax_q.plot(hot["time_s"] * 1e3, hot["mean_bytes"] / 1e3, color="k", lw=1.0, label="B0→D (CP)")
            rl = r.rate_limiters
            for flow in sorted(rl["flow"].unique()):
                s = rl[rl["flow"] == flow]
                ax_q.plot(s["time_s"] * 1e3, s["queue_mean_bytes"] / 1e3, lw=0.7, label=f"RL {flow}")
            ax_q.set_ylabel("KB (mean per bin)")
            ax_q.legend(fontsize=7, ncol=3, loc="upper right")
            for ax in (ax_t, ax_q):
                ax.set_xlabel("time (ms)")
                ax.grid(True, alpha=0.3)
        return fig

    return draw


register(
    Study(
        name="cn_sim_baseline",
        title="Study E — CN-SIM baseline: BCN, BCN(0,0) and PAUSE",
        source='Davide Bergamasco, "CN-SIM: A Baseline Simulation Scenario", IEEE 802.1 interim, York, 28 Sep 2006',
        variants={v: f"cn_sim_baseline/{v}.toml" for v in VARIANTS},
        seeds=25,
        quick_seeds=2,
        quick_overrides={"duration": "30ms", "metrics.fairness.end": "30ms"},
        metrics=tuple(
            m
            for v in VARIANTS
            for m in (
                Metric("Congested downlink B0→D, 20–80 ms", v, link_gbps("B0->D"), unit="Gb/s", decimals=2,
                       note="10 Gb/s expected"),
                Metric("Jain's index, fairness window", v, fairness("jain"), decimals=3,
                       published=PUBLISHED["jain"][1] if v == "bcn" else None,
                       note="1 is perfectly fair" + ("; the deck's mean over 25 seeds" if v == "bcn" else "")),
                Metric("Dev_max, fairness window", v, fairness("dev_max"), decimals=3,
                       published=PUBLISHED["dev_max"][1] if v == "bcn" else None,
                       note="max |R_i − 2.5 Gb/s| / 2.5 Gb/s" + ("; the deck's mean" if v == "bcn" else "")),
                Metric("Dev_rms, fairness window", v, fairness("dev_rms"), decimals=3,
                       published=PUBLISHED["dev_rms"][1] if v == "bcn" else None,
                       note="rms of (R_i − 2.5 Gb/s) / 2.5 Gb/s" + ("; the deck's mean" if v == "bcn" else "")),
                Metric("Frames dropped", v, drops, note="not published"),
            )
        ),
        views=(
            View("Congested downlink B0→D", "links", ("B0->D",)),
            View("Uplinks B1→B0 and B3→B0", "links", ("B1->B0", "B3->B0")),
            View("Congested queue B0→D", "queues", ("B0->D",)),
        ),
        findings=(
            "The congested downlink should carry 10 Gb/s from 5 to 100 ms and each uplink its fair share of "
            "2.5 Gb/s from 20 to 80 ms; after two sources stop at 80 ms the other two get their offered 4.9 Gb/s.",
            "The deck reports Dev_max, Dev_rms and Jain's index with min/mean/max over 25 seeds, for BCN: "
            "Dev_max 0.083 / 0.216 / 0.383, Dev_rms 0.057 / 0.144 / 0.261, Jain's index 0.937 / 0.977 / 0.997 "
            "(docs/studies.md); ours are in the table below.",
        ),
        differences=(
            "The congested link runs at 10.0 Gb/s and the hot queue averages about Qeq (24 KB) in every variant, "
            "but the four rates approach the fair share slowly: over 20–80 ms Jain's index is well below the "
            "deck's (table below), and Dev_max falls from 20–40 ms to 60–80 ms. "
            "With BCN the number of notifications a source receives grows with its rate, so the additive increase "
            "acts multiplicatively and only the decrease term (∝ R²) pulls rates together; with these gains that "
            "takes tens of milliseconds. Averaged over seeds no source is favoured.",
            "The PAUSE variants drop a few frames (see the runs table) in the first millisecond: the deck's 140 KB assert threshold leaves 10 KB of a 150 KB buffer, less than four "
            "inputs deliver over the ≈4 µs PAUSE loop. We keep the deck's thresholds.",
            "Topology (edge bridges B1..B4 and core B0), bridges' 1 µs PAUSE response and the NIC egress queue "
            "of 150 KB are our reconstruction; the deck gives no sampling jitter, so there is none.",
        ),
        sensitivities=(
            Sensitivity(
                "Pacing of the rate limiters", "defaults.host.limiter_jitter", (0.0, 0.1, 0.25, 0.5), 0.0,
                "The deck does not say how its limiters spaced frames; exact spacing (8·L/R) is the literal reading "
                "of a limiter at rate R. The jitter stands for a limiter clocked by an adapter's timers.",
                "bcn", _FAIRNESS_METRICS, quick_values=(0.0, 0.5)),
            Sensitivity(
                "Rate of a newly installed limiter", "bcn.initial_rate", (None, "5Gbps", "2.5Gbps"), None,
                "The deck gives none; a limiter starts at the line rate and the first negative message cuts it.",
                "bcn", _FAIRNESS_METRICS),
            Sensitivity(
                "Jitter of the congestion point's sampling interval", "bcn.sample_jitter", (None, "5KB", "20KB"),
                None, "The deck gives a 150 KB mean interval and no jitter.", "bcn", _FAIRNESS_METRICS),
        ),
        extra_tables=(
            ("Fairness over its window (the study: 20–80 ms): min / mean (95% CI) / max over seeds, and the deck's", range_table),
            ("Fairness per seed", per_seed_table),
        ),
        extra_figures=tuple(
            (f"{v}: best and worst seed — per-source throughput; congested queue and rate-limiter queues",
             best_worst_figure(v))
            for v in VARIANTS
        ),
    )
)
