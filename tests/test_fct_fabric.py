"""Study F (fct_fabric) in its --quick form: every variant runs to the last
flow on the 320-host fabric, the lossless variants lose nothing, and the
report holds the study's tables and figures."""

from __future__ import annotations

import pytest

from cnsim import studies
from cnsim.studies import fct_fabric


@pytest.fixture(scope="module")
def quick(quick_reproduction):
    return quick_reproduction("fct_fabric")


@pytest.fixture(scope="module")
def runs(quick):
    from cnsim.sweep import load_point, load_sweep

    frame = load_sweep(quick)
    assert (frame["status"] == "ok").all()
    return {v: load_point(quick, frame.loc[frame["variant"] == v, "point_id"].iloc[0])
            for v in frame["variant"]}


def test_the_fabric_is_the_320_host_clos_with_its_tiers():
    import cnsim

    resolved = cnsim.validate(studies.scenario_path("fct_fabric/fabric.toml"))
    hosts = [n for n in resolved["nodes"] if n["kind"] == "host"]
    switches = [n["name"] for n in resolved["nodes"] if n["kind"] == "switch"]
    assert len(hosts) == 320 and len(switches) == 56
    tiers = [fct_fabric._tier(s) for s in switches]
    assert (tiers.count("ToR"), tiers.count("aggregation"), tiers.count("core")) == (20, 20, 16)
    rates = sorted({link["rate_bps"] for link in resolved["links"]})
    assert rates == [100e9, 400e9]


def test_every_variant_finishes_every_flow_without_loss(runs):
    assert set(runs) == set(fct_fabric.VARIANTS)
    for name, r in runs.items():
        s = r.summary["fct"]
        assert s["unfinished"] == 0 and s["flows"] > 100, name
        assert r.summary["totals"]["dropped_frames"] == 0, name
        assert (r.flows.loc[r.flows["workload"].notna(), "slowdown"] >= 1.0).all(), name
        # Retransmissions would mean loss: none on a lossless fabric.
        assert r.flows["retransmissions"].fillna(0).sum() == 0, name
        has_incast = "incast" in set(r.flows["workload"].dropna())
        assert has_incast == name.endswith("-incast"), name


def test_the_variants_run_the_same_flows(runs):
    cols = ["name", "src", "dst", "size_bytes", "start_s"]
    base = runs["dcqcn-incast"].flows[cols].reset_index(drop=True)
    for name in ("dctcp-incast", "pfc-incast"):
        assert runs[name].flows[cols].reset_index(drop=True).equals(base), name
    transports = set(runs["dctcp-web"].flows["transport"].dropna())
    assert transports == {"tcp"}


def test_the_report_has_the_study_tables_and_figures(quick):
    text = (quick / "report.html").read_text()
    for title in ("FCT slowdown per variant", "PFC pause time per tier", "Shared buffer: peak use per tier",
                  "Run cost on this machine", "FCT slowdown by flow size, web search at 30%"):
        assert title in text, title
    # The paper's schemes that cnsim does not model yet keep their place: named, and not run.
    for scheme in ("HPCC", "TIMELY", "Swift"):
        assert scheme in text, scheme
    assert not set(fct_fabric.PLANNED) & set(fct_fabric.SCHEMES)


def test_the_longest_runs_start_first_and_the_report_keeps_the_variants_order(quick):
    from cnsim import report
    from cnsim.sweep import load_sweep

    spec = studies.get("fct_fabric")
    order = report.start_order(spec, list(fct_fabric.VARIANTS))
    assert order == ["pfc-incast", "dcqcn-incast", "pfc-web", "dcqcn-web", "dctcp-web", "dctcp-incast"]
    # The sweep was handed the runs in that order; the report's table lists them by name, as before.
    assert list(load_sweep(quick)["variant"]) == order
    text = (quick / "report.html").read_text()
    table = text[text.index("FCT slowdown per variant"):]
    assert sorted(fct_fabric.VARIANTS, key=table.index) == sorted(fct_fabric.VARIANTS)


def test_a_study_refuses_to_start_a_variant_it_does_not_have():
    from dataclasses import replace

    spec = studies.get("fct_fabric")
    with pytest.raises(ValueError, match="run_first names no sweep variant: dcqcn-hadoop"):
        studies.register(replace(spec, name="fct_fabric_copy", run_first=("dcqcn-hadoop",)))
