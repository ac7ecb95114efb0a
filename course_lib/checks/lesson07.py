"""Checks for lesson 7, the complete Transformer (paper §3, §5, §6).

Counting parameters, the warmup schedule, label smoothing, the model families, PyTorch's
own encoder and a complete training step with the masks a popular version forgets.
Masks follow the course convention: boolean, True = may attend.
"""

import functools
import itertools
import math
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from ..data import PAD_ID
from ..masks import padding_mask, target_mask
from ..model import TransformerConfig, UnmaskedByDefault, make_encoder
from ..parameters import component
from ._core import (
    DIFFERENCE,
    MISTAKE,
    SHAPE,
    TYPE,
    Mismatch,
    call,
    exercise,
    multiple_choice,
)
from ._mistakes import (
    count_slip,
    expect_parameters,
    expect_returned,
    expect_tensor,
    match_number,
)
from ._tensors import as_tensor, expect_shape, match, one_number, typed_close, typed_tolerance

# Shared by several exercises -------------------------------------------------------------------


def _many(n: int, thing: str) -> str:
    """``n`` things, in the singular for one: "1 layer", "6 layers"."""
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


# 7.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("7.1", "Recall: the decoder's sub-layers", correct="d")
def recall(answer_7_1):
    """Follow one French token up the decoder: what does it look at first, and where does the
    English come in?

    Masked self-attention over the French so far, then cross-attention to the encoder's
    output, then the FFN.

    (a) The feed-forward network works on each position alone; it never sees the encoder.
    The decoder reads the encoder through cross-attention, the second sub-layer.

    (b) The mask does not open a path to the encoder: it hides later target positions.
    Cross-attention, the second sub-layer, links the two stacks.

    (c) The decoder first looks at what it has written (masked self-attention), and only then
    asks the encoder (cross-attention); self-attention never sees the encoder.

    (d) Masked self-attention over the French written so far, then cross-attention (queries
    from the decoder, keys and values from the encoder output: the link), then the
    feed-forward network; each wrapped in a residual connection and LayerNorm.
    """


# 7.2 Apply: one encoder layer of Table 3's d_ff = 4096 variant, weights only ------------------

# The base model's sizes, but the wider FFN of Table 3, row (C): the lesson counts the base model
# (d_ff = 2048) before the exercise, so the exercise counts this variant.
_D, _H, _DK, _FF, _N = 512, 8, 64, 4096, 6
_BASE_FF = 2048
_ATTN, _FFN = 4 * _D * _D, 2 * _D * _FF  # 1,048,576 and 4,194,304
_LAYER = _ATTN + _FFN  # 5,242,880
_ATTN_BIASES, _FFN_BIASES, _NORMS = 4 * _D, _FF + _D, 2 * 2 * _D  # 2,048, 4,608 and 2,048
_WITH_BIASES = _LAYER + _ATTN_BIASES + _FFN_BIASES + _NORMS  # 5,251,584
_BASE_LAYER = _ATTN + 2 * _D * _BASE_FF  # 3,145,728, also one FFN matrix of this variant
_LAYER_MISTAKES = [
    (
        _BASE_LAYER,
        "that is the base model's layer, with d_ff = 2048 (or this variant with one FFN "
        "matrix). Here d_ff = 4096: the FFN has two matrices, 512 × 4096 and 4096 × 512.",
    ),
    (
        _BASE_LAYER + _ATTN_BIASES + _BASE_FF + _D + _NORMS,
        "that is the base model's layer (d_ff = 2048) with biases and LayerNorms; here d_ff = "
        "4096, and only the weight matrices count.",
    ),
    (
        _WITH_BIASES,
        "that includes the biases and the two LayerNorms; count weight matrices only.",
    ),
    (
        _LAYER + _ATTN_BIASES + _FFN_BIASES,
        "that includes the biases (4 × 512 in attention, 4096 + 512 in the FFN); count weight "
        "matrices only.",
    ),
    (
        _LAYER + _NORMS,
        "2,048 too many: the two LayerNorms' γ and β (2 × 2 × 512), or the attention biases "
        "(4 × 512)? Count weight matrices only.",
    ),
    (
        _LAYER + _FFN_BIASES,
        "4,608 too many: the FFN's biases b_1 (4096) and b_2 (512); count weight matrices only.",
    ),
    (
        _LAYER + 2 * _D,
        "1,024 too many: one LayerNorm's γ and β (2 × 512)? Count weight matrices only.",
    ),
    (
        _LAYER + _NORMS + _FFN_BIASES,
        "that includes the FFN's biases and the LayerNorms; count weight matrices only.",
    ),
    (
        _ATTN,
        "that is the attention block alone (4 × 512 × 512); add the FFN, 2 × 512 × 4096.",
    ),
    (_FFN, "that is the feed-forward network alone; add the attention block, 4 × 512 × 512."),
    (
        3 * _D * _D + _FFN,
        "W^O is missing: the attention block has four 512 × 512 matrices, W^Q, W^K, W^V and W^O.",
    ),
    (
        2 * _ATTN + _FFN,
        "that is a *decoder* layer, with two attention blocks; the encoder has one.",
    ),
    (
        _H * 4 * _D * _D + _FFN,
        "each head's projections are 512 × 64 (d_k = 512 / 8), not 512 × 512: the 8 heads "
        "together cost 4 × 512 × 512.",
    ),
    (
        _H * 3 * _D * _D + _D * _D + _FFN,
        "each head's W^Q, W^K, W^V are 512 × 64 (d_k = 512 / 8), not 512 × 512: the 8 heads "
        "together cost 3 × 512 × 512, plus W^O.",
    ),
    (
        4 * _D * _DK + _FFN,
        "the attention block counts one head's share: W^Q, W^K, W^V are 8 heads of 512 × 64, "
        "and W^O is 512 × 512.",
    ),
    (
        _ATTN + 2 * _D * _D,
        "the FFN's inner width is d_ff = 4096, not d_model: its matrices are 512 × 4096 and "
        "4096 × 512.",
    ),
    (
        _ATTN + 2 * _FF * _FF,
        "the FFN's matrices are 512 × 4096 and 4096 × 512 (d_model in, d_ff inside), not "
        "4096 × 4096.",
    ),
    (
        _N * _LAYER,
        "that is the whole encoder (N = 6 layers); `encoder_layer_weights` is one layer.",
    ),
]
# The count as the lesson writes it, per matrix, and by blocks: what a slip in one factor gives.
_LAYER_TERMS = [
    (
        "the attention block",
        [
            (
                "W^Q, W^K, W^V",
                [("matrices Q, K, V", 3), ("n_heads", 8), ("d_model", 512), ("d_k", 64)],
            ),
            ("W^O", [("d_model", 512), ("d_model", 512)]),
        ],
    ),
    (
        "the FFN",
        [
            ("W_1", [("d_model", 512), ("d_ff", 4096)]),
            ("W_2", [("d_ff", 4096), ("d_model", 512)]),
        ],
    ),
]
_BLOCK_TERMS = [
    (
        "the attention block",
        [("the attention block", [("matrices", 4), ("d_model", 512), ("d_model", 512)])],
    ),
    ("the FFN", [("the FFN", [("matrices", 2), ("d_model", 512), ("d_ff", 4096)])]),
]
_SIZES = {"d_model": _D, "d_k": _DK, "d_ff": _FF, "n_heads": _H, "N": _N}


@exercise("7.2", "Apply: parameters of an encoder with d_ff = 4096")
def apply(encoder_layer_weights, encoder_weights) -> str:
    """List the weight matrices of one encoder layer, sub-layer by sub-layer, with the shape
    of each; a layer's count is the sum of their sizes, the encoder's N times that.

    Attention: W^Q, W^K, W^V for 8 heads of 512 × 64, plus W^O 512 × 512. FFN: 512 × 4096
    and 4096 × 512. Then multiply by N = 6.
    """
    layer = float(one_number("encoder_layer_weights", encoder_layer_weights))
    if abs(layer - _LAYER) > 0.5:
        said = f"`encoder_layer_weights` = {layer:,.0f}:"
        named = match_number(layer, _LAYER_MISTAKES, abs_tol=0.5)
        if named:
            raise Mismatch(f"{said} {named}", MISTAKE)
        slip = count_slip(layer, _LAYER_TERMS, _SIZES) or count_slip(layer, _BLOCK_TERMS, _SIZES)
        if slip:
            raise Mismatch(f"{said} {slip}", MISTAKE)
        raise Mismatch(
            f"{said} expected attention 4 × 512 × 512 = {_ATTN:,} plus FFN 2 × 512 × 4096 = "
            f"{_FFN:,}; yours is {layer - _LAYER:+,.0f} off.",
            DIFFERENCE,
        )
    total = float(one_number("encoder_weights", encoder_weights))
    if abs(total - _N * _LAYER) > 0.5:
        message, kind = _wrong_encoder(total)
        raise Mismatch(message, kind)
    return (
        f"{_LAYER:,} per layer ({_ATTN:,} attention + {_FFN:,} FFN) and {_N * _LAYER:,} for N = 6 "
        "layers: the wider FFN holds four fifths of the weights."
    )


