"""nbgrader's autograde with each student's kernel in the grader's sandbox: ``make autograde``.

nbgrader runs a submission by starting a kernel and sending it the notebook's cells; the
student's code runs in that kernel, with the instructor's rights, beside the gradebook, the
solutions in ``source/`` and every other student's folder. Here the kernel runs in the
sandbox of :mod:`course_tools.grading.sandbox` (bubblewrap: read-only system and course
packages, no network, its own process tree, prlimit's limits) instead:

- :class:`SandboxedKernelManager` starts every kernel, whatever the notebook names, in a fresh
  private folder that holds a copy of the notebook's folder and the kernel's connection file.
  The kernel talks to nbgrader through Unix sockets in that folder (jupyter's ``ipc``
  transport): a sandbox without a network reaches no TCP port of the host, but it can share a
  folder. Interrupts go as messages (a signal would reach bubblewrap, not the kernel).
- ``python -P -m course_tools.classroom.sandboxed_kernel -f CONNECTION_FILE`` is the kernel
  command: it runs ipykernel in the sandbox, whose only writable folder is the connection
  file's. It refuses a connection file that is not alone in such a folder.
- :func:`sandboxed` swaps nbgrader's ``Execute`` preprocessor for one using that manager;
  the course's ``nbgrader_config.py`` does it when ``make autograde`` sets
  ``ATTENTION_COURSE_SANDBOX=1``.
- ``python -m course_tools.classroom.sandboxed_kernel autograde [--course-dir DIR] ASSIGNMENT
  [OPTION...]`` (``make autograde``) runs ``nbgrader autograde`` so, with a private, fresh
  ``JUPYTER_RUNTIME_DIR`` that it removes at the end. Without bubblewrap it refuses.

The sandbox protects files and processes, not the verdict: nbgrader scores what the kernel
reports, and student code in the kernel can still patch the checks (docs/teaching.md).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.paths import jupyter_runtime_dir
from traitlets import default

from ..grading import sandbox

SWITCH = "ATTENTION_COURSE_SANDBOX"  # set to "1": nbgrader_config.py sandboxes the kernels
CONNECTION = ".kernel.json"  # the connection file's name in the kernel's private folder
SOCKET_PATH = 100  # bytes: a Unix socket's path may have 107 on Linux, 103 on macOS
UNSANDBOXED = (
    "bubblewrap (bwrap) is not installed, and `make autograde` runs student code only in its "
    f"sandbox. Install it ({sandbox.INSTALL}), or run plain `nbgrader autograde`, which runs "
    "every notebook with your rights: a notebook can then read the solutions in source/ and "
    "other students' work, and change the gradebook and their files."
)
LINKED = (
    "submitted/ holds symbolic links. nbgrader copies a submission's files with your rights "
    "before the sandbox starts, and would copy what a link points to (the solutions in "
    "source/, another student's work) into it. Remove them, or replace them with the files:"
)


class SandboxedKernelManager(AsyncKernelManager):
    """Starts this Python's ipykernel in the sandbox, in a fresh private folder of its own
    under the runtime folder, with a copy of the notebook's folder; removes it at shutdown."""

    @default("transport")
    def _transport_default(self) -> str:
        return "ipc"  # Unix sockets in the kernel's folder: the sandbox has no network

    @property
    def kernel_spec(self) -> KernelSpec:
        # Whatever kernel the notebook names: a student cannot pick one outside the sandbox.
        argv = [sys.executable, "-P", "-m", __name__, "-f", "{connection_file}"]
        return KernelSpec(
            argv=argv,
            display_name="Python 3 (sandboxed)",
            language="python",
            interrupt_mode="message",  # a signal would stop bubblewrap, not the cell
        )

    async def _async_pre_start_kernel(self, **kw):
        if not sandbox.available():
            raise RuntimeError(UNSANDBOXED)
        if not self.connection_file:  # the first start; a restart keeps the folder
            folder = _private_copy(kw.pop("cwd", None))
            self.connection_file = str(folder / CONNECTION)
            self.ip = str(folder / ".kernel-ipc")  # the sockets: .kernel-ipc-1 ... -5
            kw["cwd"] = str(folder)  # never the student's own folder (see launch)
        return await super()._async_pre_start_kernel(**kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart and self.connection_file:
            shutil.rmtree(Path(self.connection_file).parent, ignore_errors=True)


def _private_copy(notebook_folder: str | None) -> Path:
    """A fresh folder in the runtime folder, holding a copy of the notebook's folder (links
    copied as links: in the sandbox they lead nowhere)."""
    runtime = Path(jupyter_runtime_dir()).resolve()
    if notebook_folder and runtime.is_relative_to(Path(notebook_folder).resolve()):
        raise ValueError(
            "the Jupyter runtime folder should lie outside the notebook's folder, which each "
            f"kernel gets a copy of; got {runtime} inside {notebook_folder}"
        )
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="kernel-", dir=runtime))
    if len(str(folder / ".kernel-ipc-5").encode()) > SOCKET_PATH:
        folder.rmdir()
        raise ValueError(
            f"the Jupyter runtime folder should have a path short enough for the kernel's "
            f"sockets ({SOCKET_PATH} bytes with their names; set TMPDIR to a shorter one); "
            f"got {runtime}"
        )
    try:
        if notebook_folder:
            shutil.copytree(notebook_folder, folder, symlinks=True, dirs_exist_ok=True)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


