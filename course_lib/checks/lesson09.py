"""Checks for the numbers in the review questions (notebook 09): scaling at d_k = 64 (question 2)
and the size of the attention matrix (question 4), each judged by ``diagnose`` with its slips.
"""

import functools
import itertools
import math

import torch

from ._core import DIFFERENCE, MISTAKE, Mismatch, exercise
from ._mistakes import softmax_confusions
from ._tensors import as_tensor, diagnose, expect_shape, one_number

# 9.1 Question 2: scores at d_k = 64 without scaling --------------------------------------------

_SCORES_8 = torch.tensor([8.0, 0.0, -8.0], dtype=torch.float64)


@exercise("9.1", "Question 2: scores at d_k = 64 without scaling")
def saturation(std_64, weights_8) -> str:
    """Var(q·k) = d_k for unit-variance components; the standard deviation is its square
    root.

    weights_8 = torch.tensor([8.0, 0.0, -8.0]).softmax(dim=-1).
    """
    std = float(one_number("std_64", std_64))
    diagnose("std_64", std, 8.0, _std_slips(), typed=True, during=f"`std_64` = {std:.4g}")
    expected, got = _SCORES_8.softmax(-1), as_tensor("weights_8", weights_8)
    got = got.flatten() if got.numel() == 3 else got  # a batch-first (1, 3) row: the same weights
    expect_shape("weights_8", got, (3,))
    shown = "[" + ", ".join(f"{w:.5g}" for w in got.tolist()) + "]"
    if bool((got[expected < 1e-3] == 0).any()) and bool((got >= 0).all()):
        too_far = f"`weights_8` = {shown} is rounded too far: a softmax is never exactly one-hot, "
        too_far += "and the small weights are the point here. Keep 5 significant digits, or do "
        raise Mismatch(too_far + "not round.", MISTAKE)
    if bool((got > 0).all()):  # the scores they are the softmax of, up to a constant (middle 0)
        # read to a factor 2 on each weight: the small ones are what rounding may leave
        during = f"`weights_8` = {shown} are the softmax of the scores log(w / w₁)"
        scores = (got / got[1]).log()
        diagnose("log(w / w₁)", scores, _SCORES_8, _score_slips(), atol=math.log(2), during=during)
    diagnose("weights_8", got, expected, softmax_confusions(_SCORES_8), weights=True)
    return (  # the numbers only: what they mean for training is question 2's to answer
        f"σ = {std:.0f}; softmax([8, 0, -8]) = "
        f"[{expected[0]:.5f}, {expected[1]:.5f}, {expected[2]:.1e}]. What do weights like these "
        "do to the gradient? Question 2 asks."
    )


def _std_slips() -> dict:
    return {
        "this is the variance, d_k; the standard deviation is √64 = 8.": 64,
        "this is 1/√64, the scaling factor; the standard deviation of q·k is √64 = 8.": 1 / 8,
        "this is 64²; the variance is d_k = 64 and the standard deviation its root, 8.": 64**2,
        "this is half of 64; the standard deviation is its square root, 8.": 32,
    } | {
        f"this is √{n}; at d_k = 64 the variance is 64, the standard deviation √64 = 8.": n**0.5
        for n in (62, 63, 65, 66)
    }


@functools.cache
def _score_slips() -> list:
    """Scores whose softmax the weights are by mistake: reversed, scaled, other whole numbers."""
    slips = {
        "these are the weights in reverse order: the largest score, 8, gets the largest "
        "weight.": [-8, 0, 8],
        "these are the weights of the scaled scores [1, 0, -1]; the question asks what happens "
        "without scaling, for [8, 0, -8].": [1, 0, -1],
    }  # fmt: skip
    for a, b in itertools.product(range(-20, 21), repeat=2):
        said = f"these weights are the softmax of the scores [{a}, 0, {b}]; the question's "
        slips.setdefault(said + "unscaled scores are [8, 0, -8].", [a, 0, b])
    return [(torch.tensor(s, dtype=torch.float64), m) for m, s in slips.items()]


