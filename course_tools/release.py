"""The students' release: what a class receives, and nothing that answers its exercises.

``python -m course_tools.release [OUT]`` (``make release``; default ``build/release``) writes a
folder to push as the repository's ``students`` branch (or a repository of its own), which the
Binder and nbgitpuller links of the instructors' guide (``docs/teaching.md``) open:

- ``lessons/`` (the learners' copies), ``course_lib/`` (what the lessons import; the model
  answers of the written questions are left out, since the instructor grades those answers),
  ``binder/`` (the image repo2docker builds), ``requirements.txt``, ``environment.yml``,
  ``LICENSE``;
- a ``pyproject.toml`` that installs ``course_lib`` alone, ``learner.mk`` as the ``Makefile``
  (``make lab``, ``make update``, ``make restore``) and a short README.

No ``solutions/``, no instructor tools (``course_tools``), no tests (they hold model answers).
:func:`leaks` lists whatever in a folder would give an answer away; the tests run it on the
release and on what repo2docker copies from the whole repository (``.dockerignore``).
"""

import argparse
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path

from . import sources
from .authoring import strip_region
from .repository import ROOT, address, binder, lesson_titles, nbgitpuller

SHIPPED = ["lessons", "course_lib", "binder", "requirements.txt", "environment.yml", "LICENSE"]
LEFT_OUT = ["__pycache__", "*.pyc", ".ipynb_checkpoints", "model_answers_data.py"]
MARKERS = re.compile(r"BEGIN SOLUTION|END SOLUTION")
SHORTEST = 24  # characters: a shorter line of a written answer proves nothing


MARK = ".course-release"  # the file that says a folder holds a release, which may be replaced


def build(out: Path, root: Path = ROOT) -> list[Path]:
    """Write the release into ``out``: a new or empty folder, or an earlier release, which is
    replaced. Returns the files written."""
    out, root = Path(out).resolve(), Path(root).resolve()
    if out == root or out in root.parents:
        raise ValueError(f"out must not be the course or a folder holding it; got {out}")
    if out.exists() and any(out.iterdir()) and not (out / MARK).is_file():
        raise ValueError(f"out must be a new or empty folder, or an earlier release; got {out}")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / MARK).write_text("Written by `make release`; replaced by the next one.\n")
    for name in SHIPPED:
        source = root / name
        if source.is_dir():
            shutil.copytree(source, out / name, ignore=shutil.ignore_patterns(*LEFT_OUT))
        else:
            shutil.copy2(source, out / name)
    shutil.copy2(root / "learner.mk", out / "Makefile")
    (out / "pyproject.toml").write_text(pyproject(root / "pyproject.toml"), encoding="utf-8")
    (out / "README.md").write_text(readme(root), encoding="utf-8")
    (out / ".gitignore").write_text(".venv/\n__pycache__/\n*.egg-info/\nworkspace/\n")
    return sorted(p for p in out.rglob("*") if p.is_file())


def pyproject(path: Path) -> str:
    """The release's ``pyproject.toml``: the course's project, with ``course_lib`` alone."""
    whole = tomllib.loads(path.read_text(encoding="utf-8"))
    project, setuptools = whole["project"], whole["tool"]["setuptools"]
    lines = ["[build-system]", f"requires = {json.dumps(whole['build-system']['requires'])}"]
    lines += [f"build-backend = {json.dumps(whole['build-system']['build-backend'])}", ""]
    lines += ["[project]"]
    for key in ("name", "version", "description", "readme", "requires-python"):
        lines.append(f"{key} = {json.dumps(project[key])}")
    lines.append(f"license = {{ text = {json.dumps(project['license']['text'])} }}")
    lines += ["dependencies = ["] + [f"    {json.dumps(d)}," for d in project["dependencies"]]
    url = json.dumps(project["urls"]["Repository"])
    lines += ["]", "", "[project.urls]", f"Repository = {url}"]
    lines += ["", "[tool.setuptools.packages.find]", 'include = ["course_lib*"]', ""]
    data = json.dumps(setuptools["package-data"]["course_lib"])
    lines += ["[tool.setuptools.package-data]", f"course_lib = {data}", ""]
    return "\n".join(lines)


