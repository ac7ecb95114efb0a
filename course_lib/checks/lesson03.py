"""Checks for lesson 3, scaled dot-product attention (paper §3.2.1, Eq. 1).

Each check compares the learner's answer with the reference and, when they differ, with the
results of the typical mistakes (no 1/sqrt(d_k), softmax over the wrong axis, a mask applied
after the softmax or with inverted polarity, ...) so the message can name the mistake; the
mistakes that other lessons share come from ``_mistakes``. Masks follow the course
convention: boolean, True = may attend.
"""

import functools
import inspect
import math
import re
import statistics

import torch

from ..masks import causal_mask, padding_mask, target_mask
from ._core import (
    DIFFERENCE,
    MISTAKE,
    SHAPE,
    TYPE,
    Mismatch,
    NotDone,
    blame_earlier,
    call,
    exercise,
    multiple_choice,
)
from ._mistakes import (
    attend,
    expect_mask,
    expect_returned,
    masked,
    output_mistakes,
    shape_mistake,
    softmax_confusions,
    softmax_mistakes,
    tensor_pair,
    weight_mistakes,
)
from ._remote import source_of
from ._tensors import as_tensor, close, diagnose, fmt, match, one_number

# Shared by several exercises -------------------------------------------------------------------


def _expect_shape(name: str, got, shape, letters: str = "", named=None, during: str = "") -> None:
    """A Mismatch unless ``got`` has ``shape``: a named mistake when the wrong shape tells
    which (``named`` maps a shape to its message; then a transposed result or a batch axis
    too many or missing), else a plain shape diagnosis."""
    if tuple(got.shape) == tuple(shape):
        return
    called = f"{letters} = " if letters else ""
    said = f"`{name}` should have shape {called}{tuple(shape)}; got {tuple(got.shape)}"
    if during:
        said = f"{during}: {said}"
    why = (named or {}).get(tuple(got.shape)) or shape_mistake(got.shape, shape)
    raise Mismatch(f"{said}: {why}" if why else said, MISTAKE if why else SHAPE)


def _first_difference(got: torch.Tensor, expected: torch.Tensor) -> tuple[int, ...]:
    """The index of the first entry where two boolean masks differ."""
    return tuple(int(i) for i in (got != expected).nonzero()[0])


# 3.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("3.1", "Recall: why divide by √d_k?", correct="c")
def recall(answer_3_1):
    """Think about the variance of q·k when q and k have d_k independent unit-variance
    components.

    What does a softmax look like when its inputs differ by ±8 or more? And its gradient?

    (a) Overflow is not the issue: at d_k = 64 unscaled scores are around ±8, far inside
    float16's range (±65,504), and the softmax subtracts each row's largest score before
    exponentiating. The reason is what large scores do to the softmax.

    (b) The softmax makes every row sum to 1 whatever the scale of the scores; the scale only
    decides how peaked each row is.

    (c) With unit-variance components, q·k has variance d_k, so for d_k = 64 scores of ±8 are
    common; the softmax then puts almost all weight on one key, its gradients p_i(δ_ij - p_j)
    are nearly zero, and learning stalls.

    (d) Dividing by the constant √d_k does not give vectors unit length, and the scaled scores
    are not bounded by 1; cosine similarity would divide each score by its own |q|·|k|.
    """


# 3.2 Apply: q = [1, 0], keys [1, 0] and [0, 1], values 5 and 3 ---------------------------------

_APPLY_SCORES = torch.tensor([1.0, 0.0], dtype=torch.float64)
_APPLY_VALUES = torch.tensor([5.0, 3.0], dtype=torch.float64)


@exercise("3.2", "Apply: one query, two keys")
def apply(apply_weights, apply_output) -> str:
    """Follow the five steps with a single query: one score per key, scaled, then a softmax
    over the two keys; the output mixes the values with those weights.

    The scores q·k are [1, 0]; divided by √d_k = √2 they are [0.7071, 0]. The softmax of
    [a, 0] is [eᵃ, 1] / (eᵃ + 1), and the output is w₁·5 + w₂·3.

    `apply_weights = (K_apply @ q_apply / math.sqrt(2)).softmax(dim=-1)`, then
    `apply_output = apply_weights @ V_apply`.
    """
    s, values = _APPLY_SCORES, _APPLY_VALUES
    scaled = s / math.sqrt(2)
    weights = scaled.softmax(-1)
    got = as_tensor("apply_weights", apply_weights)
    one = "one number: attention gives every key its own weight, two keys here."
    two_rows = (
        "two rows of weights: the scores are one number per key, the dot products K @ q "
        "(not K * q, nor K alone)."
    )
    _expect_shape("apply_weights", got, (2,), named={(): one, (1,): one, (2, 2): two_rows})
    wrong = [
        (
            s.softmax(-1),
            "these are softmax([1, 0]): divide the scores by √d_k = √2 ≈ 1.414 first.",
        ),
        ((s / 2).softmax(-1), "you divided by d_k = 2; divide by its square root, √2 ≈ 1.414."),
        ((s * math.sqrt(2)).softmax(-1), "you multiplied the scores by √d_k; divide by √2."),
        (
            weights.flip(0),
            "the weights are swapped: the query [1, 0] matches the first key best, so the "
            "first weight is the larger.",
        ),
        (scaled, "these are the scaled scores; the softmax turns them into weights."),
        (s, "these are the raw scores q·k; scale them by 1/√2, then take the softmax."),
        (
            torch.full((2,), math.nan, dtype=torch.float64),
            "the weights are NaN: a score came out infinite (a division by the score 0?). The "
            "scores are q·k / √d_k.",
        ),
        *softmax_confusions(scaled),
    ]
    typed = close(got, weights, typed=True)  # numbers typed by hand: the course's rounding
    named = None if typed else match(got, wrong, typed=True) or _apply_scale(got)
    if named:
        raise Mismatch(named, MISTAKE)
    diagnose("apply_weights", got, weights, wrong, weights=True, typed=True)
    out = as_tensor("apply_output", apply_output)
    if out.numel() != 1:
        not_summed = (
            "these are the products wᵢ·vᵢ, one per key: the output is their sum, weights @ V."
        )
        broadcast = (
            "weights * V broadcasts a row against a column, giving every product wᵢ·vⱼ; the "
            "output is the weighted sum, weights @ V."
        )
        shapes = [
            (
                weights,
                "these are the weights: the output is the weighted sum of the values, weights @ V.",
            ),
            (weights * values, not_summed),
            (weights[None, :] * values[:, None], broadcast),
            (weights[:, None] * values[None, :], broadcast),
        ]
        named = match(out, shapes)
        raise Mismatch(
            named or f"`apply_output` should be one number (d_v = 1); got shape {tuple(out.shape)}",
            MISTAKE if named else SHAPE,
        )
    output = weights @ values
    wrong = [
        (
            weights.flip(0) @ values,
            "each weight went to the wrong value: 0.670 belongs to the first key, whose value "
            "is 5.",
        ),
        (
            weights.sum(),
            "the output is the weighted sum of the values, Σ wᵢ·vᵢ, not of the weights.",
        ),
        (
            values.mean(),
            "4 is the plain average of the values: weight each by its attention weight.",
        ),
        (
            scaled @ values,
            "the output mixes the values with the scaled scores; multiply the weights by V.",
        ),
        (s.softmax(-1) @ values, "this output uses unscaled weights, softmax([1, 0])."),
        ((s / 2).softmax(-1) @ values, "this output uses weights scaled by 1/d_k, not 1/√d_k."),
    ]
    diagnose("apply_output", out.reshape(()), output, wrong, typed=True)
    return (
        f"weights {fmt(weights)}, output {float(output):.4f}: between 3 and 5, nearer 5, the "
        "value of the better-matching key."
    )


