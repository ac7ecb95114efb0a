"""Checks for lesson 4, multi-head attention (paper §3.2.2).

The learner's functions run on seeded inputs whose B, T, H and d_k all differ, so that each
typical mistake (heads cut along the wrong axis, no transpose before merging, no W^O, √d_model
for √d_k, ...) gives a result of its own; the walk (4.8) is judged stage by stage. Counts are
exact, compared with the typical miscounts, else read as whole matrices and bias vectors.
"""

import itertools
import math
from functools import partial

import torch

from ._core import MISTAKE, TYPE, Mismatch, call, exercise, multiple_choice
from ._mistakes import (
    attend,
    expect_count,
    expect_returned,
    expect_tensor,
    softmax_confusions,
    softmax_mistakes,
    tensor_pair,
)
from ._tensors import as_tensor, diagnose, whole_count

# Shared by several exercises: counts ----------------------------------------------------------


def _right_count(D: int, H: int, bias: bool) -> int:
    return 4 * D * D + (4 * D if bias else 0)


_SHARES = (  # the weights miscounted, the biases alike (see _miscounts)
    "that is W^Q, W^K and W^V only: add the output projection W^O, another d_model x d_model.",
    "that gives every head full-width d_model x d_model projections; each head projects to "
    "d_k = d_model/h, so the h heads together hold one d_model x d_model matrix per projection.",
    "that is one head's share; all h heads together hold d_model x d_model per projection.",
    "that is one matrix: there are four, W^Q, W^K, W^V and W^O.",
)
_BIASES = (  # the biases miscounted, the weights right: at bias=False, then at bias=True
    "bias=False: count the weights only.",
    "bias=True: each of the four projections also has a bias vector of d_model numbers.",
    "a bias is a vector of d_model numbers per projection, not one number.",
    "each of the four projections has its own bias vector: 4·d_model biases.",
    "W^O has a bias too: 4·d_model biases in all.",
    "a bias has one number per output feature: d_model per projection, not d_k.",
    "the biases are counted 4·n_heads times: a bias has one number per output feature, "
    "d_model per projection, whatever the number of heads.",
    "the biases are counted once per projection (d_model each), not once per head.",
    "4·(d_model + 1)²: a bias adds one vector of d_model numbers to each d_model x d_model "
    "matrix, 4·(d_model² + d_model).",
)


def _miscounts(D: int, H: int, bias: bool) -> dict[int, tuple[int, str]]:
    """The typical miscounts of a multi-head attention's parameters (4.2, 4.9): each one's
    number (the same for every size) -> the count it gives and its diagnosis."""
    Dk, b, weights = D // H, int(bias), 4 * D * D
    counts = [3 * D * (D + b), 4 * H * D * (D + b), 4 * Dk * (D + b), D * D]
    counts += [None if bias else weights + 4 * D]  # None: the miscount does not apply
    counts += [
        weights + n if bias else None for n in (0, 4, D, 3 * D, 4 * Dk, 4 * H, 4 * H * D, 8 * D + 4)
    ]
    pairs = enumerate(zip(counts, _SHARES + _BIASES, strict=True))
    return {i: (n, message) for i, (n, message) in pairs if n is not None}


def _expect_count(got, right, miscounts, said, D, Dk=None, *, maps=4, biases=4) -> None:
    """``expect_count`` with the typical miscounts, pairs (count, message); a count that
    matches none is read as whole parts (``maps`` matrices and ``biases`` biases are right)."""
    should = f"{maps} matrices of {D} x {D}"
    should += f" and {biases} bias vectors of {D}" if biases else ", no bias"
    why = dict(reversed([*miscounts])).get(got) or _read_count(got, D, Dk, should)  # first wins
    expect_count(got, right, {got: why} if why else {}, said, f"expected {right:,}: {should}.")