def readme(root: Path) -> str:
    """The students' README: how to open the lessons, and the lessons."""
    url = address(root / "pyproject.toml")
    lessons = "\n".join(f"- [{title}]({path})" for path, title in lesson_titles(root / "lessons"))
    return f"""# Attention Is All You Need: the course

Interactive lessons on the Transformer paper. Each exercise checks your answer as you go.

## Open the lessons

- **In a browser, nothing installed**: [Binder]({binder(url)}) (a temporary session: download
  your notebooks before you close it).
- **On your course's JupyterHub**: the link your instructor gives you ({nbgitpuller(url)}
  with the hub's name).
- **On your computer** (Python 3.11 or later): `make lab` sets everything up and opens
  JupyterLab on your own copies of the lessons, in `workspace/`.

When a lesson is updated, `make update LESSON=03` brings the new version with your answers
carried over; `make restore LESSON=03` gives a fresh copy and keeps yours.

## The lessons

{lessons}
"""


def answers(solutions: Path, lessons: Path) -> set[str]:
    """What finding elsewhere means an answer got out: every written model answer's lines, and
    every code answer of two lines or more (the solution regions of ``solutions/*.py``), that
    the learners' copies do not also hold. A one-line code answer is left out: it can coincide
    with the reference code the lessons themselves show from ``course_lib``."""
    found = set()
    for source in sorted(solutions.glob("[0-9][0-9]_*.py")):
        for cell in sources.read(source).cells:
            for inside, lines in strip_region(cell.source.splitlines(), source.name):
                region = [line.strip() for line in lines[1:-1] if line.strip()]
                if inside and cell.cell_type == "markdown":
                    found |= {line for line in region if len(line) >= SHORTEST}
                elif inside and len(region) >= 2:
                    found.add("\n".join(region))
    handed_out = "\n".join(_lines(_text(p)) for p in sorted(lessons.glob("*.ipynb")))
    return {answer for answer in found if answer not in handed_out}


def _lines(text: str) -> str:
    """``text`` with each line stripped, so that indentation does not hide a copy."""
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def _text(path: Path) -> str:
    """A file's text as a reader sees it: a notebook's cell sources, other files as they are."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return raw
    try:
        cells = json.loads(raw).get("cells", [])
    except ValueError:
        return raw
    return "\n".join("".join(c.get("source", "")) for c in cells)


def leaks(folder: Path, answers: set[str]) -> list[str]:
    """What in ``folder`` gives an answer away: a ``solutions`` folder, a solution region's
    markers in code or a notebook, or one of ``answers`` (:func:`answers`)."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        where = path.relative_to(folder)
        if "solutions" in where.parts:
            found.append(f"{where}: a solutions/ file")
            continue
        text = _lines(_text(path))
        if path.suffix in (".py", ".ipynb") and MARKERS.search(text):  # docs may name them
            found.append(f"{where}: holds a solution region")
        found += [f"{where}: holds the answer {a[:60]!r}" for a in sorted(answers) if a in text]
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_tools.release", description=__doc__)
    parser.add_argument("out", nargs="?", type=Path, default=Path("build/release"))
    args = parser.parse_args(argv)
    try:
        written = build(args.out)
    except ValueError as e:
        parser.error(str(e))
    problems = leaks(args.out, answers(ROOT / "solutions", ROOT / "lessons"))
    if problems:  # never hand out a release that answers its exercises
        print("\n".join(["The release gives answers away:", *problems]), file=sys.stderr)
        return 1
    print(f"Wrote {len(written)} files to {args.out}/, with no solution in them.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
