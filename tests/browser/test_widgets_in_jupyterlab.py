"""The explorers of lessons 2, 3, 5 and 6 work in a real JupyterLab, as a learner uses them.

Each test opens a copy of the lesson, runs all cells from the menu, waits for the explorer's
picture, moves a control and checks that the picture changed; no output may show a widget
error or a Python traceback, and the browser console must stay free of errors. The last
tests break a notebook on purpose and check that this detector says so.
"""

import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from notebook_page import NotebookPage

LESSONS = Path(__file__).resolve().parents[2] / "lessons"


@dataclass
class Explorer:
    notebook: str  # a file in lessons/
    widget: str  # CSS selector of the whole explorer (classes set in course_lib.widgets)
    controls: tuple  # (name, "slider" or "checkbox", CSS selector of the control)


EXPLORERS = {
    "attention": Explorer(
        "03_scaled_dot_product_attention.ipynb",
        ".course-attention-explorer",
        (
            ("temperature", "slider", ".course-temperature"),
            ("causal", "checkbox", ".course-causal"),
        ),
    ),
    "positional": Explorer(
        "05_positional_encoding.ipynb",
        ".course-pe-explorer",
        (("position", "slider", ".course-position"),),
    ),
    "vectors": Explorer(
        "02_dot_products.ipynb",
        ".course-vector-explorer",
        (("angle", "slider", ".course-angle-b"),),
    ),
    "deep-stack": Explorer(
        "06_ffn_residual_layernorm.ipynb",
        ".course-deep-stack-explorer",
        (
            ("depth", "slider", ".course-depth"),
            ("residual", "checkbox", ".course-residual"),
        ),
    ),
}


def explore(page, jupyterlab, notebook: Path, explorer: Explorer, shots: Path, picture_timeout=20):
    """Run ``notebook`` in the browser and use its explorer; AssertionError says what failed.

    Screenshots of the explorer go to ``shots``: ``<notebook>-before.png`` and one
    ``<notebook>-after-<control>.png`` per control, or ``<notebook>-failure.png``.
    """
    tab = NotebookPage(page, jupyterlab.url, jupyterlab.token, notebook)
    try:
        tab.open()
        tab.run_all()
        tab.assert_no_problems("after Run All")
        src = tab.picture(explorer.widget, timeout=picture_timeout)
        picture = f"{explorer.widget} .course-picture img"
        tab.screenshot(explorer.widget, shots / f"{notebook.stem}-before.png")
        pixels = tab.screenshot(picture)
        for name, kind, control in explorer.controls:
            if kind == "slider":
                tab.nudge_slider(explorer.widget, control)
            else:
                tab.toggle(explorer.widget, control)
            src = tab.picture(explorer.widget, old=src)
            new_pixels = tab.screenshot(picture)
            assert new_pixels != pixels, (
                f"{name}: a new image arrived but the screen did not change"
            )
            tab.screenshot(explorer.widget, shots / f"{notebook.stem}-after-{name}.png")
            pixels = new_pixels
        tab.assert_no_problems(f"after using {', '.join(c[0] for c in explorer.controls)}")
    except Exception as error:
        shot = shots / f"{notebook.stem}-failure.png"
        page.screenshot(path=shot)
        if isinstance(error, AssertionError):
            raise AssertionError(
                f"{error}\n(screenshot {shot}; server log {jupyterlab.log})"
            ) from None
        raise


@pytest.mark.parametrize("name", EXPLORERS)
def test_explorer_draws_and_redraws_in_jupyterlab(name, page, jupyterlab, artifacts):
    explorer = EXPLORERS[name]
    notebook = jupyterlab.root / explorer.notebook
    shutil.copyfile(LESSONS / explorer.notebook, notebook)  # the learner's copy, never the file
    explore(page, jupyterlab, notebook, explorer, artifacts)
    print(f"screenshots of the {name} explorer in {artifacts}")
    for shot in ("before", *(f"after-{c[0]}" for c in explorer.controls)):
        assert (artifacts / f"{notebook.stem}-{shot}.png").stat().st_size > 1000


# Notebooks broken on purpose: the explorer of lesson 3 shown in three wrong ways.
SETUP = """from course_lib.widgets import AttentionExplorer, lesson3_examples

explorer = AttentionExplorer(lesson3_examples())"""
UNRENDERABLE = """import ipywidgets as w
from traitlets import Unicode


class Unrenderable(w.DOMWidget):
    # a widget whose browser half exists nowhere
    _view_module = Unicode("course-no-such-widget").tag(sync=True)
    _view_module_version = Unicode("1.0.0").tag(sync=True)
    _view_name = Unicode("NoSuchView").tag(sync=True)


explorer.widget.children = (explorer.widget.children[0], Unrenderable())
explorer"""
BROKEN = {
    # the picture is replaced by a widget the browser cannot draw
    "unrenderable": ([SETUP, UNRENDERABLE], "widget error"),
    # the explorer shows, but its picture never arrives
    "no-picture": ([SETUP, "explorer.output.outputs = ()\nexplorer"], "no picture"),
    # the explorer works, a later cell fails
    "traceback": ([SETUP, "explorer", "1 / 0"], "Python traceback"),
}


@pytest.mark.parametrize("case", BROKEN)
def test_detector_reports_a_broken_notebook(case, page, jupyterlab, artifacts):
    cells, expected = BROKEN[case]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    path = jupyterlab.root / f"broken-{case}.ipynb"
    nbformat.write(notebook, path)
    with pytest.raises(AssertionError) as failure:
        explore(page, jupyterlab, path, EXPLORERS["attention"], artifacts, picture_timeout=5)
    print(failure.value)
    assert expected in str(failure.value)
