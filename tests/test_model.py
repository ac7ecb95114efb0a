import math
import subprocess
import sys

import pytest
import torch
from torch import nn

from course_lib.attention import record_attention
from course_lib.interop import copy_weights_from_torch
from course_lib.masks import causal_mask, padding_mask, target_mask
from course_lib.model import (
    Attentions,
    Transformer,
    TransformerConfig,
    UnmaskedByDefault,
    count_parameters,
    make_encoder,
)
from course_lib.positional import sinusoidal_encoding

PAD = 0


def small(**overrides):
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


def tokens(B, T, vocab, lengths=None):
    x = torch.randint(1, vocab, (B, T))
    for b, n in enumerate(lengths or []):
        x[b, n:] = PAD
    return x


# --- shapes and wiring ------------------------------------------------------------------


@pytest.mark.parametrize("B, S, T", [(1, 1, 1), (2, 7, 5), (4, 3, 9)])
@pytest.mark.parametrize("d_model, n_heads", [(16, 1), (32, 4), (24, 3)])
def test_forward_shapes(B, S, T, d_model, n_heads):
    model = Transformer(small(d_model=d_model, n_heads=n_heads)).eval()
    logits = model(tokens(B, S, 30), tokens(B, T, 40))
    assert logits.shape == (B, T, 40)
    memory = model.encode(tokens(B, S, 30))
    assert memory.shape == (B, S, d_model)


def test_attention_weights_are_exposed_per_layer_and_head():
    model = Transformer(small(n_encoder_layers=2, n_decoder_layers=3)).eval()
    src, tgt = tokens(2, 6, 30, lengths=[6, 4]), tokens(2, 5, 40)
    logits, att = Attentions.of(model, src, tgt)
    torch.testing.assert_close(logits, model(src, tgt))
    assert [w.shape for w in att.encoder] == [(2, 4, 6, 6)] * 2
    assert [w.shape for w in att.decoder_self] == [(2, 4, 5, 5)] * 3
    assert [w.shape for w in att.cross] == [(2, 4, 5, 6)] * 3
    for w in att.decoder_self:  # causal: nothing above the diagonal
        assert torch.equal(w.triu(diagonal=1), torch.zeros_like(w))
    for w in att.encoder + att.cross:  # padded source positions get no attention
        assert torch.equal(w[1, ..., 4:], torch.zeros_like(w[1, ..., 4:]))
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))


def test_recording_attention_leaves_the_model_as_it_was():
    model = Transformer(small(n_encoder_layers=1, n_decoder_layers=1)).eval()
    src, tgt = tokens(2, 6, 30), tokens(2, 5, 40)
    with record_attention(model) as maps:
        model(src, tgt)
    names = ["encoder.layers.0.self_attn", "decoder.layers.0.self_attn"]
    assert sorted(maps) == sorted([*names, "decoder.layers.0.cross_attn"])
    with record_attention(model.encoder.layers[0].self_attn) as alone:
        pass
    assert alone == {}  # nothing ran in the block
    attention = model.encoder.layers[0].self_attn
    assert not attention._forward_hooks and not attention._forward_pre_hooks  # hooks removed
    with (
        pytest.raises(TypeError, match="module must be an nn.Module; got str"),
        record_attention("x"),
    ):
        pass


def test_embeddings_are_scaled_by_sqrt_d_model_before_the_encoding():
    c = small(n_encoder_layers=1)
    model = Transformer(c).eval()
    src = tokens(2, 5, 30)
    x = model.src_embed(src) * math.sqrt(c.d_model) + sinusoidal_encoding(5, c.d_model)
    torch.testing.assert_close(model.encode(src), model.encoder(x, padding_mask(src, PAD)))


def test_shared_embeddings_are_one_matrix():
    model = Transformer(small(src_vocab_size=40, share_embeddings=True))
    assert model.tgt_embed is model.src_embed
    assert model.output_projection.weight is model.src_embed.weight
    assert model.src_embed.weight.std().item() == pytest.approx(32**-0.5, rel=0.1)


def test_final_norm_is_off_by_default_as_in_the_paper():
    assert isinstance(Transformer(small()).encoder.norm, nn.Identity)
    assert isinstance(Transformer(small(final_norm=True)).decoder.norm, nn.LayerNorm)


# --- behaviour --------------------------------------------------------------------------


def test_decoder_output_at_t_ignores_later_target_tokens():
    model = Transformer(small()).eval()
    src, tgt = tokens(2, 6, 30), tokens(2, 7, 40)
    changed = tgt.clone()
    changed[:, 4:] = tokens(2, 3, 40)
    a, b = model(src, tgt), model(src, changed)
    torch.testing.assert_close(a[:, :4], b[:, :4])
    assert not torch.allclose(a[:, 4:], b[:, 4:])


