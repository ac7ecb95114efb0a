"""Checks for the project, a one-layer post-norm encoder in numpy (paper §3.1-§3.5): each runs
the learner's function on the project's inputs ("the cat sat", seed 42) and on inputs where the
typical mistakes differ; one that calls a project function failing its check is told to fix it.
"""

import functools
import itertools

import numpy as np
import torch

from .. import numpy_encoder as ref
from ..interop import encoder_layers_from_numpy
from ._core import (
    MISTAKE,
    NOT_DONE,
    TYPE,
    Mismatch,
    NotDone,
    call,
    declared,
    exercise,
    multiple_choice,
)
from ._mistakes import (
    array_pair,
    expect_array,
    expect_parameters,
    expect_returned,
    judge_each,
    keepdims_tip,
    output_mistakes,
    positional_mistakes,
    row_zero_off,
    stable_softmax_mistakes,
    weight_mistakes,
)
from ._norms import add_and_norm_mistakes, layer_norm_mistakes, layer_norm_part_off
from ._remote import closure_globals
from ._tensors import diagnose, fmt, match

ATOL = 1e-6  # float64 numpy code, judged to its precision
_STATE = np.random.get_state()  # project_inputs seeds the global RNG: leave it as it was
PROJECT_EMBEDDINGS, PROJECT_PARAMS = ref.project_inputs()  # seed 42, "the cat sat"
np.random.set_state(_STATE)
PROJECT = ref.encoder_layer(PROJECT_EMBEDDINGS, PROJECT_PARAMS)


_rng = np.random.default_rng  # the checks never touch the global numpy RNG


def _random_params(d: int, d_ff: int, seed: int) -> ref.EncoderParams:
    """Weights of any size (d = d_model), with non-zero biases and LayerNorm parameters."""
    g = _rng(seed)
    w_q, w_k, w_v, w1 = (ref.xavier_normal(d, n, rng=g) for n in (d, d, d, d_ff))
    b1, w2 = 0.2 * g.standard_normal(d_ff), ref.xavier_normal(d_ff, d, rng=g)
    near = (v + 0.2 * g.standard_normal(d) for v in (0.0, 1.0, 0.0, 1.0, 0.0))
    return ref.EncoderParams(w_q, w_k, w_v, w1, b1, w2, *near)  # b2, gamma1, beta1, gamma2, beta2


def _array(name: str, fn, *args, during: str, tip=keepdims_tip, pair=False):
    """The numpy array of floats (with ``pair``, the pair of them) that the learner's
    ``fn(*args)`` returns, run on copies of the arguments."""
    changed = f"{during}, your function changed its input in place (e.g. `x -= ...` or "
    changed += "`x[...] = ...`): compute a new array instead (`x = x - ...`)."
    result = expect_returned(name, call(fn, *args, during=during, tip=tip, in_place=changed))
    if pair:
        return array_pair(result, during)
    if type(result) is tuple:
        message = f"{during}, return only the output, one array; your function returned a tuple."
        raise Mismatch(message, TYPE)
    return expect_array(name, result, during)


def _judge_each(name, fn, cases, reference, mistakes, explain=None, tip=keepdims_tip) -> None:
    """``judge_each`` on the array the learner's numpy ``fn`` returns for each case."""

    def run(during, *args):
        return _array(name, fn, *args, during=during, tip=tip)

    judge_each(name, cases, run, reference, mistakes, explain, ATOL)


# Project functions that a learner's function calls ---------------------------------------------


def _project(verify):
    """The verifier, after the project functions the answer calls pass their own checks, with
    numpy's warnings quiet: the typical mistakes overflow and divide 0 by 0 on purpose."""

    @functools.wraps(verify)
    def checked(fn):
        _blame(_parts_used(fn))
        with np.errstate(all="ignore"):
            return verify(fn)

    return checked


def _parts() -> dict[str, object]:
    """Each project function's name -> the exercise that checks it, in exercise order."""
    return {e.names[0]: e for e in declared(__name__) if e.kind != "choice"}


