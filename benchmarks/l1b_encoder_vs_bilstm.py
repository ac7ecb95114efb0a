"""Lab L1.B in full: forward time of a Transformer encoder against a BiLSTM encoder.

    .venv/bin/python benchmarks/l1b_encoder_vs_bilstm.py                    # 100, 500, 2000 tokens
    .venv/bin/python benchmarks/l1b_encoder_vs_bilstm.py --lengths 100 500 --repeats 5

Both encoders have a 10,000-token vocabulary and 256-wide outputs. Transformer: d_model 256,
8 heads, 6 post-norm layers, d_ff 1,024, dropout 0.1, sinusoidal positions (7,298,560
parameters). BiLSTM: 2 bidirectional layers of 128 units per direction (3,350,528). Protocol:
batch 4, eval mode, no gradients, one warm-up pass, then the mean of ``--repeats`` passes
(20 by default). Lesson 1 runs the same measurement with 2 passes at 100 and 500 tokens.
A popular claim says the LSTM is 5x slower at 500 tokens on a GPU; this prints what this
machine does. Nothing here is asserted: times depend on the machine and its load.
"""

import argparse

import torch

from course_lib.baselines import BiLSTMEncoder, mean_forward_seconds
from course_lib.model import make_encoder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[100, 500, 2000])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    models = {
        "Transformer": make_encoder(10_000, 256, 8, 6, 1024, max_len=5000).eval(),
        "BiLSTM": BiLSTMEncoder().eval(),
    }
    counts = {name: sum(p.numel() for p in m.parameters()) for name, m in models.items()}
    print(
        f"parameters: Transformer {counts['Transformer']:,}, BiLSTM {counts['BiLSTM']:,}; "
        f"batch 4, mean of {args.repeats} passes, {args.threads} torch thread(s), torch {torch.__version__}"
    )
    print("| Tokens | Transformer | BiLSTM | BiLSTM time / Transformer time |")
    print("|---:|---:|---:|---:|")
    for n in args.lengths:
        t = {name: mean_forward_seconds(m, n, args.repeats) for name, m in models.items()}
        print(
            f"| {n:,} | {1000 * t['Transformer']:,.0f} ms | {1000 * t['BiLSTM']:,.0f} ms "
            f"| {t['BiLSTM'] / t['Transformer']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
