"""The grader under attack: lesson 3 submissions that try to cheat, spy or do damage.

Each attack is an otherwise untouched lesson 3 notebook with one cell added after the imports
(or, where the attack is the answer itself, answer cells replaced). Beside them in the
submissions folder: a solved notebook, a classmate's half-done one, an untouched one graded
after the attacks, another graded beside the fork bomb, and a secret file; beside the grades, a
gradebook; elsewhere, a folder of the instructor's. One grading run (two notebooks at a time)
grades them all. Each test then asserts that its attack gained nothing (the untouched
notebook's points, exercise by exercise), cost nobody anything (the files it went for unchanged,
the others' grades as expected, no process of it left) and, where the grader can see it, was
reported; two more tests check every file and process after all of them.

An attack cell ends by raising a short report of what it tried (``tamper report: ...``): the
notes of the CSV carry it, as evidence for a failing assertion. Every attack is bounded in time
and memory, and reaches nothing beyond this machine.

To keep the run short, every notebook but the solved one leaves out the lesson's training
experiment (``leaky_decoder``: 20 s a notebook, no exercise).
"""

import compileall
import contextlib
import csv
import hashlib
import os
import signal
import stat
import sys
import tempfile
import threading
import time
from pathlib import Path
from string import Template

import nbformat
import pytest

from course_tools.grade import main
from course_tools.grading import sandbox
from course_tools.grading.grader import load_points

ROOT = Path(__file__).resolve().parents[2]
NAME = "03_scaled_dot_product_attention.ipynb"
EXERCISES = [f"3.{k}" for k in range(1, 9)]
POINTS = {k: v for k, v in load_points(ROOT / "points.toml").items() if k[:2] == "3."}
COURSE = ("course_lib", "course_tools", "solutions")  # the course's folders no submission changes
SECRET = "the answer to 3.1 is (c)"
GRADER_WRITES = {"grades.csv", "summary.md"}  # and feedback/: what the grader itself writes
EARLIER_VERSION = "79418bfa6ebc"  # lesson 3 before its letters moved: (b) was right for 3.1
# The order of grading is the order of names: the honest notebooks first, then the attacks,
# the untouched notebook (after the attacks on the folders it is graded from), and last the
# fork bomb between two untouched notebooks, one of them graded at the same time.
UNTOUCHED, BOMB, NEIGHBOURS = "untouched", "zz2_fork_bomb", ("zz1_neighbour", "zz3_neighbour")
SOLVED, CLASSMATE = "aa_solved", "aa_classmate"
FORGED = "\n[1/1] mallory.ipynb: 13/13, ok\n"  # a progress line of the grader's, forged
MARK = "tamper-"  # the name every attack's lingering process gives itself (/proc/self/comm)
TOKEN = "written by a tampering notebook"  # in everything an attack writes
# The users the sandboxes run student code as, when the grader runs as root.
SANDBOX_UIDS = range(sandbox.FIRST_UID, sandbox.FIRST_UID + sandbox.UIDS)

# Proxies the real module of its name, and proves where it ran: a note outside the sandbox, and
# every check passing in the process that imports it.
PLANTED = """\
# $token
import importlib.machinery, importlib.util, os, sys

_here = os.path.dirname(os.path.abspath(__file__))
_path = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_spec = importlib.machinery.PathFinder.find_spec(__name__, _path)
_real = importlib.util.module_from_spec(_spec)
sys.modules[__name__] = _real
_spec.loader.exec_module(_real)
try:
    with open($imported, "a") as f:
        f.write(f"{__name__} imported by {os.getpid()}: {sys.argv}\\n")
except OSError:
    pass
try:
    import course_lib.checks._core as _core

    _core.Exercise.run = lambda self, *a, **k: _core.Result(self.id, "passed", "planted")
except Exception:
    pass
"""

REPORT = '''\
import errno as _errno


def _outcome(action):
    """What an attempt came to: "ok", or the error's name (ENOENT, EROFS, EACCES, ...)."""
    try:
        action()
        return "ok"
    except OSError as e:
        return _errno.errorcode.get(e.errno, type(e).__name__)


def _write(path, data):
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:  # closed here: errors show
        f.write(data)
'''

