"""What every exercise check shares: the result, the exercise, its declaration and its calls.

A verifier (in ``lessonNN.py``, declared by :func:`exercise` or :func:`multiple_choice`)
returns its success message or raises :class:`NotDone` (still the stub) or :class:`Mismatch`
(wrong; its text says how); any other exception is the learner's, reported with its line.
It runs inside ``_purity.untouched``, so the learner's state is as it was afterwards.
"""

import copy
import dataclasses
import dis
import html
import inspect
import re
import sysconfig
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..lesson_format import choice_letter
from ._plain import problem
from ._purity import untouched
from ._remote import Learner, Stopped, closure_globals
from ._rules import Rules, written_uses

PASSED, FAILED, NOT_DONE = "passed", "failed", "not done"

# What a failed check's message is, for the course's figures on its checks (the mutation
# harness counts how often a wrong answer gets a named mistake rather than only a number).
MISTAKE = "mistake"  # names the likely mistake ("softmax over the wrong axis?")
DIFFERENCE = "difference"  # says where and by how much a value is off
SHAPE = "shape"  # a shape or a number of values is wrong
TYPE = "type"  # the answer is not the kind of object asked for
EXCEPTION = "exception"  # the learner's code raised; the message gives its line
RULE = "rule"  # the answer uses what the exercise rules out (see _rules.Rules)
DIAGNOSES = (MISTAKE, DIFFERENCE, SHAPE, TYPE, EXCEPTION, RULE)

# Machine-readable copy of a result in the notebook's outputs, read by the test suite.
MIME_TYPE = "application/vnd.attention-course.check+json"

_LOOK = {  # symbol and word, so the outcome never depends on colour alone; then the colour
    # of the box's edge, a mid-tone that stands out from light and dark pages alike (3:1 or more
    # against white and JupyterLab's dark #111111), and the same colour faintly as its tint
    PASSED: ("✓", "Passed", "#2f8a4c", "rgba(47, 138, 76, 0.12)"),
    FAILED: ("✗", "Not yet", "#c05f00", "rgba(192, 95, 0, 0.12)"),
    NOT_DONE: ("…", "Not done yet", "#7d7d8c", "rgba(125, 125, 140, 0.12)"),
}
# The box's text and background follow JupyterLab's theme, light or dark; elsewhere (an HTML
# export, another notebook viewer) they fall back to a light theme's, together.
TEXT_COLOUR = "var(--jp-content-font-color1, #1a1a1a)"
BACKGROUND = "var(--jp-layout-color1, #ffffff)"


class NotDone(Exception):
    """The answer is still the lesson's stub."""


