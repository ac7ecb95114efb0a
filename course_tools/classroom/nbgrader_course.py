"""An nbgrader course directory built from ``solutions/``: ``make nbgrader``.

It writes ``nbgrader_config.py`` and ``source/lessonNN/NN_name.ipynb``, one assignment per
lesson, carrying nbgrader's cell metadata:

- a code cell with solution regions is an autograded answer. nbgrader replaces each region
  with one fixed stub, here a comment (``# YOUR CODE HERE``): a function keeps its docstring
  and the check calls it "not done"; a top-level region is preceded by the lesson's
  ``name = None`` lines, so later cells still find the names and Run All goes through;
- each exercise's check cell is an autograded test worth its points (``points.toml``). The
  student sees ``check(...)``, which never raises; when autograding, :class:`RequireChecks`
  (set in the configuration) turns it into ``require(...)``, which raises with the check's
  message unless the answer passes. No hidden tests: the released test cell is the source's,
  so nbgrader's checksums agree and it reports (and restores) a test cell a student edited;
- a written answer is a manually graded answer worth ``written`` points;
- every other markdown cell is read-only. Code cells stay editable, as in the lessons.

Outputs and widget state are left out, so the released notebooks are clean.
"""

import ast
import os
import re
import shutil
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from course_lib.checks import EXERCISES
from course_lib.lesson_format import ANSWER_PROMPT, STUB_COMMENT
from course_lib.replay import GRADING

from ..grading.execution import ONE_THREAD
from ..grading.grader import WRITTEN_POINTS
from .parts import (
    ANSWER,
    CHECK,
    TEXT,
    WRITTEN,
    Part,
    is_top_level,
    notebook,
    parts,
    require_call,
    stub_names,
)

COURSE_ID = "attention-course"  # the default; a hub may know the course by another name
CELL_TIMEOUT = 300  # seconds: lesson 7 trains for about 10 s here, longer on a busy hub

CONFIG = '''"""nbgrader's settings for this course, written afresh by `make nbgrader`."""

import os

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = "{course_id}"
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"

# One stub for every solution region: a comment. A function keeps its docstring (the checks
# call a function with no code "not done"), and a top-level answer keeps the `name = None`
# lines written before it, so Run All of a released lesson goes through.
c.ClearSolutions.code_stub = {{"python": "{code_stub}"}}
c.ClearSolutions.text_stub = "{text_stub}"

# A test cell deleted from a submission is put back before grading, so it still counts.
c.OverwriteCells.add_missing_cells = True

# Lesson 7 trains a model for about 10 s; nbgrader's default is 30 s for any cell.
c.Execute.timeout = {timeout}

# Before a submission runs, each test cell's check(...) becomes require(...), which raises
# unless the answer passes (a student's own Run All shows "not done yet", never an error).
from course_tools.classroom.nbgrader_course import RequireChecks
from nbgrader.converters import Autograde

nbgraders_own = Autograde.class_traits()["autograde_preprocessors"].default()
# `make autograde` sets ATTENTION_COURSE_SANDBOX=1: each student's kernel then runs in a
# sandbox that sees no solutions, gradebook or other student (docs/teaching.md).
if os.environ.get("ATTENTION_COURSE_SANDBOX") == "1":
    from course_tools.classroom.sandboxed_kernel import sandboxed

    nbgraders_own = sandboxed(nbgraders_own)
# The kernels know they run under a grader: the lessons' demonstrations replay their results.
from course_tools.classroom.nbgrader_course import graded

c.Autograde.autograde_preprocessors = [RequireChecks, *graded(nbgraders_own)]

# Released and submitted copies pass through an exchange folder inside the course directory,
# never nbgrader's default system-wide one (made world-writable by whoever runs first).
c.Exchange.root = os.path.join(c.CourseDirectory.root, "exchange")

# One thread per kernel, even when a notebook's first cell (which sets it) fails: the kernels
# inherit this environment.
os.environ.update({threads})
'''


