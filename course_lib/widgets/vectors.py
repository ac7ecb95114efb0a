"""Two 2-D vectors, their dot product, cosine and angle: the explorer of lesson 2 (paper §3.2.1).

a·b = Σᵢ aᵢbᵢ = |a| |b| cos θ. The numbers (:func:`vector_pair`, :func:`readout`) and the
drawing (:func:`render_vectors`, :func:`refresh_vectors`) are plain functions; the widget
(:class:`VectorExplorer`) only wires four sliders to them. ipywidgets is imported only when
an explorer is built.
"""

import html
import math
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Arc

from ._display import (
    PNG_DPI,
    Backdrops,
    collect_garbage_now,
    outline_tick_labels,
    place_axis_label,
    place_tick_labels,
    png_output,
)
from ._explorer import Explorer
from .static_export import widget_control

COLOURS = ("#006BA4", "#C85200")  # blue and dark orange of tableau-colorblind10
LIMIT = 2.4  # fixed axes: the picture must not jump while a slider moves
MAX_LENGTH = 2.0
UNRELATED = 0.1  # |cos θ| below this reads as "nearly perpendicular"
THETA_GAP = 0.2  # data units between the "θ" of a narrow angle and the nearer arrow


@dataclass(frozen=True)
class VectorPair:
    """Two 2-D vectors and what the lesson says about them.

    Attributes:
        a, b: the vectors, shape (2,).
        dot: a·b.  cosine: cos θ = a·b / (|a| |b|).  angle: θ in degrees, 0 to 180.
    """

    a: np.ndarray
    b: np.ndarray

    @property
    def dot(self) -> float:
        return float(self.a @ self.b)

    @property
    def norms(self) -> tuple[float, float]:
        return float(np.linalg.norm(self.a)), float(np.linalg.norm(self.b))

    @property
    def cosine(self) -> float:
        norm_a, norm_b = self.norms
        return float(np.clip(self.dot / (norm_a * norm_b), -1.0, 1.0))

    @property
    def angle(self) -> float:
        return math.degrees(math.acos(self.cosine))

    @property
    def relation(self) -> str:
        if abs(self.cosine) < UNRELATED:
            return "are nearly perpendicular: unrelated"
        return "point the same way: agree" if self.cosine > 0 else "point opposite ways: disagree"


def _number(name: str, value, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number; got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low:g} and {high:g}; got {value}")
    return float(value)


def vector_pair(angle_a, length_a, angle_b, length_b) -> VectorPair:
    """The vectors with these directions (degrees counter-clockwise from the x axis) and lengths."""
    vectors = []
    for which, angle, length in (("a", angle_a, length_a), ("b", angle_b, length_b)):
        phi = math.radians(_number(f"angle_{which}", angle, -360, 360))
        r = _number(f"length_{which}", length, 1e-3, MAX_LENGTH)
        vectors.append(np.array([r * math.cos(phi), r * math.sin(phi)]))
    return VectorPair(*vectors)


def polar(vector) -> tuple[float, float]:
    """(angle in degrees, length) of a 2-D vector: the slider settings that draw it."""
    x, y = np.asarray(vector, dtype=float).reshape(2)
    return math.degrees(math.atan2(y, x)), math.hypot(x, y)


def _fixed(x: float, digits: int) -> str:
    """``x`` to ``digits`` decimals, never "-0.00" for a tiny negative number."""
    return f"{round(x, digits) + 0.0:.{digits}f}"


def readout(pair: VectorPair, names=("a", "b")) -> str:
    """The numbers in words, the same as the picture shows (for screen readers and tests)."""
    a, b = names
    (norm_a, norm_b), p = pair.norms, pair
    dot, cos = _fixed(p.dot, 2), _fixed(p.cosine, 3)
    return (
        f"{a}·{b} = {dot} = |{a}| |{b}| cos θ = {norm_a:.2f} × {norm_b:.2f} × {cos}; "
        f"cos θ = {cos}, θ = {p.angle:.1f}°, so they {p.relation}."
    )


def describe_vectors(pair: VectorPair, names=("a", "b")) -> str:
    """The picture in words: both arrows (direction and length), then the :func:`readout`."""
    arrows = " and ".join(
        f"{name} (direction {_fixed(polar(v)[0], 1)}°, length {_fixed(norm, 2)})"
        for name, v, norm in zip(names, (pair.a, pair.b), pair.norms, strict=True)
    )
    return (
        f"Two arrows from the origin, {arrows}, with the angle θ between them marked. "
        + readout(pair, names)
    )


