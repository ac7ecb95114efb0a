"""course_lib follows the device of the model and tensors it is given.

Two kinds of test. On every device this machine has (the CPU; "cuda" and "mps" where present),
the public functions that take a model or tensors run there and answer there. And on any
machine, :class:`TensorsMadeWithoutDevice` watches the tensors course_lib's own code creates
while such a function runs: a tensor made without naming its device lands on the default
device (the CPU), which breaks the function for a model on a GPU, even where no GPU is present
to show it.
"""

import sys
from pathlib import Path

import pytest
import torch
from torch.overrides import TorchFunctionMode

import course_lib
from course_lib import devices
from course_lib.attention import MultiHeadAttention, scaled_dot_product_attention
from course_lib.baselines import Seq2Seq, evaluate_seq2seq, mean_forward_seconds, reversal_data
from course_lib.checks._core import on_cpu
from course_lib.checks._tensors import as_tensor, diagnose
from course_lib.corpus import translation_corpus
from course_lib.data import copy_task, infinite_batches
from course_lib.decoding import beam_search, greedy_decode
from course_lib.evaluation import evaluate_translation, translate
from course_lib.experiments import leaky_decoder, linear_probe, reversal
from course_lib.experiments import translator as translator_experiment
from course_lib.head_task import HeadTaskModel, head_weights, relation_weights, targets_for
from course_lib.head_task import accuracy as head_accuracy
from course_lib.head_task import train as head_train
from course_lib.masks import padding_mask, target_mask
from course_lib.model import Attentions, UnmaskedByDefault, make_encoder
from course_lib.pretrained import load_pretrained
from course_lib.training import label_smoothed_cross_entropy, train
from course_lib.typed_input import translate_typed
from course_lib.widgets import model_examples, sentence_attention
from course_lib.widgets.pe_data import diagonal_spread

DEVICES = devices.available()
LIBRARY = Path(course_lib.__file__).parent
FACTORIES = {
    torch.tensor,
    torch.as_tensor,
    torch.zeros,
    torch.ones,
    torch.full,
    torch.empty,
    torch.arange,
    torch.rand,
    torch.randn,
    torch.randint,
    torch.randperm,
    torch.eye,
    torch.linspace,
    torch.triu_indices,
}


class TensorsMadeWithoutDevice(TorchFunctionMode):
    """Records ``file:line`` of every tensor factory call in course_lib that names no device
    (``device=None`` too: a module built with ``nn.Linear(...)`` passes that)."""

    def __init__(self):
        super().__init__()
        self.places: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in FACTORIES and kwargs.get("device") is None:
            caller = sys._getframe(1)
            # An optimizer's state is torch's own: torch 2.5 keeps Adam's step count on the
            # CPU without naming the device (later versions name it).
            while caller and "/torch/" in (where := caller.f_code.co_filename):
                if "/torch/optim/" in where:
                    break
                caller = caller.f_back
            if caller and Path(caller.f_code.co_filename).is_relative_to(LIBRARY):
                self.places.append(f"{caller.f_code.co_filename}:{caller.f_lineno}")
        return func(*args, **kwargs)


@pytest.fixture(scope="module")
def translator():
    return load_pretrained()


@pytest.fixture(scope="module")
def corpus():
    return translation_corpus(seed=0, holdout="triple")


