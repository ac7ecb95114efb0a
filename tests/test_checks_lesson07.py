"""Tests of the lesson 7 checks (``course_lib/checks/lesson07.py`` and ``lesson07_training.py``).

For every exercise: the model answer passes, and typical mistakes fail with a message that names
them. The lesson's own stubs are tested in ``test_checks_stubs.py``.
"""

import math
import re
import statistics
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from typical_answers import forgets_return

from course_lib.checks import EXERCISES, FAILED, PASSED, check, exercises
from course_lib.checks._core import DIFFERENCE, MISTAKE, RULE, SHAPE, TYPE
from course_lib.checks.lesson07_training import FAMILY_TASKS
from course_lib.data import PAD_ID
from course_lib.masks import padding_mask, target_mask
from course_lib.training import warmup_inverse_sqrt

LOGITS = torch.tensor([[2.0, 1.0, 0.1, -1.0]])
SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions" / "07_complete_transformer.py"


def parameter_breakdown(model, weights_only=False, with_norms=True, attention_word="attn"):
    parts = {
        "embeddings": "embed",
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


def training_step(
    model,
    optimizer,
    scheduler,
    src,
    tgt,
    *,
    causal=True,
    smoothing=0.1,
    clip=True,
    src_mask=True,
    ignore=PAD_ID,
    reduction="mean",
    shifted=True,
):
    """The model answer of 7.11; each keyword set otherwise makes one slip."""
    tgt_in, tgt_out = (tgt[:, :-1], tgt[:, 1:]) if shifted else (tgt[:, 1:], tgt[:, :-1])
    tgt_mask = target_mask(tgt_in, PAD_ID) if causal else None
    src_mask = padding_mask(src, PAD_ID) if src_mask else None
    logits = model(src, tgt_in, src_mask=src_mask, tgt_mask=tgt_mask)
    criterion = nn.CrossEntropyLoss(
        label_smoothing=smoothing, ignore_index=ignore, reduction=reduction
    )
    loss = criterion(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    if clip:
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    return loss.item()


RIGHT = {
    "7.1": lambda: ("d",),
    "7.2": lambda: (5_242_880, 31_457_280),
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


def scheduler_on_its_own_optimizer(optimizer):
    own = torch.optim.Adam(nn.Linear(2, 2).parameters(), lr=1.0)
    return torch.optim.lr_scheduler.LambdaLR(own, lambda s: noam_lr(s + 1))


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
    ("7.1", ("b",), ["(b) is not the best answer", "does not open a path"]),
    ("7.2", (5_251_584, 31_509_504), ["biases"]),
    ("7.2", (6_291_456, 0), ["decoder"]),
    ("7.2", (4_980_736, 0), ["W^O is missing"]),
    ("7.2", (1_048_576, 0), ["attention block alone"]),
    ("7.2", (5_242_880, 5_242_880), ["N = 6"]),
    ("7.2", (31_457_280, 0), ["whole encoder"]),
    ("7.2", (3_145_728, 18_874_368), ["base model's layer, with d_ff = 2048", "4096"]),
    ("7.2", (3_152_384, 18_914_304), ["base model's layer (d_ff = 2048) with biases"]),
    ("7.2", (5_242_880, 18_874_368), ["base model's encoder", "6 × 5,242,880"]),
    ("7.2", (5_242_880, 31_509_504), ["biases and LayerNorms"]),
    ("7.3", ("a",), ["training"]),
    ("7.4", (variant(parameter_breakdown, weights_only=True),), ["biases are parameters too"]),
    ("7.4", (variant(parameter_breakdown, with_norms=False),), ["no LayerNorm parameters"]),
    ("7.4", (lambda m: {"total": 1},), ["missing embeddings"], SHAPE),
    (
        "7.4",
        (variant(parameter_breakdown, attention_word="attention"),),
        ["no parameter name matched"],
    ),
    ("7.4", (lambda m: [1, 2],), ["should return a dict"], TYPE),
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
    (
        "7.6",
        (lambda t, cls_id=1: prepend_cls(prepend_cls(t, cls_id), cls_id),),
        ["two CLS columns"],
    ),
    ("7.7", (lr_without_d_model, make_scheduler), ["no d_model factor", "d_model^-0.5"]),
    ("7.7", (lr_with_max, make_scheduler), ["max(...) where the formula has min(...)"]),
    ("7.7", (noam_lr, scheduler_from_zero), ["update 4001", "step + 1"]),
    (
        "7.7",
        (noam_lr, lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda s: noam_lr(s + 2))),
        ["step + 1"],
    ),
    (
        "7.7",
        (noam_lr, lambda o: torch.optim.lr_scheduler.LambdaLR(o, noam_lr)),
        ["ZeroDivisionError", "pass step + 1"],
    ),
    ("7.7", (noam_lr, forgets_return), ["returned None"]),
    ("7.7", (noam_lr, lambda o: "LambdaLR"), ["torch scheduler"], TYPE),
    ("7.8", (-0.4493, 0.5968), ["sign"]),
    ("7.8", (0.4493 / math.log(2), 0.5968), ["base 2"]),
    ("7.8", (0.4493, smoothed_over_k_minus_1()), ["K − 1"]),
    ("7.8", (0.4493, 0.4493), ["plain cross-entropy"]),
    ("7.8", (0.6381, 0.5968), ["probability"]),
    ("7.8", (0.4493, -0.5968), ["sign"]),
    ("7.8", (0.4493, 0.5968 / 4), ["mean over the 4 classes"]),
    ("7.9", (families_with(chatbot="encoder-only"),), ["chatbot: not encoder-only", "generates"]),
    ("7.9", (families_with(summarisation="BERT"),), ["answer with"], TYPE),
    ("7.9", ({},), ["no entry"], SHAPE),
    ("7.10", enc_batch_first(), ["batch_first"]),
    (
        "7.10",
        (nn.TransformerEncoderLayer(512, 8), torch.zeros(10, 32, 512)),
        ["nn.TransformerEncoder", "num_layers=6"],
    ),
    ("7.11", (variant(training_step, causal=False),), ["no causal mask"]),
    ("7.11", (variant(training_step, smoothing=0.0),), ["label smoothing"]),
    ("7.11", (variant(training_step, clip=False),), ["not clipped"]),
    # Four more slips of a hand-written step: the source padding left visible, the padding
    # counted in the loss, the loss summed over the tokens, the target shifted the wrong way.
    ("7.11", (variant(training_step, src_mask=False),), ["source padding is visible"]),
    ("7.11", (variant(training_step, ignore=-100),), ["padding counts in the loss"]),
    ("7.11", (variant(training_step, reduction="sum"),), ["sum over the tokens"]),
    ("7.11", (variant(training_step, shifted=False),), ["the shift is the wrong way round"]),
    ("7.12", ("a",), ["(a) is not the best answer"]),
]


@pytest.mark.parametrize(
    "exercise_id, answers, words, kind",
    [w if len(w) == 4 else (*w, MISTAKE) for w in WRONG],
    ids=[f"{w[0]}-{i}" for i, w in enumerate(WRONG)],
)
def test_typical_mistakes_are_named(exercise_id, answers, words, kind):
    result = check(exercise_id, *answers)
    assert result.status == FAILED, result.message
    for word in words:
        assert word in result.message, result.message
    assert result.diagnosis == kind, (result.diagnosis, result.message)


@pytest.mark.parametrize("task", ["translation", "summarisation"])
def test_a_large_decoder_only_model_may_translate_and_summarise(task):
    result = check("7.9", families_with(**{task: "decoder-only"}))
    assert result.status == PASSED, result.message


def test_the_key_embedding_of_earlier_copies_of_7_4_is_still_read():
    def older(model):
        counts = parameter_breakdown(model)
        counts["embedding"] = counts.pop("embeddings")
        return counts

    assert check("7.4", older).status == PASSED


def test_the_key_names_of_7_4_are_count_parameters_names():
    from course_lib.parameters import count_parameters

    keys = ("embeddings", "attention", "feed_forward", "norms", "total")
    prompt = SOLUTIONS.read_text().split("### ✏️ 7.4", 1)[1].split("# %%", 1)[0]
    assert all(f'`"{key}"`' in prompt for key in keys)
    assert set(keys) <= set(count_parameters(nn.Linear(2, 2)))


@pytest.mark.parametrize("layers, said", [(1, "has 1 layer;"), (2, "has 2 layers;")])
def test_a_wrong_number_of_layers_is_counted_in_words_7_10(layers, said):
    layer = nn.TransformerEncoderLayer(d_model=512, nhead=8)
    encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
    result = check("7.10", encoder, encoder(torch.randn(10, 32, 512)))
    assert result.diagnosis == MISTAKE and said in result.message, result.message


# Hints go from a nudge to the method; only the last one may show code: a backtick span that is
# an expression (an operator, a bracket, an assignment or a dotted call), or a call or index bare.
_CODE = re.compile(r"`[^`]*(?:[(\[=@*+/-]|\.\w+\()[^`]*`")
_BARE_CODE = re.compile(r"\w\(|\w\[|\*\*")


@pytest.mark.parametrize("exercise", exercises(7), ids=lambda e: e.id)
def test_only_the_last_hint_shows_code(exercise):
    for earlier in exercise.hints[:-1]:
        assert not _CODE.search(earlier), earlier
        assert not _BARE_CODE.search(earlier.replace("`", "")), earlier


@pytest.mark.parametrize("exercise_id", ["7.6", "7.7", "7.10"])
def test_the_first_hint_is_a_nudge_not_the_answer(exercise_id):
    first = EXERCISES[exercise_id].hints[0]
    assert len(EXERCISES[exercise_id].hints) > 1
    for code in ("torch.cat", "torch.full", "** -0.5", "nn.TransformerEncoder("):
        assert code not in first, first


def _options(exercise_id: str) -> dict[str, str]:
    """The options of a multiple choice as the lesson lists them: letter -> text."""
    answer = f"answer_{exercise_id.replace('.', '_')} ="
    prompt = SOLUTIONS.read_text().split(f"### ✏️ {exercise_id} ", 1)[1].split(answer, 1)[0]
    return dict(re.findall(r"^# - \*\*([a-z])\.\*\* (.+)$", prompt, re.M))


@pytest.mark.parametrize("exercise_id", [e.id for e in exercises(7) if e.kind == "choice"])
def test_the_right_option_is_not_singled_out_by_its_length(exercise_id):
    options = _options(exercise_id)
    right = next(x for x in options if check(exercise_id, x).status == PASSED)
    others = sorted(len(text) for x, text in options.items() if x != right)
    assert len(options) == 4 and len(options[right]) < others[-1], options
    assert len(options[right]) <= 1.5 * statistics.median(others), options


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


# 7.2: each miscount is named, as a mistake ------------------------------------------------------

D, DK, FF = 512, 64, 4096  # Table 3's variant with the wider FFN
FFN = 2 * D * FF
LAYER = 4 * D * D + FFN  # 5,242,880


@pytest.mark.parametrize(
    "layer, encoder, words",
    [
        (LAYER + 4 * D + FF + D, 0, ["biases"]),  # every bias, no LayerNorm
        (LAYER + FF + D, 0, ["the FFN's biases"]),  # a bias family counted
        (LAYER + 2 * D, 0, ["one LayerNorm's γ and β"]),
        (LAYER + 4 * D, 0, ["LayerNorms' γ and β (2 × 2 × 512)"]),
        (3 * 8 * D * D + D * D + FFN, 0, ["512 × 64 (d_k = 512 / 8), not 512 × 512"]),
        (3 * D * DK + D * D + FFN, 0, ["lacks n_heads (8)"]),  # one head's projections
        (4 * D * D + 2 * D * D, 0, ["d_ff = 4096, not d_model"]),
        (4 * D * D + 2 * FF * FF, 0, ["not 4096 × 4096"]),
        (3 * 8 * D * 63 + D * D + FFN, 0, ["you have 63 for d_k (64)"]),  # a typo in one factor
        (3 * 8 * D * DK - D * D + FFN, 0, ["W^O = 512 × 512 is subtracted"]),
        (3 * 8 * D * DK + 8 * D * D + FFN, 0, ["W^O = 512 × 512 is counted 8 times"]),
        (LAYER, 5 * LAYER, ["5 layers; the encoder stacks N = 6"]),
        (LAYER, 12 * LAYER, ["encoder and decoder stacks"]),
        (LAYER, 6, ["N alone"]),
        (LAYER, LAYER / 6, ["one layer divided by N = 6"]),
    ],
)
def test_the_miscounts_of_7_2_are_named(layer, encoder, words):
    result = check("7.2", layer, encoder)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


def test_an_unexplained_count_in_7_2_says_how_far_off_it_is():
    result = check("7.2", 5_000_000, 0)
    assert result.diagnosis == DIFFERENCE and "-242,880 off" in result.message, result.message


# 7.4: the miscounts of the parameter tool are named -----------------------------------------------


def tool(model, *, start=0, subtract=False, negated=False, skip=(), first_layer=False,
         swap=False, rows=False, raw=False, gamma_only=False):  # fmt: skip
    parts = {"embeddings": "embed", "attention": "attn", "feed_forward": "ffn", "norms": "norm"}
    if swap:
        parts = {"embeddings": "attn", "attention": "embed", "feed_forward": "ffn", "norms": "norm"}
    counts = dict.fromkeys([*parts, "total"], start)
    for name, p in model.named_parameters():
        if any(s in name for s in skip) or (gamma_only and "norm.bias" in name):
            continue
        if first_layer and "layers." in name and "layers.0." not in name:
            continue
        size = p.shape[0] if rows else p.numel()
        for key, word in parts.items():
            if (word in name) != negated:
                counts[key] = counts[key] + (p if raw else -size if subtract else size)
                break
        counts["total"] += size
    return counts


@pytest.mark.parametrize(
    "options, words",
    [
        ({"first_layer": True}, ["first layer only", "6 layers"]),
        ({"swap": True}, ["the count of `attention`", "mixed up"]),
        ({"rows": True}, ["p.shape[0]", "p.numel()"]),
    ],
)
def test_the_miscounts_of_7_4_are_named(options, words):
    result = check("7.4", variant(tool, **options))
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


# Variants of the kind a mutation makes (a parameter left out, a count started at 1, a sign
# flipped): rejected, saying which count is off and what it should be.
@pytest.mark.parametrize(
    "options",
    [
        {"skip": ("ffn.w_1.bias",)},
        {"skip": ("w_o",)},
        {"gamma_only": True},
        {"start": 1},
        {"subtract": True},
        {"negated": True},
    ],
)
def test_other_miscounts_of_7_4_fail(options):
    result = check("7.4", variant(tool, **options))
    assert result.status == FAILED and "expected" in result.message, result.message


def test_adding_the_parameter_tensors_instead_of_their_sizes_is_named_7_4():
    result = check("7.4", variant(tool, raw=True))
    assert result.diagnosis == MISTAKE and "p.numel()" in result.message, result.message


# 7.5 and 7.6: the answer-type policy, and answers that ignore an argument ------------------------


def test_a_function_of_lesson_7_returns_a_tensor():
    numpy_distances = check("7.5", lambda *args: influence(*args).numpy())
    assert numpy_distances.diagnosis == TYPE and "torch.Tensor" in numpy_distances.message
    listed = check("7.6", lambda tokens, cls_id=1: prepend_cls(tokens, cls_id).tolist())
    assert listed.diagnosis == TYPE and "torch.Tensor" in listed.message


def test_fixed_positions_and_a_fixed_cls_id_are_named():
    fixed = check("7.5", lambda encoder, tokens, zeroed, probe: influence(encoder, tokens, 3, 7))
    assert fixed.diagnosis == MISTAKE and "`zeroed` and `probe`" in fixed.message
    one = check("7.6", lambda tokens, cls_id=1: prepend_cls(tokens, 1))
    assert one.diagnosis == MISTAKE and "`cls_id`" in one.message


# 7.7: the usual slips of the warmup schedule are named --------------------------------------------


def rate(step, d_model=512, warmup=4000, *, factor=-0.5, power=-1.5, pick=min, shift=0):
    step += shift
    return d_model**factor * pick(step**-0.5, step * warmup**power)


@pytest.mark.parametrize(
    "noam, words",
    [
        (
            variant(rate, power=-0.5),
            ["step · warmup^-0.5 where the formula has step · warmup^-1.5"],
        ),
        (variant(rate, power=-1.0), ["step · warmup^-1 where"]),
        (variant(rate, factor=0.5), ["d_model^0.5 where the formula has d_model^-0.5"]),
        (variant(rate, pick=max), ["max(...) where the formula has min(...)"]),
        (variant(rate, shift=1), ["the rate of step 2", "counts steps from 1"]),
        (lambda step, d_model=512, warmup=4000: rate(step), ["still uses 512 and 4000"]),
        (lambda step: rate(step), ["noam_lr takes d_model and warmup"]),
    ],
)
def test_the_slips_of_the_warmup_rate_are_named_7_7(noam, words):
    result = check("7.7", noam, make_scheduler)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


@pytest.mark.parametrize(
    "scheduler, words",
    [
        (lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda n: noam_lr(n)), ["pass step + 1"]),
        (lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda n: noam_lr(n - 1)), ["step + 1"]),
        (lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda n: noam_lr(1)), ["never changes"]),
        (
            scheduler_on_its_own_optimizer,
            ["the learning rate stays 1.0", "drive the optimizer it is given"],
        ),
    ],
    ids=["step 0", "step -1", "constant", "own optimizer"],
)
def test_a_scheduler_that_starts_at_step_0_is_named_7_7(scheduler, words):
    result = check("7.7", noam_lr, scheduler)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


