"""``python -m course_tools.classroom nbgrader|otter``: see the package docstring."""

import argparse
import sys
from pathlib import Path

from ..grading.grader import POINTS, load_points
from . import nbgrader_course, otter_assignments


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_tools.classroom",
        description="Build the course for nbgrader or otter-grader from solutions/.",
    )
    parser.add_argument("platform", choices=["nbgrader", "otter"])
    parser.add_argument("--out", type=Path, help="default: build/nbgrader or build/otter")
    parser.add_argument(
        "--lessons", nargs="*", type=int, default=[], metavar="N", help="e.g. 3 5 (default: all)"
    )
    parser.add_argument(
        "--course-id",
        default=nbgrader_course.COURSE_ID,
        help="nbgrader's course id, the name the hub knows the course by (default: %(default)s)",
    )
    parser.add_argument("--solutions", type=Path, default=Path("solutions"))
    parser.add_argument("--points", type=Path, default=POINTS)
    args = parser.parse_args(argv)
    wanted = {f"{n:02d}" for n in args.lessons}
    every = sorted(args.solutions.glob("[0-9][0-9]_*.ipynb"))
    chosen = [p for p in every if not wanted or p.name[:2] in wanted]
    if not chosen:
        parser.error(f"no solution notebooks for lessons {args.lessons} in {args.solutions}")
    out = args.out or Path("build") / args.platform
    try:
        # The course's points.toml only changes the defaults; a file given by name must exist.
        optional = args.points == POINTS and not POINTS.is_file()
        points = load_points(None if optional else args.points)
        if args.platform == "nbgrader":
            written = nbgrader_course.build(out, chosen, points, args.course_id)
        else:
            written = otter_assignments.build(out, chosen, points)
    except (OSError, ValueError) as e:  # a missing points file, a lesson the build cannot read
        parser.error(str(e))
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
