"""Tests of the lesson 3 checks (``course_lib/checks/lesson03.py``).

For every exercise: the reference answer and an equally valid variant pass, typical mistakes
fail with the right diagnosis, and near misses fail with a message saying how far off they are.
Answers are written the way a learner would write them. The lesson's own stubs are tested in
``test_checks_stubs.py``.
"""

import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from typical_answers import forgets_return

from course_lib.checks import FAILED, NOT_DONE, PASSED, check, exercises

NEG_INF = float("-inf")


def _cases(rows):
    """Rows ``(id, exercise_id, answers, words)`` as named test parameters."""
    return [pytest.param(*row[1:], id=row[0]) for row in rows]


# Reference answers ---------------------------------------------------------------------------

SCORES_3_2 = torch.tensor([1.0, 0.0])  # q·k for the keys [1, 0] and [0, 1]
WEIGHTS_3_2 = torch.softmax(SCORES_3_2 / math.sqrt(2), dim=-1)
OUTPUT_3_2 = WEIGHTS_3_2 @ torch.tensor([5.0, 3.0])
CAUSAL_4 = torch.ones(4, 4, dtype=torch.bool).tril()


def apply_with_the_lessons_tensors():
    """With the notebook's q_apply, K_apply and V_apply: the output has shape (1,)."""
    q_apply = torch.tensor([1.0, 0.0])
    K_apply = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    V_apply = torch.tensor([[5.0], [3.0]])
    apply_weights = torch.softmax(q_apply @ K_apply.T / math.sqrt(2), dim=-1)
    return apply_weights, apply_weights @ V_apply


def causal_weights(keep=CAUSAL_4, fill=NEG_INF):
    return torch.zeros(4, 4).masked_fill(~keep, fill).softmax(dim=-1)


def attention(q, k, v, mask=None):
    d_k = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def attention_minus_1e9(q, k, v, mask=None):
    """The annotated-transformer way: matmul, mask == 0 and -1e9."""
    scores = torch.matmul(q, k.mT) / q.shape[-1] ** 0.5
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = F.softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights


def mean_max_weight(std, n=10_000, seed=0):
    g = torch.Generator().manual_seed(seed)
    scores = std * torch.randn(n, 10, generator=g)  # (n, 10)
    return scores.softmax(dim=-1).max(dim=-1).values.mean().item()


def mean_max_weight_normal(std, n=10_000, seed=0):
    """torch.normal draws other numbers from the same seed: as right, within sampling error."""
    scores = torch.normal(0.0, std, (n, 10), generator=torch.Generator().manual_seed(seed))
    return scores.softmax(-1).max(-1).values.mean()  # a 0-d tensor


def mean_max_weight_numpy(std, n=10_000, seed=0):
    scores = np.random.default_rng(seed).normal(0.0, std, size=(n, 10))
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return float((weights / weights.sum(axis=1, keepdims=True)).max(axis=1).mean())


def mean_max_weight_global_seed(std, n=10_000, seed=0):
    torch.manual_seed(seed)  # the global generator, seeded: repeatable too
    return (std * torch.randn(n, 10)).softmax(dim=-1).max(dim=-1).values.mean().item()


def make_causal_mask(T):
    return torch.ones(T, T, dtype=torch.bool).tril()


def make_padding_mask(tokens, pad_id):
    return (tokens != pad_id)[:, None, None, :]  # (B, T) -> (B, 1, 1, T)


def make_decoder_mask(tgt, pad_id):
    return make_padding_mask(tgt, pad_id) & make_causal_mask(tgt.shape[1])


RIGHT = [
    pytest.param("3.1", lambda: ("c",), id="3.1"),
    pytest.param("3.2", lambda: (WEIGHTS_3_2, OUTPUT_3_2), id="3.2"),
    pytest.param("3.2", lambda: ([0.67, 0.33], 4.34), id="3.2-rounded-list"),
    pytest.param("3.2", lambda: ([0.670, 0.330], 4.340), id="3.2-three-decimals"),
    pytest.param("3.2", apply_with_the_lessons_tensors, id="3.2-lesson-tensors"),
    pytest.param("3.2", lambda: (np.array([0.6698, 0.3302]), np.float64(4.3395)), id="3.2-numpy"),
    pytest.param("3.3", lambda: (causal_weights(),), id="3.3"),
    pytest.param("3.3", lambda: (causal_weights(fill=-1e9),), id="3.3-minus-1e9"),
    pytest.param(
        "3.3",
        lambda: ([[1, 0, 0, 0], [1 / 2, 1 / 2, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0], [1 / 4] * 4],),
        id="3.3-list",
    ),
    pytest.param("3.4", lambda: (attention,), id="3.4"),
    pytest.param("3.4", lambda: (attention_minus_1e9,), id="3.4-minus-1e9"),
    pytest.param("3.5", lambda: (mean_max_weight,), id="3.5"),
    pytest.param("3.5", lambda: (mean_max_weight_normal,), id="3.5-torch.normal-tensor"),
    pytest.param("3.5", lambda: (mean_max_weight_numpy,), id="3.5-numpy"),
    pytest.param("3.5", lambda: (mean_max_weight_global_seed,), id="3.5-manual_seed"),
    pytest.param("3.6", lambda: (make_causal_mask,), id="3.6"),
    pytest.param("3.6", lambda: (lambda T: torch.tril(torch.ones(T, T)) == 1,), id="3.6-compare"),
    pytest.param(
        "3.6", lambda: (lambda T: torch.arange(T)[:, None] >= torch.arange(T),), id="3.6-arange"
    ),
    pytest.param("3.7", lambda: (make_padding_mask,), id="3.7"),
    pytest.param(
        "3.7", lambda: (lambda t, p: t.ne(p).unsqueeze(1).unsqueeze(2),), id="3.7-unsqueeze"
    ),
    pytest.param("3.8", lambda: (make_decoder_mask,), id="3.8"),
    pytest.param(
        "3.8",
        lambda: (lambda t, p: make_causal_mask(t.shape[1])[None, None] & make_padding_mask(t, p),),
        id="3.8-causal-first",
    ),
]


@pytest.mark.parametrize("exercise_id, answers", RIGHT)
def test_right_answers_pass(exercise_id, answers):
    result = check(exercise_id, *answers())
    assert result.status == PASSED, result.message


def test_every_exercise_has_a_right_answer_above():
    assert {p.values[0] for p in RIGHT} == {e.id for e in exercises(3)}


