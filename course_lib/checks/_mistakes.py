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
(:func:`stable_softmax_mistakes`), the positional encoding table (:func:`positional_mistakes`,
:func:`row_zero_off`), the type and shape of what a function returns (:func:`tensor_pair`,
:func:`array_pair`, :func:`expect_returned`, :func:`expect_tensor`, :func:`expect_array`,
:func:`expect_mask`), a function judged on several inputs (:func:`judge_each`), one number
(:func:`match_number`), what a softmax's result is mistaken for (:func:`softmax_confusions`),
a crash on shapes (:func:`keepdims_tip`), what a function takes (:func:`expect_parameters`)
and counts (:func:`expect_count`, :func:`count_slip`). The
reference computations they build on (:func:`softmax`, :func:`masked`, :func:`attend`,
:func:`layer_norm`, :func:`positional_table`) are here too. Layer norm and Add & Norm have
their own module, :mod:`._norms`.
"""

import math

import numpy as np
import torch

from ._core import DIFFERENCE, MISTAKE, TYPE, Mismatch
from ._tensors import as_tensor, diagnose, fmt

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
        (attend(scores, mask), "the scores are not scaled: divide QKᵀ by √d_k "
         f"(here √{d_k} ≈ {root:.2f}) before the softmax."),
        (attend(scores / d_k, mask),
         f"you divided by d_k = {d_k}; divide by its square root, √d_k ≈ {root:.2f}."),
        (attend(scores * root, mask), "you multiplied by √d_k; divide by it."),
        *softmax_mistakes(scores / root, mask),
    ]  # fmt: skip
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
        (attend(scaled, mask, axis=-2), _say(scaled,
         "the weights don't sum to 1 over the last axis (each column sums to 1 instead): "
         "softmax over dim=-1, the keys.",
         "each column of weights sums to 1: softmax over the keys, axis=-1 (one row per query).")),
        (scaled, _say(scaled,
         "these are the scaled scores: the softmax (over dim=-1) turns them into weights.",
         "these are the scaled scores: the softmax turns them into weights.")),
    ]  # fmt: skip
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
        (softmax(scaled), "the mask had no effect: fill the scores where the mask is False "
         f"with {minus_inf} before the softmax."),
        (attend(scaled, ~mask), inverted),
        (attend(scaled, ~mask, fill=-1e9), inverted),
        (softmax(scaled) * mask, "rows don't sum to 1: the mask was applied after the "
         "softmax. Mask the scores first, then take the softmax."),
        (attend(scaled, mask, fill=0.0), "masked scores were set to 0, but e⁰ = 1 still gets "
         f"weight: fill them with {minus_inf}."),
    ]  # fmt: skip


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
        by_column = exp(x - _max(x, 0))
        mistakes = [
            (exp(x) / _sum(exp(x), -1), f"not stable: for large inputs "
             f"{_say(x, 'torch.exp', 'np.exp')} overflows (e^1000 = inf, and inf/inf = NaN) or "
             "underflows to 0/0. Subtract each row's maximum first; it cancels in the ratio."),
            (everywhere / _sum(everywhere, -1), "you subtracted the maximum of the whole array: "
             "a row far below it underflows to 0/0. Subtract each row's own maximum, "
             f"x.max({axis}=-1, {keep})."),
            (by_column / _sum(by_column, -1), "you subtracted each column's maximum: the shift "
             f"must be the same along a row, x.max({axis}=-1, {keep})."),
            (softmax(x, axis=0), f"each column sums to 1: the softmax runs along each row "
             f"({axis}=-1), one row per query."),
            (everywhere / _sum(everywhere, None), "the whole array sums to 1: normalise each "
             f"row on its own, .sum({axis}=-1, {keep})."),
            (shifted, "the exponentials are not normalised: divide each by its row's sum."),
            (shifted / _sum(shifted, 0), f"you divided by each column's sum ({axis}=0): each "
             f"row must sum to 1, so divide by .sum({axis}=-1, {keep})."),
        ]  # fmt: skip
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
    angle = pos / 10000.0 ** (2 * i / d_model)

    def per_column(exponent):  # every column its own exponent, still sin, cos, sin, ...
        own = pos / 10000.0**exponent
        return _interleave(sin(own[..., 0::2]), cos(own[..., 1::2]))

    return [
        (_interleave(cos(angle), sin(angle)), _say(pos,
         "sin and cos are swapped: even dimensions 2i hold sin, odd ones 2i+1 hold cos.",
         "sin and cos are swapped: sin goes in the even columns (0, 2, ...), cos in the odd "
         "ones, so row 0 is [0, 1, 0, 1, ...].")),
        (cat([sin(angle), cos(angle)], -1), _say(pos,
         "the table is [all sines | all cosines] in two halves; the paper interleaves them: "
         "column 2i is sin, column 2i+1 is cos of the same angle (pe[:, 0::2] = ..., "
         "pe[:, 1::2] = ...).",
         "the sines fill the first half and the cosines the second; the paper interleaves "
         "them: sin in column 2i, cos in column 2i+1.")),
        (_sin_cos(pos / 10000.0 ** (i / d_model)), _say(pos,
         "the exponent is i/d_model where the formula has 2i/d_model (i counts the (sin, cos) "
         "pairs): torch.arange(0, d_model, 2) / d_model gives 2i/d_model.",
         "the exponent is i/d_model; the paper's is 2i/d_model (i counts pairs), so the "
         "wavelengths run from 2π up to 10000·2π.")),
        (per_column(j / d_model), _say(pos,
         "each column used its own index in the exponent: a cos column must share the "
         "frequency of the sin column before it (exponent 2i/d_model for both columns 2i and "
         "2i+1).",
         "each column got its own exponent j/d_model: a (sin, cos) pair shares one angle, so "
         "column 2i+1 uses the exponent 2i/d_model of column 2i.")),
        (per_column(2 * j / d_model), "the exponent uses the column index: in 2i/d_model, i "
         "counts (sin, cos) pairs, not columns."),
        *_positional_slips(pos, d_model, angle),
    ]  # fmt: skip


def _positional_slips(pos, d_model: int, angle) -> list:
    """The positions from 1, the base 1000, pos multiplied by 10000^(2i/d_model), the angles
    in degrees, and sines in every column."""
    sin = torch.sin if _torch(pos) else np.sin
    power = 2 * _index(pos, d_model // 2) / d_model
    trig = _say(pos, "torch.sin and torch.cos", "np.sin and np.cos")
    return [
        (positional_table(pos + 1, d_model), _say(pos,
         "the positions start at 1: the first row is position 0, so PE(0) = [0, 1, 0, 1, ...]. "
         "Use torch.arange(max_len).",
         "the positions start at 1; they start at 0, so row 0 is [0, 1, 0, 1, ...].")),
        (_sin_cos(pos / 1000.0**power),
         "the base is 1000; the paper uses 10000 (wavelengths from 2π up to 10000·2π)."),
        (_sin_cos(pos * 10000.0**power), _say(pos,
         "the angle is pos · 10000^(2i/d_model); it should be pos / 10000^(2i/d_model) (a "
         "negative exponent in the exp form: exp(-2i·ln(10000)/d_model)).",
         "you multiplied pos by 10000^(2i/d_model); divide by it, so that the frequencies fall "
         "along the row.")),
        (_sin_cos(angle * math.pi / 180), f"the angles were taken in degrees; {trig} work in "
         "radians: don't convert pos / 10000^(2i/d_model)."),
        (_interleave(sin(angle), sin(angle)),
         "every column is a sine: the odd columns 2i+1 hold cos."),
    ]  # fmt: skip


def row_zero_off(got, d_model: int, atol: float = 1e-4) -> str | None:
    """What the row of position 0 of a positional table ``got`` (the right shape) is, when it
    is more than ``atol`` off [0, 1, 0, 1, ...] (sin 0, cos 0); else None. Lessons 5 and 8
    start their message on a table far off with it: a slip there is the first to fix."""
    got = as_tensor("pe", got)
    if torch.allclose(got[0], torch.arange(d_model).remainder(2).double(), atol=atol, rtol=0):
        return None
    return (
        f"the row of position 0 is {fmt(got[0, :6])}{' ...' if d_model > 6 else ''}; it should "
        "be [0, 1, 0, 1, ...]: sin 0 = 0 in the even columns, cos 0 = 1 in the odd ones"
    )


# Judging a function case by case -----------------------------------------------------------------


def judge_each(name: str, cases, run, reference, mistakes, explain=None, atol=1e-4) -> None:
    """Judge what the learner's function gives on each case ``(during, *args)``: ``run(during,
    *args)`` calls it and returns its answer, which ``diagnose`` compares with
    ``reference(*args)``, by the typical mistakes ``mistakes(*args)``, then by ``explain(got,
    *args)``, a sentence naming what is off (or None), then by where it is off."""
    for during, *args in cases:
        got = run(during, *args)
        why = explain and (lambda got, args=args: explain(got, *args))
        diagnose(name, got, reference(*args), mistakes(*args), atol, during=during, explain=why)


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
    """``x`` if it is a torch tensor: None (no ``return``), a numpy array or a list is refused."""
    if not isinstance(expect_returned(name, x), torch.Tensor):
        raise Mismatch(f"{name} should return a torch.Tensor; got {type(x).__name__}", TYPE)
    return x


def expect_mask(name: str, x) -> torch.Tensor:
    """``x`` if it is a boolean torch tensor, the course's masks (True = may attend); else how
    to make it one: a 0/1 mask compares with 1, an additive one (0 where a query may attend,
    -inf or -1e9 where not, PyTorch's other form) with 0."""
    if expect_tensor(name, x).dtype == torch.bool:
        return x
    values = set(x.unique().tolist()) if x.is_floating_point() else set()
    if 0.0 in values and len(values) > 1 and max(values) <= 0:
        raise Mismatch(
            f"{name} returned an additive float mask, 0 where a query may attend and "
            f"{min(values):g} where not (PyTorch's other form); this course's masks are boolean, "
            "True = may attend: compare `mask == 0` (or torch.isfinite(mask) for 0 / -inf).",
            TYPE,
        )
    raise Mismatch(
        f"{name} should return a boolean tensor (True = may attend); got dtype {x.dtype}. "
        "Use dtype=torch.bool, or compare a mask of 1s and 0s: `... == 1`.",
        TYPE,
    )


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
