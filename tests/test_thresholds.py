"""The control loops' thresholds in the result tables: the values the scenario files configure, NaN where
a threshold does not apply.

The expected values are read from the scenario files themselves (a switch's settings are
``[defaults.switch]`` overlaid with its own ``[[switches]]`` entry), with defaults the file leaves out
taken from ``cnsim.validate``. A threshold is a constant of the configuration, so each run stops after
its first event."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cnsim
from cnsim import thresholds
from conftest import NO_CM, PAUSE, ROOT, SCENARIOS, scenario_file, scenario_size, switch_settings


def run(path: Path, **kwargs) -> cnsim.Result:
    return cnsim.run(path, max_events=1, **kwargs)


def split(result: cnsim.Result) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of the switches' output queues, and those of the hosts'."""
    q = result.queues
    return q[q["node_kind"] == "switch"], q[q["node_kind"] == "host"]


def test_pause_thresholds_of_global_mode_sit_on_the_output_queues():
    sc = scenario_file(PAUSE)
    kb = sc.get("kilobyte", 1000)
    switches, hosts = split(run(PAUSE, duration="6ms"))
    assert len(switches) > 0
    for row in switches.itertuples():
        pause = switch_settings(sc, row.node)["pause"]
        assert pause["mode"] == "global"
        assert row.pause_output_xoff_bytes == scenario_size(pause["xoff"], kb)
        assert row.pause_output_xon_bytes == scenario_size(pause["xon"], kb)
    # Compared with the output queue, not an input partition; no ECN, no congestion point.
    others = [c for c in thresholds.QUEUE_COLUMNS if not c.startswith("pause_output_")]
    assert switches[others].isna().all().all()
    assert hosts[list(thresholds.QUEUE_COLUMNS)].isna().all().all()


def test_a_run_without_thresholds_has_nan_columns_of_floats():
    r = run(NO_CM, duration="6ms")
    for column in thresholds.QUEUE_COLUMNS:
        assert r.queues[column].dtype == np.float64 and r.queues[column].isna().all(), column


def test_qeq_sits_on_the_congestion_points_only():
    path = SCENARIOS / "cn_sim_baseline" / "pause.toml"
    sc = scenario_file(path)
    qeq = scenario_size(sc["bcn"]["qeq"], sc.get("kilobyte", 1000))
    switches, hosts = split(run(path))
    cp = np.array([switch_settings(sc, n).get("congestion_point", True) for n in switches["node"]])
    assert cp.any() and not cp.all()
    assert (switches[cp]["qeq_bytes"] == qeq).all()
    assert switches[~cp]["qeq_bytes"].isna().all()
    assert hosts["qeq_bytes"].isna().all()


