"""Training throughput of course_lib's Transformer relative to torch.nn.Transformer.

Both models get the same embeddings, positional encoding and output layer, the same
configuration (attention biases and final norms, so that the stacks match exactly), the same
batches and the same optimizer (the course's fused Adam), on one thread. Steps alternate
between the two models; the figure is the ratio of median steps per second, ours / PyTorch's
(goal: >= 1.3), with a 95% bootstrap interval over the steps, at two sizes:

- tiny: the tiny preset (d_model 64, 2 + 2 layers, 4 heads, d_ff 256), batch 64 x 12;
- mid: d_model 256, 4 + 4 layers, 8 heads, d_ff 1,024, batch 32 x 32.

Source sentences are padded to random lengths from half the batch's length to all of it.
A step is timed by the CPU time of its thread, which is all the computing with one torch thread:
on an idle machine the same as the wall clock, on a shared one without the time spent waiting.

PyTorch picks its CPU kernels by processor, so the ratio is measured under each kernel setting
this processor can run (``ATEN_CPU_CAPABILITY`` default, avx2, avx512; see
``course_lib.experiments.kernels``), each in a fresh process, and printed as a table at the end.

    python benchmarks/training_throughput.py [--steps 40] [--sizes tiny mid]
        [--settings default avx2 avx512]
"""

import argparse
import dataclasses
import math
import os
import random
import re
import statistics
import subprocess
import sys
import time
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from course_lib.experiments import kernels
from course_lib.experiments.kernels import processor
from course_lib.model import Transformer, TransformerConfig
from course_lib.positional import PositionalEncoding

PAD = 0


class TorchTransformer(nn.Module):
    """nn.Transformer with the same embedding and output layers as course_lib's model."""

    def __init__(self, c: TransformerConfig):
        super().__init__()
        self.c = c
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model)
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.transformer = nn.Transformer(
            c.d_model,
            c.n_heads,
            c.n_encoder_layers,
            c.n_decoder_layers,
            c.d_ff,
            c.dropout,
            batch_first=True,
        )
        self.output_projection = nn.Linear(c.d_model, c.tgt_vocab_size)

    def forward(self, src, tgt):
        scale = math.sqrt(self.c.d_model)
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1], dtype=torch.bool)
        h = self.transformer(
            self.positional(self.src_embed(src) * scale),
            self.positional(self.tgt_embed(tgt) * scale),
            tgt_mask=causal,  # PyTorch's polarity: True = blocked
            src_key_padding_mask=src == PAD,
            tgt_key_padding_mask=tgt == PAD,
            memory_key_padding_mask=src == PAD,
        )
        return self.output_projection(h)


def random_batch(c, batch, length, generator):
    src = torch.randint(4, c.src_vocab_size, (batch, length), generator=generator)
    tgt = torch.randint(4, c.tgt_vocab_size, (batch, length + 1), generator=generator)
    lengths = torch.randint(length // 2, length + 1, (batch,), generator=generator)
    src[torch.arange(length)[None, :] >= lengths[:, None]] = PAD  # realistic padding
    return src, tgt[:, :-1], tgt[:, 1:]


def train_step(model, optimizer, batch) -> float:
    """Seconds of this thread's CPU time for one step (forward, loss, backward, Adam)."""
    src, tgt_in, tgt_out = batch
    start = time.thread_time()
    logits = model(src, tgt_in)
    loss = F.cross_entropy(
        logits.flatten(0, 1), tgt_out.flatten(), label_smoothing=0.1, ignore_index=PAD
    )
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return time.thread_time() - start


def adam(model) -> torch.optim.Adam:
    """The course's optimizer (``course_lib.training.paper_optimizer``: Adam, β2 = 0.98,
    ε = 1e-9, every parameter updated in one fused kernel), at a learning rate that keeps
    random batches from diverging. A loop over the parameters instead would add the same
    30 ms or so to both models' mid-size step, time the course's training never spends."""
    return torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9, fused=True)


def median_ms(ours, theirs, batches, step) -> tuple[float, float]:
    """Median milliseconds of ``step(model, optimizer, batch)`` for each model, each with its
    own Adam, steps alternating between them; the first 5 steps warm up and are not counted."""
    times = step_seconds(ours, theirs, batches, step)
    return tuple(statistics.median(t) * 1e3 for t in times)


def step_seconds(ours, theirs, batches, step) -> tuple[list[float], list[float]]:
    """The seconds of each counted step of :func:`median_ms`, ours and theirs."""
    optimizers = {m: adam(m) for m in (ours, theirs)}
    times = {ours: [], theirs: []}
    for i, batch in enumerate(batches):
        for model, optimizer in optimizers.items():
            seconds = step(model, optimizer, batch)
            if i >= 5:  # the first steps warm up allocators and kernels
                times[model].append(seconds)
    return times[ours], times[theirs]


