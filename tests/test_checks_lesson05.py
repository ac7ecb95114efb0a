"""Tests of the lesson 5 checks (``course_lib/checks/lesson05.py``).

For every exercise: the reference answer and equally valid variants pass, the lesson's stub
is "not done", and typical mistakes fail with a message that names them. Answers are written
the way a learner would write them.
"""

import math

import numpy as np
import pytest
import torch

from course_lib.attention import scaled_dot_product_attention
from course_lib.checks import EXERCISES, FAILED, NOT_DONE, PASSED, check, exercises, lesson05
from course_lib.positional import sinusoidal_encoding

# Reference answers, as a learner would write them -------------------------------------------


def positional_encoding(max_len, d_model):
    position = torch.arange(max_len).unsqueeze(1)  # (max_len, 1)
    omega = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * omega)
    pe[:, 1::2] = torch.cos(position * omega)
    return pe


def positional_encoding_numpy(max_len, d_model):
    """The textbook loop, in numpy."""
    pe = np.zeros((max_len, d_model))
    for pos in range(max_len):
        for i in range(d_model // 2):
            pe[pos, 2 * i] = np.sin(pos / 10000 ** (2 * i / d_model))
            pe[pos, 2 * i + 1] = np.cos(pos / 10000 ** (2 * i / d_model))
    return pe


def _with(angle_fn=None, *, start=0, base=10000.0, combine=None):
    """A table function with one mistake: the angles or the way sin and cos are placed."""

    def table(max_len, d_model):
        pos = torch.arange(start, start + max_len, dtype=torch.float64)[:, None]
        two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
        angle = (
            pos / base ** (two_i / d_model) if angle_fn is None else angle_fn(pos, two_i, d_model)
        )
        if combine is not None:
            return combine(angle)
        return torch.stack([angle.sin(), angle.cos()], -1).flatten(-2)

    return table


def shift_matrix(k, d_model):
    blocks = []
    for i in range(d_model // 2):
        w = 1 / 10000 ** (2 * i / d_model)
        c, s = math.cos(w * k), math.sin(w * k)
        blocks.append(torch.tensor([[c, s], [-s, c]]))
    return torch.block_diag(*blocks)


def shift_matrix_textbook(k, d_model):
    """The textbook rotation [[cos, -sin], [sin, cos]]: right for (cos, sin) pairs, not here."""
    return shift_matrix(k, d_model).T


def _shift_with(omega):
    def matrix(k, d_model):
        blocks = []
        for i in range(d_model // 2):
            w = omega(i, d_model)
            blocks.append(
                torch.tensor(
                    [[math.cos(w * k), math.sin(w * k)], [-math.sin(w * k), math.cos(w * k)]]
                )
            )
        return torch.block_diag(*blocks)

    return matrix


INVERSE = [0, 3, 6, 1, 8, 4, 7, 2, 9, 5]
PERM = [0, 3, 7, 1, 5, 9, 2, 6, 4, 8]


def lab_5_4():
    """The lesson's setup cell for lab L5.A and its runs, written out as the learner sees them."""

    class SelfAttention(torch.nn.Module):
        def __init__(self, width=32):
            super().__init__()
            self.q, self.k, self.v = (
                torch.nn.Linear(width, width),
                torch.nn.Linear(width, width),
                torch.nn.Linear(width, width),
            )

        def forward(self, x):
            return scaled_dot_product_attention(self.q(x), self.k(x), self.v(x))[0]

    torch.manual_seed(0)
    layer = SelfAttention()
    x = torch.randn(1, 10, 32)
    perm, pe = torch.tensor(PERM), sinusoidal_encoding(10, 32)

    def run(inputs):
        with torch.no_grad():
            return layer(inputs)

    inverse = torch.argsort(perm)
    return {
        "inverse": inverse,
        "without": (run(x[:, perm])[:, inverse] - run(x)).norm().item(),
        "with": (run(x[:, perm] + pe)[:, inverse] - run(x + pe)).norm().item(),
        "squared": (run(x[:, perm] + pe)[:, inverse] - run(x + pe)).pow(2).sum().item(),
        "pe in one run": (run(x[:, perm] + pe)[:, inverse] - run(x)).norm().item(),
        "not unshuffled": (run(x[:, perm] + pe) - run(x + pe)).norm().item(),
        "perm twice": (run(x[:, perm] + pe)[:, perm] - run(x + pe)).norm().item(),
    }


def rms(t):
    return t.pow(2).mean().sqrt().item()


def scale_answers():
    d_model = 512
    default = torch.nn.Embedding(1000, d_model).weight.detach() * math.sqrt(d_model)
    small = torch.randn(1000, d_model) * d_model**-0.5 * math.sqrt(d_model)
    return rms(sinusoidal_encoding(100, d_model)), rms(default), rms(small)


RIGHT = [
    pytest.param("5.1", lambda: ("b",), id="5.1"),
    pytest.param("5.1", lambda: (" (B) ",), id="5.1-spaces-capital"),
    pytest.param("5.2", lambda: (math.sin(5), math.cos(5)), id="5.2"),
    pytest.param("5.2", lambda: (-0.9589, 0.2837), id="5.2-rounded"),
    pytest.param("5.2", lambda: tuple(sinusoidal_encoding(6, 512)[5, :2]), id="5.2-from-table"),
    pytest.param("5.2", lambda: (np.sin(5.0), torch.tensor([math.cos(5)])), id="5.2-numpy-tensor"),
    pytest.param("5.3", lambda: (shift_matrix,), id="5.3"),
    pytest.param("5.4", lambda: (lab_5_4()["inverse"], lab_5_4()["without"], lab_5_4()["with"]), id="5.4"),
    pytest.param("5.4", lambda: (INVERSE, torch.tensor(0.0), torch.tensor(round(lab_5_4()["with"], 2))), id="5.4-rounded-tensors"),
    pytest.param("5.5", lambda: (positional_encoding,), id="5.5"),
    pytest.param("5.5", lambda: (positional_encoding_numpy,), id="5.5-numpy-loop"),
    pytest.param("5.5", lambda: (sinusoidal_encoding,), id="5.5-course_lib"),
    pytest.param("5.6", scale_answers, id="5.6"),
    pytest.param("5.6", lambda: (0.707, 22.6, 1.0), id="5.6-rounded"),
]  # fmt: skip


@pytest.mark.parametrize("exercise_id, answers", RIGHT)
def test_right_answers_pass(exercise_id, answers):
    result = check(exercise_id, *answers())
    assert result.status == PASSED, result.message


def test_every_exercise_of_lesson_5_has_a_right_answer_above():
    assert {p.values[0] for p in RIGHT} == {e.id for e in exercises(5)}


@pytest.mark.parametrize(
    "exercise_id, words",
    [
        ("5.2", "PE(5, 0) = sin 5 = -0.9589 and PE(5, 1) = cos 5 = 0.2837"),
        ("5.5", "position 1 is [0.841 0.540 0.100 0.995 0.010 1.000 0.001 1.000]"),
        ("5.6", "the content is 32× larger"),
    ],
)
def test_success_messages_carry_the_worked_numbers(exercise_id, words):
    answers = next(p.values[1] for p in RIGHT if p.values[0] == exercise_id)
    assert words in check(exercise_id, *answers()).message


# The lesson's stubs are "not done" ---------------------------------------------------------


def stub(*args):
    raise NotImplementedError()


STUBS = {
    "5.1": (None,),
    "5.2": (None, None),
    "5.3": (stub,),
    "5.4": (None, None, None),
    "5.5": (stub,),
    "5.6": (None, None, None),
}


@pytest.mark.parametrize("exercise_id", [e.id for e in exercises(5)])
def test_the_lessons_stub_is_not_done(exercise_id):
    result = check(exercise_id, *STUBS[exercise_id])
    assert result.status == NOT_DONE
    assert "# YOUR CODE HERE" in result.message
    assert all(f"`{name}`" in result.message for name in EXERCISES[exercise_id].names)


# Typical mistakes fail with the right diagnosis --------------------------------------------

S5, C5 = math.sin(5), math.cos(5)

WRONG_SMALL = [
    ("5.1-a", "5.1", ("a",), ["(a) is not the best answer", "q·k depends on the two vectors alone"]),
    ("5.1-c", "5.1", ("c",), ["(c) is not the best answer", "√d_k"]),
    ("5.1-d-invariant", "5.1", ("d",), ["(d) is not the best answer", "equivariance"]),
    ("5.1-not-a-letter", "5.1", (2,), ["answer with one of"]),
    ("5.2-swapped", "5.2", (C5, S5), ["sin and cos are swapped"]),
    ("5.2-degrees", "5.2", (math.sin(math.radians(5)), math.cos(math.radians(5))), ["sin 5° and cos 5°", "radians"]),
    ("5.2-positions-from-1", "5.2", (math.sin(6), math.cos(6)), ["sin 6 and cos 6", "count from 0"]),
    ("5.2-position-4", "5.2", (math.sin(4), math.cos(4)), ["position 4"]),
    ("5.2-i-is-1", "5.2", (S5, math.cos(5 / 10000 ** (2 / 512))), ["same pair i = 0"]),
    ("5.2-dim-index", "5.2", (S5, math.cos(5 / 10000 ** (1 / 512))), ["dimension index 1"]),
    ("5.2-position-0", "5.2", (0.0, 1.0), ["PE(0, 0) and PE(0, 1)"]),
    ("5.2-both-sin", "5.2", (S5, S5), ["cos, not sin"]),
    ("5.2-near-miss", "5.2", (-0.95, C5), ["off by up to 0.00892", "10000⁰ = 1"]),
    ("5.2-a-row", "5.2", (sinusoidal_encoding(6, 512)[5], C5), ["`pe_5_0` should be one number; got shape (512,)"]),
    ("5.2-text", "5.2", ("-0.9589", C5), ["should be numbers"]),
    ("5.4-perm-itself", "5.4", (PERM, 3e-7, 0.9), ["the permutation itself", "argsort"]),
    ("5.4-wrong-inverse", "5.4", (list(range(10)), 3e-7, 0.9), ["inverse[perm[i]] = i"]),
    ("5.4-not-unshuffled", "5.4", (INVERSE, 2.1, 0.9), ["`diff_without_pe` = 2.1", "un-shuffle"]),
    ("5.4-pe-moved-along", "5.4", (INVERSE, 3e-7, 2e-7), ["moved with their tokens", "x[:, perm] + pe"]),
    ("5.4-negative", "5.4", (INVERSE, -1.0, 0.9), ["a number >= 0"]),
    ("5.4-a-tensor", "5.4", (INVERSE, torch.zeros(10), 0.9), ["one number (an L2 norm)"]),
    ("5.6-mean-square", "5.6", (0.5, 22.6, 1.0), ["mean square", "square root"]),
    ("5.6-norm", "5.6", (16.0, 22.6, 1.0), ["norm of one encoding"]),
    ("5.6-pe-wrong", "5.6", (0.6, 22.6, 1.0), ["sin² + cos² = 1"]),
    ("5.6-default-unscaled", "5.6", (0.707, 1.0, 1.0), ["`rms_default` = 1 is the RMS before scaling", "√d_model = 22.6"]),
    ("5.6-default-times-d", "5.6", (0.707, 512.0, 1.0), ["multiplied by d_model"]),
    ("5.6-default-divided", "5.6", (0.707, 1 / math.sqrt(512), 1.0), ["divided by √d_model"]),
    ("5.6-small-is-default", "5.6", (0.707, 22.6, 22.6), ["what N(0, 1) weights give"]),
    ("5.6-small-unscaled", "5.6", (0.707, 22.6, 0.0442), ["1/√d_model", "standard deviation 1/d_model"]),
    ("5.6-small-far", "5.6", (0.707, 22.6, 2.0), ["RMS about 1"]),
    ("5.6-default-far", "5.6", (0.707, 30.0, 1.0), ["about 22.6"]),
]  # fmt: skip


@pytest.mark.parametrize(
    "exercise_id, answers, words", [pytest.param(*r[1:], id=r[0]) for r in WRONG_SMALL]
)
def test_typical_mistakes_are_named(exercise_id, answers, words):
    result = check(exercise_id, *answers)
    assert result.status == FAILED, result.message
    for word in words:
        assert word in result.message, result.message


def _halves(angle):
    return torch.cat([angle.sin(), angle.cos()], -1)


WRONG_TABLES = [
    ("swapped", _with(combine=lambda a: torch.stack([a.cos(), a.sin()], -1).flatten(-2)), ["sin and cos are swapped"]),
    ("halves", _with(combine=_halves), ["[all sines | all cosines]", "interleaves"]),
    ("i-over-d", _with(lambda pos, two_i, d: pos / 10000 ** (two_i / 2 / d)), ["i/d_model where the formula has 2i/d_model"]),
    ("positions-from-1", _with(start=1), ["positions start at 1", "torch.arange(max_len)"]),
    ("base-1000", _with(base=1000.0), ["base is 1000"]),
    ("times-not-divided", _with(lambda pos, two_i, d: pos * 10000 ** (two_i / d)), ["should be pos / 10000^(2i/d_model)"]),
    ("degrees", _with(lambda pos, two_i, d: torch.deg2rad(pos / 10000 ** (two_i / d))), ["degrees", "radians"]),
    ("all-sin", _with(combine=lambda a: torch.stack([a.sin(), a.sin()], -1).flatten(-2)), ["every column is a sine"]),
    ("transposed", lambda max_len, d_model: positional_encoding(max_len, d_model).T, ["transposed", "(max_len, d_model)"]),
    ("batch-axis", lambda max_len, d_model: positional_encoding(max_len, d_model)[None], ["without the batch axis"]),
    ("own-index", lambda max_len, d_model: _own_index(max_len, d_model), ["its own index", "share the frequency"]),
    ("wrong-shape", lambda max_len, d_model: torch.zeros(max_len, d_model // 2), ["should have shape (3, 8); got (3, 4)"]),
    ("raises", lambda max_len, d_model: torch.arange(max_len) @ torch.zeros(2), ["your function raised RuntimeError", "when called for max_len = 3, d_model = 8"]),
    ("returns-none", lambda max_len, d_model: None, ["should be numbers", "NoneType"]),
]  # fmt: skip


def _own_index(max_len, d_model):
    """Every column j uses 10000^(j/d_model), the cos columns too."""
    j = torch.arange(d_model, dtype=torch.float64)
    angle = torch.arange(max_len, dtype=torch.float64)[:, None] / 10000 ** (j / d_model)
    return torch.where(j % 2 == 0, angle.sin(), angle.cos())


@pytest.mark.parametrize("table, words", [pytest.param(*r[1:], id=r[0]) for r in WRONG_TABLES])
def test_typical_table_mistakes_are_named_5_5(table, words):
    result = check("5.5", table)
    assert result.status == FAILED, result.message
    for word in words:
        assert word in result.message, result.message


def test_a_table_off_in_one_entry_says_where_5_5():
    def off(max_len, d_model):
        pe = positional_encoding(max_len, d_model)
        pe[2, 3] += 0.05
        return pe

    result = check("5.5", off)
    assert result.status == FAILED
    assert "off by up to 0.05 at index (2, 3)" in result.message


WRONG_SHIFTS = [
    ("transposed", shift_matrix_textbook, ["transpose of R_k", "[cos ωk, sin ωk]"]),
    ("identity", lambda k, d_model: torch.eye(d_model), ["identity"]),
    ("i-over-d", _shift_with(lambda i, d: 1 / 10000 ** (i / d)), ["i/d_model"]),
    ("base-1000", _shift_with(lambda i, d: 1 / 1000 ** (2 * i / d)), ["base 1000"]),
    ("every-block-k-radians", _shift_with(lambda i, d: 1.0), ["every block turns by k radians"]),
    ("one-block", lambda k, d_model: shift_matrix(k, 2), ["should have shape (d_model, d_model) = (4, 4); got (2, 2)"]),
    ("raises", lambda k, d_model: torch.zeros(2, 2) @ torch.zeros(3, 3), ["your function raised", "k = 1, d_model = 4"]),
    ("nudged", lambda k, d_model: shift_matrix(k, d_model) + 0.01 * torch.eye(d_model), ["off by up to 0.01"]),
]  # fmt: skip


@pytest.mark.parametrize("answer, words", [pytest.param(*r[1:], id=r[0]) for r in WRONG_SHIFTS])
def test_typical_shift_mistakes_are_named_5_3(answer, words):
    result = check("5.3", answer)
    assert result.status == FAILED, result.message
    for word in words:
        assert word in result.message, result.message


def test_a_shift_matrix_right_only_for_positive_k_is_caught_5_3():
    """abs(k) makes R_k right for k >= 0 and wrong for the check's k = -2."""
    result = check("5.3", lambda k, d_model: shift_matrix(abs(k), d_model))
    assert result.status == FAILED
    assert "for k = -2, d_model = 16" in result.message


@pytest.mark.parametrize(
    "mistake, words",
    [
        ("squared", ["squared norm", ".norm()"]),
        ("pe in one run", ["only one of the two runs", "run(x + pe)"]),
        ("not unshuffled", ["not un-shuffled", "inverse_perm"]),
        ("perm twice", ["indexed with perm again"]),
    ],
)
def test_wrong_runs_with_pe_are_named_5_4(mistake, words):
    lab = lab_5_4()
    assert abs(lab[mistake] - lab["with"]) > 0.05  # each mistake gives a different number
    result = check("5.4", lab["inverse"], lab["without"], lab[mistake])
    assert result.status == FAILED, result.message
    for word in words:
        assert word in result.message, result.message


def test_a_diff_with_pe_from_another_layer_says_what_the_setup_gives_5_4():
    expected = f"{lab_5_4()['with']:.3g}"
    result = check("5.4", INVERSE, 3e-7, 2.5)
    assert result.status == FAILED
    assert f"give {expected}" in result.message and "setup cell" in result.message


def test_the_check_leaves_the_learners_random_state_alone_5_4():
    lesson05._lab_5_4.cache_clear()
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    check("5.4", INVERSE, 3e-7, 2.5)
    assert torch.equal(torch.rand(3), expected)
