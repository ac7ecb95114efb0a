"""Before releasing a lesson: its checks pass the solutions and pass nothing in the lesson.

Both notebooks go through the grader exactly as a student's would. A solution must run
without errors, pass every exercise without being flagged and contain its model written
answers; the untouched lesson must run without errors, pass no exercise and hold no
written answer.
"""

from pathlib import Path

from course_lib.checks import EXERCISES, PASSED
from course_lib.lesson_format import ANSWER_PROMPT

from . import notebooks
from .grader import grade_many
from .reports import SubmissionGrade


def _solution_problems(g: SubmissionGrade) -> list[str]:
    problems = [g.invalid] if g.invalid else list(g.problems)
    problems += [f"{e.id} is {e.status!r}: {e.message}" for e in g.exercises if e.status != PASSED]
    problems += [f"{e.id} is flagged for {', '.join(e.uses_reference)}" for e in g.flagged]
    problems += [f"no model answer for {t.question!r}" for t in g.free_text if t.answer is None]
    return problems


def _lesson_problems(g: SubmissionGrade) -> list[str]:
    problems = [g.invalid] if g.invalid else list(g.problems)
    problems += [
        f"{e.id} passes the untouched stub: {e.message}" for e in g.exercises if e.status == PASSED
    ]
    if not g.invalid:  # a lesson's written-answer cells hold the prompt, not an answer
        cells = notebooks.read(Path(g.path)).cells
        tagged = [c for c in cells if notebooks.FREE_TEXT in c.metadata.get("tags", [])]
        problems += [
            f"written-answer cell {c.source.splitlines()[0][:60]!r} "
            "does not end with the answer prompt"
            for c in tagged
            if not c.source.rstrip().endswith(ANSWER_PROMPT)
        ]
    return problems


def lessons_with_checks(solutions: Path) -> list[int]:
    """Lessons that have both a solution notebook and registered exercises."""
    known = {int(e.split(".")[0]) for e in EXERCISES}
    return [n for n in known if notebooks.lesson_notebook(solutions, n)]


def validate(
    lessons: list[int],
    solutions: Path,
    lesson_dir: Path,
    timeout: int,
    jobs: int = 1,
    sandboxed: bool = True,
):
    """Grade each lesson's solution and lesson notebooks; returns (report lines, ok)."""
    items, expected, lines = [], [], []
    for n in sorted(lessons):
        for folder, judge in ((solutions, _solution_problems), (lesson_dir, _lesson_problems)):
            path = notebooks.lesson_notebook(folder, n)
            if path is None:
                lines.append(f"✗ lesson {n}: no notebook {n:02d}_*.ipynb in {folder}")
            else:
                items.append((path, f"{folder.name}/{path.stem}"))
                expected.append((n, judge))
    options = {"timeout": timeout, "points": {}, "solutions": solutions, "lessons": lesson_dir}
    options["sandboxed"] = sandboxed
    grades = grade_many(items, jobs, **options)
    for (_, judge), g in zip(expected, grades, strict=True):
        problems = judge(g)
        counts = ", ".join(
            f"{sum(e.status == s for e in g.exercises)} {s}"
            for s in ("passed", "failed", "not done")
        )
        mark = "✗" if problems else "✓"
        lines.append(f"{mark} {g.path}: {counts}" + ("" if problems else " (as expected)"))
        lines += [f"    - {p}" for p in problems]
    ok = not any(line.startswith("✗") for line in lines)
    return lines, ok
