"""Tests of the project's checks (``course_lib/checks/lesson08.py``).

For every exercise: the reference answer and equally valid variants pass, typical mistakes fail
with the right diagnosis, and a function that calls an unfinished or wrong project function is
told to fix that one first. Answers are written the way a learner would write them, in numpy.
The lesson's own stubs are tested in ``test_checks_stubs.py``.
"""

import numpy as np
import pytest
import torch
from typical_answers import forgets_return

from course_lib import numpy_encoder as ref
from course_lib.checks import FAILED, NOT_DONE, PASSED, check, exercises
from course_lib.checks._core import DIFFERENCE, EXCEPTION, MISTAKE, SHAPE, TYPE

# Right answers, written out as a learner would ------------------------------------------------


def encode_positions(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]  # (T, 1)
    two_i = np.arange(0, d_model, 2)[None, :]  # (1, D/2)
    angle = pos / 10000 ** (two_i / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


def encode_positions_loops(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for i in range(d_model // 2):
            pe[pos, 2 * i] = np.sin(pos / 10000 ** (2 * i / d_model))
            pe[pos, 2 * i + 1] = np.cos(pos / 10000 ** (2 * i / d_model))
    return pe


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ k.T / np.sqrt(q.shape[-1]))  # (T_q, T_k)
    return weights @ v, weights


def self_attention(x, w_q, w_k, w_v):
    return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)


def layer_norm(x, gamma, beta, eps=1e-5):
    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5):
    return layer_norm(x + sublayer_out, gamma, beta, eps)


def feed_forward(x, w1, b1, w2, b2):
    return np.maximum(0, x @ w1 + b1) @ w2 + b2


def encoder_layer(embeddings, params):
    p = params
    x = embeddings + encode_positions(*embeddings.shape)
    attn, _ = self_attention(x, p.w_q, p.w_k, p.w_v)
    x1 = add_and_norm(x, attn, p.gamma1, p.beta1)
    return add_and_norm(x1, feed_forward(x1, p.w1, p.b1, p.w2, p.b2), p.gamma2, p.beta2)


RIGHT = [
    pytest.param("8.1", encode_positions, id="8.1"),
    pytest.param("8.1", encode_positions_loops, id="8.1-loops"),
    pytest.param("8.1", ref.positional_encoding, id="8.1-course_lib"),
    pytest.param("8.2", softmax, id="8.2"),
    pytest.param("8.2", lambda x: ref.softmax(x, axis=1), id="8.2-axis-1"),
    pytest.param("8.3", scaled_dot_product_attention, id="8.3"),
    pytest.param("8.4", self_attention, id="8.4"),
    pytest.param("8.4", lambda x, q, k, v: ref.self_attention(x, q, k, v), id="8.4-course_lib"),
    pytest.param("8.5", layer_norm, id="8.5"),
    pytest.param(
        "8.5",
        lambda x, g, b, eps=1e-5: (
            g * (x - x.mean(1)[:, None]) / (x.var(1)[:, None] + eps) ** 0.5 + b
        ),
        id="8.5-indexing",
    ),
    pytest.param("8.6", "b", id="8.6"),
    pytest.param("8.6", "(B)", id="8.6-capital"),
    pytest.param("8.7", add_and_norm, id="8.7"),
    pytest.param("8.8", feed_forward, id="8.8"),
    pytest.param("8.8", lambda x, w1, b1, w2, b2: ref.relu(x @ w1 + b1) @ w2 + b2, id="8.8-relu"),
    pytest.param("8.9", encoder_layer, id="8.9"),
    pytest.param("8.9", lambda e, p: ref.encoder_layer(e, p).out, id="8.9-course_lib"),
]


@pytest.mark.parametrize("exercise_id, answer", RIGHT)
def test_right_answers_pass(exercise_id, answer):
    result = check(exercise_id, answer)
    assert result.status == PASSED, result.message


def test_every_exercise_has_a_right_answer_above():
    assert {p.values[0] for p in RIGHT} == {e.id for e in exercises(8)}


@pytest.mark.parametrize(
    "exercise_id, words",
    [
        ("8.1", "position 1 is [0.841 0.540 0.100 0.995 0.010 1.000 0.001 1.000]"),  # lesson 5
        ("8.3", '"the" gets weights [0.456 0.225 0.320] and output [0.385 0.615]'),  # lesson 3
        ("8.4", '"the" attends [0.373 0.367 0.260]'),  # the reference output
        (
            "8.8",
            "45 of 96 hidden units are active (13, 16, 16 of 32 per token)",
        ),  # the reference output
        (
            "8.9",
            "[-1.655  1.738 -0.143  1.091 -0.133 -0.494 -0.788  0.384]",
        ),  # the reference output
    ],
)
def test_success_messages_carry_the_reference_numbers(exercise_id, words):
    answer = next(p.values[1] for p in RIGHT if p.values[0] == exercise_id)
    assert words in check(exercise_id, answer).message


