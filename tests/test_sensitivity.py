"""Sensitivity sections: the plan of extra points, the tables, and `cnsim reproduce --sensitivity`."""

from __future__ import annotations

from types import SimpleNamespace

from cnsim import studies
from cnsim.report import sensitivity_plan, sensitivity_summary, sensitivity_table


def test_the_plan_applies_each_value_to_the_named_variant():
    spec = studies.get("e2cm")
    plan = sensitivity_plan(spec, quick=False)
    # Two values of the baseline rule, three initial rates, three run lengths.
    assert len(plan) == 2 + 3 + 3
    base, overrides, i, value = plan["sens0-1"]
    assert (base, i, value) == ("base", 0, "while_probing")
    # The variant's own overrides (source-based E2CM, no PAUSE, 600 KB limit, RTT 0), then the value.
    assert overrides["e2cm.measure"] == "source" and overrides["defaults.switch.queue_limit"] == "600KB"
    assert overrides["e2cm.baseline"] == "while_probing"
    # --quick: the study's quick overrides, the quick values, and the value wins over the quick duration.
    quick = sensitivity_plan(spec, quick=True)
    lengths = [o["duration"] for b, o, i, v in quick.values() if i == 2]
    assert lengths == ["100ms", "300ms"]


def test_a_value_of_none_leaves_the_key_unset():
    spec = studies.get("baseline")
    plan = sensitivity_plan(spec, quick=False)
    unset = [o for b, o, i, v in plan.values() if i == 0 and v is None]
    assert unset and all("bcn.initial_rate" not in o for o in unset)


def _result(drops: float):
    return SimpleNamespace(drops=drops)


def test_the_table_marks_cnsims_value_and_ends_with_the_deck():
    s = studies.Sensitivity("Initial rate", "bcn.initial_rate", (None, "5Gbps"), None, "why", "bcn",
                            (("frames dropped", lambda r: r.drops, 1371.0),))
    rows = [(None, [_result(400), _result(420)]), ("5Gbps", [_result(1000)])]
    table = sensitivity_table(s, rows)
    assert list(table["bcn.initial_rate"]) == ["not set (the default)  ← cnsim", "5Gbps", "the deck"]
    # 400 and 420: s = 14.1, t(0.975, 1) = 12.7, so the mean's 95% interval is ± 127.
    assert list(table["frames dropped"]) == ["410 ± 127", "1,000", "1,371"]
    assert list(table["seeds"])[:2] == [2, 1]
    # 410 -> 1,000: a spread of 590 / 410 = 144% of the chosen value's.
    assert sensitivity_summary(s, rows) == \
        "Over these values: frames dropped spans 410–1,000, 144% of its value at cnsim's choice."
    flat = [(None, [_result(400)]), ("5Gbps", [_result(410)])]
    assert "less than 10%" in sensitivity_summary(s, flat)


def test_reproduce_with_sensitivity_writes_its_sweep_beside_and_its_section(tmp_path, cli):
    out = tmp_path / "a"
    res = cli("reproduce", "baseline", "--quick", "--sensitivity", "--out", str(out), "-q")
    assert res.code == 0, res.output
    assert (tmp_path / "a-sensitivity" / "sweep.json").is_file()
    text = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Sensitivity</h2>" in text and "bcn.initial_rate" in text and "← cnsim" in text
    # Without the flag: no section and no second sweep.
    res = cli("reproduce", "baseline", "--quick", "--out", str(tmp_path / "b"), "-q")
    assert res.code == 0 and "<h2>Sensitivity</h2>" not in (tmp_path / "b" / "report.html").read_text("utf-8")
    assert not (tmp_path / "b-sensitivity").exists()


def test_a_foreign_sensitivity_directory_is_refused_before_anything_runs(tmp_path, cli):
    theirs = tmp_path / "a-sensitivity"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    res = cli("reproduce", "baseline", "--quick", "--sensitivity", "--out", str(tmp_path / "a"), "-q")
    assert res.code == 2 and "a-sensitivity" in res.output and "refusing" in res.output
    assert (theirs / "notes.txt").read_text() == "mine" and sorted(p.name for p in theirs.iterdir()) == ["notes.txt"]
    assert not (tmp_path / "a").exists()
