"""Checks for lesson 2, dot products as similarity (paper §3.2.1 and its footnote 4).

Each check compares the learner's numbers with the reference and, when they differ, with the
results of the typical mistakes (products not summed, a cosine not normalised or normalised
over the wrong axis, radians for degrees, a standard deviation for a variance, ...). 2.3 and
2.4 ask for measurements: their checks call the learner's measuring function again, on other
widths, sizes and seeds, against the sampling error, so typing the theory's values fails.
"""

import math

import numpy as np
import torch

from ._core import DIFFERENCE, MISTAKE, SHAPE, TYPE, Mismatch, call, exercise, multiple_choice
from ._mistakes import match_number
from ._tensors import as_tensor, diagnose, expect_shape, fmt, one_number, typed_close

# Shared by several exercises -------------------------------------------------------------------


# Uniform [0, 1) components: Var(qᵢkᵢ) = E[q²]E[k²] - (E[q]E[k])² = 1/9 - 1/16 = 7/144.
_UNIFORM = 7 / 144
N_PAIRS = 10_000  # the pairs behind each variance that 2.3 and 2.4 store, all drawn with seed 0
SMALL_N, SEEDS = 10, range(1, 41)  # a variance from 10 pairs, measured with 40 seeds


def sampling_error(d_k: int, n: int) -> float:
    """The standard deviation of the variance of q·k measured from ``n`` pairs of width ``d_k``.

    q·k has variance d_k and fourth moment 3d_k² + 6d_k (excess kurtosis 6/d_k), so the sample
    variance s² has Var(s²) = d_k² (2/(n - 1) + 6/(d_k n)): about d_k·√(2/n) for wide vectors,
    ±1.4% of d_k at n = 10,000, but ±61% at d_k = 4 and n = 10.
    """
    return d_k * math.sqrt(2 / (n - 1) + 6 / (d_k * n))


def _check_variance(name: str, got: float, d_k: int, measured: dict, n: int = N_PAIRS) -> None:
    """A Mismatch unless ``got`` estimates Var(q·k) = d_k from ``n`` pairs, within 5 sampling
    errors; ``measured`` holds the learner's variances at the exercise's widths."""
    error = sampling_error(d_k, n)
    if abs(got - d_k) <= 5 * error:
        return
    if why := _variance_mistake(name, got, d_k, measured):
        raise Mismatch(why, MISTAKE)
    raise Mismatch(
        f"`{name}` = {got:.4g}, {got / d_k:.3g}·d_k; Var(q·k) should be d_k = {d_k}, give or "
        f"take the sampling error of {n:,} pairs (±{error:.2g}).",
        DIFFERENCE,
    )


