"""Redraw time of the attention-map explorer: what a learner waits for after moving a control.

Setting: lesson 3's largest example (11 tokens, 2 heads, every cell annotated). Each redraw
is the explorer's ``update()``, fired by setting a control's value as a slider step does: it
computes the weights, draws the figure, encodes the PNG and puts it into the ``Output``
widget (outside a notebook nothing is shown, the work is the same). After 5 warm-up steps,
the temperature cycles through 0.1 .. 10; then the head and the causal mask alternate. Both
redraw a figure in place, since the explorer keeps the figure of each (example, head, mask)
it has shown. The first view of a head or mask builds a new figure instead, timed as
``render_attention`` + ``figure_png``. Goal: a redraw well under 150 ms, read as median
<= 100 ms and slowest < 150 ms.

    python benchmarks/widget_redraw.py [--repeats 30]
"""

import argparse

import torch
from _redraw import report, timed

from course_lib.widgets import AttentionExplorer, figure_png, lesson3_examples, render_attention


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    examples = lesson3_examples()
    largest = max(range(len(examples)), key=lambda i: examples[i].scores.numel())
    explorer = AttentionExplorer(examples, save_dir="/tmp")
    explorer.example_select.value = largest
    name = examples[largest].name
    H, T_q, T_k = examples[largest].scores.shape
    temperatures = [10 ** (-1 + 2 * i / 9) for i in range(10)]  # 0.1 .. 10, log-spaced

    def temperature_step(i):
        explorer.temperature.value = temperatures[i % len(temperatures)]

    def head_or_mask_step(i):
        if i % 2:
            explorer.head_select.value = 1 - explorer.head_select.value
        else:
            explorer.causal.value = not explorer.causal.value

    def new_figure_step(i):
        figure_png(render_attention(examples[largest], head=i % H, causal=bool(i // H % 2)))

    print(
        f"AttentionExplorer redraw, {name!r} ({T_q}x{T_k}, {H} heads, annotated), "
        f"{torch.get_num_threads()} torch threads, {args.repeats} redraws after 5 warm-up"
    )
    for label, step in (
        ("temperature slider (in place)", temperature_step),
        ("head or causal mask", head_or_mask_step),
        ("first view of a head or mask (new figure)", new_figure_step),
    ):
        report(label, timed(step, args.repeats), width=42)


if __name__ == "__main__":
    main()
