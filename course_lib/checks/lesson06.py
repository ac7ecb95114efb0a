"""Checks for lesson 6, feed-forward networks, residual connections and layer norm (§3.1, §3.3).

Each check compares the learner's answer with the reference and, when they differ, with the
results of the typical mistakes (ReLU as the absolute value or as torch.max, biases left out
or sized wrongly, the residual added after the norm, LayerNorm over the batch axis, the
unbiased variance, ε outside the square root, γ and β forgotten, ...) to name the mistake;
LayerNorm's and post-norm Add & Norm's come from ``_mistakes``.
"""

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..layers import PositionwiseFeedForward
from ._core import (
    DIFFERENCE,
    MISTAKE,
    SHAPE,
    Mismatch,
    blame_earlier,
    call,
    exercise,
    multiple_choice,
)
from ._mistakes import (
    add_and_norm_mistakes,
    expect_parameters,
    expect_returned,
    expect_tensor,
    layer_norm,
    layer_norm_mistakes,
    layer_norm_part_off,
    layer_norm_slips,
)
from ._tensors import as_tensor, close, diagnose, expect_shape, fmt, one_number, typed_close

# Shared by several exercises -------------------------------------------------------------------


def _count(result, during: str) -> int:
    """The count a function returned, as an int."""
    if result is None:
        raise Mismatch(f"{during} your function returned None: end it with `return ...`.", MISTAKE)
    x = as_tensor("the result", result)
    if x.numel() != 1:
        raise Mismatch(
            f"{during} your function returned shape {tuple(x.shape)}; return one number.", SHAPE
        )
    value = float(x)
    if not math.isfinite(value) or value != int(value):
        raise Mismatch(
            f"{during} your function returned {value:,.10g}: a count is a whole number. A "
            "division where a product belongs (d_model / d_ff for d_model * d_ff)?",
            MISTAKE,
        )
    return int(value)


def _miscounted(gaps: list[int], cases: list[dict[str, int]], terms: dict) -> dict[str, int]:
    """How many of each term the counts are off by, the same for every case: the integers c
    with gap = Σ c[t]·t(case) for all cases ({} if no such integers explain the gaps).

    ``terms`` maps a term's name to its value for a case, e.g. ``"d·f": lambda c: c["d"] *
    c["f"]``; the cases must tell every term apart (more cases than terms, of varied sizes).
    """
    table = [[term(case) for term in terms.values()] for case in cases]
    matrix = np.array(table, dtype=np.float64)
    scale = np.abs(matrix).max(axis=0)  # columns of one size, for a well-conditioned solve
    solved = np.linalg.lstsq(matrix / scale, np.array(gaps, dtype=np.float64), rcond=None)[0]
    whole = [round(float(c)) for c in solved / scale]
    for row, gap in zip(table, gaps, strict=True):
        if sum(c * v for c, v in zip(whole, row, strict=True)) != gap:
            return {}
    return {name: c for name, c in zip(terms, whole, strict=True) if c}


def _everywhere(wrong) -> str | None:
    """The message of the typical miscount that every wrong count is, else None.

    ``wrong`` holds, for each case counted wrong, the count and the typical miscounts
    ``(count, message)`` for its sizes. All cases must agree: one count can match a miscount
    by chance (with d_ff = 3·d_model, the FFN's biases are 4 vectors of d_model).
    """
    (got, first), *others = wrong
    for count, message in first:
        if count == got and all((n, message) in pairs for n, pairs in others):
            return message
    return None


def _times(n: int, what: str) -> str:
    """``"2·d_model·d_ff"``, ``"d_ff"``, ``"no d_ff"``, ``"-1·d_model"``."""
    return f"no {what}" if n == 0 else what if n == 1 else f"{n}·{what}"


