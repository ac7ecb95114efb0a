"""Dropout from 16-bit random numbers: the rate, the scale, the gradient and the seed."""

import pytest
import torch

from course_lib.dropout import Dropout, dropout


def test_it_drops_about_p_and_keeps_the_mean():
    torch.manual_seed(0)
    x = torch.ones(1000, 1000)
    y = dropout(x, 0.1)
    kept = (y != 0).float().mean().item()
    assert kept == pytest.approx(0.9, abs=0.002)  # a million draws: the spread is 0.0003
    assert y.mean().item() == pytest.approx(1.0, abs=0.003)


def test_survivors_are_scaled_by_the_kept_fractions_reciprocal():
    torch.manual_seed(0)
    y = dropout(torch.full((64, 11, 64), 2.0), 0.1)
    survivors = y[y != 0]
    expected = 2.0 * 65536 / (65536 - round(0.1 * 65536))
    assert torch.allclose(survivors, torch.full_like(survivors, expected))


def test_the_gradient_passes_only_through_the_survivors():
    torch.manual_seed(0)
    x = torch.randn(8, 5, 16, requires_grad=True)
    y = dropout(x, 0.3)
    y.sum().backward()
    scale = 65536 / (65536 - round(0.3 * 65536))
    torch.testing.assert_close(x.grad, (y != 0).float() * scale)


def test_the_seed_fixes_the_mask_and_every_element_can_be_dropped():
    torch.manual_seed(1)
    a = dropout(torch.ones(4, 7, 9), 0.5)
    torch.manual_seed(1)
    b = dropout(torch.ones(4, 7, 9), 0.5)
    assert torch.equal(a, b)
    # An odd size uses part of the last 64-bit draw; every position is dropped sometimes.
    dropped = sum((dropout(torch.ones(3, 5), 0.5) == 0).int() for _ in range(200))
    assert bool((dropped > 50).all() and (dropped < 150).all())


@pytest.mark.parametrize("p", [0.0, 0.1])
def test_identity_in_eval_mode_and_at_p_zero(p):
    x = torch.randn(3, 4)
    module = Dropout(p).eval()
    assert module(x) is x
    assert dropout(x, 0.0) is x
    assert dropout(x, p, training=False) is x


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_the_dtype_is_kept(dtype):
    torch.manual_seed(0)
    y = dropout(torch.ones(1000, dtype=dtype), 0.2)
    assert y.dtype == dtype
    scale = torch.tensor(65536 / (65536 - round(0.2 * 65536)), dtype=dtype)
    assert bool(((y == 0) | (y == scale)).all())


def test_a_p_just_under_one_keeps_one_value_in_65536():
    torch.manual_seed(0)
    y = dropout(torch.ones(100_000), 0.999999)
    assert 0 < int((y != 0).sum()) < 10 and bool((y[y != 0] == 65536).all())


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((torch.ones(3), 1.0), ValueError, r"p must be in \[0, 1\); got 1.0"),
        ((torch.ones(3), -0.1), ValueError, r"p must be in \[0, 1\)"),
        ((torch.ones(3, dtype=torch.long), 0.1), TypeError, "x must be a floating-point tensor"),
        (([1.0, 2.0], 0.1), TypeError, "x must be a torch.Tensor; got list"),
    ],
)
def test_bad_arguments_are_named(args, error, message):
    with pytest.raises(error, match=message):
        dropout(*args)


def test_the_module_reads_like_nn_dropout():
    assert repr(Dropout(0.25)) == "Dropout(p=0.25)"
    with pytest.raises(ValueError, match="p must be in"):
        Dropout(1.5)
