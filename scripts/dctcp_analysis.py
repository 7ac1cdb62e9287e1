"""DCTCP's queue against the analysis of Alizadeh et al. (SIGCOMM 2010, section 3.3).

Runs scenarios/dctcp/long_flows.toml with N = 2, 10 and 40 long flows and
prints, for the bottleneck queue SW->R after the first 10 ms, the measured
maximum, minimum, sawtooth amplitude and period beside the analysis:

    W* = (C*RTT + K) / N               window at which marking starts (frames)
    A  = 1/2 * sqrt(2 N (C*RTT + K))   amplitude of the queue's sawtooth
    T_C = 1/2 * sqrt(2 (C*RTT + K) / N) its period, in round trips
    Q_max = K + N,  Q_min = Q_max - A

C*RTT uses the base round trip (102.5 us); the period is also given with
the round trip at the mean queue, which is what a window grows by one
frame in. The queue is read from 10 us bins: the maximum is the largest
bin maximum, the minimum the smallest bin mean, the period the strongest
frequency of the bin means. Usage: python scripts/dctcp_analysis.py
"""

from __future__ import annotations

from math import sqrt
from pathlib import Path

import numpy as np

import cnsim

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "dctcp" / "long_flows.toml"
FRAME = 1500
K = 65  # frames: the scenario's 97,500 B
RATE = 10e9
BASE_RTT = 102.5e-6
SETTLE_S = 0.01


def measure(n: int) -> dict[str, float]:
    r = cnsim.run(SCENARIO, set={"params.n": n})
    q = r.queue_occupancy
    q = q[(q["queue"] == "SW->R") & (q["time_s"] >= SETTLE_S)]
    mean = q["mean_bytes"].to_numpy() / FRAME
    peak = q["max_bytes"].to_numpy() / FRAME
    wave = (mean - mean.mean()) * np.hanning(len(mean))
    spectrum = np.abs(np.fft.rfft(wave))
    freqs = np.fft.rfftfreq(len(mean), d=r.bin_s)
    period = 1.0 / freqs[1 + spectrum[1:].argmax()]
    return {"max": peak.max(), "min": mean.min(), "mean": mean.mean(), "period_s": period}


def analysis(n: int, mean_queue: float) -> dict[str, float]:
    bdp = RATE * BASE_RTT / (FRAME * 8)
    amplitude = 0.5 * sqrt(2 * n * (bdp + K))
    rounds = 0.5 * sqrt(2 * (bdp + K) / n)
    rtt_at_queue = BASE_RTT + mean_queue * FRAME * 8 / RATE
    return {
        "max": K + n,
        "min": K + n - amplitude,
        "period_s": rounds * BASE_RTT,
        "period_at_queue_s": rounds * rtt_at_queue,
    }


def main() -> None:
    print("N   Q_max meas/analysis   Q_min meas/analysis   period meas / analysis (base RTT, RTT at mean queue)")
    for n in (2, 10, 40):
        m = measure(n)
        a = analysis(n, m["mean"])
        print(
            f"{n:<3} {m['max']:6.1f} / {a['max']:5.1f}       {m['min']:6.1f} / {a['min']:5.1f}"
            f"       {m['period_s'] * 1e6:6.0f} us / {a['period_s'] * 1e6:4.0f} us, {a['period_at_queue_s'] * 1e6:4.0f} us"
        )


if __name__ == "__main__":
    main()
