"""The server that runs inside a submission's sandbox, for the checks.

It answers the grader's requests one frame at a time (:func:`read_frame`): hand over an
answer, call a function, read a function's globals, apply an exercise's rules. Requests are
the grader's pickles; replies are plain data only (``course_lib.checks._plain``), which is all
the grader reads. Nothing here is trusted: the learner's code runs in this process too, and may
have changed any of it. It runs in one of two places:

- in the notebook's own kernel, once the notebook has run (:func:`serve_here`, sent as one
  more cell): the answers are the notebook's objects, and no second Python has to load torch;
- in a process of its own, ``python -m course_tools.grading.inside serve``, on stdin and
  stdout, which loads the answers the kernel left in ``answers.json``: what the grader starts
  when the kernel cannot serve, or stopped serving (a check that timed out, a crash).
"""

import builtins
import contextlib
import dataclasses
import json
import os
import pickle
import struct
import sys
from pathlib import Path

ANSWERS = "answers.json"


def read_frame(stream) -> bytes | None:
    """One length-prefixed frame; None at the end of the stream."""
    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack(">Q", head)
    return stream.read(size)


def write_frame(stream, data: bytes) -> None:
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


class Server:
    """The learner's objects by handle, and the requests that use them."""

    def __init__(self, folder: Path, namespace: dict | None = None):
        import numpy as np
        import torch

        from course_lib.checks import EXERCISES, _core, _plain, _purity, _remote

        self.np, self.torch, self.exercises = np, torch, EXERCISES
        self.core, self.plain, self.remote, self.purity = _core, _plain, _remote, _purity
        self.folder, self.objects, self.loaded, self.sources = folder, {}, None, {}
        self.namespace = namespace  # the kernel's own, when it serves
        self.id = os.urandom(4).hex()

    # Handles: an answer is "answer:NAME" (the same after a restart), anything else a number.

    def answer(self, name: str):
        if self.namespace is not None:  # as the export has it: what it could not carry fails
            if name not in self.namespace:
                raise LookupError("not defined")
            exported = self.exported().get(name)
            if isinstance(exported, dict) and "error" in exported:
                raise LookupError(exported["error"])
            with contextlib.suppress(Exception):  # as the export reads it
                self.sources[f"answer:{name}"] = self.remote.source_of(self.namespace[name])
            return self.namespace[name]
        entry = self.loaded.get(name) if name in self.loaded_names() else None
        if not isinstance(entry, dict) or "file" not in entry:
            raise LookupError(entry.get("error") if isinstance(entry, dict) else "not exported")
        import cloudpickle

        self.sources[f"answer:{name}"] = entry.get("source")
        return cloudpickle.loads((self.folder / entry["file"]).read_bytes())

    def loaded_names(self) -> set[str]:
        return set(self.namespace) if self.namespace is not None else set(self.exported())

    def exported(self) -> dict:
        """What the kernel's export wrote: name -> {"file": ...} or {"error": ...}."""
        if self.loaded is None:
            path = self.folder / ANSWERS
            self.loaded = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        return self.loaded

    def resolve(self, handle):
        if isinstance(handle, str) and handle.startswith("answer:"):
            if handle not in self.objects:
                self.objects[handle] = self.answer(handle.removeprefix("answer:"))
            return self.objects[handle]
        return self.objects[handle]

    def register(self, obj, handle=None):
        """A marker for ``obj``, which stays here; the same object keeps the same handle, so
        that a check comparing two of the learner's functions finds them the same."""
        if handle is None:  # this server's own: a handle from an earlier server is unknown
            new = f"{self.id}-{len(self.objects)}"
            handle = next((h for h, o in self.objects.items() if o is obj), new)
        self.objects[handle] = obj
        info = {
            "name": getattr(obj, "__name__", type(obj).__name__),
            "type": "class" if isinstance(obj, type) else type(obj).__name__,
            "empty": self.core._empty(obj),
            "signature": self.remote.signature_of(obj),
            "source": self.sources.get(handle) or self.remote.source_of(obj),
            "repr": repr(obj)[:200],
        }
        return (self.plain.MARK, "learner", handle, info)

    def blob(self, data: bytes):
        """Plain data within a reply, as bytes in a tensor: torch.save writes a tensor's bytes
        as they are, where it would re-encode a bytes object, slowly, both ways."""
        return self.torch.frombuffer(bytearray(data), dtype=self.torch.uint8)

    def encoded(self, value, handle=None):
        """``value`` as plain data; an answer that is code keeps its name as its handle."""

        def register(obj):
            return self.register(obj, handle if obj is value else None)

        return self.blob(self.plain.dumps(self.plain.encode(value, register)))

    # Requests.

    def answers(self, names: list[str]) -> dict:
        """The answers as plain data; a name the notebook left undefined is left out."""
        found = {}
        for name in names:
            if name not in self.loaded_names():
                continue
            try:
                found[name] = self.encoded(self.resolve(f"answer:{name}"), f"answer:{name}")
            except LookupError as e:
                found[name] = {"error": str(e)}
            except BaseException as e:  # unpickling runs the learner's code
                found[name] = {"error": f"{type(e).__name__}: {e}"}
        return found

    def call(self, handle, args, kwargs, then, state, grads) -> dict:
        fn = self.resolve(handle)
        for arg, grad in zip(args, grads, strict=True):  # what pickling left behind
            if isinstance(arg, self.torch.nn.Module) and grad is not None:
                for p, g in zip(arg.parameters(), grad, strict=False):
                    p.grad = g
            elif isinstance(arg, self.torch.Tensor) and grad is not None:
                arg.grad = grad
        self.purity.set_session_state(state)
        before = [self.snapshot(a) for a in args]
        reply = {}
        try:
            result = fn(*args, **kwargs)
            result = then(result, *args) if then else result
            reply["returned"] = self.encoded(result)
        except BaseException as e:  # read without this frame, as _core.call reads it in a notebook
            reply["raised"] = self.raised(fn, e.with_traceback(e.__traceback__.tb_next))
        changed = [not self.unchanged(a, b) for a, b in zip(args, before, strict=True)]
        after = [self.state_of(a) if c else None for a, c in zip(args, changed, strict=True)]
        reply["arguments"] = self.blob(self.plain.dumps(after))
        state = self.plain.encode(self.purity.session_state(), self.register)
        reply["state"] = self.blob(self.plain.dumps(state))
        return reply

    def raised(self, fn, e: BaseException) -> dict:
        kinds = [k.__name__ for k in type(e).__mro__ if getattr(builtins, k.__name__, None) is k]
        return {
            "kinds": kinds,
            "message": str(e),
            "described": self.core.describe_error(e),
            "stub": isinstance(e, NotImplementedError) and self.core._stub_raised(e),
            "own": self.core._raised_by(fn, e),
        }

    def globals(self, handle) -> dict:
        found = self.remote.closure_globals(self.resolve(handle))
        return {name: self.encoded(value) for name, value in found.items()}

    def rules(self, exercise_id: str, answers, sources) -> bytes:
        exercise = self.exercises[exercise_id]
        why, uses = exercise.rules.broken(answers, exercise.names, sources)
        return self.plain.dumps([str(why), [str(u) for u in uses]])

    # What a call did to its arguments and to the random state, for the grader to copy back.

    def snapshot(self, x) -> list | None:
        """A copy of a model's tensors, to tell whether a call changed them: a large model
        the call only read need not travel back (lesson 7's parameter tool reads 25 million)."""
        if not isinstance(x, self.torch.nn.Module):
            return None
        return [t.detach().clone() if t is not None else None for t in self._tensors(x)]

    def unchanged(self, x, snapshot) -> bool:
        if snapshot is None:
            return False
        now = self._tensors(x)
        return len(now) == len(snapshot) and all(
            (a is None and b is None)
            or (a is not None and b is not None and a.dtype == b.dtype and self.torch.equal(a, b))
            for a, b in zip(now, snapshot, strict=True)
        )

    @staticmethod
    def _tensors(model) -> list:
        parameters = list(model.parameters())
        return [*parameters, *(p.grad for p in parameters), *model.buffers()]

    def state_of(self, x):
        torch, encode = self.torch, self.plain.encode
        if isinstance(x, torch.Tensor | self.np.ndarray):
            return encode(x, self.register)
        if isinstance(x, torch.nn.Module):
            return [
                [encode(p, self.register) for p in x.parameters()],
                [None if p.grad is None else encode(p.grad, self.register) for p in x.parameters()],
                [encode(b, self.register) for b in x.buffers()],
            ]
        if isinstance(x, torch.optim.Optimizer | torch.optim.lr_scheduler.LRScheduler):
            return encode(x.state_dict(), self.register)
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            return {f.name: self.state_of(getattr(x, f.name)) for f in dataclasses.fields(x)}
        if type(x) in (list, tuple):
            return [self.state_of(item) for item in x]
        return None


