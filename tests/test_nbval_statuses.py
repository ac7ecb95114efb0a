"""The root conftest makes nbval fail a notebook whose checks report the wrong status."""

from pathlib import Path

import nbformat

pytest_plugins = ["pytester"]

ROOT_CONFTEST = Path(__file__).resolve().parent.parent / "conftest.py"


def tiny_notebook(folder: Path, *answers: str) -> None:
    """A notebook with one check("3.1", answer) cell per answer (the right answer is "c")."""
    folder.mkdir()
    cells = [nbformat.v4.new_code_cell("from course_lib.checks import check")]
    cells += [nbformat.v4.new_code_cell(f'check("3.1", {a})') for a in answers]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / "tiny.ipynb")


def test_check_statuses_are_enforced(pytester):
    pytester.makeconftest(ROOT_CONFTEST.read_text())
    tiny_notebook(pytester.path / "lessons", "None", '"c"')  # a check that passes in a lesson
    tiny_notebook(pytester.path / "solutions", '"c"', '"b"')  # a model answer that fails
    result = pytester.runpytest_subprocess("--nbval-lax", "--nbval-current-env")
    result.assert_outcomes(passed=4, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ lessons/tiny.ipynb::Cell 2 _*",
            "check('3.1') reported 'passed'; in lessons/ every check must report 'not done'",
            "*_ solutions/tiny.ipynb::Cell 2 _*",
            "check('3.1') reported 'failed'; in solutions/ every check must report 'passed'",
        ]
    )