def _wrong_encoder(total: float) -> tuple[str, str]:
    """Why `encoder_weights` = ``total`` is not N = 6 layers of 5,242,880, and its kind."""
    said = f"`encoder_weights` = {total:,.0f}:"
    if abs(total - _N * _WITH_BIASES) < 0.5:
        return f"{said} that includes biases and LayerNorms; count weights only.", MISTAKE
    if abs(total - _N * _BASE_LAYER) < 0.5:
        return (
            f"{said} that is the base model's encoder, with d_ff = 2048; this variant has "
            f"d_ff = 4096: 6 × {_LAYER:,}.",
            MISTAKE,
        )
    if total == _N:
        return f"{said} that is N alone; multiply it by one layer's count, {_LAYER:,}.", MISTAKE
    layers = total / _LAYER
    if abs(layers - 1) < 1e-9:
        return f"{said} that is one layer; the encoder stacks N = 6 identical layers.", MISTAKE
    if abs(layers - 1 / _N) < 1e-9:
        return f"{said} one layer divided by N = 6; multiply: 6 × {_LAYER:,}.", MISTAKE
    if abs(layers - 2 * _N) < 1e-9:
        return (
            f"{said} 12 layers, the encoder and decoder stacks; the encoder alone has N = 6 "
            "(and a decoder layer is larger).",
            MISTAKE,
        )
    if layers > 0 and abs(layers - round(layers)) < 1e-9:
        return f"{said} {_many(round(layers), 'layer')}; the encoder stacks N = 6.", MISTAKE
    return f"{said} the encoder stacks N = 6 identical layers: 6 × {_LAYER:,}.", DIFFERENCE


# 7.3 Extend ------------------------------------------------------------------------------------


@multiple_choice("7.3", "Extend: why inference is sequential", correct="b")
def extend(answer_7_3):
    """What does step t + 1 of the decoder read, and when does it exist?

    Token t + 1 is an input of step t + 2: it must be generated before that step can start.

    (a) The causal mask is what makes *training* parallel: one pass computes every position,
    each seeing only its past. Inference is sequential for another reason.

    (b) p(y) = Π p(y_t | y_<t, x): token t must be chosen before step t + 1 can read it. Work
    inside a step still runs in parallel, the encoder runs once, and a KV cache avoids
    recomputation, but the number of sequential steps equals the output length.

    (c) The encoder runs once; its output (the memory) depends on the source only and is
    reused at every decoding step.

    (d) Memory is not the obstacle: training computes a whole output in one pass, and a
    2,000-token sentence fits easily. The obstacle is that each output token is an input of
    the next step.
    """


# 7.4 (lab L7.A) Parameter breakdown ------------------------------------------------------------

_KEYS = ("embeddings", "attention", "feed_forward", "norms", "total")  # count_parameters' names


@exercise("7.4", "Lab L7.A: a parameter tool")
def parameter_tool(parameter_breakdown) -> str:
    """Print the parameters' names: each says where the parameter lives. Which word in a name
    marks each of the four components?

    Loop over `model.named_parameters()`: 'embed' goes to `embeddings`, 'attn' to `attention`,
    'ffn' to `feed_forward`, 'norm' to `norms`; add `p.numel()` to the matching count and to
    `total`.
    """
    for sizes in [(10_000, 512, 8, 6, 2048), (50, 16, 2, 2, 24)]:
        model = make_encoder(*sizes)
        during = f"on the encoder {sizes}"
        got = call(parameter_breakdown, model, during=during, tip=_numel_tip)
        if got is None:
            raise Mismatch(
                "parameter_breakdown returned None: end it with `return counts`.", MISTAKE
            )
        if not isinstance(got, dict):
            raise Mismatch(
                f"parameter_breakdown should return a dict; got {type(got).__name__}", TYPE
            )
        if "embedding" in got and "embeddings" not in got:  # the key's name in earlier copies
            got = {("embeddings" if k == "embedding" else k): v for k, v in got.items()}
        missing = [k for k in _KEYS if k not in got]
        if missing:
            raise Mismatch(
                f"the dict needs the keys {', '.join(_KEYS)}; missing {', '.join(missing)}", SHAPE
            )
        expected = _breakdown(model)
        values = {key: _count(key, got[key]) for key in _KEYS}
        for key in _KEYS:
            if abs(values[key] - expected[key]) >= 0.5:
                message, kind = _miscount(model, values, key, expected, sizes)
                raise Mismatch(message, kind)
    big = _breakdown(make_encoder(10_000, 512, 8, 6, 2048))
    ffn = big["feed_forward"] / big["total"]
    return f"total {big['total']:,}; the feed-forward networks hold {ffn:.2%}, the largest share."


_WORDS = {"embeddings": "embed", "attention": "attn", "feed_forward": "ffn", "norms": "norm"}


def _numel_tip(error: Exception) -> str | None:
    if isinstance(error, RuntimeError) and "size of tensor" in str(error):
        return "Add p.numel(), the number of entries of each parameter, not the tensor p itself."
    if isinstance(error, KeyError):
        return "Start with every key at 0: dict.fromkeys([..., 'total'], 0)."
    return None


def _count(key: str, value) -> float:
    """One count of the dict: a number (or a tensor holding one)."""
    if isinstance(value, torch.Tensor) and value.numel() > 1:
        raise Mismatch(
            f"`{key}` is a tensor of shape {tuple(value.shape)}: add p.numel(), the number of "
            "entries, not the parameter p itself.",
            MISTAKE,
        )
    return float(one_number(key, value))


def _breakdown(model, keep=lambda name, p: True) -> dict:
    """The exercise's dict, by course_lib.parameters' grouping, over the parameters that
    ``keep(name, p)`` accepts."""
    counts = dict.fromkeys(_KEYS, 0)
    for name, p in model.named_parameters():
        if keep(name, p):
            part = component(name)
            counts[part] += p.numel()
            counts["total"] += p.numel()
    return counts


def _miscount(model, got: dict, key: str, expected: dict, sizes) -> tuple[str, str]:
    """Why ``got[key]`` is not the ``expected`` count, and the kind of that diagnosis."""
    value, right = got[key], expected[key]
    said = f"`{key}` = {value:,.0f} on the encoder {sizes}"
    if key == "norms" and value == 0:
        return (
            "no LayerNorm parameters counted: their names contain 'norm' (residual1.norm.weight).",
            MISTAKE,
        )
    if key != "total" and all(got[k] == 0 for k in _KEYS[:-1]):
        return (
            "every component is 0: no parameter name matched, or nothing was added. Print the "
            "names, [n for n, _ in model.named_parameters()]: they say 'embedding', "
            "'self_attn', 'ffn', 'norm'; add p.numel() to the matching count.",
            MISTAKE,
        )
    if key != "total" and value == 0:
        return (
            f"`{key}` = 0: no parameter name matched. Print the names, "
            "[n for n, _ in model.named_parameters()]: they say 'embedding', 'self_attn', "
            "'ffn', 'norm'.",
            MISTAKE,
        )
    for wrong, why in _miscounts(model, key, expected):
        if abs(value - wrong) < 0.5:
            return f"{said}: {why}", MISTAKE
    if key == "total":
        parts = sum(got[k] for k in _KEYS[:-1])
        if abs(value - parts) > 0.5:
            return (
                f"{said}: `total` should equal the sum of the four components, {parts:,.0f}; "
                "add every parameter's p.numel() to it.",
                MISTAKE,
            )
    return (
        f"{said}; expected {right:,}, the p.numel() of every parameter whose name contains "
        f"'{_WORDS.get(key, '')}'."
        if key != "total"
        else f"{said}; expected {right:,}.",
        DIFFERENCE,
    )


def _parts(model, key: str) -> dict[str, int]:
    """The parameters of one component by their name in a layer ("self_attn.w_o.bias") and by
    their module ("self_attn.w_o"), with their count over all the layers."""
    parts: dict[str, int] = {}
    for name, p in model.named_parameters():
        part = component(name)
        if part == key and "layers." in name:
            within = name.split("layers.", 1)[1].split(".", 1)[1]  # self_attn.w_o.bias
            for part in (within, within.rsplit(".", 1)[0]):  # and its module, self_attn.w_o
                parts[part] = parts.get(part, 0) + p.numel()
    return parts


