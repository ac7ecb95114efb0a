"""Every explorer works in a real JupyterLab, from the keyboard alone, and passes axe.

Each test opens a copy of a lesson, runs all cells from the menu, waits for the explorer's
picture, then operates every control with the keyboard only (Tab to it, then an arrow key,
Page Up, Space or Enter: :mod:`keyboard`) and checks that focus stays in the explorer, shows
a ring, and that the picture changes each time. No output may show a widget error or a
Python traceback, the browser console must stay free of errors, and axe-core finds no
serious or critical violation in the lesson's own content (its text and outputs; the
editors and prompts are JupyterLab's). The last tests break a notebook on purpose and check
that this detector says so.
"""

import shutil
from dataclasses import dataclass
from pathlib import Path

import accessibility
import nbformat
import pytest
from keyboard import Step, operate
from notebook_page import NotebookPage

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
# The course's own content on a JupyterLab page: rendered text and cell outputs.
CONTENT = (".jp-Notebook .jp-MarkdownOutput", ".jp-Notebook .jp-OutputArea-output")


def slider(name: str, css: str, key: str = "PageUp") -> Step:
    return Step(name, f"{css} .noUi-handle", key)


def checkbox(name: str, css: str) -> Step:
    return Step(name, f"{css} input[type=checkbox]", "Space")


def choice(name: str, css: str, index: int) -> Step:
    """The ``index``-th button of a row of toggle buttons (ipywidgets numbers them)."""
    return Step(name, f"{css} button[value='{index}']", "Space")


@dataclass
class Explorer:
    notebook: str  # a file in lessons/
    widget: str  # CSS selector of the whole explorer (classes set in course_lib.widgets)
    steps: tuple  # keyboard steps, in the order Tab reaches their controls


EXPLORERS = {
    "sequence-cost": Explorer(
        "01_sequence_problem.ipynb",
        ".course-sequence-cost-explorer",
        (slider("n", ".course-length-n", "ArrowLeft"), slider("d", ".course-width-d", "ArrowLeft")),
    ),
    "vectors": Explorer(
        "02_dot_products.ipynb",
        ".course-vector-explorer",
        (
            slider("angle of a", ".course-angle-a"),
            slider("length of a", ".course-length-a", "ArrowLeft"),
            slider("angle of b", ".course-angle-b"),
            slider("length of b", ".course-length-b", "ArrowLeft"),
        ),
    ),
    "attention": Explorer(
        "03_scaled_dot_product_attention.ipynb",
        ".course-attention-explorer",
        (
            choice("example", ".course-example", 2),  # two hand-built heads
            choice("head", ".course-head", 1),
            slider("temperature", ".course-temperature"),
            checkbox("divide by √d_k", ".course-scale"),
            checkbox("causal mask", ".course-causal"),
        ),
    ),
    "positional": Explorer(
        "05_positional_encoding.ipynb",
        ".course-pe-explorer",
        (
            slider("d_model", ".course-d-model", "ArrowRight"),
            slider("positions", ".course-positions", "ArrowRight"),
            slider("position", ".course-position"),
            slider("offset k", ".course-offset"),
            Step("wave dimension", ".course-wave-dimension .noUi-handle", "ArrowRight", False),
            Step("add a wave", ".course-add-wave", "Enter"),
            Step("remove a wave", ".course-remove-wave", "Enter"),
        ),
    ),
    "deep-stack": Explorer(
        "06_ffn_residual_layernorm.ipynb",
        ".course-deep-stack-explorer",
        (
            slider("depth", ".course-depth", "ArrowRight"),
            checkbox("residual", ".course-residual"),
            choice("LayerNorm", ".course-norm", 2),  # pre-norm; post-norm is on
        ),
    ),
}


def explore(page, jupyterlab, notebook: Path, explorer: Explorer, shots: Path, picture_timeout=20):
    """Run ``notebook`` in the browser and use its explorer; AssertionError says what failed.

    Screenshots go to ``shots``: ``<notebook>-before.png`` and ``<notebook>-after.png`` of
    the explorer, or ``<notebook>-failure.png`` of the page.
    """
    tab = NotebookPage(page, jupyterlab.url, jupyterlab.token, notebook)
    try:
        tab.open()
        tab.run_all()
        tab.assert_no_problems("after Run All")
        tab.picture(explorer.widget, timeout=picture_timeout)
        tab.screenshot(explorer.widget, shots / f"{notebook.stem}-before.png")

        def picture(old):
            return tab.picture(explorer.widget, old=old, timeout=picture_timeout)

        operate(page, explorer.widget, explorer.steps, picture)
        tab.screenshot(explorer.widget, shots / f"{notebook.stem}-after.png")
        tab.assert_no_problems(f"after using {', '.join(s.name for s in explorer.steps)}")
        found = accessibility.violations(page, include=CONTENT)
        assert found == [], accessibility.report(found, notebook.name)
    except Exception as error:
        shot = shots / f"{notebook.stem}-failure.png"
        page.screenshot(path=shot)
        if isinstance(error, AssertionError):
            raise AssertionError(
                f"{error}\n(screenshot {shot}; server log {jupyterlab.log})"
            ) from None
        raise


@pytest.mark.parametrize("name", EXPLORERS)
def test_explorer_works_from_the_keyboard_in_jupyterlab(name, page, jupyterlab, artifacts):
    explorer = EXPLORERS[name]
    notebook = jupyterlab.root / explorer.notebook
    shutil.copyfile(LESSONS / explorer.notebook, notebook)  # the learner's copy, never the file
    explore(page, jupyterlab, notebook, explorer, artifacts)
    print(f"screenshots of the {name} explorer in {artifacts}")
    for shot in ("before", "after"):
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