def calls(t, corpus):
    """Each public function that takes a model or tensors, called on the CPU."""
    model, en, fr = t.model, t.src_vocab, t.tgt_vocab
    src = torch.tensor([en.encode("the red apple"), en.encode("i see the cat")[:3]])
    tgt = torch.tensor([[1, 5, 6, 2], [1, 7, 2, 0]])
    q = torch.randn(2, 3, 4, 8)  # (B, H, T, Dk)
    mask = torch.ones(4, 4, dtype=torch.bool).tril()
    attention = MultiHeadAttention(16, 4, dropout=0.1).train()
    x = torch.randn(2, 5, 16)
    head_model = HeadTaskModel()
    tokens = torch.randint(0, 8, (4, 8))
    seq2seq = Seq2Seq(attention=True)
    rev_src, rev_tgt = reversal_data(4, 6, 20, seed=0)
    pairs = corpus.test[:4]
    reversed_pairs = copy_task(4, seq_len=5, n_symbols=8, reverse=True, seed=0)
    probe = linear_probe.SentenceClassifier(t)
    unmasked, encoder = UnmaskedByDefault(model.config), make_encoder(10_000, 16, 2, 1, 32).eval()
    return {
        "translate": lambda: translate(model, ["the red apple"], en, fr),
        "translate beam": lambda: translate(model, ["the red apple"], en, fr, method="beam"),
        "evaluate_translation": lambda: evaluate_translation(model, pairs, en, fr),
        "translate_typed": lambda: translate_typed(model, "the red apple", en, fr),
        "greedy_decode": lambda: greedy_decode(model, src),
        "beam_search": lambda: beam_search(model, src, beam_size=2),
        "Attentions.of": lambda: Attentions.of(model, src, tgt),
        "sentence_attention": lambda: sentence_attention(model, "the red apple", en, fr),
        "model_examples": lambda: model_examples(model, ["the red apple"], en, fr),
        "teacher_forcing_agreement": lambda: translator_experiment.teacher_forcing_agreement(
            model, src
        ),
        "UnmaskedByDefault": lambda: unmasked(src, tgt),
        "train": lambda: train(
            load_pretrained().model,
            infinite_batches(corpus.train_ids, 8, seed=0),
            2,
            progress=False,
        ),
        "label_smoothed_cross_entropy": lambda: label_smoothed_cross_entropy(
            torch.randn(2, 4, 9), tgt
        ),
        "masks": lambda: (padding_mask(src, 0), target_mask(tgt, 0)),
        "scaled_dot_product_attention": lambda: scaled_dot_product_attention(q, q, q, mask),
        "MultiHeadAttention training": lambda: attention(x, x, x),
        "head_weights": lambda: head_weights(head_model, tokens),
        "relation_weights": lambda: relation_weights(torch.rand(2, 4, 8, 8)),
        "head_task train": lambda: head_train(head_model, steps=1, batch_size=4),
        "head_task accuracy": lambda: head_accuracy(head_model, tokens, targets_for(tokens)),
        "evaluate_seq2seq": lambda: evaluate_seq2seq(seq2seq, rev_src, rev_tgt),
        "copy_focus": lambda: reversal.copy_focus(seq2seq, rev_src, rev_tgt),
        "see_everything": lambda: leaky_decoder.see_everything(tgt),
        "generation_accuracy": lambda: leaky_decoder.generation_accuracy(model, reversed_pairs),
        "linear probe": lambda: linear_probe.accuracy(
            probe,
            *linear_probe.negation_data(t, ["i see the cat", "i do not see the cat"]),
        ),
        "diagonal_spread": lambda: diagonal_spread(torch.rand(5, 5)),
        "mean_forward_seconds": lambda: mean_forward_seconds(encoder, 8, repeats=1),
    }


def test_no_tensor_is_made_on_a_fixed_device(translator, corpus):
    made = {}
    for name, call in calls(translator, corpus).items():
        with TensorsMadeWithoutDevice() as watch:
            call()
        if watch.places:
            made[name] = sorted(set(watch.places))
    assert not made, f"tensors made without naming a device (they land on the CPU): {made}"


def test_the_watch_sees_a_tensor_made_without_its_device():
    """The test above can fail: a factory call in course_lib with no device is caught."""
    from course_lib.widgets import lesson3_examples

    with TensorsMadeWithoutDevice() as watch:
        lesson3_examples()  # made from nothing: on the default device, and rightly so
    assert watch.places and all(p.startswith(str(LIBRARY)) for p in watch.places)


