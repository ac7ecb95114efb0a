"""Tests of the shared catalogue of typical mistakes (``course_lib/checks/_mistakes.py``).

Each family computes the same wrong results in torch and in numpy, speaks the language of
the library it is given, and names each of its mistakes: a result that reproduces one gets
that mistake's message, not another's. The type and shape checks refuse what a lesson's
function must not return, with messages the lessons' tests rely on.
"""

import re

import numpy as np
import pytest
import torch

from course_lib import numpy_encoder
from course_lib.checks._core import Mismatch
from course_lib.checks._mistakes import (
    array_pair,
    attend,
    expect_array,
    expect_mask,
    expect_returned,
    expect_tensor,
    layer_norm,
    mask_mistakes,
    masked,
    output_mistakes,
    positional_mistakes,
    positional_table,
    softmax,
    softmax_mistakes,
    stable_softmax_mistakes,
    tensor_pair,
    weight_mistakes,
)
from course_lib.checks._norms import add_and_norm_mistakes, layer_norm_mistakes
from course_lib.checks._tensors import as_tensor, match, shape_reading, whole_count, whole_number

G = np.random.default_rng(0)
SCORES = G.normal(size=(2, 5, 6)) * 2  # (B, T_q, T_k), T_q != T_k
MASK = np.tril(np.ones((5, 6), dtype=bool))  # every row keeps at least one key
# Layer norm: (B, T, d) with a row whose variance is near ε and a constant row, where the
# ε mistakes show; on ordinary rows they are within round-off of the right answer.
X = G.normal(size=(2, 3, 6)) * np.array([3, 3e-3, 1])[None, :, None] + 1
X[1, 1] = 0.25
GAMMA, BETA = G.normal(size=6) * 0.3 + 1, G.normal(size=6) * 0.3
# A hand-written softmax: large inputs, where an unstable one overflows or underflows.
WIDE = np.array([[1000.0, 1001, 1002, 1003], [-1000.0, -1003, -1001, -1002]])
SQUARE = np.array(
    [[1000.0, 1001, 998, 1003], [-1000, -1003, -1001, -1002], [0, 1, 2, 3], [3, 1, -2, 0]]
)
# The positional encoding: the positions 0..5 as a column; Add & Norm: a sub-layer's output.
POSITIONS = np.arange(6.0)[:, None]
SUBLAYER = G.normal(size=X.shape)

FAMILIES = {  # name -> a function of (to_backend) returning (reference, mistakes)
    "weights": lambda t: (
        attend(t(SCORES) / 8**0.5),
        weight_mistakes(t(SCORES), 8, scaled_by=((3, "d_v, the width of the values"),)),
    ),
    "weights with a mask": lambda t: (
        attend(t(SCORES) / 8**0.5, t(MASK)),
        weight_mistakes(t(SCORES), 8, t(MASK)),
    ),
    "softmax": lambda t: (attend(t(SCORES)), softmax_mistakes(t(SCORES))),
    "mask": lambda t: (attend(t(SCORES), t(MASK)), mask_mistakes(t(SCORES), t(MASK))),
    "output": lambda t: (
        attend(t(SCORES)) @ t(X[:, :6, :3].repeat(2, 1)),
        output_mistakes(t(SCORES), t(X[:, :6, :3].repeat(2, 1))),
    ),
    "hand-written softmax, square": lambda t: (
        softmax(t(SQUARE)),
        stable_softmax_mistakes(t(SQUARE)),
    ),
    "hand-written softmax, wide": lambda t: (softmax(t(WIDE)), stable_softmax_mistakes(t(WIDE))),
    "layer norm, batched": lambda t: (
        layer_norm(t(X), t(GAMMA), t(BETA)),
        layer_norm_mistakes(t(X), t(GAMMA), t(BETA)),
    ),
    "layer norm, batched, eps = 0.1": lambda t: (
        layer_norm(t(X), t(GAMMA), t(BETA), 0.1),
        layer_norm_mistakes(t(X), t(GAMMA), t(BETA), 0.1),
    ),
    "layer norm of one matrix": lambda t: (
        layer_norm(t(X[0]), t(GAMMA), t(BETA)),
        layer_norm_mistakes(t(X[0]), t(GAMMA), t(BETA)),
    ),
    "positional encoding": lambda t: (
        positional_table(t(POSITIONS), 8),
        positional_mistakes(t(POSITIONS), 8),
    ),
    "add & norm": lambda t: (
        layer_norm(t(X) + t(SUBLAYER), t(GAMMA), t(BETA)),
        add_and_norm_mistakes(t(X), t(SUBLAYER), lambda a: layer_norm(a, t(GAMMA), t(BETA))),
    ),
}


