"""Redraw time of the deep-stack explorer (lesson 6): what a learner waits for after moving a control.

Each redraw is the explorer's ``update()``, fired by setting a control's value: the profile of
the stack (forward and backward through up to 48 FFN layers, cached per setting), the figure
redrawn in place, the PNG encoded and put into the ``Output`` widget. Three cases, each after
5 warm-up steps: the depth slider stepping through depths not seen before (the profile is
computed), the same depths again (cached), and the LayerNorm placement cycling at 48 layers.
Goal: a redraw well under 150 ms, read as median <= 100 ms and slowest <= 150 ms.

    python benchmarks/deep_stack_redraw.py [--repeats 30]
"""

import argparse

import torch
from _redraw import report, timed

from course_lib.widgets.deep_stack import MAX_DEPTH, DeepStackExplorer, stack_profile


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    explorer = DeepStackExplorer(depth=12)
    depths = [1 + (7 * i) % MAX_DEPTH for i in range(MAX_DEPTH)]  # every depth once, scattered

    def new_depth(i):
        explorer.depth.value = depths[i % MAX_DEPTH]

    def norm_step(i):
        explorer.depth.value = MAX_DEPTH
        explorer.norm.value = ("none", "post", "pre")[i % 3]

    print(
        f"DeepStackExplorer redraw, up to {MAX_DEPTH} layers, {torch.get_num_threads()} torch "
        f"thread(s), {args.repeats} redraws after 5 warm-up"
    )
    stack_profile.cache_clear()
    cases = [
        ("depth slider, new depths (profile computed)", new_depth),
        ("depth slider, depths seen before (cached)", new_depth),
        ("LayerNorm placement at 48 layers", norm_step),
    ]
    for label, step in cases:
        report(label, timed(step, min(args.repeats, MAX_DEPTH - 5)), width=45)


if __name__ == "__main__":
    main()