# 7.8: label smoothing by hand, the mistakes named ---------------------------------------------------

LOG_P = LOGITS[0].double().log_softmax(-1)


def smoothed_by(target, values=LOG_P):
    return float(-(torch.tensor(target, dtype=torch.float64) * values).sum())


@pytest.mark.parametrize(
    "smoothed_loss, words",
    [
        (smoothed_by([0.9, 0.1 / 3, 0.1 / 3, 0.1 / 3]), ["K − 1 wrong classes"]),  # ε over V − 1
        (smoothed_by([0.0, 0.025, 0.025, 0.025]), ["as if it were padding", "true class"]),
        (smoothed_by([0.0, 0.05, 0.05, 0.05]), ["as if it were padding"]),
        (smoothed_by([0.9, 0.025, 0.025, 0.025]), ["1 − ε = 0.9 without its own share ε/K"]),
        (smoothed_by([1.025, 0.025, 0.025, 0.025]), ["1 − ε on top of its ε/K, not 1"]),
        (smoothed_by([0.925, 0.025, 0.025, 0.025]) / 4, ["mean over the 4 classes", "*sums*"]),
        (smoothed_by([0.925, 0.025, 0.025, 0.025], LOGITS[0].softmax(-1)), ["probabilities"]),
        (smoothed_by([0.925, 0.025, 0.025, 0.025], LOGITS[0].double()), ["logits"]),
        (smoothed_by([1.0, 0.1, 0.1, 0.1]), ["ε = 0.1 itself: divide it by K"]),
        (smoothed_by([0.025, 0.925, 0.025, 0.025]), ["went to class 1"]),
        (smoothed_by([0.925, 0.025, 0.025, 0.025]) - 0.3488, ["KL divergence"]),
    ],
)
def test_the_smoothing_mistakes_are_named_7_8(smoothed_loss, words):
    result = check("7.8", 0.4493, smoothed_loss)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


