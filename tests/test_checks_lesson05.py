"""Tests of the lesson 5 checks (``course_lib/checks/lesson05.py``).

For every exercise: the reference answer and equally valid variants pass, and typical mistakes
fail with a message that names them. Answers are written the way a learner would write them. The
lesson's own stubs are tested in ``test_checks_stubs.py``.
"""

import math

import numpy as np
import pytest
import torch
from typical_answers import forgets_return
from verdicts import fails

from course_lib.attention import scaled_dot_product_attention
from course_lib.checks import EXERCISES, FAILED, PASSED, check, exercises, lesson05
from course_lib.checks._core import DIFFERENCE, EXCEPTION, MISTAKE, RULE, SHAPE, TYPE
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
    """The textbook loop, in numpy: right values, but lessons 1-7 return torch tensors."""
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


def _shift_with(omega, block=(("c", "s"), ("-s", "c"))):
    """A shift matrix with the frequencies ``omega(i, d_model)`` and blocks laid out as
    ``block`` says (c = cos ωk, s = sin ωk)."""

    def matrix(k, d_model):
        blocks = []
        for i in range(d_model // 2):
            w = omega(i, d_model)
            c, s, s1 = math.cos(w * k), math.sin(w * k), math.sin(w)
            value = {"c": c, "s": s, "-c": -c, "-s": -s, "s1": s1, "-s1": -s1, "c1": math.cos(w)}
            blocks.append(torch.tensor([[value[e] for e in row] for row in block]))
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
        "pe in the plain run": (run(x[:, perm])[:, inverse] - run(x + pe)).norm().item(),
        "one run alone": run(x[:, perm] + pe)[:, inverse].norm().item(),
        "not unshuffled": (run(x[:, perm] + pe) - run(x + pe)).norm().item(),
        "perm twice": (run(x[:, perm] + pe)[:, perm] - run(x + pe)).norm().item(),
        "not unshuffled, without": (run(x[:, perm]) - run(x)).norm().item(),
        "added": (run(x[:, perm] + pe)[:, inverse] + run(x + pe)).norm().item(),
        "x dropped": (run(x[:, perm] + pe)[:, inverse] - run(pe)).norm().item(),
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
    pytest.param("5.2", lambda: (math.sin(5), math.cos(5), math.sin(0.5), math.cos(0.5)), id="5.2"),
    pytest.param("5.2", lambda: (-0.9589, 0.2837, 0.4794, 0.8776), id="5.2-rounded"),
    pytest.param("5.2", lambda: (-0.96, 0.28, 0.48, 0.88), id="5.2-rounded-to-2-decimals"),
    pytest.param("5.2", lambda: tuple(sinusoidal_encoding(6, 512)[5, [0, 1, 128, 129]]), id="5.2-from-table"),
    pytest.param("5.2", lambda: (np.sin(5.0), torch.tensor([math.cos(5)]), np.float32(0.4794), 0.878), id="5.2-numpy-tensor-3-decimals"),
    pytest.param("5.3", lambda: (shift_matrix,), id="5.3"),
    pytest.param("5.4", lambda: (lab_5_4()["inverse"], lab_5_4()["without"], lab_5_4()["with"]), id="5.4"),
    pytest.param("5.4", lambda: (INVERSE, torch.tensor(4e-7), torch.tensor(round(lab_5_4()["with"], 2))), id="5.4-rounded-tensors"),
    pytest.param("5.5", lambda: (positional_encoding,), id="5.5"),
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
        ("5.2", "PE(5, 128) = sin 0.5 = 0.4794, PE(5, 129) = cos 0.5 = 0.8776"),
        ("5.5", "position 1 is [0.841 0.540 0.100 0.995 0.010 1.000 0.001 1.000]"),
        ("5.6", "the content is 32× larger"),
    ],
)
def test_success_messages_carry_the_worked_numbers(exercise_id, words):
    answers = next(p.values[1] for p in RIGHT if p.values[0] == exercise_id)
    assert words in check(exercise_id, *answers()).message


# Typical mistakes fail with the right diagnosis --------------------------------------------

