"""Where the course lives online: its address, written once, and every link made from it.

The address is ``[project.urls] Repository`` in ``pyproject.toml``. The setup cell of every
lesson (:mod:`course_tools.setup_cell`) installs the course from it, and the links of the
README and the guides in ``docs/`` (one Colab badge and one Kaggle link per lesson, in the
learners' guide; Binder; JupyterHub's nbgitpuller) are written from it by
``python -m course_tools.authoring links``; ``authoring check`` and the
tests fail when any of them disagrees with it. A fork changes that one line, then runs
``make solutions`` (the setup cells change) and ``authoring links``.
"""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BRANCH = "main"  # what the Colab and Kaggle links open and the setup cell installs
# What the Binder and JupyterHub links open: the students' release (course_tools.release, pushed
# as this branch), so a student's image or home folder never holds the solutions.
RELEASE_BRANCH = "students"
GITHUB = re.compile(r"https://github\.com/([\w.-]+)/([\w.-]+)")

# The table of hosted-notebook links (in docs/learning.md) lies between these two lines.
TABLE_START = (
    "<!-- Written by `python -m course_tools.authoring links` from pyproject.toml's "
    "[project.urls] Repository: edit that, not this table. -->"
)
TABLE_END = "<!-- End of the written table. -->"
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"


def address(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """The repository's address, ``https://github.com/OWNER/NAME``, as ``pyproject`` sets it."""
    project = tomllib.loads(Path(pyproject).read_text(encoding="utf-8")).get("project", {})
    url = project.get("urls", {}).get("Repository")
    if not isinstance(url, str) or not GITHUB.fullmatch(url):
        raise ValueError(
            f"{pyproject}: [project.urls] Repository should be https://github.com/OWNER/NAME; "
            f"got {url!r}"
        )
    return url


def _owner_name(url: str) -> tuple[str, str]:
    found = GITHUB.fullmatch(url)
    if found is None:
        raise ValueError(f"url should be https://github.com/OWNER/NAME; got {url!r}")
    return found[1], found[2]


def archive(url: str) -> str:
    """The branch as a zip file: pip installs it without git."""
    _owner_name(url)
    return f"{url}/archive/refs/heads/{BRANCH}.zip"


def notebook_page(url: str, path: str) -> str:
    """A notebook of the repository (``lessons/03_x.ipynb``) on GitHub."""
    _owner_name(url)
    return f"{url}/blob/{BRANCH}/{path}"


def colab(url: str, path: str) -> str:
    """Google Colab opening a notebook of the repository."""
    owner, name = _owner_name(url)
    return f"https://colab.research.google.com/github/{owner}/{name}/blob/{BRANCH}/{path}"


def kaggle(url: str, path: str) -> str:
    """Kaggle importing a notebook of the repository into a new notebook of the learner's."""
    return f"https://kaggle.com/kernels/welcome?src={notebook_page(url, path)}"


def binder(url: str) -> str:
    """Binder building the students' release and opening the learner's copies of the lessons."""
    owner, name = _owner_name(url)
    return f"https://mybinder.org/v2/gh/{owner}/{name}/{RELEASE_BRANCH}?urlpath=lab/tree/workspace"


def nbgitpuller(url: str) -> str:
    """A JupyterHub (``HUB``: its host name) cloning the students' release into a student's
    home, then merging later updates, and opening its lessons."""
    _, name = _owner_name(url)
    return (
        f"https://HUB/hub/user-redirect/git-pull?repo={url}&branch={RELEASE_BRANCH}"
        f"&urlpath=lab/tree/{name}/lessons"
    )


def lesson_table(url: str, lessons: list[tuple[str, str]]) -> str:
    """The table of hosted notebooks: one row per ``(path, title)``, a Colab badge and a
    Kaggle link."""
    rows = [TABLE_START, "| Lesson | Google Colab | Kaggle |", "|---|---|---|"]
    for path, title in lessons:
        badge = f"[![Open in Colab]({COLAB_BADGE})]({colab(url, path)})"
        rows.append(f"| {title} | {badge} | [Open in Kaggle]({kaggle(url, path)}) |")
    return "\n".join([*rows, TABLE_END])


# Any link of these kinds in a page, whatever repository it names (OWNER/REPO included).
_LINKS = {
    "binder": re.compile(r"https://mybinder\.org/v2/gh/[^\s)`\]]+"),
    "nbgitpuller": re.compile(r"https://HUB/hub/user-redirect/git-pull\?[^\s)`\]]+"),
}


def documents(root: Path = ROOT) -> list[Path]:
    """The pages whose links are written from the address: README.md and docs/*.md."""
    return [Path(root) / "README.md", *sorted((Path(root) / "docs").glob("*.md"))]


def links_text(text: str, url: str, lessons: list[tuple[str, str]]) -> str:
    """A page's ``text`` with the table (where its two marker lines are) and every Binder and
    nbgitpuller link written for ``url``; a ValueError for a marker line without the other."""
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if (start < 0) != (end < 0) or end < start:
        raise ValueError(
            f"the table should lie between the lines {TABLE_START!r} and {TABLE_END!r}, in "
            "that order"
        )
    if start >= 0:
        text = text[:start] + lesson_table(url, lessons) + text[end + len(TABLE_END) :]
    text = _LINKS["binder"].sub(binder(url), text)
    return _LINKS["nbgitpuller"].sub(nbgitpuller(url), text)


def lesson_titles(lessons: Path) -> list[tuple[str, str]]:
    """``(path from the repository root, title)`` of each lesson; the title is its notebook's
    first heading (``Lesson 3 · Scaled dot-product attention``)."""
    import nbformat

    found = []
    for path in sorted(Path(lessons).glob("[0-9]*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        heading = re.search(r"^# (.+)$", text, re.MULTILINE)
        title = heading[1].strip() if heading else path.stem
        found.append((f"{Path(lessons).name}/{path.name}", title))
    return found


def _rewritten(pages: list[Path], url: str, lessons: Path) -> dict[Path, tuple[str, str]]:
    """{page: (its text, its text with the links of ``url``)}; a ValueError unless exactly
    one page holds the table."""
    texts = {page: Path(page).read_text(encoding="utf-8") for page in pages}
    holding = [str(page) for page, text in texts.items() if TABLE_START in text]
    if len(holding) != 1:
        raise ValueError(
            f"one of {', '.join(map(str, pages))} should hold the table of hosted notebooks "
            f"between the lines {TABLE_START!r} and {TABLE_END!r}; "
            f"{len(holding)} do{': ' + ', '.join(holding) if holding else ''}"
        )
    titles = lesson_titles(lessons)
    return {page: (text, links_text(text, url, titles)) for page, text in texts.items()}


def write_links(pages: list[Path], url: str, lessons: Path) -> list[Path]:
    """Write the links of ``url`` into ``pages``; returns the pages that changed."""
    changed = []
    for page, (old, new) in _rewritten(pages, url, lessons).items():
        if new != old:
            Path(page).write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


def links_drift(pages: list[Path], url: str, lessons: Path) -> str | None:
    """Why the links in ``pages`` disagree with ``url``, or None if they agree."""
    try:
        rewritten = _rewritten(pages, url, lessons)
    except ValueError as e:
        return str(e)
    stale = [str(page) for page, (old, new) in rewritten.items() if new != old]
    if stale:
        return f"the hosted-notebook links of {', '.join(stale)} are not those of {url}"
    return None
