"""Attention examples from a trained model: every kind, layer and head; the reordering shows."""

import pytest
import torch

from course_lib.pretrained import load_pretrained
from course_lib.widgets import AttentionExplorer
from course_lib.widgets.model_examples import (
    FACETS,
    KINDS,
    alignment,
    model_examples,
    sentence_attention,
)


@pytest.fixture(scope="module")
def t():
    return load_pretrained()


def test_one_example_per_kind_and_layer_with_every_head(t):
    examples = model_examples(t.model, ["i eat the red apple"], t.src_vocab, t.tgt_vocab)
    layers = len(t.model.decoder.layers)  # the checkpoint has as many in each stack
    assert len(examples) == len(KINDS) * layers
    assert all(e.n_heads == 4 for e in examples)
    cross = examples[-1]
    assert cross.name == f"i eat the red apple · cross-attention · layer {layers}"
    assert cross.query_tokens == ("je", "mange", "la", "pomme", "rouge", "<eos>")
    assert cross.key_tokens == ("i", "eat", "the", "red", "apple")


def test_decoder_self_attention_is_causal(t):
    s = sentence_attention(t.model, "we want a black hat", t.src_vocab, t.tgt_vocab)
    for w in s.decoder_self:
        assert torch.all(w.triu(diagonal=1) == 0)
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))


def test_cross_attention_shows_the_noun_adjective_reordering(t):
    s = sentence_attention(t.model, "i eat the red apple", t.src_vocab, t.tgt_vocab)
    aligned = alignment(s.cross[-1], s.written, s.source)
    assert aligned["pomme"] == "apple" and aligned["rouge"] == "red"


def test_the_explorer_shows_model_examples(t):
    examples = model_examples(t.model, "she sees the green car", t.src_vocab, t.tgt_vocab)
    explorer = AttentionExplorer(examples)
    explorer.example_select.value = len(examples) - 1  # the last layer's cross-attention
    explorer.head_select.value = 3
    assert explorer.weights.shape == (6, 5)


def test_the_explorer_offers_sentence_kind_and_layer_as_rows_of_buttons(t):
    sentences = ["i eat the red apple", "my sister does not like the green cars"]
    examples = model_examples(t.model, sentences, t.src_vocab, t.tgt_vocab)
    layers = len(t.model.decoder.layers)
    last = f"{sentences[0]} · cross-attention · layer {layers}"
    explorer = AttentionExplorer(examples, facets=FACETS, example=last)
    sentence, kind, layer = explorer.facet_selects
    assert sentence.options == tuple(sentences) and kind.options == KINDS  # names in full
    assert layer.options == tuple(f"layer {i}" for i in range(1, layers + 1))
    assert (layer.layout.display == "none") == (layers == 1)
    assert "course-wide-choices" in sentence._dom_classes  # wrapped, not cut off
    kind.value = KINDS[0]
    assert examples[explorer.example_index].name == f"{sentences[0]} · {KINDS[0]} · layer {layers}"
    sentence.value = sentences[1]
    assert explorer.weights.shape == (8, 8)  # the second sentence's encoder, 8 words
    assert explorer.text.startswith(f"Attention map of {sentences[1]} · {KINDS[0]}")


@pytest.mark.parametrize(
    "sentence, words", [("", "non-empty"), ("i eat the purple apple", "purple")]
)
def test_bad_sentences_are_named(t, sentence, words):
    with pytest.raises(ValueError, match=words):
        sentence_attention(t.model, sentence, t.src_vocab, t.tgt_vocab)


def test_alignment_checks_the_shape():
    with pytest.raises(ValueError, match=r"\(T, S\) = \(2, 3\)"):
        alignment(torch.ones(2, 2) / 2, ["a", "b"], ["x", "y", "z"])
