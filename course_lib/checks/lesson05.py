"""Checks for lesson 5, positional encoding (paper §3.5): PE(pos, 2i) = sin(pos·ω_i) and
PE(pos, 2i+1) = cos(pos·ω_i), with ω_i = 10000^(-2i/d_model) and positions from 0. The
frequencies' slips (``_frequencies``) serve 5.2, 5.3 and 5.5; the table's come from ``_mistakes``.
"""

import functools
import itertools
import math

import torch
from torch import nn

from ..attention import scaled_dot_product_attention
from ..positional import sinusoidal_encoding
from ._core import MISTAKE, Mismatch, call, exercise, multiple_choice
from ._mistakes import expect_tensor, positional_mistakes, positional_table, row_zero_off
from ._tensors import as_tensor, close, diagnose, fmt, one_number, pairs

# Shared by several exercises -------------------------------------------------------------------


def _omega(d_model: int, base: float = 10000.0, times: float = 1.0) -> torch.Tensor:
    """The frequencies ω_i = base^(-times·2i/d_model), one per (sin, cos) pair."""
    return base ** -(times * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


def _frequencies(d_model: int) -> dict:
    """The typical slips of the frequencies ω_i = 10000^(-2i/d_model)."""
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    return {
        "the exponent is i/d_model where the formula has 2i/d_model (i counts the (sin, cos) "
        "pairs).": _omega(d_model, times=0.5),
        "the exponent is 4i/d_model, or 2i/(d_model/2): torch.arange(0, d_model, 2) already "
        "gives 2i, the column index 2i: divide it by d_model, undoubled.": _omega(d_model, times=2),
        "the exponent is (2i+1)/d_model, from torch.arange(1, d_model, 2): the pairs' exponents "
        "are 2i/d_model, from torch.arange(0, d_model, 2).": 10000.0 ** -((two_i + 1) / d_model),
        "the exponent is 2i, not divided by d_model: 10000^(2i/d_model), so that the wavelengths "
        "grow from 2π to 10000·2π along the pairs.": 10000.0**-two_i,
        "the base is 1000; the paper uses 10000.": _omega(d_model, base=1000.0),
        "the frequencies are 10000^(+2i/d_model): you multiplied pos by 10000^(2i/d_model); "
        "divide by it.": _omega(d_model, times=-1),
        "the exp form used log10(10000) = 4: exp(-2i·ln(10000)/d_model) needs the natural log, "
        "math.log(10000).": _omega(d_model, base=math.e, times=4),
        "the angles were taken in degrees; math.sin, torch.sin and torch.cos work in "
        "radians.": _omega(d_model) * math.pi / 180,
        "the exponential is missing: ω_i = torch.exp(-2i·ln(10000)/d_model), not the exponent "
        "alone.": -two_i * math.log(10000.0) / d_model,
        "ω_i = 1 for every pair, so every block turns by k radians, every pair by pos: "
        "ω_i = 10000^(-2i/d_model) falls along the pairs.": torch.ones_like(two_i),
    }


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

DIMS_5_2 = torch.tensor([0, 1, 128, 129])  # pairs i = 0 and 64, whose divisors are 1 and 10


def _pe_5(omega=None, pos=5.0, even=torch.sin, odd=torch.cos) -> torch.Tensor:
    """PE(pos, d) for 5.2's dimensions d, from ``omega``, one frequency per dimension."""
    omega = _omega(512)[DIMS_5_2 // 2] if omega is None else omega
    return torch.where(DIMS_5_2 % 2 == 0, even(pos * omega), odd(pos * omega))


@exercise("5.2", "Apply: PE(5, ·) for pairs 0 and 64")
def apply(pe_5_0, pe_5_1, pe_5_128, pe_5_129) -> str:
    """Dimensions 2i and 2i+1 form pair i: dimensions 0 and 1 are pair 0, dimensions 128 and
    129 are pair 64.

    Pair 0's divisor is 10000^(0/512) = 1; pair 64's is 10000^(128/512) = 10000^(1/4) = 10.

    PE(5, 0) = sin(5), PE(5, 1) = cos(5), PE(5, 128) = sin(0.5), PE(5, 129) = cos(0.5), in
    radians: math.sin and math.cos.
    """
    answers = {"pe_5_0": pe_5_0, "pe_5_1": pe_5_1, "pe_5_128": pe_5_128, "pe_5_129": pe_5_129}
    got, pe = torch.stack([one_number(n, a) for n, a in answers.items()]), _pe_5()
    dim = int(DIMS_5_2[(got - pe).abs().argmax()])  # the number furthest off
    f, i = ("cos", "sin")[dim % 2 == 0], dim // 2
    during = f"dimension {dim} is the {f} of pair i = {i}, {f}(5 / 10000^({2 * i}/512)) = "
    during += f"{f}({5 / 10000 ** (i / 256):g})"
    diagnose(f"[{', '.join(answers)}]", got, pe, _mistakes_5_2(), typed=True, during=during)
    return (
        f"PE(5, 0) = sin 5 = {pe[0]:.4f} and PE(5, 1) = cos 5 = {pe[1]:.4f}, against 0 and 1 at "
        "position 0: the fastest pair has turned 5 radians, about 0.80 of a circle. Pair 64 "
        f"divides by 10: PE(5, 128) = sin 0.5 = {pe[2]:.4f}, PE(5, 129) = cos 0.5 = {pe[3]:.4f}, "
        "a twelfth of a circle."
    )


@functools.cache
def _mistakes_5_2() -> list:
    """The numbers rounded too coarsely; each slip in all four numbers, or in one pair only;
    another pair's sin and cos in place of a pair's."""
    pe, dims = _pe_5(), DIMS_5_2.double()
    slips = {
        "sin and cos are swapped: the even dimensions (0, 128) hold sin, the odd ones "
        "cos.": _pe_5(even=torch.cos, odd=torch.sin),
        "these are the values at position 6: positions count from 0, so pos = 5 is "
        "row 5.": _pe_5(pos=6.0),
        "these are the values at position 4; the exercise asks for pos = 5.": _pe_5(pos=4.0),
        "these are the values at position 0, [0, 1, 0, 1]; the exercise asks for "
        "position 5.": _pe_5(pos=0.0),
        "each dimension used its own index in the exponent: a cos dimension shares the angle of "
        "the sin before it.": _pe_5(10000.0 ** -(dims / 512)),
        "the dimension was used as i: dimensions 2i and 2i+1 form pair i (dimension 1 is in pair "
        "0, dimensions 128 and 129 in pair i = 64).": _pe_5(10000.0 ** -(2 * dims / 512)),
        "the odd dimensions 1 and 129 are cos, not sin.": _pe_5(odd=torch.sin),
        "the even dimensions 0 and 128 are sin, not cos.": _pe_5(even=torch.cos),
    }  # fmt: skip
    slips |= {message: _pe_5(w[DIMS_5_2 // 2]) for message, w in _frequencies(512).items()}
    coarse = "your numbers are rounded (or cut) too coarsely: round them to 2 decimals (not cut)."
    cuts = (pe.mul(10).round() / 10, pe.mul(10).trunc() / 10, pe.mul(100).trunc() / 100)
    which = itertools.product((True, False), repeat=4)
    found = [(torch.where(torch.tensor(w), c, pe), coarse) for w in which for c in cuts]
    for kept in ([], [2, 3], [0, 1]):  # both pairs wrong, or only pair 0, or only pair 64
        kept = torch.isin(torch.arange(4), torch.tensor(kept, dtype=torch.long))
        found += [(torch.where(kept, pe, wrong), said) for said, wrong in slips.items()]
    for start, i in ((0, 0), (2, 64)):  # another pair's angle
        pair = f"dimensions {2 * i} and {2 * i + 1} are pair i = {i}, angle 5 / 10000^({2 * i}/512)"
        for other in set(range(-2, 257)) - {i}:
            angle, wrong = 5 * 10000 ** (-other / 256), pe.clone()
            wrong[start : start + 2] = torch.tensor([math.sin(angle), math.cos(angle)])
            found.append((wrong, f"these are the sin and cos of pair i = {other}: {pair}."))
    return found


# 5.3 Extend: the block-diagonal R_k with PE(pos + k) = R_k · PE(pos) ---------------------------


@exercise("5.3", "Extend: the shift is a rotation")
def shift(shift_matrix) -> str:
    """For one pair, [sin ω(p+k), cos ω(p+k)] = R·[sin ωp, cos ωp]: expand with sin(a+b) and
    cos(a+b).

    R = [[cos ωk, sin ωk], [-sin ωk, cos ωk]] for each ω_i = 10000^(-2i/d_model).

    torch.block_diag(*blocks) puts the d_model/2 blocks on the diagonal.
    """
    for k, d_model in ((1, 4), (3, 8), (5, 64), (-2, 16)):
        during, name = f"for k = {k}, d_model = {d_model}", f"shift_matrix({k}, {d_model})"
        result = call(shift_matrix, k, d_model, during=during)
        got = as_tensor(name, expect_tensor("shift_matrix", result))
        omega, block = _omega(d_model), "[[cos ω_i k, sin ω_i k], [-sin ω_i k, cos ω_i k]]"
        turned = functools.partial(_rotations, k * omega)  # each block laid out as given
        expected = turned()
        wrong = {
            "this is the transpose of R_k, which moves PE(pos) to PE(pos - k): the textbook "
            "[[cos, -sin], [sin, cos]] turns (cos, sin) pairs; for (sin, cos) pairs, "
            "sin(a + b) = sin a·cos b + cos a·sin b makes the first row "
            "[cos ωk, sin ωk].": expected.T,
            "this is the identity: R_k must turn each pair by the angle ω_i·k.": torch.eye(d_model),
            "sin and cos are swapped in each block: the cosines go on the diagonal, "
            f"{block}.": turned(lambda c, s: [[s, c], [-c, s]]),
            "both sines in a block have the same sign; a rotation has opposite ones: "
            f"{block}.": turned(lambda c, s: [[c, s], [s, c]]),
            "both sines in a block are negative; a rotation has opposite ones: "
            f"{block}.": turned(lambda c, s: [[c, -s], [-s, c]]),
            "R_k turns each pair by ω_i, whatever k: it should turn by ω_i·k.": _rotations(omega),
            "the sines are sin ω_i, without k: each block turns by ω_i·k, "
            f"{block}.": turned(sines=omega.sin()),
            "the cosines are cos ω_i, without k: each block turns by ω_i·k, "
            f"{block}.": _rotations(omega, sines=(k * omega).sin()),
            "every entry of a block is a sine: cos ω_i k goes on the diagonal, "
            f"{block}.": turned(lambda c, s: [[s, s], [-s, s]]),
            "the blocks are in reverse order: block i, in rows 2i and 2i+1, turns by ω_i·k, the "
            "fastest (ω_0 = 1) first.": _rotations(k * omega.flip(0)),
        }  # fmt: skip
        wrong |= {message: _rotations(k * w) for message, w in _frequencies(d_model).items()}
        during += _off(got, expected, k)
        diagnose(name, got, expected, wrong, atol=1e-5, during=during)
    pe = sinusoidal_encoding(40, 64).double()
    error = (pe[3:] - pe[:-3] @ _rotations(3 * _omega(64)).T).abs().max().item()
    # The float32 table's round-off, whose last digits may differ between processors
    error = "below 1e-6" if error < 1e-6 else f"{error:.0e}"
    return (
        "R_k is block-diagonal, one 2 x 2 rotation by ω_i·k per pair, and it depends on k only: "
        f"the same matrix maps every PE(pos) to PE(pos + 3) (largest error {error}, float32 "
        "round-off)."
    )


def _rotations(angle, layout=lambda c, s: [[c, s], [-s, c]], sines=None) -> torch.Tensor:
    """Block-diagonal, one 2 x 2 block ``layout(cos, sin)`` per pair's angle ω_i·k."""
    sines = angle.sin() if sines is None else sines
    blocks = (layout(c, s) for c, s in zip(angle.cos().tolist(), sines.tolist(), strict=True))
    return torch.block_diag(*(torch.tensor(block, dtype=torch.float64) for block in blocks))


def _off(got, expected, k) -> str:
    """Where ``got`` is off R_k: its number of blocks, an entry outside them, or a block."""
    n, d_model = (got.shape or [0])[0], expected.shape[0]
    if got.shape != expected.shape:
        return (
            f", {n // 2} block(s) of 2 x 2: R_k has one block per (sin, cos) pair, d_model/2 = "
            f"{d_model // 2} of them (i runs over torch.arange(d_model // 2))"
        ) * (got.shape == (n, n) and n % 2 == 0)
    if close(got, expected, atol=1e-5):
        return ""
    r, c = divmod(int((got - expected).abs().argmax()), n)
    if r // 2 != c // 2:
        return (
            f", entry ({r}, {c}), outside the 2 x 2 blocks on the diagonal, is "
            f"{float(got[r, c]):.4f}: R_k is block-diagonal, every pair turns on its own"
        )
    i, omega = r // 2, 10000 ** (-(r // 2) / (n / 2))

    def shown(m) -> str:  # block i on one line, [[0.540, 0.841], [-0.841, 0.540]]
        rows = m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2].tolist()
        return "[" + ", ".join("[" + ", ".join(f"{v:.3f}" for v in r) + "]" for r in rows) + "]"

    return (
        f", block {i} (rows {2 * i} and {2 * i + 1}) is {shown(got)}; R_k's, {shown(expected)}, "
        f"turns by ω_{i}·k = {omega * k:.4f}, with ω_{i} = 10000^(-{2 * i}/{n}) = {omega:.4g}"
    )


# 5.4 (lab L5.A) Permutation equivariance, with and without PE ----------------------------------

PERM, INVERSE = [0, 3, 7, 1, 5, 9, 2, 6, 4, 8], [0, 3, 6, 1, 8, 4, 7, 2, 9, 5]


@exercise("5.4", "Lab L5.A: permutation equivariance")
def equivariance(inverse_perm, diff_without_pe, diff_with_pe) -> str:
    """The inverse undoes the shuffle: for each original position, it says where that token
    went. Sorting perm gives exactly that order.

    Without PE, the shuffled run un-shuffled should equal the plain run up to round-off; with
    PE, each run adds pe after any shuffling, so the shuffled tokens get their new positions.

    inverse_perm = torch.argsort(perm); without PE compare run(x[:, perm])[:, inverse_perm]
    with run(x); with PE, run(x[:, perm] + pe)[:, inverse_perm] with run(x + pe).
    """
    inverse, back = as_tensor("inverse_perm", inverse_perm).flatten(), "sends each position back"
    wrong = {f"this is the permutation itself; the inverse {back}, argsort(perm).": PERM}
    wrong[f"this is the identity; the inverse {back}, argsort(perm)."] = range(10)
    diagnose("inverse_perm", inverse, INVERSE, pairs(wrong), during=f"inverse[perm[i]] = i, {PERM}")
    (round_off, without_slips), (right, with_slips) = _lab_5_4()
    norms = {"diff_without_pe": diff_without_pe, "diff_with_pe": diff_with_pe}
    for (name, value), lab in zip(norms.items(), (round_off, right), strict=True):
        if as_tensor(name, value).numel() != 1 or (norm := float(one_number(name, value))) < 0:
            message = f"`{name}` should be one number (an L2 norm), and a norm is never negative: "
            message += "take the `.norm()` of the difference, not a sum, a difference or a tensor "
            raise Mismatch(message + "of them.", MISTAKE)
        if norm == 0.0 != lab:
            message = f"`{name}` is exactly 0: nothing was compared, or a run with itself "
            message += "(an empty slice? the input un-shuffled before the run?). Compare the "
            message += "shuffled run, un-shuffled, with the plain one: that leaves float32 "
            raise Mismatch(message + "round-off, tiny but not 0.", MISTAKE)
        norms[name] = norm
    during = "without PE the layer is equivariant, so run(x[:, perm])[:, inverse_perm] - run(x) "
    during += "is float32 round-off, below 1e-5 (un-shuffle the output with inverse_perm before "
    during += "comparing)"
    without, with_pe = norms.values()
    diagnose("diff_without_pe", without, round_off, without_slips, atol=1e-5, during=during)
    during = "`diff_with_pe` is the L2 norm of run(x[:, perm] + pe)[:, inverse_perm] - run(x + pe) "
    during += "for the setup cell's layer and input (run that cell again if you changed it)"
    diagnose("diff_with_pe", with_pe, right, with_slips, typed=True, during=during)
    return (
        f"without PE the difference is below 1e-5 (round-off); with PE it is {with_pe:.2f}: a "
        "token now gets a different vector at a different position. Their ratio would mean "
        "nothing, since the first number is round-off."
    )


@functools.cache
def _lab_5_4() -> tuple:
    """The lab's differences without and with PE, each with its slips. The setup cell seeds 0,
    builds the Q, K and V maps (``nn.Linear(32, 32)``, in that order), then draws ``x`` of
    shape (1, 10, 32); this rebuilds the same layer and input."""
    torch.manual_seed(0)  # only ever called by the check, which restores the learner's seed
    q, k, v = (nn.Linear(32, 32) for _ in range(3))
    x, pe, perm, inverse = torch.randn(1, 10, 32), sinusoidal_encoding(10, 32), PERM, INVERSE

    def run(inputs):
        with torch.no_grad():
            return scaled_dot_product_attention(q(inputs), k(inputs), v(inputs))[0]

    def compared(shuffled, plain, slips) -> tuple:  # the difference, and the slips' norms
        back = shuffled[:, inverse]  # the shuffled run's output, un-shuffled
        slips |= {
            "the shuffled run's output was not un-shuffled: index it with inverse_perm before "
            "comparing.": shuffled - plain,
            "the output was indexed with perm again; un-shuffle it with inverse_perm.":
                shuffled[:, perm] - plain,
            "the two runs were added: the difference is their subtraction.": back + plain,
            "this is the norm of the shuffled run's output alone: subtract the unshuffled "
            "run.": back,
        }  # fmt: skip
        norms = {message: float(t.norm()) for message, t in slips.items()}
        return (back - plain).norm().item(), pairs(norms)

    without, moved = compared(run(x[:, perm]), run(x), {}), run(x[:, perm] + pe)[:, inverse]
    with_pe = run(x + pe)
    slips = {
        "the encodings moved with their tokens. Add PE *after* shuffling, for the new positions: "
        "x[:, perm] + pe, not (x + pe)[:, perm].": torch.tensor(without[0]),
        "this is the squared norm: take its square root, `.norm()`.": (moved - with_pe).norm() ** 2,
        "`pe` was added to only one of the two runs, the shuffled one: add it to x for the "
        "unshuffled run as well, run(x + pe).": moved - run(x),
        "`pe` was added to only one of the two runs, the unshuffled one: add it to the shuffled "
        "input as well, run(x[:, perm] + pe).": run(x[:, perm])[:, inverse] - run(x + pe),
        "the unshuffled run got pe alone: its input is x + pe.": moved - run(pe),
    }
    return without, compared(run(x[:, perm] + pe), run(x + pe), slips)


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
        got = expect_tensor("positional_encoding", result)
        if not (got.is_floating_point() or got.dtype == torch.bool):
            message = f"{during}: the table has dtype {got.dtype}, so every sine and cosine was "
            message += "cut to a whole number: create it as floats, torch.zeros(max_len, d_model)."
            raise Mismatch(message, MISTAKE)
        pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
        got, expected = as_tensor("table", got), positional_table(pos, d_model)
        during += _table_off(got, expected, d_model)
        name = f"positional_encoding({max_len}, {d_model})"
        read = {} if got.dim() > 1 else None  # a wrong shape read as a slip, unless 1-D
        wrong, shape = _table_mistakes(pos, d_model), "(max_len, d_model)"
        diagnose(name, got, expected, wrong, during=during, shapes=read, letters=shape)
    return (
        "every column pair (2i, 2i+1) holds sin and cos of pos / 10000^(2i/d_model); for "
        f"d_model = 8 position 1 is {fmt(sinusoidal_encoding(2, 8)[1])}."
    )


def _sizes_tip(error: Exception) -> str | None:
    """A tip for a table whose pieces do not fit: the shapes of the angles and the slices."""
    if "must match" in str(error) or "expanded size" in str(error):
        return (
            "Tip: the angles, (max_len, d_model/2), are a column of positions (max_len, 1) times "
            "a row of d_model/2 frequencies; they fill pe[:, 0::2] and pe[:, 1::2]."
        )
    return None


def _table_mistakes(pos, d_model) -> list:
    """The shared slips of the table, then lesson 5's own: a column family left at 0 or
    overwritten, cosines everywhere, the positions left out, and the frequencies' slips."""
    a = pos * _omega(d_model)  # the angles, (max_len, d_model/2)

    def table(even, odd):
        return torch.stack([even, odd], -1).flatten(-2)

    def sin_cos(omega, positions=pos):
        return table((positions * omega).sin(), (positions * omega).cos())

    wrong = {
        "the odd columns are still 0: fill pe[:, 1::2] with the cosines.": table(a.sin(), 0 * a),
        "the even columns are still 0: fill pe[:, 0::2] with the sines.": table(0 * a, a.cos()),
        "every column is a cosine: the even columns 2i hold sin.": table(a.cos(), a.cos()),
        "the cosines went into the even columns, over the sines, and the odd columns are still 0: "
        "pe[:, 1::2] = torch.cos(angles).": table(a.cos(), 0 * a),
        "every row is the same: the angles are ω_i without the position; multiply the column of "
        "positions by the row of ω_i.": sin_cos(_omega(d_model), torch.ones_like(pos)),
    } | {message: sin_cos(omega) for message, omega in _frequencies(d_model).items()}
    return positional_mistakes(pos, d_model) + pairs(wrong)


def _table_off(got, expected, d_model) -> str:
    """Where a table is off, for the message: the row of position 0, or the worst column."""
    if got.shape != expected.shape or close(got, expected):
        return ""
    if row := row_zero_off(got, d_model):
        return f", {row}"
    column = int((got - expected).abs().amax(dim=0).argmax())
    i, f, omega = column // 2, ("cos", "sin")[column % 2 == 0], _omega(d_model)[column // 2]
    return f", column {column} (pair i = {i}) should be {f}(pos · {omega:.4g}), with ω_{i} = " + (
        f"10000^(-{2 * i}/{d_model})"
    )


# 5.6 (lab L5.C) Embedding scale ----------------------------------------------------------------

D_MODEL_5_6, N_TOKENS_5_6 = 512, 1000  # the lab's nn.Embedding(n_tokens, d_model)


@exercise("5.6", "Lab L5.C: embedding scale", uses=("course_lib.positional.sinusoidal_encoding",))
def scale(rms_pe, rms_default, rms_small) -> str:
    """Each RMS is one number for the whole tensor: square every entry, average, take the root.
    Measure the embeddings after multiplying them by √d_model.

    nn.Embedding starts at N(0, 1); for the small start, draw the weights with standard
    deviation 1/√d_model.

    RMS: t.pow(2).mean().sqrt(); the small start: torch.randn(n_tokens, d_model) *
    d_model ** -0.5; the scaling: weight * math.sqrt(d_model).
    """
    root, table = math.sqrt(D_MODEL_5_6), sinusoidal_encoding(100, D_MODEL_5_6).double()
    answers = {"rms_pe": rms_pe, "rms_default": rms_default, "rms_small": rms_small}
    pe, default, small = (float(one_number(n, v, finite=False)) for n, v in answers.items())
    wrong = _rms_slips("rms_pe", pe, math.sqrt(0.5), table.numel()) | {
        "`rms_pe` = 0.50 is the mean square; the RMS is its square root, √0.5 ≈ 0.707.": 0.5,
        f"`rms_pe` = {pe:.1f} is the norm of one encoding, √(d_model/2) = 16; the RMS is the root "
        "of the mean of the squared entries.": 16.0,
        f"`rms_pe` = {pe:.3f} is the root of the mean of the entries to the power 1: square them, "
        "t.pow(2).mean().sqrt().": table.mean().sqrt().item(),
    }
    during = "every (sin, cos) pair has sin² + cos² = 1, so the mean square is 1/2"
    diagnose("rms_pe", pe, math.sqrt(0.5), wrong, typed=True, during=during)
    # A measured RMS of N normal draws is within 4 standard errors, rms/√(2N), of its value: the
    # lab accepts a measurement as well as the value worked out and typed, and says so.
    error = 4 / math.sqrt(2 * N_TOKENS_5_6 * D_MODEL_5_6)
    for name, value, std, start in (
        ("rms_default", default, 1.0, f"N(0, 1) weights give an RMS of about {root:.1f}"),
        ("rms_small", small, 1 / root, f"the small start has 1/√d_model ≈ {1 / root:.4f}"),
    ):
        wrong = _rms_slips(name, value, std * root, N_TOKENS_5_6 * D_MODEL_5_6)
        wrong |= _scaling_slips(name, value, std)
        read = [v for v in (std * root, *wrong.values()) if abs(value - v) <= error * abs(v)]
        during = f"`{name}` = {value:.3g} = {value / root:.3g} × √d_model, from weights of "
        during += f"standard deviation about {value / root:.3g}; {start}"
        diagnose(name, (read or [value])[0], std * root, wrong, typed=True, during=during)
    return (
        f"content {default:.1f} vs position {pe:.3f} with N(0, 1) weights: the content is "
        f"{default / pe:.0f}× larger; with std 1/√d_model it is {small:.2f} vs {pe:.3f}, the "
        "balance the scaling was meant for."
    )


def _rms_slips(name, value, rms, count) -> dict:
    """An RMS taken as the root of the sum, of a tensor of zeros, or of a negative mean."""
    return {
        f"`{name}` = {value:.4g} is the root of the sum of the squares, the norm of the tensor; "
        "the RMS is the root of their mean, t.pow(2).mean().sqrt().": rms * math.sqrt(count),
        f"`{name}` = 0: every entry of the tensor measured is 0.": 0.0,
        f"`{name}` is nan, the square root of a negative number: square the entries before "
        "taking their mean.": math.nan,
    }


def _scaling_slips(name: str, value: float, std: float) -> dict:
    """Embeddings of standard deviation ``std`` left unscaled, or scaled by d_model or
    1/√d_model; the small ones drawn as N(0, 1), or with standard deviation 1/d_model."""
    root, said = math.sqrt(D_MODEL_5_6), f"`{name}` = {value:.3g}"
    small = {
        f"{said} is what N(0, 1) weights give; draw the small ones with standard deviation "
        "1/√d_model = d_model ** -0.5.": root,
        f"{said} = 1/√d_model: the ×√d_model is missing, or the weights were drawn with standard "
        "deviation 1/d_model (variance 1/d_model is standard deviation 1/√d_model).": 1 / root,
        f"{said}: the weights were drawn with standard deviation √d_model, d_model ** 0.5; the "
        "small start is d_model ** -0.5.": D_MODEL_5_6,
    }
    return (small if std < 1 else {}) | {
        f"{said} is the RMS before scaling: multiply the embeddings by √d_model = {root:.1f}.": std,
        f"{said}: you multiplied by d_model; the scale is √d_model.": std * D_MODEL_5_6,
        f"{said}: you divided by √d_model; the paper multiplies.": std / root,
    }