def test_importing_the_checks_leaves_the_global_rng_alone():
    import importlib

    import course_lib.checks.lesson08 as lesson08

    np.random.seed(123)
    expected = np.random.rand()
    np.random.seed(123)
    importlib.reload(lesson08)
    assert np.random.rand() == expected


def _stub(*args, **kwargs):
    raise NotImplementedError()


# Typical mistakes fail with the right diagnosis --------------------------------------------------


def pe_with(fill):
    def pe(seq_len, d_model):
        pos, two_i = np.arange(seq_len)[:, None], np.arange(0, d_model, 2)[None, :]
        return fill(pos, two_i, d_model)

    return pe


def interleaved(a, b):
    pe = np.zeros((a.shape[0], 2 * a.shape[1]))
    pe[:, 0::2], pe[:, 1::2] = a, b
    return pe


def pe_exponent_per_column(seq_len, d_model):
    angle = np.arange(seq_len)[:, None] / 10000 ** (np.arange(d_model)[None] / d_model)
    pe = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, 1::2])
    return pe


def pe_int_dtype(seq_len, d_model):
    pe = np.zeros((seq_len, d_model), dtype=int)
    pe[:] = encode_positions(seq_len, d_model)
    return pe


def naive_softmax(x):
    return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)


def softmax_global_max(x):
    e = np.exp(x - np.max(x))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_in_place(x):
    x -= x.max(axis=-1, keepdims=True)
    return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)


def softmax_without_keepdims(x):
    e = np.exp(x - x.max(axis=-1))
    return e / e.sum(axis=-1)


def attention_with(scale=None, axis=-1, swap=False):
    def attn(q, k, v):
        s = q @ k.T / (np.sqrt(q.shape[-1]) if scale is None else scale(q, k, v))
        e = np.exp(s - s.max(axis=axis, keepdims=True))
        w = e / e.sum(axis=axis, keepdims=True)
        return (w, w @ v) if swap else (w @ v, w)

    return attn


