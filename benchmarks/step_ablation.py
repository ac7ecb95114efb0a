"""What parts of course_lib's mid-size training step cost where they run, found by removing them.

PyTorch's profiler (``profile_step.py``) overstates operations bound by memory traffic: inside
a profiled step, zeroing an 8 MB tensor took 3.8 ms, timed alone in an unprofiled step 0.5 ms.
So here each part is replaced by a stand-in that does less, and the steps are timed without a
profiler: course_lib's step (A), the same step without the part (B) and ``nn.Transformer``'s
(C), in turn on the same batches. The stand-ins compute a different model; they only bound what
any faster version of the part could save, and the ratio C/B is the most that would give.

- dropout draws: each dropout mask of the training path drawn once and reused (no random
  numbers, no comparisons; the multiplications stay);
- feed-forward masks: the feed-forward network without ReLU and dropout, ``w_2(w_1(x))``;
- both at once.

    python benchmarks/step_ablation.py [--steps 30]

Set ``ATEN_CPU_CAPABILITY`` (default, avx2, avx512) to choose PyTorch's kernels.
"""

import argparse
import statistics
import warnings
from contextlib import ExitStack
from unittest import mock

import torch
from training_throughput import SIZES, TorchTransformer, Transformer, adam, random_batch, train_step

from course_lib import dropout, fast_training


def reused(kept):
    """:func:`course_lib.dropout.kept`, drawn once for the most rows of each row shape and p and
    returned again, its first rows cloned (the callers change the mask in place). The encoder's
    packed rows vary in number from batch to batch; the draw of the most rows serves them all."""
    done = {}

    def again(x, p):
        key = (tuple(x.shape[1:]), p)
        if key not in done or len(done[key][0]) < len(x):
            done[key] = kept(x, p)
        keep, scale = done[key]
        return keep[: len(x)].clone(), scale

    return again


_KEPT = reused(dropout.kept)
PATCHES = {  # part -> {(module, name): stand-in}
    # fast_training imports kept by name; dropout.scaled_mask looks it up in its own module
    "dropout draws": {(fast_training, "kept"): _KEPT, (dropout, "kept"): _KEPT},
    "feed-forward masks": {
        (fast_training, "_feed_forward"): lambda ffn, x: ffn.w_2(ffn.w_1(x)),
    },
}
PATCHES["both"] = {**PATCHES["dropout draws"], **PATCHES["feed-forward masks"]}


def step_ms(without: str, steps: int) -> tuple[float, float, float]:
    """Median ms of a step: course_lib's, course_lib's ``without`` the part, nn.Transformer's."""
    c, batch, length = SIZES["mid"]
    models = []
    for kind in (Transformer, Transformer, TorchTransformer):
        torch.manual_seed(0)
        models.append(kind(c).train())
    optimizers = [adam(m) for m in models]
    g = torch.Generator().manual_seed(0)
    times = [[], [], []]
    for i in range(steps + 5):
        batch_ = random_batch(c, batch, length, g)
        for j, (model, optimizer) in enumerate(zip(models, optimizers, strict=True)):
            with ExitStack() as patches:
                if j == 1:
                    for (module, name), stand_in in PATCHES[without].items():
                        patches.enter_context(mock.patch.object(module, name, stand_in))
                seconds = train_step(model, optimizer, batch_)
            if i >= 5:  # the first steps warm up allocators and kernels
                times[j].append(seconds)
    return tuple(statistics.median(t) * 1e3 for t in times)


def main():
    warnings.filterwarnings("ignore", category=UserWarning, module="torch")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(
        f"Mid-size step, 1 thread, kernels {torch.backends.cpu.get_cpu_capability()}, "
        f"median of {args.steps} steps each; A course_lib, B without the part, C nn.Transformer"
    )
    for part in PATCHES:
        a, b, c = step_ms(part, args.steps)
        print(
            f"  without {part:18s}: A {a:6.1f} ms, B {b:6.1f} ms (saved {(a - b) / a:+.1%}), "
            f"C {c:6.1f} ms; ratio C/A {c / a:.3f}, C/B {c / b:.3f}"
        )


if __name__ == "__main__":
    main()
