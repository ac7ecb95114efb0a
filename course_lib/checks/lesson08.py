"""Checks for the project, a one-layer post-norm encoder in numpy (paper §3.1-§3.5).

Each check runs the learner's function on the project's own inputs ("the cat sat", seed 42)
and on extra inputs where the typical mistakes give different results: large logits for the
softmax, a non-square input with a constant row for layer norm, T_q != T_k and d_k != d_v for
attention, non-zero biases and LayerNorm parameters for the FFN and the full layer. A result
that reproduces a typical mistake gets that mistake's name. Every function must return numpy
arrays and leave its inputs untouched.

When a function fails and calls another project function that does not pass its own check
yet (``encoder_layer`` calling ``softmax``, say), the message points at that one first.
"""

import inspect
from dataclasses import fields, replace

import numpy as np
import torch

from .. import numpy_encoder as ref
from ..interop import encoder_layers_from_numpy
from ._core import NOT_DONE, Exercise, Mismatch, NotDone, call, choice
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

    return ref.EncoderParams(
        w(d_model, d_model), w(d_model, d_model), w(d_model, d_model),
        w(d_model, d_ff), near(0.0, d_ff), w(d_ff, d_model), near(0.0, d_model),
        near(1.0, d_model), near(0.0, d_model), near(1.0, d_model), near(0.0, d_model),
    )  # fmt: skip


# Calling the learner's function --------------------------------------------------------------


def _copied(a):
    if isinstance(a, np.ndarray):
        return a.copy()
    if isinstance(a, ref.EncoderParams):
        return replace(a, **{f.name: getattr(a, f.name).copy() for f in fields(a)})
    return a


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    if isinstance(a, ref.EncoderParams):
        return all(np.array_equal(getattr(a, f.name), getattr(b, f.name)) for f in fields(a))
    return True


def _run(fn, *args, during: str):
    """Call ``fn`` on copies of ``args``; fail if it changed them. Numpy warnings are muted:
    the message names the overflow or the 0/0 instead."""
    copies = [_copied(a) for a in args]
    with np.errstate(all="ignore"):
        try:
            result = call(fn, *copies, during=during)
        except Mismatch as e:
            tip = ""
            if "could not be broadcast" in str(e):
                tip = (" Tip: keepdims=True keeps the reduced axis, so row means, maxima and "
                       "sums line up with the rows they came from.")  # fmt: skip
            raise Mismatch(f"{e}{tip}") from None
    if not all(_same(a, c) for a, c in zip(args, copies, strict=True)):
        raise Mismatch(
            f"{during}, your function changed its input in place (e.g. `x -= ...` or "
            "`x[...] = ...`): compute a new array instead (`x = x - ...`)."
        )
    return result


def _array(name: str, x, during: str) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        raise Mismatch(
            f"{during}, `{name}` is a torch tensor: this project is numpy only. "
            "Use np.exp, np.sqrt, x.mean(axis=...) and return a numpy array."
        )
    if not isinstance(x, np.ndarray):
        raise Mismatch(f"{during}, `{name}` should be a numpy array; got {type(x).__name__}.")
    if x.dtype.kind in "biu":
        raise Mismatch(
            f"{during}, `{name}` has dtype {x.dtype}: values written into an integer array "
            "are truncated. Create it as floats, e.g. np.zeros((n, m))."
        )
    return x


def _pair(result, during: str):
    if isinstance(result, (tuple, list)) and len(result) == 2:
        return [_array(n, r, during) for n, r in zip(("output", "weights"), result, strict=True)]
    what = (
        f"an array of shape {result.shape}" if hasattr(result, "shape") else type(result).__name__
    )
    raise Mismatch(f"{during}, return a pair (output, weights); your function returned {what}.")


def _compare(name, got, expected, wrong, during, atol=1e-6):
    if got.shape != expected.shape:
        transposed = got.shape == expected.shape[::-1]
        raise Mismatch(
            f"{during}, `{name}` should have shape {expected.shape}; got {got.shape}"
            + (": transposed?" if transposed else ".")
        )
    try:
        diagnose(name, got, expected, wrong, atol=atol)
    except Mismatch as e:
        raise Mismatch(f"{during}: {e}") from None


