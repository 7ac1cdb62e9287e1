"""Interrupted sweeps: Ctrl-C and a killed client lose at most the points in flight, and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import NO_CM, ROOT, point_snapshot, timing_free

import cnsim

SEEDS = 24
DURATION = "60ms"
ARGS = ["sweep", str(NO_CM), "--seeds", str(SEEDS), "--set", f"duration={DURATION}", "--jobs", "1"]




@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The same sweep, uninterrupted."""
    out = tmp_path_factory.mktemp("reference") / "sweep"
    return cnsim.sweep(NO_CM, seeds=SEEDS, set={"duration": DURATION}, out=out, jobs=2)


def _start_and_stop(out: Path, sig: int, at_least: int = 3) -> tuple[int, str, dict]:
    """Run ``cnsim sweep`` in a subprocess, send *sig* once *at_least* points are saved."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cnsim", *ARGS, "--out", str(out)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (out / "points").is_dir() or len(point_snapshot(out)) < at_least:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.005)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, stderr, point_snapshot(out)


def _resume_and_check(out: Path, saved: dict, reference: pd.DataFrame, cli) -> None:
    assert 0 < len(saved) < SEEDS, "the sweep was not interrupted in the middle"
    r = cli(*ARGS, "--out", out, "--quiet")
    assert r.code == 0, r.output
    after = point_snapshot(out)
    # every point exactly once, complete points not recomputed
    assert sorted(after) == sorted(reference.point_id)
    assert sorted(p.name for p in (out / "points").iterdir()) == sorted(reference.point_id)
    assert {k: after[k] for k in saved} == saved
    frame = cnsim.load_sweep(out)
    pd.testing.assert_frame_equal(timing_free(frame), timing_free(reference))
    for pid in list(saved)[:2] + [p for p in after if p not in saved][:2]:
        assert cnsim.load_point(out, pid).equals(cnsim.load_point(Path(reference.attrs["out"]), pid))


def test_ctrl_c_then_resume(tmp_path, reference, cli):
    out = tmp_path / "sigint"
    code, stderr, saved = _start_and_stop(out, signal.SIGINT)
    assert code == 130, stderr
    assert "error: interrupted" in stderr
    assert "run the same command again to resume" in stderr
    # the summary was written on the way out: done points ok, the others pending
    frame = cnsim.load_sweep(out)
    assert len(frame) == SEEDS
    assert sorted(frame[frame.status == "ok"].point_id) == sorted(saved)
    assert set(frame.status) <= {"ok", "pending"}
    assert not list((out / "points").glob("*.error.json")), "a cancelled point was recorded as failed"
    assert json.loads((out / "sweep.json").read_text())["command"][:2] == ["cnsim", "sweep"]
    _resume_and_check(out, saved, reference, cli)


def test_sigterm_stops_like_ctrl_c(tmp_path):
    out = tmp_path / "sigterm"
    code, stderr, saved = _start_and_stop(out, signal.SIGTERM)
    assert code == 130, stderr
    frame = cnsim.load_sweep(out)
    assert sorted(frame[frame.status == "ok"].point_id) == sorted(saved)


def test_killed_client_then_resume(tmp_path, reference, cli):
    out = tmp_path / "sigkill"
    code, _, saved = _start_and_stop(out, signal.SIGKILL)
    assert code == -signal.SIGKILL
    _resume_and_check(out, saved, reference, cli)
    assert not [p for p in (out / "points").iterdir() if p.name.startswith(".")]
