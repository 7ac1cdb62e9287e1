"""Saving and loading result directories."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import cnsim
from cnsim import _core
from cnsim.results import TABLES, ResultError

from conftest import NO_CM


@pytest.fixture(scope="module")
def result() -> cnsim.Result:
    return cnsim.run(NO_CM, seed=5, duration="10ms")


def test_save_load_round_trip(result, tmp_path):
    path = result.save(tmp_path / "run")
    files = sorted(["summary.json"] + [f"{t}.parquet" for t in TABLES])
    assert sorted(p.name for p in path.iterdir()) == sorted([".cnsim-result", *files])
    marker = json.loads((path / ".cnsim-result").read_text())
    assert marker["cnsim"] == "result" and marker["engine_id"] == result.summary["engine_id"]
    assert sorted(marker["files"]) == files
    flows = marker["files"]["flows.parquet"]
    assert flows["bytes"] == (path / "flows.parquet").stat().st_size
    assert flows["sha256"] == hashlib.sha256((path / "flows.parquet").read_bytes()).hexdigest()
    loaded = cnsim.Result.load(path)
    assert loaded.path == path
    assert loaded.summary == result.summary
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(loaded, name), getattr(result, name), obj=name)
    assert loaded.equals(result, ignore_timing=False)


def test_summary_json_is_plain_json(result, tmp_path):
    result.save(tmp_path / "run")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["scenario_file"] == str(NO_CM)
    assert summary["bin_s"] == result.bin_s


def test_save_replaces_an_old_result_only_with_force(result, tmp_path):
    target = tmp_path / "run"
    result.save(target, figures="svg")
    assert (target / "figures" / "drops.svg").is_file()
    with pytest.raises(ResultError, match="holds an earlier cnsim result; use --force"):
        result.save(target)
    result.save(target, force=True)
    assert not (target / "figures").exists()
    assert cnsim.Result.load(target).equals(result)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no temp or old dirs left


def test_force_never_replaces_files_cnsim_did_not_write(result, tmp_path):
    target = tmp_path / "run"
    result.save(target, figures="png")
    (target / "notes.md").write_text("mine")
    (target / "figures" / "edited.png").write_bytes(b"mine")
    with pytest.raises(ResultError, match=r"holds files cnsim did not write \(figures/, notes.md\)"):
        result.save(target, force=True)
    assert (target / "notes.md").read_text() == "mine"
    assert (target / "figures" / "edited.png").read_bytes() == b"mine"


def test_results_saved_before_the_marker_can_be_replaced(result, tmp_path):
    target = tmp_path / "run"
    result.save(target)
    (target / ".cnsim-result").unlink()
    with pytest.raises(ResultError, match="use --force"):
        result.save(target)
    result.save(target, force=True)
    assert (target / ".cnsim-result").is_file()
    # a summary.json alone (no engine id) is not a result
    other = tmp_path / "other"
    other.mkdir()
    (other / "summary.json").write_text("{}")
    with pytest.raises(ResultError, match="not a cnsim result directory"):
        result.save(other, force=True)


def test_load_names_a_damaged_file(result, tmp_path):
    target = result.save(tmp_path / "run")
    flows = target / "flows.parquet"
    size = flows.stat().st_size
    flows.write_bytes(flows.read_bytes()[: size // 2])
    with pytest.raises(ResultError, match=rf"flows.parquet truncated \(expected {size} bytes, found {size // 2}\)"):
        cnsim.Result.load(target)
    flows.write_bytes(b"x" * size)
    with pytest.raises(ResultError, match="flows.parquet changed since cnsim wrote it"):
        cnsim.Result.load(target)
    flows.unlink()
    with pytest.raises(ResultError, match="flows.parquet is missing"):
        cnsim.Result.load(target)


def test_save_into_nested_new_dirs(result, tmp_path):
    path = result.save(tmp_path / "a" / "b" / "c")
    assert (path / "summary.json").is_file()


def test_interrupted_save_leaves_nothing_that_looks_complete(result, tmp_path, monkeypatch):
    target = tmp_path / "run"
    calls = {"n": 0}
    real = pd.DataFrame.to_parquet

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", flaky)
    with pytest.raises(OSError, match="disk full") as exc:
        result.save(target)
    assert str(target) in str(exc.value)  # says what could not be written
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_interrupted_save_keeps_the_previous_result(result, tmp_path, monkeypatch):
    target = tmp_path / "run"
    result.save(target)
    before = (target / "summary.json").read_text()

    def broken(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_parquet", broken)
    with pytest.raises(KeyboardInterrupt):
        result.save(target, force=True)
    assert (target / "summary.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_refuses_to_replace_other_things(result, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ResultError, match=r"not a cnsim result directory \(it holds notes.txt\); refusing"):
        result.save(other, force=True)
    assert (other / "notes.txt").read_text() == "mine"
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ResultError, match="not a directory"):
        result.save(a_file, force=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    result.save(empty)
    assert (empty / "summary.json").is_file()


def test_load_errors(tmp_path):
    with pytest.raises(ResultError, match="no such result"):
        cnsim.Result.load(tmp_path / "missing")
    with pytest.raises(ResultError, match="not a cnsim result"):
        cnsim.Result.load(tmp_path)
    (tmp_path / "summary.json").write_text("{}")
    with pytest.raises(ResultError, match="incomplete"):
        cnsim.Result.load(tmp_path)


def test_repr(result):
    text = repr(result)
    assert result.name in text and "seed=5" in text


def test_active_rate_is_the_mean_over_each_rows_first_to_last_busy_bin():
    from cnsim.results import _active_rate

    rng = np.random.default_rng(3)
    matrix = rng.integers(0, 3, size=(40, 9)).astype(np.uint64) * rng.integers(0, 10**6, size=(40, 9)).astype(np.uint64)
    matrix[0] = 0  # a silent row
    matrix[1] = [0, 0, 5, 0, 0, 0, 0, 0, 0]  # one busy bin
    bin_s = 1e-4
    want = np.zeros(len(matrix))
    for i, row in enumerate(matrix):
        nz = np.flatnonzero(row)
        if nz.size:
            want[i] = float(row.sum()) * 8.0 / ((nz[-1] - nz[0] + 1) * bin_s) / 1e9
    got = _active_rate(matrix, bin_s)
    assert got.tobytes() == want.tobytes()
    assert got[0] == 0.0 and got[1] == 5 * 8.0 / bin_s / 1e9
    assert _active_rate(np.zeros((0, 4), dtype=np.uint64), bin_s).size == 0


# --------------------------------------------------------------------------- the series schema

#: A run with every series of flows and queues: QCN rate limiters and DCTCP flows.
QCN_TCP = NO_CM.parent.parent / "qcn_tcp" / "hotspot.toml"
#: A run with the series of shared-buffer switches and of their ingress queues.
SHARED = NO_CM.parent.parent / "pfc" / "incast_1000.toml"
SERIES_NAMES = [name for name, _, _ in _core.SERIES]
#: The kinds of rows only the shared-buffer run has.
SHARED_KINDS = ("buffers", "ingress")
BUFFER_SERIES = [name for name, kind, _ in _core.SERIES if kind in SHARED_KINDS]


@pytest.fixture(scope="module")
def raw_qcn_tcp() -> dict:
    return _core.run(
        QCN_TCP.read_text(), str(QCN_TCP), [("qcn.enabled", "true"), ("tcp.ecn", "dctcp"), ("duration", "10ms")]
    )


@pytest.fixture(scope="module")
def raw_shared() -> dict:
    return _core.run(
        SHARED.read_text(),
        str(SHARED),
        [("params.senders", "20"), ("duration", "1ms"), ("metrics.ingress_occupancy", "true")],
    )


@pytest.mark.parametrize("fixture", ["raw_qcn_tcp", "raw_shared"])
def test_run_returns_the_declared_series(request, fixture):
    raw = request.getfixturevalue(fixture)
    assert len(set(SERIES_NAMES)) == len(SERIES_NAMES)
    assert set(raw) >= {"summary", "bin_s", "n_bins", "flows", "queues", *SERIES_NAMES}
    summary = json.loads(raw["summary"])
    # The limiter series have a row per flow that had a limiter, in flow order.
    rl_flows = raw["flow_rl_flows"]
    assert list(rl_flows) == sorted(set(rl_flows))
    assert set(rl_flows) == set(np.flatnonzero(np.asarray(raw["flows"]["rl_installs"]) > 0))
    rows = {
        "flows": len(raw["flows"]["name"]),
        "limiters": len(rl_flows),
        "queues": len(raw["queues"]["name"]),
        "buffers": len(summary.get("buffers", [])),
        "ingress": len(summary.get("ingress", [])),
    }
    for name, kind, dtype in _core.SERIES:
        matrix = raw[name]
        assert matrix.dtype == np.dtype(dtype), name
        if (fixture == "raw_shared") == (kind in SHARED_KINDS):
            assert matrix.shape == (rows[kind], raw["n_bins"]) and rows[kind] > 0, name
        elif kind in SHARED_KINDS:
            assert matrix.shape == (0, raw["n_bins"]), name


def test_records_come_as_columns_not_in_the_summary(raw_qcn_tcp):
    summary = json.loads(raw_qcn_tcp["summary"])
    assert "flows" not in summary and "queues" not in summary
    flows, queues = raw_qcn_tcp["flows"], raw_qcn_tcp["queues"]
    # The records' fields in their order: names, then counters.
    assert list(flows)[:6] == ["name", "source", "src", "dst", "transport", "offered_frames"]
    assert list(queues)[:5] == ["name", "node", "peer", "node_kind", "drops_frames"]
    for records in (flows, queues):
        assert len({len(column) for column in records.values()}) == 1
    # Text comes as Arrow strings: one buffer of bytes, no Python object per row.
    assert flows["delivered_bytes"].dtype == np.int64 and flows["transport"].type == pa.large_string()
    names = flows["name"].to_pylist()
    assert all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names)
    assert queues["paused_time_s"].dtype == np.float64
    # An optional threshold is NaN where the queue has none (no ECN here).
    assert queues["ecn_kmin_bytes"].dtype == np.float64 and np.isnan(queues["ecn_kmin_bytes"]).all()
    assert queues["qeq_bytes"].dtype == np.float64 and not np.isnan(queues["qeq_bytes"]).all()
    # The columns add up to the totals, which the engine counts apart.
    totals = summary["totals"]
    assert int(flows["delivered_bytes"].sum()) == totals["delivered_bytes"] > 0
    assert int(flows["offered_frames"].sum()) == totals["offered_frames"]
    assert int(flows["dropped_frames"].sum()) == totals["dropped_frames"]
    result = cnsim.Result.from_core(raw_qcn_tcp)
    assert result.flows["delivered_bytes"].tolist() == flows["delivered_bytes"].tolist()
    assert result.summary["jain_index"] == pytest.approx(
        flows["delivered_bytes"].sum() ** 2 / (len(flows["name"]) * (flows["delivered_bytes"].astype(float) ** 2).sum()))


def test_record_text_becomes_the_column_pandas_makes_of_a_list_of_str(raw_qcn_tcp, monkeypatch):
    """Where pandas keeps strings in Arrow the array is taken as it is; where it keeps
    Python objects (pandas 2), the column holds them. Either way the table equals one made
    from lists of str."""
    from cnsim import results

    flows = raw_qcn_tcp["flows"]
    as_lists = {c: v.to_pylist() if isinstance(v, pa.Array) else v for c, v in flows.items()}
    pd.testing.assert_frame_equal(results._record_frame(flows, ()), pd.DataFrame(as_lists), check_exact=True)
    # The other path, as pandas 2 would take it: Python objects, which this pandas then
    # stores as it stores a list of them.
    monkeypatch.setattr(results, "_list_string_dtype", lambda: np.dtype(object))
    assert isinstance(results._text_column(flows["name"]), np.ndarray)
    pd.testing.assert_frame_equal(results._record_frame(flows, ()), pd.DataFrame(as_lists), check_exact=True)


def test_a_consumed_raw_result_gives_the_same_tables_and_lets_go_of_its_flow_records(raw_qcn_tcp):
    """``cnsim.run`` builds its Result with ``consume=True``: the engine's flow records and
    per-flow byte counts leave the raw dict once tabled, and the tables are the same."""
    raw = dict(raw_qcn_tcp)
    kept = cnsim.Result.from_core(raw_qcn_tcp)
    consumed = cnsim.Result.from_core(raw, consume=True)
    assert not {"flows", "flow_tx_bytes", "flow_rx_bytes"} & set(raw)
    assert {"flows", "flow_tx_bytes", "flow_rx_bytes"} <= set(raw_qcn_tcp)
    for t in TABLES:
        pd.testing.assert_frame_equal(getattr(kept, t), getattr(consumed, t), check_exact=True)


def test_a_run_without_a_scheme_or_tcp_has_no_rows_of_their_series():
    raw = _core.run(NO_CM.read_text(), str(NO_CM), [("duration", "6ms")])
    empty = {name for name in SERIES_NAMES if raw[name].shape == (0, raw["n_bins"])}
    assert empty == {name for name in SERIES_NAMES if name.startswith("flow_rl_")} | {
        "flow_cwnd_mean",
        "flow_retransmissions",
        "flow_timeouts",
        "flow_alpha_mean",
        *BUFFER_SERIES,
    }
    result = cnsim.Result.from_core(raw)
    assert result.rate_limiters.empty and result.transport.empty


@pytest.mark.parametrize("name", SERIES_NAMES)
def test_every_series_shows_in_a_table(request, name):
    """A series the engine returns that no table reads is caught here: changing it changes a table."""
    raw = request.getfixturevalue("raw_shared" if name in BUFFER_SERIES else "raw_qcn_tcp")
    before = cnsim.Result.from_core(raw)
    after = cnsim.Result.from_core({**raw, name: raw[name] + 1})
    assert not all(getattr(before, t).equals(getattr(after, t)) for t in TABLES), name


# --------------------------------------------------------------------------- display in a notebook


def _balanced(page: str) -> bool:
    """Every opened tag is closed, in order (html.parser's view)."""
    from html.parser import HTMLParser

    stack: list[str] = []
    ok = [True]

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            stack.append(tag)

        def handle_endtag(self, tag):
            ok[0] &= bool(stack) and stack.pop() == tag

    Parser().feed(page)
    return ok[0] and not stack


def test_a_result_shows_a_short_summary_in_a_notebook(result):
    page = result._repr_html_()
    assert _balanced(page)
    assert "baseline/no_cm" in page and "seed 5" in page and "10 ms simulated" in page
    assert "5 flows" in page and f"{len(result.queues)} queues" in page
    dropped = result.totals["dropped_frames"]
    assert dropped > 1000 and "<th>dropped frames</th>" in page and f"{dropped:,}" in page
    assert all(f"<td>{name.replace('->', '-&gt;')}</td>" in page for name in result.flows["name"])  # escaped
    assert "partial" not in page


def test_the_summary_shows_the_first_flows_escapes_names_and_says_partial():
    many = {"name": "<script>x</script>", "duration": "1ms", "switches": [{"name": "SW"}],
            "hosts": [{"name": f"H{i}"} for i in range(8)] + [{"name": "D&<"}],
            "links": [{"between": [f"H{i}", "SW"]} for i in range(8)] + [{"between": ["D&<", "SW"]}],
            "sources": [{"host": f"H{i}", "to": "D&<", "load": 0.1} for i in range(8)]}
    page = cnsim.run(many, max_events=500)._repr_html_()
    assert _balanced(page) and "<script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    assert "first 5 of 8 flows" in page and page.count("<td>D&amp;&lt;</td>") == 5
    assert "partial result</b> at" in page and "max_events" in page


@pytest.mark.parametrize(
    "scenario, duration",
    [
        ("scenarios/baseline/bcn.toml", "12ms"),  # rate limiters
        ("scenarios/dctcp/long_flows.toml", "2ms"),  # transport
        ("scenarios/pfc/lossless_and_lossy.toml", "1ms"),  # buffers
    ],
)
def test_name_columns_built_in_arrow_equal_numpy_repeats(monkeypatch, scenario, duration):
    """The long tables' name columns (`_repeat_names`) are what pandas made of
    `np.repeat` before: same values, same dtype, for every table."""
    from cnsim import api, results
    from cnsim.overrides import override_pairs

    text = open(scenario, encoding="utf-8").read()
    raw = api._run_core(text, scenario, override_pairs({"duration": duration}, {}), "toml", None, False)
    fast = results.Result.from_core(raw)
    monkeypatch.setattr(results, "_repeat_names", np.repeat)
    slow = results.Result.from_core(raw)
    tables = fast.tables()
    assert tables.keys() == slow.tables().keys()
    checked = 0
    for name, table in tables.items():
        pd.testing.assert_frame_equal(table, slow.tables()[name], check_exact=True, obj=name)
        checked += len(table) > 0
    assert checked >= 5
    names = fast.flow_throughput["flow"]
    assert names.dtype == pd.Series(["a"]).dtype
