"""Where the options of the multiple choices stood in the lessons' earlier versions.

An answer to a multiple choice is a letter, and a letter means the option listed under it in
the copy of the lesson the learner worked in. When options are reordered, an answer made from
an earlier version names its option by its old letter. This record says, for every listing of
the options released before today's, which letter each moved option has today, so that the
grader (``course_tools.grading``) and ``make update`` (:mod:`course_lib.workspace`) read an
old letter as the option it named then.

How a copy's letters are read (:func:`letters`) depends on what the copy lists, never on the
version its metadata records, which anyone can edit: as today's if it lists the same options,
in the same order, as today's lesson; through this record if its listing is one recorded
here; otherwise they cannot be read, and the tools say so.

Moving or rewording options means recording the listing released before the change. Print the
version and listing fingerprint of every commit of a lesson (here lesson 3) with::

    git log --format=%H -- 'lessons/03_*.ipynb' | while read -r c; do
      git ls-tree --name-only "$c" lessons/ | grep '^lessons/03_' |
        while read -r f; do git show "$c:$f" | python -m course_lib.choice_history; done
    done

then add each listing not recorded yet (with its versions, newest first) to ``_RELEASED``,
and, where ``EARLIER`` is built, its moves to today's letters. Moving options again also means
composing the moves of the listings already recorded with the new ones, since every entry maps
to today's letters.
"""

import json
import sys
from dataclasses import dataclass, field
from typing import NamedTuple

from .lesson_format import fingerprint, listed_options, recorded_version

LENGTH = 16  # hex characters of a listing's fingerprint: too many to craft a listing to match


def listing(nb) -> str:
    """The fingerprint of the multiple-choice options ``nb`` lists: one "letter. text" line
    per option, in order (an option's text holds no line break)."""
    return fingerprint("\n".join(f"{x}. {text}" for x, text in listed_options(nb)), LENGTH)


class Listing(NamedTuple):
    """An earlier listing of a lesson's options: the released versions that listed them
    (newest first, separated by spaces), and {exercise id: {letter then: letter now}}."""

    versions: str
    moves: dict[str, dict[str, str]]


# The right letters spread over a, b, c and d (each right three times in twelve questions),
# each question by swapping two options: {letter then: letter now}.
_SPREAD_OUT = {
    "1.1": {"b": "c", "c": "b"},
    "1.7": {"a": "b", "b": "a"},
    "2.1": {"b": "d", "d": "b"},
    "3.1": {"b": "c", "c": "b"},
    "4.1": {"b": "d", "d": "b"},
    "4.3": {"a": "b", "b": "a"},
    "6.1": {"a": "b", "b": "a"},
    "7.1": {"b": "d", "d": "b"},
}

# Keyed by the listing's fingerprint, since a copy's listing is what can be checked; its
# versions are only named in notes. lesson -> listing -> its released versions, from
# lessons/ in git (see above). The first listing of each lesson is the one from before the
# right letters were spread out; the options of 5.1, 7.3, 7.12 and 8.6 kept their letters,
# and lesson 8's listing is today's.
_RELEASED = {
    1: {
        "c2d06887d315fd91": "0858438e97ba 9c3e5c13c362 16dfb02cebd4 dd4f34af127c d22b7b0a9b62 "
        "b0f5e0d37ab9 3bbca69677f4",
        "1370efcfd04c4aa6": "333846b7b1aa ff661e42df0c",
    },
    2: {
        "2c765a6f7fe4a9c7": "99337dbbfae8 d52c684d606b d15f85fd00db",
        "6b5741f740ee6b22": "a06b1b7899e7 7605f33022e7",
    },
    3: {
        "2f9642e989f33137": "79418bfa6ebc 4e5eaa776a83 eabd0c7c56e1",
        "1cf56597cf3dd246": "6fc0ac785f4b 76fe0ecc1768",
    },
    4: {
        "e023b043a0b2417f": "a4552bd39774 7d3ad01b9e14 fa9df8ff6554 90af8da53bb2",
        "11118d547f8dae38": "e4c18d57ae28 f52bb08aed07",
    },
    5: {
        "359fa3a44029f42e": "377e8e1c7a82 cfe91517d28b 5480a5685bf1 5c0b5421078a dd468becfcb8",
    },
    6: {
        "b5ff478599e46842": "8a0ac6c4ea12 6f1f69ac6311 ebb93eee79ad",
        "c0ed3e323f6f1691": "10227ff0a31e c1e76a373d47",
    },
    7: {
        "c4fe7b0389d43468": "850ad1e44695 b2e9a97eb477 84a087e042ca a95795721374 60a4ae433d69",
        "016e3c8f1f853f89": "82f4a90c8548 4560c8c198ca 7020b45c6df2",
    },
    8: {
        "3df3d68ee7f99ba3": "34c90e840676 cd475fa2fe29 3f06e4841960 bf89634a495b e181b80ac18b",
    },
}


def _moves_of_lesson(lesson: int, moves: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    return {e: m for e, m in moves.items() if e.split(".")[0] == str(lesson)}


# lesson -> fingerprint of an earlier listing -> Listing(its versions, what moved since)
EARLIER: dict[int, dict[str, Listing]] = {
    lesson: {
        key: Listing(versions, _moves_of_lesson(lesson, _SPREAD_OUT) if i == 0 else {})
        for i, (key, versions) in enumerate(listings.items())  # the first: before the spread
    }
    for lesson, listings in _RELEASED.items()
}


@dataclass(frozen=True)
class Letters:
    """How to read the multiple-choice letters of a copy of a lesson.

    ``readable`` is False when the copy lists its options neither as today's lesson does nor
    as a recorded listing. ``moves`` gives, for each question whose options moved since, {letter
    then: letter now}. ``version`` is the version the copy's listing matches (today's, or the
    newest recorded version with that listing; None if none), ``today`` the lesson's, and
    ``claimed`` the version its metadata records, only ever reported.
    """

    readable: bool
    version: str | None
    today: str | None
    moves: dict[str, dict[str, str]] = field(default_factory=dict)
    claimed: str | None = None

    def now(self, exercise_id: str, letter: str | None) -> str | None:
        """Today's letter of the option ``letter`` named in the copy's version."""
        return self.moves.get(exercise_id, {}).get(letter, letter)


def letters(copy, today, lesson: int, record: dict | None = None) -> Letters:
    """How to read the letters of ``copy``, a notebook of ``lesson``, against ``today``'s
    lesson notebook; ``record`` is :data:`EARLIER` unless given (the tests give their own)."""
    if not isinstance(lesson, int) or isinstance(lesson, bool):
        raise TypeError(f"lesson must be an int; got {type(lesson).__name__}")
    record = EARLIER if record is None else record
    claimed, current = recorded_version(copy), recorded_version(today)
    if listed_options(copy) == listed_options(today):
        return Letters(True, current, current, {}, claimed)
    earlier = record.get(lesson, {}).get(listing(copy))
    if earlier is None:
        return Letters(False, None, current, {}, claimed)
    versions, moves = earlier
    return Letters(True, next(iter(versions.split()), None), current, moves, claimed)


def known_versions(lesson: int, record: dict | None = None) -> list[str]:
    """The earlier versions of ``lesson`` whose letters the record can read."""
    listings = (EARLIER if record is None else record).get(lesson, {}).values()
    return [version for versions, _ in listings for version in versions.split()]


def main() -> None:
    """Print the version a lesson notebook (JSON on stdin) records and its listing's
    fingerprint, for adding a released listing to the record."""
    nb = json.load(sys.stdin)
    print(recorded_version(nb), listing(nb))


if __name__ == "__main__":
    main()
