"""Tests of the lesson 4 checks (``course_lib/checks/lesson04.py``).

For every exercise: the reference answer (and an equally valid variant) passes, the lesson's
stub is "not done", and typical wrong answers fail with a message naming the mistake.
Answers are written the way a learner would write them.
"""

import math

import pytest
import torch
from torch import nn
from typical_answers import forgets_return
from verdicts import fails

from course_lib.attention import MultiHeadAttention
from course_lib.checks import EXERCISES, FAILED, NOT_DONE, PASSED, check
from course_lib.checks._core import DIFFERENCE, EXCEPTION, RULE, TYPE
from course_lib.parameters import count_parameters


def _cases(rows):
    return [pytest.param(*row[1:], id=row[0]) for row in rows]


# What each wrong answer's diagnosis is, where it is not a named mistake (MISTAKE).
KINDS = {
    "4.1-other": TYPE,
    "4.2-text": TYPE,
    "4.2-nan": TYPE,
    "4.7-other": DIFFERENCE,
    "twenty-biases": DIFFERENCE,
    "crashes": EXCEPTION,
    "hard-coded-3-heads": EXCEPTION,
    "returns-numpy": TYPE,
    "output-only": TYPE,
    "a-list": TYPE,
    "shapes-not-tensors": TYPE,
    "numpy-stage": TYPE,
    "nudged-heads": DIFFERENCE,
}


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


def walk_stages(x, w_q, w_k, w_v, w_o, n_heads):
    q = x @ w_q
    q_heads = split_heads(q, n_heads)
    k_heads, v_heads = split_heads(x @ w_k, n_heads), split_heads(x @ w_v, n_heads)
    scores = q_heads @ k_heads.transpose(-2, -1) / math.sqrt(q_heads.shape[-1])
    heads = scores.softmax(dim=-1) @ v_heads
    concat = merge_heads(heads)
    return dict(x=x, q=q, q_heads=q_heads, scores=scores, heads=heads, concat=concat, output=concat @ w_o)  # fmt: skip


def walk_with_einsum(x, w_q, w_k, w_v, w_o, n_heads):
    """The same stages, in float32 and with einsum: equally right."""
    x32, (w_q, w_k, w_v, w_o) = x.float(), (w.float() for w in (w_q, w_k, w_v, w_o))
    q = torch.einsum("btd,de->bte", x32, w_q)
    q_heads, k_heads, v_heads = (t.unflatten(-1, (n_heads, -1)).transpose(1, 2) for t in (q, x32 @ w_k, x32 @ w_v))  # fmt: skip
    scores = torch.einsum("bhqd,bhkd->bhqk", q_heads, k_heads) * q_heads.shape[-1] ** -0.5
    heads = torch.softmax(scores, -1) @ v_heads
    concat = heads.transpose(1, 2).flatten(-2)
    return dict(x=x32, q=q, q_heads=q_heads, scores=scores, heads=heads, concat=concat, output=concat @ w_o)  # fmt: skip


def mha_parameter_count(d_model, n_heads, bias):
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def count_by_building(d_model, n_heads, bias):
    return sum(p.numel() for p in MultiHeadAttention(d_model, n_heads, bias=bias).parameters())