@pytest.mark.parametrize(
    "plain_loss, words",
    [
        (-LOGITS[0, 0], ["logits are not log-probabilities"]),
        (-LOGITS[0].softmax(-1)[0], ["−p", "log_softmax"]),
        (-LOG_P[1], ["class 1; the true class is 0"]),
        (-LOG_P.sum(), ["all 4 classes"]),
    ],
)
def test_the_plain_loss_mistakes_are_named_7_8(plain_loss, words):
    result = check("7.8", plain_loss, 0.5968)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


# 7.11: the whole step, the forgotten zero_grad among them -----------------------------------------


def step_with(model, optimizer, scheduler, src, tgt, *, zero="before", clip=1.0,
              scheduler_first=False, swap_loss=False):  # fmt: skip
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    logits = model(
        src, tgt_in, src_mask=padding_mask(src, PAD_ID), tgt_mask=target_mask(tgt_in, PAD_ID)
    )
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=PAD_ID)
    flat, labels = logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1)
    loss = criterion(labels, flat) if swap_loss else criterion(flat, labels)
    if zero == "before":
        optimizer.zero_grad()
    loss.backward()
    if zero == "between":
        optimizer.zero_grad()
    if scheduler_first:
        scheduler.step()
    nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    if not scheduler_first:
        scheduler.step()
    if zero == "after":
        optimizer.zero_grad()
    return loss.item()


