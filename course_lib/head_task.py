"""A task that needs two attention patterns at once, and a one-layer model that learns it.

Each sequence holds ``seq_len`` random symbols x_0 .. x_{T-1}. The target at position t >= 1
is y_t = (x_0 - 2·x_{t-1}) mod V: it needs the *first* symbol and the *previous* one, in a
known order. One head that averages the two positions mixes their values symmetrically, so
it cannot tell (a, b) from (b, a); separate heads for the two relations solve it.

Shapes: B batch, T sequence length, V vocabulary, D d_model, H heads.
"""

import torch
import torch.nn.functional as F
from torch import nn

from .attention import MultiHeadAttention, record_attention
from .devices import device_of

IGNORE = -100  # position 0 has no previous symbol: no target there (cross_entropy skips it)


def make_batch(n: int, generator: torch.Generator, vocab_size: int = 8, seq_len: int = 8):
    """``(tokens, targets)``, both ``(n, T)``; ``targets[:, 0]`` is ``IGNORE``."""
    tokens = torch.randint(
        0, vocab_size, (n, seq_len), generator=generator, device=generator.device
    )
    return tokens, targets_for(tokens, vocab_size)


def targets_for(tokens, vocab_size: int = 8):
    """y_t = (x_0 - 2·x_{t-1}) mod V for t >= 1, and ``IGNORE`` at t = 0; ``(B, T)``."""
    previous = tokens.roll(1, dims=1)  # previous[:, t] = tokens[:, t - 1]
    targets = (tokens[:, :1] - 2 * previous) % vocab_size
    targets[:, 0] = IGNORE
    return targets


class HeadTaskModel(nn.Module):
    """Token + learned position embeddings -> one multi-head self-attention -> an MLP.

    No residual connection: everything the output needs must travel through attention.
    ``forward`` returns the logits ``(B, T, V)``; :func:`head_weights` gives the heads' weights.
    """

    def __init__(self, vocab_size: int = 8, seq_len: int = 8, d_model: int = 32, n_heads: int = 4):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(seq_len, d_model)  # attention alone cannot see order
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, vocab_size)
        )

    def forward(self, tokens):
        if tokens.dim() != 2 or tokens.shape[1] > self.position.num_embeddings:
            raise ValueError(
                f"tokens must be (B, T) with T <= seq_len = {self.position.num_embeddings}; "
                f"got shape {tuple(tokens.shape)}"
            )
        x = self.embed(tokens) + self.position.weight[: tokens.shape[1]]  # (B, T, D)
        return self.mlp(self.attn(x, x, x)[0])  # (B, T, vocab_size)


@torch.no_grad()
def head_weights(model: HeadTaskModel, tokens) -> torch.Tensor:
    """Every head's attention weights ``(B, H, T, T)`` on ``tokens``."""
    with record_attention(model) as maps:
        model(tokens)
    return maps["attn"]


def train(model, steps: int = 200, batch_size: int = 128, lr: float = 1e-2, seed: int = 0):
    """Adam on fresh batches; returns the loss of every step."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    vocab_size, seq_len = model.embed.num_embeddings, model.position.num_embeddings
    losses, device = [], device_of(model)
    model.train()
    for _ in range(steps):
        batch = make_batch(batch_size, generator, vocab_size, seq_len)  # drawn on the CPU
        tokens, targets = (t.to(device) for t in batch)
        logits = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def accuracy(model, tokens, targets) -> float:
    """Share of the scored positions (t >= 1) predicted right."""
    logits = model(tokens)
    scored = targets != IGNORE
    return (logits.argmax(-1)[scored] == targets[scored]).float().mean().item()


def relation_weights(weights) -> dict[str, torch.Tensor]:
    """Mean weight each head puts on the previous and on the first position, per head ``(H,)``.

    Averaged over the batch and the query positions t >= 2 (at t = 1 the previous position
    *is* the first one). A uniform head scores 1/T on both.
    """
    if not isinstance(weights, torch.Tensor) or weights.dim() != 4 or weights.shape[-1] < 3:
        got = tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights).__name__
        raise ValueError(f"weights must be a (B, H, T, T) tensor with T >= 3; got {got}")
    t = torch.arange(2, weights.shape[-1], device=weights.device)
    return {
        "previous": weights[:, :, t, t - 1].mean(dim=(0, 2)),
        "first": weights[:, :, t, 0].mean(dim=(0, 2)),
    }