RIGHT = [
    pytest.param("4.1", ("d",), id="4.1"),
    pytest.param("4.1", (" (D) ",), id="4.1-loose"),
    pytest.param("4.2", (1_048_576, 1_050_624), id="4.2"),
    pytest.param("4.2", (4 * 512**2, 4.0 * 512**2 + 4 * 512), id="4.2-expressions"),
    pytest.param("4.3", ("a",), id="4.3"),
    pytest.param("4.4", (split_heads,), id="4.4"),
    pytest.param("4.4", (lambda x, h: x.transpose(1, 2).reshape(x.shape[0], h, -1, x.shape[1]).transpose(2, 3),), id="4.4-features-first"),  # fmt: skip
    pytest.param("4.4", (lambda x, h: x.unflatten(-1, (h, -1)).permute(0, 2, 1, 3),), id="4.4-unflatten"),  # fmt: skip
    pytest.param("4.5", (merge_heads,), id="4.5"),
    pytest.param("4.5", (lambda x: x.transpose(1, 2).contiguous().view(x.shape[0], x.shape[2], -1),), id="4.5-contiguous"),  # fmt: skip
    pytest.param("4.6", (multi_head_attention,), id="4.6"),
    pytest.param("4.6", (mha_with_einsum,), id="4.6-einsum"),
    pytest.param("4.7", (12_480, 16_640), id="4.7"),
    pytest.param("4.8", (walk_stages,), id="4.8"),
    pytest.param("4.8", (walk_with_einsum,), id="4.8-einsum-float32"),
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


def walk_on_a_stub(x, w_q, w_k, w_v, w_o, n_heads):
    return {"q_heads": split_heads_stub(x @ w_q, n_heads)}


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
    ("4.1-b", "4.1", ("b",), ["(b) is not the best answer", "would not all be the same"]),
    ("4.1-c", "4.1", ("c",), ["adds no parameters"]),
    ("4.1-other", "4.1", ("e",), ['one of "a", "b", "c", "d"']),
    ("4.3-b", "4.3", ("b",), ["(b) is not the best answer", "do not grow with h"]),
    ("4.3-c", "4.3", ("c",), ["stays T²·d_model"]),
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
    ("4.2-text", "4.2", ("1,048,576", 1_050_624), ["is the text '1,048,576', not a number", "1_048_576"]),
    ("4.2-fraction", "4.2", (1_048_576.5, 1_050_624), ["whole number"]),
    ("4.2-slices", "4.2", (950_272, 1_050_624), ["29 heads' slices of 512 x 64", "the 8 heads' slices of a projection make one 512 x 512 matrix"]),
    ("4.2-two-matrices", "4.2", (524_288, 1_050_624), ["2 weight matrices of 512 x 512 and 0 bias vectors"]),
    ("4.2-nan", "4.2", (float("nan"), 1_050_624), ["`total_weights` = nan", "whole number"]),
    ("4.7-swapped", "4.7", (16_640, 12_480), ["swapped"]),
    ("4.7-no-bias-three", "4.7", (12_288, 16_640), ["64 biases"]),
    ("4.7-no-bias-four", "4.7", (12_480, 16_384), ["biases by default"]),
    ("4.7-no-W_O", "4.7", (12_480, 12_480), ["output map W^O"]),
    ("4.7-per-head", "4.7", (12_480, 66_560), ["share the 64 x 64 maps"]),
    ("4.7-other", "4.7", (13_312, 16_640), ["`params_three_linears` = 13,312: expected 12,480: 3 matrices of 64 x 64 and 3 bias vectors of 64"]),
    ("4.7-not-a-multiple", "4.7", (12_481, 16_640), ["12,481: not a multiple of d_model = 64 (1 more than one)"]),
    ("4.7-two-maps", "4.7", (8_320, 16_640), ["2 weight matrices of 64 x 64 and 2 bias vectors", "3 matrices of 64 x 64 and 3 bias vectors"]),
])  # fmt: skip


@pytest.mark.parametrize("exercise_id, answers, words", WRONG_COUNTS)
def test_typical_miscounts_are_named(exercise_id, answers, words, request):
    result = check(exercise_id, *answers)
    fails(result, words, request, KINDS)


def _formula(weights, biases):
    return lambda d, h, bias: weights(d, h) + (biases(d, h) if bias else 0)


