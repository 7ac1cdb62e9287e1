"""Bad option values and unreachable Dask clusters: one line, exit status 2, and quickly.

Each case used to end in "internal error", a traceback or a wait without end.
These run the real ``cnsim`` executable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from conftest import NO_CM, ROOT


def _cnsim(*args, timeout: float = 120) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ)
    env.pop("CNSIM_DEBUG", None)
    started = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "cnsim", *map(str, args)], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=timeout)
    return p, time.monotonic() - started


def _assert_one_line_bad_input(p: subprocess.CompletedProcess, *fragments: str) -> None:
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2, p.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e10", "0", "-1", "soon"])
def test_max_wall_out_of_range(tmp_path, value):
    p, _ = _cnsim("run", NO_CM, "--max-wall", value, "--out", tmp_path / "r")
    _assert_one_line_bad_input(p, "--max-wall", value)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("value", ["99999999999999999999999", "18446744073709551616", "0"])
def test_max_events_out_of_range(tmp_path, value):
    p, _ = _cnsim("run", NO_CM, "--max-events", value, "--out", tmp_path / "r")
    _assert_one_line_bad_input(p, "--max-events")


def test_max_events_at_the_limit_is_accepted(tmp_path):
    p, _ = _cnsim("run", NO_CM, "--max-events", 2**64 - 1, "--set", "duration=6ms", "-q", "--out", tmp_path / "r")
    assert p.returncode == 0, p.stderr


def test_api_limits_reject_nan_and_overflow():
    import cnsim

    for bad in (float("nan"), float("inf"), 1e10, 0):
        with pytest.raises(ValueError, match="max_wall_s"):
            cnsim.run(NO_CM, max_wall_s=bad, duration="6ms")
    with pytest.raises(ValueError, match="max_events"):
        cnsim.run(NO_CM, max_events=2**64, duration="6ms")


@pytest.mark.parametrize("command", ["sweep", "reproduce"])
@pytest.mark.parametrize("address", ["not a url", "tcp://", "host:port", "://x:1"])
def test_dask_address_that_is_not_one(tmp_path, command, address):
    target = [NO_CM, "--seeds", 1] if command == "sweep" else ["baseline", "--quick"]
    p, took = _cnsim(command, *target, "--dask", address, "--out", tmp_path / "s")
    _assert_one_line_bad_input(p, "--dask", repr(address))
    assert took < 20, f"took {took:.1f} s"
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("content", ["{not json", '{"type": "Scheduler"}', '{"address": 8786}', "[]", "\udcff"])
def test_malformed_scheduler_file(tmp_path, content):
    path = tmp_path / "scheduler.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    p, took = _cnsim("sweep", NO_CM, "--seeds", 1, "--dask", path, "--out", tmp_path / "s")
    _assert_one_line_bad_input(p, str(path), "scheduler file")
    assert took < 20, f"took {took:.1f} s"


def test_dask_wait_must_be_seconds(tmp_path):
    p, _ = _cnsim("sweep", NO_CM, "--seeds", 1, "--dask", "tcp://127.0.0.1:1", "--dask-wait", "nan",
                  "--out", tmp_path / "s")
    _assert_one_line_bad_input(p, "--dask-wait")


def test_scheduler_without_workers_says_what_it_waits_for_and_gives_up(tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=None, silence_logs=40) as cluster:
        address = cluster.scheduler_address
        info = tmp_path / "scheduler.json"
        info.write_text(json.dumps({"address": address}))
        for where in (address, info):
            p, took = _cnsim("sweep", NO_CM, "--seeds", 1, "--dask", where, "--dask-wait", "1",
                             "--out", tmp_path / "s", timeout=60)
            assert p.returncode == 2, p.stderr
            lines = p.stderr.strip().splitlines()
            assert lines[0] == (f"waiting up to 1 s for a Dask worker to join the scheduler at {address} "
                                "(--dask-wait sets the limit)"), p.stderr
            assert lines[1] == (f"error: no Dask worker joined the scheduler at {address} within 1 s "
                                "(start workers, or wait longer with --dask-wait)"), p.stderr
            assert len(lines) == 2 and took < 30


def test_api_scheduler_without_workers(tmp_path):
    distributed = pytest.importorskip("distributed")
    import cnsim

    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=None, silence_logs=40) as cluster:
        with pytest.raises(cnsim.SweepError, match="no Dask worker joined"):
            cnsim.sweep(NO_CM, seeds=1, out=tmp_path / "s", dask=cluster.scheduler_address, dask_wait_s=0.5)
