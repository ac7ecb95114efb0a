"""Hints over the whole course: from a nudge to the method, code only in the last one.

The hints of an exercise are the paragraphs of its verifier's docstring
(``course_lib/checks/lessonNN.py``), shown one at a time by ``hint(id)``. Two rules:

1. **Only the last hint may show code.** A hint shows code when it holds any of:

   - a backtick span that is an expression: it contains ``(``, ``[``, ``=``, ``@``, ``*``,
     ``+``, ``/`` or ``-`` (a plain name in backticks, such as d_model, is fine);
   - a call of a dotted name or a method, ``torch.randn(``, ``x.view(``, ``.sum(``;
   - a subscript of a name, ``x[:, 1:]``;
   - a matrix product ``a @ b`` or a power ``**``.

   Mathematics written as mathematics (``n²·d``, ``softmax([1, 0])``, ``max(0, x)``,
   ``10000^(2i/d_model)``) is not code: it names the idea, not the line to type.

2. **The first hint does not hold the answer.** It contains neither the right-hand side of an
   assignment or ``return`` in the exercise's model answer (the ``BEGIN SOLUTION`` regions
   between its heading and its check, as written in ``solutions/NN_name.py``), nor, for a
   multiple choice, the correct option's letter in parentheses.

Right-hand sides that are a plain name, a number below 10 or a number with one significant
digit (100, 0.5) are too common to count: they are the lesson's own variables and settings
(``tests/answers_unshown.py`` also compares the first hint with the answers' values).
"""

import ast
import re
from pathlib import Path

import pytest

from course_lib.checks import EXERCISES
from course_tools import sources

ROOT = Path(__file__).resolve().parent.parent
HEADING = re.compile(r"^#+ ✏️ (\d+\.\d+)\b", re.MULTILINE)

SPAN = re.compile(r"`([^`]+)`")
CODE = {  # what a hint must not show before its last paragraph
    "a backtick expression": lambda hint: [
        s for s in SPAN.findall(hint) if re.search(r"[(\[=@*+/-]", s)
    ],
    "a dotted call": lambda hint: (
        re.findall(r"\b[A-Za-z_][\w.]*\.[A-Za-z_]\w*\(", hint)
        + re.findall(r"(?<![\w.])\.[A-Za-z_]\w*\(", hint)
    ),
    "a subscript": lambda hint: re.findall(r"\b[A-Za-z_]\w*\[[^\]]*\]", hint),
    "a matrix product": lambda hint: re.findall(r"\w+ @ \w+", hint),
    "a power": lambda hint: re.findall(r"\S+ ?\*\* ?\S+", hint),
}


def shown_code(hint: str) -> dict[str, list[str]]:
    """What in ``hint`` counts as code, by kind (empty when none)."""
    return {kind: found for kind, find in CODE.items() if (found := find(hint))}


def model_answers() -> dict[str, list[str]]:
    """Each exercise's model-answer expressions: the right-hand sides of the assignments and
    returns in its solution regions, whitespace collapsed."""
    found: dict[str, list[str]] = {}
    for source in sorted((ROOT / "solutions").glob("[0-9]*.py")):
        current = None
        for cell in sources.read(source).cells:
            heading = HEADING.search(cell.source) if cell.cell_type == "markdown" else None
            current = heading[1] if heading else current
            if cell.cell_type == "code" and "BEGIN SOLUTION" in cell.source and current:
                answer = EXERCISES[current].names if current in EXERCISES else ()
                found.setdefault(current, []).extend(_right_hand_sides(cell.source, answer))
    return found


def _right_hand_sides(code: str, names: tuple[str, ...]) -> list[str]:
    """The expressions assigned or returned in the solution regions of ``code``; a number
    only where it is assigned to one of the answer's ``names`` (elsewhere it is a step)."""
    regions = re.findall(r"BEGIN SOLUTION\n(.*?)\n[ \t]*# END SOLUTION", code, re.DOTALL)
    sides = []
    for region in regions:
        region = _dedented(region)
        try:
            tree = ast.parse(region)
        except SyntaxError:  # a region inside a larger statement: skipped
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Return):
                continue
            targets = getattr(node, "targets", [getattr(node, "target", None)])
            named = {t.id for t in targets if isinstance(t, ast.Name)} & set(names)
            value = node.value
            if value is None or _trivial(value):
                continue
            if isinstance(value, ast.Constant) and not named:
                continue
            sides.append(" ".join(ast.get_source_segment(region, value).split()))
    return sides


def _dedented(region: str) -> str:
    lines = region.splitlines()
    indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return "\n".join(x[indent:] for x in lines)


def _trivial(node: ast.expr) -> bool:
    """A plain name, a number below 10 or one with a single significant digit (100, 0.5): the
    lesson's own variables and settings, which the question itself states."""
    if isinstance(node, ast.Name):
        return True
    number = node.value if isinstance(node, ast.Constant) else None
    if not isinstance(number, int | float):
        return False
    mantissa = f"{abs(number):.6e}".split("e")[0].rstrip("0").rstrip(".")  # 1.000000e+02 -> 1
    return abs(number) < 10 or len(mantissa.replace(".", "")) <= 1


ANSWERS = model_answers()


def _collapsed(text: str) -> str:
    """Spaces collapsed, and around operators removed, so `Q @ K.T` matches `Q@K.T`."""
    return re.sub(r"\s*([@*+/=,()\[\]-])\s*", r"\1", " ".join(text.split()))


@pytest.mark.parametrize("exercise", list(EXERCISES.values()), ids=lambda e: e.id)
def test_only_the_last_hint_shows_code(exercise):
    early = {
        f"hint {n} of {len(exercise.hints)}": found
        for n, hint in enumerate(exercise.hints[:-1], start=1)
        if (found := shown_code(hint))
    }
    assert not early, f"{exercise.id}: code before the last hint: {early}"


@pytest.mark.parametrize("exercise", list(EXERCISES.values()), ids=lambda e: e.id)
def test_the_first_hint_does_not_hold_the_answer(exercise):
    first = _collapsed(exercise.hints[0])
    if exercise.kind == "choice":
        right = next(letter for letter in "abcdefgh" if exercise.run(letter).passed)
        assert f"({right})" not in first, f"{exercise.id}: the first hint names ({right})"
        return
    held = [a for a in ANSWERS.get(exercise.id, []) if _collapsed(a) in first]
    assert not held, f"{exercise.id}: the first hint holds the model answer {held}"


def test_the_rules_recognise_code_and_leave_mathematics_alone():
    assert shown_code("One line: Q @ K.T.")
    assert shown_code("compare predicted[:, 1:] with target[:, 1:]")
    assert shown_code("Draw q and k as torch.randn(n, d_k) each")
    assert shown_code("then .var() of it")
    assert shown_code("d_model ** -0.5 * min(step ** -0.5, step)")
    assert shown_code("use `x.view(B, T, H, Dk)`")
    for mathematics in (
        "n²·d = n·d²: divide both sides by n·d.",
        "softmax([0.7071, 0]) = [e^0.7071, 1] / (e^0.7071 + 1).",
        "ReLU is max(0, x) for each entry, with `d_model` and `softmax` named.",
        "Pair 64's divisor is 10000^(128/512) = 10.",
        "e.g. (a) the first",
    ):
        assert not shown_code(mathematics), mathematics


def test_every_code_exercise_has_a_model_answer_to_compare_with():
    """The first-hint rule has something to compare: the sources' regions were found."""
    code = [e.id for e in EXERCISES.values() if e.kind == "code"]
    missing = [i for i in code if i not in ANSWERS]
    assert len(missing) <= len(code) // 4, missing
