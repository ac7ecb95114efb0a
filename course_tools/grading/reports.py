"""What grading produces: a CSV row per student, a summary, and a feedback file each.

Outcomes are written with a symbol and a word (✓ Passed, ✗ Not yet, … Not done yet, ? Not
graded), never colour alone. "Not graded" is the grader's own: a multiple choice answered in a
version of the lesson whose letters it cannot read (see ``grader``).
"""

import csv
import os
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.checks import FAILED, NOT_DONE, PASSED

from .notebooks import FreeText

NOT_GRADED = "not graded"
LOOK = {
    PASSED: "✓ Passed",
    FAILED: "✗ Not yet",
    NOT_DONE: "… Not done yet",
    NOT_GRADED: "? Not graded",
}
OK, PROBLEMS, INVALID = "ok", "problems", "invalid"  # a submission's status


@dataclass
class ExerciseGrade:
    id: str
    title: str
    status: str
    message: str
    points: float
    max_points: float
    uses_reference: list[str] = field(default_factory=list)


@dataclass
class SubmissionGrade:
    student: str
    path: str
    lesson: int | None
    exercises: list[ExerciseGrade] = field(default_factory=list)
    free_text: list[FreeText] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    invalid: str = ""  # why the file could not be graded at all

    @property
    def total(self) -> float:
        return sum(e.points for e in self.exercises)

    @property
    def max_points(self) -> float:
        return sum(e.max_points for e in self.exercises)

    @property
    def status(self) -> str:
        return INVALID if self.invalid else PROBLEMS if self.problems else OK

    @property
    def flagged(self) -> list[ExerciseGrade]:
        return [e for e in self.exercises if e.uses_reference]


def _number(x: float) -> str:
    return f"{x:g}"


def write_csv(grades: list[SubmissionGrade], path: Path, exercise_ids: list[str]) -> None:
    """One row per student: points per exercise, total, maximum, status and notes.

    Written beside ``path`` and then renamed over it, so that the file is never half written."""
    partial = path.with_name(f".{path.name}.partial")
    with open(partial, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "lesson", *exercise_ids, "total", "max", "status", "notes"])
        for g in grades:
            points = {e.id: _number(e.points) for e in g.exercises if e.status != NOT_GRADED}
            notes = [g.invalid] if g.invalid else list(g.problems)
            notes += [f"{e.id} uses {', '.join(e.uses_reference)}" for e in g.flagged]
            writer.writerow(
                [g.student, g.lesson or "", *(points.get(i, "") for i in exercise_ids)]
                + [_number(g.total), _number(g.max_points), g.status, " | ".join(notes)]
            )
    os.replace(partial, path)


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" for line in text.splitlines())


def feedback(g: SubmissionGrade) -> str:
    """A student's feedback in Markdown."""
    lines = [f"# Feedback: {g.student}", ""]
    if g.invalid:
        lines += [f"**This notebook could not be graded:** {g.invalid}.", ""]
        lines += ["Open it in JupyterLab to check that it loads, or ask your instructor.", ""]
        return "\n".join(lines)
    lines += [f"Lesson {g.lesson}: **{_number(g.total)} of {_number(g.max_points)} points**.", ""]
    if g.problems:
        lines += ["## Problems with your notebook", ""]
        lines += [f"- {p}" for p in g.problems] + [""]
    lines += ["## Exercises", ""]
    for e in g.exercises:
        points = f"{_number(e.points)}/{_number(e.max_points)}"
        lines.append(f"- {LOOK[e.status]}: **{e.id} {e.title}** ({points}). {e.message}")
        if e.uses_reference:
            used = ", ".join(f"`{u}`" for u in e.uses_reference)
            lines.append(
                f"  - ⚑ Flagged: this answer uses the course's reference code ({used}); it "
                "scores 0 unless your instructor, having read it, decides otherwise."
            )
    if g.free_text:
        lines += ["", "## Written answers (graded by your instructor)", ""]
        for t in g.free_text:
            lines += [t.question, "", _quote(t.answer) if t.answer else "*(no answer)*", ""]
    return "\n".join(lines).rstrip() + "\n"


def summary(grades: list[SubmissionGrade], exercise_ids: list[str]) -> str:
    """Pass counts per exercise, students with problems or flags, written answers to grade."""
    lines = ["# Grading summary", "", f"{len(grades)} submission(s).", ""]
    lines += [
        "| exercise | ✓ passed | ✗ not yet | … not done | ? not graded | ⚑ flagged |",
        "|---|---|---|---|---|---|",
    ]
    for i in exercise_ids:
        found = [e for g in grades for e in g.exercises if e.id == i]
        counts = [sum(e.status == s for e in found) for s in (PASSED, FAILED, NOT_DONE, NOT_GRADED)]
        flagged = sum(bool(e.uses_reference) for e in found)
        lines.append(f"| {i} | " + " | ".join(map(str, [*counts, flagged])) + " |")
    lines += ["", "| student | points | status |", "|---|---|---|"]
    lines += [
        f"| {g.student} | {_number(g.total)}/{_number(g.max_points)} | {g.status} |" for g in grades
    ]
    attention = [g for g in grades if g.status != OK or g.flagged]
    if attention:
        lines += ["", "## Needs a look", ""]
        for g in attention:
            notes = [g.invalid] if g.invalid else _in_brief(g.problems)
            notes += [f"⚑ {e.id} uses {', '.join(e.uses_reference)}" for e in g.flagged]
            lines += [f"- **{g.student}** (lesson {g.lesson or '?'}, `{g.path}`):"]
            lines += [f"  - {note}" for note in notes]
    texts = [(g.student, t) for g in grades for t in g.free_text]
    if texts:
        lines += ["", "## Written answers to grade by hand", ""]
        for question in dict.fromkeys(t.question for _, t in texts):
            lines += [question, ""]
            for student, t in texts:
                if t.question == question:
                    lines += [
                        f"- {student}:",
                        "",
                        _indent(_quote(t.answer) if t.answer else "*(no answer)*"),
                        "",
                    ]
    return "\n".join(lines).rstrip() + "\n"


def _in_brief(problems: list[str], most: int = 3) -> list[str]:
    """A submission's problems for the summary: past ``most`` cell errors, their count and the
    first one (usually the cause of the rest: a failed import leaves every later name undefined).
    The student's feedback keeps them all."""
    errors = [p for p in problems if p.startswith("cell ") and " raised " in p]
    if len(errors) <= most:
        return list(problems)
    first = f"{len(errors)} cells raised errors; the first: {errors[0]}"
    return [first] + [p for p in problems if p not in errors]


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def file_name(student: str, lesson: int | None = None) -> str:
    """A safe file name for a student's feedback on one lesson: ``alice-03.md``."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in student)
    return f"{safe}-{lesson:02d}.md" if lesson else f"{safe}.md"
