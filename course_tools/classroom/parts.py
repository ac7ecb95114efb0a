"""A solution notebook cell by cell, as an autograding platform needs it.

Each lesson cell plays one part: an *answer* (a code cell with solution regions), the
*check* of an exercise (the one-line ``check("3.2", ...)`` cell that follows its answers), a
*written* answer (a markdown cell tagged ``free-text``) or *text* (everything else). Both
builds turn the parts into their platform's cells, so a change of lesson structure that
they cannot read stops them with a message rather than a wrong assignment.
"""

import ast
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import nbformat

from course_lib.checks import EXERCISES
from course_lib.lesson_format import STUB_COMMENT

from ..authoring import Chunk, clean_cell, regions
from ..grading.notebooks import FREE_TEXT

ANSWER, CHECK, WRITTEN, TEXT = "answer", "check", "written", "text"


@dataclass(frozen=True)
class Part:
    cell: nbformat.NotebookNode  # a clean copy: source, id and tags; no outputs
    chunks: list[Chunk]  # the cell's lines: solution regions with the lesson's stubs
    role: str  # ANSWER, CHECK, WRITTEN or TEXT
    exercise: str | None = None  # the exercise of an answer or a check
    key: str = ""  # a name for the cell, unique in its lesson: letters, digits, "-" and "_"


def parts(path: Path) -> list[Part]:
    """The parts of one solution notebook, in order; a ValueError if a part is ambiguous."""
    solution = nbformat.read(path, as_version=4)
    found, pending = [], []  # pending: answer cells waiting for their check
    for cell, chunks in regions(solution, path.name):
        clean, exercise = clean_cell(cell, cell.source), checked_exercise(cell)
        if exercise:
            found += [Part(p.cell, p.chunks, ANSWER, exercise) for p in pending]
            found.append(Part(clean, chunks, CHECK, exercise))
            pending = []
        elif cell.cell_type == "code" and any(c.solution for c in chunks):
            pending.append(Part(clean, chunks, ANSWER))
        elif pending:  # the check cell follows its answer cells directly
            raise ValueError(f"{path.name}: cell {pending[-1].cell.id} has no check cell after it")
        elif cell.cell_type == "markdown" and FREE_TEXT in cell.metadata.get("tags", []):
            found.append(Part(clean, chunks, WRITTEN))
        else:
            found.append(Part(clean, chunks, TEXT))
    if pending:
        raise ValueError(f"{path.name}: cell {pending[-1].cell.id} has no check cell after it")
    found = _named(found)
    checks = [p.exercise for p in found if p.role == CHECK]
    lesson = [e for e in EXERCISES if e.split(".")[0] == str(int(path.name[:2]))]
    if sorted(checks) != sorted(lesson):
        raise ValueError(f"{path.name}: one check cell per exercise of {lesson}; found {checks}")
    return found


def _named(found: list[Part]) -> list[Part]:
    """Each part with its key: ``ex3_2`` for a check, ``ex3_2-answer`` (``-answer2``, ...) for
    its answer cells, ``written1``, ``written2``, ... for written answers, else the cell id."""
    named, counts = [], Counter()
    for part in found:
        counts[part.role, part.exercise] += 1
        n = counts[part.role, part.exercise]
        exercise = f"ex{part.exercise.replace('.', '_')}" if part.exercise else ""
        key = {
            CHECK: exercise,
            ANSWER: f"{exercise}-answer{n if n > 1 else ''}",
            WRITTEN: f"written{n}",
        }.get(part.role, part.cell.id)
        named.append(replace(part, key=key))
    return named


def checked_exercise(cell) -> str | None:
    """The exercise id of a cell that is one ``check("N.k", ...)`` call, else None."""
    if cell.cell_type != "code":
        return None
    try:
        body = ast.parse(cell.source).body
    except SyntaxError:
        return None
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return None
    call = body[0].value
    named = isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    if not (named and call.func.id == "check" and call.args):
        return None
    first = call.args[0]
    return first.value if isinstance(first, ast.Constant) and first.value in EXERCISES else None


def require_call(check_source: str) -> str:
    """The raising form of a check cell's call: ``require("3.2", ...)`` for ``check(...)``."""
    call = ast.parse(check_source).body[0].value
    return "require" + ast.get_source_segment(check_source, call)[len("check") :]


def stub_names(chunk: Chunk) -> list[str]:
    """The lines of a top-level region's stub that keep names defined (``name = None``)."""
    return [line for line in chunk.stub if line != STUB_COMMENT]


def is_top_level(chunk: Chunk) -> bool:
    return chunk.solution and not chunk.lines[0][:1].isspace()


def notebook(cells, solution_path: Path) -> nbformat.NotebookNode:
    """A notebook of ``cells`` with the solution's kernel and no other metadata (no widget
    state: the solutions' executed widgets would otherwise reach the students)."""
    solution = nbformat.read(solution_path, as_version=4)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {
        "kernelspec": solution.metadata["kernelspec"],
        "language_info": {"name": "python"},
    }
    return nb
