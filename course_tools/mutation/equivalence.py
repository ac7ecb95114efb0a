"""Whether a variant is still a right answer: it gives what the model answer gives.

A check that rejects a variant has done its job only if the variant is wrong; one that
accepts it has failed only if the variant is wrong. Some rewrites change nothing (``x[:, 0::2]``
and ``x[:, ::2]``), or nothing a check could ever see, so each variant that reaches its
check is compared with the model answer:

- a value answer (a number, a tensor, a dict of shapes) directly;
- a function answer by calling the model's and the variant's version on the inputs the
  check called them with (recorded by :class:`Recorder`) and on perturbed copies of those
  (every float tensor or array replaced by seeded random values of its shape and dtype), each
  call on its own deep copy of the inputs with the random generators seeded alike. The
  outputs must agree, and so must the inputs afterwards, for functions that work by changing
  them (a training step updates its model and optimizer).

Values agree within ``rtol=1e-5`` (and ``atol=1e-9``: a larger absolute tolerance would call
an exact 0 from an empty slice equal to a round-off of 1e-7, or a softmax weight of 1e-11
equal to one of 1e-7) with the same type, dtype and shape; counts exactly; a number the same
whether it is a Python number, a NumPy scalar or a tensor or array with no dimensions, and a
tensor the same as an array of its dtype, shape and values, as the checks take them.
Whatever cannot be compared (a module, a class, an arbitrary object) counts as *not*
equivalent: the harness then shows the variant to a person rather than explaining it away.
"""

import copy
import dataclasses
import functools
import math
import random
import time
import types
import warnings

import numpy as np
import torch
from torch import nn

ATOL, RTOL = 1e-9, 1e-5
MAX_RECORDED = 12  # calls kept per function: the check's first few cover its cases
PERTURBED = 3  # recorded calls that also get perturbed copies
SEEDS = (101, 202)  # one perturbed copy per seed


class Recorder:
    """The calls a check makes to one of the answer's functions, as copies of the arguments."""

    def __init__(self):
        self.calls: list[tuple[tuple, dict]] = []

    def wrap(self, fn):
        """``fn`` with the same signature and ``__wrapped__`` (checks look through it), saving
        a copy of each call's arguments before it runs (it may change them)."""

        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            if len(self.calls) < MAX_RECORDED:
                self.calls.append(_copy((args, kwargs)))
            return fn(*args, **kwargs)

        return recorded


def is_function(answer) -> bool:
    """An answer the check calls, whose calls are worth recording."""
    return isinstance(answer, types.FunctionType)


def wrapped(answers, recorders: list[Recorder]) -> list:
    """The answers with their functions wrapped by the matching recorder."""
    return [r.wrap(a) if is_function(a) else a for a, r in zip(answers, recorders, strict=True)]


def equivalent(model: list, variant: list, calls: list[list], deadline: float) -> bool | None:
    """Whether ``variant`` gives what ``model`` gives; None if that cannot be told: the
    deadline came first, or the check never called a function answer (no inputs to try it
    on; "equivalent" on no evidence would hide a wrong variant).

    ``calls[i]`` are the recorded calls of answer i (the model's check run's first, then the
    variant's); value answers have none.
    """
    for m, v, recorded in zip(model, variant, calls, strict=True):
        if is_function(m) != is_function(v):
            return False
        if not is_function(m):
            if not same(m, v):
                return False
            continue
        if not recorded:
            return None
        for args in _inputs(recorded):
            if time.monotonic() > deadline:
                return None
            if not _same_outcome(_outcome(m, args), _outcome(v, args)):
                return False
    return True


def _inputs(recorded: list) -> list:
    """The recorded calls, then perturbed copies of the first few (those that differ)."""
    more = []
    for i, call in enumerate(recorded[:PERTURBED]):
        for seed in SEEDS:
            changed, touched = perturbed(call, np.random.default_rng((seed, i)))
            if touched:
                more.append(changed)
    return [*recorded, *more]


