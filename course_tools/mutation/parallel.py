"""Lessons in parallel: each in a fresh process of its own, a few at a time.

A lesson's process imports the checks and runs the lesson's cells, so it starts from a clean
interpreter ("spawn", one task per process): no kernel state or imported module carries over
from one lesson to the next. Whatever goes wrong in one lesson, even an import of the checks
that fails while someone edits them, becomes a problem of that lesson in the report.
"""

import multiprocessing
import traceback
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path


def run_lessons(chosen: list[tuple[Path, list[str]]], size: int | None, jobs: int) -> list[dict]:
    """``run_lesson`` for each (source, exercise ids), ``jobs`` at a time, the largest first."""
    spawn = multiprocessing.get_context("spawn")
    order = sorted(chosen, key=lambda c: -len(c[1]))
    with ProcessPoolExecutor(jobs, mp_context=spawn, max_tasks_per_child=1) as pool:
        futures = [(path, pool.submit(_lesson, path, ids, size)) for path, ids in order]
        runs = [_result(path, future) for path, future in futures]
    return sorted(runs, key=lambda r: r["lesson"])


def _lesson(path: Path, ids: list[str], size: int | None) -> dict:
    """In the lesson's process; the import is here so that a failing one is reported."""
    try:
        from .runner import run_lesson

        return run_lesson(path, ids, size)
    except Exception:
        return _failed(path, traceback.format_exc())


def _result(path: Path, future) -> dict:
    try:
        return future.result()
    except BrokenProcessPool as e:  # the process died (a crash, out of memory)
        return _failed(path, f"its process stopped: {e}")


def _failed(path: Path, why: str) -> dict:
    number = int(path.name.split("_")[0])
    return {"lesson": number, "variants": [], "problems": [f"lesson {number}: {why}"], "seconds": 0}
