"""A check leaves the learner's session as it found it.

Checks run in the learner's kernel, between cells whose results must not depend on whether
a check ran. Yet checks build models (whose initialisation draws from torch's global random
generator), seed that generator for a reproducible reference, and call the learner's
functions, which may draw random numbers, change the default dtype or grad mode, or write
into their inputs. Rather than trust every ``verify`` to tidy up after itself,
``Exercise.run`` runs them all inside :func:`untouched`, which records what a check could
change and puts it back, whatever the outcome.

The learner's tensors, arrays and modules are handed to ``verify`` as they are, not as
copies: a copy would change what a check sees (object identity, the autograd graph behind a
tensor, modules that ``copy.deepcopy`` refuses). Their state is recorded instead and written
back only where it changed, since writing bumps a tensor's version counter and would break
a ``backward()`` the learner has yet to call.
"""

import random
from collections.abc import Callable
from contextlib import contextmanager
from functools import partial

import numpy as np
import torch
from torch import nn
from torch.nn.parameter import is_lazy

_DEPTH = 3  # answers inside tuples, lists and dicts are protected down to this depth


@contextmanager
def untouched(answers):
    """Restore the global random states, dtype, thread count, grad mode and the answers."""
    rng = torch.get_rng_state(), np.random.get_state(), random.getstate()
    dtype, threads = torch.get_default_dtype(), torch.get_num_threads()
    grad = torch.is_grad_enabled()
    restores = _record(answers)
    try:
        yield
    finally:
        torch.set_rng_state(rng[0])
        np.random.set_state(rng[1])
        random.setstate(rng[2])
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)
        if torch.get_num_threads() != threads:  # setting it, even unchanged, costs time
            torch.set_num_threads(threads)
        for restore in restores:
            restore()


def _record(answers) -> list[Callable[[], None]]:
    """One function per tensor, array and module among the answers, putting its state back."""
    restores, seen = [], set()

    def visit(x, depth):
        if id(x) in seen:
            return
        seen.add(id(x))
        if isinstance(x, torch.Tensor):
            if _has_values(x):
                restores.append(_tensor(x))
        elif isinstance(x, np.ndarray) and x.dtype.kind in "biufc":  # numbers, not objects
            restores.append(_array(x))
        elif isinstance(x, nn.Module):
            restores.extend(_module(x, seen))
        elif depth < _DEPTH and isinstance(x, (tuple, list, dict)):
            for item in x.values() if isinstance(x, dict) else x:
                visit(item, depth + 1)

    for answer in answers:
        visit(answer, 0)
    return restores


def _has_values(t: torch.Tensor) -> bool:
    """Dense tensors with data: sparse, meta and lazy (uninitialised) ones are left alone."""
    return t.layout == torch.strided and not t.is_meta and not is_lazy(t)


def _tensor(t: torch.Tensor) -> Callable[[], None]:
    values, requires_grad = t.detach().clone(), t.requires_grad
    grad = t.grad if t.is_leaf else None  # a non-leaf keeps no .grad
    grad_values = None if grad is None else grad.detach().clone()

    def restore():
        _put_back(t, values)
        if t.is_leaf:
            if grad is not None:  # before reattaching: its dtype must match the tensor's
                _put_back(grad, grad_values)
            if t.grad is not grad:  # a backward() made one, or zero_grad(set_to_none) dropped it
                t.grad = grad
            if t.requires_grad != requires_grad:
                t.requires_grad_(requires_grad)

    return restore


def _put_back(t: torch.Tensor, values: torch.Tensor) -> None:
    """Write ``values`` into ``t``, only if its values, dtype or shape changed."""
    with torch.no_grad():
        if t.dtype == values.dtype and t.shape == values.shape:
            if torch.equal(t, values) or (
                t.is_floating_point() and torch.allclose(t, values, rtol=0, atol=0, equal_nan=True)
            ):
                return
            t.copy_(values)
        else:  # module.double(), resize_(): the tensor now holds other data
            t.data = values


def _array(a: np.ndarray) -> Callable[[], None]:
    values = a.copy()

    def restore():
        if a.shape != values.shape or a.dtype != values.dtype:
            return  # reshaped or reinterpreted in place: rare, and no safe way back
        if not np.array_equal(a, values, equal_nan=a.dtype.kind in "fc"):
            np.copyto(a, values)

    return restore


def _module(m: nn.Module, seen: set) -> list[Callable[[], None]]:
    """A module's parameters and buffers (the objects and their values) and its modes."""
    restores = []
    for sub in m.modules():
        for table in (sub._parameters, sub._buffers):
            for name, t in table.items():
                if t is not None:
                    restores.append(partial(table.__setitem__, name, t))  # if a check swapped it
                    if id(t) not in seen and _has_values(t):
                        seen.add(id(t))
                        restores.append(_tensor(t))
    modes = [(sub, sub.training) for sub in m.modules()]

    def restore_modes():
        for sub, training in modes:  # not sub.train(): it recurses and may be overridden
            sub.training = training

    return [*restores, restore_modes]