# 6.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("6.1", "Recall: why an FFN after attention?", correct="a")
def recall(answer_6_1):
    """For fixed weights, what kind of combination of the value vectors is an attention output?

    Which part of the layer treats every position on its own, and what does ReLU add?

    (a) For fixed weights an attention output is a weighted average of the value vectors: a
    linear mix that stays inside their convex hull, and stacked linear maps stay linear. The
    FFN's ReLU and its 4x wider hidden layer let each position compute new features from what
    attention gathered.

    (b) That is attention's job: the FFN is position-wise, the same two matrices applied to
    every position on its own, so no information crosses between positions in it.

    (c) Keeping the scale of the activations steady is LayerNorm's job. The FFN can change the
    scale freely; the norm after it (post-norm) brings it back.

    (d) Attention has parameters too: W^Q, W^K, W^V and W^O, a third of an encoder layer's
    parameters. The FFN holds the other two-thirds.
    """


# 6.2 Apply: ReLU of [-0.5, 1.2, 0.0, -3.1, 0.7] ------------------------------------------------

RELU_INPUT = torch.tensor([-0.5, 1.2, 0.0, -3.1, 0.7], dtype=torch.float64)

_WRONG_ACTIVE = {
    3: (
        "`relu_active` = 3 counts the 0.0 entry (or the zeroed units, 5 - 2): ReLU outputs 0 "
        "there, so only the strictly positive outputs count."
    ),
    5: "`relu_active` = 5 counts every unit; count the outputs that are not zero.",
    1: "`relu_active` = 1 counts only 1.2: 0.7 survives too; count every output > 0.",
}
_WRONG_FRACTION = {
    40.0: "`relu_fraction` = 40 is a percentage; give the fraction, 0.4.",
    0.6: "`relu_fraction` = 0.6 is the share that was zeroed; give the share that survives.",
    2.0: "`relu_fraction` = 2 is the count; divide it by the 5 dimensions.",
    2.5: "`relu_fraction` = 2.5 is 5 / 2, upside down: the fraction is active / 5.",
    10.0: "`relu_fraction` = 10 is 2 × 5: divide the count by the 5 dimensions instead.",
}


@exercise("6.2", "Apply: ReLU on five numbers")
def relu(relu_output, relu_active, relu_fraction) -> str:
    """ReLU is max(0, x) for each entry on its own.

    torch.relu(x) or x.clamp(min=0); count the entries > 0 and divide by 5.
    """
    if type(relu_output).__module__ == "torch.return_types":
        raise Mismatch(
            "`relu_output` holds values and indices: torch.max(x, 0) reads the 0 as a dimension "
            "and returns the largest entry. ReLU is element-wise: torch.relu(x), "
            "x.clamp(min=0) or np.maximum(x, 0).",
            MISTAKE,
        )
    expected = RELU_INPUT.clamp(min=0)
    got = as_tensor("relu_output", relu_output)
    if got.numel() == 1 and abs(float(got) - 1.2) < 1e-6:
        raise Mismatch(
            "`relu_output` is 1.2, the largest entry: max(x) reduces the whole vector. ReLU is "
            "max(0, xᵢ) for each entry on its own: torch.relu(x) or np.maximum(x, 0).",
            MISTAKE,
        )
    diagnose("relu_output", got, expected, _relu_mistakes(RELU_INPUT))
    active = float(one_number("relu_active", relu_active))
    if active != 2:
        named = _WRONG_ACTIVE.get(active)
        raise Mismatch(
            named or f"`relu_active` = {active:g}; count the entries of the output that are > 0.",
            MISTAKE if named else DIFFERENCE,
        )
    fraction = float(one_number("relu_fraction", relu_fraction))
    if not typed_close(fraction, 0.4):  # the course's rounding of typed numbers
        named = _WRONG_FRACTION.get(round(fraction, 3))
        raise Mismatch(
            named or f"`relu_fraction` = {fraction:g}; expected active / 5 = 0.4.",
            MISTAKE if named else DIFFERENCE,
        )
    return (
        f"ReLU gives {fmt(expected)}: 2 of 5 units (40%) survive. Positive values pass unchanged; "
        "how negative the others were is lost, but which units are active is itself information."
    )


