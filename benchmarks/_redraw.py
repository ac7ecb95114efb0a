"""Timing shared by the widget-redraw benchmarks: warm up, time each step, judge the figures."""

import statistics
import time

WARMUP = 5  # the first steps load fonts and fill caches: not what a learner waits for


def timed(step, repeats: int) -> list[float]:
    """Milliseconds of ``step(i)`` for i = WARMUP .. WARMUP + repeats - 1, after the warm-up."""
    for i in range(WARMUP):
        step(i)
    times = []
    for i in range(WARMUP, WARMUP + repeats):
        start = time.perf_counter()
        step(i)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def report(label: str, times: list[float], width: int = 42) -> None:
    """One line: median and slowest against the goal, a redraw well under 150 ms."""
    median, slowest = statistics.median(times), max(times)
    verdict = "meets goal" if median <= 100 and slowest < 150 else "MISSES goal"
    print(
        f"  {label:{width}s} median {median:6.1f} ms  max {slowest:6.1f} ms  "
        f"(goal: median <= 100, max < 150: {verdict})"
    )
