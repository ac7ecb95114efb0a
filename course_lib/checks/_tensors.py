"""Comparing a learner's numbers with the expected ones, and saying how they differ."""

import math

import numpy as np
import torch

from ._core import DIFFERENCE, MISTAKE, SHAPE, TYPE, Mismatch

# The course's one policy for answer types, stated in lesson 1 and in every lesson's "How to
# use this notebook": a value may be a number, a list, a NumPy array or a PyTorch tensor.
NUMBERS = "a number, a list, a NumPy array or a PyTorch tensor"


def as_tensor(name: str, x) -> torch.Tensor:
    """The answer as a float64 tensor; tensors, numpy arrays, lists and numbers are accepted."""
    if type(x).__module__ == "torch.return_types":  # (values, indices) from tensor.max(dim=...)
        raise Mismatch(
            f"`{name}` holds both the values and the indices of .max(dim=...): take .values",
            MISTAKE,
        )
    if isinstance(x, str):
        raise Mismatch(_text_number(name, x), TYPE)
    if isinstance(x, torch.Tensor):  # from a GPU too: the CPU first (mps has no float64)
        return x.detach().cpu().to(torch.float64)
    try:
        values = None if isinstance(x, bytes) else np.asarray(x)
    except ValueError:
        raise Mismatch(
            f"`{name}` should be a table of numbers, but its rows have different lengths", SHAPE
        ) from None
    if values is None or values.dtype.kind not in "biuf":
        held = f" holding {values.dtype}" if values is not None and values.dtype.kind == "O" else ""
        raise Mismatch(f"`{name}` should be {NUMBERS}; got {type(x).__name__}{held}", TYPE)
    return torch.as_tensor(values.astype(np.float64))


def _text_number(name: str, text: str) -> str:
    """The message for a number written as text, e.g. ``"1,048,576"``."""
    digits = text.strip().replace(",", "").replace("_", "").replace(" ", "")
    try:
        number = float(digits)
    except ValueError:
        return f"`{name}` is the text {text!r}; it should be {NUMBERS}."
    written = f"{int(number):_}" if number.is_integer() else repr(number)
    return (
        f"`{name}` is the text {text!r}, not a number: write it without quotes, "
        f"e.g. {written} (Python allows _ between digits, not commas)."
    )


def one_number(name: str, x, finite: bool = True) -> torch.Tensor:
    """The answer as a 0-d float64 tensor; a Mismatch unless it is exactly one number.

    With ``finite`` (the default), NaN and infinities are refused too; a check that has a
    specific diagnosis for a NaN passes ``finite=False`` and looks at it itself.
    """
    t = as_tensor(name, x)
    if t.numel() != 1:
        raise Mismatch(f"`{name}` should be one number; got shape {tuple(t.shape)}", SHAPE)
    if finite and not torch.isfinite(t).all():
        raise Mismatch(f"`{name}` is {float(t)}; expected a finite number.", DIFFERENCE)
    return t.reshape(())


def whole_number(name: str, x, why: str = "a count is a whole number") -> int:
    """The answer as an int; a Mismatch, saying ``why``, unless it is one whole number."""
    number = float(one_number(name, x, finite=False))
    if not math.isfinite(number) or number != int(number):
        raise Mismatch(f"`{name}` = {number:,}: {why}.", TYPE)  # every digit, as whole_count
    return int(number)


# A count only multiplies and adds whole sizes, so a fraction most likely divides by a size.
DIVISION = "a count is a whole number: a division where a product belongs?"


def whole_count(name: str, x, example: str = "") -> int:
    """A computed count as an int; a fraction is named as a division where a product belongs
    (``example``: one the lesson's formula invites, "d_model / d_ff for d_model * d_ff")."""
    number = float(one_number(name, x, finite=False))
    if math.isfinite(number) and number != int(number):
        said = f"`{name}` = {number:,}: {DIVISION}"  # every digit shown: 3.0000000001, not 3
        raise Mismatch(f"{said} ({example})" if example else said, MISTAKE)
    return whole_number(name, number)


def expect_shape(
    name: str, x: torch.Tensor, shape: tuple[int, ...], letters: str = "", shapes=None
) -> None:
    """A Mismatch unless ``x`` has ``shape``. With ``shapes``, a dict {wrong shape: message},
    a wrong shape is read as a mistake: its message, else what :func:`shape_reading` says."""
    if tuple(x.shape) != tuple(shape):
        named = f"{letters} = " if letters else ""
        said = f"`{name}` should have shape {named}{tuple(shape)}; got {tuple(x.shape)}"
        if tuple(shape) == ():
            said = f"`{name}` should be one number; got shape {tuple(x.shape)}"
        if shapes is not None and (
            why := shapes.get(tuple(x.shape)) or shape_reading(x, shape, letters)
        ):
            raise Mismatch(f"{said}: {why}", MISTAKE)
        raise Mismatch(said, SHAPE)