# Functions a learner's function calls ---------------------------------------------------------

_PARTS = {  # the project functions, in exercise order
    "encode_positions": "8.1", "softmax": "8.2", "scaled_dot_product_attention": "8.3",
    "self_attention": "8.4", "layer_norm": "8.5", "add_and_norm": "8.7", "feed_forward": "8.8",
}  # fmt: skip


def _parts_used(fn) -> dict[str, object]:
    """The project functions ``fn`` calls, directly or through one another."""
    found, todo = {}, [fn]
    while todo:
        try:
            names = inspect.getclosurevars(todo.pop()).globals
        except (TypeError, ValueError):
            continue
        for name, g in names.items():
            if name in _PARTS and name not in found and callable(g) and g is not fn:
                found[name] = todo.append(g) or g
    return dict(sorted(found.items(), key=lambda item: float(_PARTS[item[0]][2:])))


def _blame_parts(verify):
    """On failure, first report the project functions ``fn`` calls that fail their own checks."""

    def checked(fn):
        try:
            return verify(fn)
        except (NotDone, Mismatch) as failure:
            unfinished, failing = [], []
            for name, part in _parts_used(fn).items():
                exercise = _BY_ID[_PARTS[name]]
                result = exercise.run(part)
                if result.status == NOT_DONE:
                    unfinished.append(f"`{name}` ({exercise.id})")
                elif not result.passed:
                    failing.append((name, exercise.id, result.message))
            if unfinished:
                raise NotDone(
                    f"your function calls {' and '.join(unfinished)}, not written yet: "
                    f"finish {'that exercise' if len(unfinished) == 1 else 'those exercises'} first."
                ) from None
            if failing:
                names = " and ".join(f"`{n}` (check {i})" for n, i, _ in failing)
                said = " ".join(f"Check {i} says: {m}" for _, i, m in failing)
                raise Mismatch(
                    f"your function calls {names}, which {'does' if len(failing) == 1 else 'do'} not pass yet: "
                    f"fix {'it' if len(failing) == 1 else 'them'} first. {said}"
                ) from None
            raise failure from None

    return checked


# 8.1 Positional encoding ------------------------------------------------------------------------


