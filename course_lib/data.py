"""Tokens, vocabularies, padded batches, and the copy task.

* ``copy_task``: copy or reverse a random string of symbols, the smallest task that exercises
  the whole encoder-decoder. Generated in code and deterministic for a seed.
* The English-to-French corpus built on these pieces lives in :mod:`course_lib.corpus`.

Shapes: B batch, S source length, T target length. Tensors are batch-first int64.
"""

import itertools
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import torch

from . import _validate
from .masks import padding_mask, target_mask

PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3
SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")

# An elided French article or pronoun ("j'", "qu'") is a token of its own; "don't" is one word.
_TOKEN = re.compile(r"(?:qu|[cdjlmnst])'(?=\w)|[\w'-]+|[^\w\s]")
# A space after an elision ("j' aime") or before punctuation ("pomme .") is dropped for display.
_GLUE = re.compile(r"(?<=') | (?=[.,!?])")


def tokenize(sentence: str) -> list[str]:
    """Lowercase ``sentence`` and split it into words, punctuation marks and French elisions.

    Example: ``tokenize("J'aime la pomme!") == ["j'", "aime", "la", "pomme", "!"]``.
    """
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str; got {type(sentence).__name__}")
    return _TOKEN.findall(sentence.lower().replace("\u2019", "'"))  # also accept typographic ’


def detokenize(tokens: Iterable[str]) -> str:
    """Join tokens for display: "j'" sticks to the next word, punctuation to the previous one."""
    return _GLUE.sub("", " ".join(tokens))


class Vocab:
    """Maps tokens to ids and back. Ids 0..3 are the ``SPECIALS``, then the tokens in order."""

    def __init__(self, tokens: Iterable[str]):
        if isinstance(tokens, str):
            raise TypeError(
                "tokens must be an iterable of str, not one str; for text use from_sentences"
            )
        self.itos: list[str] = list(SPECIALS)
        self.stoi: dict[str, int] = {token: i for i, token in enumerate(SPECIALS)}
        for token in tokens:
            if not isinstance(token, str):
                raise TypeError(f"tokens must be str; got {type(token).__name__}")
            if token not in self.stoi:
                self.stoi[token] = len(self.itos)
                self.itos.append(token)

    @classmethod
    def from_sentences(cls, sentences: Iterable[str]) -> "Vocab":
        """A vocabulary of every token in ``sentences``, sorted, so ids do not depend on order."""
        # Tokens never span a space, so tokenizing each distinct word once gives the same set.
        words = {word for sentence in sentences for word in sentence.split()}
        return cls(sorted({token for word in words for token in tokenize(word)}))

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token) -> bool:
        return token in self.stoi

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {', '.join(self.itos[4:9])}, ...)"

    def encode(self, sentence: str | list[str]) -> list[int]:
        """Token ids of ``sentence`` (text or tokens), without BOS/EOS; unknown tokens -> UNK_ID."""
        return [self.stoi.get(token, UNK_ID) for token in _tokens(sentence)]

    def decode(self, ids) -> str:
        """Text of ``ids`` (a list or a 1-D tensor): stops at EOS, skips PAD and BOS."""
        if isinstance(ids, torch.Tensor):
            _validate.tensor("ids", ids, ndim=1)
            ids = ids.tolist()
        words = []
        for i in ids:
            if i == EOS_ID:
                break
            if i in (PAD_ID, BOS_ID):
                continue
            if not 0 <= i < len(self.itos):
                raise ValueError(f"ids must be in [0, {len(self.itos)}); got {i}")
            words.append(self.itos[i])
        return detokenize(words)

    def unknown_words(self, sentence: str | list[str]) -> list[str]:
        """The tokens of ``sentence`` that are not in the vocabulary, each listed once."""
        return list(dict.fromkeys(t for t in _tokens(sentence) if t not in self.stoi))


def _tokens(sentence) -> list[str]:
    if isinstance(sentence, str):
        return tokenize(sentence)
    if isinstance(sentence, (list, tuple)) and all(isinstance(t, str) for t in sentence):
        return list(sentence)
    raise TypeError(
        f"sentence must be a str or a list of str tokens; got {type(sentence).__name__}"
    )


