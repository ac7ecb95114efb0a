"""Checks for lesson 4, multi-head attention (paper §3.2.2).

Functions the learner writes (split_heads, merge_heads, a multi-head forward pass) are run on
inputs whose B, T, H and d_k all differ, so that each typical mistake (heads cut along the
wrong axis, no transpose before merging, no W^O, √d_model instead of √d_k, ...) gives a
result of its own; the message names the mistake whose result the answer reproduces.
Counts are exact integers, compared with the counts of the typical miscounts.
"""

import inspect
import math

import torch

from ._core import Exercise, Mismatch, NotDone, call, choice, describe_error
from ._tensors import (
    close,
    difference,
    expect_shape,
    match,
    output_and_weights,
    row_sums,
    whole_number,
)

# 4.1 Recall ------------------------------------------------------------------------------

_RECALL = choice(
    "b",
    {
        "a": "The softmax works on rows of any length; nothing limits a head to 64 dimensions. "
        "The reason is cost.",
        "b": "h heads of width d_model/h need the same d_model x d_model projections and about "
        "the same arithmetic as one full-width head, so the extra views come almost free. "
        "Full-width heads would multiply the Q, K, V projections (and W^O's input) by h: "
        "8,388,608 projection weights instead of 1,048,576 at d_model = 512, h = 8.",
        "c": "The split adds no parameters: the heads share the same 4·d_model² weights that "
        "one head of width d_model would have.",
        "d": "Full-width heads would not be useless (they start from different random "
        "weights), and they would cost about h times as much, not the same.",
    },
)

_EXTEND = choice(
    "b",
    {
        "a": "The parameter count does not depend on h: it stays 4·d_model² (plus biases) "
        "however the width is split.",
        "b": "At d_model = 512, d_k is 16 at h = 32 and 8 at h = 64. Each head's dot-product "
        "compatibility then lives in a very low-dimensional space, too crude to tell fine "
        "relations apart; heads turn noisy or redundant. The paper's Table 3 (rows A): "
        "25.8 BLEU at h = 8 and 16, 25.4 at h = 32.",
        "c": "The total work stays about the same: each of h heads handles d_model/h "
        "dimensions, so h·(d_model/h) = d_model whatever h is.",
        "d": "Each head runs its own softmax over its own keys; the number of heads does "
        "not enter any softmax.",
    },
)


# 4.2 Apply and 4.9 (L4.C): counting ---------------------------------------------------------


