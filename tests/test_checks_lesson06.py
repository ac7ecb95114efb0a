"""Tests of the lesson 6 checks (``course_lib/checks/lesson06.py``).

For every exercise: the reference answer and equally valid variants pass, and typical mistakes
fail with a message that names them. Answers are written the way a learner would write them. The
lesson's own stubs are tested in ``test_checks_stubs.py``.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from typical_answers import forgets_return

from course_lib.checks import FAILED, NOT_DONE, PASSED, check, exercises
from course_lib.checks._core import DIFFERENCE, EXCEPTION, MISTAKE, RULE, SHAPE, TYPE
from course_lib.checks._norms import layer_norm_part_off
from course_lib.layers import PositionwiseFeedForward
from course_lib.model import EncoderLayer, TransformerConfig, count_parameters

RELU_X = torch.tensor([-0.5, 1.2, 0.0, -3.1, 0.7])


def ffn_parameters(d_model, d_ff, bias=True):
    return 2 * d_model * d_ff + (d_ff + d_model if bias else 0)


def post_norm_step(x, sublayer, norm):
    return norm(x + sublayer(x))


def pre_norm_step(x, sublayer, norm):
    return x + sublayer(norm(x))


def encoder_block_parameters(d_model, n_heads, d_ff):
    return 4 * (d_model * d_model + d_model) + ffn_parameters(d_model, d_ff) + 2 * 2 * d_model


def layer_norm_by_hand(x, gamma, beta, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def layer_norm_numpy(x, gamma, beta, eps=1e-5):
    x = np.asarray(x)
    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    return np.asarray(gamma) * (x - mean) / np.sqrt(var + eps) + np.asarray(beta)


RIGHT = [
    pytest.param("6.1", lambda: ("a",), id="6.1"),
    pytest.param("6.2", lambda: (torch.relu(RELU_X), 2, 0.4), id="6.2"),
    pytest.param("6.2", lambda: ([0, 1.2, 0, 0, 0.7], 2.0, 0.4), id="6.2-list"),
    pytest.param(
        "6.2",
        lambda: (np.maximum(RELU_X.numpy(), 0), (RELU_X > 0).sum(), (RELU_X > 0).float().mean()),
        id="6.2-numpy-and-tensors",
    ),
    pytest.param("6.3", lambda: (ffn_parameters,), id="6.3"),
    pytest.param(
        "6.3",
        lambda: (lambda d, f, bias=True: float(d * f + f * d + (f + d) * bias),),
        id="6.3-float",
    ),
    pytest.param("6.4", lambda: (post_norm_step, pre_norm_step), id="6.4"),
    pytest.param("6.5", lambda: (encoder_block_parameters,), id="6.5"),
    pytest.param("6.6", lambda: (layer_norm_by_hand,), id="6.6"),
]


@pytest.mark.parametrize("exercise_id, answers", RIGHT)
def test_right_answers_pass(exercise_id, answers):
    result = check(exercise_id, *answers())
    assert result.status == PASSED, result.message


def test_every_exercise_has_a_right_answer_above():
    assert {p.values[0] for p in RIGHT} == {e.id for e in exercises(6)}


@pytest.mark.parametrize(
    "exercise_id, words",
    [
        ("6.2", "[0.000 1.200 0.000 0.000 0.700]"),
        ("6.3", "524,288 / 2,097,152 / 8,388,608"),
        ("6.5", "49,984"),
        ("6.6", "[0.3691, -1.3668, 0.9977]"),
    ],
)
def test_success_messages_carry_the_worked_numbers(exercise_id, words):
    answers = next(p.values[1] for p in RIGHT if p.values[0] == exercise_id)
    assert words in check(exercise_id, *answers()).message


# Unfinished answers are "not done" (the lesson's own stubs: test_checks_stubs.py) -------------


def _stub(*args, **kwargs):
    raise NotImplementedError()


def test_one_stub_left_is_still_not_done_6_4():
    assert check("6.4", post_norm_step, _stub).status == NOT_DONE


# 6.1 and 6.2 ---------------------------------------------------------------------------------

RELU = torch.relu(RELU_X)

WRONG_6_1_2 = [
    ("6.1", ("b",), ["(b) is not the best answer", "position-wise"]),
    ("6.1", ("c",), ["LayerNorm's job"]),
    ("6.1", ("d",), ["W^Q, W^K, W^V and W^O"]),
    ("6.2", (torch.max(RELU_X, 0), 2, 0.4), ["torch.max(x, 0) reads the 0 as a dimension"]),
    ("6.2", (torch.max(RELU_X), 2, 0.4), ["the largest entry", "max(x) reduces"]),
    ("6.2", (max(RELU_X.tolist()), 2, 0.4), ["the largest entry"]),
    ("6.2", (RELU_X, 2, 0.4), ["nothing was zeroed"]),
    ("6.2", (RELU_X.abs(), 2, 0.4), ["not the absolute value"]),
    ("6.2", (RELU_X.clamp(max=0), 2, 0.4), ["negative parts, min(x, 0)"]),
    ("6.2", (RELU_X > 0, 2, 0.4), ["mark which units are active"]),
    ("6.2", (F.leaky_relu(RELU_X), 2, 0.4), ["leaky ReLU"]),
    ("6.2", (F.gelu(RELU_X), 2, 0.4), ["GELU"]),
    ("6.2", (RELU, 3, 0.6), ["counts the 0.0 entry"]),
    ("6.2", (RELU, 5, 1.0), ["counts every unit"]),
    ("6.2", (RELU, 2, 40), ["percentage", "0.4"]),
    ("6.2", (RELU, 2, 0.6), ["share that was zeroed"]),
    ("6.2", (RELU, 2, 2), ["is the count"]),
    ("6.2", (RELU, 2, 2.5), ["upside down"]),
    ("6.2", (RELU[:4], 2, 0.4), ["shape (5,); got (4,)"]),
]


@pytest.mark.parametrize("exercise_id, answers, words", WRONG_6_1_2)
def test_typical_mistakes_are_named_6_1_and_6_2(exercise_id, answers, words):
    result = check(exercise_id, *answers)
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message


# 6.3 and 6.5: counts ----------------------------------------------------------------------------


def _ffn(count):
    return lambda d_model, d_ff, bias=True: count(d_model, d_ff, bias)


WRONG_6_3 = [
    (_ffn(lambda d, f, b: 2 * d * f), ["bias = True", "2,097,152", "biases are missing"]),
    (_ffn(lambda d, f, b: 2 * d * f + d + f), ["bias = False", "leave the biases out"]),
    (_ffn(lambda d, f, b: 2 * d * f + 2 * d * b), ["both biases have d_model entries"]),
    (_ffn(lambda d, f, b: 2 * d * f + 2 * f * b), ["both biases have d_ff entries"]),
    (_ffn(lambda d, f, b: d * f + f * b), ["only one linear layer"]),
    (_ffn(lambda d, f, b: 2 * d * d + (d + f) * b), ["d_model × d_model"]),
    (_ffn(lambda d, f, b: 4 * d * f + (d + f) * b), ["counts each matrix twice"]),
    (lambda d_model, d_ff, bias=False: 2 * d_model * d_ff + (d_model + d_ff) * bias, ["default"]),
    (lambda d_model, d_ff: 2 * d_model * d_ff, ["take bias as its third argument"]),
    (lambda d_model, d_ff, bias=True: [2 * d_model * d_ff], ["biases are missing"]),
    (_ffn(lambda d, f, b: 2 * d * f + 0.5), ["a count is a whole number"]),
]


@pytest.mark.parametrize("answer, words", WRONG_6_3)
def test_typical_mistakes_are_named_6_3(answer, words):
    result = check("6.3", answer)
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message


def test_a_list_of_one_count_is_accepted_but_a_pair_is_not_6_3():
    one = check("6.3", lambda d, f, bias=True: [ffn_parameters(d, f, bias)])
    assert one.status == PASSED, one.message
    pair = check("6.3", lambda d, f, bias=True: (2 * d * f, d + f))
    assert pair.status == FAILED and "should be one number; got shape (2,)" in pair.message


def _block(attention=None, ffn=None, norms=None):
    def count(d_model, n_heads, d_ff):
        d, h, f = d_model, n_heads, d_ff
        a = attention(d, h) if attention else 4 * (d * d + d)
        return a + (ffn(d, f) if ffn else 2 * d * f + d + f) + (norms(d) if norms else 4 * d)

    return count


WRONG_6_5 = [
    (_block(norms=lambda d: 0), ["4·d_model short", "attention projections", "two LayerNorms"]),
    (_block(attention=lambda d, h: 4 * d * d), ["4·d_model short"]),
    (_block(norms=lambda d: 2 * d), ["2·d_model short", "two LayerNorms"]),
    (_block(norms=lambda d: 8 * d), ["counted twice"]),
    (_block(lambda d, h: 4 * d * d, lambda d, f: 2 * d * f, lambda d: 0), ["weights-only count"]),
    (_block(attention=lambda d, h: 4 * h * (d * d + d)), ["once per head"]),
    (_block(attention=lambda d, h: 4 * (d * (d // h) + d // h)), ["one head's share"]),
    (_block(attention=lambda d, h: 3 * (d * d + d)), ["W^O"]),
    (_block(ffn=lambda d, f: 2 * d * f), ["FFN's biases are missing"]),
    (_block(ffn=lambda d, f: d * f + f), ["only one FFN layer"]),
    (lambda d_model, n_heads, d_ff: 49_984, ["(512, 8, 2048)", "n_heads = 8, d_ff = 2048", "expected 3,152,384"]),
]  # fmt: skip


@pytest.mark.parametrize("answer, words", WRONG_6_5)
def test_typical_mistakes_are_named_6_5(answer, words):
    result = check("6.5", answer)
    assert result.status == FAILED
    for word in words:
        assert word.replace("(512, 8, 2048)", "d_model = 512") in result.message, result.message


# 6.4: post-norm and pre-norm -------------------------------------------------------------------


def post(body):
    return lambda x, sublayer, norm: body(x, sublayer, norm)


def _ln(x):
    return F.layer_norm(x, x.shape[-1:])


WRONG_6_4 = [
    (pre_norm_step, post_norm_step, ["the two are swapped"]),
    (post(lambda x, s, n: n(s(x)) + x), pre_norm_step, ["residual is added after the norm"]),
    (pre_norm_step, pre_norm_step, ["this is pre-norm", "post-norm (the paper)"]),
    (post(lambda x, s, n: n(s(x))), pre_norm_step, ["residual path is missing"]),
    (post(lambda x, s, n: x + s(x)), pre_norm_step, ["there is no norm"]),
    (post(lambda x, s, n: n(x) + s(x)), pre_norm_step, ["normalise the sum"]),
    (post(lambda x, s, n: _ln(x + s(x))), pre_norm_step, ["a LayerNorm of your own"]),
    (post_norm_step, post_norm_step, ["this is post-norm", "x + sublayer(norm(x))"]),
    (post_norm_step, post(lambda x, s, n: x + n(s(x))), ["norm is on the sub-layer's output"]),
    (post_norm_step, post(lambda x, s, n: n(x) + s(n(x))), ["residual carries norm(x)"]),
    (post_norm_step, post(lambda x, s, n: s(n(x))), ["residual path is missing"]),
    (post_norm_step, post(lambda x, s, n: n(x + s(n(x)))), ["normalised again"]),
    (post_norm_step, post(lambda x, s, n: x + s(_ln(x))), ["a LayerNorm of your own"]),
]


def adds_in_place(x, sublayer, norm):
    x += sublayer(norm(x))
    return x


@pytest.mark.parametrize("post_answer, pre_answer, words", WRONG_6_4)
def test_typical_mistakes_are_named_6_4(post_answer, pre_answer, words):
    result = check("6.4", post_answer, pre_answer)
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message


def test_changing_x_in_place_is_named_6_4():
    with torch.no_grad():
        result = check("6.4", post_norm_step, adds_in_place)
    assert result.status == FAILED and "changed x in place" in result.message


def test_a_wrong_shape_is_named_6_4():
    result = check("6.4", post(lambda x, s, n: n(x + s(x))[0]), pre_norm_step)
    assert result.status == FAILED and "(B, T, d_model) = (2, 5, 8); got (5, 8)" in result.message


# 6.6: LayerNorm by hand ----------------------------------------------------------------------


def ln_variant(dim=-1, unbiased=False, eps_inside=True, use_eps=True, gamma_beta="gb", center=True):
    def layer_norm(x, gamma, beta, eps=1e-5):
        mean = x.mean(dim=dim, keepdim=True) if dim is not None else x.mean()
        var = (
            x.var(dim=dim, keepdim=True, unbiased=unbiased)
            if dim is not None
            else x.var(unbiased=unbiased)
        )
        e = eps if use_eps else 0.0
        std = torch.sqrt(var + e) if eps_inside else torch.sqrt(var) + e
        y = ((x - mean) if center else x) / std
        g, b = {
            "gb": (gamma, beta),
            "": (1, 0),
            "g": (gamma, 0),
            "b": (1, beta),
            "bg": (beta, gamma),
        }[gamma_beta]
        return g * y + b

    return layer_norm


def by_variance(x, gamma, beta, eps=1e-5):
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return gamma * (x - x.mean(dim=-1, keepdim=True)) / (var + eps) + beta


def eps_ignored(x, gamma, beta, eps=1e-5):
    return layer_norm_by_hand(x, gamma, beta)


def without_keepdim(x, gamma, beta, eps=1e-5):
    mean, var = x.mean(dim=-1), x.var(dim=-1, unbiased=False)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def subtracts_in_place(x, gamma, beta, eps=1e-5):
    x -= x.mean(dim=-1, keepdim=True)
    return gamma * x / torch.sqrt(x.var(dim=-1, keepdim=True, unbiased=False) + eps) + beta


WRONG_6_6 = [
    (ln_variant(unbiased=True), ["worked example", "unbiased variance", "n - 1"]),
    (ln_variant(dim=0), ["(2, 3, 6)", "over the batch axis (axis 0)"]),
    (ln_variant(dim=-2), ["IndexError", "over the last axis, dim=-1"]),
    (ln_variant(dim=None), ["one mean and variance for the whole tensor"]),
    (ln_variant(use_eps=False), ["variance is near ε", "ε is missing"]),
    (ln_variant(eps_inside=False), ["outside the square root"]),
    (ln_variant(gamma_beta=""), ["γ and β were ignored"]),
    (ln_variant(gamma_beta="g"), ["β was ignored"]),
    (ln_variant(gamma_beta="b"), ["γ was ignored"]),
    (ln_variant(gamma_beta="bg"), ["γ and β are swapped"]),
    (ln_variant(center=False), ["mean was not subtracted"]),
    (by_variance, ["divides by the variance"]),
    (eps_ignored, ["with eps = 0.1", "eps argument was ignored"]),
    (without_keepdim, ["keepdim=True"]),
    (subtracts_in_place, ["changed x in place"]),
    (lambda x, gamma, beta: layer_norm_by_hand(x, gamma, beta), ["take eps as its fourth argument"]),
]  # fmt: skip


@pytest.mark.parametrize("answer, words", WRONG_6_6)
def test_typical_mistakes_are_named_6_6(answer, words):
    result = check("6.6", answer)
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message


def one_entry_off(x, gamma, beta, eps=1e-5):
    y = layer_norm_by_hand(x, gamma, beta, eps)
    return y + 0.01 * (torch.arange(y.shape[-1]) == 0)


def test_a_near_miss_says_how_far_off_6_6():
    result = check("6.6", one_entry_off)
    assert result.status == FAILED and result.diagnosis == DIFFERENCE
    assert "worked example" in result.message and "off by up to 0.01" in result.message


def test_a_numpy_result_is_refused_with_what_to_return_6_6():
    result = check("6.6", layer_norm_numpy)
    assert result.status == FAILED and result.diagnosis == TYPE
    assert "should return a torch.Tensor; got ndarray" in result.message


# More layer-norm slips, and which part of the formula is off ---------------------------------


def sum_for_mean(x, gamma, beta, eps=1e-5):
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return gamma * (x - x.sum(dim=-1, keepdim=True)) / torch.sqrt(var + eps) + beta


def std_under_root(x, gamma, beta, eps=1e-5):
    std = x.std(dim=-1, keepdim=True, unbiased=False)
    return gamma * (x - x.mean(dim=-1, keepdim=True)) / torch.sqrt(std + eps) + beta


def mean_over_batch(x, gamma, beta, eps=1e-5):
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return gamma * (x - x.mean(dim=0, keepdim=True)) / torch.sqrt(var + eps) + beta


def median_centred(x, gamma, beta, eps=1e-5):
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    middle = x.median(dim=-1, keepdim=True).values
    return gamma * (x - middle) / torch.sqrt(var + eps) + beta


def double_eps(x, gamma, beta, eps=1e-5):
    return layer_norm_by_hand(x, gamma, beta, 2 * eps)


def beta_scaled(x, gamma, beta, eps=1e-5):
    return layer_norm_by_hand(x, gamma, beta * gamma, eps)


def shifted(x, gamma, beta, eps=1e-5):
    return layer_norm_by_hand(x, gamma, beta, eps) + 0.01


MORE_6_6 = [
    (sum_for_mean, ["sum of each row", "x.mean(dim=-1, keepdim=True)"]),
    (std_under_root, ["standard deviation, √(σ + ε)"]),
    (lambda x, g, b, eps=1e-5: 2 * b - layer_norm_by_hand(x, g, b, eps), ["sign is flipped"]),
    (lambda x, g, b, eps=1e-5: layer_norm_by_hand(x, g, -b, eps), ["β is subtracted"]),
    (lambda x, g, b, eps=1e-5: layer_norm_by_hand(x, 1 / g, b, eps), ["you divided by γ"]),
    (lambda x, g, b, eps=1e-5: layer_norm_by_hand(x, g, b, -eps), ["ε is subtracted"]),
    (mean_over_batch, ["mean is taken over axis 0, the variance over the last one"]),
    (double_eps, ["variance is near ε", "the division is off", "√(σ² + ε)"]),
    (median_centred, ["same shift everywhere", "mean μ"]),  # γ = 1, β = 0 there
    (beta_scaled, ["(2, 3, 6)", "γ and β are not applied as γ·x̂ + β"]),
    (shifted, ["off at every entry", "β, or the mean μ subtracted"]),
]


@pytest.mark.parametrize("answer, words", MORE_6_6)
def test_the_layer_norm_mistake_is_named_6_6(answer, words):
    result = check("6.6", answer)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


@pytest.mark.rules
def test_f_layer_norm_is_refused_by_the_rules_6_6():
    source = (
        "def layer_norm_by_hand(x, gamma, beta, eps=1e-5):\n"
        "    return F.layer_norm(x, x.shape[-1:], gamma, beta, eps)\n"
    )
    namespace = {"__name__": "__main__", "torch": torch, "F": F}
    exec(source, namespace)
    result = check("6.6", namespace["layer_norm_by_hand"])
    assert result.status == FAILED and result.diagnosis == RULE, result.message
    assert "F.layer_norm" in result.message


# 6.3 and 6.5: the rules, an earlier exercise, and what a miscount is made of -----------------


def ffn_from_course_lib(d_model, d_ff, bias=True):
    return count_parameters(PositionwiseFeedForward(d_model, d_ff, bias=bias))["total"]


def block_from_course_lib(d_model, n_heads, d_ff):
    config = TransformerConfig(d_model=d_model, n_heads=n_heads, d_ff=d_ff, attention_bias=True)
    return count_parameters(EncoderLayer(config))["total"]


def block_on_course_lib_ffn(d_model, n_heads, d_ff):
    return 4 * (d_model**2 + d_model) + ffn_from_course_lib(d_model, d_ff) + 4 * d_model


@pytest.mark.rules
@pytest.mark.parametrize(
    "exercise_id, answer",
    [
        ("6.3", ffn_from_course_lib),
        ("6.5", block_from_course_lib),
        ("6.5", block_on_course_lib_ffn),
    ],
)
def test_counting_course_libs_modules_is_refused_6_3_and_6_5(exercise_id, answer):
    result = check(exercise_id, answer)
    assert result.status == FAILED and result.diagnosis == RULE, result.message
    assert "course_lib" in result.message and "count_parameters" in result.message


def _with_ffn(ffn):
    """A learner's 6.5 that calls their own 6.3 function, as the prompt allows."""
    namespace = {"ffn_parameters": ffn}
    exec(
        "def encoder_block_parameters(d_model, n_heads, d_ff):\n"
        "    return 4 * (d_model**2 + d_model) + ffn_parameters(d_model, d_ff) + 4 * d_model\n",
        namespace,
    )
    return namespace["encoder_block_parameters"]