@pytest.mark.parametrize(
    "exercise_id, words",
    [
        ("3.2", "output 4.3395"),
        ("3.4", "weights [0.456 0.225 0.320] and output [0.385 0.615]"),  # §4.3 of the course
    ],
)
def test_success_messages_carry_the_worked_numbers(exercise_id, words):
    answers = next(p.values[1] for p in RIGHT if p.values[0] == exercise_id)
    assert words in check(exercise_id, *answers()).message


# Typical mistakes fail with the right diagnosis: 3.1 to 3.3 -------------------------------------

# The rejections below that do not name a mistake, and the kind of diagnosis they are; every
# other one names the mistake (diagnosis "mistake").
NOT_NAMED = {
    "3.3-text": "type",
    "3.3-ragged": "shape",
    "3.5-not-one-number": "shape",
    "3.6-additive": "type",
    "3.6-float": "type",
    "3.6-numpy": "type",
    "3.7-int": "type",
    "3.8-float": "type",
}


def _assert_diagnosis(result, request, prefix=""):
    case = prefix + request.node.callspec.id
    assert result.diagnosis == NOT_NAMED.get(case, "mistake"), (case, result.message)


def _swap(x):
    return x.flip(0)


WRONG_EARLY = _cases([
    ("3.1-a", "3.1", ("a",), ["(a) is not the best answer", "large scores do to the softmax"]),
    ("3.1-b", "3.1", ("b",), ["(b) is not the best answer", "sum to 1"]),
    ("3.1-d", "3.1", ("d",), ["(d) is not the best answer", "cosine"]),
    ("3.2-unscaled", "3.2", (SCORES_3_2.softmax(-1), 4.34), ["softmax([1, 0])", "√d_k = √2"]),
    ("3.2-by-d_k", "3.2", ((SCORES_3_2 / 2).softmax(-1), 4.34), ["divided by d_k = 2", "square root"]),
    ("3.2-swapped", "3.2", (_swap(WEIGHTS_3_2), 4.34), ["swapped", "first weight is the larger"]),
    ("3.2-scores", "3.2", (SCORES_3_2 / math.sqrt(2), 4.34), ["scaled scores"]),
    ("3.2-output-swapped", "3.2", (WEIGHTS_3_2, _swap(WEIGHTS_3_2) @ torch.tensor([5.0, 3.0])), ["wrong value"]),
    ("3.2-sum-of-weights", "3.2", (WEIGHTS_3_2, WEIGHTS_3_2.sum()), ["Σ wᵢ·vᵢ, not of the weights"]),
    ("3.2-output-not-summed", "3.2", (WEIGHTS_3_2, WEIGHTS_3_2 * torch.tensor([5.0, 3.0])), ["products wᵢ·vᵢ", "weights @ V"]),
    ("3.2-one-weight", "3.2", (0.67, 4.34), ["`apply_weights` should have shape (2,); got ()"]),
    ("3.3-upper", "3.3", (causal_weights().T,), ["upper triangle", "j ≤ i"]),
    ("3.3-unmasked", "3.3", (torch.full((4, 4), 0.25),), ["the mask had no effect"]),
    ("3.3-mask-after-softmax", "3.3", (torch.zeros(4, 4).softmax(-1) * CAUSAL_4,), ["after the softmax"]),
    ("3.3-the-mask", "3.3", (CAUSAL_4.float(),), ["the mask's ones and zeros"]),
    ("3.3-no-diagonal", "3.3", (causal_weights(keep=CAUSAL_4.tril(-1)),), ["diagonal is masked", "j ≤ i"]),
    ("3.3-shape", "3.3", (torch.eye(3),), ["(T_q, T_k) = (4, 4); got (3, 3)"]),
    ("3.3-text", "3.3", ("lower triangular",), ["is the text", "should be a number"]),
    ("3.3-inverted", "3.3", (causal_weights(keep=~CAUSAL_4),), ["polarity is inverted"]),
    ("3.3-inverted-1e9", "3.3", (causal_weights(keep=~CAUSAL_4, fill=-1e9),), ["polarity is inverted"]),
    ("3.3-upper-softmax", "3.3", (causal_weights(keep=CAUSAL_4.T),), ["upper triangle"]),
    ("3.3-halves-up", "3.3", ([[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.3, 0.3, 0.3, 0], [0.3] * 4],), ["looks rounded to 1 decimal", "2 decimal places"]),
    ("3.3-columns", "3.3", (torch.zeros(4, 4).masked_fill(~CAUSAL_4, NEG_INF).softmax(dim=0),), ["each column sums to 1"]),
    ("3.3-ragged", "3.3", ([[1.0], [0.5, 0.5], [1 / 3] * 3, [0.25] * 4],), ["rows have different lengths"]),
    ("3.2-not-normalised", "3.2", ((SCORES_3_2 / math.sqrt(2)).exp(), 4.34), ["not yet divided by their sum"]),
])  # fmt: skip


@pytest.mark.parametrize("exercise_id, answers, words", WRONG_EARLY)
def test_typical_mistakes_are_named_3_1_to_3_3(exercise_id, answers, words, request):
    result = check(exercise_id, *answers)
    assert result.status == FAILED
    for word in words:
        assert word in result.message
    _assert_diagnosis(result, request)


def test_the_boolean_mask_given_as_weights_is_named_3_3():
    result = check("3.3", CAUSAL_4)
    assert result.status == FAILED
    assert "the mask's ones and zeros" in result.message


def test_masked_scores_are_not_called_a_masked_diagonal_3_3():
    result = check("3.3", torch.zeros(4, 4).masked_fill(~CAUSAL_4, NEG_INF))
    assert result.status == FAILED
    assert "diagonal is masked" not in result.message


def test_a_masked_diagonal_is_named_with_minus_1e9_too_3_3():
    result = check("3.3", causal_weights(keep=CAUSAL_4.tril(-1), fill=-1e9))
    assert "diagonal is masked" in result.message


# 3.4: the attention function ----------------------------------------------------------------------


def softmax_over_queries(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, NEG_INF)
    weights = scores.softmax(dim=-2)
    return weights @ v, weights


def _with_scale(scale):
    def attention(q, k, v, mask=None):
        scores = q @ k.transpose(-2, -1) * scale(q.size(-1))
        if mask is not None:
            scores = scores.masked_fill(~mask, NEG_INF)
        weights = scores.softmax(dim=-1)
        return weights @ v, weights

    return attention