WRONG_FORMULAS = _cases([
    ("no-W_O", _formula(lambda d, h: 3 * d * d, lambda d, h: 3 * d), ["returned 12,480", "output projection W^O"]),
    ("full-width", _formula(lambda d, h: 4 * h * d * d, lambda d, h: 4 * h * d), ["full-width"]),
    ("bias-ignored", lambda d, h, bias: 4 * d * d, ["bias=True"]),
    ("bias-always", lambda d, h, bias: 4 * d * d + 4 * d, ["bias = False", "bias=False: count the weights only"]),
    ("bias-one-number", _formula(lambda d, h: 4 * d * d, lambda d, h: 4), ["not one number"]),
    ("bias-d_k", _formula(lambda d, h: 4 * d * d, lambda d, h: 4 * (d // h)), ["not d_k"]),
    ("bias-n_heads", _formula(lambda d, h: 4 * d * d, lambda d, h: 4 * h), ["for d_model = 64, n_heads = 8, bias = True it returned 16,416", "counted 4·n_heads times"]),
    ("bias-as-a-row-and-column", _formula(lambda d, h: 4 * d * d, lambda d, h: 8 * d + 4), ["4·(d_model + 1)²"]),
    ("no-W_O-without-bias-only", lambda d, h, bias: 4 * d * d + 4 * d if bias else 3 * d * d, ["bias = False it returned 12,288", "output projection W^O"]),
    ("hard-coded-64", lambda d, h, bias: 16_640 if bias else 16_384, ["d_model = 512", "the same count as for every other d_model"]),
    ("off-by-one", lambda d, h, bias: 4 * d * d + (4 * d if bias else 0) + 1, ["for d_model = 64, n_heads = 8, bias = True it returned 16,641: not a multiple of d_model = 64"]),
    ("twenty-biases", lambda d, h, bias: 4 * d * d + (20 * d if bias else 0), ["bias = True it returned 17,664: expected 16,640: 4 matrices of 64 x 64 and 4 bias vectors of 64"]),
    ("negative", lambda d, h, bias: -(4 * d * d + (4 * d if bias else 0)), ["returned -16,640: a count is never negative"]),
    ("a-division", lambda d, h, bias: 4 * d * d + (4 * d / 3 if bias else 0), ["a count is a whole number", "a division where a product belongs"]),
    ("returns-nothing", forgets_return, ["`mha_parameter_count` returned None"]),
    ("crashes", lambda d, h, bias: d / 0, ["ZeroDivisionError", "when called for d_model = 64"]),
])  # fmt: skip


@pytest.mark.parametrize("formula, words", WRONG_FORMULAS)
def test_typical_mistakes_are_named_4_9(formula, words, request):
    result = check("4.9", formula)
    fails(result, words, request, KINDS)


def test_biases_counted_per_head_are_not_blamed_on_d_k_4_9():
    """At d_model = 64, h = 8, 4·n_heads = 4·d_k: the check names what the function did."""
    result = check("4.9", _formula(lambda d, h: 4 * d * d, lambda d, h: 4 * h))
    assert "n_heads" in result.message and "not d_k" not in result.message, result.message


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
    ("returns-numpy", lambda x, n_heads: split_heads(x, n_heads).numpy(), ["split_heads should return a torch.Tensor; got ndarray"]),
])  # fmt: skip


@pytest.mark.parametrize("answer, words", WRONG_SPLITS)
def test_typical_mistakes_are_named_4_4(answer, words, request):
    result = check("4.4", answer)
    fails(result, words, request, KINDS)


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
def test_typical_mistakes_are_named_4_5(answer, words, request):
    result = check("4.5", answer)
    fails(result, words, request, KINDS)


# The forward pass --------------------------------------------------------------------------


def _mha_as(split=split_heads, merge=merge_heads, scale=None, use_wo=True, dim=-1, transpose_w=False, normalise=lambda s, dim: s.softmax(dim=dim), transpose_k=True):  # fmt: skip
    def mha(x, w_q, w_k, w_v, w_o, n_heads):
        if transpose_w:
            w_q, w_k, w_v, w_o = w_q.T, w_k.T, w_v.T, w_o.T
        q, k, v = (split(x @ w, n_heads) for w in (w_q, w_k, w_v))
        d = q.shape[-1] if scale is None else scale(x.shape[-1], q.shape[-1])
        weights = normalise(q @ (k.transpose(-2, -1) if transpose_k else k) / math.sqrt(d), dim)
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
    ("no-softmax", _mha_as(normalise=lambda s, dim: s), ["these are the scaled scores: the softmax"]),
    ("scaled-after-softmax", _mha_as(normalise=lambda s, dim: s.softmax(dim) / math.sqrt(2)), ["don't sum to 1"]),
    ("merge-with-view", _mha_as(merge=_merge_with_view), ["on x (2, 5, 12) with n_heads = 3", ".view failed", "no longer contiguous"]),
    ("swapped-pair", swapped_pair, ["wrong order", "return (output, weights)"]),
    ("averaged-weights", averaged_weights, ["(B, T, T)", "not their average"]),
    ("output-only", output_only, ["return a pair (output, weights)"]),
    ("hard-coded-3-heads", lambda x, *ws: multi_head_attention(x, *ws[:4], 3), ["with n_heads = 2"]),
    ("keys-not-transposed", _mha_as(split=lambda t, H: split_heads(t, H), normalise=lambda s, dim: s.softmax(dim), transpose_k=False), ["RuntimeError", "Tip: the shapes of a matrix product don't fit", "k.transpose(-2, -1)"]),
    ("elementwise-projection", lambda x, w_q, *rest: (x * w_q, None), ["Tip: two tensors whose shapes don't line up", "@"]),
])  # fmt: skip