def _pe_mistakes(T, D):
    pos, i, j = np.arange(T)[:, None], np.arange(D // 2)[None], np.arange(D)[None]

    def pairs(angle_sin, angle_cos):
        pe = np.empty((T, D))
        pe[:, 0::2], pe[:, 1::2] = np.sin(angle_sin), np.cos(angle_cos)
        return pe

    angle = pos / 10000 ** (2 * i / D)
    by_column = pos / 10000 ** (j / D)
    twice_column = pos / 10000 ** (2 * j / D)
    swapped = np.empty((T, D))
    swapped[:, 0::2], swapped[:, 1::2] = np.cos(angle), np.sin(angle)
    return [
        (swapped, "sin and cos are swapped: sin goes in the even columns (0, 2, ...), cos in the odd ones, so row 0 is [0, 1, 0, 1, ...]."),
        (np.concatenate([np.sin(angle), np.cos(angle)], axis=1), "the sines fill the first half and the cosines the second; the paper interleaves them: sin in column 2i, cos in column 2i+1."),
        (pairs(by_column[:, 0::2], by_column[:, 1::2]), "each column got its own exponent j/d_model: a (sin, cos) pair shares one angle, so column 2i+1 uses the exponent 2i/d_model of column 2i."),
        (pairs(twice_column[:, 0::2], twice_column[:, 1::2]), "the exponent uses the column index: in 2i/d_model, i counts (sin, cos) pairs, not columns."),
        (pairs(pos / 10000 ** (i / D), pos / 10000 ** (i / D)), "the exponent is i/d_model; the paper's is 2i/d_model (i counts pairs), so the wavelengths run from 2π up to 10000·2π."),
        (pairs(pos * 10000 ** (2 * i / D), pos * 10000 ** (2 * i / D)), "you multiplied pos by 10000^(2i/d_model); divide by it, so that the frequencies fall along the row."),
        (ref.positional_encoding(T + 1, D)[1:], "the positions start at 1; they start at 0, so row 0 is [0, 1, 0, 1, ...]."),
    ]  # fmt: skip


def _verify_positional_encoding(encode_positions) -> str:
    for T, D in ((3, 8), (50, 16)):
        during = f"for seq_len = {T}, d_model = {D}"
        got = _array("pe", _run(encode_positions, T, D, during=during), during)
        _compare("pe", got, ref.positional_encoding(T, D), _pe_mistakes(T, D), during)
    row1 = ref.positional_encoding(3, 8)[1]
    return f"row 0 is [0, 1, 0, 1, 0, 1, 0, 1] and position 1 is {fmt(row1)}, at any size."


# 8.2 Softmax --------------------------------------------------------------------------------------


def _softmax_mistakes(x):
    def ratio(e, total=None):
        return e / (e.sum(axis=-1, keepdims=True) if total is None else total)

    mistakes = [
        (ratio(np.exp(x)), "not stable: for large inputs np.exp overflows (e^1000 = inf, and inf/inf = NaN) or underflows to 0/0. Subtract each row's maximum first; it cancels in the ratio."),
        (ratio(np.exp(x - x.max())), "you subtracted the maximum of the whole array: a row far below it underflows to 0/0. Subtract each row's own maximum, x.max(axis=-1, keepdims=True)."),
        (ratio(np.exp(x - x.max(axis=0, keepdims=True))), "you subtracted each column's maximum: the shift must be the same along a row, x.max(axis=-1, keepdims=True)."),
        (ref.softmax(x, axis=0), "each column sums to 1: the softmax runs along each row (axis=-1), one row per query."),
        (ratio(np.exp(x - x.max()), np.exp(x - x.max()).sum()), "the whole array sums to 1: normalise each row on its own, .sum(axis=-1, keepdims=True)."),
        (np.exp(x - x.max(axis=-1, keepdims=True)), "the exponentials are not normalised: divide each by its row's sum."),
        (ratio(np.exp(x - x.max(axis=-1, keepdims=True)), np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=0, keepdims=True)), "you divided by each column's sum (axis=0): each row must sum to 1, so divide by .sum(axis=-1, keepdims=True)."),
    ]  # fmt: skip
    if x.shape[0] == x.shape[1]:  # without keepdims a square input broadcasts silently
        e = np.exp(x - x.max(axis=-1))
        no_keepdims = "without keepdims=True, the row maxima or sums (shape (n,)) line up with the columns instead of the rows."
        mistakes += [(ratio(e), no_keepdims), (e / e.sum(axis=-1), no_keepdims),
                     (np.exp(x) / np.exp(x).sum(axis=-1), no_keepdims)]  # fmt: skip
    return mistakes


SOFTMAX_CASES = [
    ("on the project's scaled scores (3, 3)", PROJECT.scores),
    ("on a (2, 5) input", _rng(2).normal(size=(2, 5))),
    ("on large inputs [[1000, 1001, 1002, 1003], [-1000, -1003, -1001, -1002]]",
     np.array([[1000.0, 1001, 1002, 1003], [-1000.0, -1003, -1001, -1002]])),
]  # fmt: skip


def _verify_softmax(softmax) -> str:
    for during, x in SOFTMAX_CASES:
        got = _array("softmax(x)", _run(softmax, x, during=during), during)
        _compare("softmax(x)", got, ref.softmax(x), _softmax_mistakes(x), during)
    return "rows sum to 1 on every shape, and e^1000 never appears: the row maximum cancels."


# 8.3 and 8.4 Attention ----------------------------------------------------------------------------


