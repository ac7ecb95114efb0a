"""Checks for lesson 6, feed-forward networks, residual connections and layer norm (§3.1, §3.3).
LayerNorm's and post-norm Add & Norm's typical mistakes come from ``_norms``.
"""

import torch
import torch.nn.functional as F
from torch import nn

from ..layers import PositionwiseFeedForward
from ._core import MISTAKE, Mismatch, blame_earlier, call, exercise, multiple_choice
from ._mistakes import (
    expect_count,
    expect_parameters,
    expect_returned,
    expect_tensor,
    judge_each,
    keepdims_tip,
    layer_norm,
)
from ._norms import add_and_norm_mistakes, layer_norm_mistakes, layer_norm_part_off
from ._tensors import (
    as_tensor,
    close,
    diagnose,
    expect_shape,
    fmt,
    one_number,
    whole_count,
    whole_number,
)

# Counts (6.3 and 6.5) -------------------------------------------------------------------------


def _counts(name: str, fn, cases: list[tuple], during, unfinished=None) -> list[int]:
    """What the learner's ``fn`` counts for each case (its arguments), as whole numbers."""
    counts = []
    for case in cases:
        result = call(fn, *case, during=during(case), unfinished=unfinished)
        answer = expect_returned(name, result)
        counts.append(whole_count(f"{name}{case}", answer, "d_model / d_ff for d_model * d_ff"))
    return counts


def _judge(name, cases, counts, right, mistakes, during, whatever, group=lambda case: None):
    """Judge the first case counted wrong: by the typical miscounts ``mistakes(case)``, pairs
    ``(count, message)``, that every wrong case of its ``group`` reproduces (one count alone
    can match by chance: with d_ff = 3·d_model the FFN's biases are 4 vectors of d_model),
    else by ``whatever`` if the count is the same whatever the sizes."""
    wrong = [(c, n) for c, n in zip(cases, counts, strict=True) if n != right(c)]
    if not wrong:
        return
    (case, got), same = wrong[0], len(set(counts)) == 1
    others = [(c, n) for c, n in wrong[1:] if group(c) == group(case)]
    named = [(n, m) for n, m in mistakes(case) if all((k, m) in mistakes(c) for c, k in others)]
    why = same and f"it is the same whatever the sizes; {whatever.format(right(case))}"
    said = f"{during(case)} your function gives {got:,}"
    diagnose(name, got, right(case), named, during=said, explain=lambda _: why or None)


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
    3: "that counts the 0.0 entry (or the zeroed units, 5 - 2): ReLU outputs 0 there, so "
    "only the strictly positive outputs count.",
    5: "that counts every unit; count the outputs that are not zero.",
}
_WRONG_FRACTION = {
    40.0: "`relu_fraction` = 40 is a percentage; give the fraction, 0.4.",
    0.6: "`relu_fraction` = 0.6 is the share that was zeroed; give the share that survives.",
    2.0: "`relu_fraction` = 2 is the count; divide it by the 5 dimensions.",
    2.5: "`relu_fraction` = 2.5 is 5 / 2, upside down: the fraction is active / 5.",
}


@exercise("6.2", "Apply: ReLU on five numbers")
def relu(relu_output, relu_active, relu_fraction) -> str:
    """ReLU is max(0, x) for each entry on its own.

    torch.relu(x) or x.clamp(min=0); count the entries > 0 and divide by 5.
    """
    if type(relu_output).__module__ == "torch.return_types":
        message = "`relu_output` holds values and indices: torch.max(x, 0) reads the 0 as a "
        message += "dimension and returns the largest entry. ReLU is element-wise: torch.relu(x), "
        raise Mismatch(message + "x.clamp(min=0) or np.maximum(x, 0).", MISTAKE)
    expected = RELU_INPUT.clamp(min=0)
    diagnose("relu_output", relu_output, expected, _relu_mistakes(RELU_INPUT))
    active, count = whole_number("relu_active", relu_active), "count the outputs that are > 0."
    expect_count(active, 2, _WRONG_ACTIVE, "`relu_active` =", count)
    fraction = one_number("relu_fraction", relu_fraction)  # typed: the course's rounding
    diagnose("relu_fraction", fraction, 0.4, _WRONG_FRACTION.items(), typed=True)
    return (
        f"ReLU gives {fmt(expected)}: 2 of 5 units (40%) survive. Positive values pass unchanged; "
        "how negative the others were is lost, but which units are active is itself information."
    )


