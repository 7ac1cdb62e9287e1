"""A run's flows and PFC events in the HPCC ns-3 simulator's ``fct.txt`` and ``pfc.txt`` layouts.

Its third.cc writes one line per finished flow, as it finishes::

    sip dip sport dport size start_time fct standalone_fct
    0b000201 0b000101 10000 100 200000000 2000000000 16183260 16160480

(IPs in 8 hex digits, ``0x0b000001 + (id / 256) * 0x10000 + (id % 256) * 0x100`` for node ``id``;
sizes in bytes; times in ns), and one line per PFC frame a port receives::

    time node_id node_type if_index type
    2000012345 0 1 3 1

(time in ns; node type 0 a host, 1 a switch; ``if_index`` the port's interface, 1 for the node's
first link in the topology file; type 1 pause, 0 resume). The analysis scripts read columns by
position (``fct_analysis.py``: ``$4`` the port, ``$5`` the size, ``$6 + $7`` the finish, ``$7 / $8``
the slowdown).

From cnsim's tables:

* ``fct.txt``: the workload flows that finished, in the order they finished. ``standalone_fct``
  is cnsim's ideal FCT (``ideal_fct_s``). Source ports count from 10000 per (source, destination)
  pair in order of start time, as third.cc numbers them; the destination port comes from the
  workload's name (``hpcc_dport100`` -> 100, as ``cnsim import hpcc`` names them), else 100.
* ``pfc.txt``: the ``received`` rows of ``pfc_events`` (the frame taking effect at the paused
  transmitter, the port that received it), quanta > 0 as 1 (pause), 0 as 0 (resume). cnsim
  refreshes a held XOFF, so a long pause shows as several pause lines before its resume.

Node ids: a scenario whose nodes are all named ``hN`` (hosts) and ``sN`` (switches), as imported
ones are, keeps those ids; any other is numbered in the scenario's node order from 0.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

FCT_FILE = "fct.txt"
PFC_FILE = "pfc.txt"
FIRST_SPORT = 10000
DEFAULT_DPORT = 100

_ID_NAME = re.compile(r"([hs])(0|[1-9][0-9]*)")
_DPORT = re.compile(r"dport(\d+)$")


def node_ip(node_id: int) -> int:
    """The simulator's IPv4 address of node *node_id* (11.x.y.1), as an integer."""
    return 0x0B000001 + (node_id // 256) * 0x00010000 + (node_id % 256) * 0x00000100


@dataclass
class ExportNodes:
    """Node ids, kinds and interface numbers of a scenario, as the simulator would number them."""

    #: node name -> id
    ids: dict[str, int]
    #: node name -> 0 (host) or 1 (switch)
    types: dict[str, int]
    #: (node, neighbour) -> interface number, 1 for the node's first link
    interfaces: dict[tuple[str, str], int]
    #: True if the ids come from the names (hN, sN)
    from_names: bool

    @classmethod
    def from_scenario(cls, nodes: Iterable[Mapping[str, Any]], links: Iterable[Mapping[str, Any]]) -> ExportNodes:
        """From a resolved scenario's ``nodes`` (``name``, ``kind``) and ``links`` (``a``, ``b``), in
        their order, as :func:`cnsim.validate` returns them."""
        nodes = list(nodes)
        types = {n["name"]: 1 if n["kind"] == "switch" else 0 for n in nodes}
        ids: dict[str, int] = {}
        for n in nodes:
            m = _ID_NAME.fullmatch(n["name"])
            if not m or (m.group(1) == "s") != (n["kind"] == "switch"):
                break
            ids[n["name"]] = int(m.group(2))
        from_names = len(ids) == len(nodes) and len(set(ids.values())) == len(ids)
        if not from_names:
            ids = {n["name"]: i for i, n in enumerate(nodes)}
        count: dict[str, int] = defaultdict(int)
        interfaces: dict[tuple[str, str], int] = {}
        for link in links:
            for a, b in ((link["a"], link["b"]), (link["b"], link["a"])):
                count[a] += 1
                interfaces.setdefault((a, b), count[a])
        return cls(ids, types, interfaces, from_names)

    def id(self, name: str) -> int:
        try:
            return self.ids[name]
        except KeyError:
            raise ValueError(f"node {name!r} is not a node of the scenario") from None


def _ns(seconds: float) -> int:
    return int(round(float(seconds) * 1e9))


def _dport(workload: str) -> int:
    m = _DPORT.search(workload)
    return int(m.group(1)) if m and int(m.group(1)) <= 65535 else DEFAULT_DPORT


def _k(name: str) -> int:
    _, sep, k = name.rpartition("#")
    return int(k) if sep and k.isdigit() else 0


def fct_text(flows: pd.DataFrame, nodes: ExportNodes) -> str:
    """``fct.txt`` from a run's ``flows`` table: one line per finished workload flow.

    Rows without a ``workload`` (sources' flows) are skipped, and so are unfinished flows
    (``finish_s`` NaN), which the simulator does not write either.
    """
    if len(flows) == 0 or "workload" not in flows.columns:
        return ""
    rows = flows[flows["workload"].notna()]
    if len(rows) == 0:
        return ""
    records = rows.to_dict("records")
    # Source ports in the order flows start (third.cc numbers each pair's flows from 10000).
    order = sorted(range(len(records)), key=lambda i: (float(records[i]["start_s"]), str(records[i]["workload"]),
                                                      _k(str(records[i]["name"]))))
    next_port: dict[tuple[str, str], int] = defaultdict(lambda: FIRST_SPORT)
    sport = {}
    for i in order:
        pair = (str(records[i]["src"]), str(records[i]["dst"]))
        sport[i] = next_port[pair]
        next_port[pair] += 1
    finished = [i for i in order if _finite(records[i].get("finish_s"))]
    finished.sort(key=lambda i: float(records[i]["finish_s"]))  # stable: ties keep the start order
    lines = []
    for i in finished:
        r = records[i]
        start = float(r["start_s"])
        fct = r.get("fct_s")
        fct = float(fct) if _finite(fct) else float(r["finish_s"]) - start
        ideal = r.get("ideal_fct_s")
        if not _finite(ideal):
            raise ValueError(f"flow {r['name']!r} has no ideal FCT (ideal_fct_s) for the standalone_fct column")
        lines.append(
            f"{node_ip(nodes.id(str(r['src']))):08x} {node_ip(nodes.id(str(r['dst']))):08x} {sport[i]} "
            f"{_dport(str(r['workload']))} {int(r['size_bytes'])} {_ns(start)} {_ns(fct)} {_ns(float(ideal))}\n"
        )
    return "".join(lines)


def pfc_text(pfc_events: pd.DataFrame, nodes: ExportNodes) -> str:
    """``pfc.txt`` from a run's ``pfc_events`` table: one line per PFC frame (and class) received."""
    if len(pfc_events) == 0:
        return ""
    rows = pfc_events[pfc_events["direction"] == "received"]
    lines = []
    for r in rows.sort_values("time_s", kind="stable").itertuples(index=False):
        node, sep, peer = str(r.queue).partition("->")
        if not sep:
            raise ValueError(f"pfc_events: queue {r.queue!r} is not a queue name NODE->PEER")
        try:
            interface = nodes.interfaces[(node, peer)]
        except KeyError:
            raise ValueError(f"pfc_events: queue {r.queue!r} is not a link of the scenario") from None
        kind = "1" if int(r.quanta) > 0 else "0"
        lines.append(f"{_ns(r.time_s)} {nodes.id(node)} {nodes.types[node]} {interface} {kind}\n")
    return "".join(lines)


def write_export(slot: Any, flows: pd.DataFrame, pfc_events: pd.DataFrame, nodes: ExportNodes) -> dict[str, int]:
    """Write ``fct.txt`` and ``pfc.txt`` into a result being saved (an :class:`~cnsim.outputs.Reservation`):
    they become part of the result directory, written with it in one rename. Returns the lines of each."""
    texts = {FCT_FILE: fct_text(flows, nodes), PFC_FILE: pfc_text(pfc_events, nodes)}
    for name, text in texts.items():
        slot.write(name, lambda path, text=text: Path(path).write_text(text, encoding="ascii"))
    return {name: text.count("\n") for name, text in texts.items()}


def _finite(value: Any) -> bool:
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False
