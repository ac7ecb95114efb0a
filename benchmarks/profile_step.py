"""Where the time of one of lesson 7's training steps goes, by kind of operation.

Profiles 20 steps of exactly what lesson 7 trains (``course_lib.pretrained.RECIPE``), one
thread, with PyTorch's profiler, and sums each operation's own time into a few kinds: matrix
products, dropout masks, softmax, layer norm, the optimizer, copies and the rest. Use it to see
what a change to the model or the recipe saves before timing it end to end.

    python benchmarks/profile_step.py [--steps 20]
"""

import argparse
from collections import Counter

import torch
from torch import nn
from torch.profiler import profile

from course_lib.corpus import translation_corpus
from course_lib.data import infinite_batches
from course_lib.pretrained import RECIPE, new_model
from course_lib.training import label_smoothed_cross_entropy, paper_optimizer

KINDS = {  # kind -> the operators it sums (their own time, not their callees')
    "matrix products": {"aten::mm", "aten::bmm", "aten::addmm"},
    "dropout masks": {"aten::random_", "aten::bernoulli_", "aten::ge", "aten::native_dropout"},
    "softmax": {
        "aten::_softmax",
        "aten::_softmax_backward_data",
        "aten::_log_softmax",
        "aten::_log_softmax_backward_data",
    },
    "layer norm": {"aten::native_layer_norm", "aten::native_layer_norm_backward"},
    "optimizer": {"aten::_fused_adam_", "Optimizer.step#Adam.step"},  # unfused: element-wise
    "copies and type changes": {"aten::copy_", "aten::_to_copy", "aten::cat", "aten::clone"},
    "element-wise": {
        *(
            f"aten::{op}{tail}"
            for op in ("mul", "add", "div", "sub", "lerp", "addcdiv", "sqrt")
            for tail in ("", "_")
        ),
        "aten::where",
        "aten::masked_fill",
        "aten::masked_fill_",
        "aten::threshold_backward",
        "aten::clamp_min",
        "aten::exp",
    },
}


def kind_of(name: str) -> str:
    return next((kind for kind, names in KINDS.items() if name in names), "other")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    corpus = translation_corpus(seed=RECIPE.seed)
    model = new_model(corpus).train()
    optimizer = paper_optimizer(model)
    batches = infinite_batches(corpus.train_ids, RECIPE.batch_size, seed=RECIPE.seed)

    def step():
        batch = next(batches)
        loss = label_smoothed_cross_entropy(model(batch.src, batch.tgt_in), batch.tgt_out)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    for _ in range(5):  # warm-up
        step()
    with profile() as prof:
        for _ in range(args.steps):
            step()
    totals = Counter()
    for event in prof.key_averages():
        totals[kind_of(event.key)] += event.self_cpu_time_total
    whole = sum(totals.values())
    print(
        f"Lesson 7's training step (batch {RECIPE.batch_size}, {len(model.encoder.layers)} + "
        f"{len(model.decoder.layers)} layers), {whole / args.steps / 1e3:.1f} ms of operator time "
        "per step, 1 thread:"
    )
    for kind, micros in totals.most_common():
        print(f"  {kind:26s} {micros / args.steps / 1e3:6.1f} ms  {micros / whole:5.1%}")


if __name__ == "__main__":
    main()