def self_attention_scaled_by_d_model(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    w = softmax(q @ k.T / np.sqrt(x.shape[1]))
    return w @ v, w


def layer_norm_with(mean_var):
    def ln(x, gamma, beta, eps=1e-5):
        mean, var = mean_var(x)
        return gamma * (x - mean) / np.sqrt(var + eps) + beta

    return ln


def layer_norm_torch(x, gamma, beta, eps=1e-5):
    return torch.nn.functional.layer_norm(
        torch.as_tensor(x), x.shape[-1:], torch.as_tensor(gamma), torch.as_tensor(beta), eps
    )


def ffn_with(make):
    return lambda x, w1, b1, w2, b2: make(x, w1, b1, w2, b2, lambda h: np.maximum(h, 0))


def encoder_with(**changes):
    """The reference layer with one step changed: "pe", "res1", "res2", "norms" (swapped),
    "one_norm" (gamma1 and beta1 twice), "ffn_of_x", "res2_of_x", "no_ffn" or "final"."""

    def layer(embeddings, p):
        x = embeddings + (0 if changes.get("pe") else encode_positions(*embeddings.shape))
        attn = self_attention(x, p.w_q, p.w_k, p.w_v)[0]
        n1, n2 = ((p.gamma2, p.beta2), (p.gamma1, p.beta1)) if changes.get("norms") else (
            (p.gamma1, p.beta1), (p.gamma2, p.beta2))  # fmt: skip
        n2 = n1 if changes.get("one_norm") else n2
        x1 = layer_norm((0 if changes.get("res1") else x) + attn, *n1)
        if changes.get("no_ffn"):
            return x1
        ffn = feed_forward(x if changes.get("ffn_of_x") else x1, p.w1, p.b1, p.w2, p.b2)
        residual = x if changes.get("res2_of_x") else x1
        y = (0 if changes.get("res2") else residual) + ffn
        return y if changes.get("final") else layer_norm(y, *n2)

    return layer


def encoder_pre_norm(embeddings, p):
    x = embeddings + encode_positions(*embeddings.shape)
    x = x + self_attention(layer_norm(x, p.gamma1, p.beta1), p.w_q, p.w_k, p.w_v)[0]
    return x + feed_forward(layer_norm(x, p.gamma2, p.beta2), p.w1, p.b1, p.w2, p.b2)


WRONG = [
    ("8.1-swapped", "8.1", pe_with(lambda p, i, d: interleaved(np.cos(p / 1e4 ** (i / d)), np.sin(p / 1e4 ** (i / d)))), ["sin and cos are swapped"]),
    ("8.1-halves", "8.1", pe_with(lambda p, i, d: np.hstack([np.sin(p / 1e4 ** (i / d)), np.cos(p / 1e4 ** (i / d))])), ["first half", "interleaves"]),
    ("8.1-exponent-per-column", "8.1", pe_exponent_per_column, ["its own exponent j/d_model"]),
    ("8.1-exponent-i", "8.1", pe_with(lambda p, i, d: interleaved(np.sin(p / 1e4 ** (i / 2 / d)), np.cos(p / 1e4 ** (i / 2 / d)))), ["exponent is i/d_model", "2i/d_model"]),
    ("8.1-multiplied", "8.1", pe_with(lambda p, i, d: interleaved(np.sin(p * 1e4 ** (i / d)), np.cos(p * 1e4 ** (i / d)))), ["divide by it"]),
    ("8.1-from-1", "8.1", lambda t, d: encode_positions(t + 1, d)[1:], ["start at 1"]),
    ("8.1-transposed", "8.1", lambda t, d: encode_positions(t, d).T, ["(3, 8); got (8, 3): transposed?"]),
    ("8.1-int", "8.1", pe_int_dtype, ["dtype int64", "truncated"]),
    ("8.1-torch", "8.1", lambda t, d: torch.from_numpy(encode_positions(t, d)), ["torch tensor", "numpy only"]),
    ("8.2-naive", "8.2", naive_softmax, ["on large inputs", "not stable", "overflows"]),
    ("8.2-global-max", "8.2", softmax_global_max, ["maximum of the whole array"]),
    ("8.2-axis-0", "8.2", lambda x: ref.softmax(x, axis=0), ["each column sums to 1", "axis=-1"]),
    ("8.2-no-keepdims", "8.2", softmax_without_keepdims, ["without keepdims=True"]),
    ("8.2-column-sums", "8.2", lambda x: np.exp(x - x.max(axis=-1, keepdims=True)) / np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=0, keepdims=True), ["each column's sum", "axis=-1"]),
    ("8.2-whole-array", "8.2", lambda x: np.exp(x - x.max()) / np.exp(x - x.max()).sum(), ["whole array sums to 1"]),
    ("8.2-in-place", "8.2", softmax_in_place, ["changed its input in place"]),
    ("8.2-list", "8.2", lambda x: softmax(x).tolist(), ["should be a numpy array; got list"]),
    ("8.3-unscaled", "8.3", attention_with(scale=lambda q, k, v: 1.0), ["not scaled", "√5 ≈ 2.24"]),
    ("8.3-by-d_k", "8.3", attention_with(scale=lambda q, k, v: q.shape[1]), ["divided by d_k = 5"]),
    ("8.3-by-d_v", "8.3", attention_with(scale=lambda q, k, v: np.sqrt(v.shape[1])), ["√3", "width of the values"]),
    ("8.3-by-T_k", "8.3", attention_with(scale=lambda q, k, v: np.sqrt(k.shape[0])), ["number of keys"]),
    ("8.3-by-D_MODEL", "8.3", attention_with(scale=lambda q, k, v: np.sqrt(8)), ["√8", "project's D_MODEL", "√d_k = √5"]),
    ("8.3-columns", "8.3", attention_with(axis=0), ["each column of weights sums to 1"]),
    ("8.3-swapped", "8.3", attention_with(swap=True), ["came back swapped"]),
    ("8.3-k@q.T", "8.3", lambda q, k, v: (softmax(k @ q.T / np.sqrt(q.shape[1])).T @ v, softmax(k @ q.T / np.sqrt(q.shape[1]))), ["(T_k, T_q)", "not k @ q.T"]),
    ("8.3-output-only", "8.3", lambda q, k, v: scaled_dot_product_attention(q, k, v)[0], ["return a pair (output, weights)"]),
    ("8.3-scores@v", "8.3", lambda q, k, v: (q @ k.T / np.sqrt(q.shape[1]) @ v, scaled_dot_product_attention(q, k, v)[1]), ["mixes the values with the scores"]),
    ("8.4-no-projection", "8.4", lambda x, wq, wk, wv: scaled_dot_product_attention(x, x, x @ wv), ["x itself: project them"]),
    ("8.4-transposed-w", "8.4", lambda x, wq, wk, wv: scaled_dot_product_attention(x @ wq.T, x @ wk.T, x @ wv), ["transposed matrices"]),
    ("8.4-q-k-swapped", "8.4", lambda x, wq, wk, wv: scaled_dot_product_attention(x @ wk, x @ wq, x @ wv), ["W_Q and W_K are swapped"]),
    ("8.4-values-w_k", "8.4", lambda x, wq, wk, wv: scaled_dot_product_attention(x @ wq, x @ wk, x @ wk), ["values use W_K"]),
    ("8.4-by-d_model", "8.4", self_attention_scaled_by_d_model, ["x (4, 6)", "√6", "d_model"]),
    ("8.5-axis-0", "8.5", layer_norm_with(lambda x: (x.mean(axis=0), x.var(axis=0))), ["each column was normalised", "axis=-1"]),
    ("8.5-whole", "8.5", layer_norm_with(lambda x: (x.mean(), x.var())), ["whole array"]),
    ("8.5-ddof-1", "8.5", layer_norm_with(lambda x: (x.mean(-1, keepdims=True), x.var(-1, ddof=1, keepdims=True))), ["unbiased variance", "ddof=1"]),
    ("8.5-eps-outside", "8.5", lambda x, g, b, eps=1e-5: g * (x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True) + eps) + b, ["inside the square root"]),
    ("8.5-no-eps", "8.5", lambda x, g, b, eps=1e-5: g * (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True) + b, ["constant row", "NaN"]),
    ("8.5-no-gamma-beta", "8.5", lambda x, g, b, eps=1e-5: layer_norm(x, 1.0, 0.0, eps), ["gamma and beta are ignored"]),
    ("8.5-gamma-beta-swapped", "8.5", lambda x, g, b, eps=1e-5: layer_norm(x, b, g, eps), ["gamma and beta are swapped"]),
    ("8.5-eps-ignored", "8.5", lambda x, g, b, eps=1e-5: layer_norm(x, g, b), ["eps = 0.1", "use the eps argument"]),
    ("8.5-torch", "8.5", layer_norm_torch, ["torch tensor"]),
    ("8.7-no-residual", "8.7", lambda x, s, g, b, eps=1e-5: layer_norm(s, g, b, eps), ["residual is missing"]),
    ("8.7-no-norm", "8.7", lambda x, s, g, b, eps=1e-5: x + s, ["not normalised"]),
    ("8.7-norm-then-add", "8.7", lambda x, s, g, b, eps=1e-5: x + layer_norm(s, g, b, eps), ["adds first, then normalises"]),
    ("8.8-no-relu", "8.8", ffn_with(lambda x, w1, b1, w2, b2, r: (x @ w1 + b1) @ w2 + b2), ["ReLU is missing"]),
    ("8.8-relu-on-output", "8.8", ffn_with(lambda x, w1, b1, w2, b2, r: r((x @ w1 + b1) @ w2 + b2)), ["the ReLU is on the output", "between the two layers"]),
    ("8.8-relu-on-output-too", "8.8", ffn_with(lambda x, w1, b1, w2, b2, r: r(r(x @ w1 + b1) @ w2 + b2)), ["ReLU on the output too"]),
    ("8.8-no-b1", "8.8", ffn_with(lambda x, w1, b1, w2, b2, r: r(x @ w1) @ w2 + b2), ["non-zero biases", "b1 is missing"]),
    ("8.8-no-b2", "8.8", ffn_with(lambda x, w1, b1, w2, b2, r: r(x @ w1 + b1) @ w2), ["b2 is missing"]),
    ("8.8-no-biases", "8.8", ffn_with(lambda x, w1, b1, w2, b2, r: r(x @ w1) @ w2), ["both biases are missing"]),
    ("8.8-b1-after-relu", "8.8", ffn_with(lambda x, w1, b1, w2, b2, r: (r(x @ w1) + b1) @ w2 + b2), ["after the ReLU"]),
    ("8.9-no-pe", "8.9", encoder_with(pe=True), ["positional encoding is missing"]),
    ("8.9-no-residual-1", "8.9", encoder_with(res1=True), ["first residual is missing"]),
    ("8.9-no-residual-2", "8.9", encoder_with(res2=True), ["second residual is missing"]),
    ("8.9-norms-swapped", "8.9", encoder_with(norms=True), ["5 tokens", "parameters are swapped"]),
    ("8.9-one-norm-twice", "8.9", encoder_with(one_norm=True), ["both LayerNorms use gamma1 and beta1"]),
    ("8.9-ffn-of-x", "8.9", encoder_with(ffn_of_x=True), ["the FFN reads x; it reads x1"]),
    ("8.9-residual-of-x", "8.9", encoder_with(res2_of_x=True), ["the second residual adds x"]),
    ("8.9-no-ffn", "8.9", encoder_with(no_ffn=True), ["the FFN sub-layer is missing"]),
    ("8.9-no-final-norm", "8.9", encoder_with(final=True), ["second LayerNorm is missing"]),
    ("8.9-pre-norm", "8.9", encoder_pre_norm, ["pre-norm order"]),
    ("8.9-pair", "8.9", lambda e, p: (encoder_layer(e, p), None), ["return only the output"]),
    ("8.6-a", "8.6", "a", ["(a) is not the best answer", "1e-16"]),
    ("8.6-c", "8.6", "c", ["(c) is not the best answer", "0.875"]),
    ("8.6-d", "8.6", "d", ["(d) is not the best answer", "seed is fixed"]),
]  # fmt: skip