def _relu_mistakes(x):
    return [
        (x.max(), "`relu_output` is 1.2, the largest entry: max(x) reduces the whole vector. "
         "ReLU is max(0, xᵢ) for each entry on its own: torch.relu(x) or np.maximum(x, 0)."),
        (x, "nothing was zeroed: ReLU sets every negative entry to 0."),
        (x.clamp(max=0), "these are the negative parts, min(x, 0); ReLU keeps max(0, x)."),
        (x.abs(), "the negative entries changed sign; ReLU sets them to 0, it is not the "
         "absolute value."),
        ((x > 0).double(), "these mark which units are active; ReLU passes the positive values "
         "through unchanged (1.2 and 0.7)."),
        (F.leaky_relu(x, 0.01),
         "this is a leaky ReLU; the paper's ReLU sets negative entries to exactly 0."),
        (F.gelu(x),
         "this is GELU, which some later models use; the paper's FFN uses ReLU, max(0, x)."),
    ]  # fmt: skip


# 6.3 Extend: FFN parameters --------------------------------------------------------------------

_FFN_SIZES = [(48, 160), (32, 96), (40, 100)]  # sizes that tell the miscounts apart
_FFN_CASES = [  # (d_model, d_ff, bias), the lesson's sizes first
    (512, 2048, False), (512, 2048, True), (512, 512, False), (512, 8192, False),
    (512, 512, True), (512, 8192, True), (64, 256, True),
    *((d, f, bias) for bias in (True, False) for d, f in _FFN_SIZES), (64, 256, False),
    (64, 256),  # last, bias left out: with every explicit bias right, the default is wrong
]  # fmt: skip


def _ffn_count(case: tuple) -> int:
    d, f, *bias = case
    return 2 * d * f + (0 if bias == [False] else d + f)


def _ffn_during(case: tuple) -> str:
    bias = f", bias = {case[2]}" if len(case) > 2 else ""
    return f"for d_model = {case[0]}, d_ff = {case[1]}{bias}"


@exercise("6.3", "Extend: FFN parameters and d_ff")
def ffn_parameter_count(ffn_parameters) -> str:
    """W_1 is d_model × d_ff, W_2 is d_ff × d_model.

    b_1 has one entry per hidden unit (d_ff), b_2 one per output (d_model).
    """
    takes = "ffn_parameters must take bias as its third argument: def ffn_parameters(d_model, "
    expect_parameters(ffn_parameters, f"{takes}d_ff, bias=True).", 512, 2048, bias=False)
    counts = _counts("ffn_parameters", ffn_parameters, _FFN_CASES, _ffn_during)
    how = (_ffn_count, _ffn_mistakes, _ffn_during, "count from d_model and d_ff.")
    _judge("ffn_parameters", _FFN_CASES, counts, *how, group=lambda case: case[2:])
    return (
        "weights only: 524,288 / 2,097,152 / 8,388,608 for d_ff = 512 / 2048 / 8192 "
        "(525,312 / 2,099,712 / 8,397,312 with biases); 33,088 for d_model 64, d_ff 256."
    )


def _ffn_mistakes(case: tuple) -> list[tuple[int, str]]:
    """The typical miscounts ``(count, message)`` of one FFN."""
    (d, f, *bias), right = case, _ffn_count(case)
    one_layer = "only one linear layer is counted: the FFN has two, W_1 (d_model × d_ff) and "
    one_layer += "W_2 (d_ff × d_model)."
    b = right - 2 * d * f
    mistakes = [
        (2 * d * d + b, "both matrices are d_model × d_model: W_1 expands to d_ff columns."),
        (2 * f * f + b, "both matrices are d_ff × d_ff: W_1 takes d_model inputs and W_2 gives "
         "d_model outputs."),
        (4 * d * f + b, "4·d_model·d_ff counts each matrix twice; there are two, each "
         "d_model·d_ff."),
    ]  # fmt: skip
    if bias == [False]:
        without = "with bias=False leave the biases out: 2·d_model·d_ff weights only."
        return [*mistakes, (2 * d * f + d + f, without), (d * f, one_layer)]
    default = f"the default should be bias=True, {right:,}."
    return [
        *([(2 * d * f, default)] if not bias else []),
        *mistakes,
        (2 * d * f, "the biases are missing: b_1 has d_ff entries and b_2 has d_model."),
        (2 * d * f + 2 * d, "both biases have d_model entries here; b_1 belongs to the hidden "
         "layer, so it has d_ff."),
        (2 * d * f + 2 * f, "both biases have d_ff entries here; b_2 belongs to the output, so "
         "it has d_model."),
        (2 * d * f + f, "b_2 is missing (your count has no d_model term): b_2 has d_model "
         "entries."),
        (2 * d * f + d, "b_1 is missing (your count has no d_ff term): b_1 has d_ff entries."),
        (d * f + f, one_layer),
        (d * f + d, one_layer),
    ]  # fmt: skip