# What each wrong answer's diagnosis is, where it is not a named mistake (MISTAKE).
KINDS = {
    "5.1-not-a-letter": TYPE,
    "5.2-near-miss": DIFFERENCE,
    "5.2-near-miss-64": DIFFERENCE,
    "5.2-a-row": SHAPE,
    "5.2-text": TYPE,
    "5.4-other-inverse": DIFFERENCE,
    "5.4-reversed": DIFFERENCE,
    "5.6-pe-wrong": DIFFERENCE,
    "wrong-shape": SHAPE,
    "raises": EXCEPTION,
    "returns-numpy": TYPE,
    "numpy-table": TYPE,
    "nudged": DIFFERENCE,
    "not-square": SHAPE,
    # Wrong in no typical way: where it is off, in the terms of the formula
    "5.4-not-unshuffled": DIFFERENCE,
    "5.6-small-far": DIFFERENCE,
    "5.6-default-far": DIFFERENCE,
    "positions-from-2": DIFFERENCE,
    "base-20000": DIFFERENCE,
    "cosines-nudged": DIFFERENCE,
    "misplaced": DIFFERENCE,
    "other-frequencies": DIFFERENCE,
    "not-block-diagonal": DIFFERENCE,
    "one-block": SHAPE,
}


S5, C5 = math.sin(5), math.cos(5)
S05, C05 = math.sin(0.5), math.cos(0.5)  # pair 64 divides by 10000^(128/512) = 10