@pytest.mark.parametrize(
    "exercise_id, answer, words", [pytest.param(*row[1:], id=row[0]) for row in WRONG]
)
def test_typical_mistakes_are_named(exercise_id, answer, words):
    result = check(exercise_id, answer)
    assert result.status == FAILED, result.message
    for word in words:
        assert word in result.message, result.message


def test_a_near_miss_says_how_far_off():
    result = check("8.8", lambda x, w1, b1, w2, b2: feed_forward(x, w1, b1, w2, b2) + 0.01)
    assert result.status == FAILED
    assert "is off by up to 0.01" in result.message


def test_in_place_changes_to_the_params_are_caught():
    def encoder_scaling_w_q(embeddings, p):
        p.w_q *= 1.0  # harmless here, but it writes into the caller's array
        p.b1 += 1.0
        return encoder_layer(embeddings, p)

    result = check("8.9", encoder_scaling_w_q)
    assert result.status == FAILED and "changed its input in place" in result.message


# A function that calls an unfinished or wrong project function -------------------------------------


def _namespace(**parts):
    """Define the project functions in one namespace, as a notebook would, with replacements."""
    names = dict(
        encode_positions=encode_positions, softmax=softmax, scaled_dot_product_attention=scaled_dot_product_attention,
        self_attention=self_attention, layer_norm=layer_norm, add_and_norm=add_and_norm,
        feed_forward=feed_forward, encoder_layer=encoder_layer, np=np, ref=ref,
    )  # fmt: skip
    namespace = {}
    for name, fn in {**names, **parts}.items():
        namespace[name] = (
            fn
            if not callable(fn) or not hasattr(fn, "__code__")
            else type(fn)(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
        )
    return namespace


@pytest.mark.parametrize(
    "exercise_id, name, parts, words",
    [
        ("8.9", "encoder_layer", {"softmax": lambda x: ref.softmax(x, axis=0)}, ["calls `softmax`", "check 8.2", "each column"]),
        ("8.9", "encoder_layer", {"layer_norm": layer_norm_with(lambda x: (x.mean(0), x.var(0)))}, ["calls `layer_norm`", "check 8.5"]),
        ("8.9", "encoder_layer", {"feed_forward": ffn_with(lambda x, w1, b1, w2, b2, r: (x @ w1 + b1) @ w2 + b2)}, ["calls `feed_forward`", "check 8.8", "ReLU is missing"]),
        ("8.4", "self_attention", {"softmax": lambda x: ref.softmax(x, axis=0)}, ["calls `softmax`", "check 8.2"]),
        ("8.3", "scaled_dot_product_attention", {"softmax": lambda x: ref.softmax(x, axis=0)}, ["calls `softmax`"]),
        ("8.7", "add_and_norm", {"layer_norm": lambda x, g, b, eps=1e-5: layer_norm(x, 1.0, 0.0)}, ["calls `layer_norm`", "check 8.5"]),
    ],
)  # fmt: skip
def test_a_broken_part_is_named_first(exercise_id, name, parts, words):
    result = check(exercise_id, _namespace(**parts)[name])
    assert result.status == FAILED, result.message
    for word in words:
        assert word in result.message, result.message


def test_an_unfinished_part_makes_the_whole_not_done():
    result = check("8.9", _namespace(feed_forward=_stub)["encoder_layer"])
    assert result.status == NOT_DONE
    assert "calls `feed_forward` (8.8), not written yet" in result.message


def test_every_failing_part_is_named():
    parts = {
        "softmax": naive_softmax,
        "layer_norm": layer_norm_with(lambda x: (x.mean(0), x.var(0))),
    }
    result = check("8.9", _namespace(**parts)["encoder_layer"])
    assert result.status == FAILED
    assert "calls `softmax` (check 8.2) and `layer_norm` (check 8.5)" in result.message
    assert "not stable" in result.message and "each column was normalised" in result.message


@pytest.mark.parametrize(
    "exercise_id, name",
    [
        ("8.3", "scaled_dot_product_attention"),
        ("8.4", "self_attention"),
        ("8.9", "encoder_layer"),
    ],
)
def test_a_softmax_that_fails_8_2_fails_what_builds_on_it(exercise_id, name):
    """The project's inputs are small, so a naive softmax gives the right numbers there: the
    earlier function is checked first, whatever the later one computes."""
    result = check(exercise_id, _namespace(softmax=naive_softmax)[name])
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    assert "calls `softmax` (check 8.2), which does not pass yet" in result.message
    assert result.message.count("Check 8.2 says") == 1


def test_a_failing_part_is_quoted_once_though_two_parts_call_it():
    """add_and_norm calls layer_norm: 8.9 names layer_norm alone, and 8.5's message once."""
    wrong_norm = layer_norm_with(lambda x: (x.mean(0), x.var(0)))
    result = check("8.9", _namespace(layer_norm=wrong_norm)["encoder_layer"])
    assert result.status == FAILED and result.diagnosis == MISTAKE
    assert "calls `layer_norm` (check 8.5), which does not pass yet" in result.message
    assert result.message.count("each column was normalised") == 1, result.message
    assert "add_and_norm" not in result.message


# 8.1: two slips at once, and the row of position 0 ------------------------------------------------


def pe_recipe(
    trig=(np.sin, np.cos), pairs_exponent=2, start=0, base=1e4, op=np.divide, halves=False
):
    """A table as a learner writes it, with the slips asked for."""

    def pe(seq_len, d_model):
        pos, two_i = np.arange(seq_len)[:, None] + start, np.arange(0, d_model, 2)[None, :]
        angle = op(pos, base ** (two_i * pairs_exponent / 2 / d_model))
        even, odd = trig[0](angle), trig[1](angle)
        return np.hstack([even, odd]) if halves else interleaved(even, odd)

    return pe


TWO_SLIPS = [
    ("swapped-and-i", pe_recipe(trig=(np.cos, np.sin), pairs_exponent=1), ["sin and cos are swapped", "exponent is i/d_model"]),
    ("halves-and-multiplied", pe_recipe(halves=True, op=np.multiply), ["first half", "multiplied pos"]),
    ("from-1-and-base-1000", pe_recipe(start=1, base=1e3), ["start at 1", "base is 1000"]),
    ("swapped-and-from-1", pe_recipe(trig=(np.cos, np.sin), start=1), ["sin and cos are swapped", "start at 1"]),
]  # fmt: skip


@pytest.mark.parametrize("answer, words", [pytest.param(*r[1:], id=r[0]) for r in TWO_SLIPS])
def test_two_slips_at_once_are_both_named_8_1(answer, words):
    result = check("8.1", answer)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    assert "two slips at once" in result.message
    for word in words:
        assert word in result.message, result.message


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(pe_recipe(start=2), id="from-2"),
        pytest.param(pe_recipe(trig=(np.cos, np.sin), start=1, base=1e3), id="three-slips"),
        pytest.param(lambda t, d: encode_positions(t, d) + 0.5, id="shifted"),
    ],
)
def test_a_table_with_a_wrong_first_row_is_told_what_row_0_should_be_8_1(answer):
    result = check("8.1", answer)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    assert "row of position 0 is" in result.message
    assert "should be [0, 1, 0, 1, ...]" in result.message