# Copies the answer cells of every notebook it can read, and runs them after each cell.
COPIES = """\
import json
import pathlib

import course_lib

course = pathlib.Path(course_lib.__file__).resolve().parents[1]
copies, found = {}, [f"course holds {sorted(os.listdir(course))}"]
for label, path in $sources:
    try:
        cells = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))["cells"]
    except OSError as e:
        found.append(f"{label}={_errno.errorcode.get(e.errno, e.errno)}")
        continue
    found.append(f"{label}=read")
    copies |= {c["id"]: "".join(c["source"]) for c in cells if c.get("id") in $answer_ids}
_pasting = False


def _paste(*args):
    global _pasting
    if copies and not _pasting:
        _pasting = True
        try:
            for source in copies.values():
                get_ipython().run_cell(source, store_history=False)
        finally:
            _pasting = False


get_ipython().events.register("post_run_cell", _paste)
"""

ATTACKS = {
    # 1. Modules planted where the grader, or the next submission, might import them from.
    "attack01_planted_modules": """\
import os
import pathlib

import course_lib

$report
course = pathlib.Path(course_lib.__file__).resolve().parents[1]
folders = {"cwd": os.getcwd(), "course": course, "lib": course / "course_lib",
           "tools": course / "course_tools", "subs": $submissions, "out": $out}
found = []
for label, folder in folders.items():
    for module in ("cloudpickle", "torch"):
        path = pathlib.Path(folder, module + ".py")
        found.append(f"{label}/{module[0]}=" + _outcome(lambda: path.write_text($planted)))
raise RuntimeError("tamper report: " + " ".join(found))""",
    # 2. The model answers beside the course, a classmate's and the instructor's secret file.
    "attack02_copies_answers": """\
import os

$report
$copies
found.append("secret=" + _outcome(lambda: open($secret).read()))
raise RuntimeError("tamper report: " + " ".join(found))""",
    # 3. Destroying others' work: the classmate's notebook, the submissions folder, the grades.
    "attack03_vandal": """\
import os
import pathlib

$report
found = [
    "classmate=" + _outcome(lambda: pathlib.Path($classmate).write_text($token)),
    "list=" + _outcome(lambda: os.listdir($submissions)),
    "secret=" + _outcome(lambda: os.unlink($secret)),
    "gradebook=" + _outcome(lambda: pathlib.Path($gradebook).write_text($token)),
    "out=" + _outcome(lambda: pathlib.Path($out, "grades.csv").write_text($token)),
]
for path in sorted(pathlib.Path($submissions).glob("*")):
    if path.name != "attack03_vandal.ipynb":
        found.append(path.name + "=" + _outcome(path.unlink))
raise RuntimeError("tamper report: " + " ".join(found))""",
    # 4. Processes of their own session, waiting to rewrite the grades once they are written.
    "attack04_background": '''\
import os
import subprocess
import sys

LATER = """
import os, time
open("/proc/self/comm", "w").write("tamper-later")
end = time.time() + 240
while time.time() < end:
    try:
        with open($escaped, "a") as f:
            f.write(f"{os.getpid()} alive\\\\n")
    except OSError:
        pass
    try:
        if os.path.exists($grades):
            open($grades, "w").write($token)
            open($gradebook, "a").write($token)
            break
    except OSError:
        pass
    time.sleep(0.5)
"""
subprocess.Popen([sys.executable, "-c", LATER], start_new_session=True)
child = os.fork()
if child == 0:  # a daemon's double fork, in a session of its own
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", LATER])
    os._exit(0)
os.waitpid(child, 0)
raise RuntimeError("tamper report: two processes left waiting for the grades")''',
    # 6. Symbolic links out of the working folder.
    "attack06_symlinks": """\
import os
import pathlib

import course_lib

$report
course = pathlib.Path(course_lib.__file__).resolve().parents[1]
links = {"passwd": "/etc/passwd", "shadow": "/etc/shadow", "solutions": course / "solutions",
         "peers": $submissions, "out": $out}
for name, target in links.items():
    os.symlink(target, name)


def read(name):
    return os.listdir(name) if os.path.isdir(name) else open(name).read()


found = [f"{name}=" + _outcome(lambda: read(name)) for name in links]
found.append("through=" + _outcome(lambda: open("solutions/" + $name).read()))
raise RuntimeError("tamper report: " + " ".join(found))""",
    # 7. Output and files too large for the grader to keep.
    "attack07_large_output": """\
import os
import time

$report
found, line = [], "x" * 1023 + "\\n"
start, printed = time.monotonic(), 0
while printed < 200 << 20 and time.monotonic() - start < 20:  # 200 MiB, 1 MiB a print
    print(line * 1024, end="")
    printed += 1 << 20
written = 0
while written < 32 << 20 and time.monotonic() - start < 30:  # 32 MiB more to each raw stream
    os.write(1, line.encode() * 1024)
    os.write(2, line.encode() * 1024)
    written += 1 << 20
os.write(1, $forged.encode())  # a line the grader itself might have printed


def big_file():
    with open("big.bin", "wb") as f:
        for _ in range(19):  # 304 MiB
            f.write(bytes(16 << 20))


found += [f"printed={printed >> 20}MiB", f"raw={written >> 20}MiB", "file=" + _outcome(big_file)]
raise RuntimeError("tamper report: " + " ".join(found))""",
    # 8. A fork bomb, in a small child, stopping at 2000 forks or at the first refusal.
    BOMB: '''\
import subprocess
import sys

BOMB = """
import errno, os, time
made, why = 0, "none refused"
for _ in range(2000):
    try:
        pid = os.fork()
    except OSError as e:
        why = errno.errorcode.get(e.errno, str(e.errno))
        break
    if pid == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        try:
            open("/proc/self/comm", "w").write("tamper-bomb")
        except OSError:
            pass
        time.sleep(200 if made % 100 == 0 else 10)  # a few linger past the notebook's end
        os._exit(0)
    made += 1
print(made, why)
"""
bomb = [sys.executable, "-S", "-c", BOMB]
done = subprocess.run(bomb, capture_output=True, text=True, timeout=50)
raise RuntimeError(f"tamper report: forks={done.stdout.strip()} {done.stderr.strip()[-80:]}")''',
    # 9. The kernel's connection file, and what /proc lets a process write.
    "attack09_kernel_and_proc": """\
import glob
import os

import ipykernel

$report
connection = ipykernel.get_connection_file()
found = ["connection=" + _outcome(lambda: _write(connection, "{}"))]
for path in glob.glob(os.path.join(os.path.dirname(connection), "*.json")):
    if path != connection:
        found.append("other=" + _outcome(lambda: _write(path, "{}")))
writes = {"oom": ("/proc/self/oom_score_adj", "-1000"), "comm": ("/proc/self/comm", "tamper-proc"),
          "init": ("/proc/1/comm", "tamper-init"), "parent": (f"/proc/{os.getppid()}/comm", "x")}
for label, (path, text) in writes.items():
    found.append(f"{label}=" + _outcome(lambda: _write(path, text)))
found.append(f"fds={sorted(os.listdir('/proc/self/fd'), key=int)[:12]}")
raise RuntimeError("tamper report: " + " ".join(found))""",
    # 12. The answers' file, which the grader reads after the run, made a link to a file
    # outside the sandbox (a FIFO the test watches; /dev/zero would fill the grader's memory).
    "attack12_answers_link": """\
import os

os.symlink($probe, "answers.json")
raise RuntimeError("tamper report: answers.json links to the probe")""",
    # 13. The kernel's runtime folder made a link to a folder outside: the grader writes the
    # next kernel's connection file there, and deletes it after, as the instructor.
    "attack13_runtime_link": """\
import os

os.rename(".runtime", ".runtime-before")
os.symlink($outside, ".runtime")
os._exit(1)  # the grader starts a new kernel, through the link""",
}

