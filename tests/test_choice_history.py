"""The record of where earlier versions' multiple-choice letters stand today, and how a copy's
letters are read: as today's, through the record, or not at all."""

import io
import json
import re
import subprocess
from pathlib import Path

import nbformat
import pytest

from course_lib import choice_history
from course_lib.checks import EXERCISES
from course_lib.lesson_format import COURSE, answer_name, choice_letter, listed_options

ROOT = Path(__file__).resolve().parent.parent


def notebook(version: str | None, options: str) -> dict:
    """A notebook recording ``version`` and listing ``options``, e.g. "ab" -> a. A, b. B."""
    listing = "\n".join(f"- **{chr(97 + i)}.** {o.upper()}" for i, o in enumerate(options))
    nb = {"cells": [{"cell_type": "markdown", "source": f"### ✏️ 3.1\n\n{listing}"}]}
    nb["metadata"] = {COURSE: {"version": version}} if version else {}
    return nb


SWAP = {"3.1": {"a": "b", "b": "a"}}
TODAY = notebook("new", "ba")
RECORD = {3: {choice_history.listing(notebook(None, "ab")): ("old", SWAP)}}  # version "old"


@pytest.mark.parametrize(
    "copy, readable, moves, version",
    [
        (notebook("new", "ba"), True, {}, "new"),  # today's listing
        (notebook("old", "ab"), True, SWAP, "old"),  # a recorded listing
        (notebook(None, "ab"), True, SWAP, "old"),  # records no version, a recorded listing
        (notebook("new", "ab"), True, SWAP, "old"),  # claims today's, lists the recorded one
        (notebook("old", "ba"), True, {}, "new"),  # claims the recorded one, lists today's
        (notebook("newer", "ba"), True, {}, "new"),  # a version not on record, today's listing
        (notebook(None, "ba"), True, {}, "new"),
        (notebook("old", "ac"), False, {}, None),  # claims a recorded version, lists otherwise
        (notebook("new", "ac"), False, {}, None),  # claims today's, lists otherwise
        (notebook(None, "ac"), False, {}, None),
    ],
)
def test_a_copys_letters_are_read_from_what_it_lists_never_from_its_metadata(
    copy, readable, moves, version
):
    letters = choice_history.letters(copy, TODAY, 3, RECORD)
    assert (letters.readable, letters.moves, letters.version) == (readable, moves, version)
    claimed = copy["metadata"].get(COURSE, {}).get("version")
    assert (letters.today, letters.claimed) == ("new", claimed)


def test_now_gives_an_options_letter_today():
    letters = choice_history.letters(notebook("old", "ab"), TODAY, 3, RECORD)
    assert [letters.now("3.1", x) for x in ("a", "b", "c", None)] == ["b", "a", "c", None]
    assert letters.now("3.2", "a") == "a"
    assert choice_history.known_versions(3, RECORD) == ["old"]
    assert choice_history.known_versions(4, RECORD) == []


def test_a_listings_fingerprint_follows_its_letters_texts_and_order_only():
    key = choice_history.listing(notebook("x", "ab"))
    assert re.fullmatch("[0-9a-f]{16}", key)
    assert choice_history.listing(notebook(None, "ab")) == key  # the metadata plays no part
    others = [notebook("x", o) for o in ("ba", "ac", "abc", "a", "")]
    assert key not in {choice_history.listing(nb) for nb in others}


def test_the_command_prints_a_notebooks_version_and_listing(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(notebook("old", "ab"))))
    choice_history.main()
    assert capsys.readouterr().out == f"old {choice_history.listing(notebook(None, 'ab'))}\n"


def test_the_options_are_read_from_markdown_only():
    nb = notebook("x", "ab")
    nb["cells"].append({"cell_type": "code", "source": "# - **c.** not an option"})
    assert listed_options(nb) == (("a", "A"), ("b", "B"))


@pytest.mark.parametrize(
    "answer, letter", [("b", "b"), (" (B). ", "b"), ("bc", None), ("", None), (2, None)]
)
def test_choice_letter(answer, letter):
    assert choice_letter(answer) == letter


def test_answer_name_follows_the_exercise_id():
    assert answer_name("7.12") == "answer_7_12"
    with pytest.raises(ValueError, match="exercise_id should look like '3.1'; got 3.1"):
        answer_name(3.1)


# The course's own record -----------------------------------------------------------------------


def _letters(exercise) -> list[str]:
    """The letters a multiple choice accepts (the others are refused as not an option)."""
    return [x for x in "abcdefgh" if exercise.run(x).diagnosis != "type"]


def _right(exercise) -> str:
    return next(x for x in _letters(exercise) if exercise.run(x).passed)


