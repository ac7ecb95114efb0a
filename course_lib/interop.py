"""Weights shared between implementations: PyTorch's ``nn.Transformer`` and the numpy project.

With the same weights and dropout off, two implementations compute the same function, which
is how the tests and lessons 7 and 8 use PyTorch as the referee.
"""

import numpy as np
import torch
from torch import nn

from .model import EncoderLayer, Transformer, TransformerConfig


def _copy_attention(ours, theirs: nn.MultiheadAttention) -> None:
    # PyTorch stacks W_q, W_k, W_v into one (3D, D) in_proj_weight.
    for linear, w, b in zip(
        (ours.w_q, ours.w_k, ours.w_v),
        theirs.in_proj_weight.chunk(3),
        theirs.in_proj_bias.chunk(3),
        strict=True,
    ):
        linear.weight.copy_(w)
        linear.bias.copy_(b)
    ours.w_o.weight.copy_(theirs.out_proj.weight)
    ours.w_o.bias.copy_(theirs.out_proj.bias)


def _copy_linear_or_norm(ours: nn.Module, theirs: nn.Module) -> None:
    ours.weight.copy_(theirs.weight)
    ours.bias.copy_(theirs.bias)


def _copy_ffn(ours, layer) -> None:
    _copy_linear_or_norm(ours.w_1, layer.linear1)
    _copy_linear_or_norm(ours.w_2, layer.linear2)


@torch.no_grad()
def copy_weights_from_torch(ours, theirs: nn.Transformer):
    """Copy ``theirs`` (an ``nn.Transformer``) into the encoder and decoder stacks of ``ours``.

    ``theirs`` must be built with ``batch_first=True, activation="relu"`` and the same sizes.
    ``ours`` (a :class:`course_lib.model.Transformer`) needs ``attention_bias=True`` and
    ``final_norm=True``, because ``nn.Transformer`` has attention biases and always ends
    each stack with a LayerNorm, and the same ``norm_first``. ``nn.Transformer`` has no
    embeddings or output layer, so those are left alone.

    Returns:
        ``ours``, for chaining.
    """
    if not isinstance(ours, Transformer):
        raise TypeError(f"ours must be a course_lib.model.Transformer; got {type(ours).__name__}")
    if not isinstance(theirs, nn.Transformer):
        raise TypeError(f"theirs must be a torch.nn.Transformer; got {type(theirs).__name__}")
    c = ours.config
    their_layer = theirs.encoder.layers[0]
    if their_layer.self_attn.in_proj_bias is None or their_layer.norm1.bias is None:
        raise ValueError("theirs must be built with bias=True (the default)")
    if their_layer.norm1.eps != ours.encoder.layers[0].residual1.norm.eps:
        raise ValueError(
            f"theirs must use layer_norm_eps=1e-5 like ours; got {their_layer.norm1.eps}"
        )
    expected = {
        "d_model": (c.d_model, theirs.d_model),
        "n_heads": (c.n_heads, theirs.nhead),
        "d_ff": (c.d_ff, their_layer.linear1.out_features),
        "n_encoder_layers": (c.n_encoder_layers, len(theirs.encoder.layers)),
        "n_decoder_layers": (c.n_decoder_layers, len(theirs.decoder.layers)),
        "norm_first": (c.norm_first, their_layer.norm_first),
        "attention_bias": (c.attention_bias, True),
        "final_norm": (c.final_norm, True),
    }
    for name, (mine, needed) in expected.items():
        if mine != needed:
            raise ValueError(f"ours.config.{name} must be {needed} to match theirs; got {mine}")
    if not theirs.batch_first or their_layer.activation_relu_or_gelu != 1:
        raise ValueError('theirs must be built with batch_first=True and activation="relu"')

    for mine, layer in zip(ours.encoder.layers, theirs.encoder.layers, strict=True):
        _copy_attention(mine.self_attn, layer.self_attn)
        _copy_ffn(mine.ffn, layer)
        for residual, norm in ((mine.residual1, layer.norm1), (mine.residual2, layer.norm2)):
            _copy_linear_or_norm(residual.norm, norm)
    for mine, layer in zip(ours.decoder.layers, theirs.decoder.layers, strict=True):
        _copy_attention(mine.self_attn, layer.self_attn)
        _copy_attention(mine.cross_attn, layer.multihead_attn)
        _copy_ffn(mine.ffn, layer)
        residuals = (mine.residual1, mine.residual2, mine.residual3)
        for residual, norm in zip(residuals, (layer.norm1, layer.norm2, layer.norm3), strict=True):
            _copy_linear_or_norm(residual.norm, norm)
    _copy_linear_or_norm(ours.encoder.norm, theirs.encoder.norm)
    _copy_linear_or_norm(ours.decoder.norm, theirs.decoder.norm)
    return ours


def _tensor(a, dtype: torch.dtype) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)).to(dtype)


@torch.no_grad()
def encoder_layers_from_numpy(p, dtype: torch.dtype = torch.float64):
    """An ``EncoderLayer`` and an ``nn.TransformerEncoderLayer`` holding lesson 8's weights.

    ``p`` is a :class:`course_lib.numpy_encoder.EncoderParams`. The project's layer has one
    head, no output projection (so W^O is the identity) and no attention biases; both layers
    are built that way, with dropout 0, in eval mode, in ``dtype``.

    Returns:
        ``(ours, theirs)``.
    """
    d_model, d_ff = p.w1.shape
    config = TransformerConfig(
        d_model=d_model, n_heads=1, d_ff=d_ff, dropout=0.0, attention_bias=True
    )
    ours = EncoderLayer(config).to(dtype).eval()
    theirs = nn.TransformerEncoderLayer(d_model, 1, d_ff, dropout=0.0, batch_first=True)
    theirs = theirs.to(dtype).eval()
    eye, no_bias = np.eye(d_model), np.zeros(d_model)
    attention = ours.self_attn
    pairs = [(attention.w_q, p.w_q, no_bias), (attention.w_k, p.w_k, no_bias)]
    pairs += [(attention.w_v, p.w_v, no_bias), (attention.w_o, eye, no_bias)]
    pairs += [(theirs.self_attn.out_proj, eye, no_bias)]
    pairs += [(ours.ffn.w_1, p.w1, p.b1), (ours.ffn.w_2, p.w2, p.b2)]
    pairs += [(theirs.linear1, p.w1, p.b1), (theirs.linear2, p.w2, p.b2)]
    pairs += [(ours.residual1.norm, p.gamma1, p.beta1), (theirs.norm1, p.gamma1, p.beta1)]
    pairs += [(ours.residual2.norm, p.gamma2, p.beta2), (theirs.norm2, p.gamma2, p.beta2)]
    for module, w, b in pairs:  # nn.Linear computes x @ weight.T, so its weight is W.T
        module.weight.copy_(_tensor(w.T, dtype))
        module.bias.copy_(_tensor(b, dtype))
    qkv = np.concatenate([p.w_q.T, p.w_k.T, p.w_v.T])  # PyTorch stacks them: (3D, D)
    theirs.self_attn.in_proj_weight.copy_(_tensor(qkv, dtype))
    theirs.self_attn.in_proj_bias.zero_()
    return ours, theirs
