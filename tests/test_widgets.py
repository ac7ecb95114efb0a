"""The attention-map explorer, without a browser or a kernel.

Setting a control's ``.value`` calls the observers synchronously, so each test moves a
control and inspects what was drawn: the heatmap's array, the cell labels, the texts.
"""

import base64
import html
import io
import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
import torch
from matplotlib.collections import QuadMesh
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch
from PIL import Image

from course_lib.attention import MultiHeadAttention, scaled_dot_product_attention
from course_lib.masks import causal_mask
from course_lib.widgets import (
    AttentionExample,
    AttentionExplorer,
    attention_weights,
    describe_attention_map,
    draw_attention,
    figure_png,
    lesson3_examples,
    refresh_attention,
    render_attention,
    show_figure,
)
from course_lib.widgets._display import image_bundle

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
WORKED, RANDOM, SENTENCE, TRANSLATION = range(4)  # the order of lesson3_examples()


@pytest.fixture(scope="module")
def examples():
    return lesson3_examples()


@pytest.fixture
def explorer(examples, tmp_path):
    return AttentionExplorer(examples, save_dir=tmp_path)


def heatmap(fig) -> QuadMesh:
    return next(c for c in fig.axes[0].collections if isinstance(c, QuadMesh))


def cell_labels(ax) -> list[str] | None:
    cells = [c for c in ax.collections if c.get_gid() == "cell labels"]
    return cells[0].labels if cells else None


def tick_labels(fig) -> tuple[list[str], list[str]]:
    """The tokens along the x and the y axis (glyph outlines, not Text tick labels)."""
    labels = {c.get_gid(): getattr(c, "labels", None) for c in fig.axes[0].collections}
    return labels["key labels"], labels["query labels"]


def text(fig: Figure, gid: str) -> str:
    return next(t.get_text() for t in fig.texts if t.get_gid() == gid)


def peak(weights) -> float:
    return weights.max(dim=-1).values.mean().item()


# The examples and the computation


def test_worked_example_matches_the_lesson_and_scaled_dot_product_attention(examples):
    weights, hidden = attention_weights(examples[WORKED])
    torch.testing.assert_close(
        weights[0], torch.tensor([0.4555, 0.2246, 0.3199]), atol=1e-4, rtol=0
    )
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    torch.testing.assert_close(weights, scaled_dot_product_attention(q, k, k)[1])
    assert hidden is None


def test_causal_weights_agree_with_scaled_dot_product_attention():
    q, k = torch.randn(2, 5, 4), torch.randn(2, 5, 4)
    example = AttentionExample.from_qk("random", "a b c d e", q, k)
    _, reference = scaled_dot_product_attention(q, k, k, causal_mask(5))  # (H, T, T)
    for h in range(2):
        weights, hidden = attention_weights(example, head=h, causal=True)
        torch.testing.assert_close(weights, reference[h])
        assert torch.equal(hidden, ~causal_mask(5))


def test_temperature_sharpens_below_one_and_flattens_above(examples):
    peaks = [peak(attention_weights(examples[RANDOM], temperature=t)[0]) for t in (0.2, 1, 5)]
    assert peaks[0] > peaks[1] > peaks[2]
    # Without the √d_k division, τ = √64 = 8 gives back the paper's weights.
    torch.testing.assert_close(
        attention_weights(examples[RANDOM], temperature=8.0, scale=False)[0],
        attention_weights(examples[RANDOM])[0],
    )


def test_random_vectors_are_nearly_one_hot_without_the_sqrt_dk_division(examples):
    scaled = peak(attention_weights(examples[RANDOM])[0])
    unscaled = peak(attention_weights(examples[RANDOM], scale=False)[0])
    assert examples[RANDOM].d_k == 64
    assert scaled < 0.5 and unscaled > 0.8


def test_hand_built_heads_look_at_the_previous_word_and_resolve_it(examples):
    example = examples[SENTENCE]
    words = list(example.query_tokens)
    assert len(words) <= 12 and example.n_heads == 2
    previous, _ = attention_weights(example, head=0)
    for i in range(1, len(words)):
        assert previous[i].argmax() == i - 1 and previous[i, i - 1] > 0.5
    coreference, _ = attention_weights(example, head=1)
    it = coreference[words.index("it")]
    assert it.argmax() == words.index("animal") and it.max() > 0.5


