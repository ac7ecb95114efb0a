"""One HTML page per notebook: run it if it has no outputs yet, then export it for offline use.

A lesson from ``lessons/`` has no outputs: a copy of it runs in a fresh kernel in a
temporary folder (the repository is never touched), with the widgets' state stored, so
the page shows what a learner sees after Run All: figures, widgets with their last
picture, exercise stubs and "not done yet" checks. A solution notebook already holds its
outputs and widget state and is exported as it is.
"""

import copy
import re
import shutil
import tempfile
from pathlib import Path

import nbformat

from course_tools.authoring import execute

from . import assets

TEMPLATE = Path(__file__).with_name("page.html.j2")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def title_of(nb: nbformat.NotebookNode) -> str:
    """The notebook's first markdown heading, without the leading #s."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if line.startswith("#"):
                return line.lstrip("#").strip()
    raise ValueError("notebook has no markdown heading to use as its title")


def needs_execution(nb: nbformat.NotebookNode) -> bool:
    """True when the notebook lacks outputs, or shows widgets whose state was not stored."""
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
    if not outputs:
        return True
    shows_widgets = any(WIDGET_VIEW in out.get("data", {}) for out in outputs)
    stored = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state")
    return shows_widgets and not stored


def run_copy(path: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """The notebook at ``path`` after running a copy of it in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="course-site-") as folder:
        target = Path(folder) / path.name
        shutil.copy2(path, target)
        execute(target, timeout=timeout)  # the kernel's working folder is the temporary one
        return nbformat.read(target, as_version=4)


def load(path: Path, force_run: bool = False, timeout: int = 600) -> nbformat.NotebookNode:
    """The notebook to publish: as stored if it has its outputs, else run first.

    ``timeout`` is the most seconds one cell may run.
    """
    nb = nbformat.read(path, as_version=4)
    return run_copy(path, timeout) if force_run or needs_execution(nb) else nb


def link_pages(html: str) -> str:
    """Point links between lessons (``href="03_x.ipynb#part"``) at their pages (``03_x.html``)."""
    return re.sub(r'href="(\d\d_[\w-]+)\.ipynb(#[^"]*)?"', r'href="\1.html\2"', html)


def exporter(static: str = assets.STATIC):
    """nbconvert's lab-style HTML exporter with every script served from ``static``."""
    from nbconvert import HTMLExporter

    return HTMLExporter(
        template_name="lab", template_file=str(TEMPLATE), **assets.exporter_urls(static)
    )


def render(nb: nbformat.NotebookNode, banner: str = "", static: str = assets.STATIC) -> str:
    """The HTML page of one notebook (the notebook object is left unchanged)."""
    nb = copy.deepcopy(nb)  # the page title goes into the copy's metadata
    nb.metadata["title"] = title_of(nb)
    resources = {"widget_assets_url": assets.widget_assets_url(static), "course_banner": banner}
    html, _ = exporter(static).from_notebook_node(nb, resources=resources)
    return link_pages(html)
