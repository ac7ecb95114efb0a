"""Sinusoidal positional encoding (paper §3.5).

PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))

Low dimension indices oscillate fastest (wavelength 2π at i = 0); the wavelengths grow
geometrically up to 10000 · 2π at the last pair.

Shapes: B batch, T sequence length, D d_model.
"""

import math

import torch
from torch import nn

from . import _validate
from .dropout import Dropout


def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """The table of encodings for positions ``0 .. max_len - 1``.

    Args:
        max_len: number of positions.
        d_model: encoding width; must be even, since dimensions come in (sin, cos) pairs.

    Returns:
        ``(max_len, d_model)`` float32 tensor.
    """
    _validate.positive_int("max_len", max_len)
    _validate.positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(
            f"d_model must be even: dimensions come in (sin, cos) pairs; got {d_model}"
        )
    position = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    # ω_i = 10000^(-2i / d_model), computed in log space; float64 keeps the table exact to float32.
    omega = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model)
    )
    angle = position * omega  # (max_len, D/2)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.float()


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal table to its input, then applies dropout (paper §5.4).

    The table is a buffer, not a parameter: it has no trainable weights.

    Shape:
        x ``(B, T, D)`` with ``T <= max_len`` -> ``(B, T, D)``.
    """

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0):
        super().__init__()
        _validate.probability("dropout", dropout)
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model), persistent=False)
        self.dropout = Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _validate.tensor("x", x, ndim=3, floating=True)
        max_len, d_model = self.pe.shape
        _validate.last_dim("x", x, d_model, "d_model")
        if x.shape[1] > max_len:
            raise ValueError(
                f"x has {x.shape[1]} positions but the table holds max_len = {max_len}; "
                "build PositionalEncoding with a larger max_len"
            )
        return self.dropout(x + self.pe[: x.shape[1]])
