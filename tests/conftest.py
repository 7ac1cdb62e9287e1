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
