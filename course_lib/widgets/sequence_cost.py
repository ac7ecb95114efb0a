"""Lesson 1's explorer: measured forward time of an LSTM layer against a self-attention layer.

The learner picks the sequence length n and the width d; the explorer times both layers on
this machine at every length of a fixed grid up to n, and draws the times next to the counts
that do not depend on the machine: sequential steps and the longest path between two
positions (paper §4, Table 1).

Timing on a busy machine is noisy, most of all for small sizes, where one call takes a tenth
of a millisecond: a single call measures the scheduler as much as the layer. So each sample
times enough back-to-back calls to last MIN_SECONDS, the samples are taken in rounds over all
the points still to measure (a slow moment of the machine then falls on every point alike
instead of bending one part of a curve), and each point is the fastest of its SAMPLES
samples: other work on the machine only ever adds time, so the fastest sample is the closest
to what the layer itself costs (the reasoning of Python's ``timeit``). How far a point's
samples spread is kept and reported. Measurements are cached, and sizes are capped so that
measuring a new width stays around a second.
"""

import math
import time

import torch
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator
from torch import nn

from ..attention import MultiHeadAttention
from ._display import (
    collect_garbage_now,
    figure_png,
    outline_tick_labels,
    place_axis_label,
    place_tick_labels,
    png_output,
    status_html,
)
from ._explorer import Explorer
from .static_export import widget_control

LENGTHS = (16, 32, 64, 128, 256, 512, 1024)  # the grid of sequence lengths; 1024 is the cap
WIDTHS = (32, 64, 128, 256)  # model widths d; 256 is the cap
KINDS = ("lstm", "attention")
LABELS = {"lstm": "LSTM layer (nn.LSTM)", "attention": "self-attention layer (4 heads)"}


