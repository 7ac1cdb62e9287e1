"""The terminal summary of a run: tables cut to their most telling rows."""

from __future__ import annotations

import io

from rich.console import Console

import cnsim
from cnsim import console

from conftest import NO_CM, ROOT


def _text(table) -> str:
    out = Console(file=io.StringIO(), width=200)
    out.print(table)
    return out.file.getvalue()


def test_a_fat_tree_prints_twelve_flows_and_counts_the_rest():
    r = cnsim.run(ROOT / "bench" / "fat_tree_k8.toml",
                  set={"params.k": 4, "params.half": 2, "duration": "2ms"})
    text = _text(console.flow_table(r))
    assert "Flows: the 12 with the most drops, then bytes delivered, of 240" in text
    assert "… and 228 more flows" in text
    shown = [name for name in r.flows["name"] if f"{name} " in text]
    assert len(shown) == console.MAX_ROWS
    # The flows shown dropped most, then delivered most.
    ranked = r.flows.sort_values(["dropped_frames", "delivered_bytes"], ascending=False, kind="stable")
    assert set(shown) == set(ranked["name"].head(console.MAX_ROWS))
    assert len(text.splitlines()) < 20


def test_a_small_run_prints_every_flow_in_its_order():
    r = cnsim.run(NO_CM, duration="8ms")
    text = _text(console.flow_table(r))
    assert "more flows" not in text and text.splitlines()[0].strip() == "Flows"
    positions = [text.index(f"{name} ") for name in r.flows["name"]]
    assert positions == sorted(positions)
