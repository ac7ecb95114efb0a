"""Checks for lesson 3, scaled dot-product attention (paper §3.2.1, Eq. 1). Masks follow the
course convention: boolean, True = may attend."""

import functools
import io
import math
import re
import statistics
import tokenize

import torch

from ..masks import causal_mask, target_mask
from ._core import (
    DIFFERENCE,
    MISTAKE,
    SHAPE,
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
    expect_parameters,
    expect_returned,
    masked,
    output_mistakes,
    softmax_confusions,
    softmax_mistakes,
    tensor_pair,
    weight_mistakes,
)
from ._remote import source_of
from ._tensors import as_tensor, diagnose, expect_shape, fmt, match, one_number

# Shared by several exercises -------------------------------------------------------------------


def _judge_mask(name: str, got, expected, mistakes, during: str) -> None:
    """Return if two boolean masks agree; else raise the first typical mistake ``(mask,
    message)`` that ``got`` reproduces, or where they first differ."""
    if torch.equal(got, expected):
        return
    if why := match(got, mistakes):
        raise Mismatch(why, MISTAKE)
    at = tuple(int(i) for i in (got != expected).nonzero()[0])  # (..., query, key)
    seq = f"in sequence {at[0]}, " if got.dim() == 4 else ""
    query = f"query {at[-2]}" if got.shape[-2] > 1 else "every query"
    raise Mismatch(
        f"{name} differs {during} in {int((got != expected).sum())} of {got.numel()} places, "
        f"first {seq}where {query} {'may' if expected[at] else 'may not'} attend to key {at[-1]}.",
        DIFFERENCE,
    )


def _causal_mistakes(T: int) -> list:
    """A causal mask (T, T) gone wrong (3.6, and 3.8's causal part)."""
    ones = torch.ones(T, T, dtype=torch.bool)
    upper = "the upper triangle shows later tokens: keep j ≤ i, the lower triangle (torch.tril)."
    return [
        (~ones.tril(), "True marks the future: True means may attend (on and below the diagonal)."),
        (ones.triu(), upper),
        (ones.tril(-1), "the diagonal is masked (False): a token sees itself (j ≤ i, not j < i)."),
        (
            ones.tril(1),
            "query i sees key i + 1, the very next token: one diagonal too high. Keep keys j ≤ i.",
        ),
        (ones, "everything is True: nothing is hidden."),
        (~ones, "everything is False: no query may attend to anything."),
    ]


def _padding_mistakes(tokens, pad_id) -> list:
    """A padding mask (B, 1, 1, T) gone wrong (3.7, and 3.8's padding part)."""
    padding, zero = (tokens == pad_id)[:, None, None, :], (tokens != 0)[:, None, None, :]
    return [
        (padding, "True marks the padding: True should mark the real tokens, tokens != pad_id."),
        (zero, f"`pad_id` was ignored: with pad_id = {pad_id}, the {pad_id}s are the padding."),
    ]


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


