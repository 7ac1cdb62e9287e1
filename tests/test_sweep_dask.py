"""Sweeps on a real Dask cluster (LocalCluster with worker processes): same results, lost workers."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pandas as pd
import pytest
from conftest import NO_CM, PAUSE, point_snapshot, timing_free

import cnsim

distributed = pytest.importorskip("distributed")

LOAD = "sources[C1->S1].load"
SWEEP = dict(axes={LOAD: [0.3, 0.4]}, seeds=3, set={"duration": "8ms"})
#: Longer points for the lost-worker test, so that points are in flight when the worker dies.
LONG = dict(seeds=12, set={"duration": "60ms"})




@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=40
    ) as cl:
        yield cl


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster, set_as_default=False) as c:
        yield c


def test_dask_sweep_equals_local_sweep(tmp_path, client):
    local = cnsim.sweep([NO_CM, PAUSE], out=tmp_path / "local", jobs=2, **SWEEP)
    remote = cnsim.sweep([NO_CM, PAUSE], out=tmp_path / "dask", dask=client, **SWEEP)
    assert len(remote) == 12 and (remote.status == "ok").all()
    pd.testing.assert_frame_equal(timing_free(remote), timing_free(local))
    for pid in local.point_id:
        a = cnsim.load_point(tmp_path / "local", pid)
        b = cnsim.load_point(tmp_path / "dask", pid)
        assert a.equals(b), pid
    # the points really ran in the worker processes
    pids = set(client.run(os.getpid).values())
    assert os.getpid() not in pids and len(pids) == 2


def test_metrics_run_on_the_client_and_need_not_be_picklable(tmp_path, client):
    lock = threading.Lock()  # a closure over a lock cannot be pickled; it never has to be

    def c1(result):
        with lock:
            return result.flows.set_index("name").loc["C1->S1", "delivered_gbps"]

    metrics = {"c1": c1, "drops": 'queues["CORE->S1"].drops_frames'}
    remote = cnsim.sweep(NO_CM, out=tmp_path / "dask", dask=client, metrics=metrics, **SWEEP)
    local = cnsim.sweep(NO_CM, out=tmp_path / "local", jobs=2, metrics=metrics, **SWEEP)
    pd.testing.assert_frame_equal(timing_free(remote), timing_free(local))
    assert remote.c1.notna().all() and (remote.c1 > 0).all()


def test_cli_dask_address(tmp_path, cli, cluster):
    out = tmp_path / "cli"
    r = cli("sweep", NO_CM, "--seeds", "2", "--set", "duration=8ms", "--dask", cluster.scheduler_address, "--out", out)
    assert r.code == 0, r.output
    frame = cnsim.load_sweep(out)
    assert (frame.status == "ok").all() and len(frame) == 2
    direct = cnsim.run(NO_CM, 2, duration="8ms")
    assert cnsim.load_point(out, frame.point_id[1]).equals(direct)


def test_cli_dask_scheduler_file(tmp_path, cli, cluster):
    scheduler_file = tmp_path / "scheduler.json"
    scheduler_file.write_text(json.dumps({"type": "Scheduler", "address": cluster.scheduler_address}))
    out = tmp_path / "file"
    r = cli("sweep", NO_CM, "--set", "duration=8ms", "--dask", scheduler_file, "--out", out, "-q")
    assert r.code == 0, r.output
    assert json.loads((out / "sweep.json").read_text())["arguments"]["dask"] == str(scheduler_file)


def test_cli_dask_unreachable(tmp_path, cli):
    import dask

    out = tmp_path / "nowhere"
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        r = cli("sweep", NO_CM, "--seeds", "2", "--dask", "tcp://127.0.0.1:9", "--out", out)  # fmt: skip
    assert r.code == 2
    assert r.err.startswith("error: cannot connect to the Dask scheduler at tcp://127.0.0.1:9")
    assert not out.exists()


def test_killed_worker_loses_nothing(tmp_path, client):
    """A worker process dies with points in flight: Dask reruns them; nothing is lost or duplicated."""
    out = tmp_path / "killed"
    box: dict = {}

    def run() -> None:
        try:
            box["frame"] = cnsim.sweep([NO_CM, PAUSE], out=out, dask=client, **LONG)
        except BaseException as exc:  # handed to the test
            box["error"] = exc

    before = client.run(os.getpid)
    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 60
    while not (out / "points").is_dir() or len(point_snapshot(out)) < 2:
        assert time.monotonic() < deadline and thread.is_alive(), box
        time.sleep(0.005)
    victim_pid = before[min(before)]
    os.kill(victim_pid, signal.SIGKILL)
    saved_when_killed = len(point_snapshot(out))
    thread.join(120)
    assert not thread.is_alive()
    assert "error" not in box, box.get("error")
    frame = box["frame"]
    n = 2 * 12
    assert saved_when_killed < n, "the sweep ended before the worker was killed"
    assert len(frame) == n and (frame.status == "ok").all(), frame[frame.status != "ok"]
    assert sorted(frame.point_id) == sorted(d.name for d in (out / "points").iterdir())
    # the killed worker was replaced (its nanny restarted it)
    client.wait_for_workers(2, timeout=60)
    assert victim_pid not in client.run(os.getpid).values()

    # Same results as an uninterrupted local run, and a re-run computes nothing.
    reference = cnsim.sweep([NO_CM, PAUSE], out=tmp_path / "reference", jobs=2, **LONG)
    pd.testing.assert_frame_equal(timing_free(frame), timing_free(reference))
    snap = point_snapshot(out)
    again = cnsim.sweep([NO_CM, PAUSE], out=out, dask=client, **LONG)
    assert again.attrs["ran"] == 0 and point_snapshot(out) == snap
