"""otter-grader on the course: the notebooks ``make otter`` writes, assigned and graded.

Built from solutions/ into a temporary folder for lessons 3, 5 and 8, with otter-grader 7
itself (``otter assign``, then ``otter run`` with the autograder zip), it proves that:

- the student notebooks hold no solution, no model answer and no otter cell: their code
  cells are the lesson's, answer stubs included, so they Run All like the lessons;
- the autograder zip holds one test per exercise, the course's wheel, and an
  environment.yml that installs torch's CPU build at the pinned version and that wheel;
- ``otter run`` gives a solved submission every point of points.toml, an untouched one 0,
  and a half-done one (handed_in.py) what the course's own grader gives that same file,
  exercise by exercise; a failed test shows the check's message, a passed one only otter's
  "All test cases passed!".

Each expensive step runs once per module: about 3.5 minutes on two cores. Run:

    PATH=.venv-graders/bin:$PATH .venv-graders/bin/python -m pytest \\
        tests/graders/test_otter.py -p no:cacheprovider -q
"""

import json
import re
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("otter", reason="otter-grader is not installed (.venv-graders)")
import yaml  # noqa: E402 (otter-grader's dependency)
from handed_in import (  # noqa: E402
    ANSWER_PROMPT,
    POINTS,
    ROOT,
    STUDENTS,
    choice_exercise,
    course_grades,
    exercise_ids,
    leaks,
    lesson_path,
    lesson_points,
    run,
    solution,
    solution_path,
    submission,
    succeeded,
)

from course_lib.checks import check  # noqa: E402
from course_lib.model_answers import REVEAL_TAG  # noqa: E402

LESSONS = (3, 5, 8)
CPU_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"


def otter_name(exercise: str) -> str:
    """otter's name of an exercise's test: ``ex3_2`` for 3.2."""
    return f"ex{exercise.replace('.', '_')}"


@pytest.fixture(scope="module")
def assigned(tmp_path_factory) -> dict[int, Path]:
    """``otter assign`` of each lesson: its output folder (student/ and autograder/)."""
    folder = tmp_path_factory.mktemp("otter") / "otter"
    lessons = [f"{n:02d}" for n in LESSONS]
    command = [sys.executable, "-m", "course_tools.classroom", "otter", "--out", folder]
    succeeded(run([*command, "--lessons", *lessons], cwd=ROOT))
    found = {}
    for lesson in LESSONS:
        name, out = solution_path(lesson).name, f"dist/{lesson:02d}"
        succeeded(run(["otter", "assign", name, out], cwd=folder, timeout=900))
        found[lesson] = folder / out
    return found


def student_notebook(assigned, lesson: int) -> nbformat.NotebookNode:
    return nbformat.read(assigned[lesson] / "student" / solution_path(lesson).name, as_version=4)


def autograder_zip(assigned, lesson: int) -> Path:
    (found,) = (assigned[lesson] / "autograder").glob("*.zip")
    return found


@pytest.mark.parametrize("lesson", LESSONS)
def test_student_notebooks_hold_no_solution(assigned, lesson):
    nb = student_notebook(assigned, lesson)
    assert leaks(nb, lesson) == []
    assert [c.source for c in nb.cells if c.cell_type == "raw"] == []
    written = [c for c in nb.cells if c.id in solution(lesson).written]
    assert len(written) == len(solution(lesson).written)
    for cell in written:
        assert ANSWER_PROMPT in cell.source and "Model answer" not in cell.source


@pytest.mark.parametrize("lesson", LESSONS)
def test_answer_cells_are_the_lessons_stubs(assigned, lesson):
    cells = {c.id: c.source for c in student_notebook(assigned, lesson).cells}
    stubs = {c.id: c.source for c in nbformat.read(lesson_path(lesson), as_version=4).cells}
    answers = solution(lesson).answers
    assert {i: cells.get(i) for i in answers} == {i: stubs[i] for i in answers}


@pytest.mark.parametrize("lesson", LESSONS)
def test_code_cells_are_the_lessons_so_run_all_works(assigned, lesson):
    # No otter cell either (grader = otter.Notebook(), grader.check(...)): students run
    # the course's checks, and with no init cell a grader.check cell would stop Run All.
    # The lessons' reveal cells are left out: the instructor grades the written answers.
    student = student_notebook(assigned, lesson)
    lesson_nb = nbformat.read(lesson_path(lesson), as_version=4)
    code = [(c.id, c.source) for c in student.cells if c.cell_type == "code"]
    expected = [
        (c.id, c.source)
        for c in lesson_nb.cells
        if c.cell_type == "code" and REVEAL_TAG not in c.metadata.get("tags", [])
    ]
    assert code == expected


