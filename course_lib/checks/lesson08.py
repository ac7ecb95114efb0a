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
import inspect

import numpy as np
import torch

from .. import numpy_encoder as ref
from ..interop import encoder_layers_from_numpy
from ._core import FAILED, NOT_DONE, Mismatch, NotDone, call, declared, exercise, multiple_choice
from ._mistakes import (
    add_and_norm_mistakes,
    array_pair,
    expect_array,
    keepdims_tip,
    layer_norm_mistakes,
    output_mistakes,
    positional_mistakes,
    stable_softmax_mistakes,
    weight_mistakes,
)
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
    return expect_array(name, _run(fn, *args, during=during), during)


def _compare(name, got, expected, wrong, during, atol=1e-6) -> None:
    """``diagnose``, after a shape check that suspects a transposed result."""
    if got.shape != expected.shape:
        transposed = ": transposed?" if got.shape == expected.shape[::-1] else "."
        raise Mismatch(
            f"{during}, `{name}` should have shape {expected.shape}; got {got.shape}{transposed}"
        )
    diagnose(name, got, expected, wrong, atol=atol, during=during)


def _attention(result, q, k, v, during, weights=(), outputs=(), d_model=None):
    """The pair (output, weights) returned for ``q``, ``k``, ``v``, if it is the reference's.

    ``weights`` and ``outputs`` are typical mistakes of the caller, tried before the shared
    ones; ``d_model``, the width of x, is one more wrong width to scale by.
    """
    out, got_weights = array_pair(result, during)
    scores, d_k = q @ k.T, q.shape[1]
    expected_w = ref.softmax(scores / np.sqrt(d_k))  # (T_q, T_k)
    expected_out = expected_w @ v  # (T_q, d_v)
    if out.shape == expected_w.shape != got_weights.shape == expected_out.shape:
        raise Mismatch(f"{during}, the pair came back swapped: return (output, weights).")
    if got_weights.shape == expected_w.shape[::-1] != expected_w.shape:
        raise Mismatch(
            f"{during}, the weights have shape (T_k, T_q) = {got_weights.shape}: "
            "compute q @ k.T, not k @ q.T."
        )
    widths = (
        (v.shape[1], "d_v, the width of the values"),
        (k.shape[0], "the number of keys"),
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
    """``_quiet(verify)`` that, on failure, first reports the project functions the answer
    calls that are not written yet or fail their own checks."""

    @functools.wraps(verify)
    def checked(fn):
        try:
            return _quiet(verify)(fn)
        except (NotDone, Mismatch):
            _blame(_parts_used(fn))
            raise

    return checked


def _parts_used(fn) -> dict[str, object]:
    """The project functions ``fn`` calls, directly or through one another, in exercise order."""
    found, todo = {}, [fn]
    while todo:
        try:
            names = inspect.getclosurevars(todo.pop()).globals
        except (TypeError, ValueError):
            continue
        for name, g in names.items():
            if name in _PARTS and name not in found and callable(g) and g is not fn:
                found[name] = g
                todo.append(g)
    return {name: found[name] for name in _PARTS if name in found}


def _blame(parts: dict[str, object]) -> None:
    """Raise for the ``parts`` (name -> function) not written yet, else for those that fail."""
    checks = {e.id: e for e in declared(__name__)}
    results = {name: checks[_PARTS[name]].run(part) for name, part in parts.items()}
    unfinished = [f"`{n}` ({r.exercise})" for n, r in results.items() if r.status == NOT_DONE]
    if unfinished:
        those = "that exercise" if len(unfinished) == 1 else "those exercises"
        raise NotDone(
            f"your function calls {' and '.join(unfinished)}, not written yet: "
            f"finish {those} first."
        ) from None
    failing = [(n, r) for n, r in results.items() if r.status == FAILED]
    if failing:
        names = " and ".join(f"`{n}` (check {r.exercise})" for n, r in failing)
        said = " ".join(f"Check {r.exercise} says: {r.message}" for _, r in failing)
        does, it = ("does", "it") if len(failing) == 1 else ("do", "them")
        raise Mismatch(
            f"your function calls {names}, which {does} not pass yet: fix {it} first. {said}"
        ) from None


# 8.1 Positional encoding -----------------------------------------------------------------------


@exercise("8.1", "Positional encoding")
@_quiet
def positions(encode_positions) -> str:
    """pos has shape (seq_len, 1) and 2i = np.arange(0, d_model, 2) has shape (1, d_model/2):
    broadcasting gives every angle at once.

    angle = pos / 10000 ** (2i / d_model); fill pe[:, 0::2] with np.sin(angle) and
    pe[:, 1::2] with np.cos(angle).
    """
    for T, D in ((3, 8), (50, 16)):
        during = f"for seq_len = {T}, d_model = {D}"
        got = _array("pe", encode_positions, T, D, during=during)
        wrong = positional_mistakes(np.arange(T, dtype=np.float64)[:, None], D)
        _compare("pe", got, ref.positional_encoding(T, D), wrong, during)
    row1 = ref.positional_encoding(3, 8)[1]
    return f"row 0 is [0, 1, 0, 1, 0, 1, 0, 1] and position 1 is {fmt(row1)}, at any size."


# 8.2 Softmax -----------------------------------------------------------------------------------

SOFTMAX_CASES = [
    ("on the project's scaled scores (3, 3)", PROJECT.scores),
    ("on a (2, 5) input", _rng(2).normal(size=(2, 5))),
    (
        "on large inputs [[1000, 1001, 1002, 1003], [-1000, -1003, -1001, -1002]]",
        np.array([[1000.0, 1001, 1002, 1003], [-1000.0, -1003, -1001, -1002]]),
    ),
]


@exercise("8.2", "A numerically stable softmax")
@_quiet
def stable_softmax(softmax) -> str:
    """softmax(x) = softmax(x - c) for any c, and exp(x - max) never exceeds 1.

    x.max(axis=-1, keepdims=True), then np.exp, then divide by .sum(axis=-1, keepdims=True).
    """
    for during, x in SOFTMAX_CASES:
        got = _array("softmax(x)", softmax, x, during=during)
        _compare("softmax(x)", got, ref.softmax(x), stable_softmax_mistakes(x), during)
    return "rows sum to 1 on every shape, and e^1000 never appears: the row maximum cancels."


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
    """scores = q @ k.T has one row per query: shape (T_q, T_k).

    Divide by np.sqrt(d_k) with d_k = q.shape[-1], use your softmax, then weights @ v.
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
    """Q, K and V all come from the same x: Q = x @ w_q, and so on.

    Then return scaled_dot_product_attention(Q, K, V): the function of 8.3 does the rest.
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
    """Each row (one position's vector) gets its own mean and variance: axis=-1,
    keepdims=True.

    x.var(axis=-1, keepdims=True) is the population variance; return gamma * (x - mean) /
    np.sqrt(var + eps) + beta.
    """
    for during, x, gamma, beta, eps in _layer_norm_cases():
        got = _array("layer_norm(x)", layer_norm, x, gamma, beta, eps, during=during)
        expected = ref.layer_norm(x, gamma, beta, eps)
        wrong = layer_norm_mistakes(x, gamma, beta, eps)
        _compare("layer_norm(x)", got, expected, wrong, during)
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
    for during, x, s, gamma, beta in _add_and_norm_cases():
        got = _array("add_and_norm(...)", add_and_norm, x, s, gamma, beta, during=during)
        norm = functools.partial(ref.layer_norm, gamma=gamma, beta=beta)
        expected, wrong = norm(x + s), add_and_norm_mistakes(x, s, norm)
        _compare("add_and_norm(...)", got, expected, wrong, during)
    return (
        "x1 = LayerNorm(x + attn): the residual keeps x, the norm keeps each row at mean 0, "
        "variance 1."
    )


def _add_and_norm_cases() -> list:
    g = _rng(6)
    p = PROJECT_PARAMS
    return [
        ("on the project's x and attn", PROJECT.x, PROJECT.attn, p.gamma1, p.beta1),
        (
            "on (4, 6) inputs with random gamma and beta",
            *(g.normal(size=(4, 6)), g.normal(size=(4, 6))),
            *(1 + 0.3 * g.normal(size=6), 0.3 * g.normal(size=6)),
        ),
    ]


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
        result = _run(encoder_layer, emb, p, during=during)
        if isinstance(result, (tuple, list)):
            raise Mismatch(
                f"{during}, return only the output (shape (T, d_model)); your function returned "
                f"a {type(result).__name__}."
            )
        got = expect_array("encoder_layer(...)", result, during)
        expected = ref.encoder_layer(emb, p).out
        _compare("encoder_layer(...)", got, expected, _encoder_mistakes(emb, p), during)
        x = emb + ref.positional_encoding(*emb.shape)
        ours, theirs = encoder_layers_from_numpy(p)
        for name, layer in (
            ("course_lib EncoderLayer", ours),
            ("nn.TransformerEncoderLayer", theirs),
        ):
            gap = np.abs(got - _torch_output(layer, x)).max()
            if not gap < 1e-8:  # agreeing with the numpy reference, it cannot get here
                raise Mismatch(f"{during}, your encoder differs from {name} by up to {gap:.3g}.")
    return (
        f'"the" comes out as {fmt(PROJECT.out[0])}, as in the reference output; '
        "course_lib.numpy_encoder, course_lib's EncoderLayer and nn.TransformerEncoderLayer, "
        "given the same weights, agree with yours to within 1e-8."
    )


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
