"""Lessons 2 and 3: q·k has variance d_k, and what unscaled scores do to the softmax.

Sampling, not training: the components of q and k are drawn from N(0, 1) with a generator
seeded by ``seed``. Each conclusion is a statistic of thousands of draws, asserted within a
band several standard errors wide, so it holds for any seed as well as on any processor.
"""

import math

import numpy as np
import torch

from ..replay import replayable
from . import Bound, Experiment


@replayable
def sample_dots(d_k: int, n: int = 200_000, *, generator=None, chunk: int = 20_000):
    """``n`` dot products of random pairs with unit-variance components (drawn in chunks)."""
    parts = []
    for _ in range(n // chunk):
        q = torch.randn(chunk, d_k, generator=generator)
        k = torch.randn(chunk, d_k, generator=generator)
        parts.append((q * k).sum(dim=-1))
    return torch.cat(parts)


def loglog_fit(dims, variances) -> tuple[float, float]:
    """Slope and intercept of log(variance) against log(d_k)."""
    slope, intercept = np.polyfit(np.log(dims), np.log(variances), 1)
    return float(slope), float(intercept)


def softmax_jacobian(p):
    """∂p_i/∂s_j = p_i (δ_ij − p_j) for a softmax output p of shape (..., n)."""
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)


def softmax_profile(scores):
    """Mean largest weight and mean softmax-Jacobian (Frobenius) norm over rows of ``scores``."""
    p = scores.softmax(dim=-1)
    gradient = softmax_jacobian(p).flatten(-2).norm(dim=-1)
    return p.max(dim=-1).values.mean().item(), gradient.mean().item()


def one_query_ten_keys(d_k: int, n: int = 2_000, *, generator=None):
    """Scores of ``n`` random queries against 10 random keys each, ``(n, 10)``, unscaled."""
    q = torch.randn(n, 1, d_k, generator=generator)
    k = torch.randn(n, 10, d_k, generator=generator)
    return (q * k).sum(dim=-1)


def spread_measures(sampled: dict) -> dict:
    """Lesson 2: ``{4: dots, 512: dots}`` -> how far variance, mean and spread are from theory."""
    small, large = sampled[4], sampled[512]
    return {
        "variance_error": max(abs(x.var().item() / d - 1) for d, x in sampled.items()),
        "largest_mean": max(abs(x.mean().item()) for x in sampled.values()),
        "std_ratio_error": abs((large.std() / small.std()).item() - math.sqrt(128)),
        "beyond_8_at_4": (small.abs() > 8).float().mean().item(),
        "beyond_8_at_512": (large.abs() > 8).float().mean().item(),
    }


def growth_measures(dims, variances) -> dict:
    """Lesson 2: the log-log slope of Var(q·k) against d_k, and Var(64) / Var(1) against 64."""
    slope, _ = loglog_fit(dims, variances)
    ratio_64 = variances[dims.index(64)] / variances[dims.index(1)]
    return {"slope_error": abs(slope - 1), "ratio_64_error": abs(ratio_64 / 64 - 1)}


def variance_measures(sampled: dict) -> dict:
    """Lesson 3: ``{d_k: dots}`` -> the largest relative gap between Var(q·k) and d_k."""
    return {"variance_error_20k": max(abs(x.var().item() / d - 1) for d, x in sampled.items())}


def saturation_measures(scores_64) -> dict:
    """Lesson 3: one query against 10 keys at d_k = 64, unscaled against scaled by 1/8."""
    unscaled, scaled = softmax_profile(scores_64), softmax_profile(scores_64 / 8)
    return {
        "largest_weight_unscaled_64": unscaled[0],
        "largest_weight_scaled_64_error": abs(scaled[0] - 0.32),
        "gradient_ratio_64": unscaled[1] / scaled[1],
    }


def largest_weight_measures(rows) -> dict:
    """Lesson 3: rows of 10 N(0, 1) scores, times 8 (unscaled at d_k = 64) and as they are."""
    return {
        "largest_weight_std_8_error": abs(softmax_profile(8 * rows)[0] - 0.87),
        "largest_weight_std_1_error": abs(softmax_profile(rows)[0] - 0.32),
    }


def run(seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(seed)
    dims = [2**i for i in range(10)]  # 1 ... 512
    narrow = {d: sample_dots(d, n=20_000, generator=g) for d in (4, 16, 64, 256)}
    return {
        **spread_measures({d: sample_dots(d, generator=g) for d in (4, 512)}),
        **growth_measures(dims, [sample_dots(d, n=20_000, generator=g).var().item() for d in dims]),
        **variance_measures(narrow),
        **saturation_measures(one_query_ten_keys(64, generator=g)),
        **largest_weight_measures(torch.randn(10_000, 10, generator=g)),
    }


LESSON_2 = (
    Bound("variance_error", "<", 0.02, 0.01, "Var(q·k) / d_k is within 2% of 1 at d_k = 4 and 512"),
    Bound("largest_mean", "<", 0.2, 0.05, "and the mean of q·k within 0.2 of 0"),
    Bound(
        "std_ratio_error",
        "<",
        0.3,
        0.15,
        "the spread grows by √128 ≈ 11.3 (within 0.3) from d_k = 4 to 512",
    ),
    Bound("beyond_8_at_4", "<", 0.02, 0.01, "scores beyond ±8: under 2% at d_k = 4"),
    Bound("beyond_8_at_512", ">", 0.65, 0.04, "over 65% at d_k = 512"),
    Bound("slope_error", "<", 0.03, 0.01, "log-log slope of Var(q·k) against d_k within 0.03 of 1"),
    Bound(
        "ratio_64_error", "<", 0.1, 0.02, "Var at d_k = 64 is 64 times Var at d_k = 1 (within 10%)"
    ),
)
LESSON_3 = (
    Bound(
        "variance_error_20k", "<", 0.1, 0.04, "Var(q·k) = d_k, and Var(q·k/√d_k) = 1, within 10%"
    ),
    Bound(
        "largest_weight_unscaled_64",
        ">",
        0.8,
        0.03,
        "d_k = 64 unscaled: the favourite key takes over 0.8 of the weight",
    ),
    Bound("largest_weight_scaled_64_error", "<", 0.03, 0.01, "scaled: about 0.32 (within 0.03)"),
    Bound(
        "gradient_ratio_64",
        "<",
        0.6,
        0.08,
        "and the unscaled softmax gradient is under 60% of the scaled one",
    ),
    Bound(
        "largest_weight_std_8_error",
        "<",
        0.02,
        0.01,
        "scores with std 8: mean largest weight 0.87 (within 0.02)",
    ),
    Bound("largest_weight_std_1_error", "<", 0.02, 0.01, "std 1: 0.32 (within 0.02)"),
)
EXPERIMENT = Experiment(name="score_scale", lesson=2, run=run, bounds=LESSON_2 + LESSON_3)
LESSON_2_MEASURES = tuple(b.measure for b in LESSON_2)  # for EXPERIMENT.verify(result, ...)
LESSON_3_MEASURES = tuple(b.measure for b in LESSON_3)