def render_vectors(pair: VectorPair, names=("a", "b")) -> Figure:
    """Both vectors as arrows from the origin, the angle between them, and b's shadow on a."""
    fig = Figure(figsize=(4.6, 4.9), dpi=PNG_DPI)
    ax = fig.add_axes((0.15, 0.12, 0.78, 0.73))
    ax.set(xlim=(-LIMIT, LIMIT), ylim=(-LIMIT, LIMIT), aspect="equal")
    ax.set(xlabel="first component", ylabel="second component")
    for which in "xy":  # glyph outlines: a Text artist costs about a millisecond to draw
        labels = outline_tick_labels(ax, which)
        place_tick_labels(labels)
        place_axis_label(labels)
    ax.grid(True, color="#dddddd", lw=0.6)
    ax.axhline(0, color="#999999", lw=0.8)
    ax.axvline(0, color="#999999", lw=0.8)
    # Solid blue a, dashed orange b: told apart by line style and label as well as colour.
    for i, (colour, style) in enumerate(zip(COLOURS, ("-", "--"), strict=True)):
        ax.annotate(
            "",
            (1, 0),
            (0, 0),
            gid=f"arrow {i}",
            arrowprops=dict(arrowstyle="-|>", color=colour, lw=2.2, ls=style, mutation_scale=16),
        )
        label = dict(color=colour, fontsize=13, weight="bold", ha="center", va="center")
        ax.text(0, 0, names[i], **label, gid=f"label {i}")
    ax.plot([], [], ":", color="#555555", lw=1.2, gid="drop")
    ax.plot([], [], "-", color=COLOURS[1], lw=5, alpha=0.35, gid="shadow")
    # zorder 2, above the grid (1.5): the explorer draws the arc over the still parts
    ax.add_patch(Arc((0, 0), 1.0, 1.0, color="#333333", lw=1.2, gid="arc", zorder=2))
    ax.text(0, 0, "θ", fontsize=11, ha="center", va="center", gid="theta")
    fig.text(0.54, 0.965, "", ha="center", va="top", fontsize=11, gid="title")
    fig.text(0.54, 0.905, "", ha="center", va="top", fontsize=9, gid="subtitle")
    refresh_vectors(fig, pair, names)
    return fig


# What moves, in the order a full drawing draws it (zorder 2, then 3, then the figure's texts).
MOVING = ("drop", "shadow", "arc", "arrow 0", "label 0", "arrow 1", "label 1", "theta")


def moving_parts(fig: Figure) -> list:
    """What :func:`refresh_vectors` moves, in drawing order; the axes and grid stay put."""
    parts = {artist.get_gid(): artist for artist in fig.axes[0].get_children()}
    return [parts[gid] for gid in MOVING] + list(fig.texts)


def refresh_vectors(fig: Figure, pair: VectorPair, names=("a", "b")) -> None:
    """Move the arrows, arc and texts of a :func:`render_vectors` figure to ``pair``."""
    ax = fig.axes[0]
    parts = {artist.get_gid(): artist for artist in ax.get_children() if artist.get_gid()}
    for i, (v, other) in enumerate(((pair.a, pair.b), (pair.b, pair.a))):
        parts[f"arrow {i}"].xy = tuple(v)
        # The label just beyond the arrowhead, nudged away from the other arrow.
        unit = v / np.linalg.norm(v)
        side = np.array([-unit[1], unit[0]])
        side = -side if side @ other > 0 else side
        parts[f"label {i}"].set_position(tuple(v + 0.2 * unit + 0.15 * side))
    # b's shadow on a's line: a·b = |a| × (the signed length of that shadow).
    unit_a = pair.a / np.linalg.norm(pair.a)
    foot = (pair.b @ unit_a) * unit_a
    parts["drop"].set_data([pair.b[0], foot[0]], [pair.b[1], foot[1]])
    parts["shadow"].set_data([0, foot[0]], [0, foot[1]])
    # The arc runs counter-clockwise, so start it at whichever vector the short way begins.
    phi_a, phi_b = (polar(v)[0] for v in (pair.a, pair.b))
    start = phi_a if (phi_b - phi_a) % 360 <= 180 else phi_b
    radius = min(0.5, 0.45 * min(pair.norms))
    arc = parts["arc"]
    arc.width = arc.height = 2 * radius
    arc.theta1, arc.theta2 = start, start + pair.angle
    if pair.angle > 30:  # inside the wedge, just past the arc
        away, where = 1.6 * radius, start + pair.angle / 2
    else:  # a narrow wedge has no room: beside the arc, outside it, clear of both arrows
        away = radius + 0.1
        where = start - math.degrees(math.asin(min(1.0, THETA_GAP / away)))
    where = math.radians(where)
    parts["theta"].set_position((away * math.cos(where), away * math.sin(where)))
    a, b = names
    texts = {t.get_gid(): t for t in fig.texts}
    texts["title"].set_text(
        f"{a}·{b} = {_fixed(pair.dot, 2)},  cos θ = {_fixed(pair.cosine, 3)},  "
        f"θ = {pair.angle:.1f}°"
    )
    norm_a, norm_b = pair.norms
    verdict = pair.relation.split(": ")[-1]  # short: a long line would not fit the picture
    verdict = "they are unrelated" if verdict == "unrelated" else f"they {verdict}"
    texts["subtitle"].set_text(f"|{a}| = {norm_a:.2f}, |{b}| = {norm_b:.2f}: {verdict}")


