import pytest
import torch

from course_lib.data import Vocab
from course_lib.evaluation import corpus_bleu, evaluate_translation, exact_match, translate
from course_lib.model import Transformer, TransformerConfig

SRC = Vocab(["i", "eat", "the", "red", "apple"])
TGT = Vocab(["je", "mange", "la", "pomme", "rouge"])


@pytest.fixture(scope="module")
def untrained():
    torch.manual_seed(0)
    return Transformer(TransformerConfig.tiny(len(SRC), len(TGT)))


def test_exact_match_counts_identical_strings():
    assert exact_match(["a b", "c", "d e"], ["a b", "c ", "d e"]) == pytest.approx(2 / 3)
    assert exact_match([], []) == 0.0


def test_corpus_bleu_is_100_for_perfect_output_and_lower_otherwise():
    refs = ["je mange la pomme rouge", "tu vois le chat noir"]
    assert corpus_bleu(refs, refs) == pytest.approx(100.0)
    assert corpus_bleu(["je mange la pomme", "tu vois le chat noir"], refs) < 90.0


@pytest.mark.parametrize("method", ["greedy", "beam"])
def test_translate_returns_one_string_per_sentence(untrained, method):
    out = translate(untrained, ["i eat the red apple", "the apple"], SRC, TGT, method=method)
    assert len(out) == 2 and all(isinstance(s, str) for s in out)
    assert all(word in TGT for s in out for word in s.split())  # only words it knows


def test_translate_handles_unknown_words(untrained):
    assert SRC.unknown_words("i eat the green pear") == ["green", "pear"]
    assert len(translate(untrained, ["i eat the green pear"], SRC, TGT)) == 1


def test_translate_batches_do_not_change_the_result(untrained):
    sentences = ["i eat the red apple", "the apple", "i eat", "red red red apple the"]
    together = translate(untrained, sentences, SRC, TGT, max_len=8)
    assert translate(untrained, sentences, SRC, TGT, batch_size=1, max_len=8) == together


def test_evaluate_translation_reports_both_metrics(untrained):
    pairs = [("i eat the red apple", "je mange la pomme rouge")]
    result = evaluate_translation(untrained, pairs, SRC, TGT)
    assert set(result) == {"exact_match", "bleu"}
    assert 0.0 <= result["exact_match"] <= 1.0 and 0.0 <= result["bleu"] <= 100.0


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda m: translate(m, "i eat", SRC, TGT), TypeError, "wrap a single sentence in a list"),
        (
            lambda m: translate(m, ["i eat"], SRC, TGT, method="sample"),
            ValueError,
            'method must be "greedy" or "beam"',
        ),
        (
            lambda m: translate(m, ["i eat", "  "], SRC, TGT),
            ValueError,
            r"sentences\[1\] must be a non-empty string",
        ),
        (
            lambda m: translate(m, ["i eat"], SRC, TGT, batch_size=0),
            ValueError,
            "batch_size must be a positive int",
        ),
        (lambda m: exact_match(["a"], ["a", "b"]), ValueError, "same length; got 1 and 2"),
        (lambda m: corpus_bleu(["a b c d", "e f"], ["a b c d"]), ValueError, "got 2 and 1"),
        (lambda m: exact_match("le chat", "le chien"), TypeError, "hypotheses must be a list"),
        (lambda m: corpus_bleu(["le chat"], "le chat"), TypeError, "references must be a list"),
    ],
)
def test_evaluation_rejects_bad_input(untrained, call, error, words):
    with pytest.raises(error, match=words):
        call(untrained)
