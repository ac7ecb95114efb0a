"""A deep stack of FFN sub-layers: what residuals and LayerNorm do to signals and gradients.

Every layer is one position-wise FFN (lesson 6) with PyTorch's default initialisation, wrapped
in one of six ways: with or without the residual path, and with no LayerNorm, a LayerNorm after
the sub-layer (post-norm) or before it (pre-norm)::

    residual, post:  LN(x + F(x))      no residual, post:  LN(F(x))
    residual, pre:   x + F(LN(x))      no residual, pre:   F(LN(x))
    residual, none:  x + F(x)          no residual, none:  F(x)

A random linear read-out of the last layer's output is the loss. :func:`stack_profile` returns
the RMS of the activations after every layer and the gradient norm of every layer's weights;
:class:`DeepStackExplorer` draws them with a depth slider and the two switches.
"""

import functools
import io
from dataclasses import dataclass

import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
from PIL import Image as PILImage
from torch import nn

from ..figure_text import number
from ..layers import PositionwiseFeedForward
from ._display import collect_garbage_now, png_output, status_html
from ._explorer import Explorer
from .static_export import widget_control

NORMS = ("none", "post", "pre")
MAX_DEPTH = 48


@dataclass(frozen=True)
class StackProfile:
    """``activation_rms[l]``: RMS after layer l (index 0 is the input).

    ``grad_norm[l - 1]``: the gradient norm of layer l's weights.
    """

    depth: int
    residual: bool
    norm: str
    activation_rms: np.ndarray  # (depth + 1,)
    grad_norm: np.ndarray  # (depth,)

    @property
    def label(self) -> str:
        inner = {"none": "F(x)", "post": "F(x)", "pre": "F(LN(x))"}[self.norm]
        body = f"x + {inner}" if self.residual else inner
        return f"LN({body})" if self.norm == "post" else body


@functools.cache
def _layers(seed: int, d_model: int, d_ff: int):
    """MAX_DEPTH layers, made once per seed: every depth and wrapping shares the same weights."""
    with torch.random.fork_rng(devices=[]):  # leave the caller's random state alone
        torch.manual_seed(seed)
        ffns = [PositionwiseFeedForward(d_model, d_ff) for _ in range(MAX_DEPTH)]
    norms = [nn.LayerNorm(d_model) for _ in range(MAX_DEPTH)]
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(64, d_model, generator=g)  # 64 positions, unit variance
    readout = torch.randn(64, d_model, generator=g)
    return ffns, norms, x, readout


@functools.lru_cache(maxsize=512)
def stack_profile(
    depth: int, residual: bool, norm: str, seed: int = 0, d_model: int = 64, d_ff: int = 256
) -> StackProfile:
    """Forward and backward through ``depth`` layers wrapped as chosen (cached)."""
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be an int from 1 to {MAX_DEPTH}; got {depth!r}")
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}; got {norm!r}")
    ffns, norms, x, readout = _layers(seed, d_model, d_ff)
    h, rms = x, [x.pow(2).mean().sqrt().item()]
    for ffn, ln in zip(ffns[:depth], norms[:depth], strict=True):
        out = ffn(ln(h) if norm == "pre" else h)
        h = h + out if residual else out
        h = ln(h) if norm == "post" else h
        rms.append(h.pow(2).mean().sqrt().item())
    weights = [list(f.parameters()) for f in ffns[:depth]]
    grads = torch.autograd.grad((h * readout).sum(), [p for w in weights for p in w])
    per_layer = np.array([g.pow(2).sum().item() for g in grads]).reshape(depth, -1).sum(axis=1)
    return StackProfile(depth, residual, norm, np.array(rms), np.sqrt(per_layer))


def _trend(rms) -> str:
    ratio = rms[-1] / rms[0]
    return "grows" if ratio > 1.25 else "fades" if ratio < 0.8 else "stays level"


def stack_readings(profile: StackProfile) -> tuple[str, str, str]:
    """The lines the picture prints: its title and the two panels' titles. The text
    alternative and the status line repeat them word for word."""
    layers = "1 layer" if profile.depth == 1 else f"{profile.depth} layers"
    first, last = profile.grad_norm[0], profile.grad_norm[-1]
    return (
        f"{layers}, each x → {profile.label}",
        f"Activations: output RMS {number(profile.activation_rms[-1])}",
        f"Gradient norm, layer 1 → {profile.depth}: {number(first)} → {number(last)}",
    )


