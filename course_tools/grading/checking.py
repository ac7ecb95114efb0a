"""Checking a submission's answers outside its sandbox, one forked child per exercise.

The grading process never runs the student's code and never unpickles anything of theirs.
The answers stay in the sandbox that ran the notebook (``inside``); a :class:`Link` starts a
server there, in a sandbox of its own, and reads back plain data only: values as tensors,
arrays, numbers and strings (``course_lib.checks._plain``), functions as stand-ins that the
checks call (``course_lib.checks._remote.Learner``), which run the function in the sandbox.
A value that is not plain data (a tensor subclass, an object with its own ``__eq__``) arrives
as a marker that fails its check.

Each exercise is checked in a child forked from the grading process, with a time limit, so
that a check that hangs on the learner's code (or a bug of the check's) costs that exercise
only; after one that timed out, the server is started afresh for the next.

What an answer may use is decided by the exercise's check itself (``course_lib.checks._rules``),
in the sandbox where the answer's code is; the grader hands it the submission's code cells.
A multiple-choice letter from an earlier version of the lesson is read as the option it named
there (``course_lib.choice_history``), and the message says so.
"""

import builtins
import contextlib
import functools
import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import cloudpickle
import torch

from course_lib.checks import FAILED, NOT_DONE
from course_lib.checks._plain import NotPlain, loads
from course_lib.checks._purity import session_state, set_session_state
from course_lib.checks._remote import Learner, Stopped, stand_in
from course_lib.lesson_format import choice_letter

from . import sandbox
from .execution import ONE_THREAD
from .inside import write_frame

# How long a kernel that has run the notebook may take to connect before a server process
# serves its answers instead: it connects at once, unless its serving cell failed.
ATTACH_SECONDS = 20
# A reply larger than this is refused: the largest answer, lesson 7's PyTorch encoder, is 76 MB.
MAX_FRAME = 256 << 20


class Lost(RuntimeError):
    """The sandbox's server gave no reply: it ended, or wrote what is not a reply."""


