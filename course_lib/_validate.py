"""Argument checks shared by the public functions.

Every error names the argument, what was expected and what arrived, so that a learner
who passes the wrong thing reads the fix in the message instead of in a stack trace.
"""

import torch


def tensor(name: str, x, *, ndim: int | tuple[int, ...] | None = None, floating: bool = False):
    """Raise unless ``x`` is a tensor with the given rank (or one of the ranks)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if x.dim() not in allowed:
            wanted = " or ".join(f"{n}-D" for n in allowed)
            raise ValueError(
                f"{name} must be {wanted}; got {x.dim()}-D with shape {tuple(x.shape)}"
            )
    if floating and not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor; got dtype {x.dtype}")


def positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int; got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be a positive int; got {value}")


def probability(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a float in [0, 1); got {type(value).__name__}")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1); got {value}")


def divisible(d_model: int, n_heads: int) -> None:
    if d_model % n_heads:
        raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")


def last_dim(name: str, x: torch.Tensor, size: int, what: str) -> None:
    if x.shape[-1] != size:
        raise ValueError(
            f"{name} must have last dimension {what} = {size}; got shape {tuple(x.shape)}"
        )


def mask(name: str, m, target: tuple[int, ...], letters: str = "(B, H, T_q, T_k)"):
    """Raise unless ``m`` is None or a boolean tensor that broadcasts to ``target``.

    Any rank, for :func:`~course_lib.attention.scaled_dot_product_attention`, whose leading
    dims are the caller's to choose; masks for multi-head attention go through :func:`head_mask`.
    """
    if m is None:
        return
    _boolean(name, m)
    if not _broadcasts(m.shape, target):
        raise ValueError(
            f"{name} must broadcast to {letters} = {tuple(target)}; got {tuple(m.shape)}"
        )


def head_mask(name: str, m, target: tuple[int, int, int, int]):
    """Raise unless ``m`` is None or a boolean mask that means one thing for (B, H, T_q, T_k).

    Two shapes qualify: 2-D ``(T_q, T_k)``, shared by every sequence and head, and 4-D
    ``(B, H, T_q, T_k)``, each axis its full size or 1. Broadcasting lines shapes up from the
    right, so a 3-D ``(B, 1, S)`` or ``(B, T, T)`` mask would land on ``(H, T_q, T_k)``: when
    B equals H it passes and masks heads instead of sequences, with no error. Hence no 3-D.
    """
    if m is None:
        return
    _boolean(name, m)
    B, H, T_q, T_k = target
    shape = tuple(m.shape)
    accepted = (
        f"Accepted: 2-D (T_q, T_k) = ({T_q}, {T_k}), shared by every sequence and head, or "
        f"4-D (B, H, T_q, T_k) = {tuple(target)}, each axis its full size or 1."
    )
    if m.dim() == 3:
        with_heads = (shape[0], 1, *shape[1:])
        raise ValueError(
            f"{name} must be 2-D or 4-D; got 3-D with shape {shape}, which is ambiguous: "
            "broadcasting reads it from the right as (H, T_q, T_k), so its first axis would "
            f"count heads, not sequences. {accepted} For a (B, 1, S) padding mask or a "
            f"(B, T, T) mask, add the head axis: {name}[:, None] (or {name}.unsqueeze(1)) "
            f"gives {with_heads}."
        )
    if m.dim() not in (2, 4):
        raise ValueError(
            f"{name} must be 2-D or 4-D; got {m.dim()}-D with shape {shape}. {accepted}"
        )
    if not _broadcasts(m.shape, target):
        raise ValueError(
            f"{name} must broadcast to (B, H, T_q, T_k) = {tuple(target)}; got {shape}. "
            f"{accepted}{_padding_hint(name, shape, B, T_k)}"
        )


def _padding_hint(name: str, shape: tuple[int, ...], B: int, T_k: int) -> str:
    # A (B, T_k) padding mask passed as it is: a 2-D mask is read as (T_q, T_k).
    if shape != (B, T_k):
        return ""
    return (
        " A 2-D mask is read as (T_q, T_k); for a (B, T_k) padding mask use "
        f"{name}[:, None, None, :], which gives {(B, 1, 1, T_k)}, "
        "or course_lib.masks.padding_mask(tokens, pad_id)."
    )


def _boolean(name: str, m) -> None:
    if not isinstance(m, torch.Tensor):
        raise TypeError(f"{name} must be a boolean torch.Tensor or None; got {type(m).__name__}")
    if m.dtype != torch.bool:
        raise TypeError(
            f"{name} must have dtype torch.bool (True = may attend); got {m.dtype}. "
            f"Convert a 0/1 mask with {name}.bool()"
        )


def _broadcasts(shape, target) -> bool:
    """True if ``shape`` broadcasts to exactly ``target`` (not merely with it)."""
    try:
        return torch.broadcast_shapes(shape, target) == torch.Size(target)
    except RuntimeError:
        return False


def token_ids(name: str, x) -> None:
    """Raise unless ``x`` is a 2-D ``(B, T)`` tensor of integer token ids."""
    tensor(name, x, ndim=2)
    if x.is_floating_point() or x.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer token ids; got dtype {x.dtype}")
