"""Tests of the lesson 1 checks (``course_lib/checks/lesson01.py``).

For every exercise: the reference answer and equally valid variants pass, and typical wrong
answers fail with the message that names the mistake. The lesson's own stubs are tested in
``test_checks_stubs.py``.
"""

import re
import statistics
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from typical_answers import forgets_return

from course_lib.checks import FAILED, NOT_DONE, PASSED, check, exercises
from course_lib.lesson_format import listed_options
from course_lib.widgets import sequence_cost
from course_lib.widgets.sequence_cost import layer_costs

LESSON_1 = {e.id: e for e in exercises(1)}
ROOT = Path(__file__).resolve().parent.parent


# Reference answers, written as a learner would ------------------------------------------------


def attention_cost(n, d):
    return n * n * d


def recurrent_cost(n, d):
    return n * d * d


def reversal_accuracy(predicted, target):
    right = predicted[:, 1:] == target[:, 1:]  # position 1 is given, not predicted
    return right.float().mean().item(), right.all(dim=1).float().mean().item()


def reversal_accuracy_numpy(predicted, target):
    right = np.asarray(predicted)[:, 1:] == np.asarray(target)[:, 1:]
    return right.mean(), right.all(axis=1).mean()


def lstm_parameters(d_in, hidden):
    return 4 * hidden * (d_in + hidden) + 8 * hidden


def lstm_parameters_by_pytorch(d_in, hidden):
    return sum(p.numel() for p in torch.nn.LSTM(d_in, hidden).parameters())


def attention_bytes(n, heads=1, layers=1, batch=1):
    return 4 * n**2 * heads * layers * batch


RIGHT = [
    pytest.param("1.1", ("c",), id="1.1"),
    pytest.param("1.1", ("(C)",), id="1.1-capital"),
    pytest.param("1.2", (100, 99, 1, 1), id="1.2"),
    pytest.param("1.2", (100.0, np.int64(99), torch.tensor(1), 1), id="1.2-types"),
    pytest.param("1.2", (100, 100, 1, 1), id="1.2-about-100"),
    pytest.param("1.3", (attention_cost, recurrent_cost, 1024), id="1.3"),
    pytest.param(
        "1.3",
        (lambda n, d: n**2 * d, lambda n, d: float(n * d**2), 1024.0),
        id="1.3-powers-floats",
    ),
    pytest.param("1.4", (reversal_accuracy,), id="1.4"),
    pytest.param("1.4", (reversal_accuracy_numpy,), id="1.4-numpy"),
    pytest.param("1.5", (lstm_parameters,), id="1.5"),
    pytest.param("1.5", (lstm_parameters_by_pytorch,), id="1.5-pytorch"),
    pytest.param("1.6", (attention_bytes,), id="1.6"),
    pytest.param("1.6", (lambda n, heads=1, layers=1, batch=1: n * n * 4.0 * heads * layers * batch,), id="1.6-float"),
    pytest.param("1.7", ("a",), id="1.7"),
]  # fmt: skip


@pytest.mark.parametrize("exercise_id, answers", RIGHT)
def test_right_answers_pass(exercise_id, answers):
    result = check(exercise_id, *answers)
    assert result.status == PASSED, result.message


def test_every_exercise_has_a_right_answer_above():
    assert {p.values[0] for p in RIGHT} == set(LESSON_1)


@pytest.mark.parametrize(
    "exercise_id, answers, words",
    [
        ("1.2", (100, 99, 1, 1), "99-hop path"),
        ("1.2", (100, 100, 1, 1), "You gave 100, which counts the words"),
        (
            "1.3",
            (attention_cost, recurrent_cost, 1024),
            "40,960,000 multiply-adds against 209,715,200 (5.12× cheaper)",
        ),
        (
            "1.3",
            (attention_cost, recurrent_cost, 1024),
            "25,600,000,000 against 5,242,880,000 (4.88× dearer)",
        ),
        ("1.4", (reversal_accuracy,), "17 of 20 scored tokens"),
        ("1.5", (lstm_parameters,), "197,632"),
        ("1.6", (attention_bytes,), "24 GiB for the base model's 8 heads × 6 layers"),
    ],
)
def test_success_messages_carry_the_lessons_numbers(exercise_id, answers, words):
    assert words in check(exercise_id, *answers).message


