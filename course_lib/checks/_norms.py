"""The typical mistakes of layer norm and the post-norm Add & Norm (lessons 6 and 8).

As in :mod:`._mistakes`: a function here returns the pairs ``(wrong_result, message)`` of one
family of mistakes for given inputs, in torch or numpy, in the order they are tried;
:func:`layer_norm_part_off` is an ``explain=`` for ``_tensors.diagnose``, naming the part of
the formula a wrong result gets wrong when it reproduces no typical mistake.
"""

import numpy as np

from ._mistakes import _say, _sqrt, _stats, _sum, _torch, layer_norm
from ._tensors import as_tensor, digits

# Layer norm -----------------------------------------------------------------------------------


def layer_norm_mistakes(x, gamma, beta, eps: float = 1e-5) -> list:
    """Every typical slip of LayerNorm(x) = γ·(x - μ)/√(σ² + ε) + β over the last axis: the
    eps argument ignored, the unbiased variance, ε missing or outside the root, the variance
    for the standard deviation, no centring or no division, γ and β ignored, swapped or one
    forgotten (:func:`_affine_mistakes`), statistics over another axis (:func:`_axis_mistakes`),
    then the rarer slips of :func:`_formula_slips`."""
    mean, var = _stats(x, -1)
    plain = (x - mean) / _sqrt(var + eps)
    mistakes = [] if eps == 1e-5 else [(layer_norm(x, gamma, beta, 1e-5), _eps_ignored(x, eps))]
    with np.errstate(all="ignore"):  # without ε a constant row gives 0/0, on purpose
        mistakes += [
            (gamma * (x - mean) / _sqrt(_stats(x, -1, ddof=1)[1] + eps) + beta, _say(x,
             "this uses the unbiased variance (dividing by n - 1, torch.var's default): "
             "LayerNorm uses the population variance, unbiased=False.",
             "that is the unbiased variance (ddof=1, divide by n - 1); layer norm uses "
             "the population variance, np.var's default (divide by n).")),
            (gamma * (x - mean) / _sqrt(var) + beta, _say(x,
             "ε is missing: divide by √(σ² + ε), which also keeps a constant row from "
             "giving 0/0.",
             "without ε, a constant row has variance 0 and gives 0/0 = NaN: divide by "
             "√(σ² + ε).")),
            (gamma * (x - mean) / (_sqrt(var) + eps) + beta, _say(x,
             "ε is added outside the square root: divide by √(σ² + ε), not by σ + ε.",
             "ε belongs inside the square root: (x - μ) / √(σ² + ε).")),
            (gamma * (x - mean) / (var + eps) + beta, _say(x,
             "this divides by the variance; divide by the standard deviation √(σ² + ε).",
             "you divided by the variance; divide by its square root, the standard "
             "deviation √(σ² + ε).")),
            (gamma * x / _sqrt(var + eps) + beta,
             "the mean was not subtracted: (x - μ) / √(σ² + ε)."),
            (gamma * (x - mean) + beta,
             "the rows are centred but not scaled: divide by √(σ² + ε)."),
        ]  # fmt: skip
        mistakes += _affine_mistakes(x, plain, gamma, beta)
        mistakes += _axis_mistakes(x, gamma, beta, eps)
    return mistakes + _formula_slips(x, gamma, beta, eps)


def _eps_ignored(x, eps: float) -> str:
    return _say(
        x,
        "the eps argument was ignored: use the eps passed in.",
        f"you used ε = 1e-5 when called with eps = {eps}: use the eps argument.",
    )


def _affine_mistakes(x, plain, gamma, beta) -> list:
    """γ and β ignored, swapped or one of them forgotten, around the normalised ``plain``."""
    return [
        (plain, _say(x, "γ and β were ignored: multiply by gamma, then add beta.",
                     "gamma and beta are ignored: return gamma * x̂ + beta.")),
        (gamma * plain, "β was ignored: add beta after scaling by gamma."),
        (plain + beta, "γ was ignored: multiply by gamma before adding beta."),
        (beta * plain + gamma, _say(x, "γ and β are swapped: gamma scales, beta shifts.",
         "gamma and beta are swapped: gamma scales, beta shifts, γ·x̂ + β.")),
    ]  # fmt: skip


