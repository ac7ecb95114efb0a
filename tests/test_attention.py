import pytest
import torch
import torch.nn.functional as F
from torch import nn

from course_lib import attention_speed
from course_lib.attention import (
    MultiHeadAttention,
    record_attention,
    scaled_dot_product_attention,
)
from course_lib.masks import causal_mask, padding_mask, target_mask


@pytest.mark.parametrize("lead", [(), (3,), (2, 4)])
@pytest.mark.parametrize("T_q, T_k, d_k, d_v", [(1, 1, 1, 1), (4, 4, 8, 8), (5, 7, 16, 3)])
def test_sdpa_shapes_and_rows_sum_to_one(lead, T_q, T_k, d_k, d_v):
    q, k, v = (
        torch.randn(*lead, T_q, d_k),
        torch.randn(*lead, T_k, d_k),
        torch.randn(*lead, T_k, d_v),
    )
    out, weights = scaled_dot_product_attention(q, k, v)
    assert out.shape == (*lead, T_q, d_v)
    assert weights.shape == (*lead, T_q, T_k)
    torch.testing.assert_close(weights.sum(-1), torch.ones(*lead, T_q))


def test_sdpa_worked_example_of_lesson_3():
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    v = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]])
    out, weights = scaled_dot_product_attention(q, k, v)
    expected_w = torch.tensor(
        [[0.4555, 0.2246, 0.3199], [0.2246, 0.4555, 0.3199], [1 / 3, 1 / 3, 1 / 3]]
    )
    expected_out = torch.tensor([[0.3852, 0.6148], [0.5468, 0.4532], [0.4667, 0.5333]])
    torch.testing.assert_close(weights, expected_w, atol=1e-4, rtol=0)
    torch.testing.assert_close(out, expected_out, atol=1e-4, rtol=0)


def _padding(B, T_k, lengths):
    tokens = torch.ones(B, T_k, dtype=torch.long)
    for b, n in enumerate(lengths):
        tokens[b, n:] = 0
    return padding_mask(tokens, pad_id=0)


@pytest.mark.parametrize("kind", ["none", "causal", "padding", "both"])
def test_sdpa_agrees_with_pytorch(kind):
    B, H, T, d = 3, 2, 6, 8
    q, k, v = (torch.randn(B, H, T, d) for _ in range(3))
    masks = {
        "none": None,
        "causal": causal_mask(T),
        "padding": _padding(B, T, [6, 4, 1]),
        "both": causal_mask(T) & _padding(B, T, [6, 4, 1]),
    }
    out, _ = scaled_dot_product_attention(q, k, v, masks[kind])
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=masks[kind]))


def test_sdpa_keeps_broadcasting_a_3d_mask_over_its_own_leading_dims():
    # Without a head axis the leading dim *is* the batch, so a (B, T, T) mask is unambiguous.
    q, k, v = torch.randn(3, 5, 4), torch.randn(3, 5, 4), torch.randn(3, 5, 4)
    mask = causal_mask(5) & _padding(3, 5, [5, 2, 4])[:, 0]  # (B, T, T)
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))


def test_masked_positions_get_exactly_zero_weight():
    q, k, v = torch.randn(2, 5, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 4)
    _, weights = scaled_dot_product_attention(q, k, v, causal_mask(5))
    assert torch.equal(weights.triu(diagonal=1), torch.zeros(2, 5, 5))


def test_causal_output_does_not_depend_on_later_tokens():
    q, k, v = torch.randn(1, 6, 4), torch.randn(1, 6, 4), torch.randn(1, 6, 4)
    out, _ = scaled_dot_product_attention(q, k, v, causal_mask(6))
    k2, v2 = k.clone(), v.clone()
    k2[:, 4:], v2[:, 4:] = torch.randn(1, 2, 4), torch.randn(1, 2, 4)
    out2, _ = scaled_dot_product_attention(q, k2, v2, causal_mask(6))
    torch.testing.assert_close(out[:, :4], out2[:, :4])
    assert not torch.allclose(out[:, 4:], out2[:, 4:])


def test_fully_masked_row_gives_zeros_not_nan_forward_and_backward():
    q = torch.randn(1, 3, 4, requires_grad=True)
    k, v = torch.randn(1, 3, 4), torch.randn(1, 3, 4)
    mask = torch.tensor([[True, True, False], [False, False, False], [True, False, False]])
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert torch.equal(weights[0, 1], torch.zeros(3))
    assert torch.equal(out[0, 1], torch.zeros(4))
    out.sum().backward()
    assert torch.isfinite(q.grad).all()


