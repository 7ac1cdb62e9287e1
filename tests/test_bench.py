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


def test_the_shipped_ratios_name_benchmarks_of_the_set():
    benchmarks, ratios = bench.load_manifest()
    names = {b.name for b in benchmarks}
    assert {(q.of, q.to, q.at_most) for q in ratios} == {
        ("fat-tree k=8 lossless", "fat-tree k=8 drop tail", 1.3),
        ("DCQCN n=8", "UDP n=8 at fair share", 1.3),
        ("DCTCP n=10", "NewReno n=10", 1.2),
    }
    assert all(q.of in names and q.to in names for q in ratios)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('of = "nope"\nto = "x"', r"ratio\[0\]\.of: expected the name of a benchmark, found 'nope'"),
        ('of = "x"\nto = "x"\nat_most = 0', r"ratio\[0\]\.at_most: expected a number > 0, found 0"),
        ('of = "x"\nto = "x"\nwithin = 1', r"ratio\[0\]: unknown field 'within'"),
        ('to = "x"', r"ratio\[0\]\.of: expected a string, found None"),
    ],
)
def test_a_bad_ratio_names_the_entry_and_field(tmp_path, entry, message):
    path = tmp_path / "benchmarks.toml"
    path.write_text(f'[[benchmark]]\nname = "x"\nscenario = "x.toml"\n\n[[ratio]]\nname = "r"\n{entry}\n')
    with pytest.raises(bench.BenchError, match=message):
        bench.load_manifest(path)


def _row(name, wall, events=100, hops=50):
    return {"name": name, "wall_s": wall, "events": events, "frame_hops": hops, "simulated_s": 0.01,
            "peak_memory_bytes": 1, "rss_growth_bytes": 0, "process_wall_s": wall}


def test_rounds_alternate_their_order_and_give_medians_and_per_round_ratios(monkeypatch):
    # Walls per round chosen so that the ratio of the medians (3/2 = 1.5)
    # differs from the median of the rounds' ratios (1.2): a ratio is taken
    # within a round, where both benchmarks ran side by side.
    walls = {"slow": [1.2, 3.0, 6.0], "base": [1.0, 2.0, 5.0]}
    order = []

    def fake(b, quick=False, threads=1):
        order.append(b.name)
        return _row(b.name, walls[b.name][sum(n == b.name for n in order) - 1])

    monkeypatch.setattr(bench, "run_benchmark", fake)
    chosen = [bench.Benchmark("slow", "", bench.bench_dir()), bench.Benchmark("base", "", bench.bench_dir())]
    each = bench.run_rounds(chosen, 3)
    assert order == ["slow", "base", "base", "slow", "slow", "base"]
    rows = [bench.median_row(r) for r in each]
    assert [r["wall_s"] for r in rows] == [3.0, 2.0]
    assert rows[0]["wall_s_each"] == [1.2, 3.0, 6.0] and rows[0]["frame_hops_per_s"] == 50 / 3.0
    (ratio,) = bench.ratio_rows([bench.Ratio("r", "", "slow", "base", 1.25)], dict(zip(["slow", "base"], each)))
    assert ratio["each"] == pytest.approx([1.2, 1.5, 1.2])
    assert ratio["median"] == pytest.approx(1.2) and ratio["within"] is True
    # A ratio one of whose benchmarks did not run is left out.
    assert bench.ratio_rows([bench.Ratio("r", "", "slow", "other")], dict(zip(["slow", "base"], each))) == []


def test_rounds_that_did_different_work_are_refused():
    with pytest.raises(bench.BenchError, match="rounds differ in events or frame-hops"):
        bench.median_row([_row("x", 1.0), _row("x", 1.0, events=101)])


def test_cnsim_bench_rounds_report_each_ratio_of_the_benchmarks_run(tmp_path, capsys):
    out = tmp_path / "bench.json"
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "DCTCP", "NewReno", "--quick", "--rounds", "2", "--json", str(out)])
    assert exit_.value.code == 0
    doc = json.loads(out.read_text())
    assert doc["rounds"] == 2
    assert all(len(b["wall_s_each"]) == 2 for b in doc["benchmarks"])
    (ratio,) = doc["ratios"]
    assert (ratio["of"], ratio["to"], ratio["at_most"]) == ("DCTCP n=10", "NewReno n=10", 1.2)
    rows = {b["name"]: b for b in doc["benchmarks"]}
    each = [(a / rows["DCTCP n=10"]["frame_hops"]) / (b / rows["NewReno n=10"]["frame_hops"])
            for a, b in zip(rows["DCTCP n=10"]["wall_s_each"], rows["NewReno n=10"]["wall_s_each"])]
    assert ratio["each"] == pytest.approx(each)
    assert ratio["within"] == (ratio["median"] <= 1.2)
    assert "DCTCP n=10 / NewReno n=10" in capsys.readouterr().out


def test_a_manifest_entry_that_is_not_a_table_is_refused(tmp_path):
    path = tmp_path / "benchmarks.toml"
    path.write_text('ratio = [1]\n[[benchmark]]\nname = "x"\nscenario = "x.toml"\n')
    with pytest.raises(bench.BenchError, match=r"ratio\[0\]: expected a table, found 1"):
        bench.load_manifest(path)