def test_the_memory_check_does_not_answer_the_question_after_it():
    """1.7 asks what is wrong with the 128,000-token row: 1.6's success must not say it."""
    message = check("1.6", attention_bytes).message
    assert not any(figure in message for figure in ("128,000", "65.5", "61.0", "131,072"))


# Hints go from a nudge to the method; only the last may show code ---------------------------

# A backtick span that is an expression, not a plain name: an operator, a bracket or a call.
CODE = re.compile(r"`([^`]*(?:[-(\[=@*+/]|\.\w+\()[^`]*)`")


@pytest.mark.parametrize("exercise_id", list(LESSON_1))
def test_only_the_last_hint_shows_code(exercise_id):
    *first, _ = LESSON_1[exercise_id].hints
    assert first, f"{exercise_id} has a single hint: start with a nudge"
    for text in first:
        assert not CODE.search(text), text


def test_the_first_accuracy_hint_leaves_the_slice_to_the_learner():
    first = LESSON_1["1.4"].hints[0]
    assert "[:, 1:]" not in first and "1:" not in first


def test_code_in_a_hint_is_recognised():
    assert CODE.search("then `right.float().mean()`") and CODE.search("`4 * n * n`")
    assert not CODE.search("the names `d_model` and `softmax`")


# The right option of a multiple choice is not singled out by its length ---------------------


def lesson_questions() -> dict[str, list[str]]:
    """The options of lesson 1's multiple choices as the lesson lists them, by exercise."""
    nb = nbformat.read(ROOT / "solutions" / "01_sequence_problem.ipynb", as_version=4)
    options = [text for _, text in listed_options(nb)]
    choices = [e.id for e in LESSON_1.values() if e.kind == "choice"]
    assert len(options) == 4 * len(choices)
    return {e: options[4 * i : 4 * i + 4] for i, e in enumerate(choices)}


@pytest.mark.parametrize("exercise_id", ["1.1", "1.7"])
def test_the_right_option_is_not_the_longest(exercise_id):
    options = lesson_questions()[exercise_id]
    right = next(i for i, letter in enumerate("abcd") if check(exercise_id, letter).passed)
    others = [len(t) for i, t in enumerate(options) if i != right]
    assert len(options[right]) < max(others), options
    assert len(options[right]) <= 1.5 * statistics.median(others), options


# Unfinished answers are "not done" (the lesson's own stubs: test_checks_stubs.py) -------------


def two_argument_stub(a, b):
    raise NotImplementedError()


def test_one_unfinished_function_is_enough_to_be_not_done():
    result = check("1.3", attention_cost, two_argument_stub, 1024)
    assert result.status == NOT_DONE


# Typical mistakes fail with the right diagnosis ------------------------------------------------------


def accuracy(score_first=False, sequence=None, swap=False):
    def fn(predicted, target):
        start = 0 if score_first else 1
        right = (predicted[:, start:] == target[:, start:]).float()
        tokens = right.mean().item()
        seq = (sequence or (lambda r: r.all(dim=1).float().mean()))(right)
        seq = float(seq)
        return (seq, tokens) if swap else (tokens, seq)

    return fn


def shifted_accuracy(predicted, target):
    """Scores positions 1..L-1 instead of 2..L (an off-by-one slice)."""
    right = predicted[:, :-1] == target[:, :-1]
    return right.float().mean().item(), right.all(dim=1).float().mean().item()


def in_percent(predicted, target):
    tokens, sequences = reversal_accuracy(predicted, target)
    return 100 * tokens, 100 * sequences


