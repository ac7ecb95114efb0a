import itertools

import pytest
import torch

from course_lib.data import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    SPECIALS,
    UNK_ID,
    Vocab,
    batches,
    collate,
    copy_task,
    detokenize,
    infinite_batches,
    symbol_vocab,
    tokenize,
)


# ---- tokens ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, tokens",
    [
        ("I eat the red apple.", ["i", "eat", "the", "red", "apple", "."]),
        ("J'aime la pomme, non?", ["j'", "aime", "la", "pomme", ",", "non", "?"]),
        ("Il n'a pas d'œuf!", ["il", "n'", "a", "pas", "d'", "œuf", "!"]),
        ("l\u2019orange", ["l'", "orange"]),
        ("I don't  know", ["i", "don't", "know"]),
    ],
)
def test_tokenize(text, tokens):
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    "text", ["j'aime l'orange rouge.", "il n'a pas d'œuf, non!", "i eat the red apple"]
)
def test_detokenize_inverts_tokenize(text):
    assert detokenize(tokenize(text)) == text


def test_tokenize_rejects_non_strings():
    with pytest.raises(TypeError, match="sentence"):
        tokenize(["i", "eat"])


# ---- Vocab -----------------------------------------------------------------------------------
def test_vocab_puts_specials_first_and_deduplicates_in_order():
    vocab = Vocab(["b", "a", "b", "c"])
    assert vocab.itos == [*SPECIALS, "b", "a", "c"]
    assert [vocab.stoi[s] for s in SPECIALS] == [PAD_ID, BOS_ID, EOS_ID, UNK_ID] == [0, 1, 2, 3]
    assert len(vocab) == 7 and "a" in vocab and "z" not in vocab


def test_vocab_from_sentences_does_not_depend_on_order():
    assert Vocab.from_sentences(["b a", "c a"]) == Vocab.from_sentences(["c", "a b"])
    assert Vocab.from_sentences(["J'aime"]).itos[4:] == ["aime", "j'"]


def test_vocab_round_trip_and_unknown_words():
    vocab = Vocab.from_sentences(["j'aime la pomme.", "je mange la pomme rouge"])
    assert vocab.decode(vocab.encode("J'aime la pomme rouge.")) == "j'aime la pomme rouge."
    ids = vocab.encode("je mange la banane verte")
    assert ids[:3] == [vocab.stoi["je"], vocab.stoi["mange"], vocab.stoi["la"]]
    assert ids[3:] == [UNK_ID, UNK_ID]
    assert vocab.unknown_words("la banane, la banane et le kiwi") == [
        "banane",
        ",",
        "et",
        "le",
        "kiwi",
    ]
    assert vocab.unknown_words(["je", "mange"]) == []


def test_vocab_decode_stops_at_eos_and_skips_pad_and_bos():
    vocab = Vocab(["a", "b", "c"])
    a, b, c = 4, 5, 6
    assert vocab.decode([BOS_ID, a, PAD_ID, b, EOS_ID, c]) == "a b"
    assert vocab.decode(torch.tensor([BOS_ID, c, a, EOS_ID, PAD_ID])) == "c a"
    assert vocab.decode([UNK_ID]) == "<unk>"


