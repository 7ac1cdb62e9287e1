"""Import from and export to the HPCC ns-3 simulator (alibaba-edu/High-Precision-Congestion-Control).

* :func:`import_hpcc` reads its ``config.txt``, topology file and flow file and builds a commented
  cnsim scenario (``cnsim import hpcc CONFIG``);
* :func:`fct_text` and :func:`pfc_text` write a run's flows and PFC events in the layouts of its
  ``fct.txt`` and ``pfc.txt`` (``cnsim run SCENARIO --export hpcc``).

docs/hpcc.md describes the formats, the mapping and what is not mapped.
"""

from .export import ExportNodes, fct_text, node_ip, pfc_text, write_export
from .parse import HpccError, read_config, read_flows, read_topology
from .scenario import Imported, Unmapped, import_hpcc

__all__ = [
    "ExportNodes",
    "HpccError",
    "Imported",
    "Unmapped",
    "fct_text",
    "import_hpcc",
    "node_ip",
    "pfc_text",
    "read_config",
    "read_flows",
    "read_topology",
    "write_export",
]
