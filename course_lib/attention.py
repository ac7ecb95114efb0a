"""Scaled dot-product attention and multi-head attention (paper §3.2).

Shapes: B batch, H heads, T_q query length, T_k key/value length, D d_model,
Dk = D // H (the paper's d_k = d_v).

Masks: boolean, ``True`` = may attend (see :mod:`course_lib.masks`). A query row that may
attend to nothing gets all-zero weights and a zero output, never NaN.
:func:`scaled_dot_product_attention` takes any mask that broadcasts to its scores;
:class:`MultiHeadAttention` only a 2-D ``(T_q, T_k)`` or a 4-D ``(B, H, T_q, T_k)`` one, since
a 3-D ``(B, 1, T_k)`` mask would broadcast with its batch axis on the heads.
"""

import math
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from . import _validate, attention_speed
from .dropout import dropout
from .masks import masked_softmax


def scaled_dot_product_attention(q, k, v, mask=None, *, dropout_p: float = 0.0):
    """softmax(Q Kᵀ / sqrt(d_k)) V, paper Eq. 1, written out so every step is visible.

    Args:
        q: ``(..., T_q, Dk)`` queries; any leading batch/head dimensions.
        k: ``(..., T_k, Dk)`` keys.
        v: ``(..., T_k, Dv)`` values.
        mask: optional boolean mask, ``True`` = may attend, broadcastable to ``(..., T_q, T_k)``.
            Broadcasting aligns shapes from the right: with q ``(B, H, T_q, Dk)``, a 3-D
            ``(B, 1, T_k)`` mask would land on ``(H, T_q, T_k)``; give it the head axis,
            ``(B, 1, 1, T_k)``.
        dropout_p: dropout on the weights before they mix the values; always applied when
            non-zero, so pass 0 outside training (``MultiHeadAttention`` does).

    Returns:
        ``(output, weights)``: output ``(..., T_q, Dv)``; weights ``(..., T_q, T_k)``, each row
        summing to 1 (or all zeros for a row with nothing to attend to), before dropout.
    """
    _check_inputs(q, k, v, mask, dropout_p)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
    weights = masked_softmax(scores, mask, dim=-1)
    mixing = dropout(weights, dropout_p)
    return mixing @ v, weights  # (..., T_q, Dv), (..., T_q, T_k)


