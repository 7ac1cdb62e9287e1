"""Data safety: cnsim never modifies a directory holding someone else's files, checks its
output path before running, and never calls a partial, damaged or unsaved result "ok".

The command-line tests run the real ``cnsim`` executable; each compares a snapshot
of the names, bytes and modification times under the output directory before and
after.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import cnsim
from cnsim.results import ResultError

from conftest import NO_CM, ROOT

CNSIM = Path(sys.executable).with_name("cnsim")
RING = ROOT / "scenarios" / "deadlock" / "ring.toml"
SHORT = ["--set", "duration=8ms"]


def cnsim_cli(*args, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    if not CNSIM.exists():
        pytest.skip("cnsim console script not installed next to this interpreter")
    env = {k: v for k, v in os.environ.items() if k != "CNSIM_DEBUG"}
    return subprocess.run([str(CNSIM), *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=600)


def snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every path under *root* (and root itself): its bytes (None for a directory) and mtime."""
    snap = {}
    for path in [root, *sorted(root.rglob("*"))]:
        st = path.lstat()
        data = None if path.is_dir() else path.read_bytes()
        snap[str(path.relative_to(root))] = (data, st.st_mtime_ns)
    return snap


def refused(p: subprocess.CompletedProcess, *words: str) -> str:
    """An exit status 2 with one line ``error: ...`` holding *words*."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    assert "Traceback" not in p.stdout + p.stderr
    for word in words:
        assert word in p.stderr, (word, p.stderr)
    return p.stderr


def user_dirs(tmp_path: Path) -> dict[str, Path]:
    """Directories holding a person's files, some of them looking like cnsim's."""
    dirs = {}
    d = dirs["summary_json"] = tmp_path / "with_summary"  # the files of issue #17, item 1
    d.mkdir()
    (d / "summary.json").write_text("{}")
    (d / "thesis.tex").write_text("keep")
    d = dirs["points"] = tmp_path / "with_points"  # item 2: a points/ folder and hidden *.tmp / *.old
    (d / "points" / ".cache.tmp").mkdir(parents=True)
    (d / "points" / ".cache.tmp" / "data").write_text("keep")
    (d / ".draft.old").write_text("keep")
    (d / "thesis.tex").write_text("keep")
    d = dirs["result_names"] = tmp_path / "result_names"  # a result's file names, but not from cnsim
    d.mkdir()
    (d / "flows.parquet").write_bytes(b"mine")
    (d / "figures").mkdir()
    (d / "figures" / "drops.png").write_bytes(b"mine")
    return dirs


@pytest.fixture
def engine_must_not_run(monkeypatch):
    """In-process: the engine is never started."""

    def must_not_run(*args, **kwargs):
        raise AssertionError("the simulation started")

    monkeypatch.setattr(cnsim._core, "run", must_not_run)


# --------------------------------------------------------------------------- cnsim run


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_run_never_touches_a_directory_cnsim_did_not_write(tmp_path, force):
    for name, d in user_dirs(tmp_path).items():
        before = snapshot(d)
        p = cnsim_cli("run", NO_CM, "--out", d, "-q", *SHORT, *force)
        refused(p, str(d), "refusing", "not a cnsim result directory")
        assert snapshot(d) == before, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result_names", "with_points", "with_summary"]


def test_run_into_its_own_result_needs_force_and_keeps_other_files(tmp_path):
    out = tmp_path / "r"
    assert cnsim_cli("run", NO_CM, "--out", out, "-q", "--plot", *SHORT).returncode == 0
    marker = json.loads((out / ".cnsim-result").read_text())
    assert marker["cnsim"] == "result" and marker["engine_id"] == cnsim._core.ENGINE_ID
    assert "flows.parquet" in marker["files"] and "summary.json" in marker["files"]
    before = snapshot(out)
    refused(cnsim_cli("run", NO_CM, "--out", out, "-q", *SHORT), f"{out}: holds an earlier cnsim result", "--force")
    assert snapshot(out) == before
    # With --force the result (figures too) is replaced.
    p = cnsim_cli("run", NO_CM, "--out", out, "-q", "--force", "--set", "duration=7ms")
    assert p.returncode == 0, p.stderr
    assert cnsim.Result.load(out).duration_s == pytest.approx(0.007)
    assert not (out / "figures").exists()
    # Someone's notes in a result directory: never deleted, even with --force.
    (out / "notes.md").write_text("keep")
    before = snapshot(out)
    refused(cnsim_cli("run", NO_CM, "--out", out, "-q", "--force", *SHORT), "notes.md", "did not write")
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]  # no temporary directories left


def test_run_checks_the_destination_before_running(cli, tmp_path, write_scenario, engine_must_not_run, monkeypatch):
    a_file = tmp_path / "file"
    a_file.write_text("keep")
    err = cli("run", NO_CM, "--out", a_file, "-q").err
    assert err == f"error: {a_file}: exists and is not a directory; refusing to replace it\n"
    assert a_file.read_text() == "keep"
    err = cli("run", NO_CM, "--out", a_file / "sub", "-q").err
    assert err.startswith(f"error: {a_file}: cannot create directory: ") and err.count("\n") == 1
    # A default path too long for the file system (the scenario's name).
    long_name = write_scenario(NO_CM.read_text().replace('name = "baseline/no_cm"', f'name = "{"n" * 300}"'))
    monkeypatch.chdir(tmp_path)
    r = cli("run", long_name, "-q")
    assert r.code == 2 and "is too long (300 bytes; the file system allows 255)" in r.err and r.err.count("\n") == 1
    assert not (tmp_path / "results").exists()


def test_run_refuses_a_parent_it_cannot_write_before_running(cli, tmp_path, engine_must_not_run):
    if os.geteuid() == 0:
        parent = Path("/sys")  # not writable, even for root
        if not parent.is_dir():
            pytest.skip("no /sys")
    else:
        parent = tmp_path / "read_only"
        parent.mkdir(mode=0o555)
    r = cli("run", NO_CM, "--out", parent / "cnsim-out", "-q")
    assert r.code == 2 and r.err.startswith(f"error: {parent}: cannot write into this directory: "), r.err
    assert not (parent / "cnsim-out").exists()


def test_api_run_with_out_checks_before_running(tmp_path, engine_must_not_run):
    (tmp_path / "notes.md").write_text("keep")
    with pytest.raises(ResultError, match="not a cnsim result directory"):
        cnsim.run(NO_CM, out=tmp_path)


# --------------------------------------------------------------------------- cnsim sweep


def test_sweep_never_touches_a_directory_that_is_not_a_cnsim_sweep(tmp_path):
    for name, d in user_dirs(tmp_path).items():
        before = snapshot(d)
        refused(cnsim_cli("sweep", NO_CM, "--seeds", "1", "--out", d, "-q", *SHORT), str(d),
                "not a cnsim sweep directory")
        assert snapshot(d) == before, name


def test_resuming_a_sweep_leaves_other_files_in_it_alone(tmp_path):
    out = tmp_path / "s"
    assert cnsim_cli("sweep", NO_CM, "--seeds", "1", "--out", out, "-q", *SHORT).returncode == 0
    mine = [out / "notes.md", out / ".notes.md.1234abcd.tmp", out / "points" / ".draft.old",
            out / "points" / ".mine.1234abcd.tmp"]
    for path in mine:
        path.write_text("keep")
    before = {path: path.stat().st_mtime_ns for path in mine}
    p = cnsim_cli("sweep", NO_CM, "--seeds", "2", "--out", out, "-q", *SHORT)
    assert p.returncode == 0, p.stderr
    assert {path: path.stat().st_mtime_ns for path in mine} == before
    assert all(path.read_text() == "keep" for path in mine)


def test_sweep_checks_the_destination_before_running(cli, tmp_path, engine_must_not_run):
    a_file = tmp_path / "file"
    a_file.write_text("keep")
    r = cli("sweep", NO_CM, "--seeds", "1", "--out", a_file, "-q")
    assert r.code == 2 and r.err == f"error: {a_file}: exists and is not a directory\n"
    r = cli("sweep", NO_CM, "--seeds", "1", "--out", tmp_path / ("s" * 300), "-q")
    assert r.code == 2 and "is too long (300 bytes" in r.err and r.err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


# --------------------------------------------------------------------------- cnsim reproduce


def test_reproduce_never_touches_a_directory_that_is_not_a_cnsim_sweep(tmp_path):
    for name, d in user_dirs(tmp_path).items():
        before = snapshot(d)
        refused(cnsim_cli("reproduce", "baseline", "--quick", "--out", d, "-q"), str(d),
                "not a cnsim sweep directory")
        assert snapshot(d) == before, name


def test_reproduce_checks_the_destination_before_running(cli, tmp_path, engine_must_not_run):
    a_file = tmp_path / "file"
    a_file.write_text("keep")
    r = cli("reproduce", "baseline", "--quick", "--out", a_file, "-q")
    assert r.code == 2 and r.err == f"error: {a_file}: exists and is not a directory\n"
    assert a_file.read_text() == "keep"


# --------------------------------------------------------------------------- cnsim plot


@pytest.fixture(scope="module")
def saved_result(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("plot") / "r"
    cnsim.run(NO_CM, duration="8ms", out=out)
    return out


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_plot_never_touches_a_directory_cnsim_did_not_write(tmp_path, saved_result, force):
    for name, d in user_dirs(tmp_path).items():
        before = snapshot(d)
        refused(cnsim_cli("plot", saved_result, "--out", d, *force), str(d), "not a cnsim figures directory")
        assert snapshot(d) == before, name


def test_plot_replaces_its_own_figures_only_with_force(tmp_path, saved_result):
    out = tmp_path / "figs"
    assert cnsim_cli("plot", saved_result, "--out", out).returncode == 0
    assert json.loads((out / ".cnsim-result").read_text())["cnsim"] == "figures"
    before = snapshot(out)
    refused(cnsim_cli("plot", saved_result, "--out", out), f"{out}: holds earlier cnsim figures; use --force")
    assert snapshot(out) == before
    p = cnsim_cli("plot", saved_result, "--out", out, "--force", "--format", "svg")
    assert p.returncode == 0, p.stderr
    from cnsim import plots

    views = plots.views_for(cnsim.Result.load(saved_result))
    assert sorted(f.name for f in out.iterdir() if not f.name.startswith(".")) == sorted(f"{v}.svg" for v in views)
    (out / "caption.txt").write_text("keep")
    before = snapshot(out)
    refused(cnsim_cli("plot", saved_result, "--out", out, "--force"), "caption.txt")
    assert snapshot(out) == before


def test_plot_checks_the_destination_before_drawing(cli, tmp_path, saved_result, monkeypatch):
    from cnsim import plots

    def must_not_draw(*args, **kwargs):
        raise AssertionError("drawing started")

    monkeypatch.setattr(plots, "time_figure", must_not_draw)
    a_file = tmp_path / "file"
    a_file.write_text("keep")
    r = cli("plot", saved_result, "--out", a_file)
    assert r.code == 2 and r.err == f"error: {a_file}: exists and is not a directory; refusing to replace it\n"


# --------------------------------------------------------------------------- partial results


def test_partial_points_are_counted_and_change_the_exit_status(tmp_path):
    out = tmp_path / "ring"
    p = cnsim_cli("sweep", RING, "--variant", "stop:watchdog.stop_on_deadlock=true", "--variant", "full:",
                  "--out", out)
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert "2 points, 1 ok (0 done before), 1 partial, 0 failed" in p.stdout
    frame = cnsim.load_sweep(out)
    assert frame.set_index("variant")["partial"].to_dict() == {"stop": True, "full": False}
    assert (frame["status"] == "ok").all()
    assert pd.read_csv(out / "summary.csv").set_index("variant")["partial"].to_dict() == {"stop": True, "full": False}
    stopped = frame.loc[frame["partial"], "point_id"].iloc[0]
    assert "warning: 1 of 2 points stopped early" in p.stderr and stopped in p.stderr
    # Resumed: still partial, still said so.
    p = cnsim_cli("sweep", RING, "--variant", "stop:watchdog.stop_on_deadlock=true", "--variant", "full:",
                  "--out", out)
    assert p.returncode == 3 and "1 ok (2 done before), 1 partial" in p.stdout


def test_a_partial_point_in_reproduce_changes_the_exit_status(cli, tmp_path, monkeypatch):
    sweep_module = sys.modules["cnsim.sweep"]  # (cnsim.sweep is also the function)
    real = sweep_module.run_point

    def stop_early(text, origin, fmt, overrides, seed, progress=None):
        raw = real(text, origin, fmt, overrides, seed, progress)
        summary = json.loads(raw["summary"]) if isinstance(raw["summary"], (str, bytes)) else dict(raw["summary"])
        if "/pause" in origin:
            summary["partial"] = {"reason": "stopped after 1 events", "at_s": 0.001}
        return {**raw, "summary": summary}

    monkeypatch.setattr(sweep_module, "run_point", stop_early)
    r = cli("reproduce", "baseline", "--quick", "--out", tmp_path / "b", "-q")
    assert r.code == 3, r.output
    assert "points stopped early" in r.err
    assert "stopped early (partial results)" in (tmp_path / "b" / "report.html").read_text()


# --------------------------------------------------------------------------- damaged points


def test_a_damaged_point_is_named_and_computed_again(tmp_path):
    out = tmp_path / "s"
    assert cnsim_cli("sweep", NO_CM, "--seeds", "2", "--out", out, "-q", *SHORT).returncode == 0
    frame = cnsim.load_sweep(out)
    point = frame["point_id"].iloc[0]
    flows = out / "points" / point / "flows.parquet"
    size = flows.stat().st_size
    flows.write_bytes(flows.read_bytes()[:100])
    with pytest.raises(ResultError, match=rf"{point}: flows.parquet truncated \(expected {size} bytes, found 100\)"):
        cnsim.load_point(out, point)
    p = cnsim_cli("sweep", NO_CM, "--seeds", "2", "--out", out, *SHORT)
    assert p.returncode == 0, p.stderr
    assert (f"warning: point {point}: flows.parquet truncated (expected {size} bytes, found 100); "
            "running it again") in p.stderr
    assert "2 points, 2 ok (1 done before)" in p.stdout
    assert cnsim.load_point(out, point).equals(cnsim.run(NO_CM, seed=1, duration="8ms"))
    # A file deleted by hand: the same.
    (out / "points" / point / "queues.parquet").unlink()
    with pytest.warns(UserWarning, match=f"point {point}: queues.parquet is missing; running it again"):
        again = cnsim.sweep(NO_CM, seeds=2, set={"duration": "8ms"}, out=out)
    assert again.attrs["ran"] == 1 and again.attrs["damaged"] == {point: "queues.parquet is missing"}


# --------------------------------------------------------------------------- a full disk


def _disk_full_under(monkeypatch, folder: str):
    real = pd.DataFrame.to_parquet

    def to_parquet(self, path, *args, **kwargs):
        if folder in str(path):
            raise OSError(28, "No space left on device")
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", to_parquet)


def test_run_on_a_full_disk_names_the_file_and_leaves_nothing(cli, tmp_path, monkeypatch):
    _disk_full_under(monkeypatch, str(tmp_path))
    out = tmp_path / "r"
    r = cli("run", NO_CM, "--out", out, "-q", *SHORT)
    assert r.code == 1
    assert r.err == f"error: {out / 'flows.parquet'}: cannot write: No space left on device\n"
    assert list(tmp_path.iterdir()) == []


def test_sweep_on_a_full_disk_names_the_file_and_keeps_the_summary_true(tmp_path, monkeypatch):
    out = tmp_path / "s"
    cnsim.sweep(NO_CM, seeds=1, set={"duration": "8ms"}, out=out)
    _disk_full_under(monkeypatch, str(out / "points"))
    frame = cnsim.sweep(NO_CM, seeds=3, set={"duration": "8ms"}, out=out)
    assert frame["status"].tolist() == ["ok", "failed", "failed"]
    for row in frame.iloc[1:].itertuples():
        assert f"No space left on device: '{out / 'points' / row.point_id / 'flows.parquet'}'" in row.error
    on_disk = cnsim.load_sweep(out)
    assert len(on_disk) == 3 and on_disk["status"].tolist() == ["ok", "failed", "failed"]
    # The summary itself cannot be written: no stale summary is left behind.
    monkeypatch.undo()
    _disk_full_under(monkeypatch, str(out))
    with pytest.raises(OSError, match="summary.parquet") as exc:
        cnsim.sweep(NO_CM, seeds=4, set={"duration": "8ms"}, out=out)
    assert exc.value.filename == str(out / "summary.parquet")
    assert not (out / "summary.parquet").exists() and not (out / "summary.csv").exists()
    monkeypatch.undo()
    assert len(cnsim.sweep(NO_CM, seeds=4, set={"duration": "8ms"}, out=out)) == 4