WRONG_SMALL = [
    ("5.1-a", "5.1", ("a",), ["(a) is not the best answer", "q·k depends on the two vectors alone"]),
    ("5.1-c", "5.1", ("c",), ["(c) is not the best answer", "√d_k"]),
    ("5.1-d-invariant", "5.1", ("d",), ["(d) is not the best answer", "equivariance"]),
    ("5.1-not-a-letter", "5.1", (2,), ["answer with one of"]),
    ("5.2-swapped", "5.2", (C5, S5, C05, S05), ["sin and cos are swapped"]),
    ("5.2-swapped-in-pair-64", "5.2", (S5, C5, C05, S05), ["sin and cos are swapped", "(0, 128) hold sin"]),
    ("5.2-degrees", "5.2", (math.sin(math.radians(5)), math.cos(math.radians(5)), math.sin(math.radians(0.5)), math.cos(math.radians(0.5))), ["degrees", "radians"]),
    ("5.2-positions-from-1", "5.2", (math.sin(6), math.cos(6), math.sin(0.6), math.cos(0.6)), ["position 6", "count from 0"]),
    ("5.2-position-4", "5.2", (math.sin(4), math.cos(4), math.sin(0.4), math.cos(0.4)), ["position 4"]),
    ("5.2-i-is-1", "5.2", (S5, math.cos(5 / 10000 ** (2 / 512)), S05, C05), ["dimension was used as i", "dimension 1 is in pair 0"]),
    ("5.2-dim-index", "5.2", (S5, math.cos(5 / 10000 ** (1 / 512)), S05, C05), ["its own index"]),
    ("5.2-position-0", "5.2", (0.0, 1.0, 0.0, 1.0), ["position 0", "position 5"]),
    ("5.2-both-sin", "5.2", (S5, S5, S05, S05), ["cos, not sin"]),
    ("5.2-both-cos", "5.2", (C5, C5, C05, C05), ["sin, not cos"]),
    ("5.2-i-over-d", "5.2", (S5, C5, math.sin(5 / 10000 ** (64 / 512)), math.cos(5 / 10000 ** (64 / 512))), ["i/d_model where the formula has 2i/d_model"]),
    ("5.2-column-as-i", "5.2", (S5, math.cos(5 / 10000 ** (2 / 512)), math.sin(5 / 10000 ** (256 / 512)), math.cos(5 / 10000 ** (258 / 512))), ["dimension was used as i", "pair i = 64"]),
    ("5.2-own-index-64", "5.2", (S5, math.cos(5 / 10000 ** (1 / 512)), S05, math.cos(5 / 10000 ** (129 / 512))), ["its own index"]),
    ("5.2-base-1000", "5.2", (S5, C5, math.sin(5 / 1000**0.25), math.cos(5 / 1000**0.25)), ["base is 1000"]),
    ("5.2-multiplied", "5.2", (S5, C5, math.sin(50), math.cos(50)), ["multiplied pos by 10000^(2i/d_model)"]),
    ("5.2-log10", "5.2", (S5, C5, math.sin(5 * math.exp(-1)), math.cos(5 * math.exp(-1))), ["natural log"]),
    ("5.2-exponent-not-divided", "5.2", (S5, C5, 0.0, 1.0), ["not divided by d_model"]),
    ("5.2-pair-1-for-pair-0", "5.2", (math.sin(5 / 10000 ** (2 / 512)), math.cos(5 / 10000 ** (2 / 512)), S05, C05), ["sin and cos of pair i = 1", "dimensions 0 and 1 are pair i = 0"]),
    ("5.2-cut-to-2", "5.2", (-0.95, 0.28, 0.47, 0.87), ["rounded (or cut) too coarsely", "round them to 2 decimals"]),
    ("5.2-one-rounded-to-1", "5.2", (S5, C5, 0.5, C05), ["rounded (or cut) too coarsely"]),
    ("5.2-rounded-to-1", "5.2", (-1.0, 0.3, 0.5, 0.9), ["rounded", "too coarse"]),
    ("5.2-near-miss", "5.2", (-0.97, C5, S05, C05), ["sin(5 / 10000^(0/512)) = sin(5)", "expected -0.9589, got -0.9700"]),
    ("5.2-near-miss-64", "5.2", (S5, C5, 0.3, C05), ["pair i = 64", "sin(0.5)", "expected 0.4794, got 0.3000"]),
    ("5.2-a-row", "5.2", (sinusoidal_encoding(6, 512)[5], C5, S05, C05), ["`pe_5_0` should be one number; got shape (512,)"]),
    ("5.2-text", "5.2", ("-0.9589", C5, S05, C05), ["is the text", "without quotes"]),
    ("5.4-perm-itself", "5.4", (PERM, 3e-7, 0.9), ["the permutation itself", "argsort"]),
    ("5.4-wrong-inverse", "5.4", (list(range(10)), 3e-7, 0.9), ["the identity", "inverse[perm[i]] = i"]),
    ("5.4-reversed", "5.4", (PERM[::-1], 3e-7, 0.9), ["inverse[perm[i]] = i"]),
    ("5.4-not-unshuffled", "5.4", (INVERSE, 2.1, 0.9), ["below 1e-5", "un-shuffle", "got 2.1000"]),
    ("5.4-pe-moved-along", "5.4", (INVERSE, 3e-7, 2e-7), ["moved with their tokens", "x[:, perm] + pe"]),
    ("5.4-negative", "5.4", (INVERSE, -1.0, 0.9), ["a norm is never negative"]),
    ("5.4-a-tensor", "5.4", (INVERSE, torch.zeros(10), 0.9), ["one number (an L2 norm)"]),
    ("5.6-mean-square", "5.6", (0.5, 22.6, 1.0), ["mean square", "square root"]),
    ("5.6-norm", "5.6", (16.0, 22.6, 1.0), ["norm of one encoding"]),
    ("5.6-pe-wrong", "5.6", (0.65, 22.6, 1.0), ["sin² + cos² = 1"]),
    ("5.6-pe-not-squared", "5.6", (0.598, 22.6, 1.0), ["to the power 1: square them"]),
    ("5.6-pe-sum", "5.6", (160.0, 22.6, 1.0), ["root of the sum of the squares"]),
    ("5.6-small-sum", "5.6", (0.707, 22.6, 715.0), ["`rms_small` = 715 is the root of the sum"]),
    ("5.6-default-nan", "5.6", (0.707, float("nan"), 1.0), ["`rms_default` is nan", "square the entries before"]),
    ("5.6-default-unscaled", "5.6", (0.707, 1.0, 1.0), ["`rms_default` = 1 is the RMS before scaling", "√d_model = 22.6"]),
    ("5.6-default-times-d", "5.6", (0.707, 512.0, 1.0), ["multiplied by d_model"]),
    ("5.6-default-divided", "5.6", (0.707, 1 / math.sqrt(512), 1.0), ["divided by √d_model"]),
    ("5.6-small-is-default", "5.6", (0.707, 22.6, 22.6), ["what N(0, 1) weights give"]),
    ("5.6-small-unscaled", "5.6", (0.707, 22.6, 0.0442), ["1/√d_model", "standard deviation 1/d_model"]),
    ("5.6-small-times-root", "5.6", (0.707, 22.6, 512.0), ["standard deviation √d_model", "d_model ** -0.5"]),
    ("5.6-small-far", "5.6", (0.707, 22.6, 2.0), ["standard deviation about 0.0884", "1/√d_model ≈ 0.0442"]),
    ("5.6-default-far", "5.6", (0.707, 30.0, 1.0), ["1.33 × √d_model", "about 22.6"]),
]  # fmt: skip


