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
- ``nbgrader generate_feedback`` shows the student the checks' messages;
- ``make autograde`` (docs/teaching.md: each kernel in the grader's sandbox) gives lesson 3's
  three students the same scores as plain ``nbgrader autograde``, grade by grade, and a
  notebook that tries to read the solutions and a classmate's notebook, change them, the
  gradebook or the course directory, reach the network or a port on this machine, and leave
  a process behind gets nowhere: every file is byte-identical afterwards, and nothing of its
  kernel is left.

Each expensive step runs once per module: about 7 minutes on two cores. Run:

    PATH=.venv-graders/bin:$PATH .venv-graders/bin/python -m pytest \\
        tests/graders/test_nbgrader.py -p no:cacheprovider -q
"""

import hashlib
import html
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
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


def student_notebook(course: Path, lesson: int, student: str) -> nbformat.NotebookNode:
    """What ``student`` hands in: the half-done one also deletes a solved exercise's test cell."""
    nb = submission(nbformat.read(released(course, lesson), as_version=4), lesson, student)
    if student == "halfdone":
        deleted = grade_name(deleted_test(lesson))
        nb.cells = [
            c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != deleted
        ]
    return nb


def hand_in(course: Path, lesson: int, student: str, nb: nbformat.NotebookNode) -> Path:
    """Write ``nb`` where ``nbgrader collect`` puts ``student``'s submission; its path."""
    target = course / "submitted" / student / assignment(lesson) / solution_path(lesson).name
    target.parent.mkdir(parents=True)
    nbformat.write(nb, target)
    return target


@pytest.fixture(scope="module")
def submitted(course, generated) -> dict[int, Path]:
    """The three students' submissions of each graded lesson; the half-done ones' paths."""
    halfdone = {}
    for lesson in GRADED:
        for student in STUDENTS:
            target = hand_in(course, lesson, student, student_notebook(course, lesson, student))
            if student == "halfdone":
                halfdone[lesson] = target
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
    for lesson in GRADED:
        students = [*STUDENTS, *(["edited"] if lesson == EDITED else [])]
        found |= {(lesson, s): v for s, v in gradebook_scores(course, lesson, students).items()}
    return found


def gradebook_scores(course: Path, lesson: int, students: list[str]) -> dict[str, Scores]:
    """What the course directory's gradebook holds for each student's submission of ``lesson``."""
    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in students:
            (nb,) = gradebook.find_submission(assignment(lesson), student).notebooks
            grades = {
                g.name: Grade(g.auto_score, g.max_score, g.needs_manual_grade) for g in nb.grades
            }
            found[student] = Scores(nb.code_score, nb.max_code_score, nb.needs_manual_grade, grades)
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


# `make autograde`: nbgrader's autograde with each kernel in the sandbox ------------------------

SANDBOXED = 3  # the lesson graded again through `make autograde`, in a course of its own
ATTACKER = "mallory"  # hands in the solved notebook with one more cell, which attacks
LINGER = "7777.25"  # how long the attacker's background process would sleep: its mark
PLANTED = b"planted by a submission"
ATTACK = """\
import json, pathlib, socket, subprocess

course = pathlib.Path({course!r})
attempts = {{
    "read the solutions": lambda: (course / {source!r}).read_bytes(),
    "read a classmate's notebook": lambda: (course / {peer!r}).read_bytes(),
    "change a classmate's notebook": lambda: (course / {peer!r}).write_text("{{}}"),
    "change the gradebook": lambda: open(course / "gradebook.db", "ab").write({planted!r}),
    "add a file to the course": lambda: (course / "planted.txt").write_bytes({planted!r}),
    "reach the network": lambda: socket.create_connection(("pypi.org", 443), timeout=5),
    "reach a port on this machine": lambda: socket.create_connection(("127.0.0.1", {port}), 5),
}}
found = {{}}
for name, attempt in attempts.items():
    try:
        attempt()
        found[name] = "worked"
    except OSError as e:
        found[name] = type(e).__name__
subprocess.Popen(["sleep", "{linger}"], start_new_session=True)  # to outlive the grading
print("attempts:", json.dumps(found))
"""
ATTEMPTS = [
    "read the solutions",
    "read a classmate's notebook",
    "change a classmate's notebook",
    "change the gradebook",
    "add a file to the course",
    "reach the network",
    "reach a port on this machine",
]


@pytest.fixture(scope="module")
def listening() -> int:
    """A port that listens on this machine's loopback while the module runs (a Jupyter
    server's, another kernel's): a connection to it would succeed."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


@pytest.fixture(scope="module")
def sandboxed_course(tmp_path_factory, listening) -> Path:
    """A course of lesson 3 only, handed in by the three students and the attacker."""
    out = tmp_path_factory.mktemp("sandboxed") / "course"
    command = [sys.executable, "-m", "course_tools.classroom", "nbgrader", "--out", out]
    succeeded(run([*command, "--lessons", SANDBOXED], cwd=ROOT))
    succeeded(run(["nbgrader", "generate_assignment", assignment(SANDBOXED)], cwd=out))
    for student in STUDENTS:
        hand_in(out, SANDBOXED, student, student_notebook(out, SANDBOXED, student))
    name = solution_path(SANDBOXED).name
    where = {
        "source": f"source/{assignment(SANDBOXED)}/{name}",
        "peer": f"submitted/solved/{assignment(SANDBOXED)}/{name}",
    }
    nb = student_notebook(out, SANDBOXED, "solved")
    attack = ATTACK.format(course=str(out), planted=PLANTED, linger=LINGER, port=listening, **where)
    nb.cells.append(nbformat.v4.new_code_cell(attack))
    hand_in(out, SANDBOXED, ATTACKER, nb)
    return out


def digests(course: Path) -> dict[str, str]:
    """Every file of the course directory but what autograde writes (autograded/, the
    gradebook), by path: its SHA-256."""
    return {
        str(path.relative_to(course)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(course.rglob("*"))
        if path.is_file() and path.name != "gradebook.db"
        if path.relative_to(course).parts[0] != "autograded"
    }


def processes_with(mark: str) -> list[str]:
    """The command lines of this machine's processes that contain ``mark``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            line = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # a process that ended meanwhile
            continue
        found += [line] if mark in line else []
    return found


@dataclass
class Sandboxed:
    """What ``make autograde`` did to the course directory, and what it left."""

    before: dict[str, str]  # digests of the course's files
    after: dict[str, str]
    gradebook: bytes
    scores: dict[str, Scores]  # by student
    attempts: dict[str, str]  # the attacker's: each attempt, and how it ended
    lingering: list[str]  # the attacker's background process, if it outlived the grading
    left: list[Path]  # what the kernels left in the temporary folder


def documented_command(target: str) -> list[str]:
    """The command line ``make TARGET ...`` that docs/teaching.md shows, as arguments."""
    page = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    return shlex.split(re.search(rf"^make {target} [^#\n]*", page, re.M)[0])


@pytest.fixture(scope="module")
def sandboxed(sandboxed_course) -> Sandboxed:
    """``make autograde`` on lesson 3, the command docs/teaching.md shows, run from the
    repository; the environment is this one (GRADERS), as set up (-o: not set up again)."""
    course, prefix = sandboxed_course, Path(sys.prefix)
    before = digests(course)
    # A short temporary folder (the kernels' sockets lie in it), to see what they leave there.
    temporary = Path(tempfile.mkdtemp(prefix="ag-"))
    documented = documented_command("autograde")
    assert f"ASSIGNMENT={assignment(SANDBOXED)}" in documented
    command = ["make", "--no-print-directory", "-o", f"{prefix}/.installed", *documented[1:]]
    command += [f"GRADERS={prefix}", f"NBGRADER_DIR={course}"]
    try:
        done = subprocess.run(
            command,
            cwd=ROOT,
            env=ENV | {"TMPDIR": str(temporary)},
            capture_output=True,
            text=True,
            timeout=1800,
        )
        succeeded(done)
        left = list(temporary.iterdir())
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    name = solution_path(SANDBOXED).name
    attacked = nbformat.read(course / "autograded" / ATTACKER / assignment(SANDBOXED) / name, 4)
    printed = "".join(o.get("text", "") for c in attacked.cells for o in c.get("outputs", []))
    reported = re.search(r"^attempts: (.*)$", printed, re.M)
    return Sandboxed(
        before=before,
        after=digests(course),
        gradebook=(course / "gradebook.db").read_bytes(),
        scores=gradebook_scores(course, SANDBOXED, [*STUDENTS, ATTACKER]),
        attempts=json.loads(reported[1]) if reported else {},
        lingering=processes_with(f"sleep {LINGER}"),
        left=left,
    )


@pytest.mark.parametrize("student", STUDENTS)
def test_make_autograde_scores_as_plain_nbgrader(sandboxed, autograded, student):
    assert sandboxed.scores[student] == autograded[SANDBOXED, student]


def test_a_sandboxed_kernel_reaches_no_solution_classmate_gradebook_or_network(sandboxed):
    assert list(sandboxed.attempts) == ATTEMPTS, "the attack cell did not report"
    worked = [attempt for attempt, ended in sandboxed.attempts.items() if ended == "worked"]
    assert worked == []


def test_a_sandboxed_kernel_changes_nothing_and_gains_nothing(sandboxed):
    assert sandboxed.after == sandboxed.before  # source/, release/, the others' submissions
    assert PLANTED not in sandboxed.gradebook
    attacker = sandboxed.scores[ATTACKER]
    assert attacker.code == attacker.max_code == lesson_points(SANDBOXED)  # its answers' due


def test_nothing_of_a_sandboxed_kernel_outlives_the_grading(sandboxed):
    assert sandboxed.lingering == []
    assert sandboxed.left == []  # each kernel's private folder, and the runtime folder


def sandboxed_kernel(*args, env=None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "course_tools.classroom.sandboxed_kernel", *args]
    return subprocess.run(command, cwd=ROOT, env=env or ENV, capture_output=True, text=True)


def test_make_autograde_refuses_without_bubblewrap(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("")
    no_bwrap = ENV | {"PATH": str(Path(sys.executable).parent)}
    done = sandboxed_kernel("autograde", "--course-dir", tmp_path, "lesson03", env=no_bwrap)
    assert done.returncode == 2
    assert "bubblewrap (bwrap) is not installed" in done.stderr
    assert "plain `nbgrader autograde`" in done.stderr  # the way round, with its risk
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nbgrader_config.py"]


def test_make_autograde_refuses_where_bubblewrap_cannot_start(tmp_path):
    """As in many containers: bwrap is there, the namespaces it needs are not allowed."""
    (tmp_path / "nbgrader_config.py").write_text("")
    bwrap = tmp_path / "bin" / "bwrap"
    bwrap.parent.mkdir()
    bwrap.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    bwrap.chmod(0o755)
    env = ENV | {"PATH": f"{bwrap.parent}{os.pathsep}{ENV['PATH']}"}
    done = sandboxed_kernel("autograde", "--course-dir", tmp_path, "lesson03", env=env)
    assert done.returncode == 2
    assert "cannot start a sandbox here: bwrap: No permissions" in done.stderr
    assert not (tmp_path / "autograded").exists()


def test_make_autograde_refuses_links_in_submissions(tmp_path):
    """nbgrader copies a submission's files with the instructor's rights, following links."""
    (tmp_path / "nbgrader_config.py").write_text("")
    solutions = tmp_path / "source" / "lesson03" / "03_lesson.ipynb"
    solutions.parent.mkdir(parents=True)
    solutions.write_text("{}")
    link = tmp_path / "submitted" / ATTACKER / "lesson03" / "notes.txt"
    link.parent.mkdir(parents=True)
    link.symlink_to(solutions)
    done = sandboxed_kernel("autograde", "--course-dir", tmp_path, "lesson03")
    assert done.returncode == 2
    assert "submitted/ holds symbolic links" in done.stderr and str(link) in done.stderr
    assert not (tmp_path / "autograded").exists()


@pytest.mark.parametrize(
    "transport, name, why",
    [("tcp", ".kernel.json", "ipc transport"), ("ipc", "kernel-1.json", "a folder of its own")],
)
def test_the_kernel_launcher_refuses_a_connection_file_the_sandbox_cannot_keep(
    tmp_path, transport, name, why
):
    connection = tmp_path / name
    ip = "127.0.0.1" if transport == "tcp" else str(tmp_path / "kernel-ipc")
    connection.write_text(json.dumps({"transport": transport, "ip": ip}))
    done = sandboxed_kernel("-f", connection)
    assert done.returncode == 2
    assert "connection_file should" in done.stderr and why in done.stderr
