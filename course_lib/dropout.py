"""Dropout (paper §5.4) with a random mask that is cheap to draw on a CPU.

During training, dropout zeroes each element with probability ``p`` and scales the survivors
by ``1 / (1 - p)``, so that the expected value of every element is unchanged; at evaluation it
does nothing. The paper applies it, with ``p`` = 0.1, to each sub-layer's output, to the sums
of embeddings and positional encodings and (as ``nn.Transformer`` does) to the attention
weights and inside the feed-forward network.

Why not ``nn.Dropout``: on a CPU, PyTorch draws one random number per element from a serial
generator. For a small model that costs about as much as all its matrix products: in lesson 7's
translator it was a fifth of each training step (``benchmarks/profile_step.py``). A 64-bit
random integer holds four 16-bit ones, so :func:`dropout` draws a quarter as many numbers and
keeps an element when its 16 bits reach ``p`` · 65536. The same mathematics up to rounding:
``p`` is rounded to a multiple of 1/65536 (0.1 becomes 0.100006; at most 65535/65536) and the
survivors are scaled by the reciprocal of the kept fraction, in ``x``'s dtype. The mask comes
from the global generator, so ``torch.manual_seed`` fixes it.

On a GPU the trick has nothing to save: PyTorch's own dropout draws its mask in parallel, in one
kernel where the code below launches several, so a tensor on a GPU goes to ``F.dropout``.
"""

import torch
import torch.nn.functional as F
from torch import nn

from . import _validate

_LEVELS = 2**16  # one 16-bit number decides each element


def dropout(x: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """Zero each element of ``x`` with probability ``p`` and scale the rest; ``x`` itself when
    not ``training`` or when ``p`` is 0. Any shape; differentiable."""
    _validate.tensor("x", x, floating=True)
    _validate.probability("p", p)
    if not training or p == 0:
        return x
    if x.device.type != "cpu":
        return F.dropout(x, p, training=True)
    return x * scaled_mask(x, p)


def scaled_mask(x: torch.Tensor, p: float) -> torch.Tensor:
    """The mask :func:`dropout` multiplies a CPU tensor ``x`` by: each element 0 with probability
    ``p``, else the reciprocal of the kept fraction; ``x``'s shape and dtype, no gradient."""
    keep, scale = kept(x, p)
    return keep.mul_(scale)


def kept(x: torch.Tensor, p: float) -> tuple[torch.Tensor, float]:
    """:func:`scaled_mask` in two parts: 1 where an element is kept, else 0, and the scale of the
    kept ones, ``1 / (1 - p)`` with ``p`` rounded as above."""
    n = x.numel()
    words = torch.empty((n + 3) // 4, dtype=torch.int64, device=x.device)
    words.random_(-(2**63), None)  # from the int64 minimum to its maximum: all 64 bits random
    bits = words.view(torch.int16)[:n].view(x.shape)  # four signed 16-bit numbers per word
    dropped = min(round(p * _LEVELS), _LEVELS - 1)  # how many of the 65,536 values drop one
    # Compared straight into x's dtype: a bool mask converted afterwards costs six times more.
    keep = torch.ge(bits, dropped - _LEVELS // 2, out=x.new_empty(x.shape))
    return keep, _LEVELS / (_LEVELS - dropped)


class Dropout(nn.Module):
    """:func:`dropout` as a module: active in training mode, the identity in eval mode.

    Used where ``nn.Dropout`` would be; ``p`` is the drop probability, as there.
    """

    def __init__(self, p: float = 0.1):
        super().__init__()
        _validate.probability("p", p)
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"
