"""Checks for the numbers in the review questions (notebook 09): scaling at d_k = 64 (question 2)
and the size of the attention matrix (question 4).

Each check names the typical slip: a variance for a standard deviation, the scaled scores
for the unscaled ones, n for n², d_model or the heads counted in, GiB for GB, float64 bytes.
When none matches, it says what the answer is made of: the scores whose softmax the weights
are, the square a count is, the bytes per entry a memory size implies.
"""

import math

import torch

from ._core import DIFFERENCE, MISTAKE, Mismatch, exercise
from ._mistakes import match_number, softmax_confusions
from ._tensors import as_tensor, diagnose, expect_shape, one_number, typed_close

# 9.1 Question 2: scores at d_k = 64 without scaling --------------------------------------------

_SCORES_8 = torch.tensor([8.0, 0.0, -8.0], dtype=torch.float64)


@exercise("9.1", "Question 2: scores at d_k = 64 without scaling")
def saturation(std_64, weights_8) -> str:
    """Var(q·k) = d_k for unit-variance components; the standard deviation is its square
    root.

    weights_8 = torch.tensor([8.0, 0.0, -8.0]).softmax(dim=-1).
    """
    std = float(one_number("std_64", std_64))
    if not typed_close(std, 8.0):  # the course's rounding of typed numbers
        message, kind = _wrong_std(std)
        raise Mismatch(message, kind)
    expected = _SCORES_8.softmax(-1)
    got = as_tensor("weights_8", weights_8)
    if got.numel() == 3:  # a batch-first (1, 3) row is the same three weights
        got = got.flatten()
    expect_shape("weights_8", got, (3,))
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
    small = expected < 1e-3  # the weights that rounding to a few decimals turns into 0
    if bool((got[small] == 0).any()) and bool((got >= 0).all()):
        raise Mismatch(
            f"`weights_8` = {_shown(got)} is rounded too far: a softmax is never exactly one-hot, "
            "and the small weights are the point here. Keep 5 significant digits, or do not "
            "round.",
            MISTAKE,
        )
    if not _close(got, expected):
        named = _wrong_scores(got)
        if named and not any(_close(got, w) for w, _ in wrong):
            raise Mismatch(named, MISTAKE)
        diagnose("weights_8", got, expected, wrong, atol=1e-4, weights=True)
        raise Mismatch(  # within 1e-4 everywhere, but a small weight is far off
            f"`weights_8` = {_shown(got)}: the smallest weight is e^-16 / (1 + e^-8 + e^-16) ≈ "
            f"{expected[2]:.2e}, not {got[2]:.2e}. Round less, or compute it with .softmax.",
            DIFFERENCE,
        )
    return (  # the numbers only: what they mean for training is question 2's to answer
        f"σ = {std:.0f}; softmax([8, 0, -8]) = "
        f"[{expected[0]:.5f}, {expected[1]:.5f}, {expected[2]:.1e}]. What do weights like these "
        "do to the gradient? Question 2 asks."
    )


def _shown(weights: torch.Tensor) -> str:
    return "[" + ", ".join(f"{w:.5g}" for w in weights.tolist()) + "]"