def test_e2cm_switches_use_the_switch_loops_qeq():
    path = SCENARIOS / "e2cm" / "e2cm.toml"
    sc = scenario_file(path)
    kb = sc.get("kilobyte", 1000)
    switch_qeq, flow_qeq = scenario_size(sc["bcn"]["qeq"], kb), scenario_size(sc["e2cm"]["control"]["qeq"], kb)
    assert switch_qeq != flow_qeq
    switches, _ = split(run(path))
    # BCN's congestion point counts whole 64-byte pages: 75 KB is 1,171 pages.
    assert switch_qeq % 64 != 0
    assert (switches["qeq_bytes"] == switch_qeq // 64 * 64).all()


def test_qcn_qeq_and_pause_turned_off():
    path = SCENARIOS / "qcn_tcp" / "hotspot.toml"
    sc = scenario_file(path)
    switches, _ = split(run(path, set={"qcn.enabled": True}))
    assert (switches["qeq_bytes"] == scenario_size(sc["qcn"]["qeq"], sc.get("kilobyte", 1000))).all()
    # The file gives XOFF and XON with mode "off": no switch sends PAUSE.
    assert switch_settings(sc, switches["node"].iloc[0])["pause"]["mode"] == "off"
    pause = [c for c in thresholds.QUEUE_COLUMNS if c.startswith("pause_")]
    assert switches[pause].isna().all().all()
    # Without the scheme there are no congestion points.
    switches, _ = split(run(path))
    assert switches["qeq_bytes"].isna().all()


def test_red_marking_and_static_pfc():
    path = SCENARIOS / "dcqcn" / "convergence.toml"
    sc = scenario_file(path)
    kb = sc.get("kilobyte", 1000)
    r = run(path)
    switches, hosts = split(r)
    for row in switches.itertuples():
        s = switch_settings(sc, row.node)
        assert s["ecn"]["rule"] == "red"
        assert (row.ecn_kmin_bytes, row.ecn_kmax_bytes) == (scenario_size(s["ecn"]["kmin"], kb), scenario_size(s["ecn"]["kmax"], kb))
    assert hosts[["ecn_kmin_bytes", "ecn_kmax_bytes"]].isna().all().all()
    check_pfc(r, sc)


def test_pfc_thresholds_on_the_lossless_class_only():
    path = SCENARIOS / "pfc" / "lossless_and_lossy.toml"
    check_pfc(run(path), scenario_file(path))


def check_pfc(r: cnsim.Result, sc: dict) -> None:
    """Each (switch port, lossless class) has the file's static XOFF/XON; other rows NaN."""
    kb = sc.get("kilobyte", 1000)
    node = r.queues.set_index("name")["node"]
    kind = r.queues.set_index("name")["node_kind"]
    lossless_rows = 0
    for row in r.classes.to_dict("records"):
        queue = row["queue"]
        pfc = switch_settings(sc, node[queue]).get("pfc") if kind[queue] == "switch" else None
        got = (row["pfc_xoff_bytes"], row["pfc_xon_bytes"])
        if pfc is not None and row["class"] in pfc["classes"]:
            assert got == (scenario_size(pfc["xoff"], kb), scenario_size(pfc["xon"], kb)), row
            lossless_rows += 1
        else:
            assert np.isnan(got).all(), row
    assert lossless_rows > 0


def test_ecn_thresholds_follow_the_ports_link_rate():
    path = SCENARIOS / "fct_fabric" / "fabric.toml"
    sc = scenario_file(path)
    kb = sc.get("kilobyte", 1000)
    ecn = sc["defaults"]["switch"]["ecn"]
    by_rate = {float(re.fullmatch(r"(\d+)Gbps", e["rate"])[1]): e for e in ecn.get("rates", [])}
    assert by_rate
    switches, _ = split(run(path))
    for rate, rows in switches.groupby("rate_gbps"):
        rule = by_rate.get(rate, ecn)
        assert (rows["ecn_kmin_bytes"] == scenario_size(rule["kmin"], kb)).all(), rate
        assert (rows["ecn_kmax_bytes"] == scenario_size(rule["kmax"], kb)).all(), rate
    assert set(switches["rate_gbps"]) > set(by_rate)  # ports of both kinds


LOSSLESS_FABRIC = ROOT / "bench" / "fat_tree_k8_lossless.toml"
SMALL = {"params.k": 4, "params.half": 2}


def test_a_step_rule_and_a_dynamic_threshold():
    sc = scenario_file(LOSSLESS_FABRIC)
    kb = sc.get("kilobyte", 1000)
    s = sc["defaults"]["switch"]
    assert s["ecn"]["rule"] == "step" and "xoff" not in s["pfc"]
    r = run(LOSSLESS_FABRIC, set=SMALL)
    switches, _ = split(r)
    # The step rule's K as both Kmin and Kmax.
    assert (switches["ecn_kmin_bytes"] == scenario_size(s["ecn"]["k"], kb)).all()
    assert (switches["ecn_kmax_bytes"] == switches["ecn_kmin_bytes"]).all()
    # The shared buffer's MMU decides PFC: no static thresholds.
    assert r.classes["pfc_xoff_bytes"].isna().all() and r.classes["pfc_xon_bytes"].isna().all()
    # Per switch: α as the file gives it; resume offset and lossy threshold as resolved.
    resolved = {n["name"]: n["switch"]["shared"] for n in cnsim.validate(LOSSLESS_FABRIC, set=SMALL)["nodes"]
                if n["kind"] == "switch"}
    buffers = r.summary["buffers"]
    assert {b["switch"] for b in buffers} == set(resolved)
    table = r.buffer_occupancy.groupby("switch").first()
    for b in buffers:
        shared = resolved[b["switch"]]
        lossy = shared["lossy_egress"]["dynamic"]
        expect = {
            "shared_pool_bytes": b["shared_pool_bytes"],
            "lossless_xoff_bytes": None,
            "lossless_xoff_alpha": s["mmu"]["alpha"],
            "resume_offset_bytes": shared["resume_offset"],
            "lossy_egress_bytes": None,
            "lossy_egress_alpha": lossy["num"] / lossy["den"],
        }
        assert {k: b[k] for k in expect} == expect
        row = table.loc[b["switch"]]
        for column, value in expect.items():
            assert row[column] == value if value is not None else np.isnan(row[column]), column
    assert (r.buffer_occupancy.groupby("switch")[list(thresholds.BUFFER_COLUMNS)].nunique(dropna=False) == 1).all().all()


def test_the_dynamic_xoff_threshold_per_bin():
    rows = pd.DataFrame({
        "shared_mean_bytes": [0.0, 400.0, 0.0],
        "shared_pool_bytes": [1000, 1000, 1000],
        "lossless_xoff_bytes": [np.nan, np.nan, 300.0],
        "lossless_xoff_alpha": [0.5, 0.5, np.nan],
    })
    assert list(thresholds.lossless_xoff(rows)) == [500.0, 300.0, 300.0]
    assert np.isnan(thresholds.lossless_xoff(rows.drop(columns=["lossless_xoff_alpha"]))).all()


@pytest.mark.parametrize("distinct, drawn", [(1, 1), (3, 3), (4, 0)])
def test_a_threshold_with_many_values_is_left_out(distinct, drawn):
    names = [f"Q{i}" for i in range(4)]
    queues = pd.DataFrame({"name": names, "qeq_bytes": [1000.0 * (i % distinct) + 1 for i in range(4)],
                           "ecn_kmin_bytes": 5.0, "ecn_kmax_bytes": 5.0})
    lines = {label: values for label, _, values in thresholds.queue_lines([queues], names)}
    assert len(lines.get("QCN/BCN Qeq", [])) == drawn
    # Kmin = Kmax: one step rule, drawn once as K.
    assert lines["ECN K"] == [5.0] and "ECN Kmin" not in lines and "ECN Kmax" not in lines