def test_cross_attention_example_aligns_french_with_english(examples):
    example = examples[TRANSLATION]
    assert (len(example.query_tokens), len(example.key_tokens)) == (6, 5)
    weights, _ = attention_weights(example)
    source = [example.key_tokens[j] for j in weights.argmax(dim=-1)]
    assert source == ["i", "not", "eat", "not", "apples", "apples"]
    assert weights[:, example.key_tokens.index("do")].max() < 0.1  # no French word for "do"
    assert weights[example.query_tokens.index("pommes")].max() > 0.8


def test_from_weights_round_trips_a_models_weights():
    attention = MultiHeadAttention(d_model=16, n_heads=4).eval()
    x = torch.randn(1, 5, 16)
    _, weights = attention(x, x, x, mask=causal_mask(5), need_weights=True)  # (1, H, T, T)
    example = AttentionExample.from_weights("model", "a b c d e", "a b c d e", weights[0])
    assert example.d_k == 1 and example.n_heads == 4
    for h in range(4):
        shown, hidden = attention_weights(example, head=h)
        torch.testing.assert_close(shown, weights[0, h], atol=1e-6, rtol=0)
        assert torch.equal(hidden, ~causal_mask(5))  # zero weights stay marked as masked
        sharper, _ = attention_weights(example, head=h, temperature=0.5)
        torch.testing.assert_close(sharper.sum(-1), torch.ones(5))
        assert (sharper[hidden] == 0).all() and peak(sharper) > peak(shown)


def test_a_query_with_nothing_to_attend_to_gets_zeros_not_nan():
    example = AttentionExample.from_weights(
        "empty row", "a b", "c d", torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    )
    weights, hidden = attention_weights(example, temperature=0.3)
    assert torch.equal(weights, torch.tensor([[1.0, 0.0], [0.0, 0.0]]))
    assert hidden[1].all() and not hidden[0, 0]
    assert "largest weight per query: 1.00" in text(render_attention(example), "summary")


# Drawing


