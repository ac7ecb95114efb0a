"""Tests of the lesson 2 checks (``course_lib/checks/lesson02.py``).

For every exercise: the reference answer and equally valid variants pass, typical mistakes fail
with the right diagnosis, and near misses fail with a message saying how far off they are.
Answers are written the way a learner would write them. The lesson's own stubs are tested in
``test_checks_stubs.py``.
"""

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from course_lib.checks import FAILED, NOT_DONE, PASSED, check, exercises
from course_lib.checks.lesson02 import sampling_error


def _cases(rows):
    """Rows ``(id, exercise_id, answers, words)`` as named test parameters."""
    return [pytest.param(*row[1:], id=row[0]) for row in rows]


# Reference answers -----------------------------------------------------------------------------

a, b = np.array([2.0, -1.0, 3.0]), np.array([1.0, 4.0, -2.0])
DOT = a @ b
COS = DOT / (np.linalg.norm(a) * np.linalg.norm(b))
ANGLE = math.degrees(math.acos(COS))
DIMS = [1, 8, 64, 256]
Q = torch.tensor([[0.7, 0.3], [1.2, 0.6], [0.1, 0.9]])  # tea, coffee, bread
SCORES = Q @ Q.T
LENGTHS = Q.norm(dim=-1, keepdim=True)
COSINES = SCORES / (LENGTHS * LENGTHS.T)


def dot_variance(d_k, n, seed, draw=torch.randn, over=-1):
    """The lesson's measurement: the variance of q·k over n pairs drawn from ``seed``."""
    g = torch.Generator().manual_seed(seed)
    q, k = draw(n, d_k, generator=g), draw(n, d_k, generator=g)
    return (q * k).sum(dim=over).var().item()


def measuring(transform=lambda v, d_k: v, **slip):
    """A learner's dot_variance with a slip: another draw or axis, or its result transformed."""

    def fn(d_k, n, seed):
        return transform(dot_variance(d_k, n, seed, **slip), d_k)

    return fn


def numpy_variance(d_k, n, seed):
    """The same measurement written with numpy's generator and np.var (no Bessel correction)."""
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((n, d_k)), rng.standard_normal((n, d_k))
    return np.var((q * k).sum(axis=-1))


def global_seed_variance(d_k, n, seed):
    torch.manual_seed(seed)  # the global generator, seeded: as repeatable as a generator of its own
    q, k = torch.randn(n, d_k), torch.randn(n, d_k)
    return float(((q * k).sum(dim=-1)).var())


N = 10_000  # the pairs behind each stored variance, as the lesson asks
V3, V768 = dot_variance(3, N, 0), dot_variance(768, N, 0)
RATIO = (V768 / V3) ** 0.5


def extend_answers(fn=dot_variance):
    var_3, var_768 = fn(3, N, 0), fn(768, N, 0)
    return fn, var_3, var_768, (var_768 / var_3) ** 0.5


def listwise(fn):
    """2.4's measure_variances(dims, n, seed), built on a dot_variance."""
    return lambda dims, n, seed: [fn(d_k, n, seed) for d_k in dims]


def lab_answers(fn=dot_variance, fit=lambda x, y: np.polyfit(x, y, 1)[0]):
    variances = [fn(d, N, 0) for d in DIMS]
    return listwise(fn), variances, fit(np.log(DIMS), np.log(variances))


def extend_typed(var_3, var_768, std_ratio):
    """2.3 with the three numbers typed in, the measuring function right."""
    return lambda: (dot_variance, var_3, var_768, std_ratio)


def lab_typed(variances, slope):
    return lambda: (listwise(dot_variance), variances, slope)


