"""The notebooks in examples/ run from top to bottom in this environment's Python, draw their
figures, and write nothing outside a temporary directory."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))


@pytest.fixture(scope="module")
def kernel() -> str:
    """The name of a kernel that runs this Python (ipykernel's, from this virtualenv)."""
    from jupyter_client.kernelspec import KernelSpecManager

    if "python3" not in KernelSpecManager().find_kernel_specs():
        import ipykernel.kernelspec

        ipykernel.kernelspec.install(user=False, prefix=sys.prefix)
    return "python3"


def _snapshot(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def test_there_are_notebooks_and_they_are_stored_without_outputs():
    assert len(NOTEBOOKS) >= 2
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert nb.metadata.kernelspec.name == "python3", path.name
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code and all(not c.outputs and c.execution_count is None for c in code), f"{path.name}: clear outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_runs_and_writes_only_into_a_temporary_directory(path, kernel, tmp_path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    # The kernel must be this Python, with this cnsim.
    nb.cells.append(nbformat.v4.new_code_cell("import sys, cnsim; print(sys.prefix); print(cnsim.__file__)"))
    cwd, temp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))  # the kernel's tempfile.mkdtemp() lands here
    examples = _snapshot(path.parent)

    nbclient.NotebookClient(nb, kernel_name=kernel, timeout=120, resources={"metadata": {"path": str(cwd)}}).execute()

    prefix, package = nb.cells[-1].outputs[0]["text"].split()
    assert prefix == sys.prefix
    import cnsim

    assert Path(package) == Path(cnsim.__file__)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, f"{path.name} draws no figure"
    # A figure that shows only as text would mean the inline backend was lost.
    assert not [o for o in outputs if o.get("data", {}).get("text/plain", "").startswith("<Figure")
                and "image/png" not in o["data"]]
    assert not any(cwd.iterdir()), f"{path.name} wrote into its working directory"
    assert _snapshot(path.parent) == examples, f"{path.name} wrote beside itself"
    made = list(temp.iterdir())
    assert len(made) == 1 and made[0].name.startswith("cnsim-"), made  # its own temporary directory


def test_the_first_notebook_shows_a_result_summary(kernel, tmp_path):
    nb = nbformat.read(ROOT / "examples" / "01_first_run.ipynb", as_version=4)
    nbclient.NotebookClient(nb, kernel_name=kernel, timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    pages = [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code" for o in c.outputs
             if "text/html" in o.get("data", {})]
    assert any("cnsim.Result</b> baseline/no_cm" in page for page in pages)