def test_a_table_right_at_position_0_says_how_far_off_it_is_8_1():
    result = check("8.1", lambda t, d: encode_positions(t, d) * np.linspace(1, 1.02, t)[:, None])
    assert result.status == FAILED and result.diagnosis == DIFFERENCE, result.message
    assert "row of position 0" not in result.message and "is off by up to" in result.message


# 8.2: shifts that overflow, and keepdims ---------------------------------------------------------


def softmax_shifted_by(statistic):
    def softmax(x):
        e = np.exp(x - statistic(x))
        return e / e.sum(axis=-1, keepdims=True)

    return softmax


def softmax_sum_without_keepdims(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1)


MORE_8_2 = [
    (softmax_shifted_by(lambda x: x.min(axis=-1, keepdims=True)), ["spread over 1000", "each row's minimum"]),
    (softmax_shifted_by(lambda x: x.mean(axis=-1, keepdims=True)), ["each row's mean"]),
    (softmax_shifted_by(lambda x: x[:, :1]), ["spread over 1000", "NaN or inf", "each row's maximum"]),
    (softmax_sum_without_keepdims, ["(3, 3)", "without keepdims=True on the sum"]),
    (softmax_without_keepdims, ["without keepdims=True"]),
]  # fmt: skip


@pytest.mark.parametrize("answer, words", MORE_8_2)
def test_a_softmax_that_overflows_or_lacks_keepdims_is_named_8_2(answer, words):
    result = check("8.2", answer)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


