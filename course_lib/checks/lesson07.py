"""Checks for lesson 7, the complete Transformer (paper §3), its first half, the model: counting
parameters, how every position influences every other, and a [CLS] token. The second half,
training it, is :mod:`.lesson07_training`.
"""

import functools
import itertools
import math

import torch

from ..model import make_encoder
from ..parameters import component
from ._core import MISTAKE, SHAPE, TYPE, Mismatch, call, exercise, multiple_choice
from ._mistakes import count_slip, expect_count, expect_returned, expect_tensor
from ._tensors import diagnose, many, one_number, pairs

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
_ATTN, _FFN = 4 * _D * _D, 2 * _D * _FF  # 1,048,576 and 4,194,304
_LAYER = _ATTN + _FFN  # 5,242,880
_ATTN_BIASES, _FFN_BIASES, _NORMS = 4 * _D, _FF + _D, 2 * 2 * _D  # 2,048, 4,608 and 2,048
_WITH_BIASES = _LAYER + _ATTN_BIASES + _FFN_BIASES + _NORMS  # 5,251,584
_BASE_LAYER = _ATTN + 2 * _D * 2048  # 3,145,728, also one FFN matrix of this variant
_ONLY = "count weight matrices only."
_LAYER_MISCOUNTS = {
    _BASE_LAYER: "that is the base model's layer, with d_ff = 2048 (or this variant with one FFN "
    "matrix). Here d_ff = 4096: the FFN has two matrices, 512 × 4096 and 4096 × 512.",
    _BASE_LAYER + _ATTN_BIASES + 2048 + _D + _NORMS: "that is the base model's layer "
    "(d_ff = 2048) with biases and LayerNorms; here d_ff = 4096, and only weight matrices count.",
    _WITH_BIASES: f"that includes the biases and the two LayerNorms; {_ONLY}",
    _LAYER + _ATTN_BIASES + _FFN_BIASES: f"that includes the biases (4 × 512 in attention, "
    f"4096 + 512 in the FFN); {_ONLY}",
    _LAYER + _NORMS: "2,048 too many: the two LayerNorms' γ and β (2 × 2 × 512), or the "
    f"attention biases (4 × 512)? {_ONLY}",
    _LAYER + _FFN_BIASES: f"4,608 too many: the FFN's biases b_1 (4096) and b_2 (512); {_ONLY}",
    _LAYER + 2 * _D: f"1,024 too many: one LayerNorm's γ and β (2 × 512)? {_ONLY}",
    _ATTN: "that is the attention block alone (4 × 512 × 512); add the FFN, 2 × 512 × 4096.",
    3 * _D * _D + _FFN: "W^O is missing: the attention block has four 512 × 512 matrices.",
    2 * _ATTN + _FFN: "that is a *decoder* layer, with two attention blocks; the encoder has one.",
    _H * 3 * _D * _D + _D * _D + _FFN: "each head's W^Q, W^K, W^V are 512 × 64 (d_k = 512 / 8), "
    "not 512 × 512: the 8 heads together cost 3 × 512 × 512, plus W^O.",
    _ATTN + 2 * _D * _D: "the FFN's inner width is d_ff = 4096, not d_model.",
    _ATTN + 2 * _FF * _FF: "the FFN's matrices are 512 × 4096 and 4096 × 512, not 4096 × 4096.",
    _N * _LAYER: "that is the whole encoder (N = 6 layers); `encoder_layer_weights` is one layer.",
}
_ENCODER_MISCOUNTS = {
    **{k * _LAYER: f"{many(k, 'layer')}; the encoder stacks N = 6." for k in range(1, 25)},
    round(_LAYER / _N): f"one layer divided by N = 6; multiply: 6 × {_LAYER:,}.",
    2 * _N * _LAYER: "the encoder and decoder stacks; the encoder alone has N = 6 layers.",
    _N: f"that is N alone; multiply it by one layer's count, {_LAYER:,}.",
    _N * _WITH_BIASES: "that includes biases and LayerNorms; count weights only.",
    _N * _BASE_LAYER: f"that is the base model's encoder (d_ff = 2048); here 6 × {_LAYER:,}.",
}
# The count as the lesson writes it, per matrix and by blocks: what a slip in one factor gives.
_QKV = [("matrices Q, K, V", 3), ("n_heads", 8), ("d_model", 512), ("d_k", 64)]
_W1, _W2 = [("d_model", 512), ("d_ff", 4096)], [("d_ff", 4096), ("d_model", 512)]
_LAYER_TERMS = [
    ("the attention block", [("W^Q, W^K, W^V", _QKV), ("W^O", [("d_model", 512)] * 2)]),
    ("the FFN", [("W_1", _W1), ("W_2", _W2)]),
]
_SIZES = {"d_model": _D, "d_k": _DK, "d_ff": _FF, "n_heads": _H, "N": _N}


