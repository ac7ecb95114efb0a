"""Timing shared by the widget-redraw benchmarks: warm up, time each step, judge the figures."""

import gc
import statistics
import time

WARMUP = 5  # the first steps load fonts and fill caches: not what a learner waits for
GOAL_MEDIAN, GOAL_SLOWEST = 100.0, 150.0  # ms: a redraw well under 150 ms


class Timings(list):
    """Wall-clock milliseconds of each step, with what else happened meanwhile.

    ``cpu``: the milliseconds this thread computed in each step; far below the wall-clock
    time, they say that other processes had the processor. ``full_collections``: how many
    times Python's garbage collector went through every object during the timed steps,
    and ``collection_ms`` how long that took in all (part of the wall-clock times).
    """

    cpu: list[float]
    full_collections: int = 0
    collection_ms: float = 0.0


def timed(step, repeats: int, setup=None) -> Timings:
    """Milliseconds of ``step(i)`` for i = WARMUP .. WARMUP + repeats - 1, after the warm-up.

    ``setup(i)``, if given, runs before each step, untimed.
    """
    for i in range(WARMUP):
        if setup:
            setup(i)
        step(i)
    times, times.cpu, started = Timings(), [], []

    def watch(phase, info):  # full collections only: the young ones take well under 1 ms
        if info["generation"] == 2 and phase == "start":
            started.append(time.perf_counter())
        elif info["generation"] == 2:
            times.full_collections += 1
            times.collection_ms += (time.perf_counter() - started.pop()) * 1e3

    gc.callbacks.append(watch)
    try:
        for i in range(WARMUP, WARMUP + repeats):
            if setup:
                setup(i)
            start, cpu = time.perf_counter(), time.thread_time()
            step(i)
            times.append((time.perf_counter() - start) * 1e3)
            times.cpu.append((time.thread_time() - cpu) * 1e3)
    finally:
        gc.callbacks.remove(watch)
    return times


def report(label: str, times: Timings, width: int = 42, goal=(GOAL_MEDIAN, GOAL_SLOWEST)) -> None:
    """One line: median and slowest against the goal (median <= 100 ms, slowest <= 150 ms)."""
    median, slowest = statistics.median(times), max(times)
    verdict = "meets goal" if median <= goal[0] and slowest <= goal[1] else "MISSES goal"
    extra = f", {times.full_collections} full gc {times.collection_ms:.0f} ms"
    print(
        f"  {label:{width}s} median {median:6.1f} ms  slowest {slowest:6.1f} ms  "
        f"(cpu median {statistics.median(times.cpu):5.1f}{extra if times.full_collections else ''}; "
        f"goal: median <= {goal[0]:g}, slowest <= {goal[1]:g}: {verdict})"
    )