@pytest.mark.parametrize("lesson", LESSONS)
def test_autograder_zip_has_the_tests_the_wheel_and_cpu_torch(assigned, lesson):
    with zipfile.ZipFile(autograder_zip(assigned, lesson)) as z:
        names = z.namelist()
        tests = {n: z.read(n).decode() for n in names if n.startswith("tests/")}
        environment = yaml.safe_load(z.read("environment.yml"))
        config = json.loads(z.read("otter_config.json"))
    expected = {f"tests/{otter_name(e)}.py": e for e in exercise_ids(lesson)}
    assert sorted(tests) == sorted(expected)
    for path, exercise in expected.items():  # each test is the exercise's check, raising
        assert f"require('{exercise}'" in tests[path]
    (pip,) = [d["pip"] for d in environment["dependencies"] if isinstance(d, dict)]
    pin = re.search(r"^torch==(\S+)", (ROOT / "requirements.txt").read_text(), re.M)[1]
    assert f"torch=={pin}+cpu" in pip
    assert CPU_INDEX in pip
    wheels = [n for n in names if re.fullmatch(r"files/wheels/attention_course-[^/]+\.whl", n)]
    assert len(wheels) == 1
    assert f"/autograder/source/{wheels[0]}" in pip  # where Gradescope unpacks files/
    assert config["pdf"] is False


@pytest.fixture(scope="module")
def submitted(assigned, tmp_path_factory) -> dict[tuple[int, str], Path]:
    """Each student's submission of each lesson, made from the student notebook."""
    found = {}
    for lesson in LESSONS:
        handed_out = student_notebook(assigned, lesson)
        for student in STUDENTS:
            folder = tmp_path_factory.mktemp(f"{student}{lesson:02d}")
            path = folder / solution_path(lesson).name
            nbformat.write(submission(handed_out, lesson, student), path)
            found[lesson, student] = path
    return found


@pytest.fixture(scope="module")
def results(assigned, submitted) -> dict[tuple[int, str], dict[str, dict]]:
    """``otter run`` of every submission: its tests' results by name (ex3_2, ...)."""
    found = {}
    for (lesson, student), path in submitted.items():
        out = path.parent / "results"
        out.mkdir()
        command = ["otter", "run", "-a", autograder_zip(assigned, lesson), "-o", out, path]
        succeeded(run(command, cwd=path.parent, timeout=900))
        tests = json.loads((out / "results.json").read_text())["tests"]
        # "Public Tests" repeats the tests' outputs for the student, with no score.
        found[lesson, student] = {t["name"]: t for t in tests if t["name"] != "Public Tests"}
    return found


@pytest.fixture(scope="module")
def course_grader(submitted, tmp_path_factory) -> dict[int, dict[str, float]]:
    """The course's grader on each half-done submission, the very file otter graded."""
    return {
        lesson: course_grades(
            submitted[lesson, "halfdone"], lesson, tmp_path_factory.mktemp(f"grade{lesson:02d}")
        )
        for lesson in LESSONS
    }


def total(tests: dict[str, dict]) -> float:
    return sum(t["score"] for t in tests.values())


@pytest.mark.parametrize("lesson", LESSONS)
def test_solved_scores_every_point(results, lesson):
    tests = results[lesson, "solved"]
    worth = {otter_name(e): POINTS[e] for e in exercise_ids(lesson)}
    assert {name: t["max_score"] for name, t in tests.items()} == worth
    assert {name: t["score"] for name, t in tests.items()} == worth
    assert total(tests) == lesson_points(lesson)
    for name, t in tests.items():  # the test prints nothing: otter's words alone
        assert t["output"].strip() == f"{name} results: All test cases passed!"


@pytest.mark.parametrize("lesson", LESSONS)
def test_untouched_scores_nothing(results, lesson):
    tests = results[lesson, "untouched"]
    assert sorted(tests) == sorted(otter_name(e) for e in exercise_ids(lesson))
    assert total(tests) == 0


@pytest.mark.parametrize("lesson", LESSONS)
def test_half_done_scores_as_the_course_grader(results, course_grader, lesson):
    tests, reference = results[lesson, "halfdone"], course_grader[lesson]
    assert 0 < total(tests) < lesson_points(lesson)
    assert total(tests) == reference["total"]
    by_exercise = {e: tests[otter_name(e)]["score"] for e in exercise_ids(lesson)}
    assert by_exercise == {e: reference[e] for e in exercise_ids(lesson)}


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_failed_test_shows_the_checks_message(results, lesson):
    tests = results[lesson, "halfdone"]
    choice, wrong = choice_exercise(lesson)
    assert tests[otter_name(choice)]["score"] == 0
    assert check(choice, wrong).message in tests[otter_name(choice)]["output"]
    not_done = [t for t in results[lesson, "untouched"].values() if "Not done yet" in t["output"]]
    assert len(not_done) == len(exercise_ids(lesson))