def _axis_mistakes(x, gamma, beta, eps) -> list:
    """LayerNorm's statistics over an axis other than the last, or over everything."""

    def over(axis):
        mean, var = _stats(x, axis)
        return gamma * (x - mean) / _sqrt(var + eps) + beta

    if x.ndim < 2:  # one vector: no other axis to get wrong
        return []
    if not _torch(x):
        return [
            (over(0), "each column was normalised (axis=0): layer norm normalises each "
             "position's vector, along the last axis (axis=-1, keepdims=True)."),
            (over(None), "you used the mean and variance of the whole array: each row "
             "(position) gets its own, axis=-1."),
        ]  # fmt: skip
    batch, sequence, whole = [
        (over(0), "the statistics are over the batch axis (axis 0), as batch norm does; "
         "LayerNorm normalises each position over its own features, the last axis."),
        (over(-2), "the statistics are over the sequence axis; LayerNorm normalises each "
         "position over its features, the last axis (dim=-1)."),
        (over(None), "one mean and variance for the whole tensor: each position needs its "
         "own, over the last axis with keepdim=True."),
    ]  # fmt: skip
    return [batch, sequence, whole] if x.ndim > 2 else [batch, whole]


# Add & Norm, post-norm ------------------------------------------------------------------------


def add_and_norm_mistakes(x, sublayer_out, norm) -> list:
    """Every typical slip of the paper's post-norm Add & Norm, ``norm(x + sublayer_out)``
    (§3.1), where ``norm`` is the LayerNorm to use (a function, with its own γ and β).

    The residual or the sub-layer's output left out, the sum not normalised, and the norm
    applied to one of the two terms before adding the other.
    """
    s = sublayer_out
    return [
        (norm(s), _say(x,
         "the residual path is missing: add x to the sub-layer's output before the norm.",
         "the residual is missing: normalise x + sublayer_out, not sublayer_out alone.")),
        (norm(x), _say(x, "sublayer(x) was left out: norm(x + sublayer(x)).",
                       "sublayer_out was left out: LayerNorm(x + sublayer_out).")),
        (x + s, _say(x, "there is no norm: the sum x + sublayer(x) was returned as it is.",
                     "the sum is not normalised: LayerNorm(x + sublayer_out).")),
        (x + norm(s), _say(x,
         "the residual is added after the norm: post-norm adds first, then normalises: "
         "norm(x + sublayer(x)).",
         "you normalised the sub-layer's output and then added x; post-norm adds first, "
         "then normalises: LayerNorm(x + sublayer_out).")),
        (norm(x) + s, _say(x,
         "the norm was applied to x alone: normalise the sum, norm(x + sublayer(x)).",
         "you normalised x and then added sublayer_out; post-norm adds first: "
         "LayerNorm(x + sublayer_out).")),
    ]  # fmt: skip


# Rarer slips, and which part of the formula is off -------------------------------------------


def _formula_slips(x, gamma, beta, eps: float = 1e-5) -> list:
    """The sum for the mean, the standard deviation under the root, (μ - x), β subtracted, a
    division by γ, ε subtracted, the numerator missing, the fraction upside down, and the mean
    and the variance over different axes."""
    mean, var = _stats(x, -1)
    centred, root = x - mean, _sqrt(var + eps)
    keep = _say(x, "dim=-1, keepdim=True", "axis=-1, keepdims=True")
    upside_down = "the fraction is upside down: γ·(x - μ)/√(σ² + ε) + β."
    with np.errstate(all="ignore"):  # ε subtracted: a negative root; 1/(x - μ): 1/0
        mistakes = [
            (gamma * (x - _sum(x, -1)) / root + beta,
             f"you subtracted the sum of each row; subtract its mean, x.mean({keep})."),
            (gamma * centred / _sqrt(_sqrt(var) + eps) + beta, "the square root is taken of "
             f"the standard deviation, √(σ + ε): put the variance σ² = x.var({keep}) under "
             "the root."),
            (gamma * -centred / root + beta,
             "the sign is flipped: the formula has (x - μ), not (μ - x)."),
            (gamma * centred / root - beta, "β is subtracted: add it, γ·x̂ + β."),
            (centred / root / gamma + beta, "you divided by γ; multiply by it, γ·x̂ + β."),
            (gamma * centred / _sqrt(var - eps) + beta,
             "ε is subtracted under the root: divide by √(σ² + ε)."),
            (gamma / root + beta, "the numerator (x - μ) is missing: γ·(x - μ)/√(σ² + ε) + β."),
            (root / (gamma * centred) + beta, upside_down),
            (gamma / centred / root + beta, upside_down),
        ]  # fmt: skip
    for axis in range(x.ndim - 1):  # the mean and the variance over different axes
        other_mean, other_var = _stats(x, axis)
        both = f"both go over the last axis ({keep})."
        mistakes += [
            (gamma * (x - other_mean) / root + beta,
             f"the mean is taken over axis {axis}, the variance over the last one: {both}"),
            (gamma * centred / _sqrt(other_var + eps) + beta,
             f"the variance is taken over axis {axis}, the mean over the last one: {both}"),
        ]  # fmt: skip
    return mistakes