def _kill_sandbox(pid: int) -> None:
    """Kill bwrap ``pid`` and its sandbox, however far it has got. In its first milliseconds
    bwrap has not yet tied the sandbox's first process to its own life (--die-with-parent):
    killed alone then, it would leave that process running on, in its process group or, once
    it has a session of its own (--new-session), outside it. So bwrap is stopped (it starts
    nothing more), its children are killed (the first one takes the sandbox with it), then its
    process group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGSTOP)
        for child in _children(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        os.killpg(pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc: ``stat``'s fourth field)."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError):
            if entry.name.isdigit():
                stat = (entry / "stat").read_text()  # pid (name) state ppid ...
                if int(stat.rpartition(")")[2].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


class Link:
    """The grader's end of a submission's sandbox server: requests in, plain data out.

    ``sandboxed`` False runs the server as a plain process (``--no-sandbox``); ``timeout`` is
    how long a reply may take."""

    def __init__(self, folder: Path, sandboxed: bool = True, timeout: float = 120):
        self.folder, self.sandboxed, self.timeout = folder, sandboxed, timeout
        self.process = self.connection = None  # the server: a process, or the kernel's socket
        self.requests = self.replies = None  # the binary streams to it and from it
        self.stop_kernel = None
        self.stand_ins = {}  # handle -> its stand-in: one object for one function of the learner's

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def attach(self, listener: socket.socket, stop_kernel=None) -> bool:
        """Take the notebook's kernel as the server: it connects to ``listener`` once it runs
        ``inside.serve_here``, at once unless that cell failed. False when it does not.
        ``stop_kernel()`` is called when the grader stops serving from it: a kernel stuck
        in a check must not keep a core busy while a server process takes over."""
        listener.settimeout(min(self.timeout, ATTACH_SECONDS))
        try:
            self.connection, _ = listener.accept()
        except OSError:
            return False
        self.stop_kernel = stop_kernel
        self.connection.settimeout(None)  # replies are read with a deadline of their own
        self.requests = self.connection.makefile("wb")
        self.replies = self.connection.makefile("rb", buffering=0)
        return True

    def ended(self) -> bool:
        """Whether the server has ended (asked by the process that started it)."""
        if self.connection is not None:  # readable with nothing to read: the kernel hung up
            try:
                if not select.select([self.connection], [], [], 0)[0]:
                    return False
                return not self.connection.recv(1, socket.MSG_PEEK)
            except OSError:
                return True
        return self.process is not None and self.process.poll() is not None

    def stop(self) -> None:
        self.stand_ins.clear()  # a new server's handles name other objects
        if self.connection is not None:  # shut down for every process holding it (a check's
            with contextlib.suppress(OSError):  # child too): the kernel's serving ends
                self.connection.shutdown(socket.SHUT_RDWR)
            for stream in (self.requests, self.replies, self.connection):
                stream.close()
            self.connection = self.requests = self.replies = None
            if self.stop_kernel is not None:
                self.stop_kernel()
        if self.process is not None:
            if self.sandboxed:
                _kill_sandbox(self.process.pid)
            else:
                self.process.kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):  # a server that started
                with contextlib.suppress(OSError):  # all the same ends at the end of its input
                    stream.close()
            self.process = self.requests = self.replies = None

    def start(self) -> None:
        """Start a server process now (it loads the answers at its first request)."""
        if self.process is None and self.connection is None:
            self._start()

    def _start(self):
        argv = [sys.executable, "-P", "-m", "course_tools.grading.inside", "serve"]
        command = sandbox.command(argv, self.folder) if self.sandboxed else argv
        here = os.pathsep.join(filter(None, [str(sandbox.course_root()), os.getenv("PYTHONPATH")]))
        environment = None if self.sandboxed else os.environ | ONE_THREAD | {"PYTHONPATH": here}
        self.process = subprocess.Popen(
            command,
            cwd=self.folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=environment,
            process_group=0 if self.sandboxed else None,  # for stop(): bwrap and its first child
        )
        self.requests, self.replies = self.process.stdin, self.process.stdout

    def request(self, **request):
        self.start()
        buffer = io.BytesIO()
        pickler = cloudpickle.CloudPickler(buffer)
        pickler.persistent_id = _handle_of
        pickler.dump(request)
        try:
            write_frame(self.requests, buffer.getvalue())
            frame = _read_reply(self.replies, self.timeout)
            reply = loads(frame, self._stand_in)
        except (OSError, ValueError) as e:
            self.stop()
            raise Lost(f"the sandbox stopped answering ({e})") from None
        except Exception as e:  # what torch.load refuses: the reply is not plain data
            self.stop()
            raise Lost(f"the sandbox's reply is not plain data ({type(e).__name__})") from None
        if isinstance(reply, dict) and "failed" in reply:
            raise RuntimeError(f"the sandbox could not do it: {reply['failed']}")
        return reply

    def _stand_in(self, marker):
        if len(marker) == 4 and marker[1] == "learner" and isinstance(marker[3], dict):
            if marker[2] not in self.stand_ins:
                self.stand_ins[marker[2]] = stand_in(self, marker[2], marker[3])
            return self.stand_ins[marker[2]]
        return None

    def value(self, data):
        """One value of a reply (its bytes, in a tensor or not); what is not plain data stands
        as such (and fails its check)."""
        try:
            if isinstance(data, torch.Tensor):  # inside.Server.blob
                data = data.numpy().tobytes()
            return loads(data, self._stand_in)
        except Exception as e:
            return NotPlain(f"data that could not be read as plain data ({type(e).__name__})")

    def answers(self, names: list[str]) -> dict:
        """name -> the answer (plain data or a stand-in), or {"error": why} if it could not be
        read; a name the notebook left undefined is left out. One request each: an answer
        whose loading stops the server costs only its own exercises."""
        found = {}
        for name in names:
            try:
                reply = self.request(op="answers", names=[name])
            except Lost as e:
                reply = {name: {"error": str(e)}}
            if isinstance(reply, dict) and name in reply:
                value = reply[name]
                found[name] = value if isinstance(value, dict) else self.value(value)
        return found

    def call(self, handle, args, kwargs, then=None):
        """Call the learner's function ``handle`` in the sandbox (``Learner``, ``_core.call``)."""
        state = session_state()
        grads = [_grads_of(a) for a in args]  # pickles leave .grad behind; a check may set it
        try:
            reply = self._call(handle, args, kwargs, then, state, grads)
            if not isinstance(reply, dict) or not {"arguments", "state"} <= set(reply):
                raise Lost("a reply without the call's parts")
        except Lost:
            raise Stopped() from None
        for arg, after in zip(args, self.value(reply["arguments"]), strict=True):
            _copy_back(arg, after)
        set_session_state(self.value(reply["state"]))
        if "raised" in reply:
            raise _rebuilt(reply["raised"])
        return self.value(reply["returned"])

    def _call(self, handle, args, kwargs, then, state, grads):
        return self.request(
            op="call",
            handle=handle,
            args=tuple(args),
            kwargs=kwargs,
            then=then,
            state=state,
            grads=grads,
        )

    def globals(self, handle) -> dict:
        return {
            name: self.value(v) for name, v in self.request(op="globals", handle=handle).items()
        }

    def rules(self, exercise_id: str, answers, sources) -> tuple[str, list]:
        why, uses = self.value(
            self.request(op="rules", exercise_id=exercise_id, answers=answers, sources=sources)
        )
        return why, uses


def _handle_of(obj):
    return ("learner", obj.handle) if isinstance(obj, Learner) else None


def _read_reply(stream, timeout: float) -> bytes:
    """One reply frame, within ``timeout`` seconds: a server that sends nothing, or sends a
    byte a minute, costs the grader no more than that."""
    fd, deadline = stream.fileno(), time.monotonic() + timeout
    size = int.from_bytes(_read_exactly(fd, 8, deadline), "big")
    if size > MAX_FRAME:
        raise ValueError(f"a reply of {size} bytes")
    return _read_exactly(fd, size, deadline)


