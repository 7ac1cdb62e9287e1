"""The ns-3 side-by-side script (bench/peers/ns3/compare.py) without ns-3: its command line, how it reads
each engine's output, its agreement rules, and that fat_tree.toml describes the network fat_tree.cc
builds."""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, scenario_file

PEERS = ROOT / "bench" / "peers" / "ns3"


@pytest.fixture(scope="module")
def compare():
    spec = importlib.util.spec_from_file_location("peers_ns3_compare", PEERS / "compare.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def args(compare, *argv: str) -> argparse.Namespace:
    return compare.parser().parse_args(list(argv))


def test_help_works_without_ns3():
    r = subprocess.run([sys.executable, str(PEERS / "compare.py"), "--help"], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert "--scenario {drop_tail,fat_tree}" in r.stdout
    assert "--ecmp {hash,random}" in r.stdout


def test_fat_tree_options_are_refused_for_drop_tail(compare, capsys):
    with pytest.raises(SystemExit) as exc:
        compare.main(["--k", "4"])
    assert exc.value.code == 2
    assert "only with --scenario fat_tree: --k" in capsys.readouterr().err


def test_each_engine_gets_the_same_k_load_and_duration(compare):
    ft = compare.FAT_TREE
    a = args(compare, "--scenario", "fat_tree", "--k", "4", "--load", "0.9", "--duration", "20ms")
    assert ft.ns3_args(a) == ["--k", "4", "--load", "0.9", "--ecmp", "hash", "--duration", "20ms"]
    assert ft.cnsim_sets(a) == ["params.k=4", "params.half=2", "defaults.source.load=0.9", "duration=20ms"]
    # Without --duration cnsim keeps the scenario's and ns-3 is given the same.
    a = args(compare, "--scenario", "fat_tree")
    assert ft.ns3_args(a)[-2:] == ["--duration", ft.default_duration]
    assert not any(s.startswith("duration=") for s in ft.cnsim_sets(a))
    dt = compare.DROP_TAIL
    assert dt.ns3_args(args(compare)) == [] and dt.cnsim_sets(args(compare)) == []
    assert dt.ns3_args(args(compare, "--duration", "20ms")) == ["--duration", "20ms"]


def test_fat_tree_toml_is_the_network_fat_tree_cc_builds(compare):
    sc = scenario_file(PEERS / "fat_tree.toml")
    d = sc["defaults"]
    assert sc["duration"] == compare.FAT_TREE.default_duration
    assert sc["bin"] == "1ms"
    assert sc["params"] == {"k": 8, "half": 4}
    assert sc["topology"] == {"kind": "fat_tree", "k": "k"}
    assert d["link"] == {"rate": "10Gbps", "delay": "1us"}
    assert d["switch"] == {"latency": "0us", "buffer_model": "per_output", "buffer": "150KB"}
    assert d["source"] == {"load": 0.6, "frame": "1500B"}
    # One source per host to every other host; the repeat's variables give cnsim's source order
    # (by variable name: e slowest, p fastest), which fat_tree.cc's flow numbering follows.
    assert sc["sources"] == [{"host": "H{p}.{e}.{h}", "to": "*", "repeat": {"p": "k", "e": "half", "h": "half"}}]
    cc = (PEERS / "fat_tree.cc").read_text()
    defaults = dict(re.findall(r"^    (?:uint32_t|uint64_t|double|std::string) (\w+) = ([^;]+);", cc, re.M))
    assert defaults["k"] == "8" and defaults["load"] == "0.6"
    assert defaults["durationStr"] == f'"{compare.FAT_TREE.default_duration}"'
    assert defaults["binStr"] == '"1ms"'
    assert defaults["queueBytes"] == "148500"  # cnsim's 150,000 B less the frame on the wire
    assert 'StringValue("10Gbps")' in cc and "TimeValue(MicroSeconds(1))" in cc
    assert "g_sourceIndex.push_back((e * half + i) * k + p);" in cc


def ns3_line(**over) -> str:
    out = {
        "engine": "ns-3", "k": 4, "seed": 1, "events": 1000, "run_wall_s": 2.5, "offered_frames": 500,
        "delivered_frames": 490, "throughput_gbps": 95.5, "latency_mean_us": 14.5, "frame_hops": 300,
        "drops_total": 7, "drops_tc": 7, "drops_device_queue": 0, "drops_ip": 0, "drops_unclassified": 0,
        "drops_by_stage": {"host_up": 0, "edge_up": 4, "agg_up": 1, "core_down": 0, "agg_down": 2, "edge_down": 0},
        "link_tx_bytes": {"H1.1.1->E1.1": 4500, "E1.1->H1.1.1": 3000},
    }
    return "starting\n" + json.dumps({**out, **over}) + "\n"


def test_ns3_output_gives_the_fat_tree_fields(compare):
    run = compare.parse_ns3_output(compare.FAT_TREE, ns3_line())
    assert run["engine"] == "ns-3" and run["events"] == 1000 and run["run_wall_s"] == 2.5
    assert (run["drops_total"], run["throughput_gbps"], run["latency_mean_us"]) == (7, 95.5, 14.5)
    assert run["drops_by_stage"]["edge_up"] == 4
    assert run["_link_frames"] == {"H1.1.1->E1.1": 3, "E1.1->H1.1.1": 2}
    assert "_link_frames" not in compare.public(run)
    with pytest.raises(compare.SetupError, match="2 drops_ip"):
        compare.parse_ns3_output(compare.FAT_TREE, ns3_line(drops_ip=2))
    with pytest.raises(compare.SetupError, match="no JSON line"):
        compare.parse_ns3_output(compare.FAT_TREE, "nothing\n")


def summary(**over) -> dict:
    flow = {"delivered_frames": 0, "delivered_bytes": 0, "first_delivery_ps": 0, "last_delivery_ps": 0,
            "latency_sum_ps": 0}
    s = {
        "wall_time_s": 0.1, "events": 600, "frame_hops": 290, "bin_s": 0.001, "n_bins": 10, "partial": None,
        "cnsim_version": "0.1.0", "engine_id": "abc",
        "totals": {"dropped_frames": 6, "offered_frames": 495},
        # 2000 frames over bins 0..9 (10 ms) and 1000 over bins 2..4: 3000 frames over 10 ms.
        "flows": [
            {**flow, "dst": "H1.1.2", "delivered_frames": 2000, "delivered_bytes": 3_000_000,
             "first_delivery_ps": 5_000_000, "last_delivery_ps": 9_999_000_000, "latency_sum_ps": 20_000_000_000},
            {**flow, "dst": "H2.1.1", "delivered_frames": 1000, "delivered_bytes": 1_500_000,
             "first_delivery_ps": 2_500_000_000, "last_delivery_ps": 4_100_000_000, "latency_sum_ps": 40_000_000_000},
            {**flow, "dst": "H2.1.2"},
        ],
        "queues": [
            {"name": "H1.1.1->E1.1", "drops_frames": 0, "tx_bytes": 6000},
            {"name": "E1.1->A1.2", "drops_frames": 4, "tx_bytes": 1500},
            {"name": "A2.1->E2.1", "drops_frames": 2, "tx_bytes": 0},
            {"name": "C1.1->A2.1", "drops_frames": 0, "tx_bytes": 3100},
        ],
    }
    return {**s, **over}


def test_cnsim_summary_gives_the_fat_tree_fields(compare):
    info: dict = {}
    run = compare.parse_cnsim_summary(compare.FAT_TREE, summary(), info)
    assert info == {"version": "0.1.0", "engine_id": "abc"}
    assert run["engine"] == "cnsim" and run["events"] == 600 and run["frame_hops"] == 290
    assert run["drops_total"] == 6 and run["offered_frames"] == 495
    assert run["throughput_gbps"] == pytest.approx(4_500_000 * 8 / 0.010 / 1e9)
    assert run["latency_mean_us"] == pytest.approx(60_000_000_000 / 3000 * 1e-6)  # 20 us
    assert run["drops_by_stage"] == {"host_up": 0, "edge_up": 4, "agg_up": 0, "core_down": 0, "agg_down": 2,
                                     "edge_down": 0}
    assert run["_link_frames"] == {"H1.1.1->E1.1": 4, "E1.1->A1.2": 1, "A2.1->E2.1": 0, "C1.1->A2.1": 2}
    with pytest.raises(compare.SetupError, match="stopped early: max_wall"):
        compare.parse_cnsim_summary(compare.FAT_TREE, summary(partial="max_wall"), {})
    s = summary()
    del s["flows"]
    with pytest.raises(compare.SetupError, match="no 'flows' records"):
        compare.parse_cnsim_summary(compare.FAT_TREE, s, {})


def test_cnsim_records_are_the_result_tables(compare, tmp_path):
    """summary.json does not list the flows and queues; the script reads them from the tables
    with the Python that runs the cnsim command."""
    import cnsim

    scenario = ROOT / "scenarios" / "baseline" / "no_cm.toml"
    result = cnsim.run(scenario, duration="6ms", out=tmp_path / "r")
    records = compare.cnsim_records(str(Path(sys.executable).with_name("cnsim")), tmp_path / "r")
    assert [f["name"] for f in records["flows"]] == list(result.flows["name"])
    assert [f["delivered_bytes"] for f in records["flows"]] == list(result.flows["delivered_bytes"])
    assert [q["tx_bytes"] for q in records["queues"]] == list(result.queues["tx_bytes"])


def test_drop_tail_still_reads_its_sinks(compare):
    s = summary(queues=[{"name": "CORE->S1", "drops_frames": 5, "tx_bytes": 0}],
                flows=[{"dst": "S1", "delivered_frames": 10, "delivered_bytes": 15000, "first_delivery_ps": 0,
                        "last_delivery_ps": 1_500_000_000, "latency_sum_ps": 0}])
    run = compare.parse_cnsim_summary(compare.DROP_TAIL, s, {})
    assert run["drops_core_s1"] == 5 and run["drops_total"] == 6
    assert run["throughput_gbps_s1"] == pytest.approx(15000 * 8 / 0.002 / 1e9) and run["throughput_gbps_s2"] == 0
    line = json.dumps({"run_wall_s": 1.0, "events": 9, "drops_core_s1": 1, "drops_total": 1, "throughput_gbps_s1": 9.9,
                       "throughput_gbps_s2": 4.0, "reverse_frames": 0})
    assert compare.parse_ns3_output(compare.DROP_TAIL, line)["throughput_gbps_s2"] == 4.0
    with pytest.raises(compare.SetupError, match="against the traffic's direction"):
        compare.parse_ns3_output(compare.DROP_TAIL, line.replace('"reverse_frames": 0', '"reverse_frames": 3'))


def test_link_z_rms(compare):
    assert compare.link_z_rms({"a": 100, "b": 0}, {"a": 100, "b": 0}) == 0
    # (110 - 90)^2 / 200 = 2 and (0 - 50)^2 / 50 = 50, over 2 links: sqrt(26).
    assert compare.link_z_rms({"a": 110, "b": 0}, {"a": 90, "b": 50}) == pytest.approx(26 ** 0.5)
    with pytest.raises(compare.SetupError, match="not the same topology"):
        compare.link_z_rms({"a": 1}, {"b": 1})


def compare_stages() -> tuple[str, ...]:
    return ("host_up", "edge_up", "agg_up", "core_down", "agg_down", "edge_down")


def fat_runs(ns3: dict, cnsim: dict, repeats: int = 2) -> list[dict]:
    base = {"throughput_gbps": 96.0, "latency_mean_us": 15.0, "frame_hops": 100, "offered_frames": 50,
            "drops_by_stage": dict.fromkeys(compare_stages(), 0), "_link_frames": {"x": 100, "y": 200}}
    runs = []
    for rep in range(repeats):
        runs.append({"seed": 1, "repeat": rep, "engine": "ns-3", "run_wall_s": 30.0 + rep, "process_wall_s": 31.0,
                     "events": 300, **base, **ns3})
        runs.append({"seed": 1, "repeat": rep, "engine": "cnsim", "run_wall_s": 1.0, "process_wall_s": 2.0,
                     "events": 200, **base, **cnsim})
    return runs


def test_fat_tree_agreement_rules(compare):
    ft = compare.FAT_TREE
    problems: list[str] = []
    # No drops in either: agree. 20 against 0 drops: within the 30-frame slack.
    for d in ((0, 0), (20, 0), (1000, 960)):
        rows = compare.per_seed_rows(ft, fat_runs({"drops_total": d[0]}, {"drops_total": d[1]}), [1], problems)
        assert rows[0]["agree"] and not problems, (d, problems)
    assert rows[0]["checks"] == {"link_z_rms": 0.0}
    assert rows[0]["ns-3"]["run_wall_s"] == 30.5  # median over repeats
    # 1000 against 900 drops: 11%, beyond 10% and 30 frames.
    rows = compare.per_seed_rows(ft, fat_runs({"drops_total": 1000}, {"drops_total": 900}), [1], problems)
    assert not rows[0]["agree"] and "drops_total differs by +11.11%" in problems[0]
    assert "tolerance 10% or 30" in problems[0]
    # Latency 6% apart, and links routed differently.
    problems.clear()
    rows = compare.per_seed_rows(
        ft, fat_runs({"drops_total": 0, "latency_mean_us": 15.9, "_link_frames": {"x": 300, "y": 0}},
                     {"drops_total": 0}), [1], problems)
    assert not rows[0]["agree"]
    assert any("latency_mean_us differs by +6.00%" in p for p in problems)
    assert any(p.startswith("seed 1: link_z_rms is") for p in problems)


def test_a_changing_output_between_repeats_is_a_problem(compare):
    runs = fat_runs({"drops_total": 0}, {"drops_total": 0})
    runs[2]["latency_mean_us"] = 15.1  # ns-3, repeat 1
    problems: list[str] = []
    compare.per_seed_rows(compare.FAT_TREE, runs, [1], problems)
    assert problems == ["seed 1: ns-3's latency_mean_us changed between repeats: [15.0, 15.1]"]


def test_report_and_json_document(compare, capsys):
    a = args(compare, "--scenario", "fat_tree", "--k", "4", "--repeats", "2")
    runs = fat_runs({"drops_total": 3}, {"drops_total": 4})
    doc, rows = compare.build_doc(compare.FAT_TREE, a, [1], runs, PEERS / "fat_tree", {"executable": "cnsim"})
    assert doc["schema"] == 2 and doc["case"] == "fat_tree" and doc["agree"]
    assert doc["options"] == {"k": 4, "load": 0.6, "ecmp": "hash"}
    assert doc["ratio"]["pairs"] == 2 and doc["ratio"]["run_wall_median"] == 30.5
    assert doc["limits"] == {"link_z_rms": 2.0} and doc["absolute_slack"] == {"drops_total": 30}
    assert all("_link_frames" not in r for r in doc["runs"])
    json.dumps(doc)  # serialisable
    compare.print_report(compare.FAT_TREE, doc, rows)
    out = capsys.readouterr().out
    assert "scenario bench/peers/ns3/fat_tree.toml, k 4, load 0.6, ecmp hash" in out
    assert "M hops/s" in out and "latency us" in out
    assert "seed 1: link_z_rms 0.00; drops by stage (ns-3/cnsim)" in out
    assert "speed ratio ns-3/cnsim, median over 2 interleaved pairs: in-program 30.5x" in out
