"""Import from the HPCC ns-3 simulator's files (``cnsim import hpcc``) and export to its fct.txt and
pfc.txt layouts (``cnsim run --export hpcc``); docs/hpcc.md.

The files in tests/data/hpcc are written for these tests in that simulator's formats (see the
README there). Set CNSIM_HPCC_REPO to a checkout of alibaba-edu/High-Precision-Congestion-Control
to import its own examples too (test_the_simulators_own_examples_*).
"""

from __future__ import annotations

import math
import os
import re
import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cnsim
from cnsim.hpcc import ExportNodes, HpccError, fct_text, import_hpcc, node_ip, pfc_text, read_config

from conftest import ROOT

DATA = ROOT / "tests" / "data" / "hpcc"

#: A config as the simulator's run.py writes one for DCQCN at 100 Gb/s (the keys third.cc reads).
DCQCN_CONFIG = """\
ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1
PACKET_PAYLOAD_SIZE 1000
TOPOLOGY_FILE topo.txt
FLOW_FILE flows.txt
TRACE_FILE trace.txt
TRACE_OUTPUT_FILE out.tr
FCT_OUTPUT_FILE fct.txt
PFC_OUTPUT_FILE pfc.txt
SIMULATOR_STOP_TIME 3.5
CC_MODE 1
ALPHA_RESUME_INTERVAL 50
RATE_DECREASE_INTERVAL 50
CLAMP_TARGET_RATE 1
RP_TIMER 55
EWMA_GAIN 0.00390625
FAST_RECOVERY_TIMES 5
RATE_AI 20Mb/s
RATE_HAI 200Mb/s
MIN_RATE 1000Mb/s
DCTCP_RATE_AI 1000Mb/s
ERROR_RATE_PER_LINK 0.0000
L2_CHUNK_SIZE 4000
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0
HAS_WIN 1
GLOBAL_T 1
VAR_WIN 0
FAST_REACT 0
U_TARGET 0.95
MI_THRESH 0
INT_MULTI 1
MULTI_RATE 0
SAMPLE_FEEDBACK 0
PINT_LOG_BASE 1.01
PINT_PROB 1.0
RATE_BOUND 1
ACK_HIGH_PRIO 0
LINK_DOWN 0 0 0
ENABLE_TRACE 0
KMAX_MAP 3 25000000000 400 100000000000 1600 400000000000 6400
KMIN_MAP 3 25000000000 100 100000000000 400 400000000000 1600
PMAX_MAP 3 25000000000 0.2 100000000000 0.2 400000000000 0.5
BUFFER_SIZE 24
QLEN_MON_FILE qlen.txt
QLEN_MON_START 2000000000
QLEN_MON_END 3000000000
"""

#: Two switches (0 and 5) and four hosts, links of four rates and three delays, by hand.
TOPOLOGY = """\
6 2 5
0 5
0 1 100Gbps 1000ns 0
0 2 25Gbps 0.002ms 0
5 3 25Gb/s 500ns 0
0 5 400Gbps 1us 0
4 5 100Gbps 1000ns 0
"""

#: src dst pg dport size start
FLOWS = """\
4
1 3 3 100 1000 2
2 4 3 100 2000000 2.0000015
4 1 3 200 5000 2.5
3 2 3 100 7 2.75
"""


def write(folder: Path, **files: str) -> dict[str, Path]:
    paths = {}
    for name, text in files.items():
        path = folder / name.replace("_", ".")
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        paths[name] = path
    return paths


@pytest.fixture
def hand_built(tmp_path):
    """config, topology and flows written by hand into tmp_path; the config names the other two."""
    return write(tmp_path, config_txt=DCQCN_CONFIG, topo_txt=TOPOLOGY, flows_txt=FLOWS)["config_txt"]


def scenario(imported) -> dict:
    return tomllib.loads(imported.text)


# --------------------------------------------------------------------------- the scenario, item by item


def test_nodes_links_rates_and_delays_one_by_one(hand_built):
    doc = scenario(import_hpcc(hand_built))
    assert doc["switches"] == [{"name": "s0"}, {"name": "s5"}]
    assert doc["hosts"] == [{"name": "h1"}, {"name": "h2"}, {"name": "h3"}, {"name": "h4"}]
    default = doc["defaults"]["link"]
    assert default == {"rate": "100Gbps", "delay": "1us"}  # the most common of each
    links = [{"rate": default["rate"], "delay": default["delay"], **link} for link in doc["links"]]
    assert links == [  # in the file's order: that order numbers the interfaces
        {"between": ["s0", "h1"], "rate": "100Gbps", "delay": "1us"},
        {"between": ["s0", "h2"], "rate": "25Gbps", "delay": "2us"},  # 0.002ms
        {"between": ["s5", "h3"], "rate": "25Gbps", "delay": "500ns"},  # Gb/s, ns-3's other spelling
        {"between": ["s0", "s5"], "rate": "400Gbps", "delay": "1us"},
        {"between": ["h4", "s5"], "rate": "100Gbps", "delay": "1us"},
    ]
    resolved = cnsim.validate(_without_flows(hand_built))
    assert [(n["name"], n["kind"]) for n in resolved["nodes"]] == [
        ("s0", "switch"), ("s5", "switch"), ("h1", "host"), ("h2", "host"), ("h3", "host"), ("h4", "host")]
    assert [(link["a"], link["b"], link["rate_bps"], round(link["delay_s"] * 1e9)) for link in resolved["links"]] == [
        ("s0", "h1", 100e9, 1000), ("s0", "h2", 25e9, 2000), ("s5", "h3", 25e9, 500), ("s0", "s5", 400e9, 1000),
        ("h4", "s5", 100e9, 1000)]