def _torch(a):
    return torch.from_numpy(np.asarray(a))


def _numpy(a):
    return np.asarray(a)


@pytest.mark.parametrize("family", FAMILIES)
def test_torch_and_numpy_compute_the_same_reference_and_wrong_results(family):
    """Every numpy mistake is also a torch one; torch adds the sequence axis of a batch."""
    (ref_t, wrong_t), (ref_n, wrong_n) = FAMILIES[family](_torch), FAMILIES[family](_numpy)
    assert isinstance(ref_t, torch.Tensor) and isinstance(ref_n, np.ndarray)
    assert np.allclose(ref_t.numpy(), ref_n)
    for value, _ in wrong_n:
        assert isinstance(value, np.ndarray)
        assert any(_same(value, v.numpy()) for v, _ in wrong_t)
    assert len(wrong_t) - len(wrong_n) == (1 if family.startswith("layer norm,") else 0)


def _same(a, b) -> bool:
    return a.shape == b.shape and np.allclose(a, b, equal_nan=True)


@pytest.mark.parametrize("backend", [_torch, _numpy], ids=["torch", "numpy"])
@pytest.mark.parametrize("family", FAMILIES)
def test_every_mistake_is_wrong_and_named_by_its_own_message(family, backend):
    reference, mistakes = FAMILIES[family](backend)
    for value, message in mistakes:
        assert not as_tensor("v", value).allclose(as_tensor("r", reference), atol=1e-4, rtol=0)
        assert match(value, mistakes) == message


@pytest.mark.parametrize("family", FAMILIES)
def test_the_messages_speak_the_language_of_the_library(family):
    for backend, foreign in ((_torch, r"\bnp\.|axis="), (_numpy, r"dim=|torch|masked_fill")):
        for _, message in FAMILIES[family](backend)[1]:
            assert not re.search(foreign, message), message


def test_the_numpy_reference_is_the_projects():
    assert np.allclose(softmax(SQUARE), numpy_encoder.softmax(SQUARE))
    assert np.allclose(layer_norm(X, GAMMA, BETA), numpy_encoder.layer_norm(X, GAMMA, BETA))
    assert np.allclose(positional_table(POSITIONS, 8), numpy_encoder.positional_encoding(6, 8))


def test_a_mask_hides_where_it_is_false_in_both_libraries():
    assert np.array_equal(masked(SCORES, MASK, 0.0), np.where(MASK, SCORES, 0.0))
    assert torch.equal(masked(_torch(SCORES), _torch(MASK), 0.0), _torch(SCORES * MASK))


def test_scaling_by_another_width_is_named_only_when_it_differs_from_d_k():
    messages = [m for _, m in weight_mistakes(_torch(SCORES), 8, scaled_by=((8, "x"), (None, "y")))]
    assert not any("you scaled by" in m for m in messages)
    messages = [m for _, m in weight_mistakes(_torch(SCORES), 8, scaled_by=((3, "d_v"),))]
    assert messages[-1].startswith("you scaled by √3, the square root of d_v; ")


# The type and shape of what a function returns ------------------------------------------------