def path_lengths(n: int) -> dict[str, int]:
    """Sequential steps and longest path (in hops) between two of ``n`` positions, per layer."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int; got {n!r}")
    return {"rnn_steps": n, "rnn_path": n - 1, "attention_steps": 1, "attention_path": 1}


def layer_costs(n: int, d: int) -> tuple[int, int]:
    """Multiply-adds of one layer as the paper's Table 1 counts them: (n²·d, n·d²)."""
    for name, value in (("n", n), ("d", d)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int; got {value!r}")
    return n * n * d, n * d * d


_layers: dict[tuple[str, int], nn.Module] = {}


def _layer(kind: str, d: int) -> nn.Module:
    if (kind, d) not in _layers:
        generator_state = torch.random.get_rng_state()  # timing must not move the notebook's RNG
        layer = nn.LSTM(d, d, batch_first=True) if kind == "lstm" else MultiHeadAttention(d, 4)
        torch.random.set_rng_state(generator_state)
        _layers[kind, d] = layer.eval()
    return _layers[kind, d]


SAMPLES = 5  # samples per point; the fastest is drawn
MIN_SECONDS = 0.002  # one sample lasts at least this long: many calls of a small layer
MAX_CALLS = 200  # ... but no more calls than this in one sample


def _check(kind: str, n: int, d: int) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")
    for name, value, cap in (("n", n, LENGTHS[-1]), ("d", d, WIDTHS[-1])):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= cap:
            raise ValueError(f"{name} must be an int in 1..{cap}; got {value!r}")
    if d % 4:
        raise ValueError(f"d must be divisible by the 4 attention heads; got {d}")


def _forward(kind: str, n: int, d: int, batch: int):
    """A function running one forward pass of a ``kind`` layer on a fixed ``(batch, n, d)``."""
    layer, x = _layer(kind, d), torch.zeros(batch, n, d).normal_(generator=torch.Generator())
    return (lambda: layer(x)) if kind == "lstm" else (lambda: layer(x, x, x))


def _seconds(forward, calls: int) -> float:
    """Seconds per call of ``calls`` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(calls):
        forward()
    return (time.perf_counter() - start) / calls


def measure_grid(points, *, samples: int = SAMPLES, batch: int = 1) -> dict:
    """``samples`` timings (seconds per forward pass) of each ``(kind, n, d)`` in ``points``.

    Each point first gets a warm-up call (first calls allocate buffers and pick kernels), then
    one timed call, which sets how many calls one of its samples times: enough to last
    MIN_SECONDS, at most MAX_CALLS. The samples are taken in rounds, one per point per round,
    without gradients. ``n`` is capped at ``LENGTHS[-1]`` and ``d`` at ``WIDTHS[-1]``.
    """
    points = list(dict.fromkeys(points))
    for point in points:
        _check(*point)
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples must be a positive int; got {samples!r}")
    with torch.no_grad():
        forwards = {p: _forward(*p, batch) for p in points}
        for forward in forwards.values():
            forward()  # the warm-up, slower than any later call
        calls = {
            p: min(MAX_CALLS, max(1, math.ceil(MIN_SECONDS / max(_seconds(f, 1), 1e-9))))
            for p, f in forwards.items()
        }
        timings = {p: [] for p in points}
        for _ in range(samples):
            for p, forward in forwards.items():
                timings[p].append(_seconds(forward, calls[p]))
    return timings


def measure_forward(kind: str, n: int, d: int, *, batch: int = 1, samples: int = SAMPLES) -> float:
    """Seconds per forward pass of a ``kind`` layer ("lstm" or "attention") on ``(batch, n, d)``:
    the fastest of :func:`measure_grid`'s samples."""
    return min(measure_grid([(kind, n, d)], samples=samples, batch=batch)[kind, n, d])


def spread(samples) -> float:
    """How far a point's samples spread: (slowest - fastest) / fastest."""
    fastest = min(samples)
    return (max(samples) - fastest) / fastest if fastest > 0 else 0.0


def crossing(n: int, d: int, timings: dict) -> str:
    """Where the measured curves cross, in words, from the grid lengths up to ``n``.

    The crossing is where self-attention becomes and stays slower than the LSTM; a curve
    that is slower at every length, or not yet slower at ``n``, is said to be so.
    """
    lengths = [length for length in LENGTHS if length <= n]
    slower = [timings["attention", n_, d] > timings["lstm", n_, d] for n_ in lengths]
    first = len(lengths)  # the first length from which attention stays slower
    while first > 0 and slower[first - 1]:
        first -= 1
    if len(lengths) == 1:
        faster = "the LSTM" if slower[0] else "self-attention"
        return f"Crossing: at n = {n} only, {faster} is faster; raise n to see the curves"
    if first == 0:
        return f"Crossing: none, the LSTM is faster at every n from {lengths[0]} to {n:,}"
    if first == len(lengths) and n < LENGTHS[-1]:
        return f"Crossing: not yet, self-attention is faster at n = {n:,}; raise n"
    if first == len(lengths):
        return f"Crossing: not up to n = {n:,}, the largest length here; self-attention is faster"
    return (
        f"Crossing: between n = {lengths[first - 1]:,} and {lengths[first]:,}; "
        f"self-attention is slower from n = {lengths[first]:,} on"
    )


def noise(n: int, d: int, spreads: dict) -> str:
    """How far repeated timings spread, at the smallest length and at ``n`` (the worse of the
    two layers): the slowest sample as a multiple of the fastest; without ``spreads``, that
    the points are single timings."""
    if not spreads:
        return "Noise: one timing per point here; read the trend, not one point"
    low = max(spreads.get((kind, LENGTHS[0], d), 0.0) for kind in KINDS)
    high = max(spreads.get((kind, n, d), 0.0) for kind in KINDS)
    at_n = f" and {1 + high:.1f}× at n = {n:,}" if n != LENGTHS[0] else ""
    return (
        f"Noise: the slowest of {SAMPLES} timings took up to {1 + low:.1f}× the fastest at "
        f"n = {LENGTHS[0]}{at_n}; read the trend, not one point"
    )


def cost_readings(n: int, d: int, timings: dict, spreads=None) -> tuple[str, str, str]:
    """The three lines the picture prints under its panels: the times at ``n`` and which layer
    was faster, where the curves cross (:func:`crossing`), and how noisy the timings are
    (:func:`noise`). The text alternative and the status line repeat them word for word.

    ``timings`` maps ``(kind, length, d)`` to seconds; ``spreads`` the same keys to
    :func:`spread` (None: single timings).
    """
    lstm, attention = (1000 * timings[kind, n, d] for kind in KINDS)
    if f"{lstm:.2f}" == f"{attention:.2f}":
        verdict = "both take the same time"
    else:
        faster = "self-attention" if attention < lstm else "the LSTM"
        verdict = f"{faster} is {max(lstm, attention) / min(lstm, attention):.1f}× faster"
    times = (
        f"Measured at n = {n:,}, d = {d}, batch 1: LSTM {lstm:.2f} ms, "
        f"self-attention (4 heads) {attention:.2f} ms; {verdict}"
    )
    return times, crossing(n, d, timings), noise(n, d, spreads or {})


def counts_line(n: int) -> str:
    """The right panel in words: what Table 1 counts at ``n`` on any machine."""
    counts = path_lengths(n)
    return (
        f"On any machine, at n = {n:,}: {counts['rnn_steps']:,} sequential steps against "
        f"{counts['attention_steps']}, and a longest path of {counts['rnn_path']:,} hops "
        f"against {counts['attention_path']}"
    )


def describe_sequence_cost(n: int, d: int, timings: dict, spreads=None) -> str:
    """The picture in words: the lines it prints (:func:`cost_readings`), the measured times
    (ms, 2 decimals) from the shortest length to ``n``, and the counts at ``n``."""
    lengths = [length for length in LENGTHS if length <= n]
    ms = {kind: [1000 * timings[kind, length, d] for length in lengths] for kind in KINDS}
    times, crossed, noisy = cost_readings(n, d, timings, spreads)
    span = f"from n = {lengths[0]} to {n:,}" if len(lengths) > 1 else f"at n = {n}"
    curve = {kind: " → ".join(f"{t:.2f}" for t in v) for kind, v in ms.items()}
    return (
        f"Two panels. Left, measured on this machine, one layer: {times}. {crossed}. "
        f"Times {span} (ms): LSTM {curve['lstm']}; self-attention {curve['attention']}. "
        f"{noisy}. Right: {counts_line(n)}."
    )


def render_sequence_cost(n: int, d: int, timings: dict, spreads=None) -> Figure:
    """Two panels, the measured times (ms) up to ``n`` and the steps and paths at ``n``, over
    the three lines of :func:`cost_readings`.

    ``timings`` maps ``(kind, length, d)`` to seconds, as :func:`measure_forward` returns them;
    ``spreads`` the same keys to :func:`spread`. :func:`refresh_sequence_cost` redraws the
    figure in place for another n or d.
    """
    fig = Figure(figsize=(10, 4.6), dpi=100)
    # Fixed margins, with room for the labels and the three lines under them: when ink
    # comes within 0.1 inch of the canvas edge, figure_png must let savefig find it, and
    # that draws the figure three times.
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.27, top=0.92, wspace=0.25)
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": (1.4, 1)})
    for kind, style in zip(KINDS, ("o-", "s--"), strict=True):
        left.plot([], [], style, label=LABELS[kind], gid=kind)
    left.set(xscale="log", yscale="log", xlabel="sequence length n (log scale)")
    left.set_ylabel("forward time (ms, log scale)")
    left.legend(fontsize=8)
    left.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))  # labelled ticks at 1, 2, 5 x 10^k
    left.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    names = ("sequential steps", "longest path (hops)")
    positions = range(len(names))
    right.bar([p - 0.2 for p in positions], [1, 1], 0.4, label="recurrent", hatch="//")
    right.bar([p + 0.2 for p in positions], [1, 1], 0.4, label="self-attention")
    for p in positions:
        right.text(p - 0.2, 1, "", ha="center", va="bottom", fontsize=8)
        right.text(p + 0.2, 1, "", ha="center", va="bottom", fontsize=8)
    right.set_xticks(list(positions), names)
    right.set(yscale="log", ylabel="count (log scale)")
    right.legend(fontsize=8, loc="upper right")
    for ax in (left, right):
        ax.minorticks_off()  # log axes' minor ticks cost most of a redraw
        for which in "xy":  # glyph outlines: a Text artist costs about a millisecond to draw
            outline_tick_labels(ax, which)
    fig.text(0.08, 0.15 / 4.6, "", ha="left", va="bottom", fontsize=9, gid="readings")
    refresh_sequence_cost(fig, n, d, timings, spreads)
    return fig


