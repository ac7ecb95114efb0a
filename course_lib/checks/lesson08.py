"""Checks for the project, a one-layer post-norm encoder in numpy (paper §3.1-§3.5).

Each check runs the learner's function on the project's own inputs ("the cat sat", seed 42)
and on extra inputs where the typical mistakes give different results: large logits for the
softmax, a non-square input with a constant row for layer norm, T_q != T_k and d_k != d_v for
attention, non-zero biases and LayerNorm parameters for the FFN and the full layer. A result
that reproduces a typical mistake gets that mistake's name; the shared ones (the positional
encoding, the softmax, the scaling, layer norm, Add & Norm, numpy types) come from
``_mistakes``. Every function must return numpy arrays and leave its inputs untouched.

When a function fails and calls another project function that does not pass its own check
yet (``encoder_layer`` calling ``softmax``, say), the message points at that one first.
"""

import functools

import numpy as np
import torch

from .. import numpy_encoder as ref
from ..interop import encoder_layers_from_numpy
from ._core import (
    DIFFERENCE,
    FAILED,
    MISTAKE,
    NOT_DONE,
    SHAPE,
    TYPE,
    Mismatch,
    NotDone,
    call,
    declared,
    exercise,
    multiple_choice,
)
from ._mistakes import (
    add_and_norm_mistakes,
    array_pair,
    expect_array,
    expect_parameters,
    keepdims_tip,
    layer_norm_mistakes,
    layer_norm_part_off,
    layer_norm_slips,
    output_mistakes,
    positional_mistakes,
    stable_softmax_mistakes,
    weight_mistakes,
)
from ._remote import closure_globals
from ._tensors import diagnose, fmt

_STATE = np.random.get_state()  # project_inputs seeds the global RNG: leave it as it was
PROJECT_EMBEDDINGS, PROJECT_PARAMS = ref.project_inputs()  # seed 42, "the cat sat"
np.random.set_state(_STATE)
PROJECT = ref.encoder_layer(PROJECT_EMBEDDINGS, PROJECT_PARAMS)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)  # the checks never touch the global numpy RNG


def _random_params(d_model: int, d_ff: int, seed: int) -> ref.EncoderParams:
    """Weights of any size, with non-zero biases and LayerNorm parameters."""
    g = _rng(seed)

    def w(n, m):
        return ref.xavier_normal(n, m, rng=g)

    def near(value, n):
        return value + 0.2 * g.standard_normal(n)

    d = d_model
    return ref.EncoderParams(
        *(w(d, d), w(d, d), w(d, d)),  # w_q, w_k, w_v
        *(w(d, d_ff), near(0.0, d_ff), w(d_ff, d), near(0.0, d)),  # w1, b1, w2, b2
        *(near(1.0, d), near(0.0, d), near(1.0, d), near(0.0, d)),  # gamma1, beta1, gamma2, beta2
    )


# Calling the learner's function and comparing its result ---------------------------------------


def _run(fn, *args, during: str):
    """The learner's ``fn(*args)``, on copies of the arguments; changing them in place fails."""
    return call(
        fn,
        *args,
        during=during,
        tip=keepdims_tip,
        in_place=f"{during}, your function changed its input in place (e.g. `x -= ...` or "
        "`x[...] = ...`): compute a new array instead (`x = x - ...`).",
    )


def _array(name: str, fn, *args, during: str) -> np.ndarray:
    """The numpy array of floats that the learner's ``fn(*args)`` returns."""
    return expect_array(name, _returned(_run(fn, *args, during=during), during), during)


def _returned(result, during: str):
    """``result``, unless it is the None of a function without ``return``."""
    if result is None:
        raise Mismatch(f"{during}, your function returned None: end it with `return ...`.", MISTAKE)
    return result


def _compare(name, got, expected, wrong, during, atol=1e-6) -> None:
    """``diagnose``, after a shape check that suspects a transposed result."""
    if got.shape != expected.shape:
        transposed = ": transposed?" if got.shape == expected.shape[::-1] else "."
        raise Mismatch(
            f"{during}, `{name}` should have shape {expected.shape}; got {got.shape}{transposed}",
            SHAPE,
        )
    negative = (-expected, f"`{name}` is the negative of the right result: a sign is flipped.")
    diagnose(name, got, expected, [*wrong, negative], atol=atol, during=during)


def _compare_layer_norm(name, got, expected, wrong, during, x, gamma, beta, eps) -> None:
    """``_compare`` for a layer norm of ``x``: when no typical mistake matches, which part of
    the formula is off (the centring, the division, γ and β) rather than only how far."""
    try:
        _compare(name, got, expected, wrong, during)
    except Mismatch as e:
        part = e.kind == DIFFERENCE and layer_norm_part_off(got, x, gamma, beta, eps)
        if part:
            raise Mismatch(f"{during}: {part}", MISTAKE) from None
        raise