class VectorExplorer(Explorer):
    """Sliders for the direction and length of two vectors; the picture and numbers follow.

    Args:
        a, b: the starting vectors, 2 numbers each (e.g. the lesson's cat and dog); lengths
            outside the sliders' range (0.1 to 2) are clipped to it.
        names: what to call them in the picture and the readout.

    Attributes:
        pair: the :class:`VectorPair` on show; ``figure``; ``text``: its :func:`readout`;
            ``alt``: the picture's text alternative (:func:`describe_vectors`).
        angle_a, length_a, angle_b, length_b, readout_label, output: the widgets
            (setting a slider's ``.value`` redraws at once).
    """

    title = "Dot-product explorer"

    def __init__(self, a=(1.0, 0.5), b=(0.9, 0.6), names=("a", "b")):
        import ipywidgets as w  # here, so that importing course_lib.widgets stays light

        if len(names) != 2 or not all(isinstance(n, str) and n.strip() for n in names):
            raise ValueError(f"names must be two non-empty strings; got {names!r}")
        self.names = tuple(names)
        style = {"description_width": "110px"}
        sliders = []
        for name, vector in zip(self.names, (a, b), strict=True):
            angle, length = polar(vector)
            sliders += [
                w.FloatSlider(
                    value=angle,
                    min=-180,
                    max=180,
                    step=1,
                    readout_format=".0f",
                    description=f"angle of {name} (°)",
                    style=style,
                ),
                w.FloatSlider(
                    value=length,
                    min=0.1,
                    max=MAX_LENGTH,
                    step=0.01,
                    description=f"length of {name}",
                    style=style,
                ),
            ]
        self.angle_a, self.length_a, self.angle_b, self.length_b = sliders
        self.readout_label = w.HTML(layout=w.Layout(width="330px"))
        self.readout_label.add_class("course-readout")
        self.output = w.Output(layout=w.Layout(flex="1 1 auto"))
        for slider in sliders:
            slider.observe(self.update, names="value")
        # flex "0 0 auto" and a minimum width: a static HTML export can squeeze the box to 0 px
        controls = w.VBox(
            [*sliders, self.readout_label],
            layout=w.Layout(flex="0 0 auto", width="340px", min_width="340px"),
        )
        self.widget = w.HBox([controls, self.output])
        # stable names for the browser tests (tests/browser) to find the parts by
        for slider, name in zip(
            sliders, ("angle-a", "length-a", "angle-b", "length-b"), strict=True
        ):
            slider.add_class(f"course-{name}")
        self.output.add_class("course-picture")
        self._finish(w, controls, "course-vector-explorer")
        self.figure = self._backdrop = None
        self.update()
        collect_garbage_now()

    def update(self, change=None) -> None:
        """Redraw from the sliders' current values; every slider calls this when it moves."""
        self.pair = vector_pair(
            self.angle_a.value, self.length_a.value, self.angle_b.value, self.length_b.value
        )
        if self.figure is None:
            self.figure = render_vectors(self.pair, self.names)
            self._backdrop = Backdrops(self.figure, keep=1)  # axes, grid and ticks, drawn once
        else:
            refresh_vectors(self.figure, self.pair, self.names)
        self.text = readout(self.pair, self.names)
        self.alt = describe_vectors(self.pair, self.names)
        png = self._backdrop.png(moving_parts(self.figure))
        self.output.outputs = (png_output(png, self.alt),)
        self.readout_label.value = f"<div style='line-height: 1.4'>{html.escape(self.text)}</div>"

    def _static_controls(self) -> list:
        """The four sliders, each over a few steps and its current value."""
        controls = []
        angles, lengths = (-180.0, -90.0, 0.0, 90.0, 180.0), (0.1, 0.5, 1.0, 1.5, 2.0)
        for name, slider, steps, digits in (
            ("angle_a", self.angle_a, angles, 0),
            ("length_a", self.length_a, lengths, 2),
            ("angle_b", self.angle_b, angles, 0),
            ("length_b", self.length_b, lengths, 2),
        ):
            label = lambda v, digits=digits: _fixed(v, digits)  # noqa: E731
            options = [(v, label(v)) for v in sorted({*steps, slider.value})]
            controls.append(widget_control(name, slider, "slider", options, describe=label))
        return controls
