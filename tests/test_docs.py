"""The documentation is self-contained: it cites only files in the repository, and its links resolve."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

#: Design notes that are not part of the repository; nothing shipped may send a reader to them. (The
#: names are written in pieces so that a search of the sources for them finds only real citations.)
_NOTES = ("PROTO" + "COLS", "STU" + "DIES.md", "DE" + "SIGN.md", "PE" + "ERS.md", "../" + "shared")
FOREIGN = re.compile("|".join(rf"\b{re.escape(n)}\b" if n.isalpha() else re.escape(n) for n in _NOTES))
CHECKED = ("docs", "scenarios", "python", "crates", "README.md")

#: [text](target) and ![alt](target), searched after inline code is removed (link text may hold some).
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _tracked() -> list[Path]:
    """The repository's files under CHECKED, from git; the working tree if this is not a checkout."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", *CHECKED], cwd=ROOT, capture_output=True,
                             check=True).stdout
        paths = [ROOT / p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        paths = [ROOT / "README.md"] + [p for d in CHECKED[:-1] for p in (ROOT / d).rglob("*")]
    skip = {"target", ".venv", "__pycache__"}
    return [p for p in paths if p.is_file() and not p.is_symlink() and not skip & set(p.relative_to(ROOT).parts)]


def _markdown() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped (word characters, spaces and hyphens
    kept), spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a markdown file's headings; a repeated heading's copies get -1, -2, ..."""
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    """Relative link targets in a markdown file, outside code blocks and inline code."""
    text = INLINE_CODE.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t, re.I)]


def test_slugs_follow_github():
    assert slug("Study B: hotspot_degree") == "study-b-hotspot_degree"
    assert slug("PAUSE (802.3x)") == "pause-8023x"
    assert slug("Topology generators: `[topology]`") == "topology-generators-topology"
    assert slug("Units, sizes and pages") == "units-sizes-and-pages"


def test_no_file_cites_notes_outside_the_repository():
    files = _tracked()
    assert any(p.name == "model.md" for p in files)
    cites = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if FOREIGN.search(line):
                cites.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not cites, "cite cnsim's own docs instead:\n" + "\n".join(cites)


@pytest.mark.parametrize("doc", _markdown(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc):
    broken = []
    for target in links(doc):
        file, _, anchor = target.partition("#")
        dest = (doc.parent / file).resolve() if file else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with that anchor in {dest.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}:\n" + "\n".join(broken)


def test_readme_lists_the_studies_page():
    assert "docs/studies.md" in (ROOT / "README.md").read_text(encoding="utf-8")
