"""Lesson 3's "find the bug": a decoder trained without its causal mask against one trained with it.

Two identical tiny Transformers learn to reverse sequences of 8 symbols. One is trained with a
target mask that lets every position see the whole target (the bug of a popular tutorial), the
other with :func:`course_lib.masks.target_mask`. Both then generate unseen sequences greedily,
one token at a time, where there is no future to peek at.

The conclusion rests on generation accuracy over 200 sequences and on training losses averaged
over the last 50 steps: one run's final loss moves by a factor of several between processors.
"""

import torch
import torch.nn.functional as F

from ..data import PAD_ID, copy_task, infinite_batches
from ..decoding import greedy_decode
from ..devices import device_of
from ..masks import target_mask
from ..model import Transformer, TransformerConfig
from ..replay import replayable
from . import Bound, Experiment

STEPS, WARMUP, TAIL = 200, 50, 50  # the last TAIL steps' losses are averaged


def see_everything(tgt_in: torch.Tensor) -> torch.Tensor:
    """The bug: a (T, T) mask that lets every target position attend to every other one."""
    T = tgt_in.shape[1]
    return torch.ones(T, T, dtype=torch.bool, device=tgt_in.device)


def masked(tgt_in: torch.Tensor) -> torch.Tensor:
    """The fix: causal and not padding, (B, 1, T, T)."""
    return target_mask(tgt_in, PAD_ID)


def train_reverser(decoder_mask, train_pairs, seed: int = 0, steps: int = STEPS):
    """Train a tiny Transformer to reverse sequences; returns ``(model, losses)``."""
    torch.manual_seed(seed)
    model = Transformer(TransformerConfig.tiny(src_vocab_size=14, tgt_vocab_size=14, dropout=0.0))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    # A short linear warm-up and clipping: without them a few seeds diverge early and the
    # masked model, not the bug, decides the outcome.
    warmup = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / WARMUP))
    batches = infinite_batches(train_pairs, batch_size=64, seed=seed)
    losses = []
    for _ in range(steps):
        b = next(batches)
        logits = model(b.src, b.tgt_in, tgt_mask=decoder_mask(b.tgt_in))  # the line the bug is in
        loss = F.cross_entropy(logits.flatten(0, 1), b.tgt_out.flatten(), ignore_index=PAD_ID)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        warmup.step()
        losses.append(loss.item())
    return model.eval(), losses


def generation_accuracy(model, test_pairs) -> float:
    """Share of test sequences generated exactly by greedy decoding."""
    device = device_of(model)
    src = torch.tensor([s for s, _ in test_pairs], device=device)
    tgt = torch.tensor([t for _, t in test_pairs], device=device)
    with torch.no_grad():
        out = greedy_decode(model, src, max_len=tgt.shape[1] + 1)  # stops once all are done
    out = F.pad(out, (0, max(0, tgt.shape[1] - out.shape[1])), value=PAD_ID)  # (N, >= T)
    return (out[:, : tgt.shape[1]] == tgt).all(dim=1).float().mean().item()


@replayable
def run(seed: int = 0) -> dict:
    """Train both decoders from ``seed``; returns their tail losses and generation accuracies."""
    train_pairs = copy_task(3_000, seq_len=8, n_symbols=10, reverse=True, seed=seed)
    test_pairs = copy_task(200, seq_len=8, n_symbols=10, reverse=True, seed=10_000 + seed)
    result = {}
    for name, mask in (("leaky", see_everything), ("masked", masked)):
        model, losses = train_reverser(mask, train_pairs, seed)
        result[f"{name}_loss"] = sum(losses[-TAIL:]) / TAIL
        result[f"{name}_generates"] = generation_accuracy(model, test_pairs)
    return result


EXPERIMENT = Experiment(
    name="leaky_decoder",
    lesson=3,
    run=run,
    bounds=(
        Bound("leaky_loss", "<", 0.05, 0.02, "the leaky decoder's training loss is near 0"),
        Bound(
            "leaky_generates",
            "<",
            0.10,
            0.05,
            "yet it generates under 10% of the unseen sequences exactly",
        ),
        Bound(
            "masked_generates",
            ">",
            0.40,
            0.15,
            "while the masked decoder generates many of them exactly (over 40%)",
        ),
    ),
)
