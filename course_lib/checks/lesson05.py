"""Checks for lesson 5, positional encoding (paper §3.5).

PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)),
with positions counted from 0 and i the index of a (sin, cos) pair. Each check compares the
learner's answer with the reference and, when they differ, with the results of the typical
mistakes (sin and cos swapped, 2i/d_model written i/d_model, positions from 1, base 1000,
[sin | cos] halves, a transposed table, degrees, ...) so that the message names the mistake;
the table's come from ``_mistakes``.
"""

import functools
import math

import torch
from torch import nn

from ..attention import scaled_dot_product_attention
from ..positional import sinusoidal_encoding
from ._core import Mismatch, call, exercise, multiple_choice
from ._mistakes import positional_mistakes, positional_table
from ._tensors import as_tensor, close, diagnose, difference, expect_shape, fmt, match, one_number

# Shared by several exercises -------------------------------------------------------------------


def _norm(name, value) -> float:
    """One number >= 0 (a norm or an RMS), not a tensor of differences."""
    shape = tuple(as_tensor(name, value).shape)
    if len(shape) > 0 and shape != (1,):  # a tensor of differences: .norm() forgotten
        raise Mismatch(f"`{name}` should be one number (an L2 norm); got shape {shape}")
    x = float(one_number(name, value))
    if x < 0:
        raise Mismatch(f"`{name}` should be a norm, a number >= 0; got {x}")
    return x


# 5.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("5.1", "Recall: why attention cannot see order", correct="b")
def recall(answer_5_1):
    """What do the scores q·k depend on? Is there anything in Eq. 1 that knows an index?

    Shuffle the rows of Q, K and V together. What happens to the rows of the output?

    (a) The softmax only normalises each row of scores; it neither adds nor removes order. The
    scores themselves never saw the positions: q·k depends on the two vectors alone.

    (b) The scores q·k and the weighted sums use only the content vectors, never their indices,
    and there is no recurrence or convolution to supply order. Shuffle the inputs and the
    outputs are shuffled the same way, each token's vector unchanged: self-attention is
    permutation-equivariant, so order has to be added to the inputs.

    (c) Dividing by √d_k rescales every score by the same constant: no information about order
    was there to remove.

    (d) Not invariant: the outputs are not the same in the same order, they are shuffled along
    with the inputs. That is permutation *equivariance*: each token gets the same vector
    wherever it stands.
    """


# 5.2 Apply: PE(5, 0) and PE(5, 1) with d_model = 512 -------------------------------------------

_S5, _C5 = math.sin(5), math.cos(5)
_PE_5_MISTAKES = [
    (
        [_C5, _S5],
        "sin and cos are swapped: dimension 0 (even) is sin, dimension 1 (odd) is cos.",
    ),
    (
        [math.sin(math.radians(5)), math.cos(math.radians(5))],
        "these are sin 5° and cos 5°: the angle is 5 radians (torch.sin and math.sin work in "
        "radians).",
    ),
    (
        [math.sin(6), math.cos(6)],
        "these are sin 6 and cos 6: positions count from 0, so use pos = 5 (row 5 of a table "
        "that starts at row 0).",
    ),
    (
        [math.sin(4), math.cos(4)],
        "these are sin 4 and cos 4, position 4: the exercise asks for pos = 5, and positions "
        "count from 0.",
    ),
    (
        [_S5, math.cos(5 / 10000 ** (2 / 512))],
        "PE(5, 1) used i = 1 in the exponent: dimensions 0 and 1 are the sin and cos of the "
        "same pair i = 0, so both divide by 10000⁰ = 1.",
    ),
    (
        [_S5, math.cos(5 / 10000 ** (1 / 512))],
        "PE(5, 1) used the dimension index 1 in the exponent: dimensions 0 and 1 form pair "
        "i = 0, exponent 2i/d_model = 0.",
    ),
    (
        [0.0, 1.0],
        "these are PE(0, 0) and PE(0, 1), position 0; the exercise asks for position 5.",
    ),
    ([_S5, _S5], "PE(5, 1) is an odd dimension: cos, not sin."),
]


@exercise("5.2", "Apply: PE(5, 0) and PE(5, 1)")
def apply(pe_5_0, pe_5_1) -> str:
    """Dimensions 0 and 1 form pair i = 0: their divisor is 10000^(0/512) = 1.

    PE(5, 0) = sin(5) and PE(5, 1) = cos(5), in radians: math.sin(5), math.cos(5).
    """
    pair = torch.stack([one_number("pe_5_0", pe_5_0), one_number("pe_5_1", pe_5_1)])
    expected = torch.tensor([_S5, _C5], dtype=torch.float64)
    if not close(pair, expected, atol=5e-4):
        raise Mismatch(
            match(pair, _PE_5_MISTAKES)
            or difference("[pe_5_0, pe_5_1]", pair, expected)
            + " Pair i = 0 has divisor 10000⁰ = 1, whatever d_model is."
        )
    return (
        f"PE(5, 0) = sin 5 = {_S5:.4f} and PE(5, 1) = cos 5 = {_C5:.4f}, against 0 and 1 at "
        "position 0: the fastest pair has turned 5 radians, about 0.80 of a circle."
    )