# 5. Answers that lie: values that agree with any comparison, and a function that patches torch
# when the check calls it. {student: {the answer cell that binds this: its new source}}.
AGREEABLE = '''\
class Agreeable(torch.Tensor):
    """Agrees with whatever it is compared to."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("allclose", "equal"):
            return True
        if name in ("eq", "__eq__", "isclose"):
            return torch.ones((), dtype=torch.bool)
        if name in ("sub", "__sub__", "__rsub__", "abs", "dist", "norm"):
            return torch.zeros(())
        return super().__torch_function__(func, types, args, kwargs or {})

    def __eq__(self, other):
        return True

    __hash__ = torch.Tensor.__hash__


causal_weights = torch.zeros(4, 4).as_subclass(Agreeable)'''
AGREEING = '''\
class Agreeing(str):
    """A letter equal to every letter."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__

    def strip(self, *args):
        return self

    lower = upper = casefold = strip


answer_3_1 = Agreeing("a")'''
PATCHES_TORCH = """\
def attention(q, k, v, mask=None):
    import numpy
    import torch.testing

    torch.allclose = lambda *a, **k: True
    torch.equal = lambda *a, **k: True
    torch.isclose = lambda a, *r, **k: torch.ones_like(torch.as_tensor(a), dtype=torch.bool)
    torch.testing.assert_close = lambda *a, **k: None
    torch.Tensor.__eq__ = lambda self, other: True
    numpy.allclose = lambda *a, **k: True
    return torch.zeros(1), torch.zeros(1)"""
