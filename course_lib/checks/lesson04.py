"""Checks for lesson 4, multi-head attention (paper §3.2.2).

Functions the learner writes (split_heads, merge_heads, a multi-head forward pass) are run on
inputs whose B, T, H and d_k all differ, so that each typical mistake (heads cut along the
wrong axis, no transpose before merging, no W^O, √d_model instead of √d_k, ...) gives a
result of its own; the message names the mistake whose result the answer reproduces.
Counts are exact integers, compared with the counts of the typical miscounts.
"""

import math

import torch

from ._core import Mismatch, call, exercise, multiple_choice
from ._mistakes import attend, expect_count, tensor_pair
from ._tensors import close, difference, expect_shape, match, row_sums, whole_number

# Shared by several exercises -------------------------------------------------------------------

_PARAMETERS = "a count of parameters is a whole number"  # why a fraction is wrong


def _miscounts(D: int, H: int, bias: bool) -> dict[int, str]:
    """Counts of an (D, H) multi-head attention that typical mistakes give, with their
    diagnosis (4.2 and 4.9)."""
    Dk, weights = D // H, 4 * D * D
    wrong = {
        3 * D * D + (3 * D if bias else 0): (
            "that is W^Q, W^K and W^V only: add the output "
            "projection W^O, another d_model x d_model."
        ),
        4 * H * D * D + (4 * H * D if bias else 0): (
            "that gives every head full-width d_model x d_model projections; each head projects "
            "to d_k = d_model/h, so the h heads together hold one d_model x d_model matrix per "
            "projection."
        ),
        4 * D * Dk + (4 * Dk if bias else 0): (
            "that is one head's share; all h heads together hold d_model x d_model per projection."
        ),
        D * D: "that is one matrix: there are four, W^Q, W^K, W^V and W^O.",
    }
    if bias:
        wrong |= {
            weights: (
                "bias=True: each of the four projections also has a bias vector of d_model numbers."
            ),
            weights + 4: "a bias is a vector of d_model numbers per projection, not one number.",
            weights + D: "each of the four projections has its own bias vector: 4·d_model biases.",
            weights + 3 * D: "W^O has a bias too: 4·d_model biases in all.",
            weights + 4 * Dk: (
                "a bias has one number per output feature: d_model per projection, not d_k."
            ),
            weights + 4 * H * D: (
                "the biases are counted once per projection (d_model each), not once per head."
            ),
        }
    else:
        wrong[weights + 4 * D] = "bias=False: count the weights only, 4·d_model²."
    wrong.pop(weights + (4 * D if bias else 0), None)
    return wrong


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
                "contiguous in memory. Use .reshape(B, T, D), or .contiguous().view(B, T, D)."
            ) from None
        if isinstance(error, TypeError) and "float" in text and "int" in text:
            raise Mismatch(
                f"{during}, a size was a float, such as d_model / n_heads = 4.0: sizes must be "
                "whole numbers, d_model // n_heads."
            ) from None
        return None  # any other crash: the generic message, without a tip

    name = getattr(fn, "__name__", "your function")
    unfinished = f"`{name}` {_UNFINISHED}"
    return call(fn, *args, during=during, tip=reshaping, unfinished=unfinished)


def _heads_tensor(name, result, during):
    if not isinstance(result, torch.Tensor):
        raise Mismatch(f"`{name}` should return a tensor {during}; got {type(result).__name__}")
    return result


# 4.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("4.1", "Recall: why split the width?", correct="b")
def recall(answer_4_1):
    """Count the projection weights for h heads of width d_model/h, then for h heads of width
    d_model.

    h · d_model · (d_model/h) = d_model²: the same as one full-width head.

    (a) The softmax works on rows of any length; nothing limits a head to 64 dimensions. The
    reason is cost.

    (b) h heads of width d_model/h need the same d_model x d_model projections and about the
    same arithmetic as one full-width head, so the extra views come almost free. Full-width
    heads would multiply the Q, K, V projections (and W^O's input) by h: 8,388,608 projection
    weights instead of 1,048,576 at d_model = 512, h = 8.

    (c) The split adds no parameters: the heads share the same 4·d_model² weights that one
    head of width d_model would have.

    (d) Full-width heads would not be useless (they start from different random weights), and
    they would cost about h times as much, not the same.
    """


