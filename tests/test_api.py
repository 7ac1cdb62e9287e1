"""End-to-end tests of the Python API against the compiled engine."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cnsim
from cnsim import _core
from cnsim.overrides import override_value

from conftest import FAST, NO_CM, PAUSE


@pytest.fixture(scope="module")
def no_cm() -> cnsim.Result:
    return cnsim.run(NO_CM, seed=1, **FAST)


def test_engine_is_the_compiled_extension():
    assert Path(_core.__file__).suffix in (".so", ".pyd"), _core.__file__
    assert isinstance(cnsim.__version__, str) and cnsim.__version__


def test_public_names():
    for name in ("run", "validate", "Result", "ScenarioError", "SimulationError", "__version__"):
        assert hasattr(cnsim, name), name
    assert issubclass(cnsim.ScenarioError, Exception)


def test_run_baseline_summary(no_cm):
    s = no_cm.summary
    assert s["duration_s"] == pytest.approx(0.020)
    assert s["seed"] == 1
    assert s["scenario_file"] == str(NO_CM)
    for key in ("name", "cnsim_version", "scenario_hash", "wall_time_s", "events", "frame_hops", "totals"):
        assert key in s, key
    assert s["events"] > 0 and s["frame_hops"] > 0
    # Per-run performance: the slow-down against simulated time, and the
    # process's peak memory where the system reports it (Linux).
    assert s["slowdown"] == pytest.approx(s["wall_time_s"] / s["duration_s"])
    assert s["peak_memory_bytes"] is None or s["peak_memory_bytes"] > 10_000_000
    assert s["totals"]["offered_bytes"] > 0


def test_tables_have_the_documented_columns(no_cm):
    assert list(no_cm.flows.columns[:4]) == ["name", "source", "src", "dst"]
    for col in ("offered_bytes", "delivered_bytes", "dropped_frames", "offered_gbps", "delivered_gbps"):
        assert col in no_cm.flows.columns, col
    assert list(no_cm.queues.columns[:4]) == ["name", "node", "peer", "node_kind"]
    for col in ("drops_frames", "max_occupancy_bytes", "pause_frames_sent", "tx_bytes"):
        assert col in no_cm.queues.columns, col
    assert list(no_cm.flow_throughput.columns) == ["time_s", "flow", "offered_gbps", "delivered_gbps"]
    assert list(no_cm.link_throughput.columns) == ["time_s", "queue", "gbps"]
    assert list(no_cm.queue_occupancy.columns) == ["time_s", "queue", "mean_bytes", "max_bytes", "drops", "xoff"]
    assert list(no_cm.rate_limiters.columns) == [
        "time_s",
        "flow",
        "rate_gbps",
        "target_gbps",
        "queue_mean_bytes",
        "queue_max_bytes",
        "alpha",
    ]
    assert no_cm.rate_limiters.empty  # no congestion-notification scheme
    n_bins = no_cm.summary["n_bins"]
    assert len(no_cm.flow_throughput) == len(no_cm.flows) * n_bins
    assert len(no_cm.link_throughput) == len(no_cm.queues) * n_bins
    assert len(no_cm.queue_occupancy) == len(no_cm.queues) * n_bins
    assert set(no_cm.queues["node_kind"]) <= {"switch", "host"}
    assert all("->" in q for q in no_cm.queues["name"])


def test_time_series_agree_with_the_counters(no_cm):
    """Gb/s per bin integrate back to the byte counters of the summary."""
    bin_s = no_cm.bin_s
    to_bytes = bin_s * 1e9 / 8
    ft = no_cm.flow_throughput
    first = ft[ft["flow"] == no_cm.flows["name"].iloc[0]]
    assert first["time_s"].iloc[0] == 0.0
    assert np.allclose(np.diff(first["time_s"]), bin_s)
    per_flow = ft.groupby("flow", sort=False)[["offered_gbps", "delivered_gbps"]].sum() * to_bytes
    for row in no_cm.flows.itertuples():
        assert per_flow.loc[row.name, "offered_gbps"] == pytest.approx(row.offered_bytes, rel=1e-9)
        assert per_flow.loc[row.name, "delivered_gbps"] == pytest.approx(row.delivered_bytes, rel=1e-9)
    drops = no_cm.queue_occupancy.groupby("queue", sort=False)["drops"].sum()
    for row in no_cm.queues.itertuples():
        assert drops.loc[row.name] == row.drops_frames
    tx = no_cm.link_throughput.groupby("queue", sort=False)["gbps"].sum() * to_bytes
    for row in no_cm.queues.itertuples():
        assert tx.loc[row.name] == pytest.approx(row.tx_bytes, rel=1e-9)
    occ = no_cm.queue_occupancy
    assert (occ["max_bytes"] >= occ["mean_bytes"] - 1e-6).all()


def test_conservation(no_cm):
    """Offered = delivered + dropped + still queued or in flight, per flow and in total."""
    for row in no_cm.flows.itertuples():
        assert row.offered_bytes == row.delivered_bytes + row.dropped_bytes + row.in_flight_bytes, row.name
    t = no_cm.summary["totals"]
    assert t["offered_bytes"] == t["delivered_bytes"] + t["dropped_bytes"] + t["in_flight_bytes"]
    assert t["offered_frames"] == t["delivered_frames"] + t["dropped_frames"] + t["in_flight_frames"]
    assert t["dropped_frames"] == no_cm.queues["drops_frames"].sum()
    assert t["offered_bytes"] == no_cm.flows["offered_bytes"].sum()


def test_baseline_congests_the_core_without_cm(no_cm):
    """Four culprits at ~4.8 Gb/s into one 10 Gb/s link must drop frames."""
    assert no_cm.summary["totals"]["dropped_frames"] > 0
    assert no_cm.summary["totals"]["pause_frames_sent"] == 0
    worst = no_cm.queues.sort_values("drops_frames").iloc[-1]
    assert worst["node_kind"] == "switch"


def test_pause_variant_has_no_drops_and_sends_pauses():
    res = cnsim.run(PAUSE, seed=1, **FAST)
    test_conservation(res)
    assert res.summary["totals"]["dropped_frames"] == 0
    assert res.summary["totals"]["pause_frames_sent"] > 0
    assert (res.queues["pause_frames_sent"] > 0).any()


def test_same_seed_same_tables(no_cm):
    again = cnsim.run(NO_CM, seed=1, **FAST)
    assert again.equals(no_cm)
    for name, table in no_cm.tables().items():
        pd.testing.assert_frame_equal(getattr(again, name), table, obj=name)
    assert again.summary["scenario_hash"] == no_cm.summary["scenario_hash"]


def test_different_seed_different_tables(no_cm):
    other = cnsim.run(NO_CM, seed=2, **FAST)
    assert other.summary["seed"] == 2
    assert not other.equals(no_cm)
    assert not np.array_equal(other.flow_throughput["offered_gbps"], no_cm.flow_throughput["offered_gbps"])


def test_seed_none_uses_the_scenario_seed():
    declared = tomllib.loads(NO_CM.read_text()).get("seed")
    res = cnsim.run(NO_CM, **FAST)
    if declared is not None:
        assert res.summary["seed"] == declared


def test_overrides_by_keyword_and_by_path():
    scenario = tomllib.loads(NO_CM.read_text())
    res = cnsim.run(NO_CM, seed=1, duration="10ms", set={"bin": "1ms"})
    assert res.summary["duration_s"] == pytest.approx(0.010)
    assert res.bin_s == pytest.approx(0.001)
    assert res.summary["n_bins"] == 10
    assert "duration" in scenario  # the file itself is not changed


def test_set_selects_entries_by_name_and_index():
    res = cnsim.run(NO_CM, seed=1, duration="20ms", set={"switches[CORE].buffer": "50KB", "sources[4].load": 0.1})
    queues = res.queues.set_index("name")
    kib = 1024  # the baseline study reads KB as KiB
    assert 45 * kib < queues.loc["CORE->S1", "max_occupancy_bytes"] <= 50 * kib
    innocent = res.flows.set_index("name").loc["CR1->S2"]
    assert innocent["offered_gbps"] == pytest.approx(1.0, rel=0.15)


def test_validate_returns_the_resolved_scenario():
    v = cnsim.validate(NO_CM)
    for key in ("name", "duration_s", "seed", "bin_s", "nodes", "links", "flows", "queues", "plot"):
        assert key in v, key
    assert {n["kind"] for n in v["nodes"]} >= {"switch", "host"}
    assert all(link["rate_bps"] > 0 for link in v["links"])
    v2 = cnsim.validate(NO_CM, set={"duration": "7ms"})
    assert v2["duration_s"] == pytest.approx(0.007)


def test_dict_scenario_matches_file():
    as_dict = tomllib.loads(NO_CM.read_text())
    from_dict = cnsim.run(as_dict, seed=4, **FAST)
    from_file = cnsim.run(NO_CM, seed=4, **FAST)
    assert from_dict.summary["scenario_file"] == "<dict>"
    for name, table in from_file.tables().items():
        pd.testing.assert_frame_equal(getattr(from_dict, name), table, obj=name)


def test_dict_scenario_errors_name_the_field():
    as_dict = tomllib.loads(NO_CM.read_text())
    as_dict["duration"] = "twenty"
    with pytest.raises(cnsim.ScenarioError, match=r"<dict>.*duration"):
        cnsim.validate(as_dict)


def test_bad_override_names_the_key():
    with pytest.raises(cnsim.ScenarioError, match="duration"):
        cnsim.run(NO_CM, duration="fast")


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        cnsim.run(tmp_path / "nope.toml")


def test_out_saves_the_result(tmp_path):
    res = cnsim.run(NO_CM, seed=1, out=tmp_path / "r", duration="10ms")
    assert res.path == tmp_path / "r"
    assert (tmp_path / "r" / "summary.json").is_file()
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["seed"] == 1


def test_progress_path_gives_the_same_result(no_cm):
    with_progress = cnsim.run(NO_CM, seed=1, progress=True, **FAST)
    assert with_progress.equals(no_cm)


def test_cancel_through_progress_handle():
    handle = _core.Progress()
    text = NO_CM.read_text()
    box = {}

    def work():
        try:
            box["value"] = _core.run(text, str(NO_CM), [("duration", "60s")], progress=handle)
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    worker = threading.Thread(target=work)
    worker.start()
    deadline = time.monotonic() + 20
    while handle.sim_time_s == 0.0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert handle.duration_s == pytest.approx(60.0)
    handle.cancel()
    worker.join(30)
    assert not worker.is_alive()
    assert isinstance(box.get("error"), cnsim.SimulationError)
    assert 0 < handle.sim_time_s < 60.0
    assert handle.events > 0


def test_keyboard_interrupt_cancels_the_run():
    """Ctrl-C during run(progress=True) cancels the engine and re-raises."""
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            cnsim.run(NO_CM, seed=1, progress=True, duration="60s")
    finally:
        timer.cancel()
    assert time.monotonic() - started < 20


def test_runs_in_threads_are_independent():
    """The engine releases the GIL; concurrent runs give the same results as serial ones."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda s: cnsim.run(NO_CM, seed=s, duration="10ms"), [1, 2, 1]))
    assert results[0].equals(results[2])
    assert not results[0].equals(results[1])