def _miscounts(model, key: str, expected: dict) -> list:
    """The typical miscounts of ``key`` on ``model``: (count, why)."""
    right, n_layers = expected[key], len(model["encoder"].layers)
    only = {
        name: _breakdown(model, keep)[key]
        for name, keep in {
            "weights": lambda n, p: p.dim() > 1,
            "biases": lambda n, p: p.dim() == 1,
            "first layer": lambda n, p: "layers." not in n or "layers.0." in n,
            "gamma": lambda n, p: "norm.bias" not in n,
        }.items()
    }
    rows = sum(p.shape[0] for n, p in model.named_parameters() if component(n) in (key, key + "s"))
    miscounts = [
        (-right, "negative: add p.numel() to the count, don't subtract it."),
        (right + 1, "one too many: start every count at 0, dict.fromkeys(keys, 0)."),
        (right - 1, "one too few: start every count at 0, dict.fromkeys(keys, 0)."),
        (
            only["weights"],
            "that counts the weight matrices only; the biases are parameters too (p.numel() "
            "of every parameter).",
        ),
        (only["biases"], "that counts the biases (and LayerNorm vectors) only; add the matrices."),
        (2 * right, "each parameter is counted twice: stop at the first matching word (break)."),
    ]
    if key == "total":
        miscounts += [
            (0, "nothing was added to `total`: add every parameter's p.numel() to it."),
            (
                right - expected["embeddings"],
                "the embedding table is left out of `total`; it is a parameter too.",
            ),
        ]
    else:
        miscounts += [
            (
                expected["total"] - right,
                "that counts every parameter *except* its own: `if word in name`, not `not in`.",
            ),
            (
                only["first layer"],
                f"that is the first layer only; the encoder has {_many(n_layers, 'layer')}: "
                "loop over all of model.named_parameters().",
            ),
            (
                rows,
                "that adds p.shape[0] (or len(p)), the number of rows; p.numel() counts every "
                "entry.",
            ),
        ]
    if key == "norms":
        miscounts.append(
            (
                only["gamma"],
                "that is half the LayerNorm parameters: each LayerNorm has γ and β "
                "(2 · d_model), and each layer two LayerNorms.",
            )
        )
    if key != "total":
        same: dict[int, list[str]] = {}
        for part, count in _parts(model, key).items():
            same.setdefault(count, []).append(part)
        for count, names in same.items():
            if 0 < count < right:
                which = names[0] if len(names) == 1 else f"one of {', '.join(names)}"
                miscounts.append((right - count, f"that leaves out {which} in every layer."))
    pe = model["positional"].pe.numel()
    if key in ("embeddings", "total"):
        miscounts.append(
            (
                right + pe,
                "that includes the positional-encoding table, a buffer (state_dict), not a "
                "parameter: count model.named_parameters().",
            )
        )
    for other in _KEYS[:-1]:
        if other != key != "total":
            miscounts.append(
                (
                    expected[other],
                    f"that is the count of `{other}`: the names and the keys are mixed up "
                    f"('{_WORDS[key]}' goes to `{key}`).",
                )
            )
    return miscounts


# 7.5 (lab L7.B) Position influence -------------------------------------------------------------


@exercise("7.5", "Lab L7.B: every position influences every other")
def position_influence(influence) -> str:
    """Switch dropout off first, or two runs differ even with the same input. Then follow the
    encoder's own path twice: embedding, scale, positional encoding, stack; the second time,
    blank one position between the scale and the positional encoding.

    `encoder.eval()`; `x = encoder["embedding"](tokens) * math.sqrt(d_model)`; a copy with
    `blanked[:, zeroed] = 0.0`; both through `encoder["positional"]` and `encoder["encoder"]`;
    return `(original - changed)[:, probe].norm(dim=-1)`.
    """
    torch.manual_seed(7)  # the same encoder every time; Exercise.run restores the learner's seed
    enc = make_encoder(60, 16, 2, 2, 32)
    tokens = torch.randint(4, 60, (3, 15), generator=torch.Generator().manual_seed(1))
    enc.train()  # the learner's function must switch dropout off itself
    got = _distances(influence, enc, tokens, 3, 7)
    left_training = enc.training
    expected, mistakes = _influences(enc, tokens, 3, 7)
    if not torch.allclose(got, expected, atol=1e-4):
        message = match(got, mistakes) or _partly_zeroed(got, expected)
        if message:
            raise Mismatch(message, MISTAKE)
        if left_training:
            raise Mismatch(
                "the encoder is still in training mode, so dropout changes the outputs at "
                "random: call encoder.eval() first.",
                MISTAKE,
            )
        raise Mismatch(
            f"distances {got.numpy().round(3).tolist()}; expected "
            f"{expected.numpy().round(3).tolist()}.",
            DIFFERENCE,
        )
    enc.train()
    again = _distances(influence, enc, tokens, 10, 2)
    expected_again, _ = _influences(enc, tokens, 10, 2)
    if not torch.allclose(again, expected_again, atol=1e-4):
        raise Mismatch(
            "right for zeroed=3, probe=7, but not for zeroed=10, probe=2: use the arguments "
            "`zeroed` and `probe`, not fixed positions.",
            MISTAKE,
        )
    distances = ", ".join(f"{v:.2f}" for v in got.tolist())
    return f"distances at position 7 after zeroing position 3: {distances}, all non-zero."


def _distances(influence, enc, tokens, zeroed: int, probe: int) -> torch.Tensor:
    """The learner's distances, one per sequence, checked for type and shape."""
    during = f"with zeroed={zeroed}, probe={probe}"
    result = call(influence, enc, tokens, zeroed, probe, during=during, tip=_index_tip)
    got = expect_tensor("influence", expect_returned("influence", result)).detach().double()
    batch, d_model = tokens.shape[0], enc["embedding"].embedding_dim
    if got.numel() == 1:
        raise Mismatch(
            "return one distance per sequence, shape (B,) = (3,): take the norm over d_model "
            "only (dim=-1).",
            MISTAKE,
        )
    if tuple(got.shape) == (d_model,):
        raise Mismatch(
            f"shape ({d_model},) is one value per feature: the norm ran over the batch (dim=0). "
            "Take it over d_model, .norm(dim=-1), one distance per sequence.",
            MISTAKE,
        )
    if tuple(got.shape) == (batch, d_model):
        raise Mismatch(
            f"shape {(batch, d_model)} holds the difference vectors: return their length, "
            ".norm(dim=-1), one distance per sequence.",
            MISTAKE,
        )
    if got.dim() == 1 and got.shape[0] < batch:
        raise Mismatch(
            f"{got.shape[0]} distances for {batch} sequences: keep every sequence, [:, probe].",
            MISTAKE,
        )
    expect_shape("influence(...)", got, (batch,), "(B,)")
    return got


def _index_tip(error: Exception) -> str | None:
    if isinstance(error, IndexError) and "dimension 0" in str(error):
        return (
            "Positions are the second axis: x[:, zeroed] and out[:, probe] (x is (B, T, d_model))."
        )
    return None


def _partly_zeroed(got: torch.Tensor, expected: torch.Tensor) -> str | None:
    """A message if some sequences have the right distance and the others 0."""
    right = (got - expected).abs() < 1e-4
    zero = got.abs() < 1e-6
    if bool((right | zero).all()) and bool(zero.any()) and bool(right.any()):
        return (
            "some distances are 0: position `zeroed` was blanked in some sequences only. "
            "Zero it in every sequence, x[:, zeroed] = 0."
        )
    return None


def _influences(enc, tokens, zeroed: int, probe: int) -> tuple[torch.Tensor, list]:
    """The distances at ``probe`` after zeroing ``zeroed``, and those of the typical slips."""
    enc.eval()
    embedding, positional, encoder = enc["embedding"], enc["positional"], enc["encoder"]
    d_model = embedding.embedding_dim
    root = math.sqrt(d_model)
    blanked = tokens.clone()
    blanked[:, zeroed] = 0  # the token id 0: a real embedding row, not a zero vector

    def out(inputs, at=probe):
        return encoder(inputs)[:, at].double()

    def moved(inputs, changed, at=probe):
        """How far the encoder's output at ``at`` moves when ``inputs`` become ``changed``."""
        return (out(inputs, at) - out(changed, at)).norm(dim=-1)

    with torch.no_grad():
        x, unscaled = embedding(tokens) * root, embedding(tokens)

        def scaled(factor):
            e = embedding(tokens) * factor
            return moved(positional(e), positional(_zeroed(e, zeroed)))

        expected = moved(positional(x), positional(_zeroed(x, zeroed)))
        ones = x.clone()
        ones[:, zeroed] = 1.0
        return expected, [
            (
                moved(positional(x), _zeroed(positional(x), zeroed)),
                "you zeroed the position after adding the positional encoding; zero the scaled "
                "embedding *before* it, so only the content is removed.",
            ),
            (
                moved(positional(unscaled), positional(_zeroed(unscaled, zeroed))),
                "the embeddings are not multiplied by √d_model before the positional encoding "
                "(§3.4).",
            ),
            (
                scaled(1 / root),
                "the embeddings are divided by √d_model; multiply them by it (§3.4).",
            ),
            (scaled(d_model), "the embeddings are multiplied by d_model; the scale is √d_model."),
            (expected**2, "these are squared distances: take the L2 norm, .norm(dim=-1)."),
            (-expected, "these distances are negative: a norm is ≥ 0."),
            (
                moved(positional(x), positional(embedding(blanked) * root)),
                "you replaced the token id by 0, which looks up a real embedding row; set the "
                "scaled embedding *vector* of that position to zeros instead.",
            ),
            (
                moved(positional(x), positional(ones)),
                "the position was set to 1s; set its scaled embedding to zeros.",
            ),
            (
                moved(positional(x), positional(_zeroed(x, zeroed)), at=zeroed),
                "these are the distances at position `zeroed`; measure at position `probe`.",
            ),
            (
                torch.zeros_like(expected),
                "every distance is 0: the two encodings are the same. Zero the scaled embedding "
                "at `zeroed` in the second one.",
            ),
            (
                (out(positional(x)) + out(positional(_zeroed(x, zeroed)))).norm(dim=-1),
                "that is the length of the *sum* of the two outputs; the distance is the norm "
                "of their difference.",
            ),
            (
                out(positional(x)).norm(dim=-1),
                "that is the length of the original output at `probe`; the distance is the "
                "norm of the difference between the two outputs.",
            ),
        ]