def test_without_keepdims_a_non_square_input_crashes_with_a_tip_8_2():
    def softmax(x):  # right on the project's square scores, a crash on (2, 5)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1) if x.shape[0] != x.shape[1] else softmax_rows(x)

    def softmax_rows(x):
        return ref.softmax(x)

    result = check("8.2", softmax)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    assert "on a (2, 5) input" in result.message and "keepdims=True keeps" in result.message


# 8.5 and 8.7: layer norm, Add & Norm ----------------------------------------------------------


def ln_slip(body):
    def ln(x, gamma, beta, eps=1e-5):
        mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
        return body(x, gamma, beta, eps, mean, var)

    return ln


MORE_8_5 = [
    (ln_slip(lambda x, g, b, e, m, v: g * (x - x.sum(-1, keepdims=True)) / np.sqrt(v + e) + b), ["sum of each row", "axis=-1, keepdims=True"]),
    (ln_slip(lambda x, g, b, e, m, v: g * (x - m) / np.sqrt(np.sqrt(v) + e) + b), ["standard deviation"]),
    (ln_slip(lambda x, g, b, e, m, v: g * (m - x) / np.sqrt(v + e) + b), ["sign is flipped"]),
    (ln_slip(lambda x, g, b, e, m, v: g * (x - m) / np.sqrt(v + e) - b), ["β is subtracted"]),
    (ln_slip(lambda x, g, b, e, m, v: (x - m) / np.sqrt(v + e) / g + b), ["divided by γ"]),
    (ln_slip(lambda x, g, b, e, m, v: g * (x - x.mean(0)) / np.sqrt(v + e) + b), ["mean is taken over axis 0"]),
    (ln_slip(lambda x, g, b, e, m, v: g * (x - m) / np.sqrt(v + 3 * e) + b), ["the division is off", "√(σ² + ε)"]),
    (ln_slip(lambda x, g, b, e, m, v: g * (x - np.median(x, -1, keepdims=True)) / np.sqrt(v + e) + b), ["the centring is off", "mean μ"]),
    (ln_slip(lambda x, g, b, e, m, v: g * (x - m) / np.sqrt(v + e) + b * g), ["γ and β are not applied as γ·x̂ + β"]),
    (lambda x, gamma, beta: layer_norm(x, gamma, beta), ["take eps as its fourth argument"]),
]  # fmt: skip


