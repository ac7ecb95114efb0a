"""What every exercise check shares: the result, the exercise record, and how a check runs.

A check never raises into the notebook. It returns a :class:`Result` whose status is
"passed", "failed" or "not done", with a message that names the likely mistake.
Exercise-specific code (the ``verify`` functions in ``lessonNN.py``) signals outcomes with
two exceptions: :class:`NotDone` (the answer is still the lesson's stub) and
:class:`Mismatch` (the answer is wrong; its text says how). Any other exception comes from
the learner's own code and is reported with the line it came from.

Every ``verify`` runs inside ``_purity.untouched``: whatever it does, the learner's random
states, default dtype, thread count, grad mode and answers are as they were afterwards.
"""

import html
import re
import sysconfig
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ._purity import untouched

PASSED, FAILED, NOT_DONE = "passed", "failed", "not done"

# Machine-readable copy of a result in the notebook's outputs, read by the test suite.
MIME_TYPE = "application/vnd.attention-course.check+json"

_LOOK = {  # symbol and word, so the outcome never depends on colour alone
    PASSED: ("✓", "Passed", "#0b6e4f", "#e8f4ef"),
    FAILED: ("✗", "Not yet", "#8a3b00", "#fdf0e6"),
    NOT_DONE: ("…", "Not done yet", "#44475a", "#f0f0f4"),
}


class NotDone(Exception):
    """The answer is still the lesson's stub."""


class Mismatch(Exception):
    """The answer is wrong; the message explains how."""


@dataclass(frozen=True)
class Result:
    """The outcome of one check: ``passed`` (bool), ``status`` and a ``message``."""

    exercise: str
    status: str
    message: str

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def __str__(self) -> str:
        symbol, word, *_ = _LOOK[self.status]
        return f"{symbol} {word} (exercise {self.exercise}): {self.message}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        symbol, word, ink, paper = _LOOK[self.status]
        body = html.escape(self.message).replace("\n", "<br>")
        body = re.sub(r"`([^`]+)`", r"<code>\1</code>", body)
        return (
            f'<div style="border-left: 4px solid {ink}; background: {paper}; color: #1a1a1a; '
            f'padding: 6px 10px; margin: 2px 0">'
            f'<strong style="color: {ink}">{symbol} {word}</strong> '
            f"(exercise {html.escape(self.exercise)}): {body}</div>"
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {
            "text/plain": str(self),
            "text/html": self._repr_html_(),
            MIME_TYPE: {"exercise": self.exercise, "status": self.status},
        }


@dataclass(frozen=True)
class Exercise:
    """One exercise: where its answer lives and how to check it.

    Args:
        id: the number learners type, e.g. ``"3.2"``.
        title: a few words, e.g. ``"Apply: one query, two keys"``.
        names: the notebook variables holding the answer, in the order ``check`` takes them;
            the instructor's grader reads the same names.
        verify: takes the answers; returns the success message, or raises
            :class:`NotDone` / :class:`Mismatch`.
        hints: shown one at a time by ``hint(id)``, from gentle to explicit.
        kind: ``"code"`` or ``"choice"`` (multiple choice).
    """

    id: str
    title: str
    names: tuple[str, ...]
    verify: Callable[..., str]
    hints: tuple[str, ...]
    kind: str = "code"

    def run(self, *answers) -> Result:
        if len(answers) != len(self.names):
            wanted = ", ".join(self.names)
            return Result(
                self.id,
                FAILED,
                f'check("{self.id}", ...) takes {len(self.names)} answer(s), {wanted}; '
                f'got {len(answers)}. Write: check("{self.id}", {wanted})',
            )
        unset = [name for name, a in zip(self.names, answers, strict=True) if a is None]
        if unset:
            return Result(self.id, NOT_DONE, _not_done(unset))
        try:
            with untouched(answers):  # a check must leave the learner's session as it was
                message = self.verify(*answers)
            return Result(self.id, PASSED, message)
        except NotDone as e:
            return Result(self.id, NOT_DONE, str(e) or _not_done(self.names))
        except NotImplementedError:
            return Result(self.id, NOT_DONE, _not_done(self.names))
        except Mismatch as e:
            return Result(self.id, FAILED, str(e))
        except Exception as e:  # the learner's code failed: say where, without a traceback
            return Result(self.id, FAILED, f"your code raised {describe_error(e)}")


def _not_done(names) -> str:
    listed = ", ".join(f"`{n}`" for n in names)
    return (
        f"replace the `# YOUR CODE HERE` part that defines {listed}, run that cell, then this one."
    )


_LIBRARY_DIRS = tuple(
    str(Path(p).resolve())
    for p in {sysconfig.get_path(k) for k in ("stdlib", "purelib", "platlib")}
) + (str(Path(__file__).resolve().parent.parent),)


def _is_learners(filename: str) -> bool:
    """A frame of the learner's code: not the standard library, an installed package or course_lib."""
    return not str(Path(filename).resolve()).startswith(_LIBRARY_DIRS)


def describe_error(e: BaseException) -> str:
    """``"ZeroDivisionError: division by zero (line 3 of your cell)"``: type, text, and where."""
    text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    frames = [f for f in traceback.extract_tb(e.__traceback__) if _is_learners(f.filename)]
    if frames:
        frame = frames[-1]
        where = "your cell" if "ipykernel" in frame.filename else frame.filename.split("/")[-1]
        text += f" (line {frame.lineno} of {where})"
    return text


def call(fn, *args, during: str = "", **kwargs):
    """Call the learner's function; a stub means "not done", a crash becomes a Mismatch."""
    if not callable(fn):
        raise Mismatch(f"expected a function; got {type(fn).__name__}")
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise NotDone() from None
    except Exception as e:
        context = f" when called {during}" if during else ""
        raise Mismatch(f"your function raised {describe_error(e)}{context}.") from None


def choice(correct: str, explanations: dict[str, str]) -> Callable[[str], str]:
    """A ``verify`` for a multiple-choice question: each option explains itself.

    Args:
        correct: the letter of the right option.
        explanations: letter -> why that option is right or wrong.
    """
    letters = ", ".join(f'"{k}"' for k in explanations)

    def verify(answer) -> str:
        letter = answer.strip().strip("().").lower() if isinstance(answer, str) else None
        if letter not in explanations:
            raise Mismatch(f"answer with one of {letters} (a string); got {answer!r}")
        if letter != correct:
            raise Mismatch(f"({letter}) is not the best answer. {explanations[letter]}")
        return f"({letter}) is right. {explanations[letter]}"

    return verify
