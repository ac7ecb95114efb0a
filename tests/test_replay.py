"""course_lib.replay: what a graded run replays, and that the record matches the code."""

import importlib
import sys
import types

import pytest
import torch
from torch import nn

from course_lib import checks, notebook, replay
from course_lib.checks import EXERCISES, FAILED, Result, check


def stored_functions():
    """(stored file, the function it was recorded from) for every file in course_lib/stored."""
    for path in sorted(replay.STORED.glob("*.pt")):
        module, _, name = path.stem.rpartition(".")
        function = getattr(importlib.import_module(f"course_lib.{module}"), name)
        yield path, function


def test_something_is_stored():
    assert len(list(stored_functions())) >= 8


@pytest.mark.parametrize("path", sorted(replay.STORED.glob("*.pt")), ids=lambda p: p.stem)
def test_stored_results_were_made_by_todays_code(path):
    function = dict(stored_functions())[path]
    stored = torch.load(path, weights_only=False)
    assert stored["calls"], f"{path.name} records no call"
    assert stored["fingerprint"] == replay.fingerprint(function.__wrapped__), (
        f"{path.name} was recorded before its module (or a course module it uses) changed: "
        "run `make stored`"
    )


def test_graded_reads_the_environment_and_otters_grading_mode(monkeypatch):
    monkeypatch.delenv(replay.GRADING, raising=False)
    assert not replay.graded()
    monkeypatch.setenv(replay.GRADING, "1")
    assert replay.graded()
    monkeypatch.delenv(replay.GRADING)
    otter = types.SimpleNamespace(Notebook=type("Notebook", (), {"_grading_mode": True}))
    monkeypatch.setitem(sys.modules, "otter", otter)
    assert replay.graded()


@pytest.fixture
def record(tmp_path, monkeypatch):
    """A record of its own in tmp_path, and a demonstration that counts its live runs."""
    monkeypatch.setattr(replay, "STORED", tmp_path)
    replay._recorded.cache_clear()
    runs = []

    @replay.replayable
    def train(model: nn.Linear, steps: int, generator: torch.Generator) -> float:
        runs.append(steps)
        with torch.no_grad():
            model.weight += torch.randn(model.weight.shape, generator=generator)
        torch.rand(3)  # draws from torch's own generator too
        return float(steps) * 2

    yield train, runs
    replay._recorded.cache_clear()


def fresh():
    torch.manual_seed(0)
    return nn.Linear(2, 2), torch.Generator().manual_seed(1)


def test_a_graded_run_replays_the_record_and_leaves_the_arguments_as_a_live_run(
    record, monkeypatch
):
    train, runs = record
    monkeypatch.setenv(replay.RECORD, "1")
    model, generator = fresh()
    assert train(model, 3, generator=generator) == 6.0
    live = model.state_dict(), generator.get_state(), torch.get_rng_state()
    monkeypatch.delenv(replay.RECORD)
    replay._recorded.cache_clear()

    monkeypatch.setenv(replay.GRADING, "1")
    model, generator = fresh()
    assert train(model, 3, generator=generator) == 6.0
    assert runs == [3]  # replayed, not run again
    assert all(torch.equal(model.state_dict()[k], v) for k, v in live[0].items())
    assert torch.equal(generator.get_state(), live[1])
    assert torch.equal(torch.get_rng_state(), live[2])


def test_a_call_not_on_record_or_a_learners_run_runs_live(record, monkeypatch):
    train, runs = record
    monkeypatch.setenv(replay.RECORD, "1")
    model, generator = fresh()
    train(model, 3, generator=generator)
    monkeypatch.delenv(replay.RECORD)
    replay._recorded.cache_clear()
    model, generator = fresh()
    train(model, 3, generator=generator)  # not graded: live
    monkeypatch.setenv(replay.GRADING, "1")
    model, generator = fresh()
    train(model, 4, generator=generator)  # other steps: not on record
    assert runs == [3, 3, 4]


def test_an_unreadable_record_runs_live(record, monkeypatch, tmp_path):
    train, runs = record
    (tmp_path / "tests.test_replay.record.<locals>.train.pt").write_bytes(b"not a torch file")
    monkeypatch.setenv(replay.GRADING, "1")
    model, generator = fresh()
    assert train(model, 3, generator=generator) == 6.0 and runs == [3]


def test_a_graded_figure_is_its_text_alternative(monkeypatch, capsys):
    import matplotlib.pyplot as plt

    monkeypatch.setenv(replay.GRADING, "1")
    plt.plot([1, 2])
    notebook.show("Line chart: a rising line.")
    assert capsys.readouterr().out == "Line chart: a rising line.\n"
    assert not plt.get_fignums()


def test_a_graded_notebook_checks_the_same_answer_once(monkeypatch):
    exercise = next(e for e in EXERCISES.values() if len(e.names) == 1 and e.kind != "choice")
    calls, verdict = [], Result(exercise.id, FAILED, "wrong")
    monkeypatch.setattr(checks, "_graded", {})
    monkeypatch.setattr(type(exercise), "run", lambda self, *a: calls.append(a) or verdict)
    monkeypatch.setenv(replay.GRADING, "1")
    answer = torch.zeros(3)
    assert check(exercise.id, answer) is verdict
    assert check(exercise.id, answer) is verdict
    assert len(calls) == 1
    answer += 1  # changed in place: checked again
    check(exercise.id, answer)
    check(exercise.id, torch.zeros(3))  # another object
    assert len(calls) == 3
    with pytest.raises(checks.CheckFailed):  # require scores: it always checks afresh
        checks.require(exercise.id, answer)
    assert len(calls) == 4
    monkeypatch.delenv(replay.GRADING)
    check(exercise.id, torch.zeros(3))
    check(exercise.id, torch.zeros(3))  # a learner's run checks each time
    assert len(calls) == 6