def sandboxed(preprocessors: list) -> list:
    """nbgrader's autograde preprocessors with ``Execute`` replaced by one whose kernels run
    in the sandbox (imports nbgrader: call it from ``nbgrader_config.py``)."""
    from nbgrader.preprocessors import Execute

    class SandboxedExecute(Execute):
        def __init__(self, **kwargs):
            # nbgrader passes its kernel manager as an argument, which config cannot override.
            kwargs["kernel_manager_class"] = SandboxedKernelManager
            super().__init__(**kwargs)

    return [SandboxedExecute if p is Execute else p for p in preprocessors]


def launch(connection_file: Path, extra: list[str]) -> None:
    """Replace this process with ipykernel in the sandbox, in the connection file's folder."""
    folder = _check(connection_file)  # sandbox.command hands it over to the sandbox's user
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", str(connection_file), *extra]
    # Its parent is the sandbox's first process, pid 1: nothing to watch, and no banner.
    argv.append("--IPKernelApp.parent_handle=1")
    command = sandbox.command(argv, folder)
    os.execvp(command[0], command)


def _check(connection_file: Path) -> Path:
    """The kernel's private folder: the connection file's, holding its sockets too. The
    folder is bound writable into the sandbox, so it must be the kernel's alone (never a
    shared runtime folder with other kernels' connection files, never the student's folder)."""
    connection_file = connection_file.resolve()
    info = json.loads(connection_file.read_text(encoding="utf-8"))
    folder = connection_file.parent
    if info.get("transport") != "ipc" or Path(info.get("ip", "")).parent.resolve() != folder:
        raise ValueError(
            "connection_file should use the ipc transport with its sockets beside it (the "
            "sandbox has no network); got transport "
            f"{info.get('transport')!r}, ip {info.get('ip')!r} for {connection_file}"
        )
    if connection_file.name != CONNECTION:
        raise ValueError(
            f"connection_file should be {CONNECTION} in a folder of its own, made by "
            f"SandboxedKernelManager; got {connection_file}"
        )
    return folder


def autograde(course_dir: Path, arguments: list[str]) -> int:
    """``nbgrader autograde ARGUMENTS`` in ``course_dir``, every kernel in the sandbox."""
    if not sandbox.available():
        print(UNSANDBOXED, file=sys.stderr)
        return 2
    if why := sandbox.cannot_start():
        print(why, file=sys.stderr)
        return 2
    if links := _links(course_dir / "submitted"):
        print(LINKED + "".join(f"\n  {link}" for link in links), file=sys.stderr)
        return 2
    nbgrader = Path(sys.executable).parent / "nbgrader"  # beside this Python, with alembic
    if not nbgrader.is_file():
        print(
            f"nbgrader should be installed beside {sys.executable} (make graders-env)",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="autograde-") as runtime:
        env = os.environ | {SWITCH: "1", "JUPYTER_RUNTIME_DIR": runtime}
        env["PATH"] = f"{nbgrader.parent}{os.pathsep}{env.get('PATH', '')}"
        command = [str(nbgrader), "autograde", *arguments]
        return subprocess.run(command, cwd=course_dir, env=env).returncode


def _links(folder: Path) -> list[Path]:
    """The symbolic links in ``folder``, which nbgrader would follow with your rights."""
    found = []
    for top, folders, files in os.walk(folder):  # a linked folder is listed, not entered
        found += [Path(top, name) for name in folders + files if Path(top, name).is_symlink()]
    return sorted(found)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["autograde"]:
        parser = argparse.ArgumentParser(
            prog="python -m course_tools.classroom.sandboxed_kernel autograde",
            description="nbgrader autograde with every student's kernel in the sandbox.",
            allow_abbrev=False,
        )
        parser.add_argument("--course-dir", type=Path, default=Path("build/nbgrader"))
        known, rest = parser.parse_known_args(argv[1:])
        if not (known.course_dir / "nbgrader_config.py").is_file():
            parser.error(f"--course-dir should hold nbgrader_config.py; got {known.course_dir}")
        return autograde(known.course_dir, rest)
    parser = argparse.ArgumentParser(description="Run ipykernel in the sandbox.")
    parser.add_argument("-f", dest="connection_file", type=Path, required=True)
    known, extra = parser.parse_known_args(argv)
    try:
        launch(known.connection_file, extra)
    except (OSError, ValueError) as e:  # no such file, or one the sandbox cannot use
        print(e, file=sys.stderr)
    return 2  # reached only when the kernel could not start: launch replaces this process


if __name__ == "__main__":
    sys.exit(main())