def _variance_mistake(name: str, got: float, d_k: int, measured: dict) -> str | None:
    """Name the mistake behind an estimate of Var(q·k) at d_k, if it is a typical one;
    ``measured`` holds the learner's variances at the exercise's widths."""
    said, root, wide, narrow = f"`{name}` = {got:.3g}", math.sqrt(d_k), d_k > 1, 1 < d_k <= 8
    if got < 0:
        return f"{said} is negative, which a variance never is: check the sign."
    if math.isnan(got):
        return (
            f"`{name}` is NaN: the variance of a single number is undefined. Compute one q·k per "
            "pair (q * k).sum(dim=-1), shape (n,), then .var() over the n pairs."
        )
    fits = f"{said} fits vectors of {{:g}} components; at d_k = {d_k} draw torch.randn(n, {d_k})."
    near = [  # (value, how far from it, what it means), the first that fits is named
        *[(w, 0.1 * w, f"{said} is about {w:g}, the variance at d_k = {w:g}: draw q and k of "
           f"width {d_k} here.") for w, v in measured.items() if w != d_k and abs(v - w) <= w / 10],
        *[(w, 0.04 * w, fits.format(w)) for w in (d_k - 1, d_k + 1) if narrow],
        (0.0, 0.05 * d_k, f"{said} is close to 0, like the mean of q·k; the variance is the mean "
         "squared distance from the mean (.var())."),
        (d_k**2, 0.12 * d_k**2 if wide else -1, f"{said} is about d_k² = {d_k**2:g}: the variance "
         "of a sum of d_k independent unit-variance terms is d_k, not d_k²."),
    ]  # fmt: skip
    if abs(got) < 0.1 * d_k:
        uniform = "fits components drawn uniformly from [0, 1) (torch.rand); they need mean 0 "
        near.insert(-2, (_UNIFORM * d_k, 0.15 * _UNIFORM * d_k, f"{said} {uniform}and variance "
                         "1: torch.randn."))  # fmt: skip
    if wide:
        near[:0] = [
            (root, 0.12 * root, f"{said} is about √{d_k} = {root:.3g}, the standard deviation: "
             "the variance is its square (.var(), not .std())."),
            (1 / d_k, 0.12 / d_k, f"{said} is about 1/d_k = {1 / d_k:.3g}: that is the variance "
             "of the mean of the products (.mean(dim=-1)); q·k is their sum, .sum(dim=-1)."),
            (2 * d_k, 0.2 * d_k, f"{said} is about 2·d_k = {2 * d_k:g}: that is the variance of "
             "q·q. Draw k separately from q, with its own torch.randn."),
            (1.0, 0.1, f"{said} is about 1: that is the variance of q·k/√d_k (lesson 3's "
             f"scaling) or of a single product qᵢkᵢ. Sum the {d_k} products of each pair, "
             "unscaled."),
        ]  # fmt: skip
    if why := next((m for v, off, m in near if abs(got - v) <= off), None):
        return why
    if got > 10 * d_k:
        return (
            f"`{name}` = {got:.4g} is far larger than d_k = {d_k}: did you sum over the draws "
            "(dim=0)? Sum over the components of each vector, dim=-1, then take the variance "
            "over the draws."
        )
    return None


def _called(d_k, n, seed, listwise: bool) -> str:
    """How the check calls the learner's function: 2.3's takes one width, 2.4's a list."""
    if listwise:
        return f"measure_variances([{d_k}], {n}, seed={seed})"
    return f"dot_variance({d_k}, {n}, seed={seed})"


def _measured(fn, d_k: int, n: int, seed: int, listwise: bool = False) -> float:
    """What the learner's function measures at one width, as one number."""
    said = _called(d_k, n, seed, listwise)
    got = as_tensor(said, call(fn, [d_k] if listwise else d_k, n, seed, during=f"as {said}"))
    if got.numel() != 1:
        one = "one variance per d_k in its list, one here." if listwise else "one variance."
        raise Mismatch(f"`{said}` returned {got.numel()} numbers; it should return {one}", SHAPE)
    return float(got.flatten()[0])


def _check_measures(fn, listwise: bool = False) -> tuple[float, float]:
    """A Mismatch unless ``fn`` measures Var(q·k): the same seed gives the same value, 10,000
    pairs at a new width land within the sampling error of d_k, and 10 pairs scatter from
    seed to seed as much as the sampling error says (a value typed from theory does not
    scatter at all). Returns that scatter and the sampling error.

    ``fn(d_k, n, seed)`` is 2.3's ``dot_variance``; with ``listwise``, ``fn(dims, n, seed)`` is
    2.4's ``measure_variances``, called with one width at a time."""
    first, again = (_measured(fn, 4, 1_000, 5, listwise) for _ in range(2))
    if first != again:
        raise Mismatch(
            f"`{_called(4, 1000, 5, listwise)}` gave {first:.4g}, then {again:.4g}: a "
            "measurement is repeatable from its seed. Draw q and k from a generator seeded "
            "with `seed` (torch.Generator().manual_seed(seed), passed as generator=...).",
            MISTAKE,
        )
    wide = _measured(fn, 50, N_PAIRS, 1, listwise)
    _check_variance(_called(50, N_PAIRS, 1, listwise), wide, 50, {})
    values = np.array([_measured(fn, 4, SMALL_N, seed, listwise) for seed in SEEDS])
    scatter, error = float(values.std(ddof=1)), sampling_error(4, SMALL_N)
    yours = _called(4, SMALL_N, "seed", listwise).replace("seed=seed", "seed")
    said = (
        "A variance measured from n pairs differs from d_k by its sampling error, about "
        f"d_k·√(2/n): ±{error:.1f} at d_k = 4 with n = {SMALL_N} pairs, ±1.4% with 10,000. Over "
        f"{len(SEEDS)} seeds, your {yours}"
    )
    if not np.isfinite(scatter) or scatter == 0:
        every = f"{said} returned {values[0]:.4g} every time"
        if typed_close(values[0], 4):
            raise Mismatch(
                f"{every}: that states the theory instead of measuring. Draw n pairs from the "
                "seed and return the variance of their dot products.",
                MISTAKE,
            )
        raise Mismatch(
            f"{every}, whatever the seed: draw the pairs from a generator seeded with `seed`, "
            "so that each seed gives other pairs.",
            MISTAKE,
        )
    if scatter < error / 3:
        only = f"{said} scattered by only ±{scatter:.2g}"
        raise Mismatch(f"{only}: does it draw n pairs, or a fixed number?", MISTAKE)
    if scatter > 3 * error:
        raise Mismatch(
            f"{said} scattered by ±{scatter:.2g}, far more than sampling explains: draw the n "
            "pairs with unit-variance components (torch.randn) and take the variance of q·k.",
            DIFFERENCE,
        )
    return scatter, error