def _relu_mistakes(x):
    return [
        (x, "nothing was zeroed: ReLU sets every negative entry to 0."),
        (x.clamp(max=0), "these are the negative parts, min(x, 0); ReLU keeps max(0, x)."),
        (
            x.abs(),
            "the negative entries changed sign; ReLU sets them to 0, it is not the absolute value.",
        ),
        (
            (x > 0).double(),
            "these mark which units are active; ReLU passes the positive values through "
            "unchanged (1.2 and 0.7).",
        ),
        (
            F.leaky_relu(x, 0.01),
            "this is a leaky ReLU; the paper's ReLU sets negative entries to exactly 0.",
        ),
        (
            F.gelu(x),
            "this is GELU, which some later models use; the paper's FFN uses ReLU, max(0, x).",
        ),
    ]


# 6.3 Extend: FFN parameters --------------------------------------------------------------------

_FFN_SIZES = [(512, 2048), (512, 512), (512, 8192), (64, 256), (48, 160), (32, 96), (40, 100)]
_FFN_CASES = [  # (d_model, d_ff, bias), the lesson's sizes first; bias None: the default
    (512, 2048, False),
    (512, 2048, True),
    (512, 512, False),
    (512, 8192, False),
    (512, 512, True),
    (512, 8192, True),
    (64, 256, True),
    *((d, f, bias) for bias in (True, False) for d, f in _FFN_SIZES[4:]),
    (64, 256, False),
    (64, 256, None),  # last: with every explicit bias right, a wrong count here is the default
]
_FFN_TERMS = {  # what a miscount of one FFN is made of
    "d·f": lambda c: c["d"] * c["f"],
    "d²": lambda c: c["d"] ** 2,
    "f²": lambda c: c["f"] ** 2,
    "d": lambda c: c["d"],
    "f": lambda c: c["f"],
    "1": lambda c: 1,
}


@exercise("6.3", "Extend: FFN parameters and d_ff")
def ffn_parameter_count(ffn_parameters) -> str:
    """W_1 is d_model × d_ff, W_2 is d_ff × d_model.

    b_1 has one entry per hidden unit (d_ff), b_2 one per output (d_model).
    """
    expect_parameters(
        ffn_parameters,
        "ffn_parameters must take bias as its third argument: "
        "def ffn_parameters(d_model, d_ff, bias=True).",
        512,
        2048,
        bias=False,
    )
    counts = []
    for d, f, bias in _FFN_CASES:
        args = (d, f) if bias is None else (d, f, bias)
        during = _ffn_during(d, f, bias)
        counts.append(_count(call(ffn_parameters, *args, during=during), f"{during}:"))
    for (d, f, bias), got in zip(_FFN_CASES, counts, strict=True):
        expected = _ffn_count(d, f, bias)
        if got == expected:
            continue
        said = f"{_ffn_during(d, f, bias)} your function gives {got:,}"
        if len(set(counts)) == 1:
            raise Mismatch(f"{said} whatever the sizes: count from d_model and d_ff.", MISTAKE)
        if bias is None:
            raise Mismatch(f"{said}; the default should be bias=True, {expected:,}.", MISTAKE)
        named = _everywhere(
            (n, _ffn_mistakes(c[0], c[1], bias is not False))
            for c, n in zip(_FFN_CASES, counts, strict=True)
            if c[2] is bias and n != _ffn_count(*c)
        )
        if named:
            raise Mismatch(f"{said}: {named}", MISTAKE)
        same = [(c, n) for c, n in zip(_FFN_CASES, counts, strict=True) if c[2] is bias]
        gaps = [n - _ffn_count(*c) for c, n in same]
        off = _miscounted(gaps, [{"d": c[0], "f": c[1]} for c, _ in same], _FFN_TERMS)
        if off:
            why = _ffn_miscount(off, bias is not False)
            raise Mismatch(f"{said}, {got - expected:+,} off: {why}.", MISTAKE)
        formula = "2·d_model·d_ff" + ("" if bias is False else " + d_ff + d_model")
        raise Mismatch(f"{said}; expected {formula} = {expected:,}.", DIFFERENCE)
    return (
        "weights only: 524,288 / 2,097,152 / 8,388,608 for d_ff = 512 / 2048 / 8192 "
        "(525,312 / 2,099,712 / 8,397,312 with biases); 33,088 for d_model 64, d_ff 256."
    )


