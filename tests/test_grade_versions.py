"""Multiple choices graded against the version of the lesson a submission was made from.

The notebooks are small lessons built like the real ones: lesson 3's multiple choice (its
options, answer and check cells) with the version authoring computes from the cells. The
earlier version lists two options the other way round, as lesson 3 did before its options
moved; a record of that listing reads its letters, and without one the grader says it cannot.
Which version a notebook is read as comes from the options it lists, never from the version
its metadata claims.
"""

import csv
import re
import subprocess
from pathlib import Path

import nbformat
import pytest

from course_lib.choice_history import listing
from course_lib.lesson_format import COURSE, OPTION
from course_tools.authoring import course_metadata
from course_tools.grading.grader import grade_many, write_reports

ROOT = Path(__file__).resolve().parents[1]
NAME = "03_scaled_dot_product_attention.ipynb"
SWAP = {"b": "c", "c": "b"}  # how 3.1's options moved between the two versions


def lesson(
    *,
    earlier: bool = False,
    answer: str | None = None,
    note: str = "",
    reworded: bool = False,
    claims: str | None = None,
) -> dict:
    """Lesson 3's multiple choice as a lesson notebook, with its version; ``earlier`` lists
    options b and c the other way round; ``answer`` fills the answer cell; ``note`` adds a
    cell (a new version that leaves the options as they are); ``reworded`` rewords option a;
    ``claims`` is a version its metadata records instead of its own."""
    real = nbformat.read(ROOT / "lessons" / NAME, as_version=4).cells
    listing = next(c for c in real if c.cell_type == "markdown" and "✏️ 3.1" in c.source)
    answer_cell = next(c for c in real if c.cell_type == "code" and "answer_3_1 =" in c.source)
    check_cell = next(c for c in real if c.source.startswith('check("3.1"'))
    setup = nbformat.v4.new_code_cell("from course_lib.checks import check")
    setup.id = "setup"
    cells = [setup] + [nbformat.from_dict(dict(c)) for c in (listing, answer_cell, check_cell)]
    if earlier:
        lines = cells[1].source.split("\n")
        at = {m[1]: i for i, line in enumerate(lines) if (m := OPTION.match(line))}
        lines[at["b"]], lines[at["c"]] = (
            lines[at["c"]].replace("**c.**", "**b.**"),
            lines[at["b"]].replace("**b.**", "**c.**"),
        )
        cells[1].source = "\n".join(lines)
    if reworded:
        cells[1].source = cells[1].source.replace("- **a.** ", "- **a.** In short, ")
    if note:
        cells.insert(1, nbformat.v4.new_markdown_cell(note))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    nb.metadata[COURSE] = course_metadata(nb, NAME)  # the version of the blank lesson
    if claims is not None:
        nb.metadata[COURSE]["version"] = claims
    if answer is not None:
        cells[-2].source = f'answer_3_1 = "{answer}"'
    return nb


