"""The course in the versions it declares, beyond the pinned environment: ``make test-versions``.

floors   Python and every dependency at the lower bound that pyproject.toml, the requirements
         files and environment.yml declare (torch included: PyPI's CUDA build, on the CPU)
newest   the newest Python here, every dependency at the newest version the index serves
hosted   a hosted notebook as Google Colab ships one (HOSTED below) with the course not
         installed: each lesson, copied alone to a folder of its own, is Run All in a fresh
         copy of the environment, where its first cell installs the course from COURSE_SOURCE

In floors and newest the unit tests run, then every lesson top to bottom and every solution
compared strictly, as ``make test`` does; the course comes from this checkout (PYTHONPATH),
never installed. Each environment is built once and kept in ~/.cache/attention-course/versions/
under a hash of what it was built from (newest: what the index serves today), so a later run
only builds what changed. Each step prints its time; logs go to build/versions/.

    make test-versions                         # or: .venv/bin/python tests/versions.py
    .venv/bin/python tests/versions.py hosted --lessons 03 05
"""

import argparse
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "attention-course"
LOGS = ROOT / "build" / "versions"
REQUIREMENTS = ["requirements.txt", "requirements-tools.txt", "requirements-dev.txt"]
SHOWN = ["torch", "numpy", "matplotlib", "ipywidgets"]  # printed for each environment

# Google Colab's preinstalled stack, as far as the course uses it, and what runs the notebooks.
# torch 2.5.1 needs the same nvidia-* packages as the floors' 2.5.0: pip's cache holds them once.
HOSTED_PYTHON = "3.12"
HOSTED = [
    "torch==2.5.1",
    "numpy==2.0.*",
    "matplotlib==3.10.*",
    "ipywidgets==7.7.1",
    "ipykernel",
    "nbclient",
    "nbval",
    "pytest",
]


# The declared ranges, read from every file that states them.


def requirements_text(text: str) -> list[Requirement]:
    """The requirements a requirements file states itself (its ``-r`` lines are not followed)."""
    lines = (re.sub(r"(^|\s)#.*", "", line).strip() for line in text.splitlines())
    return [Requirement(line) for line in lines if line and not line.startswith("-")]


def pyproject_text(text: str) -> list[Requirement]:
    """``requires-python`` (as "python"), the dependencies and every optional group's."""
    project = tomllib.loads(text)["project"]
    extras = [r for group in project.get("optional-dependencies", {}).values() for r in group]
    python = Requirement(f"python{project['requires-python']}")
    return [python, *map(Requirement, project["dependencies"] + extras)]


def conda_text(text: str) -> list[Requirement]:
    """The packages an environment.yml lists, conda's and pip's (``- name>=1,<2``)."""
    listed = text.split("dependencies:", 1)[-1]  # not the channels
    line = r"^\s*-\s+([A-Za-z][\w.-]*\s*(?:[<>=!~][^#\n]*)?)(?:#.*)?$"  # a comment may follow
    found = re.findall(line, listed, re.MULTILINE)
    return [Requirement(line.strip()) for line in found if line.strip() != "pip"]


def declared() -> dict[str, list[Requirement]]:
    """What each file declares, by file name."""
    files = {
        name: requirements_text for name in sorted(glob.glob("requirements*.txt", root_dir=ROOT))
    }
    files.update({"pyproject.toml": pyproject_text, "environment.yml": conda_text})
    return {name: read((ROOT / name).read_text()) for name, read in files.items()}


def disagreements(sources: dict[str, list[Requirement]]) -> list[str]:
    """Where the files state different ranges for one package.

    A range (e.g. ``>=1.26,<3``) must be the same wherever it is stated; an exact pin
    (``==2.13.0``, the tested version) must be the same wherever it is stated and lie in
    the range.
    """
    stated: dict[str, dict[str, SpecifierSet]] = {}
    for source, requirements in sources.items():
        for requirement in requirements:
            stated.setdefault(canonicalize_name(requirement.name), {})[source] = (
                requirement.specifier
            )
    problems = []
    for name, specs in sorted(stated.items()):
        pins = {s: spec for s, spec in specs.items() if _pin(spec)}
        ranges = {s: spec for s, spec in specs.items() if s not in pins}
        for kind, group in (("range", ranges), ("pin", pins)):
            if len({str(spec) for spec in group.values()}) > 1:
                said = "; ".join(f"{s}: {spec or 'any'}" for s, spec in group.items())
                problems.append(f"{name}: the files state different {kind}s ({said})")
        for source, pin in pins.items():
            for where, spec in ranges.items():
                if not spec.contains(_pin(pin), prereleases=True):
                    problems.append(f"{name}: {source} pins {pin}, outside {where}'s {spec}")
    return problems


