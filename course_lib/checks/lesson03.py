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

import torch

from ..masks import causal_mask, padding_mask, target_mask
from ._core import (
    DIFFERENCE,
    MISTAKE,
    SHAPE,
    Mismatch,
    NotDone,
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
from ._tensors import as_tensor, close, diagnose, fmt, match

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

    (a) The division costs one extra operation; the matrix products cost the same with or
    without it. The reason is what large scores do to the softmax.

    (b) The softmax makes every row sum to 1 whatever the scale of the scores; the scale only
    decides how peaked each row is.

    (c) With unit-variance components, q·k has variance d_k, so for d_k = 64 scores of ±8 are
    common; the softmax then puts almost all weight on one key, its gradients p_i(δ_ij - p_j)
    are nearly zero, and learning stalls.

    (d) Dividing by the constant √d_k does not give vectors unit length; cosine similarity
    would divide each score by its own |q|·|k|.
    """


# 3.2 Apply: q = [1, 0], keys [1, 0] and [0, 1], values 5 and 3 ---------------------------------

_APPLY_SCORES = torch.tensor([1.0, 0.0], dtype=torch.float64)
_APPLY_VALUES = torch.tensor([5.0, 3.0], dtype=torch.float64)


@exercise("3.2", "Apply: one query, two keys")
def apply(apply_weights, apply_output) -> str:
    """Scores are q·k for each key: [1, 0]. Scale them by 1/√d_k with d_k = 2.

    softmax([0.7071, 0]) = [e^0.7071, 1] / (e^0.7071 + 1).

    The output is w₁·5 + w₂·3.
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
    named = None if close(got, weights, 2e-3) else match(got, wrong) or _apply_scale(got)
    if named:
        raise Mismatch(named, MISTAKE)
    diagnose("apply_weights", got, weights, wrong, atol=2e-3, weights=True)
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
    diagnose("apply_output", out.reshape(()), output, wrong, atol=2e-3)
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
    """Start from a 4 x 4 matrix of zero scores and hide every key j > i.

    scores.masked_fill(~torch.ones(4, 4, dtype=torch.bool).tril(), float('-inf')), then
    softmax over dim=-1.
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
    diagnose("causal_weights", got, expected, wrong, atol=1e-3, weights=True)
    return (
        "lower-triangular rows of 1, 1/2, 1/3 and 1/4: each token shares its attention equally "
        "among itself and the tokens before it."
    )


# 3.4 (lab L3.A) The attention function ---------------------------------------------------------


@exercise("3.4", "Lab L3.A: the attention function")
def attention_function(attention) -> str:
    """Follow the five steps: scores, scale, mask, softmax, weighted sum.

    q @ k.transpose(-2, -1) works for any number of leading dimensions; k.T and torch.bmm do
    not.

    Mask before the softmax: scores.masked_fill(~mask, float('-inf')); softmax over dim=-1.
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
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
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


# 3.5 (lab L3.B) Saturation: the mean largest weight over 10 keys -------------------------------

# The mean largest of 10 softmax weights of N(0, σ²) scores, from 20 million rows (±0.00004):
# what 10,000 rows estimate, within 0.0017 (σ = 8) and 0.0011 (σ = 1), one standard error.
_LARGEST = {"mean_max_unscaled": (8.0, 0.8661), "mean_max_scaled": (1.0, 0.3203)}
# Within about 4 standard errors of 10,000 rows: wider would let σ = 7 or 9, or 9 or 11
# scores per row, pass (they move the means by 0.015 to 0.019).
_SATURATION_TOLERANCE = {"mean_max_unscaled": 0.0075, "mean_max_scaled": 0.006}
_SAMPLING = (
    "with 10,000 rows of 10 scores, as the exercise asks, the estimate lands within {tol} of "
    "{mean:.4f}"
)


@exercise("3.5", "Lab L3.B: saturation")
def saturation(mean_max_unscaled, mean_max_scaled) -> str:
    """Draw a (10_000, 10) tensor of scores with torch.randn and multiply by the standard
    deviation.

    softmax over dim=-1, then .max(dim=-1).values, then .mean().
    """
    got = {}
    for name, value in (
        ("mean_max_unscaled", mean_max_unscaled),
        ("mean_max_scaled", mean_max_scaled),
    ):
        x = as_tensor(name, value)
        if x.numel() != 1:
            raise Mismatch(
                f"`{name}` should be one number (a mean over many rows); "
                f"got shape {tuple(x.shape)}",
                SHAPE,
            )
        got[name] = float(x)
        if not math.isfinite(got[name]):
            raise Mismatch(
                f"`{name}` is {got[name]}, not a number: a softmax over a row of -inf scores, "
                "or 0/0?",
                DIFFERENCE,
            )
    u, s = got["mean_max_unscaled"], got["mean_max_scaled"]
    wrong = [
        n for n, value in got.items() if abs(value - _LARGEST[n][1]) > _SATURATION_TOLERANCE[n]
    ]
    if not wrong:
        return (
            f"unscaled {u:.3f} vs scaled {s:.3f}: without 1/√d_k one key takes most of the weight."
        )
    named = _saturation_pair(u, s)
    if named:
        raise Mismatch(named, MISTAKE)
    for why in (_saturation_mistake(n, got[n]) for n in wrong):
        if why:
            raise Mismatch(why, MISTAKE)
    name = wrong[0]
    if not 0 <= got[name] <= 1:
        raise Mismatch(
            f"`{name}` = {got[name]:.4g}, but the largest of 10 weights lies between 0.1 (all "
            "equal) and 1.",
            DIFFERENCE,
        )
    std, mean = _LARGEST[name]
    sampling = _SAMPLING.format(tol=_SATURATION_TOLERANCE[name], mean=mean)
    fitted = _fitted_std(got[name])
    fits = f"; yours fits scores of standard deviation {fitted:.3g}, not {std:g}" if fitted else ""
    raise Mismatch(f"`{name}` = {got[name]:.4f}: {sampling}{fits}.", DIFFERENCE)


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


def _saturation_pair(u: float, s: float) -> str | None:
    """A mistake that shows in both numbers: swapped, or rows of another number of scores."""
    unscaled, scaled = _LARGEST["mean_max_unscaled"][1], _LARGEST["mean_max_scaled"][1]
    if abs(u - scaled) < 0.01 and abs(s - unscaled) < 0.01:
        return (
            "the two are swapped: the unscaled scores (std 8) saturate, so their largest "
            "weight is the bigger one."
        )
    for keys in (9, 11, 8, 12):
        if abs(s - _largest(1.0, keys)) <= 0.007:
            return (
                f"`mean_max_scaled` = {s:.4f} fits rows of {keys} scores: the exercise draws "
                "10 per row, torch.randn(10_000, 10), and takes the softmax over those 10."
            )
    return None


def _saturation_mistake(name: str, value: float) -> str | None:
    """Name what ``value`` holds instead of the mean largest weight of its scores, if typical."""
    std = _LARGEST[name][0]
    said = f"`{name}` = {value:.4f}"
    scales = {
        "mean_max_unscaled": [
            (
                64.0,
                "matches a standard deviation of 64: for d_k = 64 the *variance* is 64, "
                "so the standard deviation is 8.",
            ),
            (
                math.sqrt(8),
                "matches a standard deviation of √8: the standard deviation is 8, "
                "so multiply the unit-variance scores by 8.",
            ),
            (
                1.0,
                "matches a standard deviation of 1, the scaled scores': the unscaled ones are "
                "torch.randn(...) * 8.",
            ),
            (7.0, "matches a standard deviation of 7; the unscaled scores have 8 (√64)."),
            (9.0, "matches a standard deviation of 9; the unscaled scores have 8 (√64)."),
            (
                1 / 8,
                "matches a standard deviation of 1/8: the scores were divided by 8; the "
                "unscaled ones are multiplied by 8.",
            ),
        ],
        "mean_max_scaled": [
            (
                8.0,
                "matches a standard deviation of 8: these are the unscaled scores; divide by "
                "√64 = 8 to get standard deviation 1.",
            ),
            (
                1 / 8,
                "matches a standard deviation of 1/8: the unscaled scores were divided by "
                "64 = d_k; the scaling divides by √d_k = 8, leaving standard deviation 1.",
            ),
            (
                math.sqrt(8),
                "matches a standard deviation of √8 ≈ 2.83: divide the unscaled "
                "scores by 8 = √64, which leaves standard deviation 1.",
            ),
            (
                64.0,
                "matches a standard deviation of 64; the scaled scores have standard deviation 1.",
            ),
            (
                2.0,
                "matches a standard deviation of 2; the scaled scores have standard deviation 1.",
            ),
            (
                0.5,
                "matches a standard deviation of 1/2; the scaled scores have standard deviation 1.",
            ),
        ],
    }[name]
    for other, message in scales:
        if abs(value - _largest(other)) <= 0.007:
            return f"{said} {message}"
    reductions = [
        ("min", "is the mean *smallest* weight: take each row's largest, .max(dim=-1).values."),
        (
            "mean",
            "is 1/10, the mean of all weights: take each row's largest first, "
            ".max(dim=-1).values, then .mean().",
        ),
        ("log", "is negative: these are log-probabilities (log_softmax); take the softmax."),
        ("scores", "is the mean largest *score*: the softmax is missing."),
    ]
    for how, message in reductions:
        expected = _largest(std, how=how)
        if abs(value - expected) <= max(0.007, 0.05 * abs(expected)):
            return f"{said} {message}"
    if name == "mean_max_unscaled" and abs(value - _largest(8.0, how="over")) <= 0.007:
        return f"{said} fits scores 8 / z: multiply the unit-variance scores by 8, 8 * z."
    if value > 1 and value / _LARGEST[name][1] > 100:
        return f"{said} is more than 1: a sum over the rows? Average them, .mean()."
    if 0 <= value < 0.1:
        return (
            f"{said}, but the largest of 10 weights that sum to 1 is at least 0.1: did the "
            "softmax run over the rows (dim=0, or rows of 10,000 scores from "
            "torch.randn(10, 10_000))? Each row's 10 scores get one softmax, over dim=-1."
        )
    if 0.995 < value <= 1 or (name == "mean_max_scaled" and 0.78 <= value <= 0.96):
        return (
            f"{said} looks like the largest weight over all the rows (.max() or "
            ".max(dim=0)): take each row's largest, .max(dim=-1).values, then .mean()."
        )
    if round(value, 1) == value and abs(value - _LARGEST[name][1]) <= 0.06:
        return f"{said} looks rounded to 1 decimal, too coarse to check: keep at least 3."
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
    """True = may attend: query i may see keys 0..i.

    torch.ones(T, T, dtype=torch.bool).tril()
    """
    for T in (4, 1, 7):
        result = call(make_causal_mask, T, during=f"for T = {T}", tip=_mask_tip)
        got = expect_mask("make_causal_mask", expect_returned("make_causal_mask", result))
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
    """A key is visible when it is a real token: tokens != pad_id.

    Add axes for heads and queries: (B, T) -> (B, 1, 1, T) with [:, None, None, :].
    """
    cases = [
        (torch.tensor([[5, 7, 9, 0, 0], [4, 2, 0, 0, 0]]), 0),
        (torch.tensor([[3, 4, 1, 1]]), 1),
    ]
    for tokens, pad_id in cases:
        during = f"for pad_id = {pad_id}"
        result = call(make_padding_mask, tokens, pad_id, during=during, tip=_mask_tip)
        got = expect_mask("make_padding_mask", expect_returned("make_padding_mask", result))
        B, T = tokens.shape
        if tuple(got.shape) in {(B, T), (B, 1, T)}:
            raise Mismatch(
                f"shape {tuple(got.shape)} lines the tokens up with the score's last axes the "
                "wrong way: return tokens[:, None, None, :], shape (B, 1, 1, T), which "
                "broadcasts over heads and queries.",
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

    Combine your two masks with &: they broadcast to (B, 1, T, T).
    """
    for tgt_in, pad_id in [
        (torch.tensor([[1, 5, 6, 7, 0], [1, 8, 9, 0, 0]]), 0),
        (torch.tensor([[1, 5, 6, 3, 3]]), 3),
    ]:
        B, T = tgt_in.shape
        during = f"for pad_id = {pad_id}"
        result = call(make_decoder_mask, tgt_in, pad_id, during=during, tip=_decoder_tip)
        got = expect_mask("make_decoder_mask", expect_returned("make_decoder_mask", result))
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