def _check_stored(name: str, got, again, d_k: int, call_text: str) -> None:
    """A Mismatch unless ``got`` is ``again``, what the learner's function measures at d_k
    when called as ``call_text``."""
    if typed_close(got, again):
        return
    theory = (
        f"{got:g} is what the theory predicts; a measurement differs from it by the sampling "
        f"error (±{sampling_error(d_k, N_PAIRS):.2g} here). "
        if typed_close(got, d_k)
        else ""
    )
    raise Mismatch(
        f"`{name}` = {got:.4g}, but your {call_text} measures {again:.4g}: {theory}Store what "
        "your function measures.",
        MISTAKE,
    )


def _theory(got: float, theory: float, what: str) -> tuple[str, str]:
    """A sentence naming ``got`` as the theory's ``what`` if it is that, and the diagnosis."""
    if typed_close(got, theory):
        why = "yours is measured, so it differs by the sampling error. "
        return f"{theory:g} is the theory's {what}; {why}", MISTAKE
    return "", DIFFERENCE


# 2.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("2.1", "Recall: why dot products?", correct="d")
def recall(answer_2_1):
    """Write |q - k|² out: which term is the dot product, and what else is there?

    Think about how many scores attention needs at once, and what a GPU does best.

    (a) Distance works in any number of dimensions: |q - k|² = |q|² + |k|² - 2 q·k. The
    reasons are cost, and which way the scale points.

    (b) A dot product is negative whenever the angle between the vectors is more than 90°
    (cos θ < 0), and a softmax accepts any real score anyway: its weights are positive
    whatever the scores.

    (c) That describes cosine similarity. A dot product grows with the lengths: in the worked
    example dog·cat = 1.20 beats dog·dog = 1.17 because cat is the longer vector.

    (d) One matrix product, QKᵀ, scores every query against every key, and GPUs are built for
    exactly that. Distance needs the same product plus the norm terms |q|² + |k|², and it says
    'small = similar', the opposite of what a softmax rewards.
    """


# 2.2 Apply: a = [2, -1, 3], b = [1, 4, -2] -----------------------------------------------------

A = torch.tensor([2.0, -1.0, 3.0], dtype=torch.float64)
B = torch.tensor([1.0, 4.0, -2.0], dtype=torch.float64)
_ITSELF = "itself: a·b multiplies a and b component by component, then adds."
_VECTOR = "three numbers: a length was left as the vector itself. |a| = np.linalg.norm(a) is one "
_VECTOR += "number, √14."
_PRODUCT = "divide by the product |a| |b|."
_ARCCOS = "np.cos turns an angle into a cosine; the inverse is np.arccos"