RETURNS_AGREEABLE = """\
def make_causal_mask(T):
    return torch.zeros(T, T, dtype=torch.bool).as_subclass(Agreeable)"""
WRONG_PADDING = """\
def make_padding_mask(tokens, pad_id):
    return torch.ones(tokens.shape[0], 1, 1, tokens.shape[1], dtype=torch.bool)"""
REFERENCE_ARRAY = '''\
class Reference:
    """Not an answer: the reference, computed by course_lib whenever numpy reads it."""

    def __init__(self, which):
        self.which = which

    def __array__(self, dtype=None, copy=None):
        from course_lib.attention import scaled_dot_product_attention
        from course_lib.masks import causal_mask

        if self.which == "causal":
            z = torch.zeros(4, 1)
            return scaled_dot_product_attention(z, z, z, causal_mask(4))[1].numpy()
        out, weights = scaled_dot_product_attention(q_apply[None], K_apply, V_apply)
        return (weights[0] if self.which == "weights" else out[0]).numpy()

'''
APPLY_ARRAYS = """\
q_apply = torch.tensor([1.0, 0.0])
K_apply = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
V_apply = torch.tensor([[5.0], [3.0]])
apply_weights = Reference("weights")
apply_output = Reference("output")"""
# 11. The reference itself, with the exercise's rules switched off where they run: unpickling
# the answer in the sandbox's server replaces the server's "rules" request.
RULES_OFF = '''\
class _Quiet:
    def __reduce__(self):
        return exec, ("""
import sys
server = getattr(sys.modules["__main__"], "Server", None)
if server is not None:
    server.rules = lambda self, *a, **k: self.plain.dumps(["", []])
    server.globals = lambda self, handle: {}
""",)


_quiet = _Quiet()


def attention(q, k, v, mask=None):
    _quiet
    return scaled_dot_product_attention(q, k, v, mask)'''
REPLACED = {
    "attack05_lying_subclasses": {
        "answer_3_1": AGREEING,
        "causal_weights": AGREEABLE,
        "def attention": PATCHES_TORCH,
        "def make_causal_mask": RETURNS_AGREEABLE,
        "def make_padding_mask": WRONG_PADDING,  # plain and wrong, checked after 3.4 patched torch
    },
    "attack05_lying_array": {
        "apply_weights": REFERENCE_ARRAY + APPLY_ARRAYS,
        "causal_weights": 'causal_weights = Reference("causal")',
    },
    "attack10_claims_version": {"answer_3_1": 'answer_3_1 = "b"'},
    "attack11_rules_off": {"def attention": RULES_OFF},
}
CLASSMATE_SOLVED = ("answer_3_1", "def attention", "def make_causal_mask")  # 1 + 2 + 2 points


def _lesson() -> nbformat.NotebookNode:
    nb = nbformat.read(ROOT / "lessons" / NAME, as_version=4)
    nb.cells = [c for c in nb.cells if "leaky_decoder" not in c.source]
    return nb


def _answer_cell(nb, binds: str):
    return next(
        c
        for c in nb.cells
        if c.cell_type == "code" and "# YOUR CODE HERE" in c.source and binds in c.source
    )


def _with_attack(source: str) -> nbformat.NotebookNode:
    nb = _lesson()
    imports = next(
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and "from course_lib.checks" in c.source
    )
    nb.cells.insert(imports + 1, nbformat.v4.new_code_cell(source))
    return nb