def _weight_mistakes(s, d_k, d_v=None, t_k=None, d_model=None):
    """Ways to go wrong between the raw scores ``s`` = QKᵀ and the weights."""
    root = np.sqrt(d_k)
    mistakes = [
        (ref.softmax(s), f"the scores are not scaled: divide QKᵀ by √d_k (here √{d_k} ≈ {root:.2f}) before the softmax."),
        (ref.softmax(s / d_k), f"you divided by d_k = {d_k}; divide by its square root, √d_k ≈ {root:.2f}."),
        (ref.softmax(s * root), "you multiplied by √d_k; divide by it."),
        (ref.softmax(s / root, axis=0), "each column of weights sums to 1: softmax over the keys, axis=-1 (one row per query)."),
        (s / root, "these are the scaled scores: the softmax turns them into weights."),
    ]  # fmt: skip
    for other, what in ((d_v, "d_v, the width of the values"), (t_k, "the number of keys"),
                        (d_model, "d_model, the width of x"),
                        (8, "the project's D_MODEL, a fixed number")):  # fmt: skip
        if other is not None and other != d_k:
            mistakes.append((ref.softmax(s / np.sqrt(other)), f"you scaled by √{other}, the square root of {what}; the scale is √d_k = √{d_k}, the width of the queries and keys."))  # fmt: skip
    return mistakes


def _check_attention_result(
    result, q, k, v, during, extra_weights=(), extra_outputs=(), d_model=None
):
    out, weights = _pair(result, during)
    expected_w = ref.softmax(q @ k.T / np.sqrt(q.shape[1]))  # (T_q, T_k)
    expected_out = expected_w @ v  # (T_q, d_v)
    if out.shape == expected_w.shape != weights.shape == expected_out.shape:
        raise Mismatch(f"{during}, the pair came back swapped: return (output, weights).")
    if weights.shape == expected_w.shape[::-1] != expected_w.shape:
        raise Mismatch(
            f"{during}, the weights have shape (T_k, T_q) = {weights.shape}: compute q @ k.T, not k @ q.T."
        )
    s = q @ k.T
    wrong = [*extra_weights, *_weight_mistakes(s, q.shape[1], v.shape[1], k.shape[0], d_model)]
    _compare("weights", weights, expected_w, wrong, during)
    wrong = [(s / np.sqrt(q.shape[1]) @ v, "the output mixes the values with the scores: multiply the weights by v."),
             *extra_outputs]  # fmt: skip
    _compare("output", out, expected_out, wrong, during)
    return out, weights


ATTENTION_CASES = [
    ("on q (2, 5), k (4, 5), v (4, 3)",) + tuple(_rng(3).normal(size=s) for s in ((2, 5), (4, 5), (4, 3))),
    ("on the project's Q, K, V",  PROJECT.q, PROJECT.k, PROJECT.v),
    ("on lesson 3's worked example", np.array([[1.0, 0], [0, 1], [1, 1]]),
     np.array([[1.0, 0], [0, 1], [0.5, 0.5]]), np.array([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]])),
]  # fmt: skip


@_blame_parts
def _verify_attention(attention) -> str:
    for during, q, k, v in ATTENTION_CASES:
        out, weights = _check_attention_result(
            _run(attention, q, k, v, during=during), q, k, v, during
        )
    return f'T_q ≠ T_k and d_k ≠ d_v work too; on lesson 3\'s example "the" gets weights {fmt(weights[0])} and output {fmt(out[0])}.'


def _self_attention_cases():
    g = _rng(4)
    wide = (g.normal(size=(4, 6)), *(ref.xavier_normal(6, n, rng=g) for n in (3, 3, 5)))
    p = PROJECT_PARAMS
    return [("on the project's x and weights", PROJECT.x, p.w_q, p.w_k, p.w_v),
            ("on x (4, 6), w_q and w_k (6, 3), w_v (6, 5)", *wide)]  # fmt: skip


