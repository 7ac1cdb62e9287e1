"""Sweeps: point expansion and ids, local execution, resume, failures and bad input."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from conftest import NO_CM, PAUSE, ROOT, point_snapshot, timing_free

import cnsim
from cnsim import points as pts
from cnsim.results import Result, ResultError

SWEEP_MODULE = sys.modules["cnsim.sweep"]  # the module (``cnsim.sweep`` is the function)

#: Short runs: flows start at 5 ms.
SHORT = {"duration": "8ms"}
LOAD = "sources[C1->S1].load"
PAUSE_TABLE = '{ mode = "global", xoff = "136192B", xon = "123392B" }'




# --------------------------------------------------------------------------- values and command-line syntax


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0.3", 0.3),
        ("3", 3),
        ("true", True),
        ("150KB", "150KB"),
        ('"150KB"', "150KB"),
        ('"0.3"', "0.3"),
        ("10 Gbs", "10 Gbs"),
        ('["A", "B"]', ["A", "B"]),
        ('{ mode = "global", xoff = "1KB" }', {"mode": "global", "xoff": "1KB"}),
        ("2024-01-01", "2024-01-01"),
    ],
)
def test_parse_literal_and_engine_value_round_trip(text, value):
    assert pts.parse_literal(text) == value
    assert type(pts.parse_literal(text)) is type(value)
    assert pts.parse_literal(pts.engine_value(value)) == value


def test_split_values_respects_brackets_and_quotes():
    assert pts.split_values("0.3, 0.4,0.5") == ["0.3", "0.4", "0.5"]
    assert pts.split_values('{mode="global",xoff="1KB"},{mode="off"}') == ['{mode="global",xoff="1KB"}', '{mode="off"}']
    assert pts.split_values('"a,b",c') == ['"a,b"', "c"]
    assert pts.split_values("[1,2],[3]") == ["[1,2]", "[3]"]


def test_parse_axis_option_forms():
    assert pts.parse_axis_option("sources[C1->S1].load=0.3,0.4") == (LOAD, [0.3, 0.4])
    assert pts.parse_axis_option('k=["a,b", "c"]') == ("k", ["a,b", "c"])
    assert pts.parse_axis_option('k=["150KB", 3]') == ("k", ["150KB", 3])
    assert pts.parse_axis_option("k=[[1, 2], [3]]") == ("k", [[1, 2], [3]])
    assert pts.parse_axis_option("defaults.switch.buffer=100KB,150KB") == ("defaults.switch.buffer", ["100KB", "150KB"])
    for bad in ("k", "=1,2", "k=", "k=1,,2", "k=[]"):
        with pytest.raises(pts.SweepError):
            pts.parse_axis_option(bad)


def test_parse_variant_option_forms():
    assert pts.parse_variant_option("base:") == ("base", {})
    name, ov = pts.parse_variant_option(f"pause:defaults.switch.pause={PAUSE_TABLE},duration=20ms")
    assert name == "pause"
    assert ov == {
        "defaults.switch.pause": {"mode": "global", "xoff": "136192B", "xon": "123392B"},
        "duration": "20ms",
    }
    for bad in ("pause", ":duration=1ms", "a b:duration=1ms", "a/b:duration=1ms", "v:duration", "v:=3", "v:a=1,a=2"):
        with pytest.raises(pts.SweepError):
            pts.parse_variant_option(bad)


# --------------------------------------------------------------------------- expansion and ids

DICT_SCENARIO = {
    "name": "tiny",
    "duration": "1us",
    "seed": 4,
    "defaults": {"link": {"rate": "10Gbps", "delay": "0.5us"}},
    "switches": [{"name": "SW", "buffer": "150KB"}],
    "hosts": [{"name": "A"}, {"name": "B"}],
    "links": [{"between": ["A", "SW"]}, {"between": ["SW", "B"]}],
    "sources": [{"host": "A", "to": "B", "kind": "bernoulli", "load": 0.5, "frame": "1500B"}],
}


def _ids(points):
    return [p.point_id for p in points]


def test_expansion_is_the_cross_product():
    points = cnsim.sweep_points(
        [NO_CM, PAUSE], axes={LOAD: [0.3, 0.4, 0.45], "defaults.switch.buffer": ["150KB", "200KB"]}, seeds=2
    )
    assert len(points) == 2 * 3 * 2 * 2
    assert len(set(_ids(points))) == len(points)
    assert {p.variant for p in points} == {"no_cm", "pause"}
    assert {p.seed for p in points} == {1, 2}
    assert {(p.axes[LOAD], p.axes["defaults.switch.buffer"]) for p in points} == {
        (a, b) for a in (0.3, 0.4, 0.45) for b in ("150KB", "200KB")
    }
    p = points[0]
    assert p.dir == f"points/{p.point_id}"
    assert p.scenario == str(NO_CM)
    assert dict(p.overrides) == {LOAD: 0.3, "defaults.switch.buffer": "150KB"}


def test_ids_are_stable_and_independent_of_ordering():
    a = cnsim.sweep_points(
        NO_CM,
        axes={LOAD: [0.3, 0.4], "defaults.switch.buffer": ["150KB", "200KB"]},
        variants={"pause": {"defaults.switch.pause": PAUSE_TABLE, "duration": "9ms"}, "base": {}},
        set={"duration": "8ms", "bin": "1ms"},
        seed_list=[3, 5],
    )
    b = cnsim.sweep_points(
        NO_CM,
        axes={"defaults.switch.buffer": ["200KB", "150KB"], LOAD: ["0.4", "0.3"]},  # strings read as TOML literals
        variants={
            "base": {},
            "pause": {
                "duration": "9ms",
                "defaults.switch.pause": {"xon": "123392B", "xoff": "136192B", "mode": "global"},
            },
        },
        set=[("bin", "1ms"), ("duration", "8ms")],
        seed_list=[5, 3],
    )
    assert len(a) == 16
    assert sorted(_ids(a)) == sorted(_ids(b))
    assert _ids(a) == _ids(cnsim.sweep_points(
        NO_CM,
        axes={LOAD: [0.3, 0.4], "defaults.switch.buffer": ["150KB", "200KB"]},
        variants={"pause": {"defaults.switch.pause": PAUSE_TABLE, "duration": "9ms"}, "base": {}},
        set={"duration": "8ms", "bin": "1ms"},
        seed_list=[3, 5],
    ))  # fmt: skip


def test_ids_are_stable_across_processes():
    code = textwrap.dedent(
        f"""
        import json, cnsim
        pts = cnsim.sweep_points({str(NO_CM)!r}, axes={{{LOAD!r}: [0.3, 0.4]}}, seeds=3)
        print(json.dumps([p.point_id for p in pts]))
        """
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=ROOT)
    here = cnsim.sweep_points(NO_CM, axes={LOAD: [0.3, 0.4]}, seeds=3)
    assert json.loads(out.stdout) == _ids(here)


def test_id_scheme_is_the_documented_one():
    points = cnsim.sweep_points(DICT_SCENARIO, axes={"sources[A->B].load": [0.25]}, seed_list=[7])
    (p,) = points
    content = {k: v for k, v in DICT_SCENARIO.items() if k != "sweep"}
    content_hash = hashlib.sha256(pts.canonical_json(content).encode()).hexdigest()
    payload = pts.canonical_json(
        {"scenario": content_hash, "variant": "tiny", "overrides": [["sources[A->B].load", 0.25]], "seed": 7}
    )
    digest = hashlib.sha256(payload.encode()).hexdigest()[:10]
    assert p.point_id == f"tiny_load0.25_s7-{digest}"
    # Pinned: a change of the scheme would orphan every existing sweep directory.
    assert p.point_id == "tiny_load0.25_s7-404712f84d"


def test_ids_distinguish_what_changes_results(tmp_path):
    base = cnsim.sweep_points(NO_CM, seed_list=[1])[0].point_id
    variants = [
        cnsim.sweep_points(NO_CM, seed_list=[2])[0].point_id,
        cnsim.sweep_points(NO_CM, seed_list=[1], set={"duration": "9ms"})[0].point_id,
        cnsim.sweep_points(NO_CM, seed_list=[1], variants={"x": {}})[0].point_id,
        cnsim.sweep_points(PAUSE, seed_list=[1])[0].point_id,
        cnsim.sweep_points({"no_cm": NO_CM}, seed_list=[1])[0].point_id,  # same name, same content
    ]
    assert base not in variants[:4]
    assert variants[4] == base
    assert len(set(variants[:4])) == 4
    # An edit of the scenario changes ids; comments and the [sweep] section do not.
    text = NO_CM.read_text()
    commented = tmp_path / "no_cm.toml"
    commented.write_text("# a comment\n" + text + "\n[sweep]\nseeds = 3\n")
    assert cnsim.sweep_points(commented, seed_list=[1])[0].point_id == base
    edited = tmp_path / "edited" / "no_cm.toml"
    edited.parent.mkdir()
    edited.write_text(text.replace("load = 0.40", "load = 0.41"))
    assert cnsim.sweep_points(edited, seed_list=[1])[0].point_id != base


def test_sweep_section_of_the_file(write_scenario):
    path = write_scenario(
        NO_CM.read_text()
        + textwrap.dedent(
            f"""
            [sweep]
            seeds = 2
            [sweep.variants.pause]
            "defaults.switch.pause" = {PAUSE_TABLE}
            [sweep.variants.no_cm]
            [sweep.axes]
            "sources[C1->S1].load" = [0.3, 0.4]
            """
        ),
        name="study.toml",
    )
    points = cnsim.sweep_points(path)
    assert len(points) == 2 * 2 * 2
    assert {p.variant for p in points} == {"pause", "no_cm"}
    pause = next(p for p in points if p.variant == "pause")
    assert dict(pause.overrides)["defaults.switch.pause"] == {"mode": "global", "xoff": "136192B", "xon": "123392B"}
    # The API's axes add to and replace the file's; its seeds replace the file's.
    more = cnsim.sweep_points(path, axes={LOAD: [0.2], "defaults.switch.buffer": ["200KB"]}, seed_list=[9])
    assert len(more) == 2
    assert {p.seed for p in more} == {9}
    assert all(p.axes == {LOAD: 0.2, "defaults.switch.buffer": "200KB"} for p in more)
    # Without seeds anywhere the scenario's own seed is used.
    assert {p.seed for p in cnsim.sweep_points(NO_CM)} == {1}


def test_several_files_and_mappings():
    points = cnsim.sweep_points([NO_CM, PAUSE], variants={"a": {}, "b": {"duration": "9ms"}})
    assert [p.variant for p in points] == ["no_cm/a", "no_cm/b", "pause/a", "pause/b"]
    points = cnsim.sweep_points({"drop": NO_CM, "pfc": str(PAUSE)})
    assert [p.variant for p in points] == ["drop", "pfc"]
    assert [p.scenario for p in points] == [str(NO_CM), str(PAUSE)]


# --------------------------------------------------------------------------- running locally


@pytest.fixture(scope="module")
def local_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "local"
    frame = cnsim.sweep([NO_CM, PAUSE], axes={LOAD: [0.3, 0.4]}, seeds=2, set=SHORT, out=out, jobs=2)
    return out, frame


def test_local_sweep_summary_and_point_dirs(local_sweep):
    out, frame = local_sweep
    points = cnsim.sweep_points([NO_CM, PAUSE], axes={LOAD: [0.3, 0.4]}, seeds=2, set=SHORT)
    assert len(frame) == len(points) == 8
    assert frame["point_id"].tolist() == _ids(points)
    assert (frame["status"] == "ok").all()
    assert frame["error"].isna().all()
    expected_columns = [
        "point_id", "variant", "scenario", LOAD, "seed", "status", "partial", "error", "wall_time_s", "events", "frame_hops",
        "fingerprint", "offered_frames", "offered_bytes", "delivered_frames", "delivered_bytes", "dropped_frames", "dropped_bytes",
        "in_flight_frames", "in_flight_bytes", "pause_frames_sent", "notifications_sent", "jain_index", "deadlocks", "dir",
    ]  # fmt: skip
    assert list(frame.columns) == expected_columns
    assert frame[LOAD].dtype == "float64"
    # summary.parquet and summary.csv hold the same table as the one returned
    pd.testing.assert_frame_equal(cnsim.load_sweep(out), frame)
    csv = pd.read_csv(out / "summary.csv")
    assert csv["point_id"].tolist() == frame["point_id"].tolist()
    assert csv["dropped_frames"].tolist() == frame["dropped_frames"].tolist()
    # one complete directory per point, nothing else
    assert sorted(p.name for p in (out / "points").iterdir()) == sorted(frame["point_id"])
    for row in frame.itertuples():
        assert Path(out / row.dir).resolve() == (out / "points" / row.point_id).resolve()
        res = cnsim.load_point(out, row.point_id)
        assert res.seed == row.seed
        assert res.totals["dropped_frames"] == row.dropped_frames
        assert res.summary["events"] == row.events


def test_local_sweep_equals_direct_runs(local_sweep):
    out, frame = local_sweep
    for p in cnsim.sweep_points([NO_CM, PAUSE], axes={LOAD: [0.3, 0.4]}, seeds=2, set=SHORT):
        direct = cnsim.run(p.scenario, p.seed, set=dict(p.overrides))
        assert cnsim.load_point(out, p.point_id).equals(direct), p.point_id


def test_sweep_json_describes_the_sweep(local_sweep):
    out, frame = local_sweep
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["cnsim_version"] == cnsim.__version__
    assert [f["path"] for f in doc["files"]] == [str(NO_CM), str(PAUSE)]
    assert doc["files"][0]["sha256"] == hashlib.sha256(NO_CM.read_bytes()).hexdigest()
    assert doc["arguments"]["seeds"] == 2
    assert doc["arguments"]["axes"] == {LOAD: [0.3, 0.4]}
    assert [p["point_id"] for p in doc["points"]] == frame["point_id"].tolist()
    assert doc["points"][0]["overrides"] == {"duration": "8ms", LOAD: 0.3}


def test_rerun_computes_nothing_and_rewrites_the_summary(local_sweep, monkeypatch):
    out, frame = local_sweep
    before = point_snapshot(out)
    (out / "summary.csv").unlink()

    def must_not_run(*args, **kwargs):
        raise AssertionError("a complete point was run again")

    monkeypatch.setattr(SWEEP_MODULE, "run_point", must_not_run)
    again = cnsim.sweep([NO_CM, PAUSE], axes={LOAD: [0.3, 0.4]}, seeds=2, set=SHORT, out=out, jobs=2)
    assert point_snapshot(out) == before
    pd.testing.assert_frame_equal(again, frame)
    assert (out / "summary.csv").is_file()
    assert again.attrs["done_before"] == 8 and again.attrs["ran"] == 0


def test_points_computed_by_another_engine_build_are_run_again(tmp_path):
    out = tmp_path / "engine"
    first = cnsim.sweep([NO_CM], seeds=2, set=SHORT, out=out, jobs=1)
    # Pretend seed 2 was computed by an older engine.
    old = out / first.loc[first["seed"] == 2, "dir"].iloc[0] / "summary.json"
    doc = json.loads(old.read_text())
    assert doc["engine_id"] == cnsim._core.ENGINE_ID
    doc["engine_id"] = "0" * 16
    old.write_text(json.dumps(doc))
    again = cnsim.sweep([NO_CM], seeds=2, set=SHORT, out=out, jobs=1)
    assert again.attrs["done_before"] == 1 and again.attrs["ran"] == 1
    assert json.loads(old.read_text())["engine_id"] == cnsim._core.ENGINE_ID
    # Same engine, same point: the same fingerprint again.
    assert again["fingerprint"].tolist() == first["fingerprint"].tolist()


def test_extending_a_sweep_runs_only_the_new_points(tmp_path, cli):
    out = tmp_path / "ext"
    r = cli("sweep", NO_CM, "--set", "duration=8ms", "--seeds", "2", "--out", out, "--quiet")
    assert r.code == 0, r.output
    assert r.out == ""
    before = point_snapshot(out)
    r = cli("sweep", NO_CM, "--set", "duration=8ms", "--seeds", "3", "--out", out)
    assert r.code == 0, r.output
    assert "3 points, 3 ok (2 done before), 0 partial, 0 failed" in r.out
    after = point_snapshot(out)
    assert len(after) == 3
    assert {k: after[k] for k in before} == before


def test_cli_sweep_matches_api(tmp_path, cli, local_sweep):
    _, frame = local_sweep
    out = tmp_path / "cli"
    r = cli(
        "sweep", NO_CM, PAUSE, "--axis", f"{LOAD}=0.3,0.4", "--seeds", "2", "--set", "duration=8ms",
        "--out", out, "--jobs", "1",
    )  # fmt: skip
    assert r.code == 0, r.output
    assert f"{out}: 8 points, 8 ok (0 done before), 0 partial, 0 failed" in r.out
    assert r.err == ""
    pd.testing.assert_frame_equal(timing_free(cnsim.load_sweep(out)), timing_free(frame))
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["command"][:3] == ["cnsim", "sweep", str(NO_CM)]


def test_cli_variants_and_json_axis(tmp_path, cli):
    out = tmp_path / "v"
    r = cli(
        "sweep", NO_CM, "--variant", "base:", "--variant", f"pause:defaults.switch.pause={PAUSE_TABLE}",
        "--axis", 'defaults.switch.buffer=["150KB", "200KB"]', "--set", "duration=8ms", "--out", out, "-q",
    )  # fmt: skip
    assert r.code == 0, r.output
    frame = cnsim.load_sweep(out)
    assert frame["variant"].tolist() == ["base", "base", "pause", "pause"]
    assert frame["defaults.switch.buffer"].tolist() == ["150KB", "200KB", "150KB", "200KB"]
    paused = frame[frame.variant == "pause"]
    assert (paused["pause_frames_sent"] > 0).all()
    assert (frame[frame.variant == "base"]["pause_frames_sent"] == 0).all()


def test_dict_scenario_sweep(tmp_path):
    frame = cnsim.sweep(DICT_SCENARIO, axes={"sources[A->B].load": [0.2, 0.9]}, out=tmp_path / "d")
    assert frame["seed"].tolist() == [4, 4]
    assert frame["scenario"].tolist() == ["<dict>", "<dict>"]
    assert (frame["status"] == "ok").all()


# --------------------------------------------------------------------------- failures


def test_failing_point_is_recorded_and_retried(tmp_path, cli, monkeypatch):
    out = tmp_path / "fail"
    real = SWEEP_MODULE.run_point

    def flaky(text, origin, fmt, overrides, seed, progress=None):
        if seed == 2:
            raise cnsim.SimulationError("injected failure")
        return real(text, origin, fmt, overrides, seed, progress)

    monkeypatch.setattr(SWEEP_MODULE, "run_point", flaky)
    r = cli("sweep", NO_CM, PAUSE, "--seeds", "3", "--set", "duration=8ms", "--out", out, "-q")
    assert r.code == 1
    frame = cnsim.load_sweep(out)
    failed = frame[frame.status == "failed"]
    assert failed["seed"].tolist() == [2, 2]
    assert (frame[frame.status == "ok"]["seed"] != 2).all() and len(frame) == 6
    assert failed["error"].str.contains("SimulationError: injected failure").all()
    assert failed["dir"].isna().all()
    assert r.err.startswith("error: 2 of 6 points failed")
    for pid in failed["point_id"]:
        assert pid in r.err
        info = json.loads((out / "points" / f"{pid}.error.json").read_text())
        assert info["message"] == "injected failure" and info["seed"] == 2
        assert not (out / "points" / pid).exists()
        with pytest.raises(ResultError, match="failed"):
            cnsim.load_point(out, pid)
    done = point_snapshot(out)
    assert len(done) == 4

    monkeypatch.setattr(SWEEP_MODULE, "run_point", real)
    r = cli("sweep", NO_CM, PAUSE, "--seeds", "3", "--set", "duration=8ms", "--out", out, "-q")
    assert r.code == 0, r.output
    frame = cnsim.load_sweep(out)
    assert (frame.status == "ok").all()
    assert not list((out / "points").glob("*.error.json"))
    after = point_snapshot(out)
    assert {k: after[k] for k in done} == done and len(after) == 6


def test_save_failure_is_a_failed_point(tmp_path, monkeypatch):
    def broken_save(self, directory, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Result, "save", broken_save)
    frame = cnsim.sweep(NO_CM, seeds=2, set=SHORT, out=tmp_path / "full", jobs=1)
    assert (frame.status == "failed").all()
    assert frame["error"].str.contains("No space left").all()
    assert sorted(frame.attrs["failed"]) == sorted(frame.point_id)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--axis", "defaults.switch.bufer=100KB,150KB"], "sweep.axes.\"defaults.switch.bufer\" = \"100KB\": "
         "defaults.switch.bufer: unknown field 'bufer' (did you mean 'buffer'?)"),
        (["--axis", "sources[C9->S1].load=0.3"], "sweep.axes.\"sources[C9->S1].load\" = 0.3:"),
        (["--axis", "duration="], "--axis duration: no values"),
        (["--axis", f"{LOAD}=0.3,abc"], f'sweep.axes."{LOAD}" = "abc": sources[0].load: invalid type'),
        (["--axis", f"{LOAD}=0.3,0.3"], "given twice"),
        (["--axis", "seed=1,2"], "use seeds or a seed list"),
        (["--axis", "justakey"], "--axis expects key=v1,v2"),
        (["--variant", "pause"], "--variant expects name:key=value"),
        (["--variant", "my variant:duration=9ms"], "without spaces or '/'"),
        (["--variant", "v:duration"], "--variant v: expected key=value"),
        (["--variant", "v:defaults.switch.bufer=1KB"], 'sweep.variants.v."defaults.switch.bufer" = "1KB": '),
        (["--variant", "v:duration=9ms", "--variant", "v:duration=10ms"], "--variant v given twice"),
        (["--seeds", "2", "--seed-list", "1,2"], "either --seeds or --seed-list"),
        (["--seed-list", "1,x"], "--seed-list expects integers"),
        (["--seed-list", "1,1"], "seed 1 given twice"),
        (["--jobs", "0"], "--jobs"),
    ],
)  # fmt: skip
def test_bad_sweep_input_cli(tmp_path, cli, args, message):
    out = tmp_path / "out"
    r = cli("sweep", NO_CM, "--set", "duration=8ms", "--out", out, *args)
    assert r.code == 2, r.output
    assert r.out == ""
    assert r.err.startswith("error: ") and r.err.count("\n") == 1, r.err
    assert message in r.err
    assert not out.exists()


def test_bad_files_cli(tmp_path, cli, write_scenario):
    out = tmp_path / "out"
    r = cli("sweep", NO_CM, tmp_path / "missing.toml", "--out", out)
    assert r.code == 2 and r.err == f"error: {tmp_path / 'missing.toml'}: no such file\n"
    broken = write_scenario(NO_CM.read_text().replace('rate = "10Gbps"', 'rate = "10 Gbs"'), name="broken.toml")
    r = cli("sweep", broken, "--out", out)
    assert r.code == 2 and "defaults.link.rate" in r.err and "10 Gbs" in r.err and str(broken) in r.err
    twin = tmp_path / "sub" / "no_cm.toml"
    twin.parent.mkdir()
    twin.write_text(NO_CM.read_text())
    r = cli("sweep", NO_CM, twin, "--out", out)
    assert r.code == 2 and "both named 'no_cm'" in r.err
    assert not out.exists()
    # a combination of a variant and an axis value can be invalid on its own
    r = cli(
        "sweep", NO_CM, "--variant", f"pause:defaults.switch.pause={PAUSE_TABLE}", "--variant", "base:",
        "--axis", "defaults.switch.buffer=100KB,150KB", "--out", out,
    )  # fmt: skip
    assert r.code == 2
    assert 'sweep.axes."defaults.switch.buffer" = "100KB" (variant pause): defaults.switch.pause.xoff' in r.err
    assert not out.exists()


def test_bad_sweep_input_api(tmp_path):
    out = tmp_path / "out"
    cases = [
        dict(axes={"defaults.switch.bufer": ["100KB"]}),
        dict(axes={LOAD: []}),
        dict(axes={LOAD: 0.3}),
        dict(axes={LOAD: [0.3, "abc"]}),
        dict(axes={LOAD: [object()]}),
        dict(variants={"a b": {}}),
        dict(variants={"v": {"duration": "soon"}}),
        dict(seeds=0),
        dict(seeds=2, seed_list=[1]),
        dict(seed_list=[]),
        dict(seed_list=[-1]),
        dict(jobs=0),
    ]
    for kwargs in cases:
        with pytest.raises(cnsim.SweepError) as exc:
            cnsim.sweep(NO_CM, out=out, **kwargs)
        assert isinstance(exc.value, cnsim.ScenarioError) and isinstance(exc.value, ValueError)
    with pytest.raises(cnsim.SweepError, match="no such file"):
        cnsim.sweep([NO_CM, tmp_path / "nope.toml"], out=out)
    with pytest.raises(cnsim.SweepError, match="scenario must be"):
        cnsim.sweep(42, out=out)
    assert not out.exists()


def test_refuses_a_directory_that_is_not_a_sweep(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    refusal = r"not a cnsim sweep directory \(no cnsim sweep.json; it holds notes.txt\)"
    with pytest.raises(cnsim.SweepError, match=refusal):
        cnsim.sweep(NO_CM, set=SHORT, out=other)
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]


def test_one_sweep_at_a_time_per_directory(tmp_path):
    fcntl = pytest.importorskip("fcntl")
    out = tmp_path / "locked"
    out.mkdir()
    (out / "points").mkdir()
    with open(out / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        with pytest.raises(cnsim.SweepError, match="another sweep"):
            cnsim.sweep(NO_CM, set=SHORT, out=out)


def test_the_lock_of_a_killed_sweep_is_released(tmp_path):
    """A sweep killed while it holds the directory (SIGKILL: no clean-up runs) does not leave it locked."""
    pytest.importorskip("fcntl")
    out = tmp_path / "killed"
    out.mkdir()
    (out / "points").mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; import cnsim\n"
         "with sys.modules['cnsim.sweep']._locked(Path(sys.argv[1])):\n"
         "    print('locked', flush=True); time.sleep(120)\n", str(out)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(cnsim.SweepError, match=rf"{out.name}: another sweep is writing into this directory"):
            cnsim.sweep(NO_CM, set=SHORT, out=out)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    frame = cnsim.sweep(NO_CM, set=SHORT, out=out)
    assert list(frame["status"]) == ["ok"]


def test_leftovers_of_an_interrupted_save_are_removed(tmp_path):
    out = tmp_path / "left"
    cnsim.sweep(NO_CM, seeds=1, set=SHORT, out=out)
    (pid,) = cnsim.load_sweep(out)["point_id"]
    junk = out / "points" / f".{pid}.k2x_9q0a.tmp"  # as tempfile.mkdtemp names it
    junk.mkdir()
    (junk / "flows.parquet").write_bytes(b"partial")
    old = out / "points" / f".{pid}.0a1b2c3d.old"
    old.mkdir()
    (out / ".summary.csv.1234abcd.tmp").write_text("partial")
    (out / "points" / f".{pid}.error.json.1234abcd.tmp").write_text("partial")
    # Hidden names of the same shape that cnsim does not make are someone else's.
    mine = [out / ".notes.1234abcd.tmp", out / "points" / ".x-1234.abcd.tmp", out / "points" / ".draft.old",
            out / "points" / f".{pid}.1234abcd.tmp.keep"]
    for path in mine:
        path.write_text("mine")
    frame = cnsim.sweep(NO_CM, seeds=1, set=SHORT, out=out)
    assert not junk.exists() and not old.exists() and not (out / ".summary.csv.1234abcd.tmp").exists()
    assert not (out / "points" / f".{pid}.error.json.1234abcd.tmp").exists()
    assert all(path.read_text() == "mine" for path in mine)
    assert (frame.status == "ok").all()


def test_load_point_unknown(tmp_path, local_sweep):
    out, _ = local_sweep
    with pytest.raises(ResultError, match="no result for point"):
        cnsim.load_point(out, "nope-0000000000")
    with pytest.raises(ResultError, match="not a sweep directory"):
        cnsim.load_sweep(tmp_path)


def test_a_dict_that_is_not_json_is_a_sweep_error(tmp_path):
    with pytest.raises(cnsim.SweepError, match="not JSON-serialisable"):
        cnsim.sweep({"duration": "1ms", "bad": object()}, out=tmp_path / "s")
    assert not (tmp_path / "s").exists()


def test_the_summary_holds_fairness_stability_and_deadlocks(tmp_path):
    import cnsim
    from conftest import SCENARIOS

    frame = cnsim.sweep(SCENARIOS / "cn_sim_baseline" / "bcn.toml", out=tmp_path / "e", seeds=2,
                        set={"duration": "30ms", "metrics.fairness.end": "30ms"})
    for seed, row in zip((1, 2), frame.itertuples()):
        r = cnsim.load_point(tmp_path / "e", row.point_id)
        fairness = r.summary["fairness"]
        assert row.fairness_jain == fairness["jain"] and row.fairness_dev_max == fairness["dev_max"]
        assert row.fairness_dev_rms == fairness["dev_rms"]
        assert row.time_to_stability_s == r.summary["stability"]["time_to_stability_s"]
        assert row.deadlocks == 0
    ring = cnsim.sweep(SCENARIOS / "deadlock" / "ring.toml", out=tmp_path / "ring")
    assert ring["deadlocks"].iloc[0] >= 1
    assert "fairness_jain" not in ring.columns
