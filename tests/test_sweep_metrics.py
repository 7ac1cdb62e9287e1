"""Sweep metrics: Jain's index over the flows, and the user's metrics (callables and expressions, from the
API, the command line and a file's [sweep] section), pinned against each point's saved tables."""

from __future__ import annotations

import math
import threading

import numpy as np
import pandas as pd
import pytest
from conftest import NO_CM, point_snapshot

import cnsim
from cnsim.sweep import SweepWarning

FAST = {"duration": "20ms"}


def _jain(x) -> float:
    x = np.asarray(x, dtype=float)
    return x.sum() ** 2 / (len(x) * (x * x).sum())


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("metrics") / "sw"
    lock = threading.Lock()  # not picklable: the metric runs where the sweep runs

    def c2_share(result: cnsim.Result) -> float:
        with lock:
            f = result.flows.set_index("name")
            return f.loc["C2->S1", "delivered_bytes"] / f["delivered_bytes"].sum()

    metrics = {
        "c2_share": c2_share,
        "c1_gbps": 'flows["C1->S1"].delivered_gbps',
        "hot_queue": 'queues["CORE->S1"].max_occupancy_bytes / 1000',
        "drop_ratio": "totals.dropped_bytes / totals.offered_bytes",
        "fair": "jain(flows.delivered_gbps)",
        "busiest": "max(queues.tx_bytes) * 8 / summary.duration_s",
    }
    df = cnsim.sweep(NO_CM, set=FAST, seeds=2, axes={"sources[C1->S1].load": [0.3, 0.48]}, out=out, jobs=2,
                     metrics=metrics)
    return out, df


def test_jain_index_is_over_the_flows_delivered_bytes(swept):
    out, df = swept
    assert (df.status == "ok").all() and len(df) == 4
    for row in df.itertuples():
        flows = cnsim.load_point(out, row.point_id).flows
        assert row.jain_index == pytest.approx(_jain(flows.delivered_bytes), rel=1e-12)
        assert 1 / len(flows) <= row.jain_index < 1


def test_user_metrics_equal_what_the_saved_tables_give(swept):
    out, df = swept
    for row in df.itertuples():
        r = cnsim.load_point(out, row.point_id)
        flows, queues = r.flows.set_index("name"), r.queues.set_index("name")
        assert row.c2_share == pytest.approx(flows.loc["C2->S1", "delivered_bytes"] / flows.delivered_bytes.sum())
        assert row.c1_gbps == flows.loc["C1->S1", "delivered_gbps"]
        assert row.hot_queue == queues.loc["CORE->S1", "max_occupancy_bytes"] / 1000
        assert row.drop_ratio == r.totals["dropped_bytes"] / r.totals["offered_bytes"]
        assert row.fair == pytest.approx(_jain(flows.delivered_gbps), rel=1e-12)
        assert row.busiest == pytest.approx(queues.tx_bytes.max() * 8 / r.summary["duration_s"])
    # the axis moves the metric of the flow it loads
    by_load = df.groupby("sources[C1->S1].load").c1_gbps.mean()
    assert by_load[0.48] > by_load[0.3]


def test_the_metrics_are_columns_of_summary_parquet_after_the_totals(swept):
    out, df = swept
    saved = cnsim.load_sweep(out)
    pd.testing.assert_frame_equal(saved, df.reset_index(drop=True), check_like=False)
    cols = list(saved.columns)
    assert cols.index("jain_index") > cols.index("dropped_frames")
    assert cols[-7:] == ["c2_share", "c1_gbps", "hot_queue", "drop_ratio", "fair", "busiest", "dir"]


def test_a_resumed_sweep_computes_new_metrics_from_the_saved_points(swept):
    out, df = swept
    before = point_snapshot(out)
    again = cnsim.sweep(NO_CM, set=FAST, seeds=2, axes={"sources[C1->S1].load": [0.3, 0.48]}, out=out,
                        metrics={"c3_gbps": 'flows["C3->S1"].delivered_gbps'})
    assert again.attrs["ran"] == 0 and point_snapshot(out) == before
    for row in again.itertuples():
        flows = cnsim.load_point(out, row.point_id).flows.set_index("name")
        assert row.c3_gbps == flows.loc["C3->S1", "delivered_gbps"]
    assert "c1_gbps" not in again.columns  # the summary describes the latest command


