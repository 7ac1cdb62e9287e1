"""Study C, `qcn_tcp`: sweep variants over two scenario files, the quick report, and
what PAUSE and QCN do to the innocent flow of the PAUSE-propagation scenario."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(scope="module")
def quick(quick_reproduction) -> Path:
    return quick_reproduction("qcn_tcp")


def _runs(out: Path, variant: str):
    from cnsim.sweep import load_point, load_sweep

    frame = load_sweep(out)
    rows = frame[(frame["variant"] == variant) & (frame["status"] == "ok")]
    assert len(rows) == 1, variant  # --quick: one seed
    return [load_point(out, pid) for pid in rows["point_id"]]


def test_one_sweep_holds_the_variants_of_both_scenario_files(quick):
    from cnsim import studies
    from cnsim.sweep import load_sweep

    spec = studies.get("qcn_tcp")
    frame = load_sweep(quick)
    assert (frame["status"] == "ok").all()
    assert set(frame["variant"]) == set(spec.quick_sweep_variants) >= {
        "c1-tcp", "c1-tcp-qcn-pause", "c3-tcp-pause", "c3-tcp-qcn-pause"}
    files = {Path(s).name for s in frame["scenario"]}
    assert files == {"hotspot.toml", "pause_propagation.toml"}
    for row in frame.itertuples():
        assert Path(row.scenario).name == Path(spec.variants[spec.sweep_bases[row.variant]]).name


def test_quick_runs_are_shortened_per_variant(quick):
    # C2 keeps one slow and one fast phase of its 200 ms period; C3 is cut to 300 ms.
    assert _runs(quick, "c1-tcp")[0].duration_s == pytest.approx(0.1)
    assert _runs(quick, "c2-tcp")[0].duration_s == pytest.approx(0.2)
    assert _runs(quick, "c3-tcp")[0].duration_s == pytest.approx(0.3)


def test_report_has_the_metrics_tables_and_figures(quick):
    import html

    text = html.unescape((quick / "report.html").read_text(encoding="utf-8"))
    assert "Quick run" in text and "cnsim reproduce qcn_tcp --quick" in text
    metrics = text.split("Published and ours", 1)[1].split("</table>", 1)[0]
    for label in ("C1 innocent aggregate", "C1 victim aggregate", "C2 victim, slow phases",
                  "C3 N2 (innocent)", "C3 N1 after N3 recovers"):
        assert label in metrics
    for variant in ("c1-tcp", "c1-qcn-pause-shared", "c2-qcn-pause", "c3-tcp-pause", "c3-tcp-qcn-pause"):
        assert f"<td>{variant}</td>" in metrics
    assert "application goodput" in text  # the note on how TCP throughput is counted
    assert "Drops, retransmissions, timeouts, PAUSE and CNMs per variant" in text
    for caption in ("C1: aggregate innocent and victim throughput per scheme",
                    "C2: aggregate innocent and victim throughput per scheme",
                    "C3: net throughput at Switch 1 and 2",
                    "C3, TCP + QCN + PAUSE: N1's TCP congestion window"):
        assert f"<figcaption>{caption}" in text
    images = re.findall(r"""src=['"]data:image/png;base64,""", text)
    assert len(images) == 4
    # Both files' reconstruction notes, and a scenario hash for each file.
    assert "multi-stage output-generated" in text and "PAUSE propagation under TCP NewReno" in text
    assert "qcn_tcp/hotspot.toml" in text and "qcn_tcp/pause_propagation.toml" in text
    assert len(re.findall(r"scenario hash <code>[0-9a-f]{64}</code>", text)) == 2


def test_pause_holds_the_innocent_flow_back_and_qcn_frees_it(quick):
    from cnsim.studies import qcn_tcp

    (pause,) = _runs(quick, "c3-tcp-pause")
    (qcn,) = _runs(quick, "c3-tcp-qcn-pause")
    for r in (pause, qcn):
        # N1 -> N3 cannot get more than N3's 1 Gb/s drain; with PAUSE (no output limit) nothing is dropped.
        assert qcn_tcp.n1_congested_gbps(r) < 1.0
        assert r.queues["drops_frames"].sum() == 0
    # PAUSE alone: the Center switch pauses both inputs, so N2 -> N4 is held to about N3's drain.
    assert qcn_tcp.n2_congested_gbps(pause) < 3.0
    # With QCN, N1's rate limiter absorbs the congestion and N2 -> N4 runs near line rate (9.73 Gb/s goodput).
    assert qcn_tcp.n2_congested_gbps(qcn) > 8.0


def test_sweep_variant_without_a_base_file_is_an_error(tmp_path):
    from dataclasses import replace

    from cnsim import studies
    from cnsim.report import _sweep_bases

    spec = studies.get("qcn_tcp")
    broken = replace(spec, sweep_bases={**spec.sweep_bases, "c1-tcp": "nowhere"})
    paths = {k: str(studies.scenario_path(v)) for k, v in spec.variants.items()}
    with pytest.raises(ValueError, match="c1-tcp"):
        _sweep_bases(broken, paths, {"c1-tcp": {}}, None, [1], tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_the_report_states_numbers_of_its_own_runs_and_windows(quick):
    import html

    from cnsim.studies import qcn_tcp

    text = html.unescape((quick / "report.html").read_text(encoding="utf-8"))
    (pause,) = _runs(quick, "c3-tcp-pause")
    (qcn,) = _runs(quick, "c3-tcp-qcn-pause")
    # The C3 statement quotes this run's values, over the quick run's window.
    assert f"TCP + PAUSE N2 {qcn_tcp.n2_congested_gbps(pause):,.2f}" in text
    assert f"TCP + QCN + PAUSE N2 {qcn_tcp.n2_congested_gbps(qcn):,.2f}" in text
    assert "while N3 is slow ([150, 250) ms)" in text
    # The full run's numbers and windows are not stated in a quick report.
    for stale in ("8.29", "[800 ms, 1 s)", "[300, 750) ms", "over 3 seeds"):
        assert stale not in text, stale
    # C2's two readings of the victims' ideal.
    assert "two readings" in text and "slow-phase figures" in text


def test_a_flow_never_throttled_is_at_the_line_rate_from_the_first_bin_after_the_slow_window(quick):
    """`rate_limiters` has rows only for flows that had a limiter; N1 without rows was at
    its line rate all along, so it is back there from the first bin after N3 recovers."""
    from cnsim.studies import qcn_tcp

    (qcn,) = _runs(quick, "c3-tcp-qcn-pause")
    end_slow = qcn_tcp.c3_windows(qcn)["slow"][1]
    assert (qcn.rate_limiters["flow"] == "N1").any()
    throttled = qcn_tcp._line_rate_again_ms(qcn)  # nan in the quick run: never back
    assert np.isnan(throttled) or throttled >= end_slow * 1e3
    qcn.rate_limiters = qcn.rate_limiters[qcn.rate_limiters["flow"] != "N1"]
    times = qcn.flow_throughput["time_s"]
    assert qcn_tcp._line_rate_again_ms(qcn) == times[times >= end_slow].min() * 1e3
