"""Checks for lesson 2, dot products as similarity (paper §3.2.1 and its footnote 4).

Each check compares the learner's numbers with the reference and, when they differ, with the
results of the typical mistakes (products not summed, a product in the wrong order, a cosine
not normalised or normalised over the wrong axis, radians for degrees, a standard deviation
for a variance, a sum over the draws instead of the components) to name the mistake.
"""

import math

import numpy as np
import torch

from ._core import DIFFERENCE, MISTAKE, SHAPE, TYPE, Mismatch, exercise, multiple_choice
from ._tensors import as_tensor, diagnose, expect_shape, fmt, match, one_number

# Shared by several exercises -------------------------------------------------------------------


def _rounded(name: str, got: torch.Tensor, expected: torch.Tensor, keep: int) -> None:
    """A Mismatch if ``got`` is ``expected`` rounded to fewer than ``keep`` decimals."""
    for decimals in range(keep):
        if torch.allclose(got, torch.round(expected, decimals=decimals), atol=1e-6, rtol=0):
            raise Mismatch(
                f"`{name}` looks rounded to {decimals} decimal(s), which is too coarse to "
                f"check; keep at least {keep} (or do not round at all).",
                MISTAKE,
            )


# Uniform [0, 1) components: Var(qᵢkᵢ) = E[q²]E[k²] - (E[q]E[k])² = 1/9 - 1/16 = 7/144.
_UNIFORM = 7 / 144


def _check_variance(name: str, got: float, d_k: int, measured: dict[int, float]) -> None:
    """A Mismatch unless ``got`` estimates Var(q·k) = d_k; ``measured`` holds the learner's
    variances at the exercise's widths, one of which may have been measured twice."""
    # 20,000 draws estimate the variance within a few percent; a single product qᵢkᵢ
    # (d_k = 1) has heavy tails, so its estimate wanders further.
    if abs(got - d_k) <= (0.15 if d_k == 1 else 0.1) * d_k:
        return
    why = _variance_mistake(name, got, d_k, measured)
    if why:
        raise Mismatch(why, MISTAKE)
    raise Mismatch(
        f"`{name}` = {got:.4g}, {got / d_k:.3g}·d_k; Var(q·k) should be d_k = {d_k}, within a "
        "few percent from sampling.",
        DIFFERENCE,
    )


def _variance_mistake(name: str, got: float, d_k: int, measured=None) -> str | None:
    """Name the mistake behind an estimate of Var(q·k) at d_k, if it is a typical one."""

    def near(target, tol=0.12):
        return abs(got - target) <= tol * abs(target)

    said = f"`{name}` = {got:.3g}"
    if got < 0:
        return f"{said} is negative, which a variance never is: check the sign."
    if math.isnan(got):
        return (
            f"`{name}` is NaN: the variance of a single number is undefined. Compute one q·k per "
            "pair (q * k).sum(dim=-1), shape (n,), then .var() over the n pairs."
        )
    if d_k > 1 and near(math.sqrt(d_k)):
        return (
            f"{said} is about √{d_k} = {math.sqrt(d_k):.3g}, the standard deviation: the "
            "variance is its square (.var(), not .std())."
        )
    if d_k > 1 and near(1 / d_k):
        return (
            f"{said} is about 1/d_k = {1 / d_k:.3g}: that is the variance of the mean of the "
            "products (.mean(dim=-1)); q·k is their sum, .sum(dim=-1)."
        )
    if d_k > 1 and near(2 * d_k, 0.1):
        return (
            f"{said} is about 2·d_k = {2 * d_k}: that is the variance of q·q. Draw k "
            "separately from q, with its own torch.randn."
        )
    if d_k > 1 and near(1.0, 0.1):
        return (
            f"{said} is about 1: that is the variance of q·k/√d_k (lesson 3's scaling) or of a "
            f"single product qᵢkᵢ. Sum the {d_k} products of each pair, unscaled."
        )
    for other, value in (measured or {}).items():  # another width measured a second time
        if other != d_k and near(other, 0.1) and abs(value - other) <= 0.1 * other:
            return (
                f"{said} is about {other}, the variance at d_k = {other}: draw q and k of "
                f"width {d_k} here."
            )
    if 1 < d_k <= 8 and (near(d_k - 1, 0.04) or near(d_k + 1, 0.04)):
        return (
            f"{said} fits vectors of {round(got)} components; at d_k = {d_k} draw "
            f"torch.randn(n, {d_k})."
        )
    if abs(got) < 0.1 * d_k and near(_UNIFORM * d_k, 0.15):
        return (
            f"{said} fits components drawn uniformly from [0, 1) (torch.rand); they need "
            "mean 0 and variance 1: torch.randn."
        )
    if abs(got) < 0.05 * d_k:
        return (
            f"{said} is close to 0, like the mean of q·k; the variance is the mean squared "
            "distance from the mean (.var())."
        )
    if d_k > 1 and near(d_k**2):
        return (
            f"{said} is about d_k² = {d_k**2}: the variance of a sum of d_k independent "
            "unit-variance terms is d_k, not d_k²."
        )
    if got > 10 * d_k:
        return (
            f"`{name}` = {got:.4g} is far larger than d_k = {d_k}: did you sum over the draws "
            "(dim=0)? Sum over the components of each vector, dim=-1, then take the variance "
            "over the draws."
        )
    return None