@pytest.mark.parametrize("answer, words", WRONG_MHA)
def test_typical_mistakes_are_named_4_6(answer, words, request):
    result = check("4.6", answer)
    fails(result, words, request, KINDS)


def test_the_reference_matches_course_lib_multi_head_attention():
    """The check's convention x @ w is nn.Linear's weight transposed: the two must agree."""
    mha = MultiHeadAttention(12, 3, bias=False)
    x = torch.randn(2, 5, 12)
    ws = [layer.weight.T for layer in (mha.w_q, mha.w_k, mha.w_v, mha.w_o)]
    out, weights = multi_head_attention(x, *ws, 3)
    ref_out, ref_weights = mha(x, x, x, need_weights=True)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(weights, ref_weights)


# Every stage of the walk, its shape and its values (4.8) ---------------------------------------


def _walk_with(**changes):
    """The reference walk with some stages replaced: ``stage=f(stages, x, ws, n_heads)``."""

    def walk(x, w_q, w_k, w_v, w_o, n_heads):
        stages = walk_stages(x, w_q, w_k, w_v, w_o, n_heads)
        ws = (w_q, w_k, w_v, w_o)
        return stages | {k: f(stages, x, ws, n_heads) for k, f in changes.items()}

    return walk


def _walk_as(project=lambda x, w: x @ w, split=split_heads, scale=None, weigh=None, merge=merge_heads, values="v"):  # fmt: skip
    """A whole walk with one step done wrong; the later stages follow from it."""

    def walk(x, w_q, w_k, w_v, w_o, n_heads):
        q = project(x, w_q)
        q_heads, k_heads, v_heads = (split(t, n_heads) for t in (q, project(x, w_k), project(x, w_v)))  # fmt: skip
        d_k = q_heads.shape[-1]
        raw = q_heads @ k_heads.transpose(-2, -1)
        scores = raw / math.sqrt(d_k) if scale is None else scale(raw, d_k, x.shape[-1])
        weights = scores.softmax(dim=-1) if weigh is None else weigh(scores)
        heads = weights @ {"v": v_heads, "k": k_heads, "q": q_heads}[values]
        concat = merge(heads)
        output = project(concat, w_o)
        return dict(x=x, q=q, q_heads=q_heads, scores=scores, heads=heads, concat=concat, output=output)  # fmt: skip

    return walk


def _stages_of_shapes(x, w_q, w_k, w_v, w_o, n_heads):
    """The exercise as it was: the shapes, not the tensors."""
    return {k: tuple(v.shape) for k, v in walk_stages(x, w_q, w_k, w_v, w_o, n_heads).items()}


