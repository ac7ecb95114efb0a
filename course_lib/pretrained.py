"""The course's small pretrained English-to-French translator: train it, save it, load it.

Lesson 7 trains the tiny preset live; this module holds the one recipe both the lesson and
the shipped checkpoint use, so that a learner who skips training gets a model trained the
same way (the very same weights on the same kind of processor, see below).
Regenerate the checkpoint (one thread, seed 0) with::

    python -m course_lib.pretrained          # writes course_lib/pretrained/translator.pt

Training is deterministic for one kind of processor and thread count: the same weights, bit for
bit. Another processor picks other CPU kernels, whose last bits differ, so it trains other
weights of the same accuracy. The checkpoint records which kernels produced it.
"""

import argparse
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from .corpus import translation_corpus
from .data import Vocab, infinite_batches
from .devices import choose
from .evaluation import evaluate_translation
from .experiments.kernels import describe, processor
from .model import Transformer, TransformerConfig
from .training import train

CHECKPOINT = Path(__file__).resolve().parent / "pretrained" / "translator.pt"


@dataclass(frozen=True)
class Recipe:
    """How the checkpoint is trained: the paper's recipe (§5.3, §5.4) sized for one CPU thread."""

    steps: int = 250  # a fixed budget: about 10 s on one thread, over 99% held-out exact match
    warmup: int = 100  # the paper's 4,000 would not reach its peak in this budget
    batch_size: int = 128  # fewer, larger steps: each step has a fixed cost on a CPU
    layers: int = 1  # per stack: one encoder and one decoder layer learn this grammar
    dropout: float = 0.05  # half the paper's 0.1: this small grammar needs less regularisation
    average: int = 8  # the final weights: the mean of the last 8 checkpoints (paper §6.1) ...
    average_every: int = 10  # ... taken every 10 steps, from step 180 to 250
    smoothing: float = 0.1  # label smoothing ε_ls (§5.4)
    seed: int = 0  # the corpus, the initial weights and the batch order
    holdout: str = "triple"  # what the held-out sentences measure: see corpus.translation_corpus
    threads: int = 1  # results are bit-identical only at a fixed thread count


RECIPE = Recipe()


@dataclass
class Translator:
    """A trained model with the vocabularies it was trained with (always use them together)."""

    model: Transformer
    src_vocab: Vocab  # English
    tgt_vocab: Vocab  # French


def new_model(corpus, seed: int = RECIPE.seed, recipe: Recipe = RECIPE) -> Transformer:
    """The tiny preset with the recipe's layers per stack and dropout, sized for ``corpus``'s
    vocabularies and initialised from ``seed``."""
    torch.manual_seed(seed)
    sizes = (len(corpus.src_vocab), len(corpus.tgt_vocab))
    layers = {"n_encoder_layers": recipe.layers, "n_decoder_layers": recipe.layers}
    # The reference path trained the shipped checkpoint; the fast one rounds differently.
    c = TransformerConfig.tiny(*sizes, **layers, dropout=recipe.dropout, fast_training=False)
    return Transformer(c)


def train_translator(recipe: Recipe = RECIPE, progress: bool = False):
    """Generate the corpus, build the model and train it with ``recipe``.

    Returns:
        ``(Translator, corpus, history)``; the model is in eval mode.
    """
    torch.set_num_threads(recipe.threads)
    corpus = translation_corpus(seed=recipe.seed, holdout=recipe.holdout)
    model = new_model(corpus, recipe.seed, recipe)
    batches = infinite_batches(corpus.train_ids, recipe.batch_size, seed=recipe.seed)
    history = train(
        model,
        batches,
        recipe.steps,
        warmup=recipe.warmup,
        smoothing=recipe.smoothing,
        average=recipe.average,
        average_every=recipe.average_every,
        progress=progress,
    )
    return Translator(model, corpus.src_vocab, corpus.tgt_vocab), corpus, history


def save_translator(translator: Translator, path=CHECKPOINT) -> Path:
    """Write the weights, the configuration and both vocabularies to one file."""
    if not isinstance(translator, Translator):
        raise TypeError(f"translator must be a Translator; got {type(translator).__name__}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().clone() for k, v in translator.model.state_dict().items()}
    torch.save(
        {
            "config": asdict(translator.model.config),
            "src_itos": list(translator.src_vocab.itos[4:]),  # the specials are implied
            "tgt_itos": list(translator.tgt_vocab.itos[4:]),
            "state_dict": state,
            "kernels": describe(),  # e.g. "torch kernels AVX2, MKL_CBWR unset, 1 thread"
            "processor": processor(),  # with the kernels and torch, what the same bits need
            "torch": str(torch.__version__),  # a plain str: weights_only loading refuses others
        },
        path,
    )
    return path


def load_pretrained(path=CHECKPOINT, device="cpu") -> Translator:
    """Load a checkpoint written by :func:`save_translator`; the model comes back in eval mode.

    Args:
        device: where the model computes: ``"cpu"`` (the lessons' default), ``"cuda"`` or
            ``"mps"``; translating and drawing its attention then happen there too.
    """
    device = choose(device)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no checkpoint at {path}; regenerate it with: python -m course_lib.pretrained"
        )
    saved = torch.load(path, map_location="cpu", weights_only=True)  # plain data, no pickled code
    with torch.device("cpu"):  # built where the saved numbers are, whatever the default device
        model = Transformer(TransformerConfig(**saved["config"]))
    model.load_state_dict(saved["state_dict"])
    model = model.to(device).eval()
    return Translator(model, Vocab(saved["src_itos"]), Vocab(saved["tgt_itos"]))


def recorded_kernels(path=CHECKPOINT) -> str:
    """The CPU kernels and thread count that trained the checkpoint at ``path``."""
    saved = torch.load(Path(path), map_location="cpu", weights_only=True)
    return saved.get("kernels", "not recorded")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Train and save the course's translator.")
    parser.add_argument("--out", type=Path, default=CHECKPOINT)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    translator, corpus, history = train_translator(RECIPE)
    seconds = time.perf_counter() - start
    path = save_translator(translator, args.out)
    scores = evaluate_translation(
        translator.model, corpus.test, translator.src_vocab, translator.tgt_vocab
    )
    print(
        f"{RECIPE.steps} steps, {RECIPE.threads} thread, seed {RECIPE.seed}: {seconds:.1f} s "
        f"(corpus and training); held-out exact match {scores['exact_match']:.1%}, "
        f"BLEU {scores['bleu']:.2f}; last step's loss {history.loss[-1]:.3f} (before averaging)"
    )
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB); trained with {describe()}")


if __name__ == "__main__":
    main()
