"""Seconds of Run All for each lesson, as a learner waits for it.

Each notebook runs top to bottom in a fresh kernel (started before the clock, as a learner's
kernel is already running when they press Run All), in a temporary copy so nothing is written
back. Two columns: the solved notebook (solutions/, every answer complete, the longest run)
and the untouched lesson (lessons/, the exercises saying "not done yet"). Goal: 20 s or less
for each lesson, 30 s for lesson 7, whose training runs live.

    python benchmarks/run_all.py [--lessons 03 07]
"""

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
GOAL, GOAL_TRAINING = 20.0, 30.0  # seconds; lesson 7 trains a model live


def run_all_seconds(path: Path) -> float:
    """Seconds from the first cell's start to the last cell's end, kernel start-up excluded."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / path.name
        shutil.copy(path, copy)
        nb = nbformat.read(copy, as_version=4)
        client = NotebookClient(nb, timeout=600, kernel_name="python3")
        client.resources = {"metadata": {"path": folder}}
        with client.setup_kernel():
            start = time.perf_counter()
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", nargs="+", help="lesson numbers, e.g. 03 07 (default: all)")
    args = parser.parse_args()
    solved = sorted((ROOT / "solutions").glob("[0-9]*.ipynb"))
    if args.lessons:
        solved = [p for p in solved if p.name[:2] in args.lessons]
    print("Run All, fresh kernel, one torch thread (as the notebooks set)")
    print(f"  {'lesson':34s} {'solved':>8s} {'untouched':>10s}  goal")
    for path in solved:
        goal = GOAL_TRAINING if path.name.startswith("07") else GOAL
        seconds = [run_all_seconds(path), run_all_seconds(ROOT / "lessons" / path.name)]
        verdict = "meets goal" if max(seconds) <= goal else "MISSES goal"
        print(
            f"  {path.stem:34s} {seconds[0]:7.1f}s {seconds[1]:9.1f}s  <= {goal:.0f} s: {verdict}"
        )


if __name__ == "__main__":
    main()
