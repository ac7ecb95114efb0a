"""Running a copy of a submission in a fresh kernel, whatever the notebook does.

Every code cell runs with a time limit and errors allowed, so one broken cell costs only
the answers that depend on it; cells that only call ``check`` or ``hint`` are skipped (they
only display, and the grader checks for itself). A cell that times out or kills the kernel
(``os._exit``) is noted, the kernel is replaced, and the notebook runs again from the top
without that cell. Stored outputs are cleared first and new outputs other than errors are
discarded: nothing the notebook prints can count as a result. At the end, one more cell
serialises the answer objects with cloudpickle (which also carries functions defined in
the notebook), and the source of those that are functions, into a JSON file for the server
the checks call (``inside``) should the kernel stop serving them; then, when the grader asks,
the kernel itself serves the checks (``inside.serve_here``) until the grader has done.
"""

import ast
import os
import secrets
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from ipykernel.kernelspec import RESOURCES, get_kernel_dict
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from traitlets import default

from course_lib.replay import GRADING

from . import sandbox

MAX_RUNS = 4  # the first run plus up to three restarts, each without one more bad cell
STARTING = -1  # where a run failed when its kernel failed to start

# One thread per kernel, set in its environment before it starts, so that it holds even when
# the notebook's first cell (which sets it in the lessons) fails: the grader runs several
# notebooks side by side, and a kernel with every core's worth of threads slows them all past
# the time limit.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}

EXPORT = """\
def _export_answers(names, path):
    import inspect, json, os, cloudpickle
    exported = {{}}
    os.makedirs(os.path.join(os.path.dirname(path), ".answers"), exist_ok=True)
    for k, name in enumerate(names):
        if name in globals():
            try:  # each in a file of its own: a model's megabytes are not worth JSON's text
                file = os.path.join(".answers", f"{{k}}.pickle")
                with open(os.path.join(os.path.dirname(path), file), "wb") as f:
                    cloudpickle.dump(globals()[name], f)
                exported[name] = {{"file": file}}
            except Exception as e:
                exported[name] = {{"error": f"{{type(e).__name__}}: {{e}}"}}
            try:  # only the kernel knows a cell's source; a check may read it
                exported[name]["source"] = inspect.getsource(globals()[name])
            except Exception:
                pass
    with open(path, "w", encoding="utf-8") as f:
        json.dump(exported, f)
_export_answers({names!r}, {path!r})
del _export_answers
"""

SERVE = """\
import course_tools.grading.inside
course_tools.grading.inside.serve_here({path!r}, globals())
"""


@dataclass
class Execution:
    """What running a notebook produced: whether its answers were exported (``answers.json``
    in its folder, read by the checks' server) and what went wrong, per cell."""

    problems: list[str] = field(default_factory=list)
    exported: bool = False


class _ThisPython(KernelSpecManager):
    """The kernel is ipykernel on this interpreter, whatever other kernelspecs say; it is
    interrupted by a message, which reaches it inside a sandbox where a signal would not."""

    def get_kernel_spec(self, kernel_name):
        spec = get_kernel_dict() | {"interrupt_mode": "message"}
        return self.kernel_spec_class(resource_dir=RESOURCES, **spec)


class _Kernel(AsyncKernelManager):
    """A kernel started in ``folder``; in the submission's sandbox unless ``sandboxed`` is
    False. The sandbox has no network: kernel and grader talk through Unix sockets in the
    folder (ZeroMQ's ipc transport), which it shares with the grader."""

    folder: Path | None = None
    sandboxed = False

    @default("kernel_spec_manager")
    def _kernel_spec_manager_default(self):
        return _ThisPython()

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        if self.sandboxed:  # a folder of its own for each kernel, beside the submission's: code
            # that ran in an earlier kernel cannot have planted links there for this one
            self.runtime = Path(tempfile.mkdtemp(prefix="kernel-", dir=self.folder.parent))
            self.transport, self.cache_ports = "ipc", False
            self.connection_file = str(self.runtime / "kernel.json")

    def format_kernel_cmd(self, extra_arguments=None):
        argv = super().format_kernel_cmd(extra_arguments)
        if not self.sandboxed:
            return argv
        return sandbox.command(argv, self.folder, shared=[self.runtime])


def _kernel_class(folder: Path, sandboxed: bool) -> type:
    return type("_SubmissionKernel", (_Kernel,), {"folder": folder, "sandboxed": sandboxed})


class _Client(NotebookClient):
    def output(self, outs, msg, display_id, cell_index):
        # Keep errors (for the feedback); drop everything else, so that huge outputs cost no
        # memory and printed text can never pass for a check result.
        if msg["msg_type"] == "error":
            return super().output(outs, msg, display_id, cell_index)
        return None


