"""Recurrent baselines of lesson 1: LSTM seq2seq with and without Bahdanau et al. (2014)
additive attention on sequence reversal (lab L1.A), and a BiLSTM encoder (lab L1.B).

Shapes: B batch, S source length, T target length, V vocabulary, E d_embed, H hidden,
A attn_dim. Data, shuffling and teacher forcing use explicit ``torch.Generator`` objects;
initial weights use the global RNG (call ``torch.manual_seed`` first). Exact numbers also
depend on the thread count (``torch.get_num_threads()``) and the PyTorch version.
"""

import time

import torch
import torch.nn.functional as F
from torch import nn

from . import _validate
from .devices import device_of, synchronize
from .replay import replayable


def _sizes(**sizes) -> None:
    for name, value in sizes.items():
        _validate.positive_int(name, value)


def _token_ids(name: str, x, vocab_size: int, ndim: int = 2) -> None:
    _validate.tensor(name, x, ndim=ndim)
    if x.dtype != torch.int64:
        raise TypeError(f"{name} must hold token ids of dtype torch.int64; got {x.dtype}")
    if x.numel() and (x.min() < 0 or x.max() >= vocab_size):
        got = f"{x.min().item()}..{x.max().item()}"
        raise ValueError(f"{name} ids must lie in [0, vocab_size = {vocab_size}); got {got}")


def _pair(src, tgt, vocab_size: int) -> None:
    _token_ids("src", src, vocab_size)
    _token_ids("tgt", tgt, vocab_size)
    if tgt.shape[0] != src.shape[0] or tgt.shape[1] < 2:
        want = f"(B, T) with B = {src.shape[0]} as in src and T >= 2"
        raise ValueError(f"tgt must have shape {want}; got {tuple(tgt.shape)}")


def reversal_data(n_samples: int, seq_len: int, vocab_size: int = 20, *, seed: int = 0):
    """Lab L1.A's task. Returns ``(src, tgt)``, int64 ``(n_samples, seq_len)``, with ids in
    ``2 .. vocab_size - 1`` (0 and 1 are never drawn) and ``tgt = src.flip(1)``."""
    _sizes(n_samples=n_samples, seq_len=seq_len, vocab_size=vocab_size)
    if vocab_size < 3:
        raise ValueError(f"vocab_size must be at least 3 (ids 0, 1 are reserved); got {vocab_size}")
    generator = torch.Generator().manual_seed(seed)
    src = torch.randint(2, vocab_size, (n_samples, seq_len), generator=generator)
    return src, src.flip(1)


class Seq2SeqEncoder(nn.Module):
    """Embedding + LSTM. Shape: src ``(B, S)`` -> outputs ``(B, S, H)``, (h, c) ``(1, B, H)``."""

    def __init__(self, vocab_size: int = 20, d_embed: int = 64, hidden: int = 128):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_embed)
        self.lstm = nn.LSTM(d_embed, hidden, batch_first=True)

    def forward(self, src):
        return self.lstm(self.embed(src))  # (B, S, E) -> (B, S, H), ((1, B, H), (1, B, H))


class AdditiveAttention(nn.Module):
    """Bahdanau et al. (2014) additive attention: score = vᵀ tanh(W_dec h_prev + W_enc enc_out).

    No biases. Shape: h_prev ``(B, H)``, enc_out ``(B, S, H)`` -> context ``(B, H)`` (the
    weighted sum of enc_out), weights ``(B, S)`` (a softmax over source positions).
    """

    def __init__(self, hidden: int = 128, attn_dim: int = 64):
        super().__init__()
        self.w_dec = nn.Linear(hidden, attn_dim, bias=False)
        self.w_enc = nn.Linear(hidden, attn_dim, bias=False)
        self.v = nn.Linear(attn_dim, 1, bias=False)

    def forward(self, h_prev, enc_out):
        energy = torch.tanh(self.w_dec(h_prev).unsqueeze(1) + self.w_enc(enc_out))  # (B, S, A)
        weights = self.v(energy).squeeze(-1).softmax(dim=-1)  # (B, S, 1) -> (B, S)
        context = (weights.unsqueeze(1) @ enc_out).squeeze(1)  # (B, 1, S) @ (B, S, H) -> (B, H)
        return context, weights


class VanillaDecoder(nn.Module):
    """Embedding + LSTM + linear: all it knows of the source is its initial state.

    ``forward_step(token (B,), state, enc_out)`` -> logits ``(B, V)``, state, ``None``
    (``enc_out`` is ignored; it keeps the two decoders interchangeable).
    """

    def __init__(self, vocab_size: int = 20, d_embed: int = 64, hidden: int = 128):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_embed)
        self.lstm = nn.LSTM(d_embed, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab_size)

    def forward_step(self, token, state, enc_out=None):
        x = self.embed(token).unsqueeze(1)  # (B,) -> (B, 1, E)
        output, state = self.lstm(x, state)  # (B, 1, H)
        return self.out(output.squeeze(1)), state, None  # (B, V)