# 4.2 Apply: the weights of the paper's layer ---------------------------------------------------


@exercise("4.2", "Apply: count the weights")
def apply(total_weights, total_with_bias) -> str:
    """W^Q_i is d_model x d_k = 512 x 64, and there are 8 of them; the same for W^K_i and
    W^V_i.

    W^O is (h·d_v) x d_model = 512 x 512. Each of the four projections has a bias of 512
    numbers.
    """
    got_w = whole_number("total_weights", total_weights, _PARAMETERS)
    got_b = whole_number("total_with_bias", total_with_bias, _PARAMETERS)
    right_w, right_b = 4 * 512 * 512, 4 * 512 * 512 + 4 * 512
    if (got_w, got_b) == (right_b, right_w):
        raise Mismatch("the two are swapped: the count with biases is the larger.")
    expect_count(got_w, right_w, _miscounts(512, 8, False), "`total_weights` =")
    expect_count(got_b, right_b, _miscounts(512, 8, True), "`total_with_bias` =")
    return (
        "W^Q, W^K, W^V: 8 × (512 × 64) = 262,144 each; W^O: 512 × 512 = 262,144; in all "
        "4·512² = 1,048,576, and 1,050,624 with the four biases of 512."
    )


# 4.3 Extend --------------------------------------------------------------------------------------


@multiple_choice("4.3", "Extend: too many heads", correct="b")
def extend(answer_4_3):
    """Keep d_model = 512 and compute d_k for h = 8, 32 and 64.

    What can a dot product of two 8-dimensional vectors tell apart?

    (a) The parameter count does not depend on h: it stays 4·d_model² (plus biases) however the
    width is split.

    (b) At d_model = 512, d_k is 16 at h = 32 and 8 at h = 64. Each head's dot-product
    compatibility then lives in a very low-dimensional space, too crude to tell fine relations
    apart; heads turn noisy or redundant. The paper's Table 3 (rows A): 25.8 BLEU at h = 8 and
    16, 25.4 at h = 32.

    (c) The total work stays about the same: each of h heads handles d_model/h dimensions, so
    h·(d_model/h) = d_model whatever h is.

    (d) Each head runs its own softmax over its own keys; the number of heads does not enter
    any softmax.
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
                message = (
                    f"expected shape (B, H, T, Dk) = {tuple(expected.shape)}; "
                    f"got {tuple(got.shape)}"
                )
            raise Mismatch(f"{during}: {message}")
        if not close(got, expected):
            message = match(got, _split_mistakes(x, H))
            raise Mismatch(f"{during}: {message or difference('split_heads(x)', got, expected)}")
    return (
        "(B, T, D) -> view(B, T, H, Dk) -> transpose(1, 2) -> (B, H, T, Dk): head h holds "
        "features h·d_k .. (h+1)·d_k - 1 of every position."
    )


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
            raise Mismatch(f"{during}: {message}")
        expected = _merge(heads)
        expect_shape(f"merge_heads(heads) {during}", got, expected.shape, "(B, T, D)")
        if not close(got, expected):
            raise Mismatch(f"{during}: {difference('merge_heads(heads)', got, expected)}")
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
    ]


# 4.6 (lab L4.A) The multi-head forward pass ------------------------------------------------------


@exercise("4.6", "Lab L4.A: the multi-head forward pass")
def forward_pass(multi_head_attention) -> str:
    """Project with x @ w_q (and w_k, w_v), split, attend in all heads at once, merge, multiply
    by w_o.

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
    result = _run(fn, x, *ws, H, during=during)
    output, weights = tensor_pair("multi_head_attention", result, during)
    B, T, D = x.shape
    Dk, w_o = D // H, ws[3]
    q, k, v = _heads(x, ws, H)
    scores = q @ k.transpose(-2, -1)  # (B, H, T, T)
    expected_w = attend(scores / math.sqrt(Dk))
    expected_out = _merge(expected_w @ v) @ w_o
    if (tuple(output.shape), tuple(weights.shape)) == ((B, H, T, T), (B, T, D)):
        raise Mismatch(
            f"{during}: the pair is in the wrong order: return (output, weights), the output first."
        )
    if tuple(weights.shape) == (B, T, T):
        raise Mismatch(
            f"{during}: the weights have shape (B, T, T) = {tuple(weights.shape)}: return every "
            "head's weights, (B, H, T, T), not their average."
        )
    expect_shape("weights", weights, expected_w.shape, "(B, H, T, T)")
    if not close(weights, expected_w):
        mistakes = _weight_mistakes(x, ws, H, scores)
        message = match(weights, mistakes) or row_sums("weights", weights)
        raise Mismatch(f"{during}: {message or difference('weights', weights, expected_w)}")
    expect_shape("output", output, expected_out.shape, "(B, T, d_model)")
    if not close(output, expected_out):
        mistakes = _output_mistakes(expected_w @ v, w_o)
        message = match(output, mistakes) or difference("output", output, expected_out)
        raise Mismatch(f"{during}: {message}")
    return output, weights


