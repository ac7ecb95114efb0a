"""nbgrader on the course: the course directory ``make nbgrader`` writes, released and graded.

Built from solutions/ into a temporary folder, with nbgrader 0.9 itself, it proves that:

- ``nbgrader generate_assignment`` releases each of the nine lessons, and the released
  notebooks are clean: no outputs, no widget state, no solution, no hidden test, and the
  written answers show the answer prompt, not the model answer;
- every released notebook runs top to bottom, and each of its checks says "not done";
- for lessons 3, 5 and 8, ``nbgrader autograde`` gives a solved submission every point of
  points.toml, an untouched one 0, and a half-done one (handed_in.py, with one of its solved
  exercises' test cell deleted) what the course's own grader gives that same file, exercise
  by exercise; written answers wait for a human;
- ``nbgrader generate_feedback`` shows the student the checks' messages.

Each expensive step runs once per module: about 4 minutes on two cores. Run:

    PATH=.venv-graders/bin:$PATH .venv-graders/bin/python -m pytest \\
        tests/graders/test_nbgrader.py -p no:cacheprovider -q
"""

import html
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader", reason="nbgrader is not installed (.venv-graders)")
from handed_in import (  # noqa: E402
    ANSWER_PROMPT,
    ENV,
    ROOT,
    STUDENTS,
    choice_exercise,
    course_grades,
    exercise_ids,
    filled,
    leaks,
    lesson_points,
    run,
    solution,
    solution_path,
    submission,
    succeeded,
)
from nbclient import NotebookClient  # noqa: E402
from nbgrader.api import Gradebook  # noqa: E402

from course_lib.checks import MIME_TYPE, NOT_DONE, check  # noqa: E402

LESSONS = range(1, 10)
GRADED = (3, 5, 8)  # a lab lesson, one with a derivation, the numpy project
CELL_TIMEOUT = 300  # seconds; lesson 7 trains a model
EDITED, EDITED_TEST = 3, "ex3_2"  # the lesson and test cell the "edited" student changes


def assignment(lesson: int) -> str:
    return f"lesson{lesson:02d}"


def deleted_test(lesson: int) -> str:
    """The exercise whose test cell the half-done student deletes: the first they solved
    (not the multiple choice, which they answer wrong)."""
    choice, _ = choice_exercise(lesson)
    return next(e for e in filled(lesson) if e != choice)


def grade_name(exercise: str) -> str:
    """nbgrader's name of an exercise's test cell: ``ex3_2`` for 3.2."""
    return f"ex{exercise.replace('.', '_')}"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("nbgrader") / "course"
    command = [sys.executable, "-m", "course_tools.classroom", "nbgrader", "--out", out]
    succeeded(run(command, cwd=ROOT))
    return out


@pytest.fixture(scope="module")
def generated(course) -> dict:
    """``nbgrader generate_assignment`` of each lesson, as it went (one command per lesson)."""
    command = ["nbgrader", "generate_assignment", "--force"]
    return {n: run([*command, assignment(n)], cwd=course) for n in LESSONS}


def released(course: Path, lesson: int) -> Path:
    return course / "release" / assignment(lesson) / solution_path(lesson).name


@pytest.mark.parametrize("lesson", LESSONS)
def test_generate_assignment_releases_every_lesson(course, generated, lesson):
    succeeded(generated[lesson])
    assert released(course, lesson).is_file()


@pytest.mark.parametrize("lesson", LESSONS)
def test_released_notebooks_are_clean(course, generated, lesson):
    nb = nbformat.read(released(course, lesson), as_version=4)
    assert "widgets" not in nb.metadata
    dirty = [c.id for c in nb.cells if c.get("outputs") or c.get("execution_count") is not None]
    assert dirty == [], "cells with outputs or execution counts"
    assert leaks(nb, lesson) == []
    written = [c for c in nb.cells if c.id in solution(lesson).written]
    assert len(written) == len(solution(lesson).written)
    for cell in written:
        assert ANSWER_PROMPT in cell.source and "Model answer" not in cell.source


@pytest.mark.parametrize("lesson", LESSONS)
def test_released_notebooks_run_and_every_check_is_not_done(course, generated, lesson, tmp_path):
    copy = Path(shutil.copy(released(course, lesson), tmp_path))
    nb = nbformat.read(copy, as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute(env=ENV)  # raises CellExecutionError, naming the cell, if one fails
    # The check's verdict travels in its output's own MIME type: {"exercise", "status"}.
    outputs = [o for cell in nb.cells for o in cell.get("outputs", [])]
    found = [o["data"][MIME_TYPE] for o in outputs if MIME_TYPE in o.get("data", {})]
    assert {r["exercise"]: r["status"] for r in found} == dict.fromkeys(
        exercise_ids(lesson), NOT_DONE
    )
    assert len(found) == len(exercise_ids(lesson))


@pytest.fixture(scope="module")
def submitted(course, generated) -> dict[int, Path]:
    """The three students' submissions of each graded lesson; the half-done ones' paths."""
    halfdone = {}
    for lesson in GRADED:
        handed_out = nbformat.read(released(course, lesson), as_version=4)
        for student in STUDENTS:
            target = (
                course / "submitted" / student / assignment(lesson) / solution_path(lesson).name
            )
            target.parent.mkdir(parents=True)
            nb = submission(handed_out, lesson, student)
            if student == "halfdone":  # which also deletes a solved exercise's test cell
                deleted = grade_name(deleted_test(lesson))
                nb.cells = [
                    c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != deleted
                ]
                halfdone[lesson] = target
            nbformat.write(nb, target)
    # A student who edits a test cell: nbgrader reports it and grades with the released one.
    nb = submission(nbformat.read(released(course, EDITED), as_version=4), EDITED, "solved")
    cell = next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == EDITED_TEST
    )
    cell.source = "pass  # no check here"
    target = course / "submitted" / "edited" / assignment(EDITED) / solution_path(EDITED).name
    target.parent.mkdir(parents=True)
    nbformat.write(nb, target)
    return halfdone