@exercise("2.2", "Apply: a dot product, its cosine and angle")
def apply(dot_ab, cos_ab, angle_ab) -> str:
    """Multiply matching components and add the products up. A vector's length is the
    square root of its dot product with itself.

    The cosine divides the dot product by both lengths; the angle is the arccos of the cosine,
    which numpy and math return in radians.

    `cos_ab = dot_ab / (np.linalg.norm(a) * np.linalg.norm(b))`, then
    `angle_ab = np.degrees(np.arccos(cos_ab))`.
    """
    dot, la, lb = A @ B, A.norm(), B.norm()
    cos = dot / (la * lb)
    angle = torch.rad2deg(torch.arccos(cos))
    diagnose("dot_ab", dot_ab, dot, _dot_slips(dot, la, lb), typed=True)
    diagnose("cos_ab", cos_ab, cos, _cosine_slips(dot, cos, la, lb), typed=True)
    if torch.isnan(got := one_number("angle_ab", angle_ab, finite=False)):
        raise Mismatch(
            "`angle_ab` is NaN: arccos only accepts numbers between -1 and 1. Take the arccos "
            "of the cosine, not of the dot product.",
            MISTAKE,
        )
    radians = torch.arccos(cos)
    angle_slips = [
        (radians, "this angle is in radians; the exercise asks for degrees: math.degrees(θ), or "
         "θ·180/π."),
        (torch.deg2rad(radians), "the radians were converted the wrong way: np.degrees turns "
         "radians into degrees (np.radians does the opposite)."),
        (180 - angle, "this is 180° - θ: arccos of a negative cosine is more than 90°."),
        (torch.cos(cos), f"{_ARCCOS}, then convert to degrees."),
        (torch.rad2deg(torch.cos(cos)), f"{_ARCCOS}."),
        (torch.rad2deg(cos), "you converted the cosine itself to degrees: take "
         "np.arccos(cos_ab) first, then np.degrees."),
        (torch.rad2deg(torch.arcsin(cos)), "this is the arcsine (90° - θ); the angle whose "
         "cosine is cos_ab is np.arccos(cos_ab)."),
    ]  # fmt: skip
    diagnose("angle_ab", got, angle, angle_slips, typed=True)
    return (
        f"a·b = {dot:.0f}, cos θ = {cos:.3f}, θ = {angle:.1f}°: the negative sign says the two "
        "vectors point in broadly opposite directions."
    )


def _dot_slips(dot, la, lb) -> dict:
    """What ``dot_ab`` holds instead of a·b; a slip that gives several numbers is named by them."""
    return {
        "these are the products aᵢbᵢ, one per component: add them up for a·b.": A * B,
        f"this is the vector a {_ITSELF}": A,
        f"this is the vector b {_ITSELF}": B,
        "this is every product aᵢbⱼ (an outer product); a dot product pairs only matching "
        "components, aᵢbᵢ, and sums them.": torch.outer(A, B),
        "the sign is lost: (-1)·4 = -4 and 3·(-2) = -6 are negative, so a·b = 2 - 4 - 6.": -dot,
        "that is |a| |b|; the dot product is |a| |b| cos θ, and here cos θ < 0.": la * lb,
        "that is the sum of a + b; multiply matching components, then add.": (A + B).sum(),
        "that multiplies the sums; multiply matching components, then add.": A.sum() * B.sum(),
        "that is a·a = |a|², a with itself; the question is a·b.": A @ A,
        "that is b·b = |b|², b with itself; the question is a·b.": B @ B,
    }


def _cosine_slips(dot, cos, la, lb) -> list:
    """What ``cos_ab`` holds instead of a·b / (|a| |b|)."""
    return [
        *((v, _VECTOR) for v in (dot / (A * lb), dot / (la * B), dot / (A * B))),
        (dot, "that is the dot product itself: the cosine divides it by |a| |b| = √14·√21."),
        (dot / (la**2 * lb**2), "you divided by the squared lengths |a|²|b|² = 14·21; divide by "
         "the lengths √14·√21."),
        (dot / la, "you divided by |a| only: the cosine divides by |a| |b|."),
        (dot / lb, "you divided by |b| only: the cosine divides by |a| |b|."),
        (dot * lb / la, f"you divided by |a| / |b|; {_PRODUCT}"),
        (dot * la / lb, f"you divided by |b| / |a|; {_PRODUCT}"),
        (dot * la * lb, "you multiplied by |a| |b|; the cosine divides by it."),
        (la * lb / dot, "upside down: cos θ = a·b / (|a| |b|), the dot product on top."),
        (-cos, "the sign is lost: a·b = -8 is negative, so cos θ is negative too."),
        (dot / (la + lb), f"you divided by |a| + |b|; {_PRODUCT}"),
    ]  # fmt: skip


