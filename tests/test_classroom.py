"""Tests of ``course_tools.classroom``: the nbgrader course and the otter-assign notebooks.

These tests read what the builds write, without nbgrader or otter-grader; ``tests/graders``
runs the real tools on them (``make test-graders``).
"""

import ast
import asyncio
import os
import re
import sys
import types
from pathlib import Path

import nbformat
import pytest

from course_lib.checks import EXERCISES, check
from course_lib.lesson_format import ANSWER_PROMPT, STUB_COMMENT
from course_lib.replay import GRADING
from course_tools.classroom import nbgrader_course, otter_assignments
from course_tools.classroom.__main__ import main
from course_tools.classroom.parts import ANSWER, CHECK, checked_exercise, parts, require_call
from course_tools.grading.grader import POINTS, load_points

SOLUTIONS = sorted(Path("solutions").glob("[0-9][0-9]_*.ipynb"))
LESSON3 = Path("solutions/03_scaled_dot_product_attention.ipynb")
POINTS_TABLE = load_points(POINTS)


def _by_id(path: Path) -> dict:
    return {c.id: c for c in nbformat.read(path, as_version=4).cells}


# The parts of a lesson --------------------------------------------------------------------


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.name[:2])
def test_every_exercise_has_its_answers_then_one_check_cell(solution):
    found = parts(solution)
    lesson = str(int(solution.name[:2]))
    assert [p.exercise for p in found if p.role == CHECK] == [
        e for e in EXERCISES if e.split(".")[0] == lesson
    ]
    for before, after in zip(found, found[1:], strict=False):
        if before.role == ANSWER:  # an answer is followed by its check, or another answer
            assert after.role in (ANSWER, CHECK) and after.exercise == before.exercise
    keys = [p.key for p in found]
    assert len(set(keys)) == len(keys) and all(re.fullmatch(r"[\w-]+", k) for k in keys)


def test_a_lesson_whose_answer_has_no_check_cell_is_refused(tmp_path):
    nb = nbformat.read(LESSON3, as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if checked_exercise(c) == "3.2")
    del nb.cells[at]
    nbformat.write(nb, tmp_path / LESSON3.name)
    with pytest.raises(ValueError, match="has no check cell after it"):
        parts(tmp_path / LESSON3.name)


def test_the_raising_call_is_the_check_cells_call_renamed():
    cell = '# the check\ncheck("3.2",  apply_weights, apply_output)  # two answers'
    assert require_call(cell) == 'require("3.2",  apply_weights, apply_output)'


@pytest.mark.parametrize(
    "source, expected",
    [
        ('check("3.2", apply_weights, apply_output)', "3.2"),
        ('# the check\ncheck("3.2", apply_weights, apply_output)', "3.2"),
        ("check('3.4', attention)", "3.4"),
        ('check("3.99", x)', None),  # no such exercise
        ('x = 1\ncheck("3.2", a, b)', None),  # more than the check
        ('hint("3.2")', None),
        ("check(", None),
    ],
)
def test_a_check_cell_is_one_check_call_of_a_known_exercise(source, expected):
    assert checked_exercise(nbformat.v4.new_code_cell(source)) == expected


# nbgrader ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nbgrader_lesson3():
    return nbgrader_course.source_notebook(LESSON3, POINTS_TABLE)


def _nbgrader_cells(nb, **wanted) -> list:
    marked = [c for c in nb.cells if "nbgrader" in c.metadata]
    return [c for c in marked if all(c.metadata.nbgrader.get(k) == v for k, v in wanted.items())]


