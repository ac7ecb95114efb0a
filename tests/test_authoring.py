"""Lessons are generated from solutions: the stubs, the cleaning, and that lessons/ is in sync."""

import json
import re
from pathlib import Path

import nbformat
import pytest

from course_lib import checks
from course_lib.lesson_format import is_exercise
from course_tools import setup_cell
from course_tools.authoring import (
    ANSWER_PROMPT,
    build_lessons,
    fingerprint,
    lesson_version,
    make_lesson,
    model_answers_text,
    stale_lessons,
    stale_model_answers,
    write_model_answers,
    written_questions,
)

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


def notebook(*cells):
    """Cells given as ("code" | "md", source[, tags])."""
    made = []
    for kind, source, *tags in cells:
        new = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
        made.append(new(source, metadata={"tags": tags[0]} if tags else {}))
    return nbformat.v4.new_notebook(cells=made)


def sources(nb):
    return [c.source for c in nb.cells]


def test_a_function_body_becomes_a_stub_that_raises_not_implemented():
    nb = notebook(
        (
            "code",
            "def f(x):\n    '''Doc.'''\n    # BEGIN SOLUTION\n    return x + 1\n    # END SOLUTION",
        ),
    )
    stub = sources(make_lesson(nb))[0]
    assert (
        stub == "def f(x):\n    '''Doc.'''\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    )
    namespace = {}
    exec(stub, namespace)
    with pytest.raises(NotImplementedError):
        namespace["f"](1)


def test_a_top_level_region_keeps_only_the_names_later_cells_read():
    nb = notebook(
        ("code", "# BEGIN SOLUTION\ntmp = 2\nanswer = tmp * 3\nrows = 1\n# END SOLUTION"),
        ("code", "rows = [1, 2]\nprint(rows)"),  # binds rows before reading it
        ("code", "check('1.1', answer)"),
    )
    assert sources(make_lesson(nb))[0] == "# YOUR CODE HERE\nanswer = None"


def test_a_name_read_inside_a_later_function_counts_as_read():
    nb = notebook(
        ("code", "# BEGIN SOLUTION\nscale = 2.0\n# END SOLUTION"),
        ("code", "def g(x):\n    return x * scale"),
    )
    assert sources(make_lesson(nb))[0] == "# YOUR CODE HERE\nscale = None"


def test_code_around_a_region_is_kept():
    nb = notebook(("code", "x = 1\n# BEGIN SOLUTION\ny = x\n# END SOLUTION\nprint(y)"))
    assert sources(make_lesson(nb))[0] == "x = 1\n# YOUR CODE HERE\ny = None\nprint(y)"


def test_markdown_answers_are_replaced_and_solution_only_cells_dropped():
    nb = notebook(
        ("md", "Why?\n\n<!-- BEGIN SOLUTION -->\nBecause.\n<!-- END SOLUTION -->"),
        ("code", "print('instructor only')", ["solution-only"]),
        ("code", "print('kept')", ["nbval-ignore-output"]),
    )
    lesson = make_lesson(nb)
    assert sources(lesson) == [f"Why?\n\n{ANSWER_PROMPT}", "print('kept')"]
    assert lesson.cells[1].metadata == {"tags": ["nbval-ignore-output"]}


def test_outputs_counts_and_run_metadata_are_dropped():
    nb = notebook(("code", "1 + 1"))
    nb.cells[0].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"})]
    nb.cells[0].execution_count = 7
    nb.cells[0].metadata["execution"] = {"iopub.status.busy": "2026-01-01"}
    nb.metadata["widgets"] = {"state": {}}
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.7"}
    lesson = make_lesson(nb)
    cell = lesson.cells[0]
    assert cell.outputs == [] and cell.execution_count is None and cell.metadata == {}
    assert "widgets" not in lesson.metadata
    assert lesson.metadata["language_info"] == {"name": "python"}
    assert nb.cells[0].outputs, "the solution notebook itself is left unchanged"


def test_a_lesson_records_its_number_version_and_blank_exercises():
    nb = notebook(
        ("md", "Replace `# YOUR CODE HERE` with your code."),  # mentions the marker: no exercise
        ("code", "# BEGIN SOLUTION\na = 1\n# END SOLUTION"),
        ("md", "Why?\n\n<!-- BEGIN SOLUTION -->\nBecause.\n<!-- END SOLUTION -->"),
        ("code", "print(a)"),
    )
    lesson = make_lesson(nb, "05_demo.ipynb")
    exercises = {c.id: fingerprint(c.source) for c in lesson.cells[1:3]}
    assert lesson.metadata["course"] == {
        "lesson": "05",
        "version": lesson_version(lesson),
        "exercises": exercises,
    }
    assert make_lesson(nb, "05_demo.ipynb").metadata == lesson.metadata, "deterministic"
    nb.cells[3].source = "print(a, a)"
    assert make_lesson(nb, "05_demo.ipynb").metadata["course"]["version"] != lesson_version(lesson)


@pytest.mark.parametrize(
    "source, problem",
    [
        ("# BEGIN SOLUTION\nx = 1", "without a matching"),
        ("x = 1\n# END SOLUTION", "unbalanced 'END SOLUTION'"),
        ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION", "unbalanced 'BEGIN SOLUTION'"),
    ],
)
def test_unbalanced_markers_are_errors_that_name_the_cell(source, problem):
    with pytest.raises(ValueError, match=problem) as error:
        make_lesson(notebook(("md", "intro"), ("code", source)), "demo.ipynb")
    assert "demo.ipynb cell 1" in str(error.value)


def test_generation_is_byte_identical_and_reports_changes(tmp_path):
    solutions, lessons = tmp_path / "solutions", tmp_path / "lessons"
    solutions.mkdir()
    nbformat.write(
        notebook(("code", "# BEGIN SOLUTION\na = 1\n# END SOLUTION"), ("code", "a")),
        solutions / "01_x.ipynb",
    )
    assert stale_lessons(solutions, lessons) == ["lessons/01_x.ipynb is missing"]
    first = build_lessons(solutions, lessons)
    text = (lessons / "01_x.ipynb").read_text()
    assert first == [lessons / "01_x.ipynb"]
    assert build_lessons(solutions, lessons) == []
    assert (lessons / "01_x.ipynb").read_text() == text
    assert stale_lessons(solutions, lessons) == []
    (lessons / "01_x.ipynb").write_text(text.replace("a = None", "a = 2"))
    (lessons / "02_orphan.ipynb").write_text(text)
    assert stale_lessons(solutions, lessons) == [
        "lessons/02_orphan.ipynb has no solutions/02_orphan.ipynb",
        "lessons/01_x.ipynb differs from what solutions/01_x.ipynb generates",
    ]


# Written questions ------------------------------------------------------------------------

WRITTEN = "**Your answer:** why?\n\n<!-- BEGIN SOLUTION -->\n*Model answer.* Because {}.\n<!-- END SOLUTION -->"


def test_written_questions_are_numbered_in_order_with_their_model_answers():
    nb = notebook(
        ("md", WRITTEN.format("one"), ["free-text"]),
        ("md", "Not a question.\n\n<!-- BEGIN SOLUTION -->\nx\n<!-- END SOLUTION -->"),
        ("md", WRITTEN.format("two"), ["free-text"]),
    )
    found = written_questions(nb, "04_demo.ipynb")
    assert [(q, c.source, model) for q, c, model in found] == [
        ("4.w1", nb.cells[0].source, "Because one."),  # without the solution's own title
        ("4.w2", nb.cells[2].source, "Because two."),
    ]
    assert written_questions(nb, "demo.ipynb") == [], "no lesson number, no ids"


def test_a_written_question_shows_its_id_and_is_followed_by_its_reveal_cell():
    nb = notebook(
        ("md", WRITTEN.format("one"), ["free-text"]),
        ("md", "Explain.\n\n<!-- BEGIN SOLUTION -->\nSo.\n<!-- END SOLUTION -->", ["free-text"]),
        ("code", "print('next')"),
    )
    lesson = make_lesson(nb, "04_demo.ipynb")
    assert sources(lesson)[0] == f"**✍️ 4.w1 · Your answer:** why?\n\n{ANSWER_PROMPT}"
    assert sources(lesson)[2] == f"**✍️ 4.w2**\n\nExplain.\n\n{ANSWER_PROMPT}"
    assert sources(lesson)[4] == "print('next')"
    for cell, question in ((lesson.cells[1], "4.w1"), (lesson.cells[3], "4.w2")):
        assert cell.cell_type == "code" and cell.metadata == {"tags": ["reveal"]}
        assert f'reveal("{question}", my_answer)' in cell.source and not is_exercise(cell)
    assert lesson.cells[1].id == f"{nb.cells[0].id}-reveal"
    assert list(lesson.metadata["course"]["exercises"]) == [nb.cells[0].id, nb.cells[1].id]


def test_a_written_question_without_a_model_answer_is_an_error():
    nb = notebook(("md", "**Your answer:** why?", ["free-text"]))
    with pytest.raises(ValueError, match="04_demo.ipynb: the written question .* no model answer"):
        make_lesson(nb, "04_demo.ipynb")


def test_model_answers_are_written_as_data_and_their_drift_is_reported(tmp_path):
    solutions, target = tmp_path / "solutions", tmp_path / "answers.py"
    solutions.mkdir()
    answer = "**Your answer:** why?\n\n<!-- BEGIN SOLUTION -->\nIt is `a < b`, *so*:  \n- one\n<!-- END SOLUTION -->"
    nbformat.write(notebook(("md", answer, ["free-text"])), solutions / "03_x.ipynb")
    assert stale_model_answers(solutions, target) == [f"{target} is missing"]
    assert write_model_answers(solutions, target) and not write_model_answers(solutions, target)
    assert stale_model_answers(solutions, target) == []
    namespace = {}
    exec(target.read_text(), namespace)
    [(question, entry)] = namespace["ANSWERS"].items()
    assert question == "3.w1" and entry["cell"] == solutions_cell_id(solutions / "03_x.ipynb")
    assert entry["markdown"].strip() == "It is `a < b`, *so*:\n- one"  # no trailing spaces
    assert "<code>a &lt; b</code>, <em>so</em>:</p>\n<ul>\n<li>one</li>" in entry["html"]
    target.write_text(target.read_text().replace("one", "two"))
    assert stale_model_answers(solutions, target) == [
        f"{target} differs from the model answers of {solutions}/"
    ]


def solutions_cell_id(path):
    return nbformat.read(path, as_version=4).cells[0].id


def test_a_model_answer_that_cannot_be_written_as_data_is_refused(tmp_path):
    answer = '**Your answer:** why?\n\n<!-- BEGIN SOLUTION -->\nSay """.\n<!-- END SOLUTION -->'
    nbformat.write(notebook(("md", answer, ["free-text"])), tmp_path / "03_x.ipynb")
    with pytest.raises(ValueError, match="03_x.ipynb cell .*three double quotes"):
        model_answers_text(tmp_path)


def test_the_model_answers_of_course_lib_are_in_sync_with_solutions():
    problems = stale_model_answers(
        ROOT / "solutions", ROOT / "course_lib" / "model_answers_data.py"
    )
    assert not problems, "\n".join(problems) + "\nRun: make lessons"


# The committed notebooks -------------------------------------------------------------------


def test_there_are_solution_notebooks():
    assert SOLUTIONS, "solutions/ holds no notebooks"


def test_lessons_are_in_sync_with_solutions():
    problems = stale_lessons(ROOT / "solutions", ROOT / "lessons")
    assert not problems, "\n".join(problems) + "\nRun: make lessons"


def _lesson_number(path: Path) -> int:
    return int(path.name.split("_")[0])


def _check_calls(path: Path) -> dict[str, list[str]]:
    """exercise id -> the argument list of its check(...) call, from the notebook's code."""
    calls = {}
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "code":
            for exercise, args in re.findall(
                r'^check\("([\d.]+)", (.*)\)$', "".join(cell["source"]), re.M
            ):
                calls[exercise] = [a.strip() for a in args.split(",")]
    return calls


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_every_exercise_is_checked_with_the_names_it_declares(path):
    """The grader reads Exercise.names from the notebook: the check cells must use them."""
    expected = {e.id: list(e.names) for e in checks.exercises(_lesson_number(path))}
    assert _check_calls(path) == expected
    assert _check_calls(ROOT / "lessons" / path.name) == expected


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solutions_are_stored_with_every_check_passed(path):
    nb = nbformat.read(path, as_version=4)
    statuses = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            result = output.get("data", {}).get(checks.MIME_TYPE)
            if result:
                statuses[result["exercise"]] = result["status"]
    assert statuses == {e.id: checks.PASSED for e in checks.exercises(_lesson_number(path))}


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solutions_have_no_errors_and_a_first_cell_that_seeds(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert setup_cell.is_setup(code[0]), "first, the setup cell for hosted notebooks"
    assert "notebook.start(" in code[1].source
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors
    assert all(c.execution_count for c in code), "solutions are committed executed"
