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
    seconds = measure_forward(kind, 16, 32, samples=2)
    assert isinstance(seconds, float) and 0 < seconds < 1
    assert torch.equal(torch.random.get_rng_state(), before)


def test_the_samples_are_taken_in_rounds_over_every_point(monkeypatch):
    """A slow moment of the machine then falls on every point alike."""
    timed = []

    def seconds(forward, calls):
        timed.append(forward.point)
        return 1e-3

    def forward(kind, n, d, batch):
        def run():
            return None

        run.point = (kind, n, d)
        return run

    monkeypatch.setattr(sequence_cost, "_seconds", seconds)
    monkeypatch.setattr(sequence_cost, "_forward", forward)
    points = [("lstm", 16, 32), ("attention", 16, 32), ("lstm", 32, 32)]
    samples = sequence_cost.measure_grid(points, samples=3)
    assert samples == {point: [1e-3] * 3 for point in points}
    assert timed == points + points * 3  # the warm-up calls, then three rounds


def test_enough_calls_per_sample_for_small_layers(monkeypatch):
    calls = []

    def seconds(forward, n_calls):
        calls.append(n_calls)
        return 1e-5  # 10 µs a call: one sample needs many of them

    monkeypatch.setattr(sequence_cost, "_seconds", seconds)
    sequence_cost.measure_grid([("lstm", 16, 32)], samples=2)
    assert calls == [1, 200, 200]  # the warm-up, then MAX_CALLS (2 ms would need 200)


def test_the_fastest_sample_is_drawn_and_the_spread_reported(monkeypatch):
    """Other work only adds time: one disturbed sample moves neither the point nor the trend."""
    clean = {("lstm", n, 32): n * 1e-5 for n in (16, 32, 64)}
    clean |= {("attention", n, 32): n * n * 1e-7 for n in (16, 32, 64)}

    def grid(points, samples=sequence_cost.SAMPLES, **_):
        # the second round of the smallest points ran while something else was busy
        return {
            p: [clean[p] * (1 + 3 * (i == 1 and p[1] == 16)) for i in range(samples)]
            for p in points
        }

    monkeypatch.setattr(sequence_cost, "measure_grid", grid)
    explorer = SequenceCostExplorer(n=64, d=32)
    assert explorer.timings == pytest.approx(clean)
    lstm = [explorer.timings["lstm", n, 32] for n in (16, 32, 64)]
    assert lstm == sorted(lstm)  # the LSTM's time grows with n, as it should
    assert explorer.spreads["lstm", 16, 32] == pytest.approx(3.0)
    assert explorer.spreads["lstm", 64, 32] == 0
    noise = "took up to 4.0× the fastest at n = 16 and 1.0× at n = 64"
    assert noise in explorer.text and noise in explorer.status.value


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
    assert f"LSTM {lstm:.2f} ms, self-attention (4 heads) {attention:.2f} ms" in text
    assert f"; {faster} is {ratio:.1f}× faster" in text
    first = 1000 * timings["lstm", 16, 64]
    assert (f"LSTM {first:.2f} → " in text) == (n > 16)
    assert f"{n:,} sequential steps against 1" in text and f"{n - 1:,} hops against 1" in text


def test_the_description_calls_a_draw_a_draw():
    timings = {(kind, 16, 32): 0.001 for kind in KINDS}
    assert "; both take the same time" in describe_sequence_cost(16, 32, timings)


@pytest.mark.parametrize(
    "n, words",
    [
        (16, "Crossing: at n = 16 only, self-attention is faster; raise n to see the curves"),
        (128, "Crossing: not yet, self-attention is faster at n = 128; raise n"),
        (256, "Crossing: not yet, self-attention is faster at n = 256; raise n"),
        (512, "Crossing: between n = 256 and 512; self-attention is slower from n = 512 on"),
        (1024, "Crossing: between n = 256 and 512; self-attention is slower from n = 512 on"),
    ],
)
def test_the_crossing_is_where_attention_becomes_and_stays_slower(n, words):
    timings = fake_timings(64)  # slower from 512 on
    timings["attention", 256, 64] = timings["lstm", 256, 64]  # a tie is not slower
    timings["attention", 16, 64] = 1.0  # a disturbed first point does not make a crossing
    if n > 16:
        assert sequence_cost.crossing(n, 64, timings) == words
    else:
        assert sequence_cost.crossing(n, 64, fake_timings(64)) == words


def test_the_crossing_says_when_one_layer_is_faster_everywhere():
    lstm_faster = {(k, n, 32): (1 if k == "lstm" else 2) * n for k in KINDS for n in LENGTHS}
    assert sequence_cost.crossing(64, 32, lstm_faster) == (
        "Crossing: none, the LSTM is faster at every n from 16 to 64"
    )
    attention_faster = {(k, n, 32): (2 if k == "lstm" else 1) * n for k in KINDS for n in LENGTHS}
    assert sequence_cost.crossing(1024, 32, attention_faster) == (
        "Crossing: not up to n = 1,024, the largest length here; self-attention is faster"
    )


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

    def fake_grid(points, *, samples=sequence_cost.SAMPLES, batch=1):
        calls.extend(points)
        return {(kind, n, d): [fake_timings(d)[kind, n, d]] * samples for kind, n, d in points}

    monkeypatch.setattr(sequence_cost, "measure_grid", fake_grid)
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
    expected = render_sequence_cost(128, 64, explorer.timings, explorer.spreads)
    assert shown == figure_png(expected)


def test_the_explorer_shows_a_png_and_says_which_layer_won(explorer):
    (output,) = explorer.output.outputs
    assert base64.b64decode(output["data"]["image/png"]).startswith(PNG_MAGIC)
    text = describe_sequence_cost(64, 32, explorer.timings, explorer.spreads)
    assert output["data"]["text/plain"] == text
    assert "self-attention is 4.0× faster" in explorer.status.value  # 0.64 ms vs 0.16 ms
    explorer.n_select.value = 1024
    assert "the LSTM is 4.0× faster" in explorer.status.value
    assert "n²·d = 33,554,432" in explorer.status.value


def test_without_spreads_the_noise_line_claims_no_spread():
    assert sequence_cost.noise(64, 32, {}).startswith("Noise: one timing per point here")
    assert "1.0×" not in sequence_cost.noise(64, 32, {})