def _today(lesson: int) -> nbformat.NotebookNode:
    [path] = (ROOT / "lessons").glob(f"{lesson:02d}_*.ipynb")
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("lesson", sorted(choice_history.EARLIER))
def test_the_record_moves_only_options_of_that_lessons_multiple_choices(lesson):
    for key, (versions, moved) in choice_history.EARLIER[lesson].items():
        assert re.fullmatch("[0-9a-f]{16}", key)
        assert all(re.fullmatch("[0-9a-f]{12}", v) for v in versions.split())
        for exercise_id, moves in moved.items():
            exercise = EXERCISES[exercise_id]
            assert exercise.kind == "choice" and exercise_id.split(".")[0] == str(lesson)
            assert exercise.names == (answer_name(exercise_id),)
            letters = _letters(exercise)
            assert set(moves) <= set(letters) and sorted(moves.values()) == sorted(moves)


@pytest.mark.parametrize("lesson", sorted(choice_history.EARLIER))
def test_an_answer_right_before_the_options_moved_is_right_today(lesson):
    """Before the right letters were spread out (each lesson's first listing on record),
    every question's right answer was b, except 7.12's, c."""
    moved = next(iter(choice_history.EARLIER[lesson].values())).moves
    for exercise in (e for e in EXERCISES.values() if e.kind == "choice"):
        if exercise.id.split(".")[0] == str(lesson):
            before = "c" if exercise.id == "7.12" else "b"
            assert moved.get(exercise.id, {}).get(before, before) == _right(exercise)


@pytest.mark.parametrize("lesson", sorted(choice_history.EARLIER))
def test_todays_listing_is_read_as_todays_whatever_version_a_copy_claims(lesson):
    today = _today(lesson)
    version = today.metadata[COURSE]["version"]
    assert version not in choice_history.known_versions(lesson)
    earlier = choice_history.EARLIER[lesson].get(choice_history.listing(today))
    assert earlier is None or earlier.moves == {}  # today's options are not an earlier listing
    for claim in [version, None, *choice_history.known_versions(lesson)]:
        copy = nbformat.from_dict(dict(today, metadata={COURSE: {"version": claim}}))
        letters = choice_history.letters(copy, today, lesson)
        assert (letters.readable, letters.moves, letters.version) == (True, {}, version)


# The record against the lessons' history -------------------------------------------------------


def _git(*args: str) -> str | None:
    try:
        shown = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    except OSError:
        return None
    return shown.stdout if shown.returncode == 0 else None


def _right_then(commit: str, stem: str) -> dict[str, str]:
    """The right letters of a lesson's multiple choices at ``commit``, from its solution."""
    for path in (f"solutions/{stem}.py", f"solutions/{stem}.ipynb"):
        text = _git("show", f"{commit}:{path}")
        if text is not None and path.endswith(".ipynb"):
            cells = nbformat.reads(text, as_version=4).cells
            text = "\n".join(c.source for c in cells if c.cell_type == "code")
        if text is not None:
            found = re.findall(r"^answer_(\d+)_(\d+) = [\"']([a-z])[\"']", text, re.MULTILINE)
            return {f"{n}.{k}": letter for n, k, letter in found}
    return {}


def committed(lesson: int) -> list[tuple[str, nbformat.NotebookNode, dict[str, str]]]:
    """Every committed lessons/NN notebook, with its commit and the right letters then."""
    log = _git("log", "--format=%H", "--", f"lessons/{lesson:02d}_*.ipynb")
    if not log:
        pytest.skip("the repository's history (the releases the record is about) is not here")
    found = []
    for commit in log.split():
        for path in _git("ls-tree", "--name-only", commit, "lessons/").split():
            if Path(path).name.startswith(f"{lesson:02d}_") and path.endswith(".ipynb"):
                nb = nbformat.reads(_git("show", f"{commit}:{path}"), as_version=4)
                found.append((commit, nb, _right_then(commit, Path(path).stem)))
    return found


@pytest.mark.parametrize("lesson", sorted(choice_history.EARLIER))
def test_every_committed_lessons_right_letters_are_read_as_right_today(lesson):
    today = _today(lesson)
    choices = [e for e in EXERCISES.values() if e.kind == "choice"]
    choices = sorted(e.id for e in choices if e.id.split(".")[0] == str(lesson))
    for commit, nb, right in committed(lesson):
        letters = choice_history.letters(nb, today, lesson)
        assert letters.readable, commit
        assert sorted(right) == choices, commit
        for exercise_id, letter in right.items():
            assert letters.now(exercise_id, letter) == _right(EXERCISES[exercise_id]), commit


@pytest.mark.parametrize("lesson", sorted(choice_history.EARLIER))
def test_each_recorded_version_is_found_under_its_own_listing(lesson):
    """Each version on record lists the options its entry's fingerprint names, so versions
    that list the same options share their moves."""
    record = choice_history.EARLIER[lesson]
    seen = set()
    for commit, nb, _ in committed(lesson):
        version = nb.metadata.get(COURSE, {}).get("version")
        if version in choice_history.known_versions(lesson):
            assert version in record[choice_history.listing(nb)].versions.split(), commit
            seen.add(version)
    assert sorted(seen) == sorted(choice_history.known_versions(lesson))
