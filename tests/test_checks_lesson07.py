"""Tests of the lesson 7 checks (``course_lib/checks/lesson07.py``).

For every exercise: the model answer passes, the lesson's stub is "not done", and typical
mistakes fail with a message that names them.
"""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from course_lib.checks import FAILED, NOT_DONE, PASSED, check, exercises
from course_lib.checks.lesson07 import FAMILY_TASKS
from course_lib.data import PAD_ID
from course_lib.masks import padding_mask, target_mask
from course_lib.training import warmup_inverse_sqrt

LOGITS = torch.tensor([[2.0, 1.0, 0.1, -1.0]])


def parameter_breakdown(model, weights_only=False, with_norms=True, attention_word="attn"):
    parts = {
        "embedding": "embed",
        "attention": attention_word,
        "feed_forward": "ffn",
        "norms": "norm",
    }
    counts = dict.fromkeys([*parts, "total"], 0)
    for name, p in model.named_parameters():
        if weights_only and p.dim() == 1:
            continue
        for key, word in parts.items():
            if word in name and (with_norms or key != "norms"):
                counts[key] += p.numel()
                counts["total"] += p.numel()
    return counts


def influence(
    encoder, tokens, zeroed, probe, *, eval_mode=True, after_pe=False, scale=True, zero_id=False
):
    if eval_mode:
        encoder.eval()
    with torch.no_grad():
        x = encoder["embedding"](tokens) * (
            math.sqrt(encoder["embedding"].embedding_dim) if scale else 1
        )
        original = encoder["encoder"](encoder["positional"](x))
        x = x.clone()
        if zero_id:
            blanked = tokens.clone()
            blanked[:, zeroed] = 0
            x = encoder["embedding"](blanked) * math.sqrt(encoder["embedding"].embedding_dim)
            x = encoder["positional"](x)
        elif after_pe:
            x = encoder["positional"](x)
            x[:, zeroed] = 0.0
        else:
            x[:, zeroed] = 0.0
            x = encoder["positional"](x)
        changed = encoder["encoder"](x)
    return (original - changed)[:, probe].norm(dim=-1)


def prepend_cls(tokens, cls_id=1):
    return torch.cat([torch.full((tokens.shape[0], 1), cls_id), tokens], dim=1)


def noam_lr(step, d_model=512, warmup=4000):
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def make_scheduler(optimizer):
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: noam_lr(s + 1))


def smoothed(eps=0.1):
    return F.cross_entropy(LOGITS, torch.tensor([0]), label_smoothing=eps).item()


FAMILIES = {task: right[0] for task, right in FAMILY_TASKS.items()}


def library():
    enc = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(d_model=512, nhead=8), num_layers=6, enable_nested_tensor=False
    )
    return enc, enc(torch.randn(10, 32, 512))


def training_step(model, optimizer, scheduler, src, tgt, *, causal=True, smoothing=0.1, clip=True):
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    tgt_mask = target_mask(tgt_in, PAD_ID) if causal else None
    logits = model(src, tgt_in, src_mask=padding_mask(src, PAD_ID), tgt_mask=tgt_mask)
    loss = nn.CrossEntropyLoss(label_smoothing=smoothing, ignore_index=PAD_ID)(
        logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1)
    )
    optimizer.zero_grad()
    loss.backward()
    if clip:
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    return loss.item()


RIGHT = {
    "7.1": lambda: ("b",),
    "7.2": lambda: (3_145_728, 18_874_368),
    "7.3": lambda: ("b",),
    "7.4": lambda: (parameter_breakdown,),
    "7.5": lambda: (influence,),
    "7.6": lambda: (prepend_cls,),
    "7.7": lambda: (noam_lr, make_scheduler),
    "7.8": lambda: (F.cross_entropy(LOGITS, torch.tensor([0])), smoothed()),
    "7.9": lambda: (FAMILIES,),
    "7.10": library,
    "7.11": lambda: (training_step,),
    "7.12": lambda: ("c",),
}


def test_every_exercise_has_a_right_answer():
    assert set(RIGHT) == {e.id for e in exercises(7)}


@pytest.mark.parametrize("exercise_id", list(RIGHT))
def test_right_answers_pass(exercise_id):
    result = check(exercise_id, *RIGHT[exercise_id]())
    assert result.status == PASSED, result.message


def test_the_success_messages_carry_the_course_numbers():
    assert "24,034,304" in check("7.4", parameter_breakdown).message
    assert "52.42%" in check("7.4", parameter_breakdown).message
    assert "0.4493" in check("7.8", 0.4493, 0.5968).message
    assert "0.5968" in check("7.8", 0.4493, 0.5968).message


def stub(*args, **kwargs):
    raise NotImplementedError()


@pytest.mark.parametrize("exercise", exercises(7), ids=lambda e: e.id)
def test_the_lessons_stub_is_not_done(exercise):
    answers = [
        None if exercise.kind == "choice" or exercise.id in {"7.2", "7.8", "7.9", "7.10"} else stub
        for _ in exercise.names
    ]
    result = check(exercise.id, *answers)
    assert result.status == NOT_DONE
    assert "# YOUR CODE HERE" in result.message


def variant(fn, **kwargs):
    return lambda *args: fn(*args, **kwargs)


def lr_without_d_model(step):
    return min(step**-0.5, step * 4000**-1.5)


def lr_with_max(step):
    return 512**-0.5 * max(step**-0.5, step * 4000**-1.5)


def scheduler_from_zero(optimizer):
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: warmup_inverse_sqrt(max(s, 1), 512)
    )


