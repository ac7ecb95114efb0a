import pytest
import torch

from course_lib.baselines import (
    AdditiveAttention,
    AttentionDecoder,
    BiLSTMEncoder,
    Seq2Seq,
    Seq2SeqEncoder,
    VanillaDecoder,
    evaluate_seq2seq,
    mean_forward_seconds,
    reversal_data,
    teacher_forcing_probability,
    train_seq2seq,
)


def n_params(module):
    return sum(p.numel() for p in module.parameters())


def test_lab_l1a_parameter_counts():
    vanilla, attention = Seq2Seq(attention=False), Seq2Seq(attention=True)
    assert n_params(vanilla.encoder) == n_params(attention.encoder) == 100_608
    assert n_params(vanilla.decoder) == 103_188
    assert n_params(attention.decoder) == 187_732
    # W_dec and W_enc are 128 x 64 each and v has 64 weights: additive attention has no biases.
    assert n_params(attention.decoder.attention) == 16_448
    assert isinstance(vanilla.decoder, VanillaDecoder)
    assert isinstance(attention.decoder, AttentionDecoder)


def test_lab_l1b_bilstm_parameter_count_and_output():
    encoder = BiLSTMEncoder(vocab_size=10_000, d_embed=256, hidden=128, n_layers=2)
    assert n_params(encoder) == 3_350_528
    assert n_params(encoder.lstm) == 790_528
    assert encoder(torch.randint(0, 10_000, (2, 7))).shape == (2, 7, 256)


@pytest.mark.parametrize("attention", [False, True])
@pytest.mark.parametrize("B, S, T", [(1, 2, 2), (3, 5, 5), (2, 7, 4)])
def test_shapes(attention, B, S, T):
    model = Seq2Seq(vocab_size=11, d_embed=8, hidden=16, attention=attention, attn_dim=6)
    src, tgt = torch.randint(0, 11, (B, S)), torch.randint(0, 11, (B, T))
    enc_out, (h, c) = model.encoder(src)
    assert enc_out.shape == (B, S, 16) and h.shape == c.shape == (1, B, 16)
    assert model(src, tgt, teacher_forcing=0.5).shape == (B, T - 1, 11)
    tokens, weights = model.greedy(src, tgt[:, 0], T)
    assert tokens.shape == (B, T) and tokens.dtype == torch.int64
    assert torch.equal(tokens[:, 0], tgt[:, 0])
    if attention:
        assert weights.shape == (B, T - 1, S)
    else:
        assert weights is None


@pytest.mark.parametrize("B, S", [(1, 1), (4, 9)])
def test_bilstm_encoder_shape(B, S):
    encoder = BiLSTMEncoder(vocab_size=30, d_embed=12, hidden=5, n_layers=3)
    assert encoder(torch.randint(0, 30, (B, S))).shape == (B, S, 10)


def test_additive_attention_matches_the_formula_and_sums_to_one():
    attention = AdditiveAttention(hidden=6, attn_dim=4)
    assert attention.w_dec.bias is None and attention.w_enc.bias is None
    assert attention.v.bias is None
    h_prev, enc_out = torch.randn(2, 6), torch.randn(2, 5, 6)
    context, weights = attention(h_prev, enc_out)
    w_dec, w_enc, v = attention.w_dec.weight, attention.w_enc.weight, attention.v.weight[0]
    for b in range(2):
        scores = torch.stack([v @ torch.tanh(w_dec @ h_prev[b] + w_enc @ e) for e in enc_out[b]])
        expected = scores.softmax(dim=0)
        torch.testing.assert_close(weights[b], expected)
        torch.testing.assert_close(context[b], (expected[:, None] * enc_out[b]).sum(dim=0))
    torch.testing.assert_close(weights.sum(dim=-1), torch.ones(2))


def test_greedy_attention_weights_are_distributions_over_source():
    model = Seq2Seq(vocab_size=9, d_embed=8, hidden=16, attention=True, attn_dim=8)
    src = torch.randint(0, 9, (3, 6))
    _, weights = model.greedy(src, src[:, -1], 6)
    assert (weights >= 0).all()
    torch.testing.assert_close(weights.sum(dim=-1), torch.ones(3, 5))


