"""Lesson 7's lab L7.I: a new classification head on the shipped translator's frozen encoder.

The task: is an English sentence negated? The head reads the mean of the encoder's outputs
over the real tokens. Before training its answers are random; after 60 Adam steps on 400
sentences it classifies the 200 held-out ones. Only the head learns (a linear probe).
"""

import torch
import torch.nn.functional as F
from torch import nn

from ..corpus import translation_corpus
from ..data import PAD_ID, collate
from ..devices import device_of
from ..pretrained import Translator, load_pretrained
from ..replay import replayable
from . import Bound, Experiment


class SentenceClassifier(nn.Module):
    """A pretrained encoder under a freshly initialised two-way head."""

    def __init__(self, translator: Translator):
        super().__init__()
        self.translator = translator.model
        width, device = translator.model.config.d_model, device_of(translator.model)
        self.head = nn.Linear(width, 2, device=device)  # new: knows nothing yet

    def forward(self, src):  # (B, S) -> (B, 2) logits
        memory = self.translator.encode(src)  # (B, S, d_model), the pretrained encoder
        keep = (src != PAD_ID).unsqueeze(-1)
        return self.head((memory * keep).sum(1) / keep.sum(1))  # mean over real tokens


def negation_data(translator: Translator, sentences):
    """Token ids ``(N, S)`` of ``sentences`` in the model's own vocabulary, and 1 where negated."""
    device = device_of(translator.model)
    labels = torch.tensor([int(" not " in f" {s} ") for s in sentences], device=device)
    batch = collate([(translator.src_vocab.encode(s), [0]) for s in sentences])
    return batch.src.to(device), labels


def accuracy(model, ids, labels) -> float:
    model.eval()
    with torch.no_grad():
        return (model(ids).argmax(-1) == labels).float().mean().item()


@replayable
def fit_head(model: SentenceClassifier, ids, labels, steps: int = 60, lr: float = 1e-2):
    """Adam on the head's parameters only; the encoder stays as it is."""
    optimizer = torch.optim.Adam(model.head.parameters(), lr=lr)
    for _ in range(steps):
        loss = F.cross_entropy(model(ids), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run(seed: int = 0) -> dict:
    pretrained = load_pretrained()
    for p in pretrained.model.parameters():
        p.requires_grad_(False)
    sentences = [en for en, _ in translation_corpus(seed=0).train[600 * seed : 600 * (seed + 1)]]
    ids, labels = negation_data(pretrained, sentences)
    torch.manual_seed(seed)
    model = SentenceClassifier(pretrained)
    before = accuracy(model, ids[400:], labels[400:])
    fit_head(model, ids[:400], labels[:400])
    return {"accuracy_before": before, "accuracy_after": accuracy(model, ids[400:], labels[400:])}


EXPERIMENT = Experiment(
    name="linear_probe",
    lesson=7,
    run=run,
    bounds=(
        Bound(
            "accuracy_after",
            ">",
            0.95,
            0.02,
            "after fine-tuning the head, over 95% of the held-out sentences are right",
        ),
    ),
)