def vanished_phrase(profile: StackProfile) -> str:
    """How many layers' gradients fall below the plot's floor (drawn ▼, "below 1e-8")."""
    vanished = int((profile.grad_norm < GRADIENT_RANGE[0]).sum())
    if not vanished:
        return "none below 1e-8"
    return f"{vanished} of {profile.depth} below 1e-8 (▼, vanished)"


def describe_stack(shown: StackProfile, other: StackProfile) -> str:
    """The picture in words: the lines it prints (:func:`stack_readings`), how the activation
    scale changes over depth with this wrapping and with the residual path switched the
    other way, and how many gradients fell below the plot's floor.

    Args:
        shown: the profile drawn.
        other: the same depth and LayerNorm with the residual path switched the other way.
    """
    depth, residual, norm = shown.depth, shown.residual, shown.norm
    expected, got = (depth, not residual, norm), (other.depth, other.residual, other.norm)
    if got != expected:
        raise ValueError(
            f"other must have (depth, residual, norm) = {expected}, the shown profile with the "
            f"residual path switched; got {got}"
        )
    norms = {"none": "no LayerNorm", "post": "post-norm", "pre": "pre-norm"}[norm]

    def scale(profile):
        rms = profile.activation_rms
        return (
            f"activation RMS {number(rms[0])} at the input, {number(rms[-1])} after layer "
            f"{depth} ({_trend(rms)})"
        )

    title, activations, gradients = stack_readings(shown)
    floor = vanished_phrase(shown)
    return (
        f"{title} (residual path {'on' if residual else 'off'}, {norms}). "
        f"{activations}: {scale(shown)}. With the residual path {'off' if residual else 'on'}, "
        f"{other.label}: {scale(other)}. {gradients}; {floor}."
    )


ACTIVATION_RANGE = (1e-2, 1e2)  # holds every wrapping's RMS at every depth
GRADIENT_RANGE = (1e-8, 1e5)  # smaller gradients are drawn as ▼ on the floor: vanished


def render_stack(profile: StackProfile) -> Figure:
    """A new figure with the activation and gradient panels for ``profile``.

    The axes are fixed (all 48 layers, ranges that hold every wrapping), so everything but the
    curves and titles is drawn once and reused by :func:`stack_png`.
    """
    fig = Figure(figsize=(9.0, 3.6), dpi=100)
    # Fixed margins: a layout engine would re-measure every label on each redraw.
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.15, top=0.78, wspace=0.28)
    left, right = fig.subplots(1, 2)
    left.plot([], [], "o-", markersize=3, animated=True)
    right.plot([], [], "s-", markersize=3, color="C1", animated=True)
    right.plot([], [], "v", color="C1", linestyle="none", animated=True, label="below 1e-8")
    left.set(yscale="log", ylim=ACTIVATION_RANGE, xlabel="layer (0 = input)")
    left.set_ylabel("RMS of the activations")
    right.set(yscale="log", ylim=GRADIENT_RANGE, xlabel="layer")
    right.set_ylabel("gradient norm of its weights")
    for ax in (left, right):
        ax.set_xlim(-0.5, MAX_DEPTH + 0.5)
        ax.yaxis.set_major_locator(LogLocator(numticks=8))
        ax.yaxis.set_minor_locator(NullLocator())  # minor log ticks: hundreds of slow artists
        ax.yaxis.set_major_formatter(FuncFormatter(_power))  # plain text: mathtext is slow
        ax.grid(True, which="major", alpha=0.3)
        ax.title.set_animated(True)
    # Below the panel, level with its x label: inside, some depth's curve would run under it.
    right.legend(loc="upper right", bbox_to_anchor=(1.0, -0.07), fontsize="small", frameon=False)
    fig.text(0.5, 0.93, "", ha="center", va="top", fontsize="large", animated=True)
    refresh_stack(fig, profile)
    return fig


def _power(value: float, position=None) -> str:
    """A log-axis label as plain text: 0.01, 1, 100, 1e-06."""
    return f"{value:g}"