# 2.3 Extend: Var(q·k) = d_k at two widths the lesson does not measure -------------------------

NARROW, WIDE = 3, 768  # the exercise's widths; section 4 measures 4 and 512 (SECTION_4)
SECTION_4 = (4, 512)


@exercise("2.3", "Extend: Var(q·k) at d_k = 3 and 768, measured")
def extend(dot_variance, var_3, var_768, std_ratio) -> str:
    """A measurement draws its own numbers: n pairs (q, k) of width d_k with standard normal
    components, from a generator seeded with `seed`, so that the same seed gives the same value.

    One dot product per pair: multiply q and k component by component and add over the
    components (the last axis); then take the sample variance over the n pairs. The ratio of
    the standard deviations is the square root of the ratio of the variances.

    `g = torch.Generator().manual_seed(seed)`, `q = torch.randn(n, d_k, generator=g)` and k the
    same way; return `(q * k).sum(dim=-1).var().item()`. Then
    `std_ratio = (var_768 / var_3) ** 0.5`.
    """
    narrow = float(one_number("var_3", var_3, finite=False))  # a NaN has its own diagnosis
    wide = float(one_number("var_768", var_768, finite=False))
    if abs(narrow - WIDE) <= 0.1 * WIDE and abs(wide - NARROW) <= 0.1 * NARROW:
        raise Mismatch("`var_3` and `var_768` are swapped: the variance grows with d_k.", MISTAKE)
    measured = {NARROW: narrow, WIDE: wide}
    for name, got, d_k, copied in (("var_3", narrow, NARROW, 4), ("var_768", wide, WIDE, 512)):
        if abs(got - copied) <= 0.05 * copied and abs(got - d_k) > 0.1 * d_k:
            raise Mismatch(
                f"`{name}` = {got:.4g} is about {copied}, the variance section 4 measured at "
                f"d_k = {copied}; this exercise asks for d_k = {d_k}: draw torch.randn(n, {d_k}).",
                MISTAKE,
            )
        _check_variance(name, got, d_k, measured)
    ratio, yours = float(one_number("std_ratio", std_ratio)), math.sqrt(wide / narrow)
    if why := _ratio_mistake(ratio, narrow, wide):
        raise Mismatch(why, MISTAKE)
    if not typed_close(ratio, yours):
        theory, kind = _theory(ratio, 16, "ratio")
        given = f"`std_ratio` = {ratio:.4g}, while your variances give √(var_768 / var_3) = "
        raise Mismatch(f"{given}{yours:.4g}: {theory}Compute it from var_3 and var_768.", kind)
    scatter, error = _check_measures(dot_variance)
    for name, got, d_k in (("var_3", narrow, NARROW), ("var_768", wide, WIDE)):
        again = _measured(dot_variance, d_k, N_PAIRS, 0)
        _check_stored(name, got, again, d_k, _called(d_k, N_PAIRS, 0, listwise=False))
    return (
        f"Var(q·k) ≈ {narrow:.2f} at d_k = 3 and ≈ {wide:.0f} at d_k = 768; standard deviations "
        f"{math.sqrt(narrow):.2f} and {math.sqrt(wide):.1f}, {ratio:.1f}× apart: √(768/3) = 16 "
        "give or take the sampling error. Your function measures: with 10 pairs its variances "
        f"at d_k = 4 scattered by ±{scatter:.1f} from seed to seed, where the sampling error "
        f"d_k·√(2/(n - 1) + 6/(d_k·n)) predicts ±{error:.1f}; with 10,000 pairs it is 1 to 2%."
    )