def test_draw_attention_labels_axes_and_cells_with_contrasting_ink():
    ax = Figure().add_subplot()
    weights = torch.tensor([[1.0, 0.0], [0.25, 0.75]])
    mesh = draw_attention(ax, weights, ["a", "b"], ["c", "d"], title="t")
    np.testing.assert_allclose(np.ma.getdata(mesh.get_array()), weights.numpy())
    assert [t.get_text() for t in ax.get_xticklabels()] == ["c", "d"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("key (attended to)", "query (attending)")
    assert ax.get_ylim() == (1.5, -0.5)  # the first query on top
    assert cell_labels(ax) == ["1.00", "0.00", "0.25", "0.75"]
    cells = next(c for c in ax.collections if c.get_gid() == "cell labels")
    ink = cells.get_facecolors()[:, :3].sum(-1)
    assert ink[0] == 0 and ink[1] == 3  # black on the bright cell, white on the dark one


def test_draw_attention_marks_masked_cells_by_hatch_and_cross():
    ax = Figure().add_subplot()
    masked = np.triu(np.ones((3, 3), bool), k=1)
    mesh = draw_attention(ax, np.full((3, 3), 1 / 3), "a b c", "a b c", masked=masked)
    assert np.array_equal(np.ma.getmaskarray(mesh.get_array()), masked)
    labels = np.array(cell_labels(ax)).reshape(3, 3)
    assert np.array_equal(labels == "×", masked)
    (hatch,) = [p for p in ax.patches if isinstance(p, PathPatch)]
    assert hatch.get_hatch() == "///" and len(hatch.get_path().vertices) == 5 * masked.sum()


def test_draw_attention_annotates_only_small_maps_unless_asked():
    big = np.full((13, 12), 1 / 12)  # 156 cells > 144
    ax = Figure().add_subplot()
    draw_attention(ax, big, list("abcdefghijklm"), list("abcdefghijkl"))
    assert cell_labels(ax) is None
    ax = Figure().add_subplot()
    draw_attention(ax, big, list("abcdefghijklm"), list("abcdefghijkl"), annotate=True)
    assert len(cell_labels(ax)) == 156


def test_render_attention_titles_name_the_head_and_the_formula(examples):
    fig = render_attention(examples[SENTENCE], head=1, temperature=0.5, causal=True)
    assert text(fig, "title").endswith("head 2 of 2")
    assert text(fig, "formula") == ("softmax(QKᵀ / (τ·√d_k)), τ = 0.50, d_k = 11, causal mask on")
    fig = render_attention(examples[WORKED], scale=False)
    assert "head" not in text(fig, "title")
    assert text(fig, "formula") == "softmax(QKᵀ / τ), τ = 1.00, d_k = 2, no √d_k"
    weights, _ = attention_weights(examples[WORKED], scale=False)
    assert f"largest weight per query: {peak(weights):.2f}" in text(fig, "summary")
    assert fig.axes[1].get_ylabel() == "attention weight"  # the colour bar
    assert tick_labels(fig) == (["the", "cat", "sat"], ["the", "cat", "sat"])
    assert (fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()) == (
        "key (attended to)",
        "query (attending)",
    )


def test_refresh_in_place_draws_what_a_new_figure_draws(examples):
    fig = render_attention(examples[SENTENCE], head=1, causal=True)
    weights, hidden = refresh_attention(fig, examples[SENTENCE], 1, 0.3, True, False)
    fresh = render_attention(examples[SENTENCE], head=1, temperature=0.3, causal=True, scale=False)
    torch.testing.assert_close(
        weights, attention_weights(examples[SENTENCE], 1, 0.3, True, False)[0]
    )
    assert torch.equal(hidden, ~causal_mask(11))
    for gid in ("title", "formula", "summary"):
        assert text(fig, gid) == text(fresh, gid)
    assert cell_labels(fig.axes[0]) == cell_labels(fresh.axes[0])
    assert figure_png(fig) == figure_png(fresh)


def test_refresh_lays_the_figure_out_again_for_another_example(examples):
    fig = render_attention(examples[SENTENCE], head=1, causal=True)
    refresh_attention(fig, examples[TRANSLATION], temperature=2.0)
    fresh = render_attention(examples[TRANSLATION], temperature=2.0)
    assert tuple(fig.get_size_inches()) == tuple(fresh.get_size_inches())
    assert heatmap(fig).get_array().shape == (6, 5)
    assert tick_labels(fig) == (
        list(examples[TRANSLATION].key_tokens),
        ["je", "ne", "mange", "pas", "de", "pommes"],
    )
    assert figure_png(fig) == figure_png(fresh)


def test_figure_png_crops_like_savefig_tight_and_falls_back_when_content_sticks_out(examples):
    fig = render_attention(examples[SENTENCE])
    png = figure_png(fig)
    reference = io.BytesIO()
    fig.savefig(reference, format="png", dpi=100, bbox_inches="tight")
    ours, theirs = Image.open(io.BytesIO(png)).size, Image.open(reference).size
    assert (
        png.startswith(PNG_MAGIC)
        and abs(ours[0] - theirs[0]) <= 2
        and abs(ours[1] - theirs[1]) <= 2
    )
    fig = Figure(figsize=(2, 1))  # 200 px wide
    fig.text(-1.0, 0.5, "a label far to the left of the canvas")
    assert Image.open(io.BytesIO(figure_png(fig))).size[0] > 250  # savefig widened it


def test_show_figure_displays_a_png(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    show_figure(Figure(figsize=(1, 1)))
    (image,) = shown
    assert isinstance(image, IPython.display.Image) and image.data.startswith(PNG_MAGIC)


# The explorer


def test_explorer_shows_the_weights_of_the_first_example(explorer, examples):
    expected, _ = attention_weights(examples[WORKED])
    np.testing.assert_allclose(np.ma.getdata(heatmap(explorer.figure).get_array()), expected)
    torch.testing.assert_close(explorer.weights, expected)
    (output,) = explorer.output.outputs
    assert base64.b64decode(output["data"]["image/png"]).startswith(PNG_MAGIC)
    assert explorer.example_select.layout.display != "none"  # three examples to choose from
    assert explorer.head_select.layout.display == "none" and explorer.head_select.disabled


def test_head_selector_changes_the_map_and_the_title(explorer, examples):
    explorer.example_select.value = SENTENCE
    first = np.ma.getdata(heatmap(explorer.figure).get_array()).copy()
    assert text(explorer.figure, "title").endswith("head 1 of 2")
    explorer.head_select.value = 1
    second = np.ma.getdata(heatmap(explorer.figure).get_array())
    assert text(explorer.figure, "title").endswith("head 2 of 2")
    assert not np.allclose(first, second)
    np.testing.assert_allclose(second, attention_weights(examples[SENTENCE], head=1)[0])


def test_going_back_to_a_head_shows_it_with_the_current_settings(explorer, examples):
    explorer.example_select.value = SENTENCE
    explorer.head_select.value = 1
    explorer.temperature.value = 0.5
    explorer.head_select.value = 0
    expected, _ = attention_weights(examples[SENTENCE], head=0, temperature=0.5)
    np.testing.assert_allclose(np.ma.getdata(heatmap(explorer.figure).get_array()), expected)
    assert "τ = 0.50" in text(explorer.figure, "formula")


@pytest.mark.parametrize(
    "example, head, causal, temperature",
    [(SENTENCE, 1, True, 0.5), (TRANSLATION, 0, False, 2.0), (SENTENCE, 0, False, 0.5)],
)
def test_one_figure_redrawn_for_every_setting_shows_what_a_new_figure_shows(
    explorer, examples, example, head, causal, temperature
):
    figure = explorer.figure
    explorer.example_select.value = SENTENCE  # laid out and drawn once before
    explorer.head_select.value, explorer.causal.value = 1 - head, not causal
    explorer.example_select.value = WORKED
    explorer.example_select.value = example
    explorer.head_select.value, explorer.causal.value = head, causal
    explorer.temperature.value = temperature
    assert explorer.figure is figure
    shown = base64.b64decode(explorer.output.outputs[0]["data"]["image/png"])
    new = render_attention(examples[example], head, temperature, causal)
    assert shown == figure_png(new)  # the same pixels: no head, mask or example left over


def test_the_same_tokens_under_a_longer_title_get_a_wider_figure(tmp_path):
    q, k = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    short = AttentionExample.from_qk("short", "a b c", q, k)
    long = AttentionExample.from_qk("the same three tokens under a much longer name", "a b c", q, k)
    explorer = AttentionExplorer([short, long], save_dir=tmp_path)
    width = explorer.figure.get_size_inches()[0]
    explorer.example_select.value = 1
    assert explorer.figure.get_size_inches()[0] > width
    shown = base64.b64decode(explorer.output.outputs[0]["data"]["image/png"])
    assert shown == figure_png(render_attention(long))


def test_causal_checkbox_zeros_and_marks_the_upper_triangle(explorer):
    explorer.example_select.value = SENTENCE
    explorer.causal.value = True
    future = ~causal_mask(11)
    assert (explorer.weights[future] == 0).all()
    assert torch.equal(explorer.hidden, future)
    assert np.array_equal(np.ma.getmaskarray(heatmap(explorer.figure).get_array()), future.numpy())
    assert cell_labels(explorer.figure.axes[0]).count("×") == 55
    assert text(explorer.figure, "formula").endswith("causal mask on")
    (hatch,) = [p for p in explorer.figure.axes[0].patches if p.get_gid() == "masked cells"]
    assert hatch.get_visible() and len(hatch.get_path().vertices) == 5 * 55  # a square each
    explorer.causal.value = False
    assert explorer.hidden is None and (explorer.weights[future] > 0).all()
    assert not hatch.get_visible()


def test_temperature_slider_sharpens_and_flattens(explorer):
    explorer.example_select.value = RANDOM
    peaks = {}
    for t in (0.2, 1.0, 5.0):
        explorer.temperature.value = t
        peaks[t] = peak(explorer.weights)
        assert f"τ = {t:.2f}" in text(explorer.figure, "formula")
    assert peaks[0.2] > peaks[1.0] > peaks[5.0]


def test_scale_checkbox_shows_saturation_without_the_division(explorer, examples):
    explorer.example_select.value = RANDOM
    scaled = peak(explorer.weights)
    explorer.scale.value = False
    torch.testing.assert_close(
        explorer.weights, attention_weights(examples[RANDOM], scale=False)[0]
    )
    assert peak(explorer.weights) > scaled + 0.3
    assert "no √d_k" in text(explorer.figure, "formula")


def test_checkboxes_are_disabled_where_they_mean_nothing(tmp_path):
    given = AttentionExample.from_weights(
        "given", "a b", "a b", torch.tensor([[0.5, 0.5], [0.2, 0.8]])
    )
    wide = AttentionExample.from_qk("wide", "a b", torch.randn(2, 4), torch.randn(3, 4), "x y z")
    explorer = AttentionExplorer([given, wide], save_dir=tmp_path)
    assert explorer.scale.disabled  # d_k = 1: √d_k = 1
    assert not explorer.causal.disabled
    assert text(explorer.figure, "formula") == "softmax(log w / τ), τ = 1.00"
    explorer.causal.value = True
    explorer.example_select.value = 1
    assert explorer.causal.disabled and not explorer.causal.value  # T_q != T_k
    assert not explorer.scale.disabled
    assert explorer.hidden is None


def test_example_buttons_rebuild_the_head_buttons(explorer, examples):
    assert explorer.head_select.options == (("1", 0),)
    explorer.example_select.value = SENTENCE
    assert explorer.head_select.options == (("1", 0), ("2", 1))
    assert explorer.head_select.layout.display is None and not explorer.head_select.disabled
    explorer.head_select.value = 1
    explorer.example_select.value = WORKED
    assert explorer.head_select.options == (("1", 0),) and explorer.head_select.value == 0
    assert text(explorer.figure, "title") == examples[WORKED].name


def test_one_example_hides_the_example_menu(examples, tmp_path):
    explorer = AttentionExplorer(examples[SENTENCE], save_dir=tmp_path)
    assert explorer.example_select.layout.display == "none"
    controls = explorer.widget.children[0].layout  # fixed: never squeezed, never widened
    assert controls.min_width == controls.width == "320px" and controls.flex == "0 0 auto"


def test_save_writes_the_png_on_show(explorer, tmp_path):
    explorer.example_select.value = SENTENCE
    explorer.head_select.value = 1
    explorer.save_button.click()
    path = tmp_path / "attention-two-hand-built-heads-head2.png"
    assert path.read_bytes().startswith(PNG_MAGIC)
    shown = base64.b64decode(explorer.output.outputs[0]["data"]["image/png"])
    assert path.read_bytes() == shown
    assert path.name in explorer.status.value


def test_save_reports_a_failure_in_the_status(examples, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    explorer = AttentionExplorer(examples[WORKED], save_dir=blocker)
    assert explorer.save() is None
    assert "could not save" in explorer.status.value


# Errors name the argument


def _square(n=2):
    return torch.full((1, n, n), 0.0)


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: AttentionExample(3, "a b", "a b", _square(), 4), TypeError, "name"),
        (lambda: AttentionExample(" ", "a b", "a b", _square(), 4), ValueError, "name"),
        (lambda: AttentionExample("x", "a b", "a b c", _square(), 4), ValueError, "key_tokens"),
        (lambda: AttentionExample("x", "a", "a b", _square(), 4), ValueError, "query_tokens"),
        (lambda: AttentionExample("x", "a b", "a b", torch.zeros(2, 2), 4), ValueError, "scores"),
        (
            lambda: AttentionExample("x", "a", "a", torch.zeros(1, 1, 1, dtype=torch.long), 4),
            TypeError,
            "scores",
        ),
        (
            lambda: AttentionExample("x", "a", "a", torch.full((1, 1, 1), float("nan")), 4),
            ValueError,
            "scores",
        ),
        (lambda: AttentionExample("x", "a b", "a b", _square(), 0), ValueError, "d_k"),
        (
            lambda: AttentionExample.from_qk("x", "a b", torch.zeros(2, 4), torch.zeros(2, 3)),
            ValueError,
            "d_k",
        ),
        (
            lambda: AttentionExample.from_qk("x", "a b c", torch.zeros(2, 4), torch.zeros(2, 4)),
            ValueError,
            "tokens",
        ),
        (
            lambda: AttentionExample.from_qk(
                "x", "a b", torch.zeros(2, 2, 4), torch.zeros(3, 2, 4)
            ),
            ValueError,
            "heads",
        ),
        (lambda: AttentionExample.from_qk("x", "a b", [[1.0]], torch.zeros(2, 4)), TypeError, "q"),
        (
            lambda: AttentionExample.from_weights("x", "a", "a b", torch.tensor([[0.5, 0.6]])),
            ValueError,
            "sum to 1",
        ),
        (
            lambda: AttentionExample.from_weights("x", "a", "a b", torch.tensor([[1.5, -0.5]])),
            ValueError,
            ">= 0",
        ),
        (
            lambda: AttentionExample.from_weights("x", "a", "a", torch.ones(1, 1, 1, 1)),
            ValueError,
            "weights[0]",
        ),
        (lambda: attention_weights("example"), TypeError, "example"),
        (lambda: attention_weights(lesson3_examples()[0], head=1), ValueError, "head"),
        (lambda: attention_weights(lesson3_examples()[0], head=0.0), TypeError, "head"),
        (
            lambda: attention_weights(lesson3_examples()[0], temperature=0),
            ValueError,
            "temperature",
        ),
        (
            lambda: attention_weights(lesson3_examples()[0], temperature="1"),
            TypeError,
            "temperature",
        ),
        (
            lambda: draw_attention(Figure().add_subplot(), np.ones(3), "a", "a b c"),
            ValueError,
            "weights",
        ),
        (
            lambda: draw_attention(Figure().add_subplot(), np.ones((1, 2)), "a b", "a b"),
            ValueError,
            "query_tokens",
        ),
        (
            lambda: draw_attention(
                Figure().add_subplot(), np.ones((1, 2)), "a", "a b", masked=np.ones((2, 1))
            ),
            ValueError,
            "masked",
        ),
        (lambda: AttentionExplorer([]), ValueError, "examples"),
        (lambda: AttentionExplorer(["x"]), TypeError, "examples[0]"),
    ],
)
def test_bad_inputs_raise_errors_that_name_the_argument(call, error, words):
    with pytest.raises(error, match=None) as caught:
        call()
    assert words in str(caught.value)