def _only_checks(cell) -> bool:
    """A cell that only calls ``check``/``hint``: it displays, and the grader checks anyway."""
    try:
        body = ast.parse(cell.source).body
    except SyntaxError:
        return False
    calls = [s.value for s in body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
    named = [c.func.id for c in calls if isinstance(c.func, ast.Name)]
    return bool(body) and len(named) == len(body) and set(named) <= {"check", "hint"}


def _where(nb, index: int) -> str:
    first = next((line.strip() for line in nb.cells[index].source.splitlines() if line.strip()), "")
    first = first if len(first) <= 50 else first[:47] + "..."
    return f"cell {index + 1} (`{first}`)" if first else f"cell {index + 1}"


def _error(nb, index: int) -> str | None:
    for out in nb.cells[index].get("outputs", []):
        if out.get("output_type") == "error":
            value = str(out.get("evalue", "")).strip().splitlines()
            text = f"{out.get('ename')}: {value[0][:200]}" if value else out.get("ename")
            return f"{_where(nb, index)} raised {text}"
    return None


def _serve(client, workdir: Path, serve) -> None:
    """Have the kernel serve the checks: it connects to a socket in a folder it shares with
    this process, and serves in one more cell, whose end is not awaited; ``serve`` is called
    with the listening socket and a function that stops the kernel, and does the checking
    meanwhile. Where no socket can be made there (a path too long, a name taken), ``serve``
    is not called: a server process will do."""
    runtime = getattr(client.km, "runtime", None) or workdir.parent
    path = os.path.join(runtime, f"checks-{secrets.token_hex(4)}")  # no name a cell could take
    with socket.socket(socket.AF_UNIX) as listener:
        try:
            listener.bind(path)
            os.chmod(path, 0o777)  # the sandbox's user connects to it
        except OSError:
            return
        listener.listen(1)
        client.kc.execute(SERVE.format(path=path), silent=True, store_history=False)
        process = getattr(client.km.provisioner, "process", None)  # the sandbox, kernel inside
        serve(listener, process.kill if process is not None else None)


def _run_once(nb, workdir, timeout, skip, export, sandboxed, serve=None):
    """One run in a fresh kernel: (cell errors, index of the fatal cell, why it was fatal).
    ``serve(listener, stop_kernel)``, if given, is called once the answers are exported,
    while the kernel serves them."""
    client = _Client(
        nb,
        timeout=timeout,
        kernel_name="python3",
        kernel_manager_class=_kernel_class(workdir, sandboxed),
        extra_arguments=["--IPKernelApp.log_level=ERROR"],  # not its warnings about TCP
        allow_errors=True,
        interrupt_on_timeout=False,
        shutdown_kernel="immediate",
        resources={"metadata": {"path": str(workdir)}},
    )
    errors = []
    index = STARTING
    try:  # what the kernel prints goes nowhere: the instructor's terminal is not the student's
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        with client.setup_kernel(env=os.environ | ONE_THREAD | {GRADING: "1"}, **quiet):
            index = None
            for index, cell in enumerate(nb.cells):
                if cell.cell_type == "code" and index not in skip and not _only_checks(cell):
                    cell.outputs = []
                    client.execute_cell(cell, index)
                    errors += [e for e in [_error(nb, index)] if e]
            index = None
            cell = nbformat.v4.new_code_cell(export)
            nb.cells.append(cell)  # nbclient addresses cells by their index in the notebook
            client.execute_cell(cell, len(nb.cells) - 1)
            exported = [
                f"the grader's export step raised {o.ename}: {o.evalue}" for o in cell.outputs
            ]
            errors += exported
            if serve is not None and not exported:
                _serve(client, workdir, serve)
    except CellTimeoutError:
        return errors, index, f"did not finish within {timeout} s (infinite loop?)"
    except DeadKernelError:
        return errors, index, "stopped the Python kernel (os._exit, a crash, or out of memory)"
    except (RuntimeError, ValueError) as e:  # jupyter_client's: the kernel died or garbled
        return errors, index, f"lost its kernel ({type(e).__name__}: {str(e)[:100]})"
    finally:
        if nb.cells and nb.cells[-1].source == export:
            nb.cells.pop()
    return errors, None, None


def run(
    nb, workdir: Path, names: list[str], timeout: int, sandboxed: bool = False, serve=None
) -> Execution:
    """Run ``nb`` (already a private copy) in ``workdir``; never raises for the notebook's sake.

    With ``sandboxed``, the kernel (every line of the student's code) runs in the sandbox, in
    ``workdir``; this process only sends it the cells and reads what comes back. ``serve``, if
    given, is called with a listening Unix socket and a function that stops the kernel, while
    the kernel of the run that exported the answers is still there, to serve the checks from
    it (``checking.Link.attach``)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    answers_path = workdir / "answers.json"
    export = EXPORT.format(names=sorted(set(names)), path=str(answers_path))
    result, skip = Execution(), set()
    for _ in range(MAX_RUNS):
        answers_path.unlink(missing_ok=True)
        errors, fatal, why = _run_once(nb, workdir, timeout, skip, export, sandboxed, serve)
        if fatal is None and why is None:
            result.problems += errors
            break
        if fatal is None:  # the export itself failed: the answers cannot be read
            result.problems += [*errors, f"the answers could not be exported: the kernel {why}"]
            return result
        if fatal == STARTING:  # another notebook's processes, say, left it none to start with
            result.problems.append(f"the kernel {why} as it started; the notebook was run again")
            continue
        result.problems.append(f"{_where(nb, fatal)} {why}; it was skipped and the notebook re-run")
        skip.add(fatal)
    else:
        result.problems.append(f"gave up after {MAX_RUNS} runs")
        return result
    # Only looked at, never read here: the student's code may have made it a link or a pipe.
    result.exported = answers_path.is_file() and not answers_path.is_symlink()
    if not result.exported:
        result.problems.append("the answers could not be exported (the export file is missing)")
    return result