def _parts_used(fn) -> dict[str, object]:
    """The project functions ``fn`` calls, directly or through one another, in exercise order."""
    parts, found, todo = _parts(), {}, [fn]
    while todo:
        for name, g in closure_globals(todo.pop()).items():
            if name in parts and name not in found and callable(g) and g is not fn:
                found[name] = g
                todo.append(g)
    return {name: found[name] for name in parts if name in found}


def _blame(used: dict[str, object]) -> None:
    """Raise for the parts ``used`` not written yet, else for those failing their own checks;
    a part failing only because it calls another failing part is left out (quoted once)."""
    results = {name: _parts()[name].run(part) for name, part in used.items()}
    unfinished = [f"`{n}` ({r.exercise})" for n, r in results.items() if r.status == NOT_DONE]
    if unfinished:
        those = "those exercises" if unfinished[1:] else "that exercise"
        listed = " and ".join(unfinished)
        raise NotDone(f"your function calls {listed}, not written yet: finish {those} first.")
    failing = {n: r for n, r in results.items() if not r.passed}
    roots = [(n, r) for n, r in failing.items() if not set(_parts_used(used[n])) & set(failing)]
    roots = roots or list(failing.items())
    if roots:
        names = " and ".join(f"`{n}` (check {r.exercise})" for n, r in roots)
        said = " ".join(f"Check {r.exercise} says: {r.message}" for _, r in roots)
        does, it = ("does", "it") if len(roots) == 1 else ("do", "them")
        message = f"your function calls {names}, which {does} not pass yet: fix {it} first."
        raise Mismatch(f"{message} {said}", MISTAKE)


# 8.1 Positional encoding -----------------------------------------------------------------------


