"""Lesson 1's explorer: measured forward time of an LSTM layer against a self-attention layer.

The learner picks the sequence length n and the width d; the explorer times both layers on
this machine (one warm-up call, then the median of a few calls) at every length of a fixed
grid up to n, and draws the times next to the counts that do not depend on the machine:
sequential steps and the longest path between two positions (paper §4, Table 1).
Measurements are cached, and sizes are capped so that one redraw stays well under a second.
"""

import statistics
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


def measure_forward(kind: str, n: int, d: int, *, batch: int = 1, repeats: int = 3) -> float:
    """Seconds per forward pass of a ``kind`` layer ("lstm" or "attention") on ``(batch, n, d)``.

    One warm-up call, then the median of ``repeats`` calls timed with ``time.perf_counter``,
    without gradients. ``n`` is capped at ``LENGTHS[-1]`` and ``d`` at ``WIDTHS[-1]``.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")
    for name, value, cap in (("n", n, LENGTHS[-1]), ("d", d, WIDTHS[-1])):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= cap:
            raise ValueError(f"{name} must be an int in 1..{cap}; got {value!r}")
    if d % 4:
        raise ValueError(f"d must be divisible by the 4 attention heads; got {d}")
    layer, x = _layer(kind, d), torch.zeros(batch, n, d).normal_(generator=torch.Generator())

    def forward():
        return layer(x) if kind == "lstm" else layer(x, x, x)

    times = []
    with torch.no_grad():
        forward()  # warm-up: first calls allocate buffers and pick kernels
        for _ in range(repeats):
            start = time.perf_counter()
            forward()
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def describe_sequence_cost(n: int, d: int, timings: dict) -> str:
    """The picture in words: which layer was faster at ``n`` and ``d``, the measured times
    (ms, 2 decimals) from the shortest length to ``n``, and the counts at ``n``."""
    lengths = [length for length in LENGTHS if length <= n]
    ms = {kind: [1000 * timings[kind, length, d] for length in lengths] for kind in KINDS}
    lstm, attention = ms["lstm"][-1], ms["attention"][-1]
    if f"{lstm:.2f}" == f"{attention:.2f}":
        verdict = "both take the same time"
    else:
        faster = "self-attention" if attention < lstm else "the LSTM"
        verdict = f"{faster} is {max(lstm, attention) / min(lstm, attention):.1f}× faster"
    span = f"from n = {lengths[0]} to {n}" if len(lengths) > 1 else f"at n = {n}"
    trend = {
        kind: " → ".join(f"{t:.2f}" for t in dict.fromkeys((v[0], v[-1]))) for kind, v in ms.items()
    }
    counts = path_lengths(n)
    return (
        f"Measured on this machine, one layer with d = {d}, batch 1: at n = {n} the LSTM takes "
        f"{lstm:.2f} ms and self-attention {attention:.2f} ms, so {verdict}. Times {span}: "
        f"LSTM {trend['lstm']} ms, self-attention {trend['attention']} ms. On any machine, at "
        f"n = {n}: {counts['rnn_steps']:,} sequential steps against {counts['attention_steps']}, "
        f"and a longest path of {counts['rnn_path']:,} hops against {counts['attention_path']}."
    )


def render_sequence_cost(n: int, d: int, timings: dict) -> Figure:
    """Two panels: the measured times (ms) up to ``n``, and the steps and paths at ``n``.

    ``timings`` maps ``(kind, length, d)`` to seconds, as :func:`measure_forward` returns them.
    :func:`refresh_sequence_cost` redraws the figure in place for another n or d.
    """
    fig = Figure(figsize=(10, 3.8), dpi=100)
    # Fixed margins, with room for the labels: when ink comes within 0.1 inch of the canvas
    # edge, figure_png must let savefig find it, and that draws the figure three times.
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.16, top=0.9, wspace=0.25)
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
    refresh_sequence_cost(fig, n, d, timings)
    return fig


def refresh_sequence_cost(fig: Figure, n: int, d: int, timings: dict) -> None:
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

    Attributes:
        timings: ``(kind, n, d) -> seconds``, every measurement made so far.
        figure: the figure drawn last; ``text`` its text alternative.
        n_select, d_select, status, output: the widgets.
    """

    title = "Sequence-cost explorer"
    note = (
        "The times were measured on the computer that built this page, when it was built; "
        "the live notebook measures them on yours."
    )

    def __init__(self, n: int = 256, d: int = 128, *, repeats: int = 3):
        import ipywidgets as w  # here, so that importing course_lib.widgets stays light

        if n not in LENGTHS or d not in WIDTHS:
            raise ValueError(f"n must be one of {LENGTHS} and d one of {WIDTHS}; got {n}, {d}")
        self.repeats, self.timings, self.figure = repeats, {}, None
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
        """Time both layers at every grid length up to ``n`` not measured yet."""
        for length in (length for length in LENGTHS if length <= n):
            for kind in KINDS:
                if (kind, length, d) not in self.timings:
                    self.timings[kind, length, d] = measure_forward(
                        kind, length, d, repeats=self.repeats
                    )

    def update(self, change=None) -> None:
        """Measure what is missing, redraw, and say what the numbers mean."""
        n, d = self.n_select.value, self.d_select.value
        self.measure(n, d)
        if self.figure is None:
            self.figure = render_sequence_cost(n, d, self.timings)
        else:  # in place: a new figure per redraw would also be garbage for Python to collect
            refresh_sequence_cost(self.figure, n, d, self.timings)
        lstm, attention = self.timings["lstm", n, d], self.timings["attention", n, d]
        faster = "self-attention" if attention < lstm else "the LSTM"
        ratio = max(lstm, attention) / min(lstm, attention)
        self.status.value = (
            f"n = {n}, d = {d}: LSTM {1000 * lstm:.2f} ms, self-attention "
            f"{1000 * attention:.2f} ms on this machine; {faster} is {ratio:.1f}× faster. "
            f"Table 1 counts n²·d = {n * n * d:,} against n·d² = {n * d * d:,} multiply-adds."
        )
        self.text = describe_sequence_cost(n, d, self.timings)
        self.output.outputs = (png_output(figure_png(self.figure), self.text),)

    def _static_controls(self) -> list:
        """n and d over all their values (each measured when first shown)."""
        return [
            widget_control("n", self.n_select, "slider", [(n, f"{n:,}") for n in LENGTHS]),
            widget_control("d", self.d_select, "slider", [(d, str(d)) for d in WIDTHS]),
        ]
