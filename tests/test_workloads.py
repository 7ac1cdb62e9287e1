"""Flow workloads from Python: the flows table's completion times, the
slowdown bins, the summary, saving and loading, figures, and the errors of
a [[workloads]] section."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import cnsim
from cnsim import fct
from cnsim.results import Result

SCENARIO = "scenarios/workloads/websearch_incast.toml"
# A quicker form of the shipped scenario: 1 ms of arrivals.
QUICK = {"workloads[0].stop": "1ms", "workloads[1].stop": "1ms"}


@pytest.fixture(scope="module")
def result() -> Result:
    return cnsim.run(SCENARIO, set=QUICK)


def test_every_workload_flow_has_its_size_times_and_a_slowdown_of_at_least_one(result):
    w = fct.workload_flows(result.flows)
    assert len(w) == result.summary["fct"]["flows"] > 20
    assert set(w["workload"]) == {"web", "incast"}
    assert w["finish_s"].notna().all()  # the run lasted until every flow finished
    assert (w["delivered_bytes"] == w["size_bytes"]).all()
    assert np.allclose(w["fct_s"], w["finish_s"] - w["start_s"], rtol=0, atol=1e-15)
    # No flow beats the ideal: the same flow alone on the idle fabric.
    assert (w["slowdown"] >= 1.0).all()
    assert np.allclose(w["slowdown"], w["fct_s"] / w["ideal_fct_s"])
    assert (w["start_s"] < 1e-3).all()
    incast = w[w["workload"] == "incast"]
    assert len(incast) % 8 == 0 and (incast["size_bytes"] == 250_000).all()
    # Each incast: 8 senders start together toward one receiver.
    for _, event in incast.groupby("start_s"):
        assert len(event) == 8 and event["dst"].nunique() == 1 and event["src"].nunique() == 8
    assert result.summary["flows_finished_s"] == pytest.approx(w["finish_s"].max(), abs=1e-15)


def test_the_slowdown_bins_cover_every_flow_in_size_order(result):
    b = result.fct_bins
    w = fct.workload_flows(result.flows)
    assert len(b) == 20 and b["flows"].sum() == len(w) and b["finished"].sum() == len(w)
    assert (b["size_min_bytes"] <= b["size_max_bytes"]).all()
    assert (b["size_max_bytes"].to_numpy()[:-1] <= b["size_min_bytes"].to_numpy()[1:]).all()
    # Bin k holds the k-th 5% of the flows by size: its median is theirs.
    sizes = w.sort_values(["size_bytes", "start_s", "name"], kind="stable")
    first = sizes.iloc[: b["flows"].iloc[0]]
    assert b["slowdown_median"].iloc[0] == pytest.approx(first["slowdown"].median())
    assert (b["slowdown_median"] <= b["slowdown_p99"]).all()


def test_the_summary_splits_short_and_long_flows(result):
    s = result.summary["fct"]
    w = fct.workload_flows(result.flows)
    assert s["unfinished"] == 0 and s["finished"] == len(w)
    assert s["short"]["flows"] == int((w["size_bytes"] < 100_000).sum())
    assert s["long"]["flows"] == int((w["size_bytes"] >= 10_000_000).sum())
    assert s["overall"]["slowdown_p99"] >= s["overall"]["slowdown_median"] >= 1.0


def test_workload_bytes_are_binned_under_the_workload_s_name(result):
    ft = result.flow_throughput
    w = fct.workload_flows(result.flows)
    for name in ("web", "incast"):
        delivered = ft[ft["flow"] == name]["delivered_gbps"].sum() * result.bin_s * 1e9 / 8
        assert delivered == pytest.approx(w[w["workload"] == name]["size_bytes"].sum(), rel=1e-9)
    # Levels of many flows in one row mean nothing: none are reported.
    assert not set(result.rate_limiters["flow"]) & {"web", "incast"}


def test_a_saved_result_loads_with_its_flows_and_bins(result, tmp_path):
    path = result.save(tmp_path / "r", figures="png")
    back = Result.load(path)
    assert back.fct_bins.equals(result.fct_bins)
    assert back.summary["fct"] == result.summary["fct"]
    cols = ["name", "size_bytes", "fct_s", "slowdown"]
    assert back.flows[cols].equals(result.flows[cols])
    figures = {p.name for p in (path / "figures").iterdir()}
    assert {"fct_slowdown.png", "fct_cdf.png"} <= figures


def test_the_same_seed_gives_the_same_flows_and_times(result):
    again = cnsim.run(SCENARIO, set=QUICK)
    cols = ["name", "src", "dst", "size_bytes", "start_s", "finish_s"]
    assert again.flows[cols].equals(result.flows[cols])
    other = cnsim.run(SCENARIO, set=QUICK, seed=2)
    assert not other.flows[cols].equals(result.flows[cols])


def _error(tmp_path, text: str) -> str:
    path = tmp_path / "w.toml"
    path.write_text(text)
    with pytest.raises(cnsim.ScenarioError) as e:
        cnsim.validate(path)
    return str(e.value)


BASE = """duration = "1ms"
[[switches]]
name = "S"
[[hosts]]
name = "A"
[[hosts]]
name = "B"
[[links]]
between = ["A", "S"]
[[links]]
between = ["B", "S"]
"""


def test_a_size_distribution_file_is_read_beside_the_scenario_and_its_errors_name_the_line(tmp_path):
    (tmp_path / "mine.csv").write_text("# my sizes\n0,0\n1000,50\n500,100\n")
    msg = _error(tmp_path, BASE + '[[workloads]]\nname = "w"\nsizes = "mine.csv"\nload = 0.5\n')
    assert "workloads[0].sizes" in msg and "mine.csv, line 4" in msg and "increasing" in msg
    (tmp_path / "mine.csv").write_text("0,0\n1000,50\n3000,100\n")
    path = tmp_path / "ok.toml"
    path.write_text(BASE + '[[workloads]]\nname = "w"\nsizes = "mine.csv"\nload = 0.5\n')
    assert cnsim.validate(path) is not None
    msg = _error(tmp_path, BASE + '[[workloads]]\nname = "w"\nsizes = "webseach"\nload = 0.5\n')
    assert "websearch, fb_hadoop" in msg and "webseach" in msg


@pytest.mark.parametrize(
    "section, field, words",
    [
        ('name = "w"\nsizes = "websearch"\nload = 1.5', "workloads[0].load", "(0, 1]"),
        ('name = "w"\nsizes = "websearch"\nload = 0.5\ntransport = "udp"', "workloads[0].transport", '"roce" or "tcp"'),
        ('name = "w"\nkind = "incast"\nto = "A"\nfan_in = 2\nbytes = "1KB"\nat = "10us"', "workloads[0].fan_in",
         "1 to 1 senders"),
        ('name = "w"\nkind = "incast"\nfan_in = 1\nbytes = "1KB"', "workloads[0]", "'at' or 'load'"),
        ('name = "w"\nkind = "list"\nflows = [{ from = "A", to = "A", size = 10, start = "0s" }]',
         "workloads[0].flows[0].to", "its own host"),
        ('name = "w"\nkind = "list"\nflows = [{ from = "A", to = "B", size = 10, start = "2ms" }]',
         "workloads[0].flows[0].start", "before the end of the run"),
        ('name = "w"\nsizes = "websearch"\nload = 0.5\nfan_in = 3', "workloads[0].fan_in", "does not apply"),
        ('name = "w#1"\nsizes = "websearch"\nload = 0.5', "workloads[0].name", "'#'"),
        ('name = "w"\nsizes = "websearch"\nload = 0.5\nhosts = ["A"]', "workloads[0].hosts", "at least two hosts"),
    ],
)
def test_workload_errors_name_their_field(tmp_path, section, field, words):
    msg = _error(tmp_path, BASE + "[[workloads]]\n" + section + "\n")
    assert field in msg and words in msg, msg


def test_until_flows_finished_needs_a_workload_and_a_plain_run_is_unchanged(tmp_path):
    msg = _error(tmp_path, 'until = "flows_finished"\n' + BASE + '[[sources]]\nhost = "A"\nto = "B"\nload = 0.5\n')
    assert "until" in msg and "[[workloads]]" in msg
    path = tmp_path / "plain.toml"
    path.write_text(BASE + '[[sources]]\nhost = "A"\nto = "B"\nload = 0.5\n')
    plain = cnsim.run(path)
    assert "workload" not in plain.flows.columns and plain.fct_bins.empty and "fct" not in plain.summary
    assert not math.isnan(plain.flows["delivered_gbps"].iloc[0])


PRIORITIES = BASE + """[priorities]
classes = 4
[[sources]]
host = "A"
to = "B"
load = 0.1
[[workloads]]
name = "low"
kind = "list"
priority = 1
flows = [{ from = "A", to = "B", size = 1000, start = "10us" }, { from = "B", to = "A", size = 5000, start = "20us" }]
[[workloads]]
name = "high"
kind = "list"
flows = [{ from = "B", to = "A", size = 2000, start = "30us", priority = 2 }]
"""


def test_each_workload_flow_has_its_own_priority_in_the_table_and_on_disk(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "p.toml"
    path.write_text(PRIORITIES)
    result = cnsim.run(path)
    flows = result.flows.set_index("name")
    # One number per row (NaN for the source's flow), not one object holding every flow's priority.
    assert flows["priority"].dtype == np.float64
    assert flows["priority"].to_dict() == pytest.approx(
        {"A->B": math.nan, "low#0": 1, "low#1": 1, "high#0": 2}, nan_ok=True)
    saved = result.save(tmp_path / "r")
    assert pa.types.is_floating(pq.read_schema(saved / "flows.parquet").field("priority").type)
    assert Result.load(saved).equals(result)


def test_a_result_saved_with_the_priorities_as_one_bytes_object_loads_with_one_per_row(tmp_path):
    """Earlier builds repeated every flow's priority, as one bytes object, on each workload row."""
    import pyarrow.parquet as pq

    path = tmp_path / "p.toml"
    path.write_text(PRIORITIES)
    result = cnsim.run(path)
    workload = result.flows["workload"].notna()
    old = result.flows.copy()
    old["priority"] = pd.Series([bytes([1, 1, 2]) if w else None for w in workload], dtype=object)
    saved = Result(result.summary, old, result.queues, result.flow_throughput, result.link_throughput,
                   result.queue_occupancy, fct_bins=result.fct_bins).save(tmp_path / "old")
    assert pq.read_schema(saved / "flows.parquet").field("priority").type == "binary"
    back = Result.load(saved)
    assert back.flows.columns.tolist() == result.flows.columns.tolist()
    assert back.flows.equals(result.flows)