def _apply_scale(got: torch.Tensor) -> str | None:
    """What the scores [1, 0] were divided by, if ``got`` is a softmax of [1/s, 0]."""
    w = got.flatten()
    if (w <= 0).any() or abs(float(w.sum()) - 1) > 1e-3 or w[0] <= w[1]:
        return None
    c = math.log(float(w[0] / w[1]))
    return (
        f"your weights are softmax([{c:.3f}, 0]), the scores [1, 0] divided by {1 / c:.3g}; "
        "divide them by √d_k = √2 ≈ 1.414."
    )


# 3.3 Extend: causal weights for 4 tokens with all-zero scores ---------------------------------


@exercise("3.3", "Extend: the causal weight pattern")
def causal_pattern(causal_weights) -> str:
    """Query i may see keys 0 to i, and all its visible scores are equal: what does a softmax
    make of equal scores?

    Start from a 4 x 4 matrix of zero scores, set the scores of the hidden keys (j > i) to
    -inf, then take the softmax over the keys, the last axis.

    `torch.zeros(4, 4).masked_fill(~torch.ones(4, 4, dtype=torch.bool).tril(), float("-inf"))`,
    then `.softmax(dim=-1)`.
    """
    got = as_tensor("causal_weights", causal_weights)
    four = {(n, n): f"that is {n} tokens; the exercise has four, so (4, 4)." for n in range(1, 9)}
    _expect_shape("causal_weights", got, (4, 4), "(T_q, T_k)", named=four)
    zeros, causal = torch.zeros(4, 4, dtype=torch.float64), causal_mask(4)
    expected = attend(zeros, causal)
    upper = (
        "this is the upper triangle: the first token spreads its weight over all four, so it "
        "sees the future. Query i may attend to keys j ≤ i (torch.tril)."
    )
    no_diagonal = (
        "the diagonal is masked: a token may attend to itself, so keep key j = i "
        "(j ≤ i, not j < i)."
    )
    next_token = (
        "each token also sees the next one: the mask is one diagonal too high. Keep keys "
        "j ≤ i, torch.tril() without an offset."
    )
    masked_scores = "these are the masked scores; the softmax turns them into weights."
    strict, loose = causal.tril(-1), torch.ones(4, 4, dtype=torch.bool).tril(1)
    wrong = [
        (expected.T, upper),
        (attend(zeros, causal.T), upper),
        (
            torch.full((4, 4), 0.25),
            "every row is uniform over all four tokens: the mask was not applied. Set the "
            "scores above the diagonal to -inf before the softmax.",
        ),
        (
            causal.double(),
            "these are the mask's ones and zeros; the weights are the softmax of the masked "
            "scores.",
        ),
        (masked(zeros, causal), masked_scores),
        (masked(zeros, causal, -1e9), masked_scores),
        (attend(zeros, strict), no_diagonal),
        (attend(zeros, strict).nan_to_num(), no_diagonal),
        (attend(zeros, strict, fill=-1e9), no_diagonal),
        (attend(zeros, loose), next_token),
        (
            torch.full((4, 4), math.nan),
            "every row is NaN: the mask hides every key, so each softmax runs over -inf "
            "alone. Hide only the keys j > i: ~torch.ones(4, 4, dtype=torch.bool).tril().",
        ),
        (attend(zeros, loose, fill=-1e9), next_token),
        *softmax_mistakes(zeros, causal),
        *softmax_confusions(masked(zeros, causal))[:1],  # the log-probabilities
    ]
    diagnose("causal_weights", got, expected, wrong, weights=True, typed=True)  # 0.33 passes
    return (
        "lower-triangular rows of 1, 1/2, 1/3 and 1/4: each token shares its attention equally "
        "among itself and the tokens before it."
    )


# 3.4 (lab L3.A) The attention function ---------------------------------------------------------


