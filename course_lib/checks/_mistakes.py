"""The typical mistakes, shared by every lesson: what each one computes and what to tell.

A mistake is a pair ``(wrong_result, message)``: the value a learner gets by making it, and
the message that names it. A function here returns the pairs of one family of mistakes for
given inputs, in the order they are tried; a verifier passes them to ``_tensors.diagnose``
(or ``_tensors.match``), which names the first one the learner's answer reproduces::

    diagnose("weights", got, expected, weight_mistakes(q @ k.mT, d_k, mask))

Every function takes torch tensors or numpy arrays and computes in the type it is given;
the messages speak that library's language (``dim=-1`` and ``masked_fill`` for torch,
``axis=-1`` and ``np.where`` for numpy, lesson 8's from-scratch encoder). Masks follow the
course convention: boolean, True = may attend.

Families: attention weights (:func:`weight_mistakes`, :func:`softmax_mistakes`,
:func:`mask_mistakes`, :func:`output_mistakes`), a softmax written by hand
(:func:`stable_softmax_mistakes`), layer norm (:func:`layer_norm_mistakes`), the positional
encoding table (:func:`positional_mistakes`), the post-norm Add & Norm
(:func:`add_and_norm_mistakes`), the type and shape of what a function returns
(:func:`tensor_pair`, :func:`array_pair`, :func:`expect_returned`, :func:`expect_tensor`,
:func:`expect_array`, :func:`expect_mask`, :func:`shape_mistake`), one number
(:func:`match_number`), what a softmax's result is mistaken for (:func:`softmax_confusions`),
a crash on shapes (:func:`keepdims_tip`), what a function takes (:func:`expect_parameters`)
and counts (:func:`expect_count`). The reference computations they build on
(:func:`softmax`, :func:`masked`, :func:`attend`, :func:`layer_norm`,
:func:`positional_table`) are here too.
"""

import math

import numpy as np
import torch

from ._core import DIFFERENCE, MISTAKE, TYPE, Mismatch
from ._tensors import as_tensor, digits

NEG_INF = float("-inf")


def _torch(x) -> bool:
    return isinstance(x, torch.Tensor)


def _say(x, torch_text: str, numpy_text: str) -> str:
    """The message in the language of the library that ``x`` comes from."""
    return torch_text if _torch(x) else numpy_text


# Reference computations, in torch or numpy ----------------------------------------------------


def softmax(x, axis: int = -1):
    """The softmax along ``axis``, computed stably, in the type of ``x``."""
    if _torch(x):
        return x.softmax(axis)
    with np.errstate(all="ignore"):  # a row of -inf gives NaN, as in torch
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def masked(scores, mask, fill: float = NEG_INF):
    """The scores with the positions the mask hides (False) set to ``fill``."""
    return scores.masked_fill(~mask, fill) if _torch(scores) else np.where(mask, scores, fill)


def attend(scores, mask=None, axis: int = -1, fill: float = NEG_INF):
    """The attention weights of (already scaled) scores: mask, then softmax along ``axis``."""
    return softmax(scores if mask is None else masked(scores, mask, fill), axis)


def _stats(x, axis, ddof: int = 0):
    """Mean and variance along ``axis`` (None: the whole of ``x``), axes kept for broadcasting."""
    if _torch(x):
        if axis is None:
            return x.mean(), x.var(correction=ddof)
        return x.mean(dim=axis, keepdim=True), x.var(dim=axis, keepdim=True, correction=ddof)
    return x.mean(axis=axis, keepdims=True), x.var(axis=axis, ddof=ddof, keepdims=True)


def _sqrt(x):
    return x.sqrt() if _torch(x) else np.sqrt(x)


def layer_norm(x, gamma, beta, eps: float = 1e-5):
    """LayerNorm over the last axis with the population variance: γ·(x - μ)/√(σ² + ε) + β."""
    mean, var = _stats(x, -1)
    return gamma * (x - mean) / _sqrt(var + eps) + beta