def _ffn_count(d: int, f: int, bias: bool | None) -> int:
    """The right count; bias None is the default, True."""
    return 2 * d * f + (0 if bias is False else d + f)


def _ffn_during(d: int, f: int, bias: bool | None) -> str:
    return f"for d_model = {d}, d_ff = {f}" + ("" if bias is None else f", bias = {bias}")


def _ffn_mistakes(d: int, f: int, bias: bool) -> list[tuple[int, str]]:
    """The typical miscounts ``(count, message)`` of one FFN."""
    one_layer = (
        "only one linear layer is counted: the FFN has two, W_1 (d_model × d_ff) and W_2 "
        "(d_ff × d_model)."
    )
    b = d + f if bias else 0
    mistakes = [
        (2 * d * d + b, "both matrices are d_model × d_model: W_1 expands to d_ff columns."),
        (
            2 * f * f + b,
            "both matrices are d_ff × d_ff: W_1 takes d_model inputs and W_2 gives d_model "
            "outputs.",
        ),
        (
            4 * d * f + b,
            "4·d_model·d_ff counts each matrix twice; there are two, each d_model·d_ff.",
        ),
    ]
    if not bias:
        return mistakes + [
            (
                2 * d * f + d + f,
                "with bias=False leave the biases out: 2·d_model·d_ff weights only.",
            ),
            (d * f, one_layer),
        ]
    return mistakes + [
        (2 * d * f, "the biases are missing: b_1 has d_ff entries and b_2 has d_model."),
        (
            2 * d * f + 2 * d,
            "both biases have d_model entries here; b_1 belongs to the hidden layer, so it has "
            "d_ff.",
        ),
        (
            2 * d * f + 2 * f,
            "both biases have d_ff entries here; b_2 belongs to the output, so it has d_model.",
        ),
        (d * f + f, one_layer),
        (d * f + d, one_layer),
    ]


def _ffn_miscount(off: dict[str, int], bias: bool) -> str:
    """What a miscount of the FFN's parameters is made of, in the lesson's words."""
    said = []
    if "d·f" in off:
        n = 2 + off["d·f"]
        why = {1: " (only one matrix)", 4: " (each matrix twice)"}.get(n, "")
        said.append(
            "W_1 (d_model × d_ff) and W_2 (d_ff × d_model) make 2·d_model·d_ff weights; your "
            f"count has {_times(n, 'd_model·d_ff')}{why}"
        )
    for term, what in (("d²", "d_model²"), ("f²", "d_ff²")):
        if term in off:
            said.append(
                f"your count has {_times(off[term], what)} in it, but no matrix is square: "
                "W_1 is d_model × d_ff"
            )
    b_1, b_2 = off.get("f", 0), off.get("d", 0)
    if not bias and (b_1 or b_2):
        extra = " and ".join(_times(n, w) for n, w in ((b_1, "d_ff"), (b_2, "d_model")) if n)
        said.append(f"with bias=False there are no biases, but your count adds {extra}")
    elif (b_2, b_1) == (-1, -1):
        said.append("the biases are missing: b_1 has d_ff entries, b_2 has d_model")
    elif (b_2, b_1) == (1, -1):
        said.append("both biases have d_model entries; b_1, of the hidden layer, has d_ff")
    elif (b_2, b_1) == (-1, 1):
        said.append("both biases have d_ff entries; b_2, of the output, has d_model")
    else:
        if b_1:
            said.append(f"b_1 has d_ff entries, your count has {_times(1 + b_1, 'd_ff')}")
        if b_2:
            said.append(f"b_2 has d_model entries, your count has {_times(1 + b_2, 'd_model')}")
    if "1" in off:
        said.append(f"it is {off['1']:+,} off whatever the sizes")
    return "; ".join(said)


# 6.4 (lab L6.A) Post-norm and pre-norm ---------------------------------------------------------