@exercise("3.4", "Lab L3.A: the attention function")
def attention_function(attention) -> str:
    """Follow the five steps: scores, scale, mask, softmax, weighted sum.

    For any number of leading dimensions, swap only the last two axes of k: k.T reverses every
    axis, and torch.bmm takes exactly three. The mask hides scores before the softmax, which
    runs over the keys, the last axis.

    `scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)`; with a mask,
    `scores = scores.masked_fill(~mask, float("-inf"))`; then
    `weights = scores.softmax(dim=-1)` and the output `weights @ v`.
    """
    g = torch.Generator().manual_seed(3)

    def rand(*shape):
        return torch.randn(*shape, generator=g)

    # T_q = 5, T_k = 6, d_k = 8, d_v = 3 and a batch of 2 all differ, so every mix-up shows.
    q, k, v = rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 3)
    try:
        _compare_attention(attention, q, k, v, None, "on q (2, 5, 8), k (2, 6, 8), v (2, 6, 3)")
    except Mismatch as e:
        if str(e).startswith("your function raised") and _runs(attention, rand(2, 6, 8), k, v):
            raise Mismatch(
                f"{e} With as many queries as keys it runs, so check the order of the product: "
                "q @ kᵀ has shape (..., T_q, T_k), one row per query.",
                MISTAKE,
            ) from None
        raise
    for shape in [(1, 4, 8), (1, 1, 4, 16), (1, 1, 4, 8), (2, 3, 4, 8)]:
        q, k, v = rand(*shape), rand(*shape), rand(*shape)
        _compare_attention(attention, q, k, v, None, f"on q, k, v of shape {shape}")
    try:
        inspect.signature(attention).bind(q, k, v, None)
    except (TypeError, ValueError):
        raise Mismatch(
            "attention must take the mask as its fourth argument: "
            "def attention(q, k, v, mask=None).",
            MISTAKE,
        ) from None
    mask = causal_mask(5)
    _compare_attention(
        attention, rand(2, 5, 8), rand(2, 5, 8), rand(2, 5, 3), mask, "with a causal mask"
    )
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    v = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]])
    out, weights = _compare_attention(attention, q, k, v, None, "on the worked example")
    return (
        "3-D and 4-D inputs and the causal mask all agree with the reference; on the worked "
        f'example "the" gets weights {fmt(weights[0])} and output {fmt(out[0])}.'
    )


_RANK_TIP = (
    "Tip: k.T reverses every dimension of a batched tensor and torch.bmm needs exactly 3-D; "
    "q @ k.transpose(-2, -1) fits any number of leading dimensions."
)


def _fits_one_rank(fn) -> bool:
    """Whether the learner's code uses k.T, torch.bmm or transpose(1, 2), which assume a rank."""
    source = source_of(fn)
    if source is None:
        return False
    return bool(re.search(r"\.T\b|bmm|transpose\(\s*1\s*,\s*2\s*\)", source))


def _attention_tip(attention, error: Exception) -> str | None:
    """What a crash of the learner's attention most likely means."""
    if _fits_one_rank(attention):
        return _RANK_TIP
    text = str(error)
    if "NoneType" in text:
        return "Tip: the mask is optional; apply it only `if mask is not None`."
    if "masked_fill" in text:
        return (
            "Tip: masked_fill takes the boolean mask first, then the value: "
            "scores.masked_fill(~mask, float('-inf'))."
        )
    if "softmax" in text and "dim" in text:
        return "Tip: say which axis the softmax runs over: dim=-1, the keys."
    shapes = ("cannot be multiplied", "Expected size for first two", "mismatch", "must match")
    if any(words in text for words in shapes):
        return (
            "Tip: the shapes don't line up. Both products are matrix products (@) with only "
            "the last two axes of k swapped: q @ k.transpose(-2, -1) is (..., T_q, d_k) @ "
            "(..., d_k, T_k), and weights @ v is (..., T_q, T_k) @ (..., T_k, d_v)."
        )
    return None


def _compare_attention(attention, q, k, v, mask, during):
    result = call(
        attention,
        *((q, k, v) if mask is None else (q, k, v, mask)),
        during=during,
        tip=lambda error: _attention_tip(attention, error),
        in_place="your function changed q, k or v in place (e.g. q /= ...): compute new "
        "tensors instead.",
    )
    scores = q.double() @ k.double().transpose(-2, -1)
    scaled = scores / math.sqrt(q.shape[-1])
    expected_w = attend(scaled, mask)
    expected_out = expected_w @ v.double()
    expect_returned("attention", result)
    if isinstance(result, torch.Tensor):
        for shape, which in ((expected_out.shape, "output"), (expected_w.shape, "weights")):
            if result.shape == shape:
                raise Mismatch(
                    f"{during}, attention returned only the {which}: return the pair "
                    "(output, weights).",
                    MISTAKE,
                )
    out, weights = tensor_pair("attention", result, during)
    if out.shape == expected_w.shape != weights.shape == expected_out.shape:
        raise Mismatch(
            f"{during} the pair came back swapped: return (output, weights), in that order.",
            MISTAKE,
        )
    transposed = (*expected_w.shape[:-2], k.shape[-2], q.shape[-2])
    if tuple(weights.shape) == transposed != expected_w.shape:
        raise Mismatch(
            f"{during} the weights have shape (..., T_k, T_q) = {tuple(weights.shape)}: "
            "compute q @ kᵀ, not k @ qᵀ.",
            MISTAKE,
        )
    _expect_shape("weights", weights, expected_w.shape, "(..., T_q, T_k)", during=during)
    if out.shape == weights.shape and torch.equal(out, weights):
        raise Mismatch(
            f"{during}, the output is the weights themselves: multiply them by the values, "
            "weights @ v.",
            MISTAKE,
        )
    _expect_shape("output", out, expected_out.shape, "(..., T_q, d_v)", during=during)
    d_k = q.shape[-1]
    other_widths = [
        (q.shape[-2], "T_q, the number of queries"),
        (k.shape[-2], "T_k, the number of keys"),
        (v.shape[-1], "d_v, the width of the values"),
    ]
    if q.dim() > 2:
        other_widths.append((q.shape[0], "the batch size, q.shape[0]"))
    widths = [(n, what) for n, what in other_widths if n != d_k]
    with torch.no_grad():
        inverted = attend(math.sqrt(d_k) / scores, mask)
    mistakes = [
        *weight_mistakes(scores, d_k, mask, scaled_by=widths),
        (inverted, "the scale is upside down: divide the scores by √d_k, not √d_k by them."),
        *softmax_confusions(scaled if mask is None else masked(scaled, mask))[:1],
    ]
    diagnose("weights", weights, expected_w, mistakes, weights=True, during=during)
    wrong_out = [
        *output_mistakes(scaled, v.double()),
        (-expected_out, "the output's sign is flipped: it is weights @ v."),
        (
            attend(scores, mask) @ v.double(),
            "the output uses unscaled weights: compute it from the scaled, softmaxed weights.",
        ),
    ]
    diagnose("output", out, expected_out, wrong_out, during=during)
    return out, weights