def _attention(result, q, k, v, during, weights=(), outputs=(), d_model=None):
    """The pair (output, weights) returned for ``q``, ``k``, ``v``, if it is the reference's.

    ``weights`` and ``outputs`` are typical mistakes of the caller, tried before the shared
    ones; ``d_model``, the width of x, is one more wrong width to scale by.
    """
    out, got_weights = array_pair(_returned(result, during), during)
    scores, d_k = q @ k.T, q.shape[1]
    expected_w = ref.softmax(scores / np.sqrt(d_k))  # (T_q, T_k)
    expected_out = expected_w @ v  # (T_q, d_v)
    if out.shape == expected_w.shape != got_weights.shape == expected_out.shape:
        raise Mismatch(f"{during}, the pair came back swapped: return (output, weights).", MISTAKE)
    if got_weights.shape == expected_w.shape[::-1] != expected_w.shape:
        raise Mismatch(
            f"{during}, the weights have shape (T_k, T_q) = {got_weights.shape}: "
            "compute q @ k.T, not k @ q.T.",
            MISTAKE,
        )
    widths = (
        (v.shape[1], "d_v, the width of the values"),
        (k.shape[0], "the number of keys"),
        (q.shape[0], "the number of queries"),
        (d_model, "d_model, the width of x"),
        (8, "the project's D_MODEL, a fixed number"),
    )
    wrong = [*weights, *weight_mistakes(scores, d_k, scaled_by=widths)]
    _compare("weights", got_weights, expected_w, wrong, during)
    wrong = [*output_mistakes(scores / np.sqrt(d_k), v), *outputs]
    _compare("output", out, expected_out, wrong, during)
    return out, got_weights


def _quiet(verify):
    """Typical mistakes are computed on purpose (overflow, 0/0): keep their warnings quiet."""

    @functools.wraps(verify)
    def quiet(*answers):
        with np.errstate(all="ignore"):
            return verify(*answers)

    return quiet


# Project functions that a learner's function calls ---------------------------------------------

_PARTS = {  # each project function, by the exercise that checks it, in exercise order
    "encode_positions": "8.1",
    "softmax": "8.2",
    "scaled_dot_product_attention": "8.3",
    "self_attention": "8.4",
    "layer_norm": "8.5",
    "add_and_norm": "8.7",
    "feed_forward": "8.8",
}


def _blame_parts(verify):
    """``_quiet(verify)`` that first checks the project functions the answer calls: one that
    is not written yet, or fails its own check, is named before the answer is run."""

    @functools.wraps(verify)
    def checked(fn):
        _blame(_parts_used(fn))
        return _quiet(verify)(fn)

    return checked


def _parts_used(fn) -> dict[str, object]:
    """The project functions ``fn`` calls, directly or through one another, in exercise order."""
    found, todo = {}, [fn]
    while todo:
        names = closure_globals(todo.pop())
        for name, g in names.items():
            if name in _PARTS and name not in found and callable(g) and g is not fn:
                found[name] = g
                todo.append(g)
    return {name: found[name] for name in _PARTS if name in found}


def _blame(parts: dict[str, object]) -> None:
    """Raise for the ``parts`` (name -> function) not written yet, else for those that fail
    their own checks; a part that fails only because it calls another failing part is left
    out, so that each failing check is quoted once."""
    checks = {e.id: e for e in declared(__name__)}
    results = {name: checks[_PARTS[name]].run(part) for name, part in parts.items()}
    unfinished = [f"`{n}` ({r.exercise})" for n, r in results.items() if r.status == NOT_DONE]
    if unfinished:
        those = "that exercise" if len(unfinished) == 1 else "those exercises"
        raise NotDone(
            f"your function calls {' and '.join(unfinished)}, not written yet: "
            f"finish {those} first."
        ) from None
    failing = {n: r for n, r in results.items() if r.status == FAILED}
    roots = [
        (n, r) for n, r in failing.items() if not set(_parts_used(parts[n])) & set(failing)
    ] or list(failing.items())
    if roots:
        names = " and ".join(f"`{n}` (check {r.exercise})" for n, r in roots)
        said = " ".join(f"Check {r.exercise} says: {r.message}" for _, r in roots)
        does, it = ("does", "it") if len(roots) == 1 else ("do", "them")
        raise Mismatch(
            f"your function calls {names}, which {does} not pass yet: fix {it} first. {said}",
            MISTAKE,
        ) from None


# 8.1 Positional encoding -----------------------------------------------------------------------


