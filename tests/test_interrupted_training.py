"""Lesson 7 survives a training run stopped halfway (the stop button pressed during training).

The training cell binds everything later cells need (the vocabularies, an empty ``History``)
before it trains, and ``train`` marks the history finished only when it returns. Every later
cell that needs the trained model runs under ``if trained(history):``, which otherwise prints
one line saying how to go on. The notebook test runs the learner's copy of the lesson in one
kernel, as a learner would: Run All with the training stopped halfway, then the training cell
again to the end (the advice works), then stopped halfway once more (no old curve or score is
drawn over the half-trained model). The stop is a ``KeyboardInterrupt`` raised from the batch
iterator, which a cell injected before the training cell wraps.

The notebook test trains about twice (250 steps, then 125 twice) and runs the lesson's later
cells three times: about 2 minutes on one free core, more on a busy machine.
"""

import copy
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_lib.data import copy_task, infinite_batches
from course_lib.model import Transformer, TransformerConfig
from course_lib.pretrained import RECIPE
from course_lib.training import History, train, trained

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "lessons" / "07_complete_transformer.ipynb"
STOP_AT = RECIPE.steps // 2
STOPPED = (
    f"training stopped at step {STOP_AT}: run the training cell again, or set TRAIN_LIVE = "
    "False to load the trained checkpoint"
)
# What only a trained model's cells print: a score, the curves' text, a translation's loss.
TRAINED_ONLY = ("exact match", "BLEU", "last step's loss", "P(je)", "looks hardest", "✓ over")

STOP_HALFWAY = f"""\
_course_batches = infinite_batches


def infinite_batches(*args, **kwargs):  # the stop button, pressed halfway through training
    for number, batch in enumerate(_course_batches(*args, **kwargs)):
        if number == {STOP_AT}:
            raise KeyboardInterrupt
        yield batch
"""
GO_ON = "infinite_batches = _course_batches"


# The state the notebook relies on -----------------------------------------------------------


def _batches(stop_at: int | None = None):
    for number, batch in enumerate(infinite_batches(copy_task(200, seq_len=4), 16)):
        if number == stop_at:
            raise KeyboardInterrupt
        yield batch


def test_an_interrupted_training_leaves_its_history_unfinished(capsys):
    model, history = Transformer(TransformerConfig.tiny(14, 14, dropout=0.0)), History()
    with pytest.raises(KeyboardInterrupt):
        train(model, _batches(stop_at=7), steps=20, warmup=10, progress=False, history=history)
    assert (history.steps_done, history.finished) == (7, False)
    assert trained(history) is False
    assert capsys.readouterr().out == (
        "training stopped at step 7: run the training cell again, or set TRAIN_LIVE = False to "
        "load the trained checkpoint\n"
    )


def test_a_finished_training_or_a_loaded_checkpoint_is_trained(capsys):
    model, history = Transformer(TransformerConfig.tiny(14, 14, dropout=0.0)), History()
    returned = train(model, _batches(), steps=5, warmup=10, progress=False, history=history)
    assert returned is history and (history.steps_done, history.finished) == (5, True)
    assert trained(history) and trained(None)  # None: the checkpoint, loaded
    assert capsys.readouterr().out == ""


def test_train_fills_only_a_new_history():
    model, used = Transformer(TransformerConfig.tiny(14, 14)), History(step=[1], loss=[2.0])
    with pytest.raises(ValueError, match="history must be a new, empty History"):
        train(model, _batches(), steps=5, progress=False, history=used)
    with pytest.raises(TypeError, match="history must be a History or None; got dict"):
        train(model, _batches(), steps=5, progress=False, history={})
    with pytest.raises(TypeError, match="history must be a History or None; got list"):
        trained([])


# The lesson, stopped halfway ----------------------------------------------------------------


def _texts(cell) -> str:
    """Everything a cell shows as text: its streams, its results' text and its error."""
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type == "error":
            parts.append(f"{output.ename}: {output.evalue}")
        else:
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def _errors(cell) -> list[str]:
    return [f"{o.ename}: {o.evalue}" for o in cell.get("outputs", []) if o.output_type == "error"]


def _pictures(cell) -> bool:
    return any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


@pytest.fixture(scope="module")
def runs():
    """The lesson's cells from the training cell on, after each of the three acts."""
    cells = nbformat.read(LESSON, as_version=4).cells
    training = next(i for i, c in enumerate(cells) if "history = History()" in c.source)
    executed = nbformat.v4.new_notebook()  # every cell run, in order: nbclient files each there
    client = NotebookClient(
        executed,
        timeout=600,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(LESSON.parent)}},
    )
    acts = {}
    with client.setup_kernel():

        def run(source_cells):
            done = [copy.deepcopy(c) for c in source_cells]
            for cell in done:
                if cell.cell_type == "code":
                    executed.cells.append(cell)
                    client.execute_cell(cell, len(executed.cells) - 1)
            return done

        run(cells[:training])
        run([nbformat.v4.new_code_cell(STOP_HALFWAY)])
        acts["stopped in a fresh kernel"] = run(cells[training:])
        run([nbformat.v4.new_code_cell(GO_ON)])
        acts["run again to the end"] = run(cells[training:])
        run([nbformat.v4.new_code_cell(STOP_HALFWAY)])
        acts["stopped after a full run"] = run(cells[training:])
    return acts


def _guarded(cells) -> list:
    return [c for c in cells if c.cell_type == "code" and "trained(history)" in c.source]


@pytest.mark.slow
@pytest.mark.parametrize("act", ["stopped in a fresh kernel", "stopped after a full run"])
def test_after_a_stop_the_later_cells_say_what_to_do_and_nothing_else(runs, act):
    training, *later = runs[act]
    assert [e.split(":")[0] for e in _errors(training)] == ["KeyboardInterrupt"]
    for cell in later:
        assert not _errors(cell), (cell.source[:200], _errors(cell))
        shown = _texts(cell)
        assert not [w for w in TRAINED_ONLY if w in shown], (cell.source[:200], shown)
    guarded = _guarded(later)
    assert len(guarded) >= 12  # the curves, the scores, the translations, the attention maps
    for cell in guarded:
        assert _texts(cell) == STOPPED + "\n", (cell.source[:200], _texts(cell))
        assert not _pictures(cell), cell.source[:200]


@pytest.mark.slow
def test_running_the_training_cell_again_gives_the_lesson_back(runs):
    training, *later = runs["run again to the end"]
    assert not _errors(training) and f"{RECIPE.steps} steps in" in _texts(training)
    assert not [(c.source[:200], _errors(c)) for c in later if _errors(c)]
    shown = "".join(_texts(c) for c in later)
    assert STOPPED not in shown
    assert all(words in shown for words in ("held-out exact match", "BLEU", "last step's loss"))
    assert all(_pictures(c) for c in _guarded(later) if "notebook.show" in c.source)


def test_the_lesson_binds_what_later_cells_need_before_training():
    source = next(
        c.source
        for c in nbformat.read(LESSON, as_version=4).cells
        if "history = History()" in c.source
    )
    before = source.split("train(", 1)[0]
    assert "src_vocab, tgt_vocab =" in before and "history = History()" in before
    assert "history=history" in source
