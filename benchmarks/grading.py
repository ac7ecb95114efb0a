"""How long the course's grader takes per submission, and what a class of 300 would cost.

    .venv/bin/python benchmarks/grading.py [--per-lesson N] [--lessons 3 5] [--jobs 2]
                                           [--keep FOLDER]

Builds N submissions per lesson from the lessons a student is handed (``lessons/``), cycling
through three students: solved (every answer as in ``solutions/``), untouched, and half-done
(every other exercise solved, the multiple choice answered wrongly); grades them all in one
``python -m course_tools.grade --jobs J`` run, and prints the seconds per submission of each
lesson and the extrapolation to 300 students x 9 lessons at that rate. ``--keep`` leaves the
submissions and grades in FOLDER, so that two runs' grades can be compared.
"""

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.graders.handed_in import STUDENTS, lesson_path, submission  # noqa: E402

CLASS, LESSONS = 300, 9
GOAL_HOURS = 2.0


def build(folder: Path, lessons: list[int], per_lesson: int) -> dict[int, int]:
    """Write the submissions as ``folder/sNNN/NN_lesson.ipynb``; how many per lesson."""
    made = {}
    for lesson in lessons:
        handed_out = nbformat.read(lesson_path(lesson), as_version=4)
        for k in range(per_lesson):
            student = STUDENTS[k % len(STUDENTS)]
            nb = submission(handed_out, lesson, student)
            path = folder / f"{student}{k:03d}" / lesson_path(lesson).name
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, path)
        made[lesson] = per_lesson
    return made


def grade_lesson(folder: Path, lesson: int, jobs: int, out: Path, extra: list[str]) -> float:
    """Seconds to grade one lesson's submissions (the grader's own process included)."""
    files = sorted(folder.glob(f"*/{lesson:02d}_*.ipynb"))
    command = [sys.executable, "-m", "course_tools.grade", *map(str, files)]
    command += ["--out", str(out), "--jobs", str(jobs), *extra]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"grading lesson {lesson} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-lesson", type=int, default=3, help="submissions per lesson")
    parser.add_argument("--lessons", type=int, nargs="*", default=list(range(1, LESSONS + 1)))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="leave submissions and grades here")
    parser.add_argument("grader_options", nargs="*", help="passed on to the grader (after --)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
        root = args.keep or Path(tmp)
        submissions = root / "submissions"
        made = build(submissions, args.lessons, args.per_lesson)
        total = 0.0
        print(f"{'lesson':>6} {'notebooks':>9} {'s/notebook':>10}")
        for lesson, n in made.items():
            out = root / "grades" / f"{lesson:02d}" / "grades.csv"
            seconds = grade_lesson(submissions, lesson, args.jobs, out, args.grader_options)
            total += seconds / n
            print(f"{lesson:>6} {n:>9} {seconds / n:>10.1f}")
        mean = total / len(made)
        hours = mean * CLASS * LESSONS / 3600
        verdict = "meets" if hours <= GOAL_HOURS else "MISSES"
        print(
            f"mean {mean:.1f} s per notebook with --jobs {args.jobs}: {CLASS} students x "
            f"{LESSONS} lessons in {hours:.2f} h ({verdict} the goal of {GOAL_HOURS:g} h)"
        )
        if args.keep:
            rows = [
                row
                for path in sorted((root / "grades").glob("*/grades.csv"))
                for row in csv.DictReader(path.open(encoding="utf-8"))
            ]
            print(f"grades of {len(rows)} submissions in {root / 'grades'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
