"""The learner's workspace: copies of the lessons, never overwritten, restorable one at a time."""

import pytest

from course_lib import workspace


@pytest.fixture
def lessons(tmp_path):
    folder = tmp_path / "lessons"
    folder.mkdir()
    for name in ("01_sequence_problem", "03_scaled_dot_product_attention", "03b_extra"):
        (folder / f"{name}.ipynb").write_text(f"pristine {name}")
    return folder


def test_prepare_copies_missing_lessons_and_never_overwrites(lessons, tmp_path):
    work = tmp_path / "workspace"
    assert len(workspace.prepare(lessons, work)) == 3
    mine = work / "01_sequence_problem.ipynb"
    mine.write_text("my answers")
    (work / "03b_extra.ipynb").unlink()
    assert workspace.prepare(lessons, work) == [work / "03b_extra.ipynb"]
    assert mine.read_text() == "my answers"


@pytest.mark.parametrize("name", ["1", "01", "01_seq", "01_sequence_problem.ipynb"])
def test_a_lesson_can_be_named_by_number_or_prefix(lessons, name):
    assert workspace.find_lesson(name, lessons).name == "01_sequence_problem.ipynb"


@pytest.mark.parametrize(
    "name, problem", [("07", "matches no lesson"), ("03", "matches 2 lessons")]
)
def test_an_unclear_lesson_name_lists_the_lessons(lessons, name, problem):
    with pytest.raises(ValueError, match=problem) as error:
        workspace.find_lesson(name, lessons)
    assert "01_sequence_problem" in str(error.value)


def test_restore_keeps_the_old_copy_as_a_backup(lessons, tmp_path):
    work = tmp_path / "workspace"
    workspace.prepare(lessons, work)
    mine = work / "01_sequence_problem.ipynb"
    mine.write_text("my answers")
    target, backup = workspace.restore("01", lessons, work)
    assert target.read_text() == "pristine 01_sequence_problem"
    assert backup.read_text() == "my answers" and backup.name.startswith(
        "01_sequence_problem.backup-"
    )
    _, second = workspace.restore("01", lessons, work)
    assert second != backup and backup.exists(), "a second restore keeps the first backup"


def test_restore_into_an_empty_workspace_makes_no_backup(lessons, tmp_path):
    target, backup = workspace.restore("01", lessons, tmp_path / "workspace")
    assert target.exists() and backup is None


def test_the_command_line_reports_an_unknown_lesson(lessons, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert workspace.main(["restore", "42"]) == 2
    assert "matches no lesson" in capsys.readouterr().err
