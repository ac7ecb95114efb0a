"""Checking exported answers outside the student's kernel, one forked child per exercise.

The grading process imports the instructor's ``course_lib`` and never runs the notebook:
the notebook ran in its own kernel, and only the answer objects come back, as cloudpickle
bytes inside JSON (parsing JSON runs no code). Each exercise is checked in a child forked
from the grading process, where the bytes are unpickled and the check runs. The student's
code, which runs when an answer is unpickled or called by its check, therefore cannot
change the checks of the other exercises, and a crash or an endless loop costs only the
exercise it happens in.
"""

import base64
import contextlib
import functools
import importlib
import json
import os
import select
import signal
import time
import types
from functools import partial

NOT_OURS = (
    "course_lib.checks",
    "course_lib.notebook",
    "course_lib.widgets",
)


def _ours(name: str) -> bool:
    """A name from the course's reference code (not its checks or notebook helpers)."""
    name = name or ""
    return (name == "course_lib" or name.startswith("course_lib.")) and not name.startswith(
        NOT_OURS
    )


def _qualified(obj) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '?')}"


def reference_uses(obj, seen=None, top=True) -> set[str]:
    """The course_lib functions and classes an answer is, wraps or calls, as dotted names."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return set()
    seen.add(id(obj))
    more = functools.partial(reference_uses, seen=seen, top=False)
    if isinstance(obj, types.ModuleType):
        return {obj.__name__} if _ours(obj.__name__) else set()
    if isinstance(obj, functools.partial):
        return set().union(more(obj.func), *map(more, obj.args), *map(more, obj.keywords.values()))
    if isinstance(obj, types.MethodType | staticmethod | classmethod):
        return more(obj.__func__)
    if isinstance(obj, types.FunctionType | type | types.BuiltinFunctionType):
        if _ours(getattr(obj, "__module__", "")):
            return {_qualified(obj)}
        if isinstance(obj, types.FunctionType):
            return _function_uses(obj, more)
        if isinstance(obj, type) and obj.__module__ == "__main__":  # a class the student wrote
            parts = [*obj.__bases__, *vars(obj).values()]
            return set().union(*(more(p) for p in parts if p is not object))
        return set()
    if top and callable(obj):  # an instance handed in as the answer, e.g. a module
        return {_qualified(type(obj))} if _ours(type(obj).__module__) else more(type(obj))
    return set()


def _function_uses(fn, more) -> set[str]:
    codes, names = [fn.__code__], set()
    while codes:  # the function's own code and the code of functions nested in it
        code = codes.pop()
        names |= set(code.co_names)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    found = {n for n in names if _ours(n)}  # `import course_lib...` inside the function
    found |= set().union(*(more(fn.__globals__[n]) for n in names if n in fn.__globals__))
    for cell in fn.__closure__ or ():
        with contextlib.suppress(ValueError):  # an empty closure cell has no contents
            found |= more(cell.cell_contents)
    defaults = (*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values())
    return found.union(*map(more, defaults))


def _resolve(dotted: str) -> str:
    """The defining module's name for a dotted name that may go through a re-export."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return dotted
        return _qualified(obj)
    return dotted


def check_one(exercise, answers: dict, allowed: set[str]) -> dict:
    """Load one exercise's answers, look for reference code, and run the exercise's check."""
    import cloudpickle

    from course_lib.checks import FAILED, NOT_DONE

    values, missing = [], []
    for name in exercise.names:
        entry = answers.get(name)
        if entry is None:
            missing.append(f"`{name}`")
            continue
        if "error" in entry:
            why = f"`{name}` could not be handed to the grader ({entry['error']})"
            return {"status": FAILED, "message": f"{why}; your instructor will look at it."}
        values.append(cloudpickle.loads(base64.b64decode(entry["pickle"])))
    if missing:
        message = (
            f"{', '.join(missing)} not defined after running the notebook: was the cell "
            "deleted, or did it (or a cell before it) raise an error?"
        )
        return {"status": NOT_DONE, "message": message}
    used = set().union(*(reference_uses(v) for v in values)) - allowed
    result = exercise.run(*values)
    return {"status": result.status, "message": result.message, "uses": sorted(used)}


def _child(task) -> bytes:
    try:
        return json.dumps(task()).encode()
    except BaseException as e:  # SystemExit, KeyboardInterrupt, unpickling errors...
        text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        message = f"checking this answer raised {text}"
        return json.dumps({"status": "failed", "message": message}).encode()


def isolated(task, timeout: float) -> dict:
    """Run ``task`` in a forked child with a time limit; its JSON result, or why it failed."""
    if not hasattr(os, "fork"):  # Windows: no isolation between exercises
        return json.loads(_child(task))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no stdin/stdout/stderr, only the pipe
        os.close(read)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        data = _child(task)
        while data:
            data = data[os.write(write, data) :]
        os._exit(0)
    os.close(write)
    chunks, deadline = [], time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0 and select.select([read], [], [], left)[0]:
        chunk = os.read(read, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    else:
        os.kill(pid, signal.SIGKILL)
        chunks = None
    os.close(read)
    os.waitpid(pid, 0)
    if chunks is None:
        return {
            "status": "failed",
            "message": f"checking this answer took over {timeout:g} s (an endless loop?)",
        }
    try:
        result = json.loads(b"".join(chunks))
        well_formed = isinstance(result["message"], str) and isinstance(
            result.get("uses", []), list
        )
        if well_formed and result["status"] in ("passed", "failed", "not done"):
            return result
    except (ValueError, TypeError, KeyError):
        pass
    return {
        "status": "failed",
        "message": "your code stopped the check before it finished (os._exit or a crash)",
    }


def evaluate(answers: dict, exercises, allowed: dict, timeout: float) -> dict[str, dict]:
    """Each exercise's result: status, message, and the reference code its answer uses."""
    import torch

    torch.set_num_threads(1)  # the children inherit it: one thread each, reproducible results
    results = {}
    for exercise in exercises:
        names = set(allowed.get(exercise.id, ()))
        names |= {_resolve(name) for name in names}
        results[exercise.id] = isolated(partial(check_one, exercise, answers, names), timeout)
    return results
