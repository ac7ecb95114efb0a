"""How long grading takes per submission, with each grader, and what a class of 300 would cost.

    .venv/bin/python benchmarks/grading.py [--per-lesson N] [--lessons 3 5] [--jobs 2]
                                           [--keep FOLDER]
    PATH=.venv-graders/bin:$PATH .venv-graders/bin/python benchmarks/grading.py \\
        --graders course nbgrader otter --lessons 3 5 7

Builds N submissions per lesson from the notebooks each grader hands out (``lessons/``,
nbgrader's release, otter's student notebook), cycling through three students: solved (every
answer as in ``solutions/``), untouched, and half-done (every other exercise solved, the
multiple choice answered wrongly); then times, per lesson:

- ``course``: one ``python -m course_tools.grade --jobs J`` run over the lesson's submissions,
  less the grader's start (a run over one file that is not a notebook), which 300
  submissions share;
- ``nbgrader``: ``make autograde``'s command (nbgrader's autograde, kernels sandboxed);
- ``otter``: ``otter run`` with the lesson's autograder zip, one submission after another.

It prints the seconds per submission of each lesson and the extrapolation to 300 students x
9 lessons at the mean rate (goal: 2 hours with the course's grader and ``--jobs 2``).
``--keep`` leaves the submissions and grades in FOLDER, so that two runs' grades can be
compared. nbgrader and otter come from ``make graders-env``.
"""

import argparse
import functools
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.graders.handed_in import (  # noqa: E402
    STUDENTS,
    lesson_path,
    run,
    solution_path,
    submission,
    succeeded,
)

CLASS, LESSONS = 300, 9
GOAL_HOURS = 2.0


def hand_in(handed_out: Path, lesson: int, per_lesson: int, where) -> list[Path]:
    """Write ``per_lesson`` submissions made from ``handed_out`` at ``where(name)``."""
    paths = []
    for k in range(per_lesson):
        student = STUDENTS[k % len(STUDENTS)]
        nb = submission(nbformat.read(handed_out, as_version=4), lesson, student)
        paths.append(where(f"{student}{k:03d}"))
        paths[-1].parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, paths[-1])
    return paths


def timed(command: list, cwd: Path) -> float:
    start = time.perf_counter()
    succeeded(run(command, cwd=cwd, timeout=7200))
    return time.perf_counter() - start


def course(folder: Path, lesson: int, n: int, jobs: int, extra: list[str]) -> float:
    """Seconds to grade one lesson's submissions, less the grader's own start, which a class
    of 300 pays once per lesson (``startup``)."""
    name = lesson_path(lesson).name
    files = hand_in(lesson_path(lesson), lesson, n, lambda s: folder / "submitted" / s / name)
    out = folder / "grades" / f"{lesson:02d}" / "grades.csv"
    command = [sys.executable, "-m", "course_tools.grade", *files, "--out", out]
    return timed([*command, "--jobs", jobs, *extra], ROOT) - startup(folder.parent)


@functools.cache
def startup(folder: Path) -> float:
    """Seconds the course's grader takes to start, find the sandbox and grade nothing: one
    file that is not a notebook; the least of three runs."""
    empty = folder / "not_a_notebook" / "01_x.ipynb"
    empty.parent.mkdir(parents=True, exist_ok=True)
    empty.write_text("{}", encoding="utf-8")
    out = empty.parent / "grades.csv"
    command = [sys.executable, "-m", "course_tools.grade", empty, "--out", out]
    return min(timed(command, ROOT) for _ in range(3))


def nbgrader(folder: Path, lesson: int, n: int, jobs: int, extra: list[str]) -> float:
    """Seconds of ``make autograde`` over one lesson's submissions (one kernel at a time)."""
    if not (folder / "nbgrader_config.py").exists():
        classroom = [sys.executable, "-m", "course_tools.classroom", "nbgrader"]
        succeeded(run([*classroom, "--out", folder], cwd=ROOT))
    assignment = f"lesson{lesson:02d}"
    succeeded(run(["nbgrader", "generate_assignment", "--force", assignment], cwd=folder))
    released = folder / "release" / assignment / solution_path(lesson).name
    where = folder / "submitted" / "{}" / assignment / released.name
    hand_in(released, lesson, n, lambda s: Path(str(where).format(s)))
    command = [sys.executable, "-m", "course_tools.classroom.sandboxed_kernel", "autograde"]
    return timed([*command, "--course-dir", folder, assignment, "--create", "--force"], ROOT)


def otter(folder: Path, lesson: int, n: int, jobs: int, extra: list[str]) -> float:
    """Seconds of ``otter run`` over one lesson's submissions, one after another (``otter
    assign``, which runs the solution once, not counted)."""
    name, out = solution_path(lesson).name, f"dist/{lesson:02d}"
    classroom = [sys.executable, "-m", "course_tools.classroom", "otter", "--out", folder]
    succeeded(run([*classroom, "--lessons", f"{lesson:02d}"], cwd=ROOT))
    succeeded(run(["otter", "assign", name, out], cwd=folder, timeout=1800))
    (archive,) = (folder / out / "autograder").glob("*.zip")
    paths = hand_in(folder / out / "student" / name, lesson, n, lambda s: folder / s / name)
    return sum(timed(["otter", "run", "-a", archive, "-o", p.parent, p], p.parent) for p in paths)


GRADERS = {"course": course, "nbgrader": nbgrader, "otter": otter}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-lesson", type=int, default=6, help="submissions per lesson")
    parser.add_argument("--lessons", type=int, nargs="*", default=list(range(1, LESSONS + 1)))
    parser.add_argument("--graders", nargs="*", choices=list(GRADERS), default=["course"])
    parser.add_argument("--jobs", type=int, default=2, help="the course's grader's --jobs")
    parser.add_argument("--keep", type=Path, help="leave submissions and grades here")
    parser.add_argument("grader_options", nargs="*", help="passed on to the grader (after --)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
        root = args.keep or Path(tmp)
        for grader in args.graders:
            print(f"{grader}: {'lesson':>6} {'notebooks':>9} {'s/notebook':>10}")
            rates = []
            for lesson in args.lessons:
                folder = root / grader if grader == "nbgrader" else root / grader / f"{lesson:02d}"
                seconds = GRADERS[grader](
                    folder, lesson, args.per_lesson, args.jobs, args.grader_options
                )
                rates.append(seconds / args.per_lesson)
                print(f"{grader}: {lesson:>6} {args.per_lesson:>9} {rates[-1]:>10.1f}", flush=True)
            mean = sum(rates) / len(rates)
            started = startup(root / grader) * LESSONS if grader == "course" else 0.0
            hours = (mean * CLASS * LESSONS + started) / 3600  # one start per lesson
            verdict = "meets" if hours <= GOAL_HOURS else "MISSES"
            print(
                f"{grader}: mean {mean:.1f} s per notebook over lessons {args.lessons}: "
                f"{CLASS} students x {LESSONS} lessons in {hours:.2f} h"
                + (f" ({verdict} the goal of {GOAL_HOURS:g} h)" if grader == "course" else "")
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