def _pin(spec: SpecifierSet) -> str | None:
    exact = [s.version for s in spec if s.operator == "=="]
    return exact[0] if len(spec) == 1 and exact else None


def ranges(sources: dict[str, list[Requirement]]) -> dict[str, SpecifierSet]:
    """The range of every package ``make test`` installs (requirements-dev.txt and the files it
    includes), and Python's; a pinned package's range is the one pyproject.toml declares."""
    names = {canonicalize_name(r.name) for f in REQUIREMENTS for r in sources[f]} | {"python"}
    found = {}
    for requirements in sources.values():
        for r in requirements:
            name = canonicalize_name(r.name)
            if name in names and not _pin(r.specifier):
                found[name] = r.specifier
    missing = names - set(found)
    if missing:
        raise ValueError(f"no range is declared for {sorted(missing)}, only a pin")
    return found


def floor(spec: SpecifierSet, name: str) -> str:
    """The version named by ``spec``'s lower bound (``>=1.26,<3`` -> "1.26")."""
    lower = [s.version for s in spec if s.operator == ">="]
    if len(lower) != 1:
        raise ValueError(f"{name} must declare one lower bound (>=); got {str(spec) or 'none'}")
    return lower[0]


# Interpreters and environments.


def interpreters(version: str) -> list[str]:
    """Where a Python ``version`` ("3.12") may be: ``python3.12`` on PATH, pyenv's copies."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = glob.glob(str(pyenv / "versions" / f"{version}.*" / "bin" / f"python{version}"))
    return [p for p in [shutil.which(f"python{version}"), *sorted(found)] if p]


def runs(python: str, version: str) -> bool:
    """Whether ``python`` starts and is ``version`` (a pyenv shim of another one does not)."""
    check = f"import sys; sys.exit(sys.version_info[:2] != {tuple(map(int, version.split('.')))})"
    return subprocess.run([python, "-c", check], capture_output=True).returncode == 0


def interpreter(version: str) -> str:
    """A Python ``version`` that runs here."""
    tried = interpreters(version)
    for python in tried:
        if runs(python, version):
            return python
    raise SystemExit(f"Python {version} is needed; tried {tried or f'python{version} on PATH'}")


def newest_python(oldest: str) -> str:
    """The newest Python 3 that runs here, from ``oldest`` on, as "3.13"."""
    minor = int(oldest.split(".")[1])
    for version in (f"3.{m}" for m in range(minor + 10, minor - 1, -1)):
        if any(runs(python, version) for python in interpreters(version)):
            return version
    raise SystemExit(f"no Python {oldest} or later runs here")


def pip_environment(uncapped: bool) -> dict[str, str]:
    """The environment pip runs in; ``uncapped``: without a constraint file from pip's config
    (a machine may cap torch there), for the newest versions."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, "PIP_CONSTRAINT": os.devnull} if uncapped else env