WRONG_WALKS = _cases([
    ("q_heads-no-transpose", _walk_with(q_heads=lambda s, x, ws, H: s["q"].unflatten(-1, (H, -1))), ["on x (2, 5, 12) with n_heads = 3", "stage 'q_heads'", "`q_heads` should have shape (2, 3, 5, 4); got (2, 5, 3, 4)", "add .transpose(1, 2)"]),
    ("q_heads-wrong-axis", _walk_as(split=lambda t, H: t.reshape(t.shape[0], H, t.shape[1], -1)), ["stage 'q_heads'", "wrong axis"]),
    ("q_heads-interleaved", _walk_as(split=lambda t, H: t.unflatten(-1, (-1, H)).permute(0, 3, 1, 2)), ["stage 'q_heads'", "every h-th feature"]),
    ("q-nn.Linear-convention", _walk_as(project=lambda x, w: x @ w.T), ["stage 'q'", "x @ w_q.T"]),
    ("q-not-projected", _walk_with(q=lambda s, x, ws, H: x), ["stage 'q'", "project it first"]),
    ("q-from-w_k", _walk_with(q=lambda s, x, ws, H: x @ ws[1]), ["stage 'q'", "x @ w_k, the keys"]),
    ("q-from-w_v", _walk_with(q=lambda s, x, ws, H: x @ ws[2]), ["stage 'q'", "x @ w_v, the values"]),
    ("q_heads-of-x", _walk_with(q_heads=lambda s, x, ws, H: split_heads(x, H)), ["stage 'q_heads'", "split q = x @ w_q, not x"]),
    ("scores-unscaled", _walk_as(scale=lambda raw, d_k, D: raw), ["stage 'scores'", "not scaled"]),
    ("scores-sqrt-d_model", _walk_as(scale=lambda raw, d_k, D: raw / math.sqrt(D)), ["stage 'scores'", "√d_model", "√d_k = √4"]),
    ("scores-divided-by-d_k", _walk_as(scale=lambda raw, d_k, D: raw / d_k), ["stage 'scores'", "divided by d_k = 4"]),
    ("scores-after-softmax", _walk_with(scores=lambda s, x, ws, H: s["scores"].softmax(-1)), ["stage 'scores'", "after the softmax"]),
    ("scores-queries-twice", _walk_with(scores=lambda s, x, ws, H: s["q_heads"] @ s["q_heads"].transpose(-2, -1) / 2), ["stage 'scores'", "compare x @ w_q with x @ w_q", "the keys, x @ w_k"]),
    ("scores-no-heads", _walk_with(scores=lambda s, x, ws, H: s["scores"].mean(1)), ["stage 'scores'", "`scores` should have shape (2, 3, 5, 5); got (2, 5, 5)", "one T x T score matrix per head"]),
    ("heads-no-softmax", _walk_as(weigh=lambda s: s), ["stage 'heads'", "no softmax"]),
    ("heads-softmax-over-queries", _walk_as(weigh=lambda s: s.softmax(dim=-2)), ["stage 'heads'", "each column sums to 1"]),
    ("heads-from-the-keys", _walk_as(values="k"), ["stage 'heads'", "applied to x @ w_k", "the values are x @ w_v"]),
    ("heads-from-the-queries", _walk_as(values="q"), ["stage 'heads'", "applied to x @ w_q"]),
    ("heads-weights-transposed", _walk_with(heads=lambda s, x, ws, H: s["scores"].softmax(-1).mT @ split_heads(x @ ws[2], H)), ["stage 'heads'", "transposed weights"]),
    ("heads-softmax-over-heads", _walk_as(weigh=lambda s: s.softmax(dim=1)), ["stage 'heads'", "over the heads (dim=1)"]),
    ("heads-softmax-over-batch", _walk_as(weigh=lambda s: s.softmax(dim=0)), ["stage 'heads'", "over the batch (dim=0)"]),
    ("heads-from-x", _walk_with(heads=lambda s, x, ws, H: s["scores"].softmax(-1) @ split_heads(x, H)), ["stage 'heads'", "applied to x itself"]),
    ("heads-are-the-weights", _walk_with(heads=lambda s, x, ws, H: s["scores"].softmax(-1)), ["stage 'heads'", "`heads` should have shape (2, 3, 5, 4); got (2, 3, 5, 5)", "those are the weights"]),
    ("concat-no-transpose", _walk_as(merge=lambda h: h.reshape(h.shape[0], h.shape[2], -1)), ["stage 'concat'", "not moved back"]),
    ("concat-wrong", _walk_with(concat=lambda s, x, ws, H: s["heads"].flatten(-2)), ["stage 'concat'", "`concat` should have shape (2, 5, 12); got (2, 3, 20)", "along the features"]),
    ("output-no-W_O", _walk_with(output=lambda s, x, ws, H: s["concat"]), ["stage 'output'", "multiply it by W^O"]),
    ("output-w_q", _walk_with(output=lambda s, x, ws, H: s["concat"] @ ws[0]), ["stage 'output'", "used w_q"]),
    ("output-w_v", _walk_with(output=lambda s, x, ws, H: s["concat"] @ ws[2]), ["stage 'output'", "used w_v"]),
    ("output-w_o.T", _walk_with(output=lambda s, x, ws, H: s["concat"] @ ws[3].T), ["stage 'output'", "concat @ w_o.T"]),
    ("output-doubled", _walk_with(output=lambda s, x, ws, H: 2 * s["concat"] @ ws[3]), ["stage 'output'", "is 2 times what it should be", "concat @ w_o"]),
    ("nudged-heads", _walk_with(heads=lambda s, x, ws, H: s["heads"] + 0.01 * (s["heads"] > 0)), ["stage 'heads'", "off by up to 0.01", "softmax(scores, dim=-1) @ v_heads"]),
    ("missing-stage", lambda *a: {"x": a[0]}, ["lacks the stage(s) 'q'", "add q=q"]),
    ("a-list", lambda *a: list(walk_stages(*a).values()), ["should return a dict"]),
    ("shapes-not-tensors", _stages_of_shapes, ["`x` holds a shape, (2, 5, 12)", "store the tensor itself"]),
    ("numpy-stage", _walk_with(output=lambda s, x, ws, H: s["output"].numpy()), ["`output` should be a torch tensor", "ndarray"]),
])  # fmt: skip


