"""Multi-head attention's two CPU speed paths, apart from the paper's version.

:class:`~course_lib.attention.MultiHeadAttention` chooses them where they pay, and says why
there. Each computes what the written-out
:func:`~course_lib.attention.scaled_dot_product_attention` and three ``nn.Linear`` calls
compute; the tests compare them (``tests/test_attention.py``).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from .dropout import dropout
from .masks import masked_softmax


def keys_first(q, k, v, mask, dropout_p: float):
    """The written-out attention's output, with the scores laid out key by query.

    The same numbers, transposed: scores ``(..., T_k, T_q)`` and softmax over the keys, axis -2.
    On a CPU, PyTorch's softmax along rows as short as the lessons' sentences (about 11 numbers)
    is slower than across them, forward and backward, and it is a large part of a training
    step's attention time. The weights are not returned: the explorers use the written-out
    function. Dropout masks are drawn in this layout, so with the same seed a training step
    here and one through the written-out function drop different weights.
    """
    scores_t = k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_k, T_q)
    mask_t = None if mask is None else mask.transpose(-2, -1)
    weights_t = masked_softmax(scores_t, mask_t, dim=-2)
    return dropout(weights_t, dropout_p).transpose(-2, -1) @ v  # (..., T_q, Dv)


def stacked(x, *linears: nn.Linear) -> tuple[torch.Tensor, ...]:
    """``tuple(linear(x) for linear in linears)`` as one matrix product."""
    weight = torch.cat([linear.weight for linear in linears])  # (n * out, in)
    bias = None if linears[0].bias is None else torch.cat([linear.bias for linear in linears])
    return F.linear(x, weight, bias).chunk(len(linears), dim=-1)