def test_source_padding_does_not_change_the_result():
    model = Transformer(small()).eval()
    src, tgt = tokens(1, 5, 30), tokens(1, 4, 40)
    padded = torch.cat([src, torch.zeros(1, 3, dtype=torch.long)], dim=1)
    torch.testing.assert_close(model(src, tgt), model(padded, tgt), atol=1e-5, rtol=1e-5)


# --- agreement with torch.nn.Transformer ------------------------------------------------


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("B, S, T", [(1, 4, 3), (3, 7, 6)])
def test_stacks_agree_with_nn_transformer(norm_first, B, S, T):
    c = small(attention_bias=True, final_norm=True, norm_first=norm_first)
    ours = Transformer(c).eval()
    theirs = nn.Transformer(
        c.d_model,
        c.n_heads,
        c.n_encoder_layers,
        c.n_decoder_layers,
        c.d_ff,
        dropout=0.0,
        batch_first=True,
        norm_first=norm_first,
    ).eval()
    copy_weights_from_torch(ours, theirs)
    src = tokens(B, S, 30, lengths=[S, 2, S - 1][:B])
    tgt = tokens(B, T, 40, lengths=[T, T - 1, 1][:B])
    x_src = torch.randn(B, S, c.d_model)
    x_tgt = torch.randn(B, T, c.d_model)
    with torch.no_grad():
        memory = ours.encoder(x_src, padding_mask(src, PAD))
        out = ours.decoder(x_tgt, memory, target_mask(tgt, PAD), padding_mask(src, PAD))
        # PyTorch: True = blocked, the opposite polarity.
        ref_memory = theirs.encoder(x_src, src_key_padding_mask=src == PAD)
        ref_out = theirs.decoder(
            x_tgt,
            memory,
            tgt_mask=nn.Transformer.generate_square_subsequent_mask(T),
            tgt_key_padding_mask=tgt == PAD,
            memory_key_padding_mask=src == PAD,
        )
    # PyTorch's eval fast path zeroes padded encoder outputs, so compare real tokens only.
    torch.testing.assert_close(memory[src != PAD], ref_memory[src != PAD], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out[tgt != PAD], ref_out[tgt != PAD], atol=1e-5, rtol=1e-5)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_copy_weights_rejects_a_mismatched_configuration():
    theirs = nn.Transformer(32, 4, 2, 2, 64, batch_first=True)
    with pytest.raises(ValueError, match="ours.config.final_norm must be True"):
        copy_weights_from_torch(Transformer(small(attention_bias=True)), theirs)
    with pytest.raises(ValueError, match="ours.config.d_ff must be 64"):
        copy_weights_from_torch(
            Transformer(small(d_ff=32, attention_bias=True, final_norm=True)), theirs
        )
    with pytest.raises(TypeError, match="theirs must be a torch.nn.Transformer"):
        copy_weights_from_torch(Transformer(small()), nn.Linear(2, 2))
    with pytest.raises(TypeError, match="ours must be a course_lib.model.Transformer; got Linear"):
        copy_weights_from_torch(nn.Linear(2, 2), theirs)
    no_bias = nn.Transformer(32, 4, 2, 2, 64, batch_first=True, bias=False)
    with pytest.raises(ValueError, match="theirs must be built with bias=True"):
        copy_weights_from_torch(Transformer(small(attention_bias=True, final_norm=True)), no_bias)


# --- the paper's numbers ----------------------------------------------------------------


def on_meta(config):
    """Build without allocating memory: counting needs shapes, not values."""
    with torch.device("meta"):
        return Transformer(config)


def test_base_model_parameter_count():
    counts = count_parameters(on_meta(TransformerConfig()))
    assert counts == {
        "embeddings": 18_944_000,  # one 37,000 x 512 matrix shared by both embeddings and the output
        "attention": 18_874_368,  # 18 blocks x 4 x 512^2
        "feed_forward": 25_196_544,  # 12 blocks x 2,099,712
        "norms": 30_720,  # 30 LayerNorms x 1,024
        "output": 37_000,  # the pre-softmax bias; its weight is the shared embedding
        "total": 63_082_632,
    }


def test_big_model_parameter_count():
    assert count_parameters(on_meta(TransformerConfig.big()))["total"] == 214_208_648


def test_untied_model_and_encoder_weights_of_lesson_7():
    untied = on_meta(TransformerConfig(share_embeddings=False))
    assert count_parameters(untied)["total"] == 100_970_632
    matrices = sum(p.numel() for p in untied.encoder.parameters() if p.dim() == 2)
    assert matrices == 18_874_368  # 6 x (4 x 512^2 + 2 x 512 x 2048), the exercise's answer