@_blame_parts
def _verify_self_attention(self_attention) -> str:
    for during, x, w_q, w_k, w_v in _self_attention_cases():
        result = _run(self_attention, x, w_q, w_k, w_v, during=during)
        q, k, v, d_k = x @ w_q, x @ w_k, x @ w_v, w_q.shape[1]
        weights = [
            (ref.softmax((x @ w_k) @ (x @ w_q).T / np.sqrt(d_k)), "W_Q and W_K are swapped: the queries are x @ w_q, the keys x @ w_k."),
        ]  # fmt: skip
        outputs = []
        if w_q.shape[0] == w_q.shape[1]:
            weights += [
                (ref.softmax(x @ x.T / np.sqrt(d_k)), "the queries and keys are x itself: project them first, Q = x @ w_q and K = x @ w_k."),
                (ref.softmax((x @ w_q.T) @ (x @ w_k.T).T / np.sqrt(d_k)), "you used the transposed matrices: positions are rows here, so Q = x @ w_q, no .T."),
            ]  # fmt: skip
            w = ref.softmax(q @ k.T / np.sqrt(d_k))
            outputs += [(w @ k, "the values use W_K: V = x @ w_v."), (w @ x, "the values are x itself: V = x @ w_v.")]  # fmt: skip
        _check_attention_result(result, q, k, v, during, weights, outputs, x.shape[1])
    return f'with the project\'s weights, "the" attends {fmt(PROJECT.weights[0])} to the, cat, sat.'


# 8.5 Layer norm ------------------------------------------------------------------------------------


def _layer_norm_mistakes(x, gamma, beta, eps):
    mu, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    plain = (x - mu) / np.sqrt(var + eps)
    mistakes = [] if eps == 1e-5 else [
        (gamma * (x - mu) / np.sqrt(var + 1e-5) + beta, f"you used ε = 1e-5 when called with eps = {eps}: use the eps argument."),
    ]  # fmt: skip
    mistakes += [
        (gamma * (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + eps) + beta, "each column was normalised (axis=0): layer norm normalises each position's vector, along the last axis (axis=-1, keepdims=True)."),
        (gamma * (x - x.mean()) / np.sqrt(x.var() + eps) + beta, "you used the mean and variance of the whole array: each row (position) gets its own, axis=-1."),
        (gamma * (x - mu) / np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + eps) + beta, "that is the unbiased variance (ddof=1, divide by n - 1); layer norm uses the population variance, np.var's default (divide by n)."),
        (gamma * (x - mu) / (np.sqrt(var) + eps) + beta, "ε belongs inside the square root: (x - μ) / √(σ² + ε)."),
        (gamma * (x - mu) / np.sqrt(var) + beta, "without ε, a constant row has variance 0 and gives 0/0 = NaN: divide by √(σ² + ε)."),
        (gamma * (x - mu) / (var + eps) + beta, "you divided by the variance; divide by its square root, the standard deviation √(σ² + ε)."),
        (gamma * (x - mu) + beta, "the rows are centred but not scaled: divide by √(σ² + ε)."),
        (beta * plain + gamma, "gamma and beta are swapped: gamma scales, beta shifts, γ·x̂ + β."),
        (plain, "gamma and beta are ignored: return gamma * x̂ + beta."),
    ]  # fmt: skip
    return mistakes


def _layer_norm_cases():
    g = _rng(5)
    rows = np.stack([2 + 3 * g.normal(size=6), g.normal(size=6), np.full(6, 5.0),
                     1 + 0.002 * g.normal(size=6)])  # fmt: skip
    ones, zeros = np.ones(8), np.zeros(8)
    return [  # the constant and nearly constant rows first: they tell the ε mistakes apart
        ("on a (4, 6) input with a constant row, random gamma and beta",
         rows, 1 + 0.3 * g.normal(size=6), 0.3 * g.normal(size=6), 1e-5),
        ("on x + attn of the project (3, 8)", PROJECT.x + PROJECT.attn, ones, zeros, 1e-5),
        ("with eps = 0.1 on a (2, 4) input", g.normal(size=(2, 4)), np.ones(4), np.zeros(4), 0.1),
    ]  # fmt: skip


def _verify_layer_norm(layer_norm) -> str:
    for during, x, gamma, beta, eps in _layer_norm_cases():
        got = _array("layer_norm(x)", _run(layer_norm, x, gamma, beta, eps, during=during), during)
        expected = ref.layer_norm(x, gamma, beta, eps)
        with np.errstate(all="ignore"):
            wrong = _layer_norm_mistakes(x, gamma, beta, eps)
        _compare("layer_norm(x)", got, expected, wrong, during)
    x1 = PROJECT.x1
    return (
        f"each row of x1 has mean {abs(x1.mean(axis=1)).max():.4f} and variance {x1.var(axis=1).min():.4f}; "
        "a constant row comes out as beta, not NaN."
    )