@exercise("7.2", "Apply: parameters of an encoder with d_ff = 4096")
def apply(encoder_layer_weights, encoder_weights) -> str:
    """List the weight matrices of one encoder layer, sub-layer by sub-layer, with the shape
    of each; a layer's count is the sum of their sizes, the encoder's N times that.

    Attention: W^Q, W^K, W^V for 8 heads of 512 × 64, plus W^O 512 × 512. FFN: 512 × 4096
    and 4096 × 512. Then multiply by N = 6.
    """
    layer = round(float(one_number("encoder_layer_weights", encoder_layer_weights)))
    slip = layer != _LAYER and count_slip(layer, _LAYER_TERMS, _SIZES)
    off = f"expected attention 4 × 512 × 512 = {_ATTN:,} plus FFN 2 × 512 × 4096 = {_FFN:,}; "
    off += f"yours is {layer - _LAYER:+,} off."
    miscounts = {layer: slip, **_LAYER_MISCOUNTS} if slip else _LAYER_MISCOUNTS
    expect_count(layer, _LAYER, miscounts, "`encoder_layer_weights` =", off)
    total = round(float(one_number("encoder_weights", encoder_weights)))
    stacks = f"the encoder stacks N = 6 identical layers: 6 × {_LAYER:,}."
    expect_count(total, _N * _LAYER, _ENCODER_MISCOUNTS, "`encoder_weights` =", stacks)
    return (
        f"{_LAYER:,} per layer ({_ATTN:,} attention + {_FFN:,} FFN) and {_N * _LAYER:,} for N = 6 "
        "layers: the wider FFN holds four fifths of the weights."
    )


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
_WORDS = {"embeddings": "embed", "attention": "attn", "feed_forward": "ffn", "norms": "norm"}
_NAMES = "Print the names, [n for n, _ in model.named_parameters()]: 'embedding', 'self_attn'..."


@exercise("7.4", "Lab L7.A: a parameter tool")
def parameter_tool(parameter_breakdown) -> str:
    """Print the parameters' names: each says where the parameter lives. Which word in a name
    marks each of the four components?

    Loop over `model.named_parameters()`: 'embed' goes to `embeddings`, 'attn' to `attention`,
    'ffn' to `feed_forward`, 'norm' to `norms`; add `p.numel()` to the matching count and to
    `total`.
    """
    for sizes in [(10_000, 512, 8, 6, 2048), (50, 16, 2, 2, 24)]:
        model, during = make_encoder(*sizes), f"on the encoder {sizes}"
        got = call(parameter_breakdown, model, during=during, tip=_numel_tip)
        counts, expected = _counts(got), _breakdown(model)
        why = functools.partial(_off, expected)
        diagnose("the counts", counts, expected, _miscounts(model), during=during, explain=why)
    big = dict(zip(_KEYS, _breakdown(make_encoder(10_000, 512, 8, 6, 2048)), strict=True))
    ffn = big["feed_forward"] / big["total"]
    return f"total {big['total']:,}; the feed-forward networks hold {ffn:.2%}, the largest share."