RIGHT = [
    pytest.param("2.1", lambda: ("d",), id="2.1"),
    pytest.param("2.1", lambda: (" (D) ",), id="2.1-spaces-and-capital"),
    pytest.param("2.2", lambda: (DOT, COS, ANGLE), id="2.2"),
    pytest.param("2.2", lambda: (-8, -0.467, 117.8), id="2.2-rounded"),
    pytest.param(
        "2.2", lambda: (-8.0, round(COS, 3), round(ANGLE, 2)), id="2.2-rounded-2-decimals"
    ),
    # the course's rule for typed numbers: 2 decimal places or 3 significant figures
    pytest.param("2.2", lambda: (-8, -0.47, 118), id="2.2-2-decimals-or-3-figures"),
    pytest.param("2.2", lambda: (-8, -0.466, 117.9), id="2.2-cut-not-rounded"),
    pytest.param(
        "2.2",
        lambda: (
            torch.dot(torch.tensor(a), torch.tensor(b)),
            torch.nn.functional.cosine_similarity(torch.tensor(a), torch.tensor(b), dim=0),
            torch.rad2deg(torch.arccos(torch.tensor(COS))),
        ),
        id="2.2-torch",
    ),
    pytest.param("2.3", extend_answers, id="2.3"),
    pytest.param("2.3", lambda: extend_answers(numpy_variance), id="2.3-numpy-np.var"),
    pytest.param("2.3", lambda: extend_answers(global_seed_variance), id="2.3-torch.manual_seed"),
    pytest.param(
        "2.3", extend_typed(round(V3, 2), round(V768, 1), round(RATIO, 2)), id="2.3-rounded"
    ),
    pytest.param(
        "2.3",
        lambda: (dot_variance, np.float32(V3), torch.tensor(V768), np.sqrt(V768 / V3)),
        id="2.3-types",
    ),
    pytest.param("2.4", lab_answers, id="2.4"),
    pytest.param("2.4", lambda: lab_answers(numpy_variance), id="2.4-numpy"),
    pytest.param(
        "2.4",
        lambda: lab_answers(fit=lambda x, y: np.polyfit(x / np.log(10), y / np.log(10), 1)[0]),
        id="2.4-log10",
    ),
    pytest.param("2.5", lambda: (SCORES, COSINES), id="2.5"),
    pytest.param("2.5", lambda: (SCORES.numpy(), (SCORES / LENGTHS / LENGTHS.T)), id="2.5-numpy"),
    pytest.param(
        "2.5",
        lambda: (
            SCORES.tolist(),
            torch.nn.functional.cosine_similarity(Q[:, None], Q[None], dim=-1),
        ),
        id="2.5-list-and-cosine_similarity",
    ),
    pytest.param(
        "2.5", lambda: (SCORES.round(decimals=2), COSINES.round(decimals=3)), id="2.5-rounded"
    ),
    pytest.param("2.5", lambda: (SCORES, COSINES.round(decimals=2)), id="2.5-cosines-2-decimals"),
]


@pytest.mark.parametrize("exercise_id, answers", RIGHT)
def test_right_answers_pass(exercise_id, answers):
    result = check(exercise_id, *answers())
    assert result.status == PASSED, result.message


def test_every_exercise_has_a_right_answer_above():
    assert {p.values[0] for p in RIGHT} == {e.id for e in exercises(2)}


@pytest.mark.parametrize(
    "exercise_id, words",
    [
        ("2.2", "a·b = -8, cos θ = -0.467, θ = 117.8°"),  # the worked answer of the course
        ("2.3", "√(768/3) = 16"),
        ("2.3", "predicts ±2.4"),  # the sampling error at d_k = 4 and 10 pairs
        ("2.4", "within about ±0.005"),  # the sampling error of the slope
    ],
)
def test_success_messages_carry_the_worked_numbers(exercise_id, words):
    answers = next(p.values[1] for p in RIGHT if p.values[0] == exercise_id)
    assert words in check(exercise_id, *answers()).message


@pytest.mark.parametrize("letter", ["a", "b", "c", "d"])
def test_no_answer_to_2_1_gives_away_the_dot_product_of_2_2(letter):
    """2.1 comes before 2.2: whatever option is chosen, its explanation must not say a·b = -8."""
    message = check("2.1", letter).message
    assert "-8" not in message and "−8" not in message, message