def _with_mask(apply):
    """``apply(scores, mask)`` -> weights, where the reference masks then takes the softmax."""

    def attention(q, k, v, mask=None):
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        weights = scores.softmax(dim=-1) if mask is None else apply(scores, mask)
        return weights @ v, weights

    return attention


def output_only(q, k, v, mask=None):
    return attention(q, k, v, mask)[0]


def with_k_transposed_on_axes_1_2(q, k, v, mask=None):
    scores = q @ k.transpose(1, 2) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, NEG_INF)
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def with_bmm(q, k, v, mask=None):
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, NEG_INF)
    weights = scores.softmax(dim=-1)
    return torch.bmm(weights, v), weights


def with_k_T(q, k, v, mask=None):
    weights = (q @ k.T / math.sqrt(q.size(-1))).softmax(dim=-1)
    return weights @ v, weights


def scaling_q_in_place(q, k, v, mask=None):
    q /= math.sqrt(q.size(-1))
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, NEG_INF)
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def keys_times_queries(q, k, v, mask=None):
    weights = (k @ q.transpose(-2, -1) / math.sqrt(q.size(-1))).softmax(dim=-2)  # (..., T_k, T_q)
    return weights.transpose(-2, -1) @ v, weights


def without_a_mask_argument(q, k, v):
    return attention(q, k, v)


