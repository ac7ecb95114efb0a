"""The course's address is set once (pyproject.toml), and every link is written from it."""

import re
from pathlib import Path

import pytest

from course_tools import repository

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FORK = "https://github.com/someone/fork"


def test_the_address_is_read_from_pyproject(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[project]\nname = "x"\n\n[project.urls]\nRepository = "{FORK}"\n')
    assert repository.address(pyproject) == FORK


@pytest.mark.parametrize(
    "urls", ["", '[project.urls]\nHomepage = "https://example.org"', '[project.urls]\nRepository = "https://gitlab.com/a/b"']
)  # fmt: skip
def test_an_address_that_is_missing_or_not_on_github_is_refused(tmp_path, urls):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[project]\nname = "x"\n\n{urls}\n')
    with pytest.raises(ValueError, match=r"Repository should be https://github.com/OWNER/NAME"):
        repository.address(pyproject)


def test_the_links_of_an_address():
    lesson = "lessons/03_x.ipynb"
    assert repository.archive(FORK) == f"{FORK}/archive/refs/heads/main.zip"
    assert (
        repository.colab(FORK, lesson)
        == "https://colab.research.google.com/github/someone/fork/blob/main/lessons/03_x.ipynb"
    )
    assert repository.kaggle(FORK, lesson) == (
        f"https://kaggle.com/kernels/welcome?src={FORK}/blob/main/lessons/03_x.ipynb"
    )
    assert repository.binder(FORK) == (
        "https://mybinder.org/v2/gh/someone/fork/students?urlpath=lab/tree/workspace"
    )  # the students' release: no solutions in a student's image or home folder
    assert repository.nbgitpuller(FORK) == (
        f"https://HUB/hub/user-redirect/git-pull?repo={FORK}&branch=students"
        "&urlpath=lab/tree/fork/lessons"
    )
    with pytest.raises(ValueError, match="url should be https://github.com/OWNER/NAME; got 'x'"):
        repository.colab("x", lesson)


def test_the_readme_links_agree_with_the_address():
    problem = repository.readme_drift(README, repository.address(), ROOT / "lessons")
    assert problem is None, f"{problem}; run: python -m course_tools.authoring links"


def test_every_link_to_the_repository_in_the_readme_names_the_address():
    owner, name = repository.GITHUB.fullmatch(repository.address()).groups()
    text = README.read_text(encoding="utf-8")
    assert "OWNER" not in text and "REPO/" not in text
    named = re.findall(r"(?:github\.com|mybinder\.org/v2/gh)/([\w.-]+)/([\w.-]+)", text)
    named += re.findall(r"colab\.research\.google\.com/github/([\w.-]+)/([\w.-]+)", text)
    assert named and set(named) == {(owner, name)}


def test_the_readme_opens_every_lesson_in_colab_and_kaggle():
    address, text = repository.address(), README.read_text(encoding="utf-8")
    lessons = sorted((ROOT / "lessons").glob("[0-9]*.ipynb"))
    assert len(lessons) == 9
    for lesson in lessons:
        path = f"lessons/{lesson.name}"
        badge = f"[![Open in Colab]({repository.COLAB_BADGE})]({repository.colab(address, path)})"
        assert badge in text and f"({repository.kaggle(address, path)})" in text


def test_writing_the_readme_rewrites_the_table_and_every_binder_and_hub_link():
    old = (
        "Intro\n\n"
        f"{repository.TABLE_START}\n| stale |\n{repository.TABLE_END}\n\n"
        "Binder: `https://mybinder.org/v2/gh/OWNER/REPO/main?urlpath=lab/tree/workspace`.\n"
        "[hub](https://HUB/hub/user-redirect/git-pull?repo=https://github.com/OWNER/REPO"
        "&branch=main&urlpath=lab/tree/REPO/lessons)\n"
    )
    lessons = [("lessons/01_a.ipynb", "Lesson 1 · A"), ("lessons/02_b.ipynb", "Lesson 2 · B")]
    new = repository.readme_text(old, FORK, lessons)
    table = repository.lesson_table(FORK, lessons)
    assert new == (
        f"Intro\n\n{table}\n\n"
        f"Binder: `{repository.binder(FORK)}`.\n[hub]({repository.nbgitpuller(FORK)})\n"
    )
    assert table.count("](https://colab.research.google.com/github/someone/fork/blob/main/") == 2
    assert repository.readme_text(new, FORK, lessons) == new, "writing again changes nothing"
    with pytest.raises(ValueError, match="the README should hold the lines"):
        repository.readme_text("no table here", FORK, lessons)


def test_the_lessons_titles_are_their_headings():
    titles = dict(repository.lesson_titles(ROOT / "lessons"))
    assert titles["lessons/03_scaled_dot_product_attention.ipynb"] == (
        "Lesson 3 · Scaled dot-product attention"
    )
