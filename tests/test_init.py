"""`cnsim init KIND [PATH]`: commented scenarios to start from, which validate and run, and are never
written over an existing file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import cnsim
from cnsim import starter
from cnsim.starter import KINDS

#: A setting the comments offer to switch on: a line "# key = value" or "# [table]".
OPTION = re.compile(r"^# (\[[a-z_.]+\]|[a-z_]+ = .+)$", re.M)


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_is_written_validates_and_runs(cli, tmp_path, kind):
    path = tmp_path / f"my-{kind}.toml"
    res = cli("init", kind, path)
    assert res.code == 0, res.output
    assert str(path) in res.out and f"cnsim run {path} --plot" in res.out
    text = path.read_text(encoding="utf-8")
    assert text == starter.template_text(kind)
    assert text.startswith("# ") and f"cnsim init {kind}" in text  # commented, says where it came from

    res = cli("validate", path)
    assert res.code == 0 and ": ok" in res.out, res.output
    result = cnsim.run(path, duration="1ms")
    assert result.name == f"my-{kind}"  # no name in the file: its stem
    assert result.totals["delivered_frames"] > 0
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_the_templates_build_what_they_say():
    star = cnsim.validate(_file("star-incast"))
    assert len(star["flows"]) == 8 and {f["dst"] for f in star["flows"]} == {"SINK"}
    assert len(cnsim.validate(_file("leaf-spine"))["nodes"]) == 4 + 2 + 16
    assert len(cnsim.validate(_file("fat-tree"))["nodes"]) == 20 + 16
    # Resized as their comments say.
    assert len(cnsim.validate(_file("star-incast"), set={"params.senders": 16})["flows"]) == 16
    assert len(cnsim.validate(_file("fat-tree"), set={"params.k": 8, "params.half": 4})["nodes"]) == 80 + 128


def test_the_incast_congests_its_sink():
    res = cnsim.run(_file("star-incast"), duration="3ms")
    sink = res.queues.set_index("name").loc["SW->SINK"]
    assert sink["drops_frames"] > 0 and res.totals["dropped_frames"] == sink["drops_frames"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_settings_the_comments_offer_are_valid(tmp_path, kind):
    """Every "# key = value" and "# [table]" line, switched on, still makes a valid scenario."""
    text = starter.template_text(kind)
    options = OPTION.findall(text)
    assert any(o.startswith("pause = ") for o in options) and "[qcn]" in options
    path = tmp_path / "on.toml"
    path.write_text(OPTION.sub(r"\1", text), encoding="utf-8")
    cnsim.validate(path)
    assert cnsim.run(path, duration="1ms").totals["delivered_frames"] > 0


def test_init_never_replaces_a_file(cli, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text("my notes", encoding="utf-8")
    res = cli("init", "fat-tree", path)
    assert res.code == 2
    assert res.err == f"error: {path}: already exists; cnsim init never replaces a file " \
                      "(give another path, or move that one away)\n"
    assert path.read_text(encoding="utf-8") == "my notes"
    assert [p.name for p in tmp_path.iterdir()] == ["mine.toml"]
    assert "--force" not in [o for p in _init_params() for o in p.opts]
    assert "never replaced" in cli("init", "--help").out


def test_init_refuses_a_link_or_a_file_in_the_way(cli, tmp_path):
    dangling = tmp_path / "dangling.toml"
    dangling.symlink_to(tmp_path / "nowhere")
    assert cli("init", "star-incast", dangling).code == 2
    assert not (tmp_path / "nowhere").exists()
    (tmp_path / "file").write_text("x")
    res = cli("init", "star-incast", tmp_path / "file" / "sub" / "s.toml")
    assert res.code == 2 and res.err == f"error: {tmp_path / 'file'}: exists and is not a directory\n"


def test_a_file_that_appears_while_writing_is_not_replaced(tmp_path):
    tmp, target = tmp_path / ".t.tmp", tmp_path / "t.toml"
    tmp.write_text("new")
    target.write_text("theirs")
    with pytest.raises(starter.InitRefused, match="already exists"):
        starter._link_into_place(tmp, target)
    assert target.read_text() == "theirs"


def test_default_path_and_a_directory(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("init", "leaf-spine").code == 0
    assert (tmp_path / "leaf-spine.toml").is_file()
    assert cli("init", "leaf-spine", "new/dir/").code == 0  # made, the file named after the kind
    assert (tmp_path / "new" / "dir" / "leaf-spine.toml").is_file()
    assert cli("init", "fat-tree", "new").code == 0  # an existing directory
    assert (tmp_path / "new" / "fat-tree.toml").is_file()


def test_an_unknown_kind_lists_the_kinds(cli, tmp_path):
    res = cli("init", "torus", tmp_path / "t.toml")
    assert res.code == 2 and "'star-incast', 'leaf-spine', 'fat-tree'" in res.err
    assert not (tmp_path / "t.toml").exists()


def _file(kind: str) -> Path:
    return Path(starter.__file__).parent / "templates" / "scenarios" / f"{kind}.toml"


def _init_params():
    from cnsim.cli import init

    return init.params
