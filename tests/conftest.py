"""Shared fixtures: paths, fast overrides and an in-process CLI runner."""

from __future__ import annotations

import re
import sys
import textwrap
import tomllib
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


def scenario_file(path: Path) -> dict:
    """A scenario file's TOML, as written (no defaults applied)."""
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def scenario_size(text: str, kilobyte: int) -> int:
    """A size as a scenario file writes it ("136192B", "100KB", "375pages") in bytes; `kilobyte` is
    the file's own (1000 unless it sets 1024)."""
    m = re.fullmatch(r"(\d+)\s*(B|KB|KiB|pages)", text)
    assert m, f"size {text!r} not understood by this test helper"
    return int(m[1]) * {"B": 1, "KB": kilobyte, "KiB": 1024, "pages": 64}[m[2]]


def switch_settings(scenario: dict, name: str) -> dict:
    """A switch's settings in a scenario file: ``[defaults.switch]`` overlaid with its own
    ``[[switches]]`` entry, if it has one."""
    own = next((s for s in scenario.get("switches", []) if s["name"] == name), {})
    return {**scenario.get("defaults", {}).get("switch", {}), **own}


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


def texts_outside(fig) -> list[str]:
    """The titles and legends of a matplotlib figure that do not lie within it (their text
    extents, after the figure's layout)."""
    fig.draw_without_rendering()  # runs the layout
    renderer = fig.canvas.get_renderer()
    box = fig.bbox.padded(0.5)
    texts = [fig._suptitle] + [t for ax in fig.axes for t in (ax.title, ax._left_title, ax._right_title)]
    legends = [ax.get_legend() for ax in fig.axes] + list(fig.legends)
    found = []
    for artist in texts + legends:
        if artist is None or (hasattr(artist, "get_text") and not artist.get_text()):
            continue
        extent = artist.get_window_extent(renderer)
        if not (box.x0 <= extent.x0 and extent.x1 <= box.x1 and box.y0 <= extent.y0 and extent.y1 <= box.y1):
            found.append(artist.get_text() if hasattr(artist, "get_text") else f"legend of {len(artist.texts)} entries")
    return found


@pytest.fixture(scope="session")
def quick_reproduction(tmp_path_factory):
    """`cnsim reproduce STUDY --quick` into a temporary directory, once per study and session;
    returns the sweep directory (report.html inside)."""
    from cnsim.cli import main

    done: dict[str, Path] = {}

    def reproduce(study: str) -> Path:
        if study not in done:
            out = tmp_path_factory.mktemp("reproduce") / study
            with pytest.raises(SystemExit) as exc:
                main(["reproduce", study, "--quick", "--out", str(out), "--quiet"])
            assert exc.value.code in (None, 0)
            done[study] = out
        return done[study]

    return reproduce
