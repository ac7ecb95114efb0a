"""The lessons' demonstrations, replayed from stored results when a grader runs a notebook.

A grader needs a learner's answers, not the lessons' demonstrations: the models lesson 1 and
lesson 3 train live, the curves of lesson 6. No exercise depends on them, yet they are most of
the seconds a class's submissions take to grade. The course's graders (its own, ``make
autograde`` for nbgrader, otter's autograder) say so by setting ``ATTENTION_COURSE_GRADING=1``
in the kernel's environment, or otter by its grading mode. Then each function marked
:func:`replayable` returns the result it gave when the course's own notebooks were recorded,
and leaves its arguments as the call left them (a model it trained in place, a generator it
drew from), instead of running. A learner's run never reads the stored results.

The results are stored per function in ``course_lib/stored/``, recorded by running the
solutions' notebooks (``make stored``), with a fingerprint of the function's module: a test
fails when a module changed after its results were stored. A call not on record, or a stored
file this installation cannot read, runs live: slower, never wrong.
"""

import ast
import copy
import functools
import hashlib
import importlib.util
import inspect
import os
import pickle
import sys
from pathlib import Path

# torch is imported where it is used: the grader's sandbox reads GRADING without loading it.
GRADING = "ATTENTION_COURSE_GRADING"  # "1": a grader runs this notebook
RECORD = "ATTENTION_COURSE_RECORD"  # "1": store each replayable call's result (make stored)
STORED = Path(__file__).resolve().parent / "stored"


def graded() -> bool:
    """Whether a grader runs this notebook (the course's, nbgrader's or otter's)."""
    if os.environ.get(GRADING) == "1":
        return True
    otter = sys.modules.get("otter")  # otter's autograder runs Notebook.init_grading_mode first
    return bool(getattr(getattr(otter, "Notebook", None), "_grading_mode", False))


def replayable(fn):
    """Mark a demonstration whose result a graded run may take from the record."""
    name = f"{fn.__module__.removeprefix('course_lib.')}.{fn.__qualname__}"

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if graded() and (entry := _recorded(name, fn).get(key(args, kwargs))) is not None:
            result, after, random_state = copy.deepcopy(entry)
            for argument, state in zip(_arguments(args, kwargs), after, strict=True):
                _restore(argument, state)
            _restore_random(random_state)
            return result
        if os.environ.get(RECORD) == "1":
            return _recorded_call(name, fn, args, kwargs)
        return fn(*args, **kwargs)

    return wrapper


def key(args, kwargs) -> str:
    """The call as text: plain arguments as written, tensors, models and generators by a
    digest of their contents (the weights a model starts from decide what training gives)."""
    shown = [_shown(a) for a in args] + [f"{k}={_shown(v)}" for k, v in sorted(kwargs.items())]
    return ", ".join(shown)


def _shown(x) -> str:
    import torch

    if isinstance(x, torch.Generator):
        return f"Generator({_digest([x.get_state()])})"
    if isinstance(x, torch.nn.Module):
        return f"{type(x).__name__}({_digest(x.state_dict().values())})"
    if isinstance(x, torch.Tensor):
        return f"tensor({_digest([x])})"
    if isinstance(x, int | float | str | bytes | bool | type(None)):
        return repr(x)
    if isinstance(x, list | tuple):
        return f"[{', '.join(_shown(item) for item in x)}]"
    try:  # a vocabulary, say: by its contents (its repr may hold a memory address)
        return f"{type(x).__name__}({hashlib.sha256(pickle.dumps(x)).hexdigest()[:16]})"
    except Exception:
        return repr(x)


def _recorded_call(name: str, fn, args, kwargs):
    """``fn(*args, **kwargs)``, stored with what it changed in its arguments."""
    import torch

    call, arguments = key(args, kwargs), _arguments(args, kwargs)
    random_state = torch.get_rng_state()
    before = [_state(a) for a in arguments]
    result = fn(*args, **kwargs)
    after = [_changed(_state(a), b) for a, b in zip(arguments, before, strict=True)]
    # Later cells draw from torch's generator where this call left it: so does a replay. One
    # that seeds it leaves it where it would be even if it happened to be there before.
    seeds = "seed" in inspect.signature(fn).parameters
    drawn = seeds or not torch.equal(random_state, torch.get_rng_state())
    _record(name, fn, call, (result, after, torch.get_rng_state() if drawn else None))
    return result


def _digest(tensors) -> str:
    import torch

    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()[:16]


def _arguments(args, kwargs) -> list:
    return [*args, *(kwargs[k] for k in sorted(kwargs))]


def _state(x):
    """What a call may change in an argument: a model's weights, a generator's state."""
    import torch

    if isinstance(x, torch.nn.Module):
        return {k: v.detach().clone() for k, v in x.state_dict().items()}
    if isinstance(x, torch.Generator):
        return x.get_state()
    return None


def _changed(now, before):
    """What of an argument's state the call changed: a model's changed tensors only (a head
    trained over a frozen encoder stores the head), a generator's new state; else None."""
    import torch

    if isinstance(now, dict):
        changed = {k: v for k, v in now.items() if k not in before or not torch.equal(v, before[k])}
        return changed or None
    return None if now is None or torch.equal(now, before) else now


def _restore_random(state) -> None:
    import torch

    if state is not None:
        torch.set_rng_state(state)


def _restore(x, state) -> None:
    import torch

    if isinstance(x, torch.nn.Module) and state is not None:
        x.load_state_dict(state, strict=False)  # the tensors the call changed
    elif isinstance(x, torch.Generator) and state is not None:
        x.set_state(state)


def fingerprint(fn) -> str:
    """A digest of the source of ``fn``'s module and of every course module it imports,
    directly or through another: what its stored results were made by."""
    found, todo = set(), [fn.__module__]
    while todo:
        name = todo.pop()
        if name in found or not name.startswith("course_lib.") or name not in sys.modules:
            continue
        found.add(name)
        todo += _imported(sys.modules[name])
    files = sorted(sys.modules[name].__file__ for name in found - {__name__})
    h = hashlib.sha256()
    for file in files:
        h.update(Path(file).read_bytes())
    return h.hexdigest()[:16]


def _imported(module) -> list[str]:
    """The names a module's source imports (``from .x import y`` gives x and x.y)."""
    names = []
    for node in ast.walk(ast.parse(Path(module.__file__).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            base = importlib.util.resolve_name(base, module.__package__) if node.level else base
            names += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return names


def path_of(name: str) -> Path:
    return STORED / f"{name}.pt"


@functools.cache
def _recorded(name: str, fn) -> dict:
    """The stored calls of one function, or none when they are missing, unreadable here or
    made by another version of its module."""
    import torch

    try:  # the course's own file, with models in it: not weights only
        stored = torch.load(path_of(name), map_location="cpu", weights_only=False)
    except Exception:
        return {}
    return stored["calls"] if stored.get("fingerprint") == fingerprint(fn) else {}


def _record(name: str, fn, call: str, entry: tuple) -> None:
    import torch

    path = path_of(name)
    stored = torch.load(path, weights_only=False) if path.exists() else {}
    if stored.get("fingerprint") != fingerprint(fn):
        stored = {"fingerprint": fingerprint(fn), "calls": {}}
    stored["calls"][call] = entry
    path.parent.mkdir(exist_ok=True)
    torch.save(stored, path)