def _runs(fn, *args) -> bool:
    try:
        call(fn, *args)
    except (Mismatch, NotDone):
        return False
    return True


# 3.5 (lab L3.B) Saturation, measured: the mean largest weight over 10 keys ---------------------

# For scores of standard deviation std, 10 per row: the exact mean of a row's largest softmax
# weight, and σ, the standard deviation of one row's largest weight, from 10 million rows
# (each mean ±0.00006). A mean of n rows scatters around the exact value by σ/√n.
_EXACT = {8.0: (0.8661, 0.1697), 1.0: (0.3202, 0.1086), 2.0: (0.5317, 0.1882)}
_ROWS = 10_000  # the sample size the exercise asks for
_SEEDS = range(8)
# The average of 8 measurements must land within 5 of its standard errors of the exact mean (a
# right answer misses about once in 2 million checks, for each std); 9 or 11 scores per row move
# it by 0.015 or more, over 20 standard errors.
_Z = 5.0
# 8 measurements may scatter up to 2.5 times σ/√n (a right answer scatters more about once in
# 4 million checks): a function that draws 100 rows instead of 10,000 scatters 10 times more.
_SCATTER = 2.5


@exercise("3.5", "Lab L3.B: saturation, measured")
def saturation(mean_max_weight) -> str:
    """Draw the scores from a generator seeded with seed: the same call then repeats its
    measurement, and another seed gives fresh draws.

    n rows of 10 standard-normal scores, times std; a softmax over each row's 10 scores; each
    row's largest weight; the mean of those, as one number.

    `g = torch.Generator().manual_seed(seed)`, `scores = std * torch.randn(n, 10, generator=g)`,
    then return `scores.softmax(dim=-1).max(dim=-1).values.mean().item()`.
    """
    runs = _measurements(mean_max_weight)  # {std: one result per seed}
    means = {std: statistics.fmean(values) for std, values in runs.items()}
    off = [std for std in runs if abs(means[std] - _EXACT[std][0]) > _tolerance(std, runs[std])]
    if off:
        _name_the_mistake(means, off)
    _rounded(runs[8.0])
    _sample_size(mean_max_weight, runs[8.0])
    if off:
        raise Mismatch(_off(off[0], runs[off[0]]), DIFFERENCE)
    return (
        f"over {len(_SEEDS)} seeds of {_ROWS:,} rows your means are {means[8.0]:.3f} for std 8 "
        f"(unscaled scores at d_k = 64) and {means[1.0]:.3f} for std 1 (scaled), and each "
        "measurement lies within its sampling error of the exact value: without 1/√d_k one key "
        "takes most of the weight."
    )


def _measurements(fn) -> dict[float, list[float]]:
    """The learner's results for std 1, 8 and 2 on the check's seeds, once they repeat for a
    seed, change from seed to seed and depend on std."""
    first, again = _measure(fn, 8.0, _ROWS, 0), _measure(fn, 8.0, _ROWS, 0)
    if again != first:
        raise Mismatch(
            f"with seed 0 your function gave {first:.4f}, then {again:.4f}: draw the scores from "
            "a generator seeded with `seed`, torch.Generator().manual_seed(seed), so that a "
            "measurement can be repeated.",
            MISTAKE,
        )
    unscaled = [first, *(_measure(fn, 8.0, _ROWS, s) for s in _SEEDS[1:])]
    if len(set(unscaled)) == 1:
        named = _saturation_mistake(8.0, first)  # 0.1 or 1.0 whatever the draws: a mistake
        if named:
            raise Mismatch(named, MISTAKE)
        raise Mismatch(
            f"your function returns {first:.4f} for every seed, but a measurement changes with "
            f"its random draws: a mean of {_ROWS:,} rows moves by about "
            f"{_standard_error(8.0, _ROWS):.4f} from one seed to the next. Draw the scores from "
            "a generator seeded with `seed`, and return the mean unrounded; a number typed in "
            "is not a measurement.",
            MISTAKE,
        )
    scaled = [_measure(fn, 1.0, _ROWS, s) for s in _SEEDS]
    if scaled == unscaled:
        raise Mismatch(
            "your function gives the same numbers for std = 8 and std = 1: multiply the "
            "unit-variance scores by `std`.",
            MISTAKE,
        )
    other = [_measure(fn, 2.0, _ROWS, s) for s in _SEEDS[:4]]  # any std, not only 8 and 1
    return {1.0: scaled, 8.0: unscaled, 2.0: other}  # std 1 first: its mistakes tell more


