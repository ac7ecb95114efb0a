"""Tests of the lesson 4 checks (``course_lib/checks/lesson04.py``).

For every exercise: the reference answer (and an equally valid variant) passes, the lesson's
stub is "not done", and typical wrong answers fail with a message naming the mistake.
Answers are written the way a learner would write them.
"""

import math

import pytest
import torch
from torch import nn

from course_lib.attention import MultiHeadAttention
from course_lib.checks import EXERCISES, FAILED, NOT_DONE, PASSED, check
from course_lib.checks.lesson04 import STAGES


def _cases(rows):
    return [pytest.param(*row[1:], id=row[0]) for row in rows]


# Reference answers ---------------------------------------------------------------------------


def split_heads(x, n_heads):
    B, T, D = x.shape
    return x.view(B, T, n_heads, D // n_heads).transpose(1, 2)  # (B, H, T, Dk)


def merge_heads(x):
    B, H, T, Dk = x.shape
    return x.transpose(1, 2).reshape(B, T, H * Dk)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    q, k, v = (split_heads(x @ w, n_heads) for w in (w_q, w_k, w_v))
    weights = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(dim=-1)
    return merge_heads(weights @ v) @ w_o, weights


def mha_with_einsum(x, w_q, w_k, w_v, w_o, n_heads):
    B, T, D = x.shape
    q, k, v = ((x @ w).unflatten(-1, (n_heads, D // n_heads)) for w in (w_q, w_k, w_v))
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(D // n_heads)
    weights = scores.softmax(-1)
    heads = torch.einsum("bhqk,bkhd->bqhd", weights, v)
    return heads.flatten(-2) @ w_o, weights


def walk_shapes(d_model, n_heads, batch=2, seq_len=10):
    x = torch.randn(batch, seq_len, d_model)
    q = nn.Linear(d_model, d_model)(x)
    q_heads = split_heads(q, n_heads)
    scores = q_heads @ q_heads.transpose(-2, -1)
    heads = scores.softmax(-1) @ q_heads
    concat = merge_heads(heads)
    output = nn.Linear(d_model, d_model)(concat)
    stages = dict(x=x, q=q, q_heads=q_heads, scores=scores, heads=heads, concat=concat, output=output)  # fmt: skip
    return {name: tuple(t.shape) for name, t in stages.items()}


def mha_parameter_count(d_model, n_heads, bias):
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def count_by_building(d_model, n_heads, bias):
    return sum(p.numel() for p in MultiHeadAttention(d_model, n_heads, bias=bias).parameters())


RIGHT = [
    pytest.param("4.1", ("b",), id="4.1"),
    pytest.param("4.1", (" (B) ",), id="4.1-loose"),
    pytest.param("4.2", (1_048_576, 1_050_624), id="4.2"),
    pytest.param("4.2", (4 * 512**2, 4.0 * 512**2 + 4 * 512), id="4.2-expressions"),
    pytest.param("4.3", ("b",), id="4.3"),
    pytest.param("4.4", (split_heads,), id="4.4"),
    pytest.param("4.4", (lambda x, h: x.transpose(1, 2).reshape(x.shape[0], h, -1, x.shape[1]).transpose(2, 3),), id="4.4-features-first"),  # fmt: skip
    pytest.param("4.4", (lambda x, h: x.unflatten(-1, (h, -1)).permute(0, 2, 1, 3),), id="4.4-unflatten"),  # fmt: skip
    pytest.param("4.5", (merge_heads,), id="4.5"),
    pytest.param("4.5", (lambda x: x.transpose(1, 2).contiguous().view(x.shape[0], x.shape[2], -1),), id="4.5-contiguous"),  # fmt: skip
    pytest.param("4.6", (multi_head_attention,), id="4.6"),
    pytest.param("4.6", (mha_with_einsum,), id="4.6-einsum"),
    pytest.param("4.7", (12_480, 16_640), id="4.7"),
    pytest.param("4.8", (walk_shapes,), id="4.8"),
    pytest.param("4.9", (mha_parameter_count,), id="4.9"),
    pytest.param("4.9", (count_by_building,), id="4.9-by-building"),
]  # fmt: skip


@pytest.mark.parametrize("exercise_id, answers", RIGHT)
def test_the_reference_answers_pass(exercise_id, answers):
    result = check(exercise_id, *answers)
    assert result.status == PASSED, result.message


def _stub(*args, **kwargs):
    raise NotImplementedError()


@pytest.mark.parametrize("exercise", [e for e in EXERCISES.values() if e.id.startswith("4.")], ids=lambda e: e.id)  # fmt: skip
def test_stubs_are_not_done(exercise):
    answers = [_stub if exercise.id in {"4.4", "4.5", "4.6", "4.8", "4.9"} else None] * len(exercise.names)  # fmt: skip
    assert check(exercise.id, *answers).status == NOT_DONE
    assert check(exercise.id, *[None] * len(exercise.names)).status == NOT_DONE


def split_heads_stub(x, n_heads):
    raise NotImplementedError()


def mha_on_a_stub(x, w_q, w_k, w_v, w_o, n_heads):
    q = split_heads_stub(x @ w_q, n_heads)
    return q, q


def walk_on_a_stub(d_model, n_heads, batch=2, seq_len=10):
    return {"q_heads": split_heads_stub(torch.randn(batch, seq_len, d_model), n_heads)}


@pytest.mark.parametrize("exercise_id, answer", [("4.6", mha_on_a_stub), ("4.8", walk_on_a_stub)])
def test_a_finished_function_built_on_an_unfinished_one_names_the_stub(exercise_id, answer):
    result = check(exercise_id, answer)
    assert result.status == NOT_DONE
    assert (
        "calls a function that is not written yet (split_heads or merge_heads?)" in result.message
    )


# Multiple choice and counts ------------------------------------------------------------------

WRONG_COUNTS = _cases([
    ("4.1-a", "4.1", ("a",), ["not the best answer", "cost"]),
    ("4.1-c", "4.1", ("c",), ["adds no parameters"]),
    ("4.1-other", "4.1", ("e",), ['one of "a", "b", "c", "d"']),
    ("4.3-a", "4.3", ("a",), ["does not depend on h"]),
    ("4.3-c", "4.3", ("c",), ["about the same"]),
    ("4.2-no-W_O", "4.2", (786_432, 1_050_624), ["`total_weights` = 786,432", "output projection W^O"]),
    ("4.2-full-width", "4.2", (8_388_608, 1_050_624), ["full-width", "d_k = d_model/h"]),
    ("4.2-one-head", "4.2", (131_072, 1_050_624), ["one head's share"]),
    ("4.2-one-matrix", "4.2", (262_144, 1_050_624), ["one matrix"]),
    ("4.2-swapped", "4.2", (1_050_624, 1_048_576), ["swapped"]),
    ("4.2-bias-in-weights", "4.2", (1_050_624, 1_050_624), ["bias=False"]),
    ("4.2-bias-ignored", "4.2", (1_048_576, 1_048_576), ["`total_with_bias` = 1,048,576", "bias vector of d_model"]),
    ("4.2-bias-one-number", "4.2", (1_048_576, 1_048_580), ["not one number"]),
    ("4.2-one-bias-vector", "4.2", (1_048_576, 1_049_088), ["its own bias vector"]),
    ("4.2-no-W_O-bias", "4.2", (1_048_576, 1_050_112), ["W^O has a bias too"]),
    ("4.2-bias-d_k", "4.2", (1_048_576, 1_048_832), ["not d_k"]),
    ("4.2-bias-per-head", "4.2", (1_048_576, 1_064_960), ["not once per head"]),
    ("4.2-text", "4.2", ("1,048,576", 1_050_624), ["should be numbers"]),
    ("4.2-fraction", "4.2", (1_048_576.5, 1_050_624), ["whole number"]),
    ("4.2-nan", "4.2", (float("nan"), 1_050_624), ["`total_weights` = nan", "whole number"]),
    ("4.7-swapped", "4.7", (16_640, 12_480), ["swapped"]),
    ("4.7-no-bias-three", "4.7", (12_288, 16_640), ["64 biases"]),
    ("4.7-no-bias-four", "4.7", (12_480, 16_384), ["biases by default"]),
    ("4.7-no-W_O", "4.7", (12_480, 12_480), ["output map W^O"]),
    ("4.7-per-head", "4.7", (12_480, 66_560), ["share the 64 x 64 maps"]),
    ("4.7-other", "4.7", (12_481, 16_640), ["count 3 × (64·64 + 64)"]),
])  # fmt: skip


@pytest.mark.parametrize("exercise_id, answers, words", WRONG_COUNTS)
def test_typical_miscounts_are_named(exercise_id, answers, words):
    result = check(exercise_id, *answers)
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message


def _formula(weights, biases):
    return lambda d, h, bias: weights(d, h) + (biases(d, h) if bias else 0)


WRONG_FORMULAS = _cases([
    ("no-W_O", _formula(lambda d, h: 3 * d * d, lambda d, h: 3 * d), ["returned 12,480", "output projection W^O"]),
    ("full-width", _formula(lambda d, h: 4 * h * d * d, lambda d, h: 4 * h * d), ["full-width"]),
    ("bias-ignored", lambda d, h, bias: 4 * d * d, ["bias=True"]),
    ("bias-always", lambda d, h, bias: 4 * d * d + 4 * d, ["bias = False", "bias=False: count the weights only"]),
    ("bias-one-number", _formula(lambda d, h: 4 * d * d, lambda d, h: 4), ["not one number"]),
    ("bias-d_k", _formula(lambda d, h: 4 * d * d, lambda d, h: 4 * (d // h)), ["not d_k"]),
    ("hard-coded-64", lambda d, h, bias: 16_640 if bias else 16_384, ["d_model = 512", "expected 1,050,624"]),
    ("crashes", lambda d, h, bias: d / 0, ["ZeroDivisionError", "when called for d_model = 64"]),
])  # fmt: skip


@pytest.mark.parametrize("formula, words", WRONG_FORMULAS)
def test_typical_mistakes_are_named_4_9(formula, words):
    result = check("4.9", formula)
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message


# Split and merge -----------------------------------------------------------------------------


def _split_as(fn):
    def split(x, n_heads):
        B, T, D = x.shape
        return fn(x, B, T, n_heads, D // n_heads)

    return split


WRONG_SPLITS = _cases([
    ("view(B,H,T,Dk)", _split_as(lambda x, B, T, H, Dk: x.view(B, H, T, Dk)), ["wrong axis", "view(B, T, H, Dk).transpose(1, 2)"]),
    ("no-transpose", _split_as(lambda x, B, T, H, Dk: x.view(B, T, H, Dk)), ["(B, T, H, Dk)", "add .transpose(1, 2)"]),
    ("interleaved", _split_as(lambda x, B, T, H, Dk: x.view(B, T, Dk, H).permute(0, 3, 1, 2)), ["every h-th feature"]),
    ("batch-and-heads-merged", _split_as(lambda x, B, T, H, Dk: x.view(B, T, H, Dk).transpose(1, 2).reshape(B * H, T, Dk)), ["batch and head axes are merged"]),
    ("float-d_k", _split_as(lambda x, B, T, H, Dk: x.view(B, T, H, x.shape[-1] / H).transpose(1, 2)), ["a size was a float", "d_model // n_heads"]),
    ("hard-coded-3-heads", lambda x, n_heads: split_heads(x, 3), ["RuntimeError", "with n_heads = 2"]),
    ("returns-numpy", lambda x, n_heads: split_heads(x, n_heads).numpy(), ["should return a tensor", "ndarray"]),
])  # fmt: skip


@pytest.mark.parametrize("answer, words", WRONG_SPLITS)
def test_typical_mistakes_are_named_4_4(answer, words):
    result = check("4.4", answer)
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message


def _merge_as(fn):
    def merge(x):
        B, H, T, Dk = x.shape
        return fn(x, B, H, T, Dk)

    return merge


WRONG_MERGES = _cases([
    ("no-transpose", _merge_as(lambda x, B, H, T, Dk: x.reshape(B, T, H * Dk)), ["not moved back", "transpose(1, 2)"]),
    ("view-after-transpose", _merge_as(lambda x, B, H, T, Dk: x.transpose(1, 2).view(B, T, H * Dk)), ["no longer contiguous", ".reshape(B, T, D)"]),
    ("interleaved", _merge_as(lambda x, B, H, T, Dk: x.permute(0, 2, 3, 1).reshape(B, T, H * Dk)), ["interleaved"]),
    ("not-flattened", _merge_as(lambda x, B, H, T, Dk: x.transpose(1, 2)), ["flatten the last two axes"]),
    ("mean", _merge_as(lambda x, B, H, T, Dk: x.mean(dim=1)), ["averaged"]),
    ("sum", _merge_as(lambda x, B, H, T, Dk: x.sum(dim=1)), ["added up"]),
])  # fmt: skip


@pytest.mark.parametrize("answer, words", WRONG_MERGES)
def test_typical_mistakes_are_named_4_5(answer, words):
    result = check("4.5", answer)
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message


# The forward pass --------------------------------------------------------------------------


def _mha_as(split=split_heads, merge=merge_heads, scale=None, use_wo=True, dim=-1, transpose_w=False, normalise=lambda s, dim: s.softmax(dim=dim)):  # fmt: skip
    def mha(x, w_q, w_k, w_v, w_o, n_heads):
        if transpose_w:
            w_q, w_k, w_v, w_o = w_q.T, w_k.T, w_v.T, w_o.T
        q, k, v = (split(x @ w, n_heads) for w in (w_q, w_k, w_v))
        d = q.shape[-1] if scale is None else scale(x.shape[-1], q.shape[-1])
        weights = normalise(q @ k.transpose(-2, -1) / math.sqrt(d), dim)
        concat = merge(weights @ v)
        return (concat @ w_o if use_wo else concat), weights

    return mha


def _wrong_split(x, n_heads):
    B, T, D = x.shape
    return x.view(B, H := n_heads, T, D // H)


def _merge_without_transpose(x):
    B, H, T, Dk = x.shape
    return x.reshape(B, T, H * Dk)


def _merge_with_view(x):
    B, H, T, Dk = x.shape
    return x.transpose(1, 2).view(B, T, H * Dk)


def swapped_pair(x, w_q, w_k, w_v, w_o, n_heads):
    out, weights = multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads)
    return weights, out


def averaged_weights(x, w_q, w_k, w_v, w_o, n_heads):
    out, weights = multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads)
    return out, weights.mean(dim=1)


def output_only(x, w_q, w_k, w_v, w_o, n_heads):
    return multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads)[0]


WRONG_MHA = _cases([
    ("wrong-split-axis", _mha_as(split=_wrong_split), ["on x (2, 5, 12) with n_heads = 3", "wrong axis", "view(B, T, H, Dk).transpose(1, 2)"]),
    ("merge-without-transpose", _mha_as(merge=_merge_without_transpose), ["merged without transposing back"]),
    ("no-W_O", _mha_as(use_wo=False), ["concatenation of the heads", "W^O"]),
    ("sqrt-d_model", _mha_as(scale=lambda D, Dk: D), ["√d_model = √12", "√d_k = √4"]),
    ("no-scale", _mha_as(scale=lambda D, Dk: 1), ["not scaled"]),
    ("softmax-over-queries", _mha_as(dim=-2), ["dim=-1"]),
    ("nn.Linear-convention", _mha_as(transpose_w=True), ["x @ w.T", "x @ w_q"]),
    ("no-softmax", _mha_as(normalise=lambda s, dim: s), ["scaled scores, before the softmax"]),
    ("scaled-after-softmax", _mha_as(normalise=lambda s, dim: s.softmax(dim) / math.sqrt(2)), ["don't sum to 1"]),
    ("merge-with-view", _mha_as(merge=_merge_with_view), ["on x (2, 5, 12) with n_heads = 3", ".view failed", "no longer contiguous"]),
    ("swapped-pair", swapped_pair, ["wrong order", "return (output, weights)"]),
    ("averaged-weights", averaged_weights, ["(B, T, T)", "not their average"]),
    ("output-only", output_only, ["return a pair (output, weights)"]),
    ("hard-coded-3-heads", lambda x, *ws: multi_head_attention(x, *ws[:4], 3), ["with n_heads = 2"]),
])  # fmt: skip


@pytest.mark.parametrize("answer, words", WRONG_MHA)
def test_typical_mistakes_are_named_4_6(answer, words):
    result = check("4.6", answer)
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message


def test_the_reference_matches_course_lib_multi_head_attention():
    """The check's convention x @ w is nn.Linear's weight transposed: the two must agree."""
    mha = MultiHeadAttention(12, 3, bias=False)
    x = torch.randn(2, 5, 12)
    ws = [layer.weight.T for layer in (mha.w_q, mha.w_k, mha.w_v, mha.w_o)]
    out, weights = multi_head_attention(x, *ws, 3)
    ref_out, ref_weights = mha(x, x, x, need_weights=True)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(weights, ref_weights)


# The shape walk-through ------------------------------------------------------------------------


def _walk_with(**changes):
    def walk(d_model, n_heads, batch=2, seq_len=10):
        shapes = walk_shapes(d_model, n_heads, batch, seq_len)
        return shapes | {k: f(d_model, n_heads, batch, seq_len) for k, f in changes.items()}

    return walk


WRONG_WALKS = _cases([
    ("q_heads-no-transpose", _walk_with(q_heads=lambda D, H, B, T: (B, T, H, D // H)), ["stage 'q_heads' is (2, 10, 8, 8)", "before the transpose"]),
    ("scores-no-heads", _walk_with(scores=lambda D, H, B, T: (B, T, T)), ["one T x T score matrix per head"]),
    ("concat-wrong", _walk_with(concat=lambda D, H, B, T: (B, H, T * (D // H))), ["along the features"]),
    ("output-d_k", _walk_with(output=lambda D, H, B, T: (B, T, D // H)), ["input's shape"]),
    ("q_heads-full-width", _walk_with(q_heads=lambda D, H, B, T: (B, H, T, D)), ["d_k = d_model/h = 8"]),
    ("missing-stage", lambda *a: {"x": (2, 10, 64)}, ["lacks the stage(s) 'q'"]),
    ("a-list", lambda *a: [(2, 10, 64)], ["should return a dict"]),
    ("tensors-not-shapes", lambda d, h, batch=2, seq_len=10: dict.fromkeys(STAGES, torch.zeros(batch, seq_len, d)), ["`x` holds a tensor", "tuple(t.shape)"]),
    ("fixed-batch", lambda d, h, batch=2, seq_len=10: walk_shapes(d, h), ["batch = 1, seq_len = 5", "stage 'x' is (2, 10, 12)"]),
])  # fmt: skip


@pytest.mark.parametrize("answer, words", WRONG_WALKS)
def test_typical_mistakes_are_named_4_8(answer, words):
    result = check("4.8", answer)
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message


def test_a_walk_may_give_torch_sizes():
    sized = lambda *a: {k: torch.Size(v) for k, v in walk_shapes(*a).items()}  # noqa: E731
    assert check("4.8", sized).status == PASSED
