"""Typed sentences: translated, unknown words reported with suggestions, never a traceback."""

import pytest

from course_lib.pretrained import load_pretrained
from course_lib.typed_input import translate_typed


@pytest.fixture(scope="module")
def t():
    return load_pretrained()


def test_a_known_sentence_is_translated(t):
    result = translate_typed(t.model, "I eat the red apple", t.src_vocab, t.tgt_vocab)
    assert result.ok and result.translation == "je mange la pomme rouge"
    assert "'je mange la pomme rouge'" in str(result)


def test_unknown_words_are_named_with_suggestions(t):
    result = translate_typed(t.model, "i eat the red aple", t.src_vocab, t.tgt_vocab)
    assert not result.ok and result.unknown == ("aple",)
    assert "apple" in result.suggestions["aple"]
    assert "unknown word 'aple' (did you mean apple" in str(result)
    assert result.translation is not None


@pytest.mark.parametrize(
    "text, words",
    [("", "nothing to translate"), ("   ", "nothing to translate"), (42, "got int"),
     ("zzz qqq", "knows none of these words")],
)  # fmt: skip
def test_bad_input_gives_a_message_not_an_error(t, text, words):
    result = translate_typed(t.model, text, t.src_vocab, t.tgt_vocab)
    assert result.translation is None and not result.ok
    assert words in str(result)


def test_beam_search_works_too(t):
    result = translate_typed(
        t.model, "she sees the green car", t.src_vocab, t.tgt_vocab, method="beam"
    )
    assert result.translation == "elle voit la voiture verte"