def refresh_sequence_cost(fig: Figure, n: int, d: int, timings: dict, spreads=None) -> None:
    """Redraw a :func:`render_sequence_cost` figure in place for ``n`` and ``d``."""
    left, right = fig.axes
    lengths = [length for length in LENGTHS if length <= n]
    for line in left.get_lines():
        line.set_data(lengths, [1000 * timings[line.get_gid(), length, d] for length in lengths])
    left.relim()
    left.autoscale_view()
    left.set_xticks(lengths, [str(length) for length in lengths])
    left.set_title(f"Measured on this machine: one layer, d = {d}, batch 1", fontsize=10)
    counts = path_lengths(n)
    rnn = (counts["rnn_steps"], counts["rnn_path"])
    attention = (counts["attention_steps"], counts["attention_path"])
    for bar, count in zip(right.patches, (*rnn, *attention), strict=True):
        bar.set_height(count)  # the bars: both recurrent ones, then both attention ones
    by_group = [count for pair in zip(rnn, attention, strict=True) for count in pair]
    for text, count in zip(right.texts, by_group, strict=True):
        text.set_y(count)  # the numbers: the two bars of each group, group by group
        text.set_text(f"{count:,}")
    right.set_ylim(0.5, 40 * max(rnn))
    right.set_title(f"Any machine: n = {n:,} positions", fontsize=10)
    fig.texts[0].set_text("\n".join(cost_readings(n, d, timings, spreads)))
    for ax in (left, right):
        for labels in ax.collections:  # the tick labels, one collection per axis
            place_tick_labels(labels)  # for the new limits
            place_axis_label(labels)


