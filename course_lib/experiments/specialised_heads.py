"""Lesson 4: do heads take on different jobs when a task needs two relations at once?

:mod:`course_lib.head_task`'s one-layer model (d_model 32, 4 heads) learns
y_t = (x_0 - 2 x_{t-1}) mod 8, which needs the first and the previous symbol. After training,
one head should put most of its weight on the previous position and another on the first.
Measured on 1,000 fresh sequences.
"""

import torch

from ..head_task import HeadTaskModel, accuracy, head_weights, make_batch, relation_weights, train
from ..replay import replayable
from . import Bound, Experiment


def new_model(seed: int = 0) -> HeadTaskModel:
    """The lesson's model (8 symbols, length 8, d_model 32, 4 heads), initialised from ``seed``."""
    torch.manual_seed(seed)
    return HeadTaskModel(vocab_size=8, seq_len=8, d_model=32, n_heads=4)


def evaluation_batch(seed: int = 0):
    """1,000 sequences and their targets, drawn apart from the training batches."""
    return make_batch(1000, torch.Generator().manual_seed(10_000 + seed))


@torch.no_grad()
def measure(model, tokens, targets) -> dict:
    """Accuracy, and the strongest previous-position and first-position heads."""
    relations = relation_weights(head_weights(model, tokens))  # from (N, H, T, T)
    previous, first = relations["previous"], relations["first"]
    return {
        "accuracy": accuracy(model, tokens, targets),
        "previous_head": previous.max().item(),
        "first_head": first.max().item(),
        # 1.0 when the two relations are carried by different heads
        "different_heads": float(int(previous.argmax()) != int(first.argmax())),
    }


@replayable
def train_model(model: HeadTaskModel, seed: int = 0) -> list[float]:
    """Adam at 0.01, 200 batches of 128 fresh sequences; returns every step's loss."""
    return train(model, steps=200, batch_size=128, lr=1e-2, seed=seed)


def summarize(before: dict, after: dict) -> dict:
    """One result from :func:`measure` at initialisation (``init_`` keys) and after training."""
    return {**{f"init_{k}": v for k, v in before.items()}, **after}


def run(seed: int = 0) -> dict:
    model = new_model(seed)
    tokens, targets = evaluation_batch(seed)
    before = measure(model, tokens, targets)
    train_model(model, seed)
    return summarize(before, measure(model, tokens, targets))


EXPERIMENT = Experiment(
    name="specialised_heads",
    lesson=4,
    run=run,
    bounds=(
        Bound("init_accuracy", "<", 0.3, 0.1, "at initialisation the model is near chance"),
        Bound("init_previous_head", "<", 0.4, 0.1, "and no head favours the previous position"),
        Bound("init_first_head", "<", 0.4, 0.1, "or the first one"),
        Bound("accuracy", ">", 0.95, 0.02, "after training, over 95% of the outputs are right"),
        Bound(
            "previous_head",
            ">",
            0.7,
            0.1,
            "one head puts over 0.7 of its weight on the previous symbol",
        ),
        Bound("first_head", ">", 0.7, 0.1, "one head puts over 0.7 on the first symbol"),
        Bound("different_heads", ">", 0.5, 0.0, "and they are different heads"),
    ),
)
