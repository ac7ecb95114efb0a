"""Checks for lesson 7 (paper §5, §6), its second half, training: the warmup schedule, label
smoothing, the model families, PyTorch's own encoder and a complete training step with the masks
a popular version forgets. The first half, the model, is :mod:`.lesson07`.
"""

import functools
import inspect
import math
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from ..data import PAD_ID
from ..masks import padding_mask, target_mask
from ..model import TransformerConfig, UnmaskedByDefault
from ._core import DIFFERENCE, MISTAKE, SHAPE, TYPE, Mismatch, call, exercise, multiple_choice
from ._mistakes import expect_count, expect_returned
from ._tensors import as_tensor, diagnose, expect_shape, many, match, one_number

# 7.7 (lab L7.D) The warmup schedule ------------------------------------------------------------

_STEPS = (1, 1000, 2000, 4000, 8000, 16000, 20000, 100000)  # 1.747e-7 ... 6.988e-4 ... 1.398e-4
_OTHER_STEPS = (1, 5, 10, 20, 100)  # a second schedule, d_model = 64 and warmup = 10
_FROM_ZERO = "LambdaLR calls your function with 0 first: pass step + 1."
_RATE = "d_model^-0.5 · min(step^-0.5, step · warmup^-1.5)"
_SIGNATURE = "def noam_lr(step, d_model=512, warmup=4000)"


@exercise("7.7", "Lab L7.D: the warmup schedule")
def warmup(noam_lr, make_scheduler) -> str:
    """Eq. 3 is a product: a constant that depends on d_model only, times the smaller of a term
    that rises with the step and one that falls with it. The two meet at step = warmup.

    The scheduler's function receives LambdaLR's counter, which starts at 0, while the
    formula's steps start at 1: shift by one inside the scheduler, not in `noam_lr`.

    `d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)`, and
    `LambdaLR(optimizer, lambda n: noam_lr(n + 1))`.
    """
    points = [(s,) for s in _STEPS]  # the defaults, then other sizes, by position (any names)
    if len(inspect.signature(noam_lr).parameters) >= 3:
        points += [(s, 64, 10) for s in _OTHER_STEPS]
    rates = [_rate_of(noam_lr, *point) for point in points]
    said = [f"noam_lr({', '.join(map(str, p))})" for p in points]
    _relative(rates, [_noam(*p) for p in points], _rate_mistakes(points), said, _RATE)
    if len(points) == len(_STEPS):
        raise Mismatch(f"noam_lr takes d_model and warmup too: {_SIGNATURE}.", MISTAKE)
    optimizer = torch.optim.Adam(nn.Linear(2, 2).parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    lrs = call(make_scheduler, optimizer, during="with Adam(lr=1.0)", tip=_from_zero_tip, then=_lrs)
    if isinstance(lrs, str):
        expect_returned("make_scheduler", None if lrs == "NoneType" else lrs)
        raise Mismatch(f"make_scheduler should return a torch scheduler; got {lrs}", TYPE)
    n = range(len(lrs))
    slips = {
        "the learning rate stays 1.0: the scheduler must drive the optimizer it is given, "
        "LambdaLR(optimizer, ...).": [1.0 for _ in n],
        "the learning rate never changes: pass the lambda's argument on, "
        "noam_lr(n + 1).": [lrs[0] for _ in n],
        f"the peak is at update 4001, one late: {_FROM_ZERO[:-1]}, "
        "once.": [_noam(max(i, 1)) for i in n],
        f"the first update uses noam_lr(2). {_FROM_ZERO}": [_noam(i + 2) for i in n],
    }  # fmt: skip
    updates = [f"the lr of update {i + 1}" for i in n]
    _relative(lrs, [_noam(i + 1) for i in n], slips, updates, "the schedule's")
    return (
        "1.747e-7 at update 1, the peak 6.988e-4 at update 4,000, then 1/√step: 3.125e-4 at 20,000."
    )


def _relative(got, right, slips: dict, said: list[str], formula: str) -> None:
    """A Mismatch unless the numbers ``got`` are ``right`` to 0.1%: the first of the ``slips``
    ({message: values}) they reproduce, else the first that is off. Rates are as small as
    1e-7: they are compared as ratios to the right ones."""
    got, right = torch.tensor(got, dtype=torch.float64), torch.tensor(right, dtype=torch.float64)
    off = ~torch.isclose(got, right, rtol=1e-3, atol=0)
    if off.any():
        ratios = [(torch.tensor(v, dtype=torch.float64) / right, m) for m, v in slips.items() if v]
        named, i = match(got / right, ratios), int(off.nonzero()[0])
        message = named or f"expected {float(right[i]):.4g} = {formula}."
        raise Mismatch(f"{said[i]} = {got[i]:.4g}: {message}", MISTAKE if named else DIFFERENCE)


def _lrs(scheduler, optimizer) -> list[float] | str:
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


def _noam(step: float, d_model: int = 512, warmup: int = 4000) -> float:
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5) if step > 0 else math.nan


