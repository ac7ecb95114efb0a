"""Where each exercise's answer lives in a lesson source, and which cells a run needs.

An exercise's answer cell is the code cell that holds ``# BEGIN SOLUTION`` and binds every
one of the exercise's answer names (``Exercise.names``); the cell right after it calls
``check("id", ...)``. The lesson is read from its text source, ``solutions/NN_name.py``,
as the people who edit it see it.
"""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from course_lib.checks import EXERCISES, Exercise
from course_lib.checks._rules import binds
from course_tools import sources

from .mutants import BEGIN, python_source


@dataclass(frozen=True)
class AnswerCell:
    """One exercise's answer cell: its index among the notebook's cells and its text."""

    exercise: Exercise
    index: int
    source: str  # as written, which the lesson run executes
    python: str  # as plain Python, which the variants rewrite


@dataclass(frozen=True)
class Lesson:
    number: int
    path: Path
    cells: list  # the notebook's cells (nbformat)
    answers: list[AnswerCell]  # the code exercises', in the order of the lesson
    problems: list[str]  # exercises whose answer cell was not found


def lesson_number(path: Path) -> int:
    found = re.match(r"(\d+)_", path.name)
    if not found:
        raise ValueError(f"{path.name}: a lesson source is named NN_name.py")
    return int(found[1])


def code_exercises(number: int) -> list[Exercise]:
    """A lesson's exercises that take code (multiple choice has nothing to mutate)."""
    lesson = str(number)
    return [e for e in EXERCISES.values() if e.id.split(".")[0] == lesson and e.kind != "choice"]


def read(path: Path) -> Lesson:
    """A lesson source with the answer cell of each of its code exercises."""
    number = lesson_number(path)
    cells = sources.read(path).cells
    answers, problems = [], []
    for exercise in code_exercises(number):
        try:
            answers.append(answer_cell(cells, exercise))
        except ValueError as e:
            problems.append(str(e))
    return Lesson(number, path, cells, sorted(answers, key=lambda a: a.index), problems)


def answer_cell(cells: list, exercise: Exercise) -> AnswerCell:
    """The cell that answers ``exercise``; a ValueError says why none does."""
    wanted = set(exercise.names)
    for index, cell in enumerate(cells):
        if cell.cell_type != "code" or BEGIN not in cell.source:
            continue
        python = python_source(cell.source)
        if wanted <= bound_names(python) and _checked_next(cells, index, exercise.id):
            return AnswerCell(exercise, index, cell.source, python)
    raise ValueError(
        f"exercise {exercise.id}: no code cell with {BEGIN!r} binds {', '.join(exercise.names)} "
        f'and is followed by check("{exercise.id}", ...)'
    )


def _checked_next(cells: list, index: int, exercise_id: str) -> bool:
    following = cells[index + 1] if index + 1 < len(cells) else None
    return (
        following is not None
        and following.cell_type == "code"
        and re.search(rf"""\bcheck\(\s*["']{re.escape(exercise_id)}["']""", following.source)
        is not None
    )


def bound_names(python: str) -> set[str]:
    """The names a cell binds at its top level, read as the checks' rules read them."""
    return binds(ast.parse(python))