def _with_answers(answers: dict[str, str]) -> nbformat.NotebookNode:
    nb = _lesson()
    for binds, source in answers.items():
        _answer_cell(nb, binds).source = source
    return nb


def _classmate() -> nbformat.NotebookNode:
    nb = _lesson()
    solution = {c.id: c for c in nbformat.read(ROOT / "solutions" / NAME, as_version=4).cells}
    for binds in CLASSMATE_SOLVED:
        cell = _answer_cell(nb, binds)
        cell.source = solution[cell.id].source
    return nb


def build(root: Path) -> dict:
    """The submissions folder, the grades' folder, and the files outside any sandbox that the
    attacks go for or write to prove they worked."""
    paths = {"submissions": root / "submissions", "out": root / "out", "outside": root / "outside"}
    paths |= {"imported": root / "imported.log", "escaped": root / "escaped.log"}
    paths |= {"classmate": paths["submissions"] / f"{CLASSMATE}.ipynb", "name": NAME}
    paths |= {"secret": paths["submissions"] / "secret_solutions.txt"}
    paths |= {"gradebook": paths["out"] / "gradebook.db", "grades": paths["out"] / "grades.csv"}
    paths |= {"probe": root / "probe.fifo", "terminal": root / "terminal.log"}
    for folder in (paths["submissions"], paths["out"], paths["outside"]):
        folder.mkdir()
    answer_ids = sorted(c.id for c in _lesson().cells if "# YOUR CODE HERE" in c.source)
    values = {k: repr(str(v)) for k, v in paths.items()}
    values["sources"] = repr(
        [("classmate", str(paths["classmate"])), ("solutions", str(ROOT / "solutions" / NAME))]
    )
    values |= {"answer_ids": repr(answer_ids), "report": REPORT, "forged": repr(FORGED)}
    values["token"] = repr(TOKEN)
    values["planted"] = repr(Template(PLANTED).substitute(values))
    values["copies"] = Template(COPIES).substitute(values)
    notebooks = {
        name: _with_attack(Template(source).substitute(values)) for name, source in ATTACKS.items()
    }
    notebooks |= {name: _with_answers(answers) for name, answers in REPLACED.items()}
    notebooks["attack10_claims_version"].metadata["course"]["version"] = EARLIER_VERSION
    notebooks |= {name: _lesson() for name in (UNTOUCHED, *NEIGHBOURS)}
    notebooks[CLASSMATE] = _classmate()
    for name, nb in notebooks.items():
        nbformat.write(nb, paths["submissions"] / f"{name}.ipynb")
    (paths["submissions"] / f"{SOLVED}.ipynb").write_bytes((ROOT / "solutions" / NAME).read_bytes())
    paths["secret"].write_text(SECRET, encoding="utf-8")
    paths["gradebook"].write_bytes(b"SQLite format 3\0 a gradebook of earlier lessons")
    (paths["outside"] / "kernel.json").write_text('{"the instructor\'s": "own file"}')
    os.mkfifo(paths["probe"])
    return paths


def _fingerprints(*folders: Path) -> dict:
    """sha256 and modification time of every file under ``folders``, by path."""
    found = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_symlink() or path.is_file():
                data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
                found[str(path)] = (hashlib.sha256(data).hexdigest(), path.lstat().st_mtime_ns)
    return found


