"""Tests for course_lib.numpy_encoder: the reference numbers of course §10.6, the worked
examples of §6.3 and §7.3, the properties of §10.5, and agreement with PyTorch."""

import numpy as np
import pytest
import torch

from course_lib import numpy_encoder as ne

# Course §10.6, seed 42.
EMBEDDINGS = [
    [0.248, -0.069, 0.324, 0.762, -0.117, -0.117, 0.79, 0.384],
    [-0.235, 0.271, -0.232, -0.233, 0.121, -0.957, -0.862, -0.281],
    [-0.506, 0.157, -0.454, -0.706, 0.733, -0.113, 0.034, -0.712],
]
POST_PE = [
    [0.248, 0.931, 0.324, 1.762, -0.117, 0.883, 0.79, 1.384],
    [0.607, 0.812, -0.132, 0.762, 0.131, 0.043, -0.861, 0.719],
    [0.403, -0.259, -0.255, 0.274, 0.753, 0.887, 0.036, 0.288],
]
WEIGHTS = [[0.3732, 0.3671, 0.2598], [0.3074, 0.2274, 0.4653], [0.3631, 0.3556, 0.2814]]
SCORES = [[0.2662, 0.2498, -0.0960], [-0.4399, -0.7415, -0.0254], [0.1941, 0.1731, -0.0609]]
OUT = [
    [-1.655, 1.738, -0.143, 1.091, -0.133, -0.494, -0.788, 0.384],
    [-1.03, 1.969, -0.121, 0.919, -0.305, -0.572, -1.271, 0.411],
    [-1.295, 1.5, -0.506, 0.942, 0.64, 0.155, -1.573, 0.138],
]
# Course §6.3: PE for 3 positions at d_model = 8.
PE_8 = [
    [0, 1, 0, 1, 0, 1, 0, 1],
    [0.8415, 0.5403, 0.0998, 0.9950, 0.0100, 1.0000, 0.0010, 1.0000],
    [0.9093, -0.4161, 0.1987, 0.9801, 0.0200, 0.9998, 0.0020, 1.0000],
]


@pytest.fixture(scope="module")
def inputs():
    return ne.project_inputs()


@pytest.fixture(scope="module")
def trace(inputs):
    return ne.encoder_layer(*inputs)


def close(actual, expected, dp):
    """Compare after rounding to the printed decimals, allowing one unit of the last digit."""
    np.testing.assert_allclose(np.round(actual, dp), expected, rtol=0, atol=1.01 * 10.0**-dp)


# --- §10.6 reference output -------------------------------------------------------------


def test_reference_embeddings_and_positional_encoding(trace):
    close(trace.embeddings, EMBEDDINGS, 3)
    close(trace.x, POST_PE, 3)


def test_reference_scores_and_weights(trace):
    close(trace.scores, SCORES, 4)
    close(trace.weights, WEIGHTS, 4)


def test_reference_active_relu_units(trace):
    active = (trace.hidden > 0).sum(axis=1)
    assert active.tolist() == [13, 16, 16]
    assert active.sum() == 45 and trace.hidden.size == 96


def test_reference_final_output(trace):
    close(trace.out, OUT, 3)
    np.testing.assert_allclose(trace.out.var(axis=1), [0.999993, 0.999992, 0.999993], atol=1e-6)


def test_reference_variances_before_each_norm(trace):
    close((trace.x + trace.attn).var(axis=1), [1.016, 1.083, 0.425], 3)
    close((trace.x1 + trace.ffn).var(axis=1), [1.450, 1.265, 1.511], 3)


def test_report_prints_the_reference_lines(trace):
    text = ne.report(trace)
    assert "  'the' -> the 0.3732  cat 0.3671  sat 0.2598" in text
    assert "Active ReLU units: 45 / 96 in total (per token: 13, 16, 16 of 32)" in text
    assert "  'cat': [-1.03, 1.969, -0.121, 0.919, -0.305, -0.572, -1.271, 0.411]" in text
    assert "every row mean = 0.0000, var = 1.0000 (exact 0.999993 / 0.999992 / 0.999993)" in text
    assert len(text.splitlines()) == 18  # as in §10.6


