"""Stopping a run early (limits, deadlock) and the warnings a person must see."""

from __future__ import annotations

import json

import pytest

import cnsim

from conftest import NO_CM, SCENARIOS

RING = SCENARIOS / "deadlock" / "ring.toml"


def test_an_event_limit_gives_a_result_marked_partial(tmp_path):
    r = cnsim.run(NO_CM, max_events=20_000)
    # The run finishes the window (1.5 us here) of its 20,000th event.
    assert 20_000 <= r.summary["events"] < 20_500
    assert r.partial is not None and "max_events" in r.partial["reason"]
    assert 0 < r.partial["at_s"] < r.duration_s
    assert r.partial["reached_s"] == r.partial["at_s"]
    assert round(r.partial["at_s"] / r.summary["window_s"], 6).is_integer()
    r.save(tmp_path / "r")
    saved = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert saved["partial"] == r.partial
    assert cnsim.run(NO_CM, set={"duration": "10ms"}).partial is None


def test_a_wall_limit_stops_a_long_run():
    r = cnsim.run(NO_CM, set={"duration": "10s"}, max_wall_s=0.2)
    assert r.partial is not None and "max_wall" in r.partial["reason"]
    assert r.partial["at_s"] < 10.0


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "100"])
def test_bad_event_limits_are_refused(bad):
    with pytest.raises(ValueError, match="max_events"):
        cnsim.run(NO_CM, max_events=bad)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "1s"])
def test_bad_wall_limits_are_refused(bad):
    with pytest.raises(ValueError, match="max_wall_s"):
        cnsim.run(NO_CM, max_wall_s=bad)


def test_the_cli_warns_about_a_deadlock_and_a_partial_result(cli, tmp_path):
    res = cli("run", str(RING), "--out", str(tmp_path / "ring"), "--set", "watchdog.stop_on_deadlock=true", "-q")
    assert res.code == 0, res.output
    assert "PARTIAL RESULT: PAUSE deadlock" in res.output
    assert "PAUSE deadlock at" in res.output and "R1->R2 -> R2->R3" in res.output
    summary = json.loads((tmp_path / "ring" / "summary.json").read_text())
    assert summary["watchdog"]["deadlocks"][0]["queues"][0] == "R1->R2"
    res = cli("run", str(NO_CM), "--out", str(tmp_path / "n"), "--max-events", "1000", "-q")
    assert res.code == 0 and "PARTIAL RESULT: stopped at the end of the window of event 1000" in res.output


def test_fail_on_deadlock_exits_4_with_the_result_saved(cli, tmp_path):
    res = cli("run", str(RING), "--out", str(tmp_path / "ring"), "--fail-on-deadlock", "-q")
    assert res.code == 4, res.output
    summary = json.loads((tmp_path / "ring" / "summary.json").read_text())
    assert summary["watchdog"]["deadlocks"], summary["watchdog"]
    # Without the flag, and without a deadlock, a run exits 0.
    assert cli("run", str(RING), "--out", str(tmp_path / "r2"), "-q").code == 0
    res = cli("run", str(NO_CM), "--out", str(tmp_path / "n"), "--set", "duration=20ms", "--fail-on-deadlock", "-q")
    assert res.code == 0, res.output


def test_a_run_too_large_for_the_machine_is_refused_with_an_estimate(write_scenario):
    path = write_scenario(
        """
        duration = "1s"
        bin = "1us"
        [params]
        n = 400
        [[switches]]
        name = "SW"
        [[hosts]]
        name = "H{i}"
        repeat = { i = "n" }
        [[links]]
        between = ["H{i}", "SW"]
        rate = "10Gbps"
        repeat = { i = "n" }
        [[sources]]
        host = "H{i}"
        to = "*"
        load = 0.1
        repeat = { i = "n" }
        """
    )
    assert cnsim.validate(path)["memory_estimate_bytes"] > 2e12
    with pytest.raises(cnsim.SimulationError, match=r"159600 flows.*more than the .* available"):
        cnsim.run(path)


def test_invariant_checks_do_not_change_results():
    with_checks = cnsim.run(NO_CM, set={"duration": "10ms"})
    without = cnsim.run(NO_CM, set={"duration": "10ms"}, checks=False)
    assert with_checks.equals(without)
    assert with_checks.summary["fingerprint"] == without.summary["fingerprint"]