# 8.6 Recall: why is the variance a little below 1? ---------------------------------------------------

_RECALL = choice(
    "b",
    {
        "a": "Float64 rounding errors are about 1e-16, ten orders of magnitude too small to "
        "move the fifth decimal.",
        "b": "LayerNorm divides by √(σ² + ε), so the output variance is σ²/(σ² + ε): "
        "0.999993 for σ² ≈ 1.45, and further below 1 only for rows whose variance is tiny.",
        "c": "LayerNorm uses the population variance (divide by n), as np.var does by "
        "default; with n - 1 the printed variance would be 7/8 = 0.875, not 0.99999.",
        "d": "The seed is fixed, so every run prints the same numbers; and whatever the seed, "
        "σ²/(σ² + ε) stays below 1.",
    },
)


# 8.7 Add & Norm ---------------------------------------------------------------------------------------


def _add_and_norm_cases():
    g = _rng(6)
    p = PROJECT_PARAMS
    return [
        ("on the project's x and attn", PROJECT.x, PROJECT.attn, p.gamma1, p.beta1),
        ("on (4, 6) inputs with random gamma and beta", g.normal(size=(4, 6)),
         g.normal(size=(4, 6)), 1 + 0.3 * g.normal(size=6), 0.3 * g.normal(size=6)),
    ]  # fmt: skip


def _add_and_norm_mistakes(x, s, gamma, beta):
    def ln(a):
        return ref.layer_norm(a, gamma, beta)

    return [
        (ln(s), "the residual is missing: normalise x + sublayer_out, not sublayer_out alone."),
        (ln(x), "sublayer_out was left out: LayerNorm(x + sublayer_out)."),
        (x + s, "the sum is not normalised: LayerNorm(x + sublayer_out)."),
        (x + ln(s), "you normalised the sub-layer's output and then added x; post-norm adds first, then normalises: LayerNorm(x + sublayer_out)."),
        (ln(x) + s, "you normalised x and then added sublayer_out; post-norm adds first: LayerNorm(x + sublayer_out)."),
    ]  # fmt: skip


@_blame_parts
def _verify_add_and_norm(add_and_norm) -> str:
    for during, x, s, gamma, beta in _add_and_norm_cases():
        got = _array(
            "add_and_norm(...)", _run(add_and_norm, x, s, gamma, beta, during=during), during
        )
        expected = ref.layer_norm(x + s, gamma, beta)
        _compare(
            "add_and_norm(...)", got, expected, _add_and_norm_mistakes(x, s, gamma, beta), during
        )
    return "x1 = LayerNorm(x + attn): the residual keeps x, the norm keeps each row at mean 0, variance 1."


# 8.8 Feed-forward -------------------------------------------------------------------------------------


def _ffn_cases():
    g = _rng(7)
    p = _random_params(6, 10, seed=7)
    return [
        ("on the project's x1 and weights", PROJECT.x1, *(getattr(PROJECT_PARAMS, n) for n in ("w1", "b1", "w2", "b2"))),
        ("on x (4, 6) with d_ff = 10 and non-zero biases", g.normal(size=(4, 6)), p.w1, p.b1, p.w2, p.b2),
    ]  # fmt: skip


def _verify_feed_forward(feed_forward) -> str:
    relu = ref.relu
    for during, x, w1, b1, w2, b2 in _ffn_cases():
        got = _array(
            "feed_forward(...)", _run(feed_forward, x, w1, b1, w2, b2, during=during), during
        )
        h = x @ w1 + b1
        wrong = [
            (h @ w2 + b2, "the ReLU is missing: max(0, x W1 + b1) comes before the second layer (paper Eq. 2)."),
            (relu(relu(h) @ w2 + b2), "there is a ReLU on the output too: the FFN has one ReLU, between its two layers; its output may be negative."),
            (relu(h @ w2 + b2), "the ReLU is on the output; it belongs between the two layers: max(0, x W1 + b1) W2 + b2."),
            (relu(x @ w1) @ w2 + b2, "b1 is missing: max(0, x W1 + b1)."),
            (relu(h) @ w2, "b2 is missing: ... W2 + b2."),
            (relu(x @ w1) @ w2, "both biases are missing: max(0, x W1 + b1) W2 + b2."),
            ((relu(x @ w1) + b1) @ w2 + b2, "b1 was added after the ReLU; it goes inside: max(0, x W1 + b1)."),
        ]  # fmt: skip
        _compare("feed_forward(...)", got, ref.feed_forward(x, w1, b1, w2, b2), wrong, during)
    active = (PROJECT.hidden > 0).sum(axis=1)
    return (
        f"on the project's x1, {active.sum()} of {PROJECT.hidden.size} hidden units are active "
        f"({', '.join(map(str, active))} of {PROJECT.hidden.shape[1]} per token)."
    )


