"""cnsim: packet-level simulation of congestion management in data-center Ethernet.

The simulation engine is written in Rust (``cnsim._core``); this package is the
user-facing side: the :func:`run` / :func:`validate` / :func:`sweep` API, results as pandas
tables (:class:`Result`), plots and the ``cnsim`` command line.
"""

from ._core import ScenarioError, SimulationError
from ._core import __version__ as _core_version
from .api import run, validate
from .points import Point, SweepError
from .results import Result
from .sweep import load_point, load_sweep, sweep, sweep_points

__version__: str = _core_version

__all__ = [
    "Point",
    "Result",
    "ScenarioError",
    "SimulationError",
    "SweepError",
    "__version__",
    "load_point",
    "load_sweep",
    "run",
    "sweep",
    "sweep_points",
    "validate",
]
