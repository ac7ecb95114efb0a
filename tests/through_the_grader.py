"""Every check test's verdict again, as the grader reaches it: one verdict everywhere.

At grading the learner's answers stay in the submission's sandbox, and the checks see plain
data and stand-ins for the learner's functions (``course_tools.grading.checking.Link``).
With ``CHECKS_THROUGH_THE_GRADER=1`` (``make test-sandbox``), ``tests/conftest.py`` wraps
each ``Exercise.run`` of the check tests with :func:`compared`: after the check's verdict in
the notebook, the same answers go through the grader's path (the kernel serving its own
objects, plain data back) and the two verdicts must be the same, message included.

The server runs in a child forked from the test process rather than in a sandboxed kernel:
it sees what the test set up (a monkeypatched rule), and the sandbox is tested by the
grader's tests.
"""

import functools
import os
import re
import tempfile
from pathlib import Path

from course_lib.checks import EXERCISES
from course_tools.grading.checking import Link
from course_tools.grading.inside import serve

TESTS = Path(__file__).resolve().parent


def compared(run):
    """``Exercise.run`` that also checks the answers through the grader's path."""
    depth = 0

    @functools.wraps(run)
    def run_twice(self, *answers, sources=None):
        nonlocal depth
        here = run(self, *answers, sources=sources)
        if depth or len(answers) != len(self.names) or self.id not in EXERCISES:
            return here
        depth += 1
        try:
            there = _at_grading(run, self, answers, sources)
        finally:
            depth -= 1
        if there is not None:
            assert (there.status, there.diagnosis, _where(there.message)) == (
                here.status,
                here.diagnosis,
                _where(here.message),
            ), f"{self.id}: in the notebook {here.message!r}; at grading {there.message!r}"
        return here

    return run_twice


def _where(message: str) -> str:
    """A message with "line N of test_x.py" read as "line N of your cell" (a test's function
    is the learner's cell here), and without memory addresses."""
    message = re.sub(r"\(line (\d+) of [\w.]+\.py\)", r"(line \1 of your cell)", message)
    return re.sub(r" at 0x[0-9a-f]+", " at 0x...", message)  # addresses differ between processes


def _at_grading(run, exercise, answers, sources):
    namespace = dict(zip(exercise.names, answers, strict=True))
    with tempfile.TemporaryDirectory(prefix="through-") as tmp:
        folder = Path(tmp)
        with Link(folder, sandboxed=False) as link:
            link.process = _Forked(folder, namespace)
            link.requests, link.replies = link.process.stdin, link.process.stdout
            received = link.answers(list(exercise.names))
            values = [received[n] for n in exercise.names]
            if any(isinstance(v, dict) and set(v) == {"error"} for v in values):
                return None
            return run(exercise, *values, sources=sources)


class _Forked:
    """The notebook's kernel serving its own objects, as a forked child holding the test's
    answers, with the pipes a ``Link`` talks through."""

    def __init__(self, folder: Path, namespace: dict):
        requests, self._requests = os.pipe()
        self._replies, replies = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self._requests)
            os.close(self._replies)
            try:
                serve(folder, os.fdopen(requests, "rb"), os.fdopen(replies, "wb"), namespace)
            finally:
                os._exit(0)
        os.close(requests)
        os.close(replies)
        self.returncode = None
        self.stdin = os.fdopen(self._requests, "wb")
        self.stdout = os.fdopen(self._replies, "rb")

    def poll(self) -> int | None:
        """Its exit status if it has ended, as ``subprocess.Popen.poll`` says."""
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            self.returncode = os.waitstatus_to_exitcode(status) if pid else None
        return self.returncode

    def kill(self) -> None:
        self.stdin.close()
        self.stdout.close()

    def wait(self) -> None:
        if self.returncode is None:
            os.waitpid(self.pid, 0)
