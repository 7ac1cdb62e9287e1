"""cnsim: packet-level simulation of congestion management in data-center Ethernet.

The simulation engine is written in Rust (``cnsim._core``); this package is the
user-facing side: the :func:`run` / :func:`validate` API, results as pandas
tables (:class:`Result`), plots and the ``cnsim`` command line.
"""

from ._core import ScenarioError, SimulationError
from ._core import __version__ as _core_version
from .api import run, validate
from .results import Result

__version__: str = _core_version

__all__ = ["run", "validate", "Result", "ScenarioError", "SimulationError", "__version__"]
