"""The learner's working copies of the lessons.

``lessons/`` holds the pristine notebooks and is never edited; learners work in copies in
``workspace/`` (ignored by git). ``prepare`` copies every lesson that is not there yet and
never overwrites a learner's file; it lists the copies made from an older version of their
lesson (each lesson records its version: see ``course_lib.lesson_format``), and which of
them list their multiple-choice options in another order than the new version. ``update``
writes the new version of one lesson with the learner's answers carried over, a
multiple-choice letter changed to the letter its option has now (``course_lib.choice_history``);
``restore`` puts back a fresh copy. Both keep the old copy beside the new one as a backup.

Commands (run from the repository root)::

    python -m course_lib.workspace prepare     # what `make lab` runs first
    python -m course_lib.workspace update 03   # new version, answers kept (`make update LESSON=03`)
    python -m course_lib.workspace restore 03  # fresh copy of lesson 03 (`make restore LESSON=03`)
"""

import argparse
import json
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from . import choice_history
from .lesson_format import (
    ANSWER_PROMPT,
    COURSE,
    STUB_COMMENT,
    answer_name,
    fingerprint,
    is_exercise,
    with_letter,
)

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


def version_of(notebook: Path) -> str | None:
    """The lesson version a notebook file records; None if it has none or cannot be read."""
    try:
        course = json.loads(notebook.read_text(encoding="utf-8"))["metadata"][COURSE]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return course.get("version") if isinstance(course, dict) else None


def outdated(lessons: Path = LESSONS, workspace: Path = WORKSPACE) -> list[Path]:
    """The learner's copies made from an older version of their lesson, or before versions.

    Only files named like a lesson count (not backups or the learner's own notebooks), and
    only lessons that record a version.
    """
    found = []
    for source in sorted(lessons.glob("*.ipynb")):
        copy, version = workspace / source.name, version_of(source)
        if version and copy.exists() and version_of(copy) != version:
            found.append(copy)
    return found


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
    target = workspace / source.name
    backup = _keep_as_backup(target) if target.exists() else None
    shutil.copy2(source, target)
    return target, backup


def _keep_as_backup(copy: Path) -> Path:
    """Rename ``copy`` to ``NAME.backup-STAMP.ipynb`` (never over an earlier backup)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = copy.with_name(f"{copy.stem}.backup-{stamp}.ipynb")
    n = 1
    while backup.exists():
        n += 1
        backup = copy.with_name(f"{copy.stem}.backup-{stamp}-{n}.ipynb")
    copy.rename(backup)
    return backup


@dataclass(frozen=True)
class Update:
    """What ``update`` did to one lesson's copy in the workspace.

    ``backup`` is the old copy (None if there was none, or it was already current);
    ``carried`` labels the answers carried into the new version, ``lost`` those whose cell
    is gone from it or is no longer an exercise: they are only in the backup. ``relettered``
    says which multiple-choice letters were changed to their option's new letter
    (``'3.1: "b" is now "c"'``); ``unsure`` names the multiple choices answered in a copy whose
    letters cannot be read (its version is not on record): the learner checks them.
    """

    copy: Path
    backup: Path | None = None
    carried: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()
    current: bool = False
    relettered: tuple[str, ...] = ()
    unsure: tuple[str, ...] = ()


def update(name: str, lessons: Path = LESSONS, workspace: Path = WORKSPACE) -> Update:
    """Write the new version of one lesson into the workspace, with the learner's answers.

    An answer (an exercise cell the learner changed) replaces the new lesson's cell with the
    same id if that cell is still an exercise of the same type; the old copy is kept as a
    backup either way, so an answer that cannot be carried over is not lost.
    """
    source = find_lesson(name, lessons)
    target = workspace / source.name
    if not target.exists():
        return Update(restore(name, lessons, workspace)[0])
    if version_of(source) is not None and version_of(target) == version_of(source):
        return Update(target, current=True)
    mine, new = _read_copy(target, name), nbformat.read(source, as_version=4)
    carried, lost = _carry_answers(mine, new)
    relettered, unsure = _move_letters(new, choice_history.letters(mine, new, _number(source)))
    backup = _keep_as_backup(target)
    nbformat.write(new, target)
    return Update(target, backup, tuple(carried), tuple(lost), False, relettered, unsure)


def _read_copy(copy: Path, name: str) -> nbformat.NotebookNode:
    """The learner's copy as a notebook; a ValueError saying what to do if it cannot be read."""
    try:
        return nbformat.read(copy, as_version=4)
    except Exception as e:  # nbformat raises several kinds for a damaged file
        raise ValueError(
            f"cannot read your copy {copy} ({e}); `make restore LESSON={name}` starts the "
            "lesson afresh and keeps that file as a backup"
        ) from e


