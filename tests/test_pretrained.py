"""The shipped checkpoint loads, translates held-out sentences, and round-trips through save."""

import pytest
import torch

from course_lib.corpus import translation_corpus
from course_lib.data import Vocab
from course_lib.evaluation import evaluate_translation
from course_lib.model import Transformer, TransformerConfig
from course_lib.pretrained import CHECKPOINT, RECIPE, Translator, load_pretrained, save_translator


@pytest.fixture(scope="module")
def pretrained():
    return load_pretrained()


def test_the_checkpoint_is_shipped_and_small():
    assert CHECKPOINT.is_file()
    assert CHECKPOINT.stat().st_size < 3_000_000


def test_it_translates_held_out_sentences(pretrained):
    corpus = translation_corpus(n_train=50_000, seed=RECIPE.seed)
    scores = evaluate_translation(
        pretrained.model, corpus.test[:200], pretrained.src_vocab, pretrained.tgt_vocab
    )
    assert scores["exact_match"] >= 0.98
    assert pretrained.src_vocab == corpus.src_vocab and pretrained.tgt_vocab == corpus.tgt_vocab


def test_it_is_the_tiny_preset_with_one_layer_per_stack_in_eval_mode(pretrained):
    c = pretrained.model.config
    assert (c.d_model, c.n_heads, c.n_encoder_layers, c.n_decoder_layers, c.d_ff) == (
        64,
        4,
        1,
        1,
        256,
    )
    assert not pretrained.model.training


def test_save_and_load_round_trip(tmp_path):
    src, tgt = Vocab(["a", "b"]), Vocab(["x", "y", "z"])
    model = Transformer(TransformerConfig.tiny(len(src), len(tgt)))
    path = save_translator(Translator(model, src, tgt), tmp_path / "t.pt")
    loaded = load_pretrained(path)
    assert loaded.src_vocab == src and loaded.tgt_vocab == tgt
    for (name, a), b in zip(
        model.state_dict().items(), loaded.model.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b), name


def test_a_missing_checkpoint_says_how_to_make_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m course_lib.pretrained"):
        load_pretrained(tmp_path / "none.pt")


def test_save_rejects_a_bare_model():
    with pytest.raises(TypeError, match="Translator"):
        save_translator(Transformer(TransformerConfig.tiny(8, 8)))