WRONG = [
    ("1.1-a", "1.1", ("a",), ["(a) is not the best answer", "swapped"]),
    ("1.1-b", "1.1", ("b",), ["(b) is not the best answer", "Transformer's own costs"]),
    ("1.1-d", "1.1", ("d",), ["fewer parameters"]),
    ("1.1-not-a-letter", "1.1", ("speed",), ['one of "a", "b", "c", "d"']),
    ("1.2-swapped", "1.2", (1, 1, 100, 99), ["swapped"]),
    ("1.2-worked-example", "1.2", (5, 4, 1, 1), ["5-word sentence"]),
    ("1.2-steps-99", "1.2", (99, 99, 1, 1), ["first word", "100 steps"]),
    ("1.2-rnn-parallel", "1.2", (1, 99, 1, 1), ["cannot compute h_t before h_{t-1}"]),
    ("1.2-rnn-path-1", "1.2", (100, 1, 1, 1), ["1 hop is attention's path"]),
    ("1.2-rnn-path-98", "1.2", (100, 98, 1, 1), ["h1 → h2 is the first"]),
    ("1.2-attention-steps-100", "1.2", (100, 99, 100, 1), ["every position at once"]),
    ("1.2-attention-path-0", "1.2", (100, 99, 1, 0), ["one hop"]),
    ("1.2-attention-path-99", "1.2", (100, 99, 1, 99), ["attends to word 1 directly"]),
    ("1.2-fraction", "1.2", (100, 99.5, 1, 1), ["whole numbers"]),
    ("1.2-steps-101", "1.2", (101, 99, 1, 1), ["h0 is the initial state"]),
    ("1.2-attention-steps-0", "1.2", (100, 99, 0, 1), ["still runs once"]),
    ("1.2-attention-steps-2", "1.2", (100, 99, 2, 1), ["sequential operations per layer"]),
    ("1.2-attention-path-2", "1.2", (100, 99, 1, 2), ["still one hop"]),
    ("1.2-rnn-path-other", "1.2", (100, 97, 1, 1), ["count the arrows"]),
    ("1.2-attention-path-other", "1.2", (100, 99, 1, 3), ["in one hop"]),
    ("1.2-list", "1.2", ([100, 99], 99, 1, 1), ["`rnn_steps` should be one number"]),
    ("1.3-swapped", "1.3", (recurrent_cost, attention_cost, 1024), ["swapped"]),
    ("1.3-n-d", "1.3", (lambda n, d: n * d, recurrent_cost, 1024), ["`attention_cost(50, 512)` = 25,600, not 1,280,000", "one pass"]),
    ("1.3-attention-is-recurrent", "1.3", (recurrent_cost, recurrent_cost, 1024), ["`attention_cost(50, 512)`", "other layer's formula"]),
    ("1.3-recurrent-is-attention", "1.3", (attention_cost, attention_cost, 1024), ["`recurrent_cost(50, 512)`", "other layer's formula"]),
    ("1.3-n-squared", "1.3", (lambda n, d: n * n, recurrent_cost, 1024), ["computes n², but each pair costs a d-long dot product"]),
    ("1.3-both", "1.3", (attention_cost, lambda n, d: n * n * d * d, 1024), ["n²·d² multiplies"]),
    ("1.3-one-step", "1.3", (attention_cost, lambda n, d: d * d, 1024), ["computes d², but there are n steps"]),
    ("1.3-no-return", "1.3", (attention_cost, forgets_return, 1024), ["returned None"]),
    ("1.3-crossover-squared", "1.3", (attention_cost, recurrent_cost, 1024**2), ["1,024² = d² is not a length", "n = d"]),
    ("1.3-crossover-root", "1.3", (attention_cost, recurrent_cost, 22.6), ["whole numbers"]),
    ("1.3-crossover-root-int", "1.3", (attention_cost, recurrent_cost, 32), ["√1,024 = 32"]),
    ("1.3-crossover-other", "1.3", (attention_cost, recurrent_cost, 100), ["solve for n"]),
    ("1.3-crossover-base-width", "1.3", (attention_cost, recurrent_cost, 512), ["base model's d = 512", "d = 1,024", "n = d"]),
    ("1.3-crossover-twice", "1.3", (attention_cost, recurrent_cost, 2048), ["not 2·d"]),
    ("1.3-crossover-one", "1.3", (attention_cost, recurrent_cost, 1), ["divide both sides"]),
    ("1.3-crossover-one-past", "1.3", (attention_cost, recurrent_cost, 1025), ["n = 1,025", "already the dearer", "n = d"]),
    ("1.3-crossover-one-short", "1.3", (attention_cost, recurrent_cost, 1023), ["n = 1,023", "still the cheaper", "n = d"]),
    ("1.3-n-squared-over-d", "1.3", (lambda n, d: n * n / d, recurrent_cost, 1024), ["computes n²·d⁻¹", "d-long dot product"]),
    ("1.3-twice", "1.3", (lambda n, d: 2 * n * n * d, recurrent_cost, 1024), ["computes 2·n²·d", "counts once"]),
    ("1.3-n-cubed", "1.3", (lambda n, d: n**3 * d, recurrent_cost, 1024), ["computes n³·d", "n² pairs"]),
    ("1.3-no-self-pairs", "1.3", (lambda n, d: n * (n - 1) * d, recurrent_cost, 1024), ["attends to itself"]),
    ("1.3-constant", "1.3", (lambda n, d: 7, recurrent_cost, 1024), ["returns 7 whatever n and d are"]),
    ("1.3-recurrent-n", "1.3", (attention_cost, lambda n, d: n, 1024), ["computes n, but", "d × d matrix"]),
    ("1.3-recurrent-n-1-steps", "1.3", (attention_cost, lambda n, d: (n - 1) * d * d, 1024), ["n steps, not n - 1"]),
    ("1.3-recurrent-four-gates", "1.3", (attention_cost, lambda n, d: 4 * n * d * d, 1024), ["no factor 4"]),
    ("1.3-off-by-one", "1.3", (lambda n, d: n * n * d + 1, recurrent_cost, 1024), ["should be n²·d = 1,280,000; got 1,280,001."]),
    ("1.3-crash", "1.3", (lambda n, d: n / 0, recurrent_cost, 1024), ["ZeroDivisionError", "with n = 50, d = 512"]),
    ("1.4-first-position", "1.4", (accuracy(score_first=True),), ["position 1", "2..L"]),
    ("1.4-sequence-as-tokens", "1.4", (accuracy(sequence=lambda r: r.mean()),), ["token accuracy again"]),
    ("1.4-any", "1.4", (accuracy(sequence=lambda r: r.any(dim=1).float().mean()),), [".all, not .any"]),
    ("1.4-swapped", "1.4", (accuracy(swap=True),), ["swapped"]),
    ("1.4-percent", "1.4", (in_percent,), ["not percentages"]),
    ("1.4-counts", "1.4", (lambda p, t: ((p[:, 1:] == t[:, 1:]).sum().item(), (p[:, 1:] == t[:, 1:]).all(1).sum().item()),), ["not percentages or counts"]),
    ("1.4-one-number", "1.4", (lambda p, t: 0.8,), ["a pair of numbers (token_accuracy, sequence_accuracy)"]),
    ("1.4-sequence-dim-0", "1.4", (accuracy(sequence=lambda r: r.all(dim=0).float().mean()),), ["wrong dimension", ".all(dim=1)"]),
    ("1.4-last-position-dropped", "1.4", (shifted_accuracy,), ["positions 1..L-1", "predicted[:, 1:]"]),
    ("1.4-none-second", "1.4", (lambda p, t: (0.85, None),), ["`sequence_accuracy`"]),
    ("1.4-error-rates", "1.4", (lambda p, t: _rates(p[:, 1:] != t[:, 1:]),), ["error rates", "=="]),
    ("1.4-from-position-3", "1.4", (lambda p, t: _rates(p[:, 2:] == t[:, 2:]),), ["positions 3..L"]),
    ("1.4-last-left-out", "1.4", (lambda p, t: _rates(p[:, 1:-1] == t[:, 1:-1]),), ["last position is left out"]),
    ("1.4-sliced-differently", "1.4", (lambda p, t: _rates(p[:, 2:] == t[:, 1:]),), ["RuntimeError", "sliced differently"]),
    ("1.4-boolean-mean", "1.4", (lambda p, t: ((p == t).mean().item(), 0.5),), ["booleans, which have no mean", ".float()"]),
    ("1.4-dim-2", "1.4", (lambda p, t: (0.85, (p == t).all(dim=2).float().mean().item()),), ["IndexError", "dim=1"]),
    ("1.4-tensor-pair", "1.4", (lambda p, t: torch.tensor([0.85, 0.5]),), ["a pair of numbers", "a tensor of shape (2,)"]),
    ("1.4-none", "1.4", (forgets_return,), ["returned None"]),
    ("1.4-negative", "1.4", (lambda p, t: (-0.85, 0.5),), ["never negative"]),
    ("1.4-all-without-dim", "1.4", (lambda p, t: _rates(p[:, 1:] == t[:, 1:])[:1] + (float((p[:, 1:] == t[:, 1:]).all()),),), [".all() without dim", ".all(dim=1)"]),
    ("1.3-negative", "1.3", (lambda n, d: -n * n * d, recurrent_cost, 1024), ["sign is flipped"]),
    ("1.3-fraction", "1.3", (lambda n, d: n * n * d + 0.5, recurrent_cost, 1024), ["a division where a product belongs"]),
    ("1.5-negative", "1.5", (lambda d, h: -lstm_parameters(d, h),), ["sign is flipped"]),
    ("1.5-division", "1.5", (lambda d, h: 4 * h / d + 4 * h * h + 8 * h,), ["a division where a product belongs"]),
    ("1.6-negative", "1.6", (lambda n, heads=1, layers=1, batch=1: -attention_bytes(n, heads, layers, batch),), ["sign is flipped"]),
    ("1.4-other", "1.4", (lambda p, t: (0.85, 0.75),), ["`sequence_accuracy` is off by up to 0.25: expected 0.5000, got 0.7500"]),
    ("1.5-one-bias", "1.5", (lambda d, h: 4 * h * (d + h) + 4 * h,), ["two bias vectors"]),
    ("1.5-no-bias", "1.5", (lambda d, h: 4 * h * (d + h),), ["biases are missing"]),
    ("1.5-no-recurrent", "1.5", (lambda d, h: 4 * h * d + 8 * h,), ["W_hh"]),
    ("1.5-one-gate", "1.5", (lambda d, h: h * (d + h) + 2 * h,), ["four gates", "multiply by 4"]),
    ("1.5-gru", "1.5", (lambda d, h: 3 * h * (d + h) + 6 * h,), ["GRU"]),
    ("1.5-both-directions", "1.5", (lambda d, h: 2 * lstm_parameters(d, h),), ["both directions"]),
    ("1.5-constant", "1.5", (lambda d, h: 7,), ["= 7, not 197,632", "returns 7 whatever d_in and hidden are"]),
    ("1.5-other", "1.5", (lambda d, h: 4 * h * (d + h) + 8 * h if d < 100 else 3,), ["`lstm_parameters(256, 128)` should be", "= 197,632; got 3", "4·hidden·d_in (W_ih) + 4·hidden² (W_hh) + 8·hidden"]),
    ("1.6-entries", "1.6", (lambda n, heads=1, layers=1, batch=1: n * n * heads * layers * batch,), ["number of entries", "4 bytes"]),
    ("1.6-float16", "1.6", (lambda n, heads=1, layers=1, batch=1: 2 * n * n * heads * layers * batch,), ["float16"]),
    ("1.6-float64", "1.6", (lambda n, heads=1, layers=1, batch=1: 8 * n * n * heads * layers * batch,), ["float64"]),
    ("1.6-linear", "1.6", (lambda n, heads=1, layers=1, batch=1: 4 * n * heads * layers * batch,), ["n² entries, not n"]),
    ("1.6-one-copy", "1.6", (lambda n, heads=1, layers=1, batch=1: 4 * n * n,), ["heads, layers and batch were ignored", "attention_bytes(2048, heads=8"]),
    ("1.6-no-batch", "1.6", (lambda n, heads=1, layers=1, batch=1: 4 * n * n * heads * layers,), ["batch was ignored"]),
    ("1.6-no-layers", "1.6", (lambda n, heads=1, layers=1, batch=1: 4 * n * n * heads * batch,), ["layers were ignored"]),
    ("1.6-no-heads", "1.6", (lambda n, heads=1, layers=1, batch=1: 4 * n * n * layers * batch,), ["heads were ignored"]),
    ("1.6-bits", "1.6", (lambda n, heads=1, layers=1, batch=1: 32 * n * n * heads * layers * batch,), ["in bits"]),
    ("1.6-kib", "1.6", (lambda n, heads=1, layers=1, batch=1: attention_bytes(n, heads, layers, batch) / 2**10,), ["in KiB"]),
    ("1.6-mib", "1.6", (lambda n, heads=1, layers=1, batch=1: attention_bytes(n, heads, layers, batch) / 2**20,), ["in MiB"]),
    ("1.6-gb", "1.6", (lambda n, heads=1, layers=1, batch=1: attention_bytes(n, heads, layers, batch) / 1e9,), ["in GB"]),
    ("1.6-no-keywords", "1.6", (lambda n: 4 * n * n,), ["def attention_bytes(n, heads=1, layers=1, batch=1)"]),
    ("1.6-constant", "1.6", (lambda n, heads=1, layers=1, batch=1: 5,), ["= 5, not 1,048,576: your function returns 5 whatever n, heads, layers and batch are"]),
    ("1.6-other", "1.6", (lambda n, heads=1, layers=1, batch=1: 4 * n * n * heads * layers * batch + 1,), ["should be 4·n²·heads·layers·batch = 1,048,576; got 1,048,577"]),
    ("1.6-entries-no-batch", "1.6", (lambda n, heads=1, layers=1, batch=1: n * n * heads * layers,), ["number of entries", "batch was ignored"]),
    ("1.6-heads-squared", "1.6", (lambda n, heads=1, layers=1, batch=1: 4 * n * n * heads**2 * layers * batch,), ["heads appears to the power 2"]),
    ("1.6-no-defaults", "1.6", (lambda n, heads, layers, batch: 4 * n * n * heads * layers * batch,), ["default 1"]),
    ("1.7-b", "1.7", ("b",), ["(b) is not the best answer", "entry count is right"]),
    ("1.7-c", "1.7", ("c",), ["4 bytes"]),
    ("1.7-d", "1.7", ("d",), ["one head, one layer"]),
]  # fmt: skip


