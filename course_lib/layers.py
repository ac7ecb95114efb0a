"""The pieces that wrap attention into a Transformer block (paper §3.1, §3.3).

- :class:`PositionwiseFeedForward`: FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, Eq. 2.
- :class:`ResidualSublayer`: x + Dropout(Sublayer(x)) with a LayerNorm after it (post-norm,
  the paper) or before the sub-layer (pre-norm, most modern models).
- :class:`LayerNorm`: layer normalisation written out for teaching; it equals ``nn.LayerNorm``.

Shapes: B batch, T sequence length, D d_model, F d_ff.
"""

import torch
from torch import nn

from . import _validate
from .dropout import Dropout


class PositionwiseFeedForward(nn.Module):
    """Expand to ``d_ff``, ReLU, compress back to ``d_model``; the same weights at every position.

    Shape:
        ``(B, T, D)`` -> ``(B, T, D)``.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        _validate.positive_int("d_model", d_model)
        _validate.positive_int("d_ff", d_ff)
        _validate.probability("dropout", dropout)
        self.w_1 = nn.Linear(d_model, d_ff, bias=bias)
        self.w_2 = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = Dropout(dropout)  # between the activation and W_2, as nn.Transformer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _validate.tensor("x", x, floating=True)
        _validate.last_dim("x", x, self.w_1.in_features, "d_model")
        return self.w_2(
            self.dropout(torch.relu(self.w_1(x)))
        )  # (B, T, D) -> (B, T, F) -> (B, T, D)


class ResidualSublayer(nn.Module):
    """Residual connection and layer norm around one sub-layer (paper §3.1, §5.4).

    Post-norm (``norm_first=False``, the paper): ``LayerNorm(x + Dropout(sublayer(x)))``.
    Pre-norm (``norm_first=True``): ``x + Dropout(sublayer(LayerNorm(x)))``.

    ``forward(x, sublayer)`` calls ``sublayer`` on a ``(B, T, D)`` tensor; it must return a
    tensor of the shape of ``x``, and so does ``forward``.
    """

    def __init__(self, d_model: int, dropout: float = 0.0, norm_first: bool = False):
        super().__init__()
        _validate.probability("dropout", dropout)
        self.norm = nn.LayerNorm(d_model)  # the fused kernel; LayerNorm below is its twin
        self.dropout = Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor, sublayer):
        _validate.tensor("x", x, floating=True)
        _validate.last_dim("x", x, self.norm.normalized_shape[0], "d_model")
        y = sublayer(self.norm(x) if self.norm_first else x)
        # x + y would broadcast a (B, 1, D) or (T, D) output over x without an error.
        if not isinstance(y, torch.Tensor) or y.shape != x.shape:
            got = tuple(y.shape) if isinstance(y, torch.Tensor) else type(y).__name__
            raise ValueError(
                f"sublayer must return a tensor of x's shape {tuple(x.shape)} (the residual "
                f"adds the two); got {got}"
            )
        y = x + self.dropout(y)
        return y if self.norm_first else self.norm(y)


class LayerNorm(nn.Module):
    """Layer normalisation over the feature axis (Ba et al., 2016), from scratch.

    Each position's vector is shifted to mean 0 and scaled to variance 1 using its own
    statistics (population variance), then scaled by ``gamma`` and shifted by ``beta``.
    Unlike batch norm, nothing is shared across the batch.

    Shape:
        ``(..., D)`` -> ``(..., D)``.
    """

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        _validate.positive_int("d_model", d_model)
        if not eps > 0:
            raise ValueError(f"eps must be a small positive number; got {eps}")
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _validate.tensor("x", x, floating=True)
        _validate.last_dim("x", x, self.gamma.numel(), "d_model")
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta
