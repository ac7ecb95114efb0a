"""Where the time of one of lesson 7's training steps goes, by kind of operation.

Profiles 20 steps of exactly what lesson 7 trains (``course_lib.pretrained.RECIPE``), one
thread, with PyTorch's profiler, and sums each operation's own time into a few kinds: matrix
products, dropout masks, softmax, layer norm, the optimizer, copies and the rest. Use it to see
what a change to the model or the recipe saves before timing it end to end.

With ``--compare tiny`` or ``--compare mid`` it profiles instead one size of
``training_throughput.py``, course_lib's step beside ``nn.Transformer``'s, kind by kind. The
kernels are the process's: set ``ATEN_CPU_CAPABILITY`` (default, avx2, avx512) to compare them.

    python benchmarks/profile_step.py [--steps 20] [--compare tiny|mid]
"""

import argparse
from collections import Counter

import torch
from torch import nn
from torch.profiler import profile, record_function

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
    "copies and type changes": {
        *("aten::copy_", "aten::_to_copy", "aten::cat", "aten::clone"),
        *("aten::index_select", "aten::index_copy"),  # packing (course_lib/fast_training.py)
    },
    "element-wise": {
        *(
            f"aten::{op}{tail}"
            for op in ("mul", "add", "div", "sub", "lerp", "addcdiv", "sqrt")
            for tail in ("", "_")
        ),
        "aten::where",
        "aten::addcmul",
        "aten::gt",
        "aten::masked_fill",
        "aten::masked_fill_",
        "aten::threshold_backward",
        "aten::clamp_min",
        "aten::exp",
    },
}


def kind_of(name: str) -> str:
    return next((kind for kind, names in KINDS.items() if name in names), "other")


def by_event(step, steps: int):
    """The profiler's events over ``steps`` calls of ``step``, after 5 calls to warm up."""
    for _ in range(5):
        step()
    with profile() as prof:
        for _ in range(steps):
            step()
    return prof.events()


def compare(size: str, steps: int):
    """course_lib's and nn.Transformer's step at one of training_throughput.py's sizes.

    One profile, steps alternating between the two models, each under a label that every
    operation it runs is counted to: whatever else the machine does affects both alike."""
    import warnings

    from training_throughput import (
        SIZES,
        TorchTransformer,
        Transformer,
        adam,
        random_batch,
        train_step,
    )

    warnings.filterwarnings("ignore", category=UserWarning, module="torch")
    c, batch, length = SIZES[size]
    torch.manual_seed(0)
    models = {"ours": Transformer(c).train(), "nn.Transformer": TorchTransformer(c).train()}
    optimizers = {name: adam(m) for name, m in models.items()}
    g = torch.Generator().manual_seed(0)

    def both():
        batch_ = random_batch(c, batch, length, g)
        for name, model in models.items():
            with record_function(name):
                train_step(model, optimizers[name], batch_)

    totals = {name: Counter() for name in models}
    for event in by_event(both, steps):
        root = event
        while root.cpu_parent is not None:
            root = root.cpu_parent
        if root.name in totals and root is not event:  # the label's own time is Python's
            totals[root.name][kind_of(event.name)] += event.self_cpu_time_total
    ours, theirs = totals.values()
    print(
        f"{size} training step (batch {batch} x {length}), ms of operator time per step, 1 thread, "
        f"kernels {torch.backends.cpu.get_cpu_capability()}:"
    )
    print(f"  {'kind':26s} {'ours':>7s} {'nn.Transformer':>15s}")
    for kind, _ in (ours + theirs).most_common():
        print(f"  {kind:26s} {ours[kind] / steps / 1e3:7.1f} {theirs[kind] / steps / 1e3:15.1f}")
    whole = [sum(t.values()) / steps / 1e3 for t in (ours, theirs)]
    print(f"  {'per step':26s} {whole[0]:7.1f} {whole[1]:15.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--compare", choices=("tiny", "mid"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.compare:
        return compare(args.compare, args.steps)
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

    totals = Counter()
    for event in by_event(step, args.steps):
        totals[kind_of(event.name)] += event.self_cpu_time_total
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