def _zeroed(x: torch.Tensor, position: int) -> torch.Tensor:
    """``x`` (B, T, d) with the vectors at ``position`` set to zeros."""
    x = x.clone()
    x[:, position] = 0
    return x


# 7.6 (lab L7.C) A dedicated [CLS] token --------------------------------------------------------


@exercise("7.6", "Lab L7.C: a dedicated [CLS] token")
def cls_token(prepend_cls) -> str:
    """Build a column that holds cls_id once for every sequence, with the tokens' dtype, and
    join it to the tokens on their left, along the positions.

    `torch.cat([torch.full((tokens.shape[0], 1), cls_id, dtype=tokens.dtype), tokens], dim=1)`
    """
    tokens = torch.tensor([[7, 8, 9], [4, 5, 6]])
    for cls_id in (1, 5):
        extra = {} if cls_id == 1 else {"cls_id": cls_id}
        during = "on a (2, 3) batch" + (f" with cls_id={cls_id}" if extra else "")
        got = call(prepend_cls, tokens.clone(), during=during, tip=_cat_tip, **extra)
        got = expect_tensor("prepend_cls", expect_returned("prepend_cls", got))
        expected = torch.cat([torch.full((2, 1), cls_id), tokens], dim=1)
        if tuple(got.shape) == (2, 3):
            raise Mismatch(
                "the shape is still (B, T): prepend a new column of 1s instead of overwriting "
                "a token.",
                MISTAKE,
            )
        if tuple(got.shape) == (2, 5):
            raise Mismatch(
                "shape (B, T + 2): two CLS columns. The column is torch.full((B, 1), cls_id).",
                MISTAKE,
            )
        expect_shape("prepend_cls(tokens)", got, (2, 4), "(B, T + 1)")
        if got.dtype != torch.long:
            raise Mismatch(
                f"token ids must stay integers (torch.long); got dtype {got.dtype}", MISTAKE
            )
        if torch.equal(got, torch.cat([tokens, torch.full((2, 1), cls_id)], dim=1)):
            raise Mismatch(
                "the CLS token went to the end; the classifier reads position 0, so it goes first.",
                MISTAKE,
            )
        if torch.equal(got, -expected):
            raise Mismatch("the ids are negated: return the concatenation as it is.", MISTAKE)
        if cls_id != 1 and torch.equal(got[:, 0], torch.ones(2, dtype=torch.long)):
            raise Mismatch(
                "with cls_id=5 the first column is still 1: use the argument `cls_id`.", MISTAKE
            )
        if torch.equal(got[:, 1:], tokens) and not torch.equal(got, expected):
            raise Mismatch(
                f"the tokens are right, but position 0 holds {got[:, 0].tolist()}; it should "
                f"hold cls_id = {cls_id} in every sequence.",
                MISTAKE,
            )
        if not torch.equal(got, expected):
            raise Mismatch(f"expected {expected.tolist()}; got {got.tolist()}", DIFFERENCE)
    return "id 1 at position 0 of every sequence, the rest shifted right by one."


def _cat_tip(error: Exception) -> str | None:
    if isinstance(error, (RuntimeError, IndexError)) and (
        "Sizes of tensors must match" in str(error) or "Dimension out of range" in str(error)
    ):
        return (
            "The CLS column is (B, 1) and the tokens (B, T): join them along the positions, "
            "torch.cat([cls_column, tokens], dim=1)."
        )
    return None


# 7.7 (lab L7.D) The warmup schedule ------------------------------------------------------------

_TABLE = {  # step -> 512^-0.5 · min(step^-0.5, step · 4000^-1.5)
    1: 1.747e-7,
    1000: 1.747e-4,
    2000: 3.494e-4,
    4000: 6.988e-4,
    8000: 4.941e-4,
    16000: 3.494e-4,
    20000: 3.125e-4,
    100000: 1.398e-4,
}
_FROM_ZERO = "LambdaLR calls your function with 0 first: pass step + 1."
_OTHER = {"d_model": 64, "warmup": 10}  # a second schedule, so fixed 512 and 4000 show
_OTHER_STEPS = (1, 5, 10, 20, 100)
_RATE = "d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)"