def _rate_of(noam_lr, step: int, *sizes) -> float:
    given = f", d_model={sizes[0]}, warmup={sizes[1]}" if sizes else ""
    rate = call(noam_lr, step, *sizes, during=f"with step = {step}{given}", tip=None)
    return float(one_number("noam_lr(step)", expect_returned("noam_lr", rate), finite=False))


def _from_zero_tip(error: Exception) -> str | None:
    if isinstance(error, ZeroDivisionError) or "complex" in str(error):
        return _FROM_ZERO
    swapped = "has no attribute 'param_groups'" in str(error)
    return "LambdaLR(optimizer, lr_lambda) takes the optimizer first." if swapped else None


# Slips in one part of the rate: (what was written, what the formula has, the exponents of
# d_model and of warmup, min or max).
_FORMULA_SLIPS = [
    ("no d_model factor", "d_model^-0.5", 0.0, -1.5, min),
    ("d_model^0.5", "d_model^-0.5", 0.5, -1.5, min),
    ("step · warmup^-0.5", "step · warmup^-1.5", -0.5, -0.5, min),
    ("step · warmup^-1", "step · warmup^-1.5", -0.5, -1.0, min),
    ("max(...)", "min(...)", -0.5, -1.5, max),
]


def _rate_mistakes(points) -> dict:
    """The rates at ``points`` of a schedule off by one step, with the default sizes fixed,
    or with one part of the formula slipped: {message: rates}."""
    sizes = [(p[0], *(p[1:] or (512, 4000))) for p in points]
    slips = {
        "that is the rate of step 2 (each step gets the next one's): noam_lr counts steps from "
        "1; add 1 only in the scheduler's lambda.": [_noam(s + 1, d, w) for s, d, w in sizes],
        "right with the defaults, but noam_lr(step, d_model=64, warmup=10) still uses 512 and "
        "4000: use the arguments d_model and warmup.": [_noam(s) for s, _, _ in sizes],
    }
    for wrong, right, f, power, pick in _FORMULA_SLIPS:
        message = f"you have {wrong} where the formula has {right}: {_RATE}."
        slips[message] = [d**f * pick(s**-0.5, s * w**power) for s, d, w in sizes]
    return slips


# 7.8 (lab L7.E) Label smoothing by hand --------------------------------------------------------

_LOGITS = torch.tensor([2.0, 1.0, 0.1, -1.0], dtype=torch.float64)
_LOG_P, _P = _LOGITS.log_softmax(-1), _LOGITS.softmax(-1)
_PLAIN = -_LOG_P[0]
# The smoothed target, 1 − ε + ε/K = 0.925 on the true class and ε/K = 0.025 elsewhere.
_TARGET = torch.tensor([0.925, 0.025, 0.025, 0.025], dtype=torch.float64)


def _cross_entropy(target, log_p=_LOG_P) -> float:
    """−Σ target · log p: the loss of the exercise's logits for this target."""
    return float(-(torch.as_tensor(target, dtype=torch.float64) * log_p).sum())