def _answers(mine: nbformat.NotebookNode, new: nbformat.NotebookNode) -> list:
    """The cells of the learner's copy that hold an answer: exercise cells they changed.

    A versioned copy records a fingerprint of each blank exercise cell. A copy made before
    versions does not: there, an exercise cell (by its marker, or by its id in the new
    lesson) is an answer if it differs from the new lesson's cell and no longer looks blank.
    """
    course = mine.metadata.get(COURSE)
    blank = course.get("exercises") if isinstance(course, dict) else None
    if isinstance(blank, dict):
        return [
            c for c in mine.cells if c.get("id") in blank and fingerprint(c.source) != blank[c.id]
        ]
    new_sources = {c.get("id"): c.source for c in new.cells}
    new_exercises = {c.get("id") for c in new.cells if is_exercise(c)}
    return [
        c
        for c in mine.cells
        if (is_exercise(c) or c.get("id") in new_exercises)
        and c.source != new_sources.get(c.get("id"))
        and not _looks_blank(c)
    ]


STUB_LINE = re.compile(r"\s*(raise NotImplementedError\(\)|\w+ = None)\s*$")


def _looks_blank(cell) -> bool:
    """Whether an exercise cell still looks as authoring wrote it (for copies without versions).

    A written answer still shows the prompt; a code stub still has a stub line (``raise
    NotImplementedError()`` or ``name = None``) right after each ``# YOUR CODE HERE``.
    """
    if cell.cell_type == "markdown":
        return ANSWER_PROMPT in cell.source
    lines = [line.strip() for line in cell.source.splitlines()] + [""]
    after = [lines[i + 1] for i, line in enumerate(lines[:-1]) if line == STUB_COMMENT]
    return bool(after) and all(STUB_LINE.match(line) for line in after)


def _cell(nb: nbformat.NotebookNode, cell_id: str):
    """The cell of ``nb`` with this id, or None."""
    return next((c for c in nb.cells if c.get("id") == cell_id), None)


def _carry_answers(mine, new) -> tuple[list[str], list[str]]:
    """Put the learner's answers into ``new`` (in place); returns (carried, lost) labels."""
    carried, lost = [], []
    for answer in _answers(mine, new):
        cell = _cell(new, answer.get("id"))
        if cell is None or cell.cell_type != answer.cell_type or not is_exercise(cell):
            lost.append(_label(answer))
            continue
        cell.source = answer.source
        if "attachments" in answer:  # images pasted into a written answer
            cell.attachments = answer.attachments
        carried.append(_label(answer))
    return carried, lost


CHOICE_ANSWER = re.compile(r"^\s*answer_(\d+)_(\d+)\s*=\s*['\"]", re.MULTILINE)


def _move_letters(new, letters: choice_history.Letters) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Change the carried multiple-choice letters in ``new`` (in place) to their options'
    letters now; returns (what changed, the answered questions whose letters cannot be read)."""
    code = [c for c in new.cells if c.cell_type == "code"]
    answered = [f"{m[1]}.{m[2]}" for c in code for m in CHOICE_ANSWER.finditer(c.source)]
    if not letters.readable:
        return (), tuple(answered)
    changed = []
    for cell in code:
        for exercise_id, moves in letters.moves.items():
            moved = with_letter(cell.source, answer_name(exercise_id), moves)
            if moved and moved[1] != moved[2]:
                cell.source = moved[0]
                changed.append(f'{exercise_id}: "{moved[1]}" is now "{moved[2]}"')
    return tuple(changed), ()


def _number(lesson: Path) -> int:
    """The lesson's number from its file name (``03_...`` -> 3); 0 if it has none."""
    prefix = lesson.name.split("_")[0]
    return int(prefix) if prefix.isdigit() else 0


def _label(cell, width: int = 60) -> str:
    """A one-line reminder of a cell: its first line of code, or the start of its text."""
    if cell.cell_type == "code":
        lines = [line.strip() for line in cell.source.splitlines()]
        text = next((line for line in lines if line and not line.startswith("#")), "")
    else:
        text = " ".join(re.sub(r"<!--.*?-->", " ", cell.source, flags=re.S).split())
    text = text or "(empty cell)"
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


RELOAD = "If it is open in JupyterLab, use File > Reload Notebook from Disk before you save."