def draw_cost_crossover(ax, d: int = 512, n_max: int = 2048) -> None:
    """Table 1's per-layer costs n²·d and n·d² against n, with the crossover at n = d marked."""
    layer_costs(n_max, d)  # validates both
    ns = list(range(1, n_max + 1, max(1, n_max // 256)))
    attention = [layer_costs(n, d)[0] for n in ns]
    recurrent = [layer_costs(n, d)[1] for n in ns]
    ax.plot(ns, attention, "-", label="self-attention: n²·d", gid="attention")
    ax.plot(ns, recurrent, "--", label="recurrent: n·d²", gid="recurrent")
    ax.axvline(d, color="0.3", linestyle=":", gid="crossover")
    ax.annotate(f"n = d = {d}", (d, d**3), xytext=(8, -14), textcoords="offset points")
    ax.set(xlabel="sequence length n", ylabel="multiply-adds per layer", yscale="log")
    ax.set_title(f"Per-layer cost at d = {d}: attention is cheaper while n < d")
    ax.legend()


class SequenceCostExplorer(Explorer):
    """Sliders for n and d; an ``Output`` with :func:`render_sequence_cost` of fresh timings.

    Args:
        n, d: the starting length and width (grid values).

    Attributes:
        timings: ``(kind, n, d) -> seconds``, every measurement made so far; ``spreads`` how
            far each one's samples spread (:func:`spread`).
        figure: the figure drawn last; ``text`` its text alternative; ``readings`` the lines
            it prints under the panels, which the status line repeats.
        n_select, d_select, status, output: the widgets.
    """

    title = "Sequence-cost explorer"
    note = (
        "The times were measured on the computer that built this page, when it was built; "
        "the live notebook measures them on yours."
    )

    def __init__(self, n: int = 256, d: int = 128):
        import ipywidgets as w  # here, so that importing course_lib.widgets stays light

        if n not in LENGTHS or d not in WIDTHS:
            raise ValueError(f"n must be one of {LENGTHS} and d one of {WIDTHS}; got {n}, {d}")
        self.timings, self.spreads, self.figure = {}, {}, None
        style = {"description_width": "150px"}
        layout = w.Layout(width="420px")
        self.n_select = w.SelectionSlider(
            options=LENGTHS, value=n, description="sequence length n", style=style, layout=layout
        )
        self.d_select = w.SelectionSlider(
            options=WIDTHS, value=d, description="model width d", style=style, layout=layout
        )
        self.status = w.HTML()
        self.output = w.Output()
        for control in (self.n_select, self.d_select):
            control.observe(self.update, names="value")
        controls = w.VBox([self.n_select, self.d_select])
        self.widget = w.VBox([controls, self.status, self.output])
        self.n_select.add_class("course-length-n")
        self.d_select.add_class("course-width-d")
        self.status.add_class("course-cost-summary")
        self.output.add_class("course-picture")
        self._finish(w, controls, "course-sequence-cost-explorer")
        self.update()
        collect_garbage_now()

    def measure(self, n: int, d: int) -> None:
        """Time both layers at every grid length up to ``n`` not measured yet, in rounds."""
        missing = [
            (kind, length, d)
            for length in LENGTHS
            if length <= n
            for kind in KINDS
            if (kind, length, d) not in self.timings
        ]
        if missing:
            for point, samples in measure_grid(missing).items():
                self.timings[point] = min(samples)
                self.spreads[point] = spread(samples)

    def update(self, change=None) -> None:
        """Measure what is missing, redraw, and say what the numbers mean."""
        n, d = self.n_select.value, self.d_select.value
        self.measure(n, d)
        if self.figure is None:
            self.figure = render_sequence_cost(n, d, self.timings, self.spreads)
        else:  # in place: a new figure per redraw would also be garbage for Python to collect
            refresh_sequence_cost(self.figure, n, d, self.timings, self.spreads)
        self.readings = cost_readings(n, d, self.timings, self.spreads)
        table = f"Table 1 counts n²·d = {n * n * d:,} against n·d² = {n * d * d:,} multiply-adds"
        self.status.value = status_html([*self.readings, counts_line(n), table])
        self.text = describe_sequence_cost(n, d, self.timings, self.spreads)
        self.output.outputs = (png_output(figure_png(self.figure), self.text),)

    def _static_controls(self) -> list:
        """n and d over all their values (each measured when first shown)."""
        return [
            widget_control("n", self.n_select, "slider", [(n, f"{n:,}") for n in LENGTHS]),
            widget_control("d", self.d_select, "slider", [(d, str(d)) for d in WIDTHS]),
        ]
