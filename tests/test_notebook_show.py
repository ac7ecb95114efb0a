"""course_lib.notebook.show: a pyplot figure shown once, as a picture with its text alternative."""

import base64
import html
import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # before pyplot: no window, whatever the machine

import matplotlib.pyplot as plt
import nbformat
import pytest
from IPython.core.pylabtools import print_figure
from PIL import Image

from course_lib import notebook


@pytest.fixture
def shown(monkeypatch):
    """Every display() call show() makes, as (objects, keywords)."""
    calls = []
    monkeypatch.setattr("IPython.display.display", lambda *objs, **kw: calls.append((objs, kw)))
    yield calls
    plt.close("all")


def line_figure():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2, 3], [1, 4, 9], label="squares")
    ax.set(title="a title", xlabel="x", ylabel="y")
    ax.legend()
    return fig


def test_one_output_with_the_picture_and_its_description(shown):
    line_figure()
    notebook.show("Line chart: squares of 1 to 3.")
    assert len(shown) == 1
    (data,), keywords = shown[0]
    assert keywords == {"raw": True}, "the dict is the output's data, not an object to repr"
    assert set(data) == {"text/html", "image/png", "text/plain"}
    assert data["text/plain"] == "Line chart: squares of 1 to 3."
    assert 'alt="Line chart: squares of 1 to 3."' in data["text/html"]
    assert f"data:image/png;base64,{data['image/png']}" in data["text/html"]
    assert base64.b64decode(data["image/png"]).startswith(b"\x89PNG\r\n\x1a\n")


def test_the_picture_is_the_one_the_inline_backend_would_show(shown):
    reference = print_figure(line_figure(), "png")  # what plt.show() leaves in a notebook
    notebook.show("Line chart: squares of 1 to 3.", line_figure())
    (data,), _ = shown[0]
    ours = Image.open(io.BytesIO(base64.b64decode(data["image/png"])))
    theirs = Image.open(io.BytesIO(reference))
    assert ours.size == theirs.size
    assert ours.convert("RGB").tobytes() == theirs.convert("RGB").tobytes()


def test_quotes_and_markup_in_the_description_are_escaped(shown):
    line_figure()
    alt = 'Chart of "a" < b & c > d, it\'s <script>'
    notebook.show(alt)
    (data,), _ = shown[0]
    html = data["text/html"]
    assert 'alt="Chart of &quot;a&quot; &lt; b &amp; c &gt; d, it&#x27;s &lt;script&gt;"' in html
    assert "<script>" not in html and html.count('"') == 6  # src, alt and style, nothing else
    assert data["text/plain"] == alt


def test_the_figure_is_closed_after_showing(shown):
    fig = line_figure()
    other = line_figure()  # the current one
    notebook.show("the current figure")
    assert not plt.fignum_exists(other.number), "the inline backend would show it a second time"
    assert plt.fignum_exists(fig.number), "only the figure shown is closed"
    notebook.show("the figure passed", fig)
    assert plt.get_fignums() == []


@pytest.mark.parametrize(
    "alt, error", [("", ValueError), ("  \n", ValueError), (None, TypeError), (3, TypeError)]
)
def test_a_missing_description_is_refused_and_the_figure_kept(shown, alt, error):
    fig = line_figure()
    with pytest.raises(error, match="alt"):
        notebook.show(alt)
    assert shown == [] and plt.fignum_exists(fig.number), "fix alt and show it again"


def test_nothing_to_show(shown):
    plt.close("all")
    with pytest.raises(ValueError, match="no figure"):
        notebook.show("a chart")
    assert plt.get_fignums() == [], "no empty figure was made"
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure; got Axes"):
        notebook.show("a chart", line_figure().axes[0])


# The committed lessons --------------------------------------------------------------------

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"


@pytest.mark.parametrize("source", sorted(SOLUTIONS.glob("[0-9]*.py")), ids=lambda p: p.stem)
def test_no_lesson_shows_a_figure_without_a_description(source):
    code = source.read_text(encoding="utf-8")
    assert "plt.show()" not in code, "show figures with notebook.show(alt), which describes them"


@pytest.mark.parametrize("path", sorted(SOLUTIONS.glob("[0-9]*.ipynb")), ids=lambda p: p.stem)
def test_every_stored_picture_has_a_text_alternative(path):
    for cell in nbformat.read(path, as_version=4).cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" not in data:
                continue
            alt = re.search(
                r'<img src="data:image/png;base64,[^"]+" alt="([^"]+)"', data.get("text/html", "")
            )
            assert alt, f"cell {cell.get('id')}: a picture with no <img alt>"
            assert html.unescape(alt.group(1)) == data["text/plain"]
            assert not data["text/plain"].startswith("<Figure"), f"cell {cell.get('id')}"
