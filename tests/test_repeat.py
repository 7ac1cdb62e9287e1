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
    summary = json.loads((out / "summary.json").read_text())
    assert [f["name"] for f in summary["flows"]] == client_flows(2, 3)


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
