"""Types of ``cnsim._core``, the engine's Python face (crates/cnsim-py/src/lib.rs).

tests/test_core_stub.py checks that this file and the module name the same
things with the same parameters.
"""

from typing import Any, Final

__version__: Final[str]
#: Identifies the engine's build; results record it in their summary.
ENGINE_ID: Final[str]
#: How the engine was compiled: "release", "release, PGO" or "debug".
BUILD: Final[str]
#: The binned series ``run`` returns, in order: (name, rows, dtype), where
#: rows is "flows", "limiters", "queues", "buffers" or "ingress" and dtype
#: a numpy dtype name.
SERIES: Final[tuple[tuple[str, str, str], ...]]

class ScenarioError(Exception):
    """The scenario is invalid; the message names file, line, field, expected and found."""

class SimulationError(Exception):
    """The simulation could not complete (for example, it was cancelled)."""

class Progress:
    """A handle to watch a run from another thread and to cancel it."""

    def __new__(cls) -> Progress: ...
    @property
    def sim_time_s(self) -> float: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def events(self) -> int: ...
    def cancel(self) -> None: ...

def validate(
    text: str,
    origin: str,
    overrides: list[tuple[str, str]] = ...,
    fmt: str = "toml",
) -> str:
    """Validate scenario text; return a JSON description of the resolved scenario."""

def read_scenario(path: str) -> str:
    """The text of a scenario file (FileNotFoundError, or ScenarioError naming the path)."""

def name_error(name: str) -> str | None:
    """Why *name* may not be a name, or None."""

def scenario_schema() -> str:
    """The JSON Schema of the scenario format (draft 7), as JSON text ending with a newline."""

def run(
    text: str,
    origin: str,
    overrides: list[tuple[str, str]] = ...,
    fmt: str = "toml",
    seed: int | None = None,
    progress: Progress | None = None,
    max_events: int | None = None,
    max_wall_s: float | None = None,
    checks: bool = True,
    threads: int = 0,
) -> dict[str, Any]:
    """Run a scenario. Returns ``summary`` (JSON text), ``bin_s``, ``n_bins``,
    ``flows`` and ``queues`` (the records as columns: one numpy array, or a
    pyarrow ``large_string`` array for text, per field, by the field's name;
    not in the summary), ``pfc_events`` (with PFC)
    and ``workload_flows`` (with workloads: one list per column, one entry per
    workload flow) and one rows × bins numpy matrix per entry of
    :data:`SERIES` (no rows for a series the run does not have; the flow
    series have a row per source flow, then one per workload; the limiter
    series one per source flow in ``flow_rl_flows``, the ascending indices
    of the flows that had a rate limiter)."""