def refresh_stack(fig: Figure, profile: StackProfile) -> None:
    """Update the curves and titles of ``fig`` (from :func:`render_stack`) for another profile."""
    left, right = fig.axes
    layers = np.arange(profile.depth + 1)
    left.lines[0].set_data(layers, profile.activation_rms)
    floor = GRADIENT_RANGE[0]
    vanished = profile.grad_norm < floor
    right.lines[0].set_data(layers[1:][~vanished], profile.grad_norm[~vanished])
    right.lines[1].set_data(layers[1:][vanished], np.full(int(vanished.sum()), floor * 2))
    title, activations, gradients = stack_readings(profile)
    left.set_title(activations, fontsize="medium")
    right.set_title(gradients, fontsize="medium")
    fig.texts[0].set_text(title)


def stack_png(fig: Figure) -> bytes:
    """PNG bytes of ``fig``: the static parts drawn once, the curves and titles on top."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    canvas = fig.canvas
    if getattr(fig, "_static_background", None) is None:
        canvas.draw()  # animated artists are left out: axes, ticks, labels, legend only
        fig._static_background = canvas.copy_from_bbox(fig.bbox)
    canvas.restore_region(fig._static_background)
    for ax in fig.axes:
        for artist in (*ax.lines, ax.title):
            ax.draw_artist(artist)
    fig.draw_artist(fig.texts[0])
    image = PILImage.fromarray(np.asarray(canvas.buffer_rgba())).convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="png", compress_level=3)
    return buffer.getvalue()


class DeepStackExplorer(Explorer):
    """Depth slider, residual switch and LayerNorm placement; the figure redraws on each change.

    Attributes:
        depth, residual, norm, status, output: the widgets (setting a control's ``.value``
            redraws); the status line repeats the lines the picture prints.
        figure, profile: what is on show; ``text`` the picture's text alternative.
    """

    title = "Deep-stack explorer"

    def __init__(self, depth: int = 12, seed: int = 0):
        import ipywidgets as w  # here, so that importing the module stays light

        self.seed = seed
        self.depth = w.IntSlider(value=depth, min=1, max=MAX_DEPTH, description="layers")
        self.residual = w.Checkbox(value=True, description="residual path x + ...", indent=False)
        self.norm = w.ToggleButtons(
            options=[
                ("no LayerNorm", "none"),
                ("post-norm (after the sum)", "post"),
                ("pre-norm (before F)", "pre"),
            ],
            value="post",
            description="LayerNorm",
        )
        self.norm.add_class("course-wide-choices")
        self.status = w.HTML(layout=w.Layout(width="310px"))
        self.status.add_class("course-live")
        self.output = w.Output(layout=w.Layout(flex="1 1 auto"))
        controls = w.VBox(
            [self.depth, self.residual, self.norm, self.status],
            layout=w.Layout(flex="0 0 auto", width="320px", min_width="320px"),
        )
        self.widget = w.HBox([controls, self.output])
        # stable names for the browser tests (tests/browser) to find the parts by
        self.depth.add_class("course-depth")
        self.residual.add_class("course-residual")
        self.norm.add_class("course-norm")
        self.output.add_class("course-picture")
        self._finish(w, controls, "course-deep-stack-explorer", choices=True, checkboxes=True)
        self.figure = self.profile = None
        for control in (self.depth, self.residual, self.norm):
            control.observe(self.update, names="value")
        self.update()
        collect_garbage_now()

    def update(self, change=None) -> None:
        """Recompute (or fetch from the cache) and redraw the figure in place."""
        self.profile = stack_profile(
            self.depth.value, self.residual.value, self.norm.value, self.seed
        )
        if self.figure is None:
            self.figure = render_stack(self.profile)
        else:
            refresh_stack(self.figure, self.profile)
        other = stack_profile(self.depth.value, not self.residual.value, self.norm.value, self.seed)
        self.text = describe_stack(self.profile, other)
        self.output.outputs = (png_output(stack_png(self.figure), self.text),)
        self.status.value = status_html(
            [*stack_readings(self.profile), f"Gradients: {vanished_phrase(self.profile)}"]
        )

    def _static_controls(self) -> list:
        """The depth over a few steps; the residual switch and LayerNorm in every combination."""
        steps = sorted({1, 6, 12, 24, 36, MAX_DEPTH, self.depth.value})
        return [
            widget_control("depth", self.depth, "slider", [(d, str(d)) for d in steps]),
            widget_control("residual", self.residual, "checkbox"),
            widget_control("norm", self.norm, "buttons", [(v, t) for t, v in self.norm.options]),
        ]
