"""Lesson sources as text: each solution notebook is built from a jupytext percent script.

``solutions/NN_name.py`` is the single source people edit and review; ``solutions/NN_name.ipynb``
is built from it and executed by ``make solutions`` (it holds the outputs), and ``lessons/`` is
generated from the notebooks. A cell starts at a ``# %%`` line; markdown cells are comments::

    # %% [markdown] id="12b2c2f3"
    # # Lesson 3 · Scaled dot-product attention

    # %% id="90d96cdd" tags=["nbval-ignore-output"]
    import torch

The header keeps each cell's id, so a learner's copy of a lesson can be updated cell by cell
(see :mod:`course_lib.workspace`), and its tags; the notebook keeps only its kernel. A new cell
may leave the id out: ``make solutions`` gives it one and writes it back into the source.
The notebook built from a source also starts with the setup cell for hosted notebooks, which
no source holds (:mod:`course_tools.setup_cell`).
JupyterLab opens these scripts as notebooks wherever jupytext is installed.
"""

import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
from jupytext.config import JupytextConfiguration

from . import setup_cell

FORMAT = "py:percent"
CONFIG = JupytextConfiguration(
    notebook_metadata_filter="kernelspec,-all", cell_metadata_filter="id,tags,-all"
)


def source_of(notebook: Path) -> Path:
    """The text source of a solution notebook: the same name, ending in ``.py``."""
    return notebook.with_suffix(".py")


def to_text(nb: nbformat.NotebookNode) -> str:
    """A notebook's cells, ids, tags and kernel as a percent script (without the setup cell,
    which the build adds)."""
    nb = nbformat.from_dict(nb)  # a copy: the ids move into the metadata for jupytext
    nb.cells = [c for c in nb.cells if not setup_cell.is_setup(c)]
    for cell in nb.cells:
        if cell.cell_type == "code" and re.search(r"^# %%", cell.source, re.M):
            raise ValueError(
                f"cell {cell.id}: a line starting with '# %%' would start a new cell in the "
                "text source; indent it or reword it"
            )
        tags = cell.metadata.get("tags")
        cell.metadata = {"id": cell.id} | ({"tags": tags} if tags else {})
        cell.pop("outputs", None)
    return jupytext.writes(nb, fmt=FORMAT, config=CONFIG)


def read(path: Path) -> nbformat.NotebookNode:
    """A percent script as a notebook without outputs; a cell without an id gets a new one."""
    nb = jupytext.reads(path.read_text(encoding="utf-8"), fmt=FORMAT)
    nb.metadata.pop("jupytext", None)
    for cell in nb.cells:
        cell.id = cell.metadata.pop("id", None) or secrets.token_hex(4)
    return nb


def inputs(nb) -> list:
    """What the source decides in a notebook: each cell's id, type, tags and text."""
    return [[c.get("id"), c.cell_type, c.metadata.get("tags", []), c.source] for c in nb.cells]


def drift(notebook: Path) -> str | None:
    """Why a solution notebook no longer matches its text source, or None if it does."""
    source = source_of(notebook)
    if not source.exists():
        return f"{notebook} has no text source {source.name}"
    if re.search(r"^# %%(?!.*\bid=)", source.read_text(encoding="utf-8"), re.M):
        return f"{source.name} has new cells without an id"
    built, text = nbformat.read(notebook, as_version=4), setup_cell.with_setup(read(source))
    if inputs(built) != inputs(text) or built.metadata.get("kernelspec") != text.metadata.get(
        "kernelspec"
    ):
        return f"{notebook} is out of date with {source.name}"
    return None


def build(source: Path) -> nbformat.NotebookNode:
    """The notebook of a source, unexecuted, its setup cell first; new cell ids are written
    back into the source."""
    nb = read(source)
    text = to_text(nb)
    if text != source.read_text(encoding="utf-8"):
        source.write_text(text, encoding="utf-8")  # ids given to new cells, a normal form
    return setup_cell.with_setup(nb)


def format_code(path: Path) -> bool:
    """Lint-fix and format a source's code cells with ruff, as ``ruff`` does a notebook's cells.

    Each code cell gets the fixes that cannot depend on other cells (import order, modern
    syntax: ruff's I and UP rules), then ``ruff format``. Returns whether the file changed. A
    cell with IPython syntax (``%magic``, ``!cmd``), which ruff cannot read as Python, is left
    as it is.
    """
    nb = read(path)
    for cell in nb.cells:
        if cell.cell_type != "code" or re.search(r"^\s*[%!]", cell.source, re.M):
            continue
        fixed = _ruff(["check", "--fix-only", "--exit-zero", "--select", "I,UP"], cell.source)
        cell.source = _ruff(["format"], fixed).rstrip("\n")
    text = to_text(nb)
    changed = text != path.read_text(encoding="utf-8")
    if changed:
        path.write_text(text, encoding="utf-8")
    return changed


def _ruff(command: list[str], code: str) -> str:
    """``code`` after ``ruff COMMAND`` on it; unchanged if ruff cannot parse it."""
    beside = Path(sys.executable).with_name("ruff")  # the environment's own ruff, as make runs it
    ruff = str(beside) if beside.exists() else shutil.which("ruff") or "ruff"
    done = subprocess.run(
        [ruff, *command, "--stdin-filename", "cell.py", "-"],
        input=code,
        capture_output=True,
        text=True,
    )
    return done.stdout if done.returncode == 0 else code