def test_causal_mask_needs_as_many_queries_as_keys():
    wide = AttentionExample.from_qk("wide", "a b", torch.randn(2, 4), torch.randn(3, 4), "x y z")
    with pytest.raises(
        ValueError, match="causal=True needs T_q == T_k; 'wide' has T_q = 2, T_k = 3"
    ):
        attention_weights(wide, causal=True)


def test_importing_the_widgets_loads_neither_ipywidgets_nor_pyplot():
    code = (
        "import sys, course_lib.widgets; "
        "print('ipywidgets' in sys.modules, 'matplotlib.pyplot' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]


# Tick labels drawn as glyph outlines (one collection) stand where matplotlib puts Text ones.


def _ink_box(fig, region) -> np.ndarray:
    """(left, top, right, bottom) in pixels of what is drawn dark in ``region`` (rows, cols)."""
    fig.canvas.draw()
    dark = (np.asarray(fig.canvas.buffer_rgba())[region][..., :3] < 128).any(axis=-1)
    rows, cols = np.flatnonzero(dark.any(axis=1)), np.flatnonzero(dark.any(axis=0))
    return np.array([cols[0], rows[0], cols[-1], rows[-1]])


@pytest.mark.parametrize(
    "which, tokens, text_style, placement",
    [
        ("x", ["0", "50", "100"], {}, {"va": "top"}),
        ("y", ["0.5", "10", "250"], {}, {"ha": "right", "va": "center_baseline"}),
        (
            "x",
            ["the", "animal", "because"],
            {"rotation": 45, "ha": "right", "rotation_mode": "anchor"},
            {"ha": "right", "va": "top", "rotation": 45},
        ),
    ],
)
def test_outlined_labels_stand_where_matplotlib_puts_text_tick_labels(
    which, tokens, text_style, placement
):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from course_lib.widgets._display import set_texts, text_collection

    def figure(outlined: bool):
        fig = Figure(figsize=(3, 3), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0.35, 0.35, 0.6, 0.6))
        ax.set(xlim=(-0.5, 2.5), ylim=(-0.5, 2.5))
        set_ticks = ax.set_xticks if which == "x" else ax.set_yticks
        set_ticks(range(3), tokens, **text_style)
        own, other = ("labelbottom", "labelleft") if which == "x" else ("labelleft", "labelbottom")
        ax.tick_params(length=0, **{own: not outlined, other: False})
        if outlined:
            transform = ax.get_xaxis_transform() if which == "x" else ax.get_yaxis_transform()
            at = [(i, 0) if which == "x" else (0, i) for i in range(3)]
            labels = text_collection(ax, at, gid="labels", offset_transform=transform)
            labels.set_clip_on(False)
            pad = 3.5  # matplotlib's tick label pad, in points
            shift = (0.0, -pad) if which == "x" else (-pad, 0.0)
            set_texts(labels, tokens, "black", [10.0] * 3, shift=shift, **placement)
        return fig

    # below the axes for x labels, left of them for y labels
    region = (
        np.s_[198:, :] if which == "x" else np.s_[:, :102]
    )  # the axes: rows 15..195, cols 105..
    text, outline = _ink_box(figure(False), region), _ink_box(figure(True), region)
    assert np.abs(text - outline).max() <= 2, f"Text labels at {text}, outlines at {outline}"