def test_vanilla_decoder_sees_the_source_only_through_its_state():
    decoder = VanillaDecoder(vocab_size=9, d_embed=4, hidden=8)
    token, state = torch.tensor([3, 4]), (torch.randn(1, 2, 8), torch.randn(1, 2, 8))
    a, _, _ = decoder.forward_step(token, state, torch.randn(2, 5, 8))
    b, _, _ = decoder.forward_step(token, state, torch.randn(2, 3, 8))
    torch.testing.assert_close(a, b)


@pytest.mark.parametrize("attention", [False, True])
def test_teacher_forcing_extremes(attention):
    model = Seq2Seq(vocab_size=12, d_embed=8, hidden=16, attention=attention, attn_dim=8)
    src, tgt = reversal_data(4, 6, vocab_size=12, seed=3)
    # Without teacher forcing the model feeds back its argmax, exactly as greedy decoding does.
    free = model(src, tgt, teacher_forcing=0.0)
    tokens, _ = model.greedy(src, tgt[:, 0], 6)
    assert torch.equal(free.argmax(dim=-1), tokens[:, 1:])
    # With full teacher forcing, step t's logits depend on the true tokens before t only.
    forced = model(src, tgt, teacher_forcing=1.0)
    changed = tgt.clone()
    changed[:, 3] = (changed[:, 3] + 1) % 12
    again = model(src, changed, teacher_forcing=1.0)
    torch.testing.assert_close(forced[:, :3], again[:, :3])
    assert not torch.allclose(forced[:, 3:], again[:, 3:])


def test_reversal_data_is_correct_and_deterministic():
    src, tgt = reversal_data(400, 9, vocab_size=20, seed=5)
    assert src.shape == tgt.shape == (400, 9) and src.dtype == tgt.dtype == torch.int64
    assert torch.equal(tgt, src.flip(1))
    assert torch.equal(tgt[:, 0], src[:, -1])
    assert set(src.unique().tolist()) == set(range(2, 20))
    again, _ = reversal_data(400, 9, vocab_size=20, seed=5)
    other, _ = reversal_data(400, 9, vocab_size=20, seed=6)
    assert torch.equal(src, again)
    assert not torch.equal(src, other)


@pytest.mark.parametrize(
    "epoch, expected", [(0, 1.0), (1, 0.97), (10, 0.7), (26, 0.22), (27, 0.2), (30, 0.2), (99, 0.2)]
)
def test_teacher_forcing_schedule(epoch, expected):
    assert teacher_forcing_probability(epoch) == pytest.approx(expected)


def test_evaluation_scores_positions_two_onwards_only():
    class Fixed(torch.nn.Module):
        vocab_size = 20

        def __init__(self, tokens):
            super().__init__()
            self.tokens = tokens

        def greedy(self, src, first_token, length):
            return self.tokens, None

    src, tgt = reversal_data(4, 5, seed=0)
    predicted = tgt.clone()
    predicted[1, 0] = 0  # position 1 is given, not predicted: it must not count
    predicted[2, 3] = 0  # one wrong token out of 4 x 4 scored ones
    result = evaluate_seq2seq(Fixed(predicted), src, tgt)
    assert result["token_accuracy"] == pytest.approx(15 / 16)
    assert result["sequence_accuracy"] == pytest.approx(3 / 4)


def test_training_is_deterministic_for_a_seed():
    src, tgt = reversal_data(96, 5, seed=0)
    losses = []
    for _ in range(2):
        torch.manual_seed(7)
        model = Seq2Seq(vocab_size=20, d_embed=8, hidden=16, attention=True, attn_dim=8)
        history = train_seq2seq(model, src, tgt, epochs=2, batch_size=32, seed=3)
        losses.append([h["loss"] for h in history])
    assert losses[0] == losses[1]
    assert [h["epoch"] for h in history] == [0, 1]
    assert [h["teacher_forcing"] for h in history] == pytest.approx([1.0, 0.97])


