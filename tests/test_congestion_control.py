"""DCQCN's and DCTCP's state in the tables: alpha, CR and TR over time."""

from __future__ import annotations

import numpy as np

import cnsim
from conftest import SCENARIOS


def test_dctcp_alpha_settles_at_the_marked_fraction_of_a_window():
    r = cnsim.run(SCENARIOS / "dctcp" / "long_flows.toml", duration="30ms", set={"params.n": 2})
    t = r.transport
    assert set(t["flow"]) == {"F1", "F2"}
    first, late = t[t["time_s"] == 0], t[t["time_s"] >= 0.02]
    # alpha starts at 1 and decays while the queue stays under K.
    assert (first["alpha"] > 0.9).all()
    # Settled: a few percent to a few tens of percent of each window marked
    # (docs/model.md: about 0.09-0.15 with two flows), never above 1.
    assert t["alpha"].between(0, 1).all()
    assert late.groupby("flow")["alpha"].mean().between(0.05, 0.25).all()


def test_dcqcn_alpha_and_rates_in_the_rate_limiters_table():
    r = cnsim.run(SCENARIOS / "dcqcn" / "convergence.toml", duration="30ms")
    rl = r.rate_limiters
    assert rl["alpha"].between(0, 1).all()
    late = rl[rl["time_s"] >= 0.02]
    # Past the first CNPs: alpha is under way and the limiters hold about
    # half the 40 Gb/s port each, with TR at or above CR.
    assert (late["alpha"] > 0).all()
    assert np.allclose(late.groupby("flow")["rate_gbps"].mean(), 20, rtol=0.15)
    assert (late["target_gbps"] >= late["rate_gbps"] - 1e-9).mean() > 0.9