def test_the_ascent_of_the_default_font_is_the_same_in_every_matplotlib_version():
    """DejaVu Sans: 1556 of its 2048 units per em, both the typographic ascender that
    matplotlib 3.11 lays text out from and the top of "l" that earlier versions measure."""
    from course_lib.widgets._display import _ascent

    assert _ascent() == 1556 / 2048


# The text alternative: computed from the weights drawn


def _strongest_in_words(example, **settings) -> list[str]:
    """ "query → key 0.72" for each row whose largest weight (to 2 decimals) is unique."""
    weights, _ = attention_weights(example, **settings)
    rows = []
    for query, row in zip(example.query_tokens, weights.tolist(), strict=True):
        rounded = [round(w, 2) for w in row]
        top = max(rounded)
        if rounded.count(top) == 1:
            rows.append(f"{query} → {example.key_tokens[rounded.index(top)]} {top:.2f}")
    return rows


@pytest.mark.parametrize(
    "which, settings",
    [
        (WORKED, {}),
        (RANDOM, {"scale": False}),
        (SENTENCE, {"head": 1, "temperature": 0.5}),
        (SENTENCE, {"head": 0, "causal": True}),
        (TRANSLATION, {"temperature": 2.0}),
    ],
)
def test_the_description_names_each_querys_strongest_key_and_the_settings(
    examples, which, settings
):
    example = examples[which]
    text = describe_attention_map(example, **settings)
    described = _strongest_in_words(example, **settings)[:8]  # the first 8 queries
    assert described and all(row in text for row in described)
    head = settings.get("head", 0)
    assert f"head {head + 1} of 2" in text if example.n_heads == 2 else "head" not in text
    assert f"τ = {settings.get('temperature', 1.0):.2f}" in text
    assert ("no √d_k" in text) == (settings.get("scale") is False)
    assert ("causal mask on" in text) == settings.get("causal", False)
    T_q, T_k = example.scores.shape[1:]
    assert f"{T_q} queries (rows) by {T_k} keys (columns)" in text