# 8.9 The encoder layer ------------------------------------------------------------------------------


def _encoder_cases():
    return [
        ('on "the cat sat" (seed 42)', PROJECT_EMBEDDINGS, PROJECT_PARAMS),
        ("on 5 tokens, d_model = 6, d_ff = 12, with non-zero biases, gammas and betas",
         0.5 * _rng(9).normal(size=(5, 6)), _random_params(6, 12, seed=9)),
    ]  # fmt: skip


def _encoder_mistakes(emb, p):
    pe = ref.positional_encoding(*emb.shape)

    def ln(a, n):
        return ref.layer_norm(a, *((p.gamma1, p.beta1) if n == 1 else (p.gamma2, p.beta2)))

    def attn(a):
        return ref.self_attention(a, p.w_q, p.w_k, p.w_v)[0]

    def ffn(a):
        return ref.feed_forward(a, p.w1, p.b1, p.w2, p.b2)

    def post(x, n1=1, n2=2, r1=1, r2=1):
        x1 = ln(r1 * x + attn(x), n1)
        return ln(r2 * x1 + ffn(x1), n2)

    x = emb + pe
    x1 = ln(x + attn(x), 1)
    pre1 = x + attn(ln(x, 1))
    return [
        (post(emb), "the positional encoding is missing: x = embeddings + encode_positions(T, d_model) comes first."),
        (post(x, r1=0), "the first residual is missing: x1 = LayerNorm(x + attention output), not LayerNorm(attention output)."),
        (post(x, r2=0), "the second residual is missing: out = LayerNorm(x1 + FFN(x1))."),
        (post(x, n1=2, n2=1), "the two LayerNorms' parameters are swapped: gamma1, beta1 go with attention, gamma2, beta2 with the FFN."),
        (post(x, n2=1), "both LayerNorms use gamma1 and beta1; the second uses gamma2 and beta2."),
        (ln(x1 + ffn(x), 2), "the FFN reads x; it reads x1, the output of the first Add & Norm."),
        (ln(x + ffn(x1), 2), "the second residual adds x; it adds x1, the input of the FFN sub-layer."),
        (x1, "this is x1, the output of the first Add & Norm: the FFN sub-layer is missing."),
        (x1 + ffn(x1), "the second LayerNorm is missing: out = LayerNorm(x1 + FFN(x1))."),
        (pre1 + ffn(ln(pre1, 2)), "this is the pre-norm order, x + Sublayer(LayerNorm(x)); the paper's post-norm adds, then normalises: LayerNorm(x + Sublayer(x))."),
    ]  # fmt: skip


def _encoder_output(encoder_layer, emb, p, during):
    result = _run(encoder_layer, emb, p, during=during)
    if isinstance(result, (tuple, list)):
        raise Mismatch(f"{during}, return only the output (shape (T, d_model)); your function returned a {type(result).__name__}.")  # fmt: skip
    return _array("encoder_layer(...)", result, during)


# 8.9 continued: PyTorch as the referee -------------------------------------------------------------------------


def _torch_output(layer, x: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return layer(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))[None])[0].numpy()


