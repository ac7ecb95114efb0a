"""The training fast path (course_lib/fast_training.py) computes what the reference path does.

Each test runs one model both ways, switching ``config.fast_training``, on batches with padding
(one source sentence all padding) and compares logits and every gradient.
"""

import pytest
import torch

from course_lib import dropout as dropout_module
from course_lib import fast_training
from course_lib.attention import record_attention
from course_lib.data import PAD_ID
from course_lib.model import Transformer, TransformerConfig
from course_lib.pretrained import new_model


def config(**overrides):
    settings = dict(
        src_vocab_size=30,
        tgt_vocab_size=40,
        d_model=32,
        n_heads=4,
        n_encoder_layers=2,
        n_decoder_layers=2,
        d_ff=64,
        dropout=0.0,
        max_len=64,
        share_embeddings=False,
    )
    return TransformerConfig(**{**settings, **overrides})


def padded_batch(B=6, S=9, T=7, vocab=30):
    src = torch.randint(4, vocab, (B, S))
    lengths = torch.tensor([9, 4, 1, 7, 0, 6])[:B]  # sentence 4 is all padding
    src[torch.arange(S)[None, :] >= lengths[:, None]] = PAD_ID
    tgt = torch.randint(4, vocab, (B, T))
    tgt[1, 5:] = PAD_ID
    return src, tgt


def both_paths(model, src, tgt):
    """Logits and gradients of one loss, through the fast path and through the reference."""
    results = []
    for fast in (True, False):
        model.config.fast_training = fast
        model.zero_grad(set_to_none=True)
        logits = model(src, tgt)
        (logits * torch.linspace(-1, 1, logits.shape[-1])).mean().backward()
        grads = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
        results.append((logits.detach(), grads))
    return results


VARIANTS = {
    "post-norm": {},
    "pre-norm, final norms": {"norm_first": True, "final_norm": True},
    "shared embeddings": {"share_embeddings": True, "tgt_vocab_size": 30},
    "attention biases": {"attention_bias": True},
}


@pytest.mark.parametrize("overrides", VARIANTS.values(), ids=VARIANTS.keys())
def test_training_logits_and_gradients_equal_the_reference(overrides):
    model = Transformer(config(**overrides)).train()
    src, tgt = padded_batch(vocab=30)
    assert fast_training.applies(model, src, None)
    (fast_logits, fast_grads), (ref_logits, ref_grads) = both_paths(model, src, tgt)
    torch.testing.assert_close(fast_logits, ref_logits, rtol=1e-5, atol=1e-6)
    assert fast_grads.keys() == ref_grads.keys()
    for name, grad in ref_grads.items():
        torch.testing.assert_close(fast_grads[name], grad, rtol=1e-4, atol=1e-6, msg=name)


def test_with_dropout_the_same_scaling_and_attention_path(monkeypatch):
    """Masks drawn for other shapes cannot match element for element; with every mask keeping
    everything (and scaling by 1 / (1 - p)) both paths must give the same numbers."""

    def keep_all(x, p):
        return torch.full(x.shape, 1 / (1 - p), dtype=x.dtype)

    monkeypatch.setattr(dropout_module, "scaled_mask", keep_all)
    monkeypatch.setattr(fast_training, "scaled_mask", keep_all)
    monkeypatch.setattr(fast_training, "kept", lambda x, p: (torch.ones_like(x), 1 / (1 - p)))
    model = Transformer(config(dropout=0.2, attention_bias=True)).train()
    src, tgt = padded_batch()
    (fast_logits, fast_grads), (ref_logits, ref_grads) = both_paths(model, src, tgt)
    torch.testing.assert_close(fast_logits, ref_logits, rtol=1e-5, atol=1e-6)
    for name, grad in ref_grads.items():
        torch.testing.assert_close(fast_grads[name], grad, rtol=1e-4, atol=1e-6, msg=name)


def test_with_dropout_a_training_step_drops_and_stays_finite():
    model = Transformer(config(dropout=0.3)).train()
    src, tgt = padded_batch()
    a, b = model(src, tgt), model(src, tgt)  # two draws of the masks
    assert not torch.equal(a, b)
    (a.square().mean()).backward()
    assert all(p.grad is None or p.grad.isfinite().all() for p in model.parameters())


def test_the_fast_path_is_what_training_calls(monkeypatch):
    calls = []
    monkeypatch.setattr(fast_training, "forward", lambda *args: calls.append(args) or 0)
    model = Transformer(config()).train()
    src, tgt = padded_batch()
    model(src, tgt)
    assert len(calls) == 1


@pytest.mark.parametrize(
    "situation",
    ["eval mode", "switched off", "a mask given", "no padding", "attention recorded"],
)
def test_the_reference_path_otherwise(situation):
    model = Transformer(config()).train()
    src, tgt = padded_batch()
    src_mask = None
    if situation == "eval mode":
        model.eval()
    elif situation == "switched off":
        model.config.fast_training = False
    elif situation == "a mask given":
        src_mask = src[:, None, None, :] != PAD_ID
    elif situation == "no padding":
        src = src.clamp(min=4)
    if situation == "attention recorded":
        with record_attention(model) as maps:
            assert not fast_training.applies(model, src, src_mask)
            model(src, tgt)
        assert maps["encoder.layers.0.self_attn"].shape == (6, 4, 9, 9)
    else:
        assert not fast_training.applies(model, src, src_mask)


def test_in_eval_mode_the_logits_are_the_references_exactly():
    model = Transformer(config(dropout=0.1)).eval()
    src, tgt = padded_batch()
    with torch.no_grad():
        fast = model(src, tgt)
        model.config.fast_training = False
        assert torch.equal(model(src, tgt), fast)


def test_lesson_7s_recipe_trains_on_the_reference_path():
    """Its shipped checkpoint is reproduced bit for bit only by the path that trained it."""

    class Corpus:
        src_vocab, tgt_vocab = range(20), range(30)

    model = new_model(Corpus()).train()
    src, _ = padded_batch(vocab=20)
    assert not model.config.fast_training
    assert not fast_training.applies(model, src, None)