# 2.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("2.1", "Recall: why dot products?", correct="d")
def recall(answer_2_1):
    """Write |q - k|² out: which term is the dot product, and what else is there?

    Think about how many scores attention needs at once, and what a GPU does best.

    (a) Distance works in any number of dimensions: |q - k|² = |q|² + |k|² - 2 q·k. The
    reasons are cost, and which way the scale points.

    (b) Dot products are negative for vectors that point opposite ways (exercise 2.2 has such
    a pair), and a softmax accepts any real score anyway.

    (c) That describes cosine similarity. A dot product grows with the lengths: in the worked
    example dog·cat = 1.20 beats dog·dog = 1.17 because cat is the longer vector.

    (d) One matrix product, QKᵀ, scores every query against every key, and GPUs are built for
    exactly that. Distance needs the same product plus the norm terms |q|² + |k|², and it says
    'small = similar', the opposite of what a softmax rewards.
    """


# 2.2 Apply: a = [2, -1, 3], b = [1, 4, -2] -----------------------------------------------------

A = torch.tensor([2.0, -1.0, 3.0], dtype=torch.float64)
B = torch.tensor([1.0, 4.0, -2.0], dtype=torch.float64)


@exercise("2.2", "Apply: a dot product, its cosine and angle")
def apply(dot_ab, cos_ab, angle_ab) -> str:
    """a·b = 2·1 + (-1)·4 + 3·(-2). The lengths are |a| = √14 and |b| = √21.

    cos θ = a·b / (|a| |b|); θ = arccos(cos θ), which numpy and math return in radians.

    np.degrees(np.arccos(cos_ab)) gives the angle in degrees.
    """
    dot = A @ B
    norm_a, norm_b = A.norm(), B.norm()
    wrong = [
        (A * B, "these are the products aᵢbᵢ, one per component: add them up for a·b."),
        (
            A,
            "this is the vector a itself: a·b multiplies a and b component by component, then "
            "adds.",
        ),
        (
            B,
            "this is the vector b itself: a·b multiplies a and b component by component, then "
            "adds.",
        ),
        (
            torch.outer(A, B),
            "this is every product aᵢbⱼ (an outer product); a dot product pairs only matching "
            "components, aᵢbᵢ, and sums them.",
        ),
    ]
    got = _one("dot_ab", dot_ab, wrong)
    wrong = [
        (-dot, "the sign is lost: (-1)·4 = -4 and 3·(-2) = -6 are negative, so a·b = 2 - 4 - 6."),
        (norm_a * norm_b, "that is |a| |b|; the dot product is |a| |b| cos θ, and here cos θ < 0."),
        ((A + B).sum(), "that is the sum of a + b; multiply matching components, then add."),
        (A.sum() * B.sum(), "that multiplies the sums; multiply matching components, then add."),
        (A @ A, "that is a·a = |a|², a with itself; the question is a·b."),
        (B @ B, "that is b·b = |b|², b with itself; the question is a·b."),
    ]
    diagnose("dot_ab", got, dot, wrong, atol=1e-6)
    cos = dot / (norm_a * norm_b)
    with_vectors = [  # a length left as the vector itself: three numbers
        (dot / (A * norm_b), _VECTOR_LENGTH),
        (dot / (norm_a * B), _VECTOR_LENGTH),
        (dot / (A * B), _VECTOR_LENGTH),
    ]
    got = _one("cos_ab", cos_ab, with_vectors)
    wrong = [
        (dot, "that is the dot product itself: the cosine divides it by |a| |b| = √14·√21."),
        (
            dot / (norm_a**2 * norm_b**2),
            "you divided by the squared lengths |a|²|b|² = 14·21; divide by the lengths √14·√21.",
        ),
        (dot / norm_a, "you divided by |a| only: the cosine divides by |a| |b|."),
        (dot / norm_b, "you divided by |b| only: the cosine divides by |a| |b|."),
        (dot * norm_b / norm_a, "you divided by |a| / |b|; divide by the product |a| |b|."),
        (dot * norm_a / norm_b, "you divided by |b| / |a|; divide by the product |a| |b|."),
        (dot * norm_a * norm_b, "you multiplied by |a| |b|; the cosine divides by it."),
        (1 / cos, "upside down: cos θ = a·b / (|a| |b|), the dot product on top."),
        (-cos, "the sign is lost: a·b = -8 is negative, so cos θ is negative too."),
        (dot / (norm_a + norm_b), "you divided by |a| + |b|; divide by the product |a| |b|."),
    ]
    _rounded("cos_ab", got, cos, keep=3)
    diagnose("cos_ab", got, cos, wrong, atol=1e-3)
    angle = torch.rad2deg(torch.arccos(cos))
    got = one_number("angle_ab", angle_ab, finite=False)  # a NaN has its own diagnosis
    if torch.isnan(got):
        raise Mismatch(
            "`angle_ab` is NaN: arccos only accepts numbers between -1 and 1. Take the arccos "
            "of the cosine, not of the dot product.",
            MISTAKE,
        )
    _rounded("angle_ab", got, angle, keep=1)
    diagnose("angle_ab", got, angle, _angle_mistakes(cos, angle), atol=0.05)
    return (
        f"a·b = {dot:.0f}, cos θ = {cos:.3f}, θ = {angle:.1f}°: the negative sign says the two "
        "vectors point in broadly opposite directions."
    )