# 9.2 Question 4: the size of the attention matrix ----------------------------------------------


@exercise("9.2", "Question 4: the size of the attention matrix")
def matrix_size(entries_512, entries_100k, gb_100k) -> str:
    """One score per (query, key) pair: n queries times n keys.

    float32 is 4 bytes; 1 GB = 10⁹ bytes.
    """
    answers = {"entries_512": (entries_512, 512), "entries_100k": (entries_100k, 100_000)}
    for name, (value, n) in answers.items():
        if isinstance(value, int) and abs(value) >= 2**63:  # beyond any tensor: n ** 2 swapped
            swapped = value == 2**n
            said = f": 2 ** {n} has the power the wrong way round. " if swapped else ". "
            message = f"`{name}` has {len(str(abs(value)))} digits{said}n² is {n:_} ** 2."
            raise Mismatch(message, MISTAKE if swapped else DIFFERENCE)
        got = float(one_number(name, value))
        diagnose(name, got, n * n, _entry_slips(n), during=f"`{name}` = {got:,.0f}")
    gb = float(one_number("gb_100k", gb_100k))
    diagnose("gb_100k", gb, 40.0, _size_slips(), typed=True, during=f"`gb_100k` = {gb:.4g}")
    return (  # the numbers only: why they limit the Transformer is question 4's to answer
        f"{512**2:,} entries at 512 tokens; 10¹⁰ at 100,000, 40 GB in float32 per head and layer."
    )


def _entry_slips(n: int) -> dict:
    near = max(2, n // 100)  # a square of another number: a typo in n
    return {
        "this is one entry per token; the matrix holds one per (query, key) pair: n × n.": n,
        "this is n + n; the matrix holds one entry per pair: n × n.": 2 * n,
        "this is n² × d_model; d_model sets the cost of computing each score, not how many there "
        "are.": n * n * 512,
        "this counts all 8 heads; the question asks for one head: n².": n * n * 8,
        "this counts 8 heads in each of 6 layers; the question asks for one matrix.": n * n * 48,
        "this is n(n + 1)/2, the causal triangle; the question's matrix is the full n × n (every "
        "query sees every key).": n * (n + 1) // 2,
        "this is n(n − 1)/2, each pair of tokens once; the matrix has an entry for every "
        "(query, key) in both orders, and the diagonal: n × n.": n * (n - 1) // 2,
        "this is half of n²: the matrix is the full n × n.": n * n // 2,
        "this is 4n², the memory in bytes; the number of entries is n².": 4 * n * n,
    } | {
        f"this is {r:,}²: the sequence has n = {n:,} tokens, so n² = {n * n:,}.": r * r
        for r in range(n - near, n + near + 1)
        if r != n
    }


def _size_slips() -> dict:
    """For 10¹⁰ float32 entries, 40 GB: the units, the bytes per entry, the matrices counted."""
    return {
        "this is in bytes; 1 GB = 10⁹ bytes.": 4e10,
        "this is in GiB (2³⁰ bytes); the question uses GB = 10⁹ bytes.": 4e10 / 2**30,
        "this is in MB (10⁶ bytes); the question asks for GB = 10⁹ bytes.": 4e4,
        "8 bytes per entry is float64; float32 takes 4.": 80,
        "2 bytes per entry is float16; float32 takes 4.": 20,
        "1 byte per entry? A float32 takes 4 bytes.": 10,
        "you divided by the 4 bytes per entry; multiply: entries × 4 / 10⁹.": 2.5,
        "this is 8 times too much: all 8 heads (the question asks for one), or bits (a float32 is "
        "32 bits = 4 bytes).": 320,
        "this counts 8 heads in each of 6 layers; the question asks for one matrix.": 40 * 48,
    } | {
        f"this is {b} bytes per entry; a float32 takes 4, so 10¹⁰ entries take 40 GB.": 10 * b
        for b in range(1, 17)
    }