@pytest.mark.parametrize(
    "options, words",
    [
        ({"zero": None}, ["optimizer.zero_grad() before loss.backward()"]),  # the finding
        ({"zero": "after"}, ["optimizer.zero_grad() before loss.backward()"]),
        ({"zero": "between"}, ["found no gradients", "not between backward() and step()"]),
        ({"clip": 2.0}, ["clipped to norm 2; clip them to 1.0"]),
        ({"scheduler_first": True}, ["scheduler.step() ran before optimizer.step()"]),
        (
            {"swap_loss": True},
            ["CrossEntropyLoss takes (logits, labels)"],
        ),  # a crash, not "not done"
    ],
)
def test_each_slip_of_the_training_step_is_named_7_11(options, words):
    result = check("7.11", variant(step_with, **options))
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


def test_the_check_of_7_11_finds_gradients_left_from_an_earlier_step():
    """The check's model comes with gradients in .grad, as after any earlier step: a step
    without zero_grad uses them."""
    seen = {}

    def spy(model, optimizer, scheduler, src, tgt):
        seen["grads"] = [p.grad is not None and bool(p.grad.any()) for p in model.parameters()]
        return training_step(model, optimizer, scheduler, src, tgt)

    assert check("7.11", spy).status == PASSED
    assert all(seen["grads"])


