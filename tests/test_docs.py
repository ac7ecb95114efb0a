"""The README and the guides in docs/ name only what exists: every ``make TARGET`` is a target
of the Makefile, every ``python -m MODULE`` a module that runs, and every relative link leads to
a file of the repository and, where it names one, to a heading of that file."""

import importlib.machinery
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
SPAN = re.compile(r"`([^`\n]+)`")
MAKE = re.compile(r"(?<![\w./-])make\s+([a-z][\w-]*)")
PYTHON_M = re.compile(r"(?<![\w.-])python3?\s+-m\s+([A-Za-z_][\w.]*)")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
RULE = re.compile(r"^([A-Za-z][\w.-]*(?:[ \t]+[A-Za-z][\w.-]*)*)[ \t]*:(?!=)", re.M)


def text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def code(markdown: str) -> list[str]:
    """What a reader would type: the fenced blocks and the inline code spans."""
    blocks = FENCE.findall(markdown)
    return blocks + SPAN.findall(FENCE.sub("", markdown))


def prose(markdown: str) -> str:
    """The text without its code, where links and headings are."""
    return SPAN.sub("", FENCE.sub("", markdown))


def named(pattern: re.Pattern) -> list[tuple[str, str]]:
    """``(page, name)`` for every match of ``pattern`` in the code of every page."""
    return sorted(
        {(page.relative_to(ROOT).as_posix(), found) for page in PAGES for piece in code(text(page))
         for found in pattern.findall(piece)}
    )  # fmt: skip


def make_targets(makefile: Path = ROOT / "Makefile") -> set[str]:
    """The targets of a Makefile and of the files it includes."""
    source = text(makefile)
    targets = {t for rule in RULE.findall(source) for t in rule.split()}
    for included in re.findall(r"^include\s+(\S+)", source, re.M):
        targets |= make_targets(makefile.parent / included)
    return targets - {"include"}


def runnable(module: str) -> bool:
    """Whether ``python -m module`` runs something: a package with a ``__main__`` module, or a
    module that acts when run as the main one."""
    spec = find(module)
    if spec is None:
        return False
    if spec.submodule_search_locations is not None:
        return find(f"{module}.__main__") is not None
    return spec.origin is not None and "__main__" in Path(spec.origin).read_text(encoding="utf-8")


