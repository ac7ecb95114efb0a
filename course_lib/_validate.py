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
    """Raise unless ``m`` is None or a boolean tensor that broadcasts to ``target``."""
    if m is None:
        return
    if not isinstance(m, torch.Tensor):
        raise TypeError(f"{name} must be a boolean torch.Tensor or None; got {type(m).__name__}")
    if m.dtype != torch.bool:
        raise TypeError(
            f"{name} must have dtype torch.bool (True = may attend); got {m.dtype}. "
            f"Convert a 0/1 mask with {name}.bool()"
        )
    try:
        shape = torch.broadcast_shapes(m.shape, target)
    except RuntimeError:
        shape = None
    if shape != torch.Size(target):
        raise ValueError(
            f"{name} must broadcast to {letters} = {tuple(target)}; got {tuple(m.shape)}"
        )


def token_ids(name: str, x) -> None:
    """Raise unless ``x`` is a 2-D ``(B, T)`` tensor of integer token ids."""
    tensor(name, x, ndim=2)
    if x.is_floating_point() or x.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer token ids; got dtype {x.dtype}")