def test_flows_one_by_one(hand_built):
    imported = import_hpcc(hand_built)
    doc = scenario(imported)
    assert doc["until"] == "flows_finished"
    assert doc["duration"] == "3.5s"
    by_name = {w["name"]: w for w in doc["workloads"]}
    assert list(by_name) == ["hpcc_dport100", "hpcc_dport200"]  # one workload per destination port
    for w in by_name.values():
        assert (w["kind"], w["transport"], w["frame"]) == ("list", "roce", "1048B")  # payload 1000 + 48
    assert by_name["hpcc_dport100"]["flows"] == [
        {"from": "h1", "to": "h3", "size": 1000, "start": "2s", "priority": 3},
        {"from": "h2", "to": "h4", "size": 2_000_000, "start": "2.0000015s", "priority": 3},
        {"from": "h3", "to": "h2", "size": 7, "start": "2.75s", "priority": 3},
    ]
    assert by_name["hpcc_dport200"]["flows"] == [
        {"from": "h4", "to": "h1", "size": 5000, "start": "2.5s", "priority": 3}]
    assert imported.written_flows == 4
    assert doc["roce"]["header"] == "48B"


def test_switches_ecn_pfc_and_buffer(hand_built):
    doc = scenario(import_hpcc(hand_built))
    switch = doc["defaults"]["switch"]
    assert switch["buffer_model"] == "shared" and switch["buffer"] == "24MiB"
    assert switch["mmu"] == {"reserve": "4096B", "resume_offset": "3072B", "alpha": 0.125, "headroom": "auto"}
    assert switch["pfc"] == {"classes": [3]}
    # KMIN/KMAX in KB of 1000 B, per switch-port rate (25, 100 and 400 Gb/s ports here)
    assert switch["ecn"] == {
        "rule": "red", "kmin": "100000B", "kmax": "400000B", "pmax": 0.2, "at": "dequeue",
        "rates": [{"rate": "100Gbps", "kmin": "400000B", "kmax": "1600000B", "pmax": 0.2},
                  {"rate": "400Gbps", "kmin": "1600000B", "kmax": "6400000B", "pmax": 0.5}]}
    assert doc["priorities"] == {"classes": 4}


def test_dcqcn_keys(hand_built):
    doc = scenario(import_hpcc(hand_built))
    assert doc["dcqcn"] == {
        "variant": "mellanox", "cnp_interval": "0ns", "cnp_on_ack": True, "alpha_interval": "50us", "decrease_interval": "50us",
        "timer": "55us", "g": 0.00390625, "fast_recovery": 5, "r_ai": "20Mbps", "r_hai": "200Mbps",
        "min_rate": "1Gbps", "clamp_target_rate": True}
    # HAS_WIN 1, VAR_WIN 0: the largest bandwidth-delay product of a host pair, as third.cc computes
    # it: h1 -> h4 crosses three 1-us links of 100, 400 and 100 Gb/s: RTT 2 x 3000 ns + the store-and-
    # forward times of 1000 B (80 + 20 + 80 ns), at 100 Gb/s (h2 -> h3, 3.5 us at 25 Gb/s, has less).
    rtt_ns = 2 * 3000 + 80 + 20 + 80
    assert doc["roce"]["window"] == f"{rtt_ns * 100 // 8}B" == "77250B"
    assert doc["roce"]["ack_every"] == 1


def test_every_key_is_mapped_or_listed(hand_built):
    imported = import_hpcc(hand_built)
    listed = {u.what.split()[0] for u in imported.unmapped if u.config_line is not None}
    assert listed == {"TRACE_FILE", "TRACE_OUTPUT_FILE", "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE", "DCTCP_RATE_AI",
                      "L2_CHUNK_SIZE", "FAST_REACT", "U_TARGET", "MI_THRESH", "INT_MULTI", "MULTI_RATE",
                      "SAMPLE_FEEDBACK", "PINT_LOG_BASE", "PINT_PROB", "ENABLE_TRACE", "QLEN_MON_FILE",
                      "QLEN_MON_START", "QLEN_MON_END"}
    # and what is not a key: the 400 Gb/s ports' larger PFC threshold
    others = [u for u in imported.unmapped if u.config_line is None]
    assert [u.what for u in others] == ["PFC threshold per port"]
    assert "than the NIC rate (100Gbps; here 400Gbps)" in others[0].reason
    header = imported.text.split("\n\n", 1)[0]
    for item in imported.unmapped:
        assert item.what in header and item.reason in header
    assert "NOT MAPPED (19)" in header