@pytest.mark.parametrize(
    "value, expected",
    [("150KB", "150KB"), (5, "5"), (0.25, "0.25"), (1e-5, "1e-05"), (True, "true"), (False, "false"),
     ([1, "a"], '[1, "a"]'), ({"mode": "global"}, '{mode = "global"}'), (np.int64(3), "3")],
)
def test_override_values_become_toml_literals(value, expected):
    assert override_value(value) == expected


_scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_override_values_parse_as_toml(value):
    """Non-string values are rendered as TOML literals that read back to the same value."""
    rendered = override_value(value)
    if isinstance(value, str):
        assert rendered == value  # strings are passed through unchanged
        return
    assert tomllib.loads("x = " + rendered)["x"] == value


# --------------------------------------------------------------------------- numpy values and non-finite numbers

LOAD_C1 = "sources[C1->S1].load"


@pytest.mark.parametrize(
    "value, expected",
    [(np.float64(0.3), "0.3"), (np.float32(0.5), "0.5"), (np.int32(7), "7"), (np.bool_(True), "true"),
     (np.array([0.25, 0.5]), "[0.25, 0.5]"), (np.array(2), "2"), ([np.float64(1.5)], "[1.5]")],
)
def test_numpy_values_become_plain_toml_literals(value, expected):
    assert override_value(value) == expected