def test_a_block_on_the_unfinished_6_3_is_not_done_and_says_so_6_5():
    result = check("6.5", _with_ffn(_stub))
    assert result.status == NOT_DONE
    assert "`ffn_parameters`" in result.message and "finish 6.3 first" in result.message


def test_a_block_on_a_wrong_6_3_names_that_check_6_5():
    result = check("6.5", _with_ffn(lambda d, f, bias=True: 2 * d * f))
    assert result.status == FAILED and result.diagnosis == MISTAKE
    assert "does not pass check 6.3" in result.message and "biases are missing" in result.message


def test_a_block_on_a_right_6_3_passes_6_5():
    assert check("6.5", _with_ffn(ffn_parameters)).status == PASSED


MISCOUNTS_6_3 = [
    (_ffn(lambda d, f, b: 2 * d * f + f * b), ["b_2 has d_model entries", "no d_model"]),
    (_ffn(lambda d, f, b: 2 * d * f + d * b), ["b_1 is missing", "no d_ff term"]),
    (_ffn(lambda d, f, b: 2_099_712), ["whatever the sizes"]),
    (lambda d_model, d_ff, bias=None: 2 * d_model * d_ff + (d_model + d_ff) * (bias is True),
     ["default should be bias=True"]),
]  # fmt: skip