def _ratio_mistake(ratio: float, narrow: float, wide: float) -> str | None:
    """Name what ``std_ratio`` holds instead of √(var_768 / var_3), if it is a typical slip."""
    if abs(ratio - math.sqrt(narrow / wide)) <= 0.01:
        return (
            "`std_ratio` is upside down: divide the standard deviation at d_k = 768 by the one "
            "at d_k = 3."
        )
    said, mixed = "`std_ratio` =", "`std_ratio` mixes a variance with a standard deviation: "
    variances = f"{said} {ratio:.3g} is the ratio of the variances; standard deviations grow "
    variances += "as √d_k, so the ratio is √256 = 16."
    slips = [  # within 2% of the value (of the theory's 256 within 10%)
        (wide / narrow, variances),
        (math.sqrt(wide), "`std_ratio` is √var_768, the standard deviation at d_k = 768 alone: "
         "divide it by the one at d_k = 3."),
        (math.sqrt(wide * narrow), "`std_ratio` = √(var_768 · var_3): the variances are "
         "multiplied; divide them, √(var_768 / var_3)."),
        (math.sqrt(wide) - math.sqrt(narrow), "`std_ratio` is the difference of the standard "
         "deviations; the question asks how many times larger: divide them."),
        (wide / math.sqrt(narrow), f"{mixed}take the square root of both, √var_768 / √var_3."),
        (math.sqrt(wide) / narrow, f"{mixed}take the square root of both, √var_768 / √var_3."),
        (math.sqrt(SECTION_4[1] / SECTION_4[0]), f"{said} {ratio:.3g} is section 4's ratio, "
         "√(512/4) ≈ 11.3; this one is between d_k = 3 and d_k = 768: √(var_768 / var_3)."),
    ]  # fmt: skip
    theory = match_number(ratio, [(WIDE / NARROW, variances)], rel_tol=0.1)
    return theory or match_number(ratio, slips, rel_tol=0.02)


# 2.4 (lab L2.A) The variance against d_k -------------------------------------------------------

DIMS = (1, 8, 64, 256)


@exercise("2.4", "Lab L2.A: the variance against d_k, on log-log axes")
def slope(measure_variances, dot_variances, loglog_slope) -> str:
    """Your `dot_variance` from 2.3 measures one width: `measure_variances` calls it for each
    d_k of its list, with its n and its seed, and returns the variances in the same order.

    A power law is a straight line on log-log axes: fit a line (degree 1) to the logs of the
    widths and the logs of your variances. numpy's polyfit returns the slope first, then the
    intercept.

    `return [dot_variance(d_k, n, seed) for d_k in dims]`; then
    `dot_variances = measure_variances(dims, 10_000, seed=0)` and
    `loglog_slope = np.polyfit(np.log(dims), np.log(dot_variances), 1)[0]`.
    """
    if isinstance(dot_variances, dict):
        raise Mismatch(
            "`dot_variances` is a dict; make it a list with one variance per d_k, in the order "
            "of dims (list(your_dict.values()) if it was filled in that order).",
            TYPE,
        )
    got = as_tensor("dot_variances", dot_variances).flatten()
    expect_shape("dot_variances", got, (len(DIMS),), f"one per d_k in {DIMS}")
    values = dict(zip(DIMS, got.tolist(), strict=True))
    for d_k, v in values.items():
        _check_variance(f"dot_variances (at d_k = {d_k})", v, d_k, values)
    s = as_tensor("loglog_slope", loglog_slope).flatten()
    if s.numel() == 2:
        raise Mismatch(
            "`loglog_slope` holds two numbers: np.polyfit(x, y, 1) returns [slope, intercept]; "
            "take [0].",
            MISTAKE,
        )
    s = float(one_number("loglog_slope", s))
    _check_slope(s, list(values.values()))
    _check_measures(measure_variances, listwise=True)
    said = f"measure_variances({list(DIMS)}, {N_PAIRS}, seed=0)"
    again = as_tensor(said, call(measure_variances, list(DIMS), N_PAIRS, 0, during=f"as {said}"))
    expect_shape(said, again.flatten(), (len(DIMS),), f"one per d_k in {DIMS}")
    for (d_k, v), w in zip(values.items(), again.flatten().tolist(), strict=True):
        _check_stored(f"dot_variances (at d_k = {d_k})", v, w, d_k, f"{said} at d_k = {d_k}")
    return (
        f"variances {fmt(got)} and slope {s:.3f}: on log-log axes Var(q·k) = d_k is a line of "
        f"slope 1, and a slope measured from {N_PAIRS:,} pairs per width lands within about "
        f"±{_slope_error():.3f} of it (its sampling error)."
    )


