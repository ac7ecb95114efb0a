"""The deep-stack explorer of lesson 6, without a browser or a kernel.

The profiles are checked against what residuals and LayerNorm must do; the widget is driven by
setting its controls' values, which calls the observers synchronously.
"""

import base64
import io

import numpy as np
import pytest
import torch
from PIL import Image

from course_lib.layers import PositionwiseFeedForward
from course_lib.widgets import deep_stack
from course_lib.widgets.deep_stack import (
    GRADIENT_RANGE,
    MAX_DEPTH,
    DeepStackExplorer,
    describe_stack,
    refresh_stack,
    render_stack,
    stack_png,
    stack_profile,
)


@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("norm", ["none", "post", "pre"])
def test_a_profile_has_one_rms_per_layer_plus_the_input_and_one_gradient_per_layer(residual, norm):
    p = stack_profile(7, residual, norm)
    assert p.activation_rms.shape == (8,) and p.grad_norm.shape == (7,)
    assert np.isfinite(p.activation_rms).all() and np.isfinite(p.grad_norm).all()
    assert abs(p.activation_rms[0] - 1) < 0.1  # unit-variance input


def test_post_norm_outputs_have_rms_1_at_every_layer():
    p = stack_profile(20, True, "post")
    np.testing.assert_allclose(p.activation_rms[1:], 1.0, atol=1e-3)
    np.testing.assert_allclose(stack_profile(20, False, "post").activation_rms[1:], 1.0, atol=1e-3)


def test_without_residual_or_norm_the_signal_fades_and_the_gradient_vanishes():
    plain, residual = stack_profile(24, False, "none"), stack_profile(24, True, "none")
    assert plain.activation_rms[-1] < 0.1
    assert plain.grad_norm[0] < 1e-6 * plain.grad_norm[-1]
    assert 0.1 < residual.grad_norm[0] / residual.grad_norm[-1] < 10


def test_the_pre_norm_stream_grows_with_depth():
    rms = stack_profile(MAX_DEPTH, True, "pre").activation_rms
    assert rms[-1] > 1.5 * rms[1] and (np.diff(rms[1:]) > 0).mean() > 0.8  # mostly rising


def test_depths_share_weights_so_a_shallow_stack_is_the_start_of_a_deep_one():
    short, deep = stack_profile(5, True, "post"), stack_profile(30, True, "post")
    np.testing.assert_allclose(short.activation_rms, deep.activation_rms[:6])


def test_the_profile_matches_a_stack_written_out_by_hand():
    """Rebuild 3 pre-norm layers with the same seed and compare the gradient norms."""
    p = stack_profile(3, True, "pre", seed=4)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(4)
        ffns = [PositionwiseFeedForward(64, 256) for _ in range(MAX_DEPTH)][:3]
    g = torch.Generator().manual_seed(5)
    x, readout = torch.randn(64, 64, generator=g), torch.randn(64, 64, generator=g)
    h = x
    for ffn in ffns:
        h = h + ffn(torch.nn.functional.layer_norm(h, (64,)))
    (h * readout).sum().backward()
    expected = [torch.cat([q.grad.flatten() for q in f.parameters()]).norm().item() for f in ffns]
    np.testing.assert_allclose(p.grad_norm, expected, rtol=1e-4)
    assert abs(p.activation_rms[-1] - h.pow(2).mean().sqrt().item()) < 1e-5


def test_the_callers_random_state_is_left_alone():
    stack_profile.cache_clear()
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    stack_profile(2, True, "none", seed=9)
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize(
    "args, message",
    [
        ((0, True, "post"), "depth must be an int from 1 to 48; got 0"),
        ((49, True, "post"), "got 49"),
        ((2.0, True, "post"), "got 2.0"),
        ((3, True, "middle"), "norm must be one of ('none', 'post', 'pre'); got 'middle'"),
    ],
)
def test_bad_arguments_are_named(args, message):
    with pytest.raises(ValueError) as error:
        stack_profile(*args)
    assert message in str(error.value)


@pytest.mark.parametrize(
    "residual, norm, label",
    [
        (True, "post", "LN(x + F(x))"),
        (True, "pre", "x + F(LN(x))"),
        (True, "none", "x + F(x)"),
        (False, "post", "LN(F(x))"),
        (False, "pre", "F(LN(x))"),
        (False, "none", "F(x)"),
    ],
)
def test_labels_spell_out_the_wrapping(residual, norm, label):
    assert stack_profile(4, residual, norm).label == label


