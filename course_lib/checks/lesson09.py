"""Checks for the numbers in the review questions (notebook 09): scaling at d_k = 64 (question 2)
and the size of the attention matrix (question 4).

Each check names the typical slip: a variance for a standard deviation, the scaled scores
for the unscaled ones, n for n², d_model or the heads counted in, GiB for GB, float64 bytes.
"""

import math

import torch

from ._core import Mismatch, exercise
from ._mistakes import match_number, softmax_confusions
from ._tensors import as_tensor, diagnose, one_number

# 9.1 Question 2: scores at d_k = 64 without scaling --------------------------------------------

_SCORES_8 = torch.tensor([8.0, 0.0, -8.0], dtype=torch.float64)


@exercise("9.1", "Question 2: scores at d_k = 64 without scaling")
def saturation(std_64, weights_8) -> str:
    """Var(q·k) = d_k for unit-variance components; the standard deviation is its square
    root.

    weights_8 = torch.tensor([8.0, 0.0, -8.0]).softmax(dim=-1).
    """
    std = float(one_number("std_64", std_64))
    if abs(std - 64) < 0.5:
        raise Mismatch("`std_64` = 64 is the variance, d_k; the standard deviation is √64 = 8.")
    if abs(std - 8) > 0.05:
        raise Mismatch(
            f"`std_64` = {std:.3g}; with variance d_k = 64, the standard deviation is √64."
        )
    expected = _SCORES_8.softmax(-1)
    got = as_tensor("weights_8", weights_8)
    if got.numel() == 3:  # a batch-first (1, 3) row is the same three weights
        got = got.flatten()
    wrong = [
        (
            (-_SCORES_8).softmax(-1),
            "these are the weights in reverse order: the largest score, 8, gets the largest "
            "weight.",
        ),
        (
            (_SCORES_8 / 8).softmax(-1),
            "these are the weights of the scaled scores [1, 0, -1]; the question asks what "
            "happens without scaling, for [8, 0, -8].",
        ),
        *softmax_confusions(_SCORES_8),
    ]
    if torch.equal(got, torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)):
        raise Mismatch(
            "`weights_8` = [1, 0, 0] is rounded too far: a softmax is never exactly one-hot. "
            "Keep 5 decimals, or do not round."
        )
    diagnose("weights_8", got, expected, wrong, atol=1e-4, weights=True)
    return (
        f"σ = {std:.0f}; softmax([8, 0, -8]) = "
        f"[{expected[0]:.5f}, {expected[1]:.5f}, {expected[2]:.1e}]: "
        "almost one-hot, so almost no gradient."
    )


# 9.2 Question 4: the size of the attention matrix ----------------------------------------------


@exercise("9.2", "Question 4: the size of the attention matrix")
def matrix_size(entries_512, entries_100k, gb_100k) -> str:
    """One score per (query, key) pair: n queries times n keys.

    float32 is 4 bytes; 1 GB = 10⁹ bytes.
    """
    for name, value, n in (
        ("entries_512", entries_512, 512),
        ("entries_100k", entries_100k, 100_000),
    ):
        got = float(one_number(name, value))
        message = match_number(got, _entry_mistakes(name, n), rel_tol=1e-6)
        if message:
            raise Mismatch(message)
        if not math.isclose(got, n * n, rel_tol=1e-6):
            raise Mismatch(
                f"`{name}` = {got:,.0f}; an n × n matrix for n = {n:,} has {n * n:,} entries."
            )
    gb = float(one_number("gb_100k", gb_100k))
    expected = 100_000**2 * 4 / 1e9
    message = match_number(gb, _size_mistakes(expected), rel_tol=0.01)
    if message:
        raise Mismatch(f"`gb_100k` = {gb:.4g}: {message}")
    if not math.isclose(gb, expected, rel_tol=0.01):
        raise Mismatch(f"`gb_100k` = {gb:.4g}; entries × 4 bytes / 10⁹ gives {expected:.0f} GB.")
    return (
        f"{512**2:,} entries at 512 tokens; 10¹⁰ at 100,000, {expected:.0f} GB in float32 per head "
        "and layer: quadratic growth."
    )


def _entry_mistakes(name: str, n: int) -> list:
    return [
        (
            n,
            f"`{name}` = {n:,} is one entry per token; the matrix holds one per (query, key) "
            "pair: n × n.",
        ),
        (2 * n, f"`{name}` = {2 * n:,} is n + n; the matrix holds one entry per pair: n × n."),
        (
            n * n * 512,
            f"`{name}` = n² × d_model; d_model sets the cost of computing each score, not how "
            "many there are.",
        ),
        (n * n * 8, f"`{name}` counts all 8 heads; the question asks for one head: n²."),
        (
            n * n * 8 * 6,
            f"`{name}` counts 8 heads in each of 6 layers; the question asks for one head's "
            "matrix: n².",
        ),
    ]


def _size_mistakes(gb: float) -> list:
    return [
        (gb * 1e9, "this is in bytes; 1 GB = 10⁹ bytes."),
        (gb * 1e9 / 2**30, "this is in GiB (2³⁰ bytes); the question uses GB = 10⁹ bytes."),
        (gb * 2, "8 bytes per entry is float64; float32 takes 4."),
        (gb / 4, "1 byte per entry? A float32 takes 4 bytes."),
        (
            gb * 8,
            "this is 8 times too much: all 8 heads (the question asks for one), or bits (a "
            "float32 is 32 bits = 4 bytes).",
        ),
    ]