def _miscounts(D: int, H: int, bias: bool) -> dict[int, str]:
    """Counts of an (D, H) multi-head attention that typical mistakes give, with their diagnosis."""
    weights, b = 4 * D * D, 4 * D if bias else 0
    wrong = {
        3 * D * D + (3 * D if bias else 0): "that is W^Q, W^K and W^V only: add the output projection W^O, another d_model x d_model.",
        4 * H * D * D + (4 * H * D if bias else 0): "that gives every head full-width d_model x d_model projections; each head projects to d_k = d_model/h, so the h heads together hold one d_model x d_model matrix per projection.",
        4 * D * (D // H) + (4 * (D // H) if bias else 0): "that is one head's share; all h heads together hold d_model x d_model per projection.",
        D * D: "that is one matrix: there are four, W^Q, W^K, W^V and W^O.",
    }  # fmt: skip
    if bias:
        wrong |= {
            weights: "bias=True: each of the four projections also has a bias vector of d_model numbers.",
            weights + 4: "a bias is a vector of d_model numbers per projection, not one number.",
            weights + D: "each of the four projections has its own bias vector: 4·d_model biases.",
            weights + 3 * D: "W^O has a bias too: 4·d_model biases in all.",
            weights + 4 * (D // H): "a bias has one number per output feature: d_model per projection, not d_k.",
            weights + 4 * H * D: "the biases are counted once per projection (d_model each), not once per head.",
        }  # fmt: skip
    else:
        wrong[weights + 4 * D] = "bias=False: count the weights only, 4·d_model²."
    wrong.pop(weights + b, None)
    return wrong


def _verify_apply(total_weights, total_with_bias) -> str:
    got_w, got_b = (
        whole_number("total_weights", total_weights, "a count of parameters is a whole number"),
        whole_number("total_with_bias", total_with_bias, "a count of parameters is a whole number"),
    )
    right_w, right_b = 4 * 512 * 512, 4 * 512 * 512 + 4 * 512
    if (got_w, got_b) == (right_b, right_w):
        raise Mismatch("the two are swapped: the count with biases is the larger.")
    for name, got, right, bias in (
        ("total_weights", got_w, right_w, False),
        ("total_with_bias", got_b, right_b, True),
    ):
        if got != right:
            message = _miscounts(512, 8, bias).get(got, f"expected {right:,}.")
            raise Mismatch(f"`{name}` = {got:,}: {message}")
    return "W^Q, W^K, W^V: 8 × (512 × 64) = 262,144 each; W^O: 512 × 512 = 262,144; in all 4·512² = 1,048,576, and 1,050,624 with the four biases of 512."


def _verify_count_function(mha_parameter_count) -> str:
    cases = [(64, 8, True), (64, 8, False), (512, 8, True), (512, 8, False), (12, 3, True), (12, 4, False)]  # fmt: skip
    for D, H, bias in cases:
        during = f"for d_model = {D}, n_heads = {H}, bias = {bias}"
        got = call(mha_parameter_count, D, H, bias, during=during)
        got = whole_number(
            f"mha_parameter_count({D}, {H}, {bias})", got, "a count of parameters is a whole number"
        )
        right = 4 * D * D + (4 * D if bias else 0)
        if got != right:
            message = _miscounts(D, H, bias).get(got, f"expected {right:,}.")
            raise Mismatch(f"{during} it returned {got:,}: {message}")
    return "16,640 and 16,384 at d_model = 64; 1,050,624 and 1,048,576 at d_model = 512, whatever the number of heads."


# 4.4-4.6 (labs): split, merge, the whole forward pass --------------------------------------


def _split(x, H):
    B, T, D = x.shape
    return x.view(B, T, H, D // H).transpose(1, 2)  # (B, T, D) -> (B, H, T, Dk)


def _merge(x):
    B, H, T, Dk = x.shape
    return x.transpose(1, 2).reshape(B, T, H * Dk)  # (B, H, T, Dk) -> (B, T, D)


def _split_mistakes(x, H):
    B, T, D = x.shape
    Dk = D // H
    return [
        (x.reshape(B, H, T, Dk), "the heads are cut along the wrong axis: reshape(B, H, T, Dk) slices the flat memory into H blocks of T·d_k numbers, so each head gets whole positions, mixed up. Use view(B, T, H, Dk).transpose(1, 2)."),
        (x.reshape(B, T, H, Dk), "the heads sit on axis 2, shape (B, T, H, Dk): add .transpose(1, 2) to bring them in front of the positions, (B, H, T, Dk)."),
        (x.reshape(B, T, Dk, H).permute(0, 3, 1, 2), "each head got every h-th feature (view(B, T, Dk, H)): a head takes d_k consecutive features, view(B, T, H, Dk)."),
    ]  # fmt: skip


def _as_answer(name, result, during):
    if not isinstance(result, torch.Tensor):
        raise Mismatch(f"`{name}` should return a tensor {during}; got {type(result).__name__}")
    return result


def _verify_split(split_heads) -> str:
    g = torch.Generator().manual_seed(4)
    for shape, H in (((2, 5, 12), 3), ((1, 4, 8), 2)):
        x = torch.randn(*shape, generator=g)
        B, T, D = shape
        during = f"on x of shape {shape} with n_heads = {H}"
        got = _as_answer("split_heads", _run(split_heads, x.clone(), H, during=during), during)
        expected = _split(x, H)
        if got.shape != expected.shape:
            message = match(got, _split_mistakes(x, H))
            if message is None and tuple(got.shape) == (B * H, T, D // H):
                message = (
                    "the batch and head axes are merged into one: keep them apart, (B, H, T, Dk)."
                )
            raise Mismatch(
                f"{during}: {message or f'expected shape (B, H, T, Dk) = {tuple(expected.shape)}; got {tuple(got.shape)}'}"
            )
        if not close(got, expected):
            message = match(got, _split_mistakes(x, H)) or difference(
                "split_heads(x)", got, expected
            )
            raise Mismatch(f"{during}: {message}")
    return "(B, T, D) -> view(B, T, H, Dk) -> transpose(1, 2) -> (B, H, T, Dk): head h holds features h·d_k .. (h+1)·d_k - 1 of every position."


def _verify_merge(merge_heads) -> str:
    g = torch.Generator().manual_seed(5)
    for shape in ((2, 3, 5, 4), (1, 2, 4, 3)):
        heads = torch.randn(*shape, generator=g)
        B, H, T, Dk = shape
        during = f"on heads of shape {shape}"
        got = _as_answer("merge_heads", _run(merge_heads, heads.clone(), during=during), during)
        expected = _merge(heads)
        mistakes = [
            (heads.reshape(B, T, H * Dk), "the heads were not moved back behind the positions: transpose(1, 2) to (B, T, H, Dk) first, then reshape to (B, T, D). Without it, rows of different positions get glued together."),
            (heads.permute(0, 2, 3, 1).reshape(B, T, H * Dk), "the features come out interleaved (d_k, then H): the concatenation puts all of head 1's d_k features first, then head 2's: transpose(1, 2), not a permute that moves H last."),
            (heads.transpose(1, 2), "shape (B, T, H, Dk): now flatten the last two axes, reshape(B, T, H·Dk)."),
            (heads.mean(dim=1), "the heads were averaged: concatenate them, so d_model = H·d_k features come out."),
            (heads.sum(dim=1), "the heads were added up: concatenate them, so d_model = H·d_k features come out."),
        ]  # fmt: skip
        message = match(got, mistakes)
        if message:
            raise Mismatch(f"{during}: {message}")
        expect_shape(f"merge_heads(heads) {during}", got, expected.shape, "(B, T, D)")
        if not close(got, expected):
            raise Mismatch(f"{during}: {difference('merge_heads(heads)', got, expected)}")
    return "(B, H, T, Dk) -> transpose(1, 2) -> reshape(B, T, H·Dk): the heads side by side, the exact inverse of split_heads."


def _run(fn, *args, during):
    """``call``, with a diagnosis for the crashes typical of reshaping into heads.

    A stub is "not done"; when ``fn`` is finished but calls an unfinished function
    (split_heads, merge_heads), the message names that one.
    """
    if not callable(fn):
        raise Mismatch(f"expected a function; got {type(fn).__name__}")
    try:
        return fn(*args)
    except NotImplementedError:
        try:
            own_stub = "NotImplementedError" in inspect.getsource(fn)
        except (OSError, TypeError):
            own_stub = True
        if own_stub:
            raise NotDone() from None
        raise NotDone(
            f"`{fn.__name__}` calls a function that is not written yet (split_heads or merge_heads?): "
            "finish exercises 4.4 and 4.5 first, or write those steps inline."
        ) from None
    except Exception as e:
        text = str(e)
        if "view size is not compatible" in text:
            raise Mismatch(f"{during}, .view failed: after transpose(1, 2) the tensor is no longer contiguous in memory. Use .reshape(B, T, D), or .contiguous().view(B, T, D).") from None  # fmt: skip
        if isinstance(e, TypeError) and "float" in text and "int" in text:
            raise Mismatch(f"{during}, a size was a float, such as d_model / n_heads = 4.0: sizes must be whole numbers, d_model // n_heads.") from None  # fmt: skip
        raise Mismatch(f"your function raised {describe_error(e)} when called {during}.") from None


def _mha(x, w_q, w_k, w_v, w_o, H, *, scale="d_k", split=_split, merge=_merge, dim=-1, use_wo=True, linear=False):  # fmt: skip
    """The reference forward pass, and (through its options) the typical mistakes."""
    if linear:  # nn.Linear's convention: weights stored (out, in), applied as x @ w.T
        w_q, w_k, w_v, w_o = (w.T for w in (w_q, w_k, w_v, w_o))
    q, k, v = (split(x @ w, H) for w in (w_q, w_k, w_v))  # (B, H, T, Dk)
    d = {"d_k": q.shape[-1], "d_model": x.shape[-1], "none": 1}[scale]
    weights = (q @ k.transpose(-2, -1) / math.sqrt(d)).softmax(dim=dim)  # (B, H, T, T)
    concat = merge(weights @ v)  # (B, T, D)
    return (concat @ w_o if use_wo else concat), weights


def _scaled_scores(x, ws, H):
    q, k = (_split(x @ w, H) for w in ws[:2])  # (B, H, T, Dk)
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, T)


def _wrong_split(x, H):
    B, T, D = x.shape
    return x.reshape(B, H, T, D // H)


def _no_transpose_merge(x):
    B, H, T, Dk = x.shape
    return x.reshape(B, T, H * Dk)


def _compare_mha(fn, x, ws, H, during):
    output, weights = output_and_weights(
        "multi_head_attention", _run(fn, x, *ws, H, during=during), during
    )
    expected_out, expected_w = (t.double() for t in _mha(x, *ws, H))
    B, T, D = x.shape
    if (tuple(output.shape), tuple(weights.shape)) == ((B, H, T, T), (B, T, D)):
        raise Mismatch(f"{during}: the pair is in the wrong order: return (output, weights), the output first.")  # fmt: skip
    if tuple(weights.shape) == (B, T, T):
        raise Mismatch(f"{during}: the weights have shape (B, T, T) = {tuple(weights.shape)}: return every head's weights, (B, H, T, T), not their average.")  # fmt: skip
    expect_shape("weights", weights, expected_w.shape, "(B, H, T, T)")
    weight_mistakes = [
        (_mha(x, *ws, H, split=_wrong_split)[1], "the heads are cut along the wrong axis: view(B, H, T, Dk) gives each head whole positions. Split the features: view(B, T, H, Dk).transpose(1, 2)."),
        (_mha(x, *ws, H, scale="d_model")[1], f"the scores are divided by √d_model = √{D}; each head compares d_k-dimensional vectors, so divide by √d_k = √{D // H}."),
        (_mha(x, *ws, H, scale="none")[1], f"the scores are not scaled: divide by √d_k = √{D // H}."),
        (_mha(x, *ws, H, dim=-2)[1], "the softmax runs over the queries (dim=-2): each row, one query, must sum to 1 over the keys, dim=-1."),
        (_mha(x, *ws, H, linear=True)[1], "the weights were applied as x @ w.T (nn.Linear's convention); here they are the paper's W matrices of shape (d_model, d_model): x @ w_q."),
        (_scaled_scores(x, ws, H), "these are the scaled scores, before the softmax: the weights are their softmax over the keys (dim=-1), each row summing to 1."),
    ]  # fmt: skip
    if not close(weights, expected_w):
        message = match(weights, weight_mistakes) or row_sums("weights", weights)
        raise Mismatch(f"{during}: {message or difference('weights', weights, expected_w)}")
    expect_shape("output", output, expected_out.shape, "(B, T, d_model)")
    output_mistakes = [
        (_mha(x, *ws, H, merge=_no_transpose_merge)[0], "the heads were merged without transposing back: (B, H, T, Dk).transpose(1, 2) first, then reshape to (B, T, D)."),
        (_mha(x, *ws, H, use_wo=False)[0], "this is the concatenation of the heads: multiply it by W^O, which mixes them."),
        (_mha(x, *ws, H, use_wo=False)[0] @ ws[3].T, "W^O was applied as concat @ w_o.T: multiply by w_o itself."),
    ]  # fmt: skip
    if not close(output, expected_out):
        raise Mismatch(f"{during}: {match(output, output_mistakes) or difference('output', output, expected_out)}")  # fmt: skip
    return output, weights


def _verify_mha(multi_head_attention) -> str:
    g = torch.Generator().manual_seed(6)
    for (B, T, D), H in (((2, 5, 12), 3), ((1, 4, 8), 2)):
        x = torch.randn(B, T, D, generator=g, dtype=torch.float64)
        ws = [torch.randn(D, D, generator=g, dtype=torch.float64) / math.sqrt(D) for _ in range(4)]
        _compare_mha(multi_head_attention, x, ws, H, f"on x ({B}, {T}, {D}) with n_heads = {H}")
    return "split, attend per head with 1/√d_k, merge, W^O: output (B, T, d_model) and per-head weights (B, H, T, T) agree with the reference."


# 4.7 (L4.A) The parameter comparison --------------------------------------------------------


def _verify_comparison(params_three_linears, params_four_heads) -> str:
    three = whole_number(
        "params_three_linears", params_three_linears, "a count of parameters is a whole number"
    )
    four = whole_number(
        "params_four_heads", params_four_heads, "a count of parameters is a whole number"
    )
    if (three, four) == (16_640, 12_480):
        raise Mismatch("the two are swapped: the module with W^O is the larger.")
    wrong_three = {
        12_288: "three maps of 64 x 64 weights, but nn.Linear(64, 64) also has 64 biases: 4,160 each.",
        4_160: "that is one linear map; there are three (Q, K and V).",
        16_640: "that is the four-map module; the comparison starts from three maps.",
    }
    wrong_four = {
        16_384: "nn.Linear has biases by default: four maps of 64·64 + 64 = 4,160.",
        12_480: "the module also has its output map W^O: four linear maps, not three.",
        66_560: "the 4 heads share the 64 x 64 maps (16 features each): the module has four maps of 4,160, not four per head.",
    }
    if three != 12_480:
        raise Mismatch(f"`params_three_linears` = {three:,}: {wrong_three.get(three, 'count 3 × (64·64 + 64).')}")  # fmt: skip
    if four != 16_640:
        raise Mismatch(f"`params_four_heads` = {four:,}: {wrong_four.get(four, 'count 4 × (64·64 + 64).')}")  # fmt: skip
    return "12,480 vs 16,640: a difference of exactly one 64 x 64 map with bias (4,160, +33%), W^O. Splitting into heads itself adds nothing."


# 4.8 (L4.B) The shape walk-through ---------------------------------------------------------

STAGES = ("x", "q", "q_heads", "scores", "heads", "concat", "output")


def _verify_walk(walk_shapes) -> str:
    for D, H, B, T in ((64, 8, 2, 10), (512, 8, 2, 10), (12, 3, 1, 5)):
        during = f"for d_model = {D}, n_heads = {H}, batch = {B}, seq_len = {T}"
        got = _run(walk_shapes, D, H, B, T, during=during)
        if not isinstance(got, dict):
            raise Mismatch(f"walk_shapes should return a dict stage -> shape; got {type(got).__name__}")  # fmt: skip
        missing = [s for s in STAGES if s not in got]
        if missing:
            raise Mismatch(f"the dict lacks the stage(s) {', '.join(map(repr, missing))}; it needs {', '.join(map(repr, STAGES))}.")  # fmt: skip
        Dk = D // H
        expected = {"x": (B, T, D), "q": (B, T, D), "q_heads": (B, H, T, Dk), "scores": (B, H, T, T), "heads": (B, H, T, Dk), "concat": (B, T, D), "output": (B, T, D)}  # fmt: skip
        known = {
            ("q_heads", (B, T, H, Dk)): "(B, T, H, Dk) is the view before the transpose: after transpose(1, 2) the heads come first, (B, H, T, Dk).",
            ("q_heads", (B, H, T, D)): f"each head's queries have d_k = d_model/h = {Dk} features, not d_model.",
            ("scores", (B, T, T)): "there is one T x T score matrix per head: (B, H, T, T).",
            ("scores", (B, H, T, Dk)): "the scores compare every query with every key: (B, H, T, T).",
            ("heads", (B, H, T, T)): "those are the weights; multiplying them by V gives (B, H, T, Dk).",
            ("concat", (B, H, T * Dk)): "the heads are concatenated along the features of each position: (B, T, H·d_k) = (B, T, d_model).",
            ("concat", (B, T, H, Dk)): "flatten the last two axes: (B, T, H·d_k) = (B, T, d_model).",
            ("output", (B, T, Dk)): "W^O maps the concatenation back to d_model: the output has the input's shape.",
        }  # fmt: skip
        for stage in STAGES:
            if isinstance(got[stage], torch.Tensor):
                raise Mismatch(f"`{stage}` holds a tensor: store its shape, tuple(t.shape), not the tensor itself.")  # fmt: skip
            try:
                shape = tuple(int(n) for n in got[stage])
            except (TypeError, ValueError):
                raise Mismatch(f"`{stage}` should be a shape such as (2, 10, 64); got {got[stage]!r}") from None  # fmt: skip
            if shape != expected[stage]:
                hint = known.get((stage, shape), f"expected {expected[stage]}.")
                raise Mismatch(f"{during}, stage {stage!r} is {shape}: {hint}")
    return "(2, 10, 64) -> (2, 8, 10, 8) per head -> (2, 8, 10, 10) scores -> back to (2, 10, 64); and the same walk with heads of 64 at d_model = 512."


EXERCISES = [
    Exercise(
        "4.1",
        "Recall: why split the width?",
        ("answer_4_1",),
        _RECALL,
        (
            "Count the projection weights for h heads of width d_model/h, then for h heads of width d_model.",
            "h · d_model · (d_model/h) = d_model²: the same as one full-width head.",
        ),
        kind="choice",
    ),
    Exercise(
        "4.2",
        "Apply: count the weights",
        ("total_weights", "total_with_bias"),
        _verify_apply,
        (
            "W^Q_i is d_model x d_k = 512 x 64, and there are 8 of them; the same for W^K_i and W^V_i.",
            "W^O is (h·d_v) x d_model = 512 x 512. Each of the four projections has a bias of 512 numbers.",
        ),
    ),
    Exercise(
        "4.3",
        "Extend: too many heads",
        ("answer_4_3",),
        _EXTEND,
        (
            "Keep d_model = 512 and compute d_k for h = 8, 32 and 64.",
            "What can a dot product of two 8-dimensional vectors tell apart?",
        ),
        kind="choice",
    ),
    Exercise(
        "4.4",
        "Lab L4.A: split the heads",
        ("split_heads",),
        _verify_split,
        (
            "d_k = D // n_heads; first give the last axis two axes, (B, T, H, Dk).",
            "x.view(B, T, n_heads, D // n_heads).transpose(1, 2)",
        ),
    ),
    Exercise(
        "4.5",
        "Lab L4.A: merge the heads",
        ("merge_heads",),
        _verify_merge,
        (
            "Undo split_heads in reverse order: first the transpose, then the reshape.",
            "x.transpose(1, 2).reshape(B, T, H * Dk); .view fails after a transpose.",
        ),
    ),
    Exercise(
        "4.6",
        "Lab L4.A: the multi-head forward pass",
        ("multi_head_attention",),
        _verify_mha,
        (
            "Project with x @ w_q (and w_k, w_v), split, attend in all heads at once, merge, multiply by w_o.",
            "Scale by √d_k, the width of one head, not √d_model.",
            "Return (output, weights) with weights of shape (B, H, T, T).",
        ),
    ),
    Exercise(
        "4.7",
        "Lab L4.A: are the counts almost identical?",
        ("params_three_linears", "params_four_heads"),
        _verify_comparison,
        (
            "nn.Linear(64, 64) has 64·64 weights and 64 biases.",
            "The multi-head module has four such maps: Q, K, V and the output map.",
        ),
    ),
    Exercise(
        "4.8",
        "Lab L4.B: the shape at every stage",
        ("walk_shapes",),
        _verify_walk,
        (
            "Make a random x and follow it: project, split, score, weight the values, merge, project.",
            "Record tuple(t.shape) after each step under the stage's name.",
        ),
    ),
    Exercise(
        "4.9",
        "Lab L4.C: a parameter-count formula",
        ("mha_parameter_count",),
        _verify_count_function,
        (
            "Four d_model x d_model matrices, whatever n_heads is.",
            "With bias, each of the four projections adds d_model numbers.",
        ),
    ),
]