def _name_the_mistake(means: dict[float, float], off: list[float]) -> None:
    """Raise the typical mistake the means (``off``: the stds whose mean is wrong) show."""
    for why in (_systematic(means), *(_saturation_mistake(std, means[std]) for std in off)):
        if why:
            raise Mismatch(why, MISTAKE)
    for std in off:
        if not 0 <= means[std] <= 1:
            raise Mismatch(
                f"for std = {std:g} your function's mean is {means[std]:.4g}, but the largest of "
                "10 weights lies between 0.1 (all equal) and 1.",
                DIFFERENCE,
            )


def _rounded(values: list[float]) -> None:
    """Raise if the learner's results are rounded more coarsely than their sampling error."""
    decimals = next((d for d in (1, 2) if all(round(v, d) == v for v in values)), None)
    if decimals:
        raise Mismatch(
            f"your function rounds its result to {decimals} decimal(s), which moves it by up to "
            f"{0.5 * 10**-decimals:g}, more than the sampling error of a mean of {_ROWS:,} rows "
            f"(about {_standard_error(8.0, _ROWS):.4f}): return the mean as it is.",
            MISTAKE,
        )


def _sample_size(fn, unscaled: list[float]) -> None:
    """Raise unless the learner's function draws n rows: its results (``unscaled``, std 8 and
    n = 10,000) scatter as means of n rows do, and fewer rows give other, wider results."""
    scattered = _scatter(8.0, unscaled, _ROWS)
    if scattered:
        raise Mismatch(scattered, MISTAKE)
    fewer = [_measure(fn, 8.0, 1_000, s) for s in _SEEDS]
    if fewer[0] == unscaled[0]:
        raise Mismatch(
            "your function gives the same number for n = 1,000 as for n = 10,000 (seed 0), so "
            "it ignores n: draw n rows. A measurement's sampling error shrinks as 1/√n, so the "
            "check compares sample sizes too.",
            MISTAKE,
        )
    scattered = _scatter(8.0, fewer, 1_000)
    if scattered:
        raise Mismatch(scattered, MISTAKE)


def _measure(fn, std: float, n: int, seed: int) -> float:
    """The learner's ``fn(std, n, seed)``, one number."""
    during = f"as mean_max_weight({std:g}, {n}, {seed})"
    result = call(fn, std, n, seed, during=during, tip=_measure_tip)
    value = one_number("mean_max_weight", expect_returned("mean_max_weight", result), finite=False)
    if not math.isfinite(float(value)):
        raise Mismatch(
            f"called {during}, your function returned {float(value)}, not a number: a softmax "
            "over a row of -inf scores, or 0/0?",
            DIFFERENCE,
        )
    return float(value)


def _measure_tip(error: Exception) -> str | None:
    """What a crash of the learner's measurement most likely means."""
    text = str(error)
    if isinstance(error, TypeError) and "positional argument" in text:
        return "Tip: the check calls mean_max_weight(std, n, seed): three arguments, in that order."
    if "generator" in text.lower():
        return (
            "Tip: a generator is made from the seed, g = torch.Generator().manual_seed(seed), "
            "and passed as generator=g."
        )
    return None


def _standard_error(std: float, n: int) -> float:
    """How far a mean of n rows typically lands from the exact mean: σ/√n."""
    return _EXACT[std][1] / math.sqrt(n)


def _tolerance(std: float, values: list[float]) -> float:
    """How far the mean of the check's measurements (``values``) may be from the exact mean."""
    return _Z * _standard_error(std, _ROWS * len(values))


def _scatter(std: float, values: list[float], n: int) -> str | None:
    """A message unless ``values`` (one per seed) scatter as means of ``n`` rows do."""
    expected, spread = _standard_error(std, n), statistics.stdev(values)
    if spread <= _SCATTER * expected:  # less is more rows than n: "ignores n" names it
        return None
    like = (_EXACT[std][1] / spread) ** 2
    return (
        f"for std = {std:g} and n = {n:,} your results over {len(values)} seeds scatter by "
        f"{spread:.4f} (their standard deviation). A mean of n rows scatters by about σ/√n, "
        f"where σ = {_EXACT[std][1]:.3f} is the spread of one row's largest weight: "
        f"{expected:.4f} for n = {n:,}. Yours scatter as means of about {like:,.0f} rows would: "
        "does your function draw n rows of 10 scores?"
    )


def _off(std: float, values: list[float]) -> str:
    """The message for measurements whose mean sampling error does not explain."""
    exact, sigma, mean = *_EXACT[std], statistics.fmean(values)
    fitted = _fitted_std(mean)
    fits = (
        f"; yours fits scores of standard deviation {fitted:.3g} rather than {std:g}"
        if fitted
        else ""
    )
    return (
        f"for std = {std:g} the mean of your function's results over {len(values)} seeds of "
        f"{_ROWS:,} rows is {mean:.4f}; the exact value is {exact:.4f}. One measurement "
        f"scatters by about σ/√n = {_standard_error(std, _ROWS):.4f} (σ = {sigma:.3f}, the "
        f"spread of one row's largest weight), so the mean of {len(values)} lands within "
        f"{_tolerance(std, values):.4f} of the exact value: {abs(mean - exact):.4f} off is more "
        f"than sampling error{fits}."
    )


@functools.cache
def _saturation_sample() -> torch.Tensor:
    """Fixed standard normal rows (20,000 × 12) that the typical mistakes are computed on,
    drawn once, from a generator of their own."""
    return torch.randn(20_000, 12, generator=torch.Generator().manual_seed(0))


@functools.cache
def _largest(std: float, keys: int = 10, how: str = "max", rows: int = 20_000) -> float:
    """The mean over rows of one statistic (``how``) of the softmax of ``keys`` scores of
    standard deviation ``std``, on the fixed sample; ``how="over"`` divides std by them."""
    sample = _saturation_sample()[:rows, :keys]
    scores = std / sample if how == "over" else sample * std
    if how == "log":
        return scores.log_softmax(-1).max(-1).values.mean().item()
    if how == "scores":
        return scores.max(-1).values.mean().item()
    weights = scores.softmax(-1)
    if how == "mean":
        return 0.1
    return getattr(weights, "min" if how == "min" else "max")(-1).values.mean().item()