@exercise("7.7", "Lab L7.D: the warmup schedule")
def warmup(noam_lr, make_scheduler) -> str:
    """Eq. 3 is a product: a constant that depends on d_model only, times the smaller of a term
    that rises with the step and one that falls with it. The two meet at step = warmup.

    The scheduler's function receives LambdaLR's counter, which starts at 0, while the
    formula's steps start at 1: shift by one inside the scheduler, not in `noam_lr`.

    `d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)`, and
    `LambdaLR(optimizer, lambda n: noam_lr(n + 1))`.
    """
    rates = [_rate_of(noam_lr, step) for step in _TABLE]
    takes_sizes = _takes(noam_lr, 1, *_OTHER.values())  # by position: any parameter names
    if any(abs(r - _noam(s)) > 1e-3 * _noam(s) for r, s in zip(rates, _TABLE, strict=True)):
        if takes_sizes:
            rates += [_rate_of(noam_lr, step, **_OTHER) for step in _OTHER_STEPS]
        message, kind = _wrong_rate(rates)
        raise Mismatch(message, kind)
    if not takes_sizes:
        raise Mismatch(
            "noam_lr takes d_model and warmup too: def noam_lr(step, d_model=512, warmup=4000).",
            MISTAKE,
        )
    others = [_rate_of(noam_lr, step, **_OTHER) for step in _OTHER_STEPS]
    expected = [_noam(step, **_OTHER) for step in _OTHER_STEPS]
    if any(abs(r - e) > 1e-3 * e for r, e in zip(others, expected, strict=True)):
        message, kind = _wrong_rate(rates + others)
        raise Mismatch(message, kind)
    optimizer = torch.optim.Adam(nn.Linear(2, 2).parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    lrs = call(
        make_scheduler,
        optimizer,
        during="with Adam(lr=1.0)",
        tip=_from_zero_tip,
        then=_learning_rates,
    )
    if isinstance(lrs, str):
        expect_returned("make_scheduler", None if lrs == "NoneType" else lrs)
        raise Mismatch(
            f"make_scheduler should return a torch scheduler (e.g. LambdaLR); got {lrs}", TYPE
        )
    if all(lr == 1.0 for lr in lrs):
        raise Mismatch(
            "the learning rate stays 1.0: the scheduler must drive the optimizer it is given, "
            "LambdaLR(optimizer, ...).",
            MISTAKE,
        )
    if len(set(lrs)) == 1:
        raise Mismatch(
            f"the learning rate never changes ({lrs[0]:.4g}): the lambda must pass its "
            "argument on, noam_lr(n + 1).",
            MISTAKE,
        )
    if abs(lrs[0] - _TABLE[1]) > 1e-3 * _TABLE[1]:
        step = next((s for s in range(1, 10) if abs(lrs[0] - _noam(s)) < 1e-3 * _noam(s)), None)
        which = f" = noam_lr({step})" if step else ""
        raise Mismatch(
            f"the first update uses lr {lrs[0]:.4g}{which}; expected 1.747e-7 = noam_lr(1). "
            f"{_FROM_ZERO}",
            MISTAKE,
        )
    peak = max(range(len(lrs)), key=lrs.__getitem__) + 1
    if peak != 4000:
        off = " LambdaLR counts from 0: pass step + 1, once." if peak in (3999, 4001) else ""
        kind = MISTAKE if off else DIFFERENCE
        raise Mismatch(f"the peak is at update {peak}; expected update 4,000.{off}", kind)
    return (
        "1.747e-7 at update 1, the peak 6.988e-4 at update 4,000, then 1/√step: 3.125e-4 at 20,000."
    )


def _learning_rates(scheduler, optimizer) -> list[float] | str:
    """The lr of each of 4001 updates driven by the learner's ``scheduler`` (or the name of
    what was returned, if it is no scheduler). Runs beside the learner's code (``call``)."""
    if not isinstance(scheduler, torch.optim.lr_scheduler.LRScheduler):
        return type(scheduler).__name__
    lrs = []
    with warnings.catch_warnings():  # a scheduler on another optimizer warns at each step
        warnings.simplefilter("ignore")
        for _ in range(4001):
            lrs.append(float(optimizer.param_groups[0]["lr"]))  # the lr of the next update
            optimizer.step()
            scheduler.step()
    return lrs


def _takes(fn, *args, **kwargs) -> bool:
    """Whether the learner's ``fn`` accepts these arguments (by its signature)."""
    try:
        expect_parameters(fn, "", *args, **kwargs)
    except Mismatch:
        return False
    return True


def _noam(step: float, d_model: int = 512, warmup: int = 4000) -> float:
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def _rate_of(noam_lr, step: int, **sizes) -> float:
    given = ", ".join(f"{k}={v}" for k, v in sizes.items())
    during = f"with step = {step}" + (f", {given}" if given else "")
    rate = call(noam_lr, step, *sizes.values(), during=during, tip=_power_tip)
    value = expect_returned("noam_lr", rate)
    if isinstance(value, complex):
        raise Mismatch(
            f"noam_lr({step}) is a complex number: a negative number raised to a fractional "
            "power. The step counts from 1.",
            MISTAKE,
        )
    return float(one_number("noam_lr(step)", value, finite=False))


def _from_zero_tip(error: Exception) -> str | None:
    if isinstance(error, ZeroDivisionError) or "complex" in str(error):
        return _FROM_ZERO
    if "has no attribute 'param_groups'" in str(error):
        return "LambdaLR(optimizer, lr_lambda) takes the optimizer first."
    return None


def _power_tip(error: Exception) -> str | None:
    if isinstance(error, OverflowError):
        return "The powers in the rate are step ** -0.5 and warmup ** -1.5: small, not huge."
    return None


# The parts of the rate and their typical slips: (what it is, how it is computed).
_FACTORS = [
    ("d_model^-0.5", lambda d: d**-0.5),
    ("no d_model factor", lambda d: 1.0),
    ("d_model^0.5", lambda d: d**0.5),
    ("d_model^-1", lambda d: d**-1.0),
    ("d_model^-0.25", lambda d: d**-0.25),
    ("d_model · (-0.5)", lambda d: d * -0.5),
]
_JOINS = [
    ("d_model^-0.5 · min(...)", lambda a, b: a * b),
    ("d_model^-0.5 / min(...)", lambda a, b: a / b),
]
_DECAYS = [
    ("step^-0.5", lambda s: s**-0.5),
    ("step", lambda s: s),
    ("step^0.5", lambda s: s**0.5),
    ("step^-1", lambda s: s**-1.0),
    ("step^-0.25", lambda s: s**-0.25),
    ("step · (-0.5)", lambda s: s * -0.5),
]
_RISES = [
    ("step · warmup^-1.5", lambda s, w: s * w**-1.5),
    ("step (no warmup^-1.5)", lambda s, w: s),
    ("warmup^-1.5 (no step)", lambda s, w: w**-1.5),
    ("step · warmup^-3", lambda s, w: s * w**-3.0),
    ("step · warmup^-0.75", lambda s, w: s * w**-0.75),
    ("step · warmup^-0.5", lambda s, w: s * w**-0.5),
    ("step · warmup^-1", lambda s, w: s * w**-1.0),
    ("step · warmup^1.5", lambda s, w: s * w**1.5),
    ("step · warmup · (-1.5)", lambda s, w: s * w * -1.5),
]
_COMBINE = [("min(...)", min), ("max(...)", max)]


def _wrong_rate(rates: list[float]) -> tuple[str, str]:
    """Why noam_lr gives ``rates`` at the table's steps (then at the other sizes' steps)."""
    points = [(s, 512, 4000) for s in _TABLE] + [(s, 64, 10) for s in _OTHER_STEPS]
    points = points[: len(rates)]
    right = [_noam(s, d, w) for s, d, w in points]

    def matches(values) -> bool:
        return all(
            math.isclose(r, v, rel_tol=1e-3, abs_tol=1e-12)
            for r, v in zip(rates, values, strict=True)
        )

    step, got = points[0][0], rates[0]
    for (s, _, _), r, v in zip(points, rates, right, strict=True):
        if not math.isclose(r, v, rel_tol=1e-3):
            step, got = s, r
            break
    said = f"noam_lr({step}) = {got:.4g}"
    for shift in (1, -1):
        if matches([_noam(s + shift, d, w) if s + shift > 0 else math.nan for s, d, w in points]):
            return (
                f"{said}: that is the rate of step {step + shift}. noam_lr counts steps from 1; "
                "add 1 only in the scheduler's lambda.",
                MISTAKE,
            )
    if len(rates) > len(_TABLE) and matches([_noam(s) for s, _, _ in points]):
        return (
            "right with the defaults, but noam_lr(step, d_model=64, warmup=10) still uses 512 "
            "and 4000: use the arguments d_model and warmup.",
            MISTAKE,
        )
    if matches([-v for v in right]):
        return f"{said}: the rate is negative; the formula has no minus sign in front.", MISTAKE
    if all(math.isclose(r, rates[0], rel_tol=1e-9) for r in rates[: len(_TABLE)]):
        return (
            f"noam_lr gives {rates[0]:.4g} at every step: the part that depends on the step, "
            "min(step^-0.5, step · warmup^-1.5), is missing.",
            MISTAKE,
        )
    slips = _rate_slips(points, matches)
    if slips:
        return f"{said}: you have {'; '.join(slips)}. The rate is {_RATE}.", MISTAKE
    ratios = [r / v for r, v in zip(rates, right, strict=True)]
    if all(math.isclose(q, ratios[0], rel_tol=1e-3) for q in ratios[: len(_TABLE)]):
        return (
            f"{said}: every rate is {ratios[0]:.4g} times the paper's, so the shape is right and "
            f"the constant factor is off: d_model^-0.5 = {512**-0.5:.4g} for d_model = 512.",
            MISTAKE,
        )
    if any(not r > 0 for r in rates):
        return (
            f"{said}: a learning rate is positive; check the signs and the exponents of {_RATE}.",
            MISTAKE,
        )
    return f"{said}; expected {_noam(step):.4g} = {_RATE}.", DIFFERENCE


def _rate_slips(points, matches) -> list[str]:
    """The parts of the rate that differ from the paper's in the first formula that gives the
    learner's rates, trying one wrong part before two; [] if none does."""
    options = (_FACTORS, _JOINS, _DECAYS, _RISES, _COMBINE)
    for wrong in (1, 2):
        for choice in itertools.product(*(range(len(o)) for o in options)):
            if sum(i > 0 for i in choice) != wrong:
                continue
            (_, factor), (_, join), (_, decay), (_, rise), (_, pick) = (
                o[i] for o, i in zip(options, choice, strict=True)
            )
            try:
                values = [join(factor(d), pick(decay(s), rise(s, w))) for s, d, w in points]
            except (ZeroDivisionError, OverflowError):
                continue
            if matches(values):
                return [
                    f"{o[i][0]} where the formula has {o[0][0]}"
                    for o, i in zip(options, choice, strict=True)
                    if i > 0
                ]
    return []


# 7.8 (lab L7.E) Label smoothing by hand --------------------------------------------------------

_LOGITS = torch.tensor([2.0, 1.0, 0.1, -1.0], dtype=torch.float64)
_LOG_P = _LOGITS.log_softmax(-1)
_EPS, _K = 0.1, 4


@exercise("7.8", "Lab L7.E: label smoothing by hand")
def label_smoothing(plain_loss, smoothed_loss) -> str:
    """Both losses are cross-entropies, minus the sum of target × log-probability over the
    classes; only the target differs: all on class 0, or spread a little over every class.

    Smoothed target: 1 − ε + ε/K = 0.925 for the true class, ε/K = 0.025 for each of the
    others. Take the log-probabilities from log_softmax, not from the logits themselves.

    `log_p = logits.log_softmax(dim=-1)`; `plain_loss = -log_p[0]`;
    `smoothed_loss = -(target * log_p).sum()` with `target = [0.925, 0.025, 0.025, 0.025]`.
    """
    plain = float(-_LOG_P[0])
    smoothed = _cross_entropy([1 - _EPS + _EPS / _K] + [_EPS / _K] * (_K - 1))
    got = float(one_number("plain_loss", plain_loss, finite=False))
    if not typed_close(got, plain):  # the course's rounding of typed numbers
        named = match_number(got, _plain_mistakes(), abs_tol=5e-4) or match_number(
            got,
            _plain_mistakes(),
            abs_tol=typed_tolerance(plain),  # a mistake typed rounded
        )
        if named:
            raise Mismatch(f"`plain_loss` = {got:.4f}: {named}", MISTAKE)
        raise Mismatch(
            f"`plain_loss` = {got:.4f}; expected −log softmax(logits)[0] = {plain:.4f}.",
            DIFFERENCE,
        )
    got = float(one_number("smoothed_loss", smoothed_loss, finite=False))
    if not typed_close(got, smoothed):
        mistakes = _smoothing_mistakes(plain, smoothed)
        named = match_number(got, mistakes, abs_tol=5e-4) or _target_slip(got)
        # a mistake typed rounded, where two may look alike
        named = named or match_number(got, mistakes, abs_tol=typed_tolerance(smoothed))
        if named:
            raise Mismatch(f"`smoothed_loss` = {got:.4f}: {named}", MISTAKE)
        raise Mismatch(
            f"`smoothed_loss` = {got:.4f}; expected −Σ target · log softmax(logits) = "
            f"{smoothed:.4f}, with the target [0.925, 0.025, 0.025, 0.025].",
            DIFFERENCE,
        )
    return (
        f"plain {plain:.4f}, smoothed {smoothed:.4f}: smoothing costs loss here, because the "
        "model is never rewarded for full confidence."
    )


def _cross_entropy(target, log_p=_LOG_P) -> float:
    """−Σ target · log p: the loss of the exercise's logits for this target."""
    return float(-(torch.tensor(target, dtype=torch.float64) * log_p).sum())


def _plain_mistakes() -> list:
    p, plain = _LOGITS.softmax(-1), float(-_LOG_P[0])
    wrong = [
        (-plain, "the sign is flipped: the loss is −log p(true class)."),
        (plain / math.log(2), "that is log base 2; cross-entropy here uses the natural log."),
        (plain / math.log(10), "that is log base 10; cross-entropy uses the natural log."),
        (float(1 - p[0]), "1 − p is not the cross-entropy: take −log p."),
        (float(p[0]), "that is the probability p of the true class; the loss is −log p."),
        (
            float(-p[0]),
            "that is −p, the probability: take the log of the softmax (log_softmax), not the "
            "softmax.",
        ),
        (
            float(-_LOGITS[0]),
            "that is −logit[0]: the logits are not log-probabilities. Take log_softmax first.",
        ),
        (
            float(-_LOG_P.sum()),
            "that sums −log p over all 4 classes; the loss takes only the true class, 0.",
        ),
        (
            float(-_LOG_P.mean()),
            "that averages −log p over the classes; the loss takes only the true class, 0.",
        ),
    ]
    wrong += [
        (float(-_LOG_P[j]), f"that is −log p of class {j}; the true class is 0.")
        for j in range(1, _K)
    ]
    return wrong


def _smoothing_mistakes(plain: float, smoothed: float) -> list:
    eps, k = _EPS, _K
    entropy = _cross_entropy([1 - eps + eps / k] + [eps / k] * (k - 1), log_p=_target_log())
    target = torch.tensor([1 - eps + eps / k] + [eps / k] * (k - 1), dtype=torch.float64)
    return [
        (
            _cross_entropy([1 - eps] + [eps / (k - 1)] * (k - 1)),
            "you spread ε over the K − 1 wrong classes (0.9 and 0.0333); PyTorch and this "
            "course spread it over all K: 1 − ε + ε/K = 0.925 and ε/K = 0.025.",
        ),
        (
            _cross_entropy([1 - eps] + [eps / k] * (k - 1)),
            "the true class gets 1 − ε = 0.9 without its own share ε/K: it gets "
            "1 − ε + ε/K = 0.925 (the target sums to 1).",
        ),
        (
            _cross_entropy([1 - eps] + [0.0] * (k - 1)),
            "the target [0.9, 0, 0, 0] lost ε: it must still sum to 1, so give every class "
            "ε/K = 0.025 (true class 0.925).",
        ),
        (
            plain,
            "that is the plain cross-entropy; use the smoothed target "
            "[0.925, 0.025, 0.025, 0.025].",
        ),
        (-smoothed, "the sign is flipped: the loss is −Σ target · log p."),
        (
            smoothed / k,
            "that is the mean over the 4 classes; the cross-entropy *sums* target · log p over "
            "the classes.",
        ),
        (
            smoothed - entropy,
            "that is the KL divergence (nn.KLDivLoss), which leaves out the target's own "
            f"entropy, {entropy:.4f}; the cross-entropy is −Σ target · log p.",
        ),
        (smoothed / math.log(2), "that is log base 2; cross-entropy uses the natural log."),
        (
            float(-(target * _LOGITS.softmax(-1)).sum()),
            "that multiplies the target by the probabilities; take their log, log_softmax.",
        ),
        (
            float(-(target * _LOGITS).sum()),
            "that multiplies the target by the logits; take log_softmax(logits) first.",
        ),
        (
            float(-(target / _LOG_P).sum()),
            "that divides the target by log p; multiply: −Σ target · log p.",
        ),
        (-1.0, "that is −Σ target = −1: multiply the target by log p before summing."),
        (
            float(-_LOG_P.sum()),
            "that is −Σ log p without the target: weight each class by its target value.",
        ),
        (
            _cross_entropy([0.0] + [eps / (k - 1)] * (k - 1)),
            "class 0 got no target at all, as if it were padding; here class 0 is the true "
            "class: 1 − ε + ε/K = 0.925.",
        ),
        (
            _cross_entropy([0.0] + [eps / k] * (k - 1)),
            "class 0 got no target at all, as if it were padding; here class 0 is the true "
            "class: 1 − ε + ε/K = 0.925.",
        ),
        (
            _cross_entropy([0.0] + [eps / (k - 2)] * (k - 1)),
            "class 0 got no target at all, as if it were padding (ε over K − 2 classes, as "
            "one popular tutorial does); here class 0 is the true class: 0.925.",
        ),
    ]


def _target_log() -> torch.Tensor:
    target = torch.tensor([1 - _EPS + _EPS / _K] + [_EPS / _K] * (_K - 1), dtype=torch.float64)
    return target.log()


# The smoothed target as the model answer builds it: ε/K everywhere (the "share"), then 1 − ε
# added at the true class (the "boost"). What a slip in one of the two, or in the class, gives.
_SHARES = {
    _EPS: "ε = 0.1 itself: divide it by K = 4",
    _EPS * _K: "ε × K = 0.4: divide ε by K, don't multiply",
    _K / _EPS: "K / ε = 40: that is ε/K upside down",
    _EPS / (_K - 1): "ε/(K − 1) = 0.0333: spread ε over all K = 4 classes",
    _EPS / (_K + 1): "ε/5 = 0.02: there are K = 4 classes",
    2 * _EPS / _K: "0.2/4 = 0.05: ε is 0.1",
    _EPS / 2 / _K: "0.05/4 = 0.0125: ε is 0.1",
    1.1 / _K: "1.1/4 = 0.275: ε is 0.1",
    0.0: "nothing: every class gets ε/K = 0.025",
}
_BOOSTS = {
    1.0: "1: the true class gets 1 − ε on top of its ε/K, not 1",
    1 + _EPS: "1 + ε: it is 1 − ε",
    -(1 - _EPS): "−(1 − ε): add 1 − ε to the true class, don't subtract it",
    0.0: "nothing: the true class gets 1 − ε = 0.9 on top of its ε/K",
    1 - 2 * _EPS: "1 − 0.2 = 0.8: ε is 0.1",
    1 - _EPS / 2: "1 − 0.05 = 0.95: ε is 0.1",
    2 - _EPS: "2 − ε = 1.9: it is 1 − ε",
    -_EPS: "−0.1: it is 1 − ε = 0.9",
}


def _target_slip(got: float) -> str | None:
    """The one part of the target (the ε/K share, the 1 − ε boost, the class) that, changed,
    gives the learner's loss; None if no single slip does."""
    share, boost = _EPS / _K, 1 - _EPS

    def loss(share: float, boost: float, at: int = 0) -> float:
        target = [share] * _K
        target[at] += boost
        return _cross_entropy(target)

    for wrong, why in _SHARES.items():
        if abs(got - loss(wrong, boost)) <= 5e-4:
            return (
                f"every class's share of ε is {why} (the target is ε/K everywhere, then 1 − ε "
                "on class 0)."
            )
    for wrong, why in _BOOSTS.items():
        if abs(got - loss(share, wrong)) <= 5e-4:
            return f"what you add to the true class is {why}."
    for at in range(1, _K):
        if abs(got - loss(share, boost, at)) <= 5e-4:
            return f"the 1 − ε went to class {at}; the true class is 0."
    return None


# 7.9 (lab L7.F) Choose the family --------------------------------------------------------------

FAMILY_TASKS = {
    "sentiment classification": ("encoder-only",),
    "named-entity recognition": ("encoder-only",),
    "extractive QA": ("encoder-only",),
    "chatbot": ("decoder-only",),
    "code completion": ("decoder-only",),
    "translation": ("encoder-decoder", "decoder-only"),
    "summarisation": ("encoder-decoder", "decoder-only"),
    "image classification": ("encoder-only",),
}
_WHY = {
    "encoder-only": "it reads the whole input in both directions and labels it; nothing is "
    "generated",
    "decoder-only": "it generates text left to right from a prompt",
    "encoder-decoder": "an input sequence is rewritten into a new one: a bidirectional encoder "
    "reads it, a causal decoder writes, and cross-attention connects them",
}


@exercise("7.9", "Lab L7.F: choose the family")
def choose_family(families) -> str:
    """Does the task generate text? Does it rewrite one whole input into another?

    Understanding only: encoder-only. Continuing text: decoder-only. Input to a new output:
    encoder-decoder.
    """
    if not isinstance(families, dict):
        raise Mismatch(
            f"`families` should be a dict task -> family; got {type(families).__name__}", TYPE
        )
    for task, right in FAMILY_TASKS.items():
        if task not in families:
            raise Mismatch(f"`families` has no entry for {task!r}; keep the keys as given.", SHAPE)
        family = _family(families[task])
        if family is None:
            raise Mismatch(
                f"families[{task!r}] = {families[task]!r}; answer with 'encoder-only', "
                "'decoder-only' or 'encoder-decoder'.",
                TYPE,
            )
        if family not in right:
            raise Mismatch(f"{task}: not {family}. Best is {right[0]}: {_WHY[right[0]]}.", MISTAKE)
    return (
        "encoder-only to understand, decoder-only to generate, encoder-decoder to rewrite one "
        "sequence into another (a large decoder-only model can translate and summarise too)."
    )


def _family(answer):
    text = str(answer).lower().replace("_", "-").replace(" ", "-")
    for family in _WHY:
        if family in text or family.replace("-only", "") == text:
            return family
    return None


# 7.10 (lab L7.G) PyTorch's own encoder ---------------------------------------------------------


@exercise("7.10", "Lab L7.G: PyTorch's encoder")
def library(library_encoder, library_output) -> str:
    """PyTorch builds an encoder in two steps: one layer with the model's sizes, then a stack
    that repeats it. Keep PyTorch's default layout, sequence first.

    `nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model=512, nhead=8), num_layers=6,
    enable_nested_tensor=False)`, fed `torch.randn(10, 32, 512)`: (seq, batch, d_model).
    """
    if not isinstance(library_encoder, nn.TransformerEncoder):
        kind = MISTAKE if isinstance(library_encoder, nn.TransformerEncoderLayer) else TYPE
        raise Mismatch(
            "`library_encoder` should be an nn.TransformerEncoder; "
            f"got {type(library_encoder).__name__}"
            + (
                ": stack the layer, nn.TransformerEncoder(layer, num_layers=6)."
                if kind == MISTAKE
                else ""
            ),
            kind,
        )
    layers = library_encoder.layers
    attention = layers[0].self_attn
    if len(layers) != 6:
        raise Mismatch(
            f"the encoder has {_many(len(layers), 'layer')}; expected num_layers=6.", MISTAKE
        )
    if attention.embed_dim != 512 or attention.num_heads != 8:
        raise Mismatch(
            f"layers are ({attention.embed_dim}, {_many(attention.num_heads, 'head')}); "
            "expected d_model=512, nhead=8.",
            MISTAKE,
        )
    if attention.batch_first:
        raise Mismatch(
            "batch_first=True changes the layout; this lab keeps the default, "
            "(seq, batch, d_model).",
            MISTAKE,
        )
    n = sum(p.numel() for p in library_encoder.parameters())
    if n != 18_914_304:
        d_ff = getattr(getattr(layers[0], "linear1", None), "out_features", None)
        if d_ff is not None and d_ff != 2048:
            raise Mismatch(
                f"{n:,} parameters: dim_feedforward = {d_ff}; the lab keeps the default, 2048.",
                MISTAKE,
            )
        raise Mismatch(
            f"{n:,} parameters; expected 18,914,304 (d_ff 2048, the default).", DIFFERENCE
        )
    out = as_tensor("library_output", library_output)
    if tuple(out.shape) == (32, 10, 512):
        raise Mismatch(
            "output (32, 10, 512): the input should be (seq, batch, d_model) = (10, 32, 512).",
            MISTAKE,
        )
    if out.dim() == 3 and out.shape[-1] == 512 and tuple(out.shape) != (10, 32, 512):
        raise Mismatch(
            f"`library_output` has shape {tuple(out.shape)}, the shape of the input you fed; "
            "the lab's input is torch.randn(10, 32, 512): 10 positions, a batch of 32.",
            MISTAKE,
        )
    expect_shape("library_output", out, (10, 32, 512), "(seq, batch, d_model)")
    return "(10, 32, 512) in and out, 3,152,384 parameters per layer and 18,914,304 in all."


# 7.11 (lab L7.H) A complete training step ------------------------------------------------------

_SRC = torch.tensor([[4, 5, 6, 7], [8, 9, 0, 0]])
_TGT = torch.tensor([[1, 7, 6, 5, 4, 2], [1, 9, 8, 2, 0, 0]])  # BOS ... EOS, padded
_SRC_MASK, _TGT_MASK = padding_mask(_SRC, PAD_ID), target_mask(_TGT[:, :-1], PAD_ID)
_ORDER = "zero_grad, loss.backward(), clip_grad_norm_(..., 1.0), optimizer.step(), scheduler.step()"


@exercise(
    "7.11",
    "Lab L7.H: a complete training step",
    uses=(
        "course_lib.masks.padding_mask",
        "course_lib.masks.target_mask",
        "course_lib.data.PAD_ID",
    ),
)
def training(training_step) -> str:
    """The decoder reads the target without its last token and predicts it without its first;
    this model applies no mask unless it is given one.

    Pass both masks, the source padding mask and the causal + padding target mask; score with
    the smoothed cross-entropy that ignores padding; then zero the gradients, backward, clip
    at 1.0, step the optimizer, step the scheduler.

    `tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]`; `model(src, tgt_in,
    src_mask=padding_mask(src, PAD_ID), tgt_mask=target_mask(tgt_in, PAD_ID))`; then
    `optimizer.zero_grad()`, `loss.backward()`, `nn.utils.clip_grad_norm_(model.parameters(),
    1.0)`, `optimizer.step()`, `scheduler.step()`.
    """
    # The check's optimizer is plain SGD that records what each step() sees: the update is
    # then -lr · gradient, so a forgotten zero_grad, clip or ordering shows in the gradient.
    # Gradients of an earlier batch are left in .grad, as they are after any earlier step.
    model, optimizer, scheduler = _setup()
    stale = _leave_stale_gradients(model)
    before = [p.detach().clone() for p in model.parameters()]
    with warnings.catch_warnings():  # PyTorch warns about a scheduler stepped first: named below
        warnings.simplefilter("ignore")
        result = call(
            training_step,
            model,
            optimizer,
            scheduler,
            _SRC.clone(),
            _TGT.clone(),
            tip=_step_tip,
        )
    if result is None:
        raise Mismatch("training_step returned None: end it with `return loss.item()`.", MISTAKE)
    got = float(one_number("the returned loss", result, finite=False))
    expected, gradient = _reference()
    if not abs(got - expected) <= 1e-5:
        message, kind = _wrong_loss(got, expected)
        raise Mismatch(message, kind)
    _check_update(model, optimizer, scheduler, before, gradient, stale)
    return (
        f"loss {got:.4f} with both masks, label smoothing 0.1 and ignore_index 0; clipped, "
        "stepped, scheduled."
    )


class _RecordingSGD(torch.optim.SGD):
    """SGD with lr 1.0 (the schedule's value is the lr) that records, at each step(), the lr
    and a copy of every gradient."""

    def __init__(self, params):
        super().__init__(params, lr=1.0)
        self.seen: list[tuple[float, list]] = []

    def __setstate__(self, state):  # a copy (deepcopy, pickle) records afresh
        super().__setstate__(state)
        self.seen = []

    # At grading the learner's step runs in the sandbox, and what it did comes back as the
    # optimizer's state_dict (course_tools.grading): the records travel in it.
    def state_dict(self):
        return {**super().state_dict(), "seen": self.seen}

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        seen = state_dict.pop("seen", [])
        super().load_state_dict(state_dict)  # which calls __setstate__, emptying the records
        self.seen = seen

    def step(self, closure=None):
        grads = [None if p.grad is None else p.grad.detach().clone() for p in self._params()]
        self.seen.append((self.param_groups[0]["lr"], grads))
        return super().step(closure)

    def _params(self) -> list:
        return [p for group in self.param_groups for p in group["params"]]


def _setup(seed=0):
    torch.manual_seed(seed)  # identical models to compare; Exercise.run restores the learner's seed
    model = UnmaskedByDefault(TransformerConfig.tiny(12, 12, dropout=0.0)).double()
    optimizer = _RecordingSGD(model.parameters())
    return model, optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, _tiny_warmup)