class _Requests(pickle.Unpickler):
    """The grader's pickles, with its stand-ins for the learner's objects put back."""

    def __init__(self, data: bytes, server: Server):
        import io

        super().__init__(io.BytesIO(data))
        self.server = server

    def persistent_load(self, pid):
        return self.server.resolve(pid[1])


def serve(folder: Path, stdin=None, stdout=None, namespace: dict | None = None) -> None:
    """Answer requests from ``stdin`` on ``stdout`` (binary streams; by default this process's
    standard input and output) until the grader closes ``stdin``; the answers are those of
    ``namespace`` when given, else those of ``answers.json`` in ``folder``."""
    if stdout is None:  # the frames get a descriptor of their own; what the learner's code
        stdout = os.fdopen(os.dup(1), "wb")  # writes to 1, from Python or C, goes to stderr
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    server = Server(folder, namespace)
    stdin = stdin or sys.stdin.buffer
    while (frame := read_frame(stdin)) is not None:
        request = _Requests(frame, server).load()
        op = request.pop("op")
        try:
            reply = getattr(server, op)(**request)
        except BaseException as e:  # the grader reads this as trouble with the request
            reply = {"failed": f"{type(e).__name__}: {e}"}
        write_frame(stdout, server.plain.dumps(reply))


def serve_here(path: str, namespace: dict) -> None:
    """Serve the grader from the notebook's kernel, through the Unix socket it listens on at
    ``path``, until it hangs up; ``namespace`` is the notebook's."""
    import socket

    with socket.socket(socket.AF_UNIX) as connection:
        connection.connect(path)
        with connection.makefile("rb") as requests, connection.makefile("wb") as replies:
            serve(Path.cwd(), requests, replies, namespace)


if __name__ == "__main__":
    if sys.argv[1:] != ["serve"]:
        raise SystemExit("usage: python -m course_tools.grading.inside serve")
    serve(Path.cwd())