def test_a_metric_that_fails_is_nan_with_one_warning(tmp_path):
    with pytest.warns(SweepWarning) as caught:
        df = cnsim.sweep(NO_CM, set=FAST, seeds=2, out=tmp_path / "s",
                         metrics={"ghost": 'flows["X->Y"].delivered_gbps', "text": lambda r: "many",
                                  "ok": "totals.offered_frames"})
    assert df.ghost.isna().all() and df.text.isna().all()
    assert (df.ok == df.offered_frames).all()
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2  # one per failing metric
    assert messages[0].startswith("metric 'ghost' could not be computed on 2 points (NaN there); first: point ")
    assert "no flow named 'X->Y'" in messages[0]
    assert messages[1].startswith("metric 'text' could not be computed on 2 points") and "'many'" in messages[1]


@pytest.mark.parametrize(
    "metrics, message",
    [
        ({"x": "__import__('os').system('true')"}, "cannot evaluate"),
        ({"x": "flows.delivered_gbps"}, "is a whole column: take sum, mean, min, max or jain of it"),
        ({"x": "flows["}, "not an expression"),
        ({"x": "open('f').read()"}, "cannot evaluate"),
        ({"x": 3}, "expected a callable"),
        ({"seed": "totals.offered_frames"}, "'seed' is already a column of the summary"),
        ({"jain_index": "1"}, "already a column"),
        ({"a\x1b": "1"}, "control characters"),
    ],
)
def test_bad_metrics_are_refused_before_anything_runs(tmp_path, metrics, message):
    with pytest.raises(cnsim.SweepError, match=message):
        cnsim.sweep(NO_CM, set=FAST, out=tmp_path / "s", metrics=metrics)
    assert not (tmp_path / "s").exists()


SWEEP_FILE = """
name = "pair"
duration = "10ms"

[[switches]]
name = "SW"
[[hosts]]
name = "A"
[[hosts]]
name = "B"
[[hosts]]
name = "D"
[[links]]
between = ["A", "SW"]
[[links]]
between = ["B", "SW"]
[[links]]
between = ["D", "SW"]

[defaults.switch]
buffer = "60KB"

[[sources]]
host = "A"
to = "D"
load = 0.7
[[sources]]
host = "B"
to = "D"
load = 0.5

[sweep]
seeds = 2

[sweep.metrics]
a_share = 'flows["A->D"].delivered_bytes / (flows["A->D"].delivered_bytes + flows["B->D"].delivered_bytes)'
"""


def test_file_and_command_line_metrics(cli, write_scenario, tmp_path):
    path = write_scenario(SWEEP_FILE)
    out = tmp_path / "sw"
    res = cli("sweep", path, "--out", out, "--quiet", "--metric", "d_drops=queues[\"SW->D\"].drops_frames",
              "--metric", "unfair=1 - jain(flows.delivered_bytes)")
    assert res.code == 0, res.output
    df = cnsim.load_sweep(out)
    assert len(df) == 2
    for row in df.itertuples():
        r = cnsim.load_point(out, row.point_id)
        f, q = r.flows.set_index("name"), r.queues.set_index("name")
        assert row.a_share == f.loc["A->D", "delivered_bytes"] / f.delivered_bytes.sum()
        assert row.d_drops == q.loc["SW->D", "drops_frames"] > 0
        assert row.unfair == pytest.approx(1 - _jain(f.delivered_bytes), abs=1e-12)
        assert row.jain_index == pytest.approx(1 - row.unfair, abs=1e-12)
    # the file's metrics do not change point ids: the points are done
    res = cli("sweep", path, "--out", out, "--quiet")
    assert res.code == 0 and "a_share" in cnsim.load_sweep(out).columns


def test_bad_metric_options_and_file_metrics(cli, write_scenario, tmp_path):
    path = write_scenario(SWEEP_FILE)
    res = cli("sweep", path, "--out", tmp_path / "a", "--metric", "nothing")
    assert res.code == 2 and "--metric expects name=expression, got 'nothing'" in res.err
    bad = write_scenario(SWEEP_FILE.replace("a_share = '", "a_share = 'import os; "), "bad.toml")
    res = cli("sweep", bad, "--out", tmp_path / "b")
    assert res.code == 2 and "bad.toml: sweep.metrics.a_share = 'import os;" in res.err and "not an expression" in res.err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_jain_of_nothing_and_of_zeros():
    from cnsim.metrics import jain

    assert math.isnan(jain([])) and jain([0, 0]) == 0 and jain([3, 3, 3]) == 1
    assert jain([1, 0]) == 0.5
