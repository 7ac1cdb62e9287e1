"""Study B, `hotspot_degree`: BCN with innocent flows and a growing hotspot degree (Loh, Nov 2006).

docs/studies.md#study-b-hotspot_degree. One scenario file with replicated edge
switches; each point of the sweep sets the topology (senders per edge switch)
and the degree.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..results import Result
from . import Runs, Sensitivity, Study, View, register

#: senders per edge switch, and the degrees swept (multiples of it)
TOPOLOGIES = {"A": (1, (2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 80)), "B": (5, (10, 15, 20, 40, 80)),
              "C": (10, (20, 30, 40, 80))}
PAUSE = {"defaults.switch.pause": {"mode": "global", "xoff": "140KB", "xon": "130KB"},
         "bcn.sample_interval": "100KB"}

#: The edge switches' buffer and what one paused input can still deliver after XOFF (docs/model.md, PAUSE
#: headroom): 2 x propagation x C (links without delay: 0) + 2 x 1500 B (the frame ahead of the PAUSE frame,
#: the frame the upstream has started) + the 64 B PAUSE frame + (response 0 + switch latency 1 us) x 10 Gb/s.
EDGE_BUFFER = 150_000
HEADROOM_PER_INPUT = 0 + 2 * 1500 + 64 + 1250

#: the schemes: BCN alone, BCN + PAUSE with the deck's thresholds, and with thresholds that leave every
#: input of an edge switch its headroom
SCHEMES = ("bcn", "pause", "pausehr")


def edge_xoff(per_edge: int) -> int:
    """An edge switch's XOFF (bytes) with headroom for all its paused inputs: its senders and the core's link."""
    return EDGE_BUFFER - (2 * per_edge + 1) * HEADROOM_PER_INPUT


def _variant(topology: str, degree: int, scheme: str) -> tuple[str, dict]:
    per_edge, _ = TOPOLOGIES[topology]
    overrides = {
        "params.edges": degree // per_edge,
        "params.per_edge": per_edge,
        "sources[0].load": 2.0 / degree,  # 20 Gb/s in total
        "sources[1].load": 0.3 / per_edge,  # 3 Gb/s of innocent traffic per edge switch
    }
    if scheme != "bcn":
        overrides.update(PAUSE)
    if scheme == "pausehr":
        xoff = edge_xoff(per_edge)
        overrides["switches[E{e}].pause"] = {"mode": "global", "xoff": f"{xoff}B", "xon": f"{xoff - 10_000}B"}
    return f"{topology}{degree:02d}-{scheme}", overrides


VARIANTS = dict(_variant(t, n, s) for t, (_, degrees) in TOPOLOGIES.items() for n in degrees for s in SCHEMES)
#: --quick: three points; with headroom only B20, since A02's and A10's edges never reach XOFF in 20 ms
#: (with or without headroom the runs are the same)
QUICK = [name for name in VARIANTS if name[:3] in ("A02", "A10", "B20") and name not in ("A02-pausehr", "A10-pausehr")]


def _parse(name: str) -> tuple[str, int, str]:
    head, scheme = name.split("-")
    return head[0], int(head[1:]), scheme


def tts_ms(r: Result) -> float:
    st = r.summary.get("stability") or {}
    t = st.get("time_to_stability_s")
    return float("nan") if t is None else t * 1e3


def innocent_share(r: Result) -> float:
    """Innocent flows' delivered throughput over their offered load."""
    f = r.flows[r.flows["name"].str.startswith("I")]
    return float(f["delivered_bytes"].sum() / max(f["offered_bytes"].sum(), 1))


def edge_drops(r: Result) -> float:
    """Frames dropped at the edge switches' queues."""
    q = r.queues
    return float(q.loc[q["node"].str.startswith("E"), "drops_frames"].sum())


