"""One HTML page per notebook: run a copy of it, then export it for offline use.

Every notebook, a lesson without outputs or a solution with its own, is run again in a
fresh kernel in a temporary folder (the repository is never touched), so the page shows
what Run All shows: figures, exercise stubs and their checks. A last cell, removed again
before export, asks the kernel for each explorer's pictures at a set of settings
(``course_lib.widgets.export_explorers``), which the page then shows with native controls.
"""

import html
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course_tools import setup_cell
from course_tools.authoring import execute

from . import assets, navigation, progress

TEMPLATE = Path(__file__).with_name("page.html.j2")
EXPORTS = "explorers.json"  # in the temporary folder the copy runs in
MARK = "course_site"  # metadata key of the cell added to a running copy
EXPORT_SOURCE = """\
import sys as _sys
from pathlib import Path as _Path

if "course_lib.widgets" in _sys.modules:  # an explorer needs the widgets imported
    from course_lib.widgets import export_explorers as _export_explorers

    _export_explorers({path!r})
else:
    _Path({path!r}).write_text("{{}}", encoding="utf-8")
"""


@dataclass
class Built:
    """A notebook after its run, and its explorers' pictures by widget model id."""

    nb: nbformat.NotebookNode
    explorers: dict


def title_of(nb: nbformat.NotebookNode) -> str:
    """The notebook's first markdown heading, without the leading #s."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if line.startswith("#"):
                return line.lstrip("#").strip()
    raise ValueError("notebook has no markdown heading to use as its title")


def export_cell(path: Path) -> nbformat.NotebookNode:
    """The code cell that writes the kernel's explorers to ``path`` (``{}`` when none)."""
    cell = nbformat.v4.new_code_cell(EXPORT_SOURCE.format(path=str(path)))
    cell.metadata[MARK] = "export explorers"
    return cell


def run_copy(path: Path, timeout: int = 600) -> Built:
    """The notebook at ``path`` after running a copy of it in a temporary folder.

    ``timeout`` is the most seconds one cell may run.
    """
    with tempfile.TemporaryDirectory(prefix="course-site-") as folder:
        target, exports = Path(folder) / path.name, Path(folder) / EXPORTS
        shutil.copy2(path, target)
        nb = nbformat.read(target, as_version=4)
        nb.cells.append(export_cell(exports))
        nbformat.write(nb, target)
        execute(target, timeout=timeout)  # the kernel's working folder is the temporary one
        nb = nbformat.read(target, as_version=4)
        # Also the lesson's setup cell: it installs the course on Colab or Kaggle, and a page
        # has nothing to install.
        nb.cells = [c for c in nb.cells if MARK not in c.metadata and not setup_cell.is_setup(c)]
        if not exports.is_file():
            raise RuntimeError(f"{path.name}: the kernel wrote no {EXPORTS}")
        found = json.loads(exports.read_text(encoding="utf-8"))
    if not isinstance(found, dict):
        raise ValueError(f"{path.name}: {EXPORTS} must hold an object; got {type(found).__name__}")
    return Built(nb, found)


def load(path: Path, timeout: int = 600) -> Built:
    """The notebook to publish, with its explorers: a copy of it run from the top."""
    return run_copy(path, timeout)


def _is_repr(text: str) -> bool:
    """Whether text/plain is only an object's repr (``<Figure size 640x480 with 1 Axes>``)."""
    return not text.strip() or bool(re.fullmatch(r"<[^<>]*>", text.strip()))


def describe_images(nb: nbformat.NotebookNode) -> list[str]:
    """Give every PNG-only output an ``<img alt>``; returns where none was stored.

    An output with a description (``text/html`` from ``image_bundle``) is left alone; one
    with a ``text/plain`` description gets that as its alt; one whose text is only a repr
    gets the name of its section, and is listed in the result ("cell 12, section '...'").
    """
    missing, section = [], ""
    for number, cell in enumerate(nb.cells, start=1):
        if cell.cell_type == "markdown":
            headings = re.findall(r"^#+\s+(.+)$", cell.source, flags=re.MULTILINE)
            section = headings[-1].strip() if headings else section
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" not in data or "text/html" in data:
                continue
            text = data.get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            if _is_repr(text):
                missing.append(f"cell {number}, section {section!r}")
                text = f"Figure of the section {section!r}; it has no description of its own."
            png, alt = data["image/png"].replace("\n", ""), html.escape(text.strip(), quote=True)
            data["text/html"] = f'<img src="data:image/png;base64,{png}" alt="{alt}">'
    return missing


def drop_unused_widget_state(nb: nbformat.NotebookNode) -> None:
    """Remove the widget state when no output shows a widget: the page then loads no renderer."""
    shown = any(
        progress.WIDGET_VIEW in output.get("data", {})
        for cell in nb.cells
        for output in cell.get("outputs", [])
    )
    if not shown:
        nb.metadata.pop("widgets", None)


def link_pages(page: str) -> str:
    """Point links between lessons (``href="03_x.ipynb#part"``) at their pages (``03_x.html``)."""
    return re.sub(r'href="(\d\d_[\w-]+)\.ipynb(#[^"]*)?"', r'href="\1.html\2"', page)


def exporter(static: str = assets.STATIC):
    """nbconvert's lab-style HTML exporter with every script served from ``static``."""
    from nbconvert import HTMLExporter

    return HTMLExporter(
        template_name="lab",
        template_file=str(TEMPLATE),
        language_code="en",
        **assets.exporter_urls(static),
    )


def render(
    nb: nbformat.NotebookNode,
    banner: str = "",
    static: str = assets.STATIC,
    neighbours: navigation.Neighbours | None = None,
) -> str:
    """The HTML page of one notebook (the notebook object is left unchanged).

    ``neighbours``: the previous and next pages, and the pages the text may name.
    """
    nb = progress.replace(nb)  # a copy: titles, links and descriptions go into it
    drop_unused_widget_state(nb)
    nb.metadata["title"] = title_of(nb)
    if neighbours is not None:
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = navigation.link_mentions(cell.source, neighbours.mentions)
    shows_explorers = any(
        "course-static-explorer" in output.get("data", {}).get("text/html", "")
        for cell in nb.cells
        for output in cell.get("outputs", [])
    )
    resources = {
        "widget_assets_url": assets.widget_assets_url(static),
        "course_bar": navigation.bar_html(neighbours, banner),
        "course_pager": navigation.pager_html(neighbours),
        "course_css_url": f"{static}/{assets.STYLESHEET}",
        "explorers_js_url": f"{static}/{assets.EXPLORERS_JS}" if shows_explorers else "",
    }
    page, _ = exporter(static).from_notebook_node(nb, resources=resources)
    return navigation.add_contents(link_pages(page))