def _tiny_warmup(s: int) -> float:
    """The tiny model's schedule (d_model = 64, 10 warmup steps); LambdaLR counts from 0."""
    return 64**-0.5 * min((s + 1) ** -0.5, (s + 1) * 10**-1.5)


def _leave_stale_gradients(model) -> torch.Tensor:
    """Put an earlier step's gradients in every .grad; return them, flattened."""
    generator = torch.Generator().manual_seed(11)
    for p in model.parameters():
        p.grad = torch.randn(p.shape, generator=generator, dtype=p.dtype) * 0.01
    return _flat([p.grad for p in model.parameters()])


def _flat(grads) -> torch.Tensor:
    return torch.cat([g.reshape(-1) for g in grads])


def _loss(model, src_mask, tgt_mask, smoothing=0.1, ignore_index=PAD_ID, shifted=True):
    """The model's cross-entropy on _SRC -> _TGT, given these masks (None: no mask)."""
    tgt_in, tgt_out = (_TGT[:, :-1], _TGT[:, 1:]) if shifted else (_TGT[:, 1:], _TGT[:, :-1])
    logits = model(_SRC, tgt_in, src_mask=src_mask, tgt_mask=tgt_mask)
    return F.cross_entropy(
        logits.flatten(0, 1),
        tgt_out.flatten(),
        label_smoothing=smoothing,
        ignore_index=ignore_index,
    )


