"""An audit that a check leaves the learner's session as it found it.

``fingerprint`` records, as plain comparable values, everything a check could change: the
global random states of torch, numpy and ``random``, the default dtype, the thread count,
grad mode, and every tensor, array and module among the answers (values, ``requires_grad``,
``.grad``, each parameter and buffer, each submodule's ``training`` flag). ``changes`` names
what differs between two fingerprints. It shares no code with the guard in
``course_lib/checks/_purity.py`` on purpose: a bug there must not hide itself here.

``tests/conftest.py`` wraps every ``Exercise.run`` of the ``test_check*`` modules with
``audited``, so each check call of those tests is audited.
"""

import functools
import random

import numpy as np
import pytest
import torch
from torch import nn

_DEPTH = 3  # how deep to look into tuples, lists and dicts of answers


def fingerprint(answers, names=()) -> dict[str, object]:
    """What a check could change, keyed by a readable description of each thing."""
    algorithm, keys, *position = np.random.get_state()
    found = {
        "torch's global RNG": torch.get_rng_state().numpy().tobytes(),
        "numpy's global RNG": (algorithm, keys.tobytes(), *position),
        "Python's random RNG": random.getstate(),
        "the default dtype": torch.get_default_dtype(),
        "the thread count": torch.get_num_threads(),
        "grad mode": torch.is_grad_enabled(),
    }
    for i, answer in enumerate(answers):
        _describe(f"`{names[i]}`" if i < len(names) else f"answer {i + 1}", answer, found, 0)
    return found


def changes(before: dict, after: dict) -> list[str]:
    """The descriptions whose values differ between two fingerprints."""
    missing = object()
    return [k for k in {**before, **after} if before.get(k, missing) != after.get(k, missing)]


def audited(run):
    """``Exercise.run`` that fails the test if the check changed anything it fingerprints."""

    @functools.wraps(run)
    def audited_run(exercise, *answers, **options):
        before = fingerprint(answers, exercise.names)
        result = run(exercise, *answers, **options)
        changed = changes(before, fingerprint(answers, exercise.names))
        if changed:  # pytest.fail is a BaseException: no `except Exception` in a check hides it
            pytest.fail(
                f"check {exercise.id!r} did not leave the learner's state alone; it changed "
                + "; ".join(changed),
                pytrace=False,
            )
        return result

    return audited_run


def _describe(name, x, found, depth):
    if isinstance(x, torch.Tensor):
        _tensor(name, x, found)
    elif isinstance(x, np.ndarray):
        found[f"{name}: values"] = (x.dtype.str, x.shape, x.tobytes())
    elif isinstance(x, nn.Module):
        _module(name, x, found)
    elif depth < _DEPTH and isinstance(x, (tuple, list, dict)):
        items = x.items() if isinstance(x, dict) else enumerate(x)
        for key, item in items:
            _describe(f"{name}[{key!r}]", item, found, depth + 1)


def _tensor(name, t, found):
    found[f"{name}: values"] = _bits(t)
    found[f"{name}: requires_grad"] = t.requires_grad
    if t.is_leaf:  # reading .grad of a non-leaf only warns: it is never set
        found[f"{name}: .grad"] = None if t.grad is None else _bits(t.grad)


def _module(name, m, found):
    for sub_name, sub in m.named_modules():
        found[f"{name}{'.' if sub_name else ''}{sub_name}: training"] = sub.training
    for kind, named in (("parameter", m.named_parameters()), ("buffer", m.named_buffers())):
        for t_name, t in named:
            found[f"{name}.{t_name}: which {kind} object"] = id(t)
            _tensor(f"{name}.{t_name}", t, found)


def _bits(t: torch.Tensor):
    """dtype, shape and the exact bytes: NaN equals NaN here, and -0.0 differs from 0.0."""
    if t.layout != torch.strided:  # sparse and other layouts: compared as dense
        t = t.to_dense()
    flat = t.detach().cpu().contiguous().reshape(-1)
    return t.dtype, tuple(t.shape), flat.view(torch.uint8).numpy().tobytes()
