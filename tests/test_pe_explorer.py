"""The positional-encoding explorer and its numbers, without a browser or a kernel.

Setting a control's ``.value`` calls the observers synchronously, so each test moves a
control and inspects what was drawn: the images' arrays, the lines' data, the titles.
"""

import base64
import io
import math
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
from PIL import Image

from course_lib.figure_text import number
from course_lib.positional import sinusoidal_encoding
from course_lib.widgets.pe_data import (
    describe_pe,
    diagonal_spread,
    format_wavelength,
    frequencies,
    rotation_error,
    shift_matrix,
    similarity,
    wavelength,
)
from course_lib.widgets.pe_explorer import D_MODELS, PEExplorer, dimension_options
from course_lib.widgets.pe_figures import MAX_WAVES, PEFigure, render_pe

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def explorer(tmp_path):
    return PEExplorer(save_dir=tmp_path)


def shown_png(explorer) -> bytes:
    (output,) = explorer.output.outputs
    return base64.b64decode(output["data"]["image/png"])


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


# The numbers


def test_frequencies_fall_from_1_and_wavelengths_match_the_lesson():
    omega = frequencies(4)
    torch.testing.assert_close(omega, torch.tensor([1.0, 0.01], dtype=torch.float64))
    assert wavelength(0, 4) == pytest.approx(2 * math.pi)
    assert wavelength(3, 4) == pytest.approx(2 * math.pi * 100)  # ≈ 628, the worked example
    assert wavelength(511, 512) == pytest.approx(2 * math.pi * 10000 ** (510 / 512))
    assert (frequencies(512).diff() < 0).all()  # low dimensions turn fastest


@pytest.mark.parametrize("k", [1, 3, -4, 17])
def test_shift_matrix_moves_every_position_by_k_in_float64(k):
    d_model = 16
    pos = torch.arange(10, 30, dtype=torch.float64)[:, None]
    angle = pos * frequencies(d_model)  # (T, D/2), exact float64 table
    pe = torch.stack([angle.sin(), angle.cos()], -1).flatten(-2)
    moved = (pos + k) * frequencies(d_model)
    expected = torch.stack([moved.sin(), moved.cos()], -1).flatten(-2)
    R = shift_matrix(k, d_model)
    assert (pe @ R.T - expected).abs().max() < 1e-12
    assert torch.count_nonzero(R) == 2 * d_model  # block-diagonal: 2 x 2 blocks only
    torch.testing.assert_close(R @ R.T, torch.eye(d_model, dtype=torch.float64))  # a rotation


def test_rotation_error_uses_course_libs_table():
    here, there, rotated, error = rotation_error(5, 3, 64)
    table = sinusoidal_encoding(9, 64).double()
    assert torch.equal(here, table[5]) and torch.equal(there, table[8])
    assert error < 1e-6 and error == (there - rotated).abs().max()


def test_similarity_is_a_cosine_that_depends_only_on_the_offset():
    sim = similarity(sinusoidal_encoding(50, 32))
    torch.testing.assert_close(sim.diagonal(), torch.ones(50, dtype=torch.float64))
    assert diagonal_spread(sim) < 1e-6
    scrambled = sim.clone()
    scrambled[3, 7] += 0.1
    assert diagonal_spread(scrambled) == pytest.approx(0.1, abs=1e-6)


# The figure


def test_render_pe_draws_the_table_the_similarity_and_the_waves():
    fig = render_pe(d_model=16, position=4, dims=(0, 5), offset=2, max_len=30)
    axes = {ax.get_gid(): ax for ax in fig.axes if ax.get_gid()}
    table = axes["table"].images[0].get_array()
    np.testing.assert_allclose(table, sinusoidal_encoding(30, 16).numpy())
    sim = axes["similarity"].images[0].get_array()
    np.testing.assert_allclose(sim, similarity(sinusoidal_encoding(30, 16)).numpy())
    legend = [t.get_text() for t in axes["waves"].get_legend().get_texts()]
    assert legend == ["0 sin, λ=6.28", f"5 cos, λ={wavelength(5, 16):.3g}"]
    for ax in axes.values():
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
    assert "d_model = 16, 30 positions" in fig.texts[0].get_text()