@_blame_parts
def _verify_encoder_layer(encoder_layer) -> str:
    for during, emb, p in _encoder_cases():
        got = _encoder_output(encoder_layer, emb, p, during)
        expected = ref.encoder_layer(emb, p).out
        _compare("encoder_layer(...)", got, expected, _encoder_mistakes(emb, p), during)
        x = emb + ref.positional_encoding(*emb.shape)
        ours, theirs = encoder_layers_from_numpy(p)
        for name, layer in (("course_lib EncoderLayer", ours), ("nn.TransformerEncoderLayer", theirs)):
            gap = np.abs(got - _torch_output(layer, x)).max()
            if not gap < 1e-8:  # agreeing with the numpy reference, it cannot get here
                raise Mismatch(f"{during}, your encoder differs from {name} by up to {gap:.3g}.")
    return (
        f'"the" comes out as {fmt(PROJECT.out[0])}, as in the reference output; '
        "course_lib.numpy_encoder, course_lib's EncoderLayer and nn.TransformerEncoderLayer, "
        "given the same weights, agree with yours to within 1e-8."
    )


def _muted(verify):
    """Typical mistakes are computed on purpose (overflow, 0/0): keep their warnings quiet."""

    def quiet(*answers):
        with np.errstate(all="ignore"):
            return verify(*answers)

    return quiet


EXERCISES = [
    Exercise("8.1", "Positional encoding", ("encode_positions",), _muted(_verify_positional_encoding), (
        "pos has shape (seq_len, 1) and 2i = np.arange(0, d_model, 2) has shape (1, d_model/2): broadcasting gives every angle at once.",
        "angle = pos / 10000 ** (2i / d_model); fill pe[:, 0::2] with np.sin(angle) and pe[:, 1::2] with np.cos(angle).",
    )),
    Exercise("8.2", "A numerically stable softmax", ("softmax",), _muted(_verify_softmax), (
        "softmax(x) = softmax(x - c) for any c, and exp(x - max) never exceeds 1.",
        "x.max(axis=-1, keepdims=True), then np.exp, then divide by .sum(axis=-1, keepdims=True).",
    )),
    Exercise("8.3", "Scaled dot-product attention", ("scaled_dot_product_attention",), _muted(_verify_attention), (
        "scores = q @ k.T has one row per query: shape (T_q, T_k).",
        "Divide by np.sqrt(d_k) with d_k = q.shape[-1], use your softmax, then weights @ v.",
    )),
    Exercise("8.4", "Single-head self-attention", ("self_attention",), _muted(_verify_self_attention), (
        "Q, K and V all come from the same x: Q = x @ w_q, and so on.",
        "Then return scaled_dot_product_attention(Q, K, V): the function of 8.3 does the rest.",
    )),
    Exercise("8.5", "Layer norm", ("layer_norm",), _muted(_verify_layer_norm), (
        "Each row (one position's vector) gets its own mean and variance: axis=-1, keepdims=True.",
        "x.var(axis=-1, keepdims=True) is the population variance; return gamma * (x - mean) / np.sqrt(var + eps) + beta.",
    )),
    Exercise("8.6", "Recall: why 0.99999 and not 1?", ("answer_8_6",), _RECALL, (
        "Where does eps enter the formula?",
        "Compute the variance of (x - μ)/√(σ² + ε) in terms of σ² and ε.",
    ), kind="choice"),
    Exercise("8.7", "Add & Norm", ("add_and_norm",), _muted(_verify_add_and_norm), (
        "Post-norm (the paper, §3.1): add first, then normalise.",
        "return layer_norm(x + sublayer_out, gamma, beta, eps)",
    )),
    Exercise("8.8", "The feed-forward network", ("feed_forward",), _muted(_verify_feed_forward), (
        "Two layers with a ReLU between them: (T, d_model) -> (T, d_ff) -> (T, d_model).",
        "np.maximum(0, x @ w1 + b1) @ w2 + b2",
    )),
    Exercise("8.9", "The encoder layer", ("encoder_layer",), _muted(_verify_encoder_layer), (
        "Follow the five steps: x = embeddings + PE; attention; Add & Norm; FFN; Add & Norm.",
        "The FFN reads x1, and the second Add & Norm adds x1 back: LayerNorm(x1 + FFN(x1)).",
    )),
]  # fmt: skip

_BY_ID = {e.id: e for e in EXERCISES}