class Mismatch(Exception):
    """The answer is wrong; the message explains how, and ``kind`` what sort of diagnosis it
    is (one of :data:`DIAGNOSES`). Name the mistake whenever the answer shows which it is."""

    def __init__(self, message: str, kind: str = DIFFERENCE):
        if kind not in DIAGNOSES:
            raise ValueError(f"kind should be one of {DIAGNOSES}; got {kind!r}")
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Result:
    """The outcome of one check: ``passed``, ``status`` and ``message``; when failed, the kind
    of diagnosis (one of :data:`DIAGNOSES`) and the course_lib names it uses against the rules."""

    exercise: str
    status: str
    message: str
    diagnosis: str | None = None
    uses: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def __str__(self) -> str:
        symbol, word, *_ = _LOOK[self.status]
        return f"{symbol} {word} (exercise {self.exercise}): {self.message}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        symbol, word, edge, tint = _LOOK[self.status]
        body = html.escape(self.message).replace("\n", "<br>")
        body = re.sub(r"`([^`]+)`", r"<code>\1</code>", body)
        style = (
            f"border-left: 4px solid {edge}; color: {TEXT_COLOUR}; background-color: {BACKGROUND}; "
            f"background-image: linear-gradient({tint}, {tint}); padding: 6px 10px; margin: 2px 0"
        )
        return (
            f'<div style="{style}"><strong>{symbol} {word}</strong> '
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
    """One exercise: its id ("3.2"), title, the notebook names of its answer (in the order
    ``check`` takes them; the grader reads the same), verifier (given the answers, it returns
    the success message or raises :class:`NotDone` or :class:`Mismatch`), hints (gentle to
    explicit), kind ("code" or "choice") and rules (what the answer may use)."""

    id: str
    title: str
    names: tuple[str, ...]
    verify: Callable[..., str]
    hints: tuple[str, ...]
    kind: str = "code"
    rules: Rules = Rules()

    @property
    def points(self) -> float:
        """Its worth by default (``points.toml`` may say otherwise): 1 for a multiple choice
        or a short exercise (Recall, Apply, Extend, a question), 2 for a lab or a project step."""
        short = ("Recall", "Apply", "Extend", "Question")
        return 1.0 if self.kind == "choice" or self.title.startswith(short) else 2.0

    def run(self, *answers, sources: list[str] | None = None) -> Result:
        """Check the answers. ``sources`` are the notebook's code cells, for the rules: by
        default the cells this IPython kernel has run (the grader passes the submission's)."""
        if len(answers) != len(self.names):
            wanted = ", ".join(self.names)
            return Result(
                self.id,
                FAILED,
                f'check("{self.id}", ...) takes {len(self.names)} answer(s), {wanted}; '
                f'got {len(answers)}. Write: check("{self.id}", {wanted})',
            )
        unset = [n for n, a in zip(self.names, answers, strict=True) if a is None or _empty(a)]
        if unset:
            return Result(self.id, NOT_DONE, _not_done(unset))
        for name, answer in zip(self.names, answers, strict=True):
            if why := problem(answer, name):  # nothing that compares as it likes is an answer
                return Result(self.id, FAILED, why, TYPE)
        verdict = self._verified(answers)
        if self.kind == "code":  # what the grader would refuse is refused here too
            why, uses = self._broken(answers, sources)
            if why:  # the check's own verdict follows, for the learner and the instructor
                said = f"the check says: {verdict.message}"
                after = "your answer passes the check." if verdict.passed else said
                return Result(self.id, FAILED, f"{why} Apart from that, {after}", RULE, tuple(uses))
        return verdict

    def _broken(self, answers, sources) -> tuple[str, list]:
        """The rules' verdict, read where the answers' code lives (the sandbox at grading)."""
        remote = next((a for a in answers if isinstance(a, Learner)), None)
        if remote is None:
            return self.rules.broken(answers, self.names, sources)
        why, uses = remote.link.rules(self.id, answers, sources)
        if why or sources is None:
            return why, uses
        # The sandbox's word is the learner's code's: the cells' own text is the grader's.
        return self.rules.refused(written_uses(list(self.names), sources))

    def _verified(self, answers) -> Result:
        """The verifier's verdict, whatever it raises. Warnings are not shown: the verdict is the
        check's whole output, as at grading, where nbgrader scores 0 a cell writing to stderr."""
        try:
            with untouched(answers), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                message = self.verify(*(on_cpu(a) for a in answers))
            return Result(self.id, PASSED, message)
        except NotDone as e:
            return Result(self.id, NOT_DONE, str(e) or _not_done(self.names))
        except NotImplementedError:
            return Result(self.id, NOT_DONE, _not_done(self.names))
        except Mismatch as e:
            return Result(self.id, FAILED, str(e), e.kind)
        except Exception as e:  # the learner's code failed: say where, without a traceback
            return Result(self.id, FAILED, f"your code raised {describe_error(e)}", EXCEPTION)


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
    """A frame of the learner's code: not the standard library, an installed package, course_lib."""
    return not str(Path(filename).resolve()).startswith(_LIBRARY_DIRS)


def describe_error(e: BaseException) -> str:
    """``"ZeroDivisionError: division by zero (line 3 of your cell)"``: type, text, and where."""
    if isinstance(getattr(e, "described", None), str):  # raised in the grading sandbox
        return e.described
    text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    frames = [f for f in traceback.extract_tb(e.__traceback__) if _is_learners(f.filename)]
    if frames:
        name = frames[-1].filename
        # A cell's file is ipykernel's, or none ("<string>"); at grading cloudpickle (3.1.3 on)
        # names it "<dynamic-code>": still the student's cell, to read as in the notebook.
        cell = "ipykernel" in name or name.startswith("<")
        text += f" (line {frames[-1].lineno} of {'your cell' if cell else name.split('/')[-1]})"
    return text


# Declaring an exercise ------------------------------------------------------------------------

_DECLARED: dict[str, dict[str, tuple[str, Exercise]]] = {}  # module -> id -> (qualname, exercise)


def exercise(
    exercise_id: str,
    title: str,
    *,
    uses: tuple[str, ...] = (),
    forbidden: tuple[str, ...] = (),
    loops: bool = True,
    written_out: tuple[str, ...] = (),
) -> Callable[[Callable[..., str]], Exercise]:
    """Declare a code exercise on its verifier: ``@exercise("3.2", "Apply: one query, two keys")``.

    The keywords are its :class:`~._rules.Rules`. The verifier's parameters are the answers'
    notebook names; its docstring's paragraphs are the hints (lines joined by single spaces).
    Returns the :class:`Exercise`, registered with its module in declaration order.
    """

    def declare(verify: Callable[..., str]) -> Exercise:
        hints, rules = _paragraphs(verify), Rules(uses, forbidden, loops, written_out)
        found = Exercise(exercise_id, title, _names(verify), verify, hints, rules=rules)
        return _register(verify, found)

    return declare


def multiple_choice(exercise_id: str, title: str, *, correct: str) -> Callable[..., Exercise]:
    """Declare a multiple-choice question on a function without a body, whose one parameter
    is the answer's notebook name (a letter). Its docstring's paragraphs are the hints, but
    for those that start ``(a) ``, ``(b) ``, ...: what that option gets right or wrong, shown
    when it is the answer. Moving an option to another letter changes what earlier copies'
    answers mean: record it in ``course_lib/choice_history.py``.
    """

    def declare(question: Callable[..., object]) -> Exercise:
        hints, options = [], {}
        for paragraph in _paragraphs(question):
            if option := re.fullmatch(r"\(([a-z])\) (.+)", paragraph):
                options[option[1]] = option[2]
            else:
                hints.append(paragraph)
        names = _names(question)
        if len(names) != 1 or correct not in options:
            raise ValueError(
                f"{question.__qualname__}: a multiple choice takes one answer and explains "
                f"the correct option ({correct!r}) among its options {list(options)}"
            )
        letters = ", ".join(f'"{k}"' for k in options)

        def verify(answer) -> str:
            letter = choice_letter(answer)
            if letter not in options:
                raise Mismatch(f"answer with one of {letters} (a string); got {answer!r}", TYPE)
            if letter != correct:
                raise Mismatch(f"({letter}) is not the best answer. {options[letter]}", MISTAKE)
            return f"({letter}) is right. {options[letter]}"

        exercise = Exercise(exercise_id, title, names, verify, tuple(hints), kind="choice")
        return _register(question, exercise)

    return declare


def declared(module: str) -> list[Exercise]:
    """The exercises declared in ``module`` (its ``__name__``), in declaration order."""
    return [e for _, e in _DECLARED.get(module, {}).values()]


def blame_earlier(fn, name: str, exercise_id: str, what: str, module: str) -> None:
    """Raise if ``fn`` (the learner's ``what``) calls the learner's ``name``, the function of
    an earlier exercise of ``module``, and that one is still a stub or fails its own check:
    the message names the exercise to finish or fix first. Checks call it once ``fn`` is found
    wrong, so a part that fails only where ``fn`` does not use it is not blamed."""
    part = closure_globals(fn).get(name)
    if not callable(part) or part is fn:
        return
    result = next(e for e in declared(module) if e.id == exercise_id).run(part)
    if result.status == NOT_DONE:
        raise NotDone(
            f"your {what} calls `{name}`, which is still the stub of exercise {exercise_id}: "
            f"finish {exercise_id} first."
        )
    if result.status == FAILED:
        raise Mismatch(
            f"your {what} calls `{name}`, which does not pass check {exercise_id} yet: fix it "
            f"first. Check {exercise_id} says: {result.message}",
            MISTAKE,
        )


def _register(fn: Callable, declared_exercise: Exercise) -> Exercise:
    """Add the exercise to its module's list; a repeated id is an error, unless the same
    function declares it again (the module was reloaded)."""
    module = _DECLARED.setdefault(fn.__module__, {})
    before = module.get(declared_exercise.id)
    if before is not None and before[0] != fn.__qualname__:
        raise ValueError(
            f"exercise id {declared_exercise.id!r} is declared twice in {fn.__module__} "
            f"({before[0]} and {fn.__qualname__})"
        )
    module[declared_exercise.id] = (fn.__qualname__, declared_exercise)
    return declared_exercise


def _names(fn: Callable) -> tuple[str, ...]:
    """The parameters of ``fn`` (through any ``functools.wraps``): the answers' names."""
    parameters = inspect.signature(fn).parameters.values()
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters):
        raise ValueError(f"{fn.__qualname__}: name each answer as a plain parameter")
    return tuple(p.name for p in parameters)