def test_numpy_scalars_are_accepted_as_override_values():
    plain = cnsim.validate(NO_CM, set={LOAD_C1: 0.3})
    assert cnsim.validate(NO_CM, set={LOAD_C1: np.float64(0.3)}) == plain
    res = cnsim.run(NO_CM, set={LOAD_C1: np.float64(0.3), "bin": "1ms"}, duration="6ms")
    assert res.equals(cnsim.run(NO_CM, set={LOAD_C1: 0.3, "bin": "1ms"}, duration="6ms"))


def test_numpy_arrays_are_accepted_as_sweep_axes():
    points = cnsim.sweep_points(NO_CM, axes={LOAD_C1: np.linspace(0.2, 0.4, 3)}, seeds=1)
    assert [p.axes[LOAD_C1] for p in points] == pytest.approx([0.2, 0.3, 0.4])
    assert all(type(p.axes[LOAD_C1]) is float for p in points)
    same = cnsim.sweep_points(NO_CM, axes={LOAD_C1: np.array([0.2, 0.3, 0.4])}, seeds=np.int64(1))
    assert [p.point_id for p in same] == [
        p.point_id for p in cnsim.sweep_points(NO_CM, axes={LOAD_C1: [0.2, 0.3, 0.4]}, seeds=1)
    ]
    (p,) = cnsim.sweep_points(NO_CM, set={LOAD_C1: np.float64(0.3)}, seed_list=[np.int64(2)])
    assert dict(p.overrides)[LOAD_C1] == 0.3