def test_nbgrader_test_cells_are_the_checks_and_raise_only_when_autograded(nbgrader_lesson3):
    tests = _nbgrader_cells(nbgrader_lesson3, grade=True, solution=False)
    assert [c.metadata.nbgrader["grade_id"] for c in tests] == [f"ex3_{k}" for k in range(1, 9)]
    for cell in tests:
        exercise = cell.metadata.nbgrader["grade_id"][2:].replace("_", ".")
        meta = cell.metadata.nbgrader
        assert meta["locked"] and meta["points"] == POINTS_TABLE[exercise]
        assert checked_exercise(cell) == exercise and "HIDDEN" not in cell.source
        graded, _ = nbgrader_course.RequireChecks().preprocess_cell(cell.copy(), {}, 0)
        names = ", ".join(EXERCISES[exercise].names)
        assert graded.source == (
            f'from course_lib.checks import require\n\nrequire("{exercise}", {names})'
        )
    answer = _nbgrader_cells(nbgrader_lesson3, solution=True)[0]
    untouched, _ = nbgrader_course.RequireChecks().preprocess_cell(answer.copy(), {}, 0)
    assert untouched.source == answer.source


def test_nbgrader_answers_keep_their_regions_after_the_lessons_names(nbgrader_lesson3):
    cells = _nbgrader_cells(nbgrader_lesson3, solution=True)
    answers = {c.metadata.nbgrader["grade_id"]: c for c in cells}
    assert answers["ex3_2-answer"].source.splitlines()[3:6] == [
        "apply_weights = None",
        "apply_output = None",
        "# BEGIN SOLUTION",
    ]
    assert not answers["ex3_2-answer"].metadata.nbgrader["grade"]
    function = answers["ex3_4-answer"].source
    assert "    # BEGIN SOLUTION" in function and "= None" not in function
    written = answers["written1"]
    assert written.cell_type == "markdown" and written.metadata.nbgrader["grade"]
    assert written.metadata.nbgrader["points"] == POINTS_TABLE["written"]


def test_nbgrader_locks_markdown_and_leaves_other_code_editable(nbgrader_lesson3):
    for cell in nbgrader_lesson3.cells:
        meta = cell.metadata.get("nbgrader")
        if cell.cell_type == "markdown" and "free-text" not in cell.metadata.get("tags", []):
            assert meta["locked"] and not meta["grade"] and not meta["solution"]
        elif cell.cell_type == "code" and meta is None:
            assert "BEGIN SOLUTION" not in cell.source and checked_exercise(cell) is None
    assert not any(c.get("outputs") for c in nbgrader_lesson3.cells)
    assert set(nbgrader_lesson3.metadata) == {"kernelspec", "language_info"}  # no widgets


def _nbgrader_release(cell) -> str:
    """What nbgrader's ClearSolutions makes of a cell with the course's configuration."""
    lines, inside = [], False
    for line in cell.source.splitlines():
        if "BEGIN SOLUTION" in line:
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(indent + (STUB_COMMENT if cell.cell_type == "code" else ANSWER_PROMPT))
        elif "END SOLUTION" in line:
            inside = False
        elif not inside:
            lines.append(line)
    return "\n".join(lines)


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.name[:2])
def test_nbgrader_releases_compile_and_their_functions_are_not_done(solution):
    nb = nbgrader_course.source_notebook(solution, POINTS_TABLE)
    released = {}  # the functions the released answer cells define
    for cell in _nbgrader_cells(nb, solution=True):
        if cell.cell_type == "code":
            tree = ast.parse(_nbgrader_release(cell))
            defs = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
            exec(compile(ast.Module(defs, []), "released", "exec"), released)
    lesson = solution.name[:2].lstrip("0")
    for e in (e for e in EXERCISES.values() if e.id.split(".")[0] == lesson):
        if all(callable(released.get(name)) for name in e.names):
            assert check(e.id, *[released[n] for n in e.names]).status == "not done", e.id


def test_a_function_region_without_a_docstring_is_refused(tmp_path):
    nb = nbformat.read(LESSON3, as_version=4)
    cell = next(c for c in nb.cells if c.source.startswith("def attention("))
    cell.source = re.sub(r'\n    """.*?"""', "", cell.source, count=1, flags=re.S)
    nbformat.write(nb, tmp_path / LESSON3.name)
    with pytest.raises(ValueError, match="a block must keep a statement outside its region"):
        nbgrader_course.source_notebook(tmp_path / LESSON3.name, POINTS_TABLE)