def test_scores_are_divided_by_sqrt_d_k():
    q, k = torch.randn(1, 2, 64), torch.randn(1, 3, 64)
    _, weights = scaled_dot_product_attention(q, k, torch.randn(1, 3, 2))
    scores = q @ k.transpose(-2, -1)
    torch.testing.assert_close(weights, (scores / 8).softmax(-1))
    assert not torch.allclose(weights, scores.softmax(-1), atol=1e-2)


@pytest.mark.parametrize(
    "q_shape, k_shape, v_shape, mask, error, words",
    [
        ((4,), (4, 2), (4, 2), None, ValueError, "q must be at least 2-D"),
        ((3, 2), (4, 3), (4, 2), None, ValueError, "last dimension (d_k)"),
        ((3, 2), (4, 2), (5, 2), None, ValueError, "as many positions"),
        ((2, 3, 2), (3, 4, 2), (3, 4, 2), None, ValueError, "broadcastable"),
        (
            (3, 2),
            (4, 2),
            (4, 2),
            torch.ones(3, 5, dtype=torch.bool),
            ValueError,
            "mask must broadcast",
        ),
        ((3, 2), (4, 2), (4, 2), torch.ones(3, 4), TypeError, "torch.bool"),
    ],
)
def test_sdpa_rejects_bad_input(q_shape, k_shape, v_shape, mask, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        scaled_dot_product_attention(
            torch.randn(q_shape), torch.randn(k_shape), torch.randn(v_shape), mask
        )


def test_sdpa_rejects_non_tensors_and_integer_tensors():
    with pytest.raises(TypeError, match="q must be a torch.Tensor; got list"):
        scaled_dot_product_attention([[1.0]], torch.randn(1, 1), torch.randn(1, 1))
    with pytest.raises(TypeError, match="q, k and v must share one dtype"):
        scaled_dot_product_attention(
            torch.randn(1, 1), torch.randn(1, 1).double(), torch.randn(1, 1)
        )
    with pytest.raises(TypeError, match="k must be a floating-point tensor"):
        scaled_dot_product_attention(
            torch.randn(1, 1), torch.ones(1, 1, dtype=torch.long), torch.randn(1, 1)
        )


# --- multi-head attention -------------------------------------------------------------


@pytest.mark.parametrize(
    "B, T_q, T_k, d_model, n_heads", [(1, 1, 1, 8, 1), (2, 5, 5, 16, 4), (3, 4, 7, 12, 3)]
)
@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_shapes(B, T_q, T_k, d_model, n_heads, need_weights):
    mha = MultiHeadAttention(d_model, n_heads)
    query, memory = torch.randn(B, T_q, d_model), torch.randn(B, T_k, d_model)
    out, weights = mha(query, memory, memory, need_weights=need_weights)  # always a pair
    assert out.shape == (B, T_q, d_model)
    if need_weights:
        assert weights.shape == (B, n_heads, T_q, T_k)
    else:
        assert weights is None


def _torch_copy(ours: MultiHeadAttention) -> nn.MultiheadAttention:
    theirs = nn.MultiheadAttention(ours.d_model, ours.n_heads, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        theirs.out_proj.weight.copy_(ours.w_o.weight)
        theirs.out_proj.bias.copy_(ours.w_o.bias)
    return theirs.eval()


@pytest.mark.parametrize("masked", [False, True])
def test_mha_agrees_with_nn_multihead_attention(masked):
    B, T, d_model, n_heads = 3, 6, 32, 4
    ours = MultiHeadAttention(d_model, n_heads).eval()
    with torch.no_grad():
        for linear in (ours.w_q, ours.w_k, ours.w_v, ours.w_o):
            linear.bias.normal_()  # non-zero biases, so copying them is tested too
    theirs = _torch_copy(ours)
    x = torch.randn(B, T, d_model)
    lengths = [6, 3, 5]
    # Ours: True = may attend. PyTorch: True = blocked, so it gets the complement.
    mask = causal_mask(T) & _padding(B, T, lengths) if masked else None
    blocked_keys = ~_padding(B, T, lengths)[:, 0, 0] if masked else None
    blocked_pairs = ~causal_mask(T) if masked else None

    out, weights = ours(x, x, x, mask, need_weights=True)
    fast, no_weights = ours(x, x, x, mask)
    assert no_weights is None

    def reference(average):
        return theirs(x, x, x, key_padding_mask=blocked_keys, attn_mask=blocked_pairs,
                      need_weights=True, average_attn_weights=average)  # fmt: skip

    ref_out, ref_weights = reference(average=True)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(fast, ref_out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights.mean(dim=1), ref_weights, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(weights, reference(average=False)[1], atol=1e-6, rtol=1e-5)
    assert not torch.allclose(weights[:, 0], weights[:, 1])  # heads differ: not averaged


@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_fully_masked_rows_give_zeros_without_nan(need_weights):
    mha = MultiHeadAttention(16, 4, bias=False)  # no bias, so an empty row maps to exactly 0
    x = torch.randn(2, 3, 16, requires_grad=True)
    mask = torch.ones(2, 1, 3, 3, dtype=torch.bool)
    mask[1, 0, 2] = False  # query 2 of sentence 1 may attend to nothing
    out, _ = mha(x, x, x, mask, need_weights=need_weights)
    assert torch.equal(out[1, 2], torch.zeros(16))
    out.sum().backward()
    assert torch.isfinite(x.grad).all()


# --- multi-head attention: masks with one meaning only -----------------------------------
# B == H on purpose: then a 3-D mask broadcasts against (B, H, T_q, T_k) with its batch axis
# on the heads, which is the silent bug these tests guard against.

B_EQ_H, T = 4, 5


def _reference_mha(mha, x, mask):
    """Per-sequence, per-head masking spelled out: the mask expanded to (B, H, T, T) first."""
    q, k, v = (mha._split(w(x)) for w in (mha.w_q, mha.w_k, mha.w_v))  # (B, H, T, Dk)
    full = mask.expand(x.shape[0], mha.n_heads, x.shape[1], x.shape[1])
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=full)
    return mha.w_o(heads.transpose(1, 2).flatten(2))


def _lengths_tokens():
    tokens = torch.randint(1, 9, (B_EQ_H, T))
    for b, n in enumerate([5, 3, 1, 4]):
        tokens[b, n:] = 0
    return tokens


def _head_varying_mask():
    mask = torch.rand(B_EQ_H, B_EQ_H, T, T) > 0.5
    return mask | torch.eye(T, dtype=torch.bool)  # every query keeps at least one key


@pytest.mark.parametrize(
    "make_mask",
    [
        pytest.param(lambda tokens: causal_mask(T), id="2-D causal (T, T)"),
        pytest.param(lambda tokens: padding_mask(tokens, 0), id="padding_mask (B, 1, 1, T)"),
        pytest.param(lambda tokens: target_mask(tokens, 0), id="target_mask (B, 1, T, T)"),
        pytest.param(lambda tokens: causal_mask(T)[None, None], id="(1, 1, T, T)"),
        pytest.param(lambda tokens: _head_varying_mask(), id="(B, H, T, T)"),
    ],
)
@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_accepts_2d_and_4d_masks_and_applies_them_per_sequence(make_mask, need_weights):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, B_EQ_H).eval()
    x, mask = torch.randn(B_EQ_H, T, 16), make_mask(_lengths_tokens())
    out, _ = mha(x, x, x, mask, need_weights=need_weights)
    torch.testing.assert_close(out, _reference_mha(mha, x, mask), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize(
    "make_mask, shape, fixed",
    [
        pytest.param(
            lambda tokens: padding_mask(tokens, 0)[:, 0],
            (4, 1, 5),
            (4, 1, 1, 5),
            id="annotated (B, 1, S) padding",
        ),
        pytest.param(
            lambda tokens: target_mask(tokens, 0)[:, 0], (4, 5, 5), (4, 1, 5, 5), id="(B, T, T)"
        ),
    ],
)
@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_rejects_a_3d_mask_that_would_land_on_the_heads(make_mask, shape, fixed, need_weights):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, B_EQ_H).eval()
    x, mask = torch.randn(B_EQ_H, T, 16), make_mask(_lengths_tokens())
    # The hazard is real: broadcast as it stands, the mask lands on the heads.
    heads = mha._split(x)  # (B, H, T, Dk)
    misread = F.scaled_dot_product_attention(heads, heads, heads, attn_mask=mask)
    right = F.scaled_dot_product_attention(heads, heads, heads, attn_mask=mask[:, None])
    assert not torch.allclose(misread, right)
    with pytest.raises(ValueError) as error:
        mha(x, x, x, mask, need_weights=need_weights)
    message = str(error.value)
    for words in (
        f"mask must be 2-D or 4-D; got 3-D with shape {shape}",
        "2-D (T_q, T_k) = (5, 5)",
        "4-D (B, H, T_q, T_k) = (4, 4, 5, 5)",
        "mask[:, None] (or mask.unsqueeze(1))",
        f"gives {fixed}",
    ):
        assert words in message
    torch.testing.assert_close(
        mha(x, x, x, mask[:, None])[0], _reference_mha(mha, x, mask[:, None])
    )


def test_mha_names_the_fix_for_a_padding_mask_without_its_two_middle_axes():
    mha = MultiHeadAttention(16, 4)
    x, memory = torch.randn(3, 2, 16), torch.randn(3, 5, 16)
    keep = torch.ones(3, 5, dtype=torch.bool)  # (B, T_k): read as (T_q, T_k), which it is not
    with pytest.raises(ValueError) as error:
        mha(x, memory, memory, keep)
    message = str(error.value)
    assert "mask must broadcast to (B, H, T_q, T_k) = (3, 4, 2, 5); got (3, 5)" in message
    assert "mask[:, None, None, :], which gives (3, 1, 1, 5)" in message
    assert "course_lib.masks.padding_mask(tokens, pad_id)" in message


@pytest.mark.parametrize("bias, expected", [(True, 1_050_624), (False, 1_048_576)])
def test_mha_parameter_count_of_the_base_model(bias, expected):
    mha = MultiHeadAttention(512, 8, bias=bias)
    assert sum(p.numel() for p in mha.parameters()) == expected
    assert isinstance(mha.w_q, nn.Linear) and mha.d_k == 64


def test_mha_dropout_only_in_training():
    mha = MultiHeadAttention(16, 4, dropout=0.5)
    x = torch.randn(2, 5, 16)
    mha.eval()
    torch.testing.assert_close(mha(x, x, x)[0], mha(x, x, x)[0])
    mha.train()
    assert not torch.allclose(mha(x, x, x)[0], mha(x, x, x)[0])


def _without_keys(mask, *where):
    """``mask`` with the rows at ``where`` seeing no key at all (their output must be 0)."""
    mask[where] = False
    return mask


@pytest.mark.parametrize(
    "make_mask",
    [
        lambda B, T_q, T_k: None,
        lambda B, T_q, T_k: _without_keys(torch.rand(B, 1, 1, T_k) > 0.3, 0),
        lambda B, T_q, T_k: torch.ones(T_q, T_k, dtype=torch.bool).tril(),
        lambda B, T_q, T_k: _without_keys(torch.rand(B, 1, T_q, T_k) > 0.5, 0, 0, 2),
    ],
)
def test_the_training_path_computes_the_written_out_attention(make_mask):
    # Training uses a copy of the attention with the scores transposed (faster on a CPU); without
    # dropout it must give the written-out function's output and gradients.
    torch.manual_seed(0)
    q, k, v = (torch.randn(6, 4, n, 8, dtype=torch.float64) for n in (5, 7, 7))
    mask = make_mask(6, 5, 7)
    grads = []
    for attend in (
        lambda *t: scaled_dot_product_attention(*t, mask)[0],
        lambda *t: attention_speed.keys_first(*t, mask, 0.0),
    ):
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        out = attend(*leaves)
        out.backward(torch.ones_like(out))
        grads.append((out, *(t.grad for t in leaves)))
    for written_out, keys_first in zip(*grads, strict=True):
        torch.testing.assert_close(keys_first, written_out)
        assert not keys_first.isnan().any()


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shared", ["self", "memory", "none"])
def test_mha_stacked_projections_equal_one_linear_each(shared, bias):
    # Self-attention projects one tensor three times and cross-attention the memory twice: those
    # run as one product with stacked weights, which must equal w_q, w_k and w_v applied apart.
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4, bias=bias).eval()
    x, memory, other = torch.randn(2, 5, 16), torch.randn(2, 7, 16), torch.randn(2, 7, 16)
    query, key, value = {
        "self": (x, x, x),
        "memory": (x, memory, memory),
        "none": (x, memory, other),
    }[shared]
    q, k, v = (mha._split(w(t)) for w, t in ((mha.w_q, query), (mha.w_k, key), (mha.w_v, value)))
    heads = scaled_dot_product_attention(q, k, v)[0].transpose(1, 2).reshape(2, 5, 16)
    torch.testing.assert_close(mha(query, key, value)[0], mha.w_o(heads))
    dropped = MultiHeadAttention(16, 4, dropout=0.3, bias=bias).train()
    dropped(query, key, value)[0].sum().backward()  # every projection gets a gradient
    assert all(w.weight.grad.abs().sum() > 0 for w in (dropped.w_q, dropped.w_k, dropped.w_v))


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: MultiHeadAttention(10, 3), r"d_model \(10\) must be divisible by n_heads \(3\)"),
        (lambda: MultiHeadAttention(0, 1), "d_model must be a positive int; got 0"),
        (lambda: MultiHeadAttention(8, 2, dropout=1.5), r"dropout must be in \[0, 1\); got 1.5"),
    ],
)
def test_mha_rejects_bad_construction(make, words):
    with pytest.raises(ValueError, match=words):
        make()