def test_count_parameters_names_pytorch_modules_too():
    layer = nn.TransformerEncoderLayer(512, 8)
    counts = count_parameters(nn.TransformerEncoder(layer, 6, enable_nested_tensor=False))
    assert counts["total"] == 18_914_304
    assert counts["attention"] == 6 * 1_050_624 and counts["feed_forward"] == 6 * 2_099_712


def test_count_parameters_skips_frozen_and_rejects_non_modules():
    model = Transformer(small())
    model.src_embed.weight.requires_grad_(False)
    assert count_parameters(model)["embeddings"] == 40 * 32
    with pytest.raises(TypeError, match="model must be a torch.nn.Module; got str"):
        count_parameters("model")


# --- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "settings, words",
    [
        (dict(d_model=10, n_heads=3), r"d_model \(10\) must be divisible by n_heads \(3\)"),
        (dict(src_vocab_size=10), "share_embeddings needs src_vocab_size == tgt_vocab_size"),
        (dict(dropout=1.0), r"dropout must be in \[0, 1\)"),
        (dict(n_encoder_layers=0), "n_encoder_layers must be a positive int; got 0"),
        (dict(d_model=9, n_heads=3), "d_model must be even.*got 9"),
    ],
)
def test_config_rejects_bad_settings(settings, words):
    with pytest.raises(ValueError, match=words):
        TransformerConfig(**settings)


def test_model_rejects_bad_input():
    model = Transformer(small())
    with pytest.raises(TypeError, match="src must hold integer token ids"):
        model(torch.randn(2, 3), tokens(2, 3, 40))
    with pytest.raises(ValueError, match="tgt must be 2-D; got 1-D"):
        model(tokens(2, 3, 30), torch.tensor([1, 2]))
    with pytest.raises(
        ValueError,
        match=r"memory must have shape \(B, S, d_model\) = \(2, S, 32\); got \(3, 3, 32\)",
    ):
        model.decode(tokens(2, 3, 40), torch.randn(3, 3, 32))
    with pytest.raises(ValueError, match=r"memory must have shape .*got \(2, 3, 16\)"):
        model.decode(tokens(2, 3, 40), torch.randn(2, 3, 16))
    with pytest.raises(
        ValueError, match=r"src_mask must broadcast to \(B, H, T_q, T_k\) = \(2, 4, 3, 3\)"
    ):
        model(tokens(2, 3, 30), tokens(2, 4, 40), src_mask=torch.ones(2, 5, dtype=torch.bool))
    with pytest.raises(TypeError, match="tgt_mask must have dtype torch.bool"):
        model(tokens(2, 3, 30), tokens(2, 4, 40), tgt_mask=torch.ones(4, 4))
    with pytest.raises(ValueError, match=r"memory_mask must broadcast to .* = \(2, 4, 4, 3\)"):
        model.decode(
            tokens(2, 4, 40),
            torch.randn(2, 3, 32),
            memory_mask=torch.ones(2, 1, 1, 5, dtype=torch.bool),
        )


# --- masks: only shapes with one meaning -------------------------------------------------
# B == n_heads == 4 on purpose: a 3-D mask would then broadcast with its batch axis on the
# heads and change the output without an error.


def padded_pair():
    return tokens(4, 5, 30, lengths=[5, 3, 2, 4]), tokens(4, 6, 40, lengths=[6, 2, 5, 3])


@pytest.mark.parametrize(
    "call, words",
    [
        pytest.param(
            lambda m, src, tgt: m(src, tgt, src_mask=padding_mask(src, PAD)[:, 0]),
            ["src_mask must be 2-D or 4-D; got 3-D with shape (4, 1, 5)", "gives (4, 1, 1, 5)"],
            id="forward src_mask (B, 1, S)",
        ),
        pytest.param(
            lambda m, src, tgt: m.encode(src, padding_mask(src, PAD)[:, 0]),
            ["src_mask must be 2-D or 4-D; got 3-D", "src_mask[:, None]"],
            id="encode src_mask (B, 1, S)",
        ),
        pytest.param(
            lambda m, src, tgt: m(src, tgt, tgt_mask=target_mask(tgt, PAD)[:, 0]),
            ["tgt_mask must be 2-D or 4-D; got 3-D with shape (4, 6, 6)", "gives (4, 1, 6, 6)"],
            id="forward tgt_mask (B, T, T)",
        ),
        pytest.param(
            lambda m, src, tgt: m.decode(
                tgt, m.encode(src), memory_mask=padding_mask(src, PAD)[:, 0]
            ),
            ["memory_mask must be 2-D or 4-D; got 3-D with shape (4, 1, 5)", "(B, 1, S)"],
            id="decode memory_mask (B, 1, S)",
        ),
    ],
)
def test_model_rejects_3d_masks_with_the_accepted_shapes(call, words):
    model = Transformer(small()).eval()
    src, tgt = padded_pair()
    with pytest.raises(ValueError) as error:
        call(model, src, tgt)
    message = str(error.value)
    for expected in [*words, "Accepted: 2-D (T_q, T_k)", "4-D (B, H, T_q, T_k) = (4, 4,"]:
        assert expected in message


