"""What a lesson notebook looks like to the tools that read it: its stubs, prompts and versions.

The authoring tool (``course_tools.authoring``) writes lessons in this shape; the learner's
workspace command (:mod:`course_lib.workspace`) and the grader read them back.
"""

import hashlib

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