@exercise("3.2", "Apply: one query, two keys")
def apply(apply_weights, apply_output) -> str:
    """Follow the five steps with a single query: one score per key, scaled, then a softmax
    over the two keys; the output mixes the values with those weights.

    The scores q·k are [1, 0]; divided by √d_k = √2 they are [0.7071, 0]. The softmax of
    [a, 0] is [eᵃ, 1] / (eᵃ + 1), and the output is w₁·5 + w₂·3.

    `apply_weights = (K_apply @ q_apply / math.sqrt(2)).softmax(dim=-1)`, then
    `apply_output = apply_weights @ V_apply`.
    """
    s, values = torch.tensor([1.0, 0.0]).double(), torch.tensor([5.0, 3.0]).double()
    scaled = s / math.sqrt(2)
    weights = scaled.softmax(-1)
    one = "one number: attention gives every key its own weight, two keys here."
    two = "two rows of weights: the scores are one per key, K @ q (not K * q, nor K alone)."
    swapped = "the weights are swapped: q = [1, 0] matches the first key, so the first weight is"
    wrong = [
        (s.softmax(-1), "these are softmax([1, 0]): divide the scores by √d_k = √2 ≈ 1.414."),
        ((s / 2).softmax(-1), "you divided by d_k = 2; divide by its square root, √2."),
        ((s * math.sqrt(2)).softmax(-1), "you multiplied the scores by √d_k; divide by √2."),
        (weights.flip(0), f"{swapped} the larger."),
        (scaled, "these are the scaled scores; the softmax turns them into weights."),
        (s, "these are the raw scores q·k; scale them by 1/√2, then take the softmax."),
        *softmax_confusions(scaled),
    ]
    shapes = {(): one, (1,): one, (2, 2): two}
    diagnose(
        "apply_weights", apply_weights, weights, wrong, weights=True, typed=True, shapes=shapes
    )
    out, output = as_tensor("apply_output", apply_output), weights @ values
    outer = "weights * V broadcasts into every product wᵢ·vⱼ; the output is weights @ V."
    misplaced = "each weight went to the wrong value: 0.670 is the first key's, whose value is 5."
    wrong = [
        (weights, "these are the weights: the output is the weighted sum, weights @ V."),
        (weights * values, "these are the products wᵢ·vᵢ: the output is their sum, weights @ V."),
        (weights[None, :] * values[:, None], outer),
        (weights[:, None] * values[None, :], outer),
        (weights.flip(0) @ values, misplaced),
        (weights.sum(), "it is the weighted sum of the values, Σ wᵢ·vᵢ, not of the weights."),
        (values.mean(), "4 is the plain average of the values: weight each by its weight."),
    ]
    out = out.reshape(()) if out.numel() == 1 else out
    diagnose("apply_output", out, output, wrong, typed=True)
    return (
        f"weights {fmt(weights)}, output {float(output):.4f}: between 3 and 5, nearer 5, the "
        "value of the better-matching key."
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
    four = {(n, n): f"that is {n} tokens; the exercise has four, so (4, 4)." for n in range(1, 9)}
    zeros, causal = torch.zeros(4, 4, dtype=torch.float64), causal_mask(4)
    upper, fills = _causal_mistakes(4)[1][1], (float("-inf"), -1e9)
    masked_scores = "these are the masked scores; the softmax turns them into weights."
    ones = "these are the mask's ones and zeros; the weights are the softmax of the masked scores."
    wrong = [
        (attend(zeros, causal).T, upper),
        (causal.double(), ones),
        *((masked(zeros, causal, fill), masked_scores) for fill in fills),
        *((attend(zeros, m, fill=f), why) for m, why in _causal_mistakes(4)[1:4] for f in fills),
        *softmax_mistakes(zeros, causal),
        *softmax_confusions(masked(zeros, causal))[:1],  # the log-probabilities
    ]
    four = dict(weights=True, typed=True, shapes=four, letters="(T_q, T_k)")
    diagnose("causal_weights", causal_weights, attend(zeros, causal), wrong, **four)
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
    rand = functools.partial(torch.randn, generator=torch.Generator().manual_seed(3))
    # T_q = 5, T_k = 6, d_k = 8, d_v = 3 and a batch of 2 all differ, so every mix-up shows.
    q, k, v = rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 3)
    _compare_attention(attention, q, k, v, None, "on q (2, 5, 8), k (2, 6, 8), v (2, 6, 3)")
    for shape in [(1, 4, 8), (1, 1, 4, 16), (1, 1, 4, 8), (2, 3, 4, 8)]:
        q, k, v = rand(*shape), rand(*shape), rand(*shape)
        _compare_attention(attention, q, k, v, None, f"on q, k, v of shape {shape}")
    fourth = "the mask as its fourth argument: def attention(q, k, v, mask=None)"
    expect_parameters(attention, f"attention must take {fourth}", q, k, v, None)
    q, k, v = rand(2, 5, 8), rand(2, 5, 8), rand(2, 5, 3)
    _compare_attention(attention, q, k, v, causal_mask(5), "with a causal mask")
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    v = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]])
    out, weights = _compare_attention(attention, q, k, v, None, "on the worked example")
    return (
        "3-D and 4-D inputs and the causal mask all agree with the reference; on the worked "
        f'example "the" gets weights {fmt(weights[0])} and output {fmt(out[0])}.'
    )