def find(module: str):
    """Where ``module`` is on sys.path, found without importing it or its packages. (Importing
    pip, or asking the import hooks for it, turns setuptools' distutils hook off for the rest of
    the process on Python 3.11, and a later ``import setuptools``, which torch 2.5's optimizers
    make, then fails.)"""
    spec, path, parts = None, None, module.split(".")
    for depth in range(1, len(parts) + 1):
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:depth]), path)
        if spec is None:
            return None
        path = spec.submodule_search_locations
    return spec


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.replace("`", ""))
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a markdown page's headings, repeated ones numbered as GitHub does."""
    found, seen = set(), {}
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t]*#*$", FENCE.sub("", text(page)), re.M):
        base = slug(heading)
        found.add(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return found


def relative_links() -> list[tuple[str, str]]:
    return sorted(
        (page.relative_to(ROOT).as_posix(), link)
        for page in PAGES
        for link in LINK.findall(prose(text(page)))
        if not re.match(r"[a-z][a-z0-9+.-]*:", link)
    )


MAKES, MODULES, LINKS = named(MAKE), named(PYTHON_M), relative_links()


def test_the_pages_name_commands_and_links_to_check():
    assert ("README.md", "lab") in MAKES and ("README.md", "test") in MAKES
    assert {page for page, _ in MAKES} == {page.relative_to(ROOT).as_posix() for page in PAGES}
    assert len(MODULES) >= 10 and len(LINKS) >= 20


def test_the_makefile_targets_are_read_as_make_reads_them():
    targets = make_targets()
    assert {"lab", "update", "restore", "test", "test-mutants", "e2e", "site"} <= targets
    assert not {"NBVAL", "VENV", "BIN", "TORCH_INDEX", "include"} & targets  # variables, includes


@pytest.mark.parametrize("page, target", MAKES, ids=[f"{p}:{t}" for p, t in MAKES])
def test_every_make_command_is_a_target_of_the_makefile(page, target):
    assert target in make_targets(), f"{page} names `make {target}`, which the Makefile lacks"


@pytest.mark.parametrize("page, module", MODULES, ids=[f"{p}:{m}" for p, m in MODULES])
def test_every_python_m_command_is_a_module_that_runs(page, module):
    assert runnable(module), f"{page} names `python -m {module}`, which does not run"


def test_a_command_that_does_not_exist_is_found():
    page = "```bash\nmake lab\nmake no-such-target\n```\nthen `python -m no.such.module`."
    pieces = code(page)
    assert [MAKE.findall(p) for p in pieces] == [["lab", "no-such-target"], []]
    assert PYTHON_M.findall(pieces[1]) == ["no.such.module"]
    assert "no-such-target" not in make_targets() and not runnable("no_such_module")
    assert runnable("course_tools.authoring") and runnable("course_tools.site")


def test_looking_for_pip_leaves_the_session_able_to_import_setuptools():
    """A module is found without importing it or asking the import hooks: otherwise a later
    ``import setuptools`` in the same test process fails (see ``find``)."""
    if find("setuptools") is None:
        pytest.skip("setuptools is not installed here")
    code = (
        "import runpy, sys; assert runpy.run_path('tests/test_docs.py')['runnable']('pip'); "
        "import setuptools; print('pip' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "False\n"), done.stderr[-600:]


@pytest.mark.parametrize("page, link", LINKS, ids=[f"{p}:{link}" for p, link in LINKS])
def test_every_relative_link_leads_to_a_file_and_heading(page, link):
    path, _, anchor = link.partition("#")
    target = (ROOT / page).parent / path if path else ROOT / page
    assert target.exists(), f"{page} links to {link}: no such file"
    if anchor and target.suffix == ".md":
        assert anchor in anchors(target), f"{page} links to {link}: no such heading"


def test_anchors_are_githubs():
    assert slug("Your workspace: updates and restore") == "your-workspace-updates-and-restore"
    assert slug("The reference library, `course_lib`") == "the-reference-library-course_lib"
    assert slug("The course's grader: `make grade`") == "the-courses-grader-make-grade"
    assert slug("Students' environment: Binder and JupyterHub") == (
        "students-environment-binder-and-jupyterhub"
    )


def test_the_check_shown_is_what_the_check_says():
    """The front page's and the learners' guide's example of exercise 3.2, unscaled then right."""
    import torch

    from course_lib.checks import check

    scores, values = torch.tensor([1.0, 0.0]), torch.tensor([5.0, 3.0])
    unscaled, scaled = scores.softmax(dim=-1), (scores / 2**0.5).softmax(dim=-1)
    wrong, right = check("3.2", unscaled, unscaled @ values), check("3.2", scaled, scaled @ values)
    assert not wrong.passed and right.passed
    for page in (README, ROOT / "docs" / "learning.md"):
        assert f"{wrong}\n" in FENCE.findall(text(page)), page.name
    assert f"{right}\n" in FENCE.findall(text(README))


def test_the_readme_opens_with_the_two_commands_and_stays_a_front_page():
    """The front page: the two commands first (continuous integration runs the second), then
    what this is, the lessons, a check, and where each reader goes next."""
    lines = text(README).splitlines()
    first = FENCE.search(text(README))
    assert first[1].splitlines()[0].startswith("make lab ")
    assert first[1].splitlines()[1].startswith("make test ")
    assert text(README).index(first[0]) < text(README).index("\n## ")
    assert len(lines) <= 120, f"README.md has {len(lines)} lines; the rest belongs in docs/"
    headings = re.findall(r"^## (.+)$", prose(text(README)), re.M)
    assert headings[:3] == ["The lessons", "What a check looks like", "Where to go next"]


def test_the_guides_example_exercise_checks_what_the_guide_says():
    """docs/maintaining.md's exercise 5.7, its check block run as written: the model answer of
    step 1 passes, each typical mistake of step 3 fails with its words, and the message shown
    for a forgotten 2π is what the check prints."""
    import math

    from course_lib.checks import _core, lesson05

    guide = text(ROOT / "docs" / "maintaining.md")
    walk = guide[guide.index("## Adding an exercise") : guide.index("## Writing a check")]
    lesson, block, shown, tests = FENCE.findall(walk)[:4]
    space = {**vars(lesson05), "__name__": "docs_example"}  # registered apart from lesson 5
    try:
        exec(block, space)
        exercise = space["wavelengths"]
        answer = {"math": math}
        exec(lesson.split("# %%\n")[1].replace("    # BEGIN SOLUTION\n", ""), answer)
        assert exercise.run(answer["wavelength"]).passed
        mistakes = re.findall(r'"5\.7", \((lambda .*?),\), (\[.*?\])\)', tests)
        assert len(mistakes) == 2, mistakes
        for wrong, words in mistakes:
            result = exercise.run(eval(wrong, {"math": math}))
            assert not result.passed and all(w in result.message for w in eval(words)), result
        assert f"{exercise.run(lambda i, d: 10000 ** (2 * i / d))}\n" == shown
    finally:
        _core._DECLARED.pop("docs_example", None)
