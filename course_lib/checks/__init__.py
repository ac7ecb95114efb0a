"""Exercise checks: ``check("3.2", apply_weights, apply_output)`` and ``hint("3.2")``.

``check`` never raises into the notebook: it returns a :class:`Result` with ``passed``
(a bool), ``status`` ("passed", "failed" or "not done") and a ``message`` naming the likely
mistake. It shows as a box with a symbol and a word, so the outcome never depends on colour.
``hint`` shows the next hint of an exercise each time it runs. ``require`` is the same check
for autograders (nbgrader, otter-grader): silent on a pass, an ``AssertionError`` otherwise.
``reveal("2.w1", my_answer)`` shows the model answer of a written question under the
learner's own (:mod:`course_lib.model_answers`).

Each exercise declares the notebook names that hold its answer (``Exercise.names``); the
instructor's grader reads the same names and runs the same checks.

The modules: ``_core`` (the result, the declarations, calling the learner's code),
``_tensors`` (the one comparison, :func:`~._tensors.diagnose`), ``_mistakes`` and ``_norms``
(the typical mistakes lessons share), ``_rules`` (what an answer may use), ``_purity`` (the
learner's state left as it was), ``_remote`` and ``_plain`` (the grader's sandbox), and a
``lessonNN`` module per lesson (lesson 7's second half in ``lesson07_training``). How to write
a check: docs/maintaining.md, "Writing a check".
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
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if module.startswith("lesson"):
            imported = importlib.import_module(f".{module}", __name__)
            for exercise in declared(imported.__name__):
                if exercise.id in found:
                    raise ValueError(f"exercise id {exercise.id!r} is defined twice ({module})")
                found[exercise.id] = exercise
    return found


EXERCISES: dict[str, Exercise] = _collect()

_hints_shown: dict[str, int] = {}
_graded: dict[str, tuple] = {}  # under a grader: id -> (answers as checked, answers, Result)


def exercises(lesson: int) -> list[Exercise]:
    """The exercises of one lesson, in order."""
    return [e for e in EXERCISES.values() if e.id.split(".")[0] == str(lesson)]


def _unknown(exercise_id) -> str:
    lesson = str(exercise_id).split(".")[0]
    if WRITTEN.fullmatch(str(exercise_id)):  # nothing to check: a model answer to see
        return (
            f"{exercise_id} is a written question: your answer is the text you write. "
            f'reveal("{exercise_id}", my_answer) shows the model answer under it.'
        )
    known = [e.id for e in EXERCISES.values() if e.id.split(".")[0] == lesson] or list(EXERCISES)
    return f"there is no exercise {exercise_id!r}; the exercises are {', '.join(known)}."


def check(exercise_id: str, *answers) -> Result:
    """Check the answer(s) to one exercise; see the module docstring."""
    exercise = EXERCISES.get(str(exercise_id))
    if exercise is None:
        return Result(str(exercise_id), FAILED, _unknown(exercise_id))
    return _checked(exercise, answers, reuse=True)


def _checked(exercise, answers, reuse: bool) -> Result:
    """The verdict. A grader's notebook checks an exercise twice (the grader's ``require``,
    the lesson's ``check``): a ``check`` of the same answers, unchanged since, gets the verdict
    they got; ``require``, which scores, always checks afresh."""
    if not graded():
        return exercise.run(*answers)
    seen = [_as_checked(a) for a in answers]
    kept = _graded.get(exercise.id)
    if not reuse or kept is None or kept[0] != seen:
        kept = _graded[exercise.id] = (seen, answers, exercise.run(*answers))
    return kept[2]


def _as_checked(answer):
    """What tells an answer apart from a later one: its value if a number or a string, else
    the object (kept alive with the verdict, so that its id stays its own) and, for a tensor
    or an array, its contents."""
    if isinstance(answer, int | float | complex | str | bytes | bool | type(None)):
        return repr(answer)
    if isinstance(answer, torch.Tensor):
        return id(answer), answer._version, answer.data_ptr()
    if isinstance(answer, np.ndarray):
        return id(answer), answer.tobytes()
    return id(answer)


class CheckFailed(AssertionError):
    """Raised by :func:`require`: its text is the check's verdict and message, as the notebook
    shows them; ``result`` is the whole :class:`Result` and ``diagnosis`` its kind."""

    def __init__(self, result: Result):
        super().__init__(str(result))
        self.result = result
        self.diagnosis = result.diagnosis


def require(exercise_id: str, *answers) -> None:
    """The raising form of :func:`check`, for autograders that score a cell by whether it
    raises (nbgrader's test cells, otter-grader's tests): silent when the answers pass,
    :class:`CheckFailed` (an ``AssertionError``) with the check's message otherwise.
    """
    exercise = EXERCISES.get(str(exercise_id))
    if exercise is None:
        result = Result(str(exercise_id), FAILED, _unknown(exercise_id))
    else:
        result = _checked(exercise, answers, reuse=False)
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
        return Result(str(exercise_id), FAILED, _unknown(exercise_id))
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