@pytest.mark.slow
def test_attention_beats_vanilla_on_reversal():
    # Measured over seeds 0-3 on 1 and 2 threads: attention 0.91-0.97, vanilla 0.27-0.31.
    src, tgt = reversal_data(512, 8, seed=0)
    test_src, test_tgt = reversal_data(300, 8, seed=1)
    accuracy = {}
    for attention in (False, True):
        torch.manual_seed(0)
        model = Seq2Seq(attention=attention)
        history = train_seq2seq(model, src, tgt, epochs=6, batch_size=16, seed=0)
        assert history[-1]["loss"] < history[0]["loss"]
        accuracy[attention] = evaluate_seq2seq(model, test_src, test_tgt)["token_accuracy"]
    chance = 1 / 18
    assert accuracy[True] > 0.8 > 10 * chance
    assert accuracy[True] > accuracy[False] + 0.4, accuracy


SRC, TGT = reversal_data(2, 4, seed=0)


@pytest.mark.parametrize(
    "call, error, name",
    [
        (lambda: reversal_data(0, 5), ValueError, "n_samples"),
        (lambda: reversal_data(4, 5.0), TypeError, "seq_len"),
        (lambda: reversal_data(4, 5, vocab_size=2), ValueError, "vocab_size"),
        (lambda: Seq2Seq(attention=1), TypeError, "attention"),
        (lambda: Seq2Seq(hidden=0, attention=True), ValueError, "hidden"),
        (lambda: Seq2Seq(attention=False)(SRC.float(), TGT), TypeError, "src"),
        (lambda: Seq2Seq(attention=False)(SRC, TGT.int()), TypeError, "tgt"),
        (lambda: Seq2Seq(attention=False)(SRC[0], TGT), ValueError, "src"),
        (lambda: Seq2Seq(attention=False)(SRC, TGT[:, :1]), ValueError, "tgt"),
        (lambda: Seq2Seq(attention=False)(SRC, TGT[:1]), ValueError, "tgt"),
        (lambda: Seq2Seq(attention=False)(SRC, TGT + 20), ValueError, "tgt"),
        (lambda: Seq2Seq(attention=False)(SRC, TGT, 1.5), ValueError, "teacher_forcing"),
        (lambda: Seq2Seq(attention=True).greedy(SRC, TGT, 4), ValueError, "first_token"),
        (lambda: Seq2Seq(attention=True).greedy(SRC, TGT[:, 0], 1), ValueError, "length"),
        (lambda: teacher_forcing_probability(-1), ValueError, "epoch"),
        (lambda: train_seq2seq(Seq2Seq(attention=False), SRC, TGT, epochs=0), ValueError, "epochs"),
        (lambda: BiLSTMEncoder(n_layers=0), ValueError, "n_layers"),
        (lambda: BiLSTMEncoder(vocab_size=10)(torch.tensor([[3, 10]])), ValueError, "src"),
    ],
)
def test_bad_input_names_the_argument(call, error, name):
    with pytest.raises(error, match=name):
        call()


def test_encoder_final_state_is_its_last_output():
    encoder = Seq2SeqEncoder(vocab_size=7, d_embed=4, hidden=5)
    outputs, (h, _) = encoder(torch.randint(0, 7, (3, 6)))
    torch.testing.assert_close(h[0], outputs[:, -1])


def test_mean_forward_seconds_times_without_touching_the_global_generator():
    calls = []

    class Model(torch.nn.Module):
        def forward(self, tokens):
            calls.append(tuple(tokens.shape))
            return tokens

    model = Model()
    state = torch.random.get_rng_state()
    seconds = mean_forward_seconds(model, 7, repeats=3, batch=2)
    assert seconds >= 0 and calls == [(2, 7)] * 4  # one warm-up, three timed
    assert torch.equal(torch.random.get_rng_state(), state)
