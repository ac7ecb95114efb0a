import math

import pytest
import torch

from course_lib.positional import PositionalEncoding, sinusoidal_encoding


def test_known_values_for_d_model_4():
    pe = sinusoidal_encoding(2, 4)
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0]))
    torch.testing.assert_close(pe[1], torch.tensor([0.841, 0.540, 0.010, 1.000]), atol=5e-4, rtol=0)
    torch.testing.assert_close(
        pe[1], torch.tensor([0.841471, 0.540302, 0.0099998, 0.99995]), atol=1e-6, rtol=0
    )


def test_table_for_d_model_8_used_by_the_project():
    expected = torch.tensor(
        [
            [0, 1, 0, 1, 0, 1, 0, 1],
            [0.8415, 0.5403, 0.0998, 0.9950, 0.0100, 1.0000, 0.0010, 1.0000],
            [0.9093, -0.4161, 0.1987, 0.9801, 0.0200, 0.9998, 0.0020, 1.0000],
        ]
    )
    torch.testing.assert_close(sinusoidal_encoding(3, 8), expected, atol=1e-4, rtol=0)


@pytest.mark.parametrize("pos, i", [(5, 0), (5, 1), (37, 100), (4999, 255)])
def test_matches_the_formula(pos, i):
    d_model = 512
    angle = pos / 10000 ** (2 * i / d_model)
    pe = sinusoidal_encoding(5000, d_model)
    assert pe[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
    assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_apply_exercise_of_lesson_5():
    pe = sinusoidal_encoding(6, 512)
    assert pe[5, 0].item() == pytest.approx(-0.9589, abs=1e-4)
    assert pe[5, 1].item() == pytest.approx(0.2837, abs=1e-4)


def test_low_dimensions_oscillate_fastest():
    pe = sinusoidal_encoding(100, 64)
    changes = (pe[1:] - pe[:-1]).abs().mean(dim=0)  # mean change per step, per dimension
    assert changes[0] > changes[10] > changes[40] > changes[62]


def test_dot_product_depends_only_on_offset():
    pe = sinusoidal_encoding(60, 32).double()
    sim = pe @ pe.T
    for k in (1, 5, 17):
        diagonal = torch.diagonal(sim, offset=k)
        torch.testing.assert_close(diagonal, diagonal[0].expand_as(diagonal), atol=1e-5, rtol=0)


@pytest.mark.parametrize("B, T, d_model", [(1, 1, 2), (2, 10, 64), (3, 7, 6)])
def test_module_adds_the_table_and_has_no_parameters(B, T, d_model):
    module = PositionalEncoding(d_model, max_len=20)
    x = torch.randn(B, T, d_model)
    torch.testing.assert_close(module(x), x + sinusoidal_encoding(T, d_model))
    assert sum(p.numel() for p in module.parameters()) == 0


def test_module_applies_dropout_in_training_only():
    module = PositionalEncoding(8, dropout=0.5)
    x = torch.randn(2, 5, 8)
    module.train()
    assert (module(x) == 0).any()
    module.eval()
    assert not (module(x) == 0).any()


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: sinusoidal_encoding(10, 7), ValueError, "d_model must be even.*got 7"),
        (lambda: sinusoidal_encoding(0, 8), ValueError, "max_len must be a positive int; got 0"),
        (lambda: sinusoidal_encoding(10, 8.0), TypeError, "d_model must be an int; got float"),
        (
            lambda: PositionalEncoding(8, max_len=4)(torch.zeros(1, 5, 8)),
            ValueError,
            "5 positions.*max_len = 4",
        ),
        (
            lambda: PositionalEncoding(8)(torch.zeros(1, 5, 6)),
            ValueError,
            "last dimension d_model = 8",
        ),
        (lambda: PositionalEncoding(8)(torch.zeros(5, 8)), ValueError, "x must be 3-D; got 2-D"),
    ],
)
def test_rejects_bad_input(call, error, words):
    with pytest.raises(error, match=words):
        call()
