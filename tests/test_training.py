import itertools

import pytest
import torch
import torch.nn.functional as F

from course_lib.data import copy_task, infinite_batches
from course_lib.model import Transformer, TransformerConfig
from course_lib.training import (
    label_smoothed_cross_entropy,
    paper_optimizer,
    train,
    warmup_inverse_sqrt,
    warmup_scheduler,
)


@pytest.mark.parametrize(
    "step, lr",
    [
        (1, 1.747e-7),
        (1000, 1.747e-4),
        (2000, 3.494e-4),
        (4000, 6.988e-4),
        (8000, 4.941e-4),
        (16000, 3.494e-4),
        (20000, 3.125e-4),
        (100000, 1.398e-4),
    ],
)
def test_schedule_values_of_the_paper(step, lr):
    assert warmup_inverse_sqrt(step, d_model=512, warmup=4000) == pytest.approx(lr, rel=1e-3)


@pytest.mark.parametrize("warmup", [10, 400, 4000])
def test_schedule_peaks_at_the_warmup_step(warmup):
    lrs = [warmup_inverse_sqrt(s, 512, warmup) for s in range(1, 3 * warmup)]
    assert lrs.index(max(lrs)) + 1 == warmup


def test_schedule_counts_steps_from_one():
    with pytest.raises(ValueError, match="step must be a positive int; got 0"):
        warmup_inverse_sqrt(0, 512)


def test_scheduler_drives_the_optimizer_from_step_one():
    model = torch.nn.Linear(2, 2)
    optimizer = paper_optimizer(model)
    scheduler = warmup_scheduler(optimizer, d_model=512, warmup=4000)
    seen = []
    for _ in range(3):
        seen.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert seen == pytest.approx([warmup_inverse_sqrt(s, 512, 4000) for s in (1, 2, 3)])
    assert optimizer.defaults["betas"] == (0.9, 0.98) and optimizer.defaults["eps"] == 1e-9


def test_label_smoothing_worked_example():
    logits = torch.tensor([[2.0, 1.0, 0.1, -1.0]])
    target = torch.tensor([0])  # class 0 here is a real class, not padding
    loss = lambda eps: label_smoothed_cross_entropy(logits, target, eps, ignore_index=-100).item()  # noqa: E731
    assert loss(0.0) == pytest.approx(0.4493, abs=1e-4)
    assert loss(0.1) == pytest.approx(0.5968, abs=1e-4)


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
def test_label_smoothing_equals_pytorch_and_ignores_padding(smoothing):
    logits = torch.randn(3, 5, 11)
    target = torch.randint(1, 11, (3, 5))
    target[0, 3:] = 0
    target[2, 1:] = 0
    expected = F.cross_entropy(
        logits.flatten(0, 1), target.flatten(), label_smoothing=smoothing, ignore_index=0
    )
    torch.testing.assert_close(label_smoothed_cross_entropy(logits, target, smoothing), expected)


def test_label_smoothing_rejects_mismatched_shapes():
    with pytest.raises(
        ValueError, match=r"target must have shape logits.shape\[:-1\] = \(3, 5\); got \(3, 4\)"
    ):
        label_smoothed_cross_entropy(torch.randn(3, 5, 7), torch.zeros(3, 4, dtype=torch.long))


def _copy_model():
    return Transformer(TransformerConfig.tiny(14, 14, dropout=0.0))


def test_train_lowers_the_loss_and_records_history():
    model = _copy_model()
    history = train(
        model, infinite_batches(copy_task(500, seq_len=4), 32), steps=80, warmup=400, progress=False
    )
    assert history.step == list(range(1, 81)) and len(history.loss) == len(history.lr) == 80
    assert history.lr[:3] == pytest.approx([warmup_inverse_sqrt(s, 64, 400) for s in (1, 2, 3)])
    assert sum(history.loss[-10:]) / 10 < 0.6 * sum(history.loss[:10]) / 10
    assert not model.training