@pytest.mark.parametrize(
    "src_mask, tgt_mask",
    [
        pytest.param(lambda s, t: padding_mask(s, PAD), lambda s, t: target_mask(t, PAD), id="4-D"),
        pytest.param(
            lambda s, t: padding_mask(s, PAD),
            lambda s, t: target_mask(t, PAD).expand(4, 4, 6, 6),
            id="(B, H, T, T)",
        ),
    ],
)
def test_model_accepts_the_masks_it_builds_itself(src_mask, tgt_mask):
    model = Transformer(small()).eval()
    src, tgt = padded_pair()
    given = model(src, tgt, src_mask=src_mask(src, tgt), tgt_mask=tgt_mask(src, tgt))
    torch.testing.assert_close(given, model(src, tgt))  # the defaults are these masks


@pytest.mark.parametrize(
    "tgt_mask", [causal_mask(6), causal_mask(6)[None, None]], ids=["(T, T)", "(1, 1, T, T)"]
)
def test_model_accepts_a_shared_causal_mask(tgt_mask):
    model = Transformer(small()).eval()
    src, tgt = tokens(4, 5, 30), tokens(4, 6, 40)  # no padding: causal alone is the default
    torch.testing.assert_close(model(src, tgt, tgt_mask=tgt_mask), model(src, tgt))


def test_forward_rejects_a_src_mask_that_varies_by_query():
    # forward reuses src_mask for cross-attention, whose queries are target positions: with
    # S == T a per-query (S, S) mask would broadcast there and mask the wrong queries.
    model = Transformer(small()).eval()
    src, tgt, per_query = tokens(4, 5, 30), tokens(4, 5, 40), causal_mask(5)
    with pytest.raises(ValueError) as error:
        model(src, tgt, src_mask=per_query)
    message = str(error.value)
    assert "src_mask must hide keys only, with shape (B, 1, 1, S)" in message
    assert "got (5, 5)" in message and "model.encode(src, src_mask)" in message
    memory = model.encode(src, per_query)  # the way to use such a mask
    assert model.decode(tgt, memory).shape == (4, 5, 40)


def test_an_all_padding_sentence_trains_without_nan():
    model = Transformer(small(dropout=0.1)).train()
    src, tgt = tokens(2, 5, 30), tokens(2, 4, 40)
    src[1] = PAD  # nothing to attend to in the encoder or in cross-attention
    logits = model(src, tgt)
    logits.sum().backward()
    assert torch.isfinite(logits).all()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_initial_loss_is_near_uniform_guessing():
    # With embeddings of std d_model^-0.5, the scaled embeddings start near unit variance and
    # the tied output layer starts near-uniform; N(0, 1) embeddings would start far above ln V.
    model = Transformer(small(src_vocab_size=500, tgt_vocab_size=500, share_embeddings=True))
    src, tgt = tokens(8, 10, 500), tokens(8, 11, 500)
    loss = torch.nn.functional.cross_entropy(
        model(src, tgt[:, :-1]).flatten(0, 1), tgt[:, 1:].flatten()
    )
    assert loss.item() < 1.3 * math.log(500)


def test_make_encoder_chains_its_named_parts():
    torch.manual_seed(0)
    encoder = make_encoder(50, 16, 2, 2, 24, dropout=0.0).eval()
    ids = tokens(2, 5, 50)
    by_hand = encoder["encoder"](encoder["positional"](encoder["embedding"](ids)))
    torch.testing.assert_close(encoder(ids), by_hand)
    assert encoder.embedding is encoder["embedding"]
    names = [n for n, _ in encoder.named_parameters()]
    assert names[0] == "embedding.weight" and "encoder.layers.1.ffn.w_2.bias" in names


def test_a_model_unmasked_by_default_reads_the_future_until_given_masks():
    torch.manual_seed(0)
    model = UnmaskedByDefault(small()).eval()
    src, tgt = tokens(2, 6, 30), tokens(2, 5, 40)
    future = tgt.clone()
    future[:, 2:] = 7
    first = [model(src, t)[:, 0] for t in (tgt, future)]
    assert not torch.allclose(*first)  # position 0 changed with tokens it should not see
    masked = [
        model(src, t, padding_mask(src, PAD), target_mask(t, PAD))[:, 0] for t in (tgt, future)
    ]
    torch.testing.assert_close(*masked)


def test_the_model_does_not_import_interop():
    """interop builds on the model, never the other way round: no import cycle to untangle."""
    code = "import sys, course_lib.model; assert 'course_lib.interop' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