def shape_reading(got, expected: tuple[int, ...], letters: str = "") -> str | None:
    """What a wrong shape most likely means: transposed, a leading axis too many or missing
    (named by ``letters``, "(B, T, d_model)", if given), or the right sizes in another order."""
    got, expected = tuple(got.shape), tuple(expected)
    first = letters.strip("()").split(",")[0].strip() if letters else ""
    axis = "batch axis" if first in ("", "B") else f"{first} axis"
    if len(got) == 2 and got == expected[::-1]:
        return "transposed?"
    if got == (1, *expected):
        return "drop the leading batch axis of size 1."
    if len(expected) > 1 and got == expected[1:]:
        return f"the leading {axis}, of size {expected[0]}, is missing."
    if sorted(got) == sorted(expected):
        return "the axes are out of order: check which axes your transpose or permute swaps."
    return None


def typed_tolerance(expected):
    """How far a number typed by hand may be from the reference: the course's one rounding
    policy, stated in lesson 1 and applied by every check that takes typed numbers.

    A typed number passes when it agrees with the reference to 2 decimal places or to 3
    significant figures, whichever is looser: the reference rounded either way passes, and
    so does anything closer. With e = floor(log10 |reference|), its order of magnitude::

        |typed - reference| <= max(0.005, 0.5 * 10 ** (e - 2))

    e.g. 0.6698 takes 0.67 (±0.005), 4.3395 takes 4.34, 61.03 takes 61.0 (±0.05) and
    117.8 takes 118 (±0.5). Whole-number answers (counts) stay exact: a check of a count
    does not use this. Elementwise on a tensor; a float for a number.
    """
    ref = as_tensor("expected", expected).abs()
    magnitude = torch.floor(torch.log10(ref.clamp(min=1e-300)))
    # A hair of slack so that a reference's own decimal rounding (0.125 -> 0.13) is not lost
    # to binary floating point.
    tolerance = torch.clamp(0.5 * 10 ** (magnitude - 2), min=0.005) * (1 + 1e-9)
    return float(tolerance) if tolerance.dim() == 0 else tolerance


def typed_close(got, expected) -> bool:
    """Whether ``got`` (a number, list, array or tensor) agrees with ``expected`` under the
    course's rounding policy for numbers typed by hand (:func:`typed_tolerance`)."""
    got, expected = as_tensor("got", got), as_tensor("expected", expected)
    if got.shape != expected.shape:
        return False
    return bool(((got - expected).abs() <= typed_tolerance(expected)).all())


def close(
    got: torch.Tensor, expected: torch.Tensor, atol: float = 1e-4, typed: bool = False
) -> bool:
    """Same shape and within ``atol``; with ``typed``, within the rounding policy instead."""
    if typed:
        return typed_close(got, expected)
    got, expected = as_tensor("got", got), as_tensor("expected", expected)
    return got.shape == expected.shape and torch.allclose(got, expected, atol=atol, rtol=0)


def fmt(x) -> str:
    """Numbers rounded to 3 decimals, for messages."""
    values = as_tensor("x", x).numpy()
    return np.array2string(values, precision=3, floatmode="fixed", suppress_small=True)


def many(n: int, thing: str) -> str:
    """``n`` things, in the singular for one: "1 layer", "6 layers"."""
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def pairs(mistakes: dict) -> list:
    """Typical mistakes written ``{message: wrong_result}`` as pairs ``(wrong_result, message)``,
    to add to a list of them."""
    return [(wrong, message) for message, wrong in mistakes.items()]


def match(got, wrong, typed: bool = False) -> str | None:
    """The message of the first typical mistake ``(tensor, message)`` (or ``{message: tensor}``)
    that ``got`` reproduces; with ``typed``, failing that, the first it reproduces at the
    rounding a number typed by hand may have (:func:`typed_tolerance`), where two mistakes may
    look alike."""
    got = as_tensor("got", got)
    wrong = pairs(wrong) if isinstance(wrong, dict) else wrong
    candidates = [(as_tensor("candidate", c), m) for c, m in wrong]
    candidates = [(c, m) for c, m in candidates if c.shape == got.shape]
    for candidate, message in candidates:
        if torch.allclose(got, candidate, atol=1e-4, rtol=0, equal_nan=True):
            return message
    if typed:
        return next((m for c, m in candidates if typed_close(got, c)), None)
    return None


def difference(name: str, got, expected) -> str:
    """Where and by how much ``got`` is furthest from ``expected`` (same shapes)."""
    got, expected = as_tensor(name, got), as_tensor("expected", expected)
    if torch.isnan(got).any():
        return (
            f"`{name}` contains NaN (not a number), e.g. from a softmax over a row of -inf "
            "scores or from 0/0."
        )
    diff = (got - expected).abs()
    where = tuple(int(i) for i in np.unravel_index(int(diff.argmax()), tuple(diff.shape)))
    at = f" at index {where}" if where else ""
    want, have = digits(float(expected[where]), float(got[where]))
    return f"`{name}` is off by up to {float(diff.max()):.3g}{at}: expected {want}, got {have}."


