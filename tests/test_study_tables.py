"""Studies D and E: their report tables put the decks' published numbers beside cnsim's."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from cnsim.studies import cn_sim_baseline


def _run(jain: float, dev_max: float, dev_rms: float, end_s: float = 0.08):
    fairness = {"jain": jain, "dev_max": dev_max, "dev_rms": dev_rms, "start_s": 0.02, "end_s": end_s}
    return SimpleNamespace(summary={"fairness": fairness})


def test_the_fairness_table_gives_the_mean_interval_and_the_deck_row():
    runs = {"bcn": [_run(0.9, 0.5, 0.3), _run(0.8, 0.6, 0.4), _run(1.0, 0.1, 0.05)]}
    table = cn_sim_baseline.range_table(runs).set_index("variant")
    # Jain: mean 0.9, sample s.d. 0.1, half-width t(0.975, 2) x 0.1 / sqrt(3) = 4.303 x 0.0577 = 0.248.
    assert table.loc["bcn", "Jain's index min / mean (95% CI) / max"] == "0.800 / 0.900 (± 0.248) / 1.000"
    assert table.loc["bcn", "window"] == "[20, 80) ms"
    deck = table.loc["the deck (BCN)"]
    assert deck["Jain's index min / mean (95% CI) / max"] == "0.937 / 0.977 / 0.997"
    assert deck["Dev_max min / mean (95% CI) / max"] == "0.083 / 0.216 / 0.383"
    assert deck["Dev_rms min / mean (95% CI) / max"] == "0.057 / 0.144 / 0.261"


def test_a_short_run_shows_its_own_window_and_one_seed_no_interval():
    table = cn_sim_baseline.range_table({"bcn": [_run(0.9, 0.5, 0.3, end_s=0.03)]}).set_index("variant")
    assert table.loc["bcn", "window"] == "[20, 30) ms"
    assert table.loc["bcn", "Jain's index min / mean (95% CI) / max"] == "0.900 / 0.900 / 0.900"


def test_the_bcn_metrics_carry_the_published_means():
    from cnsim import studies

    spec = studies.get("cn_sim_baseline")
    got = {m.label: m.published for m in spec.metrics if m.variant == "bcn"}
    assert got["Jain's index, fairness window"] == 0.977
    assert got["Dev_max, fairness window"] == 0.216
    assert got["Dev_rms, fairness window"] == 0.144
    # The other variants have no published value.
    assert all(m.published is None for m in spec.metrics if m.variant == "pause" and "fairness" in m.label)


def test_study_d_lines_up_every_published_drop_count_with_its_run():
    from cnsim.studies import e2cm

    runs = {"ecm-drop-rtt000": [SimpleNamespace(queues=pd.DataFrame({"drops_frames": [100_000, 31_232]}))]}
    table = e2cm.published_drops_table(runs)
    assert len(table) == 5 + 5 + 5 + 5 + 1  # both schemes x both limits x five RTTs, and destination at RTT 0
    row = table[(table["scheme"] == "ecm") & (table["flow control"] == "drop") & (table["RTT (µs)"] == 0)].iloc[0]
    assert (row["the deck"], row["cnsim"], row["difference"]) == ("211,246", "131,232", "-80,014 (-38%)")
    # A variant not run (a --quick reproduction) shows the deck's number and a dash.
    other = table[(table["scheme"] == "e2cm-src") & (table["RTT (µs)"] == 200)].iloc[0]
    assert other["cnsim"] == "—" and other["the deck"] == "144,239"


def test_study_b_headroom_variants_stop_the_edge_drops_of_the_decks_pause_thresholds():
    import cnsim
    from cnsim.studies import hotspot_degree, scenario_path

    # 150 KB less 4,314 B for each of an edge's inputs: its senders (2 per contending sender) and the core.
    assert hotspot_degree.edge_xoff(5) == 150_000 - 11 * 4_314
    base = scenario_path("hotspot_degree/bcn.toml")
    quick = {"duration": "20ms"}
    deck = cnsim.run(base, set={**hotspot_degree.VARIANTS["B20-pause"], **quick})
    fixed = cnsim.run(base, set={**hotspot_degree.VARIANTS["B20-pausehr"], **quick})
    assert hotspot_degree.edge_drops(deck) > 100
    assert hotspot_degree.edge_drops(fixed) == 0
    assert fixed.queues["drops_frames"].sum() == 0
    assert hotspot_degree.innocent_share(fixed) > hotspot_degree.innocent_share(deck)
