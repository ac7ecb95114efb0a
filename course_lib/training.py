"""Training the Transformer as the paper does (§5.3, §5.4), sized for a CPU.

- :func:`warmup_inverse_sqrt`: the learning-rate schedule of Eq. 3.
- :func:`label_smoothed_cross_entropy`: the loss with label smoothing ε_ls.
- :func:`train`: a small loop with a progress bar that returns a :class:`History` for plots.

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
    """Adam with β1 = 0.9, β2 = 0.98, ε = 1e-9 (§5.3); lr 1.0: the scheduler's value *is* the lr."""
    return torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)


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
    if (
        keep.any()
        and not 0 <= int(target[keep].min()) <= int(target[keep].max()) < logits.shape[-1]
    ):
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
    """What :func:`train` records: per-step loss and lr, and each evaluation's metrics."""

    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)  # {"step": ..., "seconds": ..., **metrics}
    best: dict | None = None  # the evaluation whose weights were kept, if any
    seconds: float = 0.0


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
    progress: bool = True,
) -> History:
    """Train ``model`` for ``steps`` updates on an endless iterator of :class:`Batch`.

    Uses :func:`paper_optimizer`, :func:`warmup_scheduler` with ``model.config.d_model`` and
    :func:`label_smoothed_cross_entropy`; gradients are clipped to norm ``clip``.

    With ``evaluate`` (a function of the model returning a dict of metrics), the model is
    evaluated every ``eval_every`` steps and at the end; the weights with the best
    ``metric`` are restored at the end (accuracy can dip late while the lr is high).
    Training stops early once ``metric`` reaches ``target``.
    """
    _validate.positive_int("steps", steps)
    _validate.positive_int("eval_every", eval_every)
    if not isinstance(batches, Iterator):
        raise TypeError(
            "batches must be an iterator of Batch, e.g. data.infinite_batches(pairs, 64); "
            f"got {type(batches).__name__}"
        )
    optimizer = paper_optimizer(model)
    scheduler = warmup_scheduler(optimizer, model.config.d_model, warmup, factor)
    history, best_state = History(), None
    start = time.perf_counter()
    bar = _progress_bar(steps, progress)
    for step in range(1, steps + 1):
        model.train()
        batch = next(batches)
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
    model.eval()
    history.seconds = time.perf_counter() - start
    return history


def _progress_bar(total: int, enabled: bool):
    from tqdm.auto import tqdm  # imported late: tqdm.auto looks for ipywidgets

    return tqdm(total=total, disable=not enabled, desc="training", unit="step")