def _slope_error(n: int = N_PAIRS) -> float:
    """The sampling error of the log-log slope fitted to variances measured from ``n`` pairs.

    log s² has standard deviation about sampling_error(d_k, n) / d_k; the slope is a weighted
    sum of the log variances, with weights (xᵢ - x̄) / Σ(x - x̄)² for x = log d_k.
    """
    x = np.log(DIMS)
    weights = (x - x.mean()) / ((x - x.mean()) ** 2).sum()
    spread = np.array([sampling_error(d_k, n) / d_k for d_k in DIMS])
    return float(np.sqrt(((weights * spread) ** 2).sum()))


_SLOPE_SLIPS = {  # a slip's fit, np.polyfit(x, y, degree)[index], and what it means
    ("log d", "log v", 1, 1): "`loglog_slope` is the intercept: np.polyfit(x, y, 1) returns "
    "[slope, intercept]; take [0].",
    ("d", "v", 1, 0): "`loglog_slope` is the slope of variance against d_k on ordinary axes; the "
    "lab asks for log-log axes: fit np.log(dot_variances) against np.log(dims).",
    ("d", "log v", 1, 0): "`loglog_slope` fits log(variance) against d_k itself: take the log of "
    "the dims too, np.log(dims).",
    ("log d", "v", 1, 0): "`loglog_slope` fits the variances themselves against log d_k: take the "
    "log of the variances too, np.log(dot_variances).",
    ("log v", "log d", 1, 0): "x and y are swapped: np.polyfit(x, y, 1) takes log d_k first, then "
    "log variance.",
    ("log d", "log v", 2, 0): "np.polyfit(..., 2) fits a parabola, and [0] is its x² coefficient: "
    "fit a line, degree 1.",
    ("log d", "log v", 0, 0): "np.polyfit(..., 0) fits a constant, the mean of log variance: fit "
    "a line, degree 1.",
}


def _check_slope(s: float, values: list[float]) -> None:
    """A Mismatch unless ``s`` is the log-log slope of the learner's own ``values``."""
    with np.errstate(all="ignore"):  # a variance of 0 or below has no log; its fits are NaN
        data = {"d": np.array(DIMS, dtype=float), "v": np.array(values)}
        data |= {f"log {k}": np.log(v) for k, v in data.items()}
        fitted = np.polyfit(data["log d"], data["log v"], 1)[0]
        fits = [(np.polyfit(data[a], data[b], n)[i], m) for (a, b, n, i), m in _SLOPE_SLIPS.items()]
    fits = [(v, m) for v, m in fits if abs(v - fitted) > 1e-6]  # not the right fit in disguise
    if why := match_number(s, fits, abs_tol=1e-6):
        raise Mismatch(why, MISTAKE)
    if abs(s - 0.5) < 0.05:
        raise Mismatch(
            "`loglog_slope` ≈ 0.5 is the slope of the standard deviation, √d_k; fit "
            "log(variance) against log(d_k).",
            MISTAKE,
        )
    if not typed_close(s, fitted):
        theory, kind = _theory(s, 1, "slope")
        given = f"`loglog_slope` = {s:.3f}, while your dot_variances give a slope of {fitted:.4f}"
        fit = "Fit np.log(dot_variances) against np.log(dims), np.polyfit(..., 1)[0]."
        raise Mismatch(f"{given} on log-log axes: {theory}{fit}", kind)


# 2.5 (lab L2.B) QKᵀ and cosines for three new words -------------------------------------------

# tea, coffee and bread, the words of the lab (section 2 worked with cat, dog and car)
WORDS = torch.tensor([[0.7, 0.3], [1.2, 0.6], [0.1, 0.9]], dtype=torch.float64)
_LENGTHS = "np.linalg.norm(Q, axis=-1, keepdims=True)"  # the lab is numpy: the advice is too