class _Config(dict):
    """Enough of traitlets' config object to run nbgrader_config.py: ``c.A.b = value``."""

    def __getattr__(self, name):
        return self.setdefault(name, _Config())

    def __setattr__(self, name, value):
        self[name] = value


def _run_config(text: str, path: str) -> _Config:
    found = {}
    code = text.replace("get_config()", "loaded")
    exec(code, {"loaded": _Config(), "__file__": path}, found)
    return found["c"]


class _Execute:
    async def async_start_new_kernel(self, **kwargs):
        return kwargs


class _Autograde:  # nbgrader's, as far as the configuration reads it
    @staticmethod
    def class_traits():
        default = [_Execute, "SaveAutoGrades"]
        return {"autograde_preprocessors": types.SimpleNamespace(default=lambda: default)}


def test_the_nbgrader_config_sets_the_course_its_stubs_and_lesson_7s_cell_limit(monkeypatch):
    converters = types.ModuleType("nbgrader.converters")
    converters.Autograde = _Autograde
    preprocessors = types.ModuleType("nbgrader.preprocessors")
    preprocessors.Execute = _Execute
    monkeypatch.setitem(sys.modules, "nbgrader", types.ModuleType("nbgrader"))
    monkeypatch.setitem(sys.modules, "nbgrader.converters", converters)
    monkeypatch.setitem(sys.modules, "nbgrader.preprocessors", preprocessors)
    monkeypatch.setattr(os, "environ", dict(os.environ))  # the configuration sets variables
    c = _run_config(nbgrader_course.config("ml-101"), "/srv/course/nbgrader_config.py")
    first, execute, last = c.Autograde.autograde_preprocessors
    assert (first, last) == (nbgrader_course.RequireChecks, "SaveAutoGrades")
    # autograde's kernels, and only they, know they run under a grader
    assert issubclass(execute, _Execute) and GRADING not in os.environ
    assert asyncio.run(execute().async_start_new_kernel(cwd="x"))["env"][GRADING] == "1"
    assert c.Exchange.root == "/srv/course/exchange"  # not a system-wide folder
    assert os.environ["OMP_NUM_THREADS"] == "1"
    assert c.CourseDirectory.course_id == "ml-101"
    assert c.CourseDirectory.root == "/srv/course"  # wherever the file is, not the cwd
    folders = ("source", "release", "submitted", "autograded", "feedback")
    assert [c.CourseDirectory[f"{f}_directory"] for f in folders] == list(folders)
    assert c.ClearSolutions.code_stub == {"python": STUB_COMMENT}
    assert c.ClearSolutions.text_stub == ANSWER_PROMPT
    assert c.OverwriteCells.add_missing_cells is True
    assert c.Execute.timeout == nbgrader_course.CELL_TIMEOUT >= 300
    assert 'course_id = "attention-course"' in nbgrader_course.config()


@pytest.mark.parametrize("course_id", ["", "my course", 'x"; import os', "-x"])
def test_a_course_id_nbgrader_could_not_use_is_refused_by_name(course_id):
    with pytest.raises(ValueError, match="course_id should be letters, digits"):
        nbgrader_course.config(course_id)


# otter-grader ------------------------------------------------------------------------------


def _student_view(source: str) -> str:
    """What otter assign leaves of an answer cell (its rules: otter/assign/solutions.py)."""
    lines, inside = [], False
    for line in source.splitlines():
        if line.rstrip().endswith(("# BEGIN PROMPT", "# END PROMPT")):
            continue
        if re.match(r"\s*# BEGIN SOLUTION NO PROMPT", line):
            inside = True
        elif line.rstrip().endswith("# END SOLUTION"):
            inside = False
        elif not inside:
            lines.append(line)
    return "\n".join(lines)


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.name[:2])
def test_otter_students_get_the_lessons_stubs_and_the_solution_runs_as_written(solution):
    nb = otter_assignments.assignment_notebook(solution, POINTS_TABLE, "course.whl")
    lesson = _by_id(Path("lessons") / solution.name)
    solved = _by_id(solution)
    answers = [c for c in nb.cells if c.cell_type == "code" and "# BEGIN PROMPT" in c.source]
    assert {c.id for c in answers} == {i for i, c in solved.items() if "BEGIN SOLUTION" in c.source
                                       and c.cell_type == "code"}  # fmt: skip
    for cell in answers:
        assert _student_view(cell.source) == lesson[cell.id].source
        ast.parse(cell.source)  # the prompt is a string: the solution runs as in solutions/


