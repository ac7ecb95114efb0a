"""Checks for lesson 3, scaled dot-product attention (paper §3.2.1, Eq. 1).

Each check compares the learner's answer with the reference and, when they differ, with the
results of the typical mistakes (no 1/sqrt(d_k), softmax over the wrong axis, a mask applied
after the softmax or with inverted polarity, ...) so the message can name the mistake; the
mistakes that other lessons share come from ``_mistakes``. Masks follow the course
convention: boolean, True = may attend.
"""

import inspect
import math
import re

import torch

from ..masks import causal_mask, padding_mask, target_mask
from ._core import Mismatch, NotDone, call, exercise, multiple_choice
from ._mistakes import (
    attend,
    expect_mask,
    masked,
    output_mistakes,
    softmax_mistakes,
    tensor_pair,
    weight_mistakes,
)
from ._tensors import as_tensor, close, diagnose, difference, expect_shape, fmt, match

# 3.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("3.1", "Recall: why divide by √d_k?", correct="b")
def recall(answer_3_1):
    """Think about the variance of q·k when q and k have d_k independent unit-variance
    components.

    What does a softmax look like when its inputs differ by ±8 or more? And its gradient?

    (a) The division costs one extra operation; the matrix products cost the same with or
    without it. The reason is what large scores do to the softmax.

    (b) With unit-variance components, q·k has variance d_k, so for d_k = 64 scores of ±8 are
    common; the softmax then puts almost all weight on one key, its gradients p_i(δ_ij - p_j)
    are nearly zero, and learning stalls.

    (c) The softmax makes every row sum to 1 whatever the scale of the scores; the scale only
    decides how peaked each row is.

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
    s = _APPLY_SCORES
    weights = (s / math.sqrt(2)).softmax(-1)
    wrong = [
        (
            s.softmax(-1),
            "these are softmax([1, 0]): divide the scores by √d_k = √2 ≈ 1.414 first.",
        ),
        ((s / 2).softmax(-1), "you divided by d_k = 2; divide by its square root, √2 ≈ 1.414."),
        (
            weights.flip(0),
            "the weights are swapped: the query [1, 0] matches the first key best, so the "
            "first weight is the larger.",
        ),
        (s / math.sqrt(2), "these are the scaled scores; the softmax turns them into weights."),
    ]
    diagnose("apply_weights", apply_weights, weights, wrong, atol=2e-3, weights=True)
    out = as_tensor("apply_output", apply_output)
    if out.numel() != 1:
        raise Mismatch(
            f"`apply_output` should be one number (d_v = 1); got shape {tuple(out.shape)}"
        )
    output = weights @ _APPLY_VALUES
    wrong = [
        (
            weights.flip(0) @ _APPLY_VALUES,
            "each weight went to the wrong value: 0.670 belongs to the first key, whose value "
            "is 5.",
        ),
        (
            weights.sum(),
            "the output is the weighted sum of the values, Σ wᵢ·vᵢ, not of the weights.",
        ),
    ]
    diagnose("apply_output", out.reshape(()), output, wrong, atol=2e-3)
    return (
        f"weights {fmt(weights)}, output {float(output):.4f}: between 3 and 5, nearer 5, the "
        "value of the better-matching key."
    )


# 3.3 Extend: causal weights for 4 tokens with all-zero scores ---------------------------------


@exercise("3.3", "Extend: the causal weight pattern")
def causal_pattern(causal_weights) -> str:
    """Start from a 4 x 4 matrix of zero scores and hide every key j > i.

    scores.masked_fill(~torch.ones(4, 4, dtype=torch.bool).tril(), float('-inf')), then
    softmax over dim=-1.
    """
    got = as_tensor("causal_weights", causal_weights)
    expect_shape("causal_weights", got, (4, 4), "(T_q, T_k)")
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
    strict = causal.tril(-1)
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
        (
            masked(zeros, causal),
            "these are the masked scores; the softmax turns them into weights.",
        ),
        (attend(zeros, strict), no_diagonal),
        (attend(zeros, strict).nan_to_num(), no_diagonal),
        (attend(zeros, strict, fill=-1e9), no_diagonal),
        *softmax_mistakes(zeros, causal),
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

    q, k, v = rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 3)
    try:
        _compare_attention(attention, q, k, v, None, "on q (2, 5, 8), k (2, 6, 8), v (2, 6, 3)")
    except Mismatch as e:
        if str(e).startswith("your function raised") and _runs(attention, rand(2, 6, 8), k, v):
            raise Mismatch(
                f"{e} With as many queries as keys it runs, so check the order of the product: "
                "q @ kᵀ has shape (..., T_q, T_k), one row per query."
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
            "def attention(q, k, v, mask=None)."
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


def _compare_attention(attention, q, k, v, mask, during):
    result = call(
        attention,
        *((q, k, v) if mask is None else (q, k, v, mask)),
        during=during,
        tip=lambda error: _RANK_TIP if _fits_one_rank(attention) else None,
        in_place="your function changed q, k or v in place (e.g. q /= ...): compute new "
        "tensors instead.",
    )
    out, weights = tensor_pair("attention", result, during)
    scores = q.double() @ k.double().transpose(-2, -1)
    scaled = scores / math.sqrt(q.shape[-1])
    expected_w = attend(scaled, mask)
    expected_out = expected_w @ v.double()
    if out.shape == expected_w.shape != weights.shape == expected_out.shape:
        raise Mismatch(
            f"{during} the pair came back swapped: return (output, weights), in that order."
        )
    transposed = (*expected_w.shape[:-2], k.shape[-2], q.shape[-2])
    if tuple(weights.shape) == transposed != expected_w.shape:
        raise Mismatch(
            f"{during} the weights have shape (..., T_k, T_q) = {tuple(weights.shape)}: "
            "compute q @ kᵀ, not k @ qᵀ."
        )
    for name, x, expected, letters in (
        ("weights", weights, expected_w, "(..., T_q, T_k)"),
        ("output", out, expected_out, "(..., T_q, d_v)"),
    ):
        if x.shape != expected.shape:
            raise Mismatch(
                f"{during}: `{name}` should have shape {letters} = {tuple(expected.shape)}; "
                f"got {tuple(x.shape)}."
            )
    mistakes = weight_mistakes(scores, q.shape[-1], mask)
    diagnose("weights", weights, expected_w, mistakes, weights=True, during=during)
    if not close(out, expected_out):
        raise Mismatch(
            match(out, output_mistakes(scaled, v.double()))
            or f"{during}: {difference('output', out, expected_out)}"
        )
    return out, weights


def _runs(fn, *args) -> bool:
    try:
        call(fn, *args)
    except (Mismatch, NotDone):
        return False
    return True


# 3.5 (lab L3.B) Saturation: the mean largest weight over 10 keys -------------------------------


@exercise("3.5", "Lab L3.B: saturation")
def saturation(mean_max_unscaled, mean_max_scaled) -> str:
    """Draw a (n, 10) tensor of scores with torch.randn and multiply by the standard
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
                f"`{name}` should be one number (a mean over many draws); "
                f"got shape {tuple(x.shape)}"
            )
        got[name] = float(x)
        if not 0.1 <= got[name] <= 1.0:
            raise Mismatch(
                f"`{name}` = {got[name]:.3f}, but the largest of 10 weights lies between 0.1 "
                "(all equal) and 1."
            )
    unscaled, scaled = _mean_largest_weight(8.0), _mean_largest_weight(1.0)
    u, s = got["mean_max_unscaled"], got["mean_max_scaled"]
    if abs(u - scaled) < 0.02 and abs(s - unscaled) < 0.02:
        raise Mismatch(
            "the two are swapped: the unscaled scores (std 8) saturate, so their largest "
            "weight is the bigger one."
        )
    if abs(u - _mean_largest_weight(64.0)) < 0.005:
        raise Mismatch(
            f"`mean_max_unscaled` = {u:.3f} matches a standard deviation of 64: for d_k = 64 "
            "the *variance* is 64, so the standard deviation is 8."
        )
    for name, value, expected in (
        ("mean_max_unscaled", u, unscaled),
        ("mean_max_scaled", s, scaled),
    ):
        if abs(value - expected) > 0.02:
            raise Mismatch(
                f"`{name}` = {value:.3f}; expected about {expected:.2f} (draw a few thousand "
                "rows of 10 scores; softmax over the 10)."
            )
    return f"unscaled {u:.3f} vs scaled {s:.3f}: without 1/√d_k one key takes most of the weight."