# Unfinished answers are "not done" (the lesson's own stubs: test_checks_stubs.py) -------------


def test_a_half_finished_answer_is_not_done_and_names_what_is_missing():
    result = check("2.2", DOT, None, None)
    assert result.status == NOT_DONE
    assert "`cos_ab`" in result.message and "`dot_ab`" not in result.message


# Typical mistakes fail with the right diagnosis ---------------------------------------------------


uniform_variance = measuring(draw=torch.rand)
summed_over_draws = measuring(over=0)


def normalised(x, dim):
    return x / x.norm(dim=dim, keepdim=True)


WRONG = _cases([
    ("2.1-a", "2.1", lambda: ("a",), ["(a) is not the best answer", "any number of dimensions"]),
    ("2.1-c", "2.1", lambda: ("c",), ["(c) is not the best answer", "cosine similarity", "1.20"]),
    ("2.1-b", "2.1", lambda: ("b",), ["(b) is not the best answer", "negative"]),
    ("2.1-not-a-letter", "2.1", lambda: (2,), ['one of "a", "b", "c", "d"']),
    ("2.2-not-summed", "2.2", lambda: (a * b, COS, ANGLE), ["products aᵢbᵢ", "add them up"]),
    ("2.2-outer", "2.2", lambda: (np.outer(a, b), COS, ANGLE), ["outer product"]),
    ("2.2-sign", "2.2", lambda: (8, COS, ANGLE), ["sign is lost", "2 - 4 - 6"]),
    ("2.2-norms", "2.2", lambda: (math.sqrt(14 * 21), COS, ANGLE), ["|a| |b| cos θ"]),
    ("2.2-cos-not-normalised", "2.2", lambda: (DOT, DOT, ANGLE), ["dot product itself", "√14·√21"]),
    ("2.2-cos-squared-lengths", "2.2", lambda: (DOT, DOT / (14 * 21), ANGLE), ["squared lengths"]),
    ("2.2-cos-one-length", "2.2", lambda: (DOT, DOT / math.sqrt(14), ANGLE), ["|a| only"]),
    ("2.2-sum-of-sum", "2.2", lambda: ((a + b).sum(), COS, ANGLE), ["sum of a + b"]),
    ("2.2-b-with-itself", "2.2", lambda: (b @ b, COS, ANGLE), ["b·b = |b|²"]),
    ("2.2-vector-b", "2.2", lambda: (b, COS, ANGLE), ["the vector b itself"]),
    ("2.2-cos-other-length", "2.2", lambda: (DOT, DOT / math.sqrt(21), ANGLE), ["|b| only"]),
    ("2.2-cos-sum-of-lengths", "2.2", lambda: (DOT, DOT / (math.sqrt(14) + math.sqrt(21)), ANGLE), ["|a| + |b|"]),
    ("2.2-cos-sign", "2.2", lambda: (DOT, -COS, ANGLE), ["cos θ is negative"]),
    ("2.2-radians", "2.2", lambda: (DOT, COS, math.acos(COS)), ["radians", "degrees"]),
    ("2.2-180-minus", "2.2", lambda: (DOT, COS, 180 - ANGLE), ["180° - θ"]),
    ("2.2-cos-not-arccos", "2.2", lambda: (DOT, COS, math.cos(COS)), ["np.arccos"]),
    ("2.2-cos-rounded", "2.2", lambda: (DOT, round(COS, 1), ANGLE), ["rounded to 1 decimal", "2 decimal places or 3 significant figures"]),
    ("2.2-arccos-of-dot", "2.2", lambda: (DOT, COS, float("nan")), ["NaN", "arccos of the cosine"]),
    ("2.2-arcsin", "2.2", lambda: (DOT, COS, math.degrees(math.asin(COS))), ["arcsine", "np.arccos"]),
    ("2.2-cos-as-array", "2.2", lambda: (DOT, [COS, COS], ANGLE), ["`cos_ab` should be one number"]),
    ("2.3-std", "2.3", lambda: extend_answers(measuring(lambda v, d: v**0.5)), ["standard deviation", "its square"]),
    ("2.3-scaled", "2.3", lambda: extend_answers(measuring(lambda v, d: v / d)), ["about 1", "unscaled"]),
    ("2.3-mean", "2.3", extend_typed(0.01, -0.2, 16.0), ["close to 0", "mean"]),
    ("2.3-mean-of-products", "2.3", lambda: extend_answers(measuring(lambda v, d: v / d**2)), ["1/d_k = 0.333", ".sum(dim=-1)"]),
    ("2.3-q-with-itself", "2.3", extend_typed(6.1, 1540.0, 16.0), ["2·d_k = 6", "q·q"]),
    ("2.3-uniform", "2.3", lambda: extend_answers(uniform_variance), ["torch.rand", "torch.randn"]),
    ("2.3-over-draws", "2.3", lambda: extend_answers(summed_over_draws), ["sum over the draws (dim=0)", "dim=-1"]),
    ("2.3-d_k-squared", "2.3", extend_typed(9.0, 768.0**2, 256.0), ["d_k² = 9"]),
    ("2.3-swapped", "2.3", extend_typed(768.0, 3.0, 16.0), ["swapped"]),
    ("2.3-variance-ratio", "2.3", extend_typed(3.0, 768.0, 256.0), ["ratio of the variances", "√256 = 16"]),
    ("2.3-ratio-upside-down", "2.3", extend_typed(3.0, 768.0, 1 / 16), ["upside down"]),
    ("2.3-section-4-widths", "2.3", extend_typed(4.0, 512.0, 11.3), ["`var_3` = 4", "section 4 measured at d_k = 4", "torch.randn(n, 3)"]),
    ("2.3-section-4-wide", "2.3", extend_typed(3.0, 508.0, 13.0), ["`var_768` = 508", "section 4 measured at d_k = 512", "torch.randn(n, 768)"]),
    ("2.3-section-4-ratio", "2.3", extend_typed(3.0, 768.0, 11.3), ["section 4's ratio", "√(var_768 / var_3)"]),
    # typing the theory: the function measures, the stored numbers do not
    ("2.3-typed-theory", "2.3", extend_typed(3.0, 768.0, 16.0), ["`var_3` = 3", "measures 2.968", "what the theory predicts", "sampling error"]),
    ("2.3-typed-theory-ratio", "2.3", extend_typed(V3, V768, 16.0), ["`std_ratio` = 16", "the theory's ratio", "sampling error"]),
    # a function that states the theory, ignores its seed or its n: it does not measure
    ("2.3-function-returns-theory", "2.3", lambda: (lambda d_k, n, seed: float(d_k), V3, V768, RATIO), ["returned 4 every time", "sampling error", "±2.4", "states the theory"]),
    ("2.3-function-ignores-seed", "2.3", lambda: extend_answers(lambda d_k, n, seed: dot_variance(d_k, n, int(torch.randint(0, 2**31, ())))), ["repeatable from its seed", "manual_seed(seed)"]),
    ("2.3-function-ignores-n", "2.3", lambda: (lambda d_k, n, seed: dot_variance(d_k, 10_000, seed), V3, V768, RATIO), ["scattered by only", "draw n pairs"]),
    ("2.3-function-wrong", "2.3", lambda: (measuring(lambda v, d: v**0.5), V3, V768, RATIO), ["dot_variance(50, 10000, seed=1)", "standard deviation"]),
    ("2.4-std", "2.4", lambda: lab_answers(measuring(lambda v, d: v**0.5)), ["(at d_k = 8)", "standard deviation"]),
    ("2.4-slope-of-std", "2.4", lab_typed(DIMS, 0.5), ["slope of the standard deviation"]),
    ("2.4-typed-theory", "2.4", lab_typed(DIMS, 1.0), ["(at d_k = 8)` = 8", "what the theory predicts"]),
    ("2.4-within-sampling-error-but-typed", "2.4", lab_typed(np.array(DIMS) * 1.03, 1.0), ["measures 1.004", "Store what your function measures"]),
    ("2.4-function-returns-theory", "2.4", lambda: lab_answers(lambda d_k, n, seed: float(d_k)), ["returned 4 every time"]),
    ("2.4-function-one-seed", "2.4", lambda: lab_answers(lambda d_k, n, seed: dot_variance(d_k, n, 0)), ["every time, whatever the seed", "seeded with `seed`"]),
    ("2.4-function-one-number", "2.4", lambda: (lambda dims, n, seed: dot_variance(dims[0], n, seed), *lab_answers()[1:]), ["should have shape one per d_k", "got (1,)"]),
    ("2.4-intercept", "2.4", lambda: lab_answers(fit=lambda x, y: np.polyfit(x, y, 1)[1]), ["the intercept", "take [0]"]),
    ("2.4-both-coefficients", "2.4", lambda: lab_answers(fit=lambda x, y: np.polyfit(x, y, 1)), ["two numbers", "[slope, intercept]"]),
    ("2.4-no-logs", "2.4", lambda: lab_answers(fit=lambda x, y: np.polyfit(np.exp(x), np.exp(y), 1)[0]), ["ordinary axes", "log-log"]),
    ("2.4-dict", "2.4", lab_typed(dict(zip(DIMS, DIMS, strict=True)), 1.0), ["is a dict", "one variance per d_k"]),
    ("2.4-three-dims", "2.4", lab_typed([1.0, 8.0, 64.0], 1.0), ["one per d_k in (1, 8, 64, 256)", "got (3,)"]),
    ("2.4-not-log-log", "2.4", lab_typed(DIMS, float(np.polyfit(np.log(DIMS), DIMS, 1)[0])), ["take the log of the variances too"]),
    ("2.5-elementwise", "2.5", lambda: (Q * Q, COSINES), ["entry by entry", "Q @ K.T"]),
    ("2.5-wrong-order", "2.5", lambda: (Q.T @ Q, COSINES), ["(d, d) = (2, 2)", "wrong order"]),
    ("2.5-diagonal", "2.5", lambda: ((Q * Q).sum(-1), COSINES), ["each word with itself"]),
    ("2.5-scaled", "2.5", lambda: (SCORES / math.sqrt(2), COSINES), ["lesson 3's scaling"]),
    ("2.5-softmax", "2.5", lambda: (SCORES.softmax(-1), COSINES), ["softmax weights"]),
    ("2.5-cos-not-normalised", "2.5", lambda: (SCORES, SCORES), ["raw scores", "|qᵢ| |kⱼ|"]),
    ("2.5-cos-wrong-axis", "2.5", lambda: (SCORES, normalised(Q, 0) @ normalised(Q, 0).T), ["wrong axis (axis=0", "np.linalg.norm(Q, axis=-1, keepdims=True)"]),
    ("2.5-wrong-shape", "2.5", lambda: (torch.zeros(2), COSINES), ["`qk_scores` should have shape (3, 3); got (2,)"]),
    ("2.5-cos-whole-matrix", "2.5", lambda: (SCORES, SCORES / Q.norm() ** 2), ["whole matrix"]),
    ("2.5-cos-squared", "2.5", lambda: (SCORES, COSINES / (LENGTHS * LENGTHS.T)), ["squared lengths"]),
    ("2.5-cos-rows-only", "2.5", lambda: (SCORES, SCORES / LENGTHS), ["only the rows"]),
    ("2.5-cos-lengths-without-keepdim", "2.5", lambda: (SCORES, SCORES / (Q.norm(dim=-1) * Q.norm(dim=-1))), ["|kⱼ|²", "keepdims=True", "np.linalg.norm"]),
    ("2.5-cos-rounded", "2.5", lambda: (SCORES, COSINES.round(decimals=1)), ["rounded to 1 decimal"]),
    ("2.5-scores-rounded", "2.5", lambda: (SCORES.round(decimals=1), COSINES), ["rounded to 1 decimal"]),
    ("2.5-cos-no-keepdim", "2.5", lambda: (SCORES, SCORES / Q.norm(dim=-1)), ["only the columns", "keepdims=True"]),
])  # fmt: skip