def _weight_mistakes(x, ws, H, scores):
    """Weights (B, H, T, T) from a wrong split, scale, softmax axis or weight convention."""
    D, Dk = x.shape[-1], x.shape[-1] // H
    q, k, _ = _heads(x, ws, H, split=_split_along_positions)
    q_t, k_t, _ = _heads(x, [w.T for w in ws], H)  # nn.Linear's convention, x @ w.T
    return [
        (
            attend(q @ k.transpose(-2, -1) / math.sqrt(Dk)),
            "the heads are cut along the wrong axis: view(B, H, T, Dk) gives each head whole "
            "positions. Split the features: view(B, T, H, Dk).transpose(1, 2).",
        ),
        (
            attend(scores / math.sqrt(D)),
            f"the scores are divided by √d_model = √{D}; each head compares d_k-dimensional "
            f"vectors, so divide by √d_k = √{Dk}.",
        ),
        (attend(scores), f"the scores are not scaled: divide by √d_k = √{Dk}."),
        (
            attend(scores / math.sqrt(Dk), axis=-2),
            "the softmax runs over the queries (dim=-2): each row, one query, must sum to 1 "
            "over the keys, dim=-1.",
        ),
        (
            attend(q_t @ k_t.transpose(-2, -1) / math.sqrt(Dk)),
            "the weights were applied as x @ w.T (nn.Linear's convention); here they are the "
            "paper's W matrices of shape (d_model, d_model): x @ w_q.",
        ),
        (
            scores / math.sqrt(Dk),
            "these are the scaled scores, before the softmax: the weights are their softmax "
            "over the keys (dim=-1), each row summing to 1.",
        ),
    ]


def _output_mistakes(heads, w_o):
    """Outputs (B, T, d_model) from the heads' outputs (B, H, T, Dk) merged or mixed wrongly."""
    concat = _merge(heads)
    return [
        (
            _merge_without_transpose(heads) @ w_o,
            "the heads were merged without transposing back: (B, H, T, Dk).transpose(1, 2) "
            "first, then reshape to (B, T, D).",
        ),
        (concat, "this is the concatenation of the heads: multiply it by W^O, which mixes them."),
        (concat @ w_o.T, "W^O was applied as concat @ w_o.T: multiply by w_o itself."),
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
    66_560: (
        "the 4 heads share the 64 x 64 maps (16 features each): the module has four maps "
        "of 4,160, not four per head."
    ),
}