@exercise("6.4", "Lab L6.A: post-norm and pre-norm")
def norm_steps(post_norm_step, pre_norm_step) -> str:
    """Post-norm: add, then normalise. Pre-norm: normalise the sub-layer's input only.

    post: norm(x + sublayer(x)); pre: x + sublayer(norm(x)).
    """
    x, sub, norm = _sublayer_and_norm()
    with torch.no_grad():
        expected = {"post": norm(x + sub(x)), "pre": x + sub(norm(x))}
    got = {}
    for which, fn in (("post", post_norm_step), ("pre", pre_norm_step)):
        name = f"{which}_norm_step"
        result = call(
            fn,
            x,
            sub,
            norm,
            during=f"as {name}(x, sublayer, norm)",
            in_place=f"{name} changed x in place (x += ...): compute a new tensor instead.",
        )
        returned = expect_returned(name, result)
        got[which] = as_tensor(f"{name}(x, sublayer, norm)", expect_tensor(name, returned))
        expect_shape(f"{name}(x, sublayer, norm)", got[which], tuple(x.shape), "(B, T, d_model)")
    if close(got["post"], expected["pre"]) and close(got["pre"], expected["post"]):
        raise Mismatch(
            "the two are swapped: post-norm (the paper) is norm(x + sublayer(x)), pre-norm is "
            "x + sublayer(norm(x)).",
            MISTAKE,
        )
    with torch.no_grad():
        for which, mistakes in (
            ("post", _post_norm_mistakes(x, sub, norm)),
            ("pre", _pre_norm_mistakes(x, sub, norm)),
        ):
            name = f"{which}_norm_step(x, sublayer, norm)"
            diagnose(name, got[which], expected[which], mistakes)
    return (
        "post-norm = norm(x + sublayer(x)), the paper's Add & Norm; pre-norm = "
        "x + sublayer(norm(x)), which leaves a clean residual path from input to output."
    )


def _sublayer_and_norm(d_model: int = 8):
    g = torch.Generator().manual_seed(6)
    sublayer = PositionwiseFeedForward(d_model, 4 * d_model)
    norm = nn.LayerNorm(d_model)
    with torch.no_grad():
        for p in [*sublayer.parameters(), *norm.parameters()]:
            p.copy_(torch.randn(p.shape, generator=g) * 0.5 + (1.0 if p is norm.weight else 0.0))
    x = torch.randn(2, 5, d_model, generator=g) * 2 + 1
    return x, sublayer, norm


def _own_norm(with_own_norm):
    """What either step gives with a LayerNorm of its own, without the given γ and β."""
    return (
        with_own_norm,
        "a LayerNorm of your own was used: call the `norm` passed in, it has its own γ and β.",
    )


def _post_norm_mistakes(x, sub, norm):
    return [
        (-norm(x + sub(x)), "the sign is flipped: post-norm is norm(x + sublayer(x))."),
        (
            norm(x - sub(x)),
            "the sub-layer's output is subtracted: the residual adds it, norm(x + sublayer(x)).",
        ),
        *add_and_norm_mistakes(x, sub(x), norm),  # no norm at all among them
        _own_norm(layer_norm(x + sub(x), 1.0, 0.0)),  # γ = 1, β = 0
        (
            x + sub(norm(x)),
            "this is pre-norm, x + sublayer(norm(x)); post-norm (the paper) is "
            "norm(x + sublayer(x)).",
        ),
    ]


def _pre_norm_mistakes(x, sub, norm):
    return [
        (-(x + sub(norm(x))), "the sign is flipped: pre-norm is x + sublayer(norm(x))."),
        (
            x - sub(norm(x)),
            "the sub-layer's output is subtracted: the residual adds it, x + sublayer(norm(x)).",
        ),
        (x, "this is x as it came in: add the sub-layer's output, x + sublayer(norm(x))."),
        (x + sub(x), "there is no norm: the sum x + sublayer(x) was returned as it is."),
        _own_norm(x + sub(layer_norm(x, 1.0, 0.0))),
        (
            norm(x + sub(x)),
            "this is post-norm, norm(x + sublayer(x)); pre-norm normalises the sub-layer's "
            "input: x + sublayer(norm(x)).",
        ),
        (
            x + norm(sub(x)),
            "the norm is on the sub-layer's output; pre-norm normalises its input: "
            "x + sublayer(norm(x)).",
        ),
        (
            norm(x) + sub(norm(x)),
            "the residual carries norm(x) instead of x: pre-norm leaves the residual stream "
            "untouched, x + sublayer(norm(x)).",
        ),
        (sub(norm(x)), "the residual path is missing: add x to the sub-layer's output."),
        (
            norm(x + sub(norm(x))),
            "the sum was normalised again: pre-norm leaves it as it is (a stack adds one final "
            "LayerNorm at its end).",
        ),
    ]


