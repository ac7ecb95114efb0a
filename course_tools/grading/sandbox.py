"""A sandbox for one submission's code: bubblewrap, an unprivileged user and resource limits.

Student code (the notebook's cells, and the learner's functions that the checks call) runs
only inside it. bubblewrap (``bwrap``, Debian's package ``bubblewrap``) builds a file system
of its own for the process:

- read-only: the system (``/usr``, ``/etc``), this Python and its packages, and the course's
  ``course_lib`` and ``course_tools``, nothing else of the course folder: no ``solutions/``,
  ``tests/``, ``points.toml``, other submissions or grades;
- writable: one private folder holding a copy of the submission, an empty ``/tmp`` and, for
  a kernel, a fresh folder of its own for its sockets and connection file;
- its own process, IPC, network (loopback only), host-name and cgroup namespaces: it sees no
  other process, reaches no network, and everything it started is killed when it ends.

Inside, the code runs as an unprivileged user (one of its own when the grader runs as root),
under ``prlimit``'s limits on CPU time, memory, file size and processes; the caller adds the
wall-clock limit. Where bubblewrap is missing the grader refuses to run student code unless
the instructor passes ``--no-sandbox``, whose help names the risk (:func:`missing`).
"""

import itertools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from course_lib.replay import GRADING

# When the grader runs as root, each sandbox runs as a user of its own, with no name and no
# rights, so that its process limit is its own: a block of 100 for each grading process, far
# above the users and the subordinate ids (/etc/subuid) a system hands out.
FIRST_UID, UIDS = 1_000_000_000, 100_000
_started = itertools.count()
INSTALL = "sudo apt-get install bubblewrap (Debian, Ubuntu) or sudo dnf install bubblewrap"


@dataclass(frozen=True)
class Limits:
    """What one process inside may take. Memory is address space per process (torch alone
    reserves about 1 GiB of it); processes count threads too (a kernel runs about 20)."""

    cpu_seconds: int = 1800
    memory_bytes: int = 6 << 30
    file_bytes: int = 256 << 20
    processes: int = 256


def available() -> bool:
    return shutil.which("bwrap") is not None


def missing() -> str:
    """Why the grader refuses to run without a sandbox, and what to do."""
    return (
        "bubblewrap (bwrap) is not installed, and the grader runs student code only in its "
        f"sandbox. Install it ({INSTALL}), or pass --no-sandbox to run every submission with "
        "your own rights: a notebook could then read the solutions and other students' work, "
        "and change or delete your files and grades."
    )


def cannot_start() -> str | None:
    """Why the sandbox does not start on this machine (bubblewrap missing, or namespaces not
    allowed, as in many containers), or None: found out once, before every notebook fails."""
    if not available():
        return missing()
    with tempfile.TemporaryDirectory(prefix="sandbox-") as folder:
        probe = command([sys.executable, "-c", "pass"], Path(folder))
        done = subprocess.run(probe, capture_output=True, text=True, timeout=120)
    if done.returncode == 0:
        return None
    why = done.stderr.strip() or f"exit status {done.returncode}"
    return f"bubblewrap is installed but cannot start a sandbox here: {why}"


def course_root() -> Path:
    """The folder holding ``course_lib`` and ``course_tools`` (the repository root)."""
    return Path(__file__).resolve().parents[2]


def readable() -> list[Path]:
    """What student code may read besides the system: this Python, its packages, the course."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    paths |= {Path(p) for p in sys.path if p and Path(p).is_dir() and "site-packages" in p}
    paths |= {course_root() / "course_lib", course_root() / "course_tools"}
    paths = {p.resolve() for p in paths}
    # A folder inside another one already bound needs no bind of its own.
    return sorted(p for p in paths if not any(q != p and q in p.parents for q in paths))


def _parents(paths: list[Path]) -> list[str]:
    """``--dir`` for every folder above a bound path, world-traversable (bwrap makes them
    0700, which the unprivileged user inside could not cross)."""
    above = sorted({str(q) for p in paths for q in p.parents if str(q) not in ("/", "/tmp")})
    return [arg for folder in above for arg in ("--perms", "0755", "--dir", folder)]


def command(
    argv: list[str], workdir: Path, limits: Limits = Limits(), shared: list[Path] = ()
) -> list[str]:
    """``argv`` (a program of this Python's) wrapped to run in the sandbox, in ``workdir``.

    ``workdir`` and the folders ``shared`` with the grader (a kernel's sockets) are bound
    writable at their own paths; each should be a fresh folder that holds nothing but what the
    code may read and change."""
    workdir = workdir.resolve()
    writable = [workdir, *(p.resolve() for p in shared)]
    binds = readable()
    system = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):  # Debian's /usr merge
        target = Path("/") / name
        if target.is_symlink():
            system += ["--symlink", os.readlink(target), str(target)]
        elif target.is_dir():
            system += ["--ro-bind", str(target), str(target)]
    wrapped = ["bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    wrapped += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", *system]
    wrapped += ["--proc", "/proc", "--dev", "/dev", "--perms", "01777"]
    wrapped += ["--size", str(limits.file_bytes * 2), "--tmpfs", "/tmp"]  # memory, so bounded
    wrapped += _parents([*binds, *writable])
    for path in binds:
        wrapped += ["--ro-bind", str(path), str(path)]
    for path in writable:
        wrapped += ["--bind", str(path), str(path)]
    wrapped += ["--chdir", str(workdir), "--clearenv", *_environment(workdir)]
    if os.geteuid() != 0:  # a user namespace of its own, where its processes count alone
        wrapped.insert(1, "--unshare-user")  # (Linux 5.14 and later count them per namespace)
    else:  # root inside would be root outside: drop to a user of its own
        uid = FIRST_UID + (os.getpid() % (UIDS // 100)) * 100 + next(_started) % 100
        for path in writable:
            _hand_over(path, uid)
        wrapped += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        wrapped += ["--inh-caps=-all", "--bounding-set=-all"]
    wrapped += ["prlimit", f"--cpu={limits.cpu_seconds}", f"--as={limits.memory_bytes}"]
    wrapped += [f"--fsize={limits.file_bytes}", f"--nproc={limits.processes}"]
    wrapped += ["--core=0", "--", *argv]
    return wrapped


def _hand_over(folder: Path, uid: int) -> None:
    """Make ``folder`` and what it holds the user's, so that the code inside may use it."""
    os.chown(folder, uid, uid)
    for parent, folders, files in os.walk(folder):
        for name in folders + files:
            os.chown(os.path.join(parent, name), uid, uid, follow_symlinks=False)


def _environment(workdir: Path) -> list[str]:
    """A clean environment: nothing of the instructor's but the locale and one thread each."""
    env = {
        "HOME": str(workdir),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(workdir / ".config" / "matplotlib"),
        "JUPYTER_RUNTIME_DIR": str(workdir / ".runtime"),
        "PYTHONPATH": str(course_root()),
        "PYTHONDONTWRITEBYTECODE": "1",
        GRADING: "1",  # the lessons' demonstrations replay their stored results
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }
    return [arg for name, value in env.items() for arg in ("--setenv", name, value)]