def families_with(**changes):
    answer = dict(FAMILIES)
    for task, family in changes.items():
        answer[task.replace("_", " ")] = family
    return answer


def enc_batch_first():
    layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, batch_first=True)
    enc = nn.TransformerEncoder(layer, num_layers=6, enable_nested_tensor=False)
    return enc, enc(torch.randn(32, 10, 512))


def smoothed_over_k_minus_1():
    target = torch.tensor([0.9, 0.1 / 3, 0.1 / 3, 0.1 / 3])
    return -(target * LOGITS[0].log_softmax(-1)).sum()


WRONG = [
    ("7.1", ("a",), ["(a) is not the best answer", "cross-attention"]),
    ("7.2", (3_152_384, 18_914_304), ["biases"]),
    ("7.2", (4_194_304, 0), ["decoder"]),
    ("7.2", (2_883_584, 0), ["W^O is missing"]),
    ("7.2", (1_048_576, 0), ["attention block alone"]),
    ("7.2", (3_145_728, 3_145_728), ["N = 6"]),
    ("7.2", (18_874_368, 0), ["whole encoder"]),
    ("7.3", ("a",), ["training"]),
    ("7.4", (variant(parameter_breakdown, weights_only=True),), ["biases are parameters too"]),
    ("7.4", (variant(parameter_breakdown, with_norms=False),), ["no LayerNorm parameters"]),
    ("7.4", (lambda m: {"total": 1},), ["missing embedding"]),
    (
        "7.4",
        (variant(parameter_breakdown, attention_word="attention"),),
        ["no parameter name matched"],
    ),
    ("7.4", (lambda m: [1, 2],), ["should return a dict"]),
    ("7.5", (variant(influence, after_pe=True),), ["before"]),
    ("7.5", (variant(influence, scale=False),), ["√d_model"]),
    ("7.5", (variant(influence, eval_mode=False),), ["eval()"]),
    ("7.5", (lambda e, t, z, p: influence(e, t, z, p).sum(),), ["shape (B,)"]),
    ("7.5", (variant(influence, zero_id=True),), ["token id by 0"]),
    ("7.5", (lambda e, t, z, p: influence(e, t, z, z),), ["measure at position `probe`"]),
    (
        "7.6",
        (lambda t, cls_id=1: torch.cat([t, torch.ones(t.shape[0], 1, dtype=torch.long)], 1),),
        ["end"],
    ),
    ("7.6", (lambda t, cls_id=1: t.index_fill(1, torch.tensor([0]), 1),), ["overwriting"]),
    ("7.6", (lambda t, cls_id=1: prepend_cls(t).float(),), ["torch.long"]),
    ("7.7", (lr_without_d_model, make_scheduler), ["d_model^-0.5"]),
    ("7.7", (lr_with_max, make_scheduler), ["min(...)"]),
    ("7.7", (noam_lr, scheduler_from_zero), ["update 4001", "step + 1"]),
    (
        "7.7",
        (noam_lr, lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda s: noam_lr(s + 2))),
        ["step + 1"],
    ),
    (
        "7.7",
        (noam_lr, lambda o: torch.optim.lr_scheduler.LambdaLR(o, noam_lr)),
        ["ZeroDivisionError"],
    ),
    ("7.7", (noam_lr, lambda o: None), ["torch scheduler"]),
    ("7.8", (-0.4493, 0.5968), ["sign"]),
    ("7.8", (0.4493 / math.log(2), 0.5968), ["base 2"]),
    ("7.8", (0.4493, smoothed_over_k_minus_1()), ["K − 1"]),
    ("7.8", (0.4493, 0.4493), ["plain cross-entropy"]),
    ("7.8", (0.6381, 0.5968), ["probability"]),
    ("7.8", (0.4493, -0.5968), ["sign"]),
    ("7.8", (0.4493, 0.5968 / 4), ["mean over the 4 classes"]),
    ("7.9", (families_with(chatbot="encoder-only"),), ["chatbot: not encoder-only", "generates"]),
    ("7.9", (families_with(summarisation="BERT"),), ["answer with"]),
    ("7.9", ({},), ["no entry"]),
    ("7.10", enc_batch_first(), ["batch_first"]),
    (
        "7.10",
        (nn.TransformerEncoderLayer(512, 8), torch.zeros(10, 32, 512)),
        ["nn.TransformerEncoder"],
    ),
    ("7.11", (variant(training_step, causal=False),), ["no causal mask"]),
    ("7.11", (variant(training_step, smoothing=0.0),), ["label smoothing"]),
    ("7.11", (variant(training_step, clip=False),), ["not clipped"]),
    ("7.12", ("a",), ["(a) is not the best answer"]),
]


@pytest.mark.parametrize(
    "exercise_id, answers, words", WRONG, ids=[f"{w[0]}-{i}" for i, w in enumerate(WRONG)]
)
def test_typical_mistakes_are_named(exercise_id, answers, words):
    result = check(exercise_id, *answers)
    assert result.status == FAILED, result.message
    for word in words:
        assert word in result.message, result.message


def test_a_large_decoder_only_model_may_translate():
    result = check("7.9", families_with(translation="decoder-only"))
    assert result.status == PASSED, result.message


def test_a_step_without_any_mask_is_named():
    def no_masks(model, optimizer, scheduler, src, tgt):
        logits = model(src, tgt[:, :-1])
        loss = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=0)(
            logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1)
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        return loss

    result = check("7.11", no_masks)
    assert result.status == FAILED and "no masks at all" in result.message
