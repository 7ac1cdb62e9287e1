"""``cnsim init``: a commented scenario to start from.

The scenarios are package data, ``templates/scenarios/<kind>.toml`` beside
this module (in the wheel as ``cnsim/templates/scenarios/``). Each one
validates and runs as it is; its comments say what every section does and
which lines to change.

A template is written under a temporary name and linked into place, so the
file is either absent or complete, and an existing file is never replaced:
cnsim refuses, writing nothing (there is no ``--force``).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from .outputs import link_into_place, temp_sibling, write_error

#: The kinds of scenario ``cnsim init`` writes, with what each one is.
KINDS = {
    "star-incast": "8 hosts send into one through a switch (incast)",
    "leaf-spine": "4 leaves, 2 spines, 16 hosts; all-to-all traffic over ECMP",
    "fat-tree": "a k = 4 fat tree, 16 hosts; all-to-all traffic over ECMP",
}


class InitRefused(Exception):
    """A scenario that ``cnsim init`` will not write (a file in the way)."""


def template_text(kind: str) -> str:
    """The text of the scenario template *kind* (a key of :data:`KINDS`)."""
    if kind not in KINDS:
        raise ValueError(f"no scenario template named {kind!r}; there are {', '.join(KINDS)}")
    return resources.files("cnsim").joinpath("templates", "scenarios", f"{kind}.toml").read_text(encoding="utf-8")


def target_path(kind: str, path: str | os.PathLike | None = None) -> Path:
    """Where ``cnsim init KIND [PATH]`` writes: PATH, or ``KIND.toml`` in PATH if it is a
    directory (or ends in a slash), or ``KIND.toml`` in the current directory."""
    if path is None:
        return Path(f"{kind}.toml")
    text = os.fspath(path)
    target = Path(text)
    if text.endswith(("/", os.sep)) or target.is_dir():
        return target / f"{kind}.toml"
    return target


def write_template(kind: str, path: str | os.PathLike | None = None) -> Path:
    """Write the scenario template *kind* to :func:`target_path`; return the path written.

    Missing parent directories are made. Raises :class:`InitRefused`, writing nothing, if
    the path exists (a file, a directory, a link, even a dangling one).
    """
    text = template_text(kind)
    target = target_path(kind, path)
    if target.exists() or target.is_symlink():
        raise InitRefused(_refusal(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in (target.parent, *target.parent.parents) if p.exists() and not p.is_dir()),
                       target.parent)
        raise InitRefused(f"{blocker}: exists and is not a directory") from None
    tmp = temp_sibling(target)
    try:
        tmp.write_text(text, encoding="utf-8")
        _link_into_place(tmp, target)
    except OSError as exc:
        raise write_error(target, exc) from None
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _link_into_place(tmp: Path, target: Path) -> None:
    """Rename *tmp* to *target* unless *target* exists (:func:`cnsim.outputs.link_into_place`)."""
    try:
        link_into_place(tmp, target)
    except FileExistsError:
        raise InitRefused(_refusal(target)) from None


def _refusal(target: Path) -> str:
    return f"{target}: already exists; cnsim init never replaces a file (give another path, or move that one away)"