def _pause_statement(runs: Runs) -> str | None:
    """What the deck's PAUSE thresholds cost at the edges, and what is head-of-line blocking."""
    pairs = [(n[:3], runs[n][0], runs[n.replace("-pause", "-pausehr")][0]) for n in sorted(runs)
             if n.endswith("-pause") and runs.get(n) and runs.get(n.replace("-pause", "-pausehr"))]
    if not pairs:
        return None
    worst = max(pairs, key=lambda p: edge_drops(p[1]))
    each = "; ".join(f"{point}: {edge_drops(a):,.0f} drops and {innocent_share(a):.3f} of the innocent load "
                     f"delivered, with headroom {edge_drops(b):,.0f} and {innocent_share(b):.3f}"
                     for point, a, b in pairs)
    with_headroom = sum(edge_drops(b) for _, _, b in pairs)
    outcome = ("drop nothing there, so what they lose of the innocent traffic is head-of-line blocking alone"
               if with_headroom == 0 else f"still drop {with_headroom:,.0f} frames there in all")
    return (f"With PAUSE the deck's 140 / 130 KB thresholds on the edge switches' 150 KB buffers leave 10 KB of "
            f"headroom for all of an edge's paused inputs, where each needs {HEADROOM_PER_INPUT:,} B "
            f"(2 x 1500 B + 64 B + 1 us x 10 Gb/s): the edges drop {edge_drops(worst[1]):,.0f} frames at "
            f"{worst[0]}. The 'pausehr' variants set each edge's XOFF to 150 KB minus {HEADROOM_PER_INPUT:,} B "
            f"per input (its senders and the core's link; XON 10 KB lower) and {outcome}. Per point: {each}.")