def test_hpcc_mode_runs_without_congestion_control_and_says_so(tmp_path):
    paths = write(tmp_path, config_txt=DCQCN_CONFIG.replace("CC_MODE 1", "CC_MODE 3").replace("VAR_WIN 0", "VAR_WIN 1"),
                  topo_txt=TOPOLOGY, flows_txt=FLOWS)
    imported = import_hpcc(paths["config_txt"])
    doc = scenario(imported)
    assert "dcqcn" not in doc and "window" not in doc["roce"]
    assert "CONGESTION CONTROL NOT MAPPED: CC_MODE 3 (HPCC)" in imported.text.split("\n\n")[0]
    reasons = {u.what: u.reason for u in imported.unmapped}
    assert "cnsim has no HPCC" in reasons["CC_MODE 3"]
    assert "cnsim has no HPCC" in reasons["U_TARGET 0.95"]
    assert reasons["RP_TIMER 55"] == "not used with CC_MODE 3 (HPCC)"
    assert "VAR_WIN 1" in reasons and "HAS_WIN 1" in reasons


def test_dctcp_mode_is_tcp_with_dctcp(tmp_path):
    cfg = DCQCN_CONFIG.replace("CC_MODE 1", "CC_MODE 8").replace("EWMA_GAIN 0.00390625", "EWMA_GAIN 0.0625")
    imported = import_hpcc(write(tmp_path, config_txt=cfg, topo_txt=TOPOLOGY, flows_txt=FLOWS)["config_txt"])
    doc = scenario(imported)
    assert "dcqcn" not in doc and "roce" not in doc
    assert doc["tcp"] == {"header": "48B", "ecn": "dctcp", "dctcp_g": 0.0625, "delayed_ack": False}
    assert {w["transport"] for w in doc["workloads"]} == {"tcp"}
    assert "not the simulator's rate-based DCTCP" in imported.text
    assert {"DCTCP_RATE_AI 1000Mb/s", "MIN_RATE 1000Mb/s", "RP_TIMER 55"} <= {u.what for u in imported.unmapped}


def test_config_defaults_and_other_values(tmp_path):
    cfg = """\
    TOPOLOGY_FILE topo.txt
    FLOW_FILE flows.txt
    KMAX_MAP 3 25000000000 400 100000000000 1600 400000000000 6400 {a map from link bandwidth to kmax}
    KMIN_MAP 3 25000000000 100 100000000000 400 400000000000 1600
    PMAX_MAP 3 25000000000 0.2 100000000000 0.2 400000000000 0.2
    ERROR_RATE_PER_LINK 0.001
    LINK_DOWN 2000 0 5
    ACK_HIGH_PRIO 1
    MY_OWN_KEY 12
    """
    imported = import_hpcc(write(tmp_path, config_txt=cfg, topo_txt=TOPOLOGY, flows_txt=FLOWS)["config_txt"])
    doc = scenario(imported)
    # third.cc's defaults: CC_MODE 1, 1000 B payload, 16 MB buffer, stop at 3.01 s
    assert doc["duration"] == "3.01s" and doc["defaults"]["switch"]["buffer"] == "16MiB"
    assert doc["dcqcn"] == {"variant": "mellanox", "cnp_interval": "0ns", "cnp_on_ack": True}  # cnsim's mellanox defaults
    assert doc["priorities"] == {"classes": 8, "acks": 7}
    reasons = {u.what: u.reason for u in imported.unmapped}
    assert "do not lose frames" in reasons["ERROR_RATE_PER_LINK 0.001"]
    assert "links stay up" in reasons["LINK_DOWN 2000 0 5"]
    assert reasons["MY_OWN_KEY 12"] == "not a key third.cc reads (it skips it too)"


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("file", "text", "message"),
    [
        ("topo", TOPOLOGY.replace("0 2 25Gbps", "0 2 25Gbs"),
         "topo.txt:4: link 2 of 5 rate: expected a rate like 100Gbps or 50Mb/s, found '25Gbs'"),
        ("topo", TOPOLOGY.replace("5 3 25Gb/s 500ns", "5 3 25Gb/s 500 ns"),
         "topo.txt:5: link 3 of 5 error_rate: expected a packet error rate from 0 to 1, found 'ns'"),
        ("topo", TOPOLOGY.replace("0 5\n", "0 6\n"),
         "topo.txt:2: switch id 2 of 2: expected a node id from 0 to 5, found '6'"),
        ("topo", TOPOLOGY.replace("4 5 100Gbps", "1 5 100Gbps"),
         "topo.txt:7: link 5 of 5 src: expected a switch, or a host not linked before (a cnsim host has exactly "
         "one link), found host 1, already linked on line 3"),
        ("topo", "6 2 5\n0 5\n0 1 100Gbps 1000ns 0\n",
         "topo.txt:3: link 2 of 5 src: expected a node id from 0 to 5, found the end of the file"),
        ("flows", FLOWS.replace("1 3 3 100 1000 2", "0 3 3 100 1000 2"),
         "flows.txt:2: flow 1 of 4 src: expected a host id (0 to 5, not a switch), found 0 (a switch)"),
        ("flows", FLOWS.replace("1 3 3 100 1000 2", "1 3 0 100 1000 2"),
         "flows.txt:2: flow 1 of 4 pg: expected a priority group from 1 to 7 (0 is the simulator's control "
         "queue), found '0'"),
        ("flows", FLOWS.replace("2.75", "soon"),
         "flows.txt:5: flow 4 of 4 start_time: expected a start time in seconds >= 0, found 'soon'"),
        ("config", DCQCN_CONFIG.replace("RP_TIMER 55", "RP_TIMER 55 us"),
         "config.txt:15: RP_TIMER: expected 1 value, found 2 ('55 us')"),
        ("config", DCQCN_CONFIG.replace("KMIN_MAP 3 25000000000 100 ", "KMIN_MAP 2 "),
         "config.txt:42: KMIN_MAP: expected an entry for 25000000000 bit/s (a switch port's rate, "),
        ("config", DCQCN_CONFIG.replace("RATE_AI 20Mb/s", "RATE_AI 20Mbit"),
         "config.txt:18: RATE_AI: expected a rate like 100Gbps or 50Mb/s, found '20Mbit'"),
        ("config", DCQCN_CONFIG.replace("BUFFER_SIZE 24", "BUFFER_SIZE lots"),
         "config.txt:44: BUFFER_SIZE: expected a whole number >= 0, found 'lots'"),
    ],
)
def test_errors_name_file_line_field_expected_and_found(tmp_path, file, text, message):
    files = {"config_txt": DCQCN_CONFIG, "topo_txt": TOPOLOGY, "flows_txt": FLOWS}
    files[f"{file}_txt"] = text
    config = write(tmp_path, **files)["config_txt"]
    with pytest.raises(HpccError) as exc:
        import_hpcc(config)
    assert str(exc.value).startswith(f"{tmp_path}/{message}"), str(exc.value)