@dataclass(frozen=True, eq=False)
class Batch:
    """A padded batch for teacher forcing (paper §3: the output embeddings are shifted right)."""

    src: torch.Tensor  # (B, S) source ids, PAD_ID after each sentence
    tgt_in: torch.Tensor  # (B, T) BOS + target: what the decoder reads
    tgt_out: torch.Tensor  # (B, T) target + EOS: what it must predict at each position

    def __len__(self) -> int:
        return self.src.shape[0]

    @property
    def n_tokens(self) -> int:
        """Number of label tokens that are not padding (the loss is averaged over these)."""
        return int((self.tgt_out != PAD_ID).sum())

    @property
    def src_mask(self) -> torch.Tensor:
        """``(B, 1, 1, S)``: the encoder (and cross-attention) may attend to real source tokens."""
        return padding_mask(self.src, PAD_ID)

    @property
    def tgt_mask(self) -> torch.Tensor:
        """``(B, 1, T, T)``: the decoder may attend to earlier, non-padding target tokens."""
        return target_mask(self.tgt_in, PAD_ID)

    def to(self, device) -> "Batch":
        return Batch(self.src.to(device), self.tgt_in.to(device), self.tgt_out.to(device))


def collate(pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> Batch:
    """Pad ``(src_ids, tgt_ids)`` pairs (ids without BOS/EOS) into one ``Batch``.

    Returns:
        ``Batch`` with ``src`` (B, S), ``tgt_in`` = BOS + tgt and ``tgt_out`` = tgt + EOS (B, T).
    """
    src, tgt_in, tgt_out = [], [], []
    for i, pair in enumerate(_nonempty(pairs)):
        if len(pair) != 2:
            raise ValueError(f"pairs[{i}] must be a (src_ids, tgt_ids) pair; got {len(pair)} items")
        source, target = ([int(x) for x in ids] for ids in pair)
        if not source:
            raise ValueError(f"pairs[{i}] must have a non-empty source; got {pair!r}")
        src.append(source)
        tgt_in.append([BOS_ID, *target])
        tgt_out.append([*target, EOS_ID])
    return Batch(_pad(src), _pad(tgt_in), _pad(tgt_out))


def _pad(rows: list[list[int]]) -> torch.Tensor:
    width = max(len(row) for row in rows)
    padded = [row + [PAD_ID] * (width - len(row)) for row in rows]
    return torch.tensor(padded, dtype=torch.long, device="cpu")  # moved by Batch.to, train()


def _nonempty(pairs) -> list:
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs must contain at least one (src_ids, tgt_ids) pair; got none")
    return pairs


def batches(pairs, batch_size: int, *, shuffle: bool = True, seed: int = 0) -> Iterator[Batch]:
    """One epoch over ``pairs`` in batches of ``batch_size`` (the last one may be smaller)."""
    _validate.positive_int("batch_size", batch_size)
    pairs = _nonempty(pairs)
    order = list(range(len(pairs)))
    if shuffle:
        random.Random(seed).shuffle(order)
    starts = range(0, len(order), batch_size)
    # A generator expression, so that bad arguments fail here rather than at the first next().
    return (collate([pairs[i] for i in order[s : s + batch_size]]) for s in starts)


def infinite_batches(pairs, batch_size: int, *, seed: int = 0) -> Iterator[Batch]:
    """Endless batches: epoch after epoch, each in a new order drawn from ``seed``."""
    _validate.positive_int("batch_size", batch_size)
    pairs = _nonempty(pairs)
    rng = random.Random(seed)
    epochs = (batches(pairs, batch_size, seed=rng.getrandbits(64)) for _ in itertools.count())
    return itertools.chain.from_iterable(epochs)


def copy_task(
    n_samples: int, seq_len: int = 10, n_symbols: int = 10, *, reverse: bool = False, seed: int = 0
) -> list[tuple[list[int], list[int]]]:
    """Random ``(src_ids, tgt_ids)`` pairs where the target copies (or reverses) the source.

    Symbol ids run from 4 to ``4 + n_symbols - 1``, right after the specials.
    """
    for name, value in (("n_samples", n_samples), ("seq_len", seq_len), ("n_symbols", n_symbols)):
        _validate.positive_int(name, value)
    rng = random.Random(seed)
    first = len(SPECIALS)
    pairs = []
    for _ in range(n_samples):
        src = [rng.randrange(first, first + n_symbols) for _ in range(seq_len)]
        pairs.append((src, src[::-1] if reverse else list(src)))
    return pairs


def symbol_vocab(n_symbols: int = 10) -> Vocab:
    """A vocabulary that shows copy-task ids as letters: id 4 is "a", id 5 is "b", ..."""
    _validate.positive_int("n_symbols", n_symbols)
    return Vocab(chr(ord("a") + i) if i < 26 else f"s{i}" for i in range(n_symbols))
