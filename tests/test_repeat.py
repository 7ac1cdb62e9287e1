"""Replicated entries (``repeat`` over ``[params]``) through the API and the CLI."""

from __future__ import annotations

import json
import tomllib

import pytest

import cnsim

#: A core switch, EDGES edge switches with PER_EDGE clients each, all sending to HOT.
FABRIC = """
    name = "fabric"
    duration = "2ms"

    [params]
    edges = 4
    per_edge = 2

    [[switches]]
    name = "CORE"
    [[switches]]
    name = "E{e}"
    repeat = { e = "edges" }

    [[hosts]]
    name = "HOT"
    [[hosts]]
    name = "C{e}.{j}"
    repeat = { e = "edges", j = "per_edge" }

    [[links]]
    between = ["HOT", "CORE"]
    [[links]]
    between = ["E{e}", "CORE"]
    repeat = { e = "edges" }
    [[links]]
    between = ["C{e}.{j}", "E{e}"]
    repeat = { e = "edges", j = "per_edge" }

    [[sources]]
    host = "C{e}.{j}"
    to = "HOT"
    load = 0.1
    repeat = { e = "edges", j = "per_edge" }
"""


def client_flows(edges: int, per_edge: int) -> list[str]:
    return [f"C{e}.{j}->HOT" for e in range(1, edges + 1) for j in range(1, per_edge + 1)]


def test_run_with_a_resized_fabric(write_scenario):
    path = write_scenario(FABRIC)
    res = cnsim.run(path, seed=2, set={"params.edges": 3})
    assert res.flows["name"].tolist() == client_flows(3, 2)
    assert (res.flows["delivered_bytes"] > 0).all()
    assert "E3->CORE" in res.queues["name"].tolist()
    assert "E4->CORE" not in res.queues["name"].tolist()


def test_dict_scenario_repeats_too(write_scenario):
    as_dict = tomllib.loads(write_scenario(FABRIC).read_text())
    v = cnsim.validate(as_dict, set={"params.per_edge": 1, "sources[0].load": 0.2})
    assert [f["name"] for f in v["flows"]] == client_flows(4, 1)
    assert len(v["nodes"]) == 1 + 4 + 1 + 4


def test_cli_set_params(cli, write_scenario, tmp_path):
    path = write_scenario(FABRIC)
    out = tmp_path / "fabric"
    r = cli("run", path, "--set", "params.edges=2", "--set", "params.per_edge=3", "--out", out, "--quiet")
    assert r.code == 0, r
    assert list(cnsim.results.load(out).flows["name"]) == client_flows(2, 3)


def test_errors_in_copies_are_located_at_the_template(write_scenario):
    path = write_scenario(FABRIC)
    # Fewer clients than links to them: the link template names the missing copy.
    with pytest.raises(cnsim.ScenarioError) as exc:
        cnsim.validate(path, set={"hosts[1].repeat.e": 3})
    assert str(exc.value) == (
        f"{path}:26:12: links[2].between[0]: unknown node 'C4.1' (did you mean 'C1.1'?) (copy e=4, j=1)"
    )
    with pytest.raises(cnsim.ScenarioError, match=r"params\.edges: expected an integer >= 0, found -1"):
        cnsim.validate(path, set={"params.edges": -1})


# --------------------------------------------------------------------------- overrides of expanded entries

#: A leaf-spine (generated) with an incast into H2.1 from replicated sources.
INCAST = """
    name = "incast"
    duration = "2ms"

    [topology]
    kind = "leaf_spine"
    leaves = 2
    spines = 2
    hosts_per_leaf = 3

    [defaults.switch]
    buffer = "200KB"

    [[sources]]
    host = "H1.{h}"
    to = "H2.1"
    load = 0.6
    repeat = { h = 3 }
"""


def _drops(result: cnsim.Result) -> int:
    return int(result.totals["dropped_frames"])


def test_a_pattern_reaches_every_generated_switch_it_names(write_scenario):
    path = write_scenario(INCAST)
    base = cnsim.run(path)
    small = cnsim.run(path, set={"switches[L*].buffer": "20KB"})
    by_name = cnsim.run(path, set={"switches[L1].buffer": "20KB", "switches[L2].buffer": "20KB"})
    assert _drops(small) > _drops(base)
    assert small.equals(by_name)  # the pattern is the overrides of each leaf by name
    # The spines' pattern names the spines only: a result of its own.
    spines = cnsim.run(path, set={"switches[S*].buffer": "20KB"})
    assert not spines.equals(small) and not spines.equals(base)


def test_copied_sources_are_selected_by_the_names_validation_gives_them(write_scenario):
    path = write_scenario(INCAST)
    res = cnsim.run(path, set={"sources[H1.2->H2.1].load": 0.2, "sources[H1.3->*].load": 0.1})
    offered = res.flows.set_index("name")["offered_gbps"]
    base = cnsim.run(path).flows.set_index("name")["offered_gbps"]
    assert offered["H1.1->H2.1"] == base["H1.1->H2.1"]
    assert offered["H1.2->H2.1"] == pytest.approx(base["H1.2->H2.1"] / 3, rel=0.15)
    assert offered["H1.3->H2.1"] == pytest.approx(base["H1.3->H2.1"] / 6, rel=0.2)


def test_cli_set_with_a_pattern_and_one_that_matches_nothing(cli, write_scenario, tmp_path):
    path = write_scenario(INCAST)
    res = cli("run", path, "--set", "switches[L*].buffer=20KB", "--out", tmp_path / "r", "--quiet")
    assert res.code == 0, res.output
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["totals"]["dropped_frames"] == _drops(cnsim.run(path, set={"switches[L*].buffer": "20KB"}))
    res = cli("validate", path, "--set", "switches[leaf*].buffer=20KB")
    assert res.code == 2
    assert ("error: --set switches[leaf*].buffer=20KB: switches[leaf*].buffer: no entry of 'switches' matches "
            "the pattern 'leaf*'; switches are 'L1', 'L2', 'S1', 'S2'") in res.err
    res = cli("validate", path, "--set", "sources[H1->H5].load=0.2")
    assert res.code == 2 and "no entry of 'sources' is named 'H1->H5'" in res.err and "'H1.1->H2.1'" in res.err


def test_a_sweep_axis_may_use_a_pattern(write_scenario, tmp_path):
    path = write_scenario(INCAST)
    key = "switches[L*].buffer"
    df = cnsim.sweep(path, axes={key: ["20KB", "200KB"]}, out=tmp_path / "sw", jobs=1)
    assert list(df["status"]) == ["ok", "ok"]
    assert list(df[key]) == ["20KB", "200KB"]
    expected = [_drops(cnsim.run(path, set={key: v})) for v in ("20KB", "200KB")]
    assert list(df["dropped_frames"]) == expected and expected[0] > expected[1]
    with pytest.raises(cnsim.SweepError, match=r"no entry of 'switches' matches the pattern 'X\*'"):
        cnsim.sweep_points(path, axes={"switches[X*].buffer": ["20KB"]})
