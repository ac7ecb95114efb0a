"""Redraw time of lesson 1's timing explorer: what a learner waits for after moving a slider.

Setting: the explorer as lesson 1 opens it (n = 256, d = 128). Each redraw is the explorer's
``update()``, fired by setting a slider's value as a slider step does: it times both layers
at every grid length up to n not timed before, redraws the figure in place, encodes the PNG
and puts it into the ``Output`` widget (outside a notebook nothing is shown, the work is the
same). Three cases, each after 5 warm-up steps:

- sizes timed before: n and d step through every grid setting, all measured beforehand, so a
  redraw is drawing only. Goal: a redraw well under 150 ms, read as median <= 100 ms and
  slowest <= 150 ms.
- n one step up, first visit: the new length is timed (both layers, a warm-up call and 3
  timed calls each), then drawn.
- d one step, first visit at n = 256: every length up to 256 is timed at the new width.

The last two are measurements the learner asked for, whose length depends on the machine;
their goal is the lesson's: well under a second.

    python benchmarks/sequence_cost_redraw.py [--repeats 30]
"""

import argparse

import torch
from _redraw import report, timed

from course_lib.widgets.sequence_cost import LENGTHS, WIDTHS, SequenceCostExplorer

TIMING_GOAL = (500.0, 1000.0)  # ms, median and slowest: well under a second


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)  # as notebook.start() sets it in the lessons
    explorer = SequenceCostExplorer(n=256, d=128)
    settings = [(n, d) for n in LENGTHS for d in WIDTHS]
    for d in WIDTHS:  # every setting timed once, before the drawing-only steps
        explorer.d_select.value = d
        explorer.n_select.value = LENGTHS[-1]

    def seen_before(i):
        n, d = settings[(7 * i) % len(settings)]  # scattered, and one slider at a time
        if explorer.n_select.value != n:
            explorer.n_select.value = n
        else:
            explorer.d_select.value = d

    def n_below(i):  # untimed: forget the timings, then stand one length below the next
        explorer.timings.clear()
        explorer.d_select.value = 128
        explorer.n_select.value = LENGTHS[i % (len(LENGTHS) - 1)]

    def n_up(i):
        explorer.n_select.value = LENGTHS[i % (len(LENGTHS) - 1) + 1]

    def d_unseen(i):  # untimed: forget the width the next step goes to
        explorer.n_select.value = 256
        new = WIDTHS[(WIDTHS.index(explorer.d_select.value) + 1) % len(WIDTHS)]
        explorer.timings = {key: t for key, t in explorer.timings.items() if key[2] != new}

    def d_step(i):
        explorer.d_select.value = WIDTHS[(WIDTHS.index(explorer.d_select.value) + 1) % len(WIDTHS)]

    print(
        f"SequenceCostExplorer redraw, {torch.get_num_threads()} torch thread, "
        f"{args.repeats} redraws after 5 warm-up"
    )
    report("n or d, sizes timed before (drawing only)", timed(seen_before, args.repeats), 44)
    report(
        "n one step up, first visit (timed, drawn)",
        timed(n_up, args.repeats, n_below),
        44,
        TIMING_GOAL,
    )
    report(
        "d one step at n = 256, first visit (timed)",
        timed(d_step, args.repeats, d_unseen),
        44,
        TIMING_GOAL,
    )


if __name__ == "__main__":
    main()
