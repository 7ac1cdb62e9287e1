"""The memory estimate a run is checked against covers the whole run, result tables included.

A run measured in a child process (run, build the tables, save them, as
``cnsim run`` does) must not use more than its estimate above what the
process held before it, and the estimate must not be so generous that it
refuses runs the machine can hold (at most twice the measured use).
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status (Linux)")

_spec = importlib.util.spec_from_file_location("bench_memory", ROOT / "bench" / "memory.py")
memory = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(memory)


@pytest.fixture(scope="module")
def process_bytes() -> int:
    return memory.peak_bytes(memory._star_all_to_all(2, "1ms"), {"duration": "1ms"})


@pytest.mark.parametrize(
    "scenario",
    [
        memory._star_all_to_all(40, "5us"),  # per flow and bin: 1,560 flows x 1,000 bins
        memory._star_all_to_all(40, "10us", memory.QCN_EVERY_FLOW),  # with a rate limiter on every flow
        memory._fat_tree_all_to_all(12),  # per flow: 186,192 flows, 2 bins
    ],
    ids=["flow-bins", "flow-bins-qcn", "flows"],
)
def test_estimate_covers_the_measured_peak(scenario, process_bytes):
    import cnsim

    estimate = cnsim.validate(scenario)["memory_estimate_bytes"]
    used = memory.peak_bytes(scenario, {}) - process_bytes
    assert used <= estimate <= 2 * used, f"estimate {estimate / 2**20:.0f} MiB, used {used / 2**20:.0f} MiB"


def test_running_out_of_memory_while_building_tables_is_a_simulation_error(monkeypatch):
    """The result is lost then, but the error says why and what to change (not a bare MemoryError)."""
    import cnsim
    from cnsim.results import Result

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(Result, "from_core", no_memory)
    with pytest.raises(cnsim.SimulationError, match="out of memory while building the result tables.*wider 'bin'"):
        cnsim.run(memory._star_all_to_all(2, "1ms"), duration="1ms")


def test_the_run_memory_is_the_runs_own_growth_not_the_process_peak():
    import json
    import subprocess
    import sys

    from conftest import NO_CM

    code = (
        "import cnsim, json, sys\n"
        "small = cnsim.run(sys.argv[1], set={'duration': '10ms'}).summary\n"
        "big = cnsim.run(sys.argv[1], set={'duration': '100ms', 'bin': '1us'}).summary\n"
        "print(json.dumps([small['rss_growth_bytes'], big['rss_growth_bytes'], big['peak_memory_bytes']]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(NO_CM)], capture_output=True, text=True, check=True)
    small, big, peak = json.loads(out.stdout)
    # 100,000 bins of every series: tens of MB that a 100-bin run does not need.
    assert big > 20e6, big
    assert small < big / 4, (small, big)
    # The process's peak also holds the interpreter and its libraries.
    assert peak > big
