"""Training the Transformer as the paper does (§5.3, §5.4), sized for a CPU.

- :func:`warmup_inverse_sqrt`: the learning-rate schedule of Eq. 3.
- :func:`label_smoothed_cross_entropy`: the loss with label smoothing ε_ls.
- :func:`train`: a small loop with a progress bar that returns a :class:`History` for plots.
- :func:`trained`: whether a notebook's model finished training, and what to do if not.

Shapes: B batch, T target length, V vocabulary size.
"""

import copy
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch
from torch import nn

from . import _validate
from .data import PAD_ID, Batch
from .devices import device_of


def warmup_inverse_sqrt(step: int, d_model: int, warmup: int = 4000, factor: float = 1.0) -> float:
    """lrate = factor · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), paper Eq. 3.

    It rises linearly for ``warmup`` steps, peaks at ``step == warmup`` and then decays as
    1/sqrt(step). Steps count from 1: at step 0 the formula would divide by zero.
    """
    _validate.positive_int("step", step)
    _validate.positive_int("d_model", d_model)
    _validate.positive_int("warmup", warmup)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def paper_optimizer(model: nn.Module) -> torch.optim.Adam:
    """Adam with β1 = 0.9, β2 = 0.98, ε = 1e-9 (§5.3); lr 1.0: the scheduler's value *is* the lr.

    ``fused=True`` updates every parameter in one kernel call rather than a dozen small
    operations per parameter tensor: the same update rule, in less time per step.
    """
    return torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9, fused=True)


def warmup_scheduler(optimizer, d_model: int, warmup: int = 4000, factor: float = 1.0):
    """A ``LambdaLR`` that follows :func:`warmup_inverse_sqrt`; the first update uses step 1."""
    # LambdaLR evaluates its function at 0 before the first update, hence step + 1.
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: warmup_inverse_sqrt(step + 1, d_model, warmup, factor)
    )


def label_smoothed_cross_entropy(
    logits, target, smoothing: float = 0.1, ignore_index: int = PAD_ID
):
    """Cross-entropy against a target that keeps 1 - ε + ε/V on the true class and ε/V elsewhere.

    Equals ``F.cross_entropy(..., label_smoothing=smoothing, ignore_index=ignore_index)``.

    Args:
        logits: ``(N, V)`` or ``(B, T, V)`` unnormalised scores.
        target: ``(N,)`` or ``(B, T)`` class ids; positions equal to ``ignore_index`` do not count.

    Returns:
        The mean loss over the counted positions (a scalar tensor); 0 when every position is
        ignored, where ``F.cross_entropy`` would give NaN.
    """
    _validate.tensor("logits", logits, floating=True)
    _validate.tensor("target", target)
    if target.is_floating_point() or target.dtype == torch.bool:
        raise TypeError(f"target must hold integer class ids; got dtype {target.dtype}")
    if logits.shape[:-1] != target.shape:
        raise ValueError(
            f"target must have shape logits.shape[:-1] = {tuple(logits.shape[:-1])}; "
            f"got {tuple(target.shape)}"
        )
    _validate.probability("smoothing", smoothing)
    keep = target != ignore_index
    # One test of every id (a GPU is waited for once a step); the numbers only for the message.
    if (keep & ((target < 0) | (target >= logits.shape[-1]))).any():
        raise ValueError(
            f"target ids must be in [0, {logits.shape[-1]}) (the logits' last dimension); "
            f"got values from {int(target[keep].min())} to {int(target[keep].max())}"
        )
    log_p = logits.log_softmax(dim=-1)
    nll = -log_p.gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)  # -log p(true class)
    uniform = -log_p.mean(dim=-1)  # cross-entropy against the uniform distribution
    loss = (1 - smoothing) * nll + smoothing * uniform
    return loss[keep].sum() / keep.sum().clamp(min=1)


@dataclass
class History:
    """What :func:`train` records: per-step loss and lr, and each evaluation's metrics.

    ``finished`` turns True only once :func:`train` has returned: a run stopped halfway (the
    notebook's stop button raises ``KeyboardInterrupt`` inside the loop) leaves it False, with
    the steps done so far recorded.
    """

    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)  # {"step": ..., "seconds": ..., **metrics}
    best: dict | None = None  # the evaluation whose weights were kept, if any
    seconds: float = 0.0
    finished: bool = False

    @property
    def steps_done(self) -> int:
        """The updates completed (each one's loss is recorded once it is done)."""
        return len(self.loss)


def trained(history: History | None) -> bool:
    """Whether a notebook's model may be used as trained; if not, say so in one line.

    ``history`` is what the training cell bound before it started training: ``None`` stands
    for a model loaded from the shipped checkpoint (trained), a :class:`History` for one
    trained live, which counts only once :func:`train` finished. A cell that needs the trained
    model runs its body under ``if trained(history):``, so that after an interrupted run it
    prints what to do instead of showing a half-trained model's numbers as the lesson's.
    """
    if history is not None and not isinstance(history, History):
        raise TypeError(f"history must be a History or None; got {type(history).__name__}")
    if history is None or history.finished:
        return True
    print(
        f"training stopped at step {history.steps_done}: run the training cell again, "
        "or set TRAIN_LIVE = False to load the trained checkpoint"
    )
    return False