def _fit(degree=1, index=0, x=np.log, y=np.log, swap=False):
    def fit(dims, variances):
        xs, ys = x(np.exp(dims)), y(np.exp(variances))  # lab_answers hands in the logs
        return np.polyfit(*((ys, xs) if swap else (xs, ys)), degree)[index]

    return fit


def _same(x):
    return x


MORE_WRONG = _cases([
    ("2.2-a-with-itself", "2.2", lambda: (a @ a, COS, ANGLE), ["a·a = |a|²"]),
    ("2.2-product-of-sums", "2.2", lambda: (a.sum() * b.sum(), COS, ANGLE), ["multiplies the sums"]),
    ("2.2-cos-vector-length", "2.2", lambda: (DOT, DOT / (a * np.linalg.norm(b)), ANGLE), ["three numbers", "np.linalg.norm(a) is one number"]),
    ("2.2-cos-ratio-of-lengths", "2.2", lambda: (DOT, DOT / (np.linalg.norm(a) / np.linalg.norm(b)), ANGLE), ["|a| / |b|", "product"]),
    ("2.2-cos-ratio-flipped", "2.2", lambda: (DOT, DOT / (np.linalg.norm(b) / np.linalg.norm(a)), ANGLE), ["|b| / |a|", "product"]),
    ("2.2-cos-upside-down", "2.2", lambda: (DOT, 1 / COS, ANGLE), ["upside down"]),
    ("2.2-cos-times-lengths", "2.2", lambda: (DOT, DOT * math.sqrt(14 * 21), ANGLE), ["multiplied by |a| |b|"]),
    ("2.2-angle-of-cosine", "2.2", lambda: (DOT, COS, math.degrees(COS)), ["the cosine itself to degrees", "np.arccos"]),
    ("2.2-degrees-of-cos", "2.2", lambda: (DOT, COS, math.degrees(math.cos(COS))), ["np.cos turns an angle into a cosine", "the inverse is np.arccos."]),
    ("2.2-angle-radians-twice", "2.2", lambda: (DOT, COS, math.radians(math.acos(COS))), ["the wrong way", "np.degrees"]),
    ("2.3-nan", "2.3", extend_typed(float("nan"), 768.0, 16.0), ["NaN", "single number"]),
    ("2.3-two-components", "2.3", extend_typed(2.0, 768.0, 19.6), ["fits vectors of 2 components", "torch.randn(n, 3)"]),
    ("2.3-d_k-3-twice", "2.3", extend_typed(3.0, 3.1, 1.0), ["the variance at d_k = 3", "width 768"]),
    ("2.3-ratio-product", "2.3", extend_typed(3.0, 768.0, math.sqrt(3 * 768)), ["multiplied", "divide them"]),
    ("2.3-ratio-difference", "2.3", extend_typed(3.0, 768.0, math.sqrt(768) - math.sqrt(3)), ["difference of the standard deviations"]),
    ("2.3-ratio-mixed", "2.3", extend_typed(3.0, 768.0, 768 / math.sqrt(3)), ["mixes a variance with a standard deviation"]),
    ("2.4-x-not-logged", "2.4", lambda: lab_answers(fit=_fit(x=_same)), ["against d_k itself"]),
    ("2.4-x-y-swapped", "2.4", lambda: lab_answers(fit=_fit(swap=True)), ["x and y are swapped"]),
    ("2.4-parabola", "2.4", lambda: lab_answers(fit=_fit(degree=2)), ["parabola", "degree 1"]),
    ("2.4-constant", "2.4", lambda: lab_answers(fit=_fit(degree=0)), ["fits a constant"]),
    ("2.4-nan", "2.4", lab_typed([float("nan"), 8.0, 64.0, 256.0], 1.0), ["(at d_k = 1)` is NaN"]),
    ("2.4-one-width-for-all", "2.4", lab_typed([8.0, 8.0, 8.0, 8.0], 0.0), ["the variance at d_k = 8", "width 1"]),
    ("2.2-the-vector-a", "2.2", lambda: (a, COS, ANGLE), ["the vector a itself"]),
    ("2.3-negative", "2.3", extend_typed(-3.0, 768.0, 16.0), ["negative, which a variance never is"]),
    ("2.3-ratio-one-std", "2.3", extend_typed(3.0, 768.0, math.sqrt(768)), ["√var_768", "divide it by"]),
    ("2.5-cos-lengths-untransposed", "2.5", lambda: (SCORES, SCORES / (LENGTHS * LENGTHS)), ["|qᵢ|²", "lengths * lengths.T"]),
    ("2.5-cos-ratio-of-lengths", "2.5", lambda: (SCORES, SCORES / (LENGTHS / LENGTHS.T)), ["|qᵢ| / |kⱼ|"]),
    ("2.5-cos-times-lengths", "2.5", lambda: (SCORES, SCORES * (LENGTHS * LENGTHS.T)), ["multiplied by the lengths"]),
    ("2.5-cos-upside-down", "2.5", lambda: (SCORES, (LENGTHS * LENGTHS.T) / SCORES), ["upside down"]),
    ("2.5-cos-sum-of-lengths", "2.5", lambda: (SCORES, SCORES / (LENGTHS + LENGTHS.T)), ["|qᵢ| + |kⱼ|"]),
])  # fmt: skip

