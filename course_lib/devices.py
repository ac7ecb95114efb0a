"""Where a model computes: the CPU, an NVIDIA GPU ("cuda") or Apple silicon ("mps").

course_lib follows its inputs: a function given a model or tensors makes every new tensor on
their device, so a model moved with ``model.to("cuda")`` translates, decodes and draws its
attention maps without any other change. The lessons run on the CPU unless told otherwise,
because only there does a lesson give the same bits on every run of the same machine.
"""

import torch
from torch import nn

KINDS = ("cpu", "cuda", "mps")


def available() -> list[str]:
    """The kinds of device this machine can compute on: ``"cpu"`` first, then the others."""
    found = ["cpu"]
    if torch.cuda.is_available():
        found.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    return found


def choose(device="cpu") -> torch.device:
    """``device`` as a ``torch.device``, refused with a clear message if this machine lacks it.

    Args:
        device: ``"cpu"``, ``"cuda"`` (or ``"cuda:1"``), ``"mps"``, or a ``torch.device``.
    """
    if not isinstance(device, (str, torch.device)):
        raise TypeError(
            f'device must be a str such as "cpu" or "cuda", or a torch.device; '
            f"got {type(device).__name__}"
        )
    try:
        chosen = torch.device(device)
    except RuntimeError:
        raise ValueError(f"device must be one of {KINDS}; got {device!r}") from None
    if chosen.type not in available():
        raise ValueError(
            f"device {str(chosen)!r} is not available on this machine; it has {available()}"
        )
    return chosen


def device_of(x) -> torch.device:
    """The device of a tensor, or of a module's first parameter or buffer (CPU if it has none)."""
    if isinstance(x, torch.Tensor):
        return x.device
    if isinstance(x, nn.Module):
        for tensor in (*x.parameters(), *x.buffers()):
            return tensor.device
        return torch.device("cpu")
    raise TypeError(f"x must be a tensor or an nn.Module; got {type(x).__name__}")


def synchronize(device) -> None:
    """Wait until ``device`` has finished its queued work (GPUs run asynchronously): call it
    before reading a clock. Nothing to wait for on the CPU."""
    kind = torch.device(device).type
    if kind == "cuda":
        torch.cuda.synchronize(device)
    elif kind == "mps":
        torch.mps.synchronize()