# 6.4 (lab L6.A) Post-norm and pre-norm ---------------------------------------------------------


@exercise("6.4", "Lab L6.A: post-norm and pre-norm")
def norm_steps(post_norm_step, pre_norm_step) -> str:
    """Post-norm: add, then normalise. Pre-norm: normalise the sub-layer's input only.

    post: norm(x + sublayer(x)); pre: x + sublayer(norm(x)).
    """
    x, sub, norm = _sublayer_and_norm()
    with torch.no_grad():
        expected = {"post": norm(x + sub(x)), "pre": x + sub(norm(x))}
        post, pre = _post_norm_mistakes(x, sub, norm), _pre_norm_mistakes(x, sub, norm)
        mistakes = {"post": post, "pre": pre}
    got = {}
    for which, fn in (("post", post_norm_step), ("pre", pre_norm_step)):
        name, called = f"{which}_norm_step", f"{which}_norm_step(x, sublayer, norm)"
        changed = f"{name} changed x in place (x += ...): compute a new tensor instead."
        result = call(fn, x, sub, norm, during=f"as {called}", in_place=changed)
        got[which] = as_tensor(called, expect_tensor(name, result))
        expect_shape(called, got[which], tuple(x.shape), "(B, T, d_model)")
    if close(got["post"], expected["pre"]) and close(got["pre"], expected["post"]):
        swapped = "the two are swapped: post-norm (the paper) is norm(x + sublayer(x)), "
        raise Mismatch(swapped + "pre-norm is x + sublayer(norm(x)).", MISTAKE)
    for which in ("post", "pre"):
        called = f"{which}_norm_step(x, sublayer, norm)"
        diagnose(called, got[which], expected[which], mistakes[which])
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
    own = "a LayerNorm of your own was used: call the `norm` passed in, it has its own γ and β."
    return with_own_norm, own


def _post_norm_mistakes(x, sub, norm):
    return [
        *add_and_norm_mistakes(x, sub(x), norm),  # no norm at all among them
        _own_norm(layer_norm(x + sub(x), 1.0, 0.0)),  # γ = 1, β = 0
        (x + sub(norm(x)), "this is pre-norm, x + sublayer(norm(x)); post-norm (the paper) is "
         "norm(x + sublayer(x))."),
    ]  # fmt: skip


def _pre_norm_mistakes(x, sub, norm):
    return [
        (x + sub(x), "there is no norm: the sum x + sublayer(x) was returned as it is."),
        _own_norm(x + sub(layer_norm(x, 1.0, 0.0))),
        (norm(x + sub(x)), "this is post-norm, norm(x + sublayer(x)); pre-norm normalises the "
         "sub-layer's input: x + sublayer(norm(x))."),
        (x + norm(sub(x)), "the norm is on the sub-layer's output; pre-norm normalises its "
         "input: x + sublayer(norm(x))."),
        (norm(x) + sub(norm(x)), "the residual carries norm(x) instead of x: pre-norm leaves "
         "the residual stream untouched, x + sublayer(norm(x))."),
        (sub(norm(x)), "the residual path is missing: add x to the sub-layer's output."),
        (norm(x + sub(norm(x))), "the sum was normalised again: pre-norm leaves it as it is "
         "(a stack adds one final LayerNorm at its end)."),
    ]  # fmt: skip


# 6.5 (lab L6.B) Parameters of an encoder block -------------------------------------------------

_BLOCK_CASES = [  # (d_model, n_heads, d_ff): the lesson's sizes, then heads of several widths
    (64, 8, 256), (512, 8, 2048), (32, 4, 64), (48, 4, 160), (96, 3, 384), (16, 2, 40),
    (128, 16, 256), (24, 6, 72), (40, 5, 100), (80, 4, 200), (64, 2, 128), (60, 3, 180),
    (72, 12, 144),
]  # fmt: skip


@exercise("6.5", "Lab L6.B: parameters of an encoder block")
def block_parameters(encoder_block_parameters) -> str:
    """Three parts: multi-head attention (four d_model × d_model projections with biases), the
    FFN, and two LayerNorms.

    4·(d_model² + d_model) + (2·d_model·d_ff + d_ff + d_model) + 2·(2·d_model).
    """
    fn = encoder_block_parameters
    blame_earlier(fn, "ffn_parameters", "6.3", "encoder_block_parameters", __name__)
    unfinished = "your encoder_block_parameters calls a function that is still a stub "
    unfinished += "(`ffn_parameters` of exercise 6.3?): finish that one first."
    counts = _counts("encoder_block_parameters", fn, _BLOCK_CASES, _block_during, unfinished)
    whatever = "count from d_model, n_heads and d_ff (expected {:,} here)."
    how = (_block_count, _block_mistakes, _block_during, whatever)
    _judge("encoder_block_parameters", _BLOCK_CASES, counts, *how)
    return (
        "49,984 for (64, 8, 256) = attention 16,640 + FFN 33,088 + two LayerNorms 256; "
        "3,152,384 for the paper's base layer (512, 8, 2048)."
    )