# 6.5 (lab L6.B) Parameters of one encoder block ------------------------------------------------

_BLOCK_CASES = [  # (d_model, n_heads, d_ff): the lesson's sizes, then sizes that tell apart
    (64, 8, 256),  # what a miscount is made of (heads of several widths)
    (512, 8, 2048),
    (32, 4, 64),
    (48, 4, 160),
    (96, 3, 384),
    (16, 2, 40),
    (128, 16, 256),
    (24, 6, 72),
    (40, 5, 100),
    (80, 4, 200),
    (64, 2, 128),
    (60, 3, 180),
    (72, 12, 144),
]
_BLOCK_TERMS = {  # what a miscount of one encoder block is made of
    "d²": lambda c: c["d"] ** 2,
    "d·f": lambda c: c["d"] * c["f"],
    "d": lambda c: c["d"],
    "f": lambda c: c["f"],
    "1": lambda c: 1,
    "h·d²": lambda c: c["h"] * c["d"] ** 2,
    "h·d": lambda c: c["h"] * c["d"],
    "h": lambda c: c["h"],
    "d²/h": lambda c: c["d"] ** 2 // c["h"],
    "d/h": lambda c: c["d"] // c["h"],
}


@exercise("6.5", "Lab L6.B: parameters of an encoder block")
def block_parameters(encoder_block_parameters) -> str:
    """Three parts: multi-head attention (four d_model × d_model projections with biases), the
    FFN, and two LayerNorms.

    4·(d_model² + d_model) + (2·d_model·d_ff + d_ff + d_model) + 2·(2·d_model).
    """
    blame_earlier(
        encoder_block_parameters, "ffn_parameters", "6.3", "encoder_block_parameters", __name__
    )
    counts = []
    for d, h, f in _BLOCK_CASES:
        during = f"for d_model = {d}, n_heads = {h}, d_ff = {f}"
        result = call(
            encoder_block_parameters,
            d,
            h,
            f,
            during=during,
            unfinished="your encoder_block_parameters calls a function that is still a stub "
            "(`ffn_parameters` of exercise 6.3?): finish that one first.",
        )
        counts.append(_count(result, f"{during}:"))
    for (d, h, f), got in zip(_BLOCK_CASES, counts, strict=True):
        expected = _block_count(d, f)
        if got == expected:
            continue
        said = f"for d_model = {d}, n_heads = {h}, d_ff = {f} your function gives {got:,}"
        if len(set(counts)) == 1:
            raise Mismatch(
                f"{said} whatever the sizes: count from d_model, n_heads and d_ff "
                f"(expected {expected:,} here).",
                MISTAKE,
            )
        named = _everywhere(
            (n, _block_mistakes(*c))
            for c, n in zip(_BLOCK_CASES, counts, strict=True)
            if n != _block_count(c[0], c[2])
        )
        if named:
            raise Mismatch(f"{said}: {named}", MISTAKE)
        gaps = [n - _block_count(c[0], c[2]) for c, n in zip(_BLOCK_CASES, counts, strict=True)]
        sizes = [{"d": d, "h": h, "f": f} for d, h, f in _BLOCK_CASES]
        off = _miscounted(gaps, sizes, _BLOCK_TERMS)
        if off:
            raise Mismatch(f"{said}, {got - expected:+,} off: {_block_miscount(off)}.", MISTAKE)
        raise Mismatch(
            f"{said}; expected 4·(d_model² + d_model) + 2·d_model·d_ff + d_ff + d_model + "
            f"4·d_model = {expected:,}.",
            DIFFERENCE,
        )
    return (
        "49,984 for (64, 8, 256) = attention 16,640 + FFN 33,088 + two LayerNorms 256; "
        "3,152,384 for the paper's base layer (512, 8, 2048)."
    )


