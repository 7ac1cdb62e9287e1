"""The shipped scenarios and benchmark set: found through the package, listed and copied by ``cnsim scenarios``."""

from __future__ import annotations

import tomllib

from conftest import ROOT, SCENARIOS

from cnsim import bench, studies
from cnsim.data import scenario_folders


def _wheel_includes() -> list[str]:
    """The [tool.maturin] include globs, relative to the repository."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["maturin"]
    return [entry["path"] for entry in config["include"]]


def _shipped(path) -> bool:
    """Whether a file of the repository is in the wheel (matched by an include glob through the package's links)."""
    rel = path.resolve().relative_to(ROOT)
    linked = "python/cnsim/data" / rel
    return any(linked.match(pattern) for pattern in _wheel_includes())


def test_the_package_finds_the_repository_files():
    assert studies.scenarios_dir() == SCENARIOS
    assert bench.bench_dir() == ROOT / "bench"


def test_every_study_and_benchmark_scenario_is_in_the_wheel():
    files = [studies.scenario_path(rel) for name in studies.names() for rel in studies.get(name).variants.values()]
    files += [b.scenario for b in bench.load_benchmarks()] + [bench.bench_dir() / "benchmarks.toml"]
    assert files
    for f in files:
        assert f.is_file(), f
        assert _shipped(f), f"{f} is not matched by [tool.maturin] include"


def test_scenarios_lists_every_folder_and_its_files(cli):
    res = cli("scenarios")
    assert res.code == 0, res.output
    assert set(scenario_folders()) == {d.name for d in SCENARIOS.iterdir() if d.is_dir()}
    assert "baseline" in res.out and "    no_cm.toml" in res.out
    assert studies.get("baseline").title in res.out


def test_scenarios_copy_writes_the_study_files(cli, tmp_path):
    dest = tmp_path / "my" / "baseline"
    res = cli("scenarios", "copy", "baseline", dest)
    assert res.code == 0, res.output
    copied = sorted(p.name for p in dest.iterdir())
    assert copied == scenario_folders()["baseline"]
    for name in copied:
        assert (dest / name).read_bytes() == (SCENARIOS / "baseline" / name).read_bytes()


def test_scenarios_copy_never_overwrites(cli, tmp_path):
    (tmp_path / "pause.toml").write_text("mine")
    res = cli("scenarios", "copy", "baseline", tmp_path)
    assert res.code == 2
    assert "pause.toml: already exists; refusing to overwrite" in res.err
    assert [p.name for p in tmp_path.iterdir()] == ["pause.toml"]  # nothing written
    assert (tmp_path / "pause.toml").read_text() == "mine"


def test_scenarios_copy_of_an_unknown_folder_names_the_shipped_ones(cli, tmp_path):
    res = cli("scenarios", "copy", "basline", tmp_path / "x")
    assert res.code == 2
    assert "no shipped scenarios named 'basline'; shipped: baseline," in res.err
    assert not (tmp_path / "x").exists()


def test_bench_peers_without_the_ns3_script_is_refused_before_running(cli, tmp_path, monkeypatch):
    (tmp_path / "benchmarks.toml").write_bytes((ROOT / "bench" / "benchmarks.toml").read_bytes())
    monkeypatch.setenv("CNSIM_BENCH", str(tmp_path))
    res = cli("bench", "A no_cm", "--quick", "--peers")
    assert res.code == 2
    assert "compare.py: not found; the ns-3 comparison runs from a clone of the repository" in res.err
    assert "cnsim bench" not in res.out