def test_update_marks_the_position_everywhere_and_reports_the_rotation():
    picture = PEFigure()
    view = picture.update(d_model=32, position=7, dims=(2,), offset=5, max_len=40)
    for line in picture.marks[:4]:
        assert list(line.get_ydata()) == [7, 7]
    assert list(picture.marks[4].get_xdata()) == [7, 7]
    (here,) = picture.here
    assert here.get_ydata()[0] == pytest.approx(sinusoidal_encoding(8, 32)[7, 2].item())
    assert view.error < 1e-6
    title = picture.axes["rotation"].get_title()
    assert "PE(7+5) vs R_5·PE(7)" in title and f": error {view.error:.1e}" in title
    torch.testing.assert_close(view.shifted, sinusoidal_encoding(13, 32)[12].double())
    rotated = picture.rotation[2].get_ydata()
    np.testing.assert_allclose(
        rotated, (shift_matrix(5, 32) @ sinusoidal_encoding(8, 32)[7].double()).numpy()
    )


def test_a_redraw_after_moving_only_the_position_matches_a_fresh_drawing():
    picture = PEFigure()
    picture.update(d_model=64, position=3, dims=(0, 8), offset=2, max_len=60)
    picture.png()
    picture.update(d_model=64, position=41, dims=(0, 8), offset=9, max_len=60)
    pasted = picture.png()  # the still parts come from the first drawing
    fresh = PEFigure()
    fresh.update(d_model=64, position=41, dims=(0, 8), offset=9, max_len=60)
    assert pasted.startswith(PNG_MAGIC)
    assert np.array_equal(pixels(pasted), pixels(fresh.png()))


def test_going_back_to_earlier_settings_reuses_their_drawing_exactly():
    picture = PEFigure()
    picture.update(d_model=64, position=5, dims=(0, 8), offset=2, max_len=60)
    picture.png()
    picture.update(d_model=16, position=5, dims=(0, 8), offset=2, max_len=60)
    picture.png()
    picture.update(d_model=64, position=20, dims=(0, 8), offset=2, max_len=60)
    reused = picture.png()
    fresh = PEFigure()
    fresh.update(d_model=64, position=20, dims=(0, 8), offset=2, max_len=60)
    assert np.array_equal(pixels(reused), pixels(fresh.png()))
    assert "d_model = 64" in picture.title.get_text()


def test_a_new_setting_drawn_over_the_still_parts_matches_a_fresh_drawing():
    """The colour bars and fixed axes are drawn once; nothing of the last setting stays."""
    picture = PEFigure()
    picture.update(d_model=16, position=5, dims=(0, 3, 4, 8), offset=2, max_len=200)
    picture.png()
    picture.update(d_model=128, position=5, dims=(0, 8), offset=2, max_len=30)
    drawn = picture.png()
    fresh = PEFigure()
    fresh.update(d_model=128, position=5, dims=(0, 8), offset=2, max_len=30)
    assert np.array_equal(pixels(drawn), pixels(fresh.png()))


def test_tick_labels_follow_d_model_and_the_number_of_positions():
    picture = PEFigure()  # tick labels are glyph outlines, one collection per axis
    picture.update(d_model=16, max_len=200, position=3, dims=(0, 8))
    picture.update(d_model=512, max_len=30, position=3, dims=(0, 8))
    labels = {key: collection.labels for key, collection in picture.ticks.items()}
    for dimensions in (labels["table", "x"], labels["rotation", "x"]):
        assert dimensions == ["0", "200", "400"]
    for key in (("table", "y"), ("waves", "x"), ("similarity", "x"), ("similarity", "y")):
        assert labels[key] == ["0", "10", "20"]  # positions
    assert labels["waves", "y"] == labels["rotation", "y"] == ["−1", "0", "1"]  # fixed


def test_too_many_dimensions_are_cut_to_six_and_repeats_dropped():
    view = PEFigure().update(d_model=64, dims=(0, 0, 1, 2, 3, 4, 5, 6, 7), max_len=20)
    assert view.dims == (0, 1, 2, 3, 4, 5)


# The explorer


def test_explorer_shows_a_png_of_the_starting_settings(explorer):
    assert shown_png(explorer).startswith(PNG_MAGIC)
    assert explorer.view.table.shape == (100, 64) and explorer.view.dims == (0, 8, 20)
    controls = explorer.widget.children[0].layout  # fixed: never squeezed to 0 px
    assert controls.flex == "0 0 auto" and controls.min_width == "300px"
    assert explorer.widget.layout.flex_flow == "row wrap"  # narrow screens: picture below


