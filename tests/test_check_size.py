"""The checks stay readable in one sitting: no module of ``course_lib/checks`` over 700 lines
and no function over 60 (docs/maintaining.md, "Writing a check")."""

import ast
from pathlib import Path

import pytest

CHECKS = Path(__file__).resolve().parent.parent / "course_lib" / "checks"
MODULES = sorted(CHECKS.glob("*.py"))
MODULE_LINES, FUNCTION_LINES = 700, 60


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def _long_functions(path: Path) -> list[str]:
    """``name (n lines)`` for each function longer than the limit, from ``def`` to its end."""
    tree = ast.parse(path.read_text())
    functions = (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    spans = ((f.name, f.end_lineno - f.lineno + 1) for f in functions)
    return [f"{name} ({n} lines)" for name, n in spans if n > FUNCTION_LINES]


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_module_is_short(path):
    assert _lines(path) <= MODULE_LINES, f"{path.name} has {_lines(path)} lines"


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_functions_are_short(path):
    assert not _long_functions(path), f"{path.name}: {', '.join(_long_functions(path))}"


def test_the_limits_are_measured(tmp_path):
    """The measure itself: a function of 61 lines is caught, one of 60 is not."""
    body = "\n".join(f"    x{i} = {i}" for i in range(59))
    probe = tmp_path / "probe.py"
    probe.write_text(f"def f():\n{body}\n")
    assert _long_functions(probe) == []
    probe.write_text(f"def f():\n{body}\n    x = 0\n")
    assert _long_functions(probe) == ["f (61 lines)"]