@functools.cache
def _reference() -> tuple[float, torch.Tensor]:
    """The right loss and its gradient (not yet clipped), on a fresh model."""
    model = _setup()[0]
    loss = _loss(model, _SRC_MASK, _TGT_MASK)
    loss.backward()
    return loss.item(), _flat([p.grad for p in model.parameters()])


_CRASH_TIPS = [
    (
        ("to match target batch_size", "T must be a positive int"),
        "The logits and the labels don't line up: the decoder reads tgt[:, :-1] and predicts "
        "tgt[:, 1:], both T − 1 long; flatten the logits to (B·(T − 1), V) and the labels to "
        "(B·(T − 1),).",
    ),
    (
        ("memory must have shape",),
        "src and tgt keep their batch axis: slice the positions, tgt[:, :-1] and tgt[:, 1:].",
    ),
    (
        ("invalid shape dimension", "is invalid for input of size"),
        "Flatten with logits.reshape(-1, V) and labels.reshape(-1).",
    ),
    (
        ("backward through the graph a second time",),
        "Compute this step's own loss: run the model and the loss inside training_step, then "
        "call backward once.",
    ),
    (("label_smoothing must be",), "label_smoothing is ε_ls = 0.1 (§5.4)."),
    (
        ("src_mask must broadcast", "tgt_mask must broadcast"),
        "The model takes (src, tgt_in, src_mask=padding_mask(src, PAD_ID), "
        "tgt_mask=target_mask(tgt_in, PAD_ID)).",
    ),
    (
        ("tokens must be a torch.Tensor",),
        "padding_mask and target_mask take the tokens first, then PAD_ID.",
    ),
    (
        ("expected scalar type", "not implemented for 'Long'", "nll_loss"),
        "CrossEntropyLoss takes (logits, labels): the logits (N, V) first, the class ids (N,) "
        "second.",
    ),
    (
        ("object is not iterable",),
        "clip_grad_norm_(model.parameters(), 1.0): the parameters first, then the max norm.",
    ),
]


