"""The grader's parts, without a kernel: reading notebooks, finding reference code,
isolating checks, points and reports."""

import functools
import io
import json
import os
import socket
import time
from pathlib import Path

import cloudpickle
import nbformat
import pytest
import torch

from course_lib.attention import scaled_dot_product_attention
from course_lib.checks import EXERCISES, FAILED, MIME_TYPE, NOT_DONE, PASSED
from course_lib.checks._plain import NotPlain
from course_lib.checks._rules import course_lib_uses, reference_uses
from course_lib.lesson_format import ANSWER_PROMPT
from course_lib.masks import causal_mask
from course_tools.grade import main
from course_tools.grading import execution, notebooks, reports, sandbox
from course_tools.grading.checking import Link, Lost, check_one, isolated
from course_tools.grading.execution import _only_checks
from course_tools.grading.grader import (
    POINTS,
    WRITTEN_POINTS,
    find_submissions,
    grade,
    load_points,
    write_reports,
)
from course_tools.grading.inside import ANSWERS


def _nb(*cells):
    """Cells given as ("code" | "md" | "free", source)."""
    made = []
    for kind, source in cells:
        if kind == "code":
            made.append(nbformat.v4.new_code_cell(source))
        else:
            tags = {"tags": ["free-text"]} if kind == "free" else {}
            made.append(nbformat.v4.new_markdown_cell(source, metadata=tags))
    return nbformat.v4.new_notebook(cells=made)


# Which lesson ----------------------------------------------------------------------------


def test_lesson_from_the_file_name_then_the_checks_then_the_title():
    nb = _nb(("md", "# Lesson 3 · Attention"), ("code", 'check("3.4", attention)'))
    assert notebooks.lesson_of(Path("03_anything.ipynb"), _nb()) == 3
    assert notebooks.lesson_of(Path("alice.ipynb"), nb) == 3
    assert notebooks.lesson_of(Path("alice.ipynb"), _nb(("md", "# Lesson 3: renamed"))) == 3
    assert notebooks.lesson_of(Path("alice.ipynb"), _nb(("md", "# Notes"))) is None
    assert notebooks.lesson_of(Path("alice.ipynb"), _nb(), explicit=7) == 7


def test_unknown_lesson_prefix_falls_back_to_the_content():
    nb = _nb(("code", 'check("3.1", answer_3_1)'))
    assert notebooks.lesson_of(Path("99_renamed.ipynb"), nb) == 3


def test_lesson_without_exercises_is_a_value_error():
    with pytest.raises(ValueError, match="lesson 99 has no exercises"):
        notebooks.lesson_exercises(99)


def test_malformed_notebook_is_invalid_with_its_reason(tmp_path):
    bad = tmp_path / "03_x.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(notebooks.InvalidNotebook, match="03_x.ipynb is not a valid notebook"):
        notebooks.read(bad)


# Free text -------------------------------------------------------------------------------


def test_free_text_matched_by_cell_id_even_when_moved():
    lesson = _nb(("free", f"**Your answer:** why?\n\n{ANSWER_PROMPT}"), ("md", "text"))
    student = nbformat.from_dict(lesson)
    student.cells = [nbformat.from_dict(c) for c in reversed(lesson.cells)]
    student.cells[1].source = "**Your answer:** why?\n\nBecause the future is hidden."
    student.cells[1].metadata = {}  # the tag was lost, the id was not
    [answer] = notebooks.free_text(student, lesson)
    assert answer == notebooks.FreeText("**Your answer:** why?", "Because the future is hidden.")


def test_free_text_left_as_the_prompt_or_deleted_is_no_answer():
    lesson = _nb(("free", f"**Your answer:** why?\n\n{ANSWER_PROMPT}"))
    assert notebooks.free_text(lesson, lesson)[0].answer is None
    assert notebooks.free_text(_nb(("md", "other")), lesson)[0].answer is None