@pytest.mark.parametrize("answer, words", MORE_8_5)
def test_the_layer_norm_mistake_is_named_8_5(answer, words):
    result = check("8.5", answer)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


def add_and_norm_inline(eps_used):
    def add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5):
        y = x + sublayer_out
        mean, var = y.mean(axis=-1, keepdims=True), y.var(axis=-1, keepdims=True)
        return gamma * (y - mean) / np.sqrt(var + eps_used(eps)) + beta

    return add_and_norm


MORE_8_7 = [
    (add_and_norm_inline(lambda eps: 0.0), ["ε is missing"]),
    (add_and_norm_inline(lambda eps: 1e-5), ["eps = 0.1", "used ε = 1e-5", "pass eps on"]),
    (lambda x, s, g, b, eps=1e-5: layer_norm(x + s, g, b), ["eps = 0.1", "pass eps on"]),
    (add_and_norm_inline(lambda eps: 1e-3), ["the division is off"]),
    (lambda x, s, g, b, eps=1e-5: layer_norm(x + s, b, g, eps), ["gamma and beta are swapped"]),
    (lambda x, s, g, b, eps=1e-5: layer_norm(x - s, g, b, eps), ["subtracted sublayer_out"]),
    (lambda x, s, g, b, eps=1e-5: layer_norm(x + s, 1.0, 0.0, eps), ["gamma and beta are ignored"]),
    (lambda x, s, g, b: layer_norm(x + s, g, b), ["take eps as its fifth argument"]),
]  # fmt: skip


@pytest.mark.parametrize("answer, words", MORE_8_7)
def test_the_add_and_norm_mistake_is_named_8_7(answer, words):
    result = check("8.7", answer)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


# 8.9: the notebook's globals instead of params ---------------------------------------------------


def _encoder_on_globals(body: str):
    """An encoder_layer written in the notebook, reading the notebook's own weights."""
    p = ref.project_inputs()[1]
    namespace = _namespace()
    namespace.update(W_Q=p.w_q, W_K=p.w_k, W_V=p.w_v, W1=p.w1, W2=p.w2, b1=p.b1, b2=p.b2,
                     gamma1=p.gamma1, beta1=p.beta1, gamma2=p.gamma2, beta2=p.beta2, params=p,
                     SEQ_LEN=3, D_MODEL=8)  # fmt: skip
    exec(body, namespace)
    return namespace["encoder_layer"]


@pytest.mark.parametrize(
    "body, names",
    [
        (
            "def encoder_layer(embeddings, params):\n"
            "    x = embeddings + encode_positions(SEQ_LEN, D_MODEL)\n"
            "    attn, _ = self_attention(x, params.w_q, params.w_k, params.w_v)\n"
            "    x1 = add_and_norm(x, attn, params.gamma1, params.beta1)\n"
            "    f = feed_forward(x1, params.w1, params.b1, params.w2, params.b2)\n"
            "    return add_and_norm(x1, f, params.gamma2, params.beta2)\n",
            ["`SEQ_LEN` and `D_MODEL`"],
        ),
        (
            "def encoder_layer(embeddings, params):\n"
            "    x = embeddings + encode_positions(*embeddings.shape)\n"
            "    attn, _ = self_attention(x, W_Q, W_K, W_V)\n"
            "    x1 = add_and_norm(x, attn, gamma1, beta1)\n"
            "    f = feed_forward(x1, W1, b1, W2, b2)\n"
            "    return add_and_norm(x1, f, gamma2, beta2)\n",
            ["`W_Q`", "`gamma2`"],
        ),
        (
            "def encoder_layer(embeddings, p):\n"
            "    x = embeddings + encode_positions(*embeddings.shape)\n"
            "    attn, _ = self_attention(x, p.w_q, p.w_k, p.w_v)\n"
            "    x1 = add_and_norm(x, attn, params.gamma1, params.beta1)\n"
            "    f = feed_forward(x1, p.w1, p.b1, p.w2, p.b2)\n"
            "    return add_and_norm(x1, f, p.gamma2, p.beta2)\n",
            ["`params`"],
        ),
    ],
)
def test_an_encoder_reading_the_notebooks_globals_is_told_so_8_9(body, names):
    result = check("8.9", _encoder_on_globals(body))
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    assert "5 tokens" in result.message and "instead of its arguments" in result.message
    for name in names:
        assert name in result.message, result.message