def _block_count(d: int, f: int) -> int:
    return 4 * (d * d + d) + 2 * d * f + d + f + 4 * d


def _block_mistakes(d: int, h: int, f: int) -> list[tuple[int, str]]:
    """The typical miscounts ``(count, message)`` of one encoder block."""
    attention, ffn, norms = 4 * (d * d + d), 2 * d * f + d + f, 4 * d
    head = d // h
    return [
        (
            attention + ffn,
            "4·d_model short: either the biases of the four attention projections "
            "(4 × d_model) or the two LayerNorms (γ and β, 2·d_model each) are missing.",
        ),
        (
            attention + ffn + 2 * d,
            "2·d_model short: there are two LayerNorms, one per sub-layer, each with γ and β "
            "(2·d_model parameters).",
        ),
        (
            attention + ffn + 2 * norms,
            "the LayerNorms are counted twice: two of them, 2·d_model each.",
        ),
        (
            4 * d * d + 2 * d * f,
            "this is the weights-only count (the paper's tables): add the biases and the two "
            "LayerNorms.",
        ),
        (
            h * attention + ffn + norms,
            "attention is counted once per head: the heads split d_model between them, so the "
            "four projections are d_model × d_model whatever n_heads is.",
        ),
        (
            4 * (d * head + head) + ffn + norms,
            "attention is one head's share: all heads together need four d_model × d_model "
            "projections.",
        ),
        (
            3 * (d * d + d) + ffn + norms,
            "three projections are counted: W^O, the output projection that merges the heads, "
            "is the fourth.",
        ),
        (
            attention + 2 * d * f + norms,
            "the FFN's biases are missing: b_1 has d_ff entries, b_2 has d_model.",
        ),
        (
            attention + d * f + f + norms,
            "only one FFN layer is counted: the FFN has two, W_1 and W_2.",
        ),
    ]


_VECTORS = {  # what a count short or over by some d_model-sized vectors most likely means
    -9: "none of them is counted",
    -8: "the attention biases and the LayerNorms are missing?",
    -5: "the attention biases and b_2 are missing?",
    -4: "the attention biases or the two LayerNorms are missing?",
    -3: "three of the four attention biases are missing?",
    -2: "one LayerNorm's γ and β are missing?",
    -1: "the FFN's b_2 or one attention bias is missing?",
    2: "a third LayerNorm?",
    4: "the LayerNorms counted twice?",
}


def _block_miscount(off: dict[str, int]) -> str:
    """What a miscount of an encoder block's parameters is made of, in the lesson's words."""
    said = []
    if "d²" in off:
        n = 4 + off["d²"]
        said.append(
            "attention has four d_model × d_model projections (W^Q, W^K, W^V, W^O), your count "
            f"has {_times(n, 'd_model²')}"
            + (" (W^O, which merges the heads, is the fourth)" if n == 3 else "")
        )
    if any(t in off for t in ("h·d²", "h·d", "h")):
        said.append(
            "n_heads multiplies part of your count: the heads split d_model between them, so "
            "the projections are d_model × d_model whatever n_heads is"
        )
    if any(t in off for t in ("d²/h", "d/h")):
        said.append(
            "your count divides by n_heads, one head's share: all heads together need four "
            "d_model × d_model projections"
        )
    if "d·f" in off:
        n = 2 + off["d·f"]
        said.append(
            f"the FFN has two d_model × d_ff matrices, your count has {_times(n, 'd_model·d_ff')}"
        )
    if "f" in off:
        said.append(
            f"the FFN's b_1 has d_ff entries, your count has {_times(1 + off['f'], 'd_ff')}"
        )
    if "d" in off:
        n, why = 9 + off["d"], _VECTORS.get(off["d"])
        said.append(
            "the four attention biases, the FFN's b_2 and γ and β of the two LayerNorms make "
            f"9 vectors of d_model; your count has {n}" + (f" ({why})" if why else "")
        )
    if "1" in off:
        said.append(f"it is {off['1']:+,} off whatever the sizes")
    return "; ".join(said)