# The rejections above that do not name a mistake, and the kind of diagnosis they are.
NOT_NAMED = {
    "2.1-not-a-letter": "type",
    "2.2-cos-as-array": "shape",
    "2.4-dict": "type",
    "2.4-three-dims": "shape",
    "2.5-wrong-shape": "shape",
    "2.4-function-one-number": "shape",
}


@pytest.mark.parametrize("exercise_id, answers, words", WRONG + MORE_WRONG)
def test_typical_mistakes_are_named(exercise_id, answers, words, request):
    result = check(exercise_id, *answers())
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message
    case = request.node.callspec.id
    assert result.diagnosis == NOT_NAMED.get(case, "mistake"), result.message


# Near misses fail and say how far off --------------------------------------------------------------

NEAR_MISSES = _cases([
    ("2.2-dot", "2.2", lambda: (-7, COS, ANGLE), "`dot_ab` is off by up to 1: expected -8, got -7"),
    ("2.2-cos", "2.2", lambda: (DOT, COS + 0.05, ANGLE), "`cos_ab` is off by up to 0.05"),
    ("2.2-angle", "2.2", lambda: (DOT, COS, 118.5), "`angle_ab` is off by up to 0.688: expected 117.8118, got 118.5000"),
    ("2.3-var", "2.3", extend_typed(3.0, 600.0, 14.0), "`var_768` = 600, 0.781·d_k; Var(q·k) should be d_k = 768, give or take the sampling error of 10,000 pairs (±11)"),
    ("2.3-ratio", "2.3", extend_typed(3.0, 768.0, 14.0), "`std_ratio` = 14, while your variances give √(var_768 / var_3) = 16: Compute it"),
    ("2.4-slope", "2.4", lab_typed(DIMS, 1.2), "`loglog_slope` = 1.200, while your dot_variances give a slope of 1.0000"),
    ("2.5-one-entry", "2.5", lambda: (SCORES + 0.05 * torch.eye(3)[1:2].T @ torch.eye(3)[0:1], COSINES), "`qk_scores` is off by up to 0.05 at index (1, 0): expected 1.0200, got 1.0700"),
])  # fmt: skip


