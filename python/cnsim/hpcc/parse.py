"""Readers of the HPCC ns-3 simulator's input files: ``config.txt``, the topology file and the flow file.

The formats are those its ``scratch/third.cc`` reads (docs/hpcc.md describes them):

* config: one ``KEY value...`` per line. Text in braces is an explanation (its ``config_doc.txt``
  writes them so) and is skipped. Keys that simulator does not read are kept as unknown.
* topology: ``nodes switches links`` on the first line, then the switch ids, then one
  ``src dst rate delay error_rate`` per link. Only as many ids and links as the first line
  announces are read (later lines are ignored, as that simulator ignores them).
* flows: the number of flows, then one ``src dst pg dport size start`` per flow (size in bytes,
  start in seconds); lines after the announced flows are ignored.

Rates are ns-3 ``DataRate`` strings (``100Gbps``, ``50Mb/s``, ...), delays ns-3 ``Time`` strings
(``1000ns``, ``0.001ms``; a bare number is seconds). Values are read as exact decimals.

Every error names the file, the line, the field, what was expected and what was found::

    mix/topology.txt:4: link 2 rate: expected a rate like 100Gbps or 50Mb/s, found '100Gbs'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path


class HpccError(Exception):
    """An HPCC input file cannot be read or mapped: the message names file, line and field."""


def error(path: Path | str, line: int | None, what: str, expected: str, found: str) -> HpccError:
    where = f"{path}:{line}" if line is not None else f"{path}"
    return HpccError(f"{where}: {what}: expected {expected}, found {found}")


# --------------------------------------------------------------------------- values

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

#: DataRate units of ns-3 (bits per second per unit).
_RATE_UNITS: dict[str, int] = {}
for _prefix, _factor in (("", 1), ("k", 1000), ("K", 1000), ("M", 10**6), ("G", 10**9),
                         ("Ki", 1024), ("Mi", 1024**2), ("Gi", 1024**3)):
    for _unit, _bits in (("bps", 1), ("b/s", 1), ("Bps", 8), ("B/s", 8)):
        _RATE_UNITS[_prefix + _unit] = _factor * _bits

#: Time units of ns-3, in picoseconds; a bare number is seconds.
_TIME_UNITS = {"s": 10**12, "ms": 10**9, "us": 10**6, "ns": 10**3, "ps": 1}

RATE_EXPECTED = "a rate like 100Gbps or 50Mb/s"
TIME_EXPECTED = "a time like 1000ns or 0.001ms (a bare number is seconds)"


def _split_number(text: str) -> tuple[Decimal, str] | None:
    m = _NUMBER.match(text)
    if not m:
        return None
    try:
        return Decimal(m.group(0)), text[m.end():]
    except InvalidOperation:
        return None


def parse_rate(text: str) -> int | None:
    """An ns-3 DataRate string in bit/s (truncated to whole bits, as ns-3 does), or None."""
    parts = _split_number(text)
    if parts is None or parts[0] < 0 or parts[1] not in _RATE_UNITS:
        return None
    return int(parts[0] * _RATE_UNITS[parts[1]])


def parse_time_ps(text: str) -> int | None:
    """An ns-3 Time string in picoseconds, or None (also for a negative time or one that is
    not a whole number of picoseconds)."""
    parts = _split_number(text)
    if parts is None:
        return None
    value, unit = parts
    if unit not in _TIME_UNITS and unit != "":
        return None
    ps = value * _TIME_UNITS.get(unit, 10**12)
    if ps < 0 or ps != ps.to_integral_value():
        return None
    return int(ps)


def parse_seconds_ns(text: str) -> int | None:
    """A number of seconds (as the flow file's start times and SIMULATOR_STOP_TIME are given) in
    whole nanoseconds, ns-3's time step, rounded to the nearest; None if not a number >= 0."""
    parts = _split_number(text)
    if parts is None or parts[1] != "" or parts[0] < 0:
        return None
    return int((parts[0] * 10**9).to_integral_value())


def parse_uint(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() else None


def parse_float(text: str) -> float | None:
    parts = _split_number(text)
    if parts is None or parts[1] != "":
        return None
    return float(parts[0])


# --------------------------------------------------------------------------- config

#: The keys third.cc reads, with the number of values each takes (None: a map, "n rate value ...").
CONFIG_KEYS: dict[str, int | None] = {
    "ENABLE_QCN": 1, "USE_DYNAMIC_PFC_THRESHOLD": 1, "CLAMP_TARGET_RATE": 1, "PAUSE_TIME": 1,
    "DATA_RATE": 1, "LINK_DELAY": 1, "PACKET_PAYLOAD_SIZE": 1, "L2_CHUNK_SIZE": 1,
    "L2_ACK_INTERVAL": 1, "L2_BACK_TO_ZERO": 1, "TOPOLOGY_FILE": 1, "FLOW_FILE": 1, "TRACE_FILE": 1,
    "TRACE_OUTPUT_FILE": 1, "SIMULATOR_STOP_TIME": 1, "ALPHA_RESUME_INTERVAL": 1, "RP_TIMER": 1,
    "EWMA_GAIN": 1, "FAST_RECOVERY_TIMES": 1, "RATE_AI": 1, "RATE_HAI": 1, "ERROR_RATE_PER_LINK": 1,
    "CC_MODE": 1, "RATE_DECREASE_INTERVAL": 1, "MIN_RATE": 1, "FCT_OUTPUT_FILE": 1, "HAS_WIN": 1,
    "GLOBAL_T": 1, "MI_THRESH": 1, "VAR_WIN": 1, "FAST_REACT": 1, "U_TARGET": 1, "INT_MULTI": 1,
    "RATE_BOUND": 1, "ACK_HIGH_PRIO": 1, "DCTCP_RATE_AI": 1, "PFC_OUTPUT_FILE": 1, "LINK_DOWN": 3,
    "ENABLE_TRACE": 1, "KMAX_MAP": None, "KMIN_MAP": None, "PMAX_MAP": None, "BUFFER_SIZE": 1,
    "QLEN_MON_FILE": 1, "QLEN_MON_START": 1, "QLEN_MON_END": 1, "MULTI_RATE": 1, "SAMPLE_FEEDBACK": 1,
    "PINT_LOG_BASE": 1, "PINT_PROB": 1,
}

_BRACES = re.compile(r"\{[^}]*\}?")


@dataclass
class ConfigEntry:
    key: str
    values: list[str]
    line: int

    @property
    def text(self) -> str:
        """The entry as written (values joined by spaces)."""
        return " ".join([self.key, *self.values])


@dataclass
class Config:
    """A config file: its entries by key (a repeated key: the last, as third.cc keeps the last)."""

    path: Path
    entries: dict[str, ConfigEntry] = field(default_factory=dict)
    #: Lines whose first word is not a key third.cc reads.
    unknown: list[ConfigEntry] = field(default_factory=list)
    #: Keys given more than once: (key, earlier line, later line).
    repeated: list[tuple[str, int, int]] = field(default_factory=list)

    def get(self, key: str) -> ConfigEntry | None:
        return self.entries.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    # typed accessors: each raises HpccError naming the line

    def uint(self, key: str, default: int | None = None) -> int | None:
        e = self.entries.get(key)
        if e is None:
            return default
        v = parse_uint(e.values[0])
        if v is None:
            raise error(self.path, e.line, key, "a whole number >= 0", repr(e.values[0]))
        return v

    def number(self, key: str, default: float | None = None) -> float | None:
        e = self.entries.get(key)
        if e is None:
            return default
        v = parse_float(e.values[0])
        if v is None:
            raise error(self.path, e.line, key, "a number", repr(e.values[0]))
        return v

    def rate(self, key: str) -> int | None:
        e = self.entries.get(key)
        if e is None:
            return None
        v = parse_rate(e.values[0])
        if v is None:
            raise error(self.path, e.line, key, RATE_EXPECTED, repr(e.values[0]))
        return v

    def seconds_ns(self, key: str, default: int | None = None) -> int | None:
        e = self.entries.get(key)
        if e is None:
            return default
        v = parse_seconds_ns(e.values[0])
        if v is None:
            raise error(self.path, e.line, key, "a number of seconds >= 0", repr(e.values[0]))
        return v

    def rate_map(self, key: str, value_kind: str) -> dict[int, float] | None:
        """A ``KMAX_MAP``-style map, rate (bit/s) -> value; *value_kind* "uint" or "number"."""
        e = self.entries.get(key)
        if e is None:
            return None
        out: dict[int, float] = {}
        for i in range(0, len(e.values) - 1, 2):
            rate_text, value_text = e.values[i + 1], e.values[i + 2]
            rate = parse_uint(rate_text)
            if rate is None or rate == 0:
                raise error(self.path, e.line, f"{key} entry {i // 2 + 1} rate",
                            "a link rate in bit/s (a whole number, e.g. 100000000000)", repr(rate_text))
            value = parse_uint(value_text) if value_kind == "uint" else parse_float(value_text)
            if value is None:
                what = "a whole number" if value_kind == "uint" else "a number"
                raise error(self.path, e.line, f"{key} entry {i // 2 + 1} value", what, repr(value_text))
            out[rate] = value
        return out


def read_config(path: str | Path) -> Config:
    """Read an HPCC ``config.txt``."""
    path = Path(path)
    text = _read_text(path)
    config = Config(path)
    for number, raw in enumerate(text.splitlines(), 1):
        words = _BRACES.sub(" ", raw).split()
        if not words:
            continue
        key, values = words[0], words[1:]
        if key not in CONFIG_KEYS:
            config.unknown.append(ConfigEntry(key, values, number))
            continue
        arity = CONFIG_KEYS[key]
        if arity is None:
            count = parse_uint(values[0]) if values else None
            if count is None:
                raise error(path, number, key, "the number of entries, then that many 'rate value' pairs",
                            repr(values[0]) if values else "nothing")
            arity = 1 + 2 * count
            expected = f"{count} 'rate value' pair{'s' if count != 1 else ''} after the count"
            found_n = len(values) - 1
        else:
            expected = f"{arity} value{'s' if arity != 1 else ''}"
            found_n = len(values)
        if len(values) != arity:
            shown = " ".join(values) if values else "nothing"
            raise error(path, number, key, expected, f"{found_n} ({shown!r})" if values else shown)
        if key in config.entries:
            config.repeated.append((key, config.entries[key].line, number))
        config.entries[key] = ConfigEntry(key, values, number)
    return config


# --------------------------------------------------------------------------- topology and flows


class _Tokens:
    """The words of a file with their line numbers, read in order as third.cc's streams read them."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()
        self.words = [(w, n) for n, line in enumerate(self.lines, 1) for w in line.split()]
        self.pos = 0

    def take(self, what: str, expected: str) -> tuple[str, int]:
        if self.pos >= len(self.words):
            last = self.words[-1][1] if self.words else 1
            raise error(self.path, last, what, expected, "the end of the file")
        word = self.words[self.pos]
        self.pos += 1
        return word

    def uint(self, what: str, expected: str = "a whole number >= 0", low: int = 0, high: int | None = None
             ) -> tuple[int, int]:
        word, line = self.take(what, expected)
        value = parse_uint(word)
        if value is None or value < low or (high is not None and value > high):
            raise error(self.path, line, what, expected, repr(word))
        return value, line

    def rest(self) -> tuple[int, int] | None:
        """The first and last line of what follows the last word read, if anything does."""
        if self.pos >= len(self.words):
            return None
        return self.words[self.pos][1], self.words[-1][1]


@dataclass
class Link:
    src: int
    dst: int
    rate_bps: int
    delay_ps: int
    error_rate: float
    line: int
    rate_text: str
    delay_text: str


@dataclass
class Topology:
    path: Path
    nodes: int
    switches: list[int]
    links: list[Link]
    #: Lines after the announced links (first, last), ignored; None if there are none.
    ignored: tuple[int, int] | None

    def is_switch(self, node: int) -> bool:
        return node in self._switch_set

    def __post_init__(self) -> None:
        self._switch_set = set(self.switches)


def read_topology(path: str | Path) -> Topology:
    """Read an HPCC topology file (``mix/topology.txt``, ``mix/fat.txt``)."""
    path = Path(path)
    tokens = _Tokens(path, _read_text(path))
    n_nodes, _ = tokens.uint("number of nodes (first line: nodes switches links)", "a whole number >= 1", low=1)
    n_switches, sw_line = tokens.uint("number of switches (first line: nodes switches links)",
                                      f"a whole number from 0 to the number of nodes ({n_nodes})", high=n_nodes)
    n_links, _ = tokens.uint("number of links (first line: nodes switches links)")
    switches: list[int] = []
    seen: dict[int, int] = {}
    for i in range(n_switches):
        sid, line = tokens.uint(f"switch id {i + 1} of {n_switches}",
                                f"a node id from 0 to {n_nodes - 1}", high=n_nodes - 1)
        if sid in seen:
            raise error(path, line, f"switch id {i + 1} of {n_switches}", "a node id not listed before",
                        f"{sid} (listed on line {seen[sid]})")
        seen[sid] = line
        switches.append(sid)
    links = []
    for i in range(n_links):
        name = f"link {i + 1} of {n_links}"
        src, line = tokens.uint(f"{name} src", f"a node id from 0 to {n_nodes - 1}", high=n_nodes - 1)
        dst, dline = tokens.uint(f"{name} dst", f"a node id from 0 to {n_nodes - 1}", high=n_nodes - 1)
        if dst == src:
            raise error(path, dline, f"{name} dst", "a node other than src", str(dst))
        rate_text, rline = tokens.take(f"{name} rate", RATE_EXPECTED)
        rate = parse_rate(rate_text)
        if not rate:
            raise error(path, rline, f"{name} rate", RATE_EXPECTED, repr(rate_text))
        delay_text, tline = tokens.take(f"{name} delay", TIME_EXPECTED)
        delay = parse_time_ps(delay_text)
        if delay is None:
            raise error(path, tline, f"{name} delay", TIME_EXPECTED, repr(delay_text))
        err_text, eline = tokens.take(f"{name} error_rate", "a packet error rate from 0 to 1")
        err = parse_float(err_text)
        if err is None or not 0 <= err <= 1:
            raise error(path, eline, f"{name} error_rate", "a packet error rate from 0 to 1", repr(err_text))
        links.append(Link(src, dst, rate, delay, err, line, rate_text, delay_text))
    return Topology(path, n_nodes, switches, links, tokens.rest())


@dataclass
class Flow:
    src: int
    dst: int
    pg: int
    dport: int
    size: int
    start_ns: int
    line: int


@dataclass
class Flows:
    path: Path
    flows: list[Flow]
    ignored: tuple[int, int] | None
    #: Lines of flows that start before the flow above them (third.cc wants ascending start times).
    out_of_order: list[int]


def read_flows(path: str | Path, topology: Topology) -> Flows:
    """Read an HPCC flow file (``mix/flow.txt``), checking its nodes against *topology*."""
    path = Path(path)
    tokens = _Tokens(path, _read_text(path))
    count, _ = tokens.uint("number of flows (first line)")
    flows = []
    out_of_order = []
    hosts = f"a host id (0 to {topology.nodes - 1}, not a switch)"
    for i in range(count):
        name = f"flow {i + 1} of {count}"
        src, line = tokens.uint(f"{name} src", hosts, high=topology.nodes - 1)
        if topology.is_switch(src):
            raise error(path, line, f"{name} src", hosts, f"{src} (a switch)")
        dst, dline = tokens.uint(f"{name} dst", hosts, high=topology.nodes - 1)
        if topology.is_switch(dst):
            raise error(path, dline, f"{name} dst", hosts, f"{dst} (a switch)")
        if dst == src:
            raise error(path, dline, f"{name} dst", "a host other than src", str(dst))
        pg, pline = tokens.uint(f"{name} pg", "a priority group from 1 to 7 (0 is the simulator's control queue)",
                                low=1, high=7)
        dport, _ = tokens.uint(f"{name} dport", "a port number from 0 to 65535", high=65535)
        size, _ = tokens.uint(f"{name} size", "a size in bytes from 1 to 4294967295", low=1, high=2**32 - 1)
        start_text, sline = tokens.take(f"{name} start_time", "a start time in seconds")
        start = parse_seconds_ns(start_text)
        if start is None:
            raise error(path, sline, f"{name} start_time", "a start time in seconds >= 0", repr(start_text))
        if flows and start < flows[-1].start_ns:
            out_of_order.append(line)
        flows.append(Flow(src, dst, pg, dport, size, start, line))
    return Flows(path, flows, tokens.rest(), out_of_order)


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise HpccError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise HpccError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise HpccError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(path, line, "text", "UTF-8 (or ASCII) text", f"the byte 0x{data[exc.start]:02x}") from None
