"""Exercise checks: ``check("3.2", apply_weights, apply_output)`` and ``hint("3.2")``.

``check`` never raises into the notebook: its :class:`Result` shows a symbol and a word (never
colour alone) and a message naming the likely mistake. ``hint`` shows an exercise's next hint;
``require`` is the check for autograders (silent on a pass, an ``AssertionError`` otherwise);
``reveal("2.w1", my_answer)`` shows a written question's model answer.

Modules: ``_core`` (results, declarations, calls), ``_tensors`` (the comparison), ``_mistakes``
and ``_norms`` (shared mistakes), ``_rules`` (what an answer may use), ``_purity`` (state kept),
``_remote`` and ``_plain`` (the grader's sandbox), ``lessonNN``. See docs/maintaining.md.
"""

import html
import importlib
import pkgutil
from dataclasses import dataclass

import numpy as np
import torch

from ..model_answers import ID as WRITTEN
from ..model_answers import reveal  # the written questions' model answers, for the lessons
from ..replay import graded
from ._core import FAILED, MIME_TYPE, NOT_DONE, PASSED, Exercise, Result, declared


def _collect() -> dict[str, Exercise]:
    """Every ``lessonNN`` module's declared exercises, keyed by id; a repeated id is an error."""
    found: dict[str, Exercise] = {}
    lessons = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("lesson"))
    for module in lessons:
        for exercise in declared(importlib.import_module(f".{module}", __name__).__name__):
            if exercise.id in found:
                raise ValueError(f"exercise id {exercise.id!r} is defined twice ({module})")
            found[exercise.id] = exercise
    return found


EXERCISES: dict[str, Exercise] = _collect()

_hints_shown: dict[str, int] = {}
_graded: dict[str, tuple] = {}  # under a grader: id -> (answers as checked, answers, Result)


def exercises(lesson: int | str) -> list[Exercise]:
    """The exercises of one lesson, in order."""
    return [e for e in EXERCISES.values() if e.id.split(".")[0] == str(lesson)]


def _unknown(exercise_id) -> Result:
    known = [e.id for e in exercises(str(exercise_id).split(".")[0])] or list(EXERCISES)
    message = f"there is no exercise {exercise_id!r}; the exercises are {', '.join(known)}."
    if WRITTEN.fullmatch(str(exercise_id)):  # nothing to check: a model answer to see
        message = f"{exercise_id} is a written question: your answer is the text you write. "
        message += f'reveal("{exercise_id}", my_answer) shows the model answer under it.'
    return Result(str(exercise_id), FAILED, message)


def check(exercise_id: str, *answers) -> Result:
    """Check the answer(s) to one exercise; see the module docstring."""
    return _checked(exercise_id, answers, reuse=True)


def _checked(exercise_id, answers, reuse: bool) -> Result:
    """The verdict. A grader's notebook checks an exercise twice (``require``, then ``check``):
    ``check`` of answers unchanged since gets their verdict; ``require`` (scoring) checks afresh."""
    exercise = EXERCISES.get(str(exercise_id))
    if exercise is None:
        return _unknown(exercise_id)
    if not graded():
        return exercise.run(*answers)
    seen = [_as_checked(a) for a in answers]
    kept = _graded.get(exercise.id)
    if not reuse or kept is None or kept[0] != seen:
        kept = _graded[exercise.id] = (seen, answers, exercise.run(*answers))
    return kept[2]


def _as_checked(answer):
    """What tells an answer from a later one: a number's or a string's value; else the object
    (kept alive with the verdict, so its id stays its own) and a tensor's or array's contents."""
    if isinstance(answer, int | float | complex | str | bytes | bool | type(None)):
        return repr(answer)
    if isinstance(answer, torch.Tensor):
        return id(answer), answer._version, answer.data_ptr()
    if isinstance(answer, np.ndarray):
        return id(answer), answer.tobytes()
    return id(answer)


class CheckFailed(AssertionError):
    """Raised by :func:`require`: the verdict as its text, with its ``result`` and ``diagnosis``."""

    def __init__(self, result: Result):
        super().__init__(str(result))
        self.result = result
        self.diagnosis = result.diagnosis


def require(exercise_id: str, *answers) -> None:
    """:func:`check` for autograders that score a cell by whether it raises (nbgrader, otter):
    silent when the answers pass, :class:`CheckFailed` with the check's message otherwise."""
    result = _checked(exercise_id, answers, reuse=False)
    if not result.passed:
        raise CheckFailed(result)


@dataclass(frozen=True)
class Hint:
    exercise: str
    number: int
    total: int
    text: str

    def __str__(self) -> str:
        last = " (the last one)" if self.number == self.total else ""
        return f"Hint {self.number} of {self.total}{last} for exercise {self.exercise}: {self.text}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return f"<div>💡 {html.escape(str(self))}</div>"


def hint(exercise_id: str) -> Hint | Result:
    """The next hint for an exercise; after the last one, the last one again."""
    exercise = EXERCISES.get(str(exercise_id))
    if exercise is None:
        return _unknown(exercise_id)
    n = min(_hints_shown.get(exercise.id, 0) + 1, len(exercise.hints))
    _hints_shown[exercise.id] = n
    return Hint(exercise.id, n, len(exercise.hints), exercise.hints[n - 1])


__all__ = [
    "EXERCISES",
    "FAILED",
    "CheckFailed",
    "MIME_TYPE",
    "NOT_DONE",
    "PASSED",
    "Exercise",
    "Hint",
    "Result",
    "check",
    "exercises",
    "hint",
    "require",
    "reveal",
]