class AttentionDecoder(nn.Module):
    """A decoder that re-reads the encoder outputs at every step (Bahdanau et al., 2014):
    h_prev queries :class:`AdditiveAttention`; the LSTM reads [embedding ; context], the output
    layer [LSTM output ; context]. ``forward_step(token (B,), state, enc_out (B, S, H))`` ->
    logits ``(B, V)``, state, weights ``(B, S)``."""

    def __init__(self, vocab_size=20, d_embed=64, hidden=128, attn_dim=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_embed)
        self.attention = AdditiveAttention(hidden, attn_dim)
        self.lstm = nn.LSTM(d_embed + hidden, hidden, batch_first=True)
        self.out = nn.Linear(2 * hidden, vocab_size)

    def forward_step(self, token, state, enc_out):
        h_prev = state[0][-1]  # (1, B, H) -> (B, H)
        context, weights = self.attention(h_prev, enc_out)  # (B, H), (B, S)
        x = torch.cat([self.embed(token), context], dim=-1).unsqueeze(1)  # (B, 1, E + H)
        output, state = self.lstm(x, state)  # (B, 1, H)
        logits = self.out(torch.cat([output.squeeze(1), context], dim=-1))  # (B, 2H) -> (B, V)
        return logits, state, weights


class Seq2Seq(nn.Module):
    """Lab L1.A's LSTM encoder-decoder. The decoder starts from the encoder's final (h, c) and
    gets the first target token as its first input (no BOS), so it predicts positions 2..T.

    Args: sizes ``vocab_size``, ``d_embed``, ``hidden``; ``attention`` chooses
    :class:`AttentionDecoder` (with ``attn_dim``) or :class:`VanillaDecoder`.
    """

    def __init__(self, vocab_size=20, d_embed=64, hidden=128, *, attention: bool, attn_dim=64):
        super().__init__()
        _sizes(vocab_size=vocab_size, d_embed=d_embed, hidden=hidden, attn_dim=attn_dim)
        if not isinstance(attention, bool):
            raise TypeError(f"attention must be True or False; got {type(attention).__name__}")
        self.vocab_size = vocab_size
        self.encoder = Seq2SeqEncoder(vocab_size, d_embed, hidden)
        if attention:
            self.decoder = AttentionDecoder(vocab_size, d_embed, hidden, attn_dim)
        else:
            self.decoder = VanillaDecoder(vocab_size, d_embed, hidden)

    def forward(self, src, tgt, teacher_forcing: float = 1.0, generator=None):
        """Logits ``(B, T - 1, V)`` for positions 2..T. With probability ``teacher_forcing``,
        drawn once per step for the whole batch, the next input is the true token, else the
        model's own guess."""
        _pair(src, tgt, self.vocab_size)
        if isinstance(teacher_forcing, bool) or not 0.0 <= teacher_forcing <= 1.0:
            raise ValueError(f"teacher_forcing must be a float in [0, 1]; got {teacher_forcing!r}")
        enc_out, state = self.encoder(src)  # (B, S, H)
        token, steps = tgt[:, 0], []
        for t in range(1, tgt.shape[1]):
            logits, state, _ = self.decoder.forward_step(token, state, enc_out)  # (B, V)
            steps.append(logits)
            use_truth = torch.rand((), generator=generator).item() < teacher_forcing
            token = tgt[:, t] if use_truth else logits.argmax(dim=-1)
        return torch.stack(steps, dim=1)  # T - 1 times (B, V) -> (B, T - 1, V)

    @torch.no_grad()
    def greedy(self, src, first_token, length: int):
        """Greedy decoding from ``first_token`` ``(B,)``. Returns tokens ``(B, length)`` and
        attention weights ``(B, length - 1, S)`` (``None`` for the vanilla model)."""
        _token_ids("src", src, self.vocab_size)
        _token_ids("first_token", first_token, self.vocab_size, ndim=1)
        if first_token.shape[0] != src.shape[0] or length < 2:
            want = f"first_token (B,) = ({src.shape[0]},) and length >= 2"
            raise ValueError(f"greedy needs {want}; got {tuple(first_token.shape)} and {length}")
        enc_out, state = self.encoder(src)
        tokens, weights = [first_token], []
        for _ in range(length - 1):
            logits, state, w = self.decoder.forward_step(tokens[-1], state, enc_out)
            tokens.append(logits.argmax(dim=-1))
            weights.append(w)
        attn = None if weights[0] is None else torch.stack(weights, dim=1)  # (B, T - 1, S)
        return torch.stack(tokens, dim=1), attn  # (B, T)


