"""Turning sentences into translations and scoring them: exact match and corpus BLEU.

Sentences are plain strings; ids are padded into ``(B, S)`` batches with ``PAD_ID``.
"""

import torch

from . import _validate
from .data import PAD_ID, Vocab
from .decoding import beam_search, greedy_decode
from .devices import device_of


def translate(
    model,
    sentences,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    *,
    method: str = "greedy",
    beam_size: int = 4,
    batch_size: int = 500,
    max_len: int | None = None,
) -> list[str]:
    """Translate English sentences with ``method`` ``"greedy"`` or ``"beam"``.

    ``max_len`` caps each translation's length (default: the batch's longest source + 50).

    Words the source vocabulary does not know become ``<unk>``; call
    ``src_vocab.unknown_words(sentence)`` to tell the reader which ones.
    """
    if isinstance(sentences, str):
        raise TypeError("sentences must be a list of strings; wrap a single sentence in a list")
    if method not in ("greedy", "beam"):
        raise ValueError(f'method must be "greedy" or "beam"; got {method!r}')
    _validate.positive_int("batch_size", batch_size)
    for i, sentence in enumerate(sentences):
        if not isinstance(sentence, str) or not sentence.strip():
            raise ValueError(f"sentences[{i}] must be a non-empty string; got {sentence!r}")
    out, device = [], device_of(model)  # the batches go where the model is
    for start in range(0, len(sentences), batch_size):
        ids = [src_vocab.encode(s) for s in sentences[start : start + batch_size]]
        width = max(len(i) for i in ids)
        rows = [i + [PAD_ID] * (width - len(i)) for i in ids]
        src = torch.tensor(rows, dtype=torch.long, device=device)
        if method == "greedy":
            tokens = greedy_decode(model, src, max_len)
        else:
            tokens = beam_search(model, src, beam_size, max_len)
        out.extend(tgt_vocab.decode(row) for row in tokens)
    return out


def _check_pairs(hypotheses, references) -> None:
    # A str would be read as a list of one-letter sentences, and sacrebleu silently drops
    # the sentences of the longer list: both would give a score without an error.
    for name, sentences in (("hypotheses", hypotheses), ("references", references)):
        if isinstance(sentences, str):
            raise TypeError(f"{name} must be a list of strings; wrap a single sentence in a list")
    if len(hypotheses) != len(references):
        raise ValueError(
            "hypotheses and references must have the same length; "
            f"got {len(hypotheses)} and {len(references)}"
        )


def exact_match(hypotheses: list[str], references: list[str]) -> float:
    """Fraction of hypotheses identical to their reference."""
    _check_pairs(hypotheses, references)
    return sum(h == r for h, r in zip(hypotheses, references, strict=True)) / max(
        len(references), 1
    )


def corpus_bleu(hypotheses: list[str], references: list[str]) -> float:
    """Corpus BLEU (0-100) computed by sacrebleu with its default settings."""
    import sacrebleu  # imported late: only the evaluation needs it

    _check_pairs(hypotheses, references)
    return sacrebleu.corpus_bleu(hypotheses, [references]).score


def evaluate_translation(model, pairs, src_vocab: Vocab, tgt_vocab: Vocab, **kwargs) -> dict:
    """Exact match and BLEU of ``model`` on ``(english, french)`` pairs.

    Keyword arguments go to :func:`translate`.
    """
    sources, references = [p[0] for p in pairs], [p[1] for p in pairs]
    hypotheses = translate(model, sources, src_vocab, tgt_vocab, **kwargs)
    return {
        "exact_match": exact_match(hypotheses, references),
        "bleu": corpus_bleu(hypotheses, references),
    }
