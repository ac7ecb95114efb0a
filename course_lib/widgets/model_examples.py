"""Attention maps of a trained encoder-decoder, ready for :class:`AttentionExplorer`.

For each sentence, the model translates it (greedy), then reads the translation back with
teacher forcing (:meth:`~course_lib.model.Attentions.of`); every layer gives three maps, each
with all heads:

- encoder self-attention: English attending to English, ``(H, S, S)``;
- decoder self-attention: the French read so far, causal, ``(H, T, T)``;
- cross-attention: the French being written attending to the English, ``(H, T, S)``.

Decoder rows are labelled with the token being *predicted* at that position ("pomme" is
the row that writes "pomme"), so a cross-attention map reads as an alignment.
"""

from dataclasses import dataclass

import torch

from ..data import BOS_ID, EOS_ID, PAD_ID, tokenize
from ..decoding import greedy_decode
from ..devices import device_of
from ..model import Attentions
from .attention_data import AttentionExample

KINDS = ("encoder self-attention", "decoder self-attention", "cross-attention")
FACETS = ("sentence", "attention", "layer")  # the parts of the names, for AttentionExplorer


@dataclass(frozen=True)
class SentenceAttention:
    """One sentence through the model: tokens and per-layer weights ``(H, T_q, T_k)``."""

    source: tuple[str, ...]  # English tokens
    written: tuple[str, ...]  # French tokens the decoder predicts, ending with <eos>
    encoder: list  # per layer, (H, S, S)
    decoder_self: list  # per layer, (H, T, T)
    cross: list  # per layer, (H, T, S)


@torch.no_grad()
def sentence_attention(model, sentence: str, src_vocab, tgt_vocab) -> SentenceAttention:
    """Translate ``sentence`` greedily, then collect every attention map of that translation."""
    if not isinstance(sentence, str) or not tokenize(sentence):
        raise ValueError(f"sentence must be a non-empty string; got {sentence!r}")
    unknown = src_vocab.unknown_words(sentence)
    if unknown:
        raise ValueError(f"sentence has words the model never saw: {unknown}")
    model.eval()
    device = device_of(model)
    src = torch.tensor([src_vocab.encode(sentence)], device=device)  # (1, S)
    out = greedy_decode(model, src)[0].tolist()
    out = out[: out.index(EOS_ID) + 1] if EOS_ID in out else [t for t in out if t != PAD_ID]
    tgt_in = torch.tensor([[BOS_ID, *out[:-1]]], device=device)  # BOS + all but the last
    _, att = Attentions.of(model, src, tgt_in)
    return SentenceAttention(
        source=tuple(tokenize(sentence)),
        written=tuple(tgt_vocab.itos[i] for i in out),
        encoder=[w[0] for w in att.encoder],
        decoder_self=[w[0] for w in att.decoder_self],
        cross=[w[0] for w in att.cross],
    )


def model_examples(model, sentences, src_vocab, tgt_vocab) -> list[AttentionExample]:
    """Explorer examples: for each sentence, each kind of attention and each layer (heads inside).

    Names read like ``"the red apple · cross-attention · layer 2"``: their parts are
    FACETS, so ``AttentionExplorer(examples, facets=FACETS)`` offers one row of buttons for
    each.
    """
    if isinstance(sentences, str):
        sentences = [sentences]
    examples = []
    for sentence in sentences:
        s = sentence_attention(model, sentence, src_vocab, tgt_vocab)
        read = ("<bos>", *s.written[:-1])  # decoder inputs, the keys of its self-attention
        maps = {
            KINDS[0]: (s.source, s.source, s.encoder),
            KINDS[1]: (s.written, read, s.decoder_self),
            KINDS[2]: (s.written, s.source, s.cross),
        }
        for kind, (rows, columns, layers) in maps.items():
            for layer, weights in enumerate(layers, start=1):
                name = f"{sentence} · {kind} · layer {layer}"
                examples.append(AttentionExample.from_weights(name, rows, columns, weights))
    return examples


def alignment(weights: torch.Tensor, written, source) -> dict[str, str]:
    """For each written token, the source token with the most weight (heads averaged).

    Args:
        weights: cross-attention ``(H, T, S)`` or ``(T, S)``.
    """
    w = weights.mean(dim=0) if weights.dim() == 3 else weights  # (T, S)
    if tuple(w.shape) != (len(written), len(source)):
        raise ValueError(
            f"weights must be (T, S) = ({len(written)}, {len(source)}); got {tuple(w.shape)}"
        )
    return {word: source[int(w[i].argmax())] for i, word in enumerate(written)}
