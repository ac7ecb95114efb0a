"""Checking exported answers outside the student's kernel, one forked child per exercise.

The grading process imports the instructor's ``course_lib`` and never runs the notebook:
the notebook ran in its own kernel, and only the answer objects come back, as cloudpickle
bytes inside JSON (parsing JSON runs no code). Each exercise is checked in a child forked
from the grading process, where the bytes are unpickled and the check runs. The student's
code, which runs when an answer is unpickled or called by its check, therefore cannot
change the checks of the other exercises, and a crash or an endless loop costs only the
exercise it happens in.

What an answer may use is decided by the exercise's check itself (``course_lib.checks._rules``),
the same way as in the notebook; the grader only hands it the submission's code cells. A
multiple-choice letter from an earlier version of the lesson is read as the option it named
there (``course_lib.choice_history``), and the message says so.
"""

import base64
import json
import os
import select
import signal
import time
from functools import partial


def check_one(
    exercise, answers: dict, sources: list[str] | None = None, moves: dict | None = None
) -> dict:
    """Load one exercise's answers and run the exercise's check, rules included.

    ``sources`` are the submission's code cells: the check reads the cell that made each
    answer for the exercise's rules, as it reads the kernel's history in the notebook.
    ``moves`` ({letter then: letter now}) reads a multiple choice answered in an earlier
    version of the lesson, whose options were in another order.
    """
    import cloudpickle

    from course_lib.checks import FAILED, NOT_DONE
    from course_lib.lesson_format import choice_letter

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
    then = choice_letter(values[0]) if exercise.kind == "choice" and moves else None
    now = moves.get(then, then) if then else None
    if now != then:
        values[0] = now
    result = exercise.run(*values, sources=sources or [])
    message = result.message
    if now != then:
        message = (
            f"Your notebook is from an earlier version of the lesson, where this option was "
            f"({then}); it is ({now}) in today's. {message}"
        )
    return {"status": result.status, "message": message, "uses": list(result.uses)}


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
        why = f"checking this answer took over {timeout:g} s (an endless loop?)"
        return {"status": "failed", "message": why, "trouble": why}
    try:
        result = json.loads(b"".join(chunks))
        well_formed = isinstance(result["message"], str) and isinstance(
            result.get("uses", []), list
        )
        if well_formed and result["status"] in ("passed", "failed", "not done"):
            return result
    except (ValueError, TypeError, KeyError):
        pass
    why = "your code stopped the check before it finished (os._exit or a crash)"
    return {"status": "failed", "message": why, "trouble": why}


def evaluate(
    answers: dict, exercises, sources: list[str], timeout: float, moves: dict | None = None
) -> dict[str, dict]:
    """Each exercise's result: status, message, and the reference code its answer uses.

    ``moves`` maps an exercise id to {letter then: letter now} for the multiple choices whose
    options moved since the version the submission was made from."""
    import torch

    torch.set_num_threads(1)  # the children inherit it: one thread each, reproducible results
    results = {}
    for exercise in exercises:
        task = partial(check_one, exercise, answers, sources, (moves or {}).get(exercise.id))
        results[exercise.id] = isolated(task, timeout)
    return results