def test_inputs_are_found_as_the_simulator_finds_them(tmp_path, monkeypatch):
    # run.py writes mix/config.txt naming mix/topology.txt, and runs from the folder above mix/
    mix = tmp_path / "simulation" / "mix"
    mix.mkdir(parents=True)
    cfg = DCQCN_CONFIG.replace("TOPOLOGY_FILE topo.txt", "TOPOLOGY_FILE mix/topo.txt").replace(
        "FLOW_FILE flows.txt", "FLOW_FILE mix/flows.txt")
    write(mix, config_txt=cfg, topo_txt=TOPOLOGY, flows_txt=FLOWS)
    monkeypatch.chdir(tmp_path / "simulation")
    imported = import_hpcc("mix/config.txt")
    assert (imported.topology_path, imported.flows_path) == (Path("mix/topo.txt"), Path("mix/flows.txt"))
    monkeypatch.chdir(tmp_path)  # elsewhere: next to the config's folder
    assert import_hpcc("simulation/mix/config.txt").topology_path == Path("simulation/mix/topo.txt")
    # --topology / --flows win
    other = write(tmp_path, star_txt="2 1 1\n0\n0 1 100Gbps 1us 0\n", none_txt="0\n")
    imported = import_hpcc("simulation/mix/config.txt", topology=other["star_txt"], flows=other["none_txt"])
    assert scenario(imported)["hosts"] == [{"name": "h1"}] and imported.written_flows == 0
    with pytest.raises(HpccError, match=r"config.txt:4: TOPOLOGY_FILE: expected a file \(looked for .*; or give "
                                        r"--topology\), found no file 'mix/topo.txt'"):
        (mix / "topo.txt").unlink()
        import_hpcc("simulation/mix/config.txt")


def test_trailing_lines_and_unsorted_flows_are_noted(tmp_path):
    flows = "2\n1 3 3 100 1000 2\n2 4 3 100 1000 1\n\nFirst line: # of flows\n"
    topo = TOPOLOGY + "0 3 100Gbps 1us 0\n"
    imported = import_hpcc(write(tmp_path, config_txt=DCQCN_CONFIG, topo_txt=topo, flows_txt=flows)["config_txt"])
    notes = "\n".join(imported.notes)
    assert "topo.txt: lines 8-8 after the 5 links its first line announces are ignored" in notes
    assert "flows.txt: lines 5-5 after the 2 flows" in notes
    assert "flows on line(s) 3 start before the flow above them" in notes
    assert all(n in imported.text for n in imported.notes)


