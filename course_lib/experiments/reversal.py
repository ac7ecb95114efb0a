"""Lab L1.A, reduced: an LSTM seq2seq with and without Bahdanau attention reverses sequences.

Both models start from the same seed and train with the same recipe (reduced to run live:
length 12, 2,000 training sequences, 6 epochs). Without attention the whole source must pass
through one fixed-size state; with it, each output step looks back at the source. Measured on
500 test sequences: token and sequence accuracy, and where the attention model looks while it
copies (the symbol being copied, or the one just after it).
"""

import torch

from ..baselines import Seq2Seq, evaluate_seq2seq, reversal_data, train_seq2seq
from ..replay import replayable
from . import Bound, Experiment

LENGTH, N_TRAIN, N_TEST, EPOCHS = 12, 2_000, 500, 6


def test_data(seed: int = 0):
    """500 test sequences ``(src, tgt)``, drawn apart from the training ones."""
    return reversal_data(N_TEST, LENGTH, seed=10_000 + seed)


def train_model(src, tgt, *, attention: bool, seed: int = 0) -> Seq2Seq:
    """One model from ``seed``, trained on ``(src, tgt)`` with the reduced recipe."""
    torch.manual_seed(seed)  # the same start for every model of a seed
    model = Seq2Seq(vocab_size=20, d_embed=64, hidden=128, attention=attention)
    train_seq2seq(model, src, tgt, epochs=EPOCHS, seed=42 + seed)
    return model


@replayable
def train_pair(seed: int = 0) -> dict:
    """The vanilla and the attention model, both from ``seed``, trained with the reduced recipe."""
    train_src, train_tgt = reversal_data(N_TRAIN, LENGTH, seed=seed)
    return {
        name: train_model(train_src, train_tgt, attention=attention, seed=seed)
        for name, attention in (("vanilla", False), ("attention", True))
    }


@torch.no_grad()
def copy_focus(model, src, tgt) -> dict:
    """Where the attention model's largest weight sits at each decoding step.

    Step i predicts target position i + 2 (1-based), a copy of source position L - 1 - i
    (0-based). Returns the share of steps whose largest weight is on that symbol
    (``on_copied``), and on it or on the one after it (``on_copied_or_next``).
    """
    length = src.shape[1]
    # the 0-based source index copied at each step
    copied = torch.arange(length - 2, -1, -1, device=src.device)
    _, weights = model.greedy(src, tgt[:, 0], length)  # (N, L - 1, S)
    offset = weights.argmax(dim=-1) - copied
    on_copied, on_next = (offset == 0).float().mean().item(), (offset == 1).float().mean().item()
    return {"on_copied": on_copied, "on_copied_or_next": on_copied + on_next}


def measure(models: dict, src, tgt) -> dict:
    """Token and sequence accuracy of both models, and where the attention model looks."""
    result = {}
    for name, model in models.items():
        for key, value in evaluate_seq2seq(model, src, tgt).items():
            result[f"{name}_{key}"] = value
    return {**result, **copy_focus(models["attention"], src, tgt)}


def run(seed: int = 0) -> dict:
    return measure(train_pair(seed), *test_data(seed))


ACCURACIES = tuple(
    f"{m}_{u}_accuracy" for m in ("attention", "vanilla") for u in ("token", "sequence")
)
EXPERIMENT = Experiment(
    name="reversal",
    lesson=1,
    run=run,
    bounds=(
        Bound(
            "attention_token_accuracy",
            ">",
            0.9,
            0.03,
            "with attention, over 90% of the tokens are right",
        ),
        Bound(
            "attention_sequence_accuracy",
            ">",
            0.8,
            0.05,
            "and over 80% of the sequences are reversed perfectly",
        ),
        Bound(
            "vanilla_token_accuracy",
            "<",
            0.5,
            0.1,
            "without attention, under 50% of the tokens are right",
        ),
        Bound("vanilla_sequence_accuracy", "<", 0.05, 0.03, "and under 5% of the sequences"),
        Bound(
            "on_copied_or_next",
            ">",
            0.9,
            0.03,
            "the largest attention weight sits on the symbol being copied or the one after it "
            "in over 90% of the steps",
        ),
    ),
    sweep_seeds=(0, 1, 2, 3, 4),
)