def _read_count(got: int, D: int, Dk: int | None, should: str) -> str | None:
    """What a count is made of, if a few matrices d_model x d_model (or heads' slices
    d_model x d_k) and bias vectors of d_model, or why it is no count of them."""
    if got < 0:
        return "a count is never negative."
    parts = [(f"{n} weight matrices of {D} x {D}", n * D * D) for n in range(9)]
    if Dk:
        slices = f"(d_model x d_k; the {D // Dk} heads' slices of a projection make one "
        slices += f"{D} x {D} matrix)"
        parts += [
            (f"{n} heads' slices of {D} x {Dk} {slices}", n * D * Dk)
            for n in range(1, 8 * D // Dk)
            if n % (D // Dk)
        ]
    for (what, count), n in itertools.product(parts, range(9)):
        if count + n * D == got and got:
            return f"that is {what} and {n} bias vectors of {D}; the count is {should}."
    if got % D:
        return (
            f"not a multiple of d_model = {D} ({got % D} more than one), as every matrix "
            f"and bias vector is. The count is {should}."
        )
    return None


# Shared by several exercises: the heads -------------------------------------------------------


def _split(x, H):
    B, T, D = x.shape
    return x.view(B, T, H, D // H).transpose(1, 2)  # (B, T, D) -> (B, H, T, Dk)


def _merge(x):
    B, H, T, Dk = x.shape
    return x.transpose(1, 2).reshape(B, T, H * Dk)  # (B, H, T, Dk) -> (B, T, D)


def _run(fn, *args, during):
    """``call``, naming an unfinished split_heads or merge_heads, with a tip for a crash."""
    unfinished = f"`{getattr(fn, '__name__', 'your function')}` calls a function that is not "
    unfinished += "written yet (split_heads or merge_heads?): finish 4.4 and 4.5 first."
    return call(fn, *args, during=during, tip=_crash_tip, unfinished=unfinished)


_PRODUCT = (
    "Tip: the shapes of a matrix product don't fit; in a @ b the last axis of a meets the "
    "second-to-last of b. Check the order (x @ w_q, weights @ v) and the axes you transposed "
    "(k.transpose(-2, -1))."
)
_TIPS = {  # words of an error -> its likely cause
    "view size is not compatible": "Tip: .view failed: after transpose(1, 2) the tensor is no "
    "longer contiguous in memory. Use .reshape(B, T, D), or .contiguous().view(B, T, D).",
    "mat1 and mat2 shapes": _PRODUCT,
    "Expected size for first two dimensions": _PRODUCT,
    "must match the size of tensor": "Tip: two tensors whose shapes don't line up were combined "
    "element by element (*, +, -); the products of attention are matrix products, @.",
    'positional arguments: "dim"': "Tip: softmax needs its axis: softmax(dim=-1), over the keys.",
    "'int' object has no attribute": "Tip: a number stands where a tensor belongs: check the "
    "order of the arguments, split_heads(x, n_heads).",
}


def _crash_tip(error: Exception) -> str | None:
    text = str(error)
    if isinstance(error, TypeError) and "float" in text and "int" in text:
        return (
            "Tip: a size was a float, such as d_model / n_heads = 4.0: sizes must be whole "
            "numbers, d_model // n_heads."
        )
    return next((tip for words, tip in _TIPS.items() if words in text), None)


def _judge(name, got, expected, mistakes=(), during="", shapes=None, weights=False) -> None:
    """``diagnose``, reading a wrong shape (``shapes`` names some) and a result off by a
    constant factor (for weights, rows that do not sum to 1 say more)."""
    scaled = None if weights else partial(_scaled, name, as_tensor(name, expected))
    settings = dict(during=during, weights=weights, explain=scaled, shapes=shapes or {})
    diagnose(name, got, expected, mistakes, **settings)


def _scaled(name: str, expected, got) -> str | None:
    """A message if ``got`` is the reference times a constant: a stray minus or scale factor."""
    e = expected.flatten()
    c = float(got.flatten() @ e / (e @ e)) if e.any() else 1.0
    if abs(c - 1) <= 1e-3 or abs(c) <= 1e-6 or not torch.allclose(got, c * expected, atol=1e-4):
        return None  # all zeros are not a scale: say where
    if abs(c + 1) < 1e-3:
        return f"`{name}` is the right values with the sign flipped: a stray minus?"
    return f"`{name}` is {c:.4g} times what it should be: a stray scale factor, or one missing?"


# The typical mistakes of the heads, named once for every exercise that can make them.
_SAY = {
    "axis": "the heads are cut along the wrong axis: reshape(B, H, T, Dk) gives each head whole "
    "positions, mixed up. Split the features: view(B, T, H, Dk).transpose(1, 2).",
    "no transpose": "the heads sit on axis 2, shape (B, T, H, Dk): add .transpose(1, 2) to bring "
    "them in front of the positions, (B, H, T, Dk).",
    "h-th": "each head got every h-th feature (view(B, T, Dk, H)): a head takes d_k consecutive "
    "features, view(B, T, H, Dk).",
    "not back": "the heads were not moved back behind the positions (merged without transposing "
    "back): transpose(1, 2) to (B, T, H, Dk), then reshape to (B, T, D).",
    "interleaved": "the features come out interleaved (d_k, then H): transpose(1, 2), not a "
    "permute that moves H last, puts head 1's d_k features first, then head 2's.",
    "flat heads": "the heads are concatenated along the features of each position, after "
    "transpose(1, 2): (B, T, H·d_k) = (B, T, d_model).",
    "w.T": "the weights were applied as x @ w.T (nn.Linear's convention); here they are the "
    "paper's W matrices of shape (d_model, d_model): x @ w_q.",
    "k q": "the scores are keys × queries (transposed): q @ k.transpose(-2, -1), so row i holds "
    "query i's scores.",
    "no W^O": "this is the concatenation of the heads: multiply it by W^O, which mixes them, "
    "output = concat @ w_o.",
    "dim": "the softmax runs over the {} (dim={}): each row of scores is normalised over the keys, "
    "dim=-1.",
    "values": "the weights were applied to {}: the values are x @ w_v.",
    "weights^T": "the values were weighted with the transposed weights: weights @ v_heads, each "
    "row of weights (one query) mixing the values.",
}


# 4.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("4.1", "Recall: why split the width?", correct="d")
def recall(answer_4_1):
    """Count the projection weights for h heads of width d_model/h, then for h heads of width
    d_model.

    h · d_model · (d_model/h) = d_model²: the same as one full-width head.

    (a) The softmax works on rows of any length; nothing limits a head to 64 dimensions, and
    a head never needs cutting for the softmax's sake. The reason is cost.

    (b) Full-width heads would not all be the same (they start from different random
    weights), and they would cost about h times as much as split ones, not the same.

    (c) The split adds no parameters: all the heads together hold the same projection weights
    as one head of width d_model, so each head has fewer of its own, not more.

    (d) h heads of width d_model/h need the same d_model x d_model projections and about the
    same arithmetic as one full-width head, so the extra views come almost free. Full-width
    heads would multiply the Q, K, V projections (and W^O's input) by h: h times the weights
    and the work, 8 times at h = 8.
    """


# 4.2 Apply: the weights of the paper's layer ---------------------------------------------------


@exercise("4.2", "Apply: count the weights")
def apply(total_weights, total_with_bias) -> str:
    """W^Q_i is d_model x d_k = 512 x 64, and there are 8 of them; the same for W^K_i and
    W^V_i.

    W^O is (h·d_v) x d_model = 512 x 512. Each of the four projections has a bias of 512
    numbers.
    """
    got_w = whole_count("total_weights", total_weights)
    got_b = whole_count("total_with_bias", total_with_bias)
    swapped = [(1_050_624, "the two are swapped: the count with biases is the larger.")]
    wrong_w = swapped * (got_b == 1_048_576) + [*_miscounts(512, 8, False).values()]
    _expect_count(got_w, 1_048_576, wrong_w, "`total_weights` =", 512, 64, biases=0)
    wrong_b = _miscounts(512, 8, True).values()
    _expect_count(got_b, 1_050_624, wrong_b, "`total_with_bias` =", 512, 64)
    return (
        "W^Q, W^K, W^V: 8 × (512 × 64) = 262,144 each; W^O: 512 × 512 = 262,144; in all "
        "4·512² = 1,048,576, and 1,050,624 with the four biases of 512."
    )


# 4.3 Extend --------------------------------------------------------------------------------------


@multiple_choice("4.3", "Extend: too many heads", correct="a")
def extend(answer_4_3):
    """Keep d_model = 512 and compute d_k for h = 8, 32 and 64.

    What can a dot product of two 8-dimensional vectors tell apart?

    (a) At d_model = 512, d_k is 16 at h = 32 and 8 at h = 64, and the paper's Table 3 (rows
    A) drops from 25.8 BLEU at h = 8 and 16 to 25.4 at h = 32. Why so narrow a head tells
    fewer relations apart is the written question below: answer it in your own words.

    (b) Each head does have its own projections, but of width d_model/h: together they stay
    4·d_model² (plus biases) however the width is split, so the parameters do not grow with h.

    (c) Each head does compute its own T x T scores, but over d_k = d_model/h dimensions: the
    score work h·T²·d_k stays T²·d_model whatever h is (section 4's table).

    (d) Each head runs its own softmax over its own keys, and its weights sum to 1 whatever
    the number of heads: no softmax is shared between heads.
    """


# 4.4 (lab L4.A) Split the heads ------------------------------------------------------------------


@exercise("4.4", "Lab L4.A: split the heads")
def split(split_heads) -> str:
    """d_k = D // n_heads; first give the last axis two axes, (B, T, H, Dk).

    x.view(B, T, n_heads, D // n_heads).transpose(1, 2)
    """
    g = torch.Generator().manual_seed(4)
    for (B, T, D), H in (((2, 5, 12), 3), ((1, 4, 8), 2)):
        x = torch.randn(B, T, D, generator=g)
        during = f"on x of shape {(B, T, D)} with n_heads = {H}"
        got = expect_returned("split_heads", _run(split_heads, x.clone(), H, during=during))
        merged = {(B * H, T, D // H): "the batch and head axes are merged: keep them apart."}
        got = expect_tensor("split_heads", got)
        _judge("split_heads(x)", got, _split(x, H), _split_mistakes(x, H), during, merged)
    return (
        "(B, T, D) -> view(B, T, H, Dk) -> transpose(1, 2) -> (B, H, T, Dk): head h holds "
        "features h·d_k .. (h+1)·d_k - 1 of every position."
    )


def _split_mistakes(x, H):
    B, T, D = x.shape
    by_position, no_transpose = x.reshape(B, H, T, D // H), x.reshape(B, T, H, D // H)
    every_hth = x.reshape(B, T, D // H, H).permute(0, 3, 1, 2)
    return [
        (by_position, _SAY["axis"]),
        (no_transpose, _SAY["no transpose"]),
        (every_hth, _SAY["h-th"]),
    ]


# 4.5 (lab L4.A) Merge the heads ------------------------------------------------------------------


@exercise("4.5", "Lab L4.A: merge the heads")
def merge(merge_heads) -> str:
    """Undo split_heads in reverse order: first the transpose, then the reshape.

    x.transpose(1, 2).reshape(B, T, H * Dk); .view fails after a transpose.
    """
    g = torch.Generator().manual_seed(5)
    for shape in ((2, 3, 5, 4), (1, 2, 4, 3)):
        heads = torch.randn(*shape, generator=g)
        during = f"on heads of shape {shape}"
        got = expect_returned("merge_heads", _run(merge_heads, heads.clone(), during=during))
        got = expect_tensor("merge_heads", got)
        _judge("merge_heads(heads)", got, _merge(heads), _merge_mistakes(heads), during)
    return (
        "(B, H, T, Dk) -> transpose(1, 2) -> reshape(B, T, H·Dk): the heads side by side, the "
        "exact inverse of split_heads."
    )


def _merge_mistakes(heads):
    """The merges gone wrong: the first two have the right shape."""
    B, H, T, Dk = heads.shape
    concatenate = "concatenate them, so d_model = H·d_k features come out."
    return [
        (heads.reshape(B, T, H * Dk), _SAY["not back"]),
        (heads.permute(0, 2, 3, 1).reshape(B, T, H * Dk), _SAY["interleaved"]),
        (heads.transpose(1, 2), "shape (B, T, H, Dk): now flatten the last two axes."),
        (heads.flatten(-2), _SAY["flat heads"]),
        (heads.mean(dim=1), f"the heads were averaged: {concatenate}"),
        (heads.sum(dim=1), f"the heads were added up: {concatenate}"),
    ]


# 4.6 (lab L4.A) The multi-head forward pass ------------------------------------------------------


@exercise("4.6", "Lab L4.A: the multi-head forward pass")
def forward_pass(multi_head_attention) -> str:
    """Follow the prompt's order: project with the three weights, split, attend in all heads at
    once, merge, then multiply by w_o.

    Scale by √d_k, the width of one head, not √d_model.

    Return (output, weights) with weights of shape (B, H, T, T).
    """
    g = torch.Generator().manual_seed(6)
    for (B, T, D), H in (((2, 5, 12), 3), ((1, 4, 8), 2)):
        x = torch.randn(B, T, D, generator=g, dtype=torch.float64)
        ws = [torch.randn(D, D, generator=g, dtype=torch.float64) / math.sqrt(D) for _ in range(4)]
        during, w_o = f"on x ({B}, {T}, {D}) with n_heads = {H}", ws[3]
        result = _run(multi_head_attention, x, *ws, H, during=during)
        result = expect_returned("multi_head_attention", result)
        output, weights = tensor_pair("multi_head_attention", result, during)
        ref, wrong = _stages(x, ws, H), _stage_mistakes(x, ws, H)
        swapped = [(ref["output"], "the pair is in the wrong order: return (output, weights).")]
        averaged = "(B, T, T) weights: return each head's, not their average."
        wrong_weights = [*swapped, (ref["weights"].mean(1), averaged), *wrong["weights"]]
        _judge("weights", weights, ref["weights"], wrong_weights, during, weights=True)
        heads = [(_merge(h) @ w_o, m) for h, m in wrong["heads"] if h.shape == ref["heads"].shape]
        concat = [(c @ w_o, m) for c, m in wrong["concat"] if c.shape == ref["concat"].shape]
        _judge("output", output, ref["output"], concat + heads + wrong["output"], during)
    return (
        "split, attend per head with 1/√d_k, merge, W^O: output (B, T, d_model) and per-head "
        "weights (B, H, T, T) agree with the reference."
    )


def _stages(x, ws, H) -> dict[str, torch.Tensor]:
    """The reference: every stage of multi-head self-attention on x (4.6 and 4.8), and the
    attention weights."""
    q, k, v = (x @ w for w in ws[:3])
    q_heads, k_heads, v_heads = _split(q, H), _split(k, H), _split(v, H)
    scores = q_heads @ k_heads.transpose(-2, -1) / math.sqrt(q_heads.shape[-1])  # (B, H, T, T)
    weights = attend(scores)
    heads = weights @ v_heads  # (B, H, T, Dk)
    concat = _merge(heads)
    output = concat @ ws[3]
    stages = (x, q, q_heads, scores, weights, heads, concat, output)
    names = ("x", "q", "q_heads", "scores", "weights", "heads", "concat", "output")
    return dict(zip(names, stages, strict=True))


def _score_mistakes(x, ws, H) -> list:
    """Scaled scores (B, H, T, T) gone wrong: the heads split along the wrong axis, the scale,
    the weights applied as x @ w.T, keys and queries swapped, queries twice."""
    D, Dk = x.shape[-1], x.shape[-1] // H
    q, k = (_split(x @ w, H) for w in ws[:2])
    raw, root = q @ k.mT, math.sqrt(Dk)
    q_p, k_p = ((x @ w).reshape(q.shape) for w in ws[:2])  # whole positions per head
    q_t, k_t = (_split(x @ w.T, H) for w in ws[:2])  # nn.Linear's convention, x @ w.T
    return [
        (q_p @ k_p.mT / root, _SAY["axis"]),
        (
            raw / math.sqrt(D),
            f"the scores are divided by √d_model = √{D}; each head compares "
            f"d_k-dimensional vectors, so divide by √d_k = √{Dk}.",
        ),
        (raw, f"the scores are not scaled: divide q_heads @ k_headsᵀ by √d_k = √{Dk}."),
        (raw / Dk, f"you divided by d_k = {Dk}; divide by its square root, √d_k."),
        (raw * root, "you multiplied by √d_k; divide by it."),
        (q_t @ k_t.mT / root, _SAY["w.T"]),
        (k @ q.mT / root, _SAY["k q"]),
        (
            q @ q.mT / root,
            "the scores compare x @ w_q with x @ w_q: compare the queries with the keys, x @ w_k.",
        ),
    ]


# 4.7 (lab L4.A) The parameter comparison ---------------------------------------------------------

_WRONG_THREE = {
    12_288: "three maps of 64 x 64 weights, but nn.Linear(64, 64) also has 64 biases: 4,160 each.",
    4_160: "that is one linear map; there are three (Q, K and V).",
    16_640: "that is the four-map module; the comparison starts from three maps.",
}
_WRONG_FOUR = {
    16_384: "nn.Linear has biases by default: four maps of 64·64 + 64 = 4,160.",
    12_480: "the module also has its output map W^O: four linear maps, not three.",
    66_560: "the 4 heads share the 64 x 64 maps (16 features each): the module has four maps "
    "of 4,160, not four per head.",
}


@exercise("4.7", "Lab L4.A: are the counts almost identical?")
def comparison(params_three_linears, params_four_heads) -> str:
    """Count one of the linear maps first: a 64 → 64 map holds a weight matrix and a bias
    vector.

    The multi-head module has four such maps: Q, K, V and the output map.

    One nn.Linear(64, 64) holds 64·64 weights and 64 biases; multiply by the number of maps.
    """
    three = whole_count("params_three_linears", params_three_linears)
    four = whole_count("params_four_heads", params_four_heads)
    swapped = [(16_640, "the two are swapped: the module with W^O is the larger.")]
    wrong = swapped * (four == 12_480) + list(_WRONG_THREE.items())
    _expect_count(three, 12_480, wrong, "`params_three_linears` =", 64, maps=3, biases=3)
    _expect_count(four, 16_640, _WRONG_FOUR.items(), "`params_four_heads` =", 64)
    return (
        "12,480 vs 16,640: a difference of exactly one 64 x 64 map with bias (4,160, +33%), W^O. "
        "Splitting into heads itself adds nothing."
    )


# 4.8 (lab L4.B) Every stage, its shape and its values --------------------------------------------

_FORMULAS = {  # what each stage should hold, in the lesson's words
    "x": "the input x itself",
    "q": "x @ w_q",
    "q_heads": "split_heads(q, n_heads), (B, H, T, d_k)",
    "scores": "q_heads @ k_heads.transpose(-2, -1) / √d_k, before the softmax",
    "heads": "softmax(scores, dim=-1) @ v_heads",
    "concat": "merge_heads(heads), (B, T, d_model)",
    "output": "concat @ w_o",
}


@exercise("4.8", "Lab L4.B: every stage, its shape and its values")
def walk(walk_stages) -> str:
    """Follow x through the steps of 4.6, keeping each intermediate tensor under its stage's
    name: project, split (the keys and values too), score, weight the values, merge, project.

    "scores" is before the softmax, divided by √d_k; "heads" is the weights times the values.
    Return the tensors themselves, not their shapes: the check reads both.

    return dict(x=x, q=q, q_heads=q_heads, scores=scores, heads=heads, concat=concat,
    output=output), with q = x @ w_q and heads = scores.softmax(dim=-1) @ v_heads.
    """
    g = torch.Generator().manual_seed(8)
    shapes = {}
    for (B, T, D), H in (((2, 5, 12), 3), ((2, 10, 64), 8), ((2, 10, 512), 8)):
        x = torch.randn(B, T, D, generator=g, dtype=torch.float64)
        ws = [torch.randn(D, D, generator=g, dtype=torch.float64) / math.sqrt(D) for _ in range(4)]
        during = f"on x ({B}, {T}, {D}) with n_heads = {H}"
        got = expect_returned("walk_stages", _run(walk_stages, x.clone(), *ws, H, during=during))
        ref, mistakes = _stages(x, ws, H), _stage_mistakes(x, ws, H)
        per_head = {"scores": {(B, T, T): "one T x T score matrix per head: (B, H, T, T)."}}
        for stage, formula in _FORMULAS.items():
            said = f"{during}, stage {stage!r} ({formula})"
            value = _stage_tensor(stage, got)
            _judge(stage, value, ref[stage], mistakes[stage], said, per_head.get(stage))
        shapes[D] = {stage: tuple(got[stage].shape) for stage in ("x", "q_heads", "scores")}
    small, large = shapes[64], shapes[512]
    return (
        f"{small['x']} -> {small['q_heads']} per head -> {small['scores']} scores -> back to "
        f"{small['x']}; at d_model = 512 the heads are {large['q_heads']}, d_k = 64. "
        "Every stage's values agree with the reference too."
    )


def _stage_tensor(stage, got) -> torch.Tensor:
    """The stage's tensor in the learner's dict; a missing stage, or a shape stored in its
    place, is named."""
    if not isinstance(got, dict):
        raise Mismatch(
            f"walk_stages should return a dict stage -> tensor; got {type(got).__name__}", TYPE
        )
    if missing := [s for s in _FORMULAS if s not in got]:
        listed, add = ", ".join(map(repr, missing)), ", ".join(f"{s}={s}" for s in missing)
        raise Mismatch(f"the dict lacks the stage(s) {listed}: add {add}.", MISTAKE)
    value = got[stage]
    if isinstance(value, tuple) and all(isinstance(n, int) for n in value):  # torch.Size too
        raise Mismatch(f"`{stage}` holds a shape, {tuple(value)}: store the tensor itself.", TYPE)
    if not isinstance(value, torch.Tensor):
        raise Mismatch(f"`{stage}` should be a torch tensor; got {type(value).__name__}", TYPE)
    return value


def _stage_mistakes(x, ws, H) -> dict[str, list]:
    """What typical mistakes give at each stage (and the weights), every earlier one right."""
    ref, (w_q, w_k, w_v, w_o), v = _stages(x, ws, H), ws, _split(x @ ws[2], H)
    scaled, weights, concat = ref["scores"], ref["weights"], ref["concat"]
    axes = {1: "heads", 0: "batch"}  # the axes a 4-D softmax adds to the shared family's
    wrong_weights = [
        *[(attend(s), m) for s, m in _score_mistakes(x, ws, H)],
        *softmax_mistakes(scaled),
        *softmax_confusions(scaled),
        *[(attend(scaled, axis=a), _SAY["dim"].format(what, a)) for a, what in axes.items()],
    ]
    values = {"x @ w_q": x @ w_q, "x @ w_k": x @ w_k, "x itself (not projected)": x}
    return {
        "x": [],
        "q": [
            (x @ w_q.T, "q is x @ w_q.T (nn.Linear's convention); here q = x @ w_q."),
            (x, "q is x itself: project it first, q = x @ w_q."),
            (x @ w_k, "that is x @ w_k, the keys: q = x @ w_q."),
            (x @ w_v, "that is x @ w_v, the values: q = x @ w_q."),
        ],
        "q_heads": [*_split_mistakes(ref["q"], H), (_split(x, H), "split q = x @ w_q, not x.")],
        "scores": [
            (weights, "these are the weights, after the softmax: store the scores before it."),
            *_score_mistakes(x, ws, H),
        ],
        "weights": wrong_weights,
        "heads": [
            (scaled @ v, "there is no softmax: the heads are softmax(scores, dim=-1) @ v."),
            (weights, "those are the weights; multiplying them by v_heads gives (B, H, T, Dk)."),
            *[(w @ v, f"wrong weights @ v_heads: {m}") for w, m in wrong_weights],
            *[(weights @ _split(u, H), _SAY["values"].format(name)) for name, u in values.items()],
            (weights.mT @ v, _SAY["weights^T"]),
        ],
        "concat": _merge_mistakes(ref["heads"]),
        "output": [
            (concat, _SAY["no W^O"]),
            (concat @ w_o.T, "W^O was applied as concat @ w_o.T: multiply by w_o itself."),
            (concat @ w_q, "the output used w_q: it is concat @ w_o."),
            (concat @ w_v, "the output used w_v: it is concat @ w_o."),
        ],
    }


# 4.9 (lab L4.C) A parameter-count formula --------------------------------------------------------


@exercise("4.9", "Lab L4.C: a parameter-count formula", forbidden=("torch.nn.MultiheadAttention",))
def count_function(mha_parameter_count) -> str:
    """Does the number of heads change the size of any projection? Section 4's table says.

    Four d_model x d_model matrices, whatever n_heads is; with bias, each of the four
    projections adds d_model numbers.

    4 * (d_model * d_model + (d_model if bias else 0))
    """
    counts, fn = {}, mha_parameter_count
    cases = [*itertools.product((64, 512), [8], [True, False])]
    for D, H, bias in cases + [(12, 3, True), (12, 4, False), (12, 4, True)]:
        during = f"for d_model = {D}, n_heads = {H}, bias = {bias}"
        got = expect_returned("mha_parameter_count", call(fn, D, H, bias, during=during))
        counts[D, H, bias] = whole_count(f"mha_parameter_count({D}, {H}, {bias})", got)
    for D, H, bias in counts:  # the first wrong count is named
        said = f"for d_model = {D}, n_heads = {H}, bias = {bias} it returned"
        right, wrong = _right_count(D, H, bias), _explaining(counts, (D, H, bias))
        _expect_count(counts[D, H, bias], right, wrong, said, D, biases=4 * bias)
    return (
        "16,640 and 16,384 at d_model = 64; 1,050,624 and 1,048,576 at d_model = 512, "
        "whatever the number of heads."
    )


def _explaining(counts, case) -> list[tuple[int, str]]:
    """The miscounts of ``case``: first a number written in (the same count for every d_model),
    then those that give every count the function returned, then the rest."""

    def gives(miscount, other) -> int:  # where a miscount does not apply, the right count
        return _miscounts(*other).get(miscount, (_right_count(*other),))[0]

    mine = _miscounts(*case)
    fits = {i: all(counts[c] == gives(i, c) for c in counts) for i in mine}
    pairs = [mine[i] for i in sorted(mine, key=lambda i: not fits[i])]
    if len({n for c, n in counts.items() if c[2] == case[2]}) == 1:
        pairs.insert(
            0, (counts[case], "the same count as for every other d_model: compute it from d_model.")
        )
    return pairs
