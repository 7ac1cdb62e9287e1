"""Traffic classes and PFC from Python: the `classes` and `pfc_events` tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cnsim
from cnsim import thresholds
from conftest import NO_CM, SCENARIOS

PFC = SCENARIOS / "pfc" / "lossless_and_lossy.toml"


def test_a_lossless_class_beside_a_lossy_one():
    r = cnsim.run(PFC, duration="5ms")
    flows = r.flows.set_index("name")
    assert flows.loc["H1->H3", "dropped_frames"] == 0
    assert flows.loc["H2->H3", "dropped_frames"] > 0
    c = r.classes.set_index(["queue", "class"])
    assert len(c) == 6 * 4, "every queue has a row per class"
    assert 0.4 < c.loc[("H1->SW", 3), "paused_fraction"] < 0.6
    assert c.loc[("H1->SW", 0), "paused_time_s"] == 0
    assert c.loc[("SW->H1", 3), "pfc_xoff_sent"] > 0
    # The per-class rows of a queue add up to its totals.
    q = r.queues.set_index("name")
    assert c.xs("SW->H3", level="queue")["tx_bytes"].sum() == q.loc["SW->H3", "tx_bytes"]
    ev = r.pfc_events
    assert list(ev.columns) == ["time_s", "queue", "node", "class", "quanta", "direction"]
    assert ev["time_s"].is_monotonic_increasing
    assert set(ev["class"]) == {3}
    sent, received = ev[ev.direction == "sent"], ev[ev.direction == "received"]
    assert set(sent["queue"]) == {"SW->H1"} and set(received["queue"]) == {"H1->SW"}
    assert len(sent) == r.summary["pfc"]["frames_sent"]
    # 1 us of cable and H1's 2 us response time from one end to the other.
    delays = received["time_s"].to_numpy() - sent["time_s"].to_numpy()[: len(received)]
    assert abs(delays - 3e-6).max() < 1e-12


def test_the_tables_survive_save_and_load(tmp_path):
    r = cnsim.run(PFC, duration="2ms")
    again = cnsim.Result.load(r.save(tmp_path / "out"))
    assert again.equals(r)
    assert len(again.pfc_events) == len(r.pfc_events) > 0


def test_one_class_without_pfc_has_empty_tables():
    r = cnsim.run(NO_CM, duration="6ms")
    assert r.classes.empty and r.pfc_events.empty
    assert "classes" not in r.summary and "pfc" not in r.summary


def test_buffer_occupancy_of_a_shared_buffer_switch(tmp_path):
    r = cnsim.run(SCENARIOS / "pfc" / "incast_1000.toml", duration="2ms", set={"params.senders": 100})
    b = r.buffer_occupancy
    assert list(b.columns) == [
        "time_s",
        "switch",
        "shared_mean_bytes",
        "shared_max_bytes",
        "headroom_mean_bytes",
        "headroom_max_bytes",
        *thresholds.BUFFER_COLUMNS,
    ]
    assert set(b["switch"]) == {"SW"} and len(b) == r.summary["n_bins"]
    (summary,) = r.summary["buffers"]
    # The bins' peaks are the run's peaks, and a mean never exceeds its bin's peak.
    assert b["shared_max_bytes"].max() == summary["max_shared_used_bytes"] > 0
    assert b["headroom_max_bytes"].max() == summary["max_headroom_used_bytes"]
    assert (b["shared_mean_bytes"] <= b["shared_max_bytes"]).all()
    assert (b["headroom_mean_bytes"] <= b["headroom_max_bytes"]).all()
    assert b["shared_max_bytes"].max() <= summary["shared_pool_bytes"]
    # The incast fills the pool past the pause threshold within the first bins;
    # PFC then holds it there, so the level never falls back to empty.
    assert (b["shared_mean_bytes"].iloc[2:] > 0).all()
    again = cnsim.Result.load(r.save(tmp_path / "out"))
    assert again.buffer_occupancy.equals(b)


def test_the_pause_timeline_adds_up_to_the_paused_time(tmp_path):
    from cnsim import plots

    r = cnsim.run(PFC, duration="2ms")
    intervals = plots.pause_intervals(r)
    assert set(zip(intervals["queue"], intervals["class"])) == {("H1->SW", 3)}
    assert (intervals["end_s"] > intervals["start_s"]).all()
    assert (intervals["start_s"].iloc[1:].to_numpy() >= intervals["end_s"].iloc[:-1].to_numpy()).all()
    paused = r.classes.set_index(["queue", "class"]).loc[("H1->SW", 3), "paused_time_s"]
    assert abs((intervals["end_s"] - intervals["start_s"]).sum() - paused) < 1e-12
    files = {p.name for p in plots.plot(r, tmp_path / "figs")}
    assert "pfc_timeline.png" in files and "buffer_use.png" not in files  # per-input buffers
    shared = cnsim.run(SCENARIOS / "pfc" / "incast_1000.toml", duration="1ms", set={"params.senders": 20})
    assert "buffer_use.png" in {p.name for p in plots.plot(shared, tmp_path / "shared")}


def test_runs_without_pfc_or_shared_buffers_draw_neither_view(tmp_path):
    from cnsim import plots

    files = {p.name for p in plots.plot(cnsim.run(NO_CM, duration="6ms"), tmp_path / "figs")}
    assert not {"pfc_timeline.png", "buffer_use.png"} & files


def test_validate_shows_the_computed_headroom_and_static_routes():
    resolved = cnsim.validate(SCENARIOS / "pfc" / "incast_1000.toml", set={"params.senders": 2})
    (sw,) = [n for n in resolved["nodes"] if n["kind"] == "switch"]
    assert sw["switch"]["pfc"]["classes"] == [3]
    # docs/model.md's rule: 10 Gb/s x (0.5 us of cable both ways + 1 us host
    # response) = 2,500 B, two largest frames (3,000 B), the PFC frame (64 B)
    # and the frame admitted before XOFF is decided (1,500 B).
    assert sw["switch"]["shared"]["headroom"] == [
        {"peer": peer, "bytes": 2_500 + 3_000 + 64 + 1_500} for peer in ("H1", "H2", "R", "L")
    ]
    clos = cnsim.validate(SCENARIOS / "pfc" / "deadlock_clos_bounce.toml")
    routes = {n["name"]: n["switch"].get("routes") for n in clos["nodes"] if n["kind"] == "switch"}
    assert routes["S1"] == [{"to": ["DA"], "via": "L2"}]
    assert routes["L1"] == [{"to": ["DA", "DC"], "via": "S1"}]
    assert routes["L3"] is None


def _switch_bytes_held(r: cnsim.Result, switch: str) -> pd.Series:
    """Per bin: time-averaged bytes in the output queues of `switch`."""
    ports = r.queues.loc[r.queues["node"] == switch, "name"]
    occ = r.queue_occupancy[r.queue_occupancy["queue"].isin(ports)]
    return occ.groupby("time_s")["mean_bytes"].sum()


@pytest.mark.parametrize(
    "scenario, overrides",
    [
        # A shared buffer: the MMU counts each ingress (port, class).
        (SCENARIOS / "pfc" / "incast_1000.toml", {"params.senders": 100}),
        # PFC with per-input buffers: the ports count their ingress classes.
        (PFC, {}),
    ],
)
def test_ingress_occupancy_adds_up_to_what_the_output_queues_hold(tmp_path, scenario, overrides):
    r = cnsim.run(scenario, duration="2ms", set={**overrides, "metrics.ingress_occupancy": True})
    ing = r.ingress_occupancy
    assert list(ing.columns) == ["time_s", "switch", "from", "class", "mean_bytes", "max_bytes"]
    assert len(ing) == len(r.summary["ingress"]) * r.summary["n_bins"] > 0
    assert (ing["mean_bytes"] <= ing["max_bytes"]).all()
    # Every byte a switch holds came in on one of its (port, class) ingress
    # queues and waits in one of its output queues: the two sums agree in
    # every bin.
    for switch, rows in ing.groupby("switch"):
        held = rows.groupby("time_s")["mean_bytes"].sum()
        out = _switch_bytes_held(r, switch).reindex(held.index)
        assert np.allclose(held.to_numpy(), out.to_numpy(), rtol=1e-9, atol=1e-6), switch
        assert held.max() > 0
    # Rows name real neighbours of each switch.
    links = set(zip(r.queues["node"], r.queues["peer"]))
    assert set(zip(ing["switch"], ing["from"])) <= links
    again = cnsim.Result.load(r.save(tmp_path / "out"))
    assert again.ingress_occupancy.equals(ing)


def test_ingress_occupancy_is_off_by_default_and_needs_counted_ingress():
    r = cnsim.run(PFC, duration="1ms")
    assert r.ingress_occupancy.empty and "ingress" not in r.summary
    with pytest.raises(cnsim.ScenarioError, match="metrics.ingress_occupancy"):
        cnsim.run(NO_CM, duration="6ms", set={"metrics.ingress_occupancy": True})