@exercise("8.1", "Positional encoding")
@_quiet
def positions(encode_positions) -> str:
    """Build every angle at once: a column of positions, shape (seq_len, 1), against a row of
    the even indices 2i, shape (1, d_model/2), broadcast to (seq_len, d_model/2).

    angle = pos / 10000 ** (2i / d_model); fill pe[:, 0::2] with np.sin(angle) and
    pe[:, 1::2] with np.cos(angle).
    """
    for T, D in ((3, 8), (50, 16)):
        during = f"for seq_len = {T}, d_model = {D}"
        result = call(encode_positions, T, D, during=during, tip=_table_tip)
        got = expect_array("pe", _returned(result, during), during)
        pos = np.arange(T, dtype=np.float64)[:, None]
        wrong = positional_mistakes(pos, D) + _positional_slips(pos, D)
        try:
            _compare("pe", got, ref.positional_encoding(T, D), wrong, during)
        except Mismatch as e:
            if e.kind == DIFFERENCE and not np.isfinite(got).all():
                raise Mismatch(
                    f"{during}, `pe` contains NaN or inf: a division by zero? pos is 0 in the "
                    "first row and 2i is 0 in the first pair; the angle is "
                    "pos / 10000 ** (2i / d_model).",
                    MISTAKE,
                ) from None
            raise
    row1 = ref.positional_encoding(3, 8)[1]
    return f"row 0 is [0, 1, 0, 1, 0, 1, 0, 1] and position 1 is {fmt(row1)}, at any size."


def _positional_slips(pos, d_model: int) -> list:
    """Slips of the table beyond the shared ones: a half of the columns left at 0, cos in
    every column, an angle without its frequencies or its exponent cut short."""
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None]
    angle = pos / 10000 ** (two_i / d_model)

    def table(even, odd):
        pe = np.zeros((pos.shape[0], d_model))
        pe[:, 0::2], pe[:, 1::2] = even, odd
        return pe

    def sin_cos(a):
        return table(np.sin(a), np.cos(a))

    return [
        (table(0.0, np.cos(angle)), "the even columns are still 0: pe[:, 0::2] = np.sin(angle)."),
        (table(np.sin(angle), 0.0), "the odd columns are still 0: pe[:, 1::2] = np.cos(angle)."),
        (
            table(np.cos(angle), np.cos(angle)),
            "every column is a cosine: the even columns hold np.sin(angle).",
        ),
        (
            sin_cos(pos + 0 * two_i),
            "the angle is pos itself in every column: divide it by 10000 ** (2i / d_model), "
            "one frequency per (sin, cos) pair.",
        ),
        (
            sin_cos(pos / 10000 + 0 * two_i),
            "the angle is pos / 10000 in every column: the exponent is missing, "
            "pos / 10000 ** (2i / d_model).",
        ),
        (
            sin_cos(pos / 10000**two_i),
            "the exponent is 2i; divide it by d_model: pos / 10000 ** (2i / d_model).",
        ),
        (
            sin_cos(pos / 10000 ** ((two_i + 1) / d_model)),
            "the exponent uses the odd numbers 2i + 1: np.arange(0, d_model, 2) gives "
            "2i = 0, 2, 4, ...",
        ),
    ]


def _table_tip(error: Exception) -> str | None:
    """A tip for a crash while filling the table: the angles are not (seq_len, d_model/2)."""
    if "could not broadcast input array" in str(error):
        return (
            "The angles must have the shape of half the table, (seq_len, d_model/2), to fill "
            "pe[:, 0::2] and pe[:, 1::2]: a column of positions np.arange(seq_len)[:, None] "
            "over a row of 2i = np.arange(0, d_model, 2)."
        )
    return keepdims_tip(error)


# 8.2 Softmax -----------------------------------------------------------------------------------

SOFTMAX_CASES = [
    ("on the project's scaled scores (3, 3)", PROJECT.scores),
    ("on a (2, 5) input", _rng(2).normal(size=(2, 5))),
    (
        "on large inputs [[1000, 1001, 1002, 1003], [-1000, -1003, -1001, -1002]]",
        np.array([[1000.0, 1001, 1002, 1003], [-1000.0, -1003, -1001, -1002]]),
    ),
    (  # each row overflows with another shift: none, the minimum, the mean
        "on rows spread over 1000, [[800, 1000, 1200], [-1000, 0, 100], [1000, 0, -1000]]",
        np.array([[800.0, 1000, 1200], [-1000.0, 0, 100], [1000.0, 0, -1000]]),
    ),
]


