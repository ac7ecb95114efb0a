"""The reviewed exceptions: accepted variants that no sensible check could tell from a right answer.

``allowed.toml`` beside this module holds one table per entry::

    [[allowed]]
    exercise = "7.10"
    variant = "keyword: library_encoder = nn.TransformerEncoder(...) → ..."
    reason = "enable_nested_tensor only picks a faster kernel; the outputs are the same"

An entry names a variant by its stable id (see :mod:`.mutants`), so it survives edits
elsewhere in the lesson. An entry that no longer matches any variant of its exercise is
*stale* and fails the run, so that the list never silently outlives the code it excused.
"""

import tomllib
from dataclasses import dataclass
from pathlib import Path

from course_lib.checks import EXERCISES

DEFAULT = Path(__file__).with_name("allowed.toml")


@dataclass(frozen=True)
class Entry:
    exercise: str
    variant: str
    reason: str


def read(path: Path) -> list[Entry]:
    """The entries of an allow-list file; a ValueError names a malformed one."""
    if not path.exists():
        return []
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    entries = []
    for number, item in enumerate(data.get("allowed", []), 1):
        fields = {k: item.get(k) for k in ("exercise", "variant", "reason")}
        if not all(isinstance(v, str) and v.strip() for v in fields.values()):
            raise ValueError(
                f"{path}: entry {number} needs exercise, variant and reason (non-empty strings)"
            )
        entries.append(Entry(**fields))
    return entries


def keys(entries: list[Entry]) -> set[tuple[str, str]]:
    return {(e.exercise, e.variant) for e in entries}


def stale(entries: list[Entry], generated: dict[str, set[str]]) -> list[Entry]:
    """Entries that match no variant: of an exercise this run covered (``generated`` holds
    every variant id of each such exercise, sampled or not), or of no exercise at all."""
    return [
        e
        for e in entries
        if e.exercise not in EXERCISES
        or (e.exercise in generated and e.variant not in generated[e.exercise])
    ]
