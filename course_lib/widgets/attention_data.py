"""What an attention map shows: tokens, the raw scores of each head, and their weights.

Shapes: H heads, T_q queries, T_k keys, d_k the width of queries and keys.

An :class:`AttentionExample` holds the raw scores QKᵀ (paper §3.2.1, Eq. 1);
:func:`attention_weights` turns them into softmax(QKᵀ / (τ·√d_k)), where the temperature τ
(1 in the paper) is a knob for exploring: τ < 1 sharpens the rows, τ > 1 flattens them.

Masks follow the course convention (``True`` = may attend). What the pictures mark is the
opposite set: ``hidden`` is ``True`` where a cell is masked (``~mask``).
"""

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .. import _validate
from ..figure_text import strongest_keys
from ..masks import causal_mask


def _tokens(name: str, tokens, n: int, what: str) -> tuple[str, ...]:
    if isinstance(tokens, str):
        tokens = tokens.split()
    if not isinstance(tokens, Sequence):
        raise TypeError(f"{name} must be a list of tokens or a string; got {type(tokens).__name__}")
    if len(tokens) != n:
        raise ValueError(f"{name} must have {what} = {n} tokens; got {len(tokens)}: {list(tokens)}")
    return tuple(str(t) for t in tokens)


@dataclass(frozen=True, eq=False)
class AttentionExample:
    """Tokens and the raw attention scores of each head: one thing to look at.

    Args:
        name: shown in titles and on the explorer's example buttons.
        query_tokens, key_tokens: labels of the T_q queries and T_k keys (a string is split
            on spaces).
        scores: ``(H, T_q, T_k)`` raw, unscaled dot products QKᵀ; ``-inf`` where a key is
            never visible.
        d_k: width of the queries and keys (the √d_k of Eq. 1).
        score_label: what the scores are, for the formula in the subtitle.
    """

    name: str
    query_tokens: tuple[str, ...]
    key_tokens: tuple[str, ...]
    scores: torch.Tensor
    d_k: int
    score_label: str = "QKᵀ"

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str; got {type(self.name).__name__}")
        if not self.name.strip():
            raise ValueError(f"name must not be blank; got {self.name!r}")
        _validate.tensor("scores", self.scores, ndim=3, floating=True)
        H, T_q, T_k = self.scores.shape
        if 0 in self.scores.shape:
            raise ValueError(
                f"scores (H, T_q, T_k) must not be empty; got {tuple(self.scores.shape)}"
            )
        if self.scores.isnan().any() or (self.scores == math.inf).any():
            raise ValueError("scores must be finite (or -inf for a hidden key); got NaN or +inf")
        _validate.positive_int("d_k", self.d_k)
        object.__setattr__(self, "scores", self.scores.detach().cpu())
        for field, n, what in (("query_tokens", T_q, "T_q"), ("key_tokens", T_k, "T_k")):
            labels = _tokens(
                field, getattr(self, field), n, f"{what} (scores has shape {(H, T_q, T_k)})"
            )
            object.__setattr__(self, field, labels)

    @property
    def n_heads(self) -> int:
        return self.scores.shape[0]

    @classmethod
    def from_qk(cls, name, tokens, q, k, key_tokens=None):
        """Scores QKᵀ of queries and keys, per head.

        Args:
            tokens: labels of the queries, and of the keys unless ``key_tokens`` is given.
            q: ``(T_q, d_k)`` or ``(H, T_q, d_k)`` queries.
            k: ``(T_k, d_k)`` or ``(H, T_k, d_k)`` keys; a 2-D q or k serves every head.
        """
        _validate.tensor("q", q, ndim=(2, 3), floating=True)
        _validate.tensor("k", k, ndim=(2, 3), floating=True)
        if q.dtype != k.dtype:
            raise TypeError(f"q and k must share one dtype; got {q.dtype} and {k.dtype}")
        if q.shape[-1] != k.shape[-1]:
            raise ValueError(
                "k must have the same d_k (last dimension) as q; "
                f"got q {tuple(q.shape)}, k {tuple(k.shape)}"
            )
        if q.dim() == k.dim() == 3 and q.shape[0] != k.shape[0]:
            raise ValueError(
                "q and k must have the same number of heads H; "
                f"got q {tuple(q.shape)}, k {tuple(k.shape)}"
            )
        tokens = _tokens("tokens", tokens, q.shape[-2], f"T_q (q has shape {tuple(q.shape)})")
        scores = q.detach() @ k.detach().transpose(-2, -1)  # (H, T_q, d_k) @ (H, d_k, T_k)
        scores = scores if scores.dim() == 3 else scores[None]  # -> (H, T_q, T_k)
        keys = tokens if key_tokens is None else key_tokens
        return cls(name, tokens, keys, scores, d_k=q.shape[-1])

    @classmethod
    def from_weights(cls, name, query_tokens, key_tokens, weights):
        """Weights a model computed (``MultiHeadAttention(..., need_weights=True)`` or
        :func:`~course_lib.attention.record_attention`): ``(T_q, T_k)`` or ``(H, T_q, T_k)``.

        They are stored as scores log(w) with d_k = 1: softmax(log w) = w, so τ = 1 shows the
        weights exactly, and τ still sharpens or flattens them because softmax ignores a
        constant added to a row. A zero weight (a masked key) becomes -inf and stays 0.
        """
        if isinstance(weights, torch.Tensor) and weights.dim() == 4:
            raise ValueError(
                "weights must be (T_q, T_k) or (H, T_q, T_k); "
                f"got the batch {tuple(weights.shape)}: pick one, e.g. weights[0]"
            )
        _validate.tensor("weights", weights, ndim=(2, 3), floating=True)
        w = weights.detach().cpu()
        w = w if w.dim() == 3 else w[None]  # (H, T_q, T_k)
        if not w.isfinite().all() or (w < 0).any():
            raise ValueError(
                "weights must be finite and >= 0 (softmax outputs); "
                "got NaN, inf or a negative value"
            )
        sums = w.sum(-1)
        bad = ~((sums - 1).abs() < 1e-3) & (sums != 0)
        if bad.any():
            h, i = bad.nonzero()[0].tolist()
            raise ValueError(
                "each row of weights must sum to 1 (or 0 for a query that sees no key); "
                f"head {h}, row {i} sums to {sums[h, i]:.4f}. "
                "For raw scores use AttentionExample.from_qk"
            )
        return cls(name, query_tokens, key_tokens, w.log(), d_k=1, score_label="log w")


