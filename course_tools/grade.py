"""The instructor's grader and lesson validator (the machinery is in ``course_tools.grading``).

Commands (run from the repository root)::

    python -m course_tools.grade SUBMISSIONS... [--out grades.csv] [--jobs N] [--timeout S]
                               [--points points.toml] [--lesson N]
    python -m course_tools.grade --validate [LESSON ...]

Grading runs each notebook (a file, or every ``*.ipynb`` under a folder) in a fresh kernel,
checks its answers in a separate clean process with the checks of this installation's
``course_lib``, and writes ``grades.csv``, ``summary.md`` and ``feedback/STUDENT-NN.md`` beside
``--out``. Submission files are never modified. ``--validate`` grades ``solutions/NN`` (every
exercise must pass) and ``lessons/NN`` (none may pass) and exits 1 otherwise.
"""

import argparse
import sys
from pathlib import Path

from .grading import sandbox
from .grading.grader import (
    LESSONS,
    POINTS,
    SOLUTIONS,
    find_submissions,
    grade_many,
    load_points,
    write_reports,
)
from .grading.validation import lessons_with_checks, validate


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_tools.grade",
        description="Grade student notebooks, or check lessons before releasing them.",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="SUBMISSIONS_OR_LESSONS",
        help="notebooks or folders to grade; with --validate, lesson numbers (default: all)",
    )
    parser.add_argument(
        "--validate", action="store_true", help="check solutions/ and lessons/ instead of grading"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("grades.csv"),
        help="the CSV to write (default: grades.csv)",
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="notebooks run at the same time (default: 1)"
    )
    parser.add_argument(
        "--timeout", type=int, default=120, help="seconds per cell and per check (default: 120)"
    )
    parser.add_argument(
        "--points",
        type=Path,
        help=f'JSON or TOML file of points per exercise, e.g. "3.4" = 2 (default: {POINTS} '
        "if there is one, else 1 each)",
    )
    parser.add_argument(
        "--lesson", type=int, help="the lesson of every submission (default: from each file)"
    )
    parser.add_argument(
        "--solutions", type=Path, default=SOLUTIONS, help="folder of solution notebooks"
    )
    parser.add_argument("--lessons", type=Path, default=LESSONS, help="folder of lesson notebooks")
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run each submission with your own rights, not in its bubblewrap sandbox: its code "
        "could then read the solutions and other students' work, and change your files and grades",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.timeout < 1:
        parser.error(f"--jobs and --timeout must be at least 1; got {args.jobs} and {args.timeout}")
    for option, folder in (("--solutions", args.solutions), ("--lessons", args.lessons)):
        if not folder.is_dir():  # the model answers decide what counts as the student's own work
            parser.error(
                f"{option} {folder} is not a folder: run from the course's repository root, "
                f"or give {option} (now {folder.resolve()})"
            )
    if args.validate:
        try:
            chosen = [int(p) for p in map(str, args.paths)] or lessons_with_checks(args.solutions)
        except ValueError:
            parser.error(f"--validate takes lesson numbers; got {' '.join(map(str, args.paths))}")
        # The course's own notebooks: the sandbox where there is one, as grading would run them.
        sandboxed = sandbox.cannot_start() is None
        lines, ok = validate(
            chosen, args.solutions, args.lessons, args.timeout, args.jobs, sandboxed
        )
        print("\n".join(lines) if lines else "no lesson to validate")
        return 0 if ok and lines else 1
    if not args.no_sandbox and (why := sandbox.cannot_start()):
        parser.error(why)
    submissions = find_submissions([Path(p) for p in args.paths])
    if not submissions:
        parser.error("no submissions: give notebooks or folders that contain some")
    try:
        points = load_points(args.points or (POINTS if POINTS.is_file() else None))
    except (OSError, ValueError) as e:
        parser.error(str(e))
    options = {"timeout": args.timeout, "points": points, "lesson": args.lesson}
    options |= {"solutions": args.solutions, "lessons": args.lessons}
    options["sandboxed"] = not args.no_sandbox
    alone = "each in its sandbox" if options["sandboxed"] else "WITHOUT a sandbox (--no-sandbox)"
    print(f"Grading {len(submissions)} notebook(s), {args.jobs} at a time, {alone}.", flush=True)
    grades = grade_many(submissions, args.jobs, progress=_progress, **options)
    print(write_reports(grades, args.out))
    print(f"Wrote {args.out}, {args.out.parent / 'summary.md'} and {args.out.parent / 'feedback'}/")
    return 0


def _progress(done: int, total: int, graded) -> None:
    score = f"{graded.total:g}/{graded.max_points:g}"
    print(f"[{done}/{total}] {graded.path}: {score}, {graded.status}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
