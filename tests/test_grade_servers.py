"""The checks' servers the grader starts end when it stops them, however soon that is."""

import contextlib
import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from course_lib.checks import PASSED
from course_tools.grading import sandbox
from course_tools.grading.checking import Link, evaluate
from course_tools.grading.inside import ANSWERS


def _processes_in(folder: Path) -> list[int]:
    """The processes whose command line names ``folder`` or that run in it: a sandbox's
    bwrap, and whatever runs inside it."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            named = str(folder).encode() in (entry / "cmdline").read_bytes()
            cwd = os.readlink(entry / "cwd") if not named else ""
        except OSError:  # ended meanwhile, or not ours to read
            continue
        if named or cwd.startswith(str(folder)):
            found.append(int(entry.name))
    return found


def _left_after(folder: Path, seconds: float) -> list[int]:
    """What still runs of ``folder``'s sandboxes once ``seconds`` have passed (killed then, so
    that a failing test leaves nothing behind either)."""
    deadline = time.monotonic() + seconds
    while (left := _processes_in(folder)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


def test_a_sandboxed_server_stopped_as_it_starts_leaves_no_process(tmp_path):
    """bwrap killed in its first milliseconds leaves its sandbox's first process behind,
    waiting for ever or (once in a session of its own) starting the server, which ends only
    when it reads its closed input, seconds later where importing torch is slow: a grader may
    stop a server it has just started (grading interrupted, a request that failed at once).
    The window is a few milliseconds wide, where depends on the machine: stopped after 0 to
    10 ms, many of these servers fell in it on a 2-core machine. A server left running ends by
    itself a second or more later, so what is left is looked for within one second."""
    if why := sandbox.cannot_start():
        pytest.skip(why)
    folder = tmp_path / "submission"
    folder.mkdir()
    for k in range(20):
        link = Link(folder)
        link.start()
        time.sleep(k / 2000)  # not a measurement: where bwrap is when it is killed
        link.stop()
    assert _left_after(folder, 1) == []


def test_a_sandboxed_server_stopped_once_it_serves_leaves_no_process(tmp_path):
    if why := sandbox.cannot_start():
        pytest.skip(why)
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / ANSWERS).write_text("{}", encoding="utf-8")  # nothing exported
    with Link(folder, timeout=120) as link:
        assert link.answers(["nothing"]) == {}
        assert _processes_in(folder)  # the server runs in the folder, in its sandbox
    assert _left_after(folder, 5) == []


def _exercise(exercise_id: str, run) -> SimpleNamespace:
    """An exercise with no answers to read whose check does ``run()``."""

    def checked(*values, sources):
        status, message = run()
        return SimpleNamespace(status=status, message=message, uses=())

    return SimpleNamespace(id=exercise_id, names=[], kind="code", run=checked)


def test_a_server_is_started_again_only_for_an_exercise_that_follows(tmp_path):
    """After a check that timed out, the next exercise's check finds a fresh server, started
    by the grader; after the last one, none is started that nothing would use."""
    link = Link(tmp_path, sandboxed=False)
    hangs = _exercise("1.1", lambda: time.sleep(60))
    served = _exercise("1.2", lambda: (PASSED, str(link.process is not None)))
    try:
        results = evaluate(link, [hangs, served], [], timeout=1)
        assert "took over 1 s" in results["1.1"]["message"]
        assert results["1.2"] == {"status": PASSED, "message": "True", "uses": []}
        link.stop()
        assert "took over 1 s" in evaluate(link, [hangs], [], timeout=1)["1.1"]["message"]
        assert link.process is None
    finally:
        link.stop()
