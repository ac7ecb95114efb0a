"""``python -m course_tools.mutation``: how well the exercise checks catch wrong answers.

    python -m course_tools.mutation                       # every lesson, every variant
    python -m course_tools.mutation --lessons 4 5 --jobs 2
    python -m course_tools.mutation --exercises 6.6 8.2 --sample 10
    python -m course_tools.mutation --list --exercises 3.4

Prints a table per exercise and overall, writes ``build/mutation/report.md`` and
``results.json``, and exits with 1 when a check accepts a wrong variant or rejects an
equivalent one, unless the allow-list gives the reason, or when an allow-list entry is stale.
"""

import argparse
import sys
import time
from pathlib import Path

from . import allowlist, report
from . import lesson as lessons
from .parallel import run_lessons
from .runner import variants


def _arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m course_tools.mutation",
        description="Run wrong variants of every model answer through its exercise's check.",
    )
    parser.add_argument("--lessons", nargs="+", type=int, metavar="N", help="only these lessons")
    parser.add_argument("--exercises", nargs="+", metavar="ID", help="only these, e.g. 6.6 8.2")
    parser.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="a fixed, seeded sample of N variants per exercise (a quick run)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="lessons run in parallel processes")
    parser.add_argument("--list", action="store_true", help="list the variants, run nothing")
    parser.add_argument("--solutions", type=Path, default=Path("solutions"))
    parser.add_argument("--out", type=Path, default=Path("build/mutation"))
    parser.add_argument("--allowed", type=Path, default=allowlist.DEFAULT)
    return parser.parse_args(argv)


def _chosen(args) -> list[tuple[Path, list[str]]]:
    """(lesson source, its wanted code exercises), for each lesson the options select."""
    chosen = []
    for path in sorted(args.solutions.glob("[0-9][0-9]_*.py")):
        number = lessons.lesson_number(path)
        ids = [e.id for e in lessons.code_exercises(number)]
        if args.exercises:
            ids = [i for i in ids if i in args.exercises]
        if ids and (not args.lessons or number in args.lessons):
            chosen.append((path, ids))
    return chosen


def _generated(chosen) -> dict[str, list]:
    """Every variant of every chosen exercise, unsampled: for --list and for stale entries."""
    found = {}
    for path, ids in chosen:
        for answer in lessons.read(path).answers:
            if answer.exercise.id in ids:
                found[answer.exercise.id] = (answer, variants(answer))
    return found


def _list(generated: dict, size: int | None) -> None:
    for exercise, (answer, every) in generated.items():
        shown = variants(answer, size)
        print(f"{exercise}: {len(shown)} of {len(every)} variants")
        for mutant in shown:
            print(f"  {mutant.id}")


def _header(chosen, size, seconds, total) -> str:
    which = f"a fixed sample of up to {size} variants per exercise" if size else "every variant"
    exercises = sum(len(ids) for _, ids in chosen)
    return (
        f"{len(chosen)} lesson(s), {exercises} code exercise(s), {total} variants ({which}); "
        f"{seconds:.0f} s."
    )


def main(argv=None) -> int:
    args = _arguments(argv)
    chosen = _chosen(args)
    if not chosen:
        print("no code exercise matches the options", file=sys.stderr)
        return 2
    generated = _generated(chosen)
    if args.list:
        _list(generated, args.sample)
        return 0
    entries = allowlist.read(args.allowed)  # read first: a malformed list fails at once
    started = time.monotonic()
    runs = run_lessons(chosen, args.sample, args.jobs)
    seconds = time.monotonic() - started
    found = [v for r in runs for v in r["variants"]]
    allowed = allowlist.keys(entries)
    for v in found:
        v["allowed"] = (v["exercise"], v["id"]) in allowed
    every_id = {exercise: {m.id for m in ms} for exercise, (_, ms) in generated.items()}
    stale = allowlist.stale(entries, every_id)
    problems = [p for r in runs for p in r["problems"]]
    header = _header(chosen, args.sample, seconds, len(found))
    meta = {"header": header, "seconds": round(seconds, 1), "sample": args.sample}
    table, goals = report.write(args.out, header, found, stale, problems, meta)
    print(f"Mutation run: {header}\n\n{table}\n\n{goals}")
    print(report.printed_sections(found, stale, problems))
    print(f"\nWrote {args.out / 'report.md'} and {args.out / 'results.json'}.")
    failed = report.survivors(found) or report.false_rejections(found) or stale or problems
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