def test_flows_after_the_stop_time_are_left_out(tmp_path):
    flows = "2\n1 3 3 100 1000 2\n2 4 3 100 1000 3.5\n"
    imported = import_hpcc(write(tmp_path, config_txt=DCQCN_CONFIG, topo_txt=TOPOLOGY, flows_txt=flows)["config_txt"])
    assert [f["from"] for w in scenario(imported)["workloads"] for f in w["flows"]] == ["h1"]
    assert "1 flow(s) start at or after SIMULATOR_STOP_TIME (first on line 3)" in "\n".join(imported.notes)
    # with no flow left there is nothing to wait for
    none = import_hpcc(tmp_path / "config.txt", flows=write(tmp_path, empty_txt="0\n")["empty_txt"])
    doc = scenario(none)
    assert "until" not in doc and "workloads" not in doc


def test_config_reader_skips_explanations_in_braces(tmp_path):
    path = tmp_path / "config_doc.txt"
    path.write_text("CC_MODE 3 {Specifying different CC. 1: DCQCN, 3: HPCC}\n\nRP_TIMER 900  {for DCQCN}\n")
    cfg = read_config(path)
    assert cfg.uint("CC_MODE") == 3 and cfg.number("RP_TIMER") == 900.0 and not cfg.unknown


# --------------------------------------------------------------------------- the command


def test_import_command_writes_once_and_lists_what_it_did_not_map(cli, hand_built, tmp_path):
    out = tmp_path / "imported.toml"
    r = cli("import", "hpcc", hand_built, "--out", out)
    assert r.code == 0, r
    assert out.read_text(encoding="utf-8") == import_hpcc(hand_built, name="imported").text
    assert r.out.startswith(f"{out}: 4 hosts, 2 switches, 5 links, 4 flows; DCQCN")
    assert "not mapped (19, also listed at the top of" in r.out
    assert "  L2_CHUNK_SIZE 4000: chunks of go-back-0" in r.out
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    # never replaces a file
    out.write_text("mine")
    r = cli("import", "hpcc", hand_built, "--out", out)
    assert r.code == 2 and r.err == f"error: {out}: already exists; cnsim import never replaces a file " \
                                    "(give another --out)\n"
    assert out.read_text() == "mine"


def test_import_command_prints_the_scenario_and_reports_on_stderr(cli, hand_built):
    r = cli("import", "hpcc", hand_built, "--no-flows")
    assert r.code == 0, r
    doc = tomllib.loads(r.out)
    assert "workloads" not in doc and "until" not in doc
    assert "scenario: 4 hosts, 2 switches, 5 links, no flows (--no-flows; 4 in the file)" in r.err
    assert "RP_TIMER" not in r.err and "PINT_PROB 1.0: HPCC-PINT parameter" in r.err


def test_import_command_errors_are_one_line(cli, tmp_path):
    config = write(tmp_path, config_txt=DCQCN_CONFIG, topo_txt=TOPOLOGY.replace("100Gbps", "100 Gbps", 1),
                   flows_txt=FLOWS)["config_txt"]
    r = cli("import", "hpcc", config, "--out", tmp_path / "x.toml")
    assert r.code == 2
    assert r.err == f"error: {tmp_path}/topo.txt:3: link 1 of 5 rate: expected a rate like 100Gbps or 50Mb/s, " \
                    "found '100'\n"
    assert not (tmp_path / "x.toml").exists()
    r = cli("import", "hpcc", tmp_path / "nothing.txt")
    assert r.code == 2 and r.err == f"error: {tmp_path}/nothing.txt: no such file\n"


# --------------------------------------------------------------------------- validate and run


def _without_flows(config: Path, **kw) -> Path:
    imported = import_hpcc(config, with_flows=False, **kw)
    out = config.with_name(config.stem + "-noflows.toml")
    out.write_text(imported.text, encoding="utf-8")
    return out


@pytest.mark.parametrize("topology", ["topology.txt", "fat.txt"])
def test_imported_scenarios_validate_and_run_without_their_flows(tmp_path, topology):
    imported = import_hpcc(DATA / "config.txt", topology=DATA / topology, with_flows=False)
    path = tmp_path / "s.toml"
    path.write_text(imported.text, encoding="utf-8")
    resolved = cnsim.validate(path)
    kinds = [n["kind"] for n in resolved["nodes"]]
    assert kinds.count("host") == imported.hosts and kinds.count("switch") == imported.switches
    assert len(resolved["links"]) == imported.links
    result = cnsim.run(path, set={"duration": "1ms", "bin": "100us"})
    assert result.summary["totals"]["dropped_frames"] == 0


def _engine_knows_workloads(tmp_path_factory) -> bool:
    """Whether this engine reads [[workloads]] (the imported flows); False while it does not."""
    path = tmp_path_factory.mktemp("probe") / "probe.toml"
    path.write_text(textwrap.dedent("""\
        duration = "1ms"
        until = "flows_finished"
        [[switches]]
        name = "s0"
        [[hosts]]
        name = "h1"
        [[hosts]]
        name = "h2"
        [[links]]
        between = ["s0", "h1"]
        [[links]]
        between = ["s0", "h2"]
        [[workloads]]
        name = "w"
        kind = "list"
        flows = [{ from = "h1", to = "h2", size = 1000, start = "0s" }]
        """), encoding="utf-8")
    try:
        cnsim.validate(path)
    except cnsim.ScenarioError as exc:
        if re.search(r"unknown field '(workloads|until)'", str(exc)):
            return False
        raise  # the engine knows them but refuses this scenario: a real failure
    return True