def test_a_wrong_training_loss_names_its_label_smoothing_7_11():
    result = check("7.11", variant(training_step, smoothing=0.2))
    assert result.diagnosis == MISTAKE and "label_smoothing = 0.2" in result.message


def model_answer_of(exercise_id: str) -> tuple[object, list[str]]:
    """The model answer of a code exercise, run from lesson 7's source as a notebook runs it,
    and the code cells up to it (the grader reads them for the rules)."""
    from course_tools import sources

    cells = [c.source for c in sources.read(SOLUTIONS).cells if c.cell_type == "code"]
    name = EXERCISES[exercise_id].names[0]
    index = next(i for i, c in enumerate(cells) if f"def {name}(" in c)
    space = {"__name__": "__main__"}
    exec(cells[0].replace("notebook.start(seed=0)", ""), space)  # the lesson's imports
    exec(cells[index], space)
    return space[name], cells[: index + 1]


@pytest.mark.rules
def test_the_model_answer_of_7_11_keeps_to_its_rules():
    answer, cells = model_answer_of("7.11")
    assert EXERCISES["7.11"].run(answer, sources=cells).status == PASSED
    assert EXERCISES["7.11"].rules.uses == (
        "course_lib.masks.padding_mask",
        "course_lib.masks.target_mask",
        "course_lib.data.PAD_ID",
    )
    prompt = SOLUTIONS.read_text()
    assert (
        "*What you may use:* anything, but from `course_lib` only `padding_mask`, `target_mask` "
        "and `PAD_ID`." in prompt
    )