def test_tensor_pair_converts_a_pair_and_names_anything_else():
    output, weights = tensor_pair("attention", (torch.ones(2), torch.ones(1, 1)), "on q")
    assert output.dtype == weights.dtype == torch.float64
    with pytest.raises(Mismatch, match=r"^on q, the output is a ndarray: attention returns torch"):
        tensor_pair("attention", (np.ones(2), torch.ones(1, 1)), "on q")
    with pytest.raises(Mismatch, match=r"^on q, the weights is a list: "):
        tensor_pair("attention", (torch.ones(2), [[1.0]]), "on q")
    with pytest.raises(Mismatch, match=r"^attention should return a pair \(output, weights\); "):
        tensor_pair("attention", torch.ones(2, 3), "on q")
    with pytest.raises(Mismatch, match=r"on q it returned a tensor of shape \(2, 3\)\.$"):
        tensor_pair("attention", torch.ones(2, 3), "on q")


@pytest.mark.parametrize(
    "result, words",
    [
        (np.ones(3), "return a pair (output, weights); your function returned an array of shape"),
        ((np.ones(2), torch.ones(2)), "`weights` is a torch tensor: this project is numpy only"),
        ((np.ones(2), [1.0]), "`weights` should be a numpy array; got list."),
        ((np.ones(2, dtype=int), np.ones(2)), "`output` has dtype int64"),
    ],
)
def test_array_pair_refuses_what_is_not_a_pair_of_float_arrays(result, words):
    with pytest.raises(Mismatch) as info:
        array_pair(result, "on q (2, 5)")
    assert str(info.value).startswith("on q (2, 5), ") and words in str(info.value)


def test_expect_array_returns_a_float_array_as_it_is():
    x = np.ones(2)
    assert expect_array("x", x, "on x") is x


@pytest.mark.parametrize(
    "check, value, words",
    [
        (expect_tensor, np.ones(2), "make_mask should return a torch.Tensor; got ndarray"),
        (expect_mask, None, "`make_mask` returned None: end it with `return ...`"),
        (expect_mask, torch.ones(2), "boolean tensor (True = may attend); got dtype torch.float32"),
    ],
)
def test_the_torch_checks_name_the_type_or_dtype(check, value, words):
    with pytest.raises(Mismatch) as info:
        check("make_mask", value)
    assert words in str(info.value)
    mask = torch.ones(2, dtype=torch.bool)
    assert expect_mask("make_mask", mask) is mask


def test_a_function_without_return_is_named():
    assert expect_returned("f", 0) == 0
    with pytest.raises(Mismatch, match=r"^`f` returned None: end it with `return \.\.\.`\.$"):
        expect_returned("f", None)


@pytest.mark.parametrize(
    "got, expected, words",
    [
        ((8, 3), (3, 8), "transposed?"),
        ((1, 3, 8), (3, 8), "drop the leading batch axis of size 1."),
        ((3, 8), (2, 3, 8), "the leading batch axis, of size 2, is missing."),
        ((2, 4, 3), (2, 3, 4), "the axes are out of order"),
        ((4, 8), (3, 8), None),
    ],
)
def test_shape_reading_names_a_transposed_batched_or_permuted_shape(got, expected, words):
    reading = shape_reading(torch.zeros(got), expected)
    assert reading == words or (words and reading.startswith(words))


def test_shape_reading_names_a_missing_axis_by_its_letter():
    assert shape_reading(torch.zeros(4), (4, 4), "(T_q, T_k)") == (
        "the leading T_q axis, of size 4, is missing."
    )
    assert "leading batch axis" in shape_reading(torch.zeros(3, 8), (2, 3, 8), "(B, T, d_model)")


def test_a_count_that_is_not_whole_shows_its_fraction():
    with pytest.raises(Mismatch, match=r"= 3\.0000000001: a count is a whole number"):
        whole_number("n", 3.0000000001)
    with pytest.raises(Mismatch, match=r"= 1,280,000\.5: a count is a whole number: a division"):
        whole_count("n", 1_280_000.5)
