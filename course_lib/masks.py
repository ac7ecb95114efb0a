"""Attention masks.

One convention everywhere in this course: a boolean mask where ``True`` means *may attend*
(the same polarity as ``torch.nn.functional.scaled_dot_product_attention``). Masks
broadcast to the score shape ``(B, H, T_q, T_k)``. Beware: ``nn.MultiheadAttention`` and
``nn.Transformer`` use the opposite polarity (``True`` = blocked); pass ``~mask`` to them.

Shapes: B batch, T sequence length, H heads.
"""

import torch

from . import _validate


def causal_mask(T: int, device=None) -> torch.Tensor:
    """Lower-triangular mask: position t may attend to positions 0..t (paper §3.2.3).

    Returns:
        ``(T, T)`` boolean tensor, ``True`` on and below the diagonal.
    """
    _validate.positive_int("T", T)
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def padding_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Mask that hides padding keys.

    Args:
        tokens: ``(B, T)`` integer token ids.
        pad_id: the id used for padding.

    Returns:
        ``(B, 1, 1, T)`` boolean tensor, ``True`` where the key is a real token; it
        broadcasts over heads and query positions.
    """
    _validate.token_ids("tokens", tokens)
    if isinstance(pad_id, bool) or not isinstance(pad_id, int):
        raise TypeError(f"pad_id must be an int; got {type(pad_id).__name__}")
    return (tokens != pad_id)[:, None, None, :]


def target_mask(tgt: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Decoder self-attention mask: causal *and* not padding, ``(B, 1, T, T)``."""
    return padding_mask(tgt, pad_id) & causal_mask(tgt.shape[1], device=tgt.device)


def masked_softmax(scores, mask, dim: int):
    """Softmax over the keys' axis ``dim``, each query seeing only the keys ``mask`` allows."""
    if mask is None:
        return scores.softmax(dim=dim)
    # A query with no allowed key would get all -inf, and softmax would turn it into NaN.
    # Let such queries see everything, then zero them: zeros out, no NaN in either pass.
    has_key = mask.any(dim=dim, keepdim=True)
    weights = scores.masked_fill(~(mask | ~has_key), float("-inf")).softmax(dim=dim)
    return weights if has_key.all() else weights * has_key