def ratio_interval(ours, theirs, draws=2000) -> tuple[float, float]:
    """A 95% bootstrap interval of the ratio of medians, theirs / ours: the steps drawn again
    with replacement, as pairs (the two models ran one after the other on the same batch)."""
    rng, n = random.Random(0), len(ours)
    ratios = []
    for _ in range(draws):
        picked = [rng.randrange(n) for _ in range(n)]
        mine, other = ([t[i] for i in picked] for t in (ours, theirs))
        ratios.append(statistics.median(other) / statistics.median(mine))
    ratios.sort()
    return ratios[int(0.025 * draws)], ratios[int(0.975 * draws) - 1]


TINY = TransformerConfig.tiny(120, 200, attention_bias=True, final_norm=True)
MID = dataclasses.replace(
    TINY, d_model=256, n_heads=8, n_encoder_layers=4, n_decoder_layers=4, d_ff=1024
)
SIZES = {"tiny": (TINY, 64, 12), "mid": (MID, 32, 32)}  # configuration, batch, length
GOAL = 1.3
KERNELS = ("default", "avx2", "avx512")  # the ATEN_CPU_CAPABILITY values torch knows


def compare(name: str, steps: int) -> float:
    c, batch, length = SIZES[name]
    torch.manual_seed(0)
    ours, theirs = Transformer(c).train(), TorchTransformer(c).train()
    n_ours = sum(p.numel() for p in ours.parameters())
    n_theirs = sum(p.numel() for p in theirs.parameters())
    assert n_ours == n_theirs, (n_ours, n_theirs)
    g = torch.Generator().manual_seed(0)
    batches = (random_batch(c, batch, length, g) for _ in range(steps + 5))
    times = step_seconds(ours, theirs, batches, train_step)
    ms_ours, ms_theirs = (statistics.median(t) * 1e3 for t in times)
    ratio, (low, high) = ms_theirs / ms_ours, ratio_interval(*times)
    verdict = "meets goal" if ratio >= GOAL else "MISSES goal"
    print(
        f"  {name:4s} ({n_ours:,} parameters, batch {batch} x {length}): ours {ms_ours:.1f} ms/step, "
        f"nn.Transformer {ms_theirs:.1f} ms/step, throughput ratio {ratio:.3f} "
        f"(95% interval {low:.3f} to {high:.3f}; goal >= {GOAL}: {verdict})"
    )
    return ratio


def each_setting(args):
    """Run this script once per kernel setting, each in its own process; tabulate the ratios."""
    print(f"Processor: {processor()}, {os.cpu_count()} cores; torch {torch.__version__}")
    ratios = {}
    for setting in args.settings:
        why_not = kernels.unavailable(setting)
        if why_not:
            print(f"\n{setting}: skipped, {why_not}")
            continue
        print(f"\nATEN_CPU_CAPABILITY={setting}:", flush=True)
        command = [sys.executable, __file__, "--steps", str(args.steps), "--sizes", *args.sizes]
        done = subprocess.run(
            [*command, "--settings", "this"],
            env=kernels.environment(setting),
            capture_output=True,
            text=True,
            check=True,
        )
        print(done.stdout, end="", flush=True)
        pattern = r"^\s+(\w+) .*throughput ratio ([\d.]+) \(95% interval ([\d.]+)"
        found = re.findall(pattern, done.stdout, re.MULTILINE)
        ratios[setting] = {size: (float(r), float(low)) for size, r, low in found}
    print("\nThroughput ratio, ours / nn.Transformer, and the low end of its 95% interval:")
    print(f"  {'setting':8s} " + " ".join(f"{size:>15s}" for size in args.sizes))
    for setting, by_size in ratios.items():
        cells = (f"{r:6.3f} (>= {low:.3f})" for r, low in (by_size[s] for s in args.sizes))
        print(f"  {setting:8s} " + " ".join(f"{cell:>15s}" for cell in cells))
    found = [pair for by_size in ratios.values() for pair in by_size.values()]
    worst, least = (min((pair[i] for pair in found), default=0) for i in (0, 1))
    verdict = "MISSES goal" if worst < GOAL else "meets goal"
    if worst >= GOAL > least:
        verdict += f", but within the noise: an interval reaches down to {least:.3f}"
    print(f"  lowest {worst:.3f} (goal >= {GOAL} at every setting): {verdict}")


def main():
    # nn.Transformer warns about its own internals (nested tensors, mask types); not ours to fix.
    warnings.filterwarnings("ignore", category=UserWarning, module="torch")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--sizes", nargs="+", choices=sorted(SIZES), default=list(SIZES))
    parser.add_argument(
        "--settings",
        nargs="+",
        choices=[*KERNELS, "this"],
        default=list(KERNELS),
        help="kernel settings to measure, each in a fresh process; 'this': this process's own",
    )
    args = parser.parse_args()
    if args.settings != ["this"]:
        return each_setting(args)
    torch.set_num_threads(1)
    print(
        f"Training step, ours vs nn.Transformer, 1 thread, median of {args.steps} steps each, "
        f"kernels {torch.backends.cpu.get_cpu_capability()}"
    )
    for name in args.sizes:
        compare(name, args.steps)


if __name__ == "__main__":
    main()