def _systematic(means: dict[float, float]) -> str | None:
    """A mistake that shows at every std the check tried (``means``: std -> the mean of the
    learner's measurements): rows of another number of scores, or another scale."""
    u = means[8.0]
    for keys in (9, 11, 8, 12):
        if all(abs(m - _largest(std, keys)) <= 0.007 for std, m in means.items()):
            return (
                f"for std = 1 your function's mean is {means[1.0]:.4f}, which fits rows of {keys} "
                "scores, and so do its means for the other stds. Draw 10 per row, (n, 10), and "
                "take the softmax over those 10."
            )
    said = f"for std = 8 your function's mean is {u:.4f}:"
    scales = [
        (
            lambda std: std**2,
            "it fits scores of standard deviation 64 = std²: std is the standard deviation "
            "already, so multiply the unit-variance scores by std, not by its square (the "
            "variance).",
        ),
        (
            math.sqrt,
            "it fits scores of standard deviation √8 ≈ 2.83: multiply the unit-variance scores "
            "by std itself, not by its square root.",
        ),
        (
            lambda std: 1 / std,
            "it fits scores of standard deviation 1/8: the scores were divided by std; multiply "
            "them by it.",
        ),
    ]
    for scale, message in scales:
        if all(abs(m - _largest(scale(std))) <= 0.007 for std, m in means.items()):
            return f"{said} {message}"
    if all(abs(m - _largest(std, how="over")) <= 0.007 for std, m in means.items() if std != 1):
        return (
            f"{said} it fits scores std / z, with z the unit-variance draws: multiply instead, "
            "std * z."
        )
    return None


def _saturation_mistake(std: float, value: float) -> str | None:
    """Name what ``value``, the mean of the learner's measurements for ``std``, holds instead
    of the mean largest weight, if it is a typical mistake."""
    said = f"for std = {std:g} your function's mean is {value:.4f}:"
    reductions = [
        ("min", "it is the mean *smallest* weight of each row: take each row's largest."),
        (
            "mean",
            "it is 1/10, the mean of all the weights: take each row's largest weight first, "
            "then the mean over the rows.",
        ),
        ("log", "it is negative: these are log-probabilities (log_softmax); take the softmax."),
        ("scores", "it is the mean largest *score*: the softmax is missing."),
    ]
    for how, message in reductions:
        expected = _largest(std, how=how)
        if abs(value - expected) <= max(0.007, 0.05 * abs(expected)):
            return f"{said} {message}"
    if value > 1 and value / _EXACT[std][0] > 100:
        return f"{said} more than 1, a sum over the rows? Average them, .mean()."
    if 0 <= value < 0.1:
        return (
            f"{said} the largest of 10 weights that sum to 1 is at least 0.1, so the "
            "softmax ran over the rows rather than over each row's 10 scores: with scores of "
            "shape (n, 10), the softmax and the largest weight both run over dim=-1."
        )
    if 0.995 < value <= 1 or (std == 1.0 and 0.78 <= value <= 0.96):
        return (
            f"{said} it looks like the largest weight over all the rows rather than in each "
            "row: take the largest over the same axis as the softmax, each row's 10 scores "
            "(dim=-1 for both, with scores of shape (n, 10))."
        )
    return None


def _fitted_std(value: float) -> float | None:
    """The standard deviation of scores whose mean largest weight (10 per row) is ``value``."""
    if not 0.13 < value < 0.98:
        return None
    low, high = math.log(0.05), math.log(200.0)  # the mean grows with std: bisect
    for _ in range(12):
        middle = (low + high) / 2
        if _largest(math.exp(middle), rows=5000) < value:
            low = middle
        else:
            high = middle
    return math.exp((low + high) / 2)


def _boolean_mask(name: str, result) -> torch.Tensor:
    """The learner's mask if it is boolean; else the way to make it boolean, for the values it
    holds (3.6 to 3.8)."""
    got = expect_returned(name, result)
    if isinstance(got, torch.Tensor) and got.dtype != torch.bool and got.is_floating_point():
        values = set(got.unique().tolist())
        if values <= {0.0, -math.inf} and -math.inf in values:
            raise Mismatch(
                f"{name} returned an additive float mask, 0 where a query may attend and -inf "
                "where it may not (PyTorch accepts this form too); this course's masks are "
                "boolean, True = may attend: compare `mask == 0`, or use torch.isfinite(mask).",
                TYPE,
            )
    return expect_mask(name, got)


# 3.6 (lab L3.C) A causal mask ------------------------------------------------------------------


def _mask_tip(error: Exception) -> str | None:
    """What a crash of a mask function most likely means (3.6 to 3.8)."""
    if "Negation, the `-` operator, on a bool tensor" in str(error):
        return (
            "Tip: - does not invert a boolean mask (~ does), and this mask needs no inverting: "
            "True where a query may attend."
        )
    return None


def _decoder_tip(error: Exception) -> str | None:
    """What a crash of make_decoder_mask most likely means."""
    text = str(error)
    if "must match the size of tensor" in text:
        return (
            "Tip: the two masks must broadcast: the padding mask is (B, 1, 1, T) and the causal "
            "mask (T, T), with T = tgt_in.shape[1], the length of the sequences."
        )
    if "index out of range" in text:
        return "Tip: tgt_in is (B, T), so T = tgt_in.shape[1]."
    return _mask_tip(error)


