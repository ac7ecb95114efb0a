"""The setup cell: silent where the course is installed, one line where it installs it (or
cannot), and the first code cell of every lesson and solution, as the address says."""

import importlib.util
import json
import shlex
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib import workspace
from course_tools import repository, setup_cell, sources
from course_tools.authoring import build_lessons

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "solutions").glob("[0-9]*.ipynb")) + sorted(
    (ROOT / "lessons").glob("[0-9]*.ipynb")
)


def run_cell(code: str) -> None:
    exec(compile(code, "setup-cell", "exec"), {"__name__": "__main__"})


@pytest.fixture
def hosted(monkeypatch):
    """A kernel where course_lib cannot be imported, as on Colab or Kaggle."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "course_lib" else real(name, *a),
    )


@pytest.fixture
def fake_python(tmp_path, monkeypatch):
    """``sys.executable`` replaced by a script that records its arguments, writes ``stderr``
    and exits with ``code``: what the cell's pip call would meet."""

    def make(code: int = 0, stderr: str = "") -> Path:
        recorded = tmp_path / "argv.txt"
        script = tmp_path / "python"
        script.write_text(
            "#!/bin/sh\n"
            f'printf "%s\\n" "$@" > {shlex.quote(str(recorded))}\n'
            f"printf %s {shlex.quote(stderr)} >&2\n"
            f"exit {code}\n"
        )
        script.chmod(0o755)
        monkeypatch.setattr(sys, "executable", str(script))
        return recorded

    return make


def test_where_the_course_is_installed_the_cell_does_nothing_and_prints_nothing(
    capsys, monkeypatch
):
    def no_install(*args, **kwargs):
        raise AssertionError(f"the cell ran {args}")

    monkeypatch.setattr("subprocess.run", no_install)
    run_cell(setup_cell.source())
    assert capsys.readouterr() == ("", "")


def test_it_installs_course_source_with_pip_and_says_so_in_one_line(
    hosted, fake_python, capsys, monkeypatch, tmp_path
):
    recorded = fake_python(0, "ERROR: pip's dependency resolver does not ... (a warning)\n")
    monkeypatch.setenv("COURSE_SOURCE", str(tmp_path / "course"))
    run_cell(setup_cell.source())
    argv = recorded.read_text().splitlines()
    # Not --upgrade: pip keeps an installed torch, numpy, matplotlib or ipywidgets that the
    # course's floors admit.
    assert argv == ["-m", "pip", "install", "--disable-pip-version-check", str(tmp_path / "course")]
    assert capsys.readouterr() == (
        f"Installed the course's package from {tmp_path / 'course'}\n",
        "",
    )


def test_without_course_source_it_installs_the_repositorys_archive(
    hosted, fake_python, capsys, monkeypatch
):
    recorded = fake_python(0)
    monkeypatch.delenv("COURSE_SOURCE", raising=False)
    run_cell(setup_cell.source("https://github.com/someone/fork"))
    zip_file = "https://github.com/someone/fork/archive/refs/heads/main.zip"
    assert recorded.read_text().splitlines()[-1] == zip_file
    assert capsys.readouterr().out == f"Installed the course's package from {zip_file}\n"


@pytest.mark.parametrize(
    "stderr, reason",
    [
        (
            "Retrying...\nERROR: Could not install packages: no network\n",
            "ERROR: Could not install packages: no network",
        ),
        ("", "no message"),
    ],
)
def test_a_failed_install_is_one_line_with_pips_reason_and_what_to_do(
    hosted, fake_python, capsys, stderr, reason
):
    fake_python(1, stderr)
    run_cell(setup_cell.source())
    out, err = capsys.readouterr()
    assert out.count("\n") == 1 and err == ""
    assert out.startswith(f"Could not install the course's package ({reason}).")
    assert "On Kaggle: switch Internet on in the notebook's settings" in out