def layer_norm_part_off(got, x, gamma, beta, eps: float = 1e-5) -> str | None:
    """Which part of γ·(x - μ)/√(σ² + ε) + β a wrong result ``got`` gets wrong, when it
    matches no typical slip: the centring (x - μ), the division by √(σ² + ε), or γ and β.

    Each part is tested on its own, the others taken as right: if only the division is off,
    every row of (got - β)/γ is (x - μ) times one number, and so on. None if more than one
    part is off, or if ``got`` has NaN or another shape.
    """
    got, x, gamma, beta = (as_tensor("x", a).numpy() for a in (got, x, gamma, beta))
    if got.shape != x.shape or not np.isfinite(got).all() or (np.abs(gamma) < 1e-9).any():
        return None
    gamma, beta = np.broadcast_to(gamma, x.shape), np.broadcast_to(beta, x.shape)
    mean = x.mean(axis=-1, keepdims=True)
    root = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    centred, z = x - mean, (got - beta) / gamma  # z should be (x - μ)/√(σ² + ε)
    shift = got - (gamma * centred / root + beta)
    if np.ptp(shift) <= 1e-9 * max(1.0, np.abs(shift).max()):
        return (
            f"your output is {shift.flat[0]:+.4g} off at every entry, the same shift "
            "everywhere: β, or the mean μ subtracted, is off."
        )
    rows = [i for i in np.ndindex(x.shape[:-1]) if np.ptp(centred[i]) > 1e-6]

    def row(i) -> str:  # "row 2", "position (0, 2)", or "x" for one vector
        return "x" if not i else f"row {i[0]}" if len(i) == 1 else f"position {i}"

    def per_row(values, i) -> float | None:  # one number for the whole row i, or None
        v = values[i]
        return float(v.mean()) if np.ptp(v) <= 1e-6 * max(1.0, np.abs(v).max()) else None

    with np.errstate(all="ignore"):
        divisors = {i: per_row(centred / z, i) for i in rows}
    if rows and None not in divisors.values() and np.isfinite(list(divisors.values())).all():
        i = next((i for i in rows if abs(divisors[i] - root[i].item()) > 1e-6), rows[0])
        want, have = digits(root[i].item(), divisors[i])
        return (
            f"the centring and γ, β are right, but the division is off: you divide {row(i)} "
            f"by {have} where √(σ² + ε) = {want}, with σ² the population variance over the "
            "last axis."
        )
    subtracted = {i: per_row(x - z * root, i) for i in np.ndindex(x.shape[:-1])}
    if None not in subtracted.values():
        off = [i for i in subtracted if abs(subtracted[i] - mean[i].item()) > 1e-6]
        i = (off or list(subtracted))[0]
        want, have = digits(mean[i].item(), subtracted[i])
        return (
            f"the division and γ, β are right, but the centring is off: you subtract {have} "
            f"from {row(i)} where its mean μ over the last axis is {want}."
        )
    if _affine_per_feature(got, centred / root):
        return (
            "each row is normalised right, (x - μ)/√(σ² + ε), but γ and β are not applied as "
            "γ·x̂ + β, one scale and one shift per feature (the last axis)."
        )
    return None


def _affine_per_feature(got, hat) -> bool:
    """Whether ``got`` is one scale and one shift per feature (last axis) of ``hat``, x̂;
    it takes three rows or more to tell."""
    hat, got = hat.reshape(-1, hat.shape[-1]), got.reshape(-1, hat.shape[-1])
    if hat.shape[0] < 3:
        return False
    for j in range(hat.shape[-1]):
        design = np.stack([hat[:, j], np.ones(hat.shape[0])], axis=-1)
        fitted = np.linalg.lstsq(design, got[:, j], rcond=None)[0]
        if not np.allclose(design @ fitted, got[:, j], atol=1e-6):
            return False
    return True