def positional_table(pos, d_model: int):
    """The sinusoidal encodings of the positions ``pos``, a column (T, 1) of floats (paper
    §3.5): sin(pos / 10000^(2i/d_model)) in column 2i, cos of the same angle in column 2i+1."""
    return _sin_cos(pos / 10000.0 ** (2 * _index(pos, d_model // 2) / d_model))


def _index(like, n: int):
    """0, 1, ..., n - 1 as a row (1, n) of float64, in the library of ``like``."""
    if _torch(like):
        return torch.arange(n, dtype=torch.float64)[None]
    return np.arange(n, dtype=np.float64)[None]


def _interleave(even, odd):
    """A table with ``even`` in the columns 0, 2, ... and ``odd`` in the columns 1, 3, ..."""
    stack = torch.stack if _torch(even) else np.stack
    return stack([even, odd], -1).reshape(*even.shape[:-1], -1)


def _sin_cos(angles):
    """The table of the angles (T, d_model/2): sin in the even columns, cos in the odd ones."""
    sin, cos = (torch.sin, torch.cos) if _torch(angles) else (np.sin, np.cos)
    return _interleave(sin(angles), cos(angles))


# Attention weights: scaling, the softmax and the mask -----------------------------------------


def weight_mistakes(scores, d_k: int, mask=None, scaled_by=()) -> list:
    """What goes wrong between the raw scores ``QKᵀ`` and the weights.

    The scale (none, 1/d_k, ×√d_k), then everything :func:`softmax_mistakes` lists for the
    scaled scores. ``scaled_by`` adds the scale taken from another width: pairs
    ``(width, what it is)``, e.g. ``(d_v, "d_v, the width of the values")``.
    """
    root = math.sqrt(d_k)
    mistakes = [
        (
            attend(scores, mask),
            "the scores are not scaled: divide QKᵀ by √d_k "
            f"(here √{d_k} ≈ {root:.2f}) before the softmax.",
        ),
        (
            attend(scores / d_k, mask),
            f"you divided by d_k = {d_k}; divide by its square root, √d_k ≈ {root:.2f}.",
        ),
        (attend(scores * root, mask), "you multiplied by √d_k; divide by it."),
        *softmax_mistakes(scores / root, mask),
    ]
    for width, what in scaled_by:
        if width is not None and width != d_k:
            message = (
                f"you scaled by √{width}, the square root of {what}; the scale is "
                f"√d_k = √{d_k}, the width of the queries and keys."
            )
            mistakes.append((attend(scores / math.sqrt(width), mask), message))
    return mistakes


def softmax_mistakes(scaled, mask=None) -> list:
    """What goes wrong between the scaled scores and the weights: the axis, the softmax
    itself, and (given a mask) every way to misapply the mask."""
    mistakes = [
        (
            attend(scaled, mask, axis=-2),
            _say(
                scaled,
                "the weights don't sum to 1 over the last axis (each column sums to 1 instead): "
                "softmax over dim=-1, the keys.",
                "each column of weights sums to 1: softmax over the keys, axis=-1 "
                "(one row per query).",
            ),
        ),
        (
            scaled,
            _say(
                scaled,
                "these are the scaled scores: the softmax (over dim=-1) turns them into weights.",
                "these are the scaled scores: the softmax turns them into weights.",
            ),
        ),
    ]
    return mistakes if mask is None else mistakes + mask_mistakes(scaled, mask)


def mask_mistakes(scaled, mask) -> list:
    """A mask ignored, inverted (with -inf or with -1e9), applied after the softmax, or
    filled with 0 instead of -inf."""
    hide = _say(
        scaled, "scores.masked_fill(~mask, float('-inf'))", "np.where(mask, scores, -np.inf)"
    )
    inverted = (
        "the mask's polarity is inverted: in this course True means may attend, so hide the "
        f"positions where the mask is False ({hide})."
    )
    minus_inf = _say(scaled, "float('-inf')", "-np.inf")
    return [
        (
            softmax(scaled),
            f"the mask had no effect: fill the scores where the mask is False with {minus_inf} "
            "before the softmax.",
        ),
        (attend(scaled, ~mask), inverted),
        (attend(scaled, ~mask, fill=-1e9), inverted),
        (
            softmax(scaled) * mask,
            "rows don't sum to 1: the mask was applied after the softmax. Mask the scores "
            "first, then take the softmax.",
        ),
        (
            attend(scaled, mask, fill=0.0),
            "masked scores were set to 0, but e⁰ = 1 still gets weight: fill them with "
            f"{minus_inf}.",
        ),
    ]


def output_mistakes(scaled, v) -> list:
    """What goes wrong between the weights and the output."""
    return [
        (scaled @ v, "the output mixes the values with the scores: multiply the weights by v."),
    ]


# A softmax written by hand --------------------------------------------------------------------


def stable_softmax_mistakes(x) -> list:
    """A hand-written softmax of ``x`` (2-D) that overflows, shifts by the wrong maximum,
    normalises along the wrong axis or not at all, or forgets keepdims."""
    axis, keep = _say(x, "dim", "axis"), _say(x, "keepdim=True", "keepdims=True")
    exp = torch.exp if _torch(x) else np.exp
    with np.errstate(all="ignore"):
        shifted = exp(x - _max(x, -1))
        everywhere = exp(x - _max(x, None))
        mistakes = [
            (
                exp(x) / _sum(exp(x), -1),
                f"not stable: for large inputs {_say(x, 'torch.exp', 'np.exp')} overflows "
                "(e^1000 = inf, and inf/inf = NaN) or underflows to 0/0. Subtract each row's "
                "maximum first; it cancels in the ratio.",
            ),
            (
                everywhere / _sum(everywhere, -1),
                "you subtracted the maximum of the whole array: a row far below it underflows "
                f"to 0/0. Subtract each row's own maximum, x.max({axis}=-1, {keep}).",
            ),
            (
                exp(x - _max(x, 0)) / _sum(exp(x - _max(x, 0)), -1),
                "you subtracted each column's maximum: the shift must be the same along a row, "
                f"x.max({axis}=-1, {keep}).",
            ),
            (
                softmax(x, axis=0),
                f"each column sums to 1: the softmax runs along each row ({axis}=-1), one row "
                "per query.",
            ),
            (
                everywhere / _sum(everywhere, None),
                "the whole array sums to 1: normalise each row on its own, "
                f".sum({axis}=-1, {keep}).",
            ),
            (shifted, "the exponentials are not normalised: divide each by its row's sum."),
            (
                shifted / _sum(shifted, 0),
                f"you divided by each column's sum ({axis}=0): each row must sum to 1, so "
                f"divide by .sum({axis}=-1, {keep}).",
            ),
        ]
        if x.shape[0] == x.shape[1]:  # without keepdims a square input broadcasts silently
            flat = exp(x - _max(x, -1, keep=False))
            no_keepdims = (
                f"without {keep}, the row maxima or sums (shape (n,)) line up with the "
                "columns instead of the rows."
            )
            mistakes += [
                (flat / _sum(flat, -1), no_keepdims),
                (flat / _sum(flat, -1, keep=False), no_keepdims),
                (exp(x) / _sum(exp(x), -1, keep=False), no_keepdims),
            ]
    return mistakes


def _max(x, axis, keep: bool = True):
    """The maximum along ``axis`` (None: of everything), the axis kept unless ``keep`` is off."""
    if axis is None:
        return x.max()
    return x.amax(dim=axis, keepdim=keep) if _torch(x) else x.max(axis=axis, keepdims=keep)


def _sum(x, axis, keep: bool = True):
    """The sum along ``axis`` (None: of everything), the axis kept unless ``keep`` is off."""
    if axis is None:
        return x.sum()
    return x.sum(dim=axis, keepdim=keep) if _torch(x) else x.sum(axis=axis, keepdims=keep)


# Layer norm -----------------------------------------------------------------------------------


def layer_norm_mistakes(x, gamma, beta, eps: float = 1e-5) -> list:
    """Every typical slip of LayerNorm(x) = γ·(x - μ)/√(σ² + ε) + β over the last axis.

    The eps argument ignored (1e-5 used when ``eps`` is another), the unbiased variance,
    ε missing or outside the square root, the variance for the standard deviation, the mean
    not subtracted, no division at all, γ and β ignored, swapped or one of them forgotten,
    and statistics over another axis or over the whole of ``x``.
    """
    mean, var = _stats(x, -1)
    plain = (x - mean) / _sqrt(var + eps)
    mistakes = []
    if eps != 1e-5:
        mistakes.append(
            (
                layer_norm(x, gamma, beta, 1e-5),
                _say(
                    x,
                    "the eps argument was ignored: use the eps passed in.",
                    f"you used ε = 1e-5 when called with eps = {eps}: use the eps argument.",
                ),
            )
        )
    with np.errstate(all="ignore"):  # without ε a constant row gives 0/0, on purpose
        mistakes += [
            (
                gamma * (x - mean) / _sqrt(_stats(x, -1, ddof=1)[1] + eps) + beta,
                _say(
                    x,
                    "this uses the unbiased variance (dividing by n - 1, torch.var's default): "
                    "LayerNorm uses the population variance, unbiased=False.",
                    "that is the unbiased variance (ddof=1, divide by n - 1); layer norm uses "
                    "the population variance, np.var's default (divide by n).",
                ),
            ),
            (
                gamma * (x - mean) / _sqrt(var) + beta,
                _say(
                    x,
                    "ε is missing: divide by √(σ² + ε), which also keeps a constant row from "
                    "giving 0/0.",
                    "without ε, a constant row has variance 0 and gives 0/0 = NaN: divide by "
                    "√(σ² + ε).",
                ),
            ),
            (
                gamma * (x - mean) / (_sqrt(var) + eps) + beta,
                _say(
                    x,
                    "ε is added outside the square root: divide by √(σ² + ε), not by σ + ε.",
                    "ε belongs inside the square root: (x - μ) / √(σ² + ε).",
                ),
            ),
            (
                gamma * (x - mean) / (var + eps) + beta,
                _say(
                    x,
                    "this divides by the variance; divide by the standard deviation √(σ² + ε).",
                    "you divided by the variance; divide by its square root, the standard "
                    "deviation √(σ² + ε).",
                ),
            ),
            (
                gamma * x / _sqrt(var + eps) + beta,
                "the mean was not subtracted: (x - μ) / √(σ² + ε).",
            ),
            (
                gamma * (x - mean) + beta,
                "the rows are centred but not scaled: divide by √(σ² + ε).",
            ),
            (
                plain,
                _say(
                    x,
                    "γ and β were ignored: multiply by gamma, then add beta.",
                    "gamma and beta are ignored: return gamma * x̂ + beta.",
                ),
            ),
            (gamma * plain, "β was ignored: add beta after scaling by gamma."),
            (plain + beta, "γ was ignored: multiply by gamma before adding beta."),
            (
                beta * plain + gamma,
                _say(
                    x,
                    "γ and β are swapped: gamma scales, beta shifts.",
                    "gamma and beta are swapped: gamma scales, beta shifts, γ·x̂ + β.",
                ),
            ),
        ]
        mistakes += _axis_mistakes(x, gamma, beta, eps)
    return mistakes


def _axis_mistakes(x, gamma, beta, eps) -> list:
    """LayerNorm's statistics over an axis other than the last, or over everything."""

    def over(axis):
        mean, var = _stats(x, axis)
        return gamma * (x - mean) / _sqrt(var + eps) + beta

    if x.ndim < 2:  # one vector: no other axis to get wrong
        return []
    if not _torch(x):
        return [
            (
                over(0),
                "each column was normalised (axis=0): layer norm normalises each position's "
                "vector, along the last axis (axis=-1, keepdims=True).",
            ),
            (
                over(None),
                "you used the mean and variance of the whole array: each row (position) gets "
                "its own, axis=-1.",
            ),
        ]
    batch = (
        over(0),
        "the statistics are over the batch axis (axis 0), as batch norm does; LayerNorm "
        "normalises each position over its own features, the last axis.",
    )
    sequence = (
        over(-2),
        "the statistics are over the sequence axis; LayerNorm normalises each position over "
        "its features, the last axis (dim=-1).",
    )
    whole = (
        over(None),
        "one mean and variance for the whole tensor: each position needs its own, over the "
        "last axis with keepdim=True.",
    )
    return [batch, sequence, whole] if x.ndim > 2 else [batch, whole]


# Positional encoding --------------------------------------------------------------------------


def positional_mistakes(pos, d_model: int) -> list:
    """Every typical slip of the sinusoidal table :func:`positional_table` for the positions
    ``pos``, a column (T, 1) of floats from 0.

    sin and cos swapped or in two halves, the exponent i/d_model or one per column (j/d_model,
    2j/d_model), the positions from 1, the base 1000, pos multiplied by 10000^(2i/d_model)
    instead of divided, the angles in degrees, and sines in every column.
    """
    sin, cos = (torch.sin, torch.cos) if _torch(pos) else (np.sin, np.cos)
    cat = torch.cat if _torch(pos) else np.concatenate
    i, j = _index(pos, d_model // 2), _index(pos, d_model)  # pairs, and columns
    power = 2 * i / d_model
    angle = pos / 10000.0**power
    trig = _say(pos, "torch.sin and torch.cos", "np.sin and np.cos")

    def per_column(exponent):  # every column its own exponent, still sin, cos, sin, ...
        own = pos / 10000.0**exponent
        return _interleave(sin(own[..., 0::2]), cos(own[..., 1::2]))

    return [
        (
            _interleave(cos(angle), sin(angle)),
            _say(
                pos,
                "sin and cos are swapped: even dimensions 2i hold sin, odd ones 2i+1 hold cos.",
                "sin and cos are swapped: sin goes in the even columns (0, 2, ...), cos in the "
                "odd ones, so row 0 is [0, 1, 0, 1, ...].",
            ),
        ),
        (
            cat([sin(angle), cos(angle)], -1),
            _say(
                pos,
                "the table is [all sines | all cosines] in two halves; the paper interleaves "
                "them: column 2i is sin, column 2i+1 is cos of the same angle (pe[:, 0::2] = "
                "..., pe[:, 1::2] = ...).",
                "the sines fill the first half and the cosines the second; the paper "
                "interleaves them: sin in column 2i, cos in column 2i+1.",
            ),
        ),
        (
            _sin_cos(pos / 10000.0 ** (i / d_model)),
            _say(
                pos,
                "the exponent is i/d_model where the formula has 2i/d_model (i counts the "
                "(sin, cos) pairs): torch.arange(0, d_model, 2) / d_model gives 2i/d_model.",
                "the exponent is i/d_model; the paper's is 2i/d_model (i counts pairs), so the "
                "wavelengths run from 2π up to 10000·2π.",
            ),
        ),
        (
            per_column(j / d_model),
            _say(
                pos,
                "each column used its own index in the exponent: a cos column must share the "
                "frequency of the sin column before it (exponent 2i/d_model for both columns "
                "2i and 2i+1).",
                "each column got its own exponent j/d_model: a (sin, cos) pair shares one "
                "angle, so column 2i+1 uses the exponent 2i/d_model of column 2i.",
            ),
        ),
        (
            per_column(2 * j / d_model),
            "the exponent uses the column index: in 2i/d_model, i counts (sin, cos) pairs, not "
            "columns.",
        ),
        (
            positional_table(pos + 1, d_model),
            _say(
                pos,
                "the positions start at 1: the first row is position 0, so PE(0) = "
                "[0, 1, 0, 1, ...]. Use torch.arange(max_len).",
                "the positions start at 1; they start at 0, so row 0 is [0, 1, 0, 1, ...].",
            ),
        ),
        (
            _sin_cos(pos / 1000.0**power),
            "the base is 1000; the paper uses 10000 (wavelengths from 2π up to 10000·2π).",
        ),
        (
            _sin_cos(pos * 10000.0**power),
            _say(
                pos,
                "the angle is pos · 10000^(2i/d_model); it should be pos / 10000^(2i/d_model) "
                "(a negative exponent in the exp form: exp(-2i·ln(10000)/d_model)).",
                "you multiplied pos by 10000^(2i/d_model); divide by it, so that the "
                "frequencies fall along the row.",
            ),
        ),
        (
            _sin_cos(angle * math.pi / 180),
            f"the angles were taken in degrees; {trig} work in radians: don't convert "
            "pos / 10000^(2i/d_model).",
        ),
        (
            _interleave(sin(angle), sin(angle)),
            "every column is a sine: the odd columns 2i+1 hold cos.",
        ),
    ]


# Add & Norm, post-norm ------------------------------------------------------------------------


def add_and_norm_mistakes(x, sublayer_out, norm) -> list:
    """Every typical slip of the paper's post-norm Add & Norm, ``norm(x + sublayer_out)``
    (§3.1), where ``norm`` is the LayerNorm to use (a function, with its own γ and β).

    The residual or the sub-layer's output left out, the sum not normalised, and the norm
    applied to one of the two terms before adding the other.
    """
    s = sublayer_out
    return [
        (
            norm(s),
            _say(
                x,
                "the residual path is missing: add x to the sub-layer's output before the norm.",
                "the residual is missing: normalise x + sublayer_out, not sublayer_out alone.",
            ),
        ),
        (
            norm(x),
            _say(
                x,
                "sublayer(x) was left out: norm(x + sublayer(x)).",
                "sublayer_out was left out: LayerNorm(x + sublayer_out).",
            ),
        ),
        (
            x + s,
            _say(
                x,
                "there is no norm: the sum x + sublayer(x) was returned as it is.",
                "the sum is not normalised: LayerNorm(x + sublayer_out).",
            ),
        ),
        (
            x + norm(s),
            _say(
                x,
                "the residual is added after the norm: post-norm adds first, then normalises: "
                "norm(x + sublayer(x)).",
                "you normalised the sub-layer's output and then added x; post-norm adds first, "
                "then normalises: LayerNorm(x + sublayer_out).",
            ),
        ),
        (
            norm(x) + s,
            _say(
                x,
                "the norm was applied to x alone: normalise the sum, norm(x + sublayer(x)).",
                "you normalised x and then added sublayer_out; post-norm adds first: "
                "LayerNorm(x + sublayer_out).",
            ),
        ),
    ]


# What a function returns: its type and shape --------------------------------------------------


def tensor_pair(function: str, result, during: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The pair ``(output, weights)`` that the learner's ``function`` returned, as float64
    tensors. Each must be a torch tensor: the course's functions return what they compute
    with (lesson 1's answer policy)."""
    if isinstance(result, (tuple, list)) and len(result) == 2:
        for name, x in zip(("output", "weights"), result, strict=True):
            if not isinstance(x, torch.Tensor):
                raise Mismatch(
                    f"{during}, the {name} is a {type(x).__name__}: {function} returns torch "
                    "tensors, the pair (output, weights) (no .numpy() or .tolist()).",
                    TYPE,
                )
        return as_tensor("output", result[0]), as_tensor("weights", result[1])
    got = (
        f"a tensor of shape {tuple(result.shape)}"
        if isinstance(result, torch.Tensor)
        else type(result).__name__
    )
    raise Mismatch(
        f"{function} should return a pair (output, weights); {during} it returned {got}.", TYPE
    )


def array_pair(result, during: str) -> tuple[np.ndarray, np.ndarray]:
    """The pair ``(output, weights)`` that a numpy function returned, each checked as by
    :func:`expect_array`."""
    if isinstance(result, (tuple, list)) and len(result) == 2:
        output, weights = result
        return expect_array("output", output, during), expect_array("weights", weights, during)
    what = (
        f"an array of shape {result.shape}" if hasattr(result, "shape") else type(result).__name__
    )
    raise Mismatch(
        f"{during}, return a pair (output, weights); your function returned {what}.", TYPE
    )


def expect_array(name: str, x, during: str) -> np.ndarray:
    """``x`` if it is a numpy array of floats; torch tensors, lists and integers are refused."""
    if isinstance(x, torch.Tensor):
        raise Mismatch(
            f"{during}, `{name}` is a torch tensor: this project is numpy only. "
            "Use np.exp, np.sqrt, x.mean(axis=...) and return a numpy array.",
            TYPE,
        )
    if not isinstance(x, np.ndarray):
        raise Mismatch(f"{during}, `{name}` should be a numpy array; got {type(x).__name__}.", TYPE)
    if x.dtype.kind in "biu":
        raise Mismatch(
            f"{during}, `{name}` has dtype {x.dtype}: values written into an integer array "
            "are truncated. Create it as floats, e.g. np.zeros((n, m)).",
            MISTAKE,
        )
    return x


def expect_returned(name: str, value):
    """``value`` unless it is None, what a function without ``return`` gives back."""
    if value is None:
        raise Mismatch(f"`{name}` returned None: end it with `return ...`.", MISTAKE)
    return value


def expect_tensor(name: str, x) -> torch.Tensor:
    """``x`` if it is a torch tensor: a numpy array, a list or None is refused."""
    if not isinstance(x, torch.Tensor):
        raise Mismatch(f"{name} should return a torch.Tensor; got {type(x).__name__}", TYPE)
    return x


def expect_mask(name: str, x) -> torch.Tensor:
    """``x`` if it is a boolean torch tensor, the course's masks (True = may attend)."""
    if expect_tensor(name, x).dtype != torch.bool:
        raise Mismatch(
            f"{name} should return a boolean tensor (True = may attend); got dtype {x.dtype}. "
            "Use dtype=torch.bool, or compare: `... == 1`.",
            TYPE,
        )
    return x


def shape_mistake(got: tuple[int, ...], expected: tuple[int, ...]) -> str | None:
    """What a wrong shape most likely means: transposed, or a batch axis added or missing."""
    got, expected = tuple(got), tuple(expected)
    if len(got) == 2 and got == expected[::-1] != expected:
        return "transposed?"
    if got == (1, *expected):
        return "drop the leading batch axis of size 1."
    if len(expected) > 1 and got == expected[1:]:
        return f"the leading batch axis, of size {expected[0]}, is missing."
    return None


# One number, a softmax's result, a crash on shapes --------------------------------------------


def match_number(got: float, wrong, *, abs_tol: float = 0.0, rel_tol: float = 0.0) -> str | None:
    """The message of the first typical mistake ``(value, message)`` that the number ``got``
    reproduces within the tolerances (as :func:`math.isclose`), else None."""
    return next(
        (m for value, m in wrong if math.isclose(got, value, rel_tol=rel_tol, abs_tol=abs_tol)),
        None,
    )


def softmax_confusions(scores) -> list:
    """What the softmax of ``scores`` (over the last axis) is mistaken for: the
    log-probabilities, the scores themselves, the exponentials not yet divided by their sum."""
    exp, log = (torch.exp, torch.log) if _torch(scores) else (np.exp, np.log)
    shifted = scores - _max(scores, -1)
    with np.errstate(all="ignore"):
        return [
            (
                shifted - log(_sum(exp(shifted), -1)),
                _say(
                    scores,
                    "these are log-probabilities (log_softmax); the weights are softmax(dim=-1).",
                    "these are log-probabilities (the log of the softmax); the weights are the "
                    "softmax itself, over axis=-1.",
                ),
            ),
            (scores, "these are the scores themselves; the weights are their softmax."),
            (exp(scores), "these are e^s, not yet divided by their sum."),
        ]


def keepdims_tip(error: Exception) -> str | None:
    """A tip for ``call(..., tip=keepdims_tip)``: shapes that do not broadcast most often come
    from a row statistic computed without keepdims (numpy) or keepdim (torch)."""
    if "could not be broadcast" in str(error):  # numpy's words
        keep = "keepdims=True"
    elif "must match the size of tensor" in str(error):  # torch's
        keep = "keepdim=True"
    else:
        return None
    return (
        f"Tip: {keep} keeps the reduced axis, so row means, maxima and sums line up with the "
        "rows they came from."
    )


# What a function takes ------------------------------------------------------------------------


def expect_parameters(fn, message: str, *args, **kwargs) -> None:
    """A Mismatch saying ``message`` unless the learner's function ``fn`` accepts ``args`` and
    ``kwargs``: a parameter the exercise asks for (``eps``, ``bias``, ``mask``) is missing.

    Call it before running ``fn``, so that a missing parameter is named rather than reported
    as a crash; anything that is not a function is left to ``_core.call`` to refuse.
    """
    import inspect  # only this function reads signatures

    if not callable(fn):
        return
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):  # no such parameter, or no signature to read
        raise Mismatch(message, MISTAKE) from None


# Counts ---------------------------------------------------------------------------------------


def expect_count(
    got: int, right: int, miscounts: dict[int, str], said: str, otherwise: str | None = None
) -> None:
    """A Mismatch unless the count ``got`` is ``right``, saying ``"{said} {got:,}: {why}"``.

    ``why`` is the message of the typical miscount that gives ``got`` (``miscounts`` maps a
    count to its message), else ``otherwise``, by default the count expected. ``said`` names
    the answer, e.g. ``"`total_weights` ="`` or ``"for d_model = 64 your function gives"``.
    """
    if got != right:
        why = miscounts.get(got)
        kind = MISTAKE if why else DIFFERENCE
        raise Mismatch(f"{said} {got:,}: {why or otherwise or f'expected {right:,}.'}", kind)


# Layer norm: more slips, and which part of the formula is off (lessons 6 and 8) --------------


def layer_norm_slips(x, gamma, beta, eps: float = 1e-5) -> list:
    """Slips of LayerNorm(x) = γ·(x - μ)/√(σ² + ε) + β that :func:`layer_norm_mistakes` does
    not list: the sum for the mean, the standard deviation under the root, (μ - x), β
    subtracted, a division by γ, ε subtracted, and the mean and the variance over different
    axes. Try them after :func:`layer_norm_mistakes`."""
    mean, var = _stats(x, -1)
    centred, root = x - mean, _sqrt(var + eps)
    keep = _say(x, "dim=-1, keepdim=True", "axis=-1, keepdims=True")
    total = _sum(x, -1)
    upside_down = "the fraction is upside down: γ·(x - μ)/√(σ² + ε) + β."
    with np.errstate(all="ignore"):  # ε subtracted: a negative root; 1/(x - μ): 1/0
        mistakes = [
            (
                gamma * (x - total) / root + beta,
                f"you subtracted the sum of each row; subtract its mean, x.mean({keep}).",
            ),
            (
                gamma * centred / _sqrt(_sqrt(var) + eps) + beta,
                "the square root is taken of the standard deviation, √(σ + ε): put the variance "
                f"σ² = x.var({keep}) under the root.",
            ),
            (
                gamma * -centred / root + beta,
                "the sign is flipped: the formula has (x - μ), not (μ - x).",
            ),
            (gamma * centred / root - beta, "β is subtracted: add it, γ·x̂ + β."),
            (centred / root / gamma + beta, "you divided by γ; multiply by it, γ·x̂ + β."),
            (
                gamma * centred / _sqrt(var - eps) + beta,
                "ε is subtracted under the root: divide by √(σ² + ε).",
            ),
            (gamma / root + beta, "the numerator (x - μ) is missing: γ·(x - μ)/√(σ² + ε) + β."),
            (root / (gamma * centred) + beta, upside_down),
            (gamma / centred / root + beta, upside_down),
        ]
    for axis in range(x.ndim - 1):  # the mean and the variance over different axes
        other_mean, other_var = _stats(x, axis)
        mistakes += [
            (
                gamma * (x - other_mean) / root + beta,
                f"the mean is taken over axis {axis}, the variance over the last one: both go "
                f"over the last axis ({keep}).",
            ),
            (
                gamma * centred / _sqrt(other_var + eps) + beta,
                f"the variance is taken over axis {axis}, the mean over the last one: both go "
                f"over the last axis ({keep}).",
            ),
        ]
    return mistakes


def layer_norm_part_off(got, x, gamma, beta, eps: float = 1e-5) -> str | None:
    """Which part of γ·(x - μ)/√(σ² + ε) + β a wrong result ``got`` gets wrong, when it
    matches no typical slip: the centring (x - μ), the division by √(σ² + ε), or γ and β.

    Each part is tested on its own, the others taken as right: if only the division is off,
    every row of (got - β)/γ is (x - μ) times one number, and so on. None if more than one
    part is off, or if ``got`` has NaN or another shape.
    """
    got, x, gamma, beta = (as_tensor("x", a).numpy() for a in (got, x, gamma, beta))
    if got.shape != x.shape or not np.isfinite(got).all() or (np.abs(gamma) < 1e-9).any():
        return None
    gamma, beta = np.broadcast_to(gamma, x.shape), np.broadcast_to(beta, x.shape)
    mean = x.mean(axis=-1, keepdims=True)
    root = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    centred, z = x - mean, (got - beta) / gamma  # z should be (x - μ)/√(σ² + ε)
    shift = got - (gamma * centred / root + beta)
    if np.ptp(shift) <= 1e-9 * max(1.0, np.abs(shift).max()):
        return (
            f"your output is {shift.flat[0]:+.4g} off at every entry, the same shift "
            "everywhere: β, or the mean μ subtracted, is off."
        )
    rows = [i for i in np.ndindex(x.shape[:-1]) if np.ptp(centred[i]) > 1e-6]

    def row(i) -> str:  # "row 2", "position (0, 2)", or "x" for one vector
        return "x" if not i else f"row {i[0]}" if len(i) == 1 else f"position {i}"

    def per_row(values, i) -> float | None:  # one number for the whole row i, or None
        v = values[i]
        return float(v.mean()) if np.ptp(v) <= 1e-6 * max(1.0, np.abs(v).max()) else None

    with np.errstate(all="ignore"):
        divisors = {i: per_row(centred / z, i) for i in rows}
    if rows and None not in divisors.values():
        i = next((i for i in rows if abs(divisors[i] - root[i].item()) > 1e-6), rows[0])
        want, have = digits(root[i].item(), divisors[i])
        return (
            f"the centring and γ, β are right, but the division is off: you divide {row(i)} "
            f"by {have} where √(σ² + ε) = {want}, with σ² the population variance over the "
            "last axis."
        )
    subtracted = {i: per_row(x - z * root, i) for i in np.ndindex(x.shape[:-1])}
    if None not in subtracted.values():
        off = [i for i in subtracted if abs(subtracted[i] - mean[i].item()) > 1e-6]
        i = (off or list(subtracted))[0]
        want, have = digits(mean[i].item(), subtracted[i])
        return (
            f"the division and γ, β are right, but the centring is off: you subtract {have} "
            f"from {row(i)} where its mean μ over the last axis is {want}."
        )
    hat = (centred / root).reshape(-1, x.shape[-1])  # x̂, one row per position
    flat = got.reshape(-1, x.shape[-1])
    if hat.shape[0] >= 3:  # enough rows to fit one scale and one shift per feature
        for j in range(x.shape[-1]):
            design = np.stack([hat[:, j], np.ones(hat.shape[0])], axis=-1)
            fitted = np.linalg.lstsq(design, flat[:, j], rcond=None)[0]
            if not np.allclose(design @ fitted, flat[:, j], atol=1e-6):
                return None
        return (
            "each row is normalised right, (x - μ)/√(σ² + ε), but γ and β are not applied as "
            "γ·x̂ + β, one scale and one shift per feature (the last axis)."
        )
    return None


# Counts written as a formula: which term or factor is off (lesson 7) -------------------------


def count_slip(got: float, groups, sizes: dict[str, int] | None = None) -> str | None:
    """Which one slip turns the count written by ``groups`` into ``got``, in its words; else None.

    ``groups`` are ``(label, terms)``, a term ``(label, factors)`` and a factor ``(name,
    value)``; the count is the sum of every term's product, e.g. ``[("the FFN", [("W_1",
    [("d_model", 512), ("d_ff", 2048)]), ...]), ...]``. ``sizes`` are the named sizes a factor
    may be mistaken for, e.g. ``{"d_k": 64, "d_ff": 2048}``. Tried in order: a group or a
    term left out, subtracted or counted several times; then in one term, factors left out
    or divided by, one factor replaced by another size, or off by one (a typo).
    """
    terms = [term for _, group in groups for term in group]
    total = sum(_product(factors) for _, factors in terms)

    def near(x: float) -> bool:
        return math.isclose(got, x, rel_tol=1e-9, abs_tol=0.5)

    def as_written(label: str, factors: list) -> str:
        return f"{label} = {' × '.join(f'{v:,}' for _, v in factors)}"

    parts = [(sum(_product(f) for _, f in group), label) for label, group in groups]
    parts = (parts if len(groups) > 1 else []) + [(_product(t[1]), as_written(*t)) for t in terms]
    for value, written in parts:
        if len(terms) > 1 and near(total - value):
            return f"{written} is missing."
        if near(total - 2 * value):
            return f"{written} is subtracted instead of added."
        for times in (2, 3, 4, 6, 8):
            if near(total + (times - 1) * value):
                return f"{written} is counted {times} times."
    for label, factors in terms:
        value, written = _product(factors), as_written(label, factors)
        rest = total - value
        for subset in _subsets(len(factors)):
            left = _product(factors[i] for i in subset)
            names = " and ".join(f"{factors[i][0]} ({factors[i][1]:,})" for i in subset)
            if near(rest + value / left):
                return f"{written} lacks {names}."
            if near(rest + value / left**2):
                return f"{written} divides by {names} instead of multiplying."
        for name, v in factors:
            for other, w in (sizes or {}).items():
                if other != name and w != v and near(rest + value / v * w):
                    return f"in {written}, you have {other} = {w:,} where {name} ({v:,}) belongs."
            for typo in (v - 1, v + 1):
                if near(rest + value / v * typo):
                    return f"in {written}, you have {typo:,} for {name} ({v:,})."
    return None


def _product(factors) -> float:
    return math.prod(v for _, v in factors)


def _subsets(n: int) -> list[tuple[int, ...]]:
    """The non-empty proper subsets of range(n), smallest first."""
    import itertools  # only count_slip needs it

    return [s for k in range(1, n) for s in itertools.combinations(range(n), k)] or [(0,)]