@pytest.fixture(scope="module")
def workloads_engine(tmp_path_factory):
    if not _engine_knows_workloads(tmp_path_factory):
        pytest.skip("this engine has no [[workloads]] yet (the imported flows need them)")


@pytest.mark.parametrize("topology", ["topology.txt", "fat.txt"])
def test_imported_flows_run_and_export(cli, tmp_path, workloads_engine, topology):
    scenario_file = tmp_path / "s.toml"
    r = cli("import", "hpcc", DATA / "config.txt", "--topology", DATA / topology, "--out", scenario_file)
    assert r.code == 0, r
    assert cli("validate", scenario_file).code == 0
    out = tmp_path / "result"
    r = cli("run", scenario_file, "--out", out, "--export", "hpcc", "--quiet")
    assert r.code == 0, r
    result = cnsim.Result.load(out)
    flows = result.flows[result.flows["workload"].notna()]
    assert len(flows) == 6 and flows["finish_s"].notna().all()
    rows = _fct_rows(out / "fct.txt")
    assert len(rows) == 6
    expected = {(node_ip(int(f["src"][1:])), node_ip(int(f["dst"][1:])), int(f["size_bytes"]))
                for f in flows.to_dict("records")}
    assert {(r[0], r[1], r[4]) for r in rows} == expected
    assert sorted(r[3] for r in rows) == [100, 100, 100, 100, 200, 200]
    assert all(r[5] >= 2_000_000_000 and r[6] > 0 and r[7] > 0 for r in rows)
    _pfc_rows(out / "pfc.txt")


# --------------------------------------------------------------------------- export


def _fct_rows(path: Path) -> list[tuple[int, ...]]:
    """fct.txt in its documented layout: sip dip (8 hex digits) sport dport size start fct standalone."""
    rows = []
    for line in path.read_text(encoding="ascii").splitlines():
        cols = line.split(" ")
        assert len(cols) == 8, line
        assert re.fullmatch(r"[0-9a-f]{8}", cols[0]) and re.fullmatch(r"[0-9a-f]{8}", cols[1]), line
        rows.append((int(cols[0], 16), int(cols[1], 16), *map(int, cols[2:])))
    return rows


def _pfc_rows(path: Path) -> list[tuple[int, ...]]:
    """pfc.txt in its documented layout: time node_id node_type if_index type."""
    rows = []
    for line in path.read_text(encoding="ascii").splitlines():
        cols = line.split(" ")
        assert len(cols) == 5 and all(c.isdigit() for c in cols), line
        row = tuple(map(int, cols))
        assert row[2] in (0, 1) and row[3] >= 1 and row[4] in (0, 1), line
        rows.append(row)
    return rows


def test_node_ip_is_the_simulators():
    assert f"{node_ip(0):08x}" == "0b000001"
    assert f"{node_ip(1):08x}" == "0b000101"
    assert f"{node_ip(257):08x}" == "0b010101"
    assert (node_ip(338) >> 8) & 0xFFFF == 338  # third.cc's ip_to_node_id


NODES = [{"name": "s0", "kind": "switch"}, {"name": "s5", "kind": "switch"}, {"name": "h1", "kind": "host"},
         {"name": "h2", "kind": "host"}, {"name": "h3", "kind": "host"}, {"name": "h4", "kind": "host"}]
LINKS = [{"a": "s0", "b": "h1"}, {"a": "s0", "b": "h2"}, {"a": "s5", "b": "h3"}, {"a": "s0", "b": "s5"},
         {"a": "h4", "b": "s5"}]


def test_export_nodes_from_imported_names_and_otherwise_in_order():
    nodes = ExportNodes.from_scenario(NODES, LINKS)
    assert nodes.from_names and nodes.ids == {"s0": 0, "s5": 5, "h1": 1, "h2": 2, "h3": 3, "h4": 4}
    assert nodes.types == {"s0": 1, "s5": 1, "h1": 0, "h2": 0, "h3": 0, "h4": 0}
    assert nodes.interfaces == {("s0", "h1"): 1, ("h1", "s0"): 1, ("s0", "h2"): 2, ("h2", "s0"): 1,
                                ("s5", "h3"): 1, ("h3", "s5"): 1, ("s0", "s5"): 3, ("s5", "s0"): 2,
                                ("h4", "s5"): 1, ("s5", "h4"): 3}
    other = ExportNodes.from_scenario([{"name": "CORE", "kind": "switch"}, {"name": "A", "kind": "host"},
                                       {"name": "h7", "kind": "host"}], [{"a": "A", "b": "CORE"}])
    assert not other.from_names and other.ids == {"CORE": 0, "A": 1, "h7": 2}
    # a switch called h3 is not an imported name
    assert not ExportNodes.from_scenario([{"name": "h3", "kind": "switch"}], []).from_names