def _close(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """Within 1e-4, and each weight below 1e-3 within a factor 2 (rounding keeps that much)."""
    if not torch.allclose(got, expected, atol=1e-4, rtol=0, equal_nan=False):
        return False
    small = expected < 1e-3
    ratios = got[small] / expected[small]
    return bool(((ratios > 0.5) & (ratios < 2)).all())


def _wrong_std(std: float) -> tuple[str, str]:
    """Why `std_64` = ``std`` is not √64 = 8, and the kind of that diagnosis."""
    for power, why in (
        (1, "is the variance, d_k; the standard deviation is √64 = 8."),
        (-0.5, "is 1/√64, the scaling factor; the standard deviation of q·k is √64 = 8."),
        (2, "is 64²; the variance is d_k = 64 and the standard deviation its square root, 8."),
        (1.5, "is 64^1.5; the standard deviation is the square root of the variance 64: 8."),
        (0.25, "is the fourth root of 64; the standard deviation is its square root, 8."),
        (-1, "is 1/64; the standard deviation of q·k is √64 = 8."),
    ):
        if math.isclose(std, 64**power, rel_tol=1e-3):
            return f"`std_64` = {std:.4g} {why}", MISTAKE
    if math.isclose(std, 32, rel_tol=1e-3):
        return "`std_64` = 32 is half of 64; the standard deviation is its square root, 8.", MISTAKE
    square = round(std * std)
    if std > 0 and abs(std * std - square) < 1e-6 * square and 0 < abs(square - 64) <= 2:
        return (
            f"`std_64` = {std:.4g} is √{square}; at d_k = 64 the variance is 64 and the "
            "standard deviation √64 = 8.",
            MISTAKE,
        )
    return (
        f"`std_64` = {std:.3g}; with variance d_k = 64, the standard deviation is √64.",
        DIFFERENCE,
    )


def _wrong_scores(got: torch.Tensor) -> str | None:
    """If the weights are the softmax of other whole-number scores, which (up to a constant:
    the middle score is 0 in the question)."""
    if not bool((got > 0).all()) or abs(float(got.sum()) - 1) > 1e-3:
        return None
    scores = got.log() - got.log()[1]
    if float((scores - scores.round()).abs().max()) > 0.05:
        return None
    shown = ", ".join(f"{s:g}" for s in scores.round().tolist())
    if shown == "8, 0, -8":
        return None
    return (
        f"these weights are the softmax of the scores [{shown}]; the question's unscaled "
        "scores are [8, 0, -8]."
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
        if isinstance(value, int) and abs(value) >= 2**63:  # beyond any tensor: n ** 2 swapped
            swapped = value == 2**n
            raise Mismatch(
                f"`{name}` has {len(str(abs(value)))} digits"
                + (f": 2 ** {n} has the power the wrong way round. " if swapped else ". ")
                + f"n² is {n:_} ** 2.",
                MISTAKE if swapped else DIFFERENCE,
            )
        got = float(one_number(name, value))
        if not math.isclose(got, n * n, rel_tol=1e-6):
            message = match_number(got, _entry_mistakes(name, n), rel_tol=1e-6)
            message, kind = (message, MISTAKE) if message else _other_count(name, got, n)
            raise Mismatch(message, kind)
    gb = float(one_number("gb_100k", gb_100k))
    expected = 100_000**2 * 4 / 1e9
    if not typed_close(gb, expected):  # the course's rounding of typed numbers
        message = match_number(gb, _size_mistakes(expected), rel_tol=0.01)
        if message:
            raise Mismatch(f"`gb_100k` = {gb:.4g}: {message}", MISTAKE)
        message, kind = _other_size(gb, expected)
        raise Mismatch(message, kind)
    return (  # the numbers only: why they limit the Transformer is question 4's to answer
        f"{512**2:,} entries at 512 tokens; 10¹⁰ at 100,000, {expected:.0f} GB in float32 per head "
        "and layer."
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
        (n * n * 6, f"`{name}` counts 6 layers; the question asks for one head's matrix: n²."),
        (
            n * (n + 1) // 2,
            f"`{name}` = n(n + 1)/2 is the causal triangle; the question's matrix is the full "
            "n × n (every query sees every key).",
        ),
        (
            n * (n - 1) // 2,
            f"`{name}` = n(n − 1)/2 counts each pair of tokens once; the matrix has an entry "
            "for every (query, key) in both orders, and the diagonal: n × n.",
        ),
        (n * n // 2, f"`{name}` is half of n²: the matrix is the full n × n."),
        (n**3, f"`{name}` = n³; an n × n matrix has n² entries."),
        (n * 4, f"`{name}` = 4n; the matrix has n × n entries (4 bytes each is the memory)."),
        (n * n * 4, f"`{name}` = 4n² is the memory in bytes; the number of entries is n²."),
    ]


def _other_count(name: str, got: float, n: int) -> tuple[str, str]:
    """What `name` = ``got`` is if not n²: the square of another number, else only how far."""
    root = math.isqrt(round(got)) if got > 0 else 0
    if root * root == round(got) and abs(root - n) <= max(2, n // 100):
        return (
            f"`{name}` = {got:,.0f} is {root:,}²: the sequence has n = {n:,} tokens, so n² = "
            f"{n * n:,}.",
            MISTAKE,
        )
    return (
        f"`{name}` = {got:,.0f}; an n × n matrix for n = {n:,} has {n * n:,} entries.",
        DIFFERENCE,
    )


def _size_mistakes(gb: float) -> list:
    return [
        (gb * 1e9, "this is in bytes; 1 GB = 10⁹ bytes."),
        (gb * 1e9 / 2**30, "this is in GiB (2³⁰ bytes); the question uses GB = 10⁹ bytes."),
        (gb * 1e3, "this is in MB (10⁶ bytes); the question asks for GB = 10⁹ bytes."),
        (gb * 1e6, "this is in kB (10³ bytes); the question asks for GB = 10⁹ bytes."),
        (gb * 1e-3, "this is in TB (10¹² bytes); the question asks for GB = 10⁹ bytes."),
        (gb * 2, "8 bytes per entry is float64; float32 takes 4."),
        (gb / 2, "2 bytes per entry is float16; float32 takes 4."),
        (gb / 4, "1 byte per entry? A float32 takes 4 bytes."),
        (gb / 16, "you divided by the 4 bytes per entry; multiply: entries × 4 / 10⁹."),
        (
            gb * 8,
            "this is 8 times too much: all 8 heads (the question asks for one), or bits (a "
            "float32 is 32 bits = 4 bytes).",
        ),
        (gb * 48, "this counts 8 heads in each of 6 layers; the question asks for one matrix."),
    ]


def _other_size(gb: float, expected: float) -> tuple[str, str]:
    """What `gb_100k` = ``gb`` implies: the bytes per entry, or the entries it counts."""
    per_entry = gb * 1e9 / 100_000**2
    if per_entry > 0 and abs(per_entry - round(per_entry)) < 0.01:
        return (
            f"`gb_100k` = {gb:.4g} is {round(per_entry)} bytes per entry; a float32 takes 4, so "
            f"10¹⁰ entries take {expected:.0f} GB.",
            MISTAKE,
        )
    return (
        f"`gb_100k` = {gb:.4g}; entries × 4 bytes / 10⁹ gives {expected:.0f} GB.",
        DIFFERENCE,
    )