def _step_tip(error: Exception) -> str | None:
    text = str(error)
    return next((tip for keys, tip in _CRASH_TIPS if any(k in text for k in keys)), None)


def _wrong_loss(got: float, expected: float) -> tuple[str, str]:
    """Why the returned loss is ``got``, not ``expected``, and the kind of that diagnosis."""
    with torch.no_grad():
        model = _setup()[0]
        message = match_number(got, _step_mistakes(model, expected), abs_tol=1e-6)
        if message:
            return message, MISTAKE
        plain = _loss(model, _SRC_MASK, _TGT_MASK, smoothing=0.0).item()
        uniform = _loss(model, _SRC_MASK, _TGT_MASK, smoothing=1.0).item()
    eps = (got - plain) / (uniform - plain)  # the loss is linear in the smoothing ε
    if 0 < eps <= 1 and abs(eps - round(eps, 2)) < 1e-6:
        return (
            f"the loss is {got:.4f}, the smoothed cross-entropy with label_smoothing = "
            f"{round(eps, 2):g}; the paper's ε_ls is 0.1.",
            MISTAKE,
        )
    return (
        f"the loss is {got:.4f}; expected {expected:.4f}. Decoder input tgt[:, :-1], labels "
        "tgt[:, 1:], both masks, smoothed cross-entropy.",
        DIFFERENCE,
    )


def _step_mistakes(model, expected: float) -> list:
    """The losses of a step that forgets a mask, the smoothing or the padding, and others."""
    real = int((_TGT[:, 1:] != PAD_ID).sum())
    return [
        (
            _loss(model, _SRC_MASK, None).item(),
            "no causal mask: the decoder sees later target tokens (the bug of the popular "
            "version). Pass tgt_mask=target_mask(tgt_in, PAD_ID).",
        ),
        (
            _loss(model, None, _TGT_MASK).item(),
            "the source padding is visible: pass src_mask=padding_mask(src, PAD_ID).",
        ),
        (
            _loss(model, None, None).item(),
            "no masks at all: pass the source padding mask and the causal + padding target mask.",
        ),
        (
            _loss(model, _SRC_MASK, _TGT_MASK, smoothing=0.0).item(),
            "no label smoothing: CrossEntropyLoss(label_smoothing=0.1, ignore_index=0).",
        ),
        (
            _loss(model, _SRC_MASK, _TGT_MASK, ignore_index=-100).item(),
            "padding counts in the loss: ignore_index=0 (PAD_ID).",
        ),
        (
            _loss(model, _SRC_MASK, target_mask(_TGT[:, 1:], PAD_ID), shifted=False).item(),
            "the shift is the wrong way round: the decoder reads tgt[:, :-1] (BOS first) and "
            "predicts tgt[:, 1:] (EOS last).",
        ),
        (
            _loss(model, ~_SRC_MASK, _TGT_MASK).item(),
            "the source mask is inverted: in this course True means may attend, "
            "padding_mask(src, PAD_ID).",
        ),
        (
            _loss(model, _SRC_MASK, ~_TGT_MASK).item(),
            "the target mask is inverted: in this course True means may attend, "
            "target_mask(tgt_in, PAD_ID).",
        ),
        (-expected, "the returned loss is negated: return loss.item()."),
        (
            expected * real,
            "that is the sum over the tokens; CrossEntropyLoss averages them (its default).",
        ),
    ]


def _check_update(model, optimizer, scheduler, before, gradient, stale) -> None:
    """The step's update: once, with this step's gradient clipped to norm 1, at the lr of
    update 1, then the scheduler stepped once."""
    moved = _flat([b - p.detach() for b, p in zip(before, model.parameters(), strict=True)])
    if not optimizer.seen and bool(moved.any()):
        raise Mismatch(
            "the weights moved, but not through the optimizer your function was given: call "
            "optimizer.step() on it (the one passed in, with its scheduler).",
            MISTAKE,
        )
    if not optimizer.seen:
        raise Mismatch(
            "the weights did not move: call optimizer.step() after loss.backward() and the "
            "clipping.",
            MISTAKE,
        )
    if len(optimizer.seen) > 1:
        raise Mismatch(
            f"optimizer.step() ran {len(optimizer.seen)} times; one training step makes one "
            "update.",
            MISTAKE,
        )
    if scheduler.last_epoch != 1:
        times = (
            "did not step" if scheduler.last_epoch == 0 else f"stepped {scheduler.last_epoch} times"
        )
        raise Mismatch(
            f"the scheduler {times}: call scheduler.step() once, after optimizer.step().",
            MISTAKE,
        )
    lr, grads = optimizer.seen[0]
    if abs(lr - _tiny_warmup(0)) > 1e-12:
        later = abs(lr - _tiny_warmup(1)) < 1e-12
        raise Mismatch(
            (
                "scheduler.step() ran before optimizer.step(), so the first update used the "
                "second step's lr. Order: " + _ORDER + "."
            )
            if later
            else f"the update used lr {lr:.4g}; the schedule gives {_tiny_warmup(0):.4g} first.",
            MISTAKE if later else DIFFERENCE,
        )
    if all(g is None for g in grads) or all(
        float(g.abs().max()) == 0 for g in grads if g is not None
    ):
        raise Mismatch(
            "optimizer.step() found no gradients: call loss.backward() before it, and zero the "
            "gradients before backward(), not between backward() and step().",
            MISTAKE,
        )
    if any(g is None for g in grads):
        raise Mismatch("some parameters had no gradient at optimizer.step().", DIFFERENCE)
    used = _flat(grads)
    clipped = _clipped(gradient, 1.0)
    if not torch.allclose(used, clipped, atol=1e-9, rtol=1e-6):
        message, kind = _wrong_gradient(used, gradient, stale)
        raise Mismatch(message, kind)
    if not torch.allclose(moved, lr * used, atol=1e-9, rtol=1e-6):
        raise Mismatch(
            "the weights changed in some other way than optimizer.step(): leave them to the "
            "optimizer.",
            DIFFERENCE,
        )


def _clipped(gradient: torch.Tensor, max_norm: float) -> torch.Tensor:
    """What clip_grad_norm_(..., max_norm) makes of a gradient."""
    return gradient * min(1.0, max_norm / (float(gradient.norm()) + 1e-6))


def _wrong_gradient(used, gradient, stale) -> tuple[str, str]:
    """Why the gradient that optimizer.step() used is ``used``."""

    def same(x):
        return torch.allclose(used, x, atol=1e-9, rtol=1e-6)

    if same(gradient):
        return (
            "the gradients are not clipped: clip_grad_norm_(model.parameters(), 1.0) after "
            "backward(), before optimizer.step().",
            MISTAKE,
        )
    if same(_clipped(gradient + stale, 1.0)) or same(gradient + stale):
        return (
            "optimizer.step() used the gradients left from an earlier step plus this one's: "
            "call optimizer.zero_grad() before loss.backward(), since backward() adds to .grad.",
            MISTAKE,
        )
    norm = float(used.norm())
    if same(gradient * (norm / float(gradient.norm()))):
        return (
            f"the gradients were clipped to norm {norm:.3g}; clip them to 1.0, "
            "clip_grad_norm_(model.parameters(), 1.0).",
            MISTAKE,
        )
    return (
        "the loss is right but optimizer.step() used other gradients than this loss's, clipped "
        f"to norm 1. Order: {_ORDER}.",
        DIFFERENCE,
    )


# 7.12 (lab L7.I) The golden rule ---------------------------------------------------------------


@multiple_choice("7.12", "Lab L7.I: the golden rule", correct="c")
def golden_rule(answer_7_12):
    """Think of what a tokenizer produces: ids. What does an id mean to a model?

    The same id means a row of the embedding table the model was trained with, and only that.

    (a) Nothing raises an error: the ids are valid integers for both vocabularies, and the
    model cannot tell which vocabulary made them.

    (b) Libraries do not translate between vocabularies: the model receives ids, not words,
    and uses them as they are.

    (c) Each tokenizer maps text to its own ids; with the wrong one, id 1,045 means a different
    word to the model. It runs, gives fluent-looking nonsense, and nothing warns you: always
    load the tokenizer saved with the model, by the same name.

    (d) Speed is unchanged (an id is looked up once, whichever vocabulary made it) and the
    outputs change: the harm is that the ids mean different words.
    """