@pytest.mark.parametrize("exercise_id, answers, words", NEAR_MISSES)
def test_near_misses_fail_and_say_how_far_off(exercise_id, answers, words):
    result = check(exercise_id, *answers())
    assert (result.status, result.diagnosis) == (FAILED, "difference")
    assert words in result.message, result.message


# What the checks teach: the sampling error, hints, options and messages ---------------------------


def test_the_sampling_error_is_the_scatter_of_measured_variances():
    """The sampling error the 2.3 and 2.4 messages quote matches the scatter of real measurements,
    at a small n (heavy tails matter) and a larger one."""
    rng = np.random.default_rng(0)
    for d_k, n in ((4, 10), (3, 500)):
        q, k = rng.standard_normal((2, 4_000, n, d_k))
        variances = (q * k).sum(axis=-1).var(axis=-1, ddof=1)  # 4,000 measurements
        assert variances.std() == pytest.approx(sampling_error(d_k, n), rel=0.08)


def test_hints_nudge_first_and_only_the_last_shows_code():
    code = re.compile(r"`([^`]*)`")
    for exercise in exercises(2):
        *early, last = exercise.hints
        for text in early:
            spans = code.findall(text)
            assert not [x for x in spans if re.search(r"[(\[=@*+/-]|\w\.\w+\(", x)], text
            assert "@" not in text and ".T" not in text, text  # no expression outside backticks
        if exercise.kind == "code":
            assert code.search(last), last