def test_d_model_slider_rebuilds_the_dimension_slider_and_keeps_the_waves_that_still_exist(
    explorer,
):
    explorer.d_model.value = 16
    assert explorer.view.table.shape == (100, 16)
    assert len(explorer.dimension.options) == 16 and explorer.waves == (0, 8)
    assert explorer.dimension.options[1] == ("1 cos, λ = 6.28", 1)
    explorer.set_waves((9, 15))
    explorer.d_model.value = 8
    assert explorer.waves == (0,) and explorer.view.dims == (0,)  # nothing left: dimension 0
    assert explorer.d_model.options == D_MODELS


def _listed(explorer) -> list[str]:
    return re.findall(r"<li>(.*?)</li>", explorer.wave_list.value)


def test_add_and_remove_wave_buttons_change_the_waves_drawn_and_listed(explorer):
    assert _listed(explorer) == ["0 sin, λ = 6.28", "8 sin, λ = 19.9", "20 sin, λ = 112"]
    before = shown_png(explorer)
    explorer.dimension.value = 1
    explorer.add_wave.click()
    assert explorer.waves == explorer.view.dims == (0, 8, 20, 1)
    assert (
        _listed(explorer)[-1] == "1 cos, λ = 6.28"
        and "Added dimension 1." in explorer.wave_list.value
    )
    assert shown_png(explorer) != before
    explorer.dimension.value = 8
    explorer.remove_wave.click()
    assert explorer.waves == (0, 20, 1) and len(_listed(explorer)) == 3
    assert "dimension 8 (" not in explorer.text and "dimension 1 (cos" in explorer.text


def test_the_buttons_say_why_they_did_nothing(explorer):
    explorer.dimension.value = 8
    explorer.add_wave.click()
    assert (
        explorer.waves == (0, 8, 20) and "Dimension 8 is drawn already." in explorer.wave_list.value
    )
    explorer.dimension.value = 9
    explorer.remove_wave.click()
    assert explorer.waves == (0, 8, 20) and "Dimension 9 is not drawn" in explorer.wave_list.value
    for dim in (1, 2, 3):
        explorer.dimension.value = dim
        explorer.add_wave.click()
    assert len(explorer.waves) == MAX_WAVES == len(_listed(explorer))
    explorer.dimension.value = 4
    explorer.add_wave.click()
    assert len(explorer.waves) == MAX_WAVES
    assert f"At most {MAX_WAVES} waves are drawn" in explorer.wave_list.value
    explorer.set_waves((3,))
    explorer.dimension.value = 3
    explorer.remove_wave.click()
    assert explorer.waves == (3,) and "One wave stays drawn" in explorer.wave_list.value


def test_the_wave_list_and_the_limit_are_said_in_the_controls(explorer):
    assert f"Waves drawn (3, at most {MAX_WAVES})" in explorer.wave_list.value
    assert "course-live" in explorer.wave_list._dom_classes  # read out when it changes


def view_titles(picture, d_model, position, dims, offset) -> str:
    picture.update(d_model=d_model, position=position, dims=dims, offset=offset)
    picture.png()
    return " ".join(ax.get_title() for ax in picture.axes.values())


@pytest.mark.parametrize(
    "d_model, position, dims, offset",
    [(64, 10, (0, 8, 20), 3), (16, 0, (1, 15), 7), (512, 99, (0, 300), 50)],
)
def test_the_description_names_the_waves_the_similarity_peak_and_the_shift(
    d_model, position, dims, offset
):
    view = PEFigure().update(d_model=d_model, position=position, dims=dims, offset=offset)
    text = describe_pe(view, position, offset)
    pe = sinusoidal_encoding(100, d_model).double()
    for dim in dims:
        value = round(pe[position, dim].item(), 2) + 0.0
        kind = ("sin", "cos")[dim % 2]
        assert (
            f"dimension {dim} ({kind}, λ = {format_wavelength(wavelength(dim, d_model))}): {value:.2f}"
            in text
        )
    sim = pe @ pe.T / (d_model / 2)
    neighbours = [sim[position, j].item() for j in (position - 1, position + 1) if 0 <= j < 100]
    assert (
        f"peaks at 1.00 on itself, {round(max(neighbours), 2) + 0.0:.2f} one position away" in text
    )
    low = sim[position].min().item()
    distance = (sim[position] - low).abs().argmin().item() - position
    assert f"lowest {round(low, 2) + 0.0:.2f} at distance {abs(distance)}" in text
    assert f"d_model = {d_model}, 100 positions, position {position} marked" in text
    error = f"error {number(view.error)}"  # as the picture prints it: 3.7e-08, not 0.00
    assert f"R_{offset} · PE({position}) = PE({position + offset}) up to float32 round-off" in text
    assert error in text and "e-0" in error
    assert error in view_titles(PEFigure(), d_model, position, dims, offset)


