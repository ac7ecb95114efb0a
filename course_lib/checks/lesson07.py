"""Checks for lesson 7, the complete Transformer (paper §3, §5, §6).

Counting parameters, the warmup schedule, label smoothing, the model families, PyTorch's
own encoder and a complete training step with the masks a popular version forgets.
Masks follow the course convention: boolean, True = may attend.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..data import PAD_ID
from ..masks import padding_mask, target_mask
from ..model import TransformerConfig, UnmaskedByDefault, make_encoder
from ..parameters import component
from ._core import Mismatch, call, exercise, multiple_choice
from ._mistakes import match_number
from ._tensors import as_tensor, expect_shape, match, one_number

# 7.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("7.1", "Recall: the decoder's sub-layers", correct="b")
def recall(answer_7_1):
    """Follow one French token up the decoder: what does it look at first, and where does the
    English come in?

    Masked self-attention over the French so far, then cross-attention to the encoder's
    output, then the FFN.

    (a) The feed-forward network works on each position alone; it never sees the encoder.
    The decoder reads the encoder through cross-attention, the second sub-layer.

    (b) Masked self-attention over the French written so far, then cross-attention (queries
    from the decoder, keys and values from the encoder output: the link), then the
    feed-forward network; each wrapped in a residual connection and LayerNorm.

    (c) The decoder first looks at what it has written (masked self-attention), and only then
    asks the encoder (cross-attention); self-attention never sees the encoder.

    (d) The mask does not open a path to the encoder: it hides later target positions.
    Cross-attention, the second sub-layer, links the two stacks.
    """


# 7.2 Apply: one base encoder layer, weights only -----------------------------------------------

_D, _H, _FF, _N = 512, 8, 2048, 6
_ATTN, _FFN = 4 * _D * _D, 2 * _D * _FF  # 1,048,576 and 2,097,152
_LAYER = _ATTN + _FFN  # 3,145,728
_WITH_BIASES = (4 * (_D * _D + _D)) + (_D * _FF + _FF + _FF * _D + _D) + 4 * _D  # 3,152,384
_LAYER_MISTAKES = [
    (
        _WITH_BIASES,
        "3,152,384 includes the biases and the two LayerNorms; count weight matrices only.",
    ),
    (
        _ATTN,
        "that is the attention block alone (4 × 512 × 512); add the FFN, 2 × 512 × 2048.",
    ),
    (_FFN, "that is the feed-forward network alone; add the attention block, 4 × 512 × 512."),
    (
        3 * _D * _D + _FFN,
        "W^O is missing: the attention block has four 512 × 512 matrices, W^Q, W^K, W^V and W^O.",
    ),
    (
        2 * _ATTN + _FFN,
        "4,194,304 is a *decoder* layer, with two attention blocks; the encoder has one.",
    ),
    (
        _H * 4 * _D * _D + _FFN,
        "each head's projections are 512 × 64 (d_k = 512 / 8), not 512 × 512: the 8 heads "
        "together cost 4 × 512 × 512.",
    ),
    (_ATTN + _D * _FF, "the FFN has two matrices, 512 × 2048 and 2048 × 512."),
    (
        _N * _LAYER,
        "18,874,368 is the whole encoder (N = 6 layers); `encoder_layer_weights` is one layer.",
    ),
]


@exercise("7.2", "Apply: parameters of the base encoder")
def apply(encoder_layer_weights, encoder_weights) -> str:
    """Attention: W^Q, W^K, W^V for 8 heads of 512 × 64, plus W^O 512 × 512.

    FFN: 512 × 2048 and 2048 × 512. Then multiply by N = 6.
    """
    layer = float(one_number("encoder_layer_weights", encoder_layer_weights))
    if abs(layer - _LAYER) > 0.5:
        raise Mismatch(
            match_number(layer, _LAYER_MISTAKES, abs_tol=0.5)
            or f"`encoder_layer_weights` = {layer:,.0f}; expected attention 4 × 512 × 512 plus "
            "FFN 2 × 512 × 2048."
        )
    total = float(one_number("encoder_weights", encoder_weights))
    if abs(total - _N * _LAYER) > 0.5:
        with_biases = [
            (_N * _WITH_BIASES, "18,914,304 includes biases and LayerNorms; count weights only.")
        ]
        raise Mismatch(
            match_number(total, with_biases, abs_tol=0.5)
            or f"`encoder_weights` = {total:,.0f}; the encoder stacks N = 6 identical layers."
        )
    return (
        "3,145,728 per layer (1,048,576 attention + 2,097,152 FFN) and 18,874,368 for N = 6 layers."
    )


# 7.3 Extend ------------------------------------------------------------------------------------


@multiple_choice("7.3", "Extend: why inference is sequential", correct="b")
def extend(answer_7_3):
    """What does step t + 1 of the decoder read, and when does it exist?

    Token t + 1 is an input of step t + 2: it must be generated before that step can start.

    (a) The causal mask is what makes *training* parallel: every position is computed in one
    pass while seeing only its past. Inference is sequential for another reason.

    (b) p(y) = Π p(y_t | y_<t, x): token t must be chosen before step t + 1 can read it. Work
    inside a step still runs in parallel, the encoder runs once, and a KV cache avoids
    recomputation, but the number of sequential steps equals the output length.

    (c) The encoder runs once; its output (the memory) is reused at every decoding step.

    (d) Memory is not the obstacle: a 2,000-token sentence fits easily. The obstacle is that
    each output token is an input of the next step.
    """


# 7.4 (lab L7.A) Parameter breakdown ------------------------------------------------------------

_KEYS = ("embedding", "attention", "feed_forward", "norms", "total")


@exercise("7.4", "Lab L7.A: a parameter tool")
def parameter_tool(parameter_breakdown) -> str:
    """Loop over model.named_parameters(); each name says where the parameter lives.

    'embed' -> embedding, 'attn' -> attention, 'ffn' -> feed_forward, 'norm' -> norms; add
    p.numel().
    """
    for sizes in [(10_000, 512, 8, 6, 2048), (50, 16, 2, 2, 24)]:
        model = make_encoder(*sizes)
        got = call(parameter_breakdown, model, during=f"on the encoder {sizes}")
        if not isinstance(got, dict):
            raise Mismatch(f"parameter_breakdown should return a dict; got {type(got).__name__}")
        missing = [k for k in _KEYS if k not in got]
        if missing:
            raise Mismatch(
                f"the dict needs the keys {', '.join(_KEYS)}; missing {', '.join(missing)}"
            )
        expected, weights_only = _breakdown(model), _breakdown(model, weights_only=True)
        for key in _KEYS:
            value = float(one_number(key, got[key]))
            if abs(value - expected[key]) >= 0.5:
                raise Mismatch(_miscount(got, key, value, expected[key], weights_only[key], sizes))
    big = _breakdown(make_encoder(10_000, 512, 8, 6, 2048))
    ffn = big["feed_forward"] / big["total"]
    return f"total {big['total']:,}; the feed-forward networks hold {ffn:.2%}, the largest share."


def _breakdown(model, weights_only: bool = False) -> dict:
    """The exercise's dict, by course_lib.parameters' grouping (its "embeddings" is "embedding")."""
    counts = dict.fromkeys(_KEYS, 0)
    for name, p in model.named_parameters():
        if p.dim() > 1 or not weights_only:
            part = component(name)
            counts["embedding" if part == "embeddings" else part] += p.numel()
            counts["total"] += p.numel()
    return counts


def _miscount(got: dict, key: str, value: float, expected: int, weights: int, sizes) -> str:
    """Why ``got[key]`` = ``value`` is not the ``expected`` count (``weights``: matrices only)."""
    if key == "norms" and value == 0:
        return (
            "no LayerNorm parameters counted: their names contain 'norm' (residual1.norm.weight)."
        )
    if key != "total" and value == 0:
        return (
            f"`{key}` = 0: no parameter name matched. Print the names, "
            "[n for n, _ in model.named_parameters()]: they say 'embedding', 'self_attn', "
            "'ffn', 'norm'."
        )
    if key != "total" and abs(value - weights) < 0.5:
        return (
            f"`{key}` = {value:,.0f} counts the weight matrices only; the biases are parameters "
            "too (p.numel() of every parameter)."
        )
    if key == "total" and abs(value - sum(float(one_number(k, got[k])) for k in _KEYS[:-1])) > 0.5:
        return "`total` should equal the sum of the four components."
    return (
        f"`{key}` = {value:,.0f} on the encoder {sizes}; expected {expected:,}. "
        "Sort each parameter by its name (model.named_parameters()) and add p.numel()."
    )


# 7.5 (lab L7.B) Position influence -------------------------------------------------------------


@exercise("7.5", "Lab L7.B: every position influences every other")
def position_influence(influence) -> str:
    """encoder.eval() first; then embedding * sqrt(d_model), zero one position, positional
    encoding, encoder.

    Run the encoder twice (original and zeroed) and take (a - b)[:, probe].norm(dim=-1).
    """
    torch.manual_seed(7)  # the same encoder every time; Exercise.run restores the learner's seed
    enc = make_encoder(60, 16, 2, 2, 32)
    tokens = torch.randint(4, 60, (3, 15), generator=torch.Generator().manual_seed(1))
    enc.train()  # the learner's function must switch dropout off itself
    got = as_tensor(
        "influence(...)", call(influence, enc, tokens, 3, 7, during="with zeroed=3, probe=7")
    )
    left_training = enc.training
    expected, mistakes = _influences(enc, tokens)
    if got.numel() == 1 and expected.numel() == 3:
        raise Mismatch(
            "return one distance per sequence, shape (B,) = (3,): take the norm over d_model "
            "only (dim=-1)."
        )
    expect_shape("influence(...)", got, (3,), "(B,)")
    if torch.allclose(got, expected, atol=1e-4):
        enc.train()
        again = as_tensor("influence(...)", call(influence, enc, tokens, 3, 7))
        if not torch.allclose(again, expected, atol=1e-4):
            raise Mismatch("unexpected: a second call gave different distances.")
        distances = ", ".join(f"{v:.2f}" for v in got.tolist())
        return f"distances at position 7 after zeroing position 3: {distances}, all non-zero."
    message = match(got, mistakes)
    if message:
        raise Mismatch(message)
    if left_training:
        raise Mismatch(
            "the encoder is still in training mode, so dropout changes the outputs at random: "
            "call encoder.eval() first."
        )
    raise Mismatch(
        f"distances {got.numpy().round(3).tolist()}; expected {expected.numpy().round(3).tolist()}."
    )


def _influences(enc, tokens) -> tuple[torch.Tensor, list]:
    """The distances at position 7 after zeroing position 3, and those of the typical slips."""
    enc.eval()
    embedding, positional, encoder = enc["embedding"], enc["positional"], enc["encoder"]
    root = math.sqrt(embedding.embedding_dim)
    blanked = tokens.clone()
    blanked[:, 3] = 0  # the token id 0: a real embedding row, not a zero vector

    def moved(inputs, changed, probe=7):
        """How far the encoder's output at ``probe`` moves when ``inputs`` become ``changed``."""
        return (encoder(inputs)[:, probe] - encoder(changed)[:, probe]).norm(dim=-1).double()

    with torch.no_grad():
        x, unscaled = embedding(tokens) * root, embedding(tokens)
        expected = moved(positional(x), positional(_zeroed(x, 3)))
        return expected, [
            (
                moved(positional(x), _zeroed(positional(x), 3)),
                "you zeroed the position after adding the positional encoding; zero the scaled "
                "embedding *before* it, so only the content is removed.",
            ),
            (
                moved(positional(unscaled), positional(_zeroed(unscaled, 3))),
                "the embeddings are not multiplied by √d_model before the positional encoding "
                "(§3.4).",
            ),
            (expected**2, "these are squared distances: take the L2 norm, .norm(dim=-1)."),
            (
                moved(positional(x), positional(embedding(blanked) * root)),
                "you replaced the token id by 0, which looks up a real embedding row; set the "
                "scaled embedding *vector* of that position to zeros instead.",
            ),
            (
                moved(positional(x), positional(_zeroed(x, 3)), probe=3),
                "these are the distances at position `zeroed`; measure at position `probe`.",
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
    """torch.full((B, 1), cls_id) is a column of CLS ids.

    torch.cat([cls_column, tokens], dim=1)
    """
    tokens = torch.tensor([[7, 8, 9], [4, 5, 6]])
    got = call(prepend_cls, tokens.clone(), during="on a (2, 3) batch")
    if not isinstance(got, torch.Tensor):
        raise Mismatch(f"prepend_cls should return a tensor; got {type(got).__name__}")
    expected = torch.tensor([[1, 7, 8, 9], [1, 4, 5, 6]])
    if tuple(got.shape) == (2, 3):
        raise Mismatch(
            "the shape is still (B, T): prepend a new column of 1s instead of overwriting a token."
        )
    expect_shape("prepend_cls(tokens)", got, (2, 4), "(B, T + 1)")
    if got.dtype != torch.long:
        raise Mismatch(f"token ids must stay integers (torch.long); got dtype {got.dtype}")
    if torch.equal(got, torch.tensor([[7, 8, 9, 1], [4, 5, 6, 1]])):
        raise Mismatch(
            "the CLS token went to the end; the classifier reads position 0, so it goes first."
        )
    if not torch.equal(got, expected):
        raise Mismatch(f"expected {expected.tolist()}; got {got.tolist()}")
    return "id 1 at position 0 of every sequence, the rest shifted right by one."


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


@exercise("7.7", "Lab L7.D: the warmup schedule")
def warmup(noam_lr, make_scheduler) -> str:
    """d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)

    LambdaLR(optimizer, lambda s: noam_lr(s + 1)): LambdaLR starts counting at 0.
    """
    for step, expected in _TABLE.items():
        got = float(one_number("noam_lr(step)", call(noam_lr, step, during=f"with step = {step}")))
        if abs(got - expected) > 1e-3 * expected:
            raise Mismatch(_wrong_rate(step, got, expected))
    optimizer = torch.optim.Adam(nn.Linear(2, 2).parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    scheduler = call(
        make_scheduler,
        optimizer,
        during="with Adam(lr=1.0)",
        tip=lambda error: _FROM_ZERO if isinstance(error, ZeroDivisionError) else None,
    )
    if not isinstance(scheduler, torch.optim.lr_scheduler.LRScheduler):
        raise Mismatch(
            "make_scheduler should return a torch scheduler (e.g. LambdaLR); "
            f"got {type(scheduler).__name__}"
        )
    lrs = []
    for _ in range(4001):
        lrs.append(optimizer.param_groups[0]["lr"])  # the lr of the next update
        optimizer.step()
        scheduler.step()
    if abs(lrs[0] - _TABLE[1]) > 1e-3 * _TABLE[1]:
        raise Mismatch(
            f"the first update uses lr {lrs[0]:.4g}; expected 1.747e-7 (step 1). {_FROM_ZERO}"
        )
    peak = max(range(len(lrs)), key=lrs.__getitem__) + 1
    if peak != 4000:
        off = " LambdaLR counts from 0: pass step + 1, once." if peak in (3999, 4001) else ""
        raise Mismatch(f"the peak is at update {peak}; expected update 4,000.{off}")
    return (
        "1.747e-7 at update 1, the peak 6.988e-4 at update 4,000, then 1/√step: 3.125e-4 at 20,000."
    )


def _wrong_rate(step: int, got: float, expected: float) -> str:
    """Why ``noam_lr(step)`` = ``got`` is not ``expected``."""
    if abs(got - 512**0.5 * expected) < 1e-3 * 512**0.5 * expected:
        return "the factor d_model^-0.5 = 0.0442 is missing."
    larger = 512**-0.5 * max(step**-0.5, step * 4000**-1.5)
    if abs(got - larger) < 1e-3 * larger:
        return (
            f"noam_lr({step}) = {got:.4g} is the larger of the two terms: use min(...), "
            "not max(...)."
        )
    return (
        f"noam_lr({step}) = {got:.4g}; expected {expected:.4g} = "
        "512^-0.5 · min(step^-0.5, step · 4000^-1.5)."
    )


# 7.8 (lab L7.E) Label smoothing by hand --------------------------------------------------------

_LOGITS = torch.tensor([2.0, 1.0, 0.1, -1.0], dtype=torch.float64)


@exercise("7.8", "Lab L7.E: label smoothing by hand")
def label_smoothing(plain_loss, smoothed_loss) -> str:
    """log_softmax of the logits, then −log p of class 0.

    Smoothed target: 1 − ε + ε/K for the true class, ε/K for the others; loss −Σ target ·
    log p.
    """
    plain = float(F.cross_entropy(_LOGITS[None], torch.tensor([0])))
    smoothed = float(F.cross_entropy(_LOGITS[None], torch.tensor([0]), label_smoothing=0.1))
    got = float(one_number("plain_loss", plain_loss))
    if abs(got - plain) > 5e-4:
        p = float(_LOGITS.softmax(-1)[0])
        wrong = [
            (-plain, "the sign is flipped: the loss is −log p(true class)."),
            (plain / math.log(2), "that is log base 2; cross-entropy here uses the natural log."),
            (1 - p, "1 − p is not the cross-entropy: take −log p."),
            (p, "that is the probability p of the true class; the loss is −log p."),
        ]
        raise Mismatch(
            match_number(got, wrong, abs_tol=5e-4)
            or f"`plain_loss` = {got:.4f}; expected −log softmax(logits)[0] = {plain:.4f}."
        )
    got = float(one_number("smoothed_loss", smoothed_loss))
    if abs(got - smoothed) > 5e-4:
        raise Mismatch(
            match_number(got, _smoothing_mistakes(plain, smoothed), abs_tol=5e-4)
            or f"`smoothed_loss` = {got:.4f}; expected −Σ target · log softmax(logits) = "
            f"{smoothed:.4f}."
        )
    return (
        f"plain {plain:.4f}, smoothed {smoothed:.4f}: smoothing costs loss here, because the "
        "model is never rewarded for full confidence."
    )


def _cross_entropy(target) -> float:
    """−Σ target · log softmax(logits): the loss of the exercise's logits for this target."""
    target = torch.tensor(target, dtype=torch.float64)
    return float(-(target * _LOGITS.log_softmax(-1)).sum())


def _smoothing_mistakes(plain: float, smoothed: float) -> list:
    return [
        (
            _cross_entropy([0.9, 0.1 / 3, 0.1 / 3, 0.1 / 3]),
            "you spread ε over the K − 1 wrong classes (0.9 and 0.0333); PyTorch and this "
            "course spread it over all K: 1 − ε + ε/K = 0.925 and ε/K = 0.025.",
        ),
        (
            _cross_entropy([0.9, 0.0, 0.0, 0.0]),
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
            smoothed / 4,
            "that is the mean over the 4 classes; the cross-entropy *sums* target · log p over "
            "the classes.",
        ),
    ]


# 7.9 (lab L7.F) Choose the family --------------------------------------------------------------

FAMILY_TASKS = {
    "sentiment classification": ("encoder-only",),
    "named-entity recognition": ("encoder-only",),
    "extractive QA": ("encoder-only",),
    "chatbot": ("decoder-only",),
    "code completion": ("decoder-only",),
    "translation": ("encoder-decoder", "decoder-only"),
    "summarisation": ("encoder-decoder",),
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
        raise Mismatch(f"`families` should be a dict task -> family; got {type(families).__name__}")
    for task, right in FAMILY_TASKS.items():
        if task not in families:
            raise Mismatch(f"`families` has no entry for {task!r}; keep the keys as given.")
        family = _family(families[task])
        if family is None:
            raise Mismatch(
                f"families[{task!r}] = {families[task]!r}; answer with 'encoder-only', "
                "'decoder-only' or 'encoder-decoder'."
            )
        if family not in right:
            raise Mismatch(f"{task}: not {family}. Best is {right[0]}: {_WHY[right[0]]}.")
    return (
        "encoder-only to understand, decoder-only to generate, encoder-decoder to rewrite one "
        "sequence into another (a large decoder-only model can translate too)."
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
    """nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model=512, nhead=8), num_layers=6)

    The default layout is (seq, batch, d_model): torch.randn(10, 32, 512).
    """
    if not isinstance(library_encoder, nn.TransformerEncoder):
        raise Mismatch(
            "`library_encoder` should be an nn.TransformerEncoder; "
            f"got {type(library_encoder).__name__}"
        )
    layers = library_encoder.layers
    attention = layers[0].self_attn
    if len(layers) != 6:
        raise Mismatch(f"the encoder has {len(layers)} layers; expected num_layers=6.")
    if attention.embed_dim != 512 or attention.num_heads != 8:
        raise Mismatch(
            f"layers are ({attention.embed_dim}, {attention.num_heads} heads); "
            "expected d_model=512, nhead=8."
        )
    if attention.batch_first:
        raise Mismatch(
            "batch_first=True changes the layout; this lab keeps the default, "
            "(seq, batch, d_model)."
        )
    n = sum(p.numel() for p in library_encoder.parameters())
    if n != 18_914_304:
        raise Mismatch(f"{n:,} parameters; expected 18,914,304 (d_ff 2048, the default).")
    out = as_tensor("library_output", library_output)
    if tuple(out.shape) == (32, 10, 512):
        raise Mismatch(
            "output (32, 10, 512): the input should be (seq, batch, d_model) = (10, 32, 512)."
        )
    expect_shape("library_output", out, (10, 32, 512), "(seq, batch, d_model)")
    return "(10, 32, 512) in and out, 3,152,384 parameters per layer and 18,914,304 in all."


# 7.11 (lab L7.H) A complete training step ------------------------------------------------------

_SRC = torch.tensor([[4, 5, 6, 7], [8, 9, 0, 0]])
_TGT = torch.tensor([[1, 7, 6, 5, 4, 2], [1, 9, 8, 2, 0, 0]])  # BOS ... EOS, padded
_SRC_MASK, _TGT_MASK = padding_mask(_SRC, PAD_ID), target_mask(_TGT[:, :-1], PAD_ID)


@exercise("7.11", "Lab L7.H: a complete training step")
def training(training_step) -> str:
    """tgt_in = tgt[:, :-1], tgt_out = tgt[:, 1:]; the model applies no mask unless you pass
    one.

    src_mask=padding_mask(src, PAD_ID), tgt_mask=target_mask(tgt_in, PAD_ID); then loss,
    zero_grad, backward, clip 1.0, step, scheduler.step().
    """
    model, optimizer, scheduler = _setup()
    result = call(training_step, model, optimizer, scheduler, _SRC.clone(), _TGT.clone())
    if result is None:
        raise Mismatch("training_step should return the loss (a number or a 0-d tensor).")
    got = float(one_number("the returned loss", result))
    reference, expected = _stepped(clip=True)
    if abs(got - expected) > 1e-4:
        with torch.no_grad():
            message = match_number(got, _step_mistakes(_setup()[0]), abs_tol=1e-4)
        raise Mismatch(
            message
            or f"the loss is {got:.4f}; expected {expected:.4f}. Decoder input tgt[:, :-1], "
            "labels tgt[:, 1:], both masks, smoothed cross-entropy."
        )
    if scheduler.last_epoch != 1:
        raise Mismatch(
            "the scheduler did not step once: call scheduler.step() after optimizer.step()."
        )
    if not _same_weights(model, reference, atol=1e-5, rtol=0.0):
        if _same_weights(model, _stepped(clip=False)[0], atol=1e-6):
            raise Mismatch(
                "the gradients are not clipped: clip_grad_norm_(model.parameters(), 1.0) before "
                "optimizer.step()."
            )
        raise Mismatch(
            "the loss is right but the weights moved differently: zero_grad, backward, clip, "
            "optimizer.step, scheduler.step."
        )
    return (
        f"loss {got:.4f} with both masks, label smoothing 0.1 and ignore_index 0; clipped, "
        "stepped, scheduled."
    )


def _setup(seed=0):
    torch.manual_seed(seed)  # identical models to compare; Exercise.run restores the learner's seed
    model = UnmaskedByDefault(TransformerConfig.tiny(12, 12, dropout=0.0))
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    return model, optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, _tiny_warmup)


def _tiny_warmup(s: int) -> float:
    """The tiny model's schedule (d_model = 64, 10 warmup steps); LambdaLR counts from 0."""
    return 64**-0.5 * min((s + 1) ** -0.5, (s + 1) * 10**-1.5)


def _loss(model, src_mask, tgt_mask, smoothing=0.1, ignore_index=PAD_ID) -> torch.Tensor:
    """The model's cross-entropy on _SRC -> _TGT, given these masks (None: no mask)."""
    logits = model(_SRC, _TGT[:, :-1], src_mask=src_mask, tgt_mask=tgt_mask)
    return F.cross_entropy(
        logits.flatten(0, 1),
        _TGT[:, 1:].flatten(),
        label_smoothing=smoothing,
        ignore_index=ignore_index,
    )


def _stepped(clip: bool) -> tuple[nn.Module, float]:
    """A fresh model after the reference step, its gradients clipped or not, and its loss."""
    model, optimizer, scheduler = _setup()
    loss = _loss(model, _SRC_MASK, _TGT_MASK)
    optimizer.zero_grad()
    loss.backward()
    if clip:
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    return model, loss.item()


def _step_mistakes(model) -> list:
    """The losses of a step that forgets a mask, the smoothing or the padding."""
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
    ]


def _same_weights(a: nn.Module, b: nn.Module, **tolerance) -> bool:
    pairs = zip(a.parameters(), b.parameters(), strict=True)
    return all(torch.allclose(p, q, **tolerance) for p, q in pairs)


# 7.12 (lab L7.I) The golden rule ---------------------------------------------------------------


@multiple_choice("7.12", "Lab L7.I: the golden rule", correct="c")
def golden_rule(answer_7_12):
    """Think of what a tokenizer produces: ids. What does an id mean to a model?

    The same id means a row of the embedding table the model was trained with, and only that.

    (a) Nothing raises an error: the ids are valid integers for both vocabularies.

    (b) Libraries do not translate between vocabularies; the ids are used as they are.

    (c) Each tokenizer maps text to its own ids; with the wrong one, id 1,045 means a different
    word to the model. It runs, gives fluent-looking nonsense, and nothing warns you: always
    load the tokenizer saved with the model, by the same name.

    (d) Speed is unchanged; the harm is that the ids mean different words.
    """
