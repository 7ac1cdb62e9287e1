"""Event fingerprints of every shipped study's quick reproduction.

The fingerprint is a running hash of the event trace (time, kind, element);
``tests/fingerprints.json`` stores it for every point of every study's
``cnsim reproduce --quick``, with what the point runs (scenario, overrides,
seed), so that any behavioural change of the engine shows up here. After an
intended change, regenerate the file and commit it with the change, saying
why in the commit message::

    CNSIM_UPDATE_FINGERPRINTS=1 .venv/bin/pytest tests/test_fingerprints.py

The Rust test ``crates/cnsim-core/tests/fingerprints.rs`` runs the same
points from the same file in debug and release builds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from cnsim import studies
from cnsim.report import reproduce

from conftest import ROOT

STORE = Path(__file__).parent / "fingerprints.json"


def _quick(study: str, out: Path, jobs: int) -> dict[str, dict]:
    """Fingerprint and definition of every point of the study's quick reproduction."""
    reproduce(study, quick=True, out=out, jobs=jobs)
    summary = pd.read_parquet(out / "summary.parquet")
    points = {p["point_id"]: p for p in json.loads((out / "sweep.json").read_text())["points"]}
    entries = {}
    for row in summary.itertuples():
        assert row.status == "ok", (study, row.point_id, row.error)
        p = points[row.point_id]
        scenario = Path(p["scenario"]).resolve().relative_to(ROOT).as_posix()
        entries[f"{study}/{row.variant}/s{row.seed}"] = {
            "scenario": scenario,
            "overrides": p["overrides"],
            "seed": int(row.seed),
            "events": int(row.events),
            "fingerprint": row.fingerprint,
        }
    return entries


@pytest.fixture(scope="module")
def current(tmp_path_factory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("fingerprints")
    entries: dict[str, dict] = {}
    for study in studies.names():
        entries.update(_quick(study, out / study, jobs=2))
    return entries


def test_the_shipped_studies_keep_their_stored_fingerprints(current):
    if os.environ.get("CNSIM_UPDATE_FINGERPRINTS"):
        STORE.write_text(json.dumps(dict(sorted(current.items())), indent=1) + "\n", encoding="utf-8")
    stored = json.loads(STORE.read_text(encoding="utf-8"))
    changed = {k: (stored[k]["fingerprint"], v["fingerprint"])
               for k, v in current.items() if k in stored and stored[k]["fingerprint"] != v["fingerprint"]}
    added = sorted(set(current) - set(stored))
    gone = sorted(set(stored) - set(current))
    assert not (changed or added or gone), (
        f"behaviour changed: {len(changed)} fingerprints differ {dict(list(changed.items())[:5])}, "
        f"new points {added[:5]}, missing points {gone[:5]}. If intended, run "
        "CNSIM_UPDATE_FINGERPRINTS=1 pytest tests/test_fingerprints.py and commit tests/fingerprints.json "
        "with the reason in the commit message."
    )


def test_fingerprints_do_not_depend_on_the_number_of_jobs(current, tmp_path):
    # The module's runs used two worker threads; run every study again on one.
    for study in studies.names():
        again = _quick(study, tmp_path / study, jobs=1)
        assert {k: v["fingerprint"] for k, v in again.items()} == {
            k: current[k]["fingerprint"] for k in again
        }


def test_a_different_run_has_a_different_fingerprint(current):
    prints = [v["fingerprint"] for v in current.values()]
    assert len(set(prints)) == len(prints)
