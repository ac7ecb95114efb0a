"""Explorers where widgets cannot render: an explorer's output carries the picture it shows.

A front end picks the richest form of an output it can render: the live widget where widgets
work (JupyterLab, Colab), else the ``text/html`` picture with its alt text. nbconvert, which
renders a widget view only when the notebook stores the widget's state, shows either.
"""

import base64
import html
import re

import ipywidgets as w
import nbformat
import pytest

from course_lib.widgets import (
    AttentionExplorer,
    DeepStackExplorer,
    PEExplorer,
    SequenceCostExplorer,
    VectorExplorer,
    lesson3_examples,
    sequence_cost,
)
from course_lib.widgets._explorer import WIDGET_VIEW

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


@pytest.fixture(scope="module")
def explorers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pictures")
    timings = sequence_cost.measure_grid
    # no real timing here: 0.1 ms per position, every sample alike
    sequence_cost.measure_grid = lambda points, **_: {p: [1e-4 * p[1]] for p in points}
    try:
        cost = SequenceCostExplorer(n=32, d=32)
    finally:
        sequence_cost.measure_grid = timings
    return {
        "attention": AttentionExplorer(lesson3_examples(), save_dir=folder),
        "pe": PEExplorer(save_dir=folder),
        "vectors": VectorExplorer(),
        "stack": DeepStackExplorer(depth=2),
        "cost": cost,
    }


def picture(data: dict) -> tuple[bytes, str]:
    """The PNG and the alt text of an output's ``text/html`` picture."""
    found = re.fullmatch(
        r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)" [^>]*>',
        data["text/html"],
    )
    assert found, data["text/html"][:200]
    return base64.b64decode(found[1]), html.unescape(found[2])


@pytest.mark.parametrize("name", ["attention", "pe", "vectors", "stack", "cost"])
def test_an_explorer_sends_its_widget_view_and_the_picture_it_shows(explorers, name):
    explorer = explorers[name]
    data = explorer.display_data()
    assert data[WIDGET_VIEW] == {
        "version_major": 2,
        "version_minor": 0,
        "model_id": explorer.widget.model_id,
    }
    png, alt = picture(data)
    shown = explorer.output.outputs[-1]["data"]
    assert png == base64.b64decode(shown["image/png"]) and png.startswith(b"\x89PNG")
    assert alt == data["text/plain"] == shown["text/plain"] and len(alt) > 40


def test_the_picture_is_the_current_drawing(explorers):
    explorer = explorers["vectors"]
    before = picture(explorer.display_data())
    explorer.angle_b.value = explorer.angle_b.value + 90
    after = picture(explorer.display_data())
    assert after != before and after[1] == explorer.alt
    assert after[0] == base64.b64decode(explorer.output.outputs[-1]["data"]["image/png"])


def exported_page(explorer, *, with_state: bool) -> str:
    """The explorer's output in a notebook exported by nbconvert, with or without the widget
    state a headless run stores (only the explorer's own model: enough for the filter)."""
    from nbconvert import HTMLExporter

    cell = nbformat.v4.new_code_cell("explorer")
    cell.outputs = [nbformat.v4.new_output("display_data", data=explorer.display_data())]
    nb = nbformat.v4.new_notebook(cells=[cell])
    if with_state:
        state = {explorer.widget.model_id: {"model_name": "HBoxModel", "state": {}}}
        nb.metadata["widgets"] = {WIDGET_STATE: {"state": state, "version_major": 2}}
    page, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    return page


def test_a_page_without_the_widgets_state_shows_the_picture_and_with_it_the_widget(explorers):
    explorer = explorers["vectors"]
    alt = html.escape(explorer.alt, quote=True)
    without = exported_page(explorer, with_state=False)
    assert f'alt="{alt}"' in without and WIDGET_VIEW not in without
    with_state = exported_page(explorer, with_state=True)
    assert f'<script type="{WIDGET_VIEW}">' in with_state and f'alt="{alt}"' not in with_state


def test_an_explorer_that_has_drawn_nothing_yet_sends_its_title():
    class Bare(VectorExplorer):
        def __init__(self):
            self.widget, self.output = w.HBox(), w.Output()

    data = Bare().display_data()
    assert data["text/plain"] == "Dot-product explorer" and "text/html" not in data
