"""Figures: item choice, labels, files."""

from __future__ import annotations

import copy

import pytest

import cnsim
from cnsim import plots

from conftest import NO_CM

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
    assert sorted(f.name for f in files) == sorted(
        f"{v}.{fmt}" for v in ("throughput_links", "throughput_flows", "queue_occupancy", "drops")
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
    assert any(y == "mean occupancy (KB = 1000 B)" for _, y in seen["queue_occupancy"])
    assert any("Gb/s" in y for _, y in seen["throughput_flows"])
    assert seen["drops"] == [("", "frames dropped")]
    assert plt.get_fignums() == []  # figures are closed


def test_plot_rejects_unknown_format(result, tmp_path):
    with pytest.raises(ValueError):
        plots.plot(result, tmp_path, "jpeg")
