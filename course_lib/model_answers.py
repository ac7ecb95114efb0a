"""The model answers of the written questions, shown on request: ``reveal("2.w1", answer)``.

A written question is answered in a markdown cell tagged ``free-text``. A lesson numbers its
written questions in order, ``2.w1``, ``2.w2``, ... (the ``w`` keeps them apart from the
checked exercises, ``2.1``), shows the id in the answer cell, and follows that cell with one
that calls :func:`reveal`.

A notebook's code cannot read a markdown cell, so ``reveal`` asks for the learner's answer
(or its gist) as text: it shows the model answer under it, to compare, and without one it
shows only how to use it. An untouched lesson run top to bottom thus prints no model answer.

The model answers are those of ``solutions/``, copied into :mod:`course_lib.model_answers_data`
when the lessons are built (``python -m course_tools.authoring lessons``). A class's release
leaves that module out, since the instructor grades the written answers
(:mod:`course_tools.release`): there ``reveal`` says so, and the lessons still run.
"""

import html
import re
from dataclasses import dataclass

from .lesson_format import ANSWER_PROMPT

try:
    from .model_answers_data import ANSWERS
except ImportError:  # a class's release, without the model answers
    ANSWERS: dict[str, dict[str, str]] = {}

TAG = "free-text"  # the tag of a written question's answer cell
REVEAL_TAG = "reveal"  # the tag of the cell after it, which calls reveal
ID = re.compile(r"(\d+)\.w(\d+)")
MIN_WORDS = 3  # fewer words than this is no answer yet ("idk", "not sure")

# Like the checks' boxes: text and background follow JupyterLab's theme, light or dark, with a
# light theme's elsewhere; the edge is a mid-tone that stands out from both.
_STYLE = (
    "border-left: 4px solid #3b73b9; color: var(--jp-content-font-color1, #1a1a1a); "
    "background-color: var(--jp-layout-color1, #ffffff); padding: 6px 10px; margin: 2px 0"
)


def question_id(lesson: int, number: int) -> str:
    """The id of a lesson's ``number``-th written question: ``question_id(2, 1)`` -> ``"2.w1"``."""
    return f"{lesson}.w{number}"


def reveal_cell(question: str) -> str:
    """The source of the cell a lesson puts after the answer cell of written question
    ``question``."""
    return (
        f"# ✍️ {question}: write your answer in the cell above first. Then paste it, or its gist,\n"
        "# between the triple quotes below and run this cell: the model answer appears under it.\n"
        "from course_lib.checks import reveal\n"
        "\n"
        'my_answer = """\n'
        "\n"
        '"""\n'
        f'reveal("{question}", my_answer)'
    )


@dataclass(frozen=True)
class ModelAnswer:
    """What :func:`reveal` shows: the learner's answer and the model answer; with ``model``
    None, only how to use ``reveal`` (no answer given yet), or that this copy of the course
    has no model answers (``available`` False)."""

    question: str
    answer: str | None = None
    model: str | None = None  # the model answer as markdown
    model_html: str | None = None
    available: bool = True

    @property
    def shown(self) -> bool:
        return self.model is not None

    def _note(self) -> str:
        return _how(self.question) if self.available else LEFT_OUT

    def __str__(self) -> str:
        if not self.shown:
            return f"✍️ Written question {self.question}: {self._note()}"
        return (
            f"✍️ Written question {self.question}\n\nYour answer:\n{self.answer}\n\n"
            f"Model answer:\n{self.model}"
        )

    __repr__ = __str__

    def _repr_html_(self) -> str:
        emoji = '<span aria-hidden="true">✍️ </span>'  # the words alone for a screen reader
        title = f"<strong>{emoji}Written question {self.question}</strong>"
        if not self.shown:
            how = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(self._note()))
            return f'<div style="{_STYLE}">{title}: {how}</div>'
        return (
            f'<div style="{_STYLE}" role="region" aria-label="Written question {self.question}: '
            f'your answer and the model answer">{title}'
            f"<p><strong>Your answer</strong></p>"
            f'<blockquote style="white-space: pre-wrap; margin: 0 0 0 1em">'
            f"{html.escape(self.answer)}</blockquote>"
            f"<p><strong>Model answer</strong></p>{self.model_html}</div>"
        )


LEFT_OUT = (
    "this copy of the course has no model answers. A class's copy leaves them out, since the "
    "instructor reads and grades the written answers."
)


def _how(question: str) -> str:
    return (
        "the model answer appears here once you have written yours. Write it in the answer cell "
        "above, paste it (or its gist, in a few words at least) between the triple quotes of "
        f'`my_answer = """..."""` and run this cell again. (`reveal("{question}", my_answer)` '
        "cannot read the answer cell itself, so it asks for your answer here.)"
    )


def reveal(question: str, answer: str | None = None) -> ModelAnswer:
    """The model answer to written question ``question`` ("2.w1"), shown under ``answer``.

    Without an answer of at least a few words (the cell's blank or the lesson's prompt do not
    count), it says how to use it instead; in a copy of the course without model answers, it
    says so.

    Raises:
        TypeError: ``question`` or ``answer`` is not a str.
        ValueError: there is no written question ``question``.
    """
    if not isinstance(question, str):
        raise TypeError(f'question must be a str such as "2.w1"; got {type(question).__name__}')
    if answer is not None and not isinstance(answer, str):
        raise TypeError(f"answer must be your answer as a str; got {type(answer).__name__}")
    if not ANSWERS:  # a class's release
        if not ID.fullmatch(question):
            raise ValueError(f'question must be a written question, "2.w1"; got {question!r}')
        return ModelAnswer(question, available=False)
    if question not in ANSWERS:
        lesson = question.split(".")[0]
        known = [q for q in ANSWERS if q.split(".")[0] == lesson] or list(ANSWERS)
        raise ValueError(
            f"question must be one of the written questions {', '.join(known)}; got {question!r}"
        )
    text = (answer or "").replace(ANSWER_PROMPT, "").strip()
    if len(text.split()) < MIN_WORDS:
        return ModelAnswer(question)
    model = ANSWERS[question]  # each text between line breaks of its own
    return ModelAnswer(question, text, model["markdown"].strip(), model["html"].strip())