_PLAIN_SLIPS = {
    "the sign is flipped: the loss is −log p(true class).": -_PLAIN,
    "that is log base 2; cross-entropy here uses the natural log.": _PLAIN / math.log(2),
    "that is the probability p of the true class; the loss is −log p.": _P[0],
    "that is −p, the probability: take the log of the softmax (log_softmax).": -_P[0],
    "that is −logit[0]: the logits are not log-probabilities. Take log_softmax first.": -_LOGITS[0],
    "that sums −log p over all 4 classes; the loss takes only the true class, 0.": -_LOG_P.sum(),
    **{f"that is −log p of class {j}; the true class is 0.": -_LOG_P[j] for j in (1, 2, 3)},
}
_PADDING = (
    "class 0 got no target, ε/{} for each other class, as if it were padding (one popular "
    "tutorial spreads ε over K − 2 classes so); class 0 is the true class: 1 − ε + ε/K = 0.925."
)
_TARGET_SLIPS = {
    **{_PADDING.format(n): [0.0] + [0.1 / n] * 3 for n in (2, 3, 4)},
    "you spread ε over the K − 1 wrong classes (0.9 and 0.0333); PyTorch and this course "
    "spread it over all K: 1 − ε + ε/K = 0.925 and ε/K = 0.025.": [0.9] + [0.1 / 3] * 3,
    "the true class gets 1 − ε = 0.9 without its own share ε/K: it gets 1 − ε + ε/K = 0.925 "
    "(the target sums to 1).": [0.9] + [0.025] * 3,
    "every class's share of ε is ε = 0.1 itself: divide it by K = 4 (the target is ε/K "
    "everywhere, then 1 − ε on class 0).": [1.0] + [0.1] * 3,
    "what you add to the true class is 1: the true class gets 1 − ε on top of its ε/K, "
    "not 1.": [1.025] + [0.025] * 3,
    **{f"the 1 − ε went to class {at}; the true class is 0.": _TARGET.roll(at) for at in (1, 2, 3)},
}  # fmt: skip
_SMOOTHED, _ENTROPY = _cross_entropy(_TARGET), _cross_entropy(_TARGET, _TARGET.log())
_SMOOTHED_SLIPS = {
    **{why: _cross_entropy(target) for why, target in _TARGET_SLIPS.items()},
    "that is the plain cross-entropy; use the target [0.925, 0.025, 0.025, 0.025].": _PLAIN,
    "the sign is flipped: the loss is −Σ target · log p.": -_SMOOTHED,
    "that is the mean over the 4 classes; the cross-entropy *sums* target · log p over the "
    "classes.": _SMOOTHED / 4,
    "that is the KL divergence (nn.KLDivLoss), which leaves out the target's own entropy, "
    f"{_ENTROPY:.4f}; the cross-entropy is −Σ target · log p.": _SMOOTHED - _ENTROPY,
    "that multiplies the target by the probabilities; take their log, log_softmax.": (
        _cross_entropy(_TARGET, _P)
    ),
    "that multiplies the target by the logits; take log_softmax(logits) first.": (
        _cross_entropy(_TARGET, _LOGITS)
    ),
}


# The prompt says "not with `label_smoothing=`": the rules refuse a value made with it.
@exercise("7.8", "Lab L7.E: label smoothing by hand", written_out=("label_smoothing",))
def label_smoothing(plain_loss, smoothed_loss) -> str:
    """Both losses are cross-entropies, minus the sum of target × log-probability over the
    classes; only the target differs: all on class 0, or spread a little over every class.

    Smoothed target: 1 − ε + ε/K = 0.925 for the true class, ε/K = 0.025 for each of the
    others. Take the log-probabilities from log_softmax, not from the logits themselves.

    `log_p = logits.log_softmax(dim=-1)`; `plain_loss = -log_p[0]`;
    `smoothed_loss = -(target * log_p).sum()` with `target = [0.925, 0.025, 0.025, 0.025]`.
    """
    plain, smoothed = float(_PLAIN), _cross_entropy(_TARGET)
    got = one_number("plain_loss", plain_loss, finite=False)
    diagnose("plain_loss", got, plain, _PLAIN_SLIPS, typed=True)
    got = one_number("smoothed_loss", smoothed_loss, finite=False)
    diagnose("smoothed_loss", got, smoothed, _SMOOTHED_SLIPS, typed=True)
    return (
        f"plain {plain:.4f}, smoothed {smoothed:.4f}: smoothing costs loss here, because the "
        "model is never rewarded for full confidence."
    )


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
        got = type(families).__name__
        raise Mismatch(f"`families` should be a dict task -> family; got {got}", TYPE)
    for task, right in FAMILY_TASKS.items():
        if task not in families:
            raise Mismatch(f"`families` has no entry for {task!r}; keep the keys as given.", SHAPE)
        text = str(families[task]).lower().replace("_", "-").replace(" ", "-")
        family = next((f for f in _WHY if f in text or f.replace("-only", "") == text), None)
        if family is None:
            message = f"families[{task!r}] = {families[task]!r}; answer with 'encoder-only', "
            message += "'decoder-only' or 'encoder-decoder'."
            raise Mismatch(message, TYPE)
        if family not in right:
            raise Mismatch(f"{task}: not {family}. Best is {right[0]}: {_WHY[right[0]]}.", MISTAKE)
    return (
        "encoder-only to understand, decoder-only to generate, encoder-decoder to rewrite one "
        "sequence into another (a large decoder-only model can translate and summarise too)."
    )