def choice_news(copy: Path, lessons: Path = LESSONS) -> str:
    """What the new version of a copy's lesson changes in its multiple choices, in a few words;
    "" if every letter still names the option it named."""
    lesson = lessons / copy.name
    try:
        mine = nbformat.read(copy, as_version=4)
    except Exception:  # a damaged copy (nbformat raises several kinds): its letters are unknown
        return "its multiple-choice options may be in another order"
    letters = choice_history.letters(mine, nbformat.read(lesson, as_version=4), _number(lesson))
    if not letters.readable:
        return "its multiple-choice options may be in another order"
    if letters.moves:
        moved = sorted(letters.moves, key=lambda e: [int(n) for n in e.split(".")])
        return f"the options of {_choices(moved)} are in a new order"
    return ""


def _report_prepare(copied: list[Path], old: list[Path], lessons: Path = LESSONS) -> None:
    """What ``make lab`` prints before JupyterLab starts: new copies, then outdated ones."""
    for path in copied:
        print(f"copied {path}")
    if not old:
        return
    if len(old) == 1:
        print("A newer version of this lesson is out (your copy was left as it is):")
    else:
        print("Newer versions of these lessons are out (your copies were left as they are):")
    news = [choice_news(copy, lessons) for copy in old]
    for copy, choices in zip(old, news, strict=True):
        notes = [] if version_of(copy) else ["copied before lessons had versions"]
        notes += [choices] if choices else []
        print(f"  {copy.stem}" + (f"  ({'; '.join(notes)})" if notes else ""))
    if any(news):
        print(
            "Warning: an answer to a multiple choice is a letter, and in a new version a letter\n"
            "can name another option. `make update` changes your letters to the letters their\n"
            "options have now, and lists any answer you should check."
        )
    n = f"{_number(old[0]):02d}"
    print(f"To update a lesson and keep your answers:  make update LESSON={n}")
    print(f"To start a lesson again from scratch:      make restore LESSON={n}")
    print("Either way your current copy is kept as a backup.")


def _report_update(result: Update) -> None:
    """What ``make update`` prints: what was carried over, what was not, where the backup is."""
    if result.current:
        print(f"{result.copy} is already the current version: nothing to update.")
        return
    if result.backup is None:
        print(f"copied {result.copy} (you had no copy of this lesson yet)")
        return
    print(f"Updated {result.copy} to the new version.")
    if result.carried:
        print(f"Carried over {len(result.carried)} of your answers:")
        print("\n".join(f"  {text}" for text in result.carried))
    else:
        print("You had no answers to carry over.")
    if result.lost:
        print("Not carried over (the new version has no such exercise); they are in the backup:")
        print("\n".join(f"  {text}" for text in result.lost))
    if result.relettered:
        print("Options of multiple choices moved; your letters now name the options you chose:")
        print("\n".join(f"  {text}" for text in result.relettered))
    if result.unsure:
        print(
            f"Check your answers to {_choices(result.unsure)}: your copy lists "
            "the options differently\nfrom the new version, so a letter may now name another "
            "option (the backup shows the ones you chose from)."
        )
    print(f"Your previous copy is kept as {result.backup}")
    print(RELOAD)


def _choices(ids) -> str:
    """``multiple choice 3.1`` or ``multiple choices 3.1 and 3.5``."""
    ids = list(ids)
    if len(ids) == 1:
        return f"multiple choice {ids[0]}"
    return f"multiple choices {', '.join(ids[:-1])} and {ids[-1]}"


def _report_restore(target: Path, backup: Path | None) -> None:
    print(f"Fresh copy: {target}")
    if backup:
        print(f"Your previous copy is kept as {backup}")
        print(RELOAD)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.workspace", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("prepare", help="copy the lessons not yet in workspace/, list outdated copies")
    for command, text in [
        ("update", "new version of one lesson with your answers; the old copy is kept"),
        ("restore", "fresh copy of one lesson; the old one is kept"),
    ]:
        one = sub.add_parser(command, help=text)
        one.add_argument("lesson", nargs="?", help='e.g. "03" or "03_scaled_dot_product_attention"')
    args = parser.parse_args(argv)
    if args.command == "prepare":
        _report_prepare(prepare(), outdated(), LESSONS)
        return 0
    if not args.lesson:  # `make restore` without LESSON=: say how to name one
        print(f"name a lesson: make {args.command} LESSON=03", file=sys.stderr)
        return 2
    try:
        if args.command == "update":
            _report_update(update(args.lesson))
        else:
            _report_restore(*restore(args.lesson))
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
