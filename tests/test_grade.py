"""The grader end to end, on small notebooks built from lesson 3's exercise cells.

One grading run (two notebooks at a time) covers every kind of submission: correct,
untouched, broken in each way a notebook can break, or trying to fake a pass. Each test
then reads that student's row, feedback or file.
"""

import contextlib
import csv
import hashlib
import io
from pathlib import Path

import nbformat
import pytest

from course_lib.lesson_format import STUB_COMMENT, listed_options
from course_tools.grade import main

ROOT = Path(__file__).resolve().parents[1]
NAME = "03_scaled_dot_product_attention.ipynb"
SETUP = """\
import math

import torch

from course_lib.attention import scaled_dot_product_attention
from course_lib.checks import check
from course_lib.masks import causal_mask"""
ANSWER = "Without the mask each position reads the next token, so training teaches copying."
# Passes in the notebook, but stops the process that serves the grader, wherever it is.
KILLS_THE_GRADER = """\
import os
import sys


def make_padding_mask(tokens, pad_id):
    if "course_tools.grading.inside" in sys.modules or "ipykernel" not in sys.modules:
        os._exit(3)
    return (tokens != pad_id)[:, None, None, :]"""
TIMEOUT = 10  # seconds per cell: the endless loop costs this much


def _exercise_cells(solved: bool) -> list:
    """Lesson 3's answer cells, check cells, free-text cell and the cell listing the options of
    its multiple choice, solved or as stubs."""
    lesson = nbformat.read(ROOT / "lessons" / NAME, as_version=4).cells
    solution = {c.id: c for c in nbformat.read(ROOT / "solutions" / NAME, as_version=4).cells}
    cells = []
    for cell in lesson:
        if cell.cell_type == "markdown" and "free-text" in cell.metadata.get("tags", []):
            cell = nbformat.from_dict(dict(cell))
            cell.source = (
                cell.source.split("*Your answer here")[0] + ANSWER if solved else cell.source
            )
            cells.append(cell)
        elif cell.cell_type == "markdown" and listed_options({"cells": [cell]}):
            cells.append(nbformat.from_dict(dict(cell)))
        elif cell.cell_type == "code" and (
            STUB_COMMENT in cell.source or cell.source.startswith("check(")
        ):
            cells.append(nbformat.from_dict(dict(solution[cell.id] if solved else cell)))
    return cells


def _notebook(solved: bool, before: tuple[str, ...] = ()) -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_code_cell(s) for s in (SETUP, *before)] + _exercise_cells(solved)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def _replace(nb, binds: str, source: str):
    """Replace the answer cell whose text mentions ``binds``."""
    cell = next(
        c
        for c in nb.cells
        if c.cell_type == "code" and binds in c.source and "check(" not in c.source
    )
    cell.source = source
    return nb


def _fake_passed_outputs(nb):
    """Stored outputs that claim every check passed: the grader must ignore them."""
    for cell in nb.cells:
        if cell.source.startswith("check("):
            exercise = cell.source.split('"')[1]
            data = {"text/plain": f"✓ Passed (exercise {exercise}): fake"}
            data["application/vnd.attention-course.check+json"] = {
                "exercise": exercise,
                "status": "passed",
            }
            cell.outputs = [nbformat.v4.new_output("execute_result", data=data, execution_count=1)]
    return nb


