"""The learner's code as the grader's checks see it: living in the sandbox, called from outside.

In a notebook a check calls the learner's function directly. At grading, the function stays in
the sandbox that ran the submission (``course_tools.grading``), and the check holds a
:class:`Learner` in its place: calling it sends the arguments in, runs the function there, and
brings back only plain data (:mod:`._plain`): the result, what the function did to its
arguments (a training step changes the model it is given), and the random state, so that a
check behaves as it does in the notebook. Whatever the function does to ``torch`` or to the
checks, it does inside the sandbox; the comparison happens out here.

What a check reads of a function besides calling it (its signature, its source, whether it is
still a stub, the functions it calls) comes from the sandbox too, through the same link.
"""

import functools
import inspect

_EMPTY = inspect.Parameter.empty


class Stopped(Exception):
    """The sandbox's process ended while the learner's code ran in it."""

    def __init__(self):
        super().__init__("the process running it stopped (os._exit, a crash, or out of memory)")


class Learner:
    """A function, class or module of the learner's, in the grading sandbox.

    ``link`` talks to the sandbox (``course_tools.grading.checking.Link``): ``call(handle,
    args, kwargs)``, ``globals(handle)`` and ``rules(exercise_id, answers, sources)``.
    ``info`` is what the sandbox said of it: name, signature, source, and whether it is a stub.
    """

    def __init__(self, link, handle: int, info: dict):
        self.link, self.handle, self.info = link, handle, info
        self.__name__ = str(info.get("name", "your function"))
        self.__qualname__ = self.__name__

    def __call__(self, *args, **kwargs):
        return self.link.call(self.handle, args, kwargs)

    def __repr__(self) -> str:  # as the notebook shows it, so that messages read the same
        return str(self.info.get("repr") or f"<function {self.__name__}>")

    @property
    def empty(self) -> bool:
        return bool(self.info.get("empty"))

    @property
    def source(self) -> str | None:
        return self.info.get("source")

    @property
    def __signature__(self) -> inspect.Signature:
        """The function's signature; a default that is not a number or a string stands as None."""
        listed = self.info.get("signature")
        if listed is None:
            raise ValueError(f"no signature found for {self.__name__}")
        return inspect.Signature(
            inspect.Parameter(name, inspect._ParameterKind(kind), default=value if has else _EMPTY)
            for name, kind, value, has in listed
        )


@functools.cache
def _named(kind: str) -> type:
    return type(kind, (Learner,), {})


def stand_in(link, handle, info: dict) -> Learner:
    """A :class:`Learner` whose type has the name of the object's own (``function``, the
    learner's class), so that a message naming an answer's type reads as in the notebook."""
    kind = str(info.get("type", "function"))
    return _named(kind if kind.isidentifier() else "function")(link, handle, info)


def signature_of(fn) -> list | None:
    """``fn``'s parameters as plain data, for :attr:`Learner.__signature__` (None if it has
    no signature to read). Runs in the sandbox."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    simple = (type(None), bool, int, float, str)  # a default like torch.randn stands as None
    return [
        [
            p.name,
            int(p.kind),
            p.default if type(p.default) in simple else None,
            p.default is not _EMPTY,
        ]
        for p in parameters
    ]


def closure_globals(fn) -> dict:
    """The global names ``fn`` reads and what they hold (the learner's functions among them)."""
    if isinstance(fn, Learner):
        return fn.link.globals(fn.handle)
    try:
        return dict(inspect.getclosurevars(fn).globals)
    except (TypeError, ValueError):
        return {}


def source_of(fn) -> str | None:
    """The source code of the learner's ``fn``, if it can be found."""
    if isinstance(fn, Learner):
        return fn.source
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return None