def _tts_statement(runs: Runs) -> str | None:
    """Time to stability against the degree, and PAUSE's effect, from the runs."""
    a = sorted((_parse(n)[1], tts_ms(rs[0])) for n, rs in runs.items()
               if rs and _parse(n)[0] == "A" and _parse(n)[2] == "bcn")
    finite = [(d, t) for d, t in a if not np.isnan(t)]
    if len(finite) < 2:
        return None
    slope = np.polyfit([d for d, _ in finite], [t for _, t in finite], 1)[0]
    points = ", ".join(f"{t:.1f} ms at {d}" for d, t in finite[:: max(len(finite) // 4, 1)])
    never = [f"{n}" for n, rs in sorted(runs.items()) if rs and _parse(n)[2] == "bcn" and np.isnan(tts_ms(rs[0]))]
    pause = [(n, rs[0]) for n, rs in sorted(runs.items()) if rs and _parse(n)[2] == "pause"]
    worst = min(pause, key=lambda p: innocent_share(p[1])) if pause else None
    text = (f"Published only in words. Topology A's time to stability grows with the degree ({points}; about "
            f"{slope:.2f} ms per sender by a least-squares line).")
    if never:
        text += (f" Under BCN alone the queue does not fall back below the threshold within the run at "
                 f"{', '.join(never)}, which we read as the edge of instability.")
    if worst:
        text += (f" With the deck's PAUSE the innocent flows keep as little as {innocent_share(worst[1]):.2f} of "
                 f"their offered load ({worst[0]}).")
    return text


def points_table(runs: Runs) -> pd.DataFrame:
    rows = []
    for name, results in runs.items():
        for r in results:
            topology, degree, scheme = _parse(name)
            t = tts_ms(r)
            q = r.queues.set_index("name").loc["CORE->HOT"]
            rows.append({"topology": topology, "degree": degree, "scheme": scheme,
                         "TTS (ms)": "not within the run" if np.isnan(t) else f"{t:.2f}",
                         "innocent delivered / offered": f"{innocent_share(r):.3f}",
                         "frames dropped at the edges": f"{edge_drops(r):,.0f}",
                         "max CP queue (KB)": f"{q['max_occupancy_bytes'] / 1e3:,.0f}"})
    return pd.DataFrame(rows).sort_values(["topology", "scheme", "degree"])


def tts_figure(runs: Runs):
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), constrained_layout=True)
    for ax, metric, label in ((axes[0], tts_ms, "time to stability (ms)"),
                              (axes[1], innocent_share, "innocent delivered / offered")):
        for topology in TOPOLOGIES:
            for scheme, style in (("bcn", "-o"), ("pause", "--s"), ("pausehr", ":^")):
                pts = sorted((_parse(n)[1], metric(rs[0])) for n, rs in runs.items()
                             if rs and _parse(n)[0] == topology and _parse(n)[2] == scheme)
                if pts:
                    x, y = zip(*pts)
                    ax.plot(x, y, style, ms=3, label=f"{topology} {scheme}")
        ax.set_xlabel("hotspot degree (contending senders)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=3)
    axes[0].set_title("runs that never stabilise within 50 ms are left out", fontsize=8)
    return fig


def occupancy_figure(runs: Runs):
    fig, ax = plt.subplots(figsize=(11, 3.6), constrained_layout=True)
    for name in ("A02-bcn", "A10-bcn", "A22-bcn", "A80-bcn", "A22-pause"):
        if runs.get(name):
            q = runs[name][0].queue_occupancy
            s = q[q["queue"] == "CORE->HOT"]
            ax.plot(s["time_s"] * 1e3, s["mean_bytes"] / 1e3, lw=0.9, label=name)
    ax.axhline(48, color="k", ls=":", lw=0.8, label="2·Qeq = 48 KB")
    ax.set_yscale("symlog", linthresh=50)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("CORE→HOT queue (KB)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=3)
    return fig


register(
    Study(
        name="hotspot_degree",
        title="Study B — BCN with innocent flows and a growing hotspot degree",
        source='Zhi-Hern Loh (Fulcrum), "BCN Simulation Results, Innocent Flows With Varying Hot Spot Degree", '
               "IEEE 802.1 CM task force, Nov 2006",
        variants={"base": "hotspot_degree/bcn.toml"},
        sweep_variants=VARIANTS,
        quick_sweep_variants=QUICK,
        seeds=1,
        quick_seeds=1,
        quick_overrides={"duration": "20ms"},
        metrics=(),
        views=(),
        drops_figure=False,
        findings=(
            "Time to stability grows roughly linearly with the hotspot degree.",
            "With many flows per edge switch the time to stability converges.",
            "Around 80 flows the system is at the edge of instability.",
            "PAUSE's head-of-line blocking shortens the time to stability but hurts the innocent flows.",
        ),
        differences=(
            _tts_statement,
            _pause_statement,
            "Time to stability counts from the first time the queue exceeds 4·Qeq (96 KB), not 2·Qeq: with "
            "Bernoulli arrivals a burst can cross 48 KB and fall back within microseconds, which would read as "
            "stability before congestion has begun.",
            "Topologies B and C only allow degrees that are multiples of 5 and 10; with two edge switches the "
            "uplinks themselves are oversubscribed, so the first points of B and C are 10 and 20 senders.",
            "The innocent senders' rate (3 Gb/s per edge switch), the edge switches' 150 KB buffers and the 50 ms "
            "run length are ours; the deck gives none of them. One run per point, as in the deck.",
        ),
        sensitivities=(
            Sensitivity(
                "The innocent senders' load (each; per edge switch 3 Gb/s at 0.06)", "sources[1].load",
                (0.02, 0.06, 0.1), 0.06,
                "The deck gives no rate; 3 Gb/s per edge switch keeps every uplink below its 10 Gb/s from three "
                "edge switches up.",
                "B40-pause", (("time to stability (ms)", tts_ms, None),
                              ("innocent delivered / offered", innocent_share, None))),
        ),
        extra_tables=(("Every point", points_table),),
        extra_figures=(
            ("Time to stability and innocent throughput vs hotspot degree", tts_figure),
            ("Congestion point occupancy over time (log scale above 50 KB)", occupancy_figure),
        ),
    )
)
