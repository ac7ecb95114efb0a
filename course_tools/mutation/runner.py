"""Running one lesson's variants: the lesson's cells in order, a forked child per variant.

The lesson runs in an in-process IPython shell (:class:`Session`), cell by cell, skipping
the cells that only call ``check``/``hint`` (the harness checks for itself) and stopping at
the last answer cell it needs. At an answer cell the parent saves the session, runs the
model answer, keeps copies of its answers and runs its check once, recording the inputs
the check calls the answer's functions with. Then, for each variant, a child forked by the
grader's ``isolated`` (time limit, JSON over a pipe) puts the session back as it was before
the cell, runs the variant instead, runs the check on its answers, and compares them with the
model's (:mod:`.equivalence`). The parent, which already ran the real cell, goes on.

Running the model once in the parent rather than in every child is the same as running it
first in each child and then putting the names back: a fork copies the parent as it is.
"""

import sys
import time
import traceback
from functools import partial
from pathlib import Path

from course_tools.grading.checking import isolated
from course_tools.grading.execution import _only_checks

from . import lesson as lessons
from .equivalence import Recorder, equivalent, is_function, wrapped
from .mutants import Mutant, mutants, sample
from .outcomes import classify
from .session import Session

BASE_TIMEOUT = 4.0  # seconds per variant, on top of ...
TIMEOUT_FACTOR = 4  # ... this many times what the model answer's cell and check took
EQUIVALENCE_SHARE = 0.85  # of the time limit, after which equivalence is left unknown


def variants(answer: lessons.AnswerCell, size: int | None = None) -> list[Mutant]:
    """An answer cell's variants, or a fixed sample of ``size`` of them."""
    found = mutants(answer.exercise.id, answer.python)
    return found if size is None else sample(found, size)


def progress(line: str) -> None:
    """Where a lesson's process says how far it got (stderr: stdout is the report's)."""
    print(line, file=sys.stderr, flush=True)


def run_lesson(path: Path, wanted: list[str] | None, size: int | None, log=progress) -> dict:
    """Every variant of the lesson's wanted exercises (all code exercises if None), classified.

    Returns ``{"lesson", "variants": [...], "problems": [...], "seconds"}``, JSON-ready.
    """
    started = time.monotonic()
    lesson = lessons.read(path.resolve())
    answers = [a for a in lesson.answers if wanted is None or a.exercise.id in wanted]
    found = {"lesson": lesson.number, "variants": [], "problems": lesson.problems, "seconds": 0.0}
    if not answers:
        return found
    by_index = {a.index: a for a in answers}
    session = Session(lesson.path.parent)
    for index, cell in enumerate(lesson.cells[: max(by_index) + 1]):
        if cell.cell_type != "code" or _only_checks(cell):
            continue
        answer = by_index.get(index)
        if answer is None:
            error = session.run(cell.source)
            if error is not None:
                where = f"lesson {lesson.number}, cell {index + 1}"
                found["problems"].append(f"{where}: {_text(error)}")
            continue
        exercise_started = time.monotonic()
        results, problem = _exercise(session, answer, variants(answer, size))
        found["variants"] += results
        found["problems"] += [problem] if problem else []
        took = time.monotonic() - exercise_started
        log(f"  {answer.exercise.id}: {len(results)} variants, {took:.1f} s")
    found["seconds"] = round(time.monotonic() - started, 1)
    return found


def _exercise(session: Session, answer, chosen: list[Mutant]) -> tuple[list[dict], str | None]:
    """Run the model answer cell, then each variant in a child; (results, problem or None)."""
    before = session.snapshot()
    model, model_calls, timeout, problem = _model(session, answer)
    if model is None:
        return [], problem
    results = []
    for mutant in chosen:
        task = partial(_variant, session, before, mutant, answer, model, model_calls, timeout)
        results.append(_described(mutant, answer, classify(isolated(task, timeout))))
    return results, problem


def _model(session: Session, answer) -> tuple[list | None, list, float, str | None]:
    """The model answer run for real: (frozen answers or None, the calls its check made to
    each answer, the variants' time limit, a problem or None)."""
    exercise = answer.exercise
    started = time.monotonic()
    error = session.run(answer.source)
    if error is not None:
        return None, [], 0, f"exercise {exercise.id}: the model answer's cell raised {_text(error)}"
    model = session.frozen(exercise.names)
    recorders = [Recorder() for _ in exercise.names]
    result = exercise.run(*wrapped(model, recorders))
    if not result.passed:
        return None, [], 0, f"exercise {exercise.id}: the model answer fails: {result.message}"
    timeout = BASE_TIMEOUT + TIMEOUT_FACTOR * (time.monotonic() - started)
    calls = [r.calls for r in recorders]
    uncalled = [
        n for n, a, c in zip(exercise.names, model, calls, strict=True) if is_function(a) and not c
    ]
    # Without inputs a function answer cannot be compared: no variant of it counts as equivalent.
    problem = (
        f"exercise {exercise.id}: the check never calls {', '.join(uncalled)}" if uncalled else None
    )
    return model, calls, timeout, problem


def _variant(session, before, mutant: Mutant, answer, model, model_calls, timeout) -> dict:
    """In the child: the variant instead of the model answer, its check, and the comparison."""
    try:
        return _checked_variant(session, before, mutant, answer, model, model_calls, timeout)
    except Exception:  # a fault of the harness, not of the variant: show it whole
        return {"outcome": "error", "status": "failed", "message": traceback.format_exc()}


def _checked_variant(session, before, mutant, answer, model, model_calls, timeout) -> dict:
    started = time.monotonic()
    exercise = answer.exercise
    session.restore(before)
    error = session.run(mutant.source)
    if error is not None:
        return {"outcome": "broken", "status": "failed", "message": _text(error)}
    missing = [n for n in exercise.names if n not in session.names]
    if missing:
        message = f"`{missing[0]}` is not defined"
        return {"outcome": "broken", "status": "failed", "message": message}
    answers = [session.names[n] for n in exercise.names]
    recorders = [Recorder() for _ in exercise.names]
    result = exercise.run(*wrapped(answers, recorders))
    calls = [m + r.calls for m, r in zip(model_calls, recorders, strict=True)]
    deadline = started + EQUIVALENCE_SHARE * timeout
    return {
        "outcome": "checked",
        "status": result.status,
        "message": result.message,
        "diagnosis": result.diagnosis,
        "equivalent": equivalent(model, answers, calls, deadline),
    }


def _described(mutant: Mutant, answer, outcome: dict) -> dict:
    return {
        "exercise": mutant.exercise,
        "id": mutant.id,
        "operator": mutant.operator,
        "line": mutant.line,
        **outcome,
        "diff": mutant.diff(answer.python),
    }


def _text(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."
