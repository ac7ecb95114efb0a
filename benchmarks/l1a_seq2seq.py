"""Lab L1.A in its full configuration: vanilla vs Bahdanau-attention LSTM seq2seq on reversal.

Lesson 1 runs a reduced version live (length 12, 2,000 sequences, 6 epochs); this script runs
the full recipe and prints the table the lesson quotes, with the training seconds:

    .venv/bin/python benchmarks/l1a_seq2seq.py                 # length 20 (about 3 minutes)
    .venv/bin/python benchmarks/l1a_seq2seq.py --length 40     # the longer sequences (about 6x slower)

Recipe: vocabulary 20 (ids 2..19 drawn), 2,500 training and 500 test sequences, embedding 64,
LSTM hidden 128, attention width 64, Adam lr 1e-3, 30 epochs, batch 64, gradient-norm clipping
5.0, teacher forcing max(0.2, 1 - 0.03 * epoch), seed 42, greedy decoding scored on positions
2..L. Accuracies are the same on every run with the same thread count and library versions;
the seconds depend on the machine.
"""

import argparse
import time

import torch

from course_lib.baselines import Seq2Seq, evaluate_seq2seq, reversal_data, train_seq2seq


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--length", type=int, default=20)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--train", type=int, default=2_500, help="training sequences")
    parser.add_argument("--test", type=int, default=500, help="test sequences")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    train_src, train_tgt = reversal_data(args.train, args.length, seed=args.seed)
    test_src, test_tgt = reversal_data(args.test, args.length, seed=args.seed + 1)
    print(
        f"reversal, length {args.length}, {args.train:,} / {args.test:,} sequences, "
        f"{args.epochs} epochs, seed {args.seed}, {args.threads} torch thread(s), torch {torch.__version__}"
    )
    print(
        f"| {'Model':<18} | {'Parameters':>10} | {'Token accuracy':>14} | {'Sequence accuracy':>17} | {'Training':>8} |"
    )
    print(f"|{'-' * 20}|{'-' * 12}:|{'-' * 15}:|{'-' * 18}:|{'-' * 9}:|")
    total = 0.0
    for name, attention in (("vanilla", False), ("Bahdanau attention", True)):
        torch.manual_seed(args.seed)
        model = Seq2Seq(attention=attention)
        start = time.perf_counter()
        train_seq2seq(model, train_src, train_tgt, epochs=args.epochs, seed=args.seed)
        seconds = time.perf_counter() - start
        total += seconds
        scores = evaluate_seq2seq(model, test_src, test_tgt)
        n_params = sum(p.numel() for p in model.parameters())
        print(
            f"| {name:<18} | {n_params:>10,} | {scores['token_accuracy']:>14.1%} "
            f"| {scores['sequence_accuracy']:>17.1%} | {seconds:>6.1f} s |",
            flush=True,
        )
    print(f"training time for both models: {total:.1f} s")


if __name__ == "__main__":
    main()