def _pe(pos, d, trig=(np.sin, np.cos), exponent=None, start=0, base=1e4, times=False, **how):
    """The table made by a recipe, slips included: ``exponent(j, d)`` for column j (the
    paper's 2i/d_model), positions from ``start``, pos divided (or multiplied, ``times``) by
    base^exponent, in radians (or ``degrees``), ``trig`` filling the even and the odd columns
    (or the two halves, ``halves``)."""
    j = np.arange(d)[None]
    power = base ** (2 * (j // 2) / d if exponent is None else exponent(j, d))
    angle = (pos + start) * power if times else (pos + start) / power
    angle = np.radians(angle) if how.get("degrees") else angle
    even, odd = trig[0](angle[:, 0::2]), trig[1](angle[:, 1::2])
    if how.get("halves"):
        return np.hstack([even, odd])
    return np.stack([even, odd], -1).reshape(pos.shape[0], d)


_PE_SLIPS = [  # each slip as a change to the recipe; the shared family names it
    dict(trig=(np.cos, np.sin)), dict(halves=True), dict(trig=(np.sin, np.sin)),
    dict(exponent=lambda j, d: (j // 2) / d), dict(exponent=lambda j, d: j / d),
    dict(exponent=lambda j, d: 2 * j / d), dict(start=1), dict(base=1e3), dict(times=True),
    dict(degrees=True),
]  # fmt: skip


def _pe_mistakes(seq_len: int, d: int) -> list:
    """The table transposed, the shared slips, then every compound of two slips that change
    different parts of the recipe (sin and cos swapped and the exponent i/d_model, say), named
    by both messages."""
    pos, shape = np.arange(seq_len, dtype=np.float64)[:, None], (seq_len, d)
    transposed = f"the table should have shape {shape}; got {shape[::-1]}: transposed?"
    family = [(_pe(pos, d).T, transposed), *positional_mistakes(pos, d)]
    named = [(r, match(_pe(pos, d, **r), family)) for r in _PE_SLIPS]
    return family + [
        (_pe(pos, d, **a, **b), f"two slips at once. First, {m} Second, {n}")
        for (a, m), (b, n) in itertools.combinations(named, 2)
        if m and n and not set(a) & set(b)
    ]


def _pe_part_off(got, seq_len: int, d: int) -> str | None:
    """What a table that matches no slip gets wrong: NaN, or the row of position 0."""
    if not np.isfinite(got).all():
        return (
            "`pe` contains NaN or inf: a division by zero? pos is 0 in the first row and 2i "
            "is 0 in the first pair; the angle is pos / 10000 ** (2i / d_model)."
        )
    row = row_zero_off(got, d, atol=0.05)  # a near miss: say where, not what
    return row and f"{row}. Check which columns get sin and cos, and that the positions start at 0."


@exercise("8.1", "Positional encoding")
@_project
def positions(encode_positions) -> str:
    """Build every angle at once: a column of positions, shape (seq_len, 1), against a row of
    the even indices 2i, shape (1, d_model/2), broadcast to (seq_len, d_model/2).

    angle = pos / 10000 ** (2i / d_model); fill pe[:, 0::2] with np.sin(angle) and
    pe[:, 1::2] with np.cos(angle).
    """
    cases = [(f"for seq_len = {T}, d_model = {D}", T, D) for T, D in ((3, 8), (50, 16))]
    name, fn = "encode_positions(...)", encode_positions
    _judge_each(name, fn, cases, ref.positional_encoding, _pe_mistakes, _pe_part_off, _table_tip)
    row1 = ref.positional_encoding(3, 8)[1]
    return f"row 0 is [0, 1, 0, 1, 0, 1, 0, 1] and position 1 is {fmt(row1)}, at any size."


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

SOFTMAX_CASES = [  # the last: each row overflows with another shift (none, the minimum, the mean)
    ("on the project's scaled scores (3, 3)", PROJECT.scores),
    ("on a (2, 5) input", _rng(2).normal(size=(2, 5))),
    ("on large inputs [[1000, 1001, 1002, 1003], [-1000, -1003, -1001, -1002]]",
     np.array([[1000.0, 1001, 1002, 1003], [-1000.0, -1003, -1001, -1002]])),
    ("on rows spread over 1000, [[800, 1000, 1200], [-1000, 0, 100], [1000, 0, -1000]]",
     np.array([[800.0, 1000, 1200], [-1000.0, 0, 100], [1000.0, 0, -1000]])),
]  # fmt: skip


@exercise("8.2", "A numerically stable softmax")
@_project
def stable_softmax(softmax) -> str:
    """Subtracting the same number from every entry of a row leaves its softmax unchanged.
    Which number keeps every exponent at or below 0, so that no exponential overflows?

    x.max(axis=-1, keepdims=True), then np.exp, then divide by .sum(axis=-1, keepdims=True).
    """
    _judge_each("softmax(x)", softmax, SOFTMAX_CASES, ref.softmax, _softmax_mistakes, _overflowed)
    return "rows sum to 1 on every shape, and e^1000 never appears: the row maximum cancels."


def _overflowed(got, x) -> str | None:
    overflowed = "your softmax gives NaN or inf: an exponential overflowed (e^1000 = inf, inf/inf "
    overflowed += "= NaN) or all of a row's underflowed (0/0). Subtract each row's maximum, "
    overflowed += "x.max(axis=-1, keepdims=True): every exponent is then ≤ 0, and the largest is "
    return None if np.isfinite(got).all() else overflowed + "e^0 = 1."


def _softmax_mistakes(x) -> list:
    """The shared slips of a softmax by hand, a shift by the row's minimum or mean (each
    overflows), and a sum without keepdims (silent on a square input)."""
    overflow = "so the largest entry's exponential overflows (e^1000 = inf, inf/inf = NaN). "
    overflow += "Subtract each row's maximum, x.max(axis=-1, keepdims=True): every exponent is "
    slips, e = stable_softmax_mistakes(x), np.exp(x - x.max(axis=-1, keepdims=True))
    for name, shift in (("minimum", x.min), ("mean", x.mean)):
        shifted = np.exp(x - shift(axis=-1, keepdims=True))
        said = f"you subtracted each row's {name}, {overflow}then ≤ 0."
        slips.append((shifted / shifted.sum(-1, keepdims=True), said))
    without = "without keepdims=True on the sum, the row sums (shape (n,)) line up with the "
    without += "columns instead of the rows: .sum(axis=-1, keepdims=True)."
    if x.shape[0] == x.shape[1]:  # without keepdims a square input broadcasts silently
        slips.append((e / e.sum(axis=-1), without))
    return slips


# 8.3 Scaled dot-product attention --------------------------------------------------------------

ATTENTION_CASES = [
    ("on q (2, 5), k (4, 5), v (4, 3)",
     *(_rng(3).normal(size=s) for s in ((2, 5), (4, 5), (4, 3)))),
    ("on the project's Q, K, V", PROJECT.q, PROJECT.k, PROJECT.v),
    ("on lesson 3's worked example", np.array([[1.0, 0], [0, 1], [1, 1]]),
     np.array([[1.0, 0], [0, 1], [0.5, 0.5]]), np.array([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]])),
]  # fmt: skip


def _attention(name: str, fn, cases, projected=lambda q, k, v: (q, k, v, [], [], None)):
    """Judge the pair (output, weights) that ``fn`` returns for each case ``(during, *args)``:
    the attention of q, k and v from ``projected(*args)``, with the typical mistakes of the
    weights and the output, and d_x, the width of x, one more width to scale by."""
    for during, *args in cases:
        q, k, v, weights, outputs, d_x = projected(*args)
        out, got_w = _array(name, fn, *args, during=during, pair=True)
        scores, d_k = q @ k.T, q.shape[1]
        expected_w = ref.softmax(scores / np.sqrt(d_k))  # (T_q, T_k)
        widths = [(v.shape[1], "d_v, the width of the values"), (k.shape[0], "the number of keys")]
        widths += [(d_x, "d_model, the width of x"), (8, "the project's D_MODEL, a fixed number")]
        swapped = (expected_w @ v, "the pair came back swapped: return (output, weights).")
        by_keys = f"the weights have shape (T_k, T_q) = {scores.T.shape}: use q @ k.T, not k @ q.T."
        wrong = [*weights, swapped, (ref.softmax(scores.T / np.sqrt(d_k)), by_keys)]
        wrong += weight_mistakes(scores, d_k, scaled_by=widths)
        diagnose("weights", got_w, expected_w, wrong, ATOL, during=during)
        wrong = [*outputs, *output_mistakes(scores / np.sqrt(d_k), v)]
        diagnose("output", out, expected_w @ v, wrong, ATOL, during=during)
    return out, got_w


@exercise("8.3", "Scaled dot-product attention")
@_project
def attention(scaled_dot_product_attention) -> str:
    """The scores have one row per query and one column per key, shape (T_q, T_k): which
    product of q and k gives that?

    scores = q @ k.T / np.sqrt(d_k) with d_k = q.shape[-1]; weights = softmax(scores); return
    weights @ v and the weights.
    """
    name, fn = "scaled_dot_product_attention(...)", scaled_dot_product_attention
    out, weights = _attention(name, fn, ATTENTION_CASES)
    return (
        "T_q ≠ T_k and d_k ≠ d_v work too; on lesson 3's example "
        f'"the" gets weights {fmt(weights[0])} and output {fmt(out[0])}.'
    )


# 8.4 Single-head self-attention ----------------------------------------------------------------


@exercise("8.4", "Single-head self-attention")
@_project
def single_head(self_attention) -> str:
    """Q, K and V are three projections of the same x, one weight matrix each; 8.3 does the
    rest.

    Q = x @ w_q, K = x @ w_k, V = x @ w_v; then return scaled_dot_product_attention(Q, K, V).
    """
    g, p = _rng(4), PROJECT_PARAMS
    cases = [
        ("on the project's x and weights", PROJECT.x, p.w_q, p.w_k, p.w_v),
        ("on x (4, 6), w_q and w_k (6, 3), w_v (6, 5)",
         g.normal(size=(4, 6)), *(ref.xavier_normal(6, n, rng=g) for n in (3, 3, 5))),
    ]  # fmt: skip
    _attention("self_attention(...)", self_attention, cases, _projected)
    return f'with the project\'s weights, "the" attends {fmt(PROJECT.weights[0])} to the, cat, sat.'


def _projected(x, w_q, w_k, w_v) -> tuple:
    """Q, K and V, the weights and the outputs of self-attention with its projections mixed
    up, and d_model."""
    q, k, root = x @ w_q, x @ w_k, np.sqrt(w_q.shape[1])

    def attend(a, b):
        return ref.softmax(a @ b.T / root)

    square = w_q.shape[0] == w_q.shape[1]  # transposing needs square projections
    weights = [
        (attend(k, q), "W_Q and W_K are swapped: the queries are x @ w_q, the keys x @ w_k."),
        (attend(x, x), "the queries and keys are x itself: project them first, Q = x @ w_q "
         "and K = x @ w_k."),
        *([(attend(x @ w_q.T, x @ w_k.T), "you used the transposed matrices: positions are "
            "rows here, so Q = x @ w_q, no .T.")] if square else []),
    ]  # fmt: skip
    outputs = [(attend(q, k) @ k, "the values use W_K: V = x @ w_v.")]
    return q, k, x @ w_v, weights, outputs, x.shape[1]


# 8.5 Layer norm --------------------------------------------------------------------------------


@exercise("8.5", "Layer norm")
@_project
def normalisation(layer_norm) -> str:
    """Each row (one position's vector) gets its own mean and variance, over the last axis,
    kept as an axis of size 1 so that they broadcast against x.

    x.var(axis=-1, keepdims=True) is the population variance; return gamma * (x - mean) /
    np.sqrt(var + eps) + beta.
    """
    g = _rng(5)
    rows = 2 + 3 * g.normal(size=6), g.normal(size=6), np.full(6, 5.0), 1 + 0.002 * g.normal(size=6)
    cases = [  # the constant and nearly constant rows first: they tell the ε mistakes apart
        ("on a (4, 6) input with a constant row, random gamma and beta",
         np.stack(rows), 1 + 0.3 * g.normal(size=6), 0.3 * g.normal(size=6), 1e-5),
        ("on x + attn of the project (3, 8)",
         PROJECT.x + PROJECT.attn, np.ones(8), np.zeros(8), 1e-5),
        ("with eps = 0.1 on a (2, 4) input", g.normal(size=(2, 4)), np.ones(4), np.zeros(4), 0.1),
    ]  # fmt: skip
    takes = "layer_norm must take eps as its fourth argument: def layer_norm(x, gamma, beta, "
    expect_parameters(layer_norm, f"{takes}eps=1e-5).", *cases[-1][1:])
    how = (ref.layer_norm, layer_norm_mistakes, layer_norm_part_off)
    _judge_each("layer_norm(x)", layer_norm, cases, *how)
    x1 = PROJECT.x1
    return (
        f"each row of x1 has mean {abs(x1.mean(axis=1)).max():.4f} and variance "
        f"{x1.var(axis=1).min():.4f}; a constant row comes out as beta, not NaN."
    )


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
@_project
def residual(add_and_norm) -> str:
    """Post-norm (the paper, §3.1): add first, then normalise.

    return layer_norm(x + sublayer_out, gamma, beta, eps)
    """
    g, p = _rng(6), PROJECT_PARAMS
    x, s = g.normal(size=(4, 6)), g.normal(size=(4, 6))
    s[2] = 0.5 - x[2] + 0.003 * g.normal(size=6)  # x + s nearly constant: variance near ε
    cases = [  # (during, x, sublayer_out, gamma, beta[, eps]): without eps, the default
        ("on the project's x and attn", PROJECT.x, PROJECT.attn, p.gamma1, p.beta1),
        ("on (4, 6) inputs with random gamma and beta, where row 2 of x + sublayer_out has a "
         "variance near ε", x, s, 1 + 0.3 * g.normal(size=6), 0.3 * g.normal(size=6)),
        ("with eps = 0.1 on (2, 4) inputs", g.normal(size=(2, 4)), g.normal(size=(2, 4)),
         1 + 0.3 * g.normal(size=4), 0.3 * g.normal(size=4), 0.1),
    ]  # fmt: skip
    takes = "add_and_norm must take eps as its fifth argument: def add_and_norm(x, sublayer_out, "
    expect_parameters(add_and_norm, f"{takes}gamma, beta, eps=1e-5).", *cases[-1][1:])
    how = (ref.add_and_norm, _add_and_norm_mistakes, _add_and_norm_off)
    _judge_each("add_and_norm(...)", add_and_norm, cases, *how)
    return (
        "x1 = LayerNorm(x + attn): the residual keeps x, the norm keeps each row at mean 0, "
        "variance 1."
    )


def _add_and_norm_mistakes(x, s, gamma, beta, eps=1e-5) -> list:
    """The shared slips of Add & Norm, ε the default or missing, the sub-layer's output
    subtracted, then the slips of the layer norm of x + s."""
    norm = functools.partial(ref.layer_norm, gamma=gamma, beta=beta, eps=eps)
    return [
        *add_and_norm_mistakes(x, s, norm),
        *([(ref.layer_norm(x + s, gamma, beta), f"called with eps = {eps}, your function used "
            "ε = 1e-5: pass eps on, layer_norm(x + sublayer_out, gamma, beta, eps).")]
          if eps != 1e-5 else []),
        (ref.layer_norm(x + s, gamma, beta, 0.0), "ε is missing: normalise with √(σ² + ε), which "
         "keeps a row whose variance is near 0 from blowing up: layer_norm(x + sublayer_out, "
         "gamma, beta, eps)."),
        (norm(x - s), "you subtracted sublayer_out: the residual adds it, "
         "LayerNorm(x + sublayer_out)."),
        *layer_norm_mistakes(x + s, gamma, beta, eps),
    ]  # fmt: skip


def _add_and_norm_off(got, x, s, gamma, beta, eps=1e-5) -> str | None:
    return layer_norm_part_off(got, x + s, gamma, beta, eps)


# 8.8 Feed-forward ------------------------------------------------------------------------------


@exercise("8.8", "The feed-forward network")
@_project
def ffn(feed_forward) -> str:
    """Two layers with a ReLU between them: (T, d_model) -> (T, d_ff) -> (T, d_model).

    np.maximum(0, x @ w1 + b1) @ w2 + b2
    """
    g, p, q = _rng(7), _random_params(6, 10, seed=7), PROJECT_PARAMS
    cases = [
        ("on the project's x1 and weights", PROJECT.x1, q.w1, q.b1, q.w2, q.b2),
        ("on x (4, 6) with d_ff = 10 and non-zero biases",
         g.normal(size=(4, 6)), p.w1, p.b1, p.w2, p.b2),
    ]  # fmt: skip
    _judge_each("feed_forward(...)", feed_forward, cases, ref.feed_forward, _ffn_mistakes)
    active = (PROJECT.hidden > 0).sum(axis=1)
    return (
        f"on the project's x1, {active.sum()} of {PROJECT.hidden.size} hidden units are active "
        f"({', '.join(map(str, active))} of {PROJECT.hidden.shape[1]} per token)."
    )


def _ffn_mistakes(x, w1, b1, w2, b2) -> list:
    relu, h, inside = ref.relu, x @ w1 + b1, "max(0, x W1 + b1)"
    return [
        (h @ w2 + b2, f"the ReLU is missing: {inside} comes before the second layer (paper "
         "Eq. 2)."),
        (relu(relu(h) @ w2 + b2), "there is a ReLU on the output too: the FFN has one ReLU, "
         "between its two layers; its output may be negative."),
        (relu(h @ w2 + b2), "the ReLU is on the output; it belongs between the two layers: "
         f"{inside} W2 + b2."),
        (relu(x @ w1) @ w2 + b2, f"b1 is missing: {inside}."),
        (relu(h) @ w2, "b2 is missing: ... W2 + b2."),
        (relu(x @ w1) @ w2, f"both biases are missing: {inside} W2 + b2."),
        ((relu(x @ w1) + b1) @ w2 + b2, f"b1 was added after the ReLU; it goes inside: {inside}."),
    ]  # fmt: skip


# 8.9 The encoder layer, with PyTorch as the referee --------------------------------------------


@exercise("8.9", "The encoder layer")
@_project
def encoder(encoder_layer) -> str:
    """Follow the five steps: x = embeddings + PE; attention; Add & Norm; FFN; Add & Norm.

    The FFN reads x1, and the second Add & Norm adds x1 back: LayerNorm(x1 + FFN(x1)).
    """
    cases = [
        ('on "the cat sat" (seed 42)', PROJECT_EMBEDDINGS, PROJECT_PARAMS),
        ("on 5 tokens, d_model = 6, d_ff = 12, with non-zero biases, gammas and betas",
         0.5 * _rng(9).normal(size=(5, 6)), _random_params(6, 12, seed=9)),
    ]  # fmt: skip
    read = _globals_read(encoder_layer)
    fails = read and (lambda got: f"your encoder_layer fails. {read}")
    for during, emb, p in cases:
        got = _array("encoder_layer(...)", encoder_layer, emb, p, during=during, tip=read)
        expected, wrong = ref.encoder_layer(emb, p).out, _encoder_mistakes(emb, p)
        diagnose("encoder_layer(...)", got, expected, wrong, ATOL, during=during, explain=fails)
        x = torch.from_numpy(np.ascontiguousarray(emb + ref.positional_encoding(*emb.shape)))
        for layer in encoder_layers_from_numpy(p):  # PyTorch as the referee
            theirs, against = layer(x[None])[0], f"{during}, against {type(layer).__name__}"
            diagnose("encoder_layer(...)", got, theirs, atol=1e-8, during=against)
    return (
        f'"the" comes out as {fmt(PROJECT.out[0])}, as in the reference output; '
        "course_lib.numpy_encoder, course_lib's EncoderLayer and nn.TransformerEncoderLayer, "
        "given the same weights, agree with yours to within 1e-8."
    )


def _globals_read(fn) -> str | None:
    """The message if ``fn`` reads arrays, weights or sizes from the notebook's globals
    (W_Q, gamma1, x1, params, D_MODEL, ...) instead of its arguments, else None."""
    kinds = np.ndarray | ref.EncoderParams | int | np.integer
    read = [
        f"`{n}`"
        for n, v in closure_globals(fn).items()
        if isinstance(v, kinds) and not isinstance(v, bool)
    ]
    if not read:
        return None
    return (
        f"Your encoder_layer reads the notebook's {' and '.join(read)} instead of its "
        "arguments: take every weight from `params` (params.w_q, ..., params.beta2) and the "
        "sizes from embeddings.shape; the check also calls it with other weights and sizes."
    )


def _encoder_mistakes(emb, p) -> list:
    ffn = functools.partial(ref.feed_forward, w1=p.w1, b1=p.b1, w2=p.w2, b2=p.b2)
    norm1 = functools.partial(ref.layer_norm, gamma=p.gamma1, beta=p.beta1)
    norm2 = functools.partial(ref.layer_norm, gamma=p.gamma2, beta=p.beta2)
    x = emb + ref.positional_encoding(*emb.shape)
    w = p.w_q, p.w_k, p.w_v
    attn, on_emb, on_norm = (ref.self_attention(a, *w)[0] for a in (x, emb, norm1(x)))
    x1, no_pe, no_res = norm1(x + attn), norm1(emb + on_emb), norm1(attn)
    swapped, pre1 = norm2(x + attn), x + on_norm
    return [
        (norm2(no_pe + ffn(no_pe)), "the positional encoding is missing: x = embeddings + "
         "encode_positions(T, d_model) comes first."),
        (norm2(no_res + ffn(no_res)), "the first residual is missing: x1 = LayerNorm(x + "
         "attention output), not LayerNorm(attention output)."),
        (norm2(ffn(x1)), "the second residual is missing: out = LayerNorm(x1 + FFN(x1))."),
        (norm1(swapped + ffn(swapped)), "the two LayerNorms' parameters are swapped: gamma1, "
         "beta1 go with attention, gamma2, beta2 with the FFN."),
        (norm1(x1 + ffn(x1)), "both LayerNorms use gamma1 and beta1; the second uses gamma2 "
         "and beta2."),
        (norm2(x1 + ffn(x)), "the FFN reads x; it reads x1, the output of the first Add & Norm."),
        (norm2(x + ffn(x1)), "the second residual adds x; it adds x1, the input of the FFN "
         "sub-layer."),
        (x1, "this is x1, the output of the first Add & Norm: the FFN sub-layer is missing."),
        (x1 + ffn(x1), "the second LayerNorm is missing: out = LayerNorm(x1 + FFN(x1))."),
        (pre1 + ffn(norm2(pre1)), "this is the pre-norm order, x + Sublayer(LayerNorm(x)); the "
         "paper's post-norm adds, then normalises: LayerNorm(x + Sublayer(x))."),
    ]  # fmt: skip
