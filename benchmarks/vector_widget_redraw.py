"""Redraw time of lesson 2's two-vector explorer: what a learner waits for after moving a slider.

Each redraw is the explorer's ``update()``, fired by setting a slider's value as a drag step
does: it computes the dot product, cosine and angle, moves the arrows, arc and texts of the
figure in place, draws them over the axes and grid (drawn once and kept as pixels), encodes
the PNG and puts it into the ``Output`` widget (outside a notebook nothing is shown; the work
is the same). After 5 warm-up steps, the angle of b sweeps round the circle; then the length
of a and b alternate. The first picture, built when the explorer is created, is timed as
``render_vectors`` + ``figure_png``. Goal: a redraw well under 150 ms, read as median
<= 100 ms and slowest <= 150 ms.

    python benchmarks/vector_widget_redraw.py [--repeats 30]
"""

import argparse

import torch
from _redraw import report, timed

from course_lib.widgets import figure_png
from course_lib.widgets.vectors import VectorExplorer, render_vectors, vector_pair


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)  # as notebook.start() sets it in the lessons
    explorer = VectorExplorer((1.0, 0.5), (0.9, 0.6), names=("cat", "dog"))

    def angle_step(i):
        explorer.angle_b.value = -180 + (37 * i) % 360  # a new angle every time

    def length_step(i):
        slider = explorer.length_a if i % 2 else explorer.length_b
        slider.value = 0.3 + (0.17 * i) % 1.6

    def new_figure_step(i):
        figure_png(render_vectors(vector_pair(10 * i % 360, 1.0, -(20 * i % 360), 1.5)))

    print(
        f"VectorExplorer redraw, {torch.get_num_threads()} torch thread, "
        f"{args.repeats} redraws after 5 warm-up"
    )
    for label, step in (
        ("angle slider (in place)", angle_step),
        ("length sliders (in place)", length_step),
        ("first picture (new figure)", new_figure_step),
    ):
        report(label, timed(step, args.repeats), width=28)


if __name__ == "__main__":
    main()
