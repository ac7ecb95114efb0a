"""Training throughput on a GPU, course_lib's Transformer relative to torch.nn.Transformer.

The same comparison as ``training_throughput.py`` (same embeddings, positional encoding, output
layer, batches and optimizer for both models; steps alternate between them), on an NVIDIA GPU
("cuda") or Apple silicon ("mps"), in fp32 and under bf16 autocast, at three sizes:

- tiny: the tiny preset (d_model 64, 2 + 2 layers, 4 heads, d_ff 256), batch 64 x 12;
- base: the paper's base model (d_model 512, 6 + 6 layers, 8 heads, d_ff 2,048), batch 64 x 32;
- big: the paper's big model (d_model 1,024, 6 + 6 layers, 16 heads, d_ff 4,096), batch 32 x 32.

Vocabularies of 10,000 words. The figure is the ratio of median steps per second, ours /
PyTorch's (goal: >= 1.0). Each step is timed from the batch's arrival on the device to the end
of the optimizer's step, waiting for the GPU to finish.

    python benchmarks/gpu_training.py [--device cuda] [--steps 30] [--sizes tiny base big]
"""

import argparse
import dataclasses
import time
import warnings
from contextlib import nullcontext

import torch
import torch.nn.functional as F
from training_throughput import PAD, TINY, TorchTransformer, median_ms, random_batch

from course_lib.devices import available, choose, synchronize
from course_lib.model import Transformer, TransformerConfig

VOCAB = dict(src_vocab_size=10_000, tgt_vocab_size=10_000)
BASE = dataclasses.replace(
    TransformerConfig(share_embeddings=False), attention_bias=True, final_norm=True, **VOCAB
)
BIG = dataclasses.replace(
    TransformerConfig.big(share_embeddings=False), attention_bias=True, final_norm=True, **VOCAB
)
SIZES = {"tiny": (TINY, 64, 12), "base": (BASE, 64, 32), "big": (BIG, 32, 32)}
GOAL = 1.0


def train_step(model, optimizer, batch, device, autocast) -> float:
    src, tgt_in, tgt_out = batch
    synchronize(device)
    start = time.perf_counter()
    with autocast():
        logits = model(src, tgt_in)
        loss = F.cross_entropy(
            logits.flatten(0, 1).float(), tgt_out.flatten(), label_smoothing=0.1, ignore_index=PAD
        )
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    synchronize(device)
    return time.perf_counter() - start


def compare(name: str, device: torch.device, precision: str, steps: int) -> float:
    c, batch, length = SIZES[name]
    torch.manual_seed(0)
    ours, theirs = Transformer(c).to(device).train(), TorchTransformer(c).to(device).train()
    if precision == "bf16":
        autocast = lambda: torch.autocast(device.type, dtype=torch.bfloat16)  # noqa: E731
    else:
        autocast = nullcontext
    g = torch.Generator().manual_seed(0)
    batches = ([t.to(device) for t in random_batch(c, batch, length, g)] for _ in range(steps + 5))
    ms_ours, ms_theirs = median_ms(
        ours, theirs, batches, lambda m, opt, b: train_step(m, opt, b, device, autocast)
    )
    ratio = ms_theirs / ms_ours
    verdict = "meets goal" if ratio >= GOAL else "MISSES goal"
    print(
        f"  {name:4s} {precision}: ours {ms_ours:.1f} ms/step, nn.Transformer {ms_theirs:.1f} "
        f"ms/step, throughput ratio {ratio:.2f} (goal >= {GOAL}: {verdict})"
    )
    return ratio


def main():
    warnings.filterwarnings("ignore", category=UserWarning, module="torch")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    gpus = [d for d in available() if d != "cpu"]
    parser.add_argument("--device", default=gpus[0] if gpus else None)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--sizes", nargs="+", choices=sorted(SIZES), default=list(SIZES))
    args = parser.parse_args()
    if args.device is None:
        print("No GPU on this machine (torch sees only the CPU): nothing to measure.")
        return
    device = choose(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    print(f"Training step on {name}, torch {torch.__version__}, median of {args.steps} steps each")
    for size in args.sizes:
        for precision in ("fp32", "bf16"):
            compare(size, device, precision, args.steps)


if __name__ == "__main__":
    main()