_VECTOR_LENGTH = (
    "three numbers: a length was left as the vector itself. |a| = np.linalg.norm(a) is one "
    "number, √14."
)


def _one(name: str, x, wrong) -> torch.Tensor:
    """The answer as one number; several numbers are a mistake from ``wrong`` or a shape."""
    got = as_tensor(name, x)
    if got.numel() != 1:
        named = match(got, wrong)
        raise Mismatch(
            named or f"`{name}` should be one number; got shape {tuple(got.shape)}",
            MISTAKE if named else SHAPE,
        )
    return got.reshape(())


def _angle_mistakes(cos, angle) -> list:
    return [
        (
            torch.arccos(cos),
            "this angle is in radians; the exercise asks for degrees: math.degrees(θ), or θ·180/π.",
        ),
        (
            torch.deg2rad(torch.arccos(cos)),
            "the radians were converted the wrong way: np.degrees turns radians into degrees "
            "(np.radians does the opposite).",
        ),
        (180 - angle, "this is 180° - θ: arccos of a negative cosine is more than 90°."),
        (
            torch.cos(cos),
            "np.cos turns an angle into a cosine; the inverse is np.arccos, then convert to "
            "degrees.",
        ),
        (
            torch.rad2deg(torch.cos(cos)),
            "np.cos turns an angle into a cosine; the inverse is np.arccos.",
        ),
        (
            torch.rad2deg(cos),
            "you converted the cosine itself to degrees: take np.arccos(cos_ab) first, then "
            "np.degrees.",
        ),
        (
            torch.rad2deg(torch.arcsin(cos)),
            "this is the arcsine (90° - θ); the angle whose cosine is cos_ab is np.arccos(cos_ab).",
        ),
    ]


# 2.3 Extend: Var(q·k) = d_k at two widths the lesson does not measure -------------------------

NARROW, WIDE = 3, 768  # the exercise's widths; section 4 measures 4 and 512 (SECTION_4)
SECTION_4 = (4, 512)