def test_the_figure_is_titled_and_labelled_and_draws_the_profile():
    p = stack_profile(12, True, "pre")
    fig = render_stack(p)
    left, right = fig.axes
    np.testing.assert_allclose(left.lines[0].get_ydata(), p.activation_rms)
    np.testing.assert_allclose(right.lines[0].get_ydata(), p.grad_norm)
    assert all(ax.get_title() and ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
    assert fig.texts[0].get_text() == "12 layers, each x → x + F(LN(x))"
    assert left.get_yscale() == right.get_yscale() == "log"


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def test_vanished_gradients_are_drawn_on_the_floor_not_dropped():
    p = stack_profile(MAX_DEPTH, False, "none")
    fig = render_stack(p)
    curve, floor = fig.axes[1].lines
    vanished = int((p.grad_norm < GRADIENT_RANGE[0]).sum())
    assert vanished > 10  # the plain stack's first layers get (almost) nothing
    assert len(floor.get_xdata()) == vanished and len(curve.get_xdata()) == MAX_DEPTH - vanished
    assert (np.asarray(floor.get_ydata()) > GRADIENT_RANGE[0]).all()  # inside the axes
    assert floor.get_label() == "below 1e-8"


def test_the_png_shows_the_curves_and_changes_with_the_profile():
    fig = render_stack(stack_profile(12, True, "post"))
    first = _pixels(stack_png(fig))
    assert first.shape == (360, 900, 3)
    render_again = _pixels(stack_png(render_stack(stack_profile(12, True, "post"))))
    np.testing.assert_array_equal(first, render_again)  # deterministic
    refresh_stack(fig, stack_profile(40, True, "pre"))
    changed = (np.abs(_pixels(stack_png(fig)) - first).sum(axis=2) > 0).mean()
    assert 0.001 < changed < 0.2  # the curves and titles moved; the axes did not


def _shown(explorer):
    (output,) = explorer.output.outputs
    return output["data"]


def test_moving_a_control_redraws_in_place_and_shows_a_png():
    explorer = DeepStackExplorer(depth=12)
    figure = explorer.figure
    first = _shown(explorer)["image/png"]
    explorer.depth.value = 30
    assert explorer.figure is figure  # redrawn in place, not rebuilt
    assert explorer.profile.depth == 30 and len(figure.axes[1].lines[0].get_xdata()) == 30
    assert _shown(explorer)["text/plain"] == _described(30, True, "post") == explorer.text
    png = _shown(explorer)["image/png"]
    assert png != first
    assert Image.open(io.BytesIO(base64.b64decode(png))).format == "PNG"


def _described(depth, residual, norm) -> str:
    shown, other = stack_profile(depth, residual, norm), stack_profile(depth, not residual, norm)
    return describe_stack(shown, other)


def test_a_redraw_computes_each_profile_once(monkeypatch):
    explorer = DeepStackExplorer(depth=12)
    calls = []

    def counting(*args, **kwargs):
        calls.append(args)
        return stack_profile(*args, **kwargs)

    monkeypatch.setattr(deep_stack, "stack_profile", counting)
    explorer.depth.value = 20
    assert sorted(calls) == [(20, False, "post", 0), (20, True, "post", 0)]


def test_the_description_refuses_a_second_profile_that_is_not_the_other_wrapping():
    with pytest.raises(ValueError, match=r"other must have \(depth, residual, norm\)"):
        describe_stack(stack_profile(8, True, "post"), stack_profile(8, True, "post"))
    with pytest.raises(ValueError, match=r"= \(8, False, 'pre'\).*got \(8, False, 'post'\)"):
        describe_stack(stack_profile(8, True, "pre"), stack_profile(8, False, "post"))


@pytest.mark.parametrize("residual", [True, False])
@pytest.mark.parametrize("norm", ["none", "pre"])
def test_the_description_follows_the_scale_with_and_without_the_residual_path(residual, norm):
    text = _described(24, residual, norm)
    for r in (residual, not residual):
        rms = stack_profile(24, r, norm).activation_rms
        verb = (
            "grows" if rms[-1] > 1.25 * rms[0] else "fades" if rms[-1] < 0.8 * rms[0] else "stays"
        )
        assert f"{rms[0]:.2f} at the input, {rms[-1]:.2f} after layer 24 ({verb}" in text
    assert text.startswith(f"24 layers, each x → {stack_profile(24, residual, norm).label} ")
    assert f"With the residual path {'off' if residual else 'on'}" in text


def test_the_description_counts_vanished_gradients():
    grads = stack_profile(48, False, "none").grad_norm
    assert (grads < 1e-8).sum() > 0  # the plain stack loses its first layers' gradients
    vanished = f"; {(grads < 1e-8).sum()} of 48 below 1e-8 (▼, vanished)."
    assert vanished in _described(48, False, "none")
    assert "vanished" not in _described(48, True, "post")


def test_the_switches_change_the_wrapping():
    explorer = DeepStackExplorer(depth=8)
    explorer.residual.value = False
    explorer.norm.value = "none"
    assert explorer.norm.options[0] == ("no LayerNorm", "none")  # buttons, not a menu
    assert explorer.profile.label == "F(x)"
    assert explorer.profile.grad_norm[0] < explorer.profile.grad_norm[-1]
    explorer.norm.value = "pre"
    assert explorer.figure.texts[0].get_text() == "8 layers, each x → F(LN(x))"
    np.testing.assert_allclose(
        explorer.figure.axes[0].lines[0].get_ydata(), stack_profile(8, False, "pre").activation_rms
    )


def test_the_legend_sits_below_the_gradient_panel_where_no_curve_can_run_under_it():
    fig = render_stack(stack_profile(12, False, "none"))  # this curve crosses mid-panel
    stack_png(fig)  # draws, so that the extents are known
    right = fig.axes[1]
    legend = right.get_legend().get_window_extent()
    panel = right.get_window_extent()
    assert legend.y1 < panel.y0  # under the axes, not inside them
    assert legend.y0 >= 0 and legend.x1 <= fig.bbox.x1  # and not clipped by the figure


def test_one_layer_is_singular_in_the_title():
    fig = render_stack(stack_profile(1, True, "post"))
    assert fig.texts[0].get_text() == "1 layer, each x → LN(x + F(x))"
