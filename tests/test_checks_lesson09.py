"""Tests of the review notebook's checks (``course_lib/checks/lesson09.py``): the model answers
pass and the typical slips fail with the right diagnosis (the stubs: ``test_checks_stubs.py``)."""

from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from course_lib.checks import FAILED, PASSED, check, exercises
from course_lib.checks._core import DIFFERENCE, MISTAKE, SHAPE

SCORES = torch.tensor([8.0, 0.0, -8.0])
WEIGHTS = SCORES.softmax(dim=-1)
N = 100_000


RIGHT = [
    pytest.param("9.1", lambda: (64**0.5, WEIGHTS), id="9.1"),
    pytest.param("9.1", lambda: (8, [0.99966, 0.00034, 1e-7]), id="9.1-rounded-list"),
    pytest.param("9.1", lambda: (np.float32(8), WEIGHTS.numpy()), id="9.1-numpy"),
    pytest.param("9.1", lambda: (8.0, SCORES[None].softmax(dim=-1)), id="9.1-batch-first-row"),
    pytest.param("9.2", lambda: (512**2, N**2, N**2 * 4 / 1e9), id="9.2"),
    pytest.param("9.2", lambda: (262_144, 1e10, 40), id="9.2-rounded"),
    pytest.param("9.2", lambda: (torch.tensor(512) ** 2, 10**10, 40.0), id="9.2-tensor"),
]


@pytest.mark.parametrize("exercise_id, answers", RIGHT)
def test_right_answers_pass(exercise_id, answers):
    result = check(exercise_id, *answers())
    assert result.status == PASSED, result.message


def test_every_exercise_has_a_right_answer_above():
    assert {p.values[0] for p in RIGHT} == {e.id for e in exercises(9)}


def test_success_messages_carry_the_numbers():
    assert "262,144 entries" in check("9.2", 512**2, N**2, 40).message
    assert "[0.99966, 0.00034, 1.1e-07]" in check("9.1", 8, WEIGHTS).message