def _read_exactly(fd: int, n: int, deadline: float) -> bytes:
    chunks, got = [], 0
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise ValueError("no reply in time")
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise ValueError("no reply")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _rebuilt(raised: dict) -> Exception:
    """The learner's exception, as an instance of the nearest built-in class, with what the
    sandbox read of it: its description, and whether it is a stub's (``_core.call``)."""
    kind = next(
        (
            getattr(builtins, k)
            for k in raised.get("kinds", [])
            if isinstance(getattr(builtins, k, None), type)
            and issubclass(getattr(builtins, k), Exception)
        ),
        Exception,
    )
    try:
        error = kind(str(raised.get("message", "")))
    except Exception:  # a built-in whose constructor wants more (UnicodeDecodeError)
        error = Exception(str(raised.get("message", "")))
    error.described = str(raised.get("described", ""))
    error.stub, error.own = bool(raised.get("stub")), bool(raised.get("own"))
    return error


def _grads_of(arg):
    """The ``.grad`` of a tensor, or of each parameter of a module, to send with it."""
    if isinstance(arg, torch.nn.Module):
        return [p.grad for p in arg.parameters()]
    return arg.grad if isinstance(arg, torch.Tensor) and arg.is_leaf else None


def _copy_back(arg, after) -> None:
    """Put into the check's own ``arg`` what the learner's function did to its copy."""
    import dataclasses

    import numpy as np

    if after is None:
        return
    if isinstance(arg, torch.Tensor) and isinstance(after, torch.Tensor):
        if arg.shape == after.shape and arg.dtype == after.dtype:
            with torch.no_grad():
                arg.copy_(after)
    elif isinstance(arg, np.ndarray) and isinstance(after, np.ndarray):
        if arg.shape == after.shape and arg.flags.writeable:
            arg[...] = after
    elif isinstance(arg, torch.nn.Module) and isinstance(after, list) and len(after) == 3:
        values, grads, buffers = after
        with torch.no_grad():
            for p, v, g in zip(arg.parameters(), values, grads, strict=False):
                p.copy_(v)
                p.grad = g
            for b, v in zip(arg.buffers(), buffers, strict=False):
                b.copy_(v)
    elif isinstance(arg, torch.optim.Optimizer | torch.optim.lr_scheduler.LRScheduler):
        arg.load_state_dict(after)
    elif dataclasses.is_dataclass(arg) and isinstance(after, dict):
        for name, value in after.items():
            _copy_back(getattr(arg, name), value)
    elif type(arg) in (list, tuple) and isinstance(after, list):
        for item, value in zip(arg, after, strict=False):
            _copy_back(item, value)


def check_one(exercise, answers: dict, sources: list[str] | None = None, moves=None) -> dict:
    """Run one exercise's check, rules included, on answers the :class:`Link` handed over.

    ``sources`` are the submission's code cells: the check reads the cell that made each
    answer for the exercise's rules, as it reads the kernel's history in the notebook.
    ``moves`` ({letter then: letter now}) reads a multiple choice answered in an earlier
    version of the lesson, whose options were in another order.
    """
    values, missing = [], []
    for name in exercise.names:
        entry = answers.get(name)
        if entry is None:
            missing.append(f"`{name}`")
            continue
        if isinstance(entry, dict) and set(entry) == {"error"}:
            why = f"`{name}` could not be handed to the grader ({entry['error']})"
            return {"status": FAILED, "message": f"{why}; your instructor will look at it."}
        values.append(entry)
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


@functools.cache
def _import_once() -> None:
    """Import here, once, what checks import on first use: each exercise's child, forked
    from this process, would import it again (a first optimizer imports torch._dynamo, over
    a second of work). The folder that import makes for compiled code goes with it."""
    saved = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="torch-") as folder:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder
        try:
            torch.optim.Adam([torch.zeros(1, requires_grad=True)])
        finally:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR")
            if saved is not None:
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = saved


def evaluate(
    link: Link, exercises, sources: list[str], timeout: float, moves: dict | None = None
) -> dict[str, dict]:
    """Each exercise's result: status, message, and the reference code its answer uses.

    ``moves`` maps an exercise id to {letter then: letter now} for the multiple choices whose
    options moved since the version the submission was made from."""
    torch.set_num_threads(1)  # the children inherit it: one thread each, reproducible results
    _import_once()
    names = sorted({n for e in exercises for n in e.names})
    try:
        answers = link.answers(names)
    except RuntimeError as e:
        why = f"its answers could not be read from the sandbox: {e}"
        return {e_.id: {"status": FAILED, "message": why, "trouble": why} for e_ in exercises}
    results, stale = {}, False
    for exercise in exercises:
        if stale:  # the last child was killed, or left the server mid-request: a fresh one,
            link.stop()  # started here, not in this exercise's child, where it would end with
            link.start()  # it; and only when an exercise follows, which will use it
        task = partial(check_one, exercise, answers, sources, (moves or {}).get(exercise.id))
        results[exercise.id] = isolated(task, timeout)
        stale = bool(results[exercise.id].get("trouble")) or link.ended()
    return results
