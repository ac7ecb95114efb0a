import itertools
from types import SimpleNamespace

import pytest
import torch

from course_lib.data import BOS_ID, EOS_ID, PAD_ID, copy_task, infinite_batches
from course_lib.decoding import beam_search, greedy_decode, length_penalty
from course_lib.model import Transformer, TransformerConfig
from course_lib.training import train

SEQ_LEN, N_SYMBOLS = 6, 8


def as_tensors(pairs):
    src = torch.tensor([s for s, _ in pairs])
    expected = torch.tensor([t + [EOS_ID] for _, t in pairs])
    return src, expected


def exact(output, expected):
    return (output == expected).all(dim=1).float().mean().item()


@pytest.fixture(scope="module")
def copy_model():
    """A tiny Transformer trained on the copy task until greedy decoding gets 99% right."""
    torch.manual_seed(0)
    model = Transformer(TransformerConfig.tiny(4 + N_SYMBOLS, 4 + N_SYMBOLS, dropout=0.0))
    held_out = copy_task(200, SEQ_LEN, N_SYMBOLS, seed=1)
    src, expected = as_tensors(held_out)
    history = train(
        model,
        infinite_batches(copy_task(4000, SEQ_LEN, N_SYMBOLS, seed=0), 64),
        steps=1500,
        warmup=400,
        evaluate=lambda m: {"exact_match": exact(greedy_decode(m, src, SEQ_LEN + 1), expected)},
        eval_every=50,
        target=0.99,
        progress=False,
    )
    assert history.best["exact_match"] >= 0.99, history.evals
    return model


@pytest.mark.slow
def test_greedy_and_beam_solve_the_copy_task(copy_model):
    src, expected = as_tensors(copy_task(300, SEQ_LEN, N_SYMBOLS, seed=2))
    assert exact(greedy_decode(copy_model, src, SEQ_LEN + 1), expected) >= 0.99
    assert exact(beam_search(copy_model, src, beam_size=4, max_len=SEQ_LEN + 1), expected) >= 0.99


@pytest.mark.slow
def test_beam_of_one_is_greedy(copy_model):
    src, _ = as_tensors(copy_task(50, SEQ_LEN, N_SYMBOLS, seed=3))
    assert torch.equal(beam_search(copy_model, src, beam_size=1), greedy_decode(copy_model, src))


@pytest.mark.slow
def test_output_stops_at_eos_then_pads(copy_model):
    src, _ = as_tensors(copy_task(20, SEQ_LEN, N_SYMBOLS, seed=4))
    src[:10, 3:] = PAD_ID  # shorter sources: their copies end sooner
    for out in (greedy_decode(copy_model, src), beam_search(copy_model, src, 3)):
        for row in out.tolist():
            assert EOS_ID in row
            end = row.index(EOS_ID)
            assert all(t == PAD_ID for t in row[end + 1 :])
            assert PAD_ID not in row[:end]


def test_untrained_model_stops_at_max_len():
    model = Transformer(TransformerConfig.tiny(12, 12))
    src = torch.randint(4, 12, (2, 5))
    assert greedy_decode(model, src, max_len=3).shape[1] <= 3
    assert beam_search(model, src, beam_size=2, max_len=3).shape[1] <= 3


def test_length_penalty_of_the_paper():
    assert length_penalty(1, 0.6) == pytest.approx(1.0)
    assert length_penalty(7, 0.6) == pytest.approx(2**0.6)
    assert length_penalty(7, 0.0) == 1.0


