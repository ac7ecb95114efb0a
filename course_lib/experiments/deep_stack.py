"""Lesson 6 at initialisation: what residuals and layer norm do to deep stacks' signal and gradient.

Two experiments on freshly initialised stacks (no training), both drawn from ``seed``:

- 48 FFN sub-layers wrapped in each of six ways
  (:func:`course_lib.widgets.deep_stack.stack_profile`): without a residual path or a norm the
  signal fades and the first layer's gradient vanishes; with the residual path the gradient
  survives.
- 12 encoder layers, post-norm against pre-norm, fed one random input: post-norm's output
  norm is fixed by its final LayerNorm, pre-norm's grows with depth, and neither stack's
  gradient vanishes or explodes. With ``nn.Linear``'s default initialisation in the attention
  (instead of Xavier's), pre-norm's growth matches a widely reprinted run (37, 45, 52).
"""

import math

import torch
from torch import nn

from ..widgets.deep_stack import stack_profile
from . import Bound, Experiment
from .norm_placement import encoder_stack

REPRINTED = (37.0, 45.0, 52.0)  # pre-norm |h| after 1, 6, 12 layers, nn.Linear's default init
POST_NORM = math.sqrt(2 * 10 * 64)  # LayerNorm output of a (2, 10, 64) input: RMS 1 everywhere


def encoder_input(seed: int = 0):
    """The random input ``(2, 10, 64)`` and read-out direction of the encoder-stack experiment."""
    g = torch.Generator().manual_seed(seed + 1)
    return torch.randn(2, 10, 64, generator=g), torch.randn(2, 10, 64, generator=g)


def run_stack(layers, x, readout):
    """Each layer's output norm and gradient norm, for the loss (h · readout).sum()."""
    layers.zero_grad()
    h, norms = x, []
    for layer in layers:
        h = layer(h)
        norms.append(h.norm().item())
    (h * readout).sum().backward()
    grads = [
        torch.cat([p.grad.flatten() for p in layer.parameters()]).norm().item() for layer in layers
    ]
    return norms, grads


def default_init(layers):
    """The same layers with ``nn.Linear``'s own initialisation in self-attention, not Xavier's."""
    for layer in layers:
        for module in layer.self_attn.modules():
            if isinstance(module, nn.Linear):
                module.reset_parameters()
    return layers


def ffn_measures(seed: int = 0) -> dict:
    """The 48-layer FFN stacks: how the plain stack fades, and that residuals keep the gradient."""
    profiles = [
        stack_profile(48, r, n, seed=seed) for r in (False, True) for n in ("none", "post", "pre")
    ]
    by_label = {p.label: p for p in profiles}
    plain, post = by_label["F(x)"], by_label["LN(x + F(x))"]
    residual_ratios = [p.grad_norm[0] / p.grad_norm[-1] for p in profiles if p.residual]
    measures = {
        "plain_first_layer_variance": (plain.activation_rms[1] / plain.activation_rms[0]) ** 2,
        "plain_gradient_ratio": plain.grad_norm[0] / plain.grad_norm[-1],
        "plain_output_rms_ratio": plain.activation_rms[-1] / plain.activation_rms[0],
        "residual_gradient_ratio_min": min(residual_ratios),
        "residual_gradient_ratio_max": max(residual_ratios),
        "post_norm_rms_error": abs(post.activation_rms[1:] - 1).max(),
    }
    return {k: float(v) for k, v in measures.items()}  # numpy scalars -> floats


def encoder_measures(post, pre, default_norms) -> dict:
    """From :func:`run_stack`'s ``(norms, grads)`` for both stacks and the default-init norms."""
    (post_norms, post_grads), (pre_norms, pre_grads) = post, pre
    reprinted = [default_norms[i] / REPRINTED[j] - 1 for j, i in enumerate((0, 5, 11))]
    return {
        "post_norm_error": max(abs(n - POST_NORM) for n in post_norms),
        "pre_norm_grows": float(all(a < b for a, b in zip(pre_norms, pre_norms[1:], strict=False))),
        "pre_norm_after_1": pre_norms[0],
        "pre_norm_growth": pre_norms[11] / POST_NORM,
        "first_gradient_ratio": pre_grads[0] / post_grads[0],
        "post_gradient_spread": max(post_grads) / min(post_grads),
        "pre_gradient_spread": max(pre_grads) / min(pre_grads),
        "default_init_vs_reprinted": max(abs(r) for r in reprinted),
    }


def run(seed: int = 0) -> dict:
    x, readout = encoder_input(seed)
    post = run_stack(encoder_stack(False, seed=seed), x, readout)
    pre = run_stack(encoder_stack(True, seed=seed), x, readout)
    default_norms, _ = run_stack(default_init(encoder_stack(True, seed=seed)), x, readout)
    return {**ffn_measures(seed), **encoder_measures(post, pre, default_norms)}


FFN = (
    Bound(
        "plain_first_layer_variance",
        ">",
        1 / 25,
        0.005,
        "F(x): one layer divides the variance by 25 at most",
    ),
    Bound("plain_first_layer_variance", "<", 1 / 12, 0.005, "and by 12 at least"),
    Bound(
        "plain_gradient_ratio",
        "<",
        1e-6,
        9e-7,
        "without residual or norm, layer 1's gradient vanishes",
    ),
    Bound("plain_output_rms_ratio", "<", 0.1, 0.03, "and the signal fades to under a tenth"),
    Bound(
        "residual_gradient_ratio_min",
        ">",
        0.1,
        0.05,
        "with the residual path, layer 1's gradient is over 1/10 of layer 48's",
    ),
    Bound("residual_gradient_ratio_max", "<", 10, 3, "and under 10 times it"),
    Bound("post_norm_rms_error", "<", 1e-3, 5e-4, "post-norm: every layer's output has RMS 1"),
)
ENCODER = (
    Bound("post_norm_error", "<", 0.01, 0.005, "post-norm: |h| = √(2·10·64) after every layer"),
    Bound("pre_norm_grows", ">", 0.5, 0.0, "pre-norm: |h| grows with every layer"),
    Bound("pre_norm_after_1", ">", 36, 0.5, "from over 36 after one layer"),
    Bound("pre_norm_after_1", "<", 46, 2, "(and under 46)"),
    Bound("pre_norm_growth", ">", 1.3, 0.3, "to over 1.3x post-norm's after twelve"),
    Bound("first_gradient_ratio", ">", 0.1, 0.1, "first-layer gradients of the same order in both"),
    Bound("first_gradient_ratio", "<", 10, 3, "(within 10x)"),
    Bound("post_gradient_spread", "<", 5, 1, "post-norm: no layer's gradient 5x another's"),
    Bound("pre_gradient_spread", "<", 5, 0.8, "pre-norm: no layer's gradient 5x another's"),
    Bound(
        "default_init_vs_reprinted",
        "<",
        0.15,
        0.05,
        "with nn.Linear's default init, pre-norm's |h| is within 15% of the reprinted 37, 45, 52",
    ),
)
EXPERIMENT = Experiment(name="deep_stack", lesson=6, run=run, bounds=FFN + ENCODER)
FFN_MEASURES = tuple(dict.fromkeys(b.measure for b in FFN))  # for EXPERIMENT.verify(result, ...)
ENCODER_MEASURES = tuple(dict.fromkeys(b.measure for b in ENCODER))
