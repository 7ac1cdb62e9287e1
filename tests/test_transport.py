"""TCP and QCN results through the Python API: the transport table, the
QCN target rate, and their round trip through a saved result."""

from __future__ import annotations

import numpy as np
import pytest

import cnsim

from conftest import SCENARIOS

C3 = SCENARIOS / "qcn_tcp" / "pause_propagation.toml"
SHORT = {"duration": "120ms", "hosts[N3].service.start": "20ms", "hosts[N3].service.end": "120ms"}


@pytest.fixture(scope="module")
def tcp_qcn() -> cnsim.Result:
    return cnsim.run(C3, set={**SHORT, "qcn.enabled": True})


def test_tcp_flows_have_a_transport_series(tcp_qcn):
    t = tcp_qcn.transport
    assert list(t.columns) == ["time_s", "flow", "cwnd_bytes", "retransmissions", "timeouts", "alpha"]
    assert t["alpha"].isna().all(), "NewReno keeps no alpha"
    assert sorted(t["flow"].unique()) == ["N1", "N2"]
    n_bins = tcp_qcn.summary["n_bins"]
    assert len(t) == 2 * n_bins
    # The window starts at 3 segments and grows: TCP is running.
    n2 = t[t["flow"] == "N2"]
    assert n2["cwnd_bytes"].iloc[0] >= 3 * 1460
    assert n2["cwnd_bytes"].max() > 10 * 1460
    flows = tcp_qcn.flows.set_index("name")
    assert list(flows["transport"]) == ["tcp", "tcp"]
    assert t.groupby("flow")["retransmissions"].sum().to_dict() == flows["retransmissions"].to_dict()


def test_qcn_reports_the_target_rate(tcp_qcn):
    rl = tcp_qcn.rate_limiters
    n1 = rl[rl["flow"] == "N1"]
    # Before the hotspot (N3 slows at 20 ms) no limiter: both rates at 10 Gb/s.
    early = n1[n1["time_s"] < 0.015]
    assert np.allclose(early["rate_gbps"], 10.0) and np.allclose(early["target_gbps"], 10.0)
    # N3 drains at 1 Gb/s from 20 ms; by 80 ms CR has settled near it.
    late = n1[n1["time_s"] >= 0.08]
    assert 0.8 < late["rate_gbps"].mean() < 1.3
    during = n1[n1["time_s"] >= 0.02]
    assert (during["rate_gbps"] <= during["target_gbps"] + 1e-6).all()


def test_udp_runs_have_empty_transport_and_nan_targets():
    r = cnsim.run(C3, set={**SHORT, "defaults.source.transport": "udp", "qcn.enabled": True})
    assert r.transport.empty
    assert list(r.flows["transport"]) == ["udp", "udp"]
    assert r.rate_limiters["target_gbps"].notna().all()
    bcn = cnsim.run(SCENARIOS / "baseline" / "bcn.toml", set={"duration": "10ms"})
    assert bcn.rate_limiters["target_gbps"].isna().all()


def test_transport_table_survives_save_and_load(tcp_qcn, tmp_path):
    tcp_qcn.save(tmp_path / "r")
    back = cnsim.Result.load(tmp_path / "r")
    assert back.equals(tcp_qcn)
    assert len(back.transport) == len(tcp_qcn.transport)