@exercise("2.5", "Lab L2.B: QKᵀ and cosines for tea, coffee and bread")
def matrices(qk_scores, qk_cosines) -> str:
    """QKᵀ pairs every query (a row of Q) with every key (a row of K). Which product of Q and
    K has one row per query and one column per key, shape (3, 3)?

    A cosine divides each score by the length of its query and the length of its key. Keep
    the lengths as a column, shape (3, 1), so that it broadcasts against its own transpose.

    `qk_scores = Q @ K.T`; `lengths = np.linalg.norm(Q, axis=-1, keepdims=True)`;
    `qk_cosines = qk_scores / (lengths * lengths.T)`.
    """
    Q = K = WORDS
    scores = Q @ K.T  # (n, d) @ (d, m) -> (n, m)
    shapes = {
        (3, 2): "Q * K multiplies entry by entry, giving (3, 2); QKᵀ is a matrix product: "
        "Q @ K.T, shape (3, 3).",
        (2, 2): "this is (d, d) = (2, 2): the product is in the wrong order (Qᵀ K). Q @ K.T is "
        "(n, m) = (3, 3), one row per query.",
        (3,): "three numbers: each word with itself only, or a row sum. Q @ K.T scores every "
        "pair, shape (3, 3).",
    }
    wrong = {
        "you divided by √d_k: that is lesson 3's scaling. Here the raw scores Q @ K.T.": scores
        / math.sqrt(2),
        "these are softmax weights (lesson 3); here the raw scores Q @ K.T.": scores.softmax(-1),
    }
    diagnose("qk_scores", qk_scores, scores, wrong, typed=True, shapes=shapes)
    lengths = Q.norm(dim=-1, keepdim=True)  # (n, 1): one length per word
    cosines = scores / (lengths * lengths.T)
    diagnose("qk_cosines", qk_cosines, cosines, _cosine_mistakes(Q, scores, lengths), typed=True)
    return (
        "both 3 × 3 matrices are right: row i holds word i as the query, column j word j as the "
        "key. The question below asks you to read the tea row of each."
    )


def _cosine_mistakes(Q, scores, lengths) -> list:
    """What ``qk_cosines`` holds instead of each score divided by |qᵢ| |kⱼ|."""
    by_column, product = Q / Q.norm(dim=0, keepdim=True), lengths * lengths.T
    return [
        (scores, "these are the raw scores: a cosine divides each score by the two lengths, "
         "|qᵢ| |kⱼ|."),
        (by_column @ by_column.T, "the norms were taken over the wrong axis (axis=0, down each "
         f"column); a word's length is over its own components: {_LENGTHS}."),
        (scores / Q.norm() ** 2, "you divided by the norm of the whole matrix; each word needs "
         f"its own length: {_LENGTHS}."),
        (scores / product**2, "you divided by the squared lengths |qᵢ|²|kⱼ|²; divide by the "
         "lengths."),
        (scores / lengths, "only the rows were divided, by |qᵢ|; divide by |kⱼ| as well."),
        (scores / lengths**2, "each row was divided by |qᵢ|²: lengths * lengths squares each "
         "row's length; lengths * lengths.T pairs |qᵢ| with |kⱼ|."),
        (scores / (lengths / lengths.T), "you divided by |qᵢ| / |kⱼ|; divide by the product "
         "|qᵢ| |kⱼ|: lengths * lengths.T."),
        (scores * product, "you multiplied by the lengths |qᵢ| |kⱼ|; the cosine divides by them."),
        (product / scores, "upside down: the cosine is the score divided by |qᵢ| |kⱼ|, the "
         "score on top."),
        (scores / (lengths + lengths.T), "you divided by |qᵢ| + |kⱼ|; divide by the product "
         "|qᵢ| |kⱼ|."),
        (scores / lengths.T, "only the columns were divided, by |kⱼ|; divide by |qᵢ| as well "
         "(keepdims=True keeps the two apart)."),
        (scores / lengths.T**2, "each column was divided by |kⱼ|²: without keepdims=True, "
         "lengths * lengths.T multiplies two vectors of shape (3,) entry by entry. Keep the "
         f"lengths (3, 1): {_LENGTHS}."),
    ]  # fmt: skip