def train(
    model: nn.Module,
    batches: Iterator[Batch],
    steps: int,
    *,
    warmup: int = 400,
    factor: float = 1.0,
    smoothing: float = 0.1,
    clip: float | None = 1.0,
    evaluate: Callable[[nn.Module], dict] | None = None,
    eval_every: int = 100,
    metric: str = "exact_match",
    target: float | None = None,
    average: int = 0,
    average_every: int = 10,
    progress: bool = True,
    history: History | None = None,
) -> History:
    """Train ``model`` for ``steps`` updates on an endless iterator of :class:`Batch`.

    Uses :func:`paper_optimizer`, :func:`warmup_scheduler` with ``model.config.d_model`` and
    :func:`label_smoothed_cross_entropy`; gradients are clipped to norm ``clip``.

    With ``average`` > 0, the model ends with the mean of its weights at the last ``average``
    checkpoints, taken every ``average_every`` steps up to the last step: the paper's
    checkpoint averaging (§6.1, the last 5 of the base model). While the learning rate is still
    high, each step moves the weights back and forth around a good point, and averaging
    smooths that out (lesson 7's budget: ``benchmarks/README.md``).

    With ``evaluate`` (a function of the model returning a dict of metrics), the model is
    evaluated every ``eval_every`` steps and at the end; the weights with the best
    ``metric`` are restored at the end (accuracy can dip late while the lr is high).
    Training stops early once ``metric`` reaches ``target``.

    ``history``: an empty :class:`History` to fill in as training goes (a new one by
    default). A notebook binds it before training starts, so that an interrupted run leaves a
    record of how far it got (``finished`` False) rather than an earlier run's.
    """
    _validate.positive_int("steps", steps)
    _validate.positive_int("eval_every", eval_every)
    if not isinstance(batches, Iterator):
        raise TypeError(
            "batches must be an iterator of Batch, e.g. data.infinite_batches(pairs, 64); "
            f"got {type(batches).__name__}"
        )
    _check_averaging(steps, average, average_every, evaluate)
    history = _empty_history(history)
    optimizer = paper_optimizer(model)
    checkpoints = _Checkpoints(steps, average, average_every)
    scheduler = warmup_scheduler(optimizer, model.config.d_model, warmup, factor)
    best_state = None
    device = device_of(model)
    start = time.perf_counter()
    bar = _progress_bar(steps, progress)
    for step in range(1, steps + 1):
        model.train()
        batch = next(batches).to(device)  # a no-op when already there
        logits = model(batch.src, batch.tgt_in)  # (B, T, V)
        loss = label_smoothed_cross_entropy(logits, batch.tgt_out, smoothing)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        history.step.append(step)
        history.lr.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
        history.loss.append(loss.item())
        checkpoints.maybe_add(step, model)
        bar.update(1)
        bar.set_postfix(loss=f"{history.loss[-1]:.3f}")
        if evaluate is not None and (step % eval_every == 0 or step == steps):
            result = {"step": step, "seconds": time.perf_counter() - start, **evaluate(model)}
            if metric not in result:
                raise ValueError(
                    f"evaluate must return a dict with the key {metric!r}; got {result}"
                )
            history.evals.append(result)
            if history.best is None or result[metric] > history.best[metric]:
                history.best, best_state = result, copy.deepcopy(model.state_dict())
            bar.set_postfix(loss=f"{history.loss[-1]:.3f}", **{metric: f"{result[metric]:.3f}"})
            if target is not None and result[metric] >= target:
                break
    bar.close()
    if best_state is not None:
        model.load_state_dict(best_state)
    checkpoints.load_mean(model)
    model.eval()
    history.seconds = time.perf_counter() - start
    history.finished = True
    return history


def _empty_history(history: History | None) -> History:
    if history is None:
        return History()
    if not isinstance(history, History):
        raise TypeError(f"history must be a History or None; got {type(history).__name__}")
    if history.step or history.finished:
        raise ValueError("history must be a new, empty History(); got one already filled in")
    return history


def _check_averaging(steps, average, average_every, evaluate) -> None:
    if isinstance(average, bool) or not isinstance(average, int):
        raise TypeError(f"average must be an int (checkpoints to average); got {average!r}")
    if average < 0:
        raise ValueError(f"average must be >= 0 (0: no averaging); got {average}")
    _validate.positive_int("average_every", average_every)
    if (average - 1) * average_every >= steps:
        raise ValueError(
            f"average={average} checkpoints every average_every={average_every} steps need more "
            f"than {(average - 1) * average_every} steps; got steps={steps}"
        )
    if average and evaluate is not None:
        raise ValueError("average and evaluate each choose the final weights; pass one of them")


class _Checkpoints:
    """The running sum of the weights at the last ``count`` checkpoints, ``every`` steps apart.

    Only floating-point entries of the state are averaged; any other (a counter, a flag)
    keeps its value at the last step.
    """

    def __init__(self, steps: int, count: int, every: int):
        self.steps, self.count, self.every = steps, count, every
        self.total: dict[str, torch.Tensor] = {}
        self.n = 0

    def maybe_add(self, step: int, model: nn.Module) -> None:
        to_go = self.steps - step  # 0 at the last step
        if to_go % self.every or to_go >= self.count * self.every:
            return
        with torch.no_grad():
            for name, value in model.state_dict().items():
                if not value.is_floating_point():
                    continue
                if name in self.total:
                    self.total[name] += value
                else:
                    self.total[name] = value.detach().clone()
        self.n += 1

    def load_mean(self, model: nn.Module) -> None:
        if not self.n:
            return
        state = model.state_dict()
        for name, total in self.total.items():
            state[name] = total / self.n
        model.load_state_dict(state)


def _progress_bar(total: int, enabled: bool):
    from tqdm.auto import tqdm  # imported late: tqdm.auto looks for ipywidgets

    return tqdm(total=total, disable=not enabled, desc="training", unit="step")
