"""A wheel, installed into a fresh virtualenv outside the repository, runs the studies and the benchmarks.

Builds the wheel with maturin in the release-tests profile (Cargo.toml),
which reuses the build of the test run: what is checked here, the files the
wheel carries and how an installed cnsim finds them, does not depend on the
profile. The dependencies come from pip's cache or the index. Set
CNSIM_SKIP_WHEEL=1 to skip (`make test` runs it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.skipif(os.environ.get("CNSIM_SKIP_WHEEL") == "1", reason="CNSIM_SKIP_WHEEL=1")


def _run(cmd, cwd: Path, env=None, timeout=600) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, f"{cmd}: exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    maturin = Path(sys.executable).with_name("maturin")
    _run([maturin, "build", "--profile", "release-tests", "--out", out, "--quiet"], cwd=ROOT, timeout=1200)
    (whl,) = out.glob("cnsim-*.whl")
    return whl


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The bin directory of a fresh virtualenv with the wheel installed."""
    venv = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", venv], cwd=venv)
    _run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel], cwd=venv)
    return venv / "bin"


def _clean_env() -> dict[str, str]:
    """This environment without anything that points cnsim at the repository."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "CNSIM_SCENARIOS", "CNSIM_BENCH", "CNSIM_DEBUG"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def test_the_wheel_carries_the_scenarios_the_benchmarks_and_the_licences(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {p.relative_to(ROOT).as_posix() for p in (ROOT / "scenarios").glob("*/*.toml")}
    shipped |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "bench").glob("*.toml")}
    shipped |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "workloads").glob("*.csv")}
    assert len(shipped) > 2 and "workloads/websearch.csv" in shipped
    assert {f"cnsim/data/{rel}" for rel in shipped} <= names
    assert "cnsim/templates/report.html" in names  # the report's template, package data
    assert "cnsim/data/scenario.schema.json" in names  # the JSON Schema of scenario files
    inits = {p.relative_to(ROOT / "python").as_posix() for p in (ROOT / "python" / "cnsim").glob("templates/*/*.toml")}
    assert len(inits) == 3 and inits <= names  # cnsim init's scenarios, package data too
    assert not any(n.startswith(("scenarios/", "bench/")) for n in names)  # nothing at the top of site-packages
    licences = {Path(n).name for n in names if ".dist-info/" in n}
    assert {"LICENSE-MIT", "LICENSE-APACHE"} <= licences


def test_an_installed_cnsim_reproduces_a_study_and_runs_the_benchmarks(installed, tmp_path):
    env = _clean_env()
    cnsim = installed / "cnsim"
    where = _run([installed / "python", "-c", "import cnsim.studies as s; print(s.scenarios_dir())"], tmp_path, env)
    assert Path(where.stdout.strip()).is_relative_to(installed.parent)  # the package's copy, not the repository
    assert "no_cm.toml" in _run([cnsim, "scenarios"], tmp_path, env).stdout
    _run([cnsim, "reproduce", "baseline", "--quick", "--quiet"], tmp_path, env)
    assert (tmp_path / "results" / "reproduce" / "baseline-quick" / "report.html").is_file()
    res = _run([cnsim, "bench", "A", "--quick"], tmp_path, env)
    assert "A no_cm" in res.stdout and "A bcn_pause" in res.stdout
    _run([cnsim, "scenarios", "copy", "baseline", "my"], tmp_path, env)
    assert (tmp_path / "my" / "no_cm.toml").is_file()
    _run([cnsim, "init", "fat-tree", "my"], tmp_path, env)
    _run([cnsim, "run", "my/fat-tree.toml", "--set", "duration=1ms", "--quiet"], tmp_path, env)
