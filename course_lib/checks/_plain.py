"""Plain data: what an answer may be, and how it leaves the sandbox a submission is graded in.

A check compares numbers it computed with numbers the learner's code produced. It can trust
that comparison only if the learner's values are plain: base ``torch.Tensor``s, numpy arrays,
built-in numbers and strings, and lists, tuples and dicts of them. A tensor subclass whose
comparisons always agree, a string with its own ``__eq__`` or an object whose ``__array__``
computes the reference are not answers: :func:`problem` says so, in the notebook and in the
grader alike, so that both give one verdict. Code (functions, classes, modules) is checked by
calling it, and its results must be plain in turn.

At grading, values cross from the sandbox to the grader as bytes: :func:`dumps` inside,
:func:`loads` outside. ``loads`` is ``torch.load(weights_only=True)``, PyTorch's unpickler that
builds nothing but tensors, containers and the classes it is told to allow (here PyTorch's own
layers, for an answer that is an ``nn.TransformerEncoder``); numpy arrays travel as their bytes.
What cannot travel stands for itself as a marker: :class:`NotPlain` with what it was, or, for
code, a handle the grader calls back into the sandbox with (``course_tools.grading``).
"""

import collections
import contextlib
import dataclasses
import functools
import importlib
import io
import types

import numpy as np
import torch
from torch import nn
from torch.nn.modules.linear import NonDynamicallyQuantizableLinear

from ._remote import Learner

MARK = "__course_plain__"  # first item of the tuples that stand for what pickles can't hold
_SCALARS = (type(None), bool, int, float, complex, str, bytes, torch.dtype, torch.device)
_LEAVES = (*_SCALARS, torch.Size)
_TENSORS = (torch.Tensor, nn.Parameter)
_MAPPINGS = (dict, collections.OrderedDict, collections.defaultdict)
# The PyTorch layers an answer may be made of: those of ``nn.TransformerEncoder`` (lesson 7's
# answer) and the plain ones. Each is rebuilt by its own ``__setstate__`` from what the sandbox
# sends, so the list holds only layers whose state is plain numbers and tensors.
_LAYERS = frozenset(
    (nn.Module, nn.Linear, NonDynamicallyQuantizableLinear, nn.LayerNorm, nn.Dropout, nn.ReLU)
    + (nn.GELU, nn.ModuleList, nn.Sequential, nn.Embedding, nn.MultiheadAttention)
    + (nn.TransformerEncoderLayer, nn.TransformerEncoder)
)
_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_state_dict_hooks")
# What ``torch.max(x, dim)`` and its like return.
_NAMED_RESULTS = frozenset(
    c for c in vars(torch.return_types).values() if isinstance(c, type) and issubclass(c, tuple)
)
# What ``loads`` may build besides tensors: the layers, the activations they hold, and a set
# (of a layer's non-persistent buffers: torch < 2.6 asks for it).
_ACTIVATIONS = [getattr(nn.functional, n) for n in ("relu", "gelu", "silu", "tanh", "sigmoid")]
_ALLOWED = [*_LAYERS, *_ACTIVATIONS, *_NAMED_RESULTS, set]
_CODE = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial, type)
PLAIN = "plain data (tensors, arrays, numbers and strings, or lists, tuples and dicts of them)"


class NotPlain:
    """An answer that is not plain data, as the grader received it: what it was."""

    def __init__(self, what: str):
        self.what = what

    def __repr__(self) -> str:
        return f"<not plain data: {self.what}>"


def is_code(x) -> bool:
    """Whether ``x`` is something a check calls: a function, a class or a module (or, at
    grading, the stand-in for one)."""
    return isinstance(x, nn.Module | Learner) or type(x) in _CODE


def problem(x, name: str) -> str | None:
    """Why the answer ``name`` is not plain data or code (None if it is), as a message."""
    if (what := _first_problem(x, depth=0)) is None:  # "" from a sandbox is still a problem
        return None
    return f"`{name}` holds {what}; an answer must be {PLAIN}, or a function."


def _first_problem(x, depth: int) -> str | None:
    kind = type(x)
    if isinstance(x, NotPlain):
        return x.what
    if depth > 20:
        return "containers nested more than 20 deep"
    if kind in _LEAVES or kind in _TENSORS or is_code(x) or _plain_numpy(x):
        return None
    if kind in _MAPPINGS:
        parts = [part for item in x.items() for part in item]
    elif kind in (list, tuple) or _record(kind):
        parts = x
    elif _ours(kind):
        parts = list(_fields(x).values())
    elif isinstance(x, np.ndarray | np.generic):  # np.matrix, np.memmap, an array of objects
        return f"a value of type {kind.__name__}, not a plain numpy array"
    else:
        return f"a value of type {kind.__name__}, {_kind_of(kind)}"
    return next(filter(None, (_first_problem(part, depth + 1) for part in parts)), None)


def _plain_numpy(x) -> bool:
    """A numpy array (not a subclass: ``np.matrix``, ``np.memmap``) or scalar, of numbers."""
    kind = type(x)
    array = kind is np.ndarray or (isinstance(x, np.generic) and kind.__module__ == "numpy")
    return array and not x.dtype.hasobject


def _ours(kind: type) -> bool:
    """A data class of ``course_lib``'s (``EncoderParams``): plain when its fields are."""
    return dataclasses.is_dataclass(kind) and kind.__module__.startswith("course_lib.")


def _fields(x) -> dict:
    return {f.name: getattr(x, f.name) for f in dataclasses.fields(x) if f.init}