def _check_inputs(q, k, v, mask, dropout_p) -> None:
    """A ValueError or TypeError naming what is wrong with the arguments, before any work."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        _validate.tensor(name, x, floating=True)
        if x.dim() < 2:
            raise ValueError(f"{name} must be at least 2-D (..., T, d); got shape {tuple(x.shape)}")
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share one dtype; got {q.dtype}, {k.dtype}, {v.dtype}")
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(
            "k must have the same last dimension (d_k) as q; "
            f"got q {tuple(q.shape)}, k {tuple(k.shape)}"
        )
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"v must have as many positions as k (T_k); got k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    try:
        lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "q, k and v must have broadcastable leading (batch, head) dimensions; "
            f"got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        ) from None
    _validate.mask("mask", mask, (*lead, q.shape[-2], k.shape[-2]), "(..., T_q, T_k)")
    _validate.probability("dropout_p", dropout_p)


class MultiHeadAttention(nn.Module):
    """Multi-head attention, paper §3.2.2: Concat(head_1..head_H) W^O.

    One ``d_model x d_model`` projection each for Q, K and V is split into ``n_heads``
    heads of width ``d_k = d_model / n_heads``, which is the same as H separate
    ``d_model x d_k`` projections.

    Args:
        d_model: model width D.
        n_heads: number of heads H; must divide ``d_model``.
        dropout: dropout on the attention weights (as ``nn.MultiheadAttention``).
        bias: whether the four projections have biases.

    The paper's version is :func:`scaled_dot_product_attention`, used when the weights are
    asked for. Otherwise ``forward`` takes a faster route to the same numbers (see there).

    Shape:
        query ``(B, T_q, D)``, key and value ``(B, T_k, D)``, optional boolean mask
        (``True`` = may attend) -> ``(output, weights)``, like ``nn.MultiheadAttention``:
        output ``(B, T_q, D)``; weights ``(B, H, T_q, T_k)`` per head with
        ``need_weights=True``, else ``None`` (the fused kernel computes no weights).

        The mask is 2-D ``(T_q, T_k)`` (e.g. :func:`~course_lib.masks.causal_mask`), shared by
        every sequence and head, or 4-D ``(B, H, T_q, T_k)`` with each axis its full size or 1
        (e.g. :func:`~course_lib.masks.padding_mask` ``(B, 1, 1, T_k)``,
        :func:`~course_lib.masks.target_mask` ``(B, 1, T, T)``). A 3-D mask is rejected:
        broadcasting would read ``(B, 1, T_k)`` as ``(H, T_q, T_k)`` and, when B equals H,
        mask heads instead of sequences without any error; ``mask[:, None]`` adds the head axis.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        _validate.positive_int("d_model", d_model)
        _validate.positive_int("n_heads", n_heads)
        _validate.divisible(d_model, n_heads)
        _validate.probability("dropout", dropout)
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        self.dropout = dropout
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        for linear in (self.w_q, self.w_k, self.w_v, self.w_o):
            nn.init.xavier_uniform_(linear.weight)
            if bias:
                nn.init.zeros_(linear.bias)

    def forward(self, query, key, value, mask=None, need_weights: bool = False):
        self._check(query, key, value, mask)
        B, T_q, D = query.shape
        q, k, v = map(self._split, self._project(query, key, value))  # (B, H, T, Dk) each
        p = self.dropout if self.training else 0.0
        weights = None
        if need_weights:  # the paper's lines, written out: the only path that keeps weights
            heads, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p=p)
        elif p > 0 and q.device.type == "cpu":
            # Training on a CPU: the fused kernel's dropout is slow there, and so is a softmax
            # along rows as short as the lessons' sentences; this path avoids both.
            heads = attention_speed.keys_first(q, k, v, mask, p)
        else:  # PyTorch's fused kernel (its own dropout on a GPU): same maths, same polarity
            heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        concat = heads.transpose(1, 2).reshape(B, T_q, D)  # (B, H, T_q, Dk) -> (B, T_q, D)
        return self.w_o(concat), weights

    def _project(self, query, key, value):
        """``w_q(query)``, ``w_k(key)``, ``w_v(value)``, each ``(B, T, D)``.

        A speed path: projections of the same tensor are done as one product with their
        weights stacked (:func:`~course_lib.attention_speed.stacked`), the same numbers, but
        on a CPU each product has a fixed cost that dominates at the lessons' sizes.
        Self-attention stacks all three; cross-attention K and V (the memory).
        Stacked, the three ``nn.Linear`` modules lend their weights but are not called, so
        hooks registered on them do not fire.
        """
        if query is key is value:
            return attention_speed.stacked(query, self.w_q, self.w_k, self.w_v)
        if key is value:
            return (self.w_q(query), *attention_speed.stacked(key, self.w_k, self.w_v))
        return self.w_q(query), self.w_k(key), self.w_v(value)

    def _split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.d_k).transpose(1, 2)

    def _check(self, query, key, value, mask):
        for name, x in (("query", query), ("key", key), ("value", value)):
            _validate.tensor(name, x, ndim=3, floating=True)
            _validate.last_dim(name, x, self.d_model, "d_model")
            if x.dtype != self.w_q.weight.dtype:
                raise TypeError(
                    f"{name} must have the module's dtype {self.w_q.weight.dtype}; got {x.dtype}"
                )
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(
                "key and value must have the same (B, T_k); "
                f"got key {tuple(key.shape)}, value {tuple(value.shape)}"
            )
        if query.shape[0] != key.shape[0]:
            raise ValueError(
                f"query and key must have the same batch size B; "
                f"got query {tuple(query.shape)}, key {tuple(key.shape)}"
            )
        B, T_q, T_k = query.shape[0], query.shape[1], key.shape[1]
        _validate.head_mask("mask", mask, (B, self.n_heads, T_q, T_k))

    def extra_repr(self) -> str:
        sizes = f"d_model={self.d_model}, n_heads={self.n_heads}, d_k={self.d_k}"
        return f"{sizes}, dropout={self.dropout}"


@contextmanager
def record_attention(module: nn.Module) -> Iterator[dict[str, torch.Tensor]]:
    """Record the attention weights of every :class:`MultiHeadAttention` in ``module``.

    The one way to see the attention maps of a layer or a model, whose ``forward`` returns
    only its output. Inside the block each attention computes its weights (the written-out
    path, not the fused kernel) and the dict maps its name in ``module`` to the weights
    ``(B, H, T_q, T_k)`` of its latest call::

        with record_attention(model) as maps:
            logits = model(src, tgt)
        maps["encoder.layers.0.self_attn"]  # (B, H, S, S)

    A :class:`MultiHeadAttention` given directly is recorded under ``""``. The hooks are
    removed when the block ends, even after an error.
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be an nn.Module; got {type(module).__name__}")
    attentions = [(n, m) for n, m in module.named_modules() if isinstance(m, MultiHeadAttention)]
    if not attentions:
        raise ValueError(
            f"module must contain a course_lib MultiHeadAttention; {type(module).__name__} has none"
        )
    maps: dict[str, torch.Tensor] = {}
    handles = []
    for name, sub in attentions:
        handles.append(sub.register_forward_pre_hook(_ask_for_weights, with_kwargs=True))
        handles.append(sub.register_forward_hook(partial(_keep_weights, maps, name)))
    try:
        yield maps
    finally:
        for handle in handles:
            handle.remove()


def _ask_for_weights(module, args, kwargs):
    return args[:4], {**kwargs, "need_weights": True}  # args: query, key, value, mask


def _keep_weights(maps, name, module, args, output):
    maps[name] = output[1].detach()