def attention_weights(example, head=0, temperature=1.0, causal=False, scale=True):
    """softmax(scores / (τ·√d_k)) for one head, optionally with a causal mask (§3.2.1, §3.2.3).

    Args:
        example: an :class:`AttentionExample`.
        head: which head, 0 .. H-1.
        temperature: τ > 0; 1 gives the paper's attention.
        causal: hide later keys (needs T_q == T_k).
        scale: divide by √d_k as the paper does; ``False`` shows why it matters.

    Returns:
        ``(weights, hidden)``: weights ``(T_q, T_k)``, each row summing to 1 (all 0 for a query
        that may attend to nothing, as in
        :func:`course_lib.attention.scaled_dot_product_attention`); hidden ``(T_q, T_k)``,
        ``True`` where a cell is masked, or None when none is.
    """
    if not isinstance(example, AttentionExample):
        raise TypeError(f"example must be an AttentionExample; got {type(example).__name__}")
    H, T_q, T_k = example.scores.shape
    if isinstance(head, bool) or not isinstance(head, numbers.Integral):
        raise TypeError(f"head must be an int; got {type(head).__name__}")
    if not 0 <= head < H:
        raise ValueError(f"head must be in 0..{H - 1} ({example.name!r} has H = {H}); got {head}")
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real):
        raise TypeError(f"temperature must be a float; got {type(temperature).__name__}")
    if not 0 < temperature < math.inf:
        raise ValueError(f"temperature must be positive and finite; got {temperature}")
    scores = example.scores[int(head)]  # (T_q, T_k)
    allowed = scores.isfinite()  # True = may attend, the course's mask convention
    if causal:
        if T_q != T_k:
            raise ValueError(
                f"causal=True needs T_q == T_k; {example.name!r} has T_q = {T_q}, T_k = {T_k}"
            )
        allowed = allowed & causal_mask(T_q)
    divisor = temperature * math.sqrt(example.d_k) if scale else temperature
    has_key = allowed.any(dim=-1, keepdim=True)  # an all--inf row would give NaN: zeros instead
    scaled = torch.where(allowed, scores / divisor, -math.inf)
    weights = torch.where(has_key, scaled, 0.0).softmax(dim=-1) * has_key
    return weights, (None if allowed.all() else ~allowed)