# Code that fits one rank of q, k and v only (the public repositories' idioms), and why.
_ONE_RANK = [
    (r"\.T\b", "k.T reverses every dimension of a batched tensor"),
    (r"\.transpose\(\s*\d+\s*,\s*\d+\s*\)", "transpose(1, 2) or (2, 3) counts axes from the front"),
    (r"\.permute\(", "permute(0, 1, 3, 2) names every axis of one rank"),
    (
        r"^\s*\w+(\s*,\s*\w+)+\s*=\s*\w+\.(shape|size\(\))\s*$",
        "B, H, T, d = q.shape takes one rank",
    ),
    (r"\bbmm\b", "torch.bmm needs exactly 3-D"),
]
_SHAPES_TIP = (
    "Tip: the shapes don't line up: check the order of the products. Both are matrix products "
    "(@) with only the last two axes of k swapped: q @ kᵀ = q @ k.transpose(-2, -1) is (..., "
    "T_q, d_k) @ (..., d_k, T_k), one row per query, and weights @ v is (..., T_q, T_k) @ (..., "
    "T_k, d_v)."
)


def _attention_tip(attention, error: Exception) -> str | None:
    """What a crash of the learner's attention most likely means."""
    source, text = _code_only(source_of(attention) or ""), str(error)
    if "NoneType" in text:
        return "Tip: the mask is optional; apply it only `if mask is not None`."
    if "masked_fill" in text:
        order = "the boolean mask first, then the value"
        return f"Tip: masked_fill takes {order}: scores.masked_fill(~mask, float('-inf'))."
    if "softmax" in text and "dim" in text:
        return "Tip: say which axis the softmax runs over: dim=-1, the keys."
    if ranks := [why for pattern, why in _ONE_RANK if re.search(pattern, source, re.M)]:
        return (
            f"Tip: {'; '.join(ranks)}; q @ k.transpose(-2, -1) fits any number of leading "
            "dimensions, and so does d_k = q.size(-1)."
        )
    shapes = ("cannot be multiplied", "Expected size for first two", "mismatch", "must match")
    return _SHAPES_TIP if any(words in text for words in shapes) else None


def _code_only(source: str) -> str:
    """``source`` with its comments and strings blanked, where the idioms above mean nothing."""
    lines = [list(line) for line in source.splitlines(keepends=True)]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source
    for t in tokens:
        if t.type in (tokenize.COMMENT, tokenize.STRING):
            for row in range(t.start[0], t.end[0] + 1):
                line = lines[row - 1]
                start = t.start[1] if row == t.start[0] else 0
                end = t.end[1] if row == t.end[0] else len(line) - (line[-1:] == ["\n"])
                line[start:end] = " " * (end - start)
    return "".join("".join(line) for line in lines)


def _compare_attention(attention, q, k, v, mask, during):
    """The learner's (output, weights) for these inputs, once they agree with the reference."""
    moved = "your function changed q, k or v in place (e.g. q /= ...): compute new tensors instead."
    args = (q, k, v) if mask is None else (q, k, v, mask)
    tip = functools.partial(_attention_tip, attention)
    result = call(attention, *args, during=during, tip=tip, in_place=moved)
    d_k, scores, v = q.shape[-1], q.double() @ k.double().transpose(-2, -1), v.double()
    scaled = scores / math.sqrt(d_k)
    expected_w = attend(scaled, mask)
    expected_out = expected_w @ v
    only = {expected_w.shape: "weights", expected_out.shape: "output"}  # the output first
    if isinstance(expect_returned("attention", result), torch.Tensor) and result.shape in only:
        said = f"{during}, attention returned only the {only[result.shape]}:"
        raise Mismatch(f"{said} return (output, weights).", MISTAKE)
    out, weights = tensor_pair("attention", result, during)
    if out.shape == expected_w.shape != weights.shape == expected_out.shape:
        raise Mismatch(f"{during} the pair came back swapped: return (output, weights).", MISTAKE)
    flipped = (*expected_w.shape[:-2], k.shape[-2], q.shape[-2])
    by_keys = {flipped: f"that is (..., T_k, T_q) = {flipped}: compute q @ kᵀ, not k @ qᵀ."}
    widths = [(q.shape[-2], "T_q, the number of queries"), (k.shape[-2], "T_k, the number of keys")]
    widths += [(v.shape[-1], "d_v, the width of the values"), (q.shape[0], "the batch size")]
    mistakes = [
        *weight_mistakes(scores, d_k, mask, scaled_by=widths if q.dim() > 2 else widths[:3]),
        *softmax_confusions(scaled if mask is None else masked(scaled, mask))[:1],
    ]
    shapes = dict(shapes=by_keys, letters="(..., T_q, T_k)")
    diagnose("weights", weights, expected_w, mistakes, weights=True, during=during, **shapes)
    diagnose("output", out, expected_out, output_mistakes(scaled, v), during=during)
    return out, weights


