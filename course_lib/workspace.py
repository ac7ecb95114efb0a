"""The learner's working copies of the lessons.

``lessons/`` holds the pristine notebooks and is never edited; learners work in copies in
``workspace/`` (ignored by git). ``prepare`` copies every lesson that is not there yet and
never overwrites a learner's file; ``restore`` puts back a fresh copy of one lesson and
keeps the old one beside it as a backup.

Commands (run from the repository root)::

    python -m course_lib.workspace prepare        # what `make lab` runs first
    python -m course_lib.workspace restore 03     # fresh copy of lesson 03 (`make restore LESSON=03`)
"""

import argparse
import shutil
import sys
import time
from pathlib import Path

LESSONS, WORKSPACE = Path("lessons"), Path("workspace")


def prepare(lessons: Path = LESSONS, workspace: Path = WORKSPACE) -> list[Path]:
    """Copy the lessons missing from the workspace; returns the new copies."""
    workspace.mkdir(exist_ok=True)
    copied = []
    for source in sorted(lessons.glob("*.ipynb")):
        target = workspace / source.name
        if not target.exists():
            shutil.copy2(source, target)
            copied.append(target)
    return copied


def find_lesson(name: str, lessons: Path = LESSONS) -> Path:
    """The lesson a learner means by ``"03"``, ``"3"``, ``"03_scaled"`` or the full file name."""
    key = name.removesuffix(".ipynb")
    if key.isdigit():
        key = f"{int(key):02d}"
    matches = sorted(p for p in lessons.glob("*.ipynb") if p.stem.startswith(key))
    if len(matches) != 1:
        available = ", ".join(p.stem for p in sorted(lessons.glob("*.ipynb")))
        found = "no lesson" if not matches else f"{len(matches)} lessons"
        raise ValueError(f"lesson {name!r} matches {found}; the lessons are: {available}")
    return matches[0]


def restore(
    name: str, lessons: Path = LESSONS, workspace: Path = WORKSPACE
) -> tuple[Path, Path | None]:
    """Fresh copy of one lesson in the workspace; returns (copy, backup of the old one or None)."""
    source = find_lesson(name, lessons)
    workspace.mkdir(exist_ok=True)
    target, backup = workspace / source.name, None
    if target.exists():
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = target.with_name(f"{target.stem}.backup-{stamp}.ipynb")
        n = 1
        while backup.exists():
            n += 1
            backup = target.with_name(f"{target.stem}.backup-{stamp}-{n}.ipynb")
        target.rename(backup)
    shutil.copy2(source, target)
    return target, backup


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.workspace", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("prepare", help="copy the lessons not yet in workspace/")
    restore_parser = sub.add_parser("restore", help="fresh copy of one lesson; the old one is kept")
    restore_parser.add_argument("lesson", help='e.g. "03" or "03_scaled_dot_product_attention"')
    args = parser.parse_args(argv)
    if args.command == "prepare":
        for path in prepare():
            print(f"copied {path}")
        return 0
    try:
        target, backup = restore(args.lesson)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    if backup:
        print(f"your previous copy is now {backup}")
    print(f"fresh copy: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