@dataclass
class Grade:
    auto: float | None  # None while it waits for a human
    max: float
    manual: bool  # needs manual grading


@dataclass
class Scores:
    code: float
    max_code: float
    manual: bool
    grades: dict[str, Grade]  # by nbgrader's cell name: ex3_2, written1, ...


@pytest.fixture(scope="module")
def autograded(course, submitted) -> dict[tuple[int, str], Scores]:
    """``nbgrader autograde`` of every submission: scores by (lesson, student)."""
    found = {}
    for lesson in GRADED:
        command = ["nbgrader", "autograde", assignment(lesson), "--create", "--force"]
        done = succeeded(run(command, cwd=course, timeout=3600))
        found[lesson, "log"] = done.stdout + done.stderr
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for lesson in GRADED:
            for student in [*STUDENTS, *(["edited"] if lesson == EDITED else [])]:
                (nb,) = gradebook.find_submission(assignment(lesson), student).notebooks
                grades = {
                    g.name: Grade(g.auto_score, g.max_score, g.needs_manual_grade)
                    for g in nb.grades
                }
                scores = Scores(nb.code_score, nb.max_code_score, nb.needs_manual_grade, grades)
                found[lesson, student] = scores
    return found


@pytest.fixture(scope="module")
def course_grader(submitted, tmp_path_factory) -> dict[int, dict[str, float]]:
    """The course's grader on each half-done submission, the very file nbgrader graded."""
    return {
        lesson: course_grades(path, lesson, tmp_path_factory.mktemp(f"grade{lesson:02d}"))
        for lesson, path in submitted.items()
    }


@pytest.mark.parametrize("lesson", GRADED)
def test_solved_scores_every_point(autograded, lesson):
    scores = autograded[lesson, "solved"]
    assert scores.code == scores.max_code == lesson_points(lesson)


@pytest.mark.parametrize("lesson", GRADED)
def test_untouched_scores_nothing(autograded, lesson):
    scores = autograded[lesson, "untouched"]
    assert scores.code == 0
    assert scores.max_code == lesson_points(lesson)


@pytest.mark.parametrize("lesson", GRADED)
def test_half_done_scores_as_the_course_grader(autograded, course_grader, lesson):
    scores, reference = autograded[lesson, "halfdone"], course_grader[lesson]
    assert 0 < scores.code < scores.max_code
    assert scores.code == reference["total"]
    by_exercise = {e: scores.grades[grade_name(e)].auto for e in exercise_ids(lesson)}
    assert by_exercise == {e: reference[e] for e in exercise_ids(lesson)}
    choice, _ = choice_exercise(lesson)
    assert by_exercise[choice] == 0  # the wrong letter
    deleted = deleted_test(lesson)
    assert by_exercise[deleted] == reference[deleted] > 0  # nbgrader put the test cell back


@pytest.mark.parametrize("lesson", GRADED)
def test_only_an_edited_test_cell_is_reported_and_it_is_graded_as_released(autograded, lesson):
    """No hidden tests: every released test cell is its source's, checksum included."""
    changed = re.findall(r"Attribute '(\w+)' for cell (\w+) has changed", autograded[lesson, "log"])
    assert changed == ([("checksum", EDITED_TEST)] if lesson == EDITED else [])
    if lesson == EDITED:
        edited = autograded[lesson, "edited"]
        assert edited.code == edited.max_code == lesson_points(lesson)


@pytest.mark.parametrize("lesson", GRADED)
def test_written_answers_wait_for_a_human_unless_untouched(autograded, lesson):
    names = [f"written{i + 1}" for i in range(len(solution(lesson).written))]
    solved, untouched = autograded[lesson, "solved"], autograded[lesson, "untouched"]
    assert [n for n in solved.grades if n.startswith("written")] == names
    for name in names:
        assert solved.grades[name].manual and solved.grades[name].auto is None
        assert untouched.grades[name].auto == 0 and not untouched.grades[name].manual
    assert solved.manual == bool(names)  # only written answers need a human
    assert not untouched.manual


@pytest.fixture(scope="module")
def feedback(course, autograded) -> Path:
    for lesson in GRADED:
        command = ["nbgrader", "generate_feedback", assignment(lesson), "--force"]
        succeeded(run(command, cwd=course, timeout=900))
    return course / "feedback"


@pytest.mark.parametrize("lesson", GRADED)
def test_feedback_shows_the_checks_messages(feedback, lesson):
    name = solution_path(lesson).with_suffix(".html").name
    pages = {s: feedback / s / assignment(lesson) / name for s in STUDENTS}
    assert all(page.is_file() for page in pages.values())
    choice, wrong = choice_exercise(lesson)
    message = check(choice, wrong).message
    page = pages["halfdone"].read_text(encoding="utf-8")
    assert message in page or html.escape(message) in page
    assert "Not done yet" in page
    assert "CheckFailed" not in pages["solved"].read_text(encoding="utf-8")