def test_a_failure_of_the_real_pip_is_one_line(hosted, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_SOURCE", str(tmp_path / "no such folder"))
    run_cell(setup_cell.source())
    out, err = capsys.readouterr()
    assert out.startswith("Could not install the course's package (") and out.count("\n") == 1
    assert err == ""


# The cell in the notebooks ------------------------------------------------------------------


def test_the_cell_installs_from_the_address_pyproject_sets():
    address = repository.address()
    assert f'"{repository.archive(address)}",' in setup_cell.source()
    cell = setup_cell.cell()
    assert cell.id == "course-setup" and cell.metadata.tags == [
        "course-setup",
        "nbval-ignore-output",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_notebook_starts_with_the_setup_cell_before_its_imports(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    expected = setup_cell.cell()
    assert [code[0].id, code[0].metadata.get("tags"), code[0].source] == [
        expected.id,
        expected.metadata.tags,
        expected.source,
    ], "run: make solutions (the setup cell differs from the template and the address)"
    assert "notebook.start(" in code[1].source
    assert sum(setup_cell.is_setup(c) for c in nb.cells) == 1
    assert code[0].get("outputs", []) == [], "it prints nothing where the course is installed"


def notebook(*sources_):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_markdown_cell("# Lesson 1 · Title", id="title")] + [
        nbformat.v4.new_code_cell(s, id=f"code{i}") for i, s in enumerate(sources_)
    ]
    return nb


def test_the_build_puts_one_setup_cell_before_the_first_code_cell_and_no_source_holds_it(
    tmp_path,
):
    source = tmp_path / "01_x.py"
    source.write_text(sources.to_text(notebook("import math", "x = 1")), encoding="utf-8")
    built = sources.build(source)
    assert [c.id for c in built.cells] == ["title", "course-setup", "code0", "code1"]
    assert setup_cell.with_setup(built).cells == built.cells, "building again adds no second one"
    assert "course-setup" not in sources.to_text(built), "the source stays without it"
    assert "course-setup" not in source.read_text(encoding="utf-8")


def test_a_notebook_whose_setup_cell_names_another_address_is_out_of_date(tmp_path, monkeypatch):
    source = tmp_path / "01_x.py"
    source.write_text(sources.to_text(notebook("import math")), encoding="utf-8")
    nbformat.write(sources.build(source), tmp_path / "01_x.ipynb")
    assert sources.drift(tmp_path / "01_x.ipynb") is None
    monkeypatch.setattr(repository, "address", lambda *a: "https://github.com/someone/fork")
    assert (
        sources.drift(tmp_path / "01_x.ipynb")
        == f"{tmp_path / '01_x.ipynb'} is out of date with 01_x.py"
    )


def test_an_update_to_a_version_with_the_setup_cell_keeps_the_learners_answers(tmp_path):
    solutions, lessons, work = tmp_path / "solutions", tmp_path / "lessons", tmp_path / "workspace"
    solutions.mkdir()
    answer = "def f(x):\n    # BEGIN SOLUTION\n    return x + 1\n    # END SOLUTION"
    old = notebook("import math", answer)
    nbformat.write(old, solutions / "01_x.ipynb")
    build_lessons(solutions, lessons)
    workspace.prepare(lessons, work)
    mine = nbformat.read(work / "01_x.ipynb", as_version=4)
    mine.cells[-1].source = "def f(x):\n    return x + 2  # mine"
    nbformat.write(mine, work / "01_x.ipynb")
    nbformat.write(setup_cell.with_setup(old), solutions / "01_x.ipynb")
    build_lessons(solutions, lessons)
    result = workspace.update("01", lessons, work)
    new = nbformat.read(work / "01_x.ipynb", as_version=4)
    assert result.carried == ("def f(x):",) and not result.lost
    assert [c.id for c in new.cells] == ["title", "course-setup", "code0", "code1"]
    assert new.cells[-1].source.endswith("# mine")
    stored = json.loads((work / "01_x.ipynb").read_text())["metadata"]["course"]
    assert "course-setup" not in stored["exercises"], "the setup cell is no exercise"