def version(nb) -> str:
    return nb.metadata[COURSE]["version"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade every submission once; the rows, feedback and summary keyed by student."""
    root = tmp_path_factory.mktemp("versions")
    (root / "lessons").mkdir()
    nbformat.write(lesson(), root / "lessons" / NAME)  # today's lesson
    earlier = lesson(earlier=True)
    record = {3: {listing(earlier): (version(earlier), {"3.1": SWAP})}}
    versionless = lesson(answer="c")
    del versionless.metadata[COURSE]
    submissions = {
        "today_right": lesson(answer="c"),
        "earlier_right": lesson(earlier=True, answer="b"),  # b was then what c is now
        "earlier_wrong": lesson(earlier=True, answer="c"),  # c was then today's b
        "unknown_version": lesson(earlier=True, answer="b", note="A clearer intro.", reworded=True),
        # today's options, claiming the earlier version: b would be moved onto today's right c
        "claims_earlier": lesson(answer="b", claims=version(earlier)),
        "earlier_claims_today": lesson(earlier=True, answer="b", claims=version(lesson())),
        "new_text_same_options": lesson(answer="c", note="A clearer introduction."),
        "versionless": versionless,
    }
    items = []
    for student, nb in submissions.items():
        (root / student).mkdir()
        path = root / student / NAME
        nbformat.write(nb, path)
        items.append((path, student))
    options = {"timeout": 60, "points": {}, "lessons": root / "lessons", "record": record}
    grades = grade_many(items, jobs=2, **options)
    summary = write_reports(grades, root / "out" / "grades.csv")
    with open(root / "out" / "grades.csv", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    feedback = {g.student: root / "out" / "feedback" / f"{g.student}-03.md" for g in grades}
    return {
        "by": {g.student: {e.id: e for e in g.exercises} for g in grades},
        "grades": {g.student: g for g in grades},
        "rows": rows,
        "feedback": {s: p.read_text(encoding="utf-8") for s, p in feedback.items()},
        "summary": summary,
        "versions": {
            s: nb.metadata.get(COURSE, {}).get("version") for s, nb in submissions.items()
        },
        "today": version(lesson()),
        "earlier": version(earlier),
    }


def test_the_versions_differ_as_the_cases_need(graded):
    versions = graded["versions"]
    assert versions["today_right"] == graded["today"]
    assert versions["earlier_right"] == versions["earlier_wrong"] == graded["earlier"]
    assert len({versions[s] for s in ("today_right", "earlier_right", "unknown_version")}) == 3
    assert versions["new_text_same_options"] not in (graded["today"], graded["earlier"])
    assert versions["claims_earlier"] == graded["earlier"]
    assert versions["earlier_claims_today"] == graded["today"]


def test_todays_version_is_graded_against_todays_letters(graded):
    result = graded["by"]["today_right"]["3.1"]
    assert (result.status, result.points) == ("passed", 1.0)
    assert result.message.startswith("(c) is right.")
    assert graded["grades"]["today_right"].problems == []


def test_an_earlier_letter_counts_as_the_option_it_named_then(graded):
    right = graded["by"]["earlier_right"]["3.1"]
    assert (right.status, right.points) == ("passed", 1.0)
    assert right.message.startswith(
        "Your notebook is from an earlier version of the lesson, where this option was (b); "
        "it is (c) in today's. (c) is right."
    )
    wrong = graded["by"]["earlier_wrong"]["3.1"]
    assert (wrong.status, wrong.points) == ("failed", 0.0)
    assert "where this option was (c); it is (b) in today's" in wrong.message
    assert "(b) is not the best answer. The softmax makes every row sum to 1" in wrong.message
    assert graded["rows"]["earlier_right"]["status"] == "ok"


def test_a_notebook_is_read_as_the_version_its_options_are_not_the_one_it_claims(graded):
    """Claiming the earlier version does not move today's wrong b onto the right c; listing
    the earlier options reads b as the option it names there, whatever version is claimed."""
    claimed = graded["by"]["claims_earlier"]["3.1"]
    assert (claimed.status, claimed.points) == ("failed", 0.0)
    assert claimed.message.startswith("(b) is not the best answer.")
    assert graded["grades"]["claims_earlier"].problems == []
    listed = graded["by"]["earlier_claims_today"]["3.1"]
    assert (listed.status, listed.points) == ("passed", 1.0)
    assert "where this option was (b); it is (c) in today's. (c) is right." in listed.message


def test_a_version_without_a_record_is_reported_not_graded_against_todays_letters(graded):
    result = graded["by"]["unknown_version"]["3.1"]
    assert (result.status, result.points, result.max_points) == ("not graded", 0.0, 1.0)
    assert "make update LESSON=03" in result.message
    row = graded["rows"]["unknown_version"]
    assert row["status"] == "problems" and row["3.1"] == ""
    note = row["notes"]
    assert f"{NAME} claims version {graded['versions']['unknown_version']} of lesson 03" in note
    assert f"it knows today's {graded['today']} and the earlier {graded['earlier']}" in note
    assert "3.1 not graded" in note and "`make update LESSON=03`" in note
    assert "? Not graded: **3.1" in graded["feedback"]["unknown_version"]
    assert "| 3.1 | 5 | 2 | 0 | 1 | 0 |" in graded["summary"]  # passed ... not graded, flagged


@pytest.mark.parametrize("student", ["new_text_same_options", "versionless"])
def test_a_notebook_listing_todays_options_is_graded_against_todays_letters(graded, student):
    result = graded["by"][student]["3.1"]
    assert (result.status, result.message[:14]) == ("passed", "(c) is right. ")
    assert graded["grades"][student].problems == []


# The course's own record, on the lessons as they were released -------------------------------

RELEASE = "0547b636f7aa4fa45dc1f5a2da418c80f55d5a63"  # the last release before options moved


def _released(path: str) -> str | None:
    """A file as the release had it, from the repository's history; None without the history."""
    try:
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{RELEASE}:{path}"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return shown.stdout


def released_submission(number: int) -> nbformat.NotebookNode | None:
    """Lesson ``number`` as released, answered with the letters that were right then (from the
    released solutions), with only its multiple choices' code: the rest is not needed here."""
    [path] = (ROOT / "lessons").glob(f"{number:02d}_*.ipynb")
    lesson_text = _released(f"lessons/{path.name}")
    solution_text = _released(f"solutions/{path.stem}.py")
    if lesson_text is None or solution_text is None:
        return None
    right = dict(re.findall(r'^(answer_\d+_\d+) = "([a-z])"$', solution_text, re.MULTILINE))
    nb = nbformat.reads(lesson_text, as_version=4)
    kept = [nbformat.v4.new_code_cell("from course_lib.checks import check")]
    for cell in nb.cells:
        name = re.search(r"^(answer_\d+_\d+) = None$", cell.source, re.MULTILINE)
        if cell.cell_type == "markdown":
            kept.append(cell)
        elif name:
            cell.source = f'{name[1]} = "{right[name[1]]}"'
            kept.append(cell)
    nb.cells = kept
    return nb


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """Lessons 1 to 8 as released, graded with the course's record; lessons 1 (options
    moved since) and 5 (kept, reworded since) also with an empty record."""
    root = tmp_path_factory.mktemp("released")
    items = []
    for number in range(1, 9):
        nb = released_submission(number)
        if nb is None:
            pytest.skip("the repository's history (the release the record is about) is not here")
        [path] = (ROOT / "lessons").glob(f"{number:02d}_*.ipynb")
        nbformat.write(nb, root / path.name)
        items.append((root / path.name, path.stem))
    options = {"timeout": 60, "points": {}, "lessons": ROOT / "lessons"}
    return {
        "record": grade_many(items, jobs=2, **options),
        "no record": grade_many([items[0], items[4]], jobs=2, record={}, **options),
    }


def test_every_answer_right_in_the_release_is_right_today(released):
    choices = [e for g in released["record"] for e in g.exercises if e.id in MOVED + KEPT]
    assert sorted(e.id for e in choices) == sorted(MOVED + KEPT)
    for e in choices:
        assert (e.status, e.points) == ("passed", 1.0), (e.id, e.message)
        assert ("from an earlier version of the lesson" in e.message) == (e.id in MOVED), e.id


def test_without_the_record_no_multiple_choice_of_an_earlier_wording_is_graded(released):
    """Every lesson's options were reworded since that release (lesson 5's kept their letters),
    so without the record a letter cannot be read in either."""
    assert [g.lesson for g in released["no record"]] == [1, 5]
    for g in released["no record"]:
        choices = [e for e in g.exercises if e.id in MOVED + KEPT]
        assert choices and all(e.status == "not graded" for e in choices), g.student
        assert any("as no version this grader has a record of" in p for p in g.problems)


MOVED = ["1.1", "1.7", "2.1", "3.1", "4.1", "4.3", "6.1", "7.1"]
KEPT = ["5.1", "7.3", "7.12", "8.6"]