@pytest.mark.parametrize(
    "query, key, value, mask, error, words",
    [
        ((5, 8), (5, 8), (5, 8), None, ValueError, "query must be 3-D; got 2-D"),
        (
            (2, 5, 6),
            (2, 5, 8),
            (2, 5, 8),
            None,
            ValueError,
            "query must have last dimension d_model = 8",
        ),
        ((2, 5, 8), (2, 4, 8), (2, 3, 8), None, ValueError, "key and value must have the same"),
        ((2, 5, 8), (3, 4, 8), (3, 4, 8), None, ValueError, "same batch size"),
        (
            (2, 5, 8),
            (2, 4, 8),
            (2, 4, 8),
            torch.ones(5, 5, dtype=torch.bool),
            ValueError,
            r"\(B, H, T_q, T_k\) = \(2, 2, 5, 4\); got \(5, 5\)",
        ),
        (
            (2, 5, 8),
            (2, 4, 8),
            (2, 4, 8),
            torch.ones(5, 4, dtype=torch.int64),
            TypeError,
            "torch.bool",
        ),
        (
            (2, 5, 8),
            (2, 4, 8),
            (2, 4, 8),
            torch.ones(2, 1, 4, dtype=torch.bool),  # B == H == 2: it would broadcast
            ValueError,
            r"got 3-D with shape \(2, 1, 4\).*mask\[:, None\]",
        ),
        (
            (2, 5, 8),
            (2, 4, 8),
            (2, 4, 8),
            torch.ones(4, dtype=torch.bool),
            ValueError,
            r"must be 2-D or 4-D; got 1-D with shape \(4,\)",
        ),
        (
            (2, 5, 8),
            (2, 4, 8),
            (2, 4, 8),
            torch.ones(1, 2, 1, 1, 4, dtype=torch.bool),
            ValueError,
            r"must be 2-D or 4-D; got 5-D",
        ),
        (
            (2, 5, 8),
            (2, 4, 8),
            (2, 4, 8),
            torch.ones(2, 3, 5, 4, dtype=torch.bool),
            ValueError,
            r"\(B, H, T_q, T_k\) = \(2, 2, 5, 4\); got \(2, 3, 5, 4\)",
        ),
    ],
)
def test_mha_rejects_bad_input(query, key, value, mask, error, words):
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(error, match=words):
        mha(torch.randn(query), torch.randn(key), torch.randn(value), mask)