def _outcome(fn, call) -> tuple:
    """``("returned", output, arguments after)`` or ``("raised", exception type name)``."""
    args, kwargs = _copy(call)
    _seed_all(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            output = fn(*args, **kwargs)
    except Exception as e:
        return ("raised", type(e).__name__)
    return ("returned", output, (args, kwargs))


def _same_outcome(a: tuple, b: tuple) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "raised":
        return a[1] == b[1]
    return same(a[1], b[1]) and same(a[2], b[2], effects=True)


def _seed_all(seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def _copy(x):
    """A deep copy, gradients included; the object itself where no copy can be made.

    ``copy.deepcopy`` of a parameter leaves its ``.grad`` behind, yet what a training step
    does depends on it (a forgotten ``zero_grad`` shows only with gradients already there),
    so each parameter with a gradient is copied first, with it, for the rest to reuse.
    """
    memo: dict = {}
    try:
        for tensor in _with_gradients(x, set()):
            twin = copy.deepcopy(tensor, memo)  # registered in memo: shared like the original
            twin.grad = tensor.grad.detach().clone()
        return copy.deepcopy(x, memo)
    except Exception:
        return x


def _with_gradients(x, seen: set) -> list[torch.Tensor]:
    """The tensors with a ``.grad`` in ``x``: in containers, modules, optimizers, schedulers."""
    if id(x) in seen:
        return []
    seen.add(id(x))
    if isinstance(x, torch.Tensor):
        return [x] if x.grad is not None else []
    if isinstance(x, nn.Module):
        parts = list(x.parameters())
    elif isinstance(x, torch.optim.Optimizer):
        parts = [p for group in x.param_groups for p in group["params"]]
    elif isinstance(x, torch.optim.lr_scheduler.LRScheduler):
        parts = [x.optimizer]
    elif isinstance(x, tuple | list):
        parts = list(x)
    elif isinstance(x, dict):
        parts = list(x.values())
    else:
        return []
    return [t for part in parts for t in _with_gradients(part, seen)]


# Comparing -------------------------------------------------------------------------------------


def same(a, b, effects: bool = False) -> bool:
    """Whether two results agree (see the module docstring).

    With ``effects``, ``a`` and ``b`` are arguments after a call: modules, optimizers and
    schedulers are compared by their ``state_dict`` (what a training step changes), and
    objects that cannot be compared are passed over, since only what changed matters there.
    """
    x, y = _scalar(a), _scalar(b)
    if x is not None and y is not None:
        return _same_numbers(x, y)
    if {type(a), type(b)} == {torch.Tensor, np.ndarray}:  # the checks take either
        return _same_tensors(torch.as_tensor(a), torch.as_tensor(b))
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return _same_tensors(a, b)
    if isinstance(a, np.ndarray):
        return _same_arrays(a, b)
    if isinstance(a, bool | str | bytes | type(None) | np.bool_):
        return a == b
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(same(x, y, effects) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k], effects) for k in a)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return all(same(getattr(a, f.name), getattr(b, f.name), effects) for f in _fields(a))
    if isinstance(a, torch.optim.lr_scheduler.LRScheduler):
        return _same_rates(_learning_rates(a), _learning_rates(b))
    if effects and hasattr(a, "state_dict") and not isinstance(a, type):
        return same(a.state_dict(), b.state_dict(), effects)
    return effects and not isinstance(a, nn.Module | type)


def _fields(x) -> list:
    return list(dataclasses.fields(x))


def _same_tensors(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape or a.device != b.device:
        return False
    a, b = a.detach(), b.detach()
    if a.is_floating_point() or a.is_complex():
        return torch.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True)
    return torch.equal(a, b)


def _same_arrays(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))
    return bool(np.array_equal(a, b))


def _scalar(x) -> int | float | complex | None:
    """A number as Python holds it, whether it came as a Python number, a NumPy scalar or a
    tensor or array with no dimensions (checks accept each); None for anything else."""
    if isinstance(x, torch.Tensor | np.ndarray) and x.ndim == 0 and x.dtype not in _BOOLS:
        return x.item()
    if isinstance(x, np.number):
        return x.item()
    if isinstance(x, int | float | complex) and not isinstance(x, bool):
        return x
    return None


_BOOLS = (torch.bool, np.dtype(bool))


def _same_numbers(a, b) -> bool:
    """Counts exactly (2,097,151 is not 2,097,152), other numbers within the tolerance."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, complex) or isinstance(b, complex):
        return abs(a - b) <= ATOL + RTOL * abs(b)
    a, b = float(a), float(b)
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)


def _same_rates(a: list, b: list) -> bool:
    """Learning rates agree relatively: early warm-up rates (1e-7) are below any absolute
    tolerance, and a schedule off by one step there is still another schedule."""
    flat_a, flat_b = np.array(a, dtype=float), np.array(b, dtype=float)
    return flat_a.shape == flat_b.shape and bool(np.allclose(flat_a, flat_b, rtol=RTOL, atol=0))


def _learning_rates(scheduler, steps: int = 10) -> list:
    """What a learning-rate schedule does: its rates over its first steps, on a copy."""
    scheduler = _copy(scheduler)
    rates = [list(scheduler.get_last_lr())]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stepping a schedule before its optimizer
        for _ in range(steps):
            scheduler.step()
            rates.append(list(scheduler.get_last_lr()))
    return rates


# Perturbing ------------------------------------------------------------------------------------


def perturbed(x, rng: np.random.Generator) -> tuple[object, bool]:
    """``x`` with each float tensor and array replaced by random values of its shape and dtype,
    looking inside tuples, lists, dicts and dataclasses; and whether anything was replaced."""
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        values = torch.from_numpy(rng.standard_normal(tuple(x.shape))).to(x.dtype)
        return values.requires_grad_(x.requires_grad and x.is_leaf), True
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return rng.standard_normal(x.shape).astype(x.dtype), True
    if isinstance(x, tuple | list):
        parts = [perturbed(item, rng) for item in x]
        items = [p for p, _ in parts]
        rebuilt = type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
        return rebuilt, any(t for _, t in parts)
    if isinstance(x, dict):
        parts = {k: perturbed(v, rng) for k, v in x.items()}
        return {k: p for k, (p, _) in parts.items()}, any(t for _, t in parts.values())
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        parts = {f.name: perturbed(getattr(x, f.name), rng) for f in _fields(x) if f.init}
        replaced = dataclasses.replace(x, **{k: p for k, (p, _) in parts.items()})
        return replaced, any(t for _, t in parts.values())
    return x, False
