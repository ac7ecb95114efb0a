"""Command line: ``python -m course_tools.site [--solutions] [--out DIR] [--lessons 03 05]``."""

import argparse
import sys
import time
from pathlib import Path

from . import __doc__ as about
from . import build_site


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_tools.site",
        description=about,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--solutions", action="store_true", help="the instructors' site, from solutions/"
    )
    parser.add_argument(
        "--out", type=Path, help="output folder (default: build/site or build/site-solutions)"
    )
    parser.add_argument(
        "--lessons", nargs="+", metavar="NN", help="only these lessons, e.g. 03 05 (default: all)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="notebooks run at once (default: 2)")
    parser.add_argument(
        "--npm-dir", type=Path, default=Path("build/npm"), help="where npm installs the scripts"
    )
    args = parser.parse_args(argv)
    source = Path("solutions" if args.solutions else "lessons")
    out = args.out or Path("build/site-solutions" if args.solutions else "build/site")
    start = time.perf_counter()
    try:
        failures = build_site(
            source,
            out,
            args.lessons,
            instructors=args.solutions,
            jobs=args.jobs,
            npm_dir=args.npm_dir,
        )
    except (ValueError, RuntimeError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    for failure in failures:
        print(f"\nFAILED {failure}", file=sys.stderr)
    if failures:
        print(f"\nno site written after {seconds:.1f} s: {out} is as it was", file=sys.stderr)
        return 1
    print(f"{out / 'index.html'} written in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