# The rejections above that do not name a mistake, and the kind of diagnosis they are.
NOT_NAMED = {
    "1.1-not-a-letter": "type",
    "1.2-fraction": "type",
    "1.2-list": "shape",
    "1.2-rnn-path-other": "difference",
    "1.2-attention-path-other": "difference",
    "1.3-crossover-root": "type",
    "1.3-crossover-other": "difference",
    "1.3-off-by-one": "difference",
    "1.3-crash": "exception",
    "1.4-one-number": "type",
    "1.4-none-second": "type",
    "1.4-tensor-pair": "type",
    "1.4-other": "difference",
    "1.5-other": "difference",
    "1.6-other": "difference",
}


@pytest.mark.parametrize(
    "case, exercise_id, answers, words", [pytest.param(*r, id=r[0]) for r in WRONG]
)
def test_typical_mistakes_are_named(case, exercise_id, answers, words):
    result = check(exercise_id, *answers)
    assert result.status == FAILED, result.message
    for word in words:
        assert word in result.message, result.message
    assert result.diagnosis == NOT_NAMED.get(case, "mistake"), result.message


def _rates(right):
    return right.float().mean().item(), right.all(dim=1).float().mean().item()


# 1.5: every miscount of the LSTM's parameters is named (a review found only "off by") --------