# 7.10 (lab L7.G) PyTorch's own encoder ---------------------------------------------------------


@exercise("7.10", "Lab L7.G: PyTorch's encoder")
def library(library_encoder, library_output) -> str:
    """PyTorch builds an encoder in two steps: one layer with the model's sizes, then a stack
    that repeats it. Keep PyTorch's default layout, sequence first.

    `nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model=512, nhead=8), num_layers=6,
    enable_nested_tensor=False)`, fed `torch.randn(10, 32, 512)`: (seq, batch, d_model).
    """
    if isinstance(library_encoder, nn.TransformerEncoderLayer):
        message = "`library_encoder` is one layer, not an nn.TransformerEncoder: stack it, "
        message += "nn.TransformerEncoder(layer, num_layers=6)."
        raise Mismatch(message, MISTAKE)
    if not isinstance(library_encoder, nn.TransformerEncoder):
        what = type(library_encoder).__name__
        raise Mismatch(f"`library_encoder` should be an nn.TransformerEncoder; got {what}", TYPE)
    layer, layers = library_encoder.layers[0], len(library_encoder.layers)
    attention, d_ff = layer.self_attn, getattr(getattr(layer, "linear1", None), "out_features", 0)
    settings = {"d_model": (attention.embed_dim, 512), "nhead": (attention.num_heads, 8)}
    settings |= {"dim_feedforward": (d_ff, 2048), "batch_first": (attention.batch_first, False)}
    has = [many(layers, "layer")] * (layers != 6)
    if has := has + [f"{name}={got}" for name, (got, want) in settings.items() if got != want]:
        message = f"the encoder has {', '.join(has)}; the lab's has num_layers=6, d_model=512, "
        message += "nhead=8, and the defaults dim_feedforward=2048 and batch_first=False: "
        message += "(seq, batch, d_model)."
        raise Mismatch(message, MISTAKE)
    n = sum(p.numel() for p in library_encoder.parameters())
    expect_count(n, 18_914_304, {}, "the encoder's parameters number", "expected 18,914,304.")
    out = as_tensor("library_output", library_output)
    if out.dim() == 3 and out.shape[-1] == 512 and tuple(out.shape) != (10, 32, 512):
        message = f"`library_output` has shape {tuple(out.shape)}, the shape of the input you "
        message += "fed; the lab's input is torch.randn(10, 32, 512), (seq, batch, d_model): 10 "
        raise Mismatch(message + "positions, a batch of 32.", MISTAKE)
    expect_shape("library_output", out, (10, 32, 512), "(seq, batch, d_model)")
    return "(10, 32, 512) in and out, 3,152,384 parameters per layer and 18,914,304 in all."


# 7.11 (lab L7.H) A complete training step ------------------------------------------------------

_SRC = torch.tensor([[4, 5, 6, 7], [8, 9, 0, 0]])
_TGT = torch.tensor([[1, 7, 6, 5, 4, 2], [1, 9, 8, 2, 0, 0]])  # BOS ... EOS, padded
_SRC_MASK, _TGT_MASK = padding_mask(_SRC, PAD_ID), target_mask(_TGT[:, :-1], PAD_ID)
_ORDER = "zero_grad, loss.backward(), clip_grad_norm_(..., 1.0), optimizer.step(), scheduler.step()"
_MASKS = ("course_lib.masks.padding_mask", "course_lib.masks.target_mask")


@exercise("7.11", "Lab L7.H: a complete training step", uses=(*_MASKS, "course_lib.data.PAD_ID"))
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
    generator = torch.Generator().manual_seed(11)
    for p in model.parameters():
        p.grad = torch.randn(p.shape, generator=generator, dtype=p.dtype) * 0.01
    stale, before = _flat(p.grad for p in model.parameters()), _flat(model.parameters()).detach()
    with warnings.catch_warnings():  # PyTorch warns about a scheduler stepped first: named below
        warnings.simplefilter("ignore")
        step = (model, optimizer, scheduler, _SRC.clone(), _TGT.clone())
        result = call(training_step, *step, tip=_step_tip)
    got = one_number("the returned loss", expect_returned("training_step", result), False)
    expected, gradient = _reference()
    mistakes = _step_mistakes()
    diagnose("the returned loss", got, expected, mistakes, atol=1e-5)
    moved = before - _flat(model.parameters()).detach()
    _check_update(optimizer, scheduler, moved, gradient, stale)
    return (
        f"loss {float(got):.4f} with both masks, label smoothing 0.1 and ignore_index 0; clipped, "
        "stepped, scheduled."
    )


