"""The experiments the lessons draw conclusions from: bounds, verdicts, kernel settings.

The experiments themselves are run over seeds and kernel settings by tests/sweep (make test-sweep).
"""

import subprocess
import sys

import pytest
import torch

from course_lib import experiments
from course_lib.baselines import Seq2Seq, reversal_data
from course_lib.experiments import Bound, Experiment, copy_vs_reversal, kernels, reversal

BELOW = Bound("loss", "<", 0.1, 0.02, "the loss is small")
ABOVE = Bound("accuracy", ">", 0.5, 0.1, "most are right")
TOY = Experiment("toy", 3, lambda seed: {}, (BELOW, ABOVE))


@pytest.mark.parametrize(
    "bound, value, holds, clears",
    [
        (BELOW, 0.05, True, True),
        (BELOW, 0.09, True, False),  # inside the bar, not by the margin
        (BELOW, 0.1, False, False),
        (ABOVE, 0.7, True, True),
        (ABOVE, 0.55, True, False),
        (ABOVE, 0.4, False, False),
    ],
)
def test_a_sweep_run_must_clear_the_bar_by_the_margin(bound, value, holds, clears):
    assert bound.holds({bound.measure: value}) is holds
    assert bound.clears({bound.measure: value}) is clears


@pytest.mark.parametrize("op, margin, problem", [("<=", 0.1, "op must be"), (">", -1, "margin")])
def test_a_bound_rejects_an_unknown_comparison_or_a_negative_margin(op, margin, problem):
    with pytest.raises(ValueError, match=problem):
        Bound("x", op, 1.0, margin, "x")


def test_the_verdict_names_the_bars_never_the_measured_values():
    text = TOY.verify({"loss": 0.0123456, "accuracy": 0.987654})
    assert text == "✓ the loss is small\n✓ most are right"


def test_a_failed_bound_raises_with_the_measured_value():
    with pytest.raises(AssertionError, match=r"most are right: accuracy = 0\.3"):
        TOY.verify({"loss": 0.01, "accuracy": 0.3})


def test_verify_can_check_some_bounds_only():
    assert TOY.verify({"accuracy": 0.9}, "accuracy") == "✓ most are right"
    with pytest.raises(ValueError, match="measures must be among"):
        TOY.verify({"accuracy": 0.9}, "acuracy")


def test_every_experiment_is_registered_under_its_module_name():
    for name in experiments.NAMES:
        experiment = experiments.get(name)
        assert experiment.name == name and 1 <= experiment.lesson <= 9
        assert len(experiment.sweep_seeds) >= 5 and experiment.sweep_seeds[0] == 0
        assert all(b.margin >= 0 for b in experiment.bounds)
    with pytest.raises(ValueError, match="name must be one of"):
        experiments.get("leaky")


@pytest.mark.slow
def test_an_experiment_returns_every_measure_its_bounds_read():
    experiment = experiments.get("specialised_heads")  # the quickest: a few seconds
    result = experiment.run(seed=0)
    assert {b.measure for b in experiment.bounds} <= set(result)
    experiment.verify(result)


def test_a_kernel_setting_replaces_any_other_choice(monkeypatch):
    monkeypatch.setenv("MKL_CBWR", "AUTO")
    env = kernels.environment("avx2")
    assert env["ATEN_CPU_CAPABILITY"] == "avx2" and "MKL_CBWR" not in env
    assert kernels.environment("mkl-compatible")["MKL_CBWR"] == "COMPATIBLE"
    with pytest.raises(ValueError, match="setting must be one of"):
        kernels.environment("neon")


def test_default_kernels_can_be_chosen_on_any_x86_processor():
    assert kernels.unavailable("default") is None
    assert kernels.capability(kernels.environment("default")) in kernels.NAMES["default"]


@pytest.mark.parametrize("reported", ["DEFAULT", "NO AVX"])  # torch 2.6 and later, torch 2.5
def test_every_torch_versions_name_for_the_kernels_is_understood(monkeypatch, reported):
    monkeypatch.setattr(kernels, "capability", lambda env: reported)
    assert kernels.unavailable("default") is None
    assert kernels.unavailable("avx2") == (
        f"ATEN_CPU_CAPABILITY=avx2 has no effect on this processor (torch uses {reported})"
    )


def test_the_kernels_in_use_are_named_for_logs():
    assert kernels.describe().startswith("torch kernels ")
    assert "thread" in kernels.describe()


def test_the_command_line_lists_the_experiments():
    done = subprocess.run(
        [sys.executable, "-m", "course_lib.experiments", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "leaky_decoder" in done.stdout


def test_copy_and_reversal_train_on_the_same_sources_in_two_orders():
    src = torch.tensor([[2, 3, 4], [5, 6, 7]])
    assert copy_vs_reversal.ORDERS["copy"](src).tolist() == src.tolist()
    assert copy_vs_reversal.ORDERS["reverse"](src).tolist() == [[4, 3, 2], [7, 6, 5]]
    with pytest.raises(ValueError, match="order must be one of"):
        copy_vs_reversal.train_vanilla("shuffle")


def test_the_lessons_reversing_model_is_the_experiments(monkeypatch):
    """Lesson 1 compares its own vanilla model (reversal.train_pair) with a copier trained by
    copy_vs_reversal: both must come out of the same training, here a shortened one."""
    monkeypatch.setattr(reversal, "EPOCHS", 1)
    for module in (reversal, copy_vs_reversal):
        monkeypatch.setattr(module, "N_TRAIN", 64)
    lessons = reversal.train_pair(seed=3)["vanilla"].state_dict()
    experiments_own = copy_vs_reversal.train_vanilla("reverse", seed=3).state_dict()
    assert all(torch.equal(lessons[k], experiments_own[k]) for k in lessons)


def test_the_order_measures_are_consistent():
    torch.manual_seed(0)
    models = {o: Seq2Seq(attention=False).eval() for o in copy_vs_reversal.ORDERS}
    src, _ = reversal_data(40, 6, seed=1)
    result = copy_vs_reversal.measure(models, src)
    for order, model in models.items():
        shares = copy_vs_reversal.position_accuracy(model, src, copy_vs_reversal.ORDERS[order](src))
        assert len(shares) == 5 and result[f"{order}_first_step"] == shares[0]
        assert abs(result[f"{order}_token_accuracy"] - sum(shares) / 5) < 1e-6
    gap = result["reverse_token_accuracy"] - result["copy_token_accuracy"]
    assert result["token_gap"] == gap
    assert {b.measure for b in copy_vs_reversal.EXPERIMENT.bounds} <= set(result)