def test_shapes(trace):
    for name in ("x", "q", "k", "v", "attn", "x1", "ffn", "out"):
        assert getattr(trace, name).shape == (3, 8), name
    assert trace.scores.shape == trace.weights.shape == (3, 3)
    assert trace.hidden.shape == (3, 32)


def test_layer_norm_properties_after_both_norms(trace):
    for y in (trace.x1, trace.out):
        assert np.abs(y.mean(axis=1)).max() < 1e-9
        assert np.all((y.var(axis=1) > 0.999) & (y.var(axis=1) <= 1.0))
        np.testing.assert_allclose(np.linalg.norm(y, axis=1), np.sqrt(8), atol=1e-4)


def test_deterministic():
    a, b = ne.encoder_layer(*ne.project_inputs()), ne.encoder_layer(*ne.project_inputs())
    for name in ("embeddings", "weights", "hidden", "out"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_draw_order_embeddings_first_then_wq(inputs):
    embeddings, params = inputs
    np.random.seed(42)
    np.testing.assert_array_equal(embeddings, np.random.randn(3, 8) * 0.5)
    np.testing.assert_array_equal(params.w_q, np.random.randn(8, 8) * np.sqrt(2 / 16))
    assert np.all(params.b1 == 0) and params.b1.shape == (32,)
    assert np.all(params.gamma2 == 1) and np.all(params.beta2 == 0)


# --- positional encoding (§6.3) ---------------------------------------------------------


def test_positional_encoding_matches_course_table():
    np.testing.assert_allclose(ne.positional_encoding(3, 8), PE_8, atol=5e-5)
    np.testing.assert_allclose(
        ne.positional_encoding(2, 4)[1], [0.841, 0.540, 0.010, 1.0], atol=5e-4
    )


def test_positional_encoding_matches_formula_at_random_positions():
    rng = np.random.default_rng(0)
    d_model = 16
    pe = ne.positional_encoding(200, d_model)
    for pos, col in zip(rng.integers(0, 200, 20), rng.integers(0, d_model, 20), strict=True):
        angle = pos / 10000 ** ((col - col % 2) / d_model)
        expected = np.sin(angle) if col % 2 == 0 else np.cos(angle)
        assert pe[pos, col] == pytest.approx(expected, abs=1e-12)


def test_positional_encoding_rejects_odd_d_model():
    with pytest.raises(ValueError, match=r"d_model.*7"):
        ne.positional_encoding(3, 7)


# --- softmax ----------------------------------------------------------------------------


def test_softmax_matches_naive_and_rows_sum_to_one():
    x = np.random.default_rng(1).normal(size=(4, 5))
    naive = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ne.softmax(x), naive, atol=1e-12)
    np.testing.assert_allclose(ne.softmax(x).sum(axis=1), 1.0, atol=1e-12)


def test_softmax_does_not_overflow():
    y = ne.softmax(np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]]))
    assert np.all(np.isfinite(y))
    np.testing.assert_allclose(y[0], ne.softmax(np.array([0.0, 1.0, 2.0])), atol=1e-12)
    np.testing.assert_allclose(y[1], [0.0, 0.0, 1.0], atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_softmax_any_axis_and_shape(axis):
    x = np.random.default_rng(2).normal(size=(2, 3, 4))
    y = ne.softmax(x, axis=axis)
    assert y.shape == x.shape
    np.testing.assert_allclose(y.sum(axis=axis), 1.0, atol=1e-12)
    np.testing.assert_allclose(y, np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True), atol=1e-12)


# --- layer norm (§7.3) ------------------------------------------------------------------


def test_layer_norm_worked_example():
    y = ne.layer_norm(np.array([0.71, -0.45, 1.13]), np.ones(3), np.zeros(3))
    np.testing.assert_allclose(y, [0.3691, -1.3668, 0.9977], atol=1e-4)


