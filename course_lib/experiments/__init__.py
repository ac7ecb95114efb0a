"""Experiments whose results the lessons draw conclusions from, with the bars they must clear.

A lesson that trains or samples something and then states a conclusion ("the leaky decoder
cannot generate") runs the experiment from here, so that the notebook and the seed sweep in
``tests/sweep/`` run the same code. Each :class:`Experiment` maps a seed to a few measures and
holds the :class:`Bound` s the lesson asserts. A bound has two numbers: the ``bar`` the notebook
asserts, and a ``margin`` inside it that every run of the sweep (five seeds or more, every CPU
kernel setting) must clear, so the lesson's claim never rests on luck. Results differ in the
last bits between processors; the measures are chosen (accuracy over many sequences, averages
over many steps) so that the conclusions do not.

    python -m course_lib.experiments leaky_decoder --seeds 0 1 2   # JSON lines, one per run
"""

import importlib
import operator
from collections.abc import Callable
from dataclasses import dataclass

_OPS = {"<": operator.lt, ">": operator.gt}


@dataclass(frozen=True)
class Bound:
    """One asserted conclusion: ``measure op bar`` (``"<"`` or ``">"``).

    Args:
        measure: a key of the experiment's result.
        op: ``"<"`` or ``">"``.
        bar: the value the lesson asserts against.
        margin: how far inside the bar every sweep run must land.
        says: the conclusion in words, printed by the lesson when it holds.
    """

    measure: str
    op: str
    bar: float
    margin: float
    says: str

    def __post_init__(self):
        if self.op not in _OPS:
            raise ValueError(f"op must be '<' or '>'; got {self.op!r}")
        if self.margin < 0:
            raise ValueError(f"margin must be >= 0; got {self.margin}")

    def holds(self, result: dict) -> bool:
        """What the notebook asserts."""
        return _OPS[self.op](result[self.measure], self.bar)

    def clears(self, result: dict) -> bool:
        """What the sweep asserts: the bar moved inwards by the margin."""
        inner = self.bar - self.margin if self.op == "<" else self.bar + self.margin
        return _OPS[self.op](result[self.measure], inner)


@dataclass(frozen=True)
class Experiment:
    """A seeded experiment and the bounds its lesson asserts.

    Args:
        name: the module in this package that defines it, e.g. ``"leaky_decoder"``.
        lesson: the lesson that runs it, e.g. ``3``.
        run: ``seed -> {measure: float}``; deterministic for a seed on one kind of processor.
        bounds: the conclusions the lesson draws from the result.
        sweep_seeds: seeds the sweep runs, at least five; seed 0 (the lesson's) runs under
            every kernel setting, the others spread over them.
    """

    name: str
    lesson: int
    run: Callable[..., dict]
    bounds: tuple[Bound, ...]
    sweep_seeds: tuple[int, ...] = (0, 1, 2, 3, 4)

    def verify(self, result: dict, *measures: str) -> str:
        """Raise AssertionError naming every bound that fails; else the conclusions, one a line.

        With ``measures``, only the bounds on those. The text holds the bars, never the
        measured values, so it is the same on every machine.
        """
        bounds = [b for b in self.bounds if not measures or b.measure in measures]
        unknown = set(measures) - {b.measure for b in self.bounds}
        if unknown:
            known = sorted({b.measure for b in self.bounds})
            raise ValueError(f"measures must be among {known}; got {sorted(unknown)}")
        failed = [b for b in bounds if not b.holds(result)]
        if failed:
            lines = [f"{b.says}: {b.measure} = {result[b.measure]:.4g}" for b in failed]
            raise AssertionError("not as the lesson expects:\n  " + "\n  ".join(lines))
        return "\n".join(f"✓ {b.says}" for b in bounds)


NAMES = (
    "reversal",
    "copy_vs_reversal",
    "score_scale",
    "leaky_decoder",
    "specialised_heads",
    "deep_stack",
    "norm_placement",
    "translator",
    "linear_probe",
)


def get(name: str) -> Experiment:
    """The experiment defined by module ``name`` of this package."""
    if name not in NAMES:
        raise ValueError(f"name must be one of {NAMES}; got {name!r}")
    return importlib.import_module(f".{name}", __name__).EXPERIMENT