def _numel_tip(error: Exception) -> str | None:
    if isinstance(error, RuntimeError) and "size of tensor" in str(error):
        return "Add p.numel(), the number of entries of each parameter, not the tensor p itself."
    if isinstance(error, KeyError):
        return "Start with every key at 0: dict.fromkeys([..., 'total'], 0)."
    return None


def _counts(got) -> list:
    """The learner's counts, in the order of _KEYS."""
    if not isinstance(expect_returned("parameter_breakdown", got), dict):
        raise Mismatch(f"parameter_breakdown should return a dict; got {type(got).__name__}", TYPE)
    if "embedding" in got and "embeddings" not in got:  # the key's name in earlier copies
        got = {("embeddings" if k == "embedding" else k): v for k, v in got.items()}
    if missing := [k for k in _KEYS if k not in got]:
        raise Mismatch(f"the dict needs the keys {_KEYS}; missing {', '.join(missing)}", SHAPE)
    if tensor := next((k for k in _KEYS if getattr(got[k], "numel", int)() > 1), None):
        raise Mismatch(f"`{tensor}` is a tensor: add p.numel(), not the parameter p.", MISTAKE)
    return [float(one_number(key, got[key])) for key in _KEYS]


def _breakdown(model, keep=lambda name, p: True, size=lambda p: p.numel()) -> list[int]:
    """The exercise's counts (by course_lib.parameters' grouping, in the order of _KEYS) over
    the parameters that ``keep(name, p)`` accepts, each adding ``size(p)``."""
    counts = dict.fromkeys(_KEYS, 0)
    for name, p in model.named_parameters():
        if keep(name, p):
            counts[component(name)] += size(p)
            counts["total"] += size(p)
    return list(counts.values())


def _miscounts(model) -> dict:
    """The counts of the typical slips, with what each means."""
    right, layers = _breakdown(model), many(len(model["encoder"].layers), "layer")
    slips = {
        f"`{_KEYS[a]}` holds the count of `{_KEYS[b]}`, and the other way round: the names and "
        "the keys are mixed up.": [right[{a: b, b: a}.get(i, i)] for i in range(5)]
        for a, b in itertools.combinations(range(4), 2)
    }
    return slips | {
        "that adds p.shape[0] (or len(p)), the number of rows; p.numel() counts every "
        "entry.": _breakdown(model, size=lambda p: p.shape[0]),
        f"that is the first layer only; the encoder has {layers}: loop over all of "
        "them.": _breakdown(model, lambda n, p: "layers." not in n or "layers.0." in n),
        "that counts the weight matrices only; the biases are parameters too (p.numel() of "
        "every parameter).": _breakdown(model, lambda n, p: p.dim() > 1),
        "no LayerNorm parameters counted: their names contain 'norm' "
        "(residual1.norm.weight).": _breakdown(model, lambda n, p: component(n) != "norms"),
    }  # fmt: skip


def _off(expected: list, got) -> str:
    """Which count is off, and what it should be."""
    rows = zip(_KEYS, got.tolist(), expected, strict=True)
    key, have, want = next((k, g, e) for k, g, e in rows if g != e)
    if have == 0:
        return f"`{key}` is 0: no parameter name matched. {_NAMES}"
    where = f"whose name contains '{_WORDS[key]}'" if key in _WORDS else "in the model"
    return f"`{key}` is {have:,g}; expected {want:,}, the p.numel() of every parameter {where}."


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
    first = None
    for zeroed, probe in ((3, 7), (10, 2)):
        enc.train()  # the learner's function must switch dropout off itself
        during = f"with zeroed={zeroed}, probe={probe}"
        got = call(influence, enc, tokens, zeroed, probe, during=during, tip=_index_tip)
        got = expect_tensor("influence", got).detach()
        training = enc.training and "the encoder is still in training mode, so dropout changes "
        training = training and training + "the outputs at random: call encoder.eval() first."
        right, mistakes = _influences(enc, tokens, zeroed, probe)
        if first is not None:  # a first answer right, this one the same: fixed positions
            fixed = "right for zeroed=3, probe=7, but not for zeroed=10, probe=2: use the "
            mistakes.insert(0, (first, fixed + "arguments `zeroed` and `probe`."))
        diagnose("influence", got, right, mistakes, during=during, explain=lambda _, t=training: t)
        first = right if first is None else first
    distances = ", ".join(f"{v:.2f}" for v in first.tolist())
    return f"distances at position 7 after zeroing position 3: {distances}, all non-zero."


