"""Forward + backward time of course_lib's MultiHeadAttention relative to nn.MultiheadAttention.

Setting: B=32, T=128, d_model=256, 8 heads, self-attention, float32 on the CPU. The two
modules run interleaved, one call each in turn, so that a busy machine slows both
alike; the figure is the ratio of the medians (goal: <= 1.1 on the fast path, <= 2.0
when per-head weights are returned).

    python benchmarks/attention_speed.py [--repeats 30]
"""

import argparse
import statistics
import time

import torch
from torch import nn

from course_lib.attention import MultiHeadAttention

B, T, D, H = 32, 128, 256, 8


def step_time(fn, x) -> float:
    start = time.perf_counter()
    fn(x).sum().backward()
    return time.perf_counter() - start


def compare(ours_fn, theirs_fn, x, repeats: int) -> tuple[float, float, float]:
    ours, theirs = [], []
    for _ in range(3):  # warm-up
        step_time(ours_fn, x), step_time(theirs_fn, x)
    for _ in range(repeats):
        ours.append(step_time(ours_fn, x))
        theirs.append(step_time(theirs_fn, x))
    mine, ref = statistics.median(ours), statistics.median(theirs)
    return mine * 1e3, ref * 1e3, mine / ref


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)  # as notebook.start() sets it in the lessons
    torch.manual_seed(0)
    ours = MultiHeadAttention(D, H)
    theirs = nn.MultiheadAttention(D, H, batch_first=True)
    x = torch.randn(B, T, D, requires_grad=True)

    cases = {
        "fast path (no weights)": (
            lambda x: ours(x, x, x)[0],
            lambda x: theirs(x, x, x, need_weights=False)[0],
            1.1,
        ),
        "per-head weights returned": (
            lambda x: ours(x, x, x, need_weights=True)[0],
            lambda x: theirs(x, x, x, need_weights=True, average_attn_weights=False)[0],
            2.0,
        ),
    }
    print(
        f"MultiHeadAttention forward+backward, B={B} T={T} d_model={D} heads={H}, "
        f"{torch.get_num_threads()} threads, median of {args.repeats}"
    )
    for name, (mine, ref, goal) in cases.items():
        ms_ours, ms_ref, ratio = compare(mine, ref, x, args.repeats)
        verdict = "meets goal" if ratio <= goal else "MISSES goal"
        print(
            f"  {name:27s} ours {ms_ours:7.2f} ms  nn.MultiheadAttention {ms_ref:7.2f} ms  "
            f"ratio {ratio:.2f} (goal <= {goal}: {verdict})"
        )


if __name__ == "__main__":
    main()
