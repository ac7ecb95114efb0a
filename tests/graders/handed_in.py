"""What the nbgrader and otter-grader tests share: the course, its points, and submissions.

A submission is made from the notebook a platform hands out (nbgrader's release, otter's
student notebook) by replacing the source of answer cells, found by cell id, with the
solution's cell (its ``SOLUTION`` marker lines left out). Three students per lesson:

- ``solved``: every exercise and written answer as in ``solutions/``;
- ``untouched``: the notebook as handed out;
- ``halfdone``: every other exercise of the lesson (the 1st, 3rd, ...) solved, and its
  multiple choice answered with a wrong letter; written answers untouched.

The course's own grader (``python -m course_tools.grade``) is the reference for scores.
"""

import csv
import os
import re
import string
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import nbformat

from course_lib.checks import FAILED, check, exercises
from course_tools.grading.grader import load_points

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # .venv-graders/bin: nbgrader runs alembic, otter jupyter
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
POINTS = load_points(ROOT / "points.toml")
STUDENTS = ("solved", "untouched", "halfdone")
CHECK_CALL = re.compile(r'check\(\s*"(\d+\.\d+)"')
ANSWER_PROMPT = "*Your answer here (double-click this cell to edit it).*"


def run(command: list, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run a command with .venv-graders/bin first on PATH; its output captured as text."""
    command = [str(part) for part in command]
    return subprocess.run(
        command, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout
    )


def succeeded(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    """``done``, or an AssertionError showing the end of what the command printed."""
    assert done.returncode == 0, (
        f"{' '.join(done.args)} exited with {done.returncode}:\n"
        f"{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    )
    return done


def solution_path(lesson: int) -> Path:
    (path,) = (ROOT / "solutions").glob(f"{lesson:02d}_*.ipynb")
    return path


def lesson_path(lesson: int) -> Path:
    (path,) = (ROOT / "lessons").glob(f"{lesson:02d}_*.ipynb")
    return path


def exercise_ids(lesson: int) -> list[str]:
    return [e.id for e in exercises(lesson)]


def lesson_points(lesson: int) -> float:
    """The most a lesson's autograded exercises are worth (written answers left out)."""
    return sum(POINTS[e] for e in exercise_ids(lesson))


def without_markers(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if "SOLUTION" not in line)


@dataclass(frozen=True)
class Solution:
    """One lesson's solution cells by id: answers (with their exercise) and written answers."""

    answers: dict[str, str]  # cell id -> exercise id
    written: list[str]  # cell ids of the written answers (markdown tagged free-text)
    sources: dict[str, str]  # cell id -> the solution's source, marker lines left out
    regions: list[tuple[str, str]]  # (cell type, body) of every solution region


@cache
def solution(lesson: int) -> Solution:
    nb = nbformat.read(solution_path(lesson), as_version=4)
    answers, written, sources, regions, pending = {}, [], {}, [], []
    for cell in nb.cells:
        called = CHECK_CALL.match(cell.source.strip())
        if cell.cell_type == "code" and called:  # the check cell closes its exercise's answers
            answers |= dict.fromkeys(pending, called[1])
            pending = []
        if "BEGIN SOLUTION" not in cell.source:
            continue
        sources[cell.id] = without_markers(cell.source)
        if cell.cell_type == "code":
            pending.append(cell.id)
        else:
            written.append(cell.id)
        inside = re.findall(r"BEGIN SOLUTION[^\n]*\n(.*?)\n[^\n]*END SOLUTION", cell.source, re.S)
        regions += [(cell.cell_type, body) for body in inside]
    assert not pending, f"lesson {lesson}: answer cells {pending} have no check cell after them"
    return Solution(answers, written, sources, regions)


def secret_lines(lesson: int) -> list[str]:
    """The lines of the solution regions that must not reach a student: every line of at
    least 12 characters, its trailing comment left out, that is not a comment itself and
    does not appear in the solution outside its regions (a line the lesson shows anyway)."""
    nb = nbformat.read(solution_path(lesson), as_version=4)
    outside = "\n".join(
        re.sub(r"BEGIN SOLUTION.*?END SOLUTION", "", c.source, flags=re.S) for c in nb.cells
    )
    found = []
    for cell_type, body in solution(lesson).regions:
        for line in body.splitlines():
            code = line.split("  # ")[0].strip() if cell_type == "code" else line.strip()
            if len(code) >= 12 and not code.startswith("#") and code not in outside:
                found.append(code)
    return found


def leaks(nb: nbformat.NotebookNode, lesson: int) -> list[str]:
    """The solution lines, and markers, that a handed-out notebook shows."""
    text = "\n".join(cell.source for cell in nb.cells)
    shown = [line for line in secret_lines(lesson) if line in text]
    markers = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "require(")
    return shown + [marker for marker in markers if marker in text]


def choice_exercise(lesson: int) -> tuple[str | None, str | None]:
    """The lesson's multiple choice and a wrong letter for it: one of its options, whose
    check fails naming the mistake (not one refused as "not an option"); None, None for a
    lesson without one."""
    choice = next((e for e in exercises(lesson) if e.kind == "choice"), None)  # the first
    if choice is None:
        return None, None
    for letter in string.ascii_lowercase:
        result = check(choice.id, letter)
        if result.status == FAILED and result.diagnosis == "mistake":
            return choice.id, letter
    raise AssertionError(f"exercise {choice.id} has no wrong option")


def filled(lesson: int) -> list[str]:
    """The exercises the half-done student solved: every other one, from the first."""
    return exercise_ids(lesson)[::2]


def submission(handed_out: nbformat.NotebookNode, lesson: int, student: str):
    """A copy of the handed-out notebook as ``student`` (one of STUDENTS) hands it in."""
    nb = nbformat.from_dict(handed_out)
    found = solution(lesson)
    choice, wrong = choice_exercise(lesson)
    ids = {cell.id for cell in nb.cells}
    missing = (set(found.answers) | set(found.written)) - ids
    assert not missing, f"lesson {lesson}: answer cells {sorted(missing)} are not handed out"
    for cell in nb.cells:
        exercise = found.answers.get(cell.id)
        if student == "solved" and cell.id in found.sources:
            cell.source = found.sources[cell.id]
        elif student == "halfdone" and choice and exercise == choice:
            (name,) = next(e.names for e in exercises(lesson) if e.id == choice)
            cell.source = f'{name} = "{wrong}"'
        elif student == "halfdone" and exercise in filled(lesson):
            cell.source = found.sources[cell.id]
    return nb


def course_grades(notebook: Path, lesson: int, out: Path) -> dict[str, float]:
    """The course's own grader on one notebook: points per exercise id, and "total"."""
    command = [sys.executable, "-m", "course_tools.grade", notebook]
    command += ["--out", out / "grades.csv", "--lesson", lesson, "--timeout", 300]
    succeeded(run(command, cwd=ROOT, timeout=900))  # it reads solutions/, lessons/, points.toml
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    return {key: float(row[key]) for key in [*exercise_ids(lesson), "total"]}