def one_gate(d, h):
    return h * d + h * h + 2 * h


LSTM_MISCOUNTS = [
    pytest.param(one_gate, ["= 49,408, not 197,632", "one gate", "four gates"], id="one-gate"),
    pytest.param(lambda d, h: h * (d + h) + h, ["one gate with one bias"], id="one-gate-one-bias"),
    pytest.param(lambda d, h: 4 * h * (d + h) + 4 * h, ["b_ih and b_hh"], id="one-bias"),
    pytest.param(lambda d, h: lstm_parameters(h, d), ["d_in and hidden are swapped"], id="swapped"),
    pytest.param(lambda d, h: 4 * d * (d + h) + 8 * d, ["d_in and hidden are swapped"], id="swapped-2"),
    pytest.param(lambda d, h: 2 * one_gate(d, h), ["counts 2 gates", "four"], id="two-gates"),
    pytest.param(lambda d, h: 4 * h * d + 4 * h * h + 8 * d, ["sized them by d_in"], id="bias-by-d_in"),
    pytest.param(lambda d, h: 4 * h * (d + h) + 2 * h, ["4·hidden·d_in + 4·hidden² + 2·hidden", "8·hidden"], id="biases-2h"),
    pytest.param(lambda d, h: 5 * h * d + 4 * h * h + 8 * h, ["5·hidden·d_in", "W_ih"], id="five-input-gates"),
    pytest.param(lambda d, h: lstm_parameters(d, h) + 1, ["adds 1"], id="plus-one"),
    pytest.param(lambda d, h: 4 * h * h + 8 * h, ["W_ih", "missing", "x_t"], id="no-input-weights"),
]  # fmt: skip