@pytest.mark.parametrize("answer, words", WRONG_WALKS)
def test_typical_mistakes_are_named_4_8(answer, words, request):
    fails(check("4.8", answer), words, request, KINDS)


def test_the_walk_gives_the_lessons_shapes_4_8():
    message = check("4.8", walk_stages).message
    assert "(2, 10, 64) -> (2, 8, 10, 8) per head -> (2, 8, 10, 10) scores" in message, message
    assert "(2, 8, 10, 64), d_k = 64" in message, message


# Answers are torch tensors (lessons 1-7) -------------------------------------------------------


@pytest.mark.parametrize(
    "exercise_id, answer, words",
    [
        ("4.4", lambda x, n_heads: split_heads(x, n_heads).numpy(), ["split_heads should return a torch.Tensor; got ndarray"]),
        ("4.5", lambda x: merge_heads(x).numpy(), ["merge_heads should return a torch.Tensor; got ndarray"]),
        ("4.5", lambda x: merge_heads(x).tolist(), ["merge_heads should return a torch.Tensor; got list"]),
        ("4.6", lambda *a: tuple(t.numpy() for t in multi_head_attention(*a)), ["the output is a ndarray", "returns torch tensors"]),
        ("4.6", lambda *a: (multi_head_attention(*a)[0], multi_head_attention(*a)[1].tolist()), ["the weights is a list"]),
        ("4.8", _walk_with(q=lambda s, x, ws, H: s["q"].numpy()), ["`q` should be a torch tensor", "ndarray"]),
    ],
)  # fmt: skip
def test_functions_return_torch_tensors(exercise_id, answer, words):
    result = check(exercise_id, answer)
    assert result.status == FAILED and result.diagnosis == TYPE, result.message
    for word in words:
        assert word in result.message, result.message


# What an answer may use ------------------------------------------------------------------------


def learners(source: str, **names):
    """The function defined by ``source`` as if in a notebook cell (module ``__main__``)."""
    space = {"__name__": "__main__", "torch": torch, "nn": nn, "math": math, **names}
    exec(source, space)
    return next(v for k, v in space.items() if callable(v) and k not in names and k not in ("torch", "nn", "math") and getattr(v, "__module__", "") == "__main__")  # fmt: skip


