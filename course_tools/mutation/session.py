"""The lesson's kernel, in process: an IPython shell whose state can be saved and put back.

An in-process ``InteractiveShell`` runs cells as a notebook would (magics, ``display``,
the last expression shown) without a kernel to talk to, so a child forked from it holds the
whole lesson so far. Before an answer cell, :meth:`Session.snapshot` saves what a cell can
change without touching an object in place: the names it binds, the random generators, the
default dtype and grad mode. A variant runs after :meth:`Session.restore`, so it starts where
the model answer started, draws the same random numbers, and cannot lean on a name that only
the model answer defined.
"""

import contextlib
import copy
import os
import random
import sys
import types
from dataclasses import dataclass

import numpy as np


@dataclass
class State:
    names: dict
    rng: tuple
    dtype: object
    grad: bool


class Session:
    """An IPython shell running one lesson's cells in ``workdir``, their output discarded.

    The shell is the process's one ``InteractiveShell``: one session per process.
    """

    def __init__(self, workdir=None):
        os.environ["MPLBACKEND"] = "Agg"  # figures are drawn, never shown
        import torch
        from IPython.core.interactiveshell import InteractiveShell

        torch.set_num_threads(1)  # the forked children inherit it; two lessons share 2 cores
        if workdir is not None:  # notebooks run beside their files, as `make solutions` runs them
            os.chdir(workdir)
            sys.path.insert(0, str(workdir))
        from ipykernel.compiler import XCachingCompiler
        from traitlets.config import Config

        config = Config()
        config.HistoryManager.hist_file = ":memory:"  # no history file, no thread saving it
        self.shell = InteractiveShell.instance(config=config)
        # Cells get file names like a kernel's, so a check's message says "line 3 of your cell".
        self.shell.compile = XCachingCompiler()
        self._sink = open(os.devnull, "w")  # noqa: SIM115 (lives as long as the session)

    @property
    def names(self) -> dict:
        return self.shell.user_ns

    def run(self, source: str) -> BaseException | None:
        """Run one cell; the exception it raised, if any.

        The cell joins the shell's history (``In``), as in a kernel: an exercise's rules read
        the cell that last bound each answer from there.
        """
        with contextlib.redirect_stdout(self._sink), contextlib.redirect_stderr(self._sink):
            result = self.shell.run_cell(source, store_history=True)
        if "matplotlib.pyplot" in sys.modules:  # with Agg, plt.show() keeps every figure open
            sys.modules["matplotlib.pyplot"].close("all")
        return result.error_before_exec or result.error_in_exec

    def snapshot(self) -> State:
        import torch

        rng = torch.get_rng_state(), np.random.get_state(), random.getstate()
        return State(dict(self.names), rng, torch.get_default_dtype(), torch.is_grad_enabled())

    def restore(self, state: State) -> None:
        import torch

        self.names.clear()
        self.names.update(state.names)
        torch.set_rng_state(state.rng[0])
        np.random.set_state(state.rng[1])
        random.setstate(state.rng[2])
        torch.set_default_dtype(state.dtype)
        torch.set_grad_enabled(state.grad)

    def frozen(self, names: tuple[str, ...]) -> list:
        """The answers bound to ``names`` now, kept as they are whatever runs next.

        Values are deep copies. Functions are copies bound to a copy of the namespace, as are
        the notebook's other functions there, so the model's ``make_scheduler`` still calls
        the model's ``noam_lr`` after a variant redefines it.
        """
        live = self.names
        kept = dict(live)
        for key, value in kept.items():
            if isinstance(value, types.FunctionType) and value.__globals__ is live:
                kept[key] = _rebound(value, kept)
        return [
            kept[n] if isinstance(kept.get(n), types.FunctionType) else _copy(kept.get(n))
            for n in names
        ]


def _rebound(fn: types.FunctionType, namespace: dict) -> types.FunctionType:
    """``fn`` with ``namespace`` as its globals."""
    new = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = copy.copy(fn.__kwdefaults__)
    new.__dict__.update(fn.__dict__)
    new.__qualname__, new.__doc__, new.__module__ = fn.__qualname__, fn.__doc__, fn.__module__
    return new


def _copy(value):
    try:
        return copy.deepcopy(value)
    except Exception:  # a tensor inside an autograd graph, a generator...
        return value