@pytest.mark.parametrize("answer, words", MISCOUNTS_6_3)
def test_what_a_miscount_is_made_of_is_named_6_3(answer, words):
    result = check("6.3", answer)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


# Variants the mutation harness generates: each is rejected, named or not ---------------------

GENERATED = [
    ("6.2", (RELU, 1, 0.2)),
    ("6.2", (RELU, 2, 10)),
    ("6.3", (_ffn(lambda d, f, b: 2 * d * f + (d + f) * b + 1),)),
    ("6.3", (_ffn(lambda d, f, b: 3 * d * f + (d + f) * b),)),
    ("6.3", (_ffn(lambda d, f, b: 2 * d * f + (d + f if b else f)),)),
    ("6.3", (_ffn(lambda d, f, b: 2 * d * f + (d + 2 * f) * b),)),
    ("6.5", (_block(ffn=lambda d, f: 2 * d * f + f),)),
    ("6.5", (_block(attention=lambda d, h: 4 * (d * d // h + d)),)),
    ("6.5", (_block(attention=lambda d, h: 4 * h * d * d + 4 * d),)),
    ("6.5", (_block(attention=lambda d, h: 3 * d * d + 4 * d),)),
    ("6.5", (_block(ffn=lambda d, f: 2 * d * f + d + 2 * f),)),
    ("6.5", (_block(ffn=lambda d, f: 4 * d * f + d + f),)),
    ("6.5", (_block(norms=lambda d: 4 * d + 1),)),
]


@pytest.mark.parametrize("exercise_id, answers", GENERATED)
def test_generated_wrong_answers_fail(exercise_id, answers):
    assert check(exercise_id, *answers).status == FAILED


@pytest.mark.parametrize(
    "exercise_id, answers, diagnosis",
    [
        ("6.2", (RELU, 3, 0.6), MISTAKE),
        ("6.2", (RELU, 4, 0.4), DIFFERENCE),
        ("6.2", (RELU[:4], 2, 0.4), SHAPE),
        ("6.3", (lambda d, f, bias=True: (2 * d * f, d + f),), SHAPE),
        ("6.3", (lambda d, f, bias=True: 2 * d * f + 0.5,), MISTAKE),
        ("6.3", (forgets_return,), MISTAKE),
        ("6.4", (post_norm_step, lambda x, sublayer, norm: x.numpy()), TYPE),
        ("6.3", (lambda d, f, bias=True: 2 * d * f + (d + f) * bias + (d == 48),), DIFFERENCE),
        ("6.4", (pre_norm_step, post_norm_step), MISTAKE),
        ("6.6", (lambda x, gamma, beta, eps=1e-5: 1 / 0,), EXCEPTION),
    ],
)
def test_each_rejection_says_what_kind_of_diagnosis_it_is(exercise_id, answers, diagnosis):
    result = check(exercise_id, *answers)
    assert result.status == FAILED and result.diagnosis == diagnosis, result.message


def test_which_part_of_layer_norm_is_off_is_named_on_its_own():
    g = np.random.default_rng(0)
    x, gamma, beta = g.normal(size=(4, 6)), 1 + 0.3 * g.normal(size=6), g.normal(size=6)
    right = layer_norm_numpy(x, gamma, beta)
    middle = np.median(x, axis=-1, keepdims=True)
    centred_off = gamma * (x - middle) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5) + beta
    message = layer_norm_part_off(centred_off, x, gamma, beta)
    assert "the centring is off" in message and "from row 0" in message
    message = layer_norm_part_off(gamma * (right - beta) / gamma * 2 + beta, x, gamma, beta)
    assert "the division is off: you divide row 0 by" in message
    assert layer_norm_part_off(right + g.normal(size=right.shape), x, gamma, beta) is None