@exercise("2.3", "Extend: Var(q·k) at d_k = 3 and 768")
def extend(var_3, var_768, std_ratio) -> str:
    """Draw q and k as torch.randn(n, d_k) each: n pairs, one per row.

    q·k for every pair at once: (q * k).sum(dim=-1), shape (n,). Then .var().

    std_ratio = (var_768 / var_3) ** 0.5.
    """
    narrow = float(one_number("var_3", var_3, finite=False))  # a NaN has its own diagnosis
    wide = float(one_number("var_768", var_768, finite=False))
    if abs(narrow - WIDE) <= 0.1 * WIDE and abs(wide - NARROW) <= 0.1 * NARROW:
        raise Mismatch("`var_3` and `var_768` are swapped: the variance grows with d_k.", MISTAKE)
    measured = {NARROW: narrow, WIDE: wide}
    _check_section_4("var_3", narrow, NARROW, measured)
    _check_variance("var_3", narrow, NARROW, measured)
    _check_section_4("var_768", wide, WIDE, measured)
    _check_variance("var_768", wide, WIDE, measured)
    ratio = float(one_number("std_ratio", std_ratio))
    expected = math.sqrt(WIDE / NARROW)
    why = _ratio_mistake(ratio, narrow, wide)
    if why:
        raise Mismatch(why, MISTAKE)
    if abs(ratio - expected) > 0.08 * expected:
        raise Mismatch(
            f"`std_ratio` = {ratio:.3g}; expected √(var_768 / var_3) ≈ √(768/3) = {expected:.0f}.",
            DIFFERENCE,
        )
    return (
        f"Var(q·k) ≈ {narrow:.2f} at d_k = 3 and ≈ {wide:.0f} at d_k = 768; standard deviations "
        f"{math.sqrt(narrow):.2f} and {math.sqrt(wide):.1f}, {ratio:.1f}× apart: √(768/3) = 16."
    )


def _check_section_4(name: str, got: float, d_k: int, measured: dict[int, float]) -> None:
    """A Mismatch if ``got`` is section 4's variance at its width of the same kind, 4 or 512,
    and not a measurement at ``d_k`` (nor at the exercise's other width)."""
    copied = SECTION_4[0] if d_k == NARROW else SECTION_4[1]
    if abs(got - copied) <= 0.05 * copied and abs(got - d_k) > 0.1 * d_k:
        raise Mismatch(
            f"`{name}` = {got:.4g} is about {copied}, the variance section 4 measured at "
            f"d_k = {copied}; this exercise asks for d_k = {d_k}: draw torch.randn(n, {d_k}).",
            MISTAKE,
        )


def _ratio_mistake(ratio: float, narrow: float, wide: float) -> str | None:
    """Name what ``std_ratio`` holds instead of √(var_768 / var_3), if it is a typical slip."""
    expected = math.sqrt(wide / narrow)

    def near(target, tol=0.08):
        return abs(ratio - target) <= tol * abs(target)

    if near(WIDE / NARROW, 0.1) or near(wide / narrow, 0.02):
        return (
            f"`std_ratio` = {ratio:.3g} is the ratio of the variances; standard deviations "
            "grow as √d_k, so the ratio is √256 = 16."
        )
    if abs(ratio - 1 / expected) <= 0.01:
        return (
            "`std_ratio` is upside down: divide the standard deviation at d_k = 768 by the one "
            "at d_k = 3."
        )
    if near(math.sqrt(wide), 0.02):
        return (
            "`std_ratio` is √var_768, the standard deviation at d_k = 768 alone: divide it by "
            "the one at d_k = 3."
        )
    if near(math.sqrt(wide * narrow), 0.02):
        return (
            "`std_ratio` = √(var_768 · var_3): the variances are multiplied; divide them, "
            "√(var_768 / var_3)."
        )
    if near(math.sqrt(wide) - math.sqrt(narrow), 0.02):
        return (
            "`std_ratio` is the difference of the standard deviations; the question asks how "
            "many times larger: divide them."
        )
    if near(wide / math.sqrt(narrow), 0.02) or near(math.sqrt(wide) / narrow, 0.02):
        return (
            "`std_ratio` mixes a variance with a standard deviation: take the square root of "
            "both, √var_768 / √var_3."
        )
    if near(math.sqrt(SECTION_4[1] / SECTION_4[0]), 0.02):
        return (
            f"`std_ratio` = {ratio:.3g} is section 4's ratio, √(512/4) ≈ 11.3; this one is "
            "between d_k = 3 and d_k = 768: √(var_768 / var_3)."
        )
    return None


# 2.4 (lab L2.A) The variance against d_k -------------------------------------------------------

DIMS = (1, 8, 64, 256)


