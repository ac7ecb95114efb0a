"""otter-assign notebooks built from ``solutions/``: ``make otter``.

It writes ``NN_name.ipynb`` per lesson in otter-grader's assignment format, with the files
its autograder needs (``requirements.txt`` and the course's wheel). Per exercise, a question:

- its answer cells, each solution region marked ``# BEGIN SOLUTION NO PROMPT`` and preceded
  by a ``# BEGIN PROMPT`` string holding the lesson's stub, so the student notebook shows the
  stub the lesson shows (``raise NotImplementedError()`` in a function, ``name = None`` at
  the top level) and Run All goes through;
- one test, ``require("3.2", ...)``: it prints nothing when the check passes and raises with
  the check's message otherwise;
- the lesson's ``check(...)`` cell after the question, for feedback while working.

A written answer is a manually graded question whose prompt is the lesson's cell. Students'
notebooks get no otter cells (no ``grader.check``, no export, no PDF): they submit the
notebook, and the autograder needs only ``course_lib`` and a CPU build of torch.

Then, in the output folder: ``otter assign NN_name.ipynb dist/NN`` writes the student
notebook and ``autograder.zip``; ``otter run -a dist/NN/autograder/*.zip SUBMISSION`` grades.
"""

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from course_lib.checks import EXERCISES

from ..authoring import lesson_source
from ..grading.grader import WRITTEN_POINTS
from .parts import ANSWER, CHECK, TEXT, WRITTEN, Part, notebook, parts, require_call

WHEELS = "wheels"  # beside the notebooks; otter copies it into the autograder zip
GRADESCOPE_FILES = "/autograder/source/files"  # where the zip's files land on Gradescope
CPU_INDEX = "https://download.pytorch.org/whl/cpu"

# Students' notebooks get no otter cells (they run the course's checks); nothing makes a PDF.
CONFIG = """# ASSIGNMENT CONFIG
name: {name}
requirements: requirements.txt
autograder_files:
  - {wheel}
python_version: "3.11"
init_cell: false
check_all_cell: false
export_cell: false
solutions_pdf: false
template_pdf: false
generate:
  pdf: false"""


def build(out: Path, solutions: list[Path], points: dict[str, float]) -> list[Path]:
    """Write the otter notebooks, the course's wheel and requirements into ``out``; returns
    the notebooks written. What ``otter assign`` wrote there stays."""
    shutil.rmtree(out / WHEELS, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    wheel = _wheel(out / WHEELS)
    (out / "requirements.txt").write_text(requirements(wheel), encoding="utf-8")
    written = []
    for solution in solutions:
        target = out / solution.name
        nbformat.write(assignment_notebook(solution, points, wheel), target)
        written.append(target)
    return written


def requirements(wheel: str) -> str:
    """The autograder's packages beyond otter's own: CPU torch, pinned as for learners."""
    pinned = re.search(r"^torch==(\S+)", Path("requirements.txt").read_text(), re.M)
    if pinned is None:
        raise ValueError("requirements.txt should pin torch (torch==X.Y.Z); found no pin")
    return (
        "# The autograder's packages, added to otter-grader's: torch's CPU build (no GPU is\n"
        "# used, and it is a fraction of the size) at the version the course is tested with,\n"
        "# and the course's own package, whose checks the tests call.\n"
        f"--extra-index-url {CPU_INDEX}\n"
        f"torch=={pinned[1]}+cpu\n"
        f"{GRADESCOPE_FILES}/{WHEELS}/{wheel}\n"
    )


def assignment_notebook(solution: Path, points: dict, wheel: str) -> nbformat.NotebookNode:
    """The otter-assign notebook of one lesson."""
    cells = [_raw(CONFIG.format(name=solution.stem, wheel=f"{WHEELS}/{wheel}"))]
    answers: list[Part] = []
    for part in parts(solution):
        if part.role == ANSWER:
            answers.append(part)
        elif part.role == CHECK:
            worth = points.get(part.exercise, EXERCISES[part.exercise].points)
            cells += _question(part, answers, worth)
            answers = []
        elif part.role == WRITTEN:
            cells += _written(part, points.get(WRITTEN_POINTS, 1.0))
        else:
            assert part.role == TEXT
            cells.append(part.cell)
    return notebook(cells, solution)


def _question(check: Part, answers: list[Part], points: float) -> list:
    test = f"from course_lib.checks import require\n\n{require_call(check.cell.source)}"
    return [
        _raw(f"# BEGIN QUESTION\nname: {check.key}\npoints: {points:g}\ncheck_cell: false"),
        _raw("# BEGIN SOLUTION"),
        *[_answer(part) for part in answers],
        _raw("# END SOLUTION"),
        _raw("# BEGIN TESTS"),
        nbformat.v4.new_code_cell(test),
        _raw("# END TESTS"),
        _raw("# END QUESTION"),
        check.cell,
    ]


def _answer(part: Part) -> nbformat.NotebookNode:
    """The cell with otter's markers: each region after a prompt string holding its stub.

    In the solution the prompt is a string statement that does nothing; otter drops the
    lines that end in ``# BEGIN PROMPT`` and ``# END PROMPT``, so students get its lines.
    """
    lines = []
    for chunk in part.chunks:
        if not chunk.solution:
            lines += chunk.lines
            continue
        begin, *body, end = chunk.lines
        indent = begin[: len(begin) - len(begin.lstrip())]
        lines += [f'{indent}""" # BEGIN PROMPT', *chunk.stub, f'{indent}""" # END PROMPT']
        lines += [f"{indent}# BEGIN SOLUTION NO PROMPT", *body, f"{indent}# END SOLUTION"]
    cell = part.cell.copy()
    cell.source = "\n".join(lines)
    return cell


def _written(part: Part, points: float) -> list:
    """A manually graded question: the lesson's cell as the prompt, the model answer hidden."""
    model = [line for c in part.chunks if c.solution for line in c.lines[1:-1]]
    prompt = part.cell.copy()
    prompt.source = lesson_source(part.chunks)
    return [
        _raw(f"# BEGIN QUESTION\nname: {part.key}\nmanual: true\npoints: {points:g}"),
        _raw("# BEGIN PROMPT"),
        prompt,
        _raw("# END PROMPT"),
        _raw("# BEGIN SOLUTION"),
        nbformat.v4.new_markdown_cell("\n".join(model).strip()),
        _raw("# END SOLUTION"),
        _raw("# END QUESTION"),
    ]


def _raw(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_raw_cell(text)


def _wheel(folder: Path) -> str:
    """Build the course's wheel into ``folder``; its file name. It is built from a copy, as
    setuptools would otherwise leave its own build files in the course's ``build/``."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy(name, tmp)
        for package in ("course_lib", "course_tools"):
            caches = shutil.ignore_patterns("__pycache__")
            shutil.copytree(package, Path(tmp) / package, ignore=caches)
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
        subprocess.run([*command, "-q", "-w", str(folder.resolve()), tmp], check=True)
    (wheel,) = folder.glob("attention_course-*.whl")
    return wheel.name