@pytest.mark.parametrize("answer, words", LSTM_MISCOUNTS)
def test_every_lstm_miscount_is_named(answer, words):
    result = check("1.5", answer)
    assert (result.status, result.diagnosis) == (FAILED, "mistake"), result.message
    for word in words:
        assert word in result.message, result.message


def test_the_lstm_formula_is_pytorchs_count():
    for d_in, hidden in [(256, 128), (64, 128), (3, 5), (1, 1), (13, 3)]:
        assert lstm_parameters(d_in, hidden) == lstm_parameters_by_pytorch(d_in, hidden)


def test_a_wrong_number_of_answers_says_what_to_write():
    result = check("1.2", 100, 99)
    assert result.status == FAILED
    assert 'check("1.2", rnn_steps, rnn_path, attention_steps, attention_path)' in result.message


def test_the_accuracy_check_does_not_let_the_learner_change_its_batch():
    """A function that edits its inputs in place sees fresh copies each time."""

    def overwrite(predicted, target):
        predicted[:] = target
        return 1.0, 1.0

    result = check("1.4", overwrite)
    assert result.status == FAILED
    assert "`token_accuracy` is off by up to 0.15: expected 0.8500, got 1.0000" in result.message


# 1.4: an off-by-one length is named as such, not as an .all() without dim ------------------------


