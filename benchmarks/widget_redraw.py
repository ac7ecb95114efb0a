"""Redraw time of the attention-map explorer: what a learner waits for after moving a control.

Setting: lesson 3's explorer on its largest example (11 tokens, 2 heads, every cell
annotated). Each redraw is the explorer's ``update()``, fired by setting a control's value
as a slider step does: it computes the weights, redraws the figure in place, encodes the PNG
and puts it into the ``Output`` widget (outside a notebook nothing is shown, the work is the
same). The explorer keeps one figure: the example fixes its layout, and the still parts of
each example's layout (tokens, axis labels, colour bar) are drawn once and kept as pixels.
Four cases, each after 5 warm-up steps:

- temperature slider, cycling through 0.1 .. 10;
- head and causal mask, alternating: the same figure, first view or not;
- example buttons, examples seen before: the four examples in turn, their still parts kept;
- example buttons, first view: the same, with the kept drawings dropped before each step
  (untimed), so that every step lays the figure out and draws it in full.

Goal: a redraw well under 150 ms, read as median <= 100 ms and slowest <= 150 ms.

    python benchmarks/widget_redraw.py [--repeats 30]
"""

import argparse

import torch
from _redraw import report, timed

from course_lib.widgets import AttentionExplorer, lesson3_examples


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)  # as notebook.start() sets it in the lessons
    examples = lesson3_examples()
    largest = max(range(len(examples)), key=lambda i: examples[i].scores.numel())
    explorer = AttentionExplorer(examples, save_dir="/tmp")
    explorer.example_select.value = largest
    name = examples[largest].name
    H, T_q, T_k = examples[largest].scores.shape
    temperatures = [10 ** (-1 + 2 * i / 9) for i in range(10)]  # 0.1 .. 10, log-spaced
    order = [largest, *(i for i in range(len(examples)) if i != largest)]

    def temperature_step(i):
        explorer.temperature.value = temperatures[i % len(temperatures)]

    def head_or_mask_step(i):
        if i % 2:
            explorer.head_select.value = 1 - explorer.head_select.value
        else:
            explorer.causal.value = not explorer.causal.value

    def example_step(i):
        explorer.example_select.value = order[(i + 1) % len(order)]

    def forget_drawings(i):
        explorer._backdrops.forget()

    print(
        f"AttentionExplorer redraw, {name!r} ({T_q}x{T_k}, {H} heads, annotated), "
        f"{torch.get_num_threads()} torch thread, {args.repeats} redraws after 5 warm-up"
    )
    report("temperature slider", timed(temperature_step, args.repeats), 44)
    report("head or causal mask (first view or not)", timed(head_or_mask_step, args.repeats), 44)
    explorer.causal.value = False
    report("example buttons, examples seen before", timed(example_step, args.repeats), 44)
    report(
        "example buttons, first view (drawn in full)",
        timed(example_step, args.repeats, setup=forget_drawings),
        44,
    )


if __name__ == "__main__":
    main()