def test_mha_rejects_a_dtype_other_than_its_own():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8, dtype=torch.float64)
    with pytest.raises(
        TypeError, match="query must have the module's dtype torch.float32; got torch.float64"
    ):
        mha(x, x, x)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda m, x: m(x, x, x), id="no need_weights"),
        pytest.param(lambda m, x: m(x, x, x, None, False), id="positional need_weights=False"),
        pytest.param(lambda m, x: m(x, x, x, mask=None, need_weights=False), id="keywords"),
        pytest.param(lambda m, x: m(query=x, key=x, value=x), id="all keywords"),
    ],
)
def test_record_attention_sees_the_weights_however_the_module_is_called(call):
    mha = MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 5, 16)
    with record_attention(mha) as maps:
        out, returned = call(mha, x)
    _, expected = mha(x, x, x, need_weights=True)
    torch.testing.assert_close(maps[""], expected)
    torch.testing.assert_close(returned, expected)  # asked for inside the block
    assert call(mha, x)[1] is None  # and no longer outside it


def test_record_attention_removes_its_hooks_after_an_error_and_refuses_a_module_without_attention():
    mha = MultiHeadAttention(16, 4)
    with pytest.raises(ValueError, match="d_model"), record_attention(mha):
        mha(torch.randn(1, 3, 8), torch.randn(1, 3, 8), torch.randn(1, 3, 8))  # wrong width
    assert not mha._forward_hooks and not mha._forward_pre_hooks
    refused = pytest.raises(
        ValueError, match="must contain a course_lib MultiHeadAttention; Linear"
    )
    with refused, record_attention(nn.Linear(2, 2)):
        pass