def build_submissions(folder: Path) -> None:
    folder.mkdir()
    nbs = {
        "correct": _notebook(True),
        "untouched": _fake_passed_outputs(_notebook(False)),
        # A syntax error in 3.4, an exception in a cell, and os._exit when 3.7 is checked.
        "cell_errors": _replace(
            _replace(_notebook(True, ("1 / 0",)), "def attention", "def attention(q, k, v, mask=None):\n    return q @@ k"),
            "def make_padding_mask", KILLS_THE_GRADER,
        ),
        "endless_loop": _notebook(True, ("while True:\n    pass",)),
        "kernel_dies": _notebook(True, ("import os\n\nos._exit(0)",)),
        # check redefined; course_lib and torch patched; stored outputs claim passes.
        "monkeypatched": _fake_passed_outputs(_replace(
            _notebook(False, ('def check(*answers):\n    print("✓ Passed")\n    return True',
                              "import course_lib.checks._core as core\n\n"
                              'core.Exercise.run = lambda self, *a: core.Result(self.id, "passed", "fake")\n'
                              "torch.allclose = lambda *a, **k: True\ntorch.isclose = lambda *a, **k: True",)),
            "def attention",
            "def attention(q, k, v, mask=None):\n    import course_lib.checks._core as core\n\n"
            '    core.Exercise.run = lambda self, *a: core.Result(self.id, "passed", "fake")\n    return q, q',
        )),
        "reference": _replace(
            _replace(
                _replace(_notebook(True, ("def helper(T):\n    return causal_mask(T)",)), "def attention", "attention = scaled_dot_product_attention"),
                "zero_scores",
                "_, causal_weights = scaled_dot_product_attention(\n    torch.zeros(4, 1), torch.zeros(4, 1), torch.zeros(4, 1), causal_mask(4)\n)",
            ),
            "def make_causal_mask", "make_causal_mask = helper",
        ),
    }  # fmt: skip
    # Deleted and reordered cells: 3.6 is gone; 3.2's cell runs before torch is imported.
    nb = _notebook(True)
    nb.cells = [
        c
        for c in nb.cells
        if "def make_causal_mask" not in c.source and c.source != 'check("3.6", make_causal_mask)'
    ]
    apply = next(c for c in nb.cells if "q_apply = " in c.source)
    nb.cells.remove(apply)
    nb.cells.insert(0, apply)
    nbs["deleted_reordered"] = nb
    # An answer that loops when its check calls it, and a failed import that breaks every cell.
    nbs["loops_when_checked"] = _replace(
        _notebook(True),
        "def attention",
        "def attention(q, k, v, mask=None):\n    while True:\n        pass",
    )
    nbs["missing_import"] = _notebook(True, ("scratch = torch.zeros(3)",))  # a learner's own cell
    nbs["missing_import"].cells[0].source = SETUP.replace("import torch", "import torhc")
    for name, nb in nbs.items():
        nbformat.write(nb, folder / f"{name}.ipynb")
    for name in ("malformed.ipynb", NAME):  # the second names its lesson
        (folder / name).write_text('{"cells": [{"cell_type": "code", "source": ', encoding="utf-8")


