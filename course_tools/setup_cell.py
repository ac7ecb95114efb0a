"""The first code cell of every lesson: the course's package for hosted notebooks.

On Google Colab or Kaggle nothing of the course is installed, so a lesson's imports would
fail. This cell pip-installs the course from its repository (:mod:`course_tools.repository`)
when ``course_lib`` cannot be imported, and prints one line saying so, or one line saying
why it could not. Wherever the course is installed (a local JupyterLab, Binder, a hub) it
does nothing and prints nothing, so the stored notebooks compare strictly under nbval.

pip installs only what is missing or too old for the course's declared floors: a hosted
image's own torch, numpy, matplotlib and ipywidgets stay as they are (``pip install``
without ``--upgrade``), which is why the floors must admit the versions those images carry.
If ``COURSE_SOURCE`` is set, it is installed instead of the repository's archive: a fork, a
local folder or a wheel (the emulated hosted notebook of the tests installs a local copy).

The cell is not in the lesson sources: building a solution notebook from its source
(:func:`course_tools.sources.build`) puts it before the first code cell, so every solution
notebook, and every lesson generated from one, starts with the same cell.
"""

import nbformat

from . import repository

CELL_ID = "course-setup"
TAG = "course-setup"
# Its output is compared nowhere: it prints only where it installs (not where tests run).
TAGS = [TAG, "nbval-ignore-output"]

TEMPLATE = """\
# Setup for Google Colab and Kaggle: installs the course's package (course_lib) from the
# course's repository, in a minute or less. Where the course is installed already (your
# computer, Binder, a JupyterHub) this cell does nothing.
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("course_lib") is None:
    # pip adds what is missing and keeps what is there (torch, numpy, matplotlib, ipywidgets).
    # COURSE_SOURCE, if set, names another copy of the course to install (a fork, a folder).
    source = os.environ.get(
        "COURSE_SOURCE",
        "{archive}",
    )
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", source]
    done = subprocess.run(pip, capture_output=True, text=True)
    importlib.invalidate_caches()  # so that the next cell finds the new package
    if done.returncode == 0:
        print(f"Installed the course's package from {{source}}")
    else:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        print(
            f"Could not install the course's package ({{why}}). On Kaggle: switch Internet "
            "on in the notebook's settings, then run this cell again."
        )"""


def source(url: str | None = None) -> str:
    """The cell's code, installing from ``url`` (default: the address pyproject.toml sets)."""
    return TEMPLATE.format(archive=repository.archive(url or repository.address()))


def cell(url: str | None = None) -> nbformat.NotebookNode:
    """The setup cell: its code, its fixed id and its tags."""
    new = nbformat.v4.new_code_cell(source(url), metadata={"tags": list(TAGS)})
    new.id = CELL_ID
    return new


def is_setup(cell) -> bool:
    """Whether a notebook cell is the setup cell (by its tag: its code changes with the
    address)."""
    return TAG in cell.get("metadata", {}).get("tags", [])


def with_setup(nb: nbformat.NotebookNode, url: str | None = None) -> nbformat.NotebookNode:
    """``nb`` (changed in place) with the setup cell before its first code cell, and no other.

    A setup cell already there is replaced, so building twice gives the same notebook.
    """
    nb.cells = [c for c in nb.cells if not is_setup(c)]
    first = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), len(nb.cells))
    nb.cells.insert(first, cell(url))
    return nb
