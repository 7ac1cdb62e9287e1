"""Random valid small scenarios through the Python API: every run completes
with the invariant checks on (conservation, occupancy within buffers, PAUSE
obeyed, in-order delivery, limiter rates), and its tables agree with its
summary. The CI budget is ``max_examples`` below; for a longer search::

    HYPOTHESIS_PROFILE=long .venv/bin/pytest tests/test_fuzz_api.py
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cnsim

settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")


@st.composite
def scenarios(draw) -> dict:
    n_sw = draw(st.integers(1, 3))
    n_hosts = draw(st.integers(2, 5))
    pause = draw(st.sampled_from(["off", "global", "per_input"]))
    buffer_model = "per_input" if pause == "per_input" else draw(st.sampled_from(["per_output", "unlimited"]))
    switch = {"latency": "1us", "buffer_model": buffer_model}
    if buffer_model != "unlimited":
        switch["buffer"] = draw(st.sampled_from(["100KB", "150KB", "300KB"]))
    if pause != "off":
        switch["pause"] = {"mode": pause, "xoff": "80KB", "xon": "60KB"}
    hosts = [{"name": f"H{i}"} for i in range(n_hosts)]
    for h in hosts:
        if draw(st.booleans()):
            h["service"] = {"rate": draw(st.sampled_from(["1Gbps", "5Gbps"])), "start": "0.5ms", "end": "2ms"}
    links = [{"between": [f"S{i}", f"S{i + 1}"]} for i in range(n_sw - 1)]
    links += [{"between": [f"H{i}", f"S{draw(st.integers(0, n_sw - 1))}"]} for i in range(n_hosts)]
    transport = draw(st.sampled_from(["udp", "tcp"]))
    sources = []
    for i in range(n_hosts):
        if draw(st.booleans()):
            dst = draw(st.integers(0, n_hosts - 2))
            dst = dst if dst < i else dst + 1
            sources.append({
                "host": f"H{i}",
                "to": f"H{dst}" if draw(st.booleans()) else "*",
                "kind": "transactions",
                "transaction": draw(st.sampled_from(["1500B", "9000B", "64KB"])),
                "transport": transport,
                "load": draw(st.floats(0.05, 1.0)),
            })
    if not sources:
        sources.append({"host": "H0", "to": "H1", "load": 0.5, "transport": transport})
    doc = {
        "duration": "3ms",
        "bin": "100us",
        "seed": draw(st.integers(1, 1000)),
        "defaults": {"link": {"rate": "10Gbps", "delay": "1us"}, "switch": switch, "host": {"egress": "150KB"}},
        "switches": [{"name": f"S{i}"} for i in range(n_sw)],
        "hosts": hosts,
        "links": links,
        "sources": sources,
    }
    scheme = draw(st.sampled_from(["none", "bcn", "qcn"]))
    if scheme == "bcn":
        doc["bcn"] = {"sample_interval": "30KB"}
    elif scheme == "qcn":
        doc["qcn"] = {"sample_interval": "30KB"}
    return doc


@settings(settings.get_profile(PROFILE))
@given(scenarios())
def test_random_scenarios_run_with_every_invariant_holding(doc):
    r = cnsim.run(doc)  # raises SimulationError on a violated invariant
    assert r.partial is None
    flows = r.flows
    udp = flows[flows["transport"] == "udp"]
    accounted = udp["delivered_bytes"] + udp["dropped_bytes"] + udp["in_flight_bytes"]
    assert (udp["offered_bytes"] == accounted).all()
    tcp = flows[flows["transport"] == "tcp"]
    assert (tcp["delivered_bytes"] <= tcp["offered_bytes"]).all()
    # The binned series add up to the counters.
    delivered = r.flow_throughput.groupby("flow")["delivered_gbps"].sum() * r.bin_s * 1e9 / 8
    by_name = flows.set_index("name")["delivered_bytes"]
    for name, total in delivered.items():
        assert abs(total - by_name[name]) <= 1e-6 * max(1, by_name[name]), name
    assert int(r.queues["drops_frames"].sum()) == int(r.queue_occupancy["drops"].sum())