# Reference code, found statically ----------------------------------------------------------


def test_static_uses_of_course_lib_in_answer_cells():
    nb = _nb(
        (
            "code",
            "from course_lib.masks import causal_mask as cm\nimport course_lib.attention as A",
        ),
        ("code", "causal_weights = A.scaled_dot_product_attention(q, k, v, cm(4))[1]"),
        ("code", "def make_causal_mask(T):\n    return torch.ones(T, T).tril()"),
        (
            "code",
            "def make_padding_mask(tokens, pad_id):\n    from course_lib import masks\n    return 0",
        ),
        ("code", "%timeit cm(4)\nother = cm(4)"),
    )
    cells = notebooks.code_cells(nb)
    weights = torch.ones(4, 4)  # a value: the cell that made it is read
    assert course_lib_uses([weights], ["causal_weights"], cells) == {
        "course_lib.attention.scaled_dot_product_attention",
        "course_lib.masks.causal_mask",
    }
    assert course_lib_uses([weights], ["other"], cells) == {"course_lib.masks.causal_mask"}
    assert course_lib_uses([weights], ["nowhere"], cells) == set()


def test_the_cells_scan_follows_the_order_cells_ran_in_and_their_own_names():
    imports = "from course_lib.masks import padding_mask, causal_mask as cm"
    rebinds = "def cm(T):\n    return torch.ones(T, T).tril()"
    assert course_lib_uses([1], ["x"], [imports, "x = cm(3)"]) == {"course_lib.masks.causal_mask"}
    assert course_lib_uses([1], ["x"], [imports, rebinds, "x = cm(3)"]) == set()  # taken back
    assert course_lib_uses([1], ["x"], ["x = cm(3)", imports]) == set()  # imported after
    local = "padding_mask = torch.ones(3)\nx = padding_mask.sum()"
    assert course_lib_uses([1], ["x"], [imports, local]) == set()  # the cell's own name


# Reference code, found at run time ---------------------------------------------------------


def _helper(T):
    return causal_mask(T)


def test_runtime_uses_through_aliases_wrappers_helpers_and_closures():
    assert reference_uses(scaled_dot_product_attention) == {
        "course_lib.attention.scaled_dot_product_attention"
    }
    assert reference_uses(lambda q, k, v: scaled_dot_product_attention(q, k, v)) == {
        "course_lib.attention.scaled_dot_product_attention"
    }
    assert reference_uses(lambda T: _helper(T)) == {"course_lib.masks.causal_mask"}
    mask = causal_mask
    assert reference_uses(lambda T: mask(T)) == {"course_lib.masks.causal_mask"}  # a closure
    assert reference_uses(functools.partial(scaled_dot_product_attention, mask=None))


def test_runtime_uses_ignore_own_code_data_and_the_checks():
    def own(T):
        return torch.ones(T, T, dtype=torch.bool).tril()

    assert reference_uses(own) == set()
    assert reference_uses(causal_mask(3)) == set()  # a tensor, even one course_lib made
    assert reference_uses(lambda: EXERCISES) == set()  # course_lib.checks is not reference code


# Checks in isolated children -----------------------------------------------------------------