def _fingerprints(folder: Path) -> dict:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in folder.iterdir()
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade every fixture once, two at a time; the rows keyed by student."""
    root = tmp_path_factory.mktemp("grading")
    submissions = root / "submissions"
    build_submissions(submissions)
    before = _fingerprints(submissions)
    (root / "points.toml").write_text('"3.4" = 3\n', encoding="utf-8")
    out = root / "out" / "grades.csv"
    args = [str(submissions), "--out", str(out), "--jobs", "2", "--timeout", str(TIMEOUT)]
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        code = main([*args, "--points", str(root / "points.toml")])
    with open(out, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return {"code": code, "rows": rows, "by": {r["student"]: r for r in rows}, "out": out.parent,
            "before": before, "after": _fingerprints(submissions),
            "printed": printed.getvalue()}  # fmt: skip


def points(row) -> list[str]:
    return [row[f"3.{k}"] for k in range(1, 9)]


def feedback(graded, student, lesson="-03") -> str:
    return (graded["out"] / "feedback" / f"{student}{lesson}.md").read_text(encoding="utf-8")


def test_one_row_per_student_in_a_stable_order(graded):
    assert graded["code"] == 0
    students = [r["student"] for r in graded["rows"]]
    assert students == sorted(students)  # folder order, whatever finished first
    assert len(students) == 12
    assert list(graded["rows"][0])[:3] == ["student", "lesson", "3.1"]


def test_correct_notebook_gets_every_point_with_configured_weights(graded):
    row = graded["by"]["correct"]
    assert points(row) == ["1", "1", "1", "3", "2", "2", "2", "2"]  # 3.4 configured, labs 2
    assert (row["total"], row["max"], row["status"]) == ("14", "14", "ok")
    text = feedback(graded, "correct")
    assert text.count("✓ Passed") == 8 and "(3/3)" in text
    assert ANSWER in text


def test_untouched_lesson_scores_nothing_despite_stored_passes(graded):
    row = graded["by"]["untouched"]
    assert set(points(row)) == {"0"} and row["total"] == "0" and row["status"] == "problems"
    claimed = ", ".join(f"3.{k}" for k in range(1, 9))
    assert f"stored outputs show ✓ Passed for {claimed}, which this run does not" in row["notes"]
    text = feedback(graded, "untouched")
    assert text.count("… Not done yet") == 8 and "*(no answer)*" in text


def test_cell_errors_cost_only_what_depends_on_them(graded):
    row = graded["by"]["cell_errors"]
    assert "SyntaxError" in row["notes"] and "ZeroDivisionError" in row["notes"]
    assert row["status"] == "problems"
    # 3.4 never got defined; make_padding_mask calls os._exit when the grader checks it, so
    # 3.7 and 3.8 (which calls it) fail, and nothing else.
    assert points(row) == ["1", "1", "1", "0", "2", "2", "0", "0"]
    text = feedback(graded, "cell_errors")
    assert "`attention` not defined" in text and "stopped the process that ran it" in text


def test_endless_loop_is_timed_out_skipped_and_the_rest_graded(graded):
    row = graded["by"]["endless_loop"]
    assert f"did not finish within {TIMEOUT} s" in row["notes"] and "while True" in row["notes"]
    assert row["total"] == "14"


def test_kernel_that_dies_is_restarted_without_the_fatal_cell(graded):
    row = graded["by"]["kernel_dies"]
    assert "stopped the Python kernel" in row["notes"] and "cell 2 (`import os`)" in row["notes"]
    assert row["total"] == "14"


def test_deleted_and_reordered_cells(graded):
    row = graded["by"]["deleted_reordered"]
    # 3.2's cell ran before torch was imported; 3.6 is gone, and 3.8 calls it.
    assert points(row) == ["1", "0", "1", "3", "2", "0", "2", "0"]
    assert "NameError" in row["notes"]
    text = feedback(graded, "deleted_reordered")
    assert (
        "`make_causal_mask` not defined" in text
        and "`apply_weights`, `apply_output` not defined" in text
    )


def test_malformed_json_gets_an_error_row_and_an_explanation(graded):
    row = graded["by"]["malformed"]
    assert (row["status"], row["total"], row["3.1"]) == ("invalid", "0", "")
    assert "not a valid notebook" in row["notes"]
    assert "could not be graded" in feedback(graded, "malformed", lesson="")
    named = graded["by"][NAME.removesuffix(".ipynb")]  # its name gives its lesson's maximum
    columns = ("status", "lesson", "total", "max")
    assert [named[c] for c in columns] == ["invalid", "3", "0", "14"]


def test_an_answer_that_hangs_its_check_needs_a_look(graded):
    row = graded["by"]["loops_when_checked"]
    assert row["status"] == "problems" and row["3.4"] == "0"
    assert f"checking 3.4: checking this answer took over {TIMEOUT} s" in row["notes"]


def test_many_cell_errors_are_one_line_in_the_summary_and_all_in_the_feedback(graded):
    row = graded["by"]["missing_import"]
    errors = row["notes"].count(" raised ")
    assert row["status"] == "problems" and errors > 3
    summary = (graded["out"] / "summary.md").read_text(encoding="utf-8")
    entry = summary.split("**missing_import**")[1].split("\n- **")[0]
    assert f"  - {errors} cells raised errors; the first: cell 1 (`import math`) raised " in entry
    assert "ModuleNotFoundError: No module named 'torhc'" in entry
    assert entry.count(" raised ") == 2  # the count line's own words, then the first error
    problems = feedback(graded, "missing_import").split("## Exercises")[0]
    assert problems.count(" raised ") == errors


def test_progress_is_printed_as_each_notebook_is_graded(graded):
    lines = [x for x in graded["printed"].splitlines() if x.startswith("[")]
    assert graded["printed"].startswith("Grading 12 notebook(s), 2 at a time, each in its sandbox.")
    assert [x.split("]")[0] for x in lines] == [f"[{n}/12" for n in range(1, 13)]
    assert any(x.endswith("correct.ipynb: 14/14, ok") for x in lines)


def test_redefining_or_patching_check_has_no_effect(graded):
    assert graded["by"]["monkeypatched"]["total"] == "0"
    assert "fake" not in feedback(graded, "monkeypatched")


def test_answer_that_patches_the_checks_when_called_fools_no_other_check(graded):
    text = feedback(graded, "monkeypatched")
    assert "✗ Not yet: **3.4" in text
    assert text.count("… Not done yet") == 7


def test_reference_handed_back_is_flagged_and_scores_zero(graded):
    row = graded["by"]["reference"]
    # 3.3 and 3.4 use the reference directly; 3.6 through a helper defined in another cell,
    # and 3.8 through 3.6's answer, which it calls.
    assert points(row) == ["1", "1", "0", "0", "2", "0", "2", "0"]
    assert "3.4 uses course_lib.attention.scaled_dot_product_attention" in row["notes"]
    assert "3.6 uses course_lib.masks.causal_mask" in row["notes"]
    text = feedback(graded, "reference")
    assert text.count("⚑ Flagged") == 4


def test_summary_counts_and_lists_free_text(graded):
    text = (graded["out"] / "summary.md").read_text(encoding="utf-8")
    assert "| 3.4 | 5 | 3 | 2 | 1 | 1 |" in text  # passed, not yet, not done, not graded, flagged
    assert "**malformed** (lesson ?" in text and ANSWER in text


def test_submission_files_are_never_modified(graded):
    assert graded["after"] == graded["before"]


def _lesson_pair(folder: Path, solution, lesson) -> tuple[Path, Path]:
    (folder / "solutions").mkdir(parents=True)
    (folder / "lessons").mkdir()
    nbformat.write(solution, folder / "solutions" / NAME)
    nbformat.write(lesson, folder / "lessons" / NAME)
    return folder / "solutions", folder / "lessons"


def test_validate_accepts_solved_solution_and_untouched_lesson(tmp_path, capsys):
    solutions, lessons = _lesson_pair(tmp_path, _notebook(True), _notebook(False))
    code = main(
        ["--validate", "3", "--solutions", str(solutions), "--lessons", str(lessons), "--jobs", "2"]
    )
    report = capsys.readouterr().out
    assert code == 0, report
    assert report.count("(as expected)") == 2


def test_validate_rejects_a_lesson_that_passes_and_a_solution_that_fails(tmp_path, capsys):
    solution = _replace(
        _notebook(True),
        "def make_causal_mask",
        "def make_causal_mask(T):\n    return torch.ones(T, T, dtype=torch.bool).triu()",
    )
    solutions, lessons = _lesson_pair(tmp_path, solution, _notebook(True))
    code = main(
        ["--validate", "3", "--solutions", str(solutions), "--lessons", str(lessons), "--jobs", "2"]
    )
    report = capsys.readouterr().out
    assert code == 1
    assert "3.6 is 'failed'" in report
    assert (
        "3.1 passes the untouched stub" in report
        and "does not end with the answer prompt" in report
    )


@pytest.mark.parametrize("option", ["--solutions", "--lessons"])
def test_the_grader_refuses_a_course_folder_that_is_not_there(tmp_path, capsys, option):
    submission = tmp_path / "ada.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), submission)
    with pytest.raises(SystemExit) as stopped:
        main([str(submission), option, str(tmp_path / "nowhere")])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert f"{option} {tmp_path / 'nowhere'} is not a folder: run from the course's" in error