def test_the_description_counts_the_queries_it_leaves_out_and_says_when_weights_tie(examples):
    text = describe_attention_map(examples[SENTENCE], head=1)  # 11 queries; "the" asks for nothing
    assert text.count(" → ") == 8 and text.endswith("and 3 more queries.")
    assert "the → spread evenly over all 11 visible keys, 0.09 each" in text
    masked = describe_attention_map(examples[WORKED], causal=True)
    assert "the → the 1.00" in masked  # only itself is visible to the first query
    assert "sat → spread evenly over all 3 visible keys, 0.33 each" in masked


def test_a_query_that_sees_no_key_is_described_as_such():
    example = AttentionExample(
        "blind", "a b", "x y", torch.tensor([[[0.0, 1.0], [-math.inf] * 2]]), 1
    )
    assert "b → no key visible" in describe_attention_map(example)


def test_the_explorer_gives_its_picture_the_description_as_alt_text(explorer, examples):
    explorer.example_select.value = SENTENCE
    explorer.head_select.value, explorer.temperature.value = 1, 0.5
    expected = describe_attention_map(examples[SENTENCE], head=1, temperature=0.5)
    (output,) = explorer.output.outputs
    assert output["data"]["text/plain"] == explorer.text == expected
    assert f'alt="{html.escape(expected, quote=True)}"' in output["data"]["text/html"]