def test_a_kernel_has_one_thread_even_when_the_first_cell_fails(tmp_path):
    cells = ["import not_a_module", "import torch\n\nthreads = torch.get_num_threads()"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    ran = execution.run(nb, tmp_path, ["threads"], timeout=60)
    assert ran.problems[0].startswith("cell 1 (`import not_a_module`) raised ModuleNotFound")
    exported = json.loads((tmp_path / "answers.json").read_text(encoding="utf-8"))
    blob = (tmp_path / exported["threads"]["file"]).read_bytes()
    assert cloudpickle.loads(blob) == 1  # set before the kernel started, not by a cell


def test_isolated_child_returns_the_result():
    assert isolated(lambda: {"status": PASSED, "message": "ok"}, timeout=30) == {
        "status": PASSED,
        "message": "ok",
    }


def test_isolated_child_that_dies_or_hangs_fails_alone():
    assert "stopped the check" in isolated(lambda: os._exit(1), timeout=30)["message"]
    start = time.monotonic()
    result = isolated(lambda: time.sleep(60), timeout=1)
    assert result["status"] == FAILED and "took over 1 s" in result["message"]
    assert time.monotonic() - start < 30


def test_isolated_child_with_a_malformed_result_fails():
    assert (
        isolated(lambda: {"status": "excellent", "message": "10/10"}, timeout=30)["status"]
        == FAILED
    )
    assert (
        isolated(lambda: {"status": PASSED, "message": "ok", "uses": 1}, timeout=30)["status"]
        == FAILED
    )


def test_isolated_child_cannot_patch_the_parent():
    def patch():
        EXERCISES["3.6"].__class__.run = lambda self, *a: None
        return {"status": PASSED, "message": "patched"}

    original = EXERCISES["3.6"].__class__.run
    isolated(patch, timeout=30)
    assert EXERCISES["3.6"].__class__.run is original


def test_check_one_reports_missing_names_and_flags_references(tmp_path):
    import json

    import cloudpickle

    def checked(exercise_id: str, name: str, answer) -> dict:
        """``check_one`` on ``answer`` as the sandbox's server hands it over (unsandboxed)."""
        (tmp_path / "answer.pickle").write_bytes(cloudpickle.dumps(answer))  # as exported
        blob = {name: {"file": "answer.pickle"}}
        (tmp_path / ANSWERS).write_text(json.dumps(blob), encoding="utf-8")
        with Link(tmp_path, sandboxed=False) as link:
            return check_one(EXERCISES[exercise_id], link.answers([name]))

    result = checked("3.6", "make_causal_mask", lambda T: causal_mask(T))
    assert result["status"] == FAILED and result["uses"] == ["course_lib.masks.causal_mask"]
    assert "uses course_lib's `causal_mask`" in result["message"]
    assert checked("3.6", "make_causal_mask", lambda T: torch.ones(T, T))["uses"] == []
    missing = check_one(EXERCISES["3.2"], {})
    assert (
        missing["status"] == NOT_DONE
        and "`apply_weights`, `apply_output` not defined" in missing["message"]
    )


# Execution helpers, points, submissions, reports -------------------------------------------


def test_only_check_cells_are_skipped():
    cell = nbformat.v4.new_code_cell
    assert _only_checks(cell('check("3.4", attention)'))
    assert _only_checks(cell('check("3.4", attention)\nhint("3.4")'))
    assert not _only_checks(cell('x = 1\ncheck("3.4", attention)'))
    assert not _only_checks(cell("def check(*a):\n    return True"))
    assert not _only_checks(cell(""))


def test_points_from_toml_and_json_with_named_errors(tmp_path):
    (tmp_path / "p.toml").write_text('"3.4" = 3\n"3.1" = 0.5\n', encoding="utf-8")
    points = load_points(tmp_path / "p.toml")
    assert (points["3.4"], points["3.1"]) == (3.0, 0.5)
    assert (points["3.2"], points["3.5"], points[WRITTEN_POINTS]) == (1.0, 2.0, 1.0)
    (tmp_path / "p.json").write_text('{"9.9": 1}', encoding="utf-8")
    with pytest.raises(ValueError, match="unknown exercise '9.9'"):
        load_points(tmp_path / "p.json")
    (tmp_path / "q.json").write_text('{"3.1": "two"}', encoding="utf-8")
    with pytest.raises(ValueError, match="should be a number >= 0; got 'two'"):
        load_points(tmp_path / "q.json")


def test_every_exercise_is_worth_what_its_kind_is_worth():
    """1 for a multiple choice or a short exercise, 2 for a lab or a project step, unless the
    course's points.toml (which the grader reads by default) says otherwise."""
    points = load_points(POINTS)
    assert set(points) == set(EXERCISES) | {WRITTEN_POINTS}
    assert (points["1.1"], points["1.7"], points["3.2"], points["9.1"]) == (1, 1, 1, 1)
    assert (points["1.4"], points["3.8"], points["8.1"], points["8.9"]) == (2, 2, 2, 2)
    assert load_points(None) == points  # the course's file overrides nothing today


def test_students_are_named_by_their_folder_or_else_by_their_file(tmp_path):
    for folder, name in (("alice", "03_x"), ("bob", "03_x"), ("dan/renamed", "homework_final")):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / f"{name}.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / "carol.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "carol-checkpoint.ipynb").write_text("{}", encoding="utf-8")
    found = find_submissions([tmp_path])
    assert [s for _, s in found] == ["alice", "bob", "carol", "dan"]
    assert find_submissions([tmp_path / "bob" / "03_x.ipynb"])[0][1] == "03_x"
    given = [tmp_path / "alice" / "03_x.ipynb", tmp_path / "bob" / "03_x.ipynb"]
    assert [s for _, s in find_submissions(given)] == ["alice", "bob"]  # same stem: the folder