def _paragraphs(fn: Callable) -> tuple[str, ...]:
    """The paragraphs of the docstring of ``fn``, each on one line."""
    doc = inspect.getdoc(inspect.unwrap(fn))
    if not doc:
        raise ValueError(f"{fn.__qualname__} needs a docstring: its paragraphs are the hints")
    return tuple(" ".join(p.split()) for p in re.split(r"\n\s*\n", doc.strip()))


# Calling the learner's code -------------------------------------------------------------------


def call(
    fn,
    *args,
    during: str = "",
    tip: str | Callable[[Exception], str | None] | None = None,
    in_place: str | None = None,
    unfinished: str | None = None,
    then: Callable | None = None,
    **kwargs,
):
    """Call the learner's ``fn(*args, **kwargs)``; the one way a check runs learner code.

    A stub (no code, or its ``raise NotImplementedError``) is "not done"; a crash becomes a
    :class:`Mismatch` "your function raised ... when called <during>."

    Args:
        during: how it was called, e.g. ``"for T = 4"`` or ``"on q (2, 5, 8)"``.
        tip: a sentence added to a crash's message, or a function of the exception giving one
            (or None); with a tip the crash is a named mistake.
        in_place: the message if ``fn`` writes into a tensor or array argument; ``fn`` then
            gets copies, so the check's own inputs stay intact.
        unfinished: the "not done" message for a stub that ``fn`` calls (an earlier exercise).
        then: for a result that is not plain data, a function of ``course_lib`` given the
            result and the arguments, whose answer is returned instead (at grading it runs
            in the sandbox beside the learner's code).
    """
    if not callable(fn):
        raise Mismatch(f"expected a function; got {type(fn).__name__}", TYPE)
    if _empty(fn):
        raise NotDone()
    given = [_copied(a) for a in args] if in_place else args
    context = f" when called {during}" if during else ""
    try:
        if isinstance(fn, Learner):  # at grading: run in the sandbox, plain data back
            result = fn.link.call(fn.handle, given, kwargs, then=then)
        else:
            result = fn(*given, **kwargs)
            result = then(result, *given) if then else result
    except Stopped:
        why = "os._exit, a crash, or running out of memory"
        message = f"your function stopped the process that ran it{context} ({why})."
        raise Mismatch(message, EXCEPTION) from None
    except Exception as e:
        # A library raises NotImplementedError too (no kernel for a dtype): that is a crash.
        if isinstance(e, NotImplementedError) and _stub_raised(e):
            raise NotDone(unfinished if unfinished and not _raised_by(fn, e) else "") from None
        message = f"your function raised {describe_error(e)}{context}."
        extra = tip(e) if callable(tip) else tip
        # A tip names the likely mistake behind the crash; without one, the crash is the news.
        kind = MISTAKE if extra else EXCEPTION
        raise Mismatch(f"{message} {extra}" if extra else message, kind) from None
    if in_place and not all(_same(a, b) for a, b in zip(args, given, strict=True)):
        raise Mismatch(in_place, MISTAKE)
    if why := problem(result, "your function's result"):
        raise Mismatch(f"{during}, {why}" if during else why, TYPE)
    return on_cpu(result)


