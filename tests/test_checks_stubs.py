"""Every exercise as its lesson hands it out is "not done": the answer cells of ``lessons/``.

Each answer cell runs after its lesson's imports, then the arguments of the check cell below it
go to the check, as when a learner runs the two cells untouched. So an exercise's stub needs
no test of its own: a new exercise is tested here as soon as its lesson is built.
"""

import ast
import json
from pathlib import Path

import pytest

from course_lib.checks import EXERCISES, NOT_DONE, check

LESSONS = Path(__file__).resolve().parents[1] / "lessons"


def _imports(source: str) -> list[str]:
    """The import statements of a code cell (none from a cell with IPython syntax)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:  # %magic or !command
        return []
    return [ast.unparse(node) for node in body if isinstance(node, (ast.Import, ast.ImportFrom))]


def _check_call(source: str) -> ast.Call:
    """The ``check(...)`` call of a check cell."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "check":
            return node
    raise ValueError(f"no check(...) in {source!r}")


def lesson_stubs():
    """A pytest.param(imports, answer cell, check call) for every exercise of lessons/."""
    stubs = []
    for path in sorted(LESSONS.glob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        cells = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
        imports = []
        for i, source in enumerate(cells):
            imports += _imports(source)
            if "# YOUR CODE HERE" in source:
                call = _check_call(next(c for c in cells[i + 1 :] if "check(" in c))
                exercise_id = call.args[0].value
                stubs.append(pytest.param("\n".join(imports), source, call, id=exercise_id))
    return stubs


STUBS = lesson_stubs()


def test_every_exercise_has_one_answer_cell_in_its_lesson():
    ids = [stub.id for stub in STUBS]
    assert sorted(ids) == sorted(EXERCISES), "an exercise without an answer cell, or with two"


@pytest.mark.parametrize("imports, cell, call", STUBS)
def test_the_lessons_stub_is_not_done(imports, cell, call):
    namespace = {}
    exec(imports, namespace)
    exec(compile(cell, "<answer cell>", "exec"), namespace)
    exercise_id, *answers = (eval(ast.unparse(arg), namespace) for arg in call.args)
    result = check(exercise_id, *answers)
    assert result.status == NOT_DONE, result.message
    assert "# YOUR CODE HERE" in result.message
    unset = [n for n, a in zip(EXERCISES[exercise_id].names, answers, strict=True) if a is None]
    assert all(f"`{name}`" in result.message for name in unset), result.message
