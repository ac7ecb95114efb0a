"""Checks for lesson 5, positional encoding (paper §3.5).

PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)),
with positions counted from 0 and i the index of a (sin, cos) pair. Each check compares the
learner's answer with the reference and, when they differ, with the results of the typical
mistakes (sin and cos swapped, 2i/d_model written i/d_model, positions from 1, base 1000,
[sin | cos] halves, a transposed table, degrees, ...) so that the message names the mistake;
the table's come from ``_mistakes``, beside this lesson's own. When none matches, the message
says which part of the formula is off: the angle a (sin, cos) pair turns by (5.2, 5.5), a
block of R_k that is no rotation or turns by the wrong angle (5.3), the row of position 0.

5.2 asks for pair 0, where every frequency formula gives the same result, and for pair 64,
where they differ. Its numbers must be the exact values, or those rounded (or cut) to at
least 3 decimals: a number merely near them comes from another computation.
"""

import functools
import math

import torch
from torch import nn

from ..attention import scaled_dot_product_attention
from ..positional import sinusoidal_encoding
from ._core import DIFFERENCE, MISTAKE, SHAPE, Mismatch, call, exercise, multiple_choice
from ._mistakes import expect_returned, expect_tensor, positional_mistakes, positional_table
from ._tensors import (
    as_tensor,
    close,
    diagnose,
    difference,
    digits,
    fmt,
    match,
    one_number,
    typed_close,
)

# Shared by several exercises -------------------------------------------------------------------


def _norm(name, value) -> float:
    """One number >= 0 (a norm or an RMS), not a tensor of differences."""
    shape = tuple(as_tensor(name, value).shape)
    if len(shape) > 0 and shape != (1,):  # a tensor of differences: .norm() forgotten
        raise Mismatch(
            f"`{name}` should be one number (an L2 norm); got shape {shape}: take the `.norm()` "
            "of the difference.",
            MISTAKE,
        )
    x = float(one_number(name, value))
    if x < 0:
        raise Mismatch(
            f"`{name}` = {x:.3g}, but a norm is never negative: take the `.norm()` of the "
            "difference (or of the tensor), not a sum or a plain difference.",
            MISTAKE,
        )
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


# 5.2 Apply: PE(5, 0), PE(5, 1), PE(5, 128) and PE(5, 129) with d_model = 512 ---------------------

D_MODEL_5_2 = 512
DIMS_5_2 = (0, 1, 128, 129)  # pair i = 0, whose divisor is 1, and pair i = 64, whose is 10