def test_two_notebooks_of_one_lesson_from_one_student_are_both_kept_and_noted(tmp_path):
    grades = [reports.SubmissionGrade("ann", f"ann/{n}.ipynb", 3) for n in ("a", "b")]
    write_reports(grades, tmp_path / "grades.csv")
    assert sorted(p.name for p in (tmp_path / "feedback").iterdir()) == ["ann-03+.md", "ann-03.md"]
    assert grades[0].problems == ["2 notebooks of lesson 3: ann/a.ipynb, ann/b.ipynb"]


def test_feedback_uses_symbols_and_words_and_flags():
    grade = reports.SubmissionGrade(
        "alice", "alice.ipynb", 3, problems=["cell 2 raised NameError: x"]
    )
    grade.exercises = [
        reports.ExerciseGrade("3.1", "Recall", PASSED, "(b) is right.", 1, 1),
        reports.ExerciseGrade("3.2", "Apply", FAILED, "swapped.", 0, 2),
        reports.ExerciseGrade("3.3", "Extend", NOT_DONE, "stub.", 0, 1),
        reports.ExerciseGrade("3.4", "Lab", PASSED, "ok.", 0, 1, ["course_lib.attention.x"]),
    ]
    grade.free_text = [notebooks.FreeText("Why?", "Because.")]
    text = reports.feedback(grade)
    assert "1 of 5 points" in text and "cell 2 raised NameError" in text
    for look in ("✓ Passed: **3.1", "✗ Not yet: **3.2", "… Not done yet: **3.3", "⚑ Flagged"):
        assert look in text
    assert "> Because." in text
    assert reports.file_name("alice/03 x", 3) == "alice_03_x-03.md"


def test_stored_passes_are_read_from_the_checks_own_output_its_html_or_its_text():
    outputs = [
        nbformat.v4.new_output("display_data", data={MIME_TYPE: {"exercise": "3.1", "status": PASSED}}),
        nbformat.v4.new_output("display_data", data={"text/html": "<strong>✓ Passed</strong> (exercise 3.2): ok"}),
        nbformat.v4.new_output("stream", text="✓ Passed (exercise 3.3): typed by hand"),
        nbformat.v4.new_output("stream", text="✗ Not yet (exercise 3.4): no"),
    ]  # fmt: skip
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=outputs)])
    assert notebooks.claimed_passes(nb) == {"3.1", "3.2", "3.3"}


def test_an_unreadable_notebook_scores_nothing_of_the_lesson_given(tmp_path):
    (tmp_path / "alice.ipynb").write_text("{", encoding="utf-8")
    graded = grade(tmp_path / "alice.ipynb", "alice", timeout=10, points={}, lesson=3)
    assert graded.status == "invalid" and graded.lesson == 3
    assert graded.max_points == sum(e.points for i, e in EXERCISES.items() if i[:2] == "3.") > 0