def count_against_length(predicted, target):
    """A row counts when its right tokens number L, though only L - 1 positions are scored."""
    right = predicted[:, 1:] == target[:, 1:]
    length = target.shape[1]
    return right.float().mean().item(), (right.sum(dim=1) == length).float().mean().item()


def test_an_off_by_one_length_is_not_blamed_on_all_without_dim():
    result = check("1.4", count_against_length)
    assert (result.status, result.diagnosis) == (FAILED, "mistake"), result.message
    assert "L - 1 = 5 scored tokens" in result.message and "L = 6" in result.message
    assert ".all() without dim" not in result.message, result.message


# 1.2 and 1.3 may not hand in what the lesson's explorer computes: it is the reference --------

EXPLORER = "from course_lib.widgets.sequence_cost import layer_costs, path_lengths"


@pytest.mark.rules
def test_1_2_refuses_the_counts_of_path_lengths():
    counted = "rnn_steps, rnn_path, attention_steps, attention_path = path_lengths(100).values()"
    result = LESSON_1["1.2"].run(100, 99, 1, 1, sources=[EXPLORER, counted])
    assert (result.status, result.diagnosis) == (FAILED, "rule"), result.message
    assert "`path_lengths`" in result.message
    typed = "rnn_steps, rnn_path, attention_steps, attention_path = 100, 99, 1, 1"
    assert LESSON_1["1.2"].run(100, 99, 1, 1, sources=[EXPLORER, typed]).status == PASSED


def attention_cost_by_the_explorer(n, d):
    return layer_costs(n, d)[0]


def recurrent_cost_by_the_explorer(n, d):
    return sequence_cost.layer_costs(n, d)[1]


@pytest.mark.rules
@pytest.mark.parametrize(
    "answers, cell",
    [
        ((attention_cost_by_the_explorer, recurrent_cost, 1024), "crossover_n = 1024"),
        ((attention_cost, recurrent_cost_by_the_explorer, 1024), "crossover_n = 1024"),
        (
            (attention_cost, recurrent_cost, 1024),
            "crossover_n = next(n for n in range(1, 4096) if layer_costs(n, 1024)[0] >= "
            "layer_costs(n, 1024)[1])",
        ),
    ],
    ids=["attention_cost", "recurrent_cost", "crossover_n"],
)
def test_1_3_refuses_answers_built_on_layer_costs(answers, cell):
    result = LESSON_1["1.3"].run(*answers, sources=[EXPLORER, cell])
    assert (result.status, result.diagnosis) == (FAILED, "rule"), result.message
    assert "`layer_costs`" in result.message


@pytest.mark.rules
def test_1_3_passes_its_own_answers_beside_the_explorers_import():
    result = LESSON_1["1.3"].run(
        attention_cost, recurrent_cost, 1024, sources=[EXPLORER, "crossover_n = 1024"]
    )
    assert result.status == PASSED, result.message
