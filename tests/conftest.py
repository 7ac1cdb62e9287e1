"""Shared fixtures: paths, fast overrides and an in-process CLI runner."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
NO_CM = SCENARIOS / "baseline" / "no_cm.toml"
PAUSE = SCENARIOS / "baseline" / "pause.toml"

#: Keeps end-to-end runs of the baseline study short (flows start at 5 ms).
FAST = {"duration": "20ms"}
FAST_SET = [f"--set=duration={FAST['duration']}"]


def timing_free(frame):
    """A sweep summary without its wall-time column (the only field allowed to differ between runs)."""
    return frame.drop(columns=["wall_time_s"]).reset_index(drop=True)


def point_snapshot(out: Path) -> dict[str, tuple[int, int]]:
    """(inode, mtime_ns) of every complete point's summary.json in a sweep directory."""
    snap = {}
    for d in (out / "points").iterdir():
        if d.name.startswith("."):
            continue  # a point being saved (temporary name): not complete
        s = d / "summary.json"
        if d.is_dir() and s.is_file():
            st = s.stat()
            snap[d.name] = (st.st_ino, st.st_mtime_ns)
    return snap


@dataclass
class CliOutcome:
    code: int
    out: str
    err: str

    @property
    def output(self) -> str:
        return self.out + self.err


@pytest.fixture
def cli(capsys):
    """Call ``cnsim.cli.main`` in-process; returns exit code, stdout and stderr."""
    from cnsim.cli import main

    def invoke(*args) -> CliOutcome:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            main([str(a) for a in args])
        captured = capsys.readouterr()
        code = exc.value.code
        return CliOutcome(0 if code is None else int(code), captured.out, captured.err)

    return invoke


@pytest.fixture
def write_scenario(tmp_path):
    """Write dedented TOML text to a file in tmp_path and return its path."""

    def write(text: str, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def python_exe() -> str:
    return sys.executable