WRONG = [
    ("9.1-variance", "9.1", (64, WEIGHTS), ["is the variance", "√64 = 8"]),
    ("9.1-scale", "9.1", (1 / 8, WEIGHTS), ["1/√64, the scaling factor"]),
    ("9.1-half", "9.1", (32, WEIGHTS), ["half of 64"]),
    ("9.1-root-63", "9.1", (63**0.5, WEIGHTS), ["√63", "d_k = 64"]),
    ("9.1-scaled", "9.1", (8, (SCORES / 8).softmax(-1)), ["scaled scores [1, 0, -1]"]),
    ("9.1-scores", "9.1", (8, SCORES), ["the scores themselves"]),
    ("9.1-not-normalised", "9.1", (8, SCORES.exp()), ["not yet divided by their sum"]),
    ("9.1-reversed", "9.1", (8, (-SCORES).softmax(-1)), ["reverse order"]),
    ("9.1-log-softmax", "9.1", (8, SCORES.log_softmax(-1)), ["log_softmax"]),
    ("9.1-rounded-to-one-hot", "9.1", (8, [1, 0, 0]), ["rounded too far", "never exactly one-hot"]),
    ("9.1-rounded-to-zero", "9.1", (8, [0.9997, 0.0003, 0.0]), ["rounded too far"]),
    (
        "9.1-other-scores",  # within 1e-4 of the right weights, but the third is 54 times too large
        "9.1",
        (8, torch.tensor([8.0, 0.0, -4.0]).softmax(-1)),
        ["the softmax of the scores [8, 0, -4]", "[8, 0, -8]"],
    ),
    ("9.1-other-middle", "9.1", (8, torch.tensor([8.0, 1.0, -8.0]).softmax(-1)), ["[7, 0, -9]"]),
    ("9.1-smaller-scores", "9.1", (8, torch.tensor([5.0, 0.0, -5.0]).softmax(-1)), ["[5, 0, -5]"]),
    ("9.2-n", "9.2", (512, N**2, 40), ["one entry per token", "n × n"]),
    ("9.2-n-plus-n", "9.2", (1024, N**2, 40), ["n + n"]),
    ("9.2-d_model", "9.2", (512**3, N**2, 40), ["d_model sets the cost"]),
    (
        "9.2-heads",
        "9.2",
        (512**2, N**2 * 8, 40),
        ["`entries_100k` = 80,000,000,000", "counts all 8 heads"],
    ),
    ("9.2-heads-and-layers", "9.2", (512**2 * 48, N**2, 40), ["8 heads in each of 6 layers"]),
    ("9.2-causal", "9.2", (512 * 513 // 2, N**2, 40), ["causal triangle"]),
    ("9.2-pairs", "9.2", (512 * 511 // 2, N**2, 40), ["each pair of tokens once"]),
    ("9.2-half", "9.2", (512 * 512 // 2, N**2, 40), ["half of n²"]),
    ("9.2-bytes", "9.2", (4 * 512**2, N**2, 40), ["the memory in bytes"]),
    ("9.2-typo", "9.2", (513**2, N**2, 40), ["is 513²", "n = 512"]),
    ("9.2-power-swapped", "9.2", (2**512, N**2, 40), ["2 ** 512", "512 ** 2"]),
    ("9.2-bytes", "9.2", (512**2, N**2, 4e10), ["in bytes"]),
    ("9.2-GiB", "9.2", (512**2, N**2, 4e10 / 2**30), ["GiB", "10⁹ bytes"]),
    ("9.2-float64", "9.2", (512**2, N**2, 80), ["float64"]),
    ("9.2-one-byte", "9.2", (512**2, N**2, 10), ["4 bytes"]),
    ("9.2-three-bytes", "9.2", (512**2, N**2, 30), ["3 bytes per entry"]),
    ("9.2-divided", "9.2", (512**2, N**2, 2.5), ["divided by the 4 bytes"]),
    ("9.2-MB", "9.2", (512**2, N**2, 40_000), ["MB"]),
    ("9.2-all-heads", "9.2", (512**2, N**2, 320), ["all 8 heads", "or bits"]),
]


@pytest.mark.parametrize(
    "exercise_id, answers, words", [pytest.param(*w[1:], id=w[0]) for w in WRONG]
)
def test_typical_mistakes_are_named(exercise_id, answers, words):
    result = check(exercise_id, *answers)
    assert result.status == FAILED and result.diagnosis == MISTAKE, result.message
    for word in words:
        assert word in result.message, result.message


UNEXPLAINED = [
    ("9.1-std-off", "9.1", (6, WEIGHTS), ["`std_64` = 6"]),
    ("9.1-shape", "9.1", (8, WEIGHTS[:2]), ["shape (3,); got (2,)"]),
    ("9.1-other-weights", "9.1", (8, [0.5, 0.3, 0.2]), ["log(w / w₁)", "got -0.4055"]),
    (
        "9.2-other",
        "9.2",
        (512**2, 1e9, 40),
        ["`entries_100k` = 1,000,000,000", "expected 10,000,000,000"],
    ),
    ("9.2-off", "9.2", (512**2, N**2, 44), ["`gb_100k` = 44", "expected 40, got 44"]),
    ("9.2-upside-down", "9.2", (512**2, N**2, 1e9 / (N**2 * 4)), ["`gb_100k` = 0.025"]),
]


@pytest.mark.parametrize(
    "exercise_id, answers, words", [pytest.param(*w[1:], id=w[0]) for w in UNEXPLAINED]
)
def test_other_wrong_answers_say_how_they_differ(exercise_id, answers, words):
    result = check(exercise_id, *answers)
    assert result.status == FAILED and result.diagnosis in (DIFFERENCE, SHAPE), result.message
    for word in words:
        assert word in result.message, result.message


# Typed numbers, success messages and the questions ---------------------------------------------


@pytest.mark.parametrize(
    "answers, passes",
    [
        ((8.004, WEIGHTS, 512**2, N**2, 40), True),  # the course's rounding: 2 decimals or 3 s.f.
        ((8.01, WEIGHTS, 512**2, N**2, 40), False),
        ((8, WEIGHTS, 512**2, N**2, 40.04), True),
        ((8, WEIGHTS, 512**2, N**2, 40.3), False),
    ],
)
def test_typed_numbers_follow_the_courses_rounding(answers, passes):
    results = check("9.1", *answers[:2]), check("9.2", *answers[2:])
    assert all(r.passed for r in results) == passes, [r.message for r in results]


def test_a_size_far_below_one_byte_per_entry_is_not_read_as_0_bytes():
    """1e9 / (entries × 4) is 0.0025 bytes per entry: no whole number of bytes to name."""
    result = check("9.2", 512**2, N**2, 1e9 / (N**2 * 4))
    assert result.diagnosis == DIFFERENCE and "bytes per entry" not in result.message


def test_success_messages_give_the_numbers_not_the_written_answers():
    messages = check("9.1", 8, WEIGHTS).message + check("9.2", 512**2, N**2, 40).message
    for answer_word in ("one-hot", "no gradient", "quadratic", "limit"):
        assert answer_word not in messages


def test_the_review_asks_about_the_paper_and_numbers_its_written_questions_as_its_questions():
    root = Path(__file__).resolve().parent.parent
    source = (root / "solutions" / "09_review_questions.py").read_text(encoding="utf-8")
    assert "variational" not in source.lower() and "VAE" not in source
    assert "## Question 3 · Three kinds of attention" in source and "§3.2.3" in source
    cells = nbformat.read(root / "lessons" / "09_review_questions.ipynb", as_version=4).cells
    written = [c.source for c in cells if "free-text" in c.metadata.get("tags", [])]
    assert [s.split(" · ")[0] for s in written] == [f"**✍️ 9.w{n}" for n in range(1, 6)]
