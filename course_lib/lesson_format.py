"""What a lesson notebook looks like to the tools that read it: its stubs, prompts and versions.

The authoring tool (``course_tools.authoring``) writes lessons in this shape; the learner's
workspace command (:mod:`course_lib.workspace`) and the grader read them back.
"""

import hashlib
import re

STUB_COMMENT = "# YOUR CODE HERE"
ANSWER_PROMPT = "*Your answer here (double-click this cell to edit it).*"
COURSE = "course"  # the notebook metadata key of the lesson's number, version and exercises


def is_exercise(cell) -> bool:
    """Whether a lesson cell is one the learner answers: a code stub or a written-answer prompt.

    The marker must match the cell type: the lessons' introductions mention ``# YOUR CODE
    HERE`` in markdown, and those cells are not exercises.
    """
    markers = {"code": STUB_COMMENT, "markdown": ANSWER_PROMPT}
    return cell.cell_type in markers and markers[cell.cell_type] in cell.source


def fingerprint(text: str, length: int = 8) -> str:
    """The first ``length`` hex characters of the sha256 of ``text``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def recorded_version(nb) -> str | None:
    """The lesson version a notebook records in its metadata; None if it records none."""
    course = nb.get("metadata", {}).get(COURSE) if isinstance(nb, dict) else None
    version = course.get("version") if isinstance(course, dict) else None
    return version if isinstance(version, str) else None


# Multiple choices -----------------------------------------------------------------------------
#
# A lesson lists the options of a multiple choice in markdown, one per line: "- **b.** text".
# The answer is a letter in a variable named after the exercise: answer_3_1 = "b" for 3.1.

OPTION = re.compile(r"^- \*\*([a-z])\.\*\* (.+)$", re.MULTILINE)


def listed_options(nb) -> tuple[tuple[str, str], ...]:
    """Every multiple-choice option the notebook's markdown lists, as (letter, text), in order."""
    return tuple(
        (letter, text.strip())
        for cell in nb.get("cells", [])
        if cell.get("cell_type") == "markdown"
        for letter, text in OPTION.findall(_text(cell.get("source", "")))
    )


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def answer_name(exercise_id: str) -> str:
    """The variable that holds a multiple choice's answer: ``"3.1"`` -> ``"answer_3_1"``."""
    if not isinstance(exercise_id, str) or not re.fullmatch(r"\d+\.\d+", exercise_id):
        raise ValueError(f"exercise_id should look like '3.1'; got {exercise_id!r}")
    return "answer_" + exercise_id.replace(".", "_")


def choice_letter(answer) -> str | None:
    """The letter a multiple-choice answer names (``"b"``, ``" (B). "``...), else None."""
    if not isinstance(answer, str):
        return None
    letter = answer.strip().strip("().").lower()
    return letter if re.fullmatch(r"[a-z]", letter) else None


def with_letter(source: str, name: str, moves: dict[str, str]) -> tuple[str, str, str] | None:
    """The cell ``source`` with the letter assigned to ``name`` moved as ``moves`` says
    (``{letter then: letter now}``), and the two letters; None if no such assignment is found.

    The letter keeps how it was written (``"(B)"`` -> ``"(C)"``); a letter ``moves`` does not
    mention stays as it is.
    """
    pattern = re.compile(rf"^(\s*{re.escape(name)}\s*=\s*)(['\"])([^'\"\n]*)\2", re.MULTILINE)
    found = pattern.search(source)
    then = choice_letter(found[3]) if found else None
    if then is None:
        return None
    now = moves.get(then, then)
    capital = found[3].strip("(). ").isupper()
    written = re.sub(r"[A-Za-z]", now.upper() if capital else now, found[3])
    start, end = found.span(3)
    return source[:start] + written + source[end:], then, now
