"""Reading a submission without running it: its lesson, answer cells and free-text answers.

Nothing here executes the student's code: the notebook is parsed as JSON and its cells as
Python syntax trees.
"""

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course_lib.checks import EXERCISES, MIME_TYPE, PASSED, exercises
from course_lib.lesson_format import ANSWER_PROMPT

FREE_TEXT = "free-text"


class InvalidNotebook(Exception):
    """The file is not a notebook that can be graded; the message says why."""


@dataclass(frozen=True)
class FreeText:
    question: str
    answer: str | None  # None: the student left the prompt as it was, or deleted the cell


def read(path: Path) -> nbformat.NotebookNode:
    """The notebook, validated; raises :class:`InvalidNotebook` with a readable reason."""
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # JSON errors, schema errors, unreadable files: all mean "invalid"
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InvalidNotebook(f"{path.name} is not a valid notebook ({reason})") from None
    return nb


def lesson_of(path: Path, nb, explicit: int | None = None) -> int | None:
    """The lesson a submission belongs to: ``--lesson``, else the file name, else its content.

    The file-name prefix (``03_...``) counts only if that lesson has exercises; a renamed
    file is recognised by its ``check("N.k", ...)`` calls, then by a ``# Lesson N`` title.
    """
    if explicit is not None:
        return explicit
    if lesson_in_name(path) is not None:
        return lesson_in_name(path)
    known = {int(e.split(".")[0]) for e in EXERCISES}
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    called = Counter(int(n) for n in re.findall(r"check\(\s*[\"'](\d+)\.\d+", code))
    called = [n for n, _ in called.most_common() if n in known]
    if called:
        return called[0]
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    title = re.search(r"^#\s*Lesson\s+(\d+)", text, re.MULTILINE)
    return int(title.group(1)) if title and int(title.group(1)) in known else None


def lesson_in_name(path: Path) -> int | None:
    """The lesson a file's name gives (``03_...``), if that lesson has exercises."""
    prefix = re.match(r"(\d+)_", Path(path).name)
    known = {int(e.split(".")[0]) for e in EXERCISES}
    return int(prefix.group(1)) if prefix and int(prefix.group(1)) in known else None


def claimed_passes(nb) -> set[str]:
    """The exercises whose stored outputs show a passed check, as the notebook was handed in.

    The grader never trusts them (it clears every output and runs the notebook); a claim the
    run does not reproduce means outputs edited by hand, or answers changed after checking.
    """
    claimed = set()
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = out.get("data", {})
            shown = data.get(MIME_TYPE)
            if isinstance(shown, dict) and shown.get("status") == PASSED and "exercise" in shown:
                claimed.add(str(shown["exercise"]))
            text = "".join(str(data.get(kind, "")) for kind in ("text/plain", "text/html"))
            claimed |= set(_PASSED_BOX.findall(text + "".join(out.get("text", ""))))
    return claimed


# How a passed check reads in a notebook (``Result``), in text or in HTML.
_PASSED_BOX = re.compile(r"✓ Passed(?:</strong>)? \(exercise (\d+\.\d+)\)")


def lesson_notebook(folder: Path, lesson: int) -> Path | None:
    """``folder/NN_*.ipynb`` for a lesson (``solutions/`` or ``lessons/``), if there is one."""
    found = sorted(Path(folder).glob(f"{lesson:02d}_*.ipynb"))
    return found[0] if found else None


def code_cells(nb) -> list[str]:
    """The sources of the notebook's code cells, in order: what the exercises' rules read."""
    return [c.source for c in nb.cells if c.cell_type == "code"]


def _question(source: str) -> str:
    return source.replace(ANSWER_PROMPT, "").strip()


def free_text(nb, lesson_nb=None) -> list[FreeText]:
    """The free-text answers, matched to the lesson's questions by cell id, else by order."""
    tagged = [c for c in nb.cells if FREE_TEXT in c.metadata.get("tags", [])]
    if lesson_nb is None:  # no lesson to compare with: the student's tagged cells as they are
        questions = [(c.get("id"), c.source.split("\n\n")[0].strip()) for c in tagged]
    else:
        cells = [c for c in lesson_nb.cells if FREE_TEXT in c.metadata.get("tags", [])]
        questions = [(c.get("id"), _question(c.source)) for c in cells]
    by_id = {c.get("id"): c for c in nb.cells if c.cell_type == "markdown"}
    answers = []
    for order, (cell_id, question) in enumerate(questions):
        cell = by_id.get(cell_id) or (tagged[order] if order < len(tagged) else None)
        text = None if cell is None else re.sub(r"<!--.*?-->", "", cell.source).strip()
        if text is not None and text.startswith(question):
            text = text[len(question) :].strip()
        if text is not None and text.replace(ANSWER_PROMPT, "").strip() in ("", question):
            text = None
        answers.append(FreeText(question, text))
    return answers


def lesson_exercises(lesson: int):
    """The lesson's exercises; a ValueError if the lesson has none registered."""
    found = exercises(lesson)
    if not found:
        known = sorted({e.split(".")[0] for e in EXERCISES}, key=int)
        raise ValueError(
            f"lesson {lesson} has no exercises; lessons with checks: {', '.join(known)}"
        )
    return found