def teacher_forcing_probability(epoch: int) -> float:
    """max(0.2, 1 - 0.03 · epoch), lab L1.A's schedule; epochs count from 0."""
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
        raise ValueError(f"epoch must be an int >= 0; got {epoch!r}")
    return max(0.2, 1.0 - 0.03 * epoch)


def train_seq2seq(
    model, src, tgt, *, epochs: int, batch_size=64, lr=1e-3, clip=5.0, seed=42, progress=False
) -> list[dict]:
    """Lab L1.A's recipe: Adam, cross-entropy on positions 2..T, gradient-norm clipping,
    :func:`teacher_forcing_probability`; ``seed`` drives shuffling and teacher forcing.

    Returns: per epoch, ``{"epoch", "loss" (batch mean), "teacher_forcing", "seconds"}``.
    """
    _sizes(epochs=epochs, batch_size=batch_size)
    _pair(src, tgt, model.vocab_size)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    for epoch in range(epochs):
        start, tf, losses = time.perf_counter(), teacher_forcing_probability(epoch), []
        model.train()
        order = torch.randperm(src.shape[0], generator=generator)
        for i in range(0, src.shape[0], batch_size):
            rows = order[i : i + batch_size]
            logits = model(src[rows], tgt[rows], tf, generator)  # (B, T - 1, V)
            loss = F.cross_entropy(logits.flatten(0, 1), tgt[rows, 1:].flatten())  # B(T - 1) rows
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            losses.append(loss.item())
        loss, seconds = sum(losses) / len(losses), time.perf_counter() - start
        history.append({"epoch": epoch, "loss": loss, "teacher_forcing": tf, "seconds": seconds})
        if progress:
            print(f"epoch {epoch + 1}/{epochs}  loss {loss:.3f}  tf {tf:.2f}  {seconds:.1f} s")
    model.eval()
    return history


def evaluate_seq2seq(model, src, tgt) -> dict:
    """Greedy-decode from each target's first token; score positions 2..T. Returns
    ``{"token_accuracy", "sequence_accuracy"}`` (a sequence counts if all its tokens do)."""
    _pair(src, tgt, model.vocab_size)
    model.eval()
    tokens, _ = model.greedy(src, tgt[:, 0], tgt.shape[1])  # (B, T)
    correct = (tokens[:, 1:] == tgt[:, 1:]).float()  # (B, T - 1)
    tokens_right, sequences_right = correct.mean().item(), correct.min(dim=1).values.mean().item()
    return {"token_accuracy": tokens_right, "sequence_accuracy": sequences_right}


class BiLSTMEncoder(nn.Module):
    """Embedding + stacked bidirectional LSTM, lab L1.B's recurrent rival to the Transformer.

    Args: ``vocab_size`` x ``d_embed`` embeddings, ``hidden`` units per direction, ``n_layers``.
    Shape: src ``(B, S)`` -> ``(B, S, 2H)``, forward and backward states side by side.
    """

    def __init__(self, vocab_size=10_000, d_embed=256, hidden=128, n_layers=2):
        super().__init__()
        _sizes(vocab_size=vocab_size, d_embed=d_embed, hidden=hidden, n_layers=n_layers)
        self.vocab_size = vocab_size
        self.embed = nn.Embedding(vocab_size, d_embed)
        self.lstm = nn.LSTM(d_embed, hidden, n_layers, batch_first=True, bidirectional=True)

    def forward(self, src):
        _token_ids("src", src, self.vocab_size)
        output, _ = self.lstm(self.embed(src))  # (B, S, E) -> (B, S, 2H)
        return output


@replayable
def mean_forward_seconds(model: nn.Module, n: int, repeats: int = 2, batch: int = 4) -> float:
    """Lab L1.B's timing: seconds per forward pass of a text encoder on ``(batch, n)`` token ids.

    Put the model in eval mode first. Without gradients: one warm-up pass (the first call
    allocates buffers and picks kernels), then the mean of ``repeats`` timed passes. The ids
    come from a 10,000-token vocabulary, drawn with their own generator seeded by ``n``.
    """
    generator = torch.Generator().manual_seed(n)  # on the CPU, so the ids are the same anywhere
    tokens = torch.randint(0, 10_000, (batch, n), generator=generator, device="cpu")
    tokens = tokens.to(device_of(model))
    with torch.no_grad():
        model(tokens)  # warm-up
        synchronize(tokens.device)
        start = time.perf_counter()
        for _ in range(repeats):
            model(tokens)
        synchronize(tokens.device)  # a GPU returns before it has finished
    return (time.perf_counter() - start) / repeats
