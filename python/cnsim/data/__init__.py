"""Files shipped with cnsim: the study scenarios, the benchmark set, the
flow-size distributions of ``[[workloads]]`` and the JSON Schema of scenario
files (``scenario.schema.json``, what ``cnsim schema`` prints).

``scenarios``, ``bench`` and ``workloads`` here are links to the
repository's folders of those names; a wheel holds their files at the same
place (``[tool.maturin] include`` in pyproject.toml), so an installed cnsim
finds them without the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

_HERE = Path(__file__).parent

#: The JSON Schema of scenario files, for editors (docs/scenario-format.md).
SCHEMA_FILE = _HERE / "scenario.schema.json"


def shipped_dir(name: str, env: str) -> Path:
    """The shipped folder ``name`` ("scenarios" or "bench"), or the folder named by $``env``."""
    override = os.environ.get(env)
    # resolved: in the repository, paths name the real folder, not the link
    return Path(override) if override else (_HERE / name).resolve()


class CopyRefused(Exception):
    """A copy of shipped scenarios that cnsim will not make (unknown folder, files in the way)."""


def scenario_folders() -> dict[str, list[str]]:
    """The shipped scenario files by folder (one folder per study, plus examples such as ``deadlock``)."""
    root = shipped_dir("scenarios", "CNSIM_SCENARIOS")
    return {d.name: sorted(f.name for f in d.glob("*.toml")) for d in sorted(root.iterdir()) if d.is_dir()}


def copy_scenarios(folder: str, dest: Path) -> list[Path]:
    """Copy the scenario files of ``folder`` into ``dest`` (made if missing); the files written.

    Refuses, writing nothing, if any of them already exists in ``dest``:
    cnsim never overwrites a file it did not write.
    """
    folders = scenario_folders()
    if folder not in folders:
        raise CopyRefused(f"no shipped scenarios named {folder!r}; shipped: {', '.join(folders)}")
    source = shipped_dir("scenarios", "CNSIM_SCENARIOS") / folder
    targets = [dest / name for name in folders[folder]]
    existing = [str(t) for t in targets if t.exists() or t.is_symlink()]
    if existing:
        raise CopyRefused(f"{', '.join(existing)}: already exist{'s' if len(existing) == 1 else ''}; "
                          "refusing to overwrite (copy into another directory)")
    dest.mkdir(parents=True, exist_ok=True)
    for target in targets:
        # "x": created here, never replaced, even if one appeared since the check
        with open(target, "xb") as f:
            f.write((source / target.name).read_bytes())
    return targets
