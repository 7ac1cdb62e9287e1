"""Traffic classes and PFC from Python: the `classes` and `pfc_events` tables."""

from __future__ import annotations

import cnsim
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