class _Replying:
    """A stand-in for the sandbox's server that sends back one frame, whatever it is asked."""

    def __init__(self, frame: bytes):
        self.stdin = io.BytesIO()
        read, write = os.pipe()
        os.write(write, frame)
        os.close(write)
        self.stdout = os.fdopen(read, "rb")

    def kill(self) -> None:
        pass

    def wait(self) -> None:
        pass


class _RunsACommand:
    def __reduce__(self):
        return (os.system, ("touch /tmp/a-reply-was-run",))


def test_a_reply_that_is_not_plain_data_runs_nothing_and_is_refused(tmp_path):
    forged = io.BytesIO()
    torch.save({"x": _RunsACommand()}, forged)
    link = Link(tmp_path, sandboxed=False)
    _replying(link, len(forged.getvalue()).to_bytes(8, "big") + forged.getvalue())
    with pytest.raises(Lost, match="not plain data"):
        link.request(op="answers", names=["x"])
    assert isinstance(link.value(forged.getvalue()), NotPlain)
    assert not Path("/tmp/a-reply-was-run").exists()
    _replying(link, (1 << 40).to_bytes(8, "big"))  # a reply too large to read
    with pytest.raises(Lost, match="a reply of"):
        link.request(op="answers", names=["x"])
    _replying(link, b"\x00\x00")  # half a frame, then nothing
    link.timeout = 1
    with pytest.raises(Lost, match="no reply"):
        link.request(op="answers", names=["x"])


def _replying(link: Link, frame: bytes) -> None:
    link.process = _Replying(frame)
    link.requests, link.replies = link.process.stdin, link.process.stdout


@pytest.mark.parametrize(
    "bwrap, said",
    [
        (None, "bubblewrap (bwrap) is not installed"),
        ("echo 'bwrap: No permissions to create new namespace' >&2; exit 1", "cannot start a sandbox here: bwrap: No permissions"),
    ],
)  # fmt: skip
def test_the_grader_refuses_to_run_a_notebook_outside_a_sandbox(
    tmp_path, monkeypatch, capsys, bwrap, said
):
    """Without a sandbox that starts, grading stops before any notebook runs, and says what to
    do; --no-sandbox is the explicit way round."""
    folder = tmp_path / "bin"
    folder.mkdir()
    if bwrap:
        (folder / "bwrap").write_text(f"#!/bin/sh\n{bwrap}\n")
        (folder / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    (tmp_path / "03_x.ipynb").write_text("{}")
    with pytest.raises(SystemExit) as stopped:
        main([str(tmp_path / "03_x.ipynb"), "--out", str(tmp_path / "out" / "grades.csv")])
    assert stopped.value.code == 2
    assert said in capsys.readouterr().err and "--no-sandbox" in sandbox.missing()
    assert not (tmp_path / "out").exists()


def test_a_kernel_connection_stopped_in_a_checks_child_is_ended_for_the_grader(tmp_path):
    """A check's child that gives up on the kernel (a reply too large, say) stops the link:
    the grader then sees it ended and starts a server process, rather than reading what the
    child left unread as the next exercise's reply."""
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(tmp_path / "checks"))
        listener.listen(1)
        dialled = socket.socket(socket.AF_UNIX)
        dialled.connect(str(tmp_path / "checks"))
        link, stopped = Link(tmp_path, sandboxed=False), []
        assert link.attach(listener, lambda: stopped.append(True))
    assert not link.ended()
    pid = os.fork()
    if pid == 0:  # the check's child
        link.stop()
        os._exit(0)
    os.waitpid(pid, 0)
    assert link.ended()
    assert dialled.recv(1) == b""  # the kernel's serving loop reads the end
    link.stop()
    assert stopped == [True]  # the kernel is stopped by the grader, not left in a check
    dialled.close()