def _record(kind: type) -> bool:
    """A named tuple (``torch.max``'s result, ``collections.namedtuple``): a tuple that reads
    and compares as one."""
    methods = ("__eq__", "__ne__", "__getitem__", "__iter__", "__len__", "__hash__")
    same = all(getattr(kind, m) is getattr(tuple, m) for m in methods)
    return kind is not tuple and issubclass(kind, tuple) and same


def _kind_of(kind: type) -> str:
    for base in (torch.Tensor, str, int, float, list, tuple, dict):
        if issubclass(kind, base):
            return f"a subclass of {'torch.' * (base is torch.Tensor)}{base.__name__}"
    return "an object of its own class"


# Crossing out of the sandbox --------------------------------------------------------------------


def encode(x, register, depth: int = 0):
    """``x`` as :func:`dumps` can write it: plain data as it is (tensors detached, on the CPU),
    arrays as their bytes, code as ``register(x)`` (a marker of the caller's), and anything
    else as a :class:`NotPlain` marker. Runs inside the sandbox."""
    kind, part = type(x), functools.partial(encode, register=register, depth=depth + 1)
    if depth > 20:
        return (MARK, "not plain", "containers nested more than 20 deep")
    if kind in _LEAVES or _builtin_module(x):
        return x
    if kind in _TENSORS:
        return x.detach().cpu().clone()
    if is_code(x):
        return register(x)
    if _plain_numpy(x):
        array = np.ascontiguousarray(x)
        shape = array.shape if kind is np.ndarray else None
        return (MARK, "numpy", array.dtype.str, shape, array.tobytes())
    marker = kind is tuple and x and type(x[0]) is str and x[0] == MARK  # not the learner's to make
    if (kind in (list, tuple) and not marker) or _record(kind):
        items = tuple(map(part, x))
        # PyTorch's named results keep their type; any other named tuple crosses as a tuple
        return list(items) if kind is list else kind(items) if kind in _NAMED_RESULTS else items
    if kind in _MAPPINGS:  # an OrderedDict or a defaultdict crosses as a dict
        return {part(k): part(v) for k, v in x.items()}
    if _ours(kind):
        return (MARK, "data class", kind.__module__, kind.__qualname__, part(_fields(x)))
    return (MARK, "not plain", _first_problem(x, depth) or f"a value of type {kind.__name__}")


def _builtin_module(x) -> bool:
    """An ``nn.Module`` of PyTorch's own layers only (``nn.TransformerEncoder``), unhooked."""
    return isinstance(x, nn.Module) and all(
        type(m) in _LAYERS and not any(getattr(m, h, None) for h in _HOOKS) for m in x.modules()
    )


def dumps(x) -> bytes:
    buffer = io.BytesIO()
    torch.save(x, buffer)
    return buffer.getvalue()


def loads(data: bytes, register) -> object:
    """What :func:`dumps` wrote, read without running any code it names: tensors, containers
    and the PyTorch layers an answer may be; markers become arrays, :class:`NotPlain` or
    ``register(...)``. A ValueError if it holds more than a million values."""
    with torch.serialization.safe_globals(_ALLOWED):
        value = torch.load(io.BytesIO(data), weights_only=True)
    return _Reader(register).read(value, depth=0)


class _Reader:
    """Walks what ``torch.load`` built: each shared part once (a pickle can share a list a
    million times in a few bytes), and no more than a million values in all."""

    def __init__(self, register):
        self.register, self.seen, self.left = register, {}, 1_000_000

    def read(self, x, depth: int):
        self.left -= 1
        if self.left < 0 or depth > 50:
            raise ValueError("a reply with more values, or deeper, than any answer")
        if id(x) not in self.seen:
            self.seen[id(x)] = (x, self._read(x, depth))  # x kept alive: its id stays its own
        return self.seen[id(x)][1]

    def _read(self, x, depth: int):
        kind, read = type(x), functools.partial(self.read, depth=depth + 1)
        if kind is tuple and x and type(x[0]) is str and x[0] == MARK:
            return _marker(x, self)
        if kind in (list, tuple):
            return kind(map(read, x))
        if kind in _NAMED_RESULTS:
            return kind(tuple(map(read, x)))
        if kind is dict:
            return {read(k): read(v) for k, v in x.items()}
        if kind in _LEAVES or kind in _TENSORS or _builtin_module(x):
            return x
        return NotPlain(f"a value of type {kind.__name__}")  # not written by encode: refuse it


def _marker(x, reader: _Reader):
    what = x[1]
    if what == "numpy" and len(x) == 5:
        _, _, dtype, shape, data = x
        value = np.frombuffer(data, dtype=np.dtype(dtype)).copy()
        return value.reshape(shape) if shape is not None else value[0]
    if what == "not plain" and len(x) == 3:
        return NotPlain(str(x[2]))
    if what == "data class" and len(x) == 5:
        return _data_class(*x[2:], reader)
    return reader.register(x)


def _data_class(module: str, name: str, fields, reader: _Reader):
    """One of course_lib's data classes, rebuilt from its fields: only a class of course_lib's
    own modules is ever imported for it."""
    kind = None
    if isinstance(module, str) and module.startswith("course_lib.") and type(fields) is dict:
        with contextlib.suppress(ImportError):
            kind = getattr(importlib.import_module(module), str(name), None)
    if not (isinstance(kind, type) and _ours(kind)):
        return NotPlain(f"a value of type {name}")
    try:
        return kind(**{k: reader.read(v, depth=1) for k, v in fields.items()})
    except TypeError as e:
        return NotPlain(f"a {name} that could not be rebuilt ({e})")
