"""Exercise checks: ``check("3.2", apply_weights, apply_output)`` and ``hint("3.2")``.

``check`` never raises into the notebook: it returns a :class:`Result` with ``passed``
(a bool), ``status`` ("passed", "failed" or "not done") and a ``message`` naming the likely
mistake. It shows as a box with a symbol and a word, so the outcome never depends on colour.
``hint`` shows the next hint of an exercise each time it runs.

Each exercise declares the notebook names that hold its answer (``Exercise.names``); the
instructor's grader reads the same names and runs the same checks.
"""

import html
import importlib
import pkgutil
from dataclasses import dataclass

from ._core import FAILED, MIME_TYPE, NOT_DONE, PASSED, Exercise, Result


def _collect() -> dict[str, Exercise]:
    """Every ``lessonNN`` module's ``EXERCISES``, keyed by id; a repeated id is an error."""
    found: dict[str, Exercise] = {}
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if module.startswith("lesson"):
            for exercise in importlib.import_module(f".{module}", __name__).EXERCISES:
                if exercise.id in found:
                    raise ValueError(f"exercise id {exercise.id!r} is defined twice ({module})")
                found[exercise.id] = exercise
    return found


EXERCISES: dict[str, Exercise] = _collect()

_hints_shown: dict[str, int] = {}


def exercises(lesson: int) -> list[Exercise]:
    """The exercises of one lesson, in order."""
    return [e for e in EXERCISES.values() if e.id.split(".")[0] == str(lesson)]


def _unknown(exercise_id) -> str:
    lesson = str(exercise_id).split(".")[0]
    known = [e.id for e in EXERCISES.values() if e.id.split(".")[0] == lesson] or list(EXERCISES)
    return f"there is no exercise {exercise_id!r}; the exercises are {', '.join(known)}."


def check(exercise_id: str, *answers) -> Result:
    """Check the answer(s) to one exercise; see the module docstring."""
    exercise = EXERCISES.get(str(exercise_id))
    if exercise is None:
        return Result(str(exercise_id), FAILED, _unknown(exercise_id))
    return exercise.run(*answers)


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
    "MIME_TYPE",
    "NOT_DONE",
    "PASSED",
    "Exercise",
    "Hint",
    "Result",
    "check",
    "exercises",
    "hint",
]
