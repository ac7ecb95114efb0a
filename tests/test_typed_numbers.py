"""The course's one rounding policy for numbers typed by hand (``_tensors.typed_tolerance``):
a typed number passes when it agrees with the reference to 2 decimal places or to 3
significant figures, whichever is looser."""

import numpy as np
import pytest
import torch

from course_lib.checks import check
from course_lib.checks._core import MISTAKE, Mismatch
from course_lib.checks._tensors import diagnose, match, typed_close, typed_tolerance


@pytest.mark.parametrize(
    "reference, typed",
    [
        (0.6698, 0.67),  # 2 decimals
        (0.3302, 0.33),
        (4.3395, 4.34),  # 2 decimals and 3 significant figures alike
        (-0.46657, -0.47),
        (61.03, 61.0),  # 3 significant figures, looser than 2 decimals here
        (117.81, 118),
        (0.000335, 0.0),  # 2 decimals, looser than 3 significant figures here
        (0.125, 0.13),  # a reference halfway: rounding up or down both agree
        (0.125, 0.12),
        (0.6698, 0.66983),  # anything closer than the rounded reference
    ],
)
def test_the_reference_rounded_to_2_decimals_or_3_significant_figures_passes(reference, typed):
    assert typed_close(typed, reference)


@pytest.mark.parametrize(
    "reference, typed",
    [
        (0.6698, 0.7),  # 1 decimal
        (0.6698, 0.66),  # cut, not rounded, 2 decimals: off by 0.0098
        (4.3395, 4.3),
        (61.03, 61.1),
        (117.81, 117),  # cut to 3 significant figures
        (117.81, 120),  # 2 significant figures
        (-0.46657, 0.47),  # the sign lost
    ],
)
def test_coarser_or_wrong_numbers_fail(reference, typed):
    assert not typed_close(typed, reference)


def test_the_tolerance_is_the_looser_of_the_two_roundings():
    assert typed_tolerance(0.5) == pytest.approx(0.005)  # 3 s.f. would allow 0.0005
    assert typed_tolerance(7.0) == pytest.approx(0.005)  # both: 7.00
    assert typed_tolerance(61.0) == pytest.approx(0.05)  # 3 s.f.: 61.0
    assert typed_tolerance(-250.0) == pytest.approx(0.5)  # the sign does not matter
    assert typed_tolerance(0.0) == pytest.approx(0.005)


def test_lists_arrays_and_tensors_are_compared_elementwise():
    reference = torch.tensor([0.6698, 0.3302, 61.03])
    assert typed_close([0.67, 0.33, 61.0], reference)
    assert typed_close(np.array([0.67, 0.33, 61.0]), reference)
    assert not typed_close([0.67, 0.33, 61.1], reference)  # one number off is enough
    assert not typed_close([0.67, 0.33], reference)  # a shape differs
    tolerances = typed_tolerance(reference)
    assert tolerances.shape == (3,)
    assert tolerances.tolist() == pytest.approx([0.005, 0.005, 0.05])


def test_diagnose_with_typed_uses_the_policy_for_the_answer_and_the_mistakes():
    reference = torch.tensor([0.6698, 0.3302])
    diagnose("w", [0.67, 0.33], reference, typed=True)  # passes
    with pytest.raises(Mismatch):
        diagnose("w", [0.67, 0.33], reference)  # the default tolerance is 1e-4
    wrong = [(torch.tensor([0.7311, 0.2689]), "softmax([1, 0]): scale first")]
    with pytest.raises(Mismatch, match="scale first") as raised:
        diagnose("w", [0.73, 0.27], reference, wrong, typed=True)
    assert raised.value.kind == MISTAKE
    assert match([0.73, 0.27], wrong, typed=True) == "softmax([1, 0]): scale first"
    assert match([0.73, 0.27], wrong) is None  # at 1e-4, a rounded mistake is not recognised


# The checks that take numbers typed by hand apply the policy ---------------------------------

RELU_OUTPUT = torch.tensor([0.0, 1.2, 0.0, 0.0, 0.7])
CAUSAL_TYPED = [
    [1.0, 0.0, 0.0, 0.0],
    [0.5, 0.5, 0.0, 0.0],
    [0.33, 0.33, 0.33, 0.0],
    [0.25, 0.25, 0.25, 0.25],
]


@pytest.mark.parametrize(
    "exercise, answers",
    [
        ("3.2", ([0.67, 0.33], 4.34)),  # weights [0.6698, 0.3302], output 4.3395
        ("3.3", (CAUSAL_TYPED,)),  # a third as 0.33
        ("6.2", (RELU_OUTPUT, 2, 0.40)),
        ("7.8", (0.45, 0.60)),  # 0.4493 and 0.5968
    ],
    ids=["3.2", "3.3", "6.2", "7.8"],
)
def test_checks_of_typed_numbers_accept_2_decimals(exercise, answers):
    result = check(exercise, *answers)
    assert result.passed, result.message


@pytest.mark.parametrize(
    "exercise, answers",
    [
        ("3.2", ([0.7, 0.3], 4.3)),
        ("7.8", (0.4, 0.6)),
    ],
    ids=["3.2", "7.8"],
)
def test_checks_of_typed_numbers_refuse_1_decimal(exercise, answers):
    assert not check(exercise, *answers).passed
