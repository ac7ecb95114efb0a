"""A faster training step on a CPU: the model's function, with less work for padding.

:meth:`Transformer.forward <course_lib.model.Transformer.forward>` computes every source
position, padding included, as the paper writes it. In training on a CPU with the source
padding mask it builds itself, it calls :func:`forward` here instead, which computes the same
logits and gradients (up to rounding) with less work:

- **Padding is skipped.** A padded source position is only ever a key and a value that the
  padding mask hides (weight exactly 0), so what the encoder computes there changes neither the
  loss nor any gradient. Here the real source positions are packed into one ``(N, D)`` matrix,
  and every position-wise part of the encoder (the projections, feed-forward networks,
  residuals and norms) and the memory's key and value projections run on those N rows only;
  each attention puts its keys and values back into the ``(B, S, ·)`` layout, zeros at the
  padding. With sentences a quarter padding, that is a quarter of the encoder's matrix products.
- **ReLU and dropout are one mask** in each feed-forward network: ``h * mask`` with ``mask`` 0
  where ReLU or dropout zeroes an element, so the backward pass is one product, not ReLU's
  backward (slow with PyTorch's portable kernels) and dropout's.
- **Fewer passes over the data elsewhere**: each mask becomes once per step the 0 or -inf that
  attention adds to its scores, in the same operation that scales them; a residual's dropout
  and sum are one ``addcmul``; each attention's heads are copied once into the layout its
  batched products read, not by each product, forward and backward; the layers' weights are
  used without the modules' argument checks (``forward`` checked the inputs).

What differs from the reference path: the last bits (products over other numbers of rows),
and dropout masks drawn for the real positions only, so one seed trains close but not
identical weights. ``TransformerConfig(fast_training=False)`` keeps the reference path, as
lesson 7's recipe does to reproduce its checkpoint bit for bit.

Shapes: B batch, S source length, T target length, N real source positions, D d_model.
"""

import math
from functools import partial
from typing import NamedTuple

import torch
import torch.nn.functional as F

from . import _validate
from .data import PAD_ID
from .dropout import kept, scaled_mask
from .masks import target_mask


def applies(model, src, src_mask) -> bool:
    """Whether ``model(src, tgt)`` takes this path: training on a CPU, the default source mask,
    some padding to skip, a source the positional encoding covers (the reference path says
    what is wrong with one too long), and no hooks anywhere in the model
    (``record_attention``, say), which this path would not call."""
    return (
        model.training
        and model.config.fast_training
        and src_mask is None
        and src.device.type == "cpu"
        and src.dim() == 2
        and src.shape[1] <= model.positional.pe.shape[0]
        and not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())
        and bool((src == PAD_ID).any())
    )


def forward(model, src, tgt, tgt_mask=None):
    """``model(src, tgt, None, tgt_mask)``: logits ``(B, T, V)``, skipping source padding."""
    B, S = src.shape
    real, dtype = src != PAD_ID, model.output_projection.weight.dtype  # real: (B, S)
    packing = _Packing(real.flatten().nonzero().squeeze(1), B, S)
    src_mask = _Mask.of(real[:, None, None, :], dtype)  # as padding_mask(src, PAD_ID)
    x = model.src_embed(src[real]) * math.sqrt(model.config.d_model)  # (N, D)
    x = model.positional.dropout(x + model.positional.pe[packing.index % S])
    for layer in model.encoder.layers:
        attention = partial(_self_attention, layer.self_attn, src_mask, packing)
        x = _residual(layer.residual1, x, attention)
        x = _residual(layer.residual2, x, partial(_feed_forward, layer.ffn))
    memory = model.encoder.norm(x)  # (N, D)

    y = model._embed(tgt, model.tgt_embed, "tgt")  # (B, T, D)
    T, H = tgt.shape[1], model.config.n_heads
    if tgt_mask is None:
        tgt_mask = target_mask(tgt, PAD_ID)
    _validate.head_mask("tgt_mask", tgt_mask, (B, H, T, T))
    tgt_mask = _Mask.of(tgt_mask, dtype)
    layers = model.decoder.layers
    # The memory's keys and values for every layer at once: one product, one unpacking.
    memory_kv = packing.unpack(_linear(memory, *_kv(layers))).chunk(2 * len(layers), dim=-1)
    for i, layer in enumerate(layers):
        k, v = map(layer.cross_attn._split, memory_kv[2 * i : 2 * i + 2])  # (B, H, S, Dk)
        y = _residual(
            layer.residual1, y, partial(_decoder_self_attention, layer.self_attn, tgt_mask)
        )
        y = _residual(
            layer.residual2, y, partial(_cross_attention, layer.cross_attn, k, v, src_mask)
        )
        y = _residual(layer.residual3, y, partial(_feed_forward, layer.ffn))
    return model.output_projection(model.decoder.norm(y))


def _residual(sublayer_module, x, sublayer):
    """``sublayer_module(x, sublayer)`` (a :class:`~course_lib.layers.ResidualSublayer`) in
    training, with the dropout and the residual sum as one operation, ``addcmul``."""
    norm, p = sublayer_module.norm, sublayer_module.dropout.p
    y = sublayer(norm(x) if sublayer_module.norm_first else x)
    if p > 0:
        keep, scale = kept(y, p)
        y = torch.addcmul(x, y, keep, value=scale)  # x + y * keep * scale
    else:
        y = x + y
    return y if sublayer_module.norm_first else norm(y)


