"""The JSON Schema of scenario files: shipped, current, and true to what the engine accepts."""

from __future__ import annotations

import json
import tomllib

import jsonschema
import pytest
from conftest import ROOT

import cnsim
from cnsim.data import SCHEMA_FILE

#: Every scenario file cnsim ships: the studies' and examples', the benchmark
#: scenarios (benchmarks.toml is the benchmark list, not a scenario) and the
#: templates of `cnsim init`.
SHIPPED = sorted(
    [*ROOT.glob("scenarios/*/*.toml"), *(p for p in ROOT.glob("bench/*.toml") if p.name != "benchmarks.toml"),
     *ROOT.glob("python/cnsim/templates/scenarios/*.toml")]
)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def _errors(validator, doc) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def test_the_shipped_schema_is_what_cnsim_schema_prints(cli):
    res = cli("schema")
    assert res.code == 0
    assert res.out == SCHEMA_FILE.read_text(encoding="utf-8")


def test_cnsim_schema_out_writes_a_new_file_and_never_replaces_one(cli, tmp_path):
    target = tmp_path / "scenario.schema.json"
    assert cli("schema", "--out", target).code == 0
    assert target.read_text(encoding="utf-8") == SCHEMA_FILE.read_text(encoding="utf-8")
    target.write_text("mine", encoding="utf-8")
    res = cli("schema", "--out", target)
    assert res.code == 2 and "already exists" in res.err and "never replaces" in res.err
    assert target.read_text(encoding="utf-8") == "mine"
    assert cli("schema", "--out", tmp_path / "nope" / "s.json").code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scenario.schema.json"]  # no temporary file left


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_shipped_scenario_validates(validator, path):
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    assert _errors(validator, doc) == []


def test_there_are_shipped_scenarios_of_every_kind():
    names = {p.relative_to(ROOT).parts[0] for p in SHIPPED}
    assert names == {"scenarios", "bench", "python"} and len(SHIPPED) > 25


@pytest.mark.parametrize(
    "text, where, word",
    [
        ('duration = "1ms"\n[[links]]\nbetween = ["A", "B"]\nrat = "10Gbps"\n', "links/0", "'rat'"),
        ('duraton = "1ms"\n', "", "'duraton'"),
        ('duration = "1ms"\n[defaults.switch]\nbufer = "150KB"\n', "defaults/switch", "'bufer'"),
        ('duration = "1ms"\n[topology]\nkind = "fat_tree"\nk = 4\npods = 2\n', "topology", "'pods'"),
    ],
)
def test_a_misspelled_key_fails(validator, text, where, word):
    errors = _errors(validator, tomllib.loads(text))
    assert any(e.startswith(f"{where}:") and word in e for e in errors), errors
    with pytest.raises(cnsim.ScenarioError, match=word.strip("'")):
        cnsim.validate(tomllib.loads(text))  # the engine refuses it too


def test_a_bad_choice_fails(validator):
    doc = tomllib.loads('duration = "1ms"\n[defaults.switch]\nbuffer_model = "per_port"\n')
    assert any("per_port" in e for e in _errors(validator, doc))


#: Quantities as a file may write them, and whether the engine takes them.
UNIT_TEXTS = {
    "duration": ["5us", "5 us", "0.5ms", "1.5e-3s", "100ns", "2µs", " 3 ms ", "5", "5 min", "-1ms", "1,5ms", "ms"],
    "defaults.link.rate": ["10Gbps", "10 Gb/s", "500Mbps", "1e3Mbps", "10kbps", "10", "10 GB/s", "10gbps"],
    "defaults.switch.buffer": ["150KB", "1500 B", "150KiB", "375pages", "1page", "1e3B", "150", "150kb", "1 GB"],
    "defaults.host.egress": ["unlimited", "300KB", "Unlimited", "unlimited KB"],
}


@pytest.mark.parametrize("key", sorted(UNIT_TEXTS))
def test_unit_texts_are_strings_the_schema_accepts_when_the_engine_does(validator, key, write_scenario):
    base = {
        "duration": "1ms",
        "switches": [{"name": "S"}],
        "hosts": [{"name": "A"}, {"name": "B"}],
        "links": [{"between": ["A", "S"]}, {"between": ["B", "S"]}],
    }
    seen = set()
    for text in UNIT_TEXTS[key]:
        doc = json.loads(json.dumps(base))
        *tables, last = key.split(".")
        node = doc
        for t in tables:
            node = node.setdefault(t, {})
        node[last] = text
        try:
            cnsim.validate(doc)
            engine = True
        except cnsim.ScenarioError:
            engine = False
        schema = not _errors(validator, doc)
        assert schema == engine, f"{key} = {text!r}: schema {'accepts' if schema else 'refuses'} it, engine " \
                                 f"{'accepts' if engine else 'refuses'} it"
        seen.add(engine)
    assert seen == {True, False}  # each list has texts of both kinds