@pytest.mark.parametrize(
    "exercise_id, answers, words", [pytest.param(*r[1:], id=r[0]) for r in WRONG_SMALL]
)
def test_typical_mistakes_are_named(exercise_id, answers, words, request):
    result = check(exercise_id, *answers)
    fails(result, words, request, KINDS)


def _halves(angle):
    return torch.cat([angle.sin(), angle.cos()], -1)


WRONG_TABLES = [
    ("cos-over-sin", _with(combine=lambda a: torch.stack([a.cos(), 0 * a], -1).flatten(-2)), ["the cosines went into the even columns", "pe[:, 1::2]"]),
    ("no-positions", _with(lambda pos, two_i, d: 0 * pos + 1 / 10000 ** (two_i / d)), ["every row is the same", "without the position"]),
    ("no-exp", _with(lambda pos, two_i, d: pos * (two_i * -math.log(10000.0) / d)), ["the exponential is missing"]),
    ("swapped", _with(combine=lambda a: torch.stack([a.cos(), a.sin()], -1).flatten(-2)), ["sin and cos are swapped"]),
    ("halves", _with(combine=_halves), ["[all sines | all cosines]", "interleaves"]),
    ("i-over-d", _with(lambda pos, two_i, d: pos / 10000 ** (two_i / 2 / d)), ["i/d_model where the formula has 2i/d_model"]),
    ("positions-from-1", _with(start=1), ["positions start at 1", "torch.arange(max_len)"]),
    ("base-1000", _with(base=1000.0), ["base is 1000"]),
    ("times-not-divided", _with(lambda pos, two_i, d: pos * 10000 ** (two_i / d)), ["should be pos / 10000^(2i/d_model)"]),
    ("degrees", _with(lambda pos, two_i, d: torch.deg2rad(pos / 10000 ** (two_i / d))), ["degrees", "radians"]),
    ("all-sin", _with(combine=lambda a: torch.stack([a.sin(), a.sin()], -1).flatten(-2)), ["every column is a sine"]),
    ("transposed", lambda max_len, d_model: positional_encoding(max_len, d_model).T, ["transposed", "(max_len, d_model)"]),
    ("batch-axis", lambda max_len, d_model: positional_encoding(max_len, d_model)[None], ["drop the leading batch axis"]),
    ("own-index", lambda max_len, d_model: _own_index(max_len, d_model), ["its own index", "share the frequency"]),
    ("wrong-shape", lambda max_len, d_model: torch.zeros(max_len, d_model // 2), ["should have shape (max_len, d_model) = (3, 8); got (3, 4)"]),
    ("raises", lambda max_len, d_model: torch.arange(max_len) @ torch.zeros(2), ["your function raised RuntimeError", "when called for max_len = 3, d_model = 8"]),
    ("returns-none", forgets_return, ["`positional_encoding` returned None", "return ..."]),
    ("returns-numpy", lambda max_len, d_model: positional_encoding(max_len, d_model).numpy(), ["positional_encoding should return a torch.Tensor; got ndarray"]),
    ("numpy-table", positional_encoding_numpy, ["positional_encoding should return a torch.Tensor; got ndarray"]),
    ("odd-columns-zero", _with(combine=lambda a: torch.stack([a.sin(), 0 * a], -1).flatten(-2)), ["odd columns are still 0", "pe[:, 1::2]"]),
    ("even-columns-zero", _with(combine=lambda a: torch.stack([0 * a, a.cos()], -1).flatten(-2)), ["even columns are still 0"]),
    ("all-cos", _with(combine=lambda a: torch.stack([a.cos(), a.cos()], -1).flatten(-2)), ["every column is a cosine"]),
    ("exponent-not-divided", _with(lambda pos, two_i, d: pos / 10000.0**two_i), ["not divided by d_model"]),
    ("exponent-4i", _with(lambda pos, two_i, d: pos / 10000 ** (2 * two_i / d)), ["4i/d_model", "undoubled"]),
    ("arange-from-1", _with(lambda pos, two_i, d: pos / 10000 ** ((two_i + 1) / d)), ["(2i+1)/d_model", "torch.arange(1, d_model, 2)"]),
    ("log10", _with(lambda pos, two_i, d: pos * torch.exp(two_i * (-math.log10(10000.0) / d))), ["natural log", "math.log(10000)"]),
    ("half-width", _with(lambda pos, two_i, d: pos / 10000 ** (two_i / (d // 2))), ["4i/d_model, or 2i/(d_model/2)"]),
    ("integer-table", lambda max_len, d_model: positional_encoding(max_len, d_model).long(), ["dtype torch.int64", "torch.zeros(max_len, d_model)"]),
    ("positions-from-2", _with(start=2), ["row of position 0", "[0, 1, 0, 1, ...]"]),
    ("base-20000", _with(base=20000.0), ["column 2 (pair i = 1) should be sin(pos · 0.1)", "ω_1 = 10000^(-2/8)"]),
]  # fmt: skip


def _own_index(max_len, d_model):
    """Every column j uses 10000^(j/d_model), the cos columns too."""
    j = torch.arange(d_model, dtype=torch.float64)
    angle = torch.arange(max_len, dtype=torch.float64)[:, None] / 10000 ** (j / d_model)
    return torch.where(j % 2 == 0, angle.sin(), angle.cos())


@pytest.mark.parametrize("table, words", [pytest.param(*r[1:], id=r[0]) for r in WRONG_TABLES])
def test_typical_table_mistakes_are_named_5_5(table, words, request):
    result = check("5.5", table)
    fails(result, words, request, KINDS)


def test_a_table_off_in_one_entry_says_where_5_5():
    def off(max_len, d_model):
        pe = positional_encoding(max_len, d_model)
        pe[2, 3] += 0.05
        return pe

    result = check("5.5", off)
    assert result.status == FAILED
    assert "column 3 (pair i = 1) should be cos(pos · 0.1)" in result.message, result.message
    assert "off by up to 0.05" in result.message and result.diagnosis == DIFFERENCE


WRONG_SHIFTS = [
    ("cosines-without-k", _shift_with(lambda i, d: 1 / 10000 ** (2 * i / d), [["c1", "s"], ["-s", "c1"]]), ["for k = 3, d_model = 8", "the cosines are cos ω_i, without k"]),
    ("all-sines", _shift_with(lambda i, d: 1 / 10000 ** (2 * i / d), [["s", "s"], ["-s", "s"]]), ["every entry of a block is a sine"]),
    ("transposed", shift_matrix_textbook, ["transpose of R_k", "[cos ωk, sin ωk]"]),
    ("identity", lambda k, d_model: torch.eye(d_model), ["identity"]),
    ("i-over-d", _shift_with(lambda i, d: 1 / 10000 ** (i / d)), ["i/d_model"]),
    ("base-1000", _shift_with(lambda i, d: 1 / 1000 ** (2 * i / d)), ["base is 1000"]),
    ("every-block-k-radians", _shift_with(lambda i, d: 1.0), ["every block turns by k radians"]),
    ("one-block", lambda k, d_model: shift_matrix(k, 2), ["1 block(s) of 2 x 2", "d_model/2 = 2", "torch.arange(d_model // 2)", "should have shape (4, 4); got (2, 2)"]),
    ("not-square", lambda k, d_model: shift_matrix(k, d_model)[:, :2], ["should have shape (4, 4); got (4, 2)"]),
    ("raises", lambda k, d_model: torch.zeros(2, 2) @ torch.zeros(3, 3), ["your function raised", "k = 1, d_model = 4"]),
    ("nudged", lambda k, d_model: 1.01 * shift_matrix(k, d_model), ["block 1 (rows 2 and 3) is [[1.010, 0.010], [-0.010, 1.010]]", "R_k's, [[1.000, 0.010], [-0.010, 1.000]]"]),
    ("cosines-nudged", lambda k, d_model: shift_matrix(k, d_model) + 0.01 * torch.eye(d_model), ["block 1 (rows 2 and 3) is [[1.010, 0.010], [-0.010, 1.010]]", "expected 1.0000, got 1.0100"]),
    ("sines-from-omega", _shift_with(lambda i, d: 1 / 10000 ** (2 * i / d), [["c", "s1"], ["-s1", "c"]]), ["for k = 3, d_model = 8", "the sines are sin ω_i, without k"]),
    ("misplaced", _shift_with(lambda i, d: 1 / 10000 ** (2 * i / d), [["s", "c"], ["-s", "c"]]), ["block 1 (rows 2 and 3) is [[0.010, 1.000], [-0.010, 1.000]]", "R_k's, [[1.000, 0.010], [-0.010, 1.000]]"]),
    ("returns-numpy", lambda k, d_model: shift_matrix(k, d_model).numpy(), ["shift_matrix should return a torch.Tensor; got ndarray"]),
    ("sin-cos-swapped", _shift_with(lambda i, d: 1 / 10000 ** (2 * i / d), [["s", "c"], ["-c", "s"]]), ["sin and cos are swapped in each block"]),
    ("same-sign-sines", _shift_with(lambda i, d: 1 / 10000 ** (2 * i / d), [["c", "s"], ["s", "c"]]), ["same sign"]),
    ("negative-sines", _shift_with(lambda i, d: 1 / 10000 ** (2 * i / d), [["c", "-s"], ["-s", "c"]]), ["both sines in a block are negative"]),
    ("positive-exponent", _shift_with(lambda i, d: 10000 ** (2 * i / d)), ["10000^(+2i/d_model)"]),
    ("column-index", _shift_with(lambda i, d: 1 / 10000 ** (4 * i / d)), ["column index 2i"]),
    ("log10", _shift_with(lambda i, d: math.exp(-2 * i * math.log10(10000) / d)), ["natural log"]),
    ("ignores-k", lambda k, d_model: shift_matrix(1, d_model), ["for k = 3, d_model = 8", "whatever k"]),
    ("degrees", _shift_with(lambda i, d: math.radians(1 / 10000 ** (2 * i / d))), ["degrees"]),
    ("blocks-reversed", _shift_with(lambda i, d: 1 / 10000 ** (2 * (d // 2 - 1 - i) / d)), ["reverse order"]),
    ("other-frequencies", _shift_with(lambda i, d: 1 / 10000 ** (2 * i / (d + 2))), ["for k = 1, d_model = 4, block 1 (rows 2 and 3) is [[0.999, 0.046], [-0.046, 0.999]]", "ω_1·k = 0.0100"]),
    ("not-block-diagonal", lambda k, d_model: shift_matrix(k, d_model) + torch.eye(d_model).roll(2, 1) * 0.1, ["entry (0, 2), outside the 2 x 2 blocks", "block-diagonal"]),
]  # fmt: skip


@pytest.mark.parametrize("answer, words", [pytest.param(*r[1:], id=r[0]) for r in WRONG_SHIFTS])
def test_typical_shift_mistakes_are_named_5_3(answer, words, request):
    result = check("5.3", answer)
    fails(result, words, request, KINDS)


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
        (
            "pe in the plain run",
            ["only one of the two runs, the unshuffled one", "run(x[:, perm] + pe)"],
        ),
        ("one run alone", ["the shuffled run's output alone", "subtract the unshuffled run"]),
        ("not unshuffled", ["not un-shuffled", "inverse_perm"]),
        ("perm twice", ["indexed with perm again"]),
        ("added", ["the two runs were added"]),
        ("x dropped", ["got pe alone"]),
    ],
)
def test_wrong_runs_with_pe_are_named_5_4(mistake, words, request):
    lab = lab_5_4()
    assert abs(lab[mistake] - lab["with"]) > 0.05  # each mistake gives a different number
    result = check("5.4", lab["inverse"], lab["without"], lab[mistake])
    fails(result, words, request, KINDS)


def test_a_diff_with_pe_from_another_layer_says_what_the_setup_gives_5_4():
    expected = f"{lab_5_4()['with']:.4f}"
    result = check("5.4", INVERSE, 3e-7, 2.5)
    assert result.status == FAILED
    assert f"expected {expected}, got 2.5000" in result.message and "setup cell" in result.message


@pytest.mark.parametrize(
    "answers, words",
    [
        ((INVERSE, 0.0, 0.94), ["`diff_without_pe` is exactly 0", "empty slice", "tiny but not 0"]),
        ((INVERSE, torch.tensor(0.0), 0.94), ["`diff_without_pe` is exactly 0"]),
        ((INVERSE, 3e-7, 0.0), ["`diff_with_pe` is exactly 0", "empty slice"]),
    ],
    ids=["without", "without-tensor", "with"],
)
def test_an_empty_comparison_is_not_round_off_5_4(answers, words):
    """An empty slice, or a run compared with itself, gives exactly 0; a real comparison of
    the shuffled and unshuffled runs leaves float32 round-off."""
    assert lab_5_4()["without"] > 0.0  # what a real comparison gives on this processor
    result = check("5.4", *answers)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


def test_an_empty_slice_is_exactly_0_5_4():
    """The empty comparison the review found: a slice past the end of the sequence."""
    lab = lab_5_4()
    empty = (torch.randn(1, 10, 32)[:, 10:] - torch.randn(1, 10, 32)[:, 10:]).norm().item()
    assert empty == 0.0
    assert check("5.4", lab["inverse"], empty, lab["with"]).status == FAILED


def test_the_shuffled_run_not_unshuffled_is_named_without_pe_too_5_4():
    lab = lab_5_4()
    result = check("5.4", lab["inverse"], lab["not unshuffled, without"], lab["with"])
    assert result.diagnosis == MISTAKE and "not un-shuffled" in result.message, result.message


def test_the_check_leaves_the_learners_random_state_alone_5_4():
    lesson05._lab_5_4.cache_clear()
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    check("5.4", INVERSE, 3e-7, 2.5)
    assert torch.equal(torch.rand(3), expected)


# What an answer may use --------------------------------------------------------------------


def learners(source: str):
    """The function defined by ``source`` as if in a notebook cell (module ``__main__``)."""
    space = {"__name__": "__main__", "torch": torch, "math": math}
    exec(source, space)
    return next(v for k, v in space.items() if k not in ("torch", "math") and callable(v))


DOUBLE_LOOP = """
def positional_encoding(max_len, d_model):
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            pe[pos, 2 * i] = math.sin(angle)
            pe[pos, 2 * i + 1] = math.cos(angle)
    return pe
"""


def test_a_python_loop_is_refused_5_5():
    answer = learners(DOUBLE_LOOP)
    assert torch.allclose(answer(7, 64), positional_encoding(7, 64), atol=1e-6)  # right values
    result = check("5.5", answer)
    assert result.status == FAILED and result.diagnosis == RULE, result.message
    assert "Python loop" in result.message


def test_the_vectorised_answer_of_a_learner_is_accepted_5_5():
    source = """
def positional_encoding(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    omega = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.sin(position * omega)
    table[:, 1::2] = torch.cos(position * omega)
    return table
"""
    assert check("5.5", learners(source)).status == PASSED


@pytest.mark.rules
def test_the_reference_table_may_be_used_for_the_scale_5_6():
    """5.6 is about the embeddings' scale: its answer may take the table from course_lib."""
    cells = [
        "from course_lib.positional import sinusoidal_encoding",
        "rms_pe = sinusoidal_encoding(100, 512).pow(2).mean().sqrt().item()\n"
        "rms_default, rms_small = 22.6, 1.0",
    ]
    result = EXERCISES["5.6"].run(*scale_answers(), sources=cells)
    assert result.status == PASSED, result.message


@pytest.mark.rules
def test_the_reference_table_is_refused_as_the_answer_to_5_5():
    result = check("5.5", sinusoidal_encoding)
    assert result.status == FAILED and result.diagnosis == RULE, result.message


# 5.6 says what it accepts: a measurement, or the value worked out on paper -------------------


def _rms(t) -> float:
    return t.pow(2).mean().sqrt().item()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_measurements_with_other_seeds_pass_5_6(seed):
    torch.manual_seed(seed)
    default = torch.nn.Embedding(1000, 512).weight.detach() * math.sqrt(512)
    small = torch.randn(1000, 512) * 512**-0.5 * math.sqrt(512)
    result = check("5.6", _rms(sinusoidal_encoding(100, 512)), _rms(default), _rms(small))
    assert result.status == PASSED, result.message


def test_the_values_worked_out_on_paper_pass_5_6():
    result = check("5.6", math.sqrt(0.5), math.sqrt(512), 1.0)
    assert result.status == PASSED, result.message


@pytest.mark.parametrize(
    "answers",
    [(0.707, 22.45, 1.0), (0.707, 22.6, 1.02), (0.70, 22.6, 1.0)],
    ids=["default-beyond-sampling", "small-beyond-sampling", "pe-cut-not-rounded"],
)
def test_values_beyond_the_sampling_error_and_the_rounding_fail_5_6(answers):
    assert check("5.6", *answers).status == FAILED


def test_diff_with_pe_is_read_with_the_courses_rounding_5_4():
    right = round(lab_5_4()["with"], 2)
    assert check("5.4", INVERSE, 3e-7, right).status == PASSED
    result = check("5.4", INVERSE, 3e-7, right + 0.01)
    assert result.status == FAILED and result.diagnosis == DIFFERENCE, result.message