@exercise("2.4", "Lab L2.A: the variance against d_k, on log-log axes")
def slope(dot_variances, loglog_slope) -> str:
    """Reuse 2.3's recipe in a loop over dims; collect one variance per d_k in
    dot_variances.

    A line in log-log axes: np.polyfit(np.log(dims), np.log(dot_variances), 1).

    np.polyfit returns [slope, intercept]: loglog_slope is element [0].
    """
    if isinstance(dot_variances, dict):
        raise Mismatch(
            "`dot_variances` is a dict; make it a list with one variance per d_k, in the order "
            "of dims (list(your_dict.values()) if it was filled in that order).",
            TYPE,
        )
    got = as_tensor("dot_variances", dot_variances).flatten()
    expect_shape("dot_variances", got, (len(DIMS),), f"one per d_k in {DIMS}")
    values = got.tolist()
    for d_k, v in zip(DIMS, values, strict=True):
        _check_variance(
            f"dot_variances (at d_k = {d_k})", v, d_k, dict(zip(DIMS, values, strict=True))
        )
    s = as_tensor("loglog_slope", loglog_slope).flatten()
    if s.numel() == 2:
        raise Mismatch(
            "`loglog_slope` holds two numbers: np.polyfit(x, y, 1) returns [slope, intercept]; "
            "take [0].",
            MISTAKE,
        )
    s = float(one_number("loglog_slope", s))
    _check_slope(s, values)
    return (
        f"variances {fmt(got)} and slope {s:.3f}: on log-log axes Var(q·k) = d_k is a line of "
        "slope 1."
    )


def _check_slope(s: float, values: list[float]) -> None:
    with np.errstate(all="ignore"):  # a variance of 0 or below has no log; its fits are NaN
        x, y = np.log(DIMS), np.log(values)
        fitted = np.polyfit(x, y, 1)[0]
        fits = [
            (
                np.polyfit(x, y, 1)[1],
                "`loglog_slope` is the intercept: np.polyfit(x, y, 1) "
                "returns [slope, intercept]; take [0].",
            ),
            (
                np.polyfit(DIMS, values, 1)[0],
                "`loglog_slope` is the slope of variance against "
                "d_k on ordinary axes; the lab asks for log-log axes: fit np.log(dot_variances) "
                "against np.log(dims).",
            ),
            (
                np.polyfit(DIMS, y, 1)[0],
                "`loglog_slope` fits log(variance) against d_k itself: "
                "take the log of the dims too, np.log(dims).",
            ),
            (
                np.polyfit(x, values, 1)[0],
                "`loglog_slope` fits the variances themselves against "
                "log d_k: take the log of the variances too, np.log(dot_variances).",
            ),
            (
                np.polyfit(y, x, 1)[0],
                "x and y are swapped: np.polyfit(x, y, 1) takes log d_k first, then log variance.",
            ),
            (
                np.polyfit(x, y, 2)[0],
                "np.polyfit(..., 2) fits a parabola, and [0] is its x² "
                "coefficient: fit a line, degree 1.",
            ),
            (
                np.polyfit(x, y, 0)[0],
                "np.polyfit(..., 0) fits a constant, the mean of log "
                "variance: fit a line, degree 1.",
            ),
        ]
    for value, message in fits:
        if abs(s - value) < 1e-6 < abs(value - fitted):
            raise Mismatch(message, MISTAKE)
    if abs(s - 0.5) < 0.05:
        raise Mismatch(
            "`loglog_slope` ≈ 0.5 is the slope of the standard deviation, √d_k; fit "
            "log(variance) against log(d_k).",
            MISTAKE,
        )
    if abs(s - 1) > 0.05:
        raise Mismatch(
            f"`loglog_slope` = {s:.3f}, while your dot_variances give a slope of {fitted:.3f} "
            "on log-log axes: np.polyfit(np.log(dims), np.log(dot_variances), 1)[0], close "
            "to 1.",
            DIFFERENCE,
        )


# 2.5 (lab L2.B) QKᵀ and cosines for three new words -------------------------------------------

# tea, coffee and bread, the words of the lab (section 2 worked with cat, dog and car)
WORDS = torch.tensor([[0.7, 0.3], [1.2, 0.6], [0.1, 0.9]], dtype=torch.float64)


