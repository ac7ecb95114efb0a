import pytest
import torch
from torch import nn

from course_lib.layers import LayerNorm, PositionwiseFeedForward, ResidualSublayer


@pytest.mark.parametrize("shape", [(4,), (2, 4), (3, 5, 4)])
def test_layer_norm_equals_nn_layer_norm(shape):
    ours, theirs = LayerNorm(4), nn.LayerNorm(4)
    with torch.no_grad():
        ours.gamma.normal_()
        ours.beta.normal_()
        theirs.weight.copy_(ours.gamma)
        theirs.bias.copy_(ours.beta)
    x = torch.randn(shape) * 3 + 1
    torch.testing.assert_close(ours(x), theirs(x))


def test_layer_norm_worked_example_of_lesson_6():
    out = LayerNorm(3)(torch.tensor([0.71, -0.45, 1.13]))
    torch.testing.assert_close(out, torch.tensor([0.3691, -1.3668, 0.9977]), atol=1e-4, rtol=0)


def test_layer_norm_normalises_each_position_not_the_batch():
    x = torch.randn(4, 6) * torch.arange(1, 7)  # features of very different scales
    out = LayerNorm(6)(x)
    torch.testing.assert_close(out.mean(-1), torch.zeros(4), atol=1e-6, rtol=0)
    torch.testing.assert_close(out.var(-1, unbiased=False), torch.ones(4), atol=1e-4, rtol=0)
    assert not torch.allclose(out.mean(0), torch.zeros(6), atol=1e-3)


@pytest.mark.parametrize("d_ff, expected", [(512, 525_312), (2048, 2_099_712), (8192, 8_397_312)])
def test_ffn_parameter_counts(d_ff, expected):
    ffn = PositionwiseFeedForward(512, d_ff)
    assert sum(p.numel() for p in ffn.parameters()) == expected
    weights_only = PositionwiseFeedForward(512, d_ff, bias=False)
    assert sum(p.numel() for p in weights_only.parameters()) == 2 * 512 * d_ff


def test_ffn_is_relu_between_two_linear_maps_applied_per_position():
    ffn = PositionwiseFeedForward(3, 6)
    x = torch.randn(2, 4, 3)
    expected = torch.relu(x @ ffn.w_1.weight.T + ffn.w_1.bias) @ ffn.w_2.weight.T + ffn.w_2.bias
    torch.testing.assert_close(ffn(x), expected)
    torch.testing.assert_close(ffn(x[:, 2:3]), ffn(x)[:, 2:3])  # position-wise


def test_ffn_worked_example_hidden_values():
    ffn = PositionwiseFeedForward(3, 6)
    with torch.no_grad():
        ffn.w_1.weight.copy_(
            torch.tensor(
                [
                    [0.2, -0.1, 0.3, 0.5, -0.2, 0.1],
                    [0.4, 0.3, -0.2, 0.1, 0.6, -0.3],
                    [-0.1, 0.5, 0.2, -0.3, 0.1, 0.4],
                ]
            ).T
        )
        ffn.w_1.bias.zero_()
    hidden = ffn.w_1(torch.tensor([0.5, -0.3, 0.8]))
    torch.testing.assert_close(
        hidden, torch.tensor([-0.10, 0.26, 0.37, -0.02, -0.20, 0.46]), atol=1e-6, rtol=0
    )


def test_residual_post_norm_and_pre_norm():
    x = torch.randn(2, 3, 8)
    double = lambda h: 2 * h  # noqa: E731
    post = ResidualSublayer(8, norm_first=False)
    pre = ResidualSublayer(8, norm_first=True)
    torch.testing.assert_close(post(x, double), post.norm(3 * x))
    torch.testing.assert_close(pre(x, double), x + 2 * pre.norm(x))


def test_residual_takes_a_sublayer_that_returns_one_tensor():
    residual = ResidualSublayer(4)
    x = torch.randn(1, 2, 4)
    assert residual(x, lambda h: h).shape == x.shape
    # An attention module returns (output, weights): the caller picks the output.
    with pytest.raises(ValueError, match="sublayer must return a tensor of x's shape"):
        residual(x, lambda h: (h, None))


def test_residual_without_sublayer_output_keeps_the_signal():
    # A sub-layer that outputs zero leaves x unchanged up to normalisation (pre-norm: exactly).
    x = torch.randn(2, 3, 8)
    torch.testing.assert_close(ResidualSublayer(8, norm_first=True)(x, torch.zeros_like), x)


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: PositionwiseFeedForward(8, 0), ValueError, "d_ff must be a positive int; got 0"),
        (
            lambda: PositionwiseFeedForward(8, 16)(torch.zeros(2, 4)),
            ValueError,
            "last dimension d_model = 8",
        ),
        (lambda: LayerNorm(4)(torch.zeros(2, 5)), ValueError, "last dimension d_model = 4"),
        (lambda: LayerNorm(4)(torch.zeros(2, 4, dtype=torch.long)), TypeError, "floating-point"),
        (lambda: ResidualSublayer(4, dropout=-0.1), ValueError, "dropout must be in"),
        (
            lambda: ResidualSublayer(4)(torch.zeros(2, 3, 5), torch.relu),
            ValueError,
            "x must have last dimension d_model = 4",
        ),
        (
            lambda: ResidualSublayer(4)(torch.zeros(2, 3, 4), lambda h: h.mean(1, keepdim=True)),
            ValueError,
            r"sublayer must return a tensor of x's shape \(2, 3, 4\).*got \(2, 1, 4\)",
        ),
        (
            lambda: ResidualSublayer(4)(torch.zeros(2, 3, 4), lambda h: (h[0], "weights")),
            ValueError,
            r"sublayer must return .*got tuple",  # one tensor, never a tuple to unpack
        ),
        (
            lambda: LayerNorm(4, eps=-1.0),
            ValueError,
            "eps must be a small positive number; got -1.0",
        ),
    ],
)
def test_layers_reject_bad_input(call, error, words):
    with pytest.raises(error, match=words):
        call()
