"""Checks for lesson 4, multi-head attention (paper §3.2.2).

Functions the learner writes (split_heads, merge_heads, a multi-head forward pass, the walk
through every stage) are run on seeded inputs whose B, T, H and d_k all differ, so that each
typical mistake (heads cut along the wrong axis, no transpose before merging, no W^O,
√d_model instead of √d_k, the keys or values taken from the wrong projection, ...) gives a
result of its own; the message names the mistake whose result the answer reproduces. The
walk (4.8) is compared stage by stage, so the first wrong stage is the one named. Functions
return torch tensors (the course's policy for lessons 1-7).

Counts are exact integers, compared with the counts of the typical miscounts; a count that
matches none is read as whole weight matrices and bias vectors, so that the message says
which of them is miscounted.
"""

import itertools
import math

import torch

from ._core import DIFFERENCE, MISTAKE, SHAPE, TYPE, Mismatch, call, exercise, multiple_choice
from ._mistakes import (
    attend,
    expect_count,
    expect_returned,
    expect_tensor,
    shape_mistake,
    tensor_pair,
)
from ._tensors import close, difference, match, one_number, row_sums, whole_number

# Shared by several exercises -------------------------------------------------------------------

_PARAMETERS = "a count of parameters is a whole number"  # why a fraction is wrong


def _whole(name: str, value) -> int:
    """The count as an int; a fraction is named as the likely slip, a / for a *."""
    number = float(one_number(name, value, finite=False))
    if math.isfinite(number) and number != int(number):
        raise Mismatch(
            f"`{name}` = {number:,.10g} is not a whole number: a count only multiplies and adds "
            "whole sizes, so a / probably stands where a * belongs.",
            MISTAKE,
        )
    return whole_number(name, value, _PARAMETERS)


def _right_count(D: int, H: int, bias: bool) -> int:
    return 4 * D * D + (4 * D if bias else 0)