@exercise("8.2", "A numerically stable softmax")
@_quiet
def stable_softmax(softmax) -> str:
    """Subtracting the same number from every entry of a row leaves its softmax unchanged.
    Which number keeps every exponent at or below 0, so that no exponential overflows?

    x.max(axis=-1, keepdims=True), then np.exp, then divide by .sum(axis=-1, keepdims=True).
    """
    for during, x in SOFTMAX_CASES:
        got = _array("softmax(x)", softmax, x, during=during)
        wrong = stable_softmax_mistakes(x) + _softmax_slips(x)
        try:
            _compare("softmax(x)", got, ref.softmax(x), wrong, during)
        except Mismatch as e:
            if e.kind == DIFFERENCE and not np.isfinite(got).all():
                raise Mismatch(
                    f"{during}, your softmax gives NaN or inf: an exponential overflowed "
                    "(e^1000 = inf, inf/inf = NaN) or all of a row's underflowed (0/0). "
                    "Subtract each row's maximum, x.max(axis=-1, keepdims=True): every "
                    "exponent is then ≤ 0, and the largest is e^0 = 1.",
                    MISTAKE,
                ) from None
            raise
    return "rows sum to 1 on every shape, and e^1000 never appears: the row maximum cancels."


def _softmax_slips(x) -> list:
    """A shift by another statistic than the row maximum, a sum without keepdims, and, for any
    other overflow, the NaN or inf it leaves."""
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    overflow = (
        "so the largest entry's exponential overflows (e^1000 = inf, inf/inf = NaN). Subtract "
        "each row's maximum, x.max(axis=-1, keepdims=True): every exponent is then ≤ 0."
    )
    slips = [
        (
            (x - x.max(axis=-1, keepdims=True))
            / (x - x.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True),
            "np.exp is missing: the weights are the exponentials of x - max, each divided by "
            "its row's sum.",
        ),
        (
            np.exp(x.max(axis=-1, keepdims=True) - x)
            / np.exp(x.max(axis=-1, keepdims=True) - x).sum(axis=-1, keepdims=True),
            "the shift is reversed: np.exp(x - max), not np.exp(max - x).",
        ),
        (
            shifted.sum(axis=-1, keepdims=True) / shifted,
            "the fraction is upside down: each exponential divided by its row's sum.",
        ),
        (
            shifted * shifted.sum(axis=-1, keepdims=True),
            "you multiplied by the row's sum; divide by it.",
        ),
        (
            shifted / shifted.mean(axis=-1, keepdims=True),
            "you divided by the row's mean; divide by its sum, .sum(axis=-1, keepdims=True).",
        ),
        (
            shifted / shifted.sum(),
            "you divided by the sum of the whole array; divide each row by its own sum, "
            ".sum(axis=-1, keepdims=True).",
        ),
        (
            np.exp(x - x.min(axis=-1, keepdims=True))
            / np.exp(x - x.min(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True),
            f"you subtracted each row's minimum, {overflow}",
        ),
        (
            np.exp(x - x.mean(axis=-1, keepdims=True))
            / np.exp(x - x.mean(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True),
            f"you subtracted each row's mean, {overflow}",
        ),
    ]
    if x.shape[0] == x.shape[1]:  # without keepdims a square input broadcasts silently
        slips.append(
            (
                shifted / shifted.sum(axis=-1),
                "without keepdims=True on the sum, the row sums (shape (n,)) line up with the "
                "columns instead of the rows: .sum(axis=-1, keepdims=True).",
            )
        )
    return slips


# 8.3 Scaled dot-product attention --------------------------------------------------------------

ATTENTION_CASES = [
    (
        "on q (2, 5), k (4, 5), v (4, 3)",
        *(_rng(3).normal(size=s) for s in ((2, 5), (4, 5), (4, 3))),
    ),
    ("on the project's Q, K, V", PROJECT.q, PROJECT.k, PROJECT.v),
    (
        "on lesson 3's worked example",
        np.array([[1.0, 0], [0, 1], [1, 1]]),
        np.array([[1.0, 0], [0, 1], [0.5, 0.5]]),
        np.array([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]]),
    ),
]


@exercise("8.3", "Scaled dot-product attention")
@_blame_parts
def attention(scaled_dot_product_attention) -> str:
    """The scores have one row per query and one column per key, shape (T_q, T_k): which
    product of q and k gives that?

    scores = q @ k.T / np.sqrt(d_k) with d_k = q.shape[-1]; weights = softmax(scores); return
    weights @ v and the weights.
    """
    for during, q, k, v in ATTENTION_CASES:
        result = _run(scaled_dot_product_attention, q, k, v, during=during)
        out, weights = _attention(result, q, k, v, during)
    return (
        "T_q ≠ T_k and d_k ≠ d_v work too; on lesson 3's example "
        f'"the" gets weights {fmt(weights[0])} and output {fmt(out[0])}.'
    )


# 8.4 Single-head self-attention ----------------------------------------------------------------


@exercise("8.4", "Single-head self-attention")
@_blame_parts
def single_head(self_attention) -> str:
    """Q, K and V are three projections of the same x, one weight matrix each; 8.3 does the
    rest.

    Q = x @ w_q, K = x @ w_k, V = x @ w_v; then return scaled_dot_product_attention(Q, K, V).
    """
    for during, x, w_q, w_k, w_v in _self_attention_cases():
        result = _run(self_attention, x, w_q, w_k, w_v, during=during)
        weights, outputs = _projection_mistakes(x, w_q, w_k, w_v)
        _attention(result, x @ w_q, x @ w_k, x @ w_v, during, weights, outputs, x.shape[1])
    return f'with the project\'s weights, "the" attends {fmt(PROJECT.weights[0])} to the, cat, sat.'


def _self_attention_cases() -> list:
    g = _rng(4)
    wide = (g.normal(size=(4, 6)), *(ref.xavier_normal(6, n, rng=g) for n in (3, 3, 5)))
    p = PROJECT_PARAMS
    return [
        ("on the project's x and weights", PROJECT.x, p.w_q, p.w_k, p.w_v),
        ("on x (4, 6), w_q and w_k (6, 3), w_v (6, 5)", *wide),
    ]


def _projection_mistakes(x, w_q, w_k, w_v) -> tuple[list, list]:
    """The weights and the outputs of self-attention with its projections mixed up."""
    q, k, root = x @ w_q, x @ w_k, np.sqrt(w_q.shape[1])
    weights = [
        (
            ref.softmax(k @ q.T / root),
            "W_Q and W_K are swapped: the queries are x @ w_q, the keys x @ w_k.",
        ),
    ]
    if w_q.shape[0] != w_q.shape[1]:  # the other slips need square projections
        return weights, []
    weights += [
        (
            ref.softmax(x @ x.T / root),
            "the queries and keys are x itself: project them first, Q = x @ w_q and K = x @ w_k.",
        ),
        (
            ref.softmax((x @ w_q.T) @ (x @ w_k.T).T / root),
            "you used the transposed matrices: positions are rows here, so Q = x @ w_q, no .T.",
        ),
    ]
    v = x @ w_v
    weights += [
        (
            ref.softmax(q @ v.T / root),
            "W_K and W_V are swapped: the keys are x @ w_k, the values x @ w_v.",
        ),
        (ref.softmax(x @ k.T / root), "the queries are x itself: Q = x @ w_q."),
        (ref.softmax(q @ x.T / root), "the keys are x itself: K = x @ w_k."),
    ]
    w = ref.softmax(q @ k.T / root)
    outputs = [
        (w @ k, "the values use W_K: V = x @ w_v."),
        (w @ x, "the values are x itself: V = x @ w_v."),
    ]
    return weights, outputs


# 8.5 Layer norm --------------------------------------------------------------------------------


@exercise("8.5", "Layer norm")
@_quiet
def normalisation(layer_norm) -> str:
    """Each row (one position's vector) gets its own mean and variance, over the last axis,
    kept as an axis of size 1 so that they broadcast against x.

    x.var(axis=-1, keepdims=True) is the population variance; return gamma * (x - mean) /
    np.sqrt(var + eps) + beta.
    """
    cases = _layer_norm_cases()
    expect_parameters(
        layer_norm,
        "layer_norm must take eps as its fourth argument: "
        "def layer_norm(x, gamma, beta, eps=1e-5).",
        *cases[0][1:],
    )
    for during, x, gamma, beta, eps in cases:
        got = _array("layer_norm(x)", layer_norm, x, gamma, beta, eps, during=during)
        expected = ref.layer_norm(x, gamma, beta, eps)
        wrong = layer_norm_mistakes(x, gamma, beta, eps) + layer_norm_slips(x, gamma, beta, eps)
        _compare_layer_norm("layer_norm(x)", got, expected, wrong, during, x, gamma, beta, eps)
    x1 = PROJECT.x1
    return (
        f"each row of x1 has mean {abs(x1.mean(axis=1)).max():.4f} and variance "
        f"{x1.var(axis=1).min():.4f}; a constant row comes out as beta, not NaN."
    )


def _layer_norm_cases() -> list:
    g = _rng(5)
    rows = np.stack(
        [2 + 3 * g.normal(size=6), g.normal(size=6), np.full(6, 5.0), 1 + 0.002 * g.normal(size=6)]
    )
    ones, zeros = np.ones(8), np.zeros(8)
    return [  # the constant and nearly constant rows first: they tell the ε mistakes apart
        (
            "on a (4, 6) input with a constant row, random gamma and beta",
            *(rows, 1 + 0.3 * g.normal(size=6), 0.3 * g.normal(size=6), 1e-5),
        ),
        ("on x + attn of the project (3, 8)", PROJECT.x + PROJECT.attn, ones, zeros, 1e-5),
        ("with eps = 0.1 on a (2, 4) input", g.normal(size=(2, 4)), np.ones(4), np.zeros(4), 0.1),
    ]


# 8.6 Recall: why is the variance a little below 1? ---------------------------------------------


@multiple_choice("8.6", "Recall: why 0.99999 and not 1?", correct="b")
def recall(answer_8_6):
    """Where does eps enter the formula?

    Compute the variance of (x - μ)/√(σ² + ε) in terms of σ² and ε.

    (a) Float64 rounding errors are about 1e-16, ten orders of magnitude too small to move the
    fifth decimal.

    (b) LayerNorm divides by √(σ² + ε), so the output variance is σ²/(σ² + ε): 0.999993 for
    σ² ≈ 1.45, and further below 1 only for rows whose variance is tiny.

    (c) LayerNorm uses the population variance (divide by n), as np.var does by default; with
    n - 1 the printed variance would be 7/8 = 0.875, not 0.99999.

    (d) The seed is fixed, so every run prints the same numbers; and whatever the seed,
    σ²/(σ² + ε) stays below 1.
    """


# 8.7 Add & Norm --------------------------------------------------------------------------------


@exercise("8.7", "Add & Norm")
@_blame_parts
def residual(add_and_norm) -> str:
    """Post-norm (the paper, §3.1): add first, then normalise.

    return layer_norm(x + sublayer_out, gamma, beta, eps)
    """
    cases = _add_and_norm_cases()
    expect_parameters(
        add_and_norm,
        "add_and_norm must take eps as its fifth argument: "
        "def add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5).",
        *cases[-1][1:],
    )
    for during, x, s, gamma, beta, *eps in cases:
        got = _array("add_and_norm(...)", add_and_norm, x, s, gamma, beta, *eps, during=during)
        eps = eps[0] if eps else 1e-5
        norm = functools.partial(ref.layer_norm, gamma=gamma, beta=beta, eps=eps)
        wrong = [
            *add_and_norm_mistakes(x, s, norm),
            *_add_and_norm_slips(x, s, gamma, beta, eps),
            *layer_norm_mistakes(x + s, gamma, beta, eps),
            *layer_norm_slips(x + s, gamma, beta, eps),
        ]
        _compare_layer_norm(
            "add_and_norm(...)", got, norm(x + s), wrong, during, x + s, gamma, beta, eps
        )
    return (
        "x1 = LayerNorm(x + attn): the residual keeps x, the norm keeps each row at mean 0, "
        "variance 1."
    )


def _add_and_norm_cases() -> list:
    """``(during, x, sublayer_out, gamma, beta[, eps])``: without eps, the default."""
    g = _rng(6)
    p = PROJECT_PARAMS
    x, s = g.normal(size=(4, 6)), g.normal(size=(4, 6))
    s[2] = 0.5 - x[2] + 0.003 * g.normal(size=6)  # x + s nearly constant: variance near ε
    return [
        ("on the project's x and attn", PROJECT.x, PROJECT.attn, p.gamma1, p.beta1),
        (
            "on (4, 6) inputs with random gamma and beta, where row 2 of x + sublayer_out "
            "has a variance near ε",
            *(x, s, 1 + 0.3 * g.normal(size=6), 0.3 * g.normal(size=6)),
        ),
        (
            "with eps = 0.1 on (2, 4) inputs",
            *(g.normal(size=(2, 4)), g.normal(size=(2, 4))),
            *(1 + 0.3 * g.normal(size=4), 0.3 * g.normal(size=4), 0.1),
        ),
    ]


def _add_and_norm_slips(x, s, gamma, beta, eps) -> list:
    """Add & Norm with γ and β swapped, without ε or with the default one, or subtracting."""
    slips = []
    if eps != 1e-5:
        slips.append(
            (
                ref.layer_norm(x + s, gamma, beta),
                f"called with eps = {eps}, your function used ε = 1e-5: pass eps on, "
                "layer_norm(x + sublayer_out, gamma, beta, eps).",
            )
        )
    slips += [
        (
            ref.layer_norm(x + s, beta, gamma, eps),
            "gamma and beta are swapped: layer_norm(x + sublayer_out, gamma, beta, eps), "
            "gamma scales and beta shifts.",
        ),
        (
            ref.layer_norm(x + s, gamma, beta, 0.0),
            "ε is missing: normalise with √(σ² + ε), which keeps a row whose variance is near 0 "
            "from blowing up: layer_norm(x + sublayer_out, gamma, beta, eps).",
        ),
        (
            ref.layer_norm(x - s, gamma, beta, eps),
            "you subtracted sublayer_out: the residual adds it, LayerNorm(x + sublayer_out).",
        ),
    ]
    return slips


# 8.8 Feed-forward ------------------------------------------------------------------------------


@exercise("8.8", "The feed-forward network")
@_quiet
def ffn(feed_forward) -> str:
    """Two layers with a ReLU between them: (T, d_model) -> (T, d_ff) -> (T, d_model).

    np.maximum(0, x @ w1 + b1) @ w2 + b2
    """
    for during, x, w1, b1, w2, b2 in _ffn_cases():
        got = _array("feed_forward(...)", feed_forward, x, w1, b1, w2, b2, during=during)
        expected = ref.feed_forward(x, w1, b1, w2, b2)
        _compare("feed_forward(...)", got, expected, _ffn_mistakes(x, w1, b1, w2, b2), during)
    active = (PROJECT.hidden > 0).sum(axis=1)
    return (
        f"on the project's x1, {active.sum()} of {PROJECT.hidden.size} hidden units are active "
        f"({', '.join(map(str, active))} of {PROJECT.hidden.shape[1]} per token)."
    )


def _ffn_cases() -> list:
    g = _rng(7)
    p, q = _random_params(6, 10, seed=7), PROJECT_PARAMS
    return [
        ("on the project's x1 and weights", PROJECT.x1, q.w1, q.b1, q.w2, q.b2),
        (
            "on x (4, 6) with d_ff = 10 and non-zero biases",
            *(g.normal(size=(4, 6)), p.w1, p.b1, p.w2, p.b2),
        ),
    ]


def _ffn_mistakes(x, w1, b1, w2, b2) -> list:
    relu, h = ref.relu, x @ w1 + b1
    return [
        (
            h @ w2 + b2,
            "the ReLU is missing: max(0, x W1 + b1) comes before the second layer (paper Eq. 2).",
        ),
        (
            relu(relu(h) @ w2 + b2),
            "there is a ReLU on the output too: the FFN has one ReLU, between its two layers; "
            "its output may be negative.",
        ),
        (
            relu(h @ w2 + b2),
            "the ReLU is on the output; it belongs between the two layers: "
            "max(0, x W1 + b1) W2 + b2.",
        ),
        (
            np.minimum(0, h) @ w2 + b2,
            "np.minimum keeps the negative part; ReLU is np.maximum(0, x W1 + b1).",
        ),
        (
            np.maximum(-1, h) @ w2 + b2,
            "the ReLU's threshold is -1: ReLU is max(0, ·), np.maximum(0, x W1 + b1).",
        ),
        (
            np.maximum(1, h) @ w2 + b2,
            "the ReLU's threshold is 1: ReLU is max(0, ·), np.maximum(0, x W1 + b1).",
        ),
        (relu(x @ w1 - b1) @ w2 + b2, "b1 is subtracted: max(0, x W1 + b1)."),
        (relu(h) @ w2 - b2, "b2 is subtracted: ... W2 + b2."),
        (relu(x @ w1) @ w2 + b2, "b1 is missing: max(0, x W1 + b1)."),
        (relu(h) @ w2, "b2 is missing: ... W2 + b2."),
        (relu(x @ w1) @ w2, "both biases are missing: max(0, x W1 + b1) W2 + b2."),
        (
            (relu(x @ w1) + b1) @ w2 + b2,
            "b1 was added after the ReLU; it goes inside: max(0, x W1 + b1).",
        ),
    ]


# 8.9 The encoder layer, with PyTorch as the referee --------------------------------------------


@exercise("8.9", "The encoder layer")
@_blame_parts
def encoder(encoder_layer) -> str:
    """Follow the five steps: x = embeddings + PE; attention; Add & Norm; FFN; Add & Norm.

    The FFN reads x1, and the second Add & Norm adds x1 back: LayerNorm(x1 + FFN(x1)).
    """
    for during, emb, p in _encoder_cases():
        try:
            result = _run(encoder_layer, emb, p, during=during)
            if isinstance(result, (tuple, list)):
                raise Mismatch(
                    f"{during}, return only the output (shape (T, d_model)); your function "
                    f"returned a {type(result).__name__}.",
                    TYPE,
                )
            got = expect_array("encoder_layer(...)", result, during)
            expected = ref.encoder_layer(emb, p).out
            _compare("encoder_layer(...)", got, expected, _encoder_mistakes(emb, p), during)
        except Mismatch:
            _notebook_globals(encoder_layer, during)
            raise
        x = emb + ref.positional_encoding(*emb.shape)
        ours, theirs = encoder_layers_from_numpy(p)
        for name, layer in (
            ("course_lib EncoderLayer", ours),
            ("nn.TransformerEncoderLayer", theirs),
        ):
            gap = np.abs(got - _torch_output(layer, x)).max()
            if not gap < 1e-8:  # agreeing with the numpy reference, it cannot get here
                raise Mismatch(
                    f"{during}, your encoder differs from {name} by up to {gap:.3g}.", DIFFERENCE
                )
    return (
        f'"the" comes out as {fmt(PROJECT.out[0])}, as in the reference output; '
        "course_lib.numpy_encoder, course_lib's EncoderLayer and nn.TransformerEncoderLayer, "
        "given the same weights, agree with yours to within 1e-8."
    )


def _notebook_globals(fn, during: str) -> None:
    """Raise, in place of the failure being reported, if ``fn`` reads arrays, weights or sizes
    from the notebook's globals (W_Q, gamma1, x1, params, D_MODEL, ...) instead of its
    arguments: the check's second input has other weights and sizes."""
    names = closure_globals(fn)
    read = [
        name
        for name, value in names.items()
        if isinstance(value, np.ndarray | ref.EncoderParams)
        or (isinstance(value, int | np.integer) and not isinstance(value, bool))
    ]
    if read:
        listed = " and ".join(f"`{n}`" for n in read)
        raise Mismatch(
            f"{during}, your encoder_layer fails, and it reads the notebook's {listed} "
            "instead of its arguments: take every weight from `params` (params.w_q, ..., "
            "params.beta2) and the sizes from embeddings.shape; the check also calls it with "
            "other weights and sizes.",
            MISTAKE,
        ) from None


def _encoder_cases() -> list:
    return [
        ('on "the cat sat" (seed 42)', PROJECT_EMBEDDINGS, PROJECT_PARAMS),
        (
            "on 5 tokens, d_model = 6, d_ff = 12, with non-zero biases, gammas and betas",
            *(0.5 * _rng(9).normal(size=(5, 6)), _random_params(6, 12, seed=9)),
        ),
    ]


def _encoder_mistakes(emb, p) -> list:
    def attn(a):
        return ref.self_attention(a, p.w_q, p.w_k, p.w_v)[0]

    def ffn(a):
        return ref.feed_forward(a, p.w1, p.b1, p.w2, p.b2)

    def norm1(a):
        return ref.layer_norm(a, p.gamma1, p.beta1)

    def norm2(a):
        return ref.layer_norm(a, p.gamma2, p.beta2)

    x = emb + ref.positional_encoding(*emb.shape)
    x1 = norm1(x + attn(x))
    no_pe = norm1(emb + attn(emb))
    pre1 = x + attn(norm1(x))
    return [
        (
            norm2(no_pe + ffn(no_pe)),
            "the positional encoding is missing: x = embeddings + encode_positions(T, d_model) "
            "comes first.",
        ),
        (
            norm2(norm1(attn(x)) + ffn(norm1(attn(x)))),
            "the first residual is missing: x1 = LayerNorm(x + attention output), not "
            "LayerNorm(attention output).",
        ),
        (norm2(ffn(x1)), "the second residual is missing: out = LayerNorm(x1 + FFN(x1))."),
        (
            norm1(norm2(x + attn(x)) + ffn(norm2(x + attn(x)))),
            "the two LayerNorms' parameters are swapped: gamma1, beta1 go with attention, "
            "gamma2, beta2 with the FFN.",
        ),
        (
            norm1(x1 + ffn(x1)),
            "both LayerNorms use gamma1 and beta1; the second uses gamma2 and beta2.",
        ),
        (norm2(x1 + ffn(x)), "the FFN reads x; it reads x1, the output of the first Add & Norm."),
        (
            norm2(x + ffn(x1)),
            "the second residual adds x; it adds x1, the input of the FFN sub-layer.",
        ),
        (x1, "this is x1, the output of the first Add & Norm: the FFN sub-layer is missing."),
        (x1 + ffn(x1), "the second LayerNorm is missing: out = LayerNorm(x1 + FFN(x1))."),
        (
            pre1 + ffn(norm2(pre1)),
            "this is the pre-norm order, x + Sublayer(LayerNorm(x)); the paper's post-norm adds, "
            "then normalises: LayerNorm(x + Sublayer(x)).",
        ),
    ]


def _torch_output(layer, x: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return layer(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))[None])[0].numpy()
