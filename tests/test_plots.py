"""Figures: item choice, labels, files."""

from __future__ import annotations

import copy
import subprocess

import numpy as np
import pytest

import cnsim
from cnsim import plots

from conftest import NO_CM, PAUSE, ROOT, SCENARIOS, scenario_file, scenario_size, switch_settings, texts_outside

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def result() -> cnsim.Result:
    return cnsim.run(NO_CM, seed=1, duration="10ms")


def test_items_named_by_the_scenario(result):
    spec = result.summary["plot"]
    assert plots._items([result], "links") == spec["links"]
    assert plots._items([result], "flows") == spec["flows"]
    assert plots._items([result], "queues") == spec["queues"]


def test_fallback_items_without_a_plot_section(result):
    bare = copy.copy(result)
    bare.summary = {**result.summary, "plot": {"links": [], "flows": [], "queues": []}}
    assert plots._items([bare], "flows") == list(result.flows["name"])
    busiest = plots._items([bare], "queues")
    assert len(busiest) == plots.FALLBACK_QUEUES
    top = result.queues.sort_values("max_occupancy_bytes", ascending=False)["max_occupancy_bytes"]
    chosen = result.queues.set_index("name").loc[busiest, "max_occupancy_bytes"]
    assert sorted(chosen, reverse=True) == list(top.iloc[: plots.FALLBACK_QUEUES])
    del bare.summary["plot"]
    assert plots._items([bare], "links") == busiest


def test_variant_labels(result):
    other = copy.copy(result)
    other.summary = {**result.summary, "seed": 9}
    assert plots.variant_labels([result]) == [result.name]
    assert plots.variant_labels([result, other]) == [f"{result.name} (seed 1)", f"{result.name} (seed 9)"]
    assert len(set(plots.variant_labels([result, result]))) == 2


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_plot_writes_every_view(result, tmp_path, fmt):
    files = plots.plot(result, tmp_path, fmt)
    # no_cm drops frames, sends no PAUSE and has no rate limiters.
    assert sorted(f.name for f in files) == sorted(
        f"{v}.{fmt}" for v in ("throughput_links", "throughput_flows", "queue_occupancy", "drops", "drops_over_time")
    )
    for f in files:
        data = f.read_bytes()
        assert data.startswith(PNG_MAGIC) if fmt == "png" else b"<svg" in data[:2000]


def test_plot_labels_axes_with_units(result, tmp_path):
    import matplotlib.pyplot as plt

    seen = {}
    real_save = plots._save

    def spy(fig, path):
        seen[path.stem] = [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes]
        return real_save(fig, path)

    plots._save = spy
    try:
        plots.plot([result, result], tmp_path)
    finally:
        plots._save = real_save
    assert ("time (ms)", "throughput (Gb/s)") in seen["throughput_links"]
    assert any(y == "mean occupancy (KiB = 1024 B)" for _, y in seen["queue_occupancy"])  # kilobyte = 1024
    assert any("Gb/s" in y for _, y in seen["throughput_flows"])
    assert seen["drops"] == [("", "frames dropped")]
    assert plt.get_fignums() == []  # figures are closed


def test_plot_rejects_unknown_format(result, tmp_path):
    with pytest.raises(ValueError):
        plots.plot(result, tmp_path, "jpeg")


# --------------------------------------------------------------------------- views


def assert_inside(fig) -> None:
    assert texts_outside(fig) == [], "titles or legends outside the figure"


@pytest.fixture(scope="module")
def scheme_runs() -> dict[str, cnsim.Result]:
    """Short runs of shipped scenarios, between them every view."""
    return {
        "bcn": cnsim.run(SCENARIOS / "baseline" / "bcn.toml", duration="12ms"),
        "pause": cnsim.run(PAUSE, duration="12ms"),
        "qcn": cnsim.run(SCENARIOS / "qcn_tcp" / "hotspot.toml", set={"qcn.enabled": True, "duration": "20ms"}),
        "pfc": cnsim.run(SCENARIOS / "pfc" / "lossless_and_lossy.toml", duration="2ms"),
        "shared": cnsim.run(SCENARIOS / "pfc" / "incast_1000.toml", duration="1ms", set={"params.senders": 20}),
        "workloads": cnsim.run(SCENARIOS / "workloads" / "websearch_incast.toml",
                               set={"workloads[0].stop": "500us", "workloads[1].stop": "500us"}),
    }


