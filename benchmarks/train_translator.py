"""Seconds of training until the tiny Transformer translates held-out sentences.

Trains course_lib's tiny preset (d_model 64, 2 + 2 layers, 4 heads, d_ff 256, dropout
0.1) on the English-to-French mini corpus (50,000 pairs) with the paper's recipe (Adam
0.9/0.98/1e-9, warmup then 1/sqrt(step), label smoothing 0.1), batch 64, warmup 400.
Every --eval-every steps, greedy decoding translates the 1,000 held-out sentences (each
uses a verb-noun-adjective combination never seen in training); training stops at
>= 99% exact match. The figure is the training time, evaluation time excluded
(goal: <= 30 s on 2 cores), with corpus BLEU from sacrebleu.

    python benchmarks/train_translator.py [--threads 2] [--seed 0] [--holdout triple]
"""

import argparse
import time

import torch

from course_lib.corpus import translation_corpus
from course_lib.data import infinite_batches
from course_lib.evaluation import evaluate_translation
from course_lib.model import Transformer, TransformerConfig
from course_lib.training import train


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--holdout", default="triple", choices=["triple", "noun_adjective"])
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--max-steps", type=int, default=3000)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    corpus = translation_corpus(seed=args.seed, holdout=args.holdout)
    model = Transformer(TransformerConfig.tiny(len(corpus.src_vocab), len(corpus.tgt_vocab)))
    eval_seconds = 0.0

    def evaluate(m):
        nonlocal eval_seconds
        start = time.perf_counter()
        result = evaluate_translation(m, corpus.test, corpus.src_vocab, corpus.tgt_vocab)
        eval_seconds += time.perf_counter() - start
        return result

    history = train(
        model,
        infinite_batches(corpus.train_ids, 64, seed=args.seed),
        args.max_steps,
        warmup=400,
        evaluate=evaluate,
        eval_every=args.eval_every,
        target=0.99,
        progress=False,
    )
    n_params = sum(p.numel() for p in model.parameters())
    print(
        f"Translator: {corpus}, {n_params:,} parameters, {args.threads} threads, seed {args.seed}, "
        f"holdout {args.holdout}"
    )
    for e in history.evals:
        print(f"  step {e['step']:5d}  exact match {e['exact_match']:.3f}  BLEU {e['bleu']:6.2f}")
    best = history.best
    train_seconds = history.seconds - eval_seconds
    reached = best["exact_match"] >= 0.99
    print(
        f"  {'reached' if reached else 'did NOT reach'} >= 99% exact match at step {best['step']}: "
        f"{best['exact_match']:.1%}, BLEU {best['bleu']:.2f}"
    )
    print(
        f"  training time {train_seconds:.1f} s (evaluation {eval_seconds:.1f} s excluded; "
        f"goal <= 30 s: {'meets goal' if reached and train_seconds <= 30 else 'MISSES goal'})"
    )
    beam = evaluate_translation(
        model, corpus.test, corpus.src_vocab, corpus.tgt_vocab, method="beam"
    )
    print(
        f"  beam search (4 beams, alpha 0.6): exact match {beam['exact_match']:.1%}, BLEU {beam['bleu']:.2f}"
    )


if __name__ == "__main__":
    main()
