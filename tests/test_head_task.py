"""The head-specialisation task of lesson 4 (``course_lib/head_task.py``)."""

import pytest
import torch

from course_lib.head_task import (
    IGNORE,
    HeadTaskModel,
    accuracy,
    head_weights,
    make_batch,
    relation_weights,
    targets_for,
    train,
)


def test_targets_combine_the_first_and_the_previous_symbol():
    tokens, targets = make_batch(50, torch.Generator().manual_seed(0), vocab_size=7, seq_len=6)
    assert tokens.shape == targets.shape == (50, 6)
    assert (targets[:, 0] == IGNORE).all()
    for t in range(1, 6):
        assert torch.equal(targets[:, t], (tokens[:, 0] - 2 * tokens[:, t - 1]) % 7)


def test_the_order_of_the_two_symbols_matters():
    """Swapping the first and the previous symbol changes the target: an even mix of the two cannot solve it."""
    targets = targets_for(torch.tensor([[1, 5, 0], [5, 1, 0]]), vocab_size=8)
    assert targets[0, 1] == (1 - 2 * 1) % 8 == 7 and targets[1, 1] == (5 - 2 * 5) % 8 == 3
    assert targets[0, 2] == (1 - 2 * 5) % 8 == 7 and targets[1, 2] == (5 - 2 * 1) % 8 == 3
    assert (targets[:, 0] == IGNORE).all()


def test_relation_weights_read_the_previous_and_the_first_position():
    T = 5
    previous = torch.eye(T).roll(-1, dims=1).tril()  # row t has its 1 at column t - 1
    first = torch.zeros(T, T)
    first[:, 0] = 1.0
    uniform = torch.full((T, T), 1 / T)
    weights = torch.stack([previous, first, uniform])[None]  # (1, 3, T, T)
    r = relation_weights(weights)
    torch.testing.assert_close(r["previous"], torch.tensor([1.0, 0.0, 1 / T]))
    torch.testing.assert_close(r["first"], torch.tensor([0.0, 1.0, 1 / T]))


def test_relation_weights_reject_a_single_head_or_too_short_sequences():
    with pytest.raises(ValueError, match=r"\(B, H, T, T\) tensor with T >= 3; got \(5, 5\)"):
        relation_weights(torch.ones(5, 5))
    with pytest.raises(ValueError, match=r"T >= 3; got \(1, 2, 2, 2\)"):
        relation_weights(torch.ones(1, 2, 2, 2))  # no position has a previous other than the first


def test_the_model_rejects_sequences_longer_than_its_positions():
    with pytest.raises(ValueError, match=r"T <= seq_len = 8; got shape \(2, 9\)"):
        HeadTaskModel(seq_len=8)(torch.zeros(2, 9, dtype=torch.long))


def test_the_model_returns_logits_and_head_weights_gives_each_heads_weights():
    model = HeadTaskModel(vocab_size=8, seq_len=8, d_model=32, n_heads=4)
    tokens = torch.zeros(3, 8, dtype=torch.long)
    logits, weights = model(tokens), head_weights(model, tokens)
    assert logits.shape == (3, 8, 8) and weights.shape == (3, 4, 8, 8)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, 8))


def test_training_makes_one_head_look_back_and_another_look_at_the_start():
    torch.manual_seed(0)
    model = HeadTaskModel()
    tokens, targets = make_batch(500, torch.Generator().manual_seed(1))
    with torch.no_grad():
        before = relation_weights(head_weights(model, tokens))
    losses = train(model, steps=200)
    with torch.no_grad():
        after = relation_weights(head_weights(model, tokens))
    assert max(before["previous"].max(), before["first"].max()) < 0.4  # near uniform, 1/8
    looks_back, looks_first = after["previous"].argmax(), after["first"].argmax()
    assert looks_back != looks_first
    assert after["previous"][looks_back] > 0.7 and after["first"][looks_first] > 0.7
    assert losses[-1] < 0.1 * losses[0] and accuracy(model, tokens, targets) > 0.95