def test_layer_norm_normalises_the_last_axis():
    x = np.random.default_rng(3).normal(2.0, 3.0, size=(3, 8))
    y = ne.layer_norm(x, np.ones(8), np.zeros(8))
    by_row = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    by_column = (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-5)
    np.testing.assert_allclose(y, by_row, atol=1e-12)
    assert np.abs(y - by_column).max() > 0.1
    assert np.abs(y.mean(axis=1)).max() < 1e-12
    assert np.all((y.var(axis=1) >= 0.999) & (y.var(axis=1) <= 1.0))


def test_layer_norm_applies_gamma_and_beta():
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    gamma, beta = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, 0.0, -0.5, 1.0])
    plain = ne.layer_norm(x, np.ones(4), np.zeros(4))
    np.testing.assert_allclose(ne.layer_norm(x, gamma, beta), gamma * plain + beta, atol=1e-12)


# --- attention, FFN, add & norm -----------------------------------------------------------


def test_causal_mask_gives_lower_triangular_weights(trace, inputs):
    _, params = inputs
    causal = np.tril(np.ones((3, 3), dtype=bool))
    out, weights = ne.self_attention(trace.x, params.w_q, params.w_k, params.w_v, mask=causal)
    np.testing.assert_array_equal(np.triu(weights, k=1), 0.0)
    np.testing.assert_allclose(weights[0], [1.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(out[0], trace.v[0], atol=1e-12)


def test_fully_masked_row_gives_zeros_not_nan(trace, inputs):
    _, params = inputs
    mask = np.array([[True, True, True], [False, False, False], [True, False, True]])
    out, weights = ne.self_attention(trace.x, params.w_q, params.w_k, params.w_v, mask=mask)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(weights))
    np.testing.assert_array_equal(weights[1], 0.0)
    np.testing.assert_array_equal(out[1], 0.0)
    np.testing.assert_allclose(weights[[0, 2]].sum(axis=1), 1.0, atol=1e-12)


def test_mask_broadcasts_from_a_key_row(trace, inputs):
    _, params = inputs
    keep = np.array([True, True, False])  # hide token 2 from every query
    _, weights = ne.self_attention(trace.x, params.w_q, params.w_k, params.w_v, mask=keep)
    np.testing.assert_array_equal(weights[:, 2], 0.0)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)


def test_unmasked_weights_strictly_between_zero_and_one(trace):
    assert np.all((trace.weights > 0) & (trace.weights < 1))
    assert np.abs(trace.weights.sum(axis=1) - 1).max() < 1e-12


def test_feed_forward_and_add_and_norm(trace, inputs):
    _, p = inputs
    expected = np.maximum(trace.x1 @ p.w1 + p.b1, 0) @ p.w2 + p.b2
    np.testing.assert_allclose(ne.feed_forward(trace.x1, p.w1, p.b1, p.w2, p.b2), expected)
    np.testing.assert_allclose(ne.add_and_norm(trace.x1, trace.ffn, p.gamma2, p.beta2), trace.out)
    np.testing.assert_array_equal(ne.relu(np.array([-2.0, 0.0, 3.0])), [0.0, 0.0, 3.0])


def test_xavier_normal_scale_and_generator():
    w = ne.xavier_normal(200, 300, rng=np.random.default_rng(4))
    assert w.shape == (200, 300)
    assert w.std() == pytest.approx(np.sqrt(2 / 500), rel=0.02)


# --- permutation (§10.5, Lab L5.A) --------------------------------------------------------


def test_without_pe_permuting_tokens_permutes_outputs(inputs):
    embeddings, params = inputs
    perm = [2, 0, 1]
    plain = ne.encoder_layer(embeddings, params, use_pe=False).out
    shuffled = ne.encoder_layer(embeddings[perm], params, use_pe=False).out
    assert np.abs(shuffled - plain[perm]).max() < 1e-12