# 5.3 Extend: the block-diagonal R_k with PE(pos + k) = R_k · PE(pos) ---------------------------


@exercise("5.3", "Extend: the shift is a rotation")
def shift(shift_matrix) -> str:
    """For one pair, [sin ω(p+k), cos ω(p+k)] = R·[sin ωp, cos ωp]: expand with sin(a+b) and
    cos(a+b).

    R = [[cos ωk, sin ωk], [-sin ωk, cos ωk]] for each ω_i = 10000^(-2i/d_model).

    torch.block_diag(*blocks) puts the d_model/2 blocks on the diagonal.
    """
    for k, d_model in ((1, 4), (3, 8), (5, 64), (-2, 16)):
        during = f"for k = {k}, d_model = {d_model}"
        name = f"shift_matrix({k}, {d_model})"
        got = as_tensor("shift_matrix(...)", call(shift_matrix, k, d_model, during=during))
        expect_shape(name, got, (d_model, d_model), "(d_model, d_model)")
        expected = _shift_matrix(k, d_model)
        if not close(got, expected, atol=1e-5):
            message = match(got, _shift_mistakes(k, d_model, expected))
            raise Mismatch(f"{during}: {message or difference(name, got, expected)}")
    pe = sinusoidal_encoding(40, 64).double()
    error = (pe[3:] - pe[:-3] @ _shift_matrix(3, 64).T).abs().max().item()
    # The float32 table's round-off, whose last digits may differ between processors
    error = "below 1e-6" if error < 1e-6 else f"{error:.0e}"
    return (
        "R_k is block-diagonal, one 2 x 2 rotation by ω_i·k per pair, and it depends on k only: "
        f"the same matrix maps every PE(pos) to PE(pos + 3) (largest error {error}, float32 "
        "round-off)."
    )


def _rotations(k, omega):
    """Block-diagonal, one [[cos ω_i k, sin ω_i k], [-sin ω_i k, cos ω_i k]] per frequency."""
    c, s = torch.cos(omega * k), torch.sin(omega * k)
    return torch.block_diag(
        *[torch.tensor([[ci, si], [-si, ci]]) for ci, si in zip(c, s, strict=True)]
    )


def _shift_matrix(k, d_model):
    """The reference R_k: rotations by ω_i·k with ω_i = 10000^(-2i/d_model)."""
    return _rotations(k, 10000.0 ** -_exponents(d_model))


def _shift_mistakes(k, d_model, expected):
    i = _pair_index(d_model)
    return [
        (
            expected.T,
            "this matrix moves PE(pos) to PE(pos - k): it is the transpose of R_k (the textbook "
            "rotation [[cos, -sin], [sin, cos]] assumes (cos, sin) order). With the pair stored "
            "as (sin, cos), sin(a + b) = sin a·cos b + cos a·sin b makes the first row "
            "[cos ωk, sin ωk].",
        ),
        (torch.eye(d_model), "this is the identity: R_k must turn each pair by the angle ω_i·k."),
        (
            _rotations(k, 10000.0 ** -(i / d_model)),
            "the frequencies use i/d_model; the formula has 2i/d_model (i counts the pairs).",
        ),
        (
            _rotations(k, 1000.0 ** -_exponents(d_model)),
            "the frequencies use base 1000; the paper uses 10000.",
        ),
        (
            _rotations(k, torch.ones_like(i)),
            "every block turns by k radians: pair i turns by ω_i·k with ω_i = 10000^(-2i/d_model).",
        ),
    ]