def on_cpu(x):
    """A learner's answer (a tensor, a tuple or list of them, a module) on the CPU, where the
    check's numbers are, so a GPU gives the same verdict. A module is copied; anything already
    on the CPU is returned as the very same object."""
    if isinstance(x, torch.Tensor):
        return x.cpu()
    if type(x) in (tuple, list) and any(on_cpu(item) is not item for item in x):
        return type(x)(on_cpu(item) for item in x)
    if isinstance(x, torch.nn.Module):
        tensors = (*x.parameters(), *x.buffers())
        if any(t.device.type != "cpu" for t in tensors):
            return copy.deepcopy(x).cpu()
    return x


# What a function with no code compiles to, around its `return None`.
_PREAMBLE = {"RESUME", "NOP", "CACHE", "COPY_FREE_VARS", "MAKE_CELL"}


def _empty(fn) -> bool:
    """Whether ``fn`` is a function with no code yet: its body is only a docstring, ``pass``
    or ``...`` (nbgrader leaves a solution region as a comment under the docstring)."""
    if isinstance(fn, Learner):
        return fn.empty
    code = getattr(fn, "__code__", None) if inspect.isfunction(fn) else None
    if code is None:
        return False
    ops = [(i.opname, i.argval) for i in dis.get_instructions(code) if i.opname not in _PREAMBLE]
    return ops in ([("RETURN_CONST", None)], [("LOAD_CONST", None), ("RETURN_VALUE", None)])