def test_with_pe_order_matters(inputs):
    embeddings, params = inputs
    perm = [2, 0, 1]
    plain = ne.encoder_layer(embeddings, params).out
    shuffled = ne.encoder_layer(embeddings[perm], params).out
    assert np.abs(shuffled - plain[perm]).max() == pytest.approx(0.94, abs=0.01)


# --- agreement with PyTorch ---------------------------------------------------------------


def test_both_torch_layers_given_the_projects_weights_agree_with_it(trace, inputs):
    from course_lib.attention import record_attention, scaled_dot_product_attention
    from course_lib.interop import encoder_layers_from_numpy

    _, p = inputs
    x = torch.from_numpy(np.ascontiguousarray(trace.x))[None]  # (1, T, D)
    ours, theirs = encoder_layers_from_numpy(p)
    with torch.no_grad(), record_attention(ours) as maps:
        mine, its = ours(x)[0].numpy(), theirs(x)[0].numpy()
    # float64 on both sides: agreement is at rounding level (the course quotes 2e-7 in float32).
    np.testing.assert_allclose(mine, trace.out, atol=1e-10, rtol=0)
    np.testing.assert_allclose(its, trace.out, atol=1e-10, rtol=0)
    np.testing.assert_allclose(maps["self_attn"][0, 0].numpy(), trace.weights, atol=1e-12, rtol=0)
    q, k, v = (torch.from_numpy(a) for a in (trace.q, trace.k, trace.v))
    np.testing.assert_allclose(
        scaled_dot_product_attention(q, k, v)[0].numpy(), trace.attn, atol=1e-12
    )
    _, theirs_32 = encoder_layers_from_numpy(p, torch.float32)
    with torch.no_grad():
        gap_32 = np.abs(theirs_32(x.float())[0].numpy() - trace.out).max()
    assert 1e-9 < gap_32 < 1e-6  # float32 keeps about 7 significant digits


# --- bad input ----------------------------------------------------------------------------


def test_wrong_w_q_shape_names_argument_and_shape(trace, inputs):
    _, p = inputs
    with pytest.raises(ValueError, match=r"w_q .*\(8, None\).*\(7, 8\)"):
        ne.self_attention(trace.x, p.w_q[:7], p.w_k, p.w_v)


def test_non_boolean_mask_is_rejected(trace, inputs):
    _, p = inputs
    with pytest.raises(TypeError, match=r"mask .*boolean.*int"):
        ne.self_attention(trace.x, p.w_q, p.w_k, p.w_v, mask=np.tril(np.ones((3, 3), dtype=int)))


def test_mask_of_wrong_shape_is_rejected(trace, inputs):
    _, p = inputs
    with pytest.raises(ValueError, match=r"mask .*\(3, 3\).*\(2, 2\)"):
        ne.self_attention(trace.x, p.w_q, p.w_k, p.w_v, mask=np.ones((2, 2), dtype=bool))


def test_layer_norm_gamma_of_wrong_size_is_rejected():
    with pytest.raises(ValueError, match=r"gamma .*\(5,\)"):
        ne.layer_norm(np.ones((2, 4)), np.ones(5), np.zeros(4))


def test_feed_forward_w2_of_wrong_shape_is_rejected(trace, inputs):
    _, p = inputs
    with pytest.raises(ValueError, match=r"w2 .*\(32, 8\).*\(8, 32\)"):
        ne.feed_forward(trace.x1, p.w1, p.b1, p.w1, p.b2)


def test_report_rejects_wrong_number_of_tokens(trace):
    with pytest.raises(ValueError, match=r"tokens .*3.*got 2"):
        ne.report(trace, tokens=("the", "cat"))


@pytest.mark.parametrize(
    "args, error, words",
    [
        ((3, 8.0), TypeError, "d_model must be an int; got float"),
        ((0, 8), ValueError, "seq_len must be a positive int; got 0"),
    ],
)
def test_positional_encoding_rejects_bad_sizes(args, error, words):
    with pytest.raises(error, match=words):
        ne.positional_encoding(*args)
