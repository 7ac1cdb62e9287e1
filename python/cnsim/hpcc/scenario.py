"""An HPCC ns-3 simulation (config, topology and flow files) as a commented cnsim scenario.

:func:`import_hpcc` reads the files and returns an :class:`Imported`: the scenario's TOML text
and what could not be mapped. docs/hpcc.md lists the mapping key by key; in short:

* nodes keep their ids: host N is ``hN``, switch N is ``sN``; links in the topology file's
  order (so that ``cnsim run --export hpcc`` finds the simulator's interface numbers again);
* the switches are shared-buffer switches (``BUFFER_SIZE`` MiB) with the simulator's MMU
  constants, PFC on every class the flows use, and ECN marking from ``KMIN_MAP``,
  ``KMAX_MAP`` and ``PMAX_MAP`` (per link rate, at dequeue);
* the flows are one ``kind = "list"`` workload per destination port (one for the usual flow
  files, all on port 100), RoCE with ``CC_MODE 1`` (DCQCN, Mellanox-style) or any mode cnsim
  lacks, TCP with DCTCP's reaction for ``CC_MODE 8``;
* HPCC, TIMELY and HPCC-PINT (``CC_MODE`` 3, 7, 10) have no counterpart: the scenario runs the
  flows without congestion control and says so at its top.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .parse import Config, Flows, HpccError, Topology, error, read_config, read_flows, read_topology

#: Header bytes per packet in the simulator's own ideal FCT: Ethernet 14, IPv4 20, UDP 8, its
#: sequence/priority header 6 (third.cc, qp_finish: the whole header without INT).
HEADER_BYTES = 48
#: The simulator's switch MMU constants (switch-mmu.cc): reserve per (port, queue), resume offset.
MMU_RESERVE = 4 * 1024
MMU_RESUME_OFFSET = 3 * 1024
#: The dynamic PFC threshold: the free buffer shifted right by 3 (third.cc's pfc_a_shift).
MMU_ALPHA = 0.125
#: third.cc's defaults of keys a config may leave out.
DEFAULT_STOP_S_NS = 3_010_000_000
DEFAULT_PAYLOAD = 1000
DEFAULT_BUFFER_MB = 16
DEFAULT_CC_MODE = 1
#: The port an HPCC flow is sent to when a workload's name does not say (fct_analysis.py's "normal").
DEFAULT_DPORT = 100
#: Most metrics bins a scenario gets (queues x bins is the size of its series).
MAX_BINS = 2000

CC_NAMES = {1: "DCQCN", 3: "HPCC", 7: "TIMELY", 8: "DCTCP", 10: "HPCC-PINT"}

_DCQCN_KEYS = ("ALPHA_RESUME_INTERVAL", "RATE_DECREASE_INTERVAL", "CLAMP_TARGET_RATE", "RP_TIMER",
               "FAST_RECOVERY_TIMES", "RATE_HAI")
_HPCC_KEYS = ("U_TARGET", "MI_THRESH", "INT_MULTI", "MULTI_RATE", "SAMPLE_FEEDBACK", "FAST_REACT")
_PINT_KEYS = ("PINT_LOG_BASE", "PINT_PROB")


@dataclass
class Unmapped:
    """A key (or another part of the input) the scenario does not carry over, and why."""

    what: str
    reason: str
    where: str = ""
    #: The config line it comes from (None: not a config key); the list is in line order.
    config_line: int | None = None

    def describe(self) -> str:
        at = f" [{self.where}]" if self.where else ""
        return f"{self.what}: {self.reason}{at}"


@dataclass
class Imported:
    """The result of :func:`import_hpcc`."""

    text: str
    unmapped: list[Unmapped]
    #: Remarks that are not keys: files read, lines ignored, flows left out, ...
    notes: list[str]
    config: Config
    topology: Topology
    flows: Flows
    topology_path: Path
    flows_path: Path
    hosts: int
    switches: int
    links: int
    #: Flows written into the scenario (0 with ``with_flows=False``).
    written_flows: int
    cc: str


def import_hpcc(
    config: str | os.PathLike,
    *,
    topology: str | os.PathLike | None = None,
    flows: str | os.PathLike | None = None,
    with_flows: bool = True,
    name: str | None = None,
    cwd: str | os.PathLike | None = None,
) -> Imported:
    """Read an HPCC config with its topology and flow files and build the cnsim scenario.

    *topology* and *flows* replace the config's ``TOPOLOGY_FILE`` and ``FLOW_FILE``; a relative
    path in the config is looked up as the simulator does (relative to the working directory, its
    ``simulation/`` folder when run with ``./waf``), then relative to the config's folder and the
    folder above it (``mix/config.txt`` names ``mix/topology.txt``). With ``with_flows=False``
    the flow file is still read (its priority groups choose the lossless classes) but no
    ``[[workloads]]`` is written. Raises :class:`HpccError` naming file, line and field.
    """
    cfg = read_config(config)
    here = Path(cwd) if cwd is not None else Path.cwd()
    topo_path = Path(topology) if topology is not None else _input(cfg, "TOPOLOGY_FILE", "--topology", here)
    flow_path = Path(flows) if flows is not None else _input(cfg, "FLOW_FILE", "--flows", here)
    topo = read_topology(topo_path)
    flow_file = read_flows(flow_path, topo)
    builder = _Builder(cfg, topo, flow_file, with_flows=with_flows,
                       name=name or _scenario_name(Path(config)),
                       topology_overridden=topology is not None, flows_overridden=flows is not None)
    return builder.build()


def _scenario_name(path: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", path.stem).strip("._") or "hpcc"
    return name


def _input(cfg: Config, key: str, option: str, cwd: Path) -> Path:
    entry = cfg.get(key)
    if entry is None:
        raise error(cfg.path, None, key, f"the {key} line (or the {option} option)", "none")
    value = Path(entry.values[0])
    if value.is_absolute():
        candidates = [value]
    else:
        folder = cfg.path.parent
        candidates = [cwd / value, folder / value, folder.parent / value]
    for candidate in candidates:
        if candidate.is_file():
            return _shortest(candidate, cwd)
    tried = ", ".join(str(c) for c in dict.fromkeys(candidates))
    raise error(cfg.path, entry.line, key, f"a file (looked for {tried}; or give {option})",
                f"no file {entry.values[0]!r}")


def _shortest(path: Path, cwd: Path) -> Path:
    """*path* relative to *cwd* if it lies below it, else as it is."""
    if path.is_absolute() and path.is_relative_to(cwd):
        return path.relative_to(cwd)
    return path


# --------------------------------------------------------------------------- formatting


def fmt_rate(bps: int) -> str:
    for unit, factor in (("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("Kbps", 10**3)):
        if bps % factor == 0:
            return f"{bps // factor}{unit}"
    return f"{bps}bps"


def fmt_time_ps(ps: int) -> str:
    if ps == 0:
        return "0ns"
    for unit, factor in (("s", 10**12), ("ms", 10**9), ("us", 10**6), ("ns", 10**3)):
        if ps % factor == 0:
            return f"{ps // factor}{unit}"
    return f"{ps}ps"


def fmt_seconds(ns: int) -> str:
    """Nanoseconds as exact decimal seconds: 2000000000 -> "2s", 2000000001 -> "2.000000001s"."""
    whole, frac = divmod(ns, 10**9)
    return f"{whole}.{frac:09d}".rstrip("0") + "s" if frac else f"{whole}s"


def _str(value: str) -> str:
    return json.dumps(value, ensure_ascii=True)


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(type(v))


def _comment(text: str) -> str:
    """Text safe inside a TOML comment (no line breaks or control characters)."""
    return "".join(c if c.isprintable() else "?" for c in text)


# --------------------------------------------------------------------------- the mapping


@dataclass
class _Section:
    header: str | None
    lines: list[str] = field(default_factory=list)

    def key(self, key: str, value: object, comment: str = "") -> None:
        text = f"{key} = {_value(value)}"
        if comment:
            text = f"{text:<40} # {_comment(comment)}"
        self.lines.append(text)

    def comment(self, text: str) -> None:
        self.lines.append(f"# {_comment(text)}" if text else "#")


class _Builder:
    def __init__(self, cfg: Config, topo: Topology, flows: Flows, *, with_flows: bool, name: str,
                 topology_overridden: bool, flows_overridden: bool) -> None:
        self.cfg = cfg
        self.topo = topo
        self.flows = flows
        self.with_flows = with_flows
        self.name = name
        self.overridden = {"TOPOLOGY_FILE": topology_overridden, "FLOW_FILE": flows_overridden}
        self.unmapped: list[Unmapped] = []
        self.notes: list[str] = []
        #: config keys dealt with (mapped, or listed as unmapped)
        self.done: set[str] = set()

    # ---------------------------------------------------------------- bookkeeping

    def mapped(self, *keys: str) -> None:
        self.done.update(keys)

    def not_mapped(self, key: str, reason: str) -> None:
        self.done.add(key)
        entry = self.cfg.get(key)
        if entry is None:
            return
        self.unmapped.append(Unmapped(entry.text, reason, f"{self.cfg.path.name}:{entry.line}", entry.line))

    def where(self, key: str) -> str:
        entry = self.cfg.get(key)
        return f"{key} {' '.join(entry.values)}" if entry else f"{key} absent: third.cc's default"

    # ---------------------------------------------------------------- build

    def build(self) -> Imported:
        cfg, topo = self.cfg, self.topo
        self.cc_mode = cfg.uint("CC_MODE", DEFAULT_CC_MODE)
        self.cc = CC_NAMES.get(self.cc_mode, f"CC_MODE {self.cc_mode}")
        self.payload = cfg.uint("PACKET_PAYLOAD_SIZE", DEFAULT_PAYLOAD)
        self.frame = self.payload + HEADER_BYTES
        if not 64 <= self.frame <= 9216:
            e = cfg.get("PACKET_PAYLOAD_SIZE")
            raise error(cfg.path, e.line if e else None, "PACKET_PAYLOAD_SIZE",
                        f"a payload from 16 to {9216 - HEADER_BYTES} bytes (cnsim frames are 64 to 9216 B, "
                        f"with {HEADER_BYTES} B of headers)", str(self.payload))
        self.stop_ns = cfg.seconds_ns("SIMULATOR_STOP_TIME", DEFAULT_STOP_S_NS)
        if self.stop_ns == 0:
            e = cfg.get("SIMULATOR_STOP_TIME")
            raise error(cfg.path, e.line if e else None, "SIMULATOR_STOP_TIME", "a time above 0 s", "0")
        self.transport = "tcp" if self.cc_mode == 8 else "roce"
        self._check_nodes()
        self._split_flows()
        self._classes()
        self.mapped("CC_MODE", "PACKET_PAYLOAD_SIZE", "SIMULATOR_STOP_TIME", "TOPOLOGY_FILE", "FLOW_FILE")

        top = _Section(None)
        nodes = _Section(None)
        link_defaults = _Section("defaults.link")
        switch = _Section("defaults.switch")
        host = _Section("defaults.host")
        priorities = _Section("priorities")
        transport = _Section(self.transport)
        cc = _Section("dcqcn") if self.cc_mode == 1 else None
        self._top(top)
        self._nodes(nodes, link_defaults)
        self._switches(switch)
        self._host(host)
        self._priorities(priorities)
        self._transport(transport)
        if cc is not None:
            self._dcqcn(cc)
        workloads = self._workloads()
        self._other_keys()

        parts = [self._header(), "\n".join(top.lines), "\n".join(nodes.lines)]
        for section in (link_defaults, switch, host, priorities, transport, cc):
            if section is not None and section.lines:
                parts.append("\n".join([f"[{section.header}]", *section.lines]))
        parts.extend(workloads)
        text = "\n\n".join(parts) + "\n"
        return Imported(
            text=text, unmapped=self.unmapped, notes=self.notes, config=cfg, topology=topo, flows=self.flows,
            topology_path=topo.path, flows_path=self.flows.path, hosts=len(self.host_link),
            switches=len(topo.switches), links=len(topo.links),
            written_flows=sum(len(f) for f in self.by_dport.values()) if self.with_flows else 0, cc=self.cc,
        )

    # ---------------------------------------------------------------- nodes

    def _check_nodes(self) -> None:
        topo = self.topo
        self.host_link: dict[int, int] = {}
        for i, link in enumerate(topo.links, 1):
            for end, node in (("src", link.src), ("dst", link.dst)):
                if topo.is_switch(node):
                    continue
                if node in self.host_link:
                    first = topo.links[self.host_link[node]].line
                    raise error(topo.path, link.line, f"link {i} of {len(topo.links)} {end}",
                                "a switch, or a host not linked before (a cnsim host has exactly one link)",
                                f"host {node}, already linked on line {first}")
                self.host_link[node] = i - 1
        hosts = [n for n in range(topo.nodes) if not topo.is_switch(n)]
        lonely = [n for n in hosts if n not in self.host_link]
        for flow in self.flows.flows:
            for end, node in (("src", flow.src), ("dst", flow.dst)):
                if node not in self.host_link:
                    raise error(self.flows.path, flow.line, f"flow {end}",
                                "a host with a link in the topology", f"host {node}, which has none")
        if lonely:
            self.notes.append(f"{topo.path}: {len(lonely)} host(s) without a link left out: "
                              f"{', '.join(map(str, lonely[:8]))}{' ...' if len(lonely) > 8 else ''}")
        if topo.ignored:
            first, last = topo.ignored
            self.notes.append(f"{topo.path}: lines {first}-{last} after the {len(topo.links)} links its first line "
                              f"announces are ignored (third.cc reads only those)")
        if self.flows.ignored:
            first, last = self.flows.ignored
            self.notes.append(f"{self.flows.path}: lines {first}-{last} after the {len(self.flows.flows)} flows its "
                              f"first line announces are ignored (third.cc reads only those)")
        if self.flows.out_of_order:
            lines = ", ".join(map(str, self.flows.out_of_order[:8]))
            self.notes.append(f"{self.flows.path}: flows on line(s) {lines} start before the flow above them; "
                              "third.cc wants ascending start times, cnsim takes them in any order")
        # the NIC rate: the first host's first link (third.cc's get_nic_rate)
        first_host = min(self.host_link) if self.host_link else None
        self.nic_rate = topo.links[self.host_link[first_host]].rate_bps if first_host is not None else 0

    def _classes(self) -> None:
        self.pgs = sorted({f.pg for f in self.flows.flows})
        self.ack_high = self.cfg.uint("ACK_HIGH_PRIO", 0) != 0
        if self.ack_high and 7 in self.pgs:
            self.ack_high = False
            self.not_mapped("ACK_HIGH_PRIO", "flows use priority group 7, the class cnsim would give the ACKs")
        else:
            self.mapped("ACK_HIGH_PRIO")
        top = max(self.pgs, default=3)
        self.classes = 8 if self.ack_high else top + 1

    def _top(self, s: _Section) -> None:
        s.key("name", self.name)
        s.key("description", f"imported from the HPCC ns-3 simulator's {self.cfg.path.name} ({self.cc})")
        s.key("duration", fmt_seconds(self.stop_ns), self.where("SIMULATOR_STOP_TIME") + " (seconds)")
        if self.with_flows and self.by_dport:
            s.key("until", "flows_finished", "end when every flow has finished; duration is the limit")
        bin_ps = _bin_ps(self.stop_ns * 1000)
        s.key("bin", fmt_time_ps(bin_ps), f"metrics bin: at most {MAX_BINS} bins (queues x bins of series)")

    def _nodes(self, s: _Section, defaults: _Section) -> None:
        topo = self.topo
        s.comment("Nodes keep the simulator's ids: host N is hN, switch N is sN (cnsim run --export hpcc")
        s.comment("maps them back). Links in the topology file's order, which numbers each node's interfaces.")
        s.lines.append("switches = [")
        s.lines.extend(_rows([f"{{ name = {_str(f's{n}')} }}" for n in sorted(topo.switches)]))
        s.lines.append("]")
        s.lines.append("hosts = [")
        s.lines.extend(_rows([f"{{ name = {_str(f'h{n}')} }}" for n in sorted(self.host_link)]))
        s.lines.append("]")
        rates = Counter(link.rate_bps for link in topo.links)
        delays = Counter(link.delay_ps for link in topo.links)
        self.link_rate = rates.most_common(1)[0][0] if rates else 10**9 * 100
        self.link_delay = delays.most_common(1)[0][0] if delays else 0
        defaults.key("rate", fmt_rate(self.link_rate), "the topology's most common link rate")
        defaults.key("delay", fmt_time_ps(self.link_delay), "and delay; links that differ say so")
        s.lines.append("links = [")
        for i, link in enumerate(topo.links, 1):
            fields = {"between": [self._name(link.src), self._name(link.dst)]}
            if link.rate_bps != self.link_rate:
                fields["rate"] = fmt_rate(link.rate_bps)
            if link.delay_ps != self.link_delay:
                fields["delay"] = fmt_time_ps(link.delay_ps)
            s.lines.append(f"  {_value(fields)},")
        s.lines.append("]")
        lossy = [link for link in topo.links if link.error_rate > 0]
        if lossy:
            lines = ", ".join(str(link.line) for link in lossy[:8]) + (" ..." if len(lossy) > 8 else "")
            self.unmapped.append(Unmapped(f"error_rate > 0 on {len(lossy)} link(s)",
                                          "packet loss on links: cnsim's links do not lose frames",
                                          f"{topo.path.name} lines {lines}"))

    def _name(self, node: int) -> str:
        return f"s{node}" if self.topo.is_switch(node) else f"h{node}"

    # ---------------------------------------------------------------- switches

    def _switches(self, s: _Section) -> None:
        cfg, topo = self.cfg, self.topo
        mb = cfg.uint("BUFFER_SIZE", DEFAULT_BUFFER_MB)
        if mb == 0:
            e = cfg.get("BUFFER_SIZE")
            raise error(cfg.path, e.line if e else None, "BUFFER_SIZE", "a buffer size in MB above 0", "0")
        self.mapped("BUFFER_SIZE", "USE_DYNAMIC_PFC_THRESHOLD")
        s.key("buffer_model", "shared", "one buffer per switch with an MMU, as the simulator's switches")
        s.key("buffer", f"{mb}MiB", self.where("BUFFER_SIZE") + " (MB of 1024 x 1024 B in third.cc)")
        s.comment("switch-mmu.cc's constants: 4 KiB reserved per ingress (port, queue), resume 3 KiB below the")
        s.comment("threshold, PFC threshold = 1/8 of the free buffer (dynamic, whatever USE_DYNAMIC_PFC_THRESHOLD")
        s.comment("says: third.cc's switches do not read it). Headroom: cnsim computes its own per port from the")
        s.comment("link (the simulator sets 3 x the link's one-way bandwidth-delay product).")
        s.key("mmu", {"reserve": f"{max(MMU_RESERVE, self.frame)}B", "resume_offset": f"{MMU_RESUME_OFFSET}B",
                      "alpha": MMU_ALPHA, "headroom": "auto"})
        faster = sorted({link.rate_bps for link in topo.links if link.rate_bps > self.nic_rate
                         and (topo.is_switch(link.src) or topo.is_switch(link.dst))})
        if faster:
            self.unmapped.append(Unmapped(
                "PFC threshold per port", f"third.cc doubles the 1/8 for each factor of two a switch port is faster "
                f"than the NIC rate ({fmt_rate(self.nic_rate)}; here {', '.join(map(fmt_rate, faster))}); cnsim "
                "has one alpha per switch, 1/8", topo.path.name))
        s.key("pfc", {"classes": self.pgs or [3]},
              "lossless: the classes of the flows (the simulator pauses every data queue)")
        if cfg.uint("ENABLE_QCN", 1):
            self._ecn(s)
        else:
            s.comment("no ECN marking: ENABLE_QCN 0")
            self.mapped("ENABLE_QCN", "KMAX_MAP", "KMIN_MAP", "PMAX_MAP")

    def _ecn(self, s: _Section) -> None:
        cfg, topo = self.cfg, self.topo
        maps = {"KMIN_MAP": cfg.rate_map("KMIN_MAP", "uint"), "KMAX_MAP": cfg.rate_map("KMAX_MAP", "uint"),
                "PMAX_MAP": cfg.rate_map("PMAX_MAP", "number")}
        used: dict[int, int] = {}
        for link in topo.links:
            if topo.is_switch(link.src) or topo.is_switch(link.dst):
                used.setdefault(link.rate_bps, link.line)
        params = []
        for rate, line in sorted(used.items()):
            values = {}
            for key, table in maps.items():
                e = cfg.get(key)
                if table is None or rate not in table:
                    raise error(cfg.path, e.line if e else None, key,
                                f"an entry for {rate} bit/s (a switch port's rate, {topo.path}:{line}; "
                                "third.cc needs one for every switch port)", "none")
                values[key] = table[rate]
            kmin, kmax, pmax = values["KMIN_MAP"] * 1000, values["KMAX_MAP"] * 1000, values["PMAX_MAP"]
            if kmax < kmin:
                e = cfg.get("KMAX_MAP")
                raise error(cfg.path, e.line if e else None, f"KMAX_MAP at {rate}",
                            f"at least KMIN_MAP's {values['KMIN_MAP']}", str(values["KMAX_MAP"]))
            if not 0 < pmax <= 1:
                e = cfg.get("PMAX_MAP")
                raise error(cfg.path, e.line if e else None, f"PMAX_MAP at {rate}",
                            "a marking probability in (0, 1] (cnsim's pmax)", str(pmax))
            params.append({"rate": fmt_rate(rate), "kmin": f"{kmin}B", "kmax": f"{kmax}B", "pmax": float(pmax)})
        self.mapped("ENABLE_QCN", *maps)
        s.comment("ECN from KMIN_MAP/KMAX_MAP (KB of 1000 B) and PMAX_MAP per port rate; the simulator marks as a")
        s.comment("packet leaves the queue, on the bytes behind it")
        if not params:
            return
        base = params[0]
        ecn = {"rule": "red", "kmin": base["kmin"], "kmax": base["kmax"], "pmax": base["pmax"], "at": "dequeue"}
        if len(params) > 1:
            ecn["rates"] = params[1:]
        s.key("ecn", ecn, f"at {base['rate']}" + ("; other rates in 'rates'" if len(params) > 1 else ""))

    # ---------------------------------------------------------------- classes and transport

    def _priorities(self, s: _Section) -> None:
        s.key("classes", self.classes, "the flows' priority groups are cnsim's classes")
        if len(self.pgs) > 1:
            s.comment("the simulator serves its data queues round robin: DWRR with equal weights")
            s.key("scheduler", "dwrr")
            s.key("weights", [1] * self.classes)
            if self.ack_high:
                s.key("strict", [7])
        if self.ack_high:
            s.key("acks", 7, "ACK_HIGH_PRIO 1: ACKs in the highest class (the simulator's queue 0)")

    def _host(self, s: _Section) -> None:
        # The simulator's NIC takes a packet from a queue pair only when its port is free; cnsim's host
        # egress buffer stands for the NIC's transmit FIFO. Unlimited, a flow would put all its bytes
        # there at once, past any rate limiter; two frames keep the port busy and leave the rest to the
        # queue pairs.
        s.comment("the NIC's transmit FIFO: the queue pairs (and DCQCN's rate limiters) hold the rest, as")
        s.comment("the simulator's NIC takes a packet from a queue pair only when its port is free")
        s.key("egress", f"{2 * self.frame}B", "two frames")

    def _transport(self, s: _Section) -> None:
        cfg = self.cfg
        s.key("header", f"{HEADER_BYTES}B",
              f"the simulator's headers (Ethernet, IPv4, UDP, its 6-B sequence header): {self.frame}-B frames "
              f"carry PACKET_PAYLOAD_SIZE {self.payload}")
        ack_interval = cfg.uint("L2_ACK_INTERVAL", None)
        if self.transport == "tcp":
            s.comment("cnsim's DCTCP is TCP NewReno with DCTCP's reaction to marks (a congestion window, slow")
            s.comment("start): not the simulator's rate-based DCTCP, which starts at line rate")
            s.key("ecn", "dctcp", self.where("CC_MODE"))
            g = cfg.number("EWMA_GAIN", None)
            if g is not None and 0 < g <= 1:
                s.key("dctcp_g", g, self.where("EWMA_GAIN"))
                self.mapped("EWMA_GAIN")
            elif g is not None:
                self.not_mapped("EWMA_GAIN", "cnsim's dctcp_g is in (0, 1]")
            if ack_interval == 1 or ack_interval is None:
                s.key("delayed_ack", False, "the simulator acknowledges every packet (L2_ACK_INTERVAL 1)")
                self.mapped("L2_ACK_INTERVAL")
            else:
                self.not_mapped("L2_ACK_INTERVAL", "cnsim's TCP acknowledges every segment or every second one")
            for key in ("HAS_WIN", "VAR_WIN", "GLOBAL_T"):
                self.not_mapped(key, "TCP's congestion window is its own")
            self.not_mapped("DCTCP_RATE_AI", "rate increase of the simulator's rate-based DCTCP; cnsim's DCTCP grows "
                            "its window")
            self.not_mapped("MIN_RATE", "rate floor of the simulator's rate-based DCTCP; cnsim's DCTCP has a window")
            self.not_mapped("RATE_BOUND", "TCP is not paced")
            self.not_mapped("L2_BACK_TO_ZERO", "RoCE's loss recovery; cnsim's TCP recovers losses itself")
            return
        if ack_interval in (None, 1):
            s.key("ack_every", 1, "L2_ACK_INTERVAL 1: an ACK per packet")
            self.mapped("L2_ACK_INTERVAL")
        else:
            self.not_mapped("L2_ACK_INTERVAL", "cnsim's RoCE acknowledges every ack_every packets; the simulator "
                            "counts this interval in bytes from the last ACK")
        if cfg.uint("L2_BACK_TO_ZERO", 0) == 0:
            s.comment("go-back-N on a NAK, as L2_BACK_TO_ZERO 0")
            self.mapped("L2_BACK_TO_ZERO")
        else:
            self.not_mapped("L2_BACK_TO_ZERO", "go-back-0 of chunks: cnsim's RoCE goes back N")
        has_win = cfg.uint("HAS_WIN", 1)
        var_win = cfg.uint("VAR_WIN", 0)
        global_t = cfg.uint("GLOBAL_T", 1)
        if not has_win:
            self.mapped("HAS_WIN", "VAR_WIN", "GLOBAL_T")
            s.comment("no window: HAS_WIN 0")
        elif not var_win and global_t == 1:
            bdp = self._max_bdp()
            s.key("window", f"{bdp}B", "HAS_WIN 1, VAR_WIN 0, GLOBAL_T 1: the largest bandwidth-delay product")
            self.mapped("HAS_WIN", "VAR_WIN", "GLOBAL_T")
        else:
            why = "a window that follows the rate (VAR_WIN 1)" if var_win else "a window per host pair (GLOBAL_T 0)"
            self.not_mapped("HAS_WIN", f"{why}: cnsim's RoCE window is one fixed size; none is set")
            self.not_mapped("VAR_WIN", "cnsim's RoCE window is a fixed size")
            self.not_mapped("GLOBAL_T", "cnsim's RoCE window is a fixed size")
        if cfg.uint("RATE_BOUND", 1):
            self.mapped("RATE_BOUND")
        else:
            self.not_mapped("RATE_BOUND", "cnsim always paces a flow at its limiter's rate")

    def _max_bdp(self) -> int:
        """third.cc's maxBdp: over host pairs, (2 x delay + store-and-forward time of a payload) x the
        slowest link's rate on the first shortest path found, in bytes."""
        topo = self.topo
        neighbours: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
        for link in topo.links:
            delay_ns = link.delay_ps // 1000
            neighbours[link.src].append((link.dst, delay_ns, link.rate_bps))
            neighbours[link.dst].append((link.src, delay_ns, link.rate_bps))
        for node in neighbours:
            neighbours[node].sort()
        best = 0
        for host in self.host_link:
            delay = {host: 0}
            tx = {host: 0}
            bw = {host: 2**64 - 1}
            queue = [host]
            i = 0
            while i < len(queue):
                now = queue[i]
                i += 1
                for nxt, d, rate in neighbours[now]:
                    if nxt in delay:
                        continue
                    delay[nxt] = delay[now] + d
                    tx[nxt] = tx[now] + self.payload * 1_000_000_000 * 8 // rate
                    bw[nxt] = min(bw[now], rate)
                    if topo.is_switch(nxt):
                        queue.append(nxt)
            for other in self.host_link:
                if other in delay and other != host:
                    rtt = delay[other] * 2 + tx[other]
                    best = max(best, rtt * bw[other] // 1_000_000_000 // 8)
        return best

    def _dcqcn(self, s: _Section) -> None:
        cfg = self.cfg
        s.comment("CC_MODE 1: DCQCN as the simulator's NIC model runs it (Mellanox's, rdma-hw.cc)")
        s.key("variant", "mellanox")
        s.key("cnp_interval", "0ns", "the simulator flags a CNP on the ACK of every marked packet,")
        s.key("cnp_on_ack", True, "and sends no CNP packets")
        times = (("ALPHA_RESUME_INTERVAL", "alpha_interval"), ("RATE_DECREASE_INTERVAL", "decrease_interval"),
                 ("RP_TIMER", "timer"))
        for key, name in times:
            v = cfg.number(key, None)
            if v is None:
                continue
            ps = round(v * 10**6)
            if ps <= 0:
                self.not_mapped(key, f"cnsim's {name} is a time above 0")
                continue
            s.key(name, fmt_time_ps(ps), f"{self.where(key)} (us)")
            self.mapped(key)
        g = cfg.number("EWMA_GAIN", None)
        if g is not None:
            if 0 < g <= 1:
                s.key("g", g, self.where("EWMA_GAIN"))
                self.mapped("EWMA_GAIN")
            else:
                self.not_mapped("EWMA_GAIN", "cnsim's g is in (0, 1]")
        fr = cfg.uint("FAST_RECOVERY_TIMES", None)
        if fr is not None:
            if fr >= 1:
                s.key("fast_recovery", fr, self.where("FAST_RECOVERY_TIMES"))
                self.mapped("FAST_RECOVERY_TIMES")
            else:
                self.not_mapped("FAST_RECOVERY_TIMES", "cnsim's fast_recovery is at least 1")
        for key, name in (("RATE_AI", "r_ai"), ("RATE_HAI", "r_hai"), ("MIN_RATE", "min_rate")):
            rate = cfg.rate(key)
            if rate is None:
                continue
            if rate == 0 and name == "min_rate":
                self.not_mapped(key, "cnsim's min_rate is above 0")
                continue
            s.key(name, fmt_rate(rate), self.where(key))
            self.mapped(key)
        clamp = cfg.uint("CLAMP_TARGET_RATE", None)
        if clamp is not None:
            s.key("clamp_target_rate", bool(clamp), self.where("CLAMP_TARGET_RATE"))
            self.mapped("CLAMP_TARGET_RATE")
        absent = [k for k in ("ALPHA_RESUME_INTERVAL", "RATE_DECREASE_INTERVAL", "RP_TIMER", "EWMA_GAIN",
                              "FAST_RECOVERY_TIMES", "RATE_AI", "RATE_HAI", "MIN_RATE", "CLAMP_TARGET_RATE")
                  if k not in cfg]
        if absent:
            s.comment(f"not in the config, cnsim's mellanox defaults: {', '.join(absent)}")

    # ---------------------------------------------------------------- flows

    def _split_flows(self) -> None:
        """The flows by destination port, without those that would start after the end."""
        self.by_dport: dict[int, list] = defaultdict(list)
        late = []
        for flow in self.flows.flows:
            if flow.start_ns >= self.stop_ns:
                late.append(flow)
                continue
            self.by_dport[flow.dport].append(flow)
        if late:
            self.notes.append(f"{self.flows.path}: {len(late)} flow(s) start at or after SIMULATOR_STOP_TIME "
                              f"(first on line {late[0].line}); the simulator never starts them, left out")

    def _workloads(self) -> list[str]:
        if not self.with_flows:
            self.notes.append("no [[workloads]] written (--no-flows)")
            return ["# The flows are left out (--no-flows); " + _comment(
                f"{self.flows.path} has {len(self.flows.flows)}.")]
        out = []
        transport_note = ("DCTCP: TCP connections" if self.transport == "tcp" else
                          "RoCE queue pairs" + (", DCQCN-controlled" if self.cc_mode == 1 else ""))
        for dport, flows in sorted(self.by_dport.items()):
            lines = [
                f"# {self.flows.path.name}: the flows to port {dport} ({len(flows)}), {transport_note}. Its "
                "columns src dst pg dport size start",
                "# are from, to, priority, the workload's name, size (B) and start (s).",
                "[[workloads]]",
                f"name = {_str(f'hpcc_dport{dport}')}".ljust(40) + " # the port is kept for --export hpcc",
                'kind = "list"',
                f"transport = {_str(self.transport)}",
                f"frame = {_str(f'{self.frame}B')}".ljust(40) + f" # PACKET_PAYLOAD_SIZE {self.payload} + "
                f"{HEADER_BYTES} B of headers",
                "flows = [",
            ]
            for f in flows:
                entry = {"from": f"h{f.src}", "to": f"h{f.dst}", "size": f.size, "start": fmt_seconds(f.start_ns),
                         "priority": f.pg}
                lines.append(f"  {_value(entry)},".ljust(84) + f" # {self.flows.path.name}:{f.line}")
            lines.append("]")
            out.append("\n".join(lines))
        return out

    # ---------------------------------------------------------------- the other keys

    def _other_keys(self) -> None:
        cfg, mode = self.cfg, self.cc_mode
        not_with = f"not used with CC_MODE {mode} ({self.cc})"
        if mode not in (1, 8):
            reason = {3: "HPCC (INT-based): cnsim has no HPCC", 7: "TIMELY (RTT-based): cnsim has no TIMELY",
                      10: "HPCC-PINT: cnsim has no HPCC"}.get(mode, "not a congestion control cnsim knows")
            self.not_mapped("CC_MODE", reason + "; the flows run without congestion control")
        for key in _DCQCN_KEYS + ("RATE_AI", "MIN_RATE", "EWMA_GAIN"):
            if key in self.done:
                continue
            if mode == 1:
                continue
            if mode in (3, 10) and key == "RATE_AI":
                self.not_mapped(key, "HPCC's additive increase: cnsim has no HPCC")
            elif mode in (3, 10) and key == "MIN_RATE":
                self.not_mapped(key, "HPCC's rate floor: cnsim has no HPCC")
            elif mode == 7 and key in ("RATE_AI", "RATE_HAI", "MIN_RATE"):
                self.not_mapped(key, "TIMELY's rate steps and floor: cnsim has no TIMELY")
            else:
                self.not_mapped(key, not_with)
        if mode != 8 and "DCTCP_RATE_AI" not in self.done:
            self.not_mapped("DCTCP_RATE_AI", not_with)
        for key in _HPCC_KEYS:
            self.not_mapped(key, "HPCC parameter: cnsim has no HPCC" if mode in (3, 10) else
                            f"HPCC parameter, {not_with}")
        for key in _PINT_KEYS:
            self.not_mapped(key, "HPCC-PINT parameter: cnsim has no HPCC" if mode == 10 else
                            f"HPCC-PINT parameter, {not_with}")
        err = cfg.number("ERROR_RATE_PER_LINK", 0.0)
        if err:
            self.not_mapped("ERROR_RATE_PER_LINK", "packet loss on links: cnsim's links do not lose frames")
        else:
            self.mapped("ERROR_RATE_PER_LINK")
        down = cfg.get("LINK_DOWN")
        if down is None or down.values[0] == "0":
            self.mapped("LINK_DOWN")
        else:
            self.not_mapped("LINK_DOWN", "a link failure during the run: cnsim's links stay up (static routes "
                            "can model a failure from the start)")
        self.not_mapped("L2_CHUNK_SIZE", "chunks of go-back-0 and ACKs at chunk ends: cnsim's RoCE goes back N "
                        "and acknowledges every ack_every packets")
        self.not_mapped("PAUSE_TIME", "the pause time in the simulator's PFC frames, which its receivers do not "
                        "time (a queue stays paused until the resume); cnsim's XOFF is 65,535 quanta, refreshed "
                        "while held")
        for key in ("DATA_RATE", "LINK_DELAY"):
            self.not_mapped(key, "read but not used by third.cc (the topology gives each link's rate and delay)")
        for key in ("TRACE_FILE", "TRACE_OUTPUT_FILE", "ENABLE_TRACE"):
            self.not_mapped(key, "packet-level trace (mix.tr): cnsim writes none; its result tables hold the "
                            "per-queue and per-flow series")
        for key in ("FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE"):
            self.not_mapped(key, "output file: cnsim run --export hpcc writes fct.txt and pfc.txt into the result "
                            "directory")
        for key in ("QLEN_MON_FILE", "QLEN_MON_START", "QLEN_MON_END"):
            self.not_mapped(key, "queue-length histograms: cnsim's queue_occupancy table has each queue's mean and "
                            "peak per bin")
        for entry in cfg.unknown:
            self.unmapped.append(Unmapped(entry.text, "not a key third.cc reads (it skips it too)",
                                          f"{cfg.path.name}:{entry.line}", entry.line))
        for key, first, later in cfg.repeated:
            self.notes.append(f"{cfg.path}: {key} on lines {first} and {later}; the last one counts, as in third.cc")
        for key, entry in cfg.entries.items():
            if key not in self.done:  # a key read but neither mapped nor listed: list it rather than lose it
                self.unmapped.append(Unmapped(entry.text, "not mapped", f"{cfg.path.name}:{entry.line}", entry.line))
        self.unmapped.sort(key=lambda u: (u.config_line is None, u.config_line or 0))

    # ---------------------------------------------------------------- header

    def _header(self) -> str:
        from .. import __version__

        cfg, topo = self.cfg, self.topo
        lines = [
            f"Imported by `cnsim import hpcc` (cnsim {__version__}) from the HPCC ns-3 simulator's files:",
            f"  config    {cfg.path}",
            f"  topology  {topo.path} ({_count(topo.nodes, 'node')}: {_count(len(topo.switches), 'switch')}, "
            f"{_count(len(self.host_link), 'host')}; {_count(len(topo.links), 'link')})"
            + (" (given with --topology)" if self.overridden["TOPOLOGY_FILE"] else ""),
            f"  flows     {self.flows.path} ({_count(len(self.flows.flows), 'flow')})"
            + (" (given with --flows)" if self.overridden["FLOW_FILE"] else ""),
            "docs/hpcc.md describes the mapping; cnsim run --export hpcc writes fct.txt and pfc.txt.",
        ]
        if self.cc_mode not in (1, 8):
            lines += [
                "",
                "!" * 96,
                f"!! CONGESTION CONTROL NOT MAPPED: CC_MODE {self.cc_mode} ({self.cc}) has no counterpart in cnsim.",
                "!! The flows run WITHOUT congestion control: RoCE at line rate, held back only by PFC (the",
                "!! switches still mark ECN, nothing reacts). Compare with care.",
                "!" * 96,
            ]
        lines += ["", f"NOT MAPPED ({len(self.unmapped)}): cnsim does not model these, or models them otherwise"]
        width = max((len(u.what) for u in self.unmapped), default=0)
        width = min(width, 36)
        for u in self.unmapped:
            lines.append(f"  {u.what:<{width}}  {u.reason}" + (f" [{u.where}]" if u.where else ""))
        if self.notes:
            lines += ["", "Notes:"]
            lines += [f"  {n}" for n in self.notes]
        lines += [
            "",
            "Model differences to keep in mind: cnsim computes PFC headroom per port from the link; ECMP picks a",
            "next hop by its own hash of the flow; a CNP is a frame of its own (64 B); ideal FCTs are cnsim's.",
        ]
        return "\n".join("# " + _comment(line) if line else "#" for line in lines)


def _count(n: int, noun: str) -> str:
    plural = noun + ("es" if noun.endswith("ch") else "s")
    return f"{n:,} {noun if n == 1 else plural}"


def _rows(items: list[str], per_row: int = 6) -> list[str]:
    return ["  " + ", ".join(items[i:i + per_row]) + "," for i in range(0, len(items), per_row)]


def _bin_ps(duration_ps: int) -> int:
    """The metrics bin: 100 us, or the first of 200 us, 500 us, 1 ms, 2 ms, ... that gives at most
    MAX_BINS bins; never longer than the run."""
    base = 100 * 10**6
    while True:
        for bin_ps in (base, 2 * base, 5 * base):
            if duration_ps <= bin_ps * MAX_BINS:
                return min(bin_ps, duration_ps)
        base *= 10


__all__ = ["HpccError", "Imported", "Unmapped", "import_hpcc", "fmt_rate", "fmt_seconds", "fmt_time_ps"]
