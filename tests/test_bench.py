"""`cnsim bench`: the manifest, the selection and one real benchmark run."""

from __future__ import annotations

import json

import pytest

import cnsim
from cnsim import bench
from cnsim.cli import main


def test_every_benchmark_scenario_is_valid_full_and_quick():
    benchmarks = bench.load_benchmarks()
    assert [b.name for b in benchmarks][:2] == ["A no_cm", "A bcn_pause"]
    for b in benchmarks:
        for quick in (False, True):
            seeds, overrides = b.plan(quick)
            assert seeds >= 1
            cnsim.validate(b.scenario, set=overrides)
    e = next(b for b in benchmarks if b.name.startswith("E "))
    assert e.plan(False)[0] == 25 and e.plan(True)[0] == 3


def test_selection_is_by_name_prefix_and_unknown_names_are_refused():
    benchmarks = bench.load_benchmarks()
    assert [b.name for b in bench.select(benchmarks, ("a",))] == ["A no_cm", "A bcn_pause"]
    with pytest.raises(bench.BenchError, match="no benchmark matches 'zz'"):
        bench.select(benchmarks, ("zz",))


def test_a_bad_manifest_names_the_entry_and_field(tmp_path):
    path = tmp_path / "benchmarks.toml"
    path.write_text('[[benchmark]]\nname = "x"\nscenario = "x.toml"\nseeds = 0\n')
    with pytest.raises(bench.BenchError, match=r"benchmark\[0\]\.seeds: expected an integer >= 1, found 0"):
        bench.load_benchmarks(path)


def test_cnsim_bench_runs_and_writes_its_numbers(tmp_path, capsys):
    out = tmp_path / "bench.json"
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "A no", "--quick", "--json", str(out)])
    assert exit_.value.code == 0
    doc = json.loads(out.read_text())
    (row,) = doc["benchmarks"]
    assert row["name"] == "A no_cm" and row["runs"] == 1
    # The same numbers as the run's own summary: events and frame-hops are exact.
    s = cnsim.run(bench.bench_dir() / "../scenarios/baseline/no_cm.toml", seed=1).summary
    assert (row["events"], row["frame_hops"]) == (s["events"], s["frame_hops"])
    assert row["frame_hops_per_s"] == pytest.approx(row["frame_hops"] / row["wall_s"])
    assert doc["machine"]["nproc"] >= 1
    # The build flavour is stated beside the numbers: "release, PGO" when
    # `make build` found llvm-profdata, "release" without it.
    assert doc["machine"]["build"] == cnsim._core.BUILD
    assert cnsim._core.BUILD in ("release", "release, PGO")
    printed = capsys.readouterr().out
    assert "A no_cm" in printed and cnsim._core.BUILD in printed


def test_a_benchmark_that_cannot_split_says_how_many_threads_it_used(tmp_path, capsys):
    # The incast's star has one switch: no link between switches to split on.
    out = tmp_path / "bench.json"
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "incast", "--quick", "--threads", "2", "--json", str(out)])
    assert exit_.value.code == 0
    (row,) = json.loads(out.read_text())["benchmarks"]
    assert (row["threads"], row["threads_used"]) == (2, 1)
    assert row["threads_note"] == "no link between two switches with a delay"
    assert ("note: incast 1024 ran on 1 thread, not the 2 requested: no link between two switches with a delay"
            in capsys.readouterr().out)
