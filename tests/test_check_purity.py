"""A check leaves the learner's session as it found it (``course_lib/checks/_purity.py``).

Every check call in the ``test_check*`` modules is audited (``tests/conftest.py``,
``tests/check_audit.py``), so the lesson modules' model answers, stubs and typical mistakes
are audited where they run. This module makes sure every exercise is among them, with a
model answer and with its stub, and that the audit and the guard work on purpose-built
impure checks.
"""

import importlib
import inspect
import random

import numpy as np
import pytest
import torch
from check_audit import audited, changes, fingerprint
from torch import nn

from course_lib.checks import EXERCISES, FAILED, NOT_DONE, PASSED, Exercise, check
from course_lib.checks._core import Mismatch
from course_lib.checks._purity import untouched

# Every exercise, with a model answer and its stub ---------------------------------------------

LESSONS = sorted({int(e.id.split(".")[0]) for e in EXERCISES.values()})


def _model_answers() -> dict:
    """The first model answer of each exercise, from the ``RIGHT`` table of its lesson's tests.

    Tables are lists of ``pytest.param(id, answers)`` or dicts ``id -> answers``.
    """
    found = {}
    for lesson in LESSONS:
        right = importlib.import_module(f"test_checks_lesson{lesson:02d}").RIGHT
        rows = right.items() if isinstance(right, dict) else (p.values[:2] for p in right)
        for exercise_id, answers in rows:
            found.setdefault(exercise_id, answers)
    return found


MODEL = _model_answers()


def _as_answers(entry) -> tuple:
    """The tuple ``check`` takes: tables hold it, a function without arguments that builds it
    when the test runs, or (lesson 8) the one answer itself."""
    if isinstance(entry, tuple):
        return entry
    return tuple(entry()) if inspect.isfunction(entry) and _needs_no_arguments(entry) else (entry,)


def _needs_no_arguments(fn) -> bool:
    try:
        inspect.signature(fn).bind()
    except TypeError:
        return False
    return True


def _stub(*args, **kwargs):
    raise NotImplementedError()


def _stubs(answers) -> tuple:
    """The lesson's starting point: each function answer a stub, every other answer None."""
    return tuple(_stub if inspect.isfunction(a) else None for a in answers)


def test_the_model_answers_cover_every_exercise():
    assert set(MODEL) == set(EXERCISES)


def test_every_check_call_in_this_module_is_audited():
    assert Exercise.run.__wrapped__.__module__ == "course_lib.checks._core"


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_a_model_answer_and_the_stub_leave_the_session_alone(exercise_id):
    answers = _as_answers(MODEL[exercise_id])
    result = check(exercise_id, *answers)
    assert result.status == PASSED, result.message
    result = check(exercise_id, *_stubs(answers))
    assert result.status == NOT_DONE, result.message


# The audit sees an impure check, and the guard undoes what it did ------------------------------

NAMES = ("x", "layer", "table")


def _answers():
    """A leaf tensor, a module in eval mode, and a dict holding an array and a tensor."""
    x = torch.ones(3, requires_grad=True)
    layer = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1)).eval()
    return x, layer, {"array": np.zeros(3), "tensor": torch.zeros(2)}


def _in_place(x, layer, table):
    with torch.no_grad():
        x.mul_(2)


def _swap_weight(x, layer, table):
    layer[0].weight = nn.Parameter(torch.zeros(2, 2))


IMPURE = {  # what a check might do -> how the audit names it
    "reseeds torch": (lambda *a: torch.manual_seed(1), "torch's global RNG"),
    "draws from torch": (lambda *a: torch.rand(1), "torch's global RNG"),
    "seeds numpy": (lambda *a: np.random.seed(1), "numpy's global RNG"),
    "seeds random": (lambda *a: random.seed(1), "Python's random RNG"),
    "float64 default": (lambda *a: torch.set_default_dtype(torch.float64), "the default dtype"),
    "more threads": (lambda *a: torch.set_num_threads(torch.get_num_threads() + 1), "the thread count"),
    "writes into x": (_in_place, "`x`: values"),
    "backward into x": (lambda x, *a: (2 * x).sum().backward(), "`x`: .grad"),
    "detaches x": (lambda x, *a: x.requires_grad_(False), "`x`: requires_grad"),
    "train mode": (lambda x, layer, t: layer.train(), "`layer`.1: training"),
    "float64 module": (lambda x, layer, t: layer.double(), "`layer`.0.weight: values"),
    "backward into module": (lambda x, layer, t: layer(torch.ones(1, 2)).sum().backward(), "`layer`.0.bias: .grad"),
    "swapped parameter": (_swap_weight, "`layer`.0.weight: which parameter object"),
    "array in a dict": (lambda x, layer, t: t["array"].fill(5), "`table`['array']: values"),
    "tensor in a dict": (lambda x, layer, t: t["tensor"].add_(1), "`table`['tensor']: values"),
    "grad off": (lambda *a: torch.set_grad_enabled(False), "grad mode"),  # last: the backward calls above need it on
}  # fmt: skip


@pytest.mark.parametrize("impurity, named", IMPURE.values(), ids=list(IMPURE))
def test_the_audit_names_what_a_check_changed(impurity, named):
    answers = _answers()
    before = fingerprint(answers, NAMES)
    with untouched(()):  # only to clean up the global state after the test
        impurity(*answers)
        changed = changes(before, fingerprint(answers, NAMES))
    assert named in changed


def test_the_audit_fails_the_test_of_a_check_that_changed_something():
    def verify(x, layer, table):
        torch.manual_seed(1)
        layer.train()
        return "done"

    exercise = Exercise("0.1", "impure", NAMES, verify, ("hint",))
    unguarded = audited(lambda exercise, *answers: exercise.verify(*answers))
    with untouched(()), pytest.raises(pytest.fail.Exception) as failure:
        unguarded(exercise, *_answers())
    assert "check '0.1'" in str(failure.value)
    assert "torch's global RNG" in str(failure.value)
    assert "`layer`: training" in str(failure.value)


def _ending(outcome):
    """A verify that does every impure thing above, then passes, fails or crashes."""

    def verify(*answers):
        for impurity, _ in IMPURE.values():
            impurity(*answers)
        if outcome == FAILED:
            raise Mismatch("wrong")
        if outcome == "crash":
            raise ValueError("the learner's code failed")
        return "right"

    return verify


@pytest.mark.parametrize("outcome, status", [(PASSED, PASSED), (FAILED, FAILED), ("crash", FAILED)])
def test_exercise_run_undoes_everything_an_impure_check_did(outcome, status):
    answers = _answers()
    before = fingerprint(answers, NAMES)
    result = Exercise("0.1", "impure", NAMES, _ending(outcome), ("hint",)).run(*answers)
    assert result.status == status, result.message
    assert changes(before, fingerprint(answers, NAMES)) == []


def test_the_guard_leaves_an_unchanged_tensor_unwritten():
    """Writing back an unchanged tensor would bump its version and break the learner's
    pending backward(); the guard writes only what changed."""
    x = torch.tensor([1.0, float("nan")], requires_grad=True)
    y = (x * x).sum()  # saves x for backward
    check_result = Exercise("0.1", "pure", ("x",), lambda x: "fine", ("hint",)).run(x)
    assert check_result.passed
    y.backward()  # would raise if x had been written to
    assert x._version == 0