def resolve(python: str, requirements: list[str], env: dict[str, str]) -> list[str]:
    """What pip would install for ``requirements`` now, as exact pins (no download of wheels)."""
    command = [python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
    done = _run([*command, "--report", "-", *requirements], env=env, capture=True)
    report = json.loads(done.stdout)
    return sorted(f"{i['metadata']['name']}=={i['metadata']['version']}" for i in report["install"])


def environment(name: str, python: str, requirements: list[str], env: dict[str, str]) -> Path:
    """A virtual environment with ``requirements``, built once and kept under a hash of them."""
    version = _run([python, "-c", "import sys; print(sys.version)"], capture=True).stdout
    key = hashlib.sha256("\n".join([version, *requirements]).encode()).hexdigest()[:12]
    home = CACHE / "versions" / f"{name}-{key}"
    if (home / "built").exists():
        return home
    shutil.rmtree(home, ignore_errors=True)  # a build that did not finish
    print(f"--- {name}: building {home} (the first time, torch with CUDA is about 3 GB)")
    _run([python, "-m", "venv", str(home)])
    pip = [str(home / "bin" / "python"), "-m", "pip", "install", "--quiet", "--progress-bar=off"]
    _run([*pip, "--upgrade", "pip"], env=env)
    _run([*pip, *requirements], env=env)
    (home / "built").write_text("\n".join(requirements) + "\n")
    for old in (CACHE / "versions").glob(f"{name}-*"):  # what earlier runs built
        if old != home:
            shutil.rmtree(old, ignore_errors=True)
    return home


def versions(python: Path) -> str:
    """Python's version and those of SHOWN, as one line."""
    code = (
        "import sys, importlib.metadata as m; "
        f"print('Python', sys.version.split()[0], *[n + ' ' + m.version(n) for n in {SHOWN}])"
    )
    return _run([str(python), "-c", code], capture=True).stdout.strip()


def _run(command, *, capture=False, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode:
        raise SystemExit(f"{shlex.join(map(str, command))} failed:\n{done.stdout}{done.stderr}")
    return done


# The runs.


class Steps:
    """Runs commands, logs each to build/versions/LABEL.log, and remembers how each went."""

    def __init__(self):
        self.results: list[tuple[str, bool, float]] = []
        LOGS.mkdir(parents=True, exist_ok=True)

    def run(self, label: str, command: list, then=None, **kwargs) -> None:
        """Run ``command``; when it passes, ``then()`` may still name a failure (a string)."""
        start, log = time.perf_counter(), LOGS / f"{label}.log"
        with open(log, "w") as out:
            code = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, **kwargs)
        lines = log.read_text().strip().splitlines()
        failures = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
        why = "\n".join(failures or lines[-30:]) if code.returncode else ""
        why = why or (then() if then else "")
        seconds = time.perf_counter() - start
        self.results.append((label, not why, seconds))
        summary = lines[-1] if lines else ""
        print(f"=== {label}: {'FAILED' if why else 'passed'} in {seconds:.0f} s ({summary})")
        if why:
            print(why, flush=True)

    def timed(self, label: str, make, *args):
        """``make(*args)``, and how long it took."""
        start = time.perf_counter()
        made = make(*args)
        print(f"=== {label}: {time.perf_counter() - start:.0f} s", flush=True)
        return made


def test_suite(steps: Steps, name: str, home: Path, nbval: list[str], workers: list[str]):
    """The unit tests, lessons/ run through and solutions/ compared, as ``make test`` runs them."""
    python = str(home / "bin" / "python")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the course from this checkout
    pytest = [python, "-m", "pytest", "-p", "no:cacheprovider", *workers]
    steps.run(f"{name}-unit", pytest, cwd=ROOT, env=env)
    steps.run(f"{name}-lessons", [*pytest, "--nbval-lax", "lessons/", *nbval], cwd=ROOT, env=env)
    steps.run(f"{name}-solutions", [*pytest, "--nbval", "solutions/", *nbval], cwd=ROOT, env=env)


def course_copy(folder: Path) -> Path:
    """The repository's files as they are now (committed or not, ignored ones left out)."""
    listed = _run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    return folder


def preinstalled(home: Path) -> dict[str, int]:
    """The SHOWN packages' records (``torch-2.5.1.dist-info``...), each with its file's inode:
    in a copy made of hard links, a package pip reinstalls, even at the same version, gets a
    new one."""
    records = [home.glob(f"lib/python*/site-packages/{n}-*.dist-info/RECORD") for n in SHOWN]
    return {path.parent.name: path.stat().st_ino for found in records for path in found}


def hosted_lesson(steps: Steps, home: Path, lesson: Path, source: Path, nbval: list[str]):
    """Run All of one lesson as a hosted notebook opens it: a fresh runtime where the course is
    not installed, the notebook alone in its folder, and its first cell installing the course
    from COURSE_SOURCE (here a copy of this checkout; in the lessons, the repository's URL)."""
    with tempfile.TemporaryDirectory(prefix="course-hosted-") as tmp:
        runtime, course, notebooks = Path(tmp, "runtime"), Path(tmp, "course"), Path(tmp, "nb")
        _run(["cp", "-al", str(home), str(runtime)])  # hard links: pip replaces, never edits
        shutil.copytree(source, course)  # pip builds in the folder it installs from
        notebooks.mkdir()
        shutil.copy2(lesson, notebooks)
        nbval = list(nbval)
        if "--nbval-sanitize-with" in nbval:  # copied beside the lesson: a path into this
            at = nbval.index("--nbval-sanitize-with") + 1  # checkout would make pytest take
            nbval[at] = shutil.copy2(ROOT / nbval[at], notebooks)  # it for the run's root
        python = runtime / "bin" / "python"
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        command = [str(python), "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", "."]
        command.append("--nbval-lax")

        def untouched() -> str:
            """Why the run does not count: the preinstalled stack was replaced, or the course
            was not installed."""
            before, after = preinstalled(home), preinstalled(runtime)
            if before != after:
                replaced = sorted({name for name, _ in set(before.items()) ^ set(after.items())})
                return f"installing the course replaced what the image had: {', '.join(replaced)}"
            show = [str(python), "-m", "pip", "show", "-q", "attention-course"]
            if subprocess.run(show, capture_output=True).returncode:
                return "the lesson ran, but its first cell did not install the course"
            return ""

        steps.run(
            f"hosted-{lesson.stem[:2]}",
            [*command, lesson.name, *nbval],
            then=untouched,
            cwd=notebooks,
            env={**env, "COURSE_SOURCE": str(course)},
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="floors, newest, hosted (default: all three)")
    parser.add_argument("--nbval", default="", help="nbval options, as make test passes them")
    parser.add_argument("--workers", default="-n 2 --dist loadfile", help="pytest-xdist options")
    parser.add_argument("--lessons", nargs="+", help="hosted: only these lessons (e.g. 03 05)")
    args = parser.parse_args(argv)
    names = args.names or ["floors", "newest", "hosted"]
    if set(names) - {"floors", "newest", "hosted"}:
        parser.error(f"names must be floors, newest or hosted; got {names}")
    sys.stdout.reconfigure(line_buffering=True)  # in order with the commands' output
    nbval = shlex.split(args.nbval)
    workers = shlex.split(args.workers)

    sources = declared()
    problems = disagreements(sources)
    if problems:
        raise SystemExit("The files declare different versions:\n" + "\n".join(problems))
    wanted = ranges(sources)
    python_floor = floor(wanted.pop("python"), "python")
    steps, start, pip = Steps(), time.perf_counter(), pip_environment(uncapped=False)

    with ThreadPoolExecutor(max_workers=2) as pool:
        if "newest" in names:  # asking the index takes a while: meanwhile the floors run
            newest = interpreter(newest_python(python_floor))
            uncapped = pip_environment(uncapped=True)
            requirements = [f"{n}{spec}" for n, spec in sorted(wanted.items())]
            resolved = pool.submit(
                steps.timed, "newest: asked the index", resolve, newest, requirements, uncapped
            )
        if "floors" in names:
            pins = [f"{n}=={floor(spec, n)}" for n, spec in sorted(wanted.items())]
            home = steps.timed(
                "floors: environment", environment, "floors", interpreter(python_floor), pins, pip
            )
            print(f"--- floors: {versions(home / 'bin' / 'python')}")
            test_suite(steps, "floors", home, nbval, workers)
        if "newest" in names:
            pins = resolved.result()
            home = steps.timed("newest: environment", environment, "newest", newest, pins, uncapped)
            print(f"--- newest: {versions(home / 'bin' / 'python')}")
            test_suite(steps, "newest", home, nbval, workers)
        if "hosted" in names:
            python = interpreter(HOSTED_PYTHON)
            home = steps.timed("hosted: environment", environment, "hosted", python, HOSTED, pip)
            print(f"--- hosted: {versions(home / 'bin' / 'python')}, the course not installed")
            lessons = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
            lessons = [n for n in lessons if not args.lessons or n.name[:2] in args.lessons]
            with tempfile.TemporaryDirectory(prefix="course-source-") as tmp:
                source = course_copy(Path(tmp))
                list(pool.map(lambda n: hosted_lesson(steps, home, n, source, nbval), lessons))

    failed = [label for label, passed, _ in steps.results if not passed]
    minutes, seconds = divmod(round(time.perf_counter() - start), 60)
    print(
        f"=== versions: {len(steps.results) - len(failed)} passed, {len(failed)} failed"
        f"{f' {failed}' if failed else ''} in {minutes} min {seconds} s; "
        f"logs in {LOGS.relative_to(ROOT)}/"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