def _self_attention(attn, mask, packing, x):
    """Encoder self-attention on packed rows: ``(N, D) -> (N, D)``."""
    qkv = packing.unpack(_linear(x, attn.w_q, attn.w_k, attn.w_v))  # (N, 3D) -> (B, S, 3D)
    q, k, v = map(attn._split, qkv.chunk(3, dim=-1))  # (B, H, S, Dk) each
    return attn.w_o(packing.pack(_concat(_attend(attn, q, k, v, mask))))  # (N, D)


def _decoder_self_attention(attn, mask, x):
    """``attn(x, x, x, mask)[0]``: ``(B, T, D) -> (B, T, D)``."""
    q, k, v = map(attn._split, _linear(x, attn.w_q, attn.w_k, attn.w_v).chunk(3, dim=-1))
    return attn.w_o(_concat(_attend(attn, q, k, v, mask)))


def _cross_attention(attn, k, v, mask, query):
    """Cross-attention to keys and values ``(B, H, S, Dk)`` projected beforehand."""
    return attn.w_o(_concat(_attend(attn, attn._split(attn.w_q(query)), k, v, mask)))


def _concat(heads):
    """``(B, H, T, Dk) -> (B, T, D)``."""
    return heads.transpose(1, 2).flatten(2)


def _attend(attn, q, k, v, mask):
    """Scaled dot-product attention, heads split: ``(B, H, T, Dk)`` each -> ``(B, H, T_q, Dk)``."""
    if attn.dropout > 0:
        return _keys_first(q, k, v, mask, attn.dropout)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask.allowed)


class _Packing(NamedTuple):
    """Where the N real source positions are among the B * S."""

    index: torch.Tensor  # (N,), in order
    B: int
    S: int

    def unpack(self, rows):
        """Packed rows ``(N, W)`` -> ``(B, S, W)``, zeros at the padded positions."""
        full = rows.new_zeros(self.B * self.S, rows.shape[1])  # in place: no copy of the zeros
        return full.index_copy_(0, self.index, rows).view(self.B, self.S, -1)

    def pack(self, x):
        """``(B, S, W)`` -> the real positions' rows ``(N, W)``."""
        return x.reshape(self.B * self.S, -1).index_select(0, self.index)


class _Mask(NamedTuple):
    """An attention mask in the forms the attention below uses, made once per forward."""

    allowed: torch.Tensor  # boolean, True = may attend, broadcastable to (B, H, T_q, T_k)
    bias_t: torch.Tensor  # keys first: 0 where allowed, -inf elsewhere, (..., T_k, T_q)
    has_key: torch.Tensor | None  # (..., 1, T_q): False for a query with no key; None if none

    @classmethod
    def of(cls, allowed, dtype):
        allowed_t = allowed.transpose(-2, -1)
        has_key = allowed_t.any(dim=-2, keepdim=True)
        # A query with no allowed key sees every key, then gets zeros: no NaN, as the reference.
        hidden = ~(allowed_t | ~has_key)
        bias_t = hidden.new_zeros(hidden.shape, dtype=dtype).masked_fill_(hidden, float("-inf"))
        return cls(allowed, bias_t, None if has_key.all() else has_key)


def _keys_first(q, k, v, mask, p):
    """:func:`~course_lib.attention_speed.keys_first`, masked by adding 0 or -inf to the
    scores in the same operation that scales them."""
    # The heads are views with the batch and head axes apart in memory, which each batched
    # product copies, again in the backward pass; copied once here, they are read in place.
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    scores_t = torch.add(mask.bias_t, k @ q.transpose(-2, -1), alpha=q.shape[-1] ** -0.5)
    weights_t = scores_t.softmax(dim=-2)  # (B, H, T_k, T_q)
    if mask.has_key is not None:
        weights_t = weights_t * mask.has_key
    return (weights_t * scaled_mask(weights_t, p)).transpose(-2, -1) @ v  # (B, H, T_q, Dk)


def _feed_forward(ffn, x):
    """``ffn(x)`` with ReLU and dropout as one mask (module docstring)."""
    h = ffn.w_1(x)
    mask = torch.gt(h.detach(), 0, out=h.new_empty(h.shape))  # ReLU's 0 or 1
    if ffn.dropout.p > 0:
        mask.mul_(scaled_mask(h, ffn.dropout.p))
    return ffn.w_2(h * mask)


def _kv(layers):
    """Every decoder layer's cross-attention key and value projections, in order."""
    return [linear for layer in layers for linear in (layer.cross_attn.w_k, layer.cross_attn.w_v)]


def _linear(x, *linears):
    """``torch.cat([linear(x) for linear in linears], -1)`` as one matrix product."""
    weight = torch.cat([linear.weight for linear in linears])
    bias = None if linears[0].bias is None else torch.cat([linear.bias for linear in linears])
    return F.linear(x, weight, bias)