class _RecordingSGD(torch.optim.SGD):
    """SGD with lr 1.0 (the schedule's value is the lr) that records, at each step(), the lr
    and a copy of every gradient (zeros where there is none). At grading the learner's step
    runs in the sandbox, and the records come back in the optimizer's state_dict."""

    def __init__(self, params):
        super().__init__(params, lr=1.0)
        self.seen: list[tuple[float, torch.Tensor]] = []

    def __setstate__(self, state):  # a copy (deepcopy, pickle) records afresh
        super().__setstate__(state)
        self.seen = []

    def state_dict(self):
        return {**super().state_dict(), "seen": self.seen}

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        seen = state_dict.pop("seen", [])
        super().load_state_dict(state_dict)  # which calls __setstate__, emptying the records
        self.seen = seen

    def step(self, closure=None):
        params = [p for group in self.param_groups for p in group["params"]]
        grads = [torch.zeros_like(p) if p.grad is None else p.grad for p in params]
        self.seen.append((self.param_groups[0]["lr"], _flat(grads).detach().clone()))
        return super().step(closure)


def _setup():
    torch.manual_seed(0)  # identical models to compare; Exercise.run restores the learner's seed
    model = UnmaskedByDefault(TransformerConfig.tiny(12, 12, dropout=0.0)).double()
    optimizer = _RecordingSGD(model.parameters())
    return model, optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, _tiny_warmup)


def _tiny_warmup(s: int) -> float:
    """The tiny model's schedule (d_model = 64, 10 warmup steps); LambdaLR counts from 0."""
    return 64**-0.5 * min((s + 1) ** -0.5, (s + 1) * 10**-1.5)


def _flat(tensors) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tensors])


def _loss(src_mask=_SRC_MASK, tgt_mask=_TGT_MASK, model=None, shifted=True, **loss) -> torch.Tensor:
    """The cross-entropy of a fresh model on _SRC -> _TGT with these masks (None: no mask)."""
    model = model or _setup()[0]
    tgt_in, tgt_out = (_TGT[:, :-1], _TGT[:, 1:]) if shifted else (_TGT[:, 1:], _TGT[:, :-1])
    logits = model(_SRC, tgt_in, src_mask=src_mask, tgt_mask=tgt_mask).flatten(0, 1)
    loss = {"label_smoothing": 0.1, "ignore_index": PAD_ID} | loss
    return F.cross_entropy(logits, tgt_out.flatten(), **loss)


@functools.cache
def _reference() -> tuple[float, torch.Tensor]:
    """The right loss and its gradient (not yet clipped), on a fresh model."""
    model = _setup()[0]
    loss = _loss(model=model)
    loss.backward()
    return loss.item(), _flat(p.grad for p in model.parameters())


_CRASH_TIPS = {
    "to match target batch_size": "The logits and the labels don't line up: the decoder reads "
    "tgt[:, :-1] and predicts tgt[:, 1:]; flatten them to (B·(T − 1), V) and (B·(T − 1),).",
    "Long": "CrossEntropyLoss takes (logits, labels): the logits (N, V) first, "
    "the class ids (N,) second.",
}


def _step_tip(error: Exception) -> str | None:
    return next((tip for key, tip in _CRASH_TIPS.items() if key in str(error)), None)


_POLARITY = (
    "the mask polarity is inverted ({}): the course's masks are True = may attend, as "
    "padding_mask and target_mask return them (nn.Transformer's are True = hidden)."
)