@exercise("3.6", "Lab L3.C: a causal mask")
def causal_mask_function(make_causal_mask) -> str:
    """True = may attend: query i, a row, may see keys j ≤ i, the columns up to and including
    the diagonal.

    Start from a (T, T) boolean tensor that is True everywhere and keep its lower triangle,
    the diagonal included: torch has a function for the lower triangle of a matrix.

    `torch.ones(T, T, dtype=torch.bool).tril()`
    """
    for T in (4, 1, 7):
        result = call(make_causal_mask, T, during=f"for T = {T}", tip=_mask_tip)
        got = _boolean_mask("make_causal_mask", result)
        expected = torch.ones(T, T, dtype=torch.bool).tril()
        named = {
            (T + 1, T + 1): f"one row and column too many: the mask for T = {T} is (T, T).",
            (T - 1, T - 1): f"one row and column too few: the mask for T = {T} is (T, T).",
        }
        if T != 4:
            named.setdefault((4, 4), "the same size as for T = 4: build the mask from T.")
        _expect_shape(f"make_causal_mask({T})", got, (T, T), "(T, T)", named=named)
        if torch.equal(got, expected):
            continue
        mistakes = [
            (
                ~expected,
                "True marks the future here, the opposite of the course convention: True "
                "means may attend (on and below the diagonal).",
            ),
            (
                expected.T,
                "True above the diagonal lets a query see later tokens: keep j ≤ i, the lower "
                "triangle (torch.tril).",
            ),
            (
                expected.tril(-1),
                "the diagonal is False: a token may attend to itself (j ≤ i, not j < i).",
            ),
            (
                torch.ones(T, T, dtype=torch.bool).tril(1),
                "True just above the diagonal lets query i see key i + 1, the very next token: "
                "tril() needs no offset.",
            ),
            (
                torch.ones(T, T, dtype=torch.bool).triu(-1),
                "True above the diagonal lets a query see later tokens: keep j ≤ i, the lower "
                "triangle (torch.tril).",
            ),
            (torch.ones(T, T, dtype=torch.bool), "everything is True: nothing is hidden."),
            (
                torch.zeros(T, T, dtype=torch.bool),
                "everything is False: no query may attend to anything. True marks what may be "
                "attended, on and below the diagonal.",
            ),
        ]
        why = match(got, mistakes)
        if why:
            raise Mismatch(why, MISTAKE)
        i, j = _first_difference(got, expected)
        may = "may" if expected[i, j] else "may not"
        raise Mismatch(
            f"make_causal_mask({T}) differs from the lower-triangular mask in "
            f"{int((got != expected).sum())} of {T * T} places, first at (i, j) = ({i}, {j}): "
            f"query {i} {may} attend to key {j}.",
            DIFFERENCE,
        )
    return "True on and below the diagonal: query i may attend to keys 0..i."


# 3.7 (lab L3.C) A padding mask -----------------------------------------------------------------


@exercise("3.7", "Lab L3.C: a padding mask")
def padding_mask_function(make_padding_mask) -> str:
    """A key may be attended when it is a real token: compare the ids with pad_id.

    The comparison has shape (B, T). Add an axis for the heads and one for the queries, each of
    size 1, between B and T: (B, 1, 1, T) broadcasts over the scores (B, H, T_q, T_k).

    `(tokens != pad_id)[:, None, None, :]`
    """
    cases = [
        (torch.tensor([[5, 7, 9, 0, 0], [4, 2, 0, 0, 0]]), 0),
        (torch.tensor([[3, 4, 1, 1]]), 1),
    ]
    for tokens, pad_id in cases:
        during = f"for pad_id = {pad_id}"
        result = call(make_padding_mask, tokens, pad_id, during=during, tip=_mask_tip)
        got = _boolean_mask("make_padding_mask", result)
        B, T = tokens.shape
        if tuple(got.shape) in {(B, T), (B, 1, T)}:
            raise Mismatch(
                f"shape {tuple(got.shape)} lines the tokens up with the score's last axes the "
                "wrong way: add the two axes to the boolean mask, mask[:, None, None, :] with "
                "mask = tokens != pad_id, shape (B, 1, 1, T), which broadcasts over heads and "
                "queries.",
                MISTAKE,
            )
        if tuple(got.shape) in {(B, T, 1, 1), (B, 1, T, 1)}:
            raise Mismatch(
                "the mask varies along the query axis: padding hides keys, so T belongs on the "
                "last axis, (B, 1, 1, T).",
                MISTAKE,
            )
        first = "the batch axis comes first: (B, 1, 1, T), tokens[:, None, None, :]."
        named = {
            (1, B, 1, T): first,
            (1, 1, B, T): first,
            (B, 1, 1, T - 1): "a key position is missing: keep all T tokens, [:, None, None, :].",
            (B, 1, 1, T + 1): "one key position too many: keep the T tokens, [:, None, None, :].",
            (B - 1, 1, 1, T): "a sequence of the batch is missing: keep all B rows, "
            "[:, None, None, :].",
        }
        _expect_shape("make_padding_mask(...)", got, (B, 1, 1, T), "(B, 1, 1, T)", named=named)
        expected = (tokens != pad_id)[:, None, None, :]
        if torch.equal(got, expected):
            continue
        mistakes = [
            (
                ~expected,
                "True marks the padding: True should mark the real tokens, tokens != pad_id.",
            ),
            (
                (tokens != 0)[:, None, None, :],
                f"`pad_id` was ignored: with pad_id = {pad_id}, the {pad_id}s are the padding.",
            ),
            (
                torch.ones_like(expected),
                "everything is True: the padding is not hidden. True marks the real tokens, "
                "tokens != pad_id.",
            ),
        ]
        why = match(got, mistakes)
        if why:
            raise Mismatch(why, MISTAKE)
        b, _, _, t = _first_difference(got, expected)
        raise Mismatch(
            f"make_padding_mask differs from tokens != pad_id {during}, first at sequence {b}, "
            f"position {t} (token {int(tokens[b, t])}).",
            DIFFERENCE,
        )
    return (
        "True for real tokens, shape (B, 1, 1, T): it hides padding keys for every head and query."
    )


