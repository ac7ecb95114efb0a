"""Lesson 1's timing and path-length explorer, without a browser or a kernel.

Timings depend on the machine, so the tests assert what a measurement is (positive seconds,
one per layer and length, the global RNG untouched) and what the figure shows, never how
fast anything is.
"""

import base64

import pytest
import torch
from matplotlib.figure import Figure

from course_lib.widgets import figure_png, sequence_cost
from course_lib.widgets.sequence_cost import (
    KINDS,
    LENGTHS,
    SequenceCostExplorer,
    describe_sequence_cost,
    draw_cost_crossover,
    layer_costs,
    measure_forward,
    path_lengths,
    refresh_sequence_cost,
    render_sequence_cost,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "n, expected", [(5, (5, 4, 1, 1)), (100, (100, 99, 1, 1)), (1000, (1000, 999, 1, 1))]
)
def test_path_lengths_are_the_lessons_table(n, expected):
    counts = path_lengths(n)
    assert tuple(counts.values()) == expected
    assert list(counts) == ["rnn_steps", "rnn_path", "attention_steps", "attention_path"]


def test_layer_costs_cross_over_at_n_equal_d():
    assert layer_costs(50, 512) == (1_280_000, 13_107_200)
    assert layer_costs(512, 512) == (134_217_728, 134_217_728)
    assert layer_costs(1000, 512)[0] > layer_costs(1000, 512)[1]


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: path_lengths(0), "n"),
        (lambda: path_lengths(2.0), "n"),
        (lambda: layer_costs(5, True), "d"),
        (lambda: measure_forward("gru", 8, 32), "kind"),
        (lambda: measure_forward("lstm", 2048, 32), "n"),
        (lambda: measure_forward("lstm", 8, 512), "d"),
        (lambda: measure_forward("attention", 8, 30), "d"),
        (lambda: SequenceCostExplorer(n=100), "n must be one of"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("kind", KINDS)
def test_measure_forward_returns_seconds_and_leaves_the_rng_alone(kind):
    sequence_cost._layers.clear()  # building a layer draws initial weights
    before = torch.random.get_rng_state()
    seconds = measure_forward(kind, 16, 32, repeats=2)
    assert isinstance(seconds, float) and 0 < seconds < 1
    assert torch.equal(torch.random.get_rng_state(), before)


def test_the_timed_layers_are_the_ones_the_legend_names():
    lstm, attention = sequence_cost._layer("lstm", 32), sequence_cost._layer("attention", 32)
    assert isinstance(lstm, torch.nn.LSTM) and lstm.hidden_size == 32 and lstm.batch_first
    assert attention.n_heads == 4 and attention.d_model == 32
    assert not lstm.training and not attention.training


def fake_timings(d):
    """LSTM time grows linearly in n, attention quadratically: they cross at n = 256."""
    timings = {("lstm", n, d): n * 1e-5 for n in LENGTHS}
    timings |= {("attention", n, d): n * n * 1e-5 / 256 for n in LENGTHS}
    return timings


@pytest.mark.parametrize("n", [16, 64, 512])
def test_the_description_says_which_layer_was_faster_and_its_times(n):
    timings = fake_timings(64)
    lstm, attention = 1000 * timings["lstm", n, 64], 1000 * timings["attention", n, 64]
    text = describe_sequence_cost(n, 64, timings)
    faster = "self-attention" if attention < lstm else "the LSTM"
    ratio = max(lstm, attention) / min(lstm, attention)
    assert f"LSTM takes {lstm:.2f} ms and self-attention {attention:.2f} ms" in text
    assert f"so {faster} is {ratio:.1f}× faster" in text
    first = 1000 * timings["lstm", 16, 64]
    assert (f"LSTM {first:.2f} → {lstm:.2f} ms" in text) == (n > 16)
    assert f"{n:,} sequential steps against 1" in text and f"{n - 1:,} hops against 1" in text


def test_the_description_calls_a_draw_a_draw():
    timings = {(kind, 16, 32): 0.001 for kind in KINDS}
    assert "so both take the same time" in describe_sequence_cost(16, 32, timings)


def test_render_plots_the_timings_in_ms_up_to_n_and_the_counts_at_n():
    fig = render_sequence_cost(128, 64, fake_timings(64))
    left, right = fig.axes
    lines = {line.get_gid(): line for line in left.get_lines()}
    assert list(lines["lstm"].get_xdata()) == [16, 32, 64, 128]
    assert list(lines["lstm"].get_ydata()) == pytest.approx([0.16, 0.32, 0.64, 1.28])
    assert lines["attention"].get_ydata()[-1] == pytest.approx(1000 * 128 * 128 * 1e-5 / 256)
    assert "this machine" in left.get_title() and "d = 64" in left.get_title()
    assert "ms" in left.get_ylabel() and "n" in left.get_xlabel()
    heights = [bar.get_height() for bar in right.patches]
    assert heights == [128, 127, 1, 1]  # recurrent steps, path; attention steps, path
    assert right.patches[0].get_hatch() == "//"  # told apart by hatching, not colour alone
    assert "n = 128" in right.get_title()
    assert [t.get_text() for t in right.texts] == ["128", "1", "127", "1"]


def tick_labels(ax, which: str) -> list[str]:
    """The tick labels of an axis, drawn as glyph outlines (one collection per axis)."""
    return next(c.labels for c in ax.collections if c.get_gid() == f"{which} tick labels")


def test_the_tick_labels_are_the_grid_lengths_and_powers_of_ten():
    left, right = render_sequence_cost(128, 64, fake_timings(64)).axes
    assert tick_labels(left, "x") == ["16", "32", "64", "128"]
    assert tick_labels(right, "x") == ["sequential steps", "longest path (hops)"]
    assert tick_labels(right, "y")[:2] == ["$\\mathdefault{10^{0}}$", "$\\mathdefault{10^{1}}$"]
    assert all(float(label) > 0 for label in tick_labels(left, "y"))  # milliseconds


def test_refresh_in_place_draws_what_a_new_figure_draws():
    timings = fake_timings(64) | fake_timings(128)
    fig = render_sequence_cost(1024, 64, timings)
    refresh_sequence_cost(fig, 32, 128, timings)
    assert figure_png(fig) == figure_png(render_sequence_cost(32, 128, timings))
    assert tick_labels(fig.axes[0], "x") == ["16", "32"]


def test_every_setting_fits_the_canvas_so_a_redraw_draws_once(monkeypatch):
    """figure_png falls back to savefig (three draws) when ink nears the canvas edge."""

    def savefig(*args, **kwargs):
        raise AssertionError("the picture reached the canvas edge")

    monkeypatch.setattr(Figure, "savefig", savefig)
    # 0.02 ms (a fast LSTM at n = 16) to 1 s (slow attention at n = 1024): the widest labels
    scale = {"lstm": 0.125, "attention": 25}
    wide = {key: seconds * scale[key[0]] for key, seconds in fake_timings(32).items()}
    fig = render_sequence_cost(16, 32, fake_timings(32))
    for timings in (fake_timings(32), wide):
        for n in LENGTHS:
            refresh_sequence_cost(fig, n, 32, timings)
            figure_png(fig)


def test_cost_crossover_plot_marks_n_equal_d():
    ax = Figure().add_subplot()
    draw_cost_crossover(ax, d=64, n_max=256)
    lines = {line.get_gid(): line for line in ax.get_lines()}
    ns = list(lines["attention"].get_xdata())
    attention, recurrent = lines["attention"].get_ydata(), lines["recurrent"].get_ydata()
    cheaper = [n for n, a, r in zip(ns, attention, recurrent, strict=True) if a < r]
    assert cheaper and max(cheaper) < 64 <= min(set(ns) - set(cheaper))
    assert list(lines["crossover"].get_xdata()) == [64, 64]
    assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()


@pytest.fixture
def explorer(monkeypatch):
    calls = []

    def fake_measure(kind, n, d, *, batch=1, repeats=3):
        calls.append((kind, n, d))
        return fake_timings(d)[kind, n, d]

    monkeypatch.setattr(sequence_cost, "measure_forward", fake_measure)
    explorer = SequenceCostExplorer(n=64, d=32)
    explorer.calls = calls
    return explorer


def test_the_explorer_measures_each_point_once_and_redraws_on_every_change(explorer):
    assert sorted(explorer.calls) == sorted((k, n, 32) for k in KINDS for n in (16, 32, 64))
    explorer.n_select.value = 256
    assert len(explorer.calls) == 2 * 5
    explorer.n_select.value = 32  # measured already: a redraw, no new timing
    assert len(explorer.calls) == 2 * 5
    assert list(explorer.figure.axes[0].get_lines()[0].get_xdata()) == [16, 32]
    explorer.d_select.value = 64
    assert ("lstm", 32, 64) in explorer.calls and len(explorer.calls) == 2 * 5 + 2 * 2


def test_the_explorer_redraws_one_figure_and_shows_what_a_new_one_shows(explorer):
    figure = explorer.figure
    explorer.n_select.value = 512
    explorer.d_select.value = 64
    explorer.n_select.value = 128
    assert explorer.figure is figure
    shown = base64.b64decode(explorer.output.outputs[0]["data"]["image/png"])
    assert shown == figure_png(render_sequence_cost(128, 64, explorer.timings))


def test_the_explorer_shows_a_png_and_says_which_layer_won(explorer):
    (output,) = explorer.output.outputs
    assert base64.b64decode(output["data"]["image/png"]).startswith(PNG_MAGIC)
    assert output["data"]["text/plain"] == describe_sequence_cost(64, 32, explorer.timings)
    assert "self-attention is 4.0× faster" in explorer.status.value  # 0.64 ms vs 0.16 ms
    explorer.n_select.value = 1024
    assert "the LSTM is 4.0× faster" in explorer.status.value
    assert "n²·d = 33,554,432" in explorer.status.value