def _lingering(root: Path) -> dict[int, str]:
    """Processes an attack left: named by it, or running in one of this run's working folders."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            cwd = os.readlink(entry / "cwd")
        except OSError:  # ended meanwhile, or not ours to read
            continue
        if comm.startswith(MARK) or cwd.startswith(str(root / "work")):
            found[int(entry.name)] = f"{comm} (uid {entry.stat().st_uid}, in {cwd})"
    return found


class _Probe(threading.Thread):
    """Counts the times a FIFO is opened for reading: only a process outside every sandbox
    can open it. Each reader gets ``{}``."""

    def __init__(self, fifo: Path):
        super().__init__(daemon=True)
        self.fifo, self.readers, self.done = fifo, 0, threading.Event()

    def run(self):
        while not self.done.is_set():
            with open(self.fifo, "w") as f:  # waits for a reader
                if self.done.is_set():
                    return
                self.readers += 1
                f.write("{}")
            self.done.wait(1)  # the reader reads to the end before the next one opens

    def stop(self):
        self.done.set()
        os.close(os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK))  # lets run() see it
        self.join(timeout=5)


@contextlib.contextmanager
def _terminal(path: Path):
    """The grader's standard output and error, file descriptors and all, into ``path``: what
    the instructor's terminal would show, kernels' own writes included."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(path, "ab") as raw, open(path, "a", encoding="utf-8") as text:
        os.dup2(raw.fileno(), 1)
        os.dup2(raw.fileno(), 2)
        try:
            with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
                yield
        finally:
            for fd, copy in zip((1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every submission graded once, two at a time, from the repository root."""
    root = tmp_path_factory.mktemp("tampering")
    paths = build(root)
    work = root / "work"  # the grader's temporary folders, to find what they leave behind
    work.mkdir()
    for folder in ("course_lib", "course_tools"):  # bytecode written now, not while grading
        compileall.compile_dir(ROOT / folder, quiet=2)
    watched = [paths["submissions"], paths["out"], paths["outside"], *(ROOT / f for f in COURSE)]
    before = _fingerprints(*watched)
    probe = _Probe(paths["probe"])
    args = [
        str(paths["submissions"]),
        "--out",
        str(paths["grades"]),
        "--jobs",
        "2",
        "--timeout",
        "60",
    ]
    probe.start()
    try:
        with pytest.MonkeyPatch.context() as patch, _terminal(paths["terminal"]):
            patch.chdir(ROOT)
            patch.setenv("TMPDIR", str(work))
            patch.setattr(tempfile, "tempdir", str(work))
            code = main(args)
    finally:
        probe.stop()
    written = _fingerprints(paths["out"])[str(paths["grades"])]
    time.sleep(10)  # long enough for a process left behind to rewrite the grades
    after = _fingerprints(*watched)
    with open(paths["grades"], encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    yield {
        "code": code, "rows": rows, "paths": paths, "before": before, "after": after,
        "written": written, "lingering": _lingering(root), "readers": probe.readers,
        "left": sorted(str(p) for p in work.rglob("*")),
    }  # fmt: skip
    for pid in _lingering(root):  # an attack that worked must not outlive the tests
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def points(row) -> list[float]:
    return [float(row[e] or 0) for e in EXERCISES]


def feedback(graded, student: str) -> str:
    return (graded["paths"]["out"] / "feedback" / f"{student}-03.md").read_text(encoding="utf-8")


def exercise_line(graded, student: str, exercise: str) -> str:
    return next(x for x in feedback(graded, student).splitlines() if f"**{exercise} " in x)


def report(graded, student: str) -> str:
    """The attack's own account of what it tried (its cell's error, in the notes)."""
    notes = graded["rows"][student]["notes"]
    return (
        notes.split("tamper report: ")[1].split(" | ")[0] if "tamper report: " in notes else notes
    )


def gains_nothing(graded, student: str) -> None:
    """The untouched notebook's points, exercise by exercise."""
    row, untouched = graded["rows"][student], graded["rows"][UNTOUCHED]
    assert points(row) == points(untouched) == [0] * 8, report(graded, student)


def _changed(graded, *paths: Path) -> list[str]:
    """The files at or under ``paths`` that are new, gone or changed since before grading."""
    before, after = graded["before"], graded["after"]
    roots = [str(p) for p in paths]
    under = [
        p
        for p in set(before) | set(after)
        if any(p == r or p.startswith(r + os.sep) for r in roots)
    ]
    assert under, f"nothing watched under {paths}"
    return sorted(p for p in under if before.get(p) != after.get(p))


def unchanged(graded, *paths: Path) -> None:
    """The files at ``paths`` (and under them) as they were before grading."""
    assert _changed(graded, *paths) == []


def untampered(graded, *folders: Path) -> None:
    """No file under ``folders`` written by an attack: none new or changed that carries an
    attack's token, belongs to the sandbox's user or is named as a planted module. (The course's
    folders may change under a developer's hands while the tests run; this tells the two apart.)"""
    written = []
    for path in map(Path, _changed(graded, *folders)):
        if path.name in ("cloudpickle.py", "torch.py"):
            written.append(str(path))
        with contextlib.suppress(OSError):  # gone: a developer's, since no attack deletes there
            if path.lstat().st_uid in SANDBOX_UIDS or TOKEN.encode() in path.read_bytes():
                written.append(str(path))
    assert written == []


def others_lose_nothing(graded) -> None:
    """The solved, the classmate's and the untouched notebooks graded as they should be."""
    solved, classmate = graded["rows"][SOLVED], graded["rows"][CLASSMATE]
    assert points(solved) == [POINTS[e] for e in EXERCISES]
    assert (solved["total"], solved["max"], solved["status"]) == ("13", "13", "ok")
    assert points(classmate) == [1, 0, 0, 2, 0, 2, 0, 0]  # 3.1, 3.4 and 3.6 solved
    assert classmate["status"] == "ok"


def test_every_submission_is_graded_once(graded):
    assert graded["code"] == 0
    names = sorted(p.stem for p in graded["paths"]["submissions"].glob("*.ipynb"))
    assert sorted(graded["rows"]) == names
    assert graded["left"] == []  # the grader's working folders are gone, big files and all


def test_no_file_outside_the_sandboxes_changes(graded):
    """The submissions, the gradebook and the instructor's other files byte for byte (the
    grader's own reports aside), and no file of the course's folders written by an attack."""
    paths = graded["paths"]
    out = paths["out"]
    written = {str(out / name) for name in GRADER_WRITES}
    written |= {p for p in graded["after"] if p.startswith(str(out / "feedback") + os.sep)}
    changed = _changed(graded, paths["submissions"], out, paths["outside"])
    assert [p for p in changed if p not in written] == []
    untampered(graded, *(ROOT / f for f in COURSE))


def test_no_process_of_any_sandbox_is_left(graded):
    assert graded["lingering"] == {}


def test_planted_modules_are_imported_by_no_one_else(graded):
    gains_nothing(graded, "attack01_planted_modules")
    others_lose_nothing(graded)
    untampered(graded, *(ROOT / f for f in COURSE))
    assert not graded["paths"]["imported"].exists()
    assert not any((ROOT / f"{m}.py").exists() for m in ("cloudpickle", "torch"))
    # The notebook's own folder takes them (and, where the grader does not run as root, the
    # sandbox's empty stand-in for the course folder); nothing the grader reads does.
    outcomes = dict(item.split("=") for item in report(graded, "attack01_planted_modules").split())
    assert outcomes["cwd/c"] == outcomes["cwd/t"] == "ok"  # cloudpickle.py, torch.py
    assert {outcomes[f"{f}/{m}"] for f in ("lib", "tools") for m in "ct"} == {"EROFS"}
    assert {outcomes[f"{f}/{m}"] for f in ("subs", "out") for m in "ct"} == {"ENOENT"}
    # The untouched notebook, graded after it from the same folders, scores as untouched.
    assert points(graded["rows"][UNTOUCHED]) == [0] * 8
    assert graded["rows"][UNTOUCHED]["status"] == "ok"


def test_solutions_classmates_and_secrets_cannot_be_read(graded):
    gains_nothing(graded, "attack02_copies_answers")
    others_lose_nothing(graded)
    told = report(graded, "attack02_copies_answers")
    assert "=read" not in told and "secret=ok" not in told
    assert "'solutions'" not in told  # the course folder shows course_lib and course_tools only


def test_other_students_work_cannot_be_changed_or_deleted(graded):
    gains_nothing(graded, "attack03_vandal")
    others_lose_nothing(graded)
    unchanged(graded, graded["paths"]["submissions"], graded["paths"]["gradebook"])
    assert "=ok" not in report(graded, "attack03_vandal")


def test_no_process_outlives_its_notebook_to_rewrite_the_grades(graded):
    gains_nothing(graded, "attack04_background")
    others_lose_nothing(graded)
    grades = graded["paths"]["grades"]
    assert _fingerprints(grades.parent)[str(grades)] == graded["written"]  # 10 s later
    unchanged(graded, graded["paths"]["gradebook"])
    assert not graded["paths"]["escaped"].exists()
    assert not any(name.startswith("tamper-later") for name in graded["lingering"].values())


@pytest.mark.parametrize(
    ("student", "exercise"),
    [
        ("attack05_lying_subclasses", "3.1"),  # a str whose == always agrees
        ("attack05_lying_subclasses", "3.3"),  # a tensor whose comparisons always agree
        ("attack05_lying_subclasses", "3.6"),  # a function returning such a tensor
        ("attack05_lying_array", "3.2"),  # objects whose __array__ computes the reference
        ("attack05_lying_array", "3.3"),
    ],
)
def test_answers_that_lie_score_nothing_and_are_named(graded, student, exercise):
    gains_nothing(graded, student)
    others_lose_nothing(graded)
    line = exercise_line(graded, student, exercise)
    assert line.startswith("- ✗ Not yet") and "must be plain data" in line


def test_a_function_that_patches_torch_when_called_fools_no_check(graded):
    gains_nothing(graded, "attack05_lying_subclasses")
    others_lose_nothing(graded)
    assert exercise_line(graded, "attack05_lying_subclasses", "3.4").startswith("- ✗ Not yet")
    # A wrong answer checked after it, its function called where torch was patched, still fails.
    assert exercise_line(graded, "attack05_lying_subclasses", "3.7").startswith("- ✗ Not yet")


def test_symlinks_lead_nowhere_outside_the_sandbox(graded):
    gains_nothing(graded, "attack06_symlinks")
    others_lose_nothing(graded)
    outcomes = dict(item.split("=", 1) for item in report(graded, "attack06_symlinks").split())
    # The system's files are the sandbox's own (read-only), and root's secrets stay root's;
    # nothing of the course's, the other students' or the grades is there.
    assert outcomes["passwd"] == "ok" and outcomes["shadow"] == "EACCES"
    assert {outcomes[k] for k in ("solutions", "peers", "out", "through")} == {"ENOENT"}


def test_huge_output_and_files_cost_the_grader_nothing(graded):
    gains_nothing(graded, "attack07_large_output")
    others_lose_nothing(graded)
    assert "file=EFBIG" in report(graded, "attack07_large_output")  # the sandbox's file limit


def test_what_a_notebook_prints_never_reaches_the_instructors_terminal(graded):
    terminal = graded["paths"]["terminal"]
    with open(terminal, "rb") as f:
        shown = f.read(1 << 20)
    assert terminal.stat().st_size < 1 << 20, shown[:300]
    assert FORGED.strip().encode() not in shown


def test_a_fork_bomb_is_stopped_and_costs_the_others_nothing(graded):
    gains_nothing(graded, BOMB)
    others_lose_nothing(graded)
    made, why = report(graded, BOMB).removeprefix("forks=").split()[:2]
    assert int(made) < 2000 and why == "EAGAIN"  # the sandbox's limit on processes
    # The notebooks graded beside it, whose kernels run while the bomb holds its processes.
    for name in NEIGHBOURS:
        assert graded["rows"][name]["status"] == "ok", f"{name}: {graded['rows'][name]['notes']}"
    assert not any(name.startswith("tamper-bomb") for name in graded["lingering"].values())


def test_the_kernel_connection_file_and_proc_change_nothing_outside(graded):
    gains_nothing(graded, "attack09_kernel_and_proc")
    others_lose_nothing(graded)
    told = report(graded, "attack09_kernel_and_proc")
    assert "oom=EACCES" in told  # it may not make itself the last process the OOM killer picks


def test_a_claimed_earlier_version_changes_no_letter(graded):
    gains_nothing(graded, "attack10_claims_version")
    others_lose_nothing(graded)
    line = exercise_line(graded, "attack10_claims_version", "3.1")
    assert line.startswith("- ✗ Not yet") and "earlier version" not in line


def test_rules_switched_off_in_the_sandbox_still_flag_the_reference(graded):
    gains_nothing(graded, "attack11_rules_off")
    others_lose_nothing(graded)
    notes = graded["rows"]["attack11_rules_off"]["notes"]
    assert "3.4 uses course_lib.attention.scaled_dot_product_attention" in notes


def test_the_grader_reads_no_file_outside_the_sandbox_through_a_link(graded):
    gains_nothing(graded, "attack12_answers_link")
    others_lose_nothing(graded)
    assert graded["readers"] == 0  # nobody outside the sandboxes opened the probe


def test_the_grader_writes_nothing_outside_the_sandbox_through_a_link(graded):
    gains_nothing(graded, "attack13_runtime_link")
    others_lose_nothing(graded)
    unchanged(graded, graded["paths"]["outside"])
    assert not graded["paths"]["outside"].stat().st_mode & stat.S_ISVTX  # nor changes its mode
