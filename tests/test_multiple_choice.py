"""Multiple choices over the whole course: the right option is not singled out by its length.

A test-wise learner picks the longest, most detailed option. So, over every multiple choice
(``@multiple_choice`` in ``course_lib/checks``, its options listed in the lesson source's
markdown as ``- **b.** text``):

- the correct option is never more than 1.5 times the median length of its siblings;
- it is the longest option in at most a quarter of the questions.

Length is the option's text as written, in characters.
"""

import re
import statistics
from pathlib import Path

import pytest

from course_lib.checks import EXERCISES
from course_lib.lesson_format import OPTION
from course_tools import sources

ROOT = Path(__file__).resolve().parent.parent
HEADING = re.compile(r"^#+ ✏️ (\d+\.\d+)\b", re.MULTILINE)  # "### ✏️ 3.1 Recall: ..."
LONGEST_SHARE = 0.25
MEDIAN_RATIO = 1.5

CHOICES = [e for e in EXERCISES.values() if e.kind == "choice"]


def listed_options() -> dict[str, dict[str, str]]:
    """Each exercise's options, {letter: text}, from the markdown under its heading."""
    options: dict[str, dict[str, str]] = {}
    for source in sorted((ROOT / "solutions").glob("[0-9]*.py")):
        current = None
        for cell in sources.read(source).cells:
            if cell.cell_type != "markdown":
                continue
            heading = HEADING.search(cell.source)
            current = heading[1] if heading else current
            for letter, text in OPTION.findall(cell.source):
                options.setdefault(current, {})[letter] = text.strip()
    return options


OPTIONS = listed_options()


def correct_letter(exercise) -> str:
    return next(letter for letter in "abcdefgh" if exercise.run(letter).passed)


def lengths(exercise) -> tuple[int, list[int]]:
    """The correct option's length and its siblings'."""
    options = OPTIONS[exercise.id]
    right = correct_letter(exercise)
    return len(options[right]), [len(t) for letter, t in options.items() if letter != right]


def test_there_are_multiple_choices_to_check():
    assert len(CHOICES) >= 10


@pytest.mark.parametrize("exercise", CHOICES, ids=lambda e: e.id)
def test_each_multiple_choice_lists_the_options_its_check_explains(exercise):
    listed = set(OPTIONS.get(exercise.id, {}))
    explained = {letter for letter in "abcdefgh" if letter != correct_letter(exercise)}
    explained = {letter for letter in explained if "not the best" in exercise.run(letter).message}
    assert listed == explained | {correct_letter(exercise)}, (exercise.id, sorted(listed))


@pytest.mark.parametrize("exercise", CHOICES, ids=lambda e: e.id)
def test_the_correct_option_is_not_much_longer_than_its_siblings(exercise):
    right, siblings = lengths(exercise)
    median = statistics.median(siblings)
    assert right <= MEDIAN_RATIO * median, (
        f"{exercise.id}: the correct option has {right} characters, "
        f"{right / median:.2f} times the median of the others ({median:g}); "
        f"at most {MEDIAN_RATIO}. Make the wrong options as specific as the right one."
    )


def test_the_correct_option_is_the_longest_in_at_most_a_quarter_of_the_questions():
    longest = [e.id for e in CHOICES if lengths(e)[0] >= max(lengths(e)[1])]
    assert len(longest) <= LONGEST_SHARE * len(CHOICES), (
        f"the correct option is the longest (or tied) in {len(longest)} of {len(CHOICES)} "
        f"questions: {', '.join(longest)}; at most {int(LONGEST_SHARE * len(CHOICES))}."
    )
