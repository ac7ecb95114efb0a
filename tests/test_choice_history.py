"""The record of where earlier versions' multiple-choice letters stand today, and how a copy's
letters are read: as today's, through the record, or not at all."""

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


TODAY = notebook("new", "ba")
RECORD = {3: {"old": {"3.1": {"a": "b", "b": "a"}}}}


@pytest.mark.parametrize(
    "copy, readable, moves",
    [
        (notebook("new", "ab"), True, {}),  # today's version: today's letters, whatever it lists
        (notebook("old", "ab"), True, {"3.1": {"a": "b", "b": "a"}}),  # on record
        (notebook("newer", "ba"), True, {}),  # not on record, but lists today's options
        (notebook(None, "ba"), True, {}),  # records no version, lists today's options
        (notebook("other", "ab"), False, {}),  # not on record, lists them otherwise
        (notebook(None, "ab"), False, {}),
    ],
)
def test_a_copys_letters_are_read_as_todays_through_the_record_or_not_at_all(copy, readable, moves):
    letters = choice_history.letters(copy, TODAY, 3, RECORD)
    assert (letters.readable, letters.moves) == (readable, moves)
    recorded = copy["metadata"].get(COURSE, {}).get("version")
    assert (letters.today, letters.version) == ("new", recorded)


def test_now_gives_an_options_letter_today():
    letters = choice_history.letters(notebook("old", "ab"), TODAY, 3, RECORD)
    assert [letters.now("3.1", x) for x in ("a", "b", "c", None)] == ["b", "a", "c", None]
    assert letters.now("3.2", "a") == "a"
    assert choice_history.known_versions(3, RECORD) == ["old"]
    assert choice_history.known_versions(4, RECORD) == []


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


@pytest.mark.parametrize("lesson", sorted(choice_history.EARLIER))
def test_the_record_moves_only_options_of_that_lessons_multiple_choices(lesson):
    for version, moved in choice_history.EARLIER[lesson].items():
        assert len(version) == 12 and int(version, 16) >= 0
        for exercise_id, moves in moved.items():
            exercise = EXERCISES[exercise_id]
            assert exercise.kind == "choice" and exercise_id.split(".")[0] == str(lesson)
            assert exercise.names == (answer_name(exercise_id),)
            letters = _letters(exercise)
            assert set(moves) <= set(letters) and sorted(moves.values()) == sorted(moves)


@pytest.mark.parametrize("lesson", sorted(choice_history.EARLIER))
def test_an_answer_right_before_the_options_moved_is_right_today(lesson):
    """Before the right letters were spread out, every question's right answer was b, except
    7.12's, c."""
    for version in choice_history._BEFORE_SPREAD_OUT[lesson].split():
        moved = choice_history.EARLIER[lesson][version]
        for exercise in (e for e in EXERCISES.values() if e.kind == "choice"):
            if exercise.id.split(".")[0] == str(lesson):
                before = "c" if exercise.id == "7.12" else "b"
                assert moved.get(exercise.id, {}).get(before, before) == _right(exercise)


@pytest.mark.parametrize("lesson", sorted(choice_history.EARLIER))
def test_todays_lessons_are_not_among_the_earlier_versions(lesson):
    [path] = (ROOT / "lessons").glob(f"{lesson:02d}_*.ipynb")
    today = nbformat.read(path, as_version=4).metadata[COURSE]["version"]
    assert today not in choice_history.EARLIER[lesson]


@pytest.mark.parametrize("lesson", sorted(choice_history.EARLIER))
def test_a_copy_made_after_the_letters_were_spread_out_reads_its_letters_as_today(lesson):
    """Such a copy lists the options as they were worded then, not as today's lesson does."""
    [path] = (ROOT / "lessons").glob(f"{lesson:02d}_*.ipynb")
    today = nbformat.read(path, as_version=4)
    for version in choice_history._SINCE_SPREAD_OUT[lesson].split():
        copy = notebook(version, "zyx")  # options worded otherwise
        letters = choice_history.letters(copy, today, lesson)
        assert letters.readable and letters.moves == {}