TINY = {
    "duration": "1ms",
    "switches": [{"name": "SW"}],
    "hosts": [{"name": "A"}, {"name": "B"}],
    "links": [{"between": ["A", "SW"]}, {"between": ["B", "SW"]}],
    "sources": [{"name": "f", "host": "A", "to": "B", "load": 0.5}],
}


@pytest.mark.parametrize("key, value", [("sources[f].load", float("nan")), ("duration", float("inf")),
                                        ("sources[f].load", np.float64("nan"))])
def test_non_finite_override_values_are_named(key, value):
    for scenario in (TINY, NO_CM):
        k = key if scenario is TINY else key.replace("[f]", "[C1->S1]")
        with pytest.raises(cnsim.ScenarioError) as exc:
            cnsim.validate(scenario, set={k: value})
        message = str(exc.value)
        assert k in message, message
        assert "missing field" not in message and "null" not in message, message
        assert re.search(r"(?i)finite|nan|inf", message), message


def test_scenario_files_are_read_by_the_engine_rules(tmp_path):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    for path, reason in [(fifo, "not a regular file"), (Path("/dev/zero"), "not a regular file"),
                         (tmp_path, "is a directory")]:
        with pytest.raises(cnsim.ScenarioError, match=re.escape(f"{path}: ") + ".*" + reason):
            cnsim.validate(path)
    big = tmp_path / "big.toml"
    with open(big, "wb") as fh:
        fh.truncate(16 * 1024 * 1024 + 1)
    with pytest.raises(cnsim.ScenarioError, match=re.escape(f"{big}: file too large")):
        cnsim.run(big)
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(b'duration = "1ms"\nname = "caf\xe9"\n')
    with pytest.raises(cnsim.ScenarioError, match=re.escape(f"{latin1}:2:") + ".*UTF-8"):
        cnsim.validate(latin1)
    with pytest.raises(cnsim.SweepError, match=re.escape(f"{fifo}: ") + ".*not a regular file"):
        cnsim.sweep_points(fifo, seeds=1)


def test_variant_names_with_control_characters_are_refused():
    for name in ("red\x1b[31m", "a\u202eb", "nul\x00"):
        with pytest.raises(cnsim.SweepError, match="control characters") as exc:
            cnsim.sweep_points(NO_CM, variants={name: {"bin": "1ms"}}, seeds=1)
        assert not any(c in str(exc.value) for c in "\x1b\u202e\x00")


@pytest.mark.parametrize("bad", [[("duration",)], ["duration"], [("a", 1, 2)]])
def test_set_items_that_are_not_pairs_are_refused_by_runs_and_sweeps(bad):
    message = re.escape(f"set: expected (key, value) pairs, got {bad[0]!r}")
    with pytest.raises(TypeError, match=message):
        cnsim.validate(NO_CM, set=bad)
    with pytest.raises(cnsim.SweepError, match=message):
        cnsim.sweep_points(NO_CM, set=bad)


def test_set_pairs_are_checked_in_order():
    # The first pair's value is refused before the second item is read.
    with pytest.raises(TypeError, match="cannot use a object as an override value"):
        cnsim.validate(NO_CM, set=[("duration", object()), "not a pair"])
    with pytest.raises(cnsim.SweepError, match="set: empty key"):
        cnsim.sweep_points(NO_CM, set=[(" ", 1), "not a pair"])