# 6.6 (lab L6.C) LayerNorm by hand --------------------------------------------------------------


@exercise(
    "6.6",
    "Lab L6.C: LayerNorm by hand",
    forbidden=("torch.nn.functional.layer_norm", "torch.layer_norm", "torch.nn.LayerNorm"),
)
def layer_norm_function(layer_norm_by_hand) -> str:
    """Mean and variance over the last axis, kept as an axis of size 1 so that they broadcast
    against x; the population variance (divide by d_model), not the unbiased one.

    gamma * (x - mean) / torch.sqrt(var + eps) + beta
    """
    cases = _layer_norm_cases()
    _, batch, gamma, beta, _ = cases[1]  # any input with γ and β will do
    expect_parameters(
        layer_norm_by_hand,
        "layer_norm_by_hand must take eps as its fourth argument: "
        "def layer_norm_by_hand(x, gamma, beta, eps=1e-5).",
        batch,
        gamma,
        beta,
        0.1,
    )
    for during, x, gm, bt, eps in cases:
        out = call(
            layer_norm_by_hand,
            *((x, gm, bt) if eps is None else (x, gm, bt, eps)),
            during=during,
            tip=_layer_norm_tip,
            in_place="your function changed x in place (x -= ...): compute new tensors instead.",
        )
        try:
            returned = expect_returned("layer_norm_by_hand", out)
            out = as_tensor("your output", expect_tensor("layer_norm_by_hand", returned))
        except Mismatch as e:
            raise Mismatch(f"{during}: {e} (use torch operations).", e.kind) from None
        eps = 1e-5 if eps is None else eps
        expected = layer_norm(x, gm, bt, eps)
        mistakes = layer_norm_mistakes(x, gm, bt, eps) + layer_norm_slips(x, gm, bt, eps)
        try:
            diagnose("your output", out, expected, mistakes, during=during)
        except Mismatch as e:
            part = e.kind == DIFFERENCE and layer_norm_part_off(out, x, gm, bt, eps)
            if part:
                raise Mismatch(f"{during}: {part}", MISTAKE) from None
            raise
    return (
        "[0.71, -0.45, 1.13] becomes [0.3691, -1.3668, 0.9977]; on batches it matches "
        "torch.nn.LayerNorm, statistics per position over the last axis."
    )


def _layer_norm_cases():
    """``(during, x, gamma, beta, eps)``; eps None: the learner's default."""
    g = torch.Generator().manual_seed(6)
    worked = torch.tensor([0.71, -0.45, 1.13], dtype=torch.float64)
    batch = torch.randn(2, 3, 6, generator=g, dtype=torch.float64) * 3 + 1
    tiny = torch.randn(4, 6, generator=g, dtype=torch.float64) * 3e-3  # variance near ε
    tiny[1] = 0.25  # a constant row: σ² = 0
    gamma, beta = (torch.rand(6, generator=g, dtype=torch.float64) + 0.5 for _ in range(2))
    ones, zeros = torch.ones(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    return [
        ("on the worked example [0.71, -0.45, 1.13] with γ = 1, β = 0", worked, ones, zeros, None),
        ("on x of shape (2, 3, 6) with random γ and β", batch, gamma, beta, None),
        ("on rows whose variance is near ε (one of them constant)", tiny, gamma, beta, None),
        ("with eps = 0.1", batch * 0.1, gamma, beta, 0.1),
    ]


def _layer_norm_tip(error) -> str | None:
    if "invalid combination of arguments" in str(error) and "keepdim" in str(error):
        return "Give the axis too: x.mean(dim=-1, keepdim=True)."
    if "must be Tensor, not float" in str(error):
        return "torch.sqrt takes a tensor; √(σ² + ε) is torch.sqrt(var + eps)."
    if "Dimension out of range" in str(error):
        return "LayerNorm's statistics are over the last axis, dim=-1, which every input has."
    if "size of tensor" in str(error) or "broadcast" in str(error):
        return (
            "Tip: mean(dim=-1, keepdim=True) keeps the reduced axis, so the statistics broadcast "
            "against x."
        )
    return None