def test_vocab_bad_input():
    with pytest.raises(TypeError, match="tokens"):
        Vocab("abc")
    with pytest.raises(TypeError, match="tokens"):
        Vocab(["a", 1])
    vocab = Vocab(["a"])
    with pytest.raises(ValueError, match=r"ids must be in \[0, 5\); got 9"):
        vocab.decode([9])
    with pytest.raises(ValueError, match="ids must be 1-D"):
        vocab.decode(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(TypeError, match="sentence"):
        vocab.encode(42)


# ---- batches ---------------------------------------------------------------------------------
def test_collate_pads_and_shifts_the_target():
    batch = collate([([5, 6, 7], [8, 9]), ([5], [8, 9, 10, 11])])
    assert batch.src.tolist() == [[5, 6, 7], [5, PAD_ID, PAD_ID]]
    assert batch.tgt_in.tolist() == [[BOS_ID, 8, 9, PAD_ID, PAD_ID], [BOS_ID, 8, 9, 10, 11]]
    assert batch.tgt_out.tolist() == [[8, 9, EOS_ID, PAD_ID, PAD_ID], [8, 9, 10, 11, EOS_ID]]
    assert batch.src.dtype == batch.tgt_in.dtype == batch.tgt_out.dtype == torch.int64
    assert len(batch) == 2
    assert batch.n_tokens == 3 + 5


def test_collate_bad_input():
    with pytest.raises(ValueError, match="pairs"):
        collate([])
    with pytest.raises(ValueError, match=r"pairs\[1\] must have a non-empty source"):
        collate([([4], [5]), ([], [5])])
    with pytest.raises(ValueError, match=r"pairs\[0\] must be a \(src_ids, tgt_ids\) pair"):
        collate([([4], [5], [6])])


PAIRS = [([i], [i, i]) for i in range(4, 107)]  # 103 pairs, each named by its source id


def _sources(batch_list):
    return [i for batch in batch_list for i in batch.src[:, 0].tolist()]


def test_batches_cover_every_pair_once_per_epoch():
    epoch = list(batches(PAIRS, 10, seed=3))
    assert [len(b) for b in epoch] == [10] * 10 + [3]
    assert sorted(_sources(epoch)) == list(range(4, 107))


def test_batches_are_deterministic_per_seed():
    first = _sources(batches(PAIRS, 10, seed=1))
    assert first == _sources(batches(PAIRS, 10, seed=1))
    assert first != _sources(batches(PAIRS, 10, seed=2))
    assert _sources(batches(PAIRS, 10, shuffle=False)) == list(range(4, 107))


def test_infinite_batches_reshuffle_each_epoch_deterministically():
    stream = list(itertools.islice(infinite_batches(PAIRS, 10, seed=7), 22))  # two epochs
    epoch1, epoch2 = _sources(stream[:11]), _sources(stream[11:])
    assert sorted(epoch1) == sorted(epoch2) == list(range(4, 107))
    assert epoch1 != epoch2
    again = itertools.islice(infinite_batches(PAIRS, 10, seed=7), 22)
    assert _sources(again) == epoch1 + epoch2


def test_batches_bad_input():
    with pytest.raises(ValueError, match="batch_size must be a positive int; got 0"):
        batches(PAIRS, 0)
    with pytest.raises(TypeError, match="batch_size"):
        infinite_batches(PAIRS, "32")
    with pytest.raises(ValueError, match="pairs"):
        infinite_batches([], 8)


# ---- copy task -------------------------------------------------------------------------------
@pytest.mark.parametrize("reverse", [False, True])
def test_copy_task(reverse):
    pairs = copy_task(200, seq_len=7, n_symbols=5, reverse=reverse, seed=1)
    assert len(pairs) == 200
    for src, tgt in pairs:
        assert len(src) == 7
        assert tgt == (src[::-1] if reverse else src)
    symbols = {i for src, _ in pairs for i in src}
    assert symbols == set(range(4, 9))  # every symbol, right after the specials
    assert pairs == copy_task(200, seq_len=7, n_symbols=5, reverse=reverse, seed=1)
    assert pairs != copy_task(200, seq_len=7, n_symbols=5, reverse=reverse, seed=2)


def test_symbol_vocab_lines_up_with_copy_task():
    vocab = symbol_vocab(10)
    assert len(vocab) == 4 + 10
    assert vocab.decode([4, 5, 6, EOS_ID, 7]) == "a b c"
    src, _ = copy_task(1, seq_len=10, n_symbols=10, seed=0)[0]
    assert vocab.encode(vocab.decode(src)) == src
    assert "<unk>" not in vocab.decode(list(range(4, 14)))


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"n_samples": -1}, ValueError, "n_samples"),
        ({"n_samples": 5, "seq_len": 0}, ValueError, "seq_len"),
        ({"n_samples": 5, "n_symbols": 2.5}, TypeError, "n_symbols"),
    ],
)
def test_copy_task_bad_input(kwargs, error, name):
    with pytest.raises(error, match=name):
        copy_task(**kwargs)


def test_batch_masks_follow_the_course_convention():
    batch = collate([([4, 5, 6], [7]), ([8], [9, 10])])
    assert batch.src_mask[:, 0, 0].tolist() == [[True, True, True], [True, False, False]]
    # tgt_in rows: [BOS, 7, PAD] and [BOS, 9, 10]; True = may attend, causal and not padding.
    assert batch.tgt_mask[0, 0].tolist() == [
        [True, False, False],
        [True, True, False],
        [True, True, False],
    ]
    assert batch.tgt_mask[1, 0].tolist() == [
        [True, False, False],
        [True, True, False],
        [True, True, True],
    ]
