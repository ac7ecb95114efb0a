"""Auto-regressive decoding (paper §6.1): greedy, and beam search with length normalisation.

The encoder runs once; the decoder then runs once per output token, because token t
is an input of step t + 1. Both functions take a :class:`course_lib.model.Transformer`
and leave it in eval mode (no dropout). PAD and BOS are never generated.

Shapes: B batch, S source length, L output length, K beam size, V vocabulary size.
"""

import torch

from . import _validate
from .data import BOS_ID, EOS_ID, PAD_ID
from .masks import padding_mask


def _max_len(model, src, max_len):
    if max_len is None:  # the paper allows input length + 50, stopping early at EOS
        max_len = src.shape[1] + 50
    _validate.positive_int("max_len", max_len)
    return min(max_len, model.config.max_len - 1)


def _check_src(src):
    _validate.token_ids("src", src)
    if 0 in src.shape:
        raise ValueError(
            f"src must hold at least one token per row and one row; got shape {tuple(src.shape)}"
        )


def _next_token_logits(model, ys, memory, src_mask):
    """Logits for the token after ``ys``, with PAD and BOS ruled out: they are never outputs."""
    logits = model.decode(ys, memory, src_mask)[:, -1]  # (B, V): the last position only
    logits[:, [PAD_ID, BOS_ID]] = float("-inf")
    return logits


@torch.no_grad()
def greedy_decode(model, src, max_len: int | None = None) -> torch.Tensor:
    """Pick the most probable next token at every step.

    Args:
        src: ``(B, S)`` source ids, padded with ``PAD_ID``.
        max_len: most tokens to generate; default ``S + 50``.

    Returns:
        ``(B, L)`` generated ids without BOS; a row that produced EOS within ``max_len``
        has ``PAD_ID`` after it.
    """
    _check_src(src)
    model.eval()
    max_len = _max_len(model, src, max_len)
    src_mask = padding_mask(src, PAD_ID)
    memory = model.encode(src, src_mask)  # (B, S, D), computed once
    ys = torch.full((src.shape[0], 1), BOS_ID, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        token = _next_token_logits(model, ys, memory, src_mask).argmax(dim=-1)
        token = token.masked_fill(done, PAD_ID)
        ys = torch.cat([ys, token[:, None]], dim=1)
        done |= token == EOS_ID
        if done.all():
            break
    return ys[:, 1:]


def length_penalty(length: int, alpha: float) -> float:
    """((5 + length) / 6)^alpha, the normaliser of Wu et al. (2016) the paper uses (alpha 0.6)."""
    return ((5 + length) / 6) ** alpha


@torch.no_grad()
def beam_search(model, src, beam_size: int = 4, max_len: int | None = None, alpha: float = 0.6):
    """Keep the ``beam_size`` best partial translations at every step (paper: 4 beams, α = 0.6).

    Finished hypotheses are ranked by log-probability divided by :func:`length_penalty`,
    so that longer outputs are not punished merely for having more factors below 1.

    Returns:
        ``(B, L)`` ids like :func:`greedy_decode`.
    """
    _check_src(src)
    _validate.positive_int("beam_size", beam_size)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha < 0:
        raise ValueError(f"alpha must be a number >= 0; got {alpha!r}")
    model.eval()
    max_len = _max_len(model, src, max_len)
    rows = [
        _beam_one(model, src[b : b + 1], beam_size, max_len, alpha) for b in range(src.shape[0])
    ]
    width = max(len(r) for r in rows)
    padded = [r + [PAD_ID] * (width - len(r)) for r in rows]
    return torch.tensor(padded, dtype=torch.long, device=src.device)


def _beam_one(model, src, beam_size, max_len, alpha) -> list[int]:
    src_mask = padding_mask(src, PAD_ID)
    memory = model.encode(src, src_mask)  # (1, S, D)
    device = src.device
    beams = torch.full((1, 1), BOS_ID, dtype=torch.long, device=device)  # (K, t): alive ones
    scores = torch.zeros(1, device=device)  # (K,) summed log-probabilities
    finished = []  # (normalised score, tokens without BOS)
    for t in range(1, max_len + 1):
        k = beams.shape[0]
        logits = _next_token_logits(
            model, beams, memory.expand(k, -1, -1), src_mask.expand(k, -1, -1, -1)
        )
        candidates = scores[:, None] + logits.log_softmax(dim=-1)  # (K, V)
        top_scores, top = candidates.flatten().topk(min(2 * beam_size, candidates.numel()))
        vocab = candidates.shape[1]
        keep_beams, keep_scores = [], []
        for rank, (score, index) in enumerate(zip(top_scores.tolist(), top.tolist(), strict=True)):
            if score == float("-inf"):  # PAD or BOS: ruled out, and so is everything after
                break
            seq = beams[index // vocab].tolist()[1:] + [index % vocab]
            if seq[-1] == EOS_ID:
                if rank < beam_size:  # only a hypothesis that would have made the beam counts
                    finished.append((score / length_penalty(t, alpha), seq))
            elif len(keep_beams) < beam_size:
                keep_beams.append([BOS_ID, *seq])
                keep_scores.append(score)
        if not keep_beams:
            break
        beams = torch.tensor(keep_beams, device=device)
        scores = torch.tensor(keep_scores, device=device)
        # Log-probabilities only fall as a hypothesis grows, so an alive one can at best
        # reach its current score divided by the largest penalty; stop when none can win.
        best_alive = scores.max().item() / length_penalty(max_len, alpha)
        if len(finished) >= beam_size and max(f[0] for f in finished) >= best_alive:
            break
    if not finished:  # ran out of length: rank the alive hypotheses the same way
        lp = length_penalty(max_len, alpha)
        finished = [(s / lp, b[1:]) for s, b in zip(scores.tolist(), beams.tolist(), strict=True)]
    return max(finished, key=lambda f: f[0])[1]