@pytest.mark.parametrize(
    "exercise_id, answer, diagnosis",
    [
        ("8.1", lambda t, d: encode_positions(t, d).T, MISTAKE),
        ("8.1", lambda t, d: encode_positions(t, d)[:, :-1], SHAPE),
        ("8.1", lambda t, d: encode_positions(t, d).tolist(), TYPE),
        ("8.2", lambda x: softmax(x) + 0.01, DIFFERENCE),
        ("8.3", attention_with(swap=True), MISTAKE),
        ("8.8", lambda x, w1, b1, w2, b2: 1 / 0, EXCEPTION),
        ("8.9", lambda e, p: (encoder_layer(e, p), None), TYPE),
    ],
)
def test_each_rejection_says_what_kind_of_diagnosis_it_is(exercise_id, answer, diagnosis):
    result = check(exercise_id, answer)
    assert result.status == FAILED and result.diagnosis == diagnosis, result.message


# What the generated wrong answers of the mutation harness get named ----------------------------


def pe_filled(even, odd):
    def encode(seq_len, d_model):
        pos, two_i = np.arange(seq_len)[:, None], np.arange(0, d_model, 2)[None, :]
        angle = pos / 10000 ** (two_i / d_model)
        pe = np.zeros((seq_len, d_model))
        pe[:, 0::2], pe[:, 1::2] = even(angle, pos, two_i, d_model), odd(angle)
        return pe

    return encode


def pe_wrong_length(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(
        np.arange(1, seq_len)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    )
    return pe


def softmax_with(body):
    def softmax(x):
        m = x.max(axis=-1, keepdims=True)
        return body(x, m, np.exp(x - m))

    return softmax


NAMED_GENERATED = [
    ("8.1", lambda t, d: interleaved(np.sin(1e4 ** (np.arange(0, d, 2)[None] / d) / np.arange(t)[:, None]), np.cos(np.arange(t)[:, None])), ["NaN or inf", "division by zero"]),
    ("8.1", pe_wrong_length, ["half the table, (seq_len, d_model/2)"]),
    ("8.1", forgets_return, ["returned None", "return ..."]),
]  # fmt: skip


@pytest.mark.parametrize("exercise_id, answer, words", NAMED_GENERATED)
def test_generated_wrong_answers_get_their_mistake_named(exercise_id, answer, words):
    result = check(exercise_id, answer)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


GENERATED = [  # rejected; a message that says where they are off is enough
    ("8.1", pe_filled(lambda a, p, i, d: 0, np.cos)),
    ("8.1", pe_filled(lambda a, p, i, d: np.cos(a), np.cos)),
    ("8.1", lambda t, d: interleaved(*(f(np.arange(t)[:, None] + np.zeros((1, d // 2))) for f in (np.sin, np.cos)))),
    ("8.1", lambda t, d: interleaved(np.sin(np.arange(t)[:, None] / 1e4 ** np.arange(0, d, 2)[None]), np.cos(np.arange(t)[:, None] / 1e4 ** np.arange(0, d, 2)[None]))),
    ("8.2", softmax_with(lambda x, m, e: (x - m) / (x - m).sum(axis=-1, keepdims=True))),
    ("8.2", softmax_with(lambda x, m, e: np.exp(m - x) / np.exp(m - x).sum(axis=-1, keepdims=True))),
    ("8.2", softmax_with(lambda x, m, e: e.sum(axis=-1, keepdims=True) / e)),
    ("8.2", softmax_with(lambda x, m, e: e / e.mean(axis=-1, keepdims=True))),
    ("8.2", softmax_with(lambda x, m, e: e / e.sum(keepdims=True))),
    ("8.2", softmax_with(lambda x, m, e: -e / e.sum(axis=-1, keepdims=True))),
    ("8.3", attention_with(scale=lambda q, k, v: np.sqrt(q.shape[0]))),
    ("8.4", lambda x, wq, wk, wv: scaled_dot_product_attention(x @ wq, x @ wv, x @ wk)),
    ("8.4", lambda x, wq, wk, wv: scaled_dot_product_attention(x, x @ wk, x @ wv)),
    ("8.8", ffn_with(lambda x, w1, b1, w2, b2, r: np.minimum(0, x @ w1 + b1) @ w2 + b2)),
    ("8.8", ffn_with(lambda x, w1, b1, w2, b2, r: r(x @ w1 - b1) @ w2 + b2)),
]  # fmt: skip


@pytest.mark.parametrize("exercise_id, answer", GENERATED)
def test_generated_wrong_answers_fail(exercise_id, answer):
    assert check(exercise_id, answer).status == FAILED


def test_a_first_row_a_hair_off_says_how_far_not_which_columns_8_1():
    result = check("8.1", lambda t, d: encode_positions(t, d) + 0.001)
    assert result.status == FAILED and "is off by up to" in result.message, result.message
    assert "Check which columns get sin and cos" not in result.message