# The typical miscounts of a (d_model, n_heads) multi-head attention, as formulas of
# (D, H, bias), with their diagnosis (4.2 and 4.9). A formula gives None where it does not
# apply; 4.9 names the one that reproduces every count the learner's function gives.
_MISCOUNTS = (
    (
        lambda D, H, b: 3 * D * D + (3 * D if b else 0),
        "that is W^Q, W^K and W^V only: add the output projection W^O, another d_model x d_model.",
    ),
    (
        lambda D, H, b: 4 * H * D * D + (4 * H * D if b else 0),
        "that gives every head full-width d_model x d_model projections; each head projects "
        "to d_k = d_model/h, so the h heads together hold one d_model x d_model matrix per "
        "projection.",
    ),
    (
        lambda D, H, b: 4 * D * (D // H) + (4 * (D // H) if b else 0),
        "that is one head's share; all h heads together hold d_model x d_model per projection.",
    ),
    (lambda D, H, b: D * D, "that is one matrix: there are four, W^Q, W^K, W^V and W^O."),
    (
        lambda D, H, b: 4 * D * D if b else None,
        "bias=True: each of the four projections also has a bias vector of d_model numbers.",
    ),
    (
        lambda D, H, b: None if b else 4 * D * D + 4 * D,
        "bias=False: count the weights only, 4·d_model².",
    ),
    (
        lambda D, H, b: 4 * D * D + 4 if b else None,
        "a bias is a vector of d_model numbers per projection, not one number.",
    ),
    (
        lambda D, H, b: 4 * D * D + D if b else None,
        "each of the four projections has its own bias vector: 4·d_model biases.",
    ),
    (
        lambda D, H, b: 4 * D * D + 3 * D if b else None,
        "W^O has a bias too: 4·d_model biases in all.",
    ),
    (
        lambda D, H, b: 4 * D * D + 4 * (D // H) if b else None,
        "a bias has one number per output feature: d_model per projection, not d_k.",
    ),
    (
        lambda D, H, b: 4 * D * D + 4 * H if b else None,
        "the biases are counted 4·n_heads times: a bias has one number per output feature, "
        "d_model per projection, whatever the number of heads.",
    ),
    (
        lambda D, H, b: 4 * D * D + 4 * H * D if b else None,
        "the biases are counted once per projection (d_model each), not once per head.",
    ),
    (
        lambda D, H, b: 4 * (D + 1) ** 2 if b else None,
        "4·(d_model + 1)²: a bias adds one vector of d_model numbers to each d_model x d_model "
        "matrix, 4·(d_model² + d_model).",
    ),
)


def _parts(count: int, D: int, Dk: int | None = None) -> str | None:
    """``count`` as whole weight matrices d_model x d_model (or heads' slices d_model x d_k)
    and bias vectors of d_model, if it is made of a few of them: what the learner counted."""
    for matrices, biases in itertools.product(range(9), range(9)):
        if matrices * D * D + biases * D == count and (matrices, biases) != (0, 0):
            return (
                f"that is {matrices} weight matrices of {D} x {D} and {biases} bias vectors of {D}"
            )
    if Dk:
        for slices, biases in itertools.product(range(1, 8 * D // Dk + 1), range(9)):
            if slices * D * Dk + biases * D == count and slices % (D // Dk):
                return (
                    f"that is {slices} heads' slices of {D} x {Dk} (d_model x d_k) and {biases} "
                    f"bias vectors of {D}; the {D // Dk} heads' slices of a projection make one "
                    f"{D} x {D} matrix"
                )
    return None


def _expect_count(got, right, miscounts, said, D, Dk=None, *, biases: int = 4, maps: int = 4):
    """``expect_count``, naming also a count made of the wrong number of matrices or biases
    (``maps`` weight matrices and ``biases`` bias vectors are right), or a negative one."""
    if got == right:
        return
    if got in miscounts:
        expect_count(got, right, miscounts, said)
    parts = _parts(got, D, Dk)
    should = f"{maps} matrices of {D} x {D}" + (
        f" and {biases} bias vectors of {D}" if biases else ", no bias"
    )
    if got < 0:
        raise Mismatch(f"{said} {got:,}: a count is never negative.", MISTAKE)
    if parts:
        raise Mismatch(f"{said} {got:,}: {parts}; the count is {should}.", MISTAKE)
    if got % D:
        raise Mismatch(
            f"{said} {got:,}, which is not a multiple of d_model = {D} ({got % D} more than "
            f"one): every weight matrix and bias vector holds a multiple of {D} numbers, so "
            f"something else was counted. The count is {should}.",
            MISTAKE,
        )
    expect_count(got, right, miscounts, said, f"expected {right:,}: {should}.")


def _miscounts(D: int, H: int, bias: bool) -> dict[int, str]:
    """The counts the typical miscounts give for (D, H, bias), with their diagnosis (the
    first, where two give the same count)."""
    found: dict[int, str] = {}
    for formula, message in _MISCOUNTS:
        count = formula(D, H, bias)
        if count is not None and count != _right_count(D, H, bias):
            found.setdefault(count, message)
    return found


# The heads: the reference split and merge, and how 4.4-4.8 call the learner's functions.


def _split(x, H):
    B, T, D = x.shape
    return x.view(B, T, H, D // H).transpose(1, 2)  # (B, T, D) -> (B, H, T, Dk)


def _merge(x):
    B, H, T, Dk = x.shape
    return x.transpose(1, 2).reshape(B, T, H * Dk)  # (B, H, T, Dk) -> (B, T, D)


def _split_along_positions(x, H):
    """The typical wrong split: (B, T, D) read as (B, H, T, Dk), whole positions per head."""
    B, T, D = x.shape
    return x.reshape(B, H, T, D // H)


def _merge_without_transpose(x):
    """The typical wrong merge: (B, H, T, Dk) read as (B, T, H·Dk), positions mixed up."""
    B, H, T, Dk = x.shape
    return x.reshape(B, T, H * Dk)


_UNFINISHED = (
    "calls a function that is not written yet (split_heads or merge_heads?): finish exercises "
    "4.4 and 4.5 first, or write those steps inline."
)


def _run(fn, *args, during):
    """``call``, with a diagnosis for the crashes typical of reshaping into heads.

    A stub is "not done"; when ``fn`` is finished but calls an unfinished function
    (split_heads, merge_heads), the message names that one. A crash of ``.view`` after a
    transpose, or of a float size, gets a message of its own instead of the generic one: the
    tip raises it.
    """

    def reshaping(error) -> None:
        text = str(error)
        if "view size is not compatible" in text:
            raise Mismatch(
                f"{during}, .view failed: after transpose(1, 2) the tensor is no longer "
                "contiguous in memory. Use .reshape(B, T, D), or .contiguous().view(B, T, D).",
                MISTAKE,
            ) from None
        if isinstance(error, TypeError) and "float" in text and "int" in text:
            raise Mismatch(
                f"{during}, a size was a float, such as d_model / n_heads = 4.0: sizes must be "
                "whole numbers, d_model // n_heads.",
                MISTAKE,
            ) from None
        return _crash_tip(text)  # any other crash: the generic message, with a tip if known

    name = getattr(fn, "__name__", "your function")
    unfinished = f"`{name}` {_UNFINISHED}"
    return call(fn, *args, during=during, tip=reshaping, unfinished=unfinished)


def _crash_tip(text: str) -> str | None:
    """A sentence naming the likely cause of a crash of the learner's multi-head code."""
    if "mat1 and mat2 shapes" in text or "Expected size for first two dimensions" in text:
        return (
            "Tip: the shapes of a matrix product don't fit; in a @ b the last axis of a meets "
            "the second-to-last of b. Check the order (x @ w_q, weights @ v) and the axes you "
            "transposed (k.transpose(-2, -1))."
        )
    if "must match the size of tensor" in text:
        return (
            "Tip: two tensors whose shapes don't line up were combined element by element (*, "
            "+, -); the products of attention are matrix products, @."
        )
    if "missing 1 required positional arguments" in text and "dim" in text:
        return "Tip: softmax needs its axis: softmax(dim=-1), over the keys."
    if "'int' object has no attribute" in text:
        return (
            "Tip: a number stands where a tensor belongs: check the order of the arguments, "
            "split_heads(x, n_heads)."
        )
    return None


def _heads_tensor(name, result, during):
    """The learner's result if it is a torch tensor (functions return tensors in lessons 1-7)."""
    try:
        return expect_tensor(name, expect_returned(name, result))
    except Mismatch as e:
        if e.kind != TYPE:
            raise Mismatch(f"{during}, {e}", e.kind) from None
        raise Mismatch(
            f"{during}, {e}: keep it a tensor (no .numpy() or .tolist()).", TYPE
        ) from None


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
    got_w = _whole("total_weights", total_weights)
    got_b = _whole("total_with_bias", total_with_bias)
    right_w, right_b = 4 * 512 * 512, 4 * 512 * 512 + 4 * 512
    if (got_w, got_b) == (right_b, right_w):
        raise Mismatch("the two are swapped: the count with biases is the larger.", MISTAKE)
    _expect_count(got_w, right_w, _miscounts(512, 8, False), "`total_weights` =", 512, 64, biases=0)
    _expect_count(got_b, right_b, _miscounts(512, 8, True), "`total_with_bias` =", 512, 64)
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
    for shape, H in (((2, 5, 12), 3), ((1, 4, 8), 2)):
        x = torch.randn(*shape, generator=g)
        B, T, D = shape
        during = f"on x of shape {shape} with n_heads = {H}"
        got = _heads_tensor("split_heads", _run(split_heads, x.clone(), H, during=during), during)
        expected = _split(x, H)
        if got.shape != expected.shape:
            message = match(got, _split_mistakes(x, H))
            if message is None and tuple(got.shape) == (B * H, T, D // H):
                message = (
                    "the batch and head axes are merged into one: keep them apart, (B, H, T, Dk)."
                )
            if message is None:
                _wrong_shape(got, expected, "B, H, T, Dk", during)
            raise Mismatch(f"{during}: {message}", MISTAKE)
        if not close(got, expected):
            message = match(got, _split_mistakes(x, H))
            if message:
                raise Mismatch(f"{during}: {message}", MISTAKE)
            _differs("split_heads(x)", got, expected, during, "x.view(B, T, H, Dk).transpose(1, 2)")
    return (
        "(B, T, D) -> view(B, T, H, Dk) -> transpose(1, 2) -> (B, H, T, Dk): head h holds "
        "features h·d_k .. (h+1)·d_k - 1 of every position."
    )


def _wrong_shape(got, expected, letters: str, during: str, what: str = "") -> None:
    """A Mismatch for a tensor of the wrong shape: the axes in the wrong order (named by their
    letters, when the sizes tell them apart), or what else the shape most likely means."""
    shape, want, names = tuple(got.shape), tuple(expected.shape), letters.split(", ")
    said = f"{during}: {what}" if what else f"{during}: "
    if sorted(shape) == sorted(want) and len(set(want)) == len(want):
        order = ", ".join(names[want.index(n)] for n in shape)
        raise Mismatch(
            f"{said}the axes are in the order ({order}), shape {shape}; they should be "
            f"({letters}) = {want}: check which axes your transpose or permute swaps.",
            MISTAKE,
        )
    likely = shape_mistake(shape, want)
    message = f"{said}expected shape ({letters}) = {want}; got {shape}"
    raise Mismatch(f"{message}: {likely}" if likely else message, MISTAKE if likely else SHAPE)


def _split_mistakes(x, H):
    B, T, D = x.shape
    Dk = D // H
    return [
        (
            _split_along_positions(x, H),
            "the heads are cut along the wrong axis: reshape(B, H, T, Dk) slices the flat "
            "memory into H blocks of T·d_k numbers, so each head gets whole positions, mixed "
            "up. Use view(B, T, H, Dk).transpose(1, 2).",
        ),
        (
            x.reshape(B, T, H, Dk),
            "the heads sit on axis 2, shape (B, T, H, Dk): add .transpose(1, 2) to bring them "
            "in front of the positions, (B, H, T, Dk).",
        ),
        (
            x.reshape(B, T, Dk, H).permute(0, 3, 1, 2),
            "each head got every h-th feature (view(B, T, Dk, H)): a head takes d_k "
            "consecutive features, view(B, T, H, Dk).",
        ),
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
        got = _heads_tensor("merge_heads", _run(merge_heads, heads.clone(), during=during), during)
        message = match(got, _merge_mistakes(heads))
        if message:
            raise Mismatch(f"{during}: {message}", MISTAKE)
        expected = _merge(heads)
        if got.shape != expected.shape:
            _wrong_shape(got, expected, "B, T, D", during)
        if not close(got, expected):
            _differs(
                "merge_heads(heads)", got, expected, during, "x.transpose(1, 2).reshape(B, T, H·Dk)"
            )
    return (
        "(B, H, T, Dk) -> transpose(1, 2) -> reshape(B, T, H·Dk): the heads side by side, the "
        "exact inverse of split_heads."
    )


def _merge_mistakes(heads):
    B, H, T, Dk = heads.shape
    return [
        (
            _merge_without_transpose(heads),
            "the heads were not moved back behind the positions: transpose(1, 2) to "
            "(B, T, H, Dk) first, then reshape to (B, T, D). Without it, rows of different "
            "positions get glued together.",
        ),
        (
            heads.permute(0, 2, 3, 1).reshape(B, T, H * Dk),
            "the features come out interleaved (d_k, then H): the concatenation puts all of "
            "head 1's d_k features first, then head 2's: transpose(1, 2), not a permute that "
            "moves H last.",
        ),
        (
            heads.transpose(1, 2),
            "shape (B, T, H, Dk): now flatten the last two axes, reshape(B, T, H·Dk).",
        ),
        (
            heads.mean(dim=1),
            "the heads were averaged: concatenate them, so d_model = H·d_k features come out.",
        ),
        (
            heads.sum(dim=1),
            "the heads were added up: concatenate them, so d_model = H·d_k features come out.",
        ),
        *_reordered(heads),
    ]


def _reordered(heads) -> list:
    """(B, H, T, Dk) permuted to any other order of its axes, then reshaped to (B, T, H·Dk)."""
    B, H, T, Dk = heads.shape
    letters, right = ("B", "H", "T", "Dk"), _merge(heads)
    found = []
    for order in itertools.permutations(range(4)):
        merged = heads.permute(order).reshape(B, T, H * Dk)
        if order not in ((0, 1, 2, 3), (0, 2, 3, 1)) and not torch.equal(merged, right):
            axes = ", ".join(letters[i] for i in order)
            found.append(
                (
                    merged,
                    f"before the reshape the axes were in the order ({axes}); transpose(1, 2) "
                    "gives (B, T, H, Dk), which reshape(B, T, H·Dk) flattens head by head.",
                )
            )
    return found


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
        _compare_mha(multi_head_attention, x, ws, H, f"on x ({B}, {T}, {D}) with n_heads = {H}")
    return (
        "split, attend per head with 1/√d_k, merge, W^O: output (B, T, d_model) and per-head "
        "weights (B, H, T, T) agree with the reference."
    )


def _heads(x, ws, H, split=_split):
    """The queries, keys and values of every head, (B, H, T, Dk) each: x @ w, then split."""
    return [split(x @ w, H) for w in ws[:3]]


def _compare_mha(fn, x, ws, H, during):
    result = expect_returned("multi_head_attention", _run(fn, x, *ws, H, during=during))
    output, weights = tensor_pair("multi_head_attention", result, during)
    B, T, D = x.shape
    Dk, w_o = D // H, ws[3]
    q, k, v = _heads(x, ws, H)
    scores = q @ k.transpose(-2, -1)  # (B, H, T, T)
    expected_w = attend(scores / math.sqrt(Dk))
    expected_out = _merge(expected_w @ v) @ w_o
    if (tuple(output.shape), tuple(weights.shape)) == ((B, H, T, T), (B, T, D)):
        raise Mismatch(
            f"{during}: the pair is in the wrong order: return (output, weights), the output "
            "first.",
            MISTAKE,
        )
    if tuple(weights.shape) == (B, T, T):
        raise Mismatch(
            f"{during}: the weights have shape (B, T, T) = {tuple(weights.shape)}: return every "
            "head's weights, (B, H, T, T), not their average.",
            MISTAKE,
        )
    if weights.shape != expected_w.shape:
        _wrong_shape(weights, expected_w, "B, H, T, T", during, "the weights: ")
    if not close(weights, expected_w):
        mistakes = _weight_mistakes(x, ws, H, scores)
        message = match(weights, mistakes) or row_sums("weights", weights)
        if message:
            raise Mismatch(f"{during}: {message}", MISTAKE)
        _wrong_scale(weights, scores, Dk, during)
        _differs(
            "weights", weights, expected_w, during, "softmax(q_heads @ k_headsᵀ / √d_k, dim=-1)"
        )
    if output.shape != expected_out.shape:
        _wrong_shape(output, expected_out, "B, T, d_model", during, "the output: ")
    if not close(output, expected_out):
        message = match(output, _output_mistakes(x, ws, H, expected_w))
        if message:
            raise Mismatch(f"{during}: {message}", MISTAKE)
        _differs("output", output, expected_out, during)
    return output, weights


def _weight_mistakes(x, ws, H, scores):
    """Weights (B, H, T, T) from wrong scores (split, scale, vectors compared, weight
    convention) or a wrong softmax of the right ones."""
    scaled = scores / math.sqrt(x.shape[-1] // H)
    wrong_scores = [(attend(s), message) for s, message in _score_mistakes(x, ws, H)]
    return [*wrong_scores, *_softmax_mistakes(scaled)]


def _score_mistakes(x, ws, H) -> list:
    """Scaled scores (B, H, T, T) gone wrong: the heads split along the wrong axis, the scale,
    the vectors compared, the weights applied as x @ w.T."""
    D, Dk = x.shape[-1], x.shape[-1] // H
    q, k, _ = _heads(x, ws, H)
    raw = q @ k.transpose(-2, -1)
    q_p, k_p, _ = _heads(x, ws, H, split=_split_along_positions)
    q_t, k_t, _ = _heads(x, [w.T for w in ws], H)  # nn.Linear's convention, x @ w.T
    mistakes = [
        (
            q_p @ k_p.transpose(-2, -1) / math.sqrt(Dk),
            "the heads are cut along the wrong axis: view(B, H, T, Dk) gives each head whole "
            "positions. Split the features: view(B, T, H, Dk).transpose(1, 2).",
        ),
        (
            raw / math.sqrt(D),
            f"the scores are divided by √d_model = √{D}; each head compares d_k-dimensional "
            f"vectors, so divide by √d_k = √{Dk}.",
        ),
        (raw, f"the scores are not scaled: divide q_heads @ k_headsᵀ by √d_k = √{Dk}."),
        (raw / Dk, f"you divided by d_k = {Dk}; divide by its square root, √d_k."),
        (raw * math.sqrt(Dk), "you multiplied by √d_k; divide by it."),
        (
            q_t @ k_t.transpose(-2, -1) / math.sqrt(Dk),
            "the weights were applied as x @ w.T (nn.Linear's convention); here they are the "
            "paper's W matrices of shape (d_model, d_model): x @ w_q.",
        ),
        (
            k @ q.transpose(-2, -1) / math.sqrt(Dk),
            "the scores are keys × queries (transposed): q @ k.transpose(-2, -1), so row i holds "
            "query i's scores.",
        ),
    ]
    vectors = {"x @ w_q": x @ ws[0], "x @ w_k": x @ ws[1], "x @ w_v": x @ ws[2], "x itself": x}
    for (q_name, q_src), (k_name, k_src) in itertools.product(vectors.items(), repeat=2):
        if (q_name, k_name) != ("x @ w_q", "x @ w_k"):
            wrong = _split(q_src, H) @ _split(k_src, H).transpose(-2, -1) / math.sqrt(Dk)
            message = (
                f"the scores compare {_named(q_name)} with {_named(k_name)}: they compare the "
                "queries x @ w_q with the keys x @ w_k."
            )
            mistakes.append((wrong, message))
    return mistakes


def _named(vectors: str) -> str:
    return "x itself (not projected)" if vectors == "x itself" else vectors


def _softmax_mistakes(scaled) -> list:
    """Weights from the right scaled scores (B, H, T, T) with the softmax gone wrong."""
    return [
        (
            attend(scaled, axis=-2),
            "the softmax runs over the queries (dim=-2): each row, one query, must sum to 1 "
            "over the keys, dim=-1.",
        ),
        (
            attend(scaled, axis=1),
            "the softmax runs over the heads (dim=1): each head's row of scores is normalised "
            "over the keys, dim=-1.",
        ),
        (
            attend(scaled, axis=0),
            "the softmax runs over the batch (dim=0): each row of scores is normalised over the "
            "keys, dim=-1.",
        ),
        (
            scaled.log_softmax(-1),
            "these are log-probabilities (log_softmax): the weights are softmax(dim=-1).",
        ),
        (
            scaled,
            "these are the scaled scores, before the softmax: the weights are their softmax "
            "over the keys (dim=-1), each row summing to 1.",
        ),
        (scaled.exp(), "these are e^s, not yet divided by their row's sum: use softmax(dim=-1)."),
    ]


def _wrong_scale(weights, raw, Dk, during) -> None:
    """A Mismatch if the weights are a softmax of the raw scores divided by the wrong number."""
    c = _softmax_scale(weights, raw)
    if c is not None and abs(c - math.sqrt(Dk)) > 1e-3 * math.sqrt(Dk):
        raise Mismatch(
            f"{during}: the weights are softmax(QKᵀ / {c:.4g}); the scale is √d_k = "
            f"{math.sqrt(Dk):.4g}, d_k = {Dk} being the width of one head.",
            MISTAKE,
        )


def _scores_scale(scores, expected, Dk, during) -> None:
    """A Mismatch if the scores are QKᵀ divided by another number than √d_k."""
    factor = _factor(scores, expected)
    if factor is not None and factor > 0:
        raise Mismatch(
            f"{during}, stage 'scores': the scores are QKᵀ / {math.sqrt(Dk) / factor:.4g}; "
            f"divide by √d_k = {math.sqrt(Dk):.4g}, d_k = {Dk} being the width of one head.",
            MISTAKE,
        )


def _softmax_scale(weights, scores) -> float | None:
    """The c with weights = softmax(scores / c) over the last axis, if there is one."""
    ones = torch.ones(weights.shape[:-1], dtype=weights.dtype)
    if (weights <= 0).any() or not torch.allclose(weights.sum(-1), ones, atol=1e-4):
        return None
    logs = weights.log() - weights.log().mean(-1, keepdim=True)
    centred = scores - scores.mean(-1, keepdim=True)
    inverse = float((logs * centred).sum() / (centred * centred).sum())
    if inverse <= 0 or not torch.allclose(logs, centred * inverse, atol=1e-3):
        return None
    return 1 / inverse


def _output_mistakes(x, ws, H, weights):
    """Outputs (B, T, d_model) from the right weights (B, H, T, T) applied to the wrong vectors,
    or heads merged or mixed wrongly."""
    q, k, v = _heads(x, ws, H)
    heads, w_o = weights @ v, ws[3]
    concat = _merge(heads)
    B, _, T, Dk = heads.shape
    return [
        (
            _merge_without_transpose(heads) @ w_o,
            "the heads were merged without transposing back: (B, H, T, Dk).transpose(1, 2) "
            "first, then reshape to (B, T, D).",
        ),
        (
            heads.permute(0, 2, 3, 1).reshape(B, T, H * Dk) @ w_o,
            "the heads were merged with their features interleaved: transpose(1, 2), then "
            "reshape, puts head 1's d_k features first, then head 2's.",
        ),
        (concat, "this is the concatenation of the heads: multiply it by W^O, which mixes them."),
        (concat @ w_o.T, "W^O was applied as concat @ w_o.T: multiply by w_o itself."),
        (
            _merge(weights @ k) @ w_o,
            "the weights were applied to the keys: the heads are weights @ v, the values.",
        ),
        (
            _merge(weights @ q) @ w_o,
            "the weights were applied to the queries: the heads are weights @ v, the values.",
        ),
        (
            _merge(weights @ _split(x, H)) @ w_o,
            "the weights were applied to x itself: the values are x @ w_v, split into heads.",
        ),
        (
            _merge(weights.transpose(-2, -1) @ v) @ w_o,
            "the values were weighted with the transposed weights: weights @ v, each row of "
            "weights (one query) mixing the values.",
        ),
    ]


def _differs(name, got, expected, during, formula: str = "") -> None:
    """A Mismatch for ``got`` that matches no typical mistake: the constant factor it is off
    by, if it is a multiple of ``expected``, else where it is furthest off; ``formula`` says
    what ``name`` should be."""
    should = f" It should be {formula}." if formula else ""
    ratio = _factor(got, expected)
    if ratio is not None:
        raise Mismatch(
            f"{during}: `{name}` is {ratio:.4g} times what it should be: a scale factor that "
            f"does not belong, or one missing?{should}",
            MISTAKE,
        )
    raise Mismatch(f"{during}: {difference(name, got, expected)}{should}", DIFFERENCE)


def _factor(got, expected) -> float | None:
    """The constant c with got = c·expected, if there is one (and it is not 1)."""
    flat, want = got.flatten().double(), expected.flatten().double()
    norm = float(want @ want)
    if norm == 0:
        return None
    c = float(flat @ want) / norm
    if abs(c - 1) < 1e-3 or not torch.allclose(flat, c * want, atol=1e-5, rtol=1e-4):
        return None
    return c


# 4.7 (lab L4.A) The parameter comparison ---------------------------------------------------------

_WRONG_THREE = {
    12_288: "three maps of 64 x 64 weights, but nn.Linear(64, 64) also has 64 biases: 4,160 each.",
    4_160: "that is one linear map; there are three (Q, K and V).",
    16_640: "that is the four-map module; the comparison starts from three maps.",
}
_WRONG_FOUR = {
    16_384: "nn.Linear has biases by default: four maps of 64·64 + 64 = 4,160.",
    12_480: "the module also has its output map W^O: four linear maps, not three.",
    66_560: (
        "the 4 heads share the 64 x 64 maps (16 features each): the module has four maps "
        "of 4,160, not four per head."
    ),
}


@exercise("4.7", "Lab L4.A: are the counts almost identical?")
def comparison(params_three_linears, params_four_heads) -> str:
    """Count one of the linear maps first: a 64 → 64 map holds a weight matrix and a bias
    vector.

    The multi-head module has four such maps: Q, K, V and the output map.

    One nn.Linear(64, 64) holds 64·64 weights and 64 biases; multiply by the number of maps.
    """
    three = _whole("params_three_linears", params_three_linears)
    four = _whole("params_four_heads", params_four_heads)
    if (three, four) == (16_640, 12_480):
        raise Mismatch("the two are swapped: the module with W^O is the larger.", MISTAKE)
    said = "`params_three_linears` ="
    _expect_count(three, 12_480, _WRONG_THREE, said, 64, maps=3, biases=3)
    _expect_count(four, 16_640, _WRONG_FOUR, "`params_four_heads` =", 64)
    return (
        "12,480 vs 16,640: a difference of exactly one 64 x 64 map with bias (4,160, +33%), W^O. "
        "Splitting into heads itself adds nothing."
    )


# 4.8 (lab L4.B) Every stage, its shape and its values --------------------------------------------

STAGES = ("x", "q", "q_heads", "scores", "heads", "concat", "output")

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
    walked = {}
    for (B, T, D), H in (((2, 5, 12), 3), ((2, 10, 64), 8), ((2, 10, 512), 8)):
        x = torch.randn(B, T, D, generator=g, dtype=torch.float64)
        ws = [torch.randn(D, D, generator=g, dtype=torch.float64) / math.sqrt(D) for _ in range(4)]
        during = f"on x ({B}, {T}, {D}) with n_heads = {H}"
        got = expect_returned("walk_stages", _run(walk_stages, x.clone(), *ws, H, during=during))
        walked[D] = _compare_stages(got, x, ws, H, during)
    small, large = walked[64], walked[512]
    return (
        f"{small['x']} -> {small['q_heads']} per head -> {small['scores']} scores -> back to "
        f"{small['output']}; at d_model = 512 the heads are {large['q_heads']}, d_k = 64. "
        "Every stage's values agree with the reference too."
    )


def _compare_stages(got, x, ws, H, during) -> dict[str, tuple[int, ...]]:
    """Each stage of the learner's walk against the reference, in order; their shapes."""
    if not isinstance(got, dict):
        raise Mismatch(
            f"walk_stages should return a dict stage -> tensor; got {type(got).__name__}", TYPE
        )
    missing = [s for s in STAGES if s not in got]
    if missing:
        listed = ", ".join(map(repr, missing))
        raise Mismatch(
            f"the dict lacks the stage(s) {listed}: it needs all seven, "
            f"{', '.join(map(repr, STAGES))}; add {', '.join(f'{s}={s}' for s in missing)}.",
            MISTAKE,
        )
    B, T, D = x.shape
    expected = _stages(x, ws, H)
    known = _known_stage_mistakes(D, H, B, T)
    for stage in STAGES:
        value = _stage_tensor(stage, got[stage], expected[stage])
        shape, want = tuple(value.shape), tuple(expected[stage].shape)
        if shape != want:
            hint = known.get((stage, shape))
            if hint:
                raise Mismatch(f"{during}, stage {stage!r} has shape {shape}: {hint}", MISTAKE)
            _wrong_shape(value, expected[stage], _LETTERS[stage], f"{during}, stage {stage!r}")
        if not close(value, expected[stage]):
            message = match(value, _stage_mistakes(stage, x, ws, H, expected))
            if message:
                raise Mismatch(f"{during}, stage {stage!r}: {message}", MISTAKE)
            if stage == "scores":
                _scores_scale(value, expected["scores"], x.shape[-1] // H, during)
            _differs(stage, value, expected[stage], f"{during}, stage {stage!r}", _FORMULAS[stage])
    return {stage: tuple(got[stage].shape) for stage in STAGES}


_LETTERS = {
    "x": "B, T, d_model",
    "q": "B, T, d_model",
    "q_heads": "B, H, T, d_k",
    "scores": "B, H, T, T",
    "heads": "B, H, T, d_k",
    "concat": "B, T, d_model",
    "output": "B, T, d_model",
}


def _stage_tensor(stage, value, expected) -> torch.Tensor:
    """The stage's value if it is a tensor; a shape stored instead of it is named."""
    if isinstance(value, torch.Size) or (
        isinstance(value, tuple) and all(isinstance(n, int) for n in value)
    ):
        raise Mismatch(
            f"`{stage}` holds a shape, {tuple(value)}: store the tensor itself; the check reads "
            "its shape and its values.",
            TYPE,
        )
    if not isinstance(value, torch.Tensor):
        raise Mismatch(
            f"`{stage}` should be a torch tensor, of shape like {tuple(expected.shape)}; got "
            f"{type(value).__name__}",
            TYPE,
        )
    return value.detach().to(torch.float64)


def _stages(x, ws, H) -> dict[str, torch.Tensor]:
    """The reference walk: every stage of multi-head self-attention on x."""
    q, k, v = (x @ w for w in ws[:3])
    q_heads, k_heads, v_heads = _split(q, H), _split(k, H), _split(v, H)
    scores = q_heads @ k_heads.transpose(-2, -1) / math.sqrt(q_heads.shape[-1])
    heads = attend(scores) @ v_heads
    concat = _merge(heads)
    return dict(
        x=x, q=q, q_heads=q_heads, scores=scores, heads=heads, concat=concat, output=concat @ ws[3]
    )


def _stage_mistakes(stage, x, ws, H, expected) -> list:
    """What typical mistakes give at ``stage``, every earlier stage being right."""
    w_q, w_k, w_v, w_o = ws
    Dk = x.shape[-1] // H
    q_heads, k_heads, v_heads = _heads(x, ws, H)
    scores, heads, concat = expected["scores"], expected["heads"], expected["concat"]
    weights = attend(scores)
    if stage == "x":
        return []
    if stage == "q":
        return [
            (
                x @ w_q.T,
                "q was computed as x @ w_q.T (nn.Linear's convention); here it is x @ w_q.",
            ),
            (x, "q is x itself: project it first, q = x @ w_q."),
            (x @ w_k, "that is x @ w_k, the keys: q = x @ w_q."),
            (x @ w_v, "that is x @ w_v, the values: q = x @ w_q."),
        ]
    if stage == "q_heads":
        return [
            *_split_mistakes(expected["q"], H),
            (_split(x, H), "q_heads split x: split q = x @ w_q."),
        ]
    if stage == "scores":
        return [
            (weights, "these are the weights, after the softmax: store the scores before it."),
            *_score_mistakes(x, ws, H),
        ]
    if stage == "heads":
        values = {"x @ w_q": q_heads, "x @ w_k": k_heads, "x itself": _split(x, H)}
        return [
            (scores @ v_heads, "there is no softmax: the heads are softmax(scores, dim=-1) @ v."),
            *[(w @ v_heads, message) for w, message in _softmax_mistakes(scores)[:-2]],
            *[
                (
                    weights @ v,
                    f"the weights were applied to {_named(name)}: the values are x @ w_v.",
                )
                for name, v in values.items()
            ],
            (
                weights.transpose(-2, -1) @ v_heads,
                "the values were weighted with the transposed weights: weights @ v_heads.",
            ),
            (
                attend(scores * math.sqrt(Dk)) @ v_heads,
                "the softmax got the unscaled scores: softmax(scores), with the scores already "
                "divided by √d_k.",
            ),
            (
                attend(scores / math.sqrt(Dk)) @ v_heads,
                "the scores were divided by √d_k a second time before the softmax: once is enough.",
            ),
        ]
    if stage == "concat":
        return _merge_mistakes(heads)
    return [
        (concat @ w_o.T, "W^O was applied as concat @ w_o.T: multiply by w_o itself."),
        (concat, "the output is the concatenation: multiply it by W^O, output = concat @ w_o."),
        (concat @ w_q, "the output used w_q: it is concat @ w_o."),
        (concat @ w_v, "the output used w_v: it is concat @ w_o."),
    ]


def _known_stage_mistakes(D, H, B, T) -> dict[tuple[str, tuple[int, ...]], str]:
    Dk = D // H
    return {
        ("q_heads", (B, T, H, Dk)): (
            "(B, T, H, Dk) is the view before the transpose: after "
            "transpose(1, 2) the heads come first, (B, H, T, Dk)."
        ),
        ("q_heads", (B, H, T, D)): (
            f"each head's queries have d_k = d_model/h = {Dk} features, not d_model."
        ),
        ("scores", (B, T, T)): "there is one T x T score matrix per head: (B, H, T, T).",
        ("scores", (B, H, T, Dk)): "the scores compare every query with every key: (B, H, T, T).",
        ("heads", (B, H, T, T)): (
            "those are the weights; multiplying them by V gives (B, H, T, Dk)."
        ),
        ("concat", (B, H, T * Dk)): (
            "the heads are concatenated along the features of each "
            "position: (B, T, H·d_k) = (B, T, d_model)."
        ),
        ("concat", (B, T, H, Dk)): "flatten the last two axes: (B, T, H·d_k) = (B, T, d_model).",
        ("output", (B, T, Dk)): (
            "W^O maps the concatenation back to d_model: the output has the input's shape."
        ),
    }


# 4.9 (lab L4.C) A parameter-count formula --------------------------------------------------------


@exercise("4.9", "Lab L4.C: a parameter-count formula", forbidden=("torch.nn.MultiheadAttention",))
def count_function(mha_parameter_count) -> str:
    """Does the number of heads change the size of any projection? Section 4's table says.

    Four d_model x d_model matrices, whatever n_heads is; with bias, each of the four
    projections adds d_model numbers.

    4 * (d_model * d_model + (d_model if bias else 0))
    """
    cases = [(64, 8, True), (64, 8, False), (512, 8, True), (512, 8, False)]
    cases += [(12, 3, True), (12, 4, False), (12, 4, True)]
    counts = {}
    for D, H, bias in cases:
        during = f"for d_model = {D}, n_heads = {H}, bias = {bias}"
        got = expect_returned(
            "mha_parameter_count", call(mha_parameter_count, D, H, bias, during=during)
        )
        counts[D, H, bias] = _whole(f"mha_parameter_count({D}, {H}, {bias})", got)
    wrong = [case for case in cases if counts[case] != _right_count(*case)]
    if not wrong:
        return (
            "16,640 and 16,384 at d_model = 64; 1,050,624 and 1,048,576 at d_model = 512, "
            "whatever the number of heads."
        )
    D, H, bias = first = wrong[0]
    said = f"for d_model = {D}, n_heads = {H}, bias = {bias} it returned"
    for flag in (True, False):  # the same count whatever d_model: a number written in
        if len({counts[c] for c in cases if c[2] == flag}) == 1 and first[2] == flag:
            raise Mismatch(
                f"{said} {counts[first]:,}, the same count as for every other d_model: "
                "compute it from d_model, 4·d_model² (+ 4·d_model with bias).",
                MISTAKE,
            )
    for formula, message in _MISCOUNTS:  # one mistake that gives every count?
        if all(counts[case] == _with_mistake(formula, *case) for case in cases):
            raise Mismatch(f"{said} {counts[first]:,}: {message}", MISTAKE)
    right, biases = _right_count(*first), 4 if bias else 0
    _expect_count(counts[first], right, _miscounts(*first), said, D, biases=biases)


def _with_mistake(formula, D, H, bias) -> int:
    """The count a miscount gives; where it does not apply, the right count."""
    count = formula(D, H, bias)
    return _right_count(D, H, bias) if count is None else count