def test_every_view_draws_for_a_run_that_has_its_data(scheme_runs, result):
    expect = {
        "bcn": {"rate_limiters"},
        "pause": {"pause"},
        "qcn": {"rate_limiters", "drops_over_time"},
        "pfc": {"pause", "pfc_timeline", "drops_over_time"},
        "shared": {"buffer_use"},
        "workloads": {"fct_slowdown", "fct_cdf", "buffer_use"},
    }
    drawn = set()
    for name, run in scheme_runs.items():
        views = plots.views_for(run)
        assert expect[name] <= set(views), name
        for view in views:
            fig = run.plot(view)
            assert fig.axes and any(ax.has_data() for ax in fig.axes), (name, view)
            drawn.add(view)
    assert "rate_limiters" not in plots.views_for(result) and "pause" not in plots.views_for(result)
    assert drawn == set(plots.VIEWS)


def test_titles_and_legends_lie_within_every_figure(scheme_runs, result, fat_tree):
    runs = [result, *scheme_runs.values(), fat_tree]
    for run in runs:
        for view in plots.views_for(run):
            assert texts_outside(run.plot(view)) == [], (run.name, view)
    several = [result, scheme_runs["bcn"], scheme_runs["pause"]]
    for view in plots.views_for(several):
        assert texts_outside(plots.figure(several, view)) == [], ("several", view)


def test_the_rate_limiter_view_draws_cr_and_qcns_tr(scheme_runs):
    (ax,) = scheme_runs["bcn"].plot("rate_limiters").axes
    labels = ax.get_legend_handles_labels()[1]
    assert labels and all(label.endswith(" CR") for label in labels)  # BCN has no target rate
    assert "C1->S1 CR" in labels
    qcn = scheme_runs["qcn"]
    fig = qcn.plot("rate_limiters")
    labels = fig.axes[0].get_legend_handles_labels()[1]
    # Of the 81 flows those that had a limiter have rows: the 6 held furthest below their
    # peak, each with CR and TR (12 lines).
    throttled = int((qcn.flows["rl_installs"] > 0).sum())
    assert qcn.rate_limiters["flow"].nunique() == throttled and 6 < throttled < len(qcn.flows) == 81
    assert len(labels) == plots.MAX_SERIES and sum(label.endswith(" TR") for label in labels) == 6
    assert f"the 6 most limited of {throttled} flows with a limiter" in fig._suptitle.get_text().replace("\n", " ")


def test_identical_series_are_drawn_distinguishably(scheme_runs):
    # C1->S1 and C3->S1 deliver alike: the later line is thinner and dashed, so an equal
    # earlier one still shows around it.
    (ax,) = plots.time_figure([scheme_runs["pause"]], ["pause"], "flows", ["C1->S1", "C3->S1"], "t").axes
    first, second = ax.get_lines()
    assert first.get_linewidth() > second.get_linewidth()
    assert first.get_linestyle() != second.get_linestyle()


def test_queue_axes_use_the_scenarios_kilobyte(scheme_runs):
    assert scheme_runs["pause"].kilobyte == 1024 and scheme_runs["qcn"].kilobyte == 1000
    (ax,) = scheme_runs["qcn"].plot("queue_occupancy").axes
    assert ax.get_ylabel() == "mean occupancy (KB = 1000 B)"
    (ax,) = scheme_runs["pause"].plot("queue_occupancy").axes
    assert ax.get_ylabel() == "mean occupancy (KiB = 1024 B)"
    # A scenario given as a dict (no file to read) counts decimal kilobytes.
    bare = copy.copy(scheme_runs["pause"])
    bare.summary = {**bare.summary, "scenario_file": "<dict>"}
    assert bare.kilobyte == 1000


def threshold_lines(ax) -> dict[str, float]:
    """The horizontal threshold lines of a panel by legend label: label -> y (axis units)."""
    names = ("ECN", "PAUSE", "QCN/BCN Qeq")
    found = {}
    for line in ax.get_lines():
        y = np.unique(line.get_ydata())
        if line.get_label().startswith(names):
            assert len(y) == 1, line.get_label()
            found[line.get_label()] = float(y[0])
    return found


def line_at(lines: dict[str, float], name: str) -> list[float]:
    return sorted(y for label, y in lines.items() if label.startswith(name + " "))


def test_queue_occupancy_draws_the_configured_thresholds(scheme_runs, result):
    sc = scenario_file(PAUSE)
    kb = sc["kilobyte"]
    pause = sc["defaults"]["switch"]["pause"]
    (ax,) = scheme_runs["pause"].plot("queue_occupancy").axes
    lines = threshold_lines(ax)
    # In the axis's own unit (KiB here), one line per value.
    assert line_at(lines, "PAUSE XOFF") == [scenario_size(pause["xoff"], kb) / kb]
    assert line_at(lines, "PAUSE XON") == [scenario_size(pause["xon"], kb) / kb]
    assert "PAUSE XOFF 133 KiB" in lines
    qcn = scenario_file(SCENARIOS / "qcn_tcp" / "hotspot.toml")
    (ax,) = scheme_runs["qcn"].plot("queue_occupancy").axes
    assert threshold_lines(ax) == {"QCN/BCN Qeq 26 KB": scenario_size(qcn["qcn"]["qeq"], 1000) / 1000}
    (ax,) = result.plot("queue_occupancy").axes  # no thresholds
    assert threshold_lines(ax) == {}


