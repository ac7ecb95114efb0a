"""Each exercise's prompt ends with what its answer may use, written from the declaration.

An exercise declares its rules in ``course_lib.checks`` (``Rules``: course_lib names allowed,
library functions ruled out, loops or not); the check and the grader enforce them. The
learner reads them in the prompt, the markdown cell titled ``### ✏️ N.k ...``, whose last
paragraph is ``Rules.describe()``. ``python -m course_tools.authoring rules`` writes that
paragraph into the sources; ``authoring check`` (and the test suite) report a prompt that
says something else.
"""

import re
from pathlib import Path

from course_lib.checks import EXERCISES

from . import sources

LEAD = "*What you may use:*"


def _prompt_cells(nb) -> dict[str, object]:
    """Each code exercise's prompt cell, by exercise id."""
    found = {}
    for cell in nb.cells:
        titles = re.findall(r"^#+ ✏️ (\d+\.\d+)\b", cell.source, re.M)
        if cell.cell_type == "markdown" and len(titles) == 1:  # a section may open the cell
            exercise = EXERCISES.get(titles[0])
            if exercise is not None and exercise.kind == "code":
                found[exercise.id] = cell
    return found


def _with_rules(text: str, sentence: str) -> str:
    """The prompt with its rules paragraph replaced by ``sentence``, or added at the end."""
    kept = [p for p in text.rstrip().split("\n\n") if not p.startswith(LEAD)]
    return "\n\n".join([*kept, sentence])


def drift(source: Path) -> list[str]:
    """Prompts in a lesson source whose rules paragraph is not their exercise's."""
    problems = []
    for exercise_id, cell in _prompt_cells(sources.read(source)).items():
        sentence = EXERCISES[exercise_id].rules.describe()
        if _with_rules(cell.source, sentence) != cell.source.rstrip():
            problems.append(f"{source}: the prompt of {exercise_id} should end with: {sentence}")
    return problems


def write(source: Path) -> bool:
    """Write each exercise's rules paragraph into its prompt; True if the source changed."""
    nb = sources.read(source)
    for exercise_id, cell in _prompt_cells(nb).items():
        cell.source = _with_rules(cell.source, EXERCISES[exercise_id].rules.describe())
    text = sources.to_text(nb)
    if text == source.read_text(encoding="utf-8"):
        return False
    source.write_text(text, encoding="utf-8")
    return True