def config(course_id: str = COURSE_ID) -> str:
    """The text of ``nbgrader_config.py``; ``course_id`` is the course's name on the hub."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", course_id):
        raise ValueError(f"course_id should be letters, digits, '_', '.' or '-'; got {course_id!r}")
    stubs = {"code_stub": STUB_COMMENT, "text_stub": ANSWER_PROMPT}
    threads = repr(ONE_THREAD)
    return CONFIG.format(course_id=course_id, timeout=CELL_TIMEOUT, threads=threads, **stubs)


class RequireChecks(Preprocessor):
    """When nbgrader autogrades: each test cell's ``check(...)`` becomes ``require(...)``,
    after nbgrader has put back the released source of any test cell a student edited."""

    enabled = Bool(True)  # nbconvert runs a preprocessor only when it is enabled

    def preprocess_cell(self, cell, resources, index):
        grading = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and grading.get("grade") and not grading.get("solution"):
            cell.source = f"from course_lib.checks import require\n\n{require_call(cell.source)}"
        return cell, resources


def graded(preprocessors: list) -> list:
    """nbgrader's preprocessors with its ``Execute`` (or the sandboxed one) starting each
    kernel with ``ATTENTION_COURSE_GRADING=1``: the lessons' demonstrations then replay their
    stored results (``course_lib.replay``). Only autograde's kernels get it, not those an
    instructor opens beside it."""
    from nbgrader.preprocessors import Execute

    def telling(execute: type) -> type:
        class GradedExecute(execute):
            async def async_start_new_kernel(self, **kwargs):
                kwargs["env"] = kwargs.get("env", os.environ) | {GRADING: "1"}
                return await super().async_start_new_kernel(**kwargs)

        return GradedExecute

    executes = [p for p in preprocessors if isinstance(p, type) and issubclass(p, Execute)]
    return [telling(p) if p in executes else p for p in preprocessors]


def assignment_name(solution: Path) -> str:
    return f"lesson{solution.name[:2]}"


def build(
    out: Path, solutions: list[Path], points: dict[str, float], course_id: str = COURSE_ID
) -> list[Path]:
    """Write the configuration and ``source/`` (replaced) into the course directory ``out``;
    returns the notebooks written. The gradebook and the students' folders stay as they are."""
    text = config(course_id)
    shutil.rmtree(out / "source", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "nbgrader_config.py").write_text(text, encoding="utf-8")
    written = []
    for solution in solutions:
        target = out / "source" / assignment_name(solution) / solution.name
        target.parent.mkdir(parents=True)
        nbformat.write(source_notebook(solution, points), target)
        written.append(target)
    return written


def source_notebook(solution: Path, points: dict[str, float]) -> nbformat.NotebookNode:
    """The nbgrader source notebook of one lesson."""
    cells = [_cell(part, points) for part in parts(solution)]
    for cell in cells:
        _check_release(cell, solution.name)
    return notebook(cells, solution)


def _cell(part: Part, points: dict[str, float]) -> nbformat.NotebookNode:
    cell = part.cell.copy()
    if part.role == ANSWER:
        cell.source = _answer_source(part)
        cell.metadata["nbgrader"] = _metadata(part.key, solution=True)
    elif part.role == CHECK:
        require_call(cell.source)  # fails now if the cell is not one check call
        worth = points.get(part.exercise, EXERCISES[part.exercise].points)
        cell.metadata["nbgrader"] = _metadata(part.key, grade=True, locked=True, points=worth)
    elif part.role == WRITTEN:
        worth = points.get(WRITTEN_POINTS, 1.0)
        cell.metadata["nbgrader"] = _metadata(part.key, solution=True, grade=True, points=worth)
    elif part.role == TEXT and cell.cell_type == "markdown":
        cell.metadata["nbgrader"] = _metadata(part.key, locked=True)
    return cell


def _answer_source(part: Part) -> str:
    """The answer cell with its regions, each top-level one after its ``name = None`` lines."""
    lines = []
    for chunk in part.chunks:
        if is_top_level(chunk):
            lines += stub_names(chunk)
        lines += chunk.lines
    return "\n".join(lines)


def _metadata(key, *, solution=False, grade=False, locked=False, points=None) -> dict:
    found = {"grade": grade, "grade_id": key, "locked": locked, "schema_version": 3}
    found |= {"solution": solution, "task": False}
    return found | ({"points": points} if grade else {})


def _check_release(cell, where: str) -> None:
    """Fail now, not in a student's notebook, if nbgrader's stub would not compile."""
    if cell.cell_type != "code" or "BEGIN SOLUTION" not in cell.source:
        return
    released, inside = [], False
    for line in cell.source.splitlines():
        if "BEGIN SOLUTION" in line:
            inside = True
            released.append(line[: len(line) - len(line.lstrip())] + STUB_COMMENT)
        elif "END SOLUTION" in line:
            inside = False
        elif not inside:
            released.append(line)
    try:
        ast.parse("\n".join(released))
    except SyntaxError as e:
        raise ValueError(
            f"{where}, cell {cell.id}: nbgrader leaves a solution region as a comment, and "
            f"line {e.lineno} is then not Python: a block must keep a statement outside its "
            "region (a function, its docstring)"
        ) from None