def _train_with_scores(model, scores, steps, target=None):
    """Train with an evaluate() that reports ``scores`` in turn and records the weights it saw."""
    scores, seen = iter(scores), []

    def evaluate(m):
        seen.append(m.output_projection.bias.detach().clone())
        return {"exact_match": next(scores)}

    batches = infinite_batches(copy_task(200, seq_len=4), 16)
    history = train(model, batches, steps, warmup=10, evaluate=evaluate, eval_every=10,
                    target=target, progress=False)  # fmt: skip
    return history, seen


def test_train_restores_the_best_evaluation_and_stops_at_target():
    model = _copy_model()
    history, seen = _train_with_scores(model, [0.2, 0.9, 0.5, 0.95], steps=100, target=0.95)
    assert [e["step"] for e in history.evals] == [10, 20, 30, 40]  # stopped at the target
    assert history.best["exact_match"] == 0.95
    torch.testing.assert_close(model.output_projection.bias, seen[-1])

    history, seen = _train_with_scores(model, [0.2, 0.9, 0.5], steps=30)
    assert history.best["step"] == 20
    torch.testing.assert_close(model.output_projection.bias, seen[1])


def test_loss_rejects_bad_targets():
    logits = torch.randn(2, 3, 5)
    with pytest.raises(
        TypeError, match="target must hold integer class ids; got dtype torch.float32"
    ):
        label_smoothed_cross_entropy(logits, torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"target ids must be in \[0, 5\).*from 1 to 7"):
        label_smoothed_cross_entropy(logits, torch.tensor([[1, 7, 2], [0, 0, 3]]))


def test_train_needs_an_iterator_of_batches():
    batches = list(itertools.islice(infinite_batches(copy_task(10, seq_len=3), 4), 2))
    with pytest.raises(TypeError, match="batches must be an iterator of Batch.*got list"):
        train(_copy_model(), batches, steps=2, progress=False)


def test_train_says_which_metric_evaluate_must_return():
    with pytest.raises(ValueError, match="evaluate must return a dict with the key 'exact_match'"):
        train(
            _copy_model(),
            infinite_batches(copy_task(10, seq_len=3), 4),
            steps=2,
            evaluate=lambda m: {"accuracy": 1.0},
            eval_every=1,
            progress=False,
        )


def test_train_ends_with_the_mean_of_the_last_checkpoints():
    # The same run twice: once recording the weights after every step, once averaging the
    # weights after steps 6 and 9 (2 checkpoints, 3 steps apart, up to the last step).
    seen = []

    def record(module, args, output):
        if module.training:  # one forward per step; it sees the weights of the previous step
            seen.append({k: v.clone() for k, v in module.state_dict().items()})

    runs = []
    for average in (0, 2):
        torch.manual_seed(0)
        model = _copy_model()
        handle = model.register_forward_hook(record) if not average else None
        batches = infinite_batches(copy_task(200, seq_len=4), 16)
        train(model, batches, steps=9, average=average, average_every=3, progress=False)
        if handle:
            handle.remove()
        runs.append(model.state_dict())
    after = seen[1:] + [runs[0]]  # after[i]: the weights after step i + 1
    for name, value in runs[1].items():
        torch.testing.assert_close(value, (after[5][name] + after[8][name]) / 2)
    assert not torch.equal(runs[1]["output_projection.weight"], runs[0]["output_projection.weight"])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"average": -1}, ValueError, "average must be >= 0"),
        ({"average": 2.0}, TypeError, "average must be an int"),
        ({"average": 2, "average_every": 0}, ValueError, "average_every must be a positive int"),
        ({"average": 3, "average_every": 2}, ValueError, r"need more than 4 steps; got steps=3"),
        (
            {"average": 2, "average_every": 1, "evaluate": lambda m: {"exact_match": 1}},
            ValueError,
            "one of",
        ),
    ],
)
def test_train_rejects_bad_averaging(kwargs, error, message):
    batches = infinite_batches(copy_task(20, seq_len=4), 4)
    with pytest.raises(error, match=message):
        train(_copy_model(), batches, steps=3, progress=False, **kwargs)
