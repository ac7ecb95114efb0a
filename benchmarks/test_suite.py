"""Seconds of ``make test`` after set-up, phase by phase (goal: 4 minutes or less in all).

Runs ``make test`` (lint, the unit tests, solutions/ compared strictly and lessons/ run through,
each on two pytest workers), shows its output, then each phase's time as ``tests/timed.py``
reported it. The longer legs (``make test-portable``, ``make test-sweep``, ``make e2e``) are
not part of it.

    python benchmarks/test_suite.py
"""

import subprocess
import sys
import time

GOAL = 240  # seconds


def main() -> int:
    start = time.perf_counter()
    run = subprocess.Popen(["make", "test"], stdout=subprocess.PIPE, text=True)
    phases = []
    for line in run.stdout:
        sys.stdout.write(line)
        if line.startswith("=== "):
            phases.append(line[4:].strip())
    code = run.wait()
    total = time.perf_counter() - start
    print("make test, phase by phase:")
    for phase in phases:
        print(f"  {phase}")
    verdict = "meets goal" if code == 0 and total <= GOAL else "MISSES goal"
    print(f"  total {total:.0f} s (goal <= {GOAL} s, all passing: {verdict})")
    return code


if __name__ == "__main__":
    sys.exit(main())