@pytest.mark.parametrize(
    "call, error, words",
    [
        (
            lambda m: greedy_decode(m, torch.randn(2, 3)),
            TypeError,
            "src must hold integer token ids",
        ),
        (lambda m: greedy_decode(m, torch.tensor([4, 5])), ValueError, "src must be 2-D; got 1-D"),
        (
            lambda m: greedy_decode(m, torch.tensor([[4, 5]]), max_len=0),
            ValueError,
            "max_len must be a positive int",
        ),
        (
            lambda m: beam_search(m, torch.tensor([[4, 5]]), beam_size=0),
            ValueError,
            "beam_size must be a positive int",
        ),
        (
            lambda m: beam_search(m, torch.tensor([[4, 5]]), alpha=-1),
            ValueError,
            "alpha must be a number >= 0",
        ),
        (
            lambda m: beam_search(m, torch.zeros(0, 3, dtype=torch.long)),
            ValueError,
            "at least one token",
        ),
        (
            lambda m: greedy_decode(m, torch.zeros(2, 0, dtype=torch.long)),
            ValueError,
            "at least one token",
        ),
    ],
)
def test_decoding_rejects_bad_input(call, error, words):
    with pytest.raises(error, match=words):
        call(Transformer(TransformerConfig.tiny(12, 12)))


# --- beam search against exhaustive search, on a model whose probabilities are a table --


class TableModel:
    """Next-token logits depend only on (previous token, position): exact search is cheap."""

    def __init__(self, vocab: int, seed: int):
        g = torch.Generator().manual_seed(seed)
        self.table = 2 * torch.randn(vocab, 8, vocab, generator=g)  # (previous, position, next)
        self.config = SimpleNamespace(max_len=100)

    def eval(self):
        return self

    def encode(self, src, mask):
        return torch.zeros(src.shape[0], src.shape[1], 1)

    def decode(self, ys, memory, mask):
        return torch.stack([self.table[ys[:, t], t] for t in range(ys.shape[1])], dim=1)


def exhaustive_best(model, vocab, max_len, alpha):
    """The finished sequence with the best length-normalised log-probability, by brute force."""
    allowed = [t for t in range(vocab) if t not in (PAD_ID, BOS_ID)]
    best = None
    for length in range(1, max_len + 1):
        for body in itertools.product([t for t in allowed if t != EOS_ID], repeat=length - 1):
            seq = [*body, EOS_ID]
            logits = model.decode(torch.tensor([[BOS_ID, *seq[:-1]]]), None, None)[0]
            logits[:, [PAD_ID, BOS_ID]] = float("-inf")
            score = logits.log_softmax(-1).gather(1, torch.tensor(seq)[:, None]).sum().item()
            score /= length_penalty(length, alpha)
            if best is None or score > best[0]:
                best = (score, seq)
    return best[1]


def trimmed(row):
    row = row.tolist()
    return row[: row.index(EOS_ID) + 1] if EOS_ID in row else row


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.5])
@pytest.mark.parametrize("seed", range(6))
def test_wide_beam_finds_the_best_normalised_sequence(seed, alpha):
    vocab, max_len = 6, 4
    model = TableModel(vocab, seed)
    found = beam_search(model, torch.tensor([[4]]), beam_size=50, max_len=max_len, alpha=alpha)
    assert trimmed(found[0]) == exhaustive_best(model, vocab, max_len, alpha)


def test_length_normalisation_can_change_the_winner():
    def best(model, alpha):
        return trimmed(beam_search(model, torch.tensor([[4]]), 50, max_len=4, alpha=alpha)[0])

    models = (TableModel(6, seed) for seed in range(50))
    model = next(m for m in models if best(m, 0.0) != best(m, 3.0))  # StopIteration: never
    assert len(best(model, 3.0)) > len(best(model, 0.0))  # a larger alpha favours longer output


def test_pad_and_bos_are_never_generated():
    model = Transformer(TransformerConfig.tiny(12, 12))
    with torch.no_grad():
        model.output_projection.bias[[PAD_ID, BOS_ID]] = 100.0  # an untrained model that loves them
    src = torch.randint(4, 12, (3, 5))
    for out in (greedy_decode(model, src, 6), beam_search(model, src, beam_size=20, max_len=6)):
        for row in out.tolist():
            body = row[: row.index(EOS_ID)] if EOS_ID in row else row
            assert BOS_ID not in body and PAD_ID not in body
