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

from ..layers import PositionwiseFeedForward
from ._display import collect_garbage_now, png_output

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
    left.set_title(f"Activations: output RMS {profile.activation_rms[-1]:.3g}", fontsize="medium")
    first, last = profile.grad_norm[0], profile.grad_norm[-1]
    right.set_title(
        f"Gradient norm, layer 1 → {profile.depth}: {first:.3g} → {last:.3g}", fontsize="medium"
    )
    layers_text = "1 layer" if profile.depth == 1 else f"{profile.depth} layers"
    fig.texts[0].set_text(f"{layers_text}, each x → {profile.label}")


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


class DeepStackExplorer:
    """Depth slider, residual switch and LayerNorm placement; the figure redraws on each change.

    Attributes:
        depth, residual, norm, output: the widgets (setting a control's ``.value`` redraws).
        figure, profile: what is on show.
    """

    def __init__(self, depth: int = 12, seed: int = 0):
        import ipywidgets as w  # here, so that importing the module stays light

        self.seed = seed
        self.depth = w.IntSlider(value=depth, min=1, max=MAX_DEPTH, description="layers")
        self.residual = w.Checkbox(value=True, description="residual path x + ...", indent=False)
        self.norm = w.RadioButtons(
            options=[
                ("no LayerNorm", "none"),
                ("post-norm (after the sum)", "post"),
                ("pre-norm (before F)", "pre"),
            ],
            value="post",
            description="LayerNorm",
        )
        self.output = w.Output(layout=w.Layout(flex="1 1 auto"))
        controls = w.VBox(
            [self.depth, self.residual, self.norm],
            layout=w.Layout(flex="0 0 auto", width="320px", min_width="320px"),
        )
        self.widget = w.HBox([controls, self.output])
        # stable names for the browser tests (tests/browser) to find the parts by
        self.widget.add_class("course-deep-stack-explorer")
        self.depth.add_class("course-depth")
        self.residual.add_class("course-residual")
        self.output.add_class("course-picture")
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
        text = f"<deep stack: {self.profile.depth} layers, {self.profile.label}>"
        self.output.outputs = (png_output(stack_png(self.figure), text),)

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)