def scores_times_values(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    return scores @ v, attention(q, k, v, mask)[1]


def returning_the_scores(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    return attention(q, k, v, mask)[0], scores


def weights_and_output_swapped(q, k, v, mask=None):
    output, weights = attention(q, k, v, mask)
    return weights, output


ON_3D = "on q (2, 5, 8), k (2, 6, 8), v (2, 6, 3): "
FOUR_D = "q @ k.transpose(-2, -1) fits any number of leading dimensions"
WRONG_ATTENTION = [
    pytest.param(softmax_over_queries, [ON_3D, "dim=-1", "each column"], id="softmax-dim=-2"),
    pytest.param(
        _with_scale(lambda d_k: 1.0), ["not scaled", "√d_k (here √8 ≈ 2.83)"], id="no-scale"
    ),
    pytest.param(_with_scale(lambda d_k: 1 / d_k), ["divided by d_k = 8", "√d_k"], id="by-d_k"),
    pytest.param(_with_scale(math.sqrt), ["multiplied by √d_k"], id="times-sqrt-d_k"),
    pytest.param(
        _with_mask(lambda s, m: s.softmax(-1).masked_fill(~m, 0.0)),
        ["with a causal mask: ", "after the softmax"],
        id="mask-after-softmax",
    ),
    pytest.param(
        _with_mask(lambda s, m: s.masked_fill(m, NEG_INF).softmax(-1)),
        ["polarity is inverted", "masked_fill(~mask"],
        id="inverted-polarity",
    ),
    pytest.param(
        _with_mask(lambda s, m: s.masked_fill(m, -1e9).softmax(-1)),
        ["polarity is inverted"],
        id="inverted-polarity-minus-1e9",
    ),
    pytest.param(
        _with_mask(lambda s, m: s.masked_fill(~m, 0.0).softmax(-1)),
        ["set to 0", "e⁰ = 1"],
        id="masked-with-0",
    ),
    pytest.param(_with_mask(lambda s, m: s.softmax(-1)), ["mask had no effect"], id="mask-ignored"),
    pytest.param(output_only, ["returned only the output", "(output, weights)"], id="output-only"),
    pytest.param(
        with_k_transposed_on_axes_1_2,
        ["shape (1, 1, 4, 16)", FOUR_D],
        id="transpose(1,2)-on-4-D",
    ),
    pytest.param(with_bmm, ["RuntimeError", "batch1 must be a 3D tensor", FOUR_D], id="bmm-on-4-D"),
    pytest.param(
        with_k_T,
        ["your function raised RuntimeError", "when called on q (2, 5, 8)"],
        id="k.T",
        marks=pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning"),
    ),
    pytest.param(scaling_q_in_place, ["changed q, k or v in place"], id="q-in-place"),
    pytest.param(keys_times_queries, ["(..., T_k, T_q) = (2, 6, 5)", "not k @ qᵀ"], id="k@qT"),
    pytest.param(without_a_mask_argument, ["mask as its fourth argument"], id="no-mask-argument"),
    pytest.param(scores_times_values, ["mixes the values with the scores"], id="scores@v"),
    pytest.param(returning_the_scores, ["these are the scaled scores"], id="scores-as-weights"),
    pytest.param(
        weights_and_output_swapped, ["came back swapped", "(output, weights)"], id="pair-swapped"
    ),
]


@pytest.mark.parametrize("answer, words", WRONG_ATTENTION)
def test_typical_mistakes_are_named_3_4(answer, words, request):
    result = check("3.4", answer)
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message
    _assert_diagnosis(result, request, "3.4-")


# 3.5 to 3.8 ------------------------------------------------------------------------------------


def _mask_fn(mask_of_T):
    return lambda T: mask_of_T(torch.ones(T, T, dtype=torch.bool))


def _padding_fn(from_keep):
    return lambda tokens, pad_id: from_keep(tokens != pad_id)


def _decoder_fn(combine):
    return lambda t, p: combine(make_causal_mask(t.shape[1]), make_padding_mask(t, p))


WRONG_LATE = _cases([
    ("3.5-not-one-number", "3.5", lambda: (lambda std, n, seed: torch.rand(2),), ["one number", "got shape (2,)"]),
    ("3.6-float", "3.6", lambda: (lambda T: torch.ones(T, T).tril(),), ["boolean tensor", "torch.float32"]),
    ("3.6-inverted", "3.6", lambda: (_mask_fn(lambda m: m.triu(1)),), ["True marks the future"]),
    ("3.6-upper", "3.6", lambda: (_mask_fn(lambda m: m.triu()),), ["lower triangle", "torch.tril"]),
    ("3.6-no-diagonal", "3.6", lambda: (_mask_fn(lambda m: m.tril(-1)),), ["diagonal is masked (False)", "not j < i"]),
    ("3.6-all-true", "3.6", lambda: (_mask_fn(lambda m: m),), ["nothing is hidden"]),
    ("3.6-(1,T,T)", "3.6", lambda: (_mask_fn(lambda m: m.tril()[None]),), ["(T, T) = (4, 4); got (1, 4, 4)"]),
    ("3.6-T-fixed", "3.6", lambda: (lambda T: make_causal_mask(4),), ["`make_causal_mask(1)` should have shape"]),
    ("3.6-numpy", "3.6", lambda: (lambda T: np.tri(T, dtype=bool),), ["return a torch.Tensor; got ndarray"]),
    ("3.6-additive", "3.6", lambda: (lambda T: torch.zeros(T, T).masked_fill(~make_causal_mask(T), NEG_INF),), ["additive float mask", "`mask == 0`", "torch.isfinite"]),
    ("3.7-(B,T)", "3.7", lambda: (_padding_fn(lambda keep: keep),), ["got (2, 5)", "(B, 1, 1, T)"]),
    ("3.7-(B,1,T)", "3.7", lambda: (_padding_fn(lambda keep: keep[:, None]),), ["got (2, 1, 5)", "(B, 1, 1, T)"]),
    ("3.7-query-axis", "3.7", lambda: (_padding_fn(lambda keep: keep[:, None, :, None]),), ["query axis"]),
    ("3.7-inverted", "3.7", lambda: (_padding_fn(lambda keep: ~keep[:, None, None, :]),), ["True marks the padding"]),
    ("3.7-pad_id-ignored", "3.7", lambda: (lambda t, p: make_padding_mask(t, 0),), ["`pad_id` was ignored", "pad_id = 1"]),
    ("3.7-int", "3.7", lambda: (_padding_fn(lambda keep: keep[:, None, None, :].int()),), ["torch.int32"]),
    ("3.8-causal-only", "3.8", lambda: (_decoder_fn(lambda c, p: c),), ["padding keys are still visible", "&"]),
    ("3.8-causal-only-4-D", "3.8", lambda: (_decoder_fn(lambda c, p: c[None, None]),), ["padding keys are still visible"]),
    ("3.8-padding-only", "3.8", lambda: (_decoder_fn(lambda c, p: p),), ["combine with the causal mask"]),
    ("3.8-or", "3.8", lambda: (_decoder_fn(lambda c, p: c | p),), ["`|` lets a key through", "with `&`"]),
    ("3.8-inverted", "3.8", lambda: (_decoder_fn(lambda c, p: ~(c & p)),), ["polarity is inverted"]),
    ("3.8-all-true", "3.8", lambda: (_decoder_fn(lambda c, p: (c | True).expand(2, 1, 5, 5)),), ["nothing is hidden"]),
    ("3.8-(B,T,T)", "3.8", lambda: (_decoder_fn(lambda c, p: (c & p)[:, 0]),), ["(2, 5, 5) has no head axis", "(B, 1, T, T)"]),
    ("3.8-float", "3.8", lambda: (_decoder_fn(lambda c, p: (c & p).float()),), ["boolean tensor"]),
    ("3.8-None", "3.8", lambda: (forgets_return,), ["returned None", "return ..."]),
    ("3.5-max-without-values", "3.5", lambda: (lambda std, n, seed: (std * torch.randn(n, 10)).softmax(-1).max(-1),), ["take .values"]),
    ("3.6-one-above", "3.6", lambda: (_mask_fn(lambda m: m.tril(1)),), ["the very next token"]),
    ("3.8-pad-hard-coded", "3.8", lambda: (lambda t, p: make_padding_mask(t, 0) & make_causal_mask(t.shape[1]),), ["`pad_id` was ignored", "pad_id = 3"]),
    ("3.8-query-axis", "3.8", lambda: (lambda t, p: (t != p)[:, None, :, None] & make_causal_mask(t.shape[1]),), ["hides query rows"]),
    ("3.8-both-axes", "3.8", lambda: (lambda t, p: (t != p)[:, None, :, None] & make_padding_mask(t, p) & make_causal_mask(t.shape[1]),), ["hides query rows", "(B, 1, 1, T)"]),
    ("3.8-no-diagonal", "3.8", lambda: (_decoder_fn(lambda c, p: c.tril(-1) & p),), ["diagonal is masked (False)"]),
])  # fmt: skip


@pytest.mark.parametrize("exercise_id, answers, words", WRONG_LATE)
def test_typical_mistakes_are_named_3_5_to_3_8(exercise_id, answers, words, request):
    result = check(exercise_id, *answers())
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message
    _assert_diagnosis(result, request)


# Near misses: off by 0.05 in one entry, and the message says how far ------------------------------


def _nudged(x, index, by=0.05):
    x = torch.as_tensor(x, dtype=torch.float64).clone()
    x[index] += by
    return x


def _nudged_attention(which, by=0.05):
    def attention_off(q, k, v, mask=None):
        pair = list(attention(q, k, v, mask))
        pair[which] = _nudged(pair[which], (..., 1, 0), by)
        return tuple(pair)

    return attention_off


NEAR_MISSES = _cases([
    ("3.2-weights", "3.2", lambda: (_nudged(WEIGHTS_3_2, 0), OUTPUT_3_2), "`apply_weights` is off by up to 0.05 at index (0,)"),
    ("3.2-output", "3.2", lambda: (WEIGHTS_3_2, OUTPUT_3_2 + 0.05), "`apply_output` is off by up to 0.05: expected 4.3395, got 4.3895"),
    ("3.3", "3.3", lambda: (_nudged(causal_weights(), (2, 1)),), "off by up to 0.05 at index (2, 1): expected 0.3333, got 0.3833"),
    ("3.4-weights", "3.4", lambda: (_nudged_attention(1),), ON_3D + "`weights` is off by up to 0.05 at index ("),
    ("3.4-output", "3.4", lambda: (_nudged_attention(0),), ON_3D + "`output` is off by up to 0.05 at index ("),
    ("3.5-std-5%-high", "3.5", lambda: (lambda std, n, seed: mean_max_weight(1.05 * std, n, seed),), "the exact value is 0.3202"),
    ("3.6-one-entry", "3.6", lambda: (lambda T: _nudged(make_causal_mask(T), (T - 1, 0), -1).bool(),), "differs from the causal mask in 1 of 16 places"),
])  # fmt: skip


@pytest.mark.parametrize("exercise_id, answers, words", NEAR_MISSES)
def test_near_misses_fail_and_say_how_far_off(exercise_id, answers, words):
    result = check(exercise_id, *answers())
    assert (result.status, result.diagnosis) == (FAILED, "difference")
    assert words in result.message


def test_a_mean_off_by_more_than_sampling_error_is_explained_3_5():
    result = check("3.5", lambda std, n, seed: mean_max_weight(1.05 * std, n, seed))
    assert result.message.startswith("for std = 1 the mean of your function's results over 8 ")
    assert "σ/√n = 0.0011" in result.message and "more than sampling error" in result.message
    assert "yours fits scores of standard deviation 1.0" in result.message  # 1.05


def keys_before_queries(q, k, v, mask=None):
    weights = (k @ q.transpose(-2, -1) / math.sqrt(q.size(-1))).softmax(dim=-1)
    return weights @ v, weights


def masking_by_boolean_index(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores[~mask] = float("-inf")  # fails: the mask is (T, T), the scores (B, T, T)
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def test_keys_before_queries_is_told_to_check_the_order_of_the_product():
    result = check("3.4", keys_before_queries)
    assert result.status == FAILED
    assert "check the order of the product" in result.message and "q @ kᵀ" in result.message


def test_the_rank_tip_is_kept_for_code_that_fits_one_rank():
    result = check("3.4", masking_by_boolean_index)
    assert result.status == FAILED and "your function raised IndexError" in result.message
    assert "k.T reverses" not in result.message


# 3.5: a measurement, not a number. The check runs the learner's function on its own seeds and
# sizes; right functions pass whatever their draws, and typed values, too few rows or a wrong
# setting fail with the sampling error explained -----------------------------------------------


def _measuring(keys=10, scale=lambda std: std, rows=None, offset=0, how="max"):
    """The learner's function with one thing changed: scores per row, the scale, a fixed
    number of rows, other draws (``offset`` added to the seed), or the reduction."""

    def mean_max_weight(std, n=10_000, seed=0):
        g = torch.Generator().manual_seed(seed + offset)
        weights = (scale(std) * torch.randn(rows or n, keys, generator=g)).softmax(dim=-1)
        return getattr(weights, how)(dim=-1).values.mean().item()

    return mean_max_weight


@pytest.mark.parametrize("offset", [0, 1000, 2000, 3000, 4000, 5000, 6000, 7000])
def test_a_right_function_passes_3_5_whatever_its_draws(offset):
    result = check("3.5", _measuring(offset=offset))
    assert result.status == PASSED, result.message


@pytest.mark.parametrize(
    "typed",
    [
        lambda std, n=10_000, seed=0: 0.87 if std == 8 else 0.32,  # the old answers, typed
        lambda std, n=10_000, seed=0: {8: 0.8661, 1: 0.3202, 2: 0.5317}[std],  # exact, typed
    ],
)
def test_typed_theoretical_values_fail_3_5(typed):
    result = check("3.5", typed)
    assert (result.status, result.diagnosis) == (FAILED, "mistake")
    assert "for every seed" in result.message and "not a measurement" in result.message


def test_too_few_rows_are_told_by_their_scatter_not_as_another_std_3_5():
    result = check("3.5", _measuring(rows=100))
    assert (result.status, result.diagnosis) == (FAILED, "mistake"), result.message
    assert "scatter by" in result.message and "σ/√n" in result.message
    assert "means of about" in result.message and "draw n rows" in result.message
    assert "standard deviation 9" not in result.message and "not 8" not in result.message


@pytest.mark.parametrize(
    "settings, words",
    [
        pytest.param(
            {"scale": lambda std: 1.0}, "same numbers for std = 8 and std = 1", id="no-std"
        ),
        pytest.param({"rows": 10_000}, "ignores n", id="n-ignored"),
        pytest.param({"how": "min"}, "*smallest* weight", id="min"),
    ],
)
@pytest.mark.parametrize("offset", [0, 1000, 2000])
def test_other_settings_fail_3_5_and_are_named(settings, words, offset):
    result = check("3.5", _measuring(offset=offset, **settings))
    assert (result.status, result.diagnosis) == (FAILED, "mistake"), result.message
    assert words in result.message


def _draw(std, n, seed, shape=None):
    g = torch.Generator().manual_seed(seed)
    return std * torch.randn(*(shape or (n, 10)), generator=g)


WRONG_3_5 = _cases([
    ("mean", "3.5", lambda std, n, seed: _draw(std, n, seed).softmax(-1).mean(), ["1/10", "each row's largest weight first"]),
    ("log-softmax", "3.5", lambda std, n, seed: _draw(std, n, seed).log_softmax(-1).max(-1).values.mean(), ["log-probabilities"]),
    ("no-softmax", "3.5", lambda std, n, seed: _draw(std, n, seed).max(-1).values.mean(), ["largest *score*", "softmax is missing"]),
    ("sum", "3.5", lambda std, n, seed: _draw(std, n, seed).softmax(-1).max(-1).values.sum(), ["a sum over the rows", ".mean()"]),
    ("softmax-over-rows", "3.5", lambda std, n, seed: _draw(std, n, seed).softmax(0).max(-1).values.mean(), ["at least 0.1", "over the rows rather than over each row's 10 scores"]),
    ("rows-and-keys-swapped", "3.5", lambda std, n, seed: _draw(std, n, seed, (10, n)).softmax(-1).max(-1).values.mean(), ["at least 0.1", "shape (n, 10)"]),
    ("max-over-rows", "3.5", lambda std, n, seed: _draw(std, n, seed).softmax(-1).max(0).values.mean(), ["over all the rows", "same axis as the softmax"]),
    ("max-over-the-other-axis", "3.5", lambda std, n, seed: _draw(std, n, seed, (10, n)).softmax(0).max(-1).values.mean(), ["over all the rows", "same axis as the softmax"]),
    ("global-generator", "3.5", lambda std, n, seed: (std * torch.randn(n, 10)).softmax(-1).max(-1).values.mean(), ["then", "manual_seed(seed)", "repeated"]),
    ("rounded", "3.5", lambda std, n, seed: round(mean_max_weight(std, n, seed), 2), ["rounds its result to 2 decimal"]),
    ("two-arguments", "3.5", lambda std, n=10_000: mean_max_weight(std, n), ["TypeError", "three arguments"]),
])  # fmt: skip


@pytest.mark.parametrize("exercise_id, answer, words", WRONG_3_5)
def test_mistakes_of_3_5_are_named(exercise_id, answer, words):
    result = check(exercise_id, answer)
    assert (result.status, result.diagnosis) == (FAILED, "mistake"), result.message
    for word in words:
        assert word in result.message, result.message


def test_the_advice_for_a_max_over_the_wrong_axis_does_not_repeat_the_code_3_5():
    """The learner who took .max(dim=-1) of scores drawn as (10, n) is not told to take
    .max(dim=-1): the largest must run over the axis of the softmax."""
    answer = next(p.values[1] for p in WRONG_3_5 if p.id == "max-over-the-other-axis")
    assert ".max(dim=-1)" not in check("3.5", answer).message


# More named mistakes, 3.2 to 3.8 ---------------------------------------------------------------


def _scaled_by(width):
    def attention(q, k, v, mask=None):
        scores = q @ k.transpose(-2, -1) / math.sqrt(width(q, k, v))
        if mask is not None:
            scores = scores.masked_fill(~mask, NEG_INF)
        weights = scores.softmax(dim=-1)
        return weights @ v, weights

    return attention


def numpy_output(q, k, v, mask=None):
    output, weights = attention(q, k, v, mask)
    return output.numpy(), weights


def weights_only(q, k, v, mask=None):
    return attention(q, k, v, mask)[1]


def log_weights(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, NEG_INF)
    weights = scores.log_softmax(dim=-1)
    return weights.exp() @ v, weights


def mask_always(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    scores = scores.masked_fill(~mask, NEG_INF)
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def keys_untransposed(q, k, v, mask=None):
    scores = q @ k / math.sqrt(q.size(-1))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


MORE_WRONG = _cases([
    ("3.2-times-root-2", "3.2", lambda: ((SCORES_3_2 * math.sqrt(2)).softmax(-1), 4.34), ["multiplied the scores by √d_k"]),
    ("3.2-raw-scores", "3.2", lambda: (SCORES_3_2, 4.34), ["raw scores q·k"]),
    ("3.2-log-softmax", "3.2", lambda: ((SCORES_3_2 / math.sqrt(2)).log_softmax(-1), 4.34), ["log-probabilities"]),
    ("3.2-plain-average", "3.2", lambda: (WEIGHTS_3_2, 4.0), ["plain average"]),
    ("3.2-output-broadcast", "3.2", lambda: (WEIGHTS_3_2, WEIGHTS_3_2 * torch.tensor([[5.0], [3.0]])), ["broadcasts", "weights @ V"]),
    ("3.2-batch-axis", "3.2", lambda: (WEIGHTS_3_2[None], OUTPUT_3_2), ["got (1, 2)", "leading batch axis"]),
    ("3.3-five-tokens", "3.3", lambda: (torch.zeros(5, 5).masked_fill(~torch.ones(5, 5, dtype=torch.bool).tril(), NEG_INF).softmax(-1),), ["that is 5 tokens", "(4, 4)"]),
    ("3.3-next-token", "3.3", lambda: (causal_weights(keep=torch.ones(4, 4, dtype=torch.bool).tril(1)),), ["one diagonal too high"]),
    ("3.3-log-softmax", "3.3", lambda: (torch.zeros(4, 4).masked_fill(~CAUSAL_4, NEG_INF).log_softmax(-1),), ["log-probabilities"]),
    ("3.4-scaled-by-T_q", "3.4", lambda: (_scaled_by(lambda q, k, v: q.shape[-2]),), ["scaled by √5", "T_q"]),
    ("3.4-scaled-by-T_k", "3.4", lambda: (_scaled_by(lambda q, k, v: k.shape[-2]),), ["scaled by √6", "T_k, the number of keys"]),
    ("3.4-scaled-by-batch", "3.4", lambda: (_scaled_by(lambda q, k, v: q.shape[0]),), ["scaled by √2", "batch size"]),
    ("3.4-scaled-by-d_v", "3.4", lambda: (_scaled_by(lambda q, k, v: v.shape[-1]),), ["scaled by √3", "d_v"]),
    ("3.4-numpy", "3.4", lambda: (numpy_output,), ["the output is a ndarray", "torch tensors"]),
    ("3.4-weights-only", "3.4", lambda: (weights_only,), ["returned only the weights"]),
    ("3.4-log-softmax", "3.4", lambda: (log_weights,), ["log-probabilities"]),
    ("3.4-mask-always", "3.4", lambda: (mask_always,), ["TypeError", "if mask is not None"]),
    ("3.4-untransposed", "3.4", lambda: (keys_untransposed,), ["shapes don't line up", "k.transpose(-2, -1)"]),
    ("3.6-zeros", "3.6", lambda: (lambda T: torch.zeros(T, T, dtype=torch.bool),), ["everything is False"]),
    ("3.6-one-too-many", "3.6", lambda: (lambda T: make_causal_mask(T + 1),), ["(4, 4); got (5, 5)", "one row and column too many"]),
    ("3.6-other", "3.6", lambda: (lambda T: make_causal_mask(T) & ~torch.eye(T, dtype=torch.bool).flip(0),), ["first where query 2 may attend to key 1"]),
    ("3.7-all-true", "3.7", lambda: (lambda t, p: torch.ones(t.shape[0], 1, 1, t.shape[1], dtype=torch.bool),), ["everything is True"]),
    ("3.7-other", "3.7", lambda: (lambda t, p: make_padding_mask(t, p) & (t != 9)[:, None, None, :],), ["first in sequence 0, where every query may attend to key 2"]),
    ("3.8-causal-inverted", "3.8", lambda: (_decoder_fn(lambda c, p: ~c & p),), ["the causal part is off: True marks the future"]),
    ("3.8-padding-inverted", "3.8", lambda: (_decoder_fn(lambda c, p: c & ~p),), ["the padding part is off: True marks the padding"]),
    ("3.8-next-token", "3.8", lambda: (lambda t, p: make_padding_mask(t, p) & torch.ones(5, 5, dtype=torch.bool).tril(1),), ["one diagonal too high"]),
    ("3.8-upper", "3.8", lambda: (lambda t, p: make_padding_mask(t, p) & torch.ones(5, 5, dtype=torch.bool).triu(),), ["upper triangle"]),
    ("3.8-other", "3.8", lambda: (_decoder_fn(lambda c, p: c & p & ~torch.eye(5, dtype=torch.bool)[None, None, [2, 0, 1, 3, 4]]),), ["first in sequence 0, where query 1 may attend to key 0"]),
])  # fmt: skip


def _attention_with(scores_of=None, weights_of=None, output_of=None):
    """The reference attention with one step replaced: ``scores_of(q, k, d_k)``,
    ``weights_of(scores, mask)`` or ``output_of(weights, v)``."""

    def attention(q, k, v, mask=None):
        d_k = q.size(-1)
        scores = scores_of(q, k, d_k) if scores_of else q @ k.transpose(-2, -1) / math.sqrt(d_k)
        if weights_of:
            weights = weights_of(scores, mask)
        else:
            if mask is not None:
                scores = scores.masked_fill(~mask, NEG_INF)
            weights = scores.softmax(dim=-1)
        return (output_of(weights, v) if output_of else weights @ v), weights

    return attention


MORE_WRONG += _cases([
    ("3.2-elementwise-scores", "3.2", lambda: ((torch.eye(2) * torch.tensor([1.0, 0.0]) / math.sqrt(2)).softmax(-1), 4.34), ["two rows of weights", "K @ q"]),
    ("3.2-output-is-weights", "3.2", lambda: (WEIGHTS_3_2, WEIGHTS_3_2), ["these are the weights", "weights @ V"]),
    ("3.4-elementwise", "3.4", lambda: (_attention_with(scores_of=lambda q, k, d: q * k.transpose(-2, -1)),), ["RuntimeError", "matrix products (@)"]),
    ("3.4-masked-fill-arguments", "3.4", lambda: (_attention_with(weights_of=lambda s, m: (s if m is None else s.masked_fill(NEG_INF, ~m)).softmax(-1)),), ["masked_fill takes the boolean mask first"]),
    ("3.4-softmax-without-dim", "3.4", lambda: (_attention_with(weights_of=lambda s, m: torch.softmax(s)),), ["dim=-1"]),
    ("3.4-weights-times-v", "3.4", lambda: (_attention_with(output_of=lambda w, v: w * v),), ["weights @ v is (..., T_q, T_k) @ (..., T_k, d_v)"]),
    ("3.4-none", "3.4", lambda: (forgets_return,), ["returned None"]),
    ("3.7-batch-second", "3.7", lambda: (lambda t, p: (t != p)[None, :, None, :],), ["batch axis comes first"]),
    ("3.8-T-from-batch", "3.8", lambda: (lambda t, p: make_padding_mask(t, p) & make_causal_mask(t.shape[0]),), ["T = tgt_in.shape[1]"]),
])  # fmt: skip

NOT_NAMED.update({"3.6-other": "difference", "3.7-other": "difference", "3.8-other": "difference"})
NOT_NAMED.update({"3.4-numpy": "type"})


@pytest.mark.parametrize("exercise_id, answers, words", MORE_WRONG)
def test_more_mistakes_are_named(exercise_id, answers, words, request):
    result = check(exercise_id, *answers())
    assert result.status == FAILED
    for word in words:
        assert word in result.message, result.message
    _assert_diagnosis(result, request)


# 3.7's advice for a mask without its axes, and 3.8's pointer to a broken part -----------------


def test_a_mask_without_its_axes_is_told_to_index_the_mask_not_the_ids_3_7():
    result = check("3.7", _padding_fn(lambda keep: keep))
    assert result.status == FAILED
    assert "tokens[:, None, None, :]" not in result.message
    assert "mask[:, None, None, :] with mask = tokens != pad_id" in result.message


def _decoder_built_on(causal: str, padding: str = "(tokens != pad_id)[:, None, None, :]"):
    """A learner's make_decoder_mask calling their own make_causal_mask (returning ``causal``)
    and make_padding_mask (returning ``padding``), as defined in the lesson's cells."""
    space = {"torch": torch}
    exec(
        f"def make_causal_mask(T):\n    {causal}\n\n"
        f"def make_padding_mask(tokens, pad_id):\n    return {padding}\n\n"
        "def make_decoder_mask(tgt_in, pad_id):\n"
        "    return make_padding_mask(tgt_in, pad_id) & make_causal_mask(tgt_in.shape[1])\n",
        space,
    )
    return space["make_decoder_mask"]


def test_a_broken_causal_mask_from_3_6_is_named_by_3_8():
    upper = _decoder_built_on("return torch.ones(T, T, dtype=torch.bool).triu()")
    result = check("3.8", upper)
    assert (result.status, result.diagnosis) == (FAILED, "mistake")
    assert "calls `make_causal_mask`, which does not pass check 3.6 yet" in result.message
    assert "Check 3.6 says: the upper triangle shows later tokens" in result.message


def test_a_broken_padding_mask_from_3_7_is_named_by_3_8():
    inverted = _decoder_built_on(
        "return torch.ones(T, T, dtype=torch.bool).tril()", "(tokens == pad_id)[:, None, None, :]"
    )
    result = check("3.8", inverted)
    assert "calls `make_padding_mask`, which does not pass check 3.7 yet" in result.message


def test_an_unfinished_part_is_named_by_3_8():
    result = check("3.8", _decoder_built_on("raise NotImplementedError()"))
    assert result.status == NOT_DONE
    assert "calls `make_causal_mask`, which is still the stub of exercise 3.6" in result.message


def test_a_part_that_passes_its_check_is_not_blamed_3_8():
    result = check("3.8", _decoder_built_on("return torch.ones(T, T, dtype=torch.bool).tril()"))
    assert result.status == PASSED, result.message


# 3.1's options: the right one is not the longest ---------------------------------------------


LESSON_SOURCE = Path(__file__).parents[1] / "solutions/03_scaled_dot_product_attention.py"


def test_the_right_option_of_3_1_is_not_singled_out_by_length():
    from course_lib.lesson_format import OPTION
    from course_tools import sources

    text = "\n".join(
        c.source
        for c in sources.read(LESSON_SOURCE).cells
        if c.cell_type == "markdown" and "✏️ 3.1" in c.source
    )
    lengths = {letter: len(option.strip()) for letter, option in OPTION.findall(text)}
    assert set(lengths) == set("abcd")
    assert lengths["c"] < max(lengths[x] for x in "abd")


# Messages that must not mislead: the public repositories' rank idioms (3.4), a softmax over the
# wrong axis and a small sample (3.5), an additive mask (3.6), the ids for the mask (3.7), a
# broken part from 3.6 (3.8) -------------------------------------------------------------------


def with_transpose_2_3(q, k, v, mask=None):
    scores = q @ k.transpose(2, 3) / math.sqrt(q.size(-1))  # (B, H, T, T) only
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def with_permute(q, k, v, mask=None):
    scores = q @ k.permute(0, 1, 3, 2) / math.sqrt(q.size(-1))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def with_four_sizes(q, k, v, mask=None):
    B, H, T, d = q.shape
    weights = (q @ k.transpose(-2, -1) / math.sqrt(d)).softmax(dim=-1)
    return weights @ v, weights


@pytest.mark.parametrize(
    "answer, idiom",
    [
        pytest.param(with_transpose_2_3, "transpose(1, 2) or (2, 3)", id="transpose(2,3)"),
        pytest.param(with_permute, "permute(0, 1, 3, 2)", id="permute"),
        pytest.param(with_four_sizes, "B, H, T, d = q.shape", id="four-sizes"),
    ],
)
def test_attention_for_one_rank_gets_the_rank_tip_3_4(answer, idiom):
    result = check("3.4", answer)
    assert (result.status, result.diagnosis) == (FAILED, "mistake"), result.message
    assert idiom in result.message and FOUR_D in result.message


def test_code_for_any_rank_gets_no_rank_tip_3_4():
    """The idioms are read in the code, not in its comments, and `T, d_k = q.shape[-2:]`
    fits any rank: a crash for another reason gets no rank tip."""

    def attention(q, k, v, mask=None):
        T, d_k = q.shape[-2:]  # unlike B, H, T, d = q.shape or k.T, this fits any rank
        scores = q @ k.transpose(-2, -1) / d_k**0.5
        return scores.softmax(dim=-1) @ v[..., :T, :1, None], None  # a crash of its own

    result = check("3.4", attention)
    assert result.status == FAILED and "one rank" not in result.message, result.message


def test_a_crashing_attention_runs_once_3_4():
    """The check reads the crash it has: it does not run the learner's code again to see."""
    calls = []

    def counted(q, k, v, mask=None):
        calls.append(q.shape)
        return keys_before_queries(q, k, v, mask)

    result = check("3.4", counted)
    assert "check the order of the product" in result.message
    assert len(calls) == 1


def test_a_softmax_over_the_rows_is_named_not_told_to_take_each_rows_largest_3_5():
    def softmax_over_rows(std, n, seed):
        return _draw(std, n, seed).softmax(dim=0).max(dim=-1).values.mean().item()

    result = check("3.5", softmax_over_rows)
    assert (result.status, result.diagnosis) == (FAILED, "mistake"), result.message
    assert "the softmax ran over the rows" in result.message
    assert "take each row's largest" not in result.message


def test_ten_rows_are_told_the_sample_is_too_small_3_5():
    result = check("3.5", _measuring(rows=10))
    assert (result.status, result.diagnosis) == (FAILED, "mistake"), result.message
    assert "scatter by" in result.message and "draw n rows" in result.message
    assert "standard deviation" not in result.message.split("(their")[0]
    assert "rather than 8" not in result.message


@pytest.mark.parametrize(
    "additive",
    [
        pytest.param(lambda T: torch.triu(torch.full((T, T), NEG_INF), diagonal=1), id="-inf"),
        pytest.param(lambda T: (1.0 - torch.ones(T, T).tril()) * -1e9, id="-1e9"),
    ],
)
def test_an_additive_mask_is_told_to_compare_with_0_3_6(additive):
    result = check("3.6", additive)
    assert (result.status, result.diagnosis) == (FAILED, "type"), result.message
    assert "`mask == 0`" in result.message and "== 1" not in result.message


def test_the_batch_axis_advice_gives_the_mask_not_the_ids_3_7():
    result = check("3.7", lambda t, p: (t != p)[None, :, None, :])
    assert "batch axis comes first" in result.message
    assert "(tokens != pad_id)[:, None, None, :]" in result.message
    assert " tokens[:, None, None, :]" not in result.message


@pytest.mark.parametrize(
    "causal",
    [
        pytest.param("return torch.ones(T, T, dtype=torch.bool).tril()[:, None]", id="(T,1,T)"),
        pytest.param("return torch.triu(torch.full((T, T), float('-inf')), 1)", id="additive"),
    ],
)
def test_a_broken_causal_mask_from_3_6_is_named_whatever_3_8_sees(causal):
    result = check("3.8", _decoder_built_on(causal))
    assert (result.status, result.diagnosis) == (FAILED, "mistake"), result.message
    assert "calls `make_causal_mask`, which does not pass check 3.6 yet" in result.message


def test_a_mean_outside_0_1_to_1_is_told_the_range_3_5():
    result = check("3.5", lambda std, n, seed: -mean_max_weight(std, n, seed))
    assert (result.status, result.diagnosis) == (FAILED, "difference"), result.message
    assert "lies between 0.1 (all equal) and 1" in result.message


# Variants the mutation gauge makes, not mistakes learners are seen to make: they fail, and the
# message may only say where they are off ---------------------------------------------------------

GENERATED = _cases([
    ("3.2-by-root-3", "3.2", lambda: ((SCORES_3_2 / math.sqrt(3)).softmax(-1), 4.34)),
    ("3.3-everything-hidden", "3.3", lambda: (torch.zeros(4, 4).masked_fill(torch.ones(4, 4, dtype=torch.bool), NEG_INF).softmax(-1),)),
    ("3.4-scale-upside-down", "3.4", lambda: (_attention_with(scores_of=lambda q, k, d: math.sqrt(d) / (q @ k.transpose(-2, -1))),)),
    ("3.4-output-negated", "3.4", lambda: (_attention_with(output_of=lambda w, v: -(w @ v)),)),
    ("3.4-output-is-weights", "3.4", lambda: (_attention_with(output_of=lambda w, v: w),)),
    ("3.6-negated", "3.6", lambda: (lambda T: -make_causal_mask(T),)),
    ("3.7-key-missing", "3.7", lambda: (lambda t, p: make_padding_mask(t, p)[..., 1:],)),
    ("3.7-row-missing", "3.7", lambda: (lambda t, p: make_padding_mask(t, p)[1:],)),
    ("3.5-std-over-z", "3.5", lambda: (lambda std, n, seed: (std / _draw(1.0, n, seed)).softmax(-1).max(-1).values.mean(),)),
    ("3.5-9-keys", "3.5", lambda: (_measuring(keys=9),)),
    ("3.5-11-keys", "3.5", lambda: (_measuring(keys=11),)),
    ("3.5-std-squared", "3.5", lambda: (_measuring(scale=lambda std: std**2),)),
    ("3.5-std-root", "3.5", lambda: (_measuring(scale=math.sqrt),)),
    ("3.5-divided", "3.5", lambda: (_measuring(scale=lambda std: 1 / std),)),
])  # fmt: skip


@pytest.mark.parametrize("exercise_id, answers", GENERATED)
def test_generated_variants_fail(exercise_id, answers):
    result = check(exercise_id, *answers())
    assert result.status == FAILED, result.message
