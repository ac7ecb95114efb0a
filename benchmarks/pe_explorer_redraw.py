"""Redraw time of the positional-encoding explorer: what a learner waits for after a control moves.

Setting: the explorer as lesson 5 opens it (d_model 64, 100 positions, three waves). Each
redraw is the explorer's ``update()``, fired by setting a slider's value as a slider step
does, or by pressing the "add wave" / "remove wave" buttons: it computes what changed, draws the figure, encodes the PNG and puts it into the
``Output`` widget (outside a notebook nothing is shown, the work is the same). For each
control, after 5 warm-up steps, the control cycles through its range. The figure is drawn
in three layers kept as pixels: what never changes (colour bars, fixed axes) is drawn once;
what d_model, the number of positions and the waves change is drawn over it the first time
a setting is shown (the explorer keeps the last 8 such drawings, so going back to settings
seen before is about as quick as a slider step); the position and the offset redraw only
what they move. "first view" steps through (d_model, positions) pairs never shown before.
Goal: a redraw well under 150 ms, read as median <= 100 ms and slowest <= 150 ms.

For scale on a busy machine, the same run times lesson 3's attention-map explorer
(temperature slider), whose figures on an idle machine are in benchmarks/README.md.

    python benchmarks/pe_explorer_redraw.py [--repeats 30]
"""

import argparse

import torch
from _redraw import report, timed

from course_lib.widgets import AttentionExplorer, lesson3_examples
from course_lib.widgets.pe_explorer import D_MODELS, PEExplorer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)  # as notebook.start() sets it in the lessons
    explorer = PEExplorer(save_dir="/tmp")
    explorer.dimension.value = 5
    unseen = iter([(d, n) for d in D_MODELS for n in range(20, 201, 10) if (d, n) != (64, 100)])

    def first_view(i):  # one control moves to a (d_model, positions) pair never shown before
        d_model, max_len = next(unseen)
        if d_model != explorer.d_model.value:
            explorer.d_model.value = d_model
        else:
            explorer.max_len.value = max_len

    def seen_before(control, values):
        def step(i):
            if i == 0:  # show each once first, so that every timed step is a revisit
                for value in values:
                    control.value = value
            control.value = values[i % len(values)]

        return step

    def wave_buttons(i):  # dimension 5 added, then removed: two sets of waves, seen before
        explorer.dimension.value = 5
        (explorer.remove_wave if 5 in explorer.waves else explorer.add_wave).click()

    steps = {
        "position slider": lambda i: setattr(explorer.position, "value", (7 * i + 11) % 100),
        "offset k slider": lambda i: setattr(explorer.offset, "value", 1 + (3 * i) % 50),
        "add/remove wave, waves seen before": wave_buttons,
        "d_model slider, widths seen before": seen_before(explorer.d_model, D_MODELS),
        "d_model or positions, first view": first_view,
    }
    print(
        f"PEExplorer redraw, d_model 64, 100 positions, {torch.get_num_threads()} torch thread, "
        f"{args.repeats} redraws after 5 warm-up"
    )
    for label, step in steps.items():
        report(label, timed(step, args.repeats), width=40)
    attention = AttentionExplorer(lesson3_examples(), save_dir="/tmp")
    attention.example_select.value = 2  # the 11-token sentence, as benchmarks/widget_redraw.py
    temperatures = [10 ** (-1 + 2 * i / 9) for i in range(10)]
    print("For scale, on the same machine now:")
    report(
        "AttentionExplorer temperature",
        timed(
            lambda i: setattr(attention.temperature, "value", temperatures[i % 10]), args.repeats
        ),
        width=40,
    )


if __name__ == "__main__":
    main()