@pytest.mark.parametrize(
    "alt, error", [(None, TypeError), (b"bytes", TypeError), ("", ValueError), (" \n", ValueError)]
)
def test_image_bundle_refuses_an_alt_that_is_not_a_description(alt, error):
    with pytest.raises(error, match="^alt must"):
        image_bundle(b"\x89PNG", alt)
    assert image_bundle(b"\x89PNG", "a dot")["text/plain"] == "a dot"


# Many examples named by parts: one row of buttons per part


def _faceted(parts=(("s1", "s2"), ("enc", "dec"), ("layer 1", "layer 2")), skip=()):
    examples = []
    for i, name in enumerate(itertools.product(*parts)):
        if name not in skip:
            scores = torch.full((1 + i % 2, 2, 2), float(i))
            examples.append(AttentionExample(" · ".join(name), "a b", "a b", scores, 1))
    return examples


def test_facets_give_one_row_of_buttons_per_part_of_the_names(tmp_path):
    examples = _faceted()
    explorer = AttentionExplorer(
        examples,
        facets=("sentence", "attention", "layer"),
        example="s2 · enc · layer 2",
        save_dir=tmp_path,
    )
    assert explorer.example_select is None
    assert [s.options for s in explorer.facet_selects] == [
        ("s1", "s2"),
        ("enc", "dec"),
        ("layer 1", "layer 2"),
    ]
    assert "course-facet-sentence" in explorer.facet_selects[0]._dom_classes
    assert explorer.example_index == 5 and text(explorer.figure, "title").startswith(
        "s2 · enc · layer 2"
    )
    explorer.facet_selects[1].value = "dec"  # the other parts stay
    assert explorer.example_index == 7 and examples[7].name == "s2 · dec · layer 2"
    explorer.example_index = 0
    assert [s.value for s in explorer.facet_selects] == ["s1", "enc", "layer 1"]
    assert explorer.text.startswith("Attention map of s1 · enc · layer 1")