# The losses of a step whose masks are missing or inverted, and of other slips: the arguments of
# _loss that give them (_HIDDEN is nn.Transformer's causal mask, True = hidden).
_HIDDEN = ~torch.ones(5, 5, dtype=torch.bool).tril()
_BOTH = _POLARITY.format("the source mask and the target mask")
_STEP_SLIPS = [
    ("no masks at all: pass the source padding mask and the causal + padding target mask.",
     {"src_mask": None, "tgt_mask": None}),
    ("no causal mask: the decoder sees later target tokens (the bug of the popular version). "
     "Pass tgt_mask=target_mask(tgt_in, PAD_ID).", {"tgt_mask": None}),
    ("the source padding is visible: pass src_mask=padding_mask(src, PAD_ID).",
     {"src_mask": None}),
    (_BOTH, {"src_mask": ~_SRC_MASK, "tgt_mask": ~_TGT_MASK}),
    (_BOTH, {"src_mask": ~_SRC_MASK, "tgt_mask": _HIDDEN}),
    (_POLARITY.format("the target mask"), {"tgt_mask": ~_TGT_MASK}),
    (_POLARITY.format("the target mask"), {"tgt_mask": _HIDDEN}),
    (_POLARITY.format("the source mask"), {"src_mask": ~_SRC_MASK}),
    ("no label smoothing: CrossEntropyLoss(label_smoothing=0.1, ignore_index=0).",
     {"label_smoothing": 0.0}),
    ("padding counts in the loss: ignore_index=0 (PAD_ID).", {"ignore_index": -100}),
    ("the shift is the wrong way round: the decoder reads tgt[:, :-1] (BOS first) and predicts "
     "tgt[:, 1:] (EOS last).", {"tgt_mask": target_mask(_TGT[:, 1:], PAD_ID), "shifted": False}),
    ("that is the sum over the tokens; CrossEntropyLoss averages them.", {"reduction": "sum"}),
    *[(f"the loss has label_smoothing = {eps:g}; the paper's is 0.1.", {"label_smoothing": eps})
      for eps in (0.05, 0.15, 0.2, 0.25, 0.3, 0.5, 1.0)],
]  # fmt: skip


@functools.cache
def _step_mistakes() -> list:
    with torch.no_grad():
        return [(_loss(**arguments).item(), message) for message, arguments in _STEP_SLIPS]


def _clipped(gradient: torch.Tensor) -> torch.Tensor:
    """What clip_grad_norm_(..., 1.0) makes of a gradient."""
    return gradient * min(1.0, 1.0 / (float(gradient.norm()) + 1e-6))


def _check_update(optimizer, scheduler, moved, gradient, stale) -> None:
    """One optimizer.step() at the lr of update 1 with this step's gradient clipped to norm 1,
    then one scheduler.step()."""
    steps, scheduled = len(optimizer.seen), scheduler.last_epoch
    lr, used = optimizer.seen[0] if steps == 1 else (0.0, gradient)
    slips = {
        "optimizer.step() was not called on the optimizer your function was given: call it "
        "after loss.backward() and the clipping.": not steps,
        f"optimizer.step() ran {steps} times; one training step makes one update.": steps > 1,
        f"the scheduler stepped {scheduled} times: call scheduler.step() once, after "
        "optimizer.step().": scheduled != 1,
        "scheduler.step() ran before optimizer.step(), so the first update used the second "
        f"step's lr. Order: {_ORDER}.": abs(lr - _tiny_warmup(1)) < 1e-12,
    }
    if why := next((message for message, wrong in slips.items() if wrong), None):
        raise Mismatch(why, MISTAKE)
    stale_ones = "optimizer.step() used the gradients left from an earlier step plus this "
    stale_ones += "one's: call optimizer.zero_grad() before loss.backward() (it adds to .grad)."
    norm = float(used.norm())
    mistakes = [
        (0 * gradient, "optimizer.step() found no gradients: call loss.backward() before it, "
         "and zero the gradients before backward(), not between backward() and step()."),
        (gradient, "the gradients are not clipped: clip_grad_norm_(model.parameters(), 1.0) "
         "after backward(), before optimizer.step()."),
        (_clipped(gradient + stale), stale_ones),
        (gradient + stale, stale_ones),
        (gradient * (norm / float(gradient.norm())),
         f"the gradients were clipped to norm {norm:.3g}; clip them to 1.0."),
    ]  # fmt: skip
    diagnose("the gradient optimizer.step() used", used, _clipped(gradient), mistakes, atol=1e-7)
    if abs(lr - _tiny_warmup(0)) > 1e-12 or not torch.allclose(moved, lr * used, atol=1e-9):
        message = "the update is not one optimizer.step() at the schedule's first lr "
        message += f"{_tiny_warmup(0):.4g}. Order: {_ORDER}."
        raise Mismatch(message, DIFFERENCE)


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