def _flows_table() -> pd.DataFrame:
    nan = np.nan
    rows = [
        # name, workload, src, dst, size, start, finish, fct, ideal
        ("hpcc_dport100#0", "hpcc_dport100", "h1", "h3", 1000, 2.0, 2.000004, 4e-6, 3.5e-6),
        ("hpcc_dport100#1", "hpcc_dport100", "h2", "h4", 2_000_000, 2.0000015, 2.0002, 0.0001985, 0.000162),
        ("hpcc_dport100#2", "hpcc_dport100", "h1", "h3", 64_000, 2.5, nan, nan, 6.1e-6),  # unfinished
        ("hpcc_dport100#3", "hpcc_dport100", "h1", "h3", 7, 2.75, 2.750003, 3e-6, 2.9e-6),
        ("hpcc_dport200#0", "hpcc_dport200", "h4", "h1", 5000, 2.5, 2.500001, 1e-6, 1e-6),
        ("custom#0", "custom", "h1", "h3", 100, 2.1, 2.100002, 2e-6, 1.5e-6),
        ("h1->h2", nan, "h1", "h2", nan, nan, nan, nan, nan),  # a source's flow
    ]
    columns = ["name", "workload", "src", "dst", "size_bytes", "start_s", "finish_s", "fct_s", "ideal_fct_s"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["slowdown"] = frame["fct_s"] / frame["ideal_fct_s"]
    frame["priority"] = [3, 3, 3, 3, 3, 3, nan]
    return frame


def test_fct_txt_lines_in_the_simulators_layout():
    text = fct_text(_flows_table(), ExportNodes.from_scenario(NODES, LINKS))
    assert text == (
        # finished flows in the order they finished; source ports per (src, dst) from 10000 in start order
        "0b000101 0b000301 10000 100 1000 2000000000 4000 3500\n"
        "0b000201 0b000401 10000 100 2000000 2000001500 198500 162000\n"
        "0b000101 0b000301 10001 100 100 2100000000 2000 1500\n"          # a workload without a port: 100
        "0b000401 0b000101 10000 200 5000 2500000000 1000 1000\n"
        "0b000101 0b000301 10003 100 7 2750000000 3000 2900\n"            # 10002 went to the unfinished flow
    )
    rows = _fct_rows_from_text(text)
    # fct_analysis.py's reading: $7/$8 the slowdown, $6+$7 the finish
    assert rows[1][6] / rows[1][7] == pytest.approx(0.0001985 / 0.000162)
    assert rows[0][5] + rows[0][6] == 2_000_004_000


def _fct_rows_from_text(text: str) -> list[tuple[int, ...]]:
    return [tuple(int(c, 16) if i < 2 else int(c) for i, c in enumerate(line.split())) for line in text.splitlines()]


def test_fct_txt_of_a_run_without_workloads_is_empty():
    nodes = ExportNodes.from_scenario(NODES, LINKS)
    assert fct_text(pd.DataFrame({"name": ["a->b"], "src": ["a"], "dst": ["b"]}), nodes) == ""
    table = _flows_table()
    assert fct_text(table[table["workload"].isna()], nodes) == ""


def test_pfc_txt_lines_in_the_simulators_layout():
    events = pd.DataFrame(
        [
            (0.0020000105, "s0->h1", "s0", 3, 65535, "sent"),
            (0.0020000115, "h1->s0", "h1", 3, 65535, "received"),
            (0.0020000200, "s5->s0", "s5", 3, 65535, "sent"),
            (0.0020000210, "s0->s5", "s0", 3, 65535, "received"),
            (0.0020004000, "h1->s0", "h1", 3, 0, "received"),
            (0.0020005000, "s5->h4", "s5", 3, 65535, "received"),
        ],
        columns=["time_s", "queue", "node", "class", "quanta", "direction"],
    )
    text = pfc_text(events, ExportNodes.from_scenario(NODES, LINKS))
    assert text == ("2000012 1 0 1 1\n"    # h1's only port paused
                    "2000021 0 1 3 1\n"    # s0's third link (to s5)
                    "2000400 1 0 1 0\n"    # resumed
                    "2000500 5 1 3 1\n")   # s5's third link (to h4)
    assert pfc_text(events.iloc[0:0], ExportNodes.from_scenario(NODES, LINKS)) == ""


def test_run_export_writes_pfc_txt_into_the_result(cli, tmp_path):
    """A run with PFC (sources, which this engine has) exported: pfc.txt matches pfc_events row by row,
    fct.txt is empty (no workloads), both belong to the result (its marker), --force replaces them."""
    base = import_hpcc(DATA / "config.txt", with_flows=False).text
    # h2..h8 write 200 KB transactions to h1 over RoCE in the lossless class: PFC pauses them
    sources = "".join(f'\n[[sources]]\nname = "inc{h}"\nhost = "h{h}"\nto = "h1"\ntransport = "roce"\n'
                      f'kind = "transactions"\ntransaction = "200KB"\nframe = "1048B"\nload = 0.9\npriority = 3\n'
                      for h in range(2, 9))
    path = tmp_path / "incast.toml"
    path.write_text(base + sources, encoding="utf-8")
    out = tmp_path / "r"
    fast = ["--set", "duration=2ms", "--set", "bin=100us", "--set", "dcqcn.enabled=false"]
    r = cli("run", path, "--out", out, "--export", "hpcc", *fast)
    assert r.code == 0, r
    result = cnsim.Result.load(out)
    received = result.pfc_events[result.pfc_events["direction"] == "received"]
    assert len(received) > 0
    rows = _pfc_rows(out / "pfc.txt")
    assert len(rows) == len(received)
    for row, event in zip(rows, received.itertuples(index=False)):
        assert row[0] == round(event.time_s * 1e9)
        assert row[1] == int(event.node[1:]) and row[2] == 0 and row[3] == 1  # the senders' only port
        assert row[4] == (1 if event.quanta > 0 else 0)
    assert (out / "fct.txt").read_text() == ""
    assert f"hpcc export: {out / 'fct.txt'} (0 flows), {out / 'pfc.txt'} ({len(rows):,} PFC frames received)" in r.out
    marker = (out / ".cnsim-result").read_text()
    assert '"fct.txt"' in marker and '"pfc.txt"' in marker
    shorter = [*fast, "--set", "duration=1ms", "--quiet"]
    r = cli("run", path, "--out", out, "--export", "hpcc", *shorter)
    assert r.code == 2 and "use --force" in r.err
    r = cli("run", path, "--out", out, "--export", "hpcc", *shorter, "--force")
    assert r.code == 0, r
    assert len(_pfc_rows(out / "pfc.txt")) < len(rows)
    # a file the user put there is never replaced
    (out / "notes.txt").write_text("mine")
    r = cli("run", path, "--out", out, "--export", "hpcc", *shorter, "--force")
    assert r.code == 2 and "notes.txt" in r.err


# --------------------------------------------------------------------------- the simulator's own files

HPCC_REPO = os.environ.get("CNSIM_HPCC_REPO")


def _mix() -> Path:
    if not HPCC_REPO:
        pytest.skip("set CNSIM_HPCC_REPO to a checkout of alibaba-edu/High-Precision-Congestion-Control")
    root = Path(HPCC_REPO)
    for mix in (root / "simulation" / "mix", root / "mix"):
        if (mix / "config.txt").is_file():
            return mix
    pytest.fail(f"CNSIM_HPCC_REPO={HPCC_REPO}: no simulation/mix/config.txt there")


def test_the_simulators_own_examples_import_validate_and_run(tmp_path, monkeypatch):
    mix = _mix()
    monkeypatch.chdir(mix.parent)  # the simulator runs from simulation/
    imported = import_hpcc("mix/config.txt")  # CC_MODE 3 (HPCC), topology.txt, flow.txt
    assert (imported.hosts, imported.switches, imported.links, imported.written_flows) == (65, 1, 65, 2)
    assert imported.cc == "HPCC" and "CONGESTION CONTROL NOT MAPPED" in imported.text
    # fat.txt has 400 Gb/s links, which config.txt's ECN maps lack: third.cc would stop, so does the import
    with pytest.raises(HpccError, match=r"KMAX_MAP|KMIN_MAP"):
        import_hpcc("mix/config.txt", topology="mix/fat.txt")
    # fat.txt with the maps run.py writes for 100 Gb/s hosts
    config = tmp_path / "config_fat.txt"
    config.write_text(DCQCN_CONFIG.replace("TOPOLOGY_FILE topo.txt", f"TOPOLOGY_FILE {mix / 'fat.txt'}")
                      .replace("FLOW_FILE flows.txt", f"FLOW_FILE {mix / 'flow.txt'}"))
    fat = import_hpcc(config)
    assert (fat.hosts, fat.switches, fat.links) == (320, 56, 480)
    for name, imp in (("star", imported), ("fat", fat)):
        no_flows = import_hpcc(imp.config.path, topology=imp.topology_path, flows=imp.flows_path, with_flows=False)
        path = tmp_path / f"{name}.toml"
        path.write_text(no_flows.text, encoding="utf-8")
        resolved = cnsim.validate(path)
        assert len(resolved["links"]) == imp.links
        cnsim.run(path, set={"duration": "1ms", "bin": "100us"})


def test_the_simulators_own_examples_run_their_flows(tmp_path, monkeypatch, workloads_engine):
    mix = _mix()
    monkeypatch.chdir(mix.parent)
    path = tmp_path / "star.toml"
    path.write_text(import_hpcc("mix/config.txt").text, encoding="utf-8")
    result = cnsim.run(path)
    flows = result.flows[result.flows["workload"].notna()]
    assert len(flows) == 2 and flows["finish_s"].notna().all()
    assert math.isclose(float(flows["size_bytes"].sum()), 400e6)