def _stub_raised(e: BaseException) -> bool:
    """Whether ``e`` comes from a ``raise`` statement in the learner's code (a stub), rather
    than from inside a library (PyTorch raises NotImplementedError for a dtype it has no
    kernel for; from C, so the last Python frame is still the learner's, at a call)."""
    if isinstance(getattr(e, "stub", None), bool):  # raised in the grading sandbox
        return e.stub
    tb = _last(e)
    if tb is None:
        return True
    code = tb.tb_frame.f_code
    at = next((i for i in dis.get_instructions(code) if i.offset == tb.tb_lasti), None)
    learners = _is_learners(code.co_filename)
    return learners and (at is None or at.opname in ("RAISE_VARARGS", "RERAISE"))


def _raised_by(fn, e: BaseException) -> bool:
    """Whether ``e`` was raised in the code of ``fn`` itself (true when that is unknown)."""
    if isinstance(getattr(e, "own", None), bool):  # raised in the grading sandbox
        return e.own
    code = getattr(inspect.unwrap(fn), "__code__", None)
    tb = _last(e)
    return code is None or tb is None or tb.tb_frame.f_code is code


def _last(e: BaseException):
    """The innermost traceback entry of ``e`` (the frame that raised it), or None."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _copied(x):
    """A copy of a tensor, an array, or a dataclass holding them; anything else as it is."""
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, np.ndarray):
        return x.copy()
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return dataclasses.replace(
            x, **{f.name: _copied(getattr(x, f.name)) for f in dataclasses.fields(x) if f.init}
        )
    return x


def _same(a, b) -> bool:
    """Whether ``b``, a copy of ``a`` given to the learner's function, still holds its values."""
    if isinstance(a, torch.Tensor):
        if a.shape != b.shape or not a.is_floating_point():
            return torch.equal(a, b)
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return True