@exercise("2.5", "Lab L2.B: QKᵀ and cosines for tea, coffee and bread")
def matrices(qk_scores, qk_cosines) -> str:
    """One line: Q @ K.T. The result is (3, 3), row i = word i's scores.

    Each word's length: Q.norm(dim=-1, keepdim=True), shape (3, 1).

    qk_cosines = qk_scores / (lengths * lengths.T): entry (i, j) is divided by |qᵢ| |kⱼ|.
    """
    Q = K = WORDS
    expected = Q @ K.T  # (n, d) @ (d, m) -> (n, m)
    got = as_tensor("qk_scores", qk_scores)
    shapes = {
        (3, 2): "Q * K multiplies entry by entry, giving (3, 2); QKᵀ is a matrix product: "
        "Q @ K.T, shape (3, 3).",
        (2, 2): "this is (d, d) = (2, 2): the product is in the wrong order (Qᵀ K). Q @ K.T is "
        "(n, m) = (3, 3), one row per query.",
        (3,): "three numbers: each word with itself only, or a row sum. Q @ K.T scores every "
        "pair, shape (3, 3).",
    }
    if tuple(got.shape) in shapes:
        raise Mismatch(shapes[tuple(got.shape)], MISTAKE)
    wrong = [
        (
            expected / math.sqrt(2),
            "you divided by √d_k: that is lesson 3's scaling. Here the raw scores Q @ K.T.",
        ),
        (
            expected.softmax(-1),
            "these are softmax weights (lesson 3); here the raw scores Q @ K.T.",
        ),
    ]
    if got.shape == expected.shape:
        _rounded("qk_scores", got, expected, keep=2)
    diagnose("qk_scores", got, expected, wrong, atol=1e-3)
    norms = Q.norm(dim=-1, keepdim=True)  # (n, 1): one length per word
    cos = expected / (norms * norms.T)
    got = as_tensor("qk_cosines", qk_cosines)
    if got.shape == cos.shape:
        _rounded("qk_cosines", got, cos, keep=3)
    diagnose("qk_cosines", got, cos, _cosine_mistakes(Q, expected, norms), atol=1e-3)
    return (
        f"QKᵀ row tea = {fmt(expected[0])}: tea scores higher with coffee ({expected[0, 1]:.2f}) "
        f"than with itself ({expected[0, 0]:.2f}); its cosines {fmt(cos[0])} put itself first "
        "again."
    )


def _cosine_mistakes(Q, scores, norms) -> list:
    by_column = Q / Q.norm(dim=0, keepdim=True)
    return [
        (
            scores,
            "these are the raw scores: a cosine divides each score by the two lengths, |qᵢ| |kⱼ|.",
        ),
        (
            by_column @ by_column.T,
            "the norms were taken over the wrong axis (dim=0, down each column); a word's "
            "length is over its own components: Q.norm(dim=-1, keepdim=True).",
        ),
        (
            scores / Q.norm() ** 2,
            "you divided by the norm of the whole matrix; each word needs its own length: "
            "Q.norm(dim=-1, keepdim=True).",
        ),
        (
            scores / (norms * norms.T) ** 2,
            "you divided by the squared lengths |qᵢ|²|kⱼ|²; divide by the lengths.",
        ),
        (scores / norms, "only the rows were divided, by |qᵢ|; divide by |kⱼ| as well."),
        (
            scores / norms**2,
            "each row was divided by |qᵢ|²: lengths * lengths squares each row's length; "
            "lengths * lengths.T pairs |qᵢ| with |kⱼ|.",
        ),
        (
            scores / (norms / norms.T),
            "you divided by |qᵢ| / |kⱼ|; divide by the product |qᵢ| |kⱼ|: lengths * lengths.T.",
        ),
        (
            scores * (norms * norms.T),
            "you multiplied by the lengths |qᵢ| |kⱼ|; the cosine divides by them.",
        ),
        (
            (norms * norms.T) / scores,
            "upside down: the cosine is the score divided by |qᵢ| |kⱼ|, the score on top.",
        ),
        (
            scores / (norms + norms.T),
            "you divided by |qᵢ| + |kⱼ|; divide by the product |qᵢ| |kⱼ|.",
        ),
        (
            scores / norms.T,
            "only the columns were divided, by |kⱼ|; divide by |qᵢ| as well (keepdim=True keeps "
            "the two apart).",
        ),
        (
            scores / norms.T**2,
            "each column was divided by |kⱼ|²: without keepdim=True, lengths * lengths.T "
            "multiplies two vectors of shape (3,) entry by entry. Keep the lengths (3, 1): "
            "Q.norm(dim=-1, keepdim=True).",
        ),
    ]