@exercise("4.7", "Lab L4.A: are the counts almost identical?")
def comparison(params_three_linears, params_four_heads) -> str:
    """nn.Linear(64, 64) has 64·64 weights and 64 biases.

    The multi-head module has four such maps: Q, K, V and the output map.
    """
    three = whole_number("params_three_linears", params_three_linears, _PARAMETERS)
    four = whole_number("params_four_heads", params_four_heads, _PARAMETERS)
    if (three, four) == (16_640, 12_480):
        raise Mismatch("the two are swapped: the module with W^O is the larger.")
    said, otherwise = "`params_three_linears` =", "count 3 × (64·64 + 64)."
    expect_count(three, 12_480, _WRONG_THREE, said, otherwise)
    said, otherwise = "`params_four_heads` =", "count 4 × (64·64 + 64)."
    expect_count(four, 16_640, _WRONG_FOUR, said, otherwise)
    return (
        "12,480 vs 16,640: a difference of exactly one 64 x 64 map with bias (4,160, +33%), W^O. "
        "Splitting into heads itself adds nothing."
    )


# 4.8 (lab L4.B) The shape walk-through -----------------------------------------------------------

STAGES = ("x", "q", "q_heads", "scores", "heads", "concat", "output")


@exercise("4.8", "Lab L4.B: the shape at every stage")
def walk(walk_shapes) -> str:
    """Make a random x and follow it: project, split, score, weight the values, merge,
    project.

    Record tuple(t.shape) after each step under the stage's name.
    """
    for D, H, B, T in ((64, 8, 2, 10), (512, 8, 2, 10), (12, 3, 1, 5)):
        during = f"for d_model = {D}, n_heads = {H}, batch = {B}, seq_len = {T}"
        got = _run(walk_shapes, D, H, B, T, during=during)
        if not isinstance(got, dict):
            raise Mismatch(
                f"walk_shapes should return a dict stage -> shape; got {type(got).__name__}"
            )
        missing = [s for s in STAGES if s not in got]
        if missing:
            raise Mismatch(
                f"the dict lacks the stage(s) {', '.join(map(repr, missing))}; it needs "
                f"{', '.join(map(repr, STAGES))}."
            )
        expected, known = _stage_shapes(D, H, B, T), _known_stage_mistakes(D, H, B, T)
        for stage in STAGES:
            shape = _shape(stage, got[stage])
            if shape != expected[stage]:
                hint = known.get((stage, shape), f"expected {expected[stage]}.")
                raise Mismatch(f"{during}, stage {stage!r} is {shape}: {hint}")
    return (
        "(2, 10, 64) -> (2, 8, 10, 8) per head -> (2, 8, 10, 10) scores -> back to (2, 10, 64); "
        "and the same walk with heads of 64 at d_model = 512."
    )


def _shape(stage, value) -> tuple[int, ...]:
    if isinstance(value, torch.Tensor):
        raise Mismatch(
            f"`{stage}` holds a tensor: store its shape, tuple(t.shape), not the tensor itself."
        )
    try:
        return tuple(int(n) for n in value)
    except (TypeError, ValueError):
        raise Mismatch(f"`{stage}` should be a shape such as (2, 10, 64); got {value!r}") from None


def _stage_shapes(D, H, B, T) -> dict[str, tuple[int, ...]]:
    Dk = D // H
    return {
        "x": (B, T, D),
        "q": (B, T, D),
        "q_heads": (B, H, T, Dk),
        "scores": (B, H, T, T),
        "heads": (B, H, T, Dk),
        "concat": (B, T, D),
        "output": (B, T, D),
    }


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


@exercise("4.9", "Lab L4.C: a parameter-count formula")
def count_function(mha_parameter_count) -> str:
    """Four d_model x d_model matrices, whatever n_heads is.

    With bias, each of the four projections adds d_model numbers.
    """
    cases = [(64, 8, True), (64, 8, False), (512, 8, True), (512, 8, False)]
    cases += [(12, 3, True), (12, 4, False)]
    for D, H, bias in cases:
        during = f"for d_model = {D}, n_heads = {H}, bias = {bias}"
        got = call(mha_parameter_count, D, H, bias, during=during)
        got = whole_number(f"mha_parameter_count({D}, {H}, {bias})", got, _PARAMETERS)
        right = 4 * D * D + (4 * D if bias else 0)
        expect_count(got, right, _miscounts(D, H, bias), f"{during} it returned")
    return (
        "16,640 and 16,384 at d_model = 64; 1,050,624 and 1,048,576 at d_model = 512, whatever "
        "the number of heads."
    )