def _pair_index(d_model: int) -> torch.Tensor:
    """i = 0, 1, ..., d_model/2 - 1: the index of each (sin, cos) pair."""
    return torch.arange(d_model // 2, dtype=torch.float64)


def _exponents(d_model: int) -> torch.Tensor:
    """The paper's exponents 2i/d_model, one per pair: ω_i = 10000^(-2i/d_model)."""
    return 2 * _pair_index(d_model) / d_model


# 5.4 (lab L5.A) Permutation equivariance, with and without PE ----------------------------------

PERM = [0, 3, 7, 1, 5, 9, 2, 6, 4, 8]
INVERSE = [0, 3, 6, 1, 8, 4, 7, 2, 9, 5]
WIDTH_5_4 = 32

_LAB_5_4_MISTAKES = {
    "squared": (
        "this is the squared norm, the sum of squared differences: take its square root, `.norm()`."
    ),
    "one run": (
        "`pe` was added to only one of the two runs: add it to x for the unshuffled run as "
        "well, run(x + pe)."
    ),
    "not unshuffled": (
        "the output of the shuffled run was not un-shuffled: index it with inverse_perm before "
        "comparing, as without PE."
    ),
    "perm twice": "the output was indexed with perm again; un-shuffle it with inverse_perm.",
}


@exercise("5.4", "Lab L5.A: permutation equivariance")
def equivariance(inverse_perm, diff_without_pe, diff_with_pe) -> str:
    """The inverse of a permutation: torch.argsort(perm).

    Without PE: layer(x[:, perm])[:, inverse_perm] should equal layer(x).

    With PE: add pe to x before the first run, and to x[:, perm] (new positions) before the
    second.
    """
    inverse = as_tensor("inverse_perm", inverse_perm).flatten()
    if inverse.tolist() == PERM:
        raise Mismatch(
            "`inverse_perm` is the permutation itself: the inverse sends each position back, "
            "inverse[perm[i]] = i (torch.argsort(perm))."
        )
    if inverse.tolist() != INVERSE:
        raise Mismatch(
            f"`inverse_perm` should satisfy inverse[perm[i]] = i for perm = {PERM}; got "
            f"{fmt(inverse)}."
        )
    without = _norm("diff_without_pe", diff_without_pe)
    with_pe = _norm("diff_with_pe", diff_with_pe)
    if without > 1e-5:
        raise Mismatch(
            f"`diff_without_pe` = {without:.3g}, but without positions the layer is equivariant, "
            "so the difference should be float32 round-off (below 1e-5). Did you un-shuffle the "
            "output with inverse_perm before comparing it with the unshuffled run?"
        )
    if with_pe < 1e-3:
        raise Mismatch(
            f"`diff_with_pe` = {with_pe:.3g}: the encodings moved with their tokens. Add PE "
            "*after* shuffling, for the new positions: x[:, perm] + pe, not (x + pe)[:, perm]."
        )
    lab = _lab_5_4()
    if abs(with_pe - lab["right"]) > 0.01 * lab["right"]:
        for key, message in _LAB_5_4_MISTAKES.items():
            if abs(with_pe - lab[key]) <= 0.01 * lab[key]:
                raise Mismatch(f"`diff_with_pe` = {with_pe:.3g}: {message}")
        raise Mismatch(
            f"`diff_with_pe` = {with_pe:.3g}; the layer and input of the setup cell give "
            f"{lab['right']:.3g}: the L2 norm of run(x[:, perm] + pe)[:, inverse_perm] - "
            "run(x + pe). If you changed the setup cell, run it again as it was."
        )
    return (
        f"without PE the difference is below 1e-5 (round-off); with PE it is {with_pe:.2f}: a "
        "token now gets a different vector at a different position. Their ratio would mean "
        "nothing, since the first number is round-off."
    )


@functools.cache
def _lab_5_4() -> dict[str, float]:
    """The lab's ``diff_with_pe`` and what its typical mistakes give, for the lesson's setup cell.

    The setup seeds 0, builds the Q, K and V maps (``nn.Linear(32, 32)``, in that order), then
    draws ``x`` of shape (1, 10, 32); this rebuilds the same layer and input.
    """
    torch.manual_seed(0)  # only ever called by the check, which restores the learner's seed
    q, k, v = (nn.Linear(WIDTH_5_4, WIDTH_5_4) for _ in range(3))
    x = torch.randn(1, 10, WIDTH_5_4)
    perm, inverse = torch.tensor(PERM), torch.tensor(INVERSE)
    pe = sinusoidal_encoding(10, WIDTH_5_4)

    def run(inputs):
        with torch.no_grad():
            return scaled_dot_product_attention(q(inputs), k(inputs), v(inputs))[0]

    plain, moved = run(x + pe), run(x[:, perm] + pe)
    return {
        "right": (moved[:, inverse] - plain).norm().item(),
        "squared": (moved[:, inverse] - plain).pow(2).sum().item(),
        "one run": (moved[:, inverse] - run(x)).norm().item(),
        "not unshuffled": (moved - plain).norm().item(),
        "perm twice": (moved[:, perm] - plain).norm().item(),
    }


# 5.5 (lab L5.B) The vectorised table -----------------------------------------------------------


@exercise("5.5", "Lab L5.B: the table, vectorised")
def table(positional_encoding) -> str:
    """Angles: a (max_len, 1) column of positions times a (1, d_model/2) row of ω_i.

    ω_i = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model)).

    pe[:, 0::2] = torch.sin(angles); pe[:, 1::2] = torch.cos(angles).
    """
    for max_len, d_model in ((3, 8), (50, 16), (7, 64)):
        during = f"for max_len = {max_len}, d_model = {d_model}"
        got = as_tensor("table", call(positional_encoding, max_len, d_model, during=during))
        if tuple(got.shape) == (d_model, max_len):
            raise Mismatch(
                f"{during}: the table is transposed, shape (d_model, max_len) = "
                f"{tuple(got.shape)}: one row per position, (max_len, d_model)."
            )
        if tuple(got.shape) == (1, max_len, d_model):
            raise Mismatch(
                f"{during}: shape (1, max_len, d_model): return the table (max_len, d_model) "
                "without the batch axis."
            )
        name = f"positional_encoding({max_len}, {d_model})"
        pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
        expected, mistakes = positional_table(pos, d_model), positional_mistakes(pos, d_model)
        diagnose(name, got, expected, mistakes, atol=1e-4, during=during)
    return (
        "every column pair (2i, 2i+1) holds sin and cos of pos / 10000^(2i/d_model); for "
        f"d_model = 8 position 1 is {fmt(sinusoidal_encoding(2, 8)[1])}."
    )


# 5.6 (lab L5.C) Embedding scale ----------------------------------------------------------------

D_MODEL_5_6 = 512


@exercise("5.6", "Lab L5.C: embedding scale")
def scale(rms_pe, rms_default, rms_small) -> str:
    """RMS of a tensor t: t.pow(2).mean().sqrt().

    nn.Embedding starts at N(0, 1); for the small start use nn.init.normal_(weight,
    std=d_model ** -0.5).

    Multiply the embeddings by math.sqrt(d_model) before measuring.
    """
    root = math.sqrt(D_MODEL_5_6)
    pe, default, small = (
        _norm("rms_pe", rms_pe),
        _norm("rms_default", rms_default),
        _norm("rms_small", rms_small),
    )
    if abs(pe - 0.5) < 0.01:
        raise Mismatch(
            "`rms_pe` = 0.50 is the mean square; the RMS is its square root, √0.5 ≈ 0.707."
        )
    if abs(pe - math.sqrt(D_MODEL_5_6 / 2)) < 0.1:
        raise Mismatch(
            f"`rms_pe` = {pe:.1f} is the norm of one encoding, √(d_model/2) = 16; the RMS is the "
            "root of the mean of the squared entries."
        )
    if abs(pe - math.sqrt(0.5)) > 0.01:
        raise Mismatch(
            f"`rms_pe` = {pe:.3f}; every (sin, cos) pair has sin² + cos² = 1, so the mean square "
            "is 1/2 and the RMS √0.5 ≈ 0.707."
        )
    if abs(small - root) < 0.05 * root:
        raise Mismatch(
            f"`rms_small` = {small:.3g} is what N(0, 1) weights give; draw the small ones with "
            "standard deviation 1/√d_model = d_model ** -0.5."
        )
    if abs(small - 1 / root) < 0.05 / root:
        raise Mismatch(
            f"`rms_small` = {small:.3g} = 1/√d_model: either the ×√d_model is missing, or the "
            "weights were drawn with standard deviation 1/d_model (variance 1/d_model means "
            "standard deviation 1/√d_model)."
        )
    for name, value, std in (("rms_default", default, 1.0), ("rms_small", small, 1 / root)):
        _check_scaling(name, value, std)
    if abs(default - root) > 0.05 * root:
        raise Mismatch(
            f"`rms_default` = {default:.3g}; N(0, 1) entries times √512 have RMS about {root:.1f}."
        )
    if abs(small - 1.0) > 0.05:
        raise Mismatch(
            f"`rms_small` = {small:.3g}; entries with variance 1/d_model times √d_model have RMS "
            "about 1."
        )
    return (
        f"content {default:.1f} vs position {pe:.3f} with N(0, 1) weights: the content is "
        f"{default / pe:.0f}× larger; with std 1/√d_model it is {small:.2f} vs {pe:.3f}, the "
        "balance the scaling was meant for."
    )


def _check_scaling(name: str, value: float, std: float) -> None:
    """A Mismatch if ``value``, the RMS of embeddings of standard deviation ``std`` times
    √d_model, was not scaled, or scaled by d_model or 1/√d_model."""
    root = math.sqrt(D_MODEL_5_6)
    if abs(value - std) < 0.05 * std:
        raise Mismatch(
            f"`{name}` = {value:.3g} is the RMS before scaling: multiply the embeddings by "
            f"√d_model = {root:.1f}."
        )
    if abs(value - std * D_MODEL_5_6) < 0.05 * std * D_MODEL_5_6:
        raise Mismatch(
            f"`{name}` = {value:.3g}: you multiplied by d_model; the scale is √d_model = "
            f"{root:.1f}."
        )
    if abs(value - std / root) < 0.05 * std / root:
        raise Mismatch(f"`{name}` = {value:.3g}: you divided by √d_model; the paper multiplies.")
