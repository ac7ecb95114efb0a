"""Grading in the sandbox on plain data gives every exercise the points it got before.

Three students per lesson (``tests/graders/handed_in.py``: solved, untouched, half-done), made
from the lessons students are handed, graded in one run of the course's grader with two
notebooks at a time, as a class is. ``grades_before.toml`` holds the points the grader gave
them before submissions ran in a sandbox and their answers crossed out of it as plain data.
"""

import csv
import tomllib
from pathlib import Path

import nbformat
import pytest

from course_tools.grade import main
from tests.graders.handed_in import STUDENTS, lesson_path, submission

BEFORE = tomllib.loads((Path(__file__).parent / "grades_before.toml").read_text(encoding="utf-8"))
LESSONS = sorted(int(n) for n in BEFORE)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[tuple[int, str], dict[str, float]]:
    root = tmp_path_factory.mktemp("same-grades")
    for lesson in LESSONS:
        handed_out = nbformat.read(lesson_path(lesson), as_version=4)
        for student in STUDENTS:
            path = root / "submissions" / student / lesson_path(lesson).name
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(submission(handed_out, lesson, student), path)
    out = root / "out" / "grades.csv"
    assert main([str(root / "submissions"), "--out", str(out), "--jobs", "2"]) == 0
    with open(out, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return {
        (int(r["lesson"]), r["student"]): {k: float(v or 0) for k, v in r.items() if k[0].isdigit()}
        for r in rows
    }


@pytest.mark.parametrize("lesson", LESSONS)
@pytest.mark.parametrize("student", STUDENTS)
def test_every_exercise_gets_the_points_it_got_before(graded, lesson, student):
    now = {k: v for k, v in graded[lesson, student].items() if k.split(".")[0] == str(lesson)}
    assert now == BEFORE[str(lesson)][student]