def _pe_5(dim, *, pos=5, exponent=None, base=10000.0, angle=None, trig=None) -> float:
    """PE(pos, dim) at d_model = 512, or what a typical mistake makes of it: another
    ``exponent(dim)`` than 2i/d_model, another base, ``angle(pos, divisor)`` than pos/divisor,
    ``trig(dim)`` another choice of sin and cos."""
    power = 2 * (dim // 2) / D_MODEL_5_2 if exponent is None else exponent(dim)
    divisor = math.inf if power * math.log10(base) > 300 else base**power  # 10000^128
    theta = pos / divisor if angle is None else angle(pos, divisor)
    f = (math.sin if dim % 2 == 0 else math.cos) if trig is None else trig(dim)
    return f(theta)


def _pe_5_values(**mistake) -> list[float]:
    return [_pe_5(dim, **mistake) for dim in DIMS_5_2]


_PE_5 = _pe_5_values()

# Each typical mistake: what it gives for the four dimensions, and its message.
_PE_5_MISTAKES = [
    (
        _pe_5_values(trig=lambda dim: math.cos if dim % 2 == 0 else math.sin),
        "sin and cos are swapped: the even dimensions (0, 128) hold sin, the odd ones (1, 129) "
        "hold cos.",
    ),
    (
        _pe_5_values(angle=lambda pos, divisor: math.radians(pos / divisor)),
        "the angles were taken in degrees (sin 5°, ...): the angle is 5 radians for pair 0 and "
        "0.5 radians for pair 64 (math.sin and torch.sin work in radians).",
    ),
    (
        _pe_5_values(pos=6),
        "these are the values at position 6: positions count from 0, so use pos = 5 (row 5 of "
        "a table that starts at row 0).",
    ),
    (
        _pe_5_values(pos=4),
        "these are the values at position 4: the exercise asks for pos = 5, and positions "
        "count from 0.",
    ),
    (
        _pe_5_values(pos=0),
        "these are the values at position 0, [0, 1, 0, 1]; the exercise asks for position 5.",
    ),
    (
        _pe_5_values(exponent=lambda dim: (dim // 2) / D_MODEL_5_2),
        "the exponent is i/d_model where the formula has 2i/d_model: pair i = 64 divides by "
        "10000^(128/512) = 10, so its angle is 5/10 = 0.5.",
    ),
    (
        _pe_5_values(exponent=lambda dim: dim / D_MODEL_5_2),
        "each dimension used its own index in the exponent: a cos dimension shares the angle "
        "of the sin before it, so PE(5, 129) also divides by 10000^(128/512) = 10.",
    ),
    (
        _pe_5_values(exponent=lambda dim: 2 * dim / D_MODEL_5_2),
        "the dimension was used as i: dimensions 2i and 2i+1 form pair i, so dimensions 128 "
        "and 129 are pair i = 64, divisor 10000^(2·64/512) = 10 (and dimension 1 is in pair 0).",
    ),
    (
        _pe_5_values(exponent=lambda dim: 4 * (dim // 2) / D_MODEL_5_2),
        "the exponent is 2i/(d_model/2): it is 2i/d_model, so pair 64 divides by "
        "10000^(128/512) = 10.",
    ),
    (
        _pe_5_values(base=1000.0),
        "the base is 1000; the paper uses 10000, so pair 64 divides by 10000^(1/4) = 10.",
    ),
    (
        _pe_5_values(angle=lambda pos, divisor: pos * divisor),
        "you multiplied pos by 10000^(2i/d_model); divide by it: pair 64's angle is 5/10 = 0.5, "
        "not 5·10.",
    ),
    (
        _pe_5_values(exponent=lambda dim: 2 * (dim // 2) * math.log10(math.e) / D_MODEL_5_2),
        "the exp form used log10(10000) = 4: exp(-2i·ln(10000)/d_model) needs the natural "
        "log, math.log(10000).",
    ),
    (
        _pe_5_values(exponent=lambda dim: 2 * (dim // 2)),
        "the exponent is 2i, without the division by d_model: pair 64 divides by "
        "10000^(2·64/512) = 10, not 10000^128.",
    ),
    (_pe_5_values(trig=lambda dim: math.sin), "the odd dimensions 1 and 129 are cos, not sin."),
    (_pe_5_values(trig=lambda dim: math.cos), "the even dimensions 0 and 128 are sin, not cos."),
]


@exercise("5.2", "Apply: PE(5, ·) for pairs 0 and 64")
def apply(pe_5_0, pe_5_1, pe_5_128, pe_5_129) -> str:
    """Dimensions 2i and 2i+1 form pair i: dimensions 0 and 1 are pair 0, dimensions 128 and
    129 are pair 64.

    Pair 0's divisor is 10000^(0/512) = 1; pair 64's is 10000^(128/512) = 10000^(1/4) = 10.

    PE(5, 0) = sin(5), PE(5, 1) = cos(5), PE(5, 128) = sin(0.5), PE(5, 129) = cos(0.5), in
    radians: math.sin and math.cos.
    """
    names = ("pe_5_0", "pe_5_1", "pe_5_128", "pe_5_129")
    answers = (pe_5_0, pe_5_1, pe_5_128, pe_5_129)
    got = torch.stack([one_number(n, a) for n, a in zip(names, answers, strict=True)])
    expected = torch.tensor(_PE_5, dtype=torch.float64)
    if all(_exact(float(g), e) for g, e in zip(got, _PE_5, strict=True)):
        return (
            f"PE(5, 0) = sin 5 = {_PE_5[0]:.4f} and PE(5, 1) = cos 5 = {_PE_5[1]:.4f}, against 0 "
            "and 1 at position 0: the fastest pair has turned 5 radians, about 0.80 of a circle. "
            f"Pair 64 divides by 10: PE(5, 128) = sin 0.5 = {_PE_5[2]:.4f}, PE(5, 129) = "
            f"cos 0.5 = {_PE_5[3]:.4f}, a twelfth of a circle."
        )
    rounded = _rounded(got, expected)
    if rounded:
        raise Mismatch(rounded, MISTAKE)
    for part in (slice(0, 4), slice(0, 2), slice(2, 4)):  # all four numbers, or one pair
        for wrong, message in _PE_5_MISTAKES:
            if typed_close(got[part], torch.tensor(wrong[part])) and not typed_close(
                got[part], expected[part]
            ):
                raise Mismatch(message, MISTAKE)
    for start in (0, 2):
        message = _pair_angle(got, expected, names, start)
        if message:
            raise Mismatch(message, MISTAKE)
    wrong = [not _exact(float(g), e) for g, e in zip(got, _PE_5, strict=True)]
    first = wrong.index(True)
    dim = DIMS_5_2[first]
    i, f = dim // 2, "sin" if dim % 2 == 0 else "cos"
    angle = 5 / 10000 ** (2 * i / D_MODEL_5_2)
    want, have = digits(_PE_5[first], float(got[first]))
    raise Mismatch(
        f"`{names[first]}` = {have}; dimension {dim} is the {f} of pair i = {i}: "
        f"PE(5, {dim}) = {f}(5 / 10000^({2 * i}/512)) = {f}({angle:g}) = {want}.",
        DIFFERENCE,
    )


def _pair_angle(got, expected, names, start) -> str | None:
    """For a pair of answers (sin, cos) that is wrong but is the sine and cosine of one angle:
    which pair that angle belongs to, or that it is no pair's angle."""
    sin, cos = float(got[start]), float(got[start + 1])
    if all(
        _exact(float(g), float(e))
        for g, e in zip(got[start : start + 2], expected[start : start + 2], strict=True)
    ):
        return None
    if abs(sin * sin + cos * cos - 1) > 2e-3:
        return None
    theta = math.atan2(sin, cos) % (2 * math.pi)
    dims, i = DIMS_5_2[start : start + 2], DIMS_5_2[start] // 2
    pair = f"`{names[start]}` and `{names[start + 1]}`"
    right = f"dimensions {dims[0]} and {dims[1]} are pair i = {i}, whose angle is " + (
        f"5 / 10000^({2 * i}/512) = {5 / 10000 ** (2 * i / D_MODEL_5_2):g}"
    )
    for other in range(-2, D_MODEL_5_2 // 2 + 1):
        angle = 5 / 10000 ** (2 * other / D_MODEL_5_2)
        if other != i and abs((theta - angle + math.pi) % (2 * math.pi) - math.pi) < 1e-3:
            return f"{pair} are the sin and cos of pair i = {other}, angle {angle:.4f}: {right}."
    want, have = digits(5 / 10000 ** (2 * i / D_MODEL_5_2), theta)
    return (
        f"{pair} are the sin and cos of the angle {have} (or that plus a multiple of 2π), "
        f"not {want}: {right}. Check the divisor 10000^(2i/d_model)."
    )


def _exact(got: float, expected: float) -> bool:
    """``got`` agrees with ``expected`` under the course's rounding policy for typed numbers
    (2 decimals or 3 significant figures, whichever is looser)."""
    return typed_close(got, expected)


def _rounded(got, expected) -> str | None:
    """A message if ``got`` is ``expected`` rounded or cut to 1 decimal, or cut to 2."""
    scale = 10
    cuts = (torch.round(expected * scale) / scale, torch.trunc(expected * scale) / scale)
    cuts += (torch.trunc(expected * 100) / 100,)
    if any(_each_close(got, expected, cut) for cut in cuts):
        return (
            f"your numbers are rounded (or cut) too coarsely, {fmt(got)}: round them to 2 "
            "decimals (not cut), or leave them unrounded."
        )
    return None


def _each_close(got, expected, cut) -> bool:
    """Every number is right (within 5e-4) or equal to its rounded value, and one is rounded."""
    right = torch.tensor([_exact(float(g), float(e)) for g, e in zip(got, expected, strict=True)])
    cut_here = (got - cut).abs() <= 1e-9
    return bool((right | cut_here).all() and (cut_here & ~right).any())


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
        result = call(shift_matrix, k, d_model, during=during)
        result = expect_tensor("shift_matrix", expect_returned("shift_matrix", result))
        got = as_tensor(name, result)
        if tuple(got.shape) != (d_model, d_model):
            _wrong_size(got, d_model, name, during)
        expected = _shift_matrix(k, d_model)
        if not close(got, expected, atol=1e-5):
            message = match(got, _shift_mistakes(k, d_model, expected))
            if message:
                raise Mismatch(f"{during}: {message}", MISTAKE)
            message, kind = _blocks_diagnosis(got, k, d_model, expected)
            raise Mismatch(f"{during}: {message}", kind)
    pe = sinusoidal_encoding(40, 64).double()
    error = (pe[3:] - pe[:-3] @ _shift_matrix(3, 64).T).abs().max().item()
    # The float32 table's round-off, whose last digits may differ between processors
    error = "below 1e-6" if error < 1e-6 else f"{error:.0e}"
    return (
        "R_k is block-diagonal, one 2 x 2 rotation by ω_i·k per pair, and it depends on k only: "
        f"the same matrix maps every PE(pos) to PE(pos + 3) (largest error {error}, float32 "
        "round-off)."
    )


def _wrong_size(got, d_model, name, during) -> None:
    """A Mismatch for a matrix of the wrong shape: the number of blocks, if it is square."""
    shape = tuple(got.shape)
    said = f"{during}: `{name}` should have shape (d_model, d_model) = {(d_model, d_model)}"
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] % 2 == 0:
        raise Mismatch(
            f"{said}; got {shape}, {shape[0] // 2} block(s) of 2 x 2. R_k has one block per "
            f"(sin, cos) pair, d_model/2 = {d_model // 2} of them: i runs over "
            "torch.arange(d_model // 2).",
            MISTAKE,
        )
    raise Mismatch(f"{said}; got {shape}", SHAPE)


def _blocks(c, s, pattern="rotation"):
    """Block-diagonal, one 2 x 2 block per pair from the cosines ``c`` and sines ``s``."""
    make = {
        "rotation": lambda ci, si: [[ci, si], [-si, ci]],
        "swapped": lambda ci, si: [[si, ci], [-ci, si]],
        "signs": lambda ci, si: [[ci, si], [si, ci]],
        "minus signs": lambda ci, si: [[ci, -si], [-si, ci]],
    }[pattern]
    return torch.block_diag(
        *[torch.tensor(make(ci, si), dtype=torch.float64) for ci, si in zip(c, s, strict=True)]
    )


def _rotations(k, omega, pattern="rotation"):
    """Block-diagonal, one [[cos ω_i k, sin ω_i k], [-sin ω_i k, cos ω_i k]] per frequency."""
    return _blocks(torch.cos(omega * k).tolist(), torch.sin(omega * k).tolist(), pattern)


def _omega(d_model):
    """The paper's frequencies ω_i = 10000^(-2i/d_model), one per (sin, cos) pair."""
    return 10000.0 ** -_exponents(d_model)


def _shift_matrix(k, d_model):
    """The reference R_k: rotations by ω_i·k with ω_i = 10000^(-2i/d_model)."""
    return _rotations(k, _omega(d_model))


def _shift_mistakes(k, d_model, expected):
    i = _pair_index(d_model)
    omega = _omega(d_model)
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
            _rotations(k, omega, "swapped"),
            "sin and cos are swapped in each block: the block is [[cos ω_i k, sin ω_i k], "
            "[-sin ω_i k, cos ω_i k]], the cosines on the diagonal.",
        ),
        (
            _rotations(k, omega, "signs"),
            "both sines in a block have the same sign; a rotation has opposite ones: "
            "[[cos ω_i k, sin ω_i k], [-sin ω_i k, cos ω_i k]].",
        ),
        (
            _rotations(k, omega, "minus signs"),
            "both sines in a block are negative; a rotation has opposite ones: "
            "[[cos ω_i k, sin ω_i k], [-sin ω_i k, cos ω_i k]].",
        ),
        (
            _rotations(k, 10000.0 ** -(i / d_model)),
            "the frequencies use i/d_model; the formula has 2i/d_model (i counts the pairs).",
        ),
        (
            _rotations(k, 10000.0 ** -(4 * i / d_model)),
            "the frequencies use the column index 2i where the formula has i: ω_i = "
            "10000^(-2i/d_model) for pair i, that is columns 2i and 2i+1.",
        ),
        (
            _rotations(k, 1000.0 ** -_exponents(d_model)),
            "the frequencies use base 1000; the paper uses 10000.",
        ),
        (
            _rotations(k, 10000.0 ** _exponents(d_model)),
            "the frequencies are 10000^(+2i/d_model): ω_i = 10000^(-2i/d_model), a negative "
            "exponent, so the frequencies fall from 1 along the pairs.",
        ),
        (
            _rotations(k, torch.exp(-4 * _exponents(d_model))),
            "the exp form used log10(10000) = 4: exp(-2i·ln(10000)/d_model) needs the natural "
            "log, math.log(10000).",
        ),
        (
            _rotations(k, torch.ones_like(i)),
            "every block turns by k radians: pair i turns by ω_i·k with ω_i = 10000^(-2i/d_model).",
        ),
        (
            _rotations(1, omega),
            "R_k turns each pair by ω_i, whatever k: it should turn by ω_i·k, so that R_k moves "
            "k positions.",
        ),
        (
            _rotations(k, omega * math.pi / 180),
            "the angles ω_i·k were taken in degrees: torch.sin and torch.cos work in radians.",
        ),
        (
            _rotations(k, omega.flip(0)),
            "the blocks are in reverse order: block i, in rows and columns 2i and 2i+1, turns by "
            "ω_i·k, the fastest pair (ω_0 = 1) first.",
        ),
    ]


def _matrix(block) -> str:
    """A 2 x 2 block on one line, ``[[0.540, 0.841], [-0.841, 0.540]]``."""
    return (
        "["
        + ", ".join("[" + ", ".join(f"{v:.3f}" for v in row) + "]" for row in block.tolist())
        + "]"
    )


def _near(got, want) -> bool:
    return all(abs(g - w) < 1e-5 for g, w in zip(got, want, strict=True))


def _pair_index(d_model: int) -> torch.Tensor:
    """i = 0, 1, ..., d_model/2 - 1: the index of each (sin, cos) pair."""
    return torch.arange(d_model // 2, dtype=torch.float64)


def _exponents(d_model: int) -> torch.Tensor:
    """The paper's exponents 2i/d_model, one per pair: ω_i = 10000^(-2i/d_model)."""
    return 2 * _pair_index(d_model) / d_model


def _blocks_diagnosis(got, k, d_model, expected) -> tuple[str, str]:
    """What is wrong with a matrix that matches no typical mistake, in terms of R_k's parts:
    entries outside the blocks, a block that is no rotation, or the angle a block turns by."""
    mask = torch.block_diag(*[torch.ones(2, 2)] * (d_model // 2)).bool()
    outside = got.masked_fill(mask, 0).abs()
    if outside.max() > 1e-5:
        r, c = divmod(int(outside.argmax()), d_model)
        return (
            f"R_k is block-diagonal, but entry ({r}, {c}), outside the 2 x 2 blocks on the "
            f"diagonal, is {float(got[r, c]):.4f}: every pair turns on its own, so the rest is 0.",
            MISTAKE,
        )
    omega = _omega(d_model)
    for i in range(d_model // 2):
        block, want = (
            got[2 * i : 2 * i + 2, 2 * i : 2 * i + 2],
            expected[2 * i : 2 * i + 2, 2 * i : 2 * i + 2],
        )
        if close(block, want, atol=1e-5):
            continue
        (a, b), (c, d) = block.tolist()
        (wa, wb), (wc, wd) = want.tolist()
        rotation = abs(a - d) < 1e-5 and abs(b + c) < 1e-5 and abs(a * a + b * b - 1) < 1e-4
        cosines, sines = _near((a, d), (wa, wd)), _near((b, c), (wb, wc))
        if cosines and not sines:
            return (
                f"block {i} (rows {2 * i} and {2 * i + 1}) is {_matrix(block)}: its cosines "
                f"are right, its sines are not. The block is [[cos ω_{i}k, sin ω_{i}k], "
                f"[-sin ω_{i}k, cos ω_{i}k]] = {_matrix(want)}, the sin of the same angle.",
                MISTAKE,
            )
        if sines and not cosines:
            return (
                f"block {i} (rows {2 * i} and {2 * i + 1}) is {_matrix(block)}: its sines are "
                f"right, its cosines on the diagonal are not. The block is "
                f"[[cos ω_{i}k, sin ω_{i}k], [-sin ω_{i}k, cos ω_{i}k]] = {_matrix(want)}, the "
                "cos of the same angle.",
                MISTAKE,
            )
        if sorted(round(v, 5) for v in (a, b, c, d)) == sorted(
            round(v, 5) for v in (wa, wb, wc, wd)
        ):
            return (
                f"block {i} (rows {2 * i} and {2 * i + 1}) is {_matrix(block)}: the right "
                f"numbers in the wrong places. The block is [[cos ω_{i}k, sin ω_{i}k], "
                f"[-sin ω_{i}k, cos ω_{i}k]] = {_matrix(want)}.",
                MISTAKE,
            )
        if rotation:
            turned = math.atan2(b, a)
            return (
                f"block {i} (rows {2 * i} and {2 * i + 1}) is a rotation, by {turned:.4f} radians; "
                f"it should turn by ω_{i}·k = {float(omega[i]) * k:.4f} (mod 2π), with "
                f"ω_{i} = 10000^(-{2 * i}/{d_model}) = {float(omega[i]):.4g}: check the "
                "frequencies.",
                MISTAKE,
            )
        return (
            f"block {i} (rows {2 * i} and {2 * i + 1}) is {_matrix(block)}; R_k's block is "
            f"[[cos ω_{i}k, sin ω_{i}k], [-sin ω_{i}k, cos ω_{i}k]] = {_matrix(want)}.",
            DIFFERENCE,
        )
    return difference("shift_matrix", got, expected), DIFFERENCE


# 5.4 (lab L5.A) Permutation equivariance, with and without PE ----------------------------------

PERM = [0, 3, 7, 1, 5, 9, 2, 6, 4, 8]
INVERSE = [0, 3, 6, 1, 8, 4, 7, 2, 9, 5]
WIDTH_5_4 = 32

_SUBTRACTED = "pe was subtracted from one run's input: add it to both, x[:, perm] + pe and x + pe."
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
    "added": "the two runs were added: the difference is their subtraction, then `.norm()`.",
    "one run alone": (
        "this is the norm of the shuffled run's output alone: subtract the unshuffled run "
        "run(x + pe) before taking the norm."
    ),
    "pe subtracted": _SUBTRACTED,
    "pe subtracted, plain": _SUBTRACTED,
    "x dropped": "the unshuffled run got pe alone: its input is x + pe.",
}


@exercise("5.4", "Lab L5.A: permutation equivariance")
def equivariance(inverse_perm, diff_without_pe, diff_with_pe) -> str:
    """The inverse undoes the shuffle: for each original position, it says where that token
    went. Sorting perm gives exactly that order.

    Without PE, the shuffled run un-shuffled should equal the plain run up to round-off; with
    PE, each run adds pe after any shuffling, so the shuffled tokens get their new positions.

    inverse_perm = torch.argsort(perm); without PE compare run(x[:, perm])[:, inverse_perm]
    with run(x); with PE, run(x[:, perm] + pe)[:, inverse_perm] with run(x + pe).
    """
    inverse = as_tensor("inverse_perm", inverse_perm).flatten()
    if inverse.tolist() == PERM:
        raise Mismatch(
            "`inverse_perm` is the permutation itself: the inverse sends each position back, "
            "inverse[perm[i]] = i (torch.argsort(perm)).",
            MISTAKE,
        )
    if inverse.tolist() == list(range(len(PERM))):
        raise Mismatch(
            "`inverse_perm` is the identity, 0 to 9 in order: the inverse sends each position "
            "back, inverse[perm[i]] = i (torch.argsort(perm)).",
            MISTAKE,
        )
    if inverse.tolist() != INVERSE:
        raise Mismatch(
            f"`inverse_perm` should satisfy inverse[perm[i]] = i for perm = {PERM}; got "
            f"{fmt(inverse)}.",
            DIFFERENCE,
        )
    without = _norm("diff_without_pe", diff_without_pe)
    with_pe = _norm("diff_with_pe", diff_with_pe)
    lab = _lab_5_4()
    if without == 0.0 and lab["without"] != 0.0:
        raise Mismatch(
            "`diff_without_pe` is exactly 0: nothing was compared, or a run with itself (an "
            "empty slice? the input un-shuffled before the run?). Run the shuffled input, "
            "un-shuffle the output, and compare: run(x[:, perm])[:, inverse_perm] - run(x) "
            "leaves float32 round-off, tiny but not 0.",
            MISTAKE,
        )
    if without > 1e-5:
        for key, message in _LAB_5_4_WITHOUT.items():
            if abs(without - lab[key]) <= 0.01 * lab[key]:
                raise Mismatch(f"`diff_without_pe` = {without:.3g}: {message}", MISTAKE)
        raise Mismatch(
            f"`diff_without_pe` = {without:.3g}, but without positions the layer is equivariant, "
            "so the difference should be float32 round-off (below 1e-5). Did you un-shuffle the "
            "output with inverse_perm before comparing it with the unshuffled run?",
            MISTAKE,
        )
    if with_pe == 0.0:
        raise Mismatch(
            "`diff_with_pe` is exactly 0: nothing was compared, or a run with itself (an empty "
            "slice?). Compare run(x[:, perm] + pe)[:, inverse_perm] with run(x + pe).",
            MISTAKE,
        )
    if with_pe < 1e-3:
        raise Mismatch(
            f"`diff_with_pe` = {with_pe:.3g}: the encodings moved with their tokens. Add PE "
            "*after* shuffling, for the new positions: x[:, perm] + pe, not (x + pe)[:, perm].",
            MISTAKE,
        )
    if not typed_close(with_pe, lab["right"]):
        for key, message in _LAB_5_4_MISTAKES.items():
            if abs(with_pe - lab[key]) <= 0.01 * lab[key]:
                raise Mismatch(f"`diff_with_pe` = {with_pe:.3g}: {message}", MISTAKE)
        raise Mismatch(
            f"`diff_with_pe` = {with_pe:.3g}; the layer and input of the setup cell give "
            f"{lab['right']:.3g}: the L2 norm of run(x[:, perm] + pe)[:, inverse_perm] - "
            "run(x + pe). If you changed the setup cell, run it again as it was.",
            DIFFERENCE,
        )
    return (
        f"without PE the difference is below 1e-5 (round-off); with PE it is {with_pe:.2f}: a "
        "token now gets a different vector at a different position. Their ratio would mean "
        "nothing, since the first number is round-off."
    )


_LAB_5_4_WITHOUT = {
    "without, not unshuffled": (
        "the output of the shuffled run was not un-shuffled: index it with inverse_perm before "
        "comparing, run(x[:, perm])[:, inverse_perm] - run(x)."
    ),
    "without, perm twice": (
        "the output was indexed with perm again; un-shuffle it with inverse_perm."
    ),
    "without, added": "the two runs were added: the difference is their subtraction.",
    "without, one run alone": (
        "this is the norm of one run's output: subtract the unshuffled run run(x) first."
    ),
}


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
    shuffled = run(x[:, perm])
    return {
        "right": (moved[:, inverse] - plain).norm().item(),
        "squared": (moved[:, inverse] - plain).pow(2).sum().item(),
        "one run": (moved[:, inverse] - run(x)).norm().item(),
        "not unshuffled": (moved - plain).norm().item(),
        "perm twice": (moved[:, perm] - plain).norm().item(),
        "added": (moved[:, inverse] + plain).norm().item(),
        "one run alone": moved[:, inverse].norm().item(),
        "pe subtracted": (run(x[:, perm] - pe)[:, inverse] - plain).norm().item(),
        "pe subtracted, plain": (moved[:, inverse] - run(x - pe)).norm().item(),
        "x dropped": (moved[:, inverse] - run(pe)).norm().item(),
        "without": (shuffled[:, inverse] - run(x)).norm().item(),
        "without, not unshuffled": (shuffled - run(x)).norm().item(),
        "without, perm twice": (shuffled[:, perm] - run(x)).norm().item(),
        "without, added": (shuffled[:, inverse] + run(x)).norm().item(),
        "without, one run alone": shuffled[:, inverse].norm().item(),
    }


# 5.5 (lab L5.B) The vectorised table -----------------------------------------------------------


@exercise("5.5", "Lab L5.B: the table, vectorised", loops=False)
def table(positional_encoding) -> str:
    """Angles: a (max_len, 1) column of positions times a (1, d_model/2) row of ω_i.

    ω_i = 10000^(−2i/d_model) is the exponential of the even indices 2i times −ln(10000)/d_model;
    the sines fill the even columns and the cosines the odd ones.

    ω_i = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model)), then
    pe[:, 0::2] = torch.sin(angles); pe[:, 1::2] = torch.cos(angles).
    """
    for max_len, d_model in ((3, 8), (50, 16), (7, 64)):
        during = f"for max_len = {max_len}, d_model = {d_model}"
        result = call(positional_encoding, max_len, d_model, during=during, tip=_sizes_tip)
        result = expect_tensor(
            "positional_encoding", expect_returned("positional_encoding", result)
        )
        if not (result.is_floating_point() or result.dtype == torch.bool):
            raise Mismatch(
                f"{during}: the table has dtype {result.dtype}, so every sine and cosine was "
                "cut to a whole number: create it as floats, torch.zeros(max_len, d_model).",
                MISTAKE,
            )
        got = as_tensor("table", result)
        if tuple(got.shape) == (d_model, max_len):
            raise Mismatch(
                f"{during}: the table is transposed, shape (d_model, max_len) = "
                f"{tuple(got.shape)}: one row per position, (max_len, d_model).",
                MISTAKE,
            )
        if tuple(got.shape) == (1, max_len, d_model):
            raise Mismatch(
                f"{during}: shape (1, max_len, d_model): return the table (max_len, d_model) "
                "without the batch axis.",
                MISTAKE,
            )
        name = f"positional_encoding({max_len}, {d_model})"
        pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
        expected = positional_table(pos, d_model)
        mistakes = positional_mistakes(pos, d_model) + _table_mistakes(pos, d_model)
        try:
            diagnose(name, got, expected, mistakes, atol=1e-4, during=during)
        except Mismatch as e:
            if e.kind != DIFFERENCE or torch.isnan(got).any():
                raise
            message, kind = _table_diagnosis(got, expected, d_model)
            raise Mismatch(f"{during}: {message}", kind) from None
    return (
        "every column pair (2i, 2i+1) holds sin and cos of pos / 10000^(2i/d_model); for "
        f"d_model = 8 position 1 is {fmt(sinusoidal_encoding(2, 8)[1])}."
    )


def _sizes_tip(error: Exception) -> str | None:
    """A tip for a table whose pieces do not fit: the shapes of the angles and the slices."""
    text = str(error)
    if "must match" in text or "expanded size" in text:
        return (
            "Tip: the angles have shape (max_len, d_model/2), a column of max_len positions "
            "(max_len, 1) times a row of d_model/2 frequencies (torch.arange(0, d_model, 2)), "
            "and fill pe[:, 0::2] and pe[:, 1::2], each (max_len, d_model/2)."
        )
    return None


def _table_mistakes(pos, d_model) -> list:
    """Lesson 5's own slips of the table, beside the shared ``positional_mistakes``: a column
    family left at 0, cosines everywhere, and the frequencies' exponent miswritten."""
    two_i = 2 * _pair_index(d_model)[None]
    angle = pos / 10000.0 ** (two_i / d_model)

    def table(even, odd):
        return torch.stack([even, odd], -1).flatten(-2)

    def sin_cos(theta):
        return table(theta.sin(), theta.cos())

    zero = torch.zeros_like(angle)
    return [
        (
            table(angle.sin(), zero),
            "the odd columns are still 0: fill pe[:, 1::2] with the cosines.",
        ),
        (
            table(zero, angle.cos()),
            "the even columns are still 0: fill pe[:, 0::2] with the sines.",
        ),
        (
            table(angle.cos(), angle.cos()),
            "every column is a cosine: the even columns 2i hold sin.",
        ),
        (
            sin_cos(pos / 10000.0**two_i),
            "the exponent is 2i, not divided by d_model: 10000^(2i/d_model), so that the "
            "wavelengths grow from 2π to 10000·2π across the row.",
        ),
        (
            sin_cos(pos / 10000.0 ** (2 * two_i / d_model)),
            "the exponent is 4i/d_model, or 2i/(d_model/2): it is 2i/d_model. "
            "torch.arange(0, d_model, 2) already gives 2i: divide it by d_model, undoubled.",
        ),
        (
            sin_cos(pos / 10000.0 ** ((two_i + 1) / d_model)),
            "the exponent is (2i+1)/d_model, from torch.arange(1, d_model, 2): the pairs' "
            "exponents are 2i/d_model, from torch.arange(0, d_model, 2).",
        ),
        (
            sin_cos(pos * torch.exp(-two_i * math.log10(10000.0) / d_model)),
            "the exp form used log10(10000) = 4: exp(-2i·ln(10000)/d_model) needs the natural "
            "log, math.log(10000).",
        ),
    ]


def _table_diagnosis(got, expected, d_model) -> tuple[str, str]:
    """Where a table that matches no typical mistake goes wrong, in terms of the formula: the
    row of position 0, or the frequency of the first pair that is off."""
    if not close(got[0], expected[0], atol=1e-4):
        return (
            f"the row of position 0 is {fmt(got[0, :6])}{' ...' if d_model > 6 else ''}; it "
            "should be [0, 1, 0, 1, ...]: sin 0 = 0 in the even columns, cos 0 = 1 in the odd "
            "ones. Check which columns get sin and cos, and that the positions start at 0.",
            MISTAKE,
        )
    column = int(((got - expected).abs().amax(dim=0) > 1e-4).int().argmax())
    i = column // 2
    sin, cos = got[:, 2 * i], got[:, 2 * i + 1]
    omega = 10000.0 ** (-2 * i / d_model)
    if torch.allclose(sin**2 + cos**2, torch.ones_like(sin), atol=1e-3):
        turned = math.atan2(float(sin[1]), float(cos[1]))
        return (
            f"columns {2 * i} and {2 * i + 1} (pair i = {i}) hold a sine and cosine, but they "
            f"turn by {turned:.4f} radians from position 0 to 1; pair {i}'s frequency is "
            f"ω_{i} = 10000^(-{2 * i}/{d_model}) = {omega:.4g}: check the exponent and the base.",
            MISTAKE,
        )
    return (
        f"column {column} (pair i = {i}) should be {'sin' if column % 2 == 0 else 'cos'}(pos · "
        f"{omega:.4g}), with ω_{i} = 10000^(-{2 * i}/{d_model}): "
        + difference(f"column {column}", got[:, column], expected[:, column]),
        DIFFERENCE,
    )


# 5.6 (lab L5.C) Embedding scale ----------------------------------------------------------------

D_MODEL_5_6 = 512


@exercise("5.6", "Lab L5.C: embedding scale", uses=("course_lib.positional.sinusoidal_encoding",))
def scale(rms_pe, rms_default, rms_small) -> str:
    """Each RMS is one number for the whole tensor: square every entry, average, take the root.
    Measure the embeddings after multiplying them by √d_model.

    nn.Embedding starts at N(0, 1); for the small start, draw the weights with standard
    deviation 1/√d_model.

    RMS: t.pow(2).mean().sqrt(); the small start: torch.randn(n_tokens, d_model) *
    d_model ** -0.5; the scaling: weight * math.sqrt(d_model).
    """
    root = math.sqrt(D_MODEL_5_6)
    pe, default, small = (
        _rms("rms_pe", rms_pe),
        _rms("rms_default", rms_default),
        _rms("rms_small", rms_small),
    )
    _rms_slips("rms_pe", pe, math.sqrt(0.5), 100 * D_MODEL_5_6)
    if abs(pe - 0.5) < 0.01:
        raise Mismatch(
            "`rms_pe` = 0.50 is the mean square; the RMS is its square root, √0.5 ≈ 0.707.",
            MISTAKE,
        )
    if abs(pe - math.sqrt(D_MODEL_5_6 / 2)) < 0.1:
        raise Mismatch(
            f"`rms_pe` = {pe:.1f} is the norm of one encoding, √(d_model/2) = 16; the RMS is the "
            "root of the mean of the squared entries.",
            MISTAKE,
        )
    unsquared = _unsquared_pe()
    for power, value in unsquared.items():
        if abs(pe - value) < 0.01:
            raise Mismatch(
                f"`rms_pe` = {pe:.3f} is the root of the mean of the entries to the power "
                f"{power}: square them, t.pow(2).mean().sqrt().",
                MISTAKE,
            )
    if not typed_close(pe, math.sqrt(0.5)):
        raise Mismatch(
            f"`rms_pe` = {pe:.3f}; every (sin, cos) pair has sin² + cos² = 1, so the mean square "
            "is 1/2 and the RMS √0.5 ≈ 0.707.",
            DIFFERENCE,
        )
    if abs(small - root) < 0.05 * root:
        raise Mismatch(
            f"`rms_small` = {small:.3g} is what N(0, 1) weights give; draw the small ones with "
            "standard deviation 1/√d_model = d_model ** -0.5.",
            MISTAKE,
        )
    if abs(small - 1 / root) < 0.05 / root:
        raise Mismatch(
            f"`rms_small` = {small:.3g} = 1/√d_model: either the ×√d_model is missing, or the "
            "weights were drawn with standard deviation 1/d_model (variance 1/d_model means "
            "standard deviation 1/√d_model).",
            MISTAKE,
        )
    for name, value, std in (("rms_default", default, 1.0), ("rms_small", small, 1 / root)):
        _rms_slips(name, value, std * root, N_TOKENS_5_6 * D_MODEL_5_6)
        _check_scaling(name, value, std)
    if not _measured(default, root) and default > 0:
        raise Mismatch(
            f"`rms_default` = {default:.3g} = {default / root:.3g} × √d_model: N(0, 1) weights "
            f"times √d_model have RMS about {root:.1f}. Is the factor √d_model = "
            f"math.sqrt(d_model), and the weights nn.Embedding's own?",
            MISTAKE,
        )
    if not _measured(small, 1.0) and small > 0:
        raise Mismatch(
            f"`rms_small` = {small:.3g}: after ×√d_model, that means weights of standard "
            f"deviation about {small / root:.3g}; the small start has 1/√d_model ≈ "
            f"{1 / root:.4f}, torch.randn(...) * d_model ** -0.5.",
            MISTAKE,
        )
    return (
        f"content {default:.1f} vs position {pe:.3f} with N(0, 1) weights: the content is "
        f"{default / pe:.0f}× larger; with std 1/√d_model it is {small:.2f} vs {pe:.3f}, the "
        "balance the scaling was meant for."
    )


N_TOKENS_5_6 = 1000  # the lab's nn.Embedding(n_tokens, d_model)


def _measured(value: float, rms: float) -> bool:
    """``value`` is the RMS ``rms`` of N_TOKENS_5_6 x D_MODEL_5_6 normal draws, as measured
    (within 4 standard errors of the sampling, rms/√(2N)) or as worked out and typed (within
    the course's rounding policy): the lab accepts both, and says so."""
    sampling = 4 * rms / math.sqrt(2 * N_TOKENS_5_6 * D_MODEL_5_6)
    return abs(value - rms) <= sampling or typed_close(value, rms)


def _rms(name, value) -> float:
    """One RMS: a number >= 0; NaN, the root of a negative mean, is named."""
    number = float(one_number(name, value, finite=False))
    if math.isnan(number):
        raise Mismatch(
            f"`{name}` is nan, the square root of a negative number: square the entries before "
            "taking their mean, t.pow(2).mean().sqrt().",
            MISTAKE,
        )
    return _norm(name, value)


def _rms_slips(name, value, rms, count) -> None:
    """A Mismatch for an RMS taken as the root of the sum (the norm), or zero."""
    if abs(value - rms * math.sqrt(count)) < 0.05 * rms * math.sqrt(count):
        raise Mismatch(
            f"`{name}` = {value:.4g} is the root of the sum of the squares, the norm of the "
            "whole tensor; the RMS is the root of their mean, t.pow(2).mean().sqrt().",
            MISTAKE,
        )
    if value == 0:
        raise Mismatch(f"`{name}` = 0: every entry of the tensor measured is 0.", MISTAKE)


@functools.cache
def _unsquared_pe() -> dict[int, float]:
    """√mean(PE^p) for powers p other than 2: the RMS of the table without the square."""
    table = sinusoidal_encoding(100, D_MODEL_5_6).double()
    return {p: table.pow(p).mean().sqrt().item() for p in (1, 3)}


def _check_scaling(name: str, value: float, std: float) -> None:
    """A Mismatch if ``value``, the RMS of embeddings of standard deviation ``std`` times
    √d_model, was not scaled, or scaled by d_model or 1/√d_model."""
    root = math.sqrt(D_MODEL_5_6)
    if abs(value - std) < 0.05 * std:
        raise Mismatch(
            f"`{name}` = {value:.3g} is the RMS before scaling: multiply the embeddings by "
            f"√d_model = {root:.1f}.",
            MISTAKE,
        )
    if abs(value - std * D_MODEL_5_6) < 0.05 * std * D_MODEL_5_6:
        raise Mismatch(
            f"`{name}` = {value:.3g}: you multiplied by d_model; the scale is √d_model = "
            f"{root:.1f}.",
            MISTAKE,
        )
    if abs(value - std / root) < 0.05 * std / root:
        raise Mismatch(
            f"`{name}` = {value:.3g}: you divided by √d_model; the paper multiplies.", MISTAKE
        )