# 3.5 (lab L3.B) Saturation, measured: the mean largest weight over 10 keys ---------------------

# For scores of standard deviation std, 10 per row: the exact mean of a row's largest softmax
# weight and σ, the spread of one row's largest weight (10 million rows, each mean ±0.00006); a
# mean of n rows scatters around the exact value by σ/√n. The average of 8 measurements must land
# within _Z standard errors of it (a right answer misses once in 2 million checks per std), and
# they may scatter up to _SCATTER times σ/√n (more once in 4 million; 100 rows scatter 10 times).
_EXACT = {8.0: (0.8661, 0.1697), 1.0: (0.3202, 0.1086), 2.0: (0.5317, 0.1882)}
_ROWS, _SEEDS, _Z, _SCATTER = 10_000, range(8), 5.0, 2.5  # the sample size the exercise asks for


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
    off = [s for s in runs if abs(means[s] - _EXACT[s][0]) > _error(s, _ROWS * len(runs[s]), _Z)]
    if off and (why := _saturation_mistake(means)):
        raise Mismatch(why, MISTAKE)
    _sample_size(mean_max_weight, runs[8.0])
    if off:
        raise Mismatch(_off(off[0], runs[off[0]]), DIFFERENCE)
    return (
        f"over {len(_SEEDS)} seeds of {_ROWS:,} rows your means are {means[8.0]:.3f} for std 8 "
        f"(unscaled, d_k = 64) and {means[1.0]:.3f} for std 1 (scaled), each within its sampling"
        " error of the exact value: without 1/√d_k one key takes most of the weight."
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
    if len(set(unscaled)) == 1:  # 0.1 or 1 whatever the draws is a mistake; else a typed value
        named = not 0.1 + 1e-6 < first <= 0.995  # 1/10 give or take the last bits
        raise Mismatch(
            (_saturation_mistake({8.0: first}) if named else None)
            or f"your function returns {first:.4f} for every seed, but a mean of {_ROWS:,} rows "
            f"moves by about {_error(8.0, _ROWS):.4f} from one seed to the next. Draw the scores "
            "from a generator seeded with `seed` and return the mean unrounded; a number typed "
            "in is not a measurement.",
            MISTAKE,
        )
    scaled = [_measure(fn, 1.0, _ROWS, s) for s in _SEEDS]
    if scaled == unscaled:
        same = "your function gives the same numbers for std = 8 and std = 1: multiply the"
        raise Mismatch(f"{same} unit-variance scores by `std`.", MISTAKE)
    other = [_measure(fn, 2.0, _ROWS, s) for s in _SEEDS[:4]]  # any std, not only 8 and 1
    return {1.0: scaled, 8.0: unscaled, 2.0: other}


def _measure(fn, std: float, n: int, seed: int) -> float:
    """The learner's ``fn(std, n, seed)``, one finite number."""
    result = call(fn, std, n, seed, during=f"as mean_max_weight({std:g}, {n}, {seed})", tip=_tip)
    return float(one_number("mean_max_weight", expect_returned("mean_max_weight", result)))


def _tip(error: Exception) -> str | None:
    """What a crash of the learner's measurement most likely means."""
    if isinstance(error, TypeError) and "positional argument" in str(error):
        return "Tip: the check calls mean_max_weight(std, n, seed): three arguments, in that order."
    return None


def _error(std: float, n: int, z: float = 1.0) -> float:
    """How far a mean of n rows typically lands from the exact mean, σ/√n (times ``z``)."""
    return z * _EXACT[std][1] / math.sqrt(n)


@functools.cache
def _largest(std: float, how: str = "max", rows: int = 20_000) -> float:
    """The mean over rows of one statistic (``how``: max, min, log or scores) of the softmax of
    10 scores of standard deviation ``std``, on fixed standard normal draws."""
    scores = std * torch.randn(20_000, 10, generator=torch.Generator().manual_seed(0))[:rows]
    if how in ("log", "scores"):
        return (scores.log_softmax(-1) if how == "log" else scores).max(-1).values.mean().item()
    return getattr(scores.softmax(-1), how)(-1).values.mean().item()


# The typical mistakes of a measurement, in the order tried: what it computes, and what to say.
_MISTAKES = {
    "min": "it is the mean *smallest* weight of each row: take each row's largest.",
    "1/10": "it is 1/10, the mean of all the weights: take each row's largest weight first.",
    "log": "it is negative: these are log-probabilities (log_softmax); take the softmax.",
    "scores": "it is the mean largest *score*: the softmax is missing.",
    "sum": "it is more than 1, a sum over the rows? Average them, .mean().",
}


def _saturation_mistake(means: dict[float, float]) -> str | None:
    """The typical mistake that the means (std -> mean: 1, 8 and 2, or 8 alone) show, if any."""
    for how, message in _MISTAKES.items():
        wrong = {s: {"1/10": 0.1, "sum": _ROWS * _EXACT[s][0]}.get(how) for s in means}
        wrong = {s: w or _largest(s, how) for s, w in wrong.items()}
        if all(abs(means[s] - w) <= max(0.007, 0.01 * abs(w)) for s, w in wrong.items()):
            return f"for std = 8 your function's mean is {means[8.0]:.4f}: {message}"
    std, value = next(iter(means.items()))  # std 1 first: its mistakes tell more
    said = f"for std = {std:g} your function's mean is {value:.4f}:"
    if 0 <= value < 0.1:
        return (
            f"{said} the largest of 10 weights that sum to 1 is at least 0.1, so the softmax ran "
            "over the rows rather than over each row's 10 scores: with scores of shape (n, 10), "
            "the softmax and the largest weight both run over dim=-1."
        )
    if 0.995 < value <= 1 or (std == 1.0 and 0.78 <= value <= 0.96):
        return (
            f"{said} it looks like the largest weight over all the rows rather than in each row: "
            "take the largest over the same axis as the softmax, each row's 10 scores (dim=-1 "
            "for both, with scores of shape (n, 10))."
        )
    return None


def _sample_size(fn, unscaled: list[float]) -> None:
    """Raise unless the learner's function draws n rows: its results (``unscaled``: std 8, n =
    10,000) are not rounded, and they and those for n = 1,000 scatter as means of n rows do."""
    if decimals := next((d for d in (1, 2) if all(round(v, d) == v for v in unscaled)), None):
        raise Mismatch(
            f"your function rounds its result to {decimals} decimal(s), which moves it by up to "
            f"{0.5 * 10**-decimals:g}, more than the sampling error of a mean of {_ROWS:,} rows "
            f"(about {_error(8.0, _ROWS):.4f}): return the mean as it is.",
            MISTAKE,
        )
    for n in (_ROWS, 1_000):
        values = unscaled if n == _ROWS else [_measure(fn, 8.0, n, s) for s in _SEEDS]
        if values[0] == unscaled[0] and n != _ROWS:
            raise Mismatch(
                "your function gives the same number for n = 1,000 as for n = 10,000 (seed 0), "
                "so it ignores n: draw n rows. A measurement's sampling error shrinks as 1/√n, "
                "so the check compares sample sizes too.",
                MISTAKE,
            )
        expected, spread = _error(8.0, n), statistics.stdev(values)
        if spread > _SCATTER * expected:
            raise Mismatch(
                f"for std = 8 and n = {n:,} your results over {len(values)} seeds scatter by "
                f"{spread:.4f} (their standard deviation). A mean of n rows scatters by about "
                f"σ/√n, where σ = {_EXACT[8.0][1]:.3f} is the spread of one row's largest weight: "
                f"{expected:.4f} for n = {n:,}. Yours scatter as means of about "
                f"{(_EXACT[8.0][1] / spread) ** 2:,.0f} rows would: does your function draw n "
                "rows of 10 scores?",
                MISTAKE,
            )


def _off(std: float, values: list[float]) -> str:
    """The message for measurements whose mean sampling error does not explain."""
    exact, sigma, mean = *_EXACT[std], statistics.fmean(values)
    if not 0.1 <= mean <= 1:
        return (
            f"for std = {std:g} your function's mean is {mean:.4g}, but the largest of 10 "
            "weights lies between 0.1 (all equal) and 1."
        )
    low, high = math.log(0.05), math.log(200.0)  # the std that `mean` fits (it grows): bisect
    for _ in range(12):
        mid = (low + high) / 2
        low, high = (mid, high) if _largest(math.exp(mid), rows=5000) < mean else (low, mid)
    fitted = math.exp((low + high) / 2)
    fits = f"; yours fits scores of standard deviation {fitted:.3g} rather than {std:g}"
    return (
        f"for std = {std:g} the mean of your function's results over {len(values)} seeds of "
        f"{_ROWS:,} rows is {mean:.4f}; the exact value is {exact:.4f}. One measurement "
        f"scatters by about σ/√n = {_error(std, _ROWS):.4f} (σ = {sigma:.3f}, the spread of one "
        f"row's largest weight), so the mean of {len(values)} lands within "
        f"{_error(std, _ROWS * len(values), _Z):.4f} of the exact value: {abs(mean - exact):.4f} "
        f"off is more than sampling error{fits if 0.13 < mean < 0.98 else ''}."
    )


# 3.6 (lab L3.C) A causal mask ------------------------------------------------------------------


@exercise("3.6", "Lab L3.C: a causal mask")
def causal_mask_function(make_causal_mask) -> str:
    """True = may attend: query i, a row, may see keys j ≤ i, the columns up to and including
    the diagonal.

    Start from a (T, T) boolean tensor that is True everywhere and keep its lower triangle,
    the diagonal included: torch has a function for the lower triangle of a matrix.

    `torch.ones(T, T, dtype=torch.bool).tril()`
    """
    for T in (4, 1, 7):
        got = expect_mask("make_causal_mask", call(make_causal_mask, T, during=f"for T = {T}"))
        named = {(4, 4): "the same size as for T = 4: build the mask from T."} if T != 4 else {}
        named[(T + 1, T + 1)] = f"one row and column too many: the mask for T = {T} is (T, T)."
        expect_shape(f"make_causal_mask({T})", got, (T, T), "(T, T)", shapes=named)
        expected, mistakes = causal_mask(T), _causal_mistakes(T)
        _judge_mask(f"make_causal_mask({T})", got, expected, mistakes, "from the causal mask")
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
        got = call(make_padding_mask, tokens, pad_id, during=during)
        got = expect_mask("make_padding_mask", got)
        (B, T), expected = tokens.shape, (tokens != pad_id)[:, None, None, :]
        axes = "add the two axes to the mask: mask[:, None, None, :] with mask = tokens != pad_id."
        keys = "the mask varies along the query axis: padding hides keys, so T goes last."
        first = "the batch axis comes first: (tokens != pad_id)[:, None, None, :]."
        named = {
            **dict.fromkeys([(B, T), (B, 1, T)], axes),
            **dict.fromkeys([(B, T, 1, 1), (B, 1, T, 1)], keys),
            **dict.fromkeys([(1, B, 1, T), (1, 1, B, T)], first),
        }
        expect_shape("make_padding_mask(...)", got, (B, 1, 1, T), "(B, 1, 1, T)", shapes=named)
        everything = (torch.ones_like(expected), "everything is True: the padding is not hidden.")
        mistakes = [*_padding_mistakes(tokens, pad_id), everything]
        _judge_mask("make_padding_mask", got, expected, mistakes, f"from tokens != pad_id {during}")
    return "True for real tokens, (B, 1, 1, T): it hides padding keys for every head and query."


# 3.8 (lab L3.C) Fix the decoder's mask ---------------------------------------------------------


@exercise("3.8", "Lab L3.C: fix the decoder's mask")
def decoder_mask_function(make_decoder_mask) -> str:
    """A key is visible when it is not in the future and not padding.

    Your masks from 3.6 and 3.7 are the two parts. Both must allow a key, a logical and; the
    causal (T, T) and the padding (B, 1, 1, T) broadcast together to (B, 1, T, T).

    `make_padding_mask(tgt_in, pad_id) & make_causal_mask(tgt_in.shape[1])`
    """
    cases = [
        (torch.tensor([[1, 5, 6, 7, 0], [1, 8, 9, 0, 0]]), 0),
        (torch.tensor([[1, 5, 6, 3, 3]]), 3),
    ]
    for tgt_in, pad_id in cases:
        (B, T), during = tgt_in.shape, f"for pad_id = {pad_id}"
        target = (B, 1, T, T)  # what broadcasts over the heads
        expected = target_mask(tgt_in, pad_id).expand(target)
        got = _decoder_mask(make_decoder_mask, tgt_in, pad_id, during)
        if _expands(got, target) and torch.equal(got.expand(target), expected):
            continue
        _blame_a_part(make_decoder_mask)  # a broken part from 3.6 or 3.7 is the news
        got = expect_mask("make_decoder_mask", got)
        if tuple(got.shape) == (B, T, T) and B > 1:
            heads = f"(B, T, T) = {tuple(got.shape)} has no head axis: return (B, 1, T, T)."
            raise Mismatch(f"B lines up with the heads: {heads}", MISTAKE)
        if not _expands(got, target):
            said = f"a mask of shape {tuple(got.shape)} does not broadcast to (B, 1, T, T) ="
            raise Mismatch(f"{said} {target}, the shape of causal & padding.", SHAPE)
        mistakes = _decoder_mistakes(tgt_in, pad_id, target)
        where = f"from causal & padding {during}"
        _judge_mask("your mask", got.expand(target), expected, mistakes, where)
    return "causal & padding, (B, 1, T, T): no query sees a later token or a padding token."


def _decoder_mask(fn, tgt_in, pad_id, during):
    """The learner's make_decoder_mask(tgt_in, pad_id); a stub or a broken function of theirs
    from 3.6 or 3.7 that it calls is named first."""
    unfinished = "your make_decoder_mask calls a stub: finish that exercise (3.6 or 3.7) first."

    def tip(error):  # a broken part from 3.6 or 3.7 is the news, before the crash itself
        return _blame_a_part(fn) or (_BROADCAST if "must match the size" in str(error) else None)

    try:
        return call(fn, tgt_in, pad_id, during=during, tip=tip, unfinished=unfinished)
    except NotDone:
        _blame_a_part(fn)
        raise


_BROADCAST = (
    "Tip: the two masks must broadcast: the padding mask is (B, 1, 1, T) and the causal mask "
    "(T, T), with T = tgt_in.shape[1], the length of the sequences."
)


def _expands(mask, shape) -> bool:
    """Whether ``mask`` is a boolean tensor that broadcasts to ``shape``."""
    try:
        return mask.dtype == torch.bool and torch.broadcast_shapes(mask.shape, shape) == shape
    except (AttributeError, RuntimeError):
        return False


def _blame_a_part(fn) -> None:
    """Raise if ``fn`` calls the learner's function of 3.6 or 3.7 and that one is a stub or
    fails its own check (:func:`._core.blame_earlier`)."""
    for name, exercise_id in (("make_causal_mask", "3.6"), ("make_padding_mask", "3.7")):
        blame_earlier(fn, name, exercise_id, "make_decoder_mask", __name__)


def _decoder_mistakes(tgt_in, pad_id, target) -> list:
    """The typical ways to combine (or not) the causal and the padding masks."""
    causal, keys = causal_mask(tgt_in.shape[1]), (tgt_in != pad_id)[:, None, None, :]
    queries = (tgt_in != pad_id)[:, None, :, None]
    rows = "padding hides *keys*, so it goes on the last axis only, (B, 1, 1, T)."
    leak = "the very leak this lab is about: combine with the causal mask."
    either = "`|` lets a key through if in the past *or* not padding: combine with `&`."
    padding = _padding_mistakes(tgt_in, pad_id)
    mistakes = [
        *((causal & p, f"the padding part is off: {why}") for p, why in padding),
        (causal, "padding keys are still visible: combine the two masks, causal & padding."),
        (keys, f"padding is hidden, but every query still sees the tokens after it, {leak}"),
        (causal | keys, either),
        (causal & queries, f"the padding mask hides query rows: {rows}"),
        *((c & keys, f"the causal part is off: {why}") for c, why in _causal_mistakes(len(causal))),
        (~(causal & keys), "the polarity is inverted: True means may attend."),
        (torch.ones_like(causal), "nothing is hidden: that is the bug."),
    ]
    return [(m.expand(target), why) for m, why in mistakes]