def _index_tip(error: Exception) -> str | None:
    if isinstance(error, IndexError) and "dimension 0" in str(error):
        return "Positions are the second axis: x[:, zeroed] and out[:, probe] (x is (B, T, D))."
    return None


def _influences(enc, tokens, zeroed: int, probe: int) -> tuple[torch.Tensor, list]:
    """The distances at ``probe`` after zeroing ``zeroed``, and those of the typical slips."""
    enc.eval()
    embedding, positional, encoder = enc["embedding"], enc["positional"], enc["encoder"]
    blanked = tokens.index_fill(1, torch.tensor([zeroed]), 0)  # id 0: a real embedding row

    def blank(x):  # the vectors at position `zeroed` set to zeros
        return x.index_fill(1, torch.tensor([zeroed]), 0.0)

    def moved(changed, before, at=probe):
        """How far the encoder's output at ``at`` moves when its input ``before`` changes."""
        return (encoder(before)[:, at].double() - encoder(changed)[:, at].double()).norm(dim=-1)

    with torch.no_grad():
        unscaled, root = embedding(tokens), math.sqrt(embedding.embedding_dim)
        original = positional(unscaled * root)
        expected = moved(positional(blank(unscaled * root)), original)
        slips = {
            "return one distance per sequence, shape (B,) = (3,): take the norm over d_model "
            "only (dim=-1).": expected.sum(),
            "you zeroed the position after adding the positional encoding; zero the scaled "
            "embedding *before* it, so only the content is removed.":
                moved(blank(original), original),
            "the embeddings are not multiplied by √d_model before the positional encoding "
            "(§3.4).": moved(positional(blank(unscaled)), positional(unscaled)),
            "you replaced the token id by 0, which looks up a real embedding row; set the scaled "
            "embedding *vector* of that position to zeros instead.":
                moved(positional(embedding(blanked) * root), original),
            "these are the distances at position `zeroed`; measure at position `probe`.":
                moved(positional(blank(unscaled * root)), original, at=zeroed),
        }  # fmt: skip
    return expected, pairs(slips)


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
        got = expect_tensor("prepend_cls", got)
        if got.dtype != torch.long:
            raise Mismatch(f"token ids stay integers (torch.long); got dtype {got.dtype}", MISTAKE)
        column = torch.full((2, 1), cls_id)
        mistakes = {
            "the CLS token went to the end; the classifier reads position 0, so it goes "
            "first.": torch.cat([tokens, column], dim=1),
            f"with cls_id={cls_id} the first column is still 1: use the argument "
            "`cls_id`.": torch.cat([torch.ones_like(column), tokens], dim=1),
            "the shape is still (B, T): prepend a new column instead of overwriting a "
            "token.": tokens.index_fill(1, torch.tensor([0]), cls_id),
            "shape (B, T + 2): two CLS columns. The column is torch.full((B, 1), "
            "cls_id).": torch.cat([column, column, tokens], dim=1),
        }  # fmt: skip
        expected = torch.cat([column, tokens], 1)
        diagnose("prepend_cls(tokens)", got, expected, mistakes, during=during)
    return "id 1 at position 0 of every sequence, the rest shifted right by one."


def _cat_tip(error: Exception) -> str | None:
    if "Sizes of tensors must match" in str(error) or "Dimension out of range" in str(error):
        return "The CLS column is (B, 1), the tokens (B, T): torch.cat([column, tokens], dim=1)."
    return None