def is_causal(hidden) -> bool:
    """True when ``hidden`` (``(T, T)`` booleans, True = masked) hides exactly the later keys."""
    if hidden is None or hidden.dim() != 2 or hidden.shape[0] != hidden.shape[1]:
        return False
    return torch.equal(hidden, ~causal_mask(hidden.shape[0]))


def causal_already(example) -> bool:
    """True when every head of ``example`` already hides every later key (e.g. a decoder's
    self-attention weights, where the model's causal mask left zeros): ticking a causal mask
    would change nothing."""
    H, T_q, T_k = example.scores.shape
    if T_q != T_k:
        return False
    later = ~causal_mask(T_q)  # (T, T), True above the diagonal
    return bool((~example.scores.isfinite())[:, later].all())


def mask_phrase(hidden) -> str:
    """What the hatched cells are, from the cells themselves: "" when none is masked,
    "causal mask on" when exactly the later keys are, else "4 of 25 pairs masked"."""
    if hidden is None or not hidden.any():
        return ""
    if is_causal(hidden):
        return "causal mask on"
    return f"{int(hidden.sum())} of {hidden.numel()} pairs masked"


@dataclass(frozen=True)
class MapReadings:
    """The three lines an attention map prints: ``title`` above it, ``formula`` between the
    title and the map, ``summary`` below it. The text alternative and the explorer's status
    line repeat them word for word."""

    title: str
    formula: str
    summary: str

    @property
    def lines(self) -> tuple[str, str, str]:
        return self.title, self.formula, self.summary


def map_title(example, head: int) -> str:
    return example.name + (
        f" — head {head + 1} of {example.n_heads}" if example.n_heads > 1 else ""
    )


def map_readings(example, weights, hidden, head=0, temperature=1.0, scale=True) -> MapReadings:
    """The printed lines of one map, from the weights and masked cells it draws
    (:func:`attention_weights`), never from the checkboxes alone."""
    divided = scale and example.d_k > 1
    formula = f"softmax({example.score_label} / {'(τ·√d_k)' if divided else 'τ'})"
    formula += f", τ = {temperature:.2f}"
    if example.d_k > 1:
        formula += f", d_k = {example.d_k}" + ("" if scale else ", no √d_k")
    masked = mask_phrase(hidden)
    formula += f", {masked}" if masked else ""
    seen = (~hidden if hidden is not None else torch.ones_like(weights, dtype=bool)).sum(-1)
    rows = seen > 0  # a query that sees nothing has no largest weight
    peak = weights.max(dim=-1).values[rows].mean().item() if rows.any() else 0.0
    uniform = (1 / seen[rows]).mean().item() if rows.any() else 0.0
    summary = f"Mean largest weight per query: {peak:.2f} (uniform rows: {uniform:.2f}, one-hot: 1)"
    return MapReadings(map_title(example, head), formula, summary)


DESCRIBED_QUERIES = 8  # a text alternative names each query's strongest key up to this many


def describe_attention_map(example, head=0, temperature=1.0, causal=False, scale=True) -> str:
    """A text alternative of one attention map: the lines it prints (title, formula with the
    mask, mean largest weight), then each query's strongest key.

    Arguments as :func:`attention_weights`; numbers to 2 decimals (the last bits differ
    between processors). Beyond DESCRIBED_QUERIES queries, the rest are counted.
    """
    weights, hidden = attention_weights(example, head, temperature, causal, scale)
    readings = map_readings(example, weights, hidden, head, temperature, scale)
    T_q, T_k = weights.shape
    visible = torch.ones(T_q, T_k, dtype=torch.bool) if hidden is None else ~hidden
    rows = [
        f"{query} → {strongest_keys(example.key_tokens, weights[i].tolist(), visible[i].tolist())}"
        for i, query in enumerate(example.query_tokens[:DESCRIBED_QUERIES])
    ]
    more = T_q - len(rows)
    rest = f"; and {more} more {'query' if more == 1 else 'queries'}" if more else ""
    hatched = int(hidden.sum()) if hidden is not None else 0
    cells = f"{T_q} queries (rows) by {T_k} keys (columns)"
    cells += f"; {hatched} of the {T_q * T_k} cells hatched (×, weight 0)" if hatched else ""
    return (
        f"Attention map of {readings.title}: {readings.formula}. {readings.summary}. {cells}. "
        f"Strongest key of each query: {'; '.join(rows)}{rest}."
    )
