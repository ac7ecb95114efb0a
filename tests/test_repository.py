"""The course's address is set once (pyproject.toml), and every link of the README and the
guides in docs/ is written from it."""

import re
from pathlib import Path

import pytest

from course_tools import authoring, repository

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LEARNING = ROOT / "docs" / "learning.md"  # the learners' guide holds the Colab and Kaggle table
PAGES = repository.documents(ROOT)
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


def test_the_links_of_every_page_agree_with_the_address():
    problem = repository.links_drift(PAGES, repository.address(), ROOT / "lessons")
    assert problem is None, f"{problem}; run: python -m course_tools.authoring links"


def test_every_link_to_the_repository_in_the_pages_names_the_address():
    owner, name = repository.GITHUB.fullmatch(repository.address()).groups()
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    assert "OWNER" not in text and "REPO/" not in text
    named = re.findall(r"(?:github\.com|mybinder\.org/v2/gh)/([\w.-]+)/([\w.-]+)", text)
    named += re.findall(r"colab\.research\.google\.com/github/([\w.-]+)/([\w.-]+)", text)
    assert named and set(named) == {(owner, name)}


def test_the_learners_guide_opens_every_lesson_in_colab_and_kaggle():
    address, text = repository.address(), LEARNING.read_text(encoding="utf-8")
    lessons = sorted((ROOT / "lessons").glob("[0-9]*.ipynb"))
    assert len(lessons) == 9
    for lesson in lessons:
        path = f"lessons/{lesson.name}"
        badge = f"[![Open in Colab]({repository.COLAB_BADGE})]({repository.colab(address, path)})"
        assert badge in text and f"({repository.kaggle(address, path)})" in text


def test_the_pages_are_the_readme_and_the_guides():
    assert repository.documents(ROOT)[0] == README
    assert {LEARNING, ROOT / "docs" / "teaching.md", ROOT / "docs" / "maintaining.md"} <= set(PAGES)


def test_writing_a_page_rewrites_the_table_and_every_binder_and_hub_link():
    old = (
        "Intro\n\n"
        f"{repository.TABLE_START}\n| stale |\n{repository.TABLE_END}\n\n"
        "Binder: `https://mybinder.org/v2/gh/OWNER/REPO/main?urlpath=lab/tree/workspace`.\n"
        "[hub](https://HUB/hub/user-redirect/git-pull?repo=https://github.com/OWNER/REPO"
        "&branch=main&urlpath=lab/tree/REPO/lessons)\n"
    )
    lessons = [("lessons/01_a.ipynb", "Lesson 1 · A"), ("lessons/02_b.ipynb", "Lesson 2 · B")]
    new = repository.links_text(old, FORK, lessons)
    table = repository.lesson_table(FORK, lessons)
    assert new == (
        f"Intro\n\n{table}\n\n"
        f"Binder: `{repository.binder(FORK)}`.\n[hub]({repository.nbgitpuller(FORK)})\n"
    )
    assert table.count("](https://colab.research.google.com/github/someone/fork/blob/main/") == 2
    assert repository.links_text(new, FORK, lessons) == new, "writing again changes nothing"
    assert repository.links_text("no table here", FORK, lessons) == "no table here"
    with pytest.raises(ValueError, match="the table should lie between the lines"):
        repository.links_text(f"{repository.TABLE_START}\n| half a table |", FORK, lessons)


def test_writing_the_pages_fills_the_one_table_and_the_links_of_the_others(tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    guide, front = tmp_path / "guide.md", tmp_path / "README.md"
    guide.write_text(f"{repository.TABLE_START}\n{repository.TABLE_END}\n", encoding="utf-8")
    front.write_text("https://mybinder.org/v2/gh/OWNER/REPO/main\n", encoding="utf-8")
    assert repository.links_drift([front, guide], FORK, lessons) is not None
    assert repository.write_links([front, guide], FORK, lessons) == [front, guide]
    assert front.read_text(encoding="utf-8") == f"{repository.binder(FORK)}\n"
    assert repository.links_drift([front, guide], FORK, lessons) is None
    assert repository.write_links([front, guide], FORK, lessons) == []
    other = tmp_path / "other.md"
    other.write_text(guide.read_text(encoding="utf-8"), encoding="utf-8")
    for pages, count in (([front], 0), ([guide, other], 2)):
        problem = repository.links_drift(pages, FORK, lessons)
        assert "should hold the table of hosted notebooks between the lines" in problem
        assert f"; {count} do" in problem
        with pytest.raises(ValueError, match=f"; {count} do"):
            repository.write_links(pages, FORK, lessons)


def test_the_lessons_titles_are_their_headings():
    titles = dict(repository.lesson_titles(ROOT / "lessons"))
    assert titles["lessons/03_scaled_dot_product_attention.ipynb"] == (
        "Lesson 3 · Scaled dot-product attention"
    )


def test_authoring_links_names_a_page_problem_without_a_traceback(tmp_path, capsys):
    page = tmp_path / "notes.md"
    page.write_text("no table here\n", encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        authoring.main(["links", "--pages", str(page), "--lessons", str(tmp_path)])
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert "should hold the table of hosted notebooks" in error and "Traceback" not in error
    with pytest.raises(SystemExit):
        authoring.main(["links", "--pages", str(tmp_path / "missing.md")])
    assert "missing.md" in capsys.readouterr().err
