"""Malformed scenarios are rejected before the run, with one clear message.

Each case is a small scenario with one thing wrong. The offending line is
marked with ``# <-`` (several marks: any of them is acceptable). Through the
CLI: exit status 2, one ``error: FILE:LINE:COL: ...`` line naming a marked
line, no traceback. Through the API: ``ScenarioError`` whose message names the
field and matches the expected explanation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

import cnsim

MARK = "# <-"

BASE = """\
name = "tiny"
duration = "2ms"
seed = 1

[[switches]]
name = "SW"
buffer = "150KB"
latency = "1us"

[[hosts]]
name = "A"

[[hosts]]
name = "B"

[[links]]
between = ["A", "SW"]
rate = "10Gbps"
delay = "0.5us"

[[links]]
between = ["SW", "B"]
rate = "10Gbps"
delay = "0.5us"

[[sources]]
name = "f"
host = "A"
to = "B"
load = 0.5
start = "0ms"
stop = "1ms"
"""

LINK_A = 'between = ["A", "SW"]\nrate = "10Gbps"'
LINK_B = 'between = ["SW", "B"]'
HOST_B = '[[hosts]]\nname = "B"'
SWITCH = 'buffer = "150KB"'


@dataclass
class Case:
    id: str
    edits: list[tuple[str, str]]
    field: str  # the field path the API message must name
    explains: str  # regex the message must also match
    base: str = BASE
    append: str = ""
    extra: dict = field(default_factory=dict)

    def text(self) -> str:
        text = self.base
        for old, new in self.edits:
            assert text.count(old) == 1, (self.id, old)
            text = text.replace(old, new)
        return text + self.append

    def marked_lines(self) -> set[int]:
        return {i for i, line in enumerate(self.text().splitlines(), 1) if MARK in line}


CASES = [
    Case("bad_unit", [(LINK_A, f'between = ["A", "SW"]\nrate = "10 Gbs" {MARK}')],
         "links[0].rate", r"expected a rate.*'10 Gbs'"),
    Case("unknown_key", [(LINK_A, f'between = ["A", "SW"]\nrat = "10Gbps" {MARK}')],
         "links[0]", r"unknown field 'rat'.*did you mean 'rate'"),
    Case("unknown_top_level_key", [('seed = 1', f'sed = 1 {MARK}')],
         "sed", r"did you mean 'seed'"),
    Case("bad_enum_value", [('load = 0.5', f'load = 0.5\nkind = "bernouli" {MARK}')],
         "sources[0].kind", r"did you mean 'bernoulli'"),
    Case("negative_rate", [(LINK_A, f'between = ["A", "SW"]\nrate = "-10Gbps" {MARK}')],
         "links[0].rate", r"-10Gbps"),
    Case("zero_rate", [(LINK_A, f'between = ["A", "SW"]\nrate = "0Gbps" {MARK}')],
         "links[0].rate", r"(?i)zero|above 0|positive|> ?0"),
    Case("xon_above_xoff", [(SWITCH, f'{SWITCH}\npause = {{ mode = "global", xoff = "120KB", xon = "130KB" }} {MARK}')],
         "switches[0].pause.xon", r"XON below XOFF"),
    Case("threshold_above_buffer",
         [(SWITCH, f'{SWITCH}\npause = {{ mode = "global", xoff = "200KB", xon = "100KB" }} {MARK}')],
         "switches[0].pause.xoff", r"XOFF at most the buffer"),
    Case("flow_to_unknown_host", [('to = "B"', f'to = "Q" {MARK}')],
         "sources[0].to", r"unknown host 'Q'"),
    Case("flow_to_a_switch", [('to = "B"', f'to = "SW" {MARK}')],
         "sources[0].to", r"expected a host, found switch 'SW'"),
    Case("unreachable_host", [('to = "B"', f'to = "C" {MARK}')],
         "sources[0].to", r"cannot reach 'C'",
         append='\n[[switches]]\nname = "SW2"\n\n[[hosts]]\nname = "C"\n\n[[links]]\nbetween = ["C", "SW2"]\n'),
    Case("disconnected_host", [(HOST_B, f'{HOST_B}\n\n[[hosts]] {MARK}\nname = "C" {MARK}')],
         "hosts[2]", r"not connected"),
    # A whole-file problem: the engine gives no line for it.
    Case("empty_topology", [], "", r"empty topology: no \[\[hosts\]\] or \[\[switches\]\]",
         base='name = "empty"\nduration = "1ms"\n', extra={"no_line": True}),
    Case("duplicate_names", [(HOST_B, f'[[hosts]]\nname = "A" {MARK}')],
         "hosts[1].name", r"duplicate name 'A'"),
    Case("bad_toml_syntax", [(LINK_A, f'between = ["A", "SW"]\nrate = "10Gbps {MARK}')],
         "", r"(?i)string|newline|invalid|expected"),
    # serde reports a missing top-level field at 1:1, the start of the document.
    Case("missing_required_field", [('name = "tiny"\nduration = "2ms"\n', f'name = "tiny" {MARK}\n')],
         "duration", r"missing field 'duration'"),
    Case("missing_link_endpoints", [("[[links]]\n" + LINK_B, f"[[links]] {MARK}")],
         "links[1]", r"missing field 'between'"),
    Case("load_above_one", [('load = 0.5', f'load = 1.5 {MARK}')],
         "sources[0].load", r"load in \(0, 1\].*1\.5"),
    Case("wrong_type", [('load = 0.5', f'load = "half" {MARK}')],
         "sources[0].load", r"(?i)invalid type|expected .*(float|number)"),
    Case("stop_before_start", [('start = "0ms"\nstop = "1ms"', f'start = "1ms"\nstop = "0.5ms" {MARK}')],
         "sources[0].stop", r"stop after start"),
    Case("flow_name_clash", [('to = "B"', f'to = ["B", "C"] {MARK}')], "sources[1].name",
         r"duplicate flow name 'f->B'.*sources\[0\]\.to\[0\] at .*:\d+:\d+",
         append=f'\n[[hosts]]\nname = "C"\n\n[[links]]\nbetween = ["C", "SW"]\n\n'
                f'[[sources]]\nname = "f->B" {MARK}\nhost = "A"\nto = "C"\nload = 0.1\n'),
    Case("control_character_in_name", [(HOST_B, f'[[hosts]]\nname = "B\\u001B[2J" {MARK}')], "hosts[1].name",
         r"without control characters, found 'B\\u\{1B\}\[2J'"),
    Case("bidi_control_in_source_name", [('name = "f"', f'name = "f\\u202Eevil" {MARK}')], "sources[0].name",
         r"without control characters.*U\+202E"),
    Case("min_rate_above_line_rate", [], "bcn.min_rate", r"at most the line rate of host 'A' \(10Gbps\), found 20Gbps",
         append=f'\n[bcn]\nmin_rate = "20Gbps" {MARK}\n'),
    Case("start_after_duration", [('start = "0ms"\nstop = "1ms"', f'start = "3ms" {MARK}\nstop = "4ms"')],
         "sources[0].start", r"start before the end of the run \(duration 2ms\), found 3ms"),
    Case("buffer_below_frame", [(SWITCH, f'buffer = "64B" {MARK}')], "switches[0].buffer",
         r"at least the largest frame \(1500 B.*found 64 B"),
    Case("rate_out_of_range", [(LINK_A, f'between = ["A", "SW"]\nrate = "1e30Gbps" {MARK}')], "links[0].rate",
         r"out of range: at most 18446744073\.709551615Gbps"),
    Case("host_with_two_links", [(HOST_B, HOST_B)], "links[2].between", r"already has a link",
         append=f'\n[[links]]\nbetween = ["A", "B"] {MARK}\n'),
    Case("link_to_unknown_node", [(LINK_B, f'between = ["SW", "BB"] {MARK}')],
         "links[1].between[1]", r"unknown node 'BB'.*did you mean 'B'"),
    Case("link_to_itself", [(LINK_B, f'between = ["SW", "SW"] {MARK}')],
         "links[1].between", r"two different nodes"),
    Case("bad_duration", [('duration = "2ms"', f'duration = "2 parsecs" {MARK}')],
         "duration", r"2 parsecs"),
    Case("frame_too_large", [('load = 0.5', f'load = 0.5\nframe = "20000B" {MARK}')],
         "sources[0].frame", r"frame size"),
    Case("plot_unknown_queue", [], "plot.queues[0]", r"unknown queue.*'SW->Q'",
         append=f'\n[plot]\nqueues = ["SW->Q"] {MARK}\n'),
]

IDS = [c.id for c in CASES]


def test_cases_are_distinct():
    assert len(set(IDS)) == len(IDS) >= 15
    assert len({c.text() for c in CASES}) == len(CASES)


def test_base_scenario_is_valid(tmp_path):
    path = tmp_path / "good.toml"
    path.write_text(BASE)
    resolved = cnsim.validate(path)
    assert [f["name"] for f in resolved["flows"]] == ["f"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cli_rejects(case, cli, tmp_path):
    path = tmp_path / f"{case.id}.toml"
    path.write_text(case.text())
    for command in ("validate", "run"):
        r = cli(command, path, "--out", tmp_path / "out") if command == "run" else cli(command, path)
        assert r.code == 2, (command, r)
        assert "Traceback" not in r.output
        assert r.out == ""
        lines = r.err.rstrip("\n").splitlines()
        assert len(lines) == 1, r.err
        if case.extra.get("no_line"):
            assert lines[0].startswith(f"error: {path}: "), lines[0]
            assert re.search(case.explains, lines[0]), lines[0]
            continue
        m = re.match(rf"error: {re.escape(str(path))}:(\d+):(\d+): ", lines[0])
        assert m, lines[0]
        assert int(m.group(1)) in case.marked_lines(), (lines[0], case.marked_lines())
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_api_rejects(case, tmp_path):
    path = tmp_path / f"{case.id}.toml"
    path.write_text(case.text())
    with pytest.raises(cnsim.ScenarioError) as exc:
        cnsim.run(path)
    message = str(exc.value)
    assert message.startswith(f"{path}:")
    if case.field:
        assert case.field in message, message
    assert re.search(case.explains, message), message
    with pytest.raises(cnsim.ScenarioError) as again:
        cnsim.validate(path)
    assert str(again.value) == message
