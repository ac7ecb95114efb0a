"""A check leaves the learner's session as it found it.

Checks run in the learner's kernel, between cells whose results must not depend on whether a
check ran. Yet checks build models (drawing from torch's global random generator), seed that
generator for a reproducible reference, and call the learner's functions, which may draw random
numbers, change the default dtype or grad mode, or write into their inputs. So ``Exercise.run``
runs every ``verify`` inside :func:`untouched`, which records what a check could change and
puts it back, whatever the outcome.

The learner's tensors, arrays and modules are handed to ``verify`` as they are: a copy would
change what a check sees (object identity, the autograd graph behind a tensor, modules that
``copy.deepcopy`` refuses). Their state is recorded instead and written back only where it
changed: writing bumps a tensor's version counter and would break a ``backward()`` the learner
has yet to call.
"""

import random
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np
import torch
from torch import nn
from torch.nn.parameter import is_lazy

_DEPTH = 3  # answers inside tuples, lists and dicts are protected down to this depth


# What a call may read and change besides its arguments, each as (read it, put it back): the
# global random states, the default dtype and grad mode. A check puts them back afterwards
# (``_purity.untouched``); at grading they travel with each call into the sandbox, and back,
# where a reply's tuples may have come back as lists.
_SESSION = (
    (torch.get_rng_state, torch.set_rng_state),
    (np.random.get_state, lambda state: np.random.set_state(tuple(state))),
    (random.getstate, lambda state: random.setstate(_tuples(state))),
    (torch.get_default_dtype, torch.set_default_dtype),
    (torch.is_grad_enabled, torch.set_grad_enabled),
)


def session_state() -> list:
    """The values of :data:`_SESSION`, in its order."""
    return [read() for read, _ in _SESSION]


def set_session_state(state) -> None:
    for (_, put_back), value in zip(_SESSION, state, strict=True):
        put_back(value)


def _tuples(x):
    return tuple(_tuples(i) for i in x) if isinstance(x, list | tuple) else x


@contextmanager
def untouched(answers):
    """Restore the session's state (random states, dtype, grad mode), the thread count and
    the answers."""
    state, threads, restores = session_state(), torch.get_num_threads(), _record(answers)
    try:
        yield
    finally:
        set_session_state(state)
        if torch.get_num_threads() != threads:  # setting it, even unchanged, costs time
            torch.set_num_threads(threads)
        for restore in restores:
            restore()


def _record(answers, depth: int = 0, seen: set | None = None) -> list[Callable[[], None]]:
    """One function per tensor, array and module among the answers, putting its state back."""
    restores, seen = [], set() if seen is None else seen
    for x in answers:
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, torch.Tensor):  # dense, with data: not sparse, meta or lazy
            if x.layout == torch.strided and not x.is_meta and not is_lazy(x):
                restores.append(_tensor(x))
        elif isinstance(x, np.ndarray) and x.dtype.kind in "biufc":  # numbers, not objects
            restores.append(_array(x))
        elif isinstance(x, nn.Module):
            restores += [_module(x), *_record([*x.parameters(), *x.buffers()], depth, seen)]
        elif depth < _DEPTH and isinstance(x, tuple | list | dict):
            restores += _record(x.values() if isinstance(x, dict) else x, depth + 1, seen)
    return restores


def _tensor(t: torch.Tensor) -> Callable[[], None]:
    """Its values; for a leaf also its ``.grad`` (which object, and its values) and flag."""
    values, requires_grad = t.detach().clone(), t.requires_grad
    grad = t.grad if t.is_leaf else None  # a non-leaf keeps no .grad
    restore_grad = _tensor(grad) if grad is not None else lambda: None

    def restore():
        with torch.no_grad():
            if t.dtype != values.dtype or t.shape != values.shape:
                t.data = values  # module.double(), resize_(): the tensor now holds other data
            elif not torch.equal(t, values):  # to which NaN is not NaN: ask allclose too
                floats = t.is_floating_point()
                if not (floats and torch.allclose(t, values, rtol=0, atol=0, equal_nan=True)):
                    t.copy_(values)
        if t.is_leaf:
            restore_grad()  # before reattaching: its dtype must match the tensor's
            if t.grad is not grad:  # a backward() made one, or zero_grad(set_to_none) dropped it
                t.grad = grad
            if t.requires_grad != requires_grad:
                t.requires_grad_(requires_grad)

    return restore


def _array(a: np.ndarray) -> Callable[[], None]:
    values = a.copy()

    def restore():  # reshaped or reinterpreted in place: rare, and no safe way back
        same = a.shape == values.shape and a.dtype == values.dtype
        if same and not np.array_equal(a, values, equal_nan=a.dtype.kind in "fc"):
            np.copyto(a, values)

    return restore


def _module(m: nn.Module) -> Callable[[], None]:
    """Which parameter and buffer objects each submodule holds (a check may swap one), and
    its mode; their values are restored as tensors."""
    held = [(sub, dict(sub._parameters), dict(sub._buffers), sub.training) for sub in m.modules()]

    def restore():
        for sub, parameters, buffers, training in held:
            sub._parameters.update(parameters)
            sub._buffers.update(buffers)
            sub.training = training  # not sub.train(): it recurses and may be overridden

    return restore