@pytest.mark.parametrize("device", DEVICES)
def test_translation_and_attention_maps_follow_the_model(device, corpus):
    t = load_pretrained(device=device)
    assert devices.device_of(t.model).type == device
    pairs = corpus.test[:20]
    scores = evaluate_translation(t.model, pairs, t.src_vocab, t.tgt_vocab)
    assert scores["exact_match"] > 0.8  # the checkpoint gets over 99% of held-out sentences
    beam = translate(t.model, [p[0] for p in pairs[:3]], t.src_vocab, t.tgt_vocab, method="beam")
    assert beam == [p[1] for p in pairs[:3]]
    seen = sentence_attention(t.model, pairs[0][0], t.src_vocab, t.tgt_vocab)
    assert seen.cross[0].device.type == device
    assert torch.allclose(seen.cross[0].sum(-1).cpu(), torch.ones(seen.cross[0].shape[:-1]))


@pytest.mark.parametrize("device", DEVICES)
def test_training_follows_the_model(device, corpus):
    t = load_pretrained(device=device)
    model = t.model.train()
    before = [p.detach().clone() for p in model.parameters()]
    history = train(model, infinite_batches(corpus.train_ids, 16, seed=0), 3, progress=False)
    assert len(history.loss) == 3 and all(torch.isfinite(torch.tensor(history.loss)))
    assert all(p.device.type == device for p in model.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


@pytest.mark.parametrize("device", DEVICES)
def test_multi_head_attention_paths_agree_on_every_device(device):
    """Weights asked for, the fused kernel, and training with dropout: one function."""
    torch.manual_seed(0)
    attention = MultiHeadAttention(32, 4).to(device).eval()
    x = torch.randn(2, 6, 32, device=device)
    mask = torch.ones(6, 6, dtype=torch.bool, device=device).tril()
    fused, none = attention(x, x, x, mask)
    written, weights = attention(x, x, x, mask, need_weights=True)
    assert none is None and weights.shape == (2, 4, 6, 6)
    torch.testing.assert_close(fused, written, atol=1e-5, rtol=1e-4)
    attention.dropout = 0.5
    out, _ = attention.train()(x, x, x, mask)
    assert out.device.type == device and torch.isfinite(out).all()
    assert not torch.allclose(out, fused)  # dropout was applied


@pytest.mark.parametrize("device", DEVICES)
def test_checks_take_a_learners_tensors_from_any_device(device):
    expected = torch.tensor([[0.25, 0.75], [0.5, 0.5]])
    got = expected.to(device)
    assert as_tensor("weights", got).device.type == "cpu"
    diagnose("weights", got, expected)  # raises a Mismatch if they differ
    pair = on_cpu((got, got))
    assert all(p.device.type == "cpu" for p in pair)
    module = on_cpu(torch.nn.Linear(2, 2).to(device))
    assert all(p.device.type == "cpu" for p in module.parameters())


def test_on_cpu_returns_cpu_answers_themselves():
    """The checks see the learner's very objects when they are on the CPU already."""
    x, layer = torch.ones(2), torch.nn.Linear(2, 2)
    pair = (x, x)
    assert on_cpu(x) is x and on_cpu(layer) is layer and on_cpu(pair) is pair


def test_choose_names_what_this_machine_has():
    assert DEVICES[0] == "cpu" and set(DEVICES) <= set(devices.KINDS)
    assert devices.choose("cpu") == torch.device("cpu")
    missing = [d for d in ("cuda", "mps") if d not in DEVICES]
    for device in missing:
        with pytest.raises(ValueError, match=f"'{device}' is not available on this machine"):
            devices.choose(device)
    with pytest.raises(ValueError, match="device must be one of"):
        devices.choose("gpu")
    with pytest.raises(TypeError, match="device must be a str"):
        devices.choose(0)


def test_device_of():
    assert devices.device_of(torch.zeros(1)).type == "cpu"
    assert devices.device_of(torch.nn.ReLU()).type == "cpu"  # no parameters: the CPU
    assert devices.device_of(torch.nn.Linear(1, 1)).type == "cpu"
    with pytest.raises(TypeError, match="x must be a tensor or an nn.Module; got list"):
        devices.device_of([1])
