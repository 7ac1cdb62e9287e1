"""The ``cnsim`` command line, end to end against the compiled engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cnsim

from conftest import FAST_SET, NO_CM, PAUSE, ROOT

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
VIEWS = ("throughput_links", "throughput_flows", "queue_occupancy", "drops")


def assert_clean_error(outcome, code: int) -> str:
    assert outcome.code == code, outcome
    assert "Traceback" not in outcome.output
    lines = outcome.err.strip().splitlines()
    assert lines and lines[0].startswith("error: "), outcome.err
    return outcome.err


def test_run_prints_the_summary_and_saves(cli, tmp_path):
    out = tmp_path / "no_cm"
    r = cli("run", NO_CM, "--seed", 3, "--out", out, *FAST_SET)
    assert r.code == 0, r
    assert r.err == ""
    saved = cnsim.Result.load(out)
    assert saved.summary["seed"] == 3
    for flow in saved.flows["name"]:
        assert flow in r.out
    assert "delivered Gb/s" in r.out
    assert f"{saved.summary['totals']['dropped_frames']:,}" in r.out
    assert "events/s" in r.out and "frame-hops/s" in r.out
    # queues with drops are listed
    dropping = saved.queues[saved.queues["drops_frames"] > 0]["name"]
    assert len(dropping) > 0
    for name in dropping:
        assert name in r.out


def test_run_default_out_is_results_name(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli("run", NO_CM, "--quiet", *FAST_SET)
    assert r.code == 0, r
    assert r.out == "" and r.err == ""
    name = cnsim.validate(NO_CM)["name"]  # "baseline/no_cm": '/' makes sub-directories
    summary = json.loads((tmp_path / "results" / name / "summary.json").read_text())
    assert summary["name"] == name


def test_run_set_overrides(cli, tmp_path):
    r = cli("run", NO_CM, "--out", tmp_path / "r", "--quiet", "--set", "duration=10ms", "--set", "bin=1ms")
    assert r.code == 0, r
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["duration_s"] == pytest.approx(0.010)
    assert summary["n_bins"] == 10


def test_run_plot_writes_figures(cli, tmp_path):
    out = tmp_path / "r"
    r = cli("run", NO_CM, "--out", out, "--plot", *FAST_SET)
    assert r.code == 0, r
    for view in VIEWS:
        png = out / "figures" / f"{view}.png"
        assert png.read_bytes()[:8] == PNG_MAGIC, png
    assert "figures" in r.out


def test_plot_overlays_variants(cli, tmp_path):
    a, b = tmp_path / "no_cm", tmp_path / "pause"
    assert cli("run", NO_CM, "--out", a, "-q", *FAST_SET).code == 0
    assert cli("run", PAUSE, "--out", b, "-q", *FAST_SET).code == 0
    r = cli("plot", a, b, "--out", tmp_path / "compare")
    assert r.code == 0, r
    for view in VIEWS:
        png = tmp_path / "compare" / f"{view}.png"
        assert png.stat().st_size > 5000, png
        assert png.read_bytes()[:8] == PNG_MAGIC
    # default output of several results: <common parent>/compare
    (tmp_path / "compare").rename(tmp_path / "explicit")
    r = cli("plot", a, b, "--format", "svg")
    assert r.code == 0, r
    assert (tmp_path / "compare" / "drops.svg").read_text().lstrip().startswith(("<?xml", "<svg"))


def test_plot_single_result_defaults_to_its_figures_dir(cli, tmp_path):
    out = tmp_path / "r"
    assert cli("run", NO_CM, "--out", out, "-q", "--set", "duration=10ms").code == 0
    r = cli("plot", out)
    assert r.code == 0, r
    assert (out / "figures" / "throughput_flows.png").is_file()


def test_validate_ok(cli):
    r = cli("validate", NO_CM)
    assert r.code == 0, r
    v = cnsim.validate(NO_CM)
    line = r.out.strip()
    assert line.startswith(f"{NO_CM}: ok — ")
    assert f"{len(v['nodes'])} nodes, {len(v['links'])} links, {len(v['flows'])} flows, duration 100 ms" in line


def test_validate_json(cli):
    r = cli("validate", NO_CM, "--json", *FAST_SET)
    assert r.code == 0, r
    assert json.loads(r.out)["duration_s"] == pytest.approx(0.020)


def test_missing_file(cli, tmp_path):
    err = assert_clean_error(cli("run", tmp_path / "nope.toml"), 2)
    assert "nope.toml" in err
    assert_clean_error(cli("validate", tmp_path / "nope.toml"), 2)


def test_directory_instead_of_file(cli, tmp_path):
    assert_clean_error(cli("run", tmp_path), 2)


def test_bad_set_syntax(cli):
    err = assert_clean_error(cli("run", NO_CM, "--set", "duration"), 2)
    assert "key=value" in err


def test_unknown_set_key(cli):
    err = assert_clean_error(cli("validate", NO_CM, "--set", "durration=5ms"), 2)
    assert "durration" in err
    assert "did you mean" in err


def test_bad_set_value(cli):
    err = assert_clean_error(cli("run", NO_CM, "--set", "duration=soon"), 2)
    assert "duration" in err and "soon" in err


def test_plot_of_a_non_result(cli, tmp_path):
    err = assert_clean_error(cli("plot", tmp_path), 2)
    assert "not a cnsim result" in err
    assert_clean_error(cli("plot", tmp_path / "missing"), 2)


def test_run_refuses_to_replace_a_non_result_dir(cli, tmp_path):
    precious = tmp_path / "data"
    precious.mkdir()
    (precious / "thesis.tex").write_text("keep me")
    err = assert_clean_error(cli("run", NO_CM, "--out", precious, "-q", "--set", "duration=6ms"), 2)
    assert "refusing" in err
    assert (precious / "thesis.tex").read_text() == "keep me"


def test_usage_errors_exit_2(cli):
    r = cli("run")
    assert r.code == 2 and "Traceback" not in r.output
    r = cli("frobnicate")
    assert r.code == 2 and "Traceback" not in r.output


def test_help_and_version(cli):
    r = cli("--help")
    assert r.code == 0 and "run" in r.out and "plot" in r.out and "validate" in r.out
    r = cli("--version")
    assert r.code == 0 and cnsim.__version__ in r.out


def _env():
    env = dict(os.environ)
    env.pop("CNSIM_DEBUG", None)
    return env


def test_python_dash_m_entry_point(tmp_path):
    p = subprocess.run([sys.executable, "-m", "cnsim", "validate", str(NO_CM)], capture_output=True, text=True,
                       env=_env(), cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert ": ok — " in p.stdout


def test_console_script_errors_without_traceback(tmp_path):
    script = Path(sys.executable).with_name("cnsim")
    if not script.exists():
        pytest.skip("cnsim console script not installed next to this interpreter")
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "1ms"\n[[links]\n')
    p = subprocess.run([str(script), "run", str(bad)], capture_output=True, text=True, env=_env(), cwd=ROOT,
                       timeout=120)
    assert p.returncode == 2
    assert p.stderr.startswith(f"error: {bad}:2:")
    assert "Traceback" not in p.stderr + p.stdout


# --------------------------------------------------------------------------- input the real executable refuses


def _cnsim(*args, timeout=60):
    script = Path(sys.executable).with_name("cnsim")
    if not script.exists():
        pytest.skip("cnsim console script not installed next to this interpreter")
    return subprocess.run([str(script), *map(str, args)], check=False, capture_output=True, text=True, env=_env(),
                          cwd=ROOT, timeout=timeout)


def _one_error_line(p) -> str:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr + p.stdout and "panicked" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    return lines[0]


def test_devices_fifos_and_directories_are_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)  # no writer: opening it would block
    for path, reason in [("/dev/zero", "is not a regular file"), (fifo, "is not a regular file"),
                         (tmp_path, "is a directory")]:
        for command in (["validate"], ["run", "-q"], ["sweep", "--seeds", "1", "--out", tmp_path / "sw"]):
            line = _one_error_line(_cnsim(*command, path, timeout=30))
            assert line.startswith(f"error: {path}: ") and reason in line, line


def test_files_over_the_size_limit_are_refused(tmp_path):
    big = tmp_path / "big.toml"
    with open(big, "wb") as fh:
        fh.truncate(16 * 1024 * 1024 + 1)
    line = _one_error_line(_cnsim("validate", big, timeout=30))
    assert line.startswith(f"error: {big}: file too large") and "16 MiB" in line, line


def test_unreadable_and_non_utf8_files_name_the_path(tmp_path):
    line = _one_error_line(_cnsim("validate", "/proc/self/mem", timeout=30))
    assert line.startswith("error: /proc/self/mem: "), line
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(b'duration = "1ms"\nname = "caf\xe9"\n')
    line = _one_error_line(_cnsim("validate", latin1))
    assert line.startswith(f"error: {latin1}:2:") and "UTF-8" in line, line


def test_a_million_entries_are_refused_quickly_without_blaming_repeat(tmp_path):
    many = tmp_path / "many.toml"
    many.write_text('duration = "1ms"\n' + "[[hosts]]\n" * 1_000_001)
    started = time.monotonic()
    line = _one_error_line(_cnsim("validate", many, timeout=120))
    assert time.monotonic() - started < 20
    assert line.startswith(f"error: {many}:1000002:1: hosts[1000000]: expected at most 1000000 entries"), line
    assert "repeat" not in line


def test_set_keeps_file_locations_and_names_its_own_values(tmp_path):
    text = NO_CM.read_text()
    assert 'rate = "10Gbps"' in text
    bad = tmp_path / "loc.toml"
    bad.write_text(text.replace('rate = "10Gbps"', 'rate = "10 Gbs"', 1))
    line_no = text[: text.index('rate = "10Gbps"')].count("\n") + 1
    plain = _one_error_line(_cnsim("validate", bad))
    with_set = _one_error_line(_cnsim("validate", bad, "--set", "bin=1ms", "--set", "defaults.host.response_time=1us",
                                      "--set", "params.x=1"))
    assert plain.startswith(f"error: {bad}:{line_no}:"), plain
    assert with_set == plain
    line = _one_error_line(_cnsim("validate", NO_CM, "--set", "defaults.switch.latency=soon"))
    assert line.startswith("error: --set defaults.switch.latency=soon: defaults.switch.latency: expected a time"), line


def test_control_characters_in_names_are_refused_and_never_printed(tmp_path):
    text = NO_CM.read_text()
    bad = tmp_path / "esc.toml"
    bad.write_text(text.replace('name = "C1"', 'name = "C1\\u001B]0;pwned\\u0007\\u202E"', 1))
    p = _cnsim("run", "-q", bad, "--out", tmp_path / "out")
    line = _one_error_line(p)
    assert "control characters" in line and "\\u{1B}" in line, line
    assert not any(c in p.stderr + p.stdout for c in "\x1b\x07\u202e")
    assert not (tmp_path / "out").exists()