def test_a_missing_combination_moves_the_other_parts_to_the_nearest_example(tmp_path):
    examples = _faceted(skip={("s2", "dec", "layer 1")})
    explorer = AttentionExplorer(examples, facets=("s", "kind", "layer"), save_dir=tmp_path)
    explorer.facet_selects[2].value = "layer 1"  # s1 · enc · layer 1 already
    explorer.facet_selects[1].value = "dec"
    explorer.facet_selects[0].value = "s2"  # s2 · dec · layer 1 does not exist
    assert examples[explorer.example_index].name == "s2 · dec · layer 2"
    assert explorer.facet_selects[2].value == "layer 2"


def test_a_part_with_one_value_is_hidden(tmp_path):
    examples = _faceted(parts=(("s1", "s2"), ("enc",)))
    explorer = AttentionExplorer(examples, facets=("s", "kind"), save_dir=tmp_path)
    assert [s.layout.display for s in explorer.facet_selects] == [None, "none"]


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"facets": ("a", "b")}, ValueError, "need names of 2 parts"),
        ({"facets": "sentence"}, TypeError, "facets must be a list"),
        ({"example": "nope"}, ValueError, "example must be the name"),
        ({"example": 9}, ValueError, "example must be in 0..7"),
        ({"example": 1.0}, TypeError, "example must be an int"),
    ],
)
def test_bad_facets_and_starting_examples_are_named(kwargs, error, words):
    with pytest.raises(error, match=words):
        AttentionExplorer(_faceted(), **kwargs)


def test_repeated_names_cannot_be_told_apart_by_facets():
    examples = _faceted()
    with pytest.raises(ValueError, match=r"examples\[1\].name 's1 · enc · layer 1' repeats"):
        AttentionExplorer([examples[0], examples[0]], facets=("a", "b", "c"))