@pytest.mark.rules
def test_a_training_step_on_course_libs_loss_is_refused_7_11():
    from course_lib.training import label_smoothed_cross_entropy

    def with_course_loss(model, optimizer, scheduler, src, tgt):
        tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
        logits = model(src, tgt_in, padding_mask(src, PAD_ID), target_mask(tgt_in, PAD_ID))
        loss = label_smoothed_cross_entropy(logits, tgt_out)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        return loss.item()

    result = check("7.11", with_course_loss)
    assert result.diagnosis == RULE and "label_smoothed_cross_entropy" in result.message


def test_the_warmup_rate_may_name_its_parameters_as_it_likes_7_7():
    def rate(n, width=512, warm_steps=4000):
        return width**-0.5 * min(n**-0.5, n * warm_steps**-1.5)

    def scheduler(optimizer):
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: rate(s + 1))

    assert check("7.7", rate, scheduler).status == PASSED


# 7.11: masks of the opposite polarity (True = hidden, nn.Transformer's) are named -------------


def step_with_masks(src_mask, tgt_mask):
    def step(model, optimizer, scheduler, src, tgt):
        tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
        logits = model(src, tgt_in, src_mask=src_mask(src), tgt_mask=tgt_mask(tgt_in))
        loss = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=PAD_ID)(
            logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1)
        )
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        return loss.item()

    return step