def test_a_run_on_several_threads_gives_the_same_result(cli, tmp_path):
    fat_tree = SCENARIOS.parent / "bench" / "fat_tree_k8.toml"
    small = {"params.k": 4, "params.half": 2, "duration": "2ms"}
    one = cnsim.run(fat_tree, set=small)
    two = cnsim.run(fat_tree, set=small, threads=2)
    assert one.equals(two)
    assert one.summary["fingerprint"] == two.summary["fingerprint"]
    assert one.summary["events"] == two.summary["events"]
    # The scenario's own `threads`, and the command line's.
    assert cnsim.run(fat_tree, set={**small, "threads": 3}).equals(one)
    res = cli("run", str(fat_tree), "--out", str(tmp_path / "t"), "--threads", "2", "-q",
              *[a for k, v in small.items() for a in ("--set", f"{k}={v}")])
    assert res.code == 0, res.output
    saved = json.loads((tmp_path / "t" / "summary.json").read_text())
    assert saved["fingerprint"] == one.summary["fingerprint"]
    # The summary says how many threads each run was asked for and used; equals ignores it.
    threads = ("threads_requested", "threads_used", "threads_note")
    assert [one.summary[k] for k in threads] == [1, 1, None]
    assert [two.summary[k] for k in threads] == [2, 2, None]
    assert [saved[k] for k in threads] == [2, 2, None]
    assert one.summary != two.summary
    # A k = 4 fat tree has 4 pods: a run asked for 8 threads uses 4 and says why.
    four = cnsim.run(fat_tree, set={**small, "duration": "200us"}, threads=8)
    assert [four.summary[k] for k in threads] == [8, 4, "the topology gives only 4 partitions"]


E2CM = SCENARIOS / "e2cm" / "e2cm.toml"
ONE_SWITCH = "no link between two switches with a delay"


def test_a_run_that_cannot_be_split_says_so(cli, tmp_path):
    # One switch: nothing to split between threads.
    r = cnsim.run(E2CM, duration="2ms", threads=2)
    assert r.summary["threads_requested"] == 2
    assert r.summary["threads_used"] == 1
    assert r.summary["threads_note"] == ONE_SWITCH
    one = cnsim.run(E2CM, duration="2ms")
    assert [one.summary[k] for k in ("threads_requested", "threads_used", "threads_note")] == [1, 1, None]
    assert r.equals(one)
    # cnsim run prints one line about it, and none when it used what it was asked for.
    res = cli("run", E2CM, "--set", "duration=2ms", "--threads", 2, "--out", tmp_path / "two")
    assert res.code == 0, res.output
    notes = [line for line in res.out.splitlines() if line.startswith("note:")]
    assert notes == [f"note: ran on 1 thread, not the 2 requested: {ONE_SWITCH}"]
    res = cli("run", E2CM, "--set", "duration=2ms", "--threads", 1, "--out", tmp_path / "one")
    assert res.code == 0, res.output
    assert "note:" not in res.out and "requested" not in res.out


def test_results_saved_before_the_thread_counts_still_load_and_compare(tmp_path):
    r = cnsim.run(E2CM, duration="2ms", threads=2)
    path = r.save(tmp_path / "old")
    summary = json.loads((path / "summary.json").read_text())
    for k in ("threads_requested", "threads_used", "threads_note"):
        del summary[k]
    (path / "summary.json").write_text(json.dumps(summary, indent=2))
    (path / ".cnsim-result").unlink()  # as results saved before the marker: no hashes to match
    old = cnsim.Result.load(path)
    assert "threads_used" not in old.summary
    assert old.equals(r) and r.equals(old)
    assert not old.equals(r, ignore_timing=False)
    from cnsim.console import notes_of

    assert notes_of(old.summary) == []


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2", 257])
def test_bad_thread_counts_are_refused(bad):
    with pytest.raises(ValueError, match="threads"):
        cnsim.run(NO_CM, threads=bad)


def test_a_bad_threads_key_names_its_line(write_scenario):
    text = NO_CM.read_text().replace('duration = "100ms"', 'duration = "100ms"\nthreads = 0', 1)
    assert "threads = 0" in text
    with pytest.raises(cnsim.ScenarioError, match=r"threads: expected a number of threads from 1 to 256, found 0"):
        cnsim.run(write_scenario(text))