@pytest.mark.rules
@pytest.mark.parametrize(
    "source",
    [
        "def mha_parameter_count(d_model, n_heads, bias):\n"
        "    return sum(p.numel() for p in MultiHeadAttention(d_model, n_heads, bias=bias).parameters())",
        "def mha_parameter_count(d_model, n_heads, bias):\n"
        "    return count_parameters(MultiHeadAttention(d_model, n_heads, bias=bias))['total']",
    ],
    ids=["numel", "count_parameters"],
)
def test_counting_course_libs_module_is_refused_4_9(source):
    answer = learners(
        source, MultiHeadAttention=MultiHeadAttention, count_parameters=count_parameters
    )
    result = check("4.9", answer)
    assert result.status == FAILED and result.diagnosis == RULE, result.message
    assert "MultiHeadAttention" in result.message


@pytest.mark.rules
def test_a_count_by_building_course_libs_module_is_refused_also_from_its_cell_4_9():
    """In a notebook, the cell that defines the answer is read as well."""
    answer = learners(
        "def mha_parameter_count(d_model, n_heads, bias):\n    return 4 * d_model * (d_model + bias)"
    )
    cells = [
        "from course_lib.attention import MultiHeadAttention",
        "def mha_parameter_count(d_model, n_heads, bias):\n    return 4 * d_model * (d_model + bias)",
    ]
    assert EXERCISES["4.9"].run(answer, sources=cells).status == PASSED
    built = learners(
        "def mha_parameter_count(d_model, n_heads, bias):\n"
        "    return sum(p.numel() for p in MultiHeadAttention(d_model, n_heads, bias=bias).parameters())",
        MultiHeadAttention=MultiHeadAttention,
    )
    result = EXERCISES["4.9"].run(built, sources=[cells[0], "mha_parameter_count = None"])
    assert result.diagnosis == RULE, result.message


def test_counting_pytorchs_module_is_refused_4_9():
    answer = learners(
        "def mha_parameter_count(d_model, n_heads, bias):\n"
        "    return sum(p.numel() for p in nn.MultiheadAttention(d_model, n_heads, bias=bias).parameters())"
    )
    result = check("4.9", answer)
    assert result.status == FAILED and result.diagnosis == RULE, result.message
    assert "nn.MultiheadAttention" in result.message


@pytest.mark.rules
def test_a_walk_on_course_libs_module_is_refused_4_8():
    source = """
def walk_stages(x, w_q, w_k, w_v, w_o, n_heads):
    mha = MultiHeadAttention(x.shape[-1], n_heads, bias=False).double()
    with torch.no_grad():
        for layer, w in zip((mha.w_q, mha.w_k, mha.w_v, mha.w_o), (w_q, w_k, w_v, w_o)):
            layer.weight.copy_(w.T)
    return walk(x, w_q, w_k, w_v, w_o, n_heads)
"""
    answer = learners(source, MultiHeadAttention=MultiHeadAttention, walk=walk_stages)
    result = check("4.8", answer)
    assert result.status == FAILED and result.diagnosis == RULE, result.message


def test_the_success_of_4_3_leaves_the_written_question_to_the_learner():
    """The ✓ message of 4.3 confirms the choice; why a narrow head tells fewer relations
    apart is the written question that follows, so the message does not answer it."""
    message = check("4.3", "a").message
    assert "written question" in message
    for answer in ("low-dimensional", "rank", "too crude", "noisy or redundant"):
        assert answer not in message


def test_an_all_zero_or_negated_result_is_not_called_a_scale_factor_4_4():
    def zeros(x, n_heads):
        return torch.zeros_like(split_heads(x, n_heads))

    def negated(x, n_heads):
        return -split_heads(x, n_heads)

    result = check("4.4", zeros)
    assert result.status == FAILED and "times what it should be" not in result.message
    assert "off by" in result.message, result.message
    assert "sign flipped" in check("4.4", negated).message