def hidden_padding(src):  # True = hidden, as nn.Transformer's key_padding_mask
    return (src == PAD_ID)[:, None, None, :]


def hidden_future(tgt_in):  # True = hidden, as nn.Transformer.generate_square_subsequent_mask
    return torch.ones(tgt_in.shape[1], tgt_in.shape[1], dtype=torch.bool).triu(1)


@pytest.mark.parametrize(
    "src_mask, tgt_mask, which",
    [
        (hidden_padding, hidden_future, "the source mask and the target mask"),
        (lambda s: ~padding_mask(s, PAD_ID), lambda t: ~target_mask(t, PAD_ID), "source mask and"),
        (lambda s: padding_mask(s, PAD_ID), hidden_future, "the target mask"),
        (hidden_padding, lambda t: target_mask(t, PAD_ID), "the source mask"),
    ],
    ids=["both, nn.Transformer's", "both, inverted", "causal", "padding"],
)
def test_masks_of_the_opposite_polarity_are_named_7_11(src_mask, tgt_mask, which):
    result = check("7.11", step_with_masks(src_mask, tgt_mask))
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    assert "mask polarity is inverted" in result.message, result.message
    assert "True = may attend" in result.message and which in result.message, result.message


# 7.8: the losses are written out, not taken from label_smoothing= ------------------------------

SMOOTHED_BY_THE_LIBRARY = [
    "import torch\nimport torch.nn.functional as F\nfrom torch import nn",
    "logits = torch.tensor([2.0, 1.0, 0.1, -1.0])\n"
    "plain_loss = F.cross_entropy(logits[None], torch.tensor([0]))\n"
    "smoothed_loss = {}",
]


@pytest.mark.rules
@pytest.mark.parametrize(
    "made",
    [
        "F.cross_entropy(logits[None], torch.tensor([0]), label_smoothing=0.1)",
        "nn.CrossEntropyLoss(label_smoothing=0.1)(logits[None], torch.tensor([0]))",
    ],
)
def test_label_smoothing_by_the_library_is_refused_7_8(made):
    cells = [SMOOTHED_BY_THE_LIBRARY[0], SMOOTHED_BY_THE_LIBRARY[1].format(made)]
    result = EXERCISES["7.8"].run(
        F.cross_entropy(LOGITS, torch.tensor([0])), smoothed(), sources=cells
    )
    assert result.status == FAILED and result.diagnosis == RULE, result.message
    assert "`label_smoothing=`" in result.message and "written out" in result.message, (
        result.message
    )


@pytest.mark.rules
def test_label_smoothing_written_out_keeps_to_the_rules_7_8():
    written = "-(torch.tensor([0.925, 0.025, 0.025, 0.025]) * logits.log_softmax(-1)).sum()"
    cells = [SMOOTHED_BY_THE_LIBRARY[0], SMOOTHED_BY_THE_LIBRARY[1].format(written)]
    result = EXERCISES["7.8"].run(
        F.cross_entropy(LOGITS, torch.tensor([0])), smoothed(), sources=cells
    )
    assert result.status == PASSED, result.message
