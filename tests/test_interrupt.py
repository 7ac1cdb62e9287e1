"""Ctrl-C stops a run within a fraction of a second in every mode, cleanly.

Each test starts a run that would take tens of seconds in a child process,
waits until the engine is simulating, sends SIGINT and checks the
outcome: the CLI exits 130 with one line and writes nothing; the Python API
raises KeyboardInterrupt (catchable, not a Rust panic).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import NO_CM, ROOT

#: Simulated time far beyond what finishes before the signal (about 20 s of wall time).
LONG = ["--set", "duration=30s", "--set", "bin=10ms"]
#: From SIGINT to exit: the engine checks for cancellation every 65,536 events
#: (milliseconds) and looks for a signal every 50 ms; the rest is Python exiting.
STOP_WITHIN_S = 2.0

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")


#: After the run is known to be starting, enough for it to be simulating: loading
#: the scenario takes milliseconds and the run about 20 s.
INTO_THE_RUN_S = 0.5


def _default_sigint() -> None:
    """In the child before exec: SIGINT handled by default, even when this test
    runs in a background job (which ignores it, and Python would keep ignoring it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt(args: list[str], cwd: Path, started: Callable[[subprocess.Popen], bool]) -> tuple[int, str, str, float]:
    """Start *args*, SIGINT it once *started* and then well inside the run; (exit status, stdout, stderr,
    seconds to exit)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("CNSIM_DEBUG", None)
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)
    try:
        deadline = time.monotonic() + 60
        while not started(proc):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.01)
        time.sleep(INTO_THE_RUN_S)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        return proc.returncode, out, err, time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _cnsim() -> list[str]:
    return [sys.executable, "-m", "cnsim"]


@pytest.mark.parametrize("quiet", [True, False], ids=["quiet", "not-a-terminal"])
def test_cli_run_stops_at_once_exits_130_and_writes_nothing(tmp_path, quiet):
    out = tmp_path / "result"
    args = [*_cnsim(), "run", str(NO_CM), *LONG, "--out", str(out), *(["-q"] if quiet else [])]
    # The CLI claims its destination (a temporary directory beside it) just before the run.
    code, stdout, stderr, took = _interrupt(args, tmp_path, lambda _: any(tmp_path.iterdir()))
    assert code == 130, stderr
    assert took < STOP_WITHIN_S, f"took {took:.2f} s to stop"
    assert stderr.strip() == "error: interrupted", stderr
    assert "panic" not in stderr.lower() and "Traceback" not in stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == [], "nothing half-written beside the result either"


@pytest.mark.parametrize("progress", [False, True], ids=["plain", "progress"])
def test_api_run_raises_keyboard_interrupt(tmp_path, progress):
    script = (
        "import sys, cnsim\n"
        "print('running', flush=True)\n"
        "try:\n"
        f"    cnsim.run({str(NO_CM)!r}, duration='30s', bin='10ms', progress={progress})\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt caught')\n"
        "    sys.exit(0)\n"
        "print('finished without interruption')\n"
        "sys.exit(1)\n"
    )
    code, stdout, stderr, took = _interrupt([sys.executable, "-c", script], ROOT,
                                            lambda proc: proc.stdout.readline() == "running\n")
    assert code == 0, stdout + stderr
    assert stdout.strip() == "KeyboardInterrupt caught", stdout
    assert took < STOP_WITHIN_S, f"took {took:.2f} s to stop"
    assert "panic" not in stderr.lower(), stderr


def test_a_cancelled_run_leaves_the_interpreter_usable(tmp_path):
    """After Ctrl-C the next run works and gives the same result as a fresh process."""
    script = (
        "import signal, threading, os, cnsim\n"
        f"path = {str(NO_CM)!r}\n"
        "threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "try:\n"
        "    cnsim.run(path, duration='30s', bin='10ms')\n"
        "except KeyboardInterrupt:\n"
        "    pass\n"
        "print(cnsim.run(path, duration='6ms').summary['fingerprint'])\n"
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT,
                       preexec_fn=_default_sigint)
    assert p.returncode == 0, p.stderr
    import cnsim

    assert p.stdout.strip() == str(cnsim.run(NO_CM, duration="6ms").summary["fingerprint"])