def test_red_thresholds_are_two_lines_a_step_one():
    path = SCENARIOS / "dcqcn" / "convergence.toml"
    ecn = scenario_file(path)["defaults"]["switch"]["ecn"]
    (ax,) = cnsim.run(path, duration="1ms").plot("queue_occupancy").axes
    lines = threshold_lines(ax)
    assert line_at(lines, "ECN Kmin") == [scenario_size(ecn["kmin"], 1000) / 1000]
    assert line_at(lines, "ECN Kmax") == [scenario_size(ecn["kmax"], 1000) / 1000]
    path = ROOT / "bench" / "fat_tree_k8_lossless.toml"
    ecn = scenario_file(path)["defaults"]["switch"]["ecn"]
    small = {"params.k": 4, "params.half": 2, "duration": "200us", "bin": "20us"}
    (ax,) = cnsim.run(path, set=small).plot("queue_occupancy").axes
    lines = threshold_lines(ax)
    assert line_at(lines, "ECN K") == [scenario_size(ecn["k"], 1000) / 1000]
    assert not line_at(lines, "ECN Kmin") and not line_at(lines, "ECN Kmax")


def test_a_comparison_lists_each_threshold_once(scheme_runs):
    fig = plots.figure([scheme_runs["pause"], scheme_runs["pause"]], "queue_occupancy", labels=["a", "b"])
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert sum(t.startswith("PAUSE XOFF") for t in legend) == 1
    assert sum(t.startswith("PAUSE XON") for t in legend) == 1
    assert all(line_at(threshold_lines(ax), "PAUSE XOFF") for ax in fig.axes)  # on every queue's panel


def test_buffer_use_draws_the_dynamic_xoff_threshold(scheme_runs):
    shared = scheme_runs["shared"]
    alpha = switch_settings(scenario_file(SCENARIOS / "pfc" / "incast_1000.toml"), "SW")["mmu"]["alpha"]
    (ax,) = shared.plot("buffer_use").axes
    (xoff,) = [line for line in ax.get_lines() if line.get_label().startswith("lossless XOFF")]
    b = shared.buffer_occupancy
    kb = shared.kilobyte
    expect = alpha * (b["shared_pool_bytes"] - b["shared_mean_bytes"]).to_numpy() / kb
    # A step per bin, and the closing point of the last.
    assert np.allclose(xoff.get_ydata(), np.append(expect, expect[-1]), rtol=1e-12)
    assert f"{alpha:g} × free pool" in xoff.get_label()


@pytest.fixture(scope="module")
def fat_tree() -> cnsim.Result:
    """A k = 4 fat tree: 16 hosts, 240 flows, 96 queues."""
    return cnsim.run(ROOT / "bench" / "fat_tree_k8.toml",
                     set={"params.k": 4, "params.half": 2, "duration": "2ms", "bin": "100us"})


def test_a_fat_tree_shows_its_top_flows_and_says_so(fat_tree):
    assert len(fat_tree.flows) == 240
    fig = fat_tree.plot("throughput_flows")
    (ax,) = fig.axes
    assert len(ax.get_lines()) == plots.MAX_SERIES
    assert "the 12 busiest of 240 flows" in fig._suptitle.get_text().replace("\n", " ")
    # The busiest: no flow left out delivered more than the least of those shown.
    delivered = fat_tree.flow_throughput.groupby("flow")["delivered_gbps"].sum()
    shown = [line.get_label() for line in ax.get_lines()]
    assert delivered.drop(shown).max() <= delivered[shown].min()
    assert_inside(fig)
    # Compared with another run: one panel per item, at most MAX_PANELS.
    fig = plots.figure([fat_tree, fat_tree], "throughput_flows", labels=["a", "b"])
    assert len(fig.axes) == plots.MAX_PANELS
    assert_inside(fig)


def test_result_plot_names_the_views(result):
    with pytest.raises(ValueError, match="unknown view 'nope'; views: throughput_links"):
        result.plot("nope")
    with pytest.raises(ValueError, match="rate_limiters.*congestion-notification"):
        result.plot("rate_limiters")
    fig = result.plot("drops_over_time")
    assert "CORE->S1" in fig.axes[0].get_yticklabels()[0].get_text()


def test_importing_the_plots_leaves_matplotlibs_backend_alone(python_exe):
    """A notebook's inline backend (here: pdf, chosen first) still draws after cnsim's figures."""
    code = ("import matplotlib; matplotlib.use('pdf'); import cnsim, cnsim.plots, cnsim.results; "
            "print(matplotlib.get_backend())")
    res = subprocess.run([python_exe, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "pdf"