def test_otter_questions_carry_points_tests_and_the_check_cell():
    nb = otter_assignments.assignment_notebook(LESSON3, POINTS_TABLE, "course.whl")
    raw = [c.source for c in nb.cells if c.cell_type == "raw"]
    assert raw[0].startswith("# ASSIGNMENT CONFIG\nname: 03_scaled_dot_product_attention\n")
    assert "  - wheels/course.whl" in raw[0] and "export_cell: false" in raw[0]
    assert "# BEGIN QUESTION\nname: ex3_4\npoints: 2\ncheck_cell: false" in raw
    assert "# BEGIN QUESTION\nname: written1\nmanual: true\npoints: 1" in raw
    sources = [c.source for c in nb.cells]
    test = sources.index("# BEGIN TESTS") + 1
    assert sources[test] == 'from course_lib.checks import require\n\nrequire("3.1", answer_3_1)'
    assert sources[test + 3] == 'check("3.1", answer_3_1)'  # after END TESTS, END QUESTION
    assert ANSWER_PROMPT in sources[sources.index("# BEGIN PROMPT") + 1]
    model = sources[sources.index("# BEGIN SOLUTION", sources.index("# BEGIN PROMPT")) + 1]
    assert model.startswith("*Model answer.*") and "BEGIN SOLUTION" not in model


def test_otter_autograder_installs_cpu_torch_at_the_courses_pin_and_its_wheel():
    text = otter_assignments.requirements("course.whl")
    pin = re.search(r"^torch==(\S+)", Path("requirements.txt").read_text(), re.M)[1]
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines == [
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        f"torch=={pin}+cpu",
        "/autograder/source/files/wheels/course.whl",
    ]


# The command ------------------------------------------------------------------------------


def test_the_command_builds_chosen_lessons_and_refuses_unknown_ones(tmp_path, capsys):
    assert main(["nbgrader", "--out", str(tmp_path / "nbg"), "--lessons", "3", "08"]) == 0
    found = sorted(p.relative_to(tmp_path / "nbg") for p in (tmp_path / "nbg").rglob("*.*"))
    assert [str(p) for p in found] == [
        "nbgrader_config.py",
        "source/lesson03/03_scaled_dot_product_attention.ipynb",
        "source/lesson08/08_project_numpy_encoder.ipynb",
    ]
    assert 'course_id = "attention-course"' in (tmp_path / "nbg/nbgrader_config.py").read_text()
    capsys.readouterr()
    refused = {
        "no solution notebooks for lessons [42]": ["--lessons", "42"],
        "--lessons: invalid int value: 'three'": ["--lessons", "three"],
        "points.toml": ["--points", str(tmp_path / "points.toml")],  # no such file
        "course_id should be letters": ["--course-id", "my course"],
    }
    for message, options in refused.items():
        with pytest.raises(SystemExit):
            main(["nbgrader", "--out", str(tmp_path / "again"), *options])
        assert message in capsys.readouterr().err


def test_a_rebuild_replaces_source_and_keeps_the_gradebook_and_students_work(tmp_path):
    course = tmp_path / "course"
    (course / "submitted" / "ada" / "lesson03").mkdir(parents=True)
    (course / "gradebook.db").write_text("grades", encoding="utf-8")
    (course / "source" / "lesson42").mkdir(parents=True)  # a lesson since removed
    nbgrader_course.build(course, [LESSON3], POINTS_TABLE)
    assert (course / "gradebook.db").read_text(encoding="utf-8") == "grades"
    assert (course / "submitted" / "ada" / "lesson03").is_dir()
    assert sorted(p.name for p in (course / "source").iterdir()) == ["lesson03"]