# 3.8 (lab L3.C) Fix the decoder's mask ---------------------------------------------------------


@exercise("3.8", "Lab L3.C: fix the decoder's mask")
def decoder_mask_function(make_decoder_mask) -> str:
    """A key is visible when it is not in the future and not padding.

    Your masks from 3.6 and 3.7 are the two parts. Both must allow a key, a logical and; the
    causal (T, T) and the padding (B, 1, 1, T) broadcast together to (B, 1, T, T).

    `make_padding_mask(tgt_in, pad_id) & make_causal_mask(tgt_in.shape[1])`
    """
    for tgt_in, pad_id in [
        (torch.tensor([[1, 5, 6, 7, 0], [1, 8, 9, 0, 0]]), 0),
        (torch.tensor([[1, 5, 6, 3, 3]]), 3),
    ]:
        B, T = tgt_in.shape
        during = f"for pad_id = {pad_id}"
        try:
            result = call(
                make_decoder_mask,
                tgt_in,
                pad_id,
                during=during,
                tip=_decoder_tip,
                unfinished=_UNFINISHED_PART,
            )
            got = _boolean_mask("make_decoder_mask", result)
        except (Mismatch, NotDone) as e:
            if isinstance(e, Mismatch) or str(e) == _UNFINISHED_PART:
                _blame_a_part(make_decoder_mask)
            raise
        target = (B, 3, T, T)  # (B, H, T, T) with H = 3 heads
        if tuple(got.shape) == (B, T, T) and B > 1:
            raise Mismatch(
                f"shape (B, T, T) = {tuple(got.shape)} has no head axis, so B lines up with the "
                "heads: return (B, 1, T, T).",
                MISTAKE,
            )
        try:
            got = got.expand(target)
        except RuntimeError:
            raise Mismatch(
                f"a mask of shape {tuple(got.shape)} does not broadcast to (B, H, T, T) = "
                f"{target}: return shape (B, 1, T, T).",
                SHAPE,
            ) from None
        expected = target_mask(tgt_in, pad_id).expand(target)
        if not torch.equal(got, expected):
            _blame_a_part(make_decoder_mask)
            mistakes = _decoder_mask_mistakes(tgt_in, pad_id, target, expected)
            why = match(got, mistakes)
            if why:
                raise Mismatch(why, MISTAKE)
            b, _, i, j = _first_difference(got, expected)
            may = "may" if expected[b, 0, i, j] else "may not"
            raise Mismatch(
                f"your mask differs from causal & padding {during}, first in sequence {b}: "
                f"query {i} {may} attend to key {j}.",
                DIFFERENCE,
            )
    return "causal & padding, (B, 1, T, T): no query sees a later token or a padding token."


# The learner's functions of 3.6 and 3.7 that make_decoder_mask is meant to build on.
_PARTS = (("make_causal_mask", "3.6"), ("make_padding_mask", "3.7"))
_UNFINISHED_PART = (
    "your make_decoder_mask calls a function that is still a stub (make_causal_mask of 3.6 or "
    "make_padding_mask of 3.7?): finish that exercise first."
)


def _blame_a_part(fn) -> None:
    """Raise if ``fn`` calls the learner's function of 3.6 or 3.7 and that one is a stub or
    fails its own check (:func:`._core.blame_earlier`)."""
    for name, exercise_id in _PARTS:
        blame_earlier(fn, name, exercise_id, "make_decoder_mask", __name__)


def _decoder_mask_mistakes(tgt_in, pad_id, target, expected) -> list:
    T = tgt_in.shape[1]
    causal = causal_mask(T).expand(target)
    keys = padding_mask(tgt_in, pad_id).expand(target)  # (B, 1, 1, T): hides padding keys
    queries = (tgt_in != pad_id)[:, None, :, None].expand(target)
    ignored = target_mask(tgt_in, 1 if pad_id == 0 else 0).expand(target)
    ones = torch.ones(T, T, dtype=torch.bool)
    return [
        (
            ignored,
            f"`pad_id` was ignored: with pad_id = {pad_id}, the {pad_id}s are the padding.",
        ),
        (
            causal,
            "future tokens are hidden, but padding keys are still visible: combine the two "
            "masks, causal & padding.",
        ),
        (
            keys,
            "padding is hidden, but every query still sees the tokens after it, the very leak "
            "this lab is about: combine with the causal mask.",
        ),
        (
            causal | keys,
            "`|` lets a key through if it is in the past *or* is not padding: combine with `&`.",
        ),
        (
            causal & queries,
            "the padding mask hides query rows: padding hides *keys*, so it goes on the last "
            "axis, (B, 1, 1, T); a row with nothing to attend to turns into NaN with -inf.",
        ),
        (
            causal & keys & queries,
            "the padding mask hides query rows too: padding hides *keys*, so it goes on the "
            "last axis only, (B, 1, 1, T); a row with nothing to attend to turns into NaN.",
        ),
        (causal.tril(-1) & keys, "the diagonal is False: a token may attend to itself."),
        (
            ones.tril(1).expand(target) & keys,
            "each query also sees the next token: the causal part is one diagonal too high "
            "(tril() needs no offset).",
        ),
        (
            ones.triu().expand(target) & keys,
            "the causal part is the upper triangle, so queries see the future: keep j ≤ i, "
            "torch.tril.",
        ),
        (
            ~causal & keys,
            "the causal part is inverted: True means may attend, on and below the diagonal.",
        ),
        (
            causal & ~keys,
            "the padding part is inverted: True marks the real tokens, tokens != pad_id.",
        ),
        (~expected, "the polarity is inverted: True means may attend."),
        (torch.ones(target, dtype=torch.bool), "nothing is hidden: that is the bug."),
    ]
