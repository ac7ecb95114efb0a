"""Counting parameters by component, the way the paper's tables and the lessons discuss them."""

from torch import nn

# Checked in order against each parameter's dotted name; the first match wins. The names
# cover this course's modules and PyTorch's own (self_attn, multihead_attn, linear1, ...).
_COMPONENTS = (
    ("embeddings", ("embed",)),
    ("attention", ("attn",)),
    ("feed_forward", ("ffn", "linear1", "linear2")),
    ("norms", ("norm",)),
    ("output", ("output_projection",)),
)


def component(name: str) -> str:
    """The component a parameter belongs to, from its dotted name: ``"attention"``, ..."""
    return next((c for c, keys in _COMPONENTS if any(k in name for k in keys)), "other")


def count_parameters(model: nn.Module) -> dict[str, int]:
    """Trainable parameters per component, plus the ``total``.

    A weight shared by several modules (tied embeddings) is counted once, under the
    first component that names it. Components: embeddings, attention, feed_forward,
    norms, output, and ``other`` for anything else (left out when zero).

    Example: the paper's base model with a shared 37,000-token vocabulary has
    63,082,632 parameters by this count, where the paper reports "65M" (Table 3). The
    paper gives no breakdown; the gap can come from its rounding, from a vocabulary of
    "about 37000" tokens that was in fact larger (each extra 1,000 tokens adds 512,000
    parameters), or from counting conventions (biases, a final norm).
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module; got {type(model).__name__}")
    counts = dict.fromkeys([name for name, _ in _COMPONENTS] + ["other"], 0)
    for name, p in model.named_parameters():  # named_parameters yields a shared tensor once
        if not p.requires_grad:
            continue
        counts[component(name)] += p.numel()
    if not counts["other"]:
        del counts["other"]
    counts["total"] = sum(counts.values())
    return counts