def test_position_slider_redraws_and_changes_the_picture(explorer):
    before = shown_png(explorer)
    explorer.position.value = 55
    assert list(explorer.picture.marks[0].get_ydata()) == [55, 55]
    assert "PE(55+3)" in explorer.picture.axes["rotation"].get_title()
    assert shown_png(explorer) != before


def test_fewer_positions_pull_the_position_back_inside(explorer):
    explorer.position.value = 90
    explorer.max_len.value = 30
    assert explorer.position.max == 29 and explorer.position.value == 29
    assert explorer.view.table.shape == (30, 64)


def test_offset_slider_keeps_the_rotation_exact(explorer):
    for k in (1, 17, 50):
        explorer.offset.value = k
        assert explorer.view.error < 1e-6
        expected = sinusoidal_encoding(explorer.position.value + k + 1, 64)[-1].double()
        torch.testing.assert_close(explorer.view.shifted, expected)


def test_dimension_options_name_the_function_and_the_wavelength():
    options = dimension_options(4)
    assert [label for label, _ in options] == [
        "0 sin, λ = 6.28",
        "1 cos, λ = 6.28",
        "2 sin, λ = 628",
        "3 cos, λ = 628",
    ]


def test_save_writes_the_png_on_show(explorer, tmp_path):
    explorer.position.value = 12
    path = explorer.save()
    assert path == tmp_path / "positional-encoding-d64-pos12.png"
    assert path.read_bytes() == shown_png(explorer)
    assert path.name in explorer.status.value
    explorer.offset.value = 4
    assert path.name not in explorer.status.value  # the note was about the previous picture
    assert "R_4·PE(12): error" in explorer.status.value  # the numbers the picture prints


def test_save_reports_a_failure_in_the_status(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    explorer = PEExplorer(save_dir=blocker)
    assert explorer.save() is None and "could not save" in explorer.status.value


# Errors name the argument


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: frequencies(7), ValueError, "d_model must be even"),
        (lambda: frequencies(8.0), TypeError, "d_model must be an int"),
        (lambda: wavelength(8, 8), ValueError, "dim must be an int in 0 .. 7"),
        (lambda: shift_matrix(1.5, 8), TypeError, "k must be an int"),
        (lambda: rotation_error(-1, 2, 8), ValueError, "position must be an int >= 0"),
        (lambda: rotation_error(2, -3, 8), ValueError, "position + k must be >= 0"),
        (lambda: similarity([[1.0]]), TypeError, "pe must be a torch.Tensor"),
        (lambda: diagonal_spread(torch.zeros(3, 4)), ValueError, "sim must be square"),
        (lambda: diagonal_spread([[1.0]]), TypeError, "sim must be a torch.Tensor"),
        (
            lambda: PEFigure().update(position=100, max_len=100),
            ValueError,
            "position must be in 0 .. 99",
        ),
        (lambda: PEFigure().update(max_len=1), ValueError, "max_len must be an int >= 2"),
        (
            lambda: PEFigure().update(d_model=8, dims=(9,)),
            ValueError,
            "dim must be an int in 0 .. 7",
        ),
        (lambda: PEExplorer(d_model=48), ValueError, "d_model must be one of"),
        (lambda: PEExplorer(max_len=500), ValueError, "max_len must be an int in 10 .. 200"),
        (lambda: PEExplorer(d_model=8, dims=(8,)), ValueError, "dims must be ints in 0 .. 7"),
        (lambda: PEExplorer(dims=range(7)), ValueError, "dims must hold 1 to 6 dimensions; got 7"),
        (lambda: PEExplorer(dims=()), ValueError, "dims must hold 1 to 6 dimensions; got 0"),
        (lambda: PEExplorer(d_model=8).set_waves((9,)), ValueError, "dims must be ints in 0 .. 7"),
    ],
)
def test_bad_inputs_raise_errors_that_name_the_argument(call, error, words):
    with pytest.raises(error) as caught:
        call()
    assert words in str(caught.value)


def test_importing_the_explorer_and_the_checks_loads_neither_ipywidgets_nor_pyplot():
    code = (
        "import sys, course_lib.widgets.pe_explorer, course_lib.checks.lesson05; "
        "print('ipywidgets' in sys.modules, 'matplotlib.pyplot' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]
