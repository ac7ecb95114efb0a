"""Lesson 6: post-norm against pre-norm, 12 layers, trained at a high learning rate without warm-up.

Two stacks of :class:`~course_lib.model.EncoderLayer` (d_model 64, 8 heads, d_ff 256), one
post-norm as in the paper and one pre-norm, built from the same seed, learn a small task:
output the token at the previous position, over 10 symbols (the loss at chance is ln 10).
Adam at 3e-3 from the first step. The conclusion rests on the loss averaged over the last
20 steps, since one step's loss jumps by tenths from batch to batch.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..model import EncoderLayer, TransformerConfig
from ..replay import replayable
from . import Bound, Experiment

STEPS, TAIL, CHANCE = 60, 20, math.log(10)


def encoder_stack(norm_first: bool, n_layers: int = 12, seed: int = 0, dropout: float = 0.1):
    """``n_layers`` encoder layers from ``seed``, in eval mode (d_model 64, 8 heads, d_ff 256)."""
    torch.manual_seed(seed)
    config = TransformerConfig(
        d_model=64, n_heads=8, d_ff=256, dropout=dropout, attention_bias=True, norm_first=norm_first
    )
    return nn.ModuleList(EncoderLayer(config) for _ in range(n_layers)).eval()


class TinyEncoder(nn.Module):
    """Embedding + learned positions, a 12-layer stack, a linear read-out over the symbols."""

    def __init__(self, norm_first: bool, n_symbols: int = 10, length: int = 10, seed: int = 0):
        super().__init__()
        self.layers = encoder_stack(norm_first, seed=seed, dropout=0.0)  # no dropout: clean
        self.embed = nn.Embedding(n_symbols, 64)
        self.position = nn.Parameter(0.1 * torch.randn(length, 64))
        self.norm = nn.LayerNorm(64) if norm_first else nn.Identity()  # pre-norm's final norm
        self.out = nn.Linear(64, n_symbols)

    def forward(self, tokens):  # (B, T) -> (B, T, n_symbols)
        h = self.embed(tokens) + self.position
        for layer in self.layers:
            h = layer(h)
        return self.out(self.norm(h))


@replayable
def train_high_lr(norm_first: bool, lr: float = 3e-3, steps: int = STEPS, seed: int = 0):
    """Train a :class:`TinyEncoder` to output the previous token; returns every step's loss."""
    model = TinyEncoder(norm_first, seed=seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    data = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        tokens = torch.randint(0, 10, (16, 10), generator=data)
        target = tokens.roll(1, dims=1)  # the previous position's token
        loss = F.cross_entropy(model(tokens).flatten(0, 1), target.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def tail(losses) -> float:
    """The mean loss of the last :data:`TAIL` steps."""
    return sum(losses[-TAIL:]) / TAIL


def summarize(post_losses, pre_losses) -> dict:
    """The measures the lesson's conclusion rests on, from the two loss curves."""
    post, pre = tail(post_losses), tail(pre_losses)
    return {"post_norm_loss": post, "pre_norm_loss": pre, "pre_norm_lead": post - pre}


def run(seed: int = 0) -> dict:
    return summarize(train_high_lr(False, seed=seed), train_high_lr(True, seed=seed))


EXPERIMENT = Experiment(
    name="norm_placement",
    lesson=6,
    run=run,
    bounds=(
        Bound("post_norm_loss", ">", 2.15, 0.05, "post-norm stays near chance (ln 10 ≈ 2.30)"),
        Bound(
            "pre_norm_lead", ">", 0.15, 0.05, "pre-norm ends at least 0.15 lower: it is learning"
        ),
    ),
)