def _mean_largest_weight(std: float) -> float:
    scores = torch.randn(20_000, 10, generator=torch.Generator().manual_seed(0)) * std
    return scores.softmax(-1).max(-1).values.mean().item()


# 3.6 (lab L3.C) A causal mask ------------------------------------------------------------------


@exercise("3.6", "Lab L3.C: a causal mask")
def causal_mask_function(make_causal_mask) -> str:
    """True = may attend: query i may see keys 0..i.

    torch.ones(T, T, dtype=torch.bool).tril()
    """
    for T in (4, 1, 7):
        got = expect_mask("make_causal_mask", call(make_causal_mask, T, during=f"for T = {T}"))
        expected = torch.ones(T, T, dtype=torch.bool).tril()
        expect_shape(f"make_causal_mask({T})", got, (T, T), "(T, T)")
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
            (torch.ones(T, T, dtype=torch.bool), "everything is True: nothing is hidden."),
        ]
        raise Mismatch(
            match(got, mistakes)
            or f"make_causal_mask({T}) differs from the lower-triangular mask in "
            f"{int((got != expected).sum())} of {T * T} places."
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
        got = expect_mask(
            "make_padding_mask", call(make_padding_mask, tokens, pad_id, during=during)
        )
        B, T = tokens.shape
        if tuple(got.shape) in {(B, T), (B, 1, T)}:
            raise Mismatch(
                f"shape {tuple(got.shape)} lines the tokens up with the score's last axes the "
                "wrong way: return tokens[:, None, None, :], shape (B, 1, 1, T), which "
                "broadcasts over heads and queries."
            )
        if tuple(got.shape) in {(B, T, 1, 1), (B, 1, T, 1)}:
            raise Mismatch(
                "the mask varies along the query axis: padding hides keys, so T belongs on the "
                "last axis, (B, 1, 1, T)."
            )
        expect_shape("make_padding_mask(...)", got, (B, 1, 1, T), "(B, 1, 1, T)")
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
        ]
        raise Mismatch(
            match(got, mistakes) or f"make_padding_mask differs from tokens != pad_id {during}."
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
        got = expect_mask(
            "make_decoder_mask", call(make_decoder_mask, tgt_in, pad_id, during=during)
        )
        target = (B, 3, T, T)  # (B, H, T, T) with H = 3 heads
        try:
            got = got.expand(target)
        except RuntimeError:
            raise Mismatch(
                f"a mask of shape {tuple(got.shape)} does not broadcast to (B, H, T, T) = "
                f"{target}: return shape (B, 1, T, T)."
            ) from None
        expected = target_mask(tgt_in, pad_id).expand(target)
        if not torch.equal(got, expected):
            mistakes = _decoder_mask_mistakes(tgt_in, pad_id, target, expected)
            raise Mismatch(
                match(got, mistakes) or f"your mask differs from causal & padding {during}."
            )
    return "causal & padding, (B, 1, T, T): no query sees a later token or a padding token."


def _decoder_mask_mistakes(tgt_in, pad_id, target, expected) -> list:
    causal = causal_mask(tgt_in.shape[1]).expand(target)
    keys = padding_mask(tgt_in, pad_id).expand(target)  # (B, 1, 1, T): hides padding keys
    queries = (tgt_in != pad_id)[:, None, :, None].expand(target)
    ignored = target_mask(tgt_in, 1 if pad_id == 0 else 0).expand(target)
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
        (causal.tril(-1) & keys, "the diagonal is False: a token may attend to itself."),
        (~expected, "the polarity is inverted: True means may attend."),
        (torch.ones(target, dtype=torch.bool), "nothing is hidden: that is the bug."),
    ]
