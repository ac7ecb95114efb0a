"""Where the options of the multiple choices stood in the lessons' earlier versions.

An answer to a multiple choice is a letter, and a letter means the option listed under it in
the version of the lesson the learner worked in (``course_lib.lesson_format``: every lesson
records its version). When options are reordered, an answer made from an earlier version
names its option by its old letter. This record says, for every version released before a
reordering, which letter each moved option has today, so that the grader
(``course_tools.grading``) and ``make update`` (:mod:`course_lib.workspace`) read an old
letter as the option it named then.

How a copy's letters are read (:func:`letters`): as today's if it records today's version or
lists the same options, in the same order, as today's lesson; through this record if it
records a version listed here; otherwise they cannot be read, and the tools say so.

Reordering options again means: add the released versions before it (``git log lessons/``:
each commit's ``metadata.course.version``) with the new moves, and compose the moves of the
versions already listed with the new ones, since every entry maps to today's letters.
"""

from dataclasses import dataclass, field

from .lesson_format import listed_options, recorded_version

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

# Every version of lessons 1 to 8 released before that, as lessons/ recorded them; the options
# of 5.1, 7.3, 7.12 and 8.6 kept their letters.
_BEFORE_SPREAD_OUT = {
    1: "0858438e97ba 9c3e5c13c362 16dfb02cebd4 dd4f34af127c d22b7b0a9b62 b0f5e0d37ab9 3bbca69677f4",
    2: "99337dbbfae8 d52c684d606b d15f85fd00db",
    3: "79418bfa6ebc 4e5eaa776a83 eabd0c7c56e1",
    4: "a4552bd39774 7d3ad01b9e14 fa9df8ff6554 90af8da53bb2",
    5: "5480a5685bf1 5c0b5421078a dd468becfcb8",
    6: "8a0ac6c4ea12 6f1f69ac6311 ebb93eee79ad",
    7: "850ad1e44695 b2e9a97eb477 84a087e042ca a95795721374 60a4ae433d69",
    8: "cd475fa2fe29 3f06e4841960 bf89634a495b e181b80ac18b",
}


def _moves_of_lesson(lesson: int, moves: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    return {e: m for e, m in moves.items() if e.split(".")[0] == str(lesson)}


# The versions released after that, with today's letters: the options were reworded since, so
# such a copy lists other texts than today's lesson, but no option moved.
_SINCE_SPREAD_OUT = {
    1: "ff661e42df0c 333846b7b1aa",
    2: "7605f33022e7 a06b1b7899e7",
    3: "76fe0ecc1768 6fc0ac785f4b",
    4: "f52bb08aed07 e4c18d57ae28",
    5: "cfe91517d28b 377e8e1c7a82",
    6: "c1e76a373d47 10227ff0a31e",
    7: "7020b45c6df2 4560c8c198ca 82f4a90c8548",
    8: "34c90e840676",
}

# lesson -> released version -> {exercise id: {letter then: letter now}} (only what moved)
EARLIER: dict[int, dict[str, dict[str, dict[str, str]]]] = {
    lesson: dict.fromkeys(_BEFORE_SPREAD_OUT[lesson].split(), _moves_of_lesson(lesson, _SPREAD_OUT))
    | dict.fromkeys(_SINCE_SPREAD_OUT[lesson].split(), {})
    for lesson in _BEFORE_SPREAD_OUT
}


@dataclass(frozen=True)
class Letters:
    """How to read the multiple-choice letters of a copy of a lesson.

    ``readable`` is False when the copy records a version this record does not know (or none)
    and does not list today's options in today's order. ``moves`` gives, for each question
    whose options moved since the copy's version, {letter then: letter now}. ``version`` is
    the version the copy records (None if none), ``today`` the lesson's.
    """

    readable: bool
    version: str | None
    today: str | None
    moves: dict[str, dict[str, str]] = field(default_factory=dict)

    def now(self, exercise_id: str, letter: str | None) -> str | None:
        """Today's letter of the option ``letter`` named in the copy's version."""
        return self.moves.get(exercise_id, {}).get(letter, letter)


def letters(copy, today, lesson: int, record: dict | None = None) -> Letters:
    """How to read the letters of ``copy``, a notebook of ``lesson``, against ``today``'s
    lesson notebook; ``record`` is :data:`EARLIER` unless given (the tests give their own)."""
    if not isinstance(lesson, int) or isinstance(lesson, bool):
        raise TypeError(f"lesson must be an int; got {type(lesson).__name__}")
    record = EARLIER if record is None else record
    version, current = recorded_version(copy), recorded_version(today)
    if version is not None and version == current:
        return Letters(True, version, current)
    moved = record.get(lesson, {}).get(version)
    if moved is not None:
        return Letters(True, version, current, moved)
    same = listed_options(copy) == listed_options(today)
    return Letters(same, version, current)


def known_versions(lesson: int, record: dict | None = None) -> list[str]:
    """The earlier versions of ``lesson`` whose letters the record can read."""
    return list((EARLIER if record is None else record).get(lesson, {}))