OPTION = re.compile(r"^# - \*\*([a-d])\.\*\* (.+)$", re.MULTILINE)


def test_the_right_option_of_2_1_is_not_singled_out_by_its_length():
    source = (Path(__file__).parents[1] / "solutions" / "02_dot_products.py").read_text()
    question = source[source.index("### ✏️ 2.1") : source.index("answer_2_1 = ")]
    options = dict(OPTION.findall(question))
    assert sorted(options) == ["a", "b", "c", "d"]
    right = len(options.pop("d"))
    others = sorted(len(text) for text in options.values())
    assert right < others[-1] and right <= 1.5 * others[1]


@pytest.mark.parametrize("letter", ["a", "b", "c", "d"])
def test_no_explanation_of_2_1_points_at_2_2(letter):
    message = check("2.1", letter).message
    assert "2.2" not in message and "a·b" not in message, message


def test_the_2_5_message_leaves_the_question_below_to_the_learner():
    message = check("2.5", SCORES, COSINES).message
    for answer in ("coffee", "1.02", "0.58", "itself"):
        assert answer not in message, message


def test_the_measurement_checks_leave_the_learners_random_state_alone():
    answers = extend_answers(global_seed_variance)  # seeds the global generator itself
    torch.manual_seed(123)
    before = torch.get_rng_state()
    check("2.3", *answers)
    assert torch.equal(torch.get_rng_state(), before)


# 2.5 is a numpy exercise: its advice is numpy, and following it passes -------------------------

TORCH_ONLY = re.compile(r"\bdim=|keepdim=|\.norm\(|torch\.")
COSINE_SLIPS = [p for p in WRONG + MORE_WRONG if p.values[0] == "2.5"]


@pytest.mark.parametrize("exercise_id, answers, words", COSINE_SLIPS)
def test_2_5_advises_numpy_not_torch(exercise_id, answers, words):
    message = check(exercise_id, *answers()).message
    assert not TORCH_ONLY.search(message.replace("np.linalg.norm(", "np.linalg.norm ")), message


def test_following_2_5s_advice_on_the_lengths_passes():
    """The wrong-axis message's code, run as written on the lab's numpy Q, gives the cosines."""
    message = check("2.5", SCORES, normalised(Q, 0) @ normalised(Q, 0).T).message
    advice = re.search(r"np\.linalg\.norm\([^)]*\)", message)[0]
    q = Q.double().numpy()  # the lab's Q is a numpy array
    lengths = eval(advice, {"np": np, "Q": q})
    assert check("2.5", q @ q.T, (q @ q.T) / (lengths * lengths.T)).passed, advice