def _block_during(case: tuple) -> str:
    return "for d_model = {}, n_heads = {}, d_ff = {}".format(*case)


def _block_count(case: tuple) -> int:
    d, _, f = case
    return 4 * (d * d + d) + 2 * d * f + d + f + 4 * d


def _block_mistakes(case: tuple) -> list[tuple[int, str]]:
    """The typical miscounts ``(count, message)`` of one encoder block."""
    d, h, f = case
    attention, ffn, norms = 4 * (d * d + d), 2 * d * f + d + f, 4 * d
    head = d // h
    return [
        (attention + ffn, "4·d_model short: either the biases of the four attention "
         "projections (4 × d_model) or the two LayerNorms (γ and β, 2·d_model each) are missing."),
        (attention + ffn + 2 * d, "2·d_model short: there are two LayerNorms, one per "
         "sub-layer, each with γ and β (2·d_model parameters)."),
        (attention + ffn + 2 * norms,
         "the LayerNorms are counted twice: two of them, 2·d_model each."),
        (4 * d * d + 2 * d * f, "this is the weights-only count (the paper's tables): add the "
         "biases and the two LayerNorms."),
        (h * attention + ffn + norms, "attention is counted once per head: the heads split "
         "d_model between them, so the four projections are d_model × d_model whatever "
         "n_heads is."),
        (4 * (d * head + head) + ffn + norms, "attention is one head's share: all heads "
         "together need four d_model × d_model projections."),
        (3 * (d * d + d) + ffn + norms, "three projections are counted: W^O, the output "
         "projection that merges the heads, is the fourth."),
        (attention + 2 * d * f + norms,
         "the FFN's biases are missing: b_1 has d_ff entries, b_2 has d_model."),
        (attention + d * f + f + norms,
         "only one FFN layer is counted: the FFN has two, W_1 and W_2."),
    ]  # fmt: skip


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
        *(batch, gamma, beta, 0.1),
    )
    changed = "your function changed x in place (x -= ...): compute new tensors instead."

    def run(during, x, gamma, beta, eps):  # with eps = 1e-5, the learner's default
        args = (x, gamma, beta) + ((eps,) if eps != 1e-5 else ())
        out = call(layer_norm_by_hand, *args, during=during, tip=_layer_norm_tip, in_place=changed)
        return expect_tensor("layer_norm_by_hand", out)

    how = (layer_norm, layer_norm_mistakes, layer_norm_part_off)
    judge_each("your output", cases, run, *how)
    return (
        "[0.71, -0.45, 1.13] becomes [0.3691, -1.3668, 0.9977]; on batches it matches "
        "torch.nn.LayerNorm, statistics per position over the last axis."
    )


def _layer_norm_cases():
    """``(during, x, gamma, beta, eps)``; eps 1e-5: the learner's default."""
    g = torch.Generator().manual_seed(6)
    worked = torch.tensor([0.71, -0.45, 1.13], dtype=torch.float64)
    batch = torch.randn(2, 3, 6, generator=g, dtype=torch.float64) * 3 + 1
    tiny = torch.randn(4, 6, generator=g, dtype=torch.float64) * 3e-3  # variance near ε
    tiny[1] = 0.25  # a constant row: σ² = 0
    gamma, beta = (torch.rand(6, generator=g, dtype=torch.float64) + 0.5 for _ in range(2))
    ones, zeros = torch.ones(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    return [
        ("on the worked example [0.71, -0.45, 1.13] with γ = 1, β = 0", worked, ones, zeros, 1e-5),
        ("on x of shape (2, 3, 6) with random γ and β", batch, gamma, beta, 1e-5),
        ("on rows whose variance is near ε (one of them constant)", tiny, gamma, beta, 1e-5),
        ("with eps = 0.1", batch * 0.1, gamma, beta, 0.1),
    ]


def _layer_norm_tip(error) -> str | None:
    if "invalid combination of arguments" in str(error) and "keepdim" in str(error):
        return "Give the axis too: x.mean(dim=-1, keepdim=True)."
    if "must be Tensor, not float" in str(error):
        return "torch.sqrt takes a tensor; √(σ² + ε) is torch.sqrt(var + eps)."
    if "Dimension out of range" in str(error):
        return "LayerNorm's statistics are over the last axis, dim=-1, which every input has."
    return keepdims_tip(error)
