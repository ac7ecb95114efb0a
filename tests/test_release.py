"""The students' release holds what students work with and nothing that answers an exercise."""

import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from course_tools import release

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "students"
    release.build(out)
    return out


@pytest.fixture(scope="module")
def answers() -> set[str]:
    return release.answers(ROOT / "solutions", ROOT / "lessons")


def test_the_release_holds_the_lessons_the_library_and_the_image(built):
    lessons = sorted(p.name for p in (built / "lessons").glob("*.ipynb"))
    assert lessons == sorted(p.name for p in (ROOT / "lessons").glob("*.ipynb"))
    for needed in ("course_lib/checks/__init__.py", "binder/postBuild", "requirements.txt"):
        assert (built / needed).is_file()
    assert (built / "Makefile").read_text() == (ROOT / "learner.mk").read_text()
    for absent in ("solutions", "course_tools", "tests", "points.toml", "benchmarks"):
        assert not (built / absent).exists()


def test_nothing_in_the_release_answers_an_exercise(built, answers):
    assert len(answers) > 40  # code answers of two lines or more, and written model answers
    assert release.leaks(built, answers) == []


def test_a_leak_of_each_kind_is_found(tmp_path, answers):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "notes.txt").write_text("anything")
    (tmp_path / "marked.py").write_text("x = 1  # BEGIN SOLUTION\n")
    some = sorted(answers)[0]
    indented = "\n".join(f"        {line}" for line in some.splitlines())
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"def f():\n{indented}")])
    nbformat.write(nb, tmp_path / "copied.ipynb")
    found = release.leaks(tmp_path, answers)
    assert found[0].startswith("copied.ipynb: holds the answer ")
    assert found[1:] == [
        "marked.py: holds a solution region",
        "solutions/notes.txt: a solutions/ file",
    ]


def test_the_release_installs_course_lib_alone(built, tmp_path):
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    subprocess.run([*command, "-q", "-w", tmp_path, built], check=True, timeout=300)
    [wheel] = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "course_lib/checks/__init__.py" in names and "course_lib/pretrained/" in str(names)
    assert not [n for n in names if n.startswith("course_tools/")]


def test_the_releases_links_open_the_students_branch(built):
    text = (built / "README.md").read_text(encoding="utf-8")
    assert "/students?urlpath=lab/tree/workspace" in text and "&branch=students&" in text
    assert "lessons/03_scaled_dot_product_attention.ipynb" in text


def test_the_release_never_replaces_a_folder_it_did_not_write(tmp_path, built):
    (tmp_path / "notes.txt").write_text("mine")
    for out in (ROOT, ROOT.parent, tmp_path):
        with pytest.raises(ValueError, match="^out must "):
            release.build(out)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert (built / release.MARK).is_file()  # an earlier release may be replaced
    release.build(built)
