"""The two-vector explorer of lesson 2, without a browser or a kernel.

The numbers and the drawing are plain functions; setting a slider's ``.value`` calls the
explorer's observer synchronously, so each test moves a slider and inspects what was drawn.
"""

import base64
import math

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from course_lib.widgets.vectors import (
    COLOURS,
    VectorExplorer,
    VectorPair,
    describe_vectors,
    polar,
    readout,
    refresh_vectors,
    render_vectors,
    vector_pair,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CAT, DOG = (1.0, 0.5), (0.9, 0.6)


def parts(fig: Figure) -> dict:
    return {a.get_gid(): a for a in fig.axes[0].get_children() if a.get_gid()}


def text(fig: Figure, gid: str) -> str:
    return next(t.get_text() for t in fig.texts if t.get_gid() == gid)


def pair_of(a, b) -> VectorPair:
    return VectorPair(np.array(a, float), np.array(b, float))


# The numbers


def test_the_worked_example_cat_and_dog():
    pair = pair_of(CAT, DOG)
    assert pair.dot == pytest.approx(1.20)
    assert pair.cosine == pytest.approx(0.992, abs=5e-4)
    assert pair.norms == pytest.approx((1.118, 1.082), abs=5e-4)
    expected = torch.nn.functional.cosine_similarity(torch.tensor(CAT), torch.tensor(DOG), dim=0)
    assert pair.cosine == pytest.approx(expected.item(), abs=1e-6)


@pytest.mark.parametrize(
    "angle_b, dot, angle, words",
    [
        (30, 2.0, 0.0, "point the same way: agree"),
        (120, 0.0, 90.0, "are nearly perpendicular: unrelated"),
        (-150, -2.0, 180.0, "point opposite ways: disagree"),
    ],
)
def test_sign_and_size_follow_the_angle(angle_b, dot, angle, words):
    pair = vector_pair(30, 1.0, angle_b, 2.0)
    assert pair.dot == pytest.approx(dot, abs=1e-9)
    assert pair.angle == pytest.approx(angle, abs=1e-6)
    assert pair.relation == words


def test_the_dot_product_is_the_sum_of_products_and_lengths_times_cosine():
    pair = vector_pair(200, 1.7, -35, 0.6)
    assert pair.dot == pytest.approx(float(pair.a @ pair.b))
    assert pair.dot == pytest.approx(1.7 * 0.6 * math.cos(math.radians(235)))
    assert pair.angle == pytest.approx(125.0)  # the short way round, never more than 180°


def test_polar_gives_the_slider_settings_back():
    angle, length = polar(CAT)
    again = vector_pair(angle, length, 0, 1)
    np.testing.assert_allclose(again.a, CAT)
    assert polar((0, -2)) == pytest.approx((-90.0, 2.0))


def test_the_readout_states_the_numbers_in_words():
    line = readout(pair_of(CAT, DOG), ("cat", "dog"))
    assert line == (
        "cat·dog = 1.20 = |cat| |dog| cos θ = 1.12 × 1.08 × 0.992; "
        "cos θ = 0.992, θ = 7.1°, so they point the same way: agree."
    )


def test_a_tiny_negative_number_is_not_shown_as_minus_zero():
    pair = vector_pair(26.565, 1.118, 116.6, 1.082)  # a·b = -0.0007: the sliders' 90°
    assert -0.005 < pair.dot < 0
    assert readout(pair).startswith("a·b = 0.00 = ")
    assert text(render_vectors(pair), "title").startswith("a·b = 0.00,")


# The drawing


@pytest.mark.parametrize(
    "angle_a, length_a, angle_b, length_b", [(30, 1.5, 120, 0.5), (-90, 2, 170, 1)]
)
def test_the_description_gives_each_arrow_and_the_readout(angle_a, length_a, angle_b, length_b):
    pair = vector_pair(angle_a, length_a, angle_b, length_b)
    text = describe_vectors(pair, ("q", "k"))
    assert f"q (direction {angle_a:.1f}°, length {length_a:.2f})" in text
    assert f"k (direction {angle_b:.1f}°, length {length_b:.2f})" in text
    assert text.endswith(readout(pair, ("q", "k")))
    dot = length_a * length_b * math.cos(math.radians(angle_b - angle_a))
    assert f"q·k = {round(dot, 2) + 0.0:.2f}" in text


def test_the_figure_is_titled_labelled_square_and_colour_blind_safe():
    fig = render_vectors(pair_of(CAT, DOG), ("cat", "dog"))
    ax = fig.axes[0]
    assert text(fig, "title") == "cat·dog = 1.20,  cos θ = 0.992,  θ = 7.1°"
    assert text(fig, "subtitle") == "|cat| = 1.12, |dog| = 1.08: they agree"
    assert ax.get_xlabel() and ax.get_ylabel()
    assert ax.get_aspect() == 1.0  # equal: angles on screen are the real angles
    p = parts(fig)
    assert [p[f"label {i}"].get_text() for i in (0, 1)] == ["cat", "dog"]
    assert p["arrow 0"].arrow_patch.get_linestyle() != p["arrow 1"].arrow_patch.get_linestyle()
    assert COLOURS == ("#006BA4", "#C85200")  # tableau-colorblind10, not red against green


def test_the_arrows_end_at_the_vectors_and_the_arc_spans_the_angle():
    pair = vector_pair(170, 1.5, -100, 1.0)  # the short way round crosses 180°
    p = parts(render_vectors(pair))
    np.testing.assert_allclose(p["arrow 0"].xy, pair.a)
    np.testing.assert_allclose(p["arrow 1"].xy, pair.b)
    arc = p["arc"]
    assert arc.theta1 == pytest.approx(170.0)
    assert arc.theta2 - arc.theta1 == pytest.approx(pair.angle) == pytest.approx(90.0)


def _distance_to_arrow(point, tip) -> float:
    """Distance from ``point`` to the segment from the origin to ``tip``."""
    point, tip = np.asarray(point), np.asarray(tip)
    t = np.clip(point @ tip / (tip @ tip), 0.0, 1.0)
    return float(np.linalg.norm(point - t * tip))


@pytest.mark.parametrize(
    "settings", [(26.6, 1.12, 33.7, 1.08), (20, 2.0, 25, 2.0), (0, 1.0, 15, 1.0), (0, 1.0, 90, 1.0)]
)
def test_theta_sits_clear_of_both_arrows(settings):
    pair = vector_pair(*settings)  # the first is the lesson's cat and dog, 7° apart
    theta = np.array(parts(render_vectors(pair))["theta"].get_position())
    for tip in (pair.a, pair.b):
        assert _distance_to_arrow(theta, tip) > 0.15, f"θ at {theta} sits on the arrow to {tip}"


def test_the_shadow_of_b_on_a_has_length_dot_over_length_of_a():
    pair = vector_pair(0, 2.0, 60, 1.0)
    p = parts(render_vectors(pair))
    x, y = p["shadow"].get_data()
    assert (x[1], y[1]) == pytest.approx((0.5, 0.0))  # |b| cos 60° along a
    assert math.hypot(x[1], y[1]) * 2.0 == pytest.approx(pair.dot)


def test_refresh_in_place_draws_what_a_new_figure_draws():
    from course_lib.widgets import figure_png

    fig = render_vectors(pair_of(CAT, DOG))
    target = vector_pair(-120, 1.8, 75, 0.4)
    refresh_vectors(fig, target)
    fresh = render_vectors(target)
    for gid in ("title", "subtitle"):
        assert text(fig, gid) == text(fresh, gid)
    assert figure_png(fig) == figure_png(fresh)


# The explorer


@pytest.fixture
def explorer():
    return VectorExplorer(CAT, DOG, names=("cat", "dog"))


def test_the_explorer_starts_on_the_given_vectors(explorer):
    np.testing.assert_allclose(explorer.pair.a, CAT, atol=1e-12)
    np.testing.assert_allclose(explorer.pair.b, DOG, atol=1e-12)
    assert explorer.text.startswith("cat·dog = 1.20")
    assert "cat·dog = 1.20" in explorer.readout_label.value
    (output,) = explorer.output.outputs
    assert base64.b64decode(output["data"]["image/png"]).startswith(PNG_MAGIC)
    assert (
        output["data"]["text/plain"]
        == explorer.alt
        == describe_vectors(explorer.pair, ("cat", "dog"))
    )


def test_moving_a_slider_redraws_the_same_figure_with_new_numbers(explorer):
    figure, png = explorer.figure, explorer.output.outputs[0]["data"]["image/png"]
    explorer.angle_b.value = explorer.angle_a.value + 90
    assert explorer.figure is figure
    assert explorer.pair.dot == pytest.approx(0, abs=1e-9)
    assert "θ = 90.0°" in text(figure, "title") and "unrelated" in explorer.readout_label.value
    assert explorer.output.outputs[0]["data"]["image/png"] != png
    explorer.angle_b.value = explorer.angle_a.value - 180
    explorer.length_a.value, explorer.length_b.value = 2.0, 1.5
    assert explorer.pair.dot == pytest.approx(-3.0)
    assert "disagree" in explorer.text and "cos θ = -1.000" in explorer.text


def test_the_picture_shown_is_what_a_new_figure_draws(explorer):
    """The explorer draws the axes once and the moving parts over them: nothing goes missing."""
    from course_lib.widgets import figure_png

    for angle, length in ((140, 0.4), (-60, 1.9), (33, 1.08)):
        explorer.angle_b.value, explorer.length_a.value = angle, length
        shown = base64.b64decode(explorer.output.outputs[0]["data"]["image/png"])
        assert shown == figure_png(render_vectors(explorer.pair, ("cat", "dog")))


def test_the_readout_escapes_html():
    explorer = VectorExplorer(names=("<q>", "k"))
    assert "&lt;q&gt;" in explorer.readout_label.value and "<q>·k" in explorer.text


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: vector_pair("30", 1, 0, 1), TypeError, "angle_a"),
        (lambda: vector_pair(30, 0, 0, 1), ValueError, "length_a"),
        (lambda: vector_pair(30, 1, 0, 5), ValueError, "length_b must be between"),
        (lambda: vector_pair(30, 1, True, 1), TypeError, "angle_b"),
        (lambda: VectorExplorer(names=("a",)), ValueError, "names"),
    ],
)
def test_bad_inputs_raise_errors_that_name_the_argument(call, error, words):
    with pytest.raises(error) as caught:
        call()
    assert words in str(caught.value)


def test_starting_lengths_outside_the_sliders_are_clipped_to_them():
    explorer = VectorExplorer((3.0, 0.0), (0.0, 0.01))
    assert (explorer.length_a.value, explorer.length_b.value) == (2.0, 0.1)
    assert explorer.pair.norms == pytest.approx((2.0, 0.1))
    assert explorer.text.endswith("they are nearly perpendicular: unrelated.")
    assert text(explorer.figure, "subtitle").endswith(": they are unrelated")


def test_every_setting_fits_the_canvas_so_a_redraw_draws_once(explorer, monkeypatch):
    """figure_png falls back to savefig (three draws) when ink nears the canvas edge."""

    def savefig(*args, **kwargs):
        raise AssertionError("the picture reached the canvas edge")

    monkeypatch.setattr(Figure, "savefig", savefig)
    for length_a in (0.1, 2.0):
        explorer.length_a.value = length_a
        for angle in range(-180, 181, 30):
            explorer.angle_b.value = angle
            explorer.length_b.value = 2.0 if angle % 60 else 0.1