def digits(expected: float, got: float) -> tuple[str, str]:
    """Both numbers with 4 decimals, or as many more as it takes to tell them apart; whole
    numbers (counts) as they are, 2,097,152."""
    if float(expected).is_integer() and float(got).is_integer() and abs(expected) >= 1:
        return f"{int(expected):,}", f"{int(got):,}"
    for places in range(4, 12):
        want, have = f"{expected:.{places}f}", f"{got:.{places}f}"
        if want != have:
            break
    return want, have


def diagnose(
    name,
    got,
    expected,
    wrong=(),
    atol: float = 1e-4,
    weights: bool = False,
    during: str = "",
    typed: bool = False,
    explain=None,
    shapes=None,
    letters: str = "",
) -> None:
    """Return if ``got`` matches ``expected``; otherwise raise a Mismatch saying why: a typical
    mistake it reproduces (of any shape), else a wrong shape, else where it is furthest off.

    Args:
        wrong: pairs ``(tensor, message)``, or a dict ``{message: tensor}``: the results of
            typical mistakes (``_mistakes`` has the shared ones). If ``got`` reproduces one,
            its message is the diagnosis.
        weights: ``got`` holds attention weights, so each row (last axis) should sum to 1.
        during: how the learner's function was called; it starts the message ("{during}: ").
        typed: ``got`` may be typed by hand: it passes, and reproduces a mistake, within the
            course's rounding policy (:func:`typed_tolerance`) instead of ``atol``; the
            reference rounded more coarsely than the policy allows is named as such.
        explain: when ``got`` reproduces no mistake, a function of ``got`` (float64, the
            expected shape) that names what is off ("the division is off: ..."), or None to
            say only where and by how much.
        shapes: a dict {wrong shape: message} naming what a wrong shape means; given (even
            empty), a wrong shape is also read by :func:`shape_reading`. ``letters`` name the
            axes of the expected shape, "(B, T, d_model)".
    """
    got = as_tensor(name, got)
    expected = as_tensor("expected", expected)
    try:
        if got.shape != expected.shape and (named := match(got, wrong, typed)):
            if shapes is None:  # a mistake that changes the shape (a transpose...)
                raise Mismatch(named, MISTAKE)
            shapes = {**shapes, tuple(got.shape): named}  # said with the shapes
        expect_shape(name, got, expected.shape, letters, shapes)
        if not close(got, expected, atol, typed):
            named = match(got, wrong, typed) or (typed and _too_coarse(name, got, expected))
            named = named or (weights and row_sums(name, got))
            named = named or (explain and explain(got))
            if named:
                raise Mismatch(named, MISTAKE)
            raise Mismatch(difference(name, got, expected), DIFFERENCE)
    except Mismatch as e:
        raise Mismatch(f"{during}: {e}" if during else str(e), e.kind) from None


def _too_coarse(name: str, got: torch.Tensor, expected: torch.Tensor) -> str | None:
    """A message if ``got`` is ``expected`` rounded (halves up or to even) or cut to 0 or 1
    decimals, coarser than the policy. A grid of 0s and 1s is not read as rounded to 0
    decimals: a one-hot where weights belong is a mistake of its own."""
    for decimals in range(2):
        scale = 10.0**decimals
        for how, rounded in (
            ("rounded", torch.round(expected, decimals=decimals)),
            ("rounded", torch.sign(expected) * torch.floor(expected.abs() * scale + 0.5) / scale),
            ("cut", torch.trunc(expected * scale) / scale),
        ):
            zeros_and_ones = bool(((rounded == 0) | (rounded == 1)).all())
            if decimals == 0 and zeros_and_ones and expected.numel() > 1:
                continue
            if rounded.any() and torch.allclose(got, rounded, atol=1e-6):
                return (
                    f"`{name}` looks {how} to {decimals} decimal(s), too coarse here: a number "
                    "passes when it agrees with the reference to 2 decimal places or 3 "
                    "significant figures (or is not rounded at all)."
                )
    return None


def row_sums(name: str, weights: torch.Tensor) -> str | None:
    """A message if the rows of ``weights`` are far from summing to 1 over the last axis."""
    sums = weights.sum(dim=-1)
    if torch.isnan(sums).any() or torch.allclose(sums, torch.ones_like(sums), atol=0.1):
        return None  # near misses are better described by how far off they are
    more = " ..." if sums.numel() > 4 else ""
    return (
        f"the rows of `{name}` don't sum to 1 over the last axis (they sum to "
        f"{fmt(sums.flatten()[:4])}{more}): softmax over dim=-1, dividing each exponential by "
        "its row's sum?"
    )
