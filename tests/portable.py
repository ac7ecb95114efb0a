"""Every solution notebook, compared strictly, as other processors compute it; and the unit tests
with two torch threads.

``make test`` runs the notebooks with this machine's own CPU kernels. Here they run again under
each kernel setting of :mod:`course_lib.experiments.kernels` that this machine can imitate
(``ATEN_CPU_CAPABILITY=default``, ``avx2``, ``avx512`` where the processor has it, and
``MKL_CBWR=COMPATIBLE``), two settings at a time, each notebook on one thread as in a lesson.
A compared output that changes with the kernels fails here.

    make test-portable                 # or: .venv/bin/python tests/portable.py
    .venv/bin/python tests/portable.py --only default avx2 --no-unit
"""

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from course_lib.experiments import kernels

NBVAL = [
    "--nbval",
    "--nbval-current-env",
    "--nbval-cell-timeout=300",
    "--nbval-sanitize-with=tests/nbval_sanitize.cfg",
    "-p",
    "no:cacheprovider",
    "-q",
]
LOGS = Path("build/portable")


def run(label: str, command: list[str], env: dict[str, str]) -> tuple[str, int, float]:
    """Run ``command``, its output to ``build/portable/LABEL.log``; (label, exit code, seconds)."""
    LOGS.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with open(LOGS / f"{label}.log", "w") as log:
        code = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    return label, code, time.perf_counter() - start


def tail(label: str, lines: int = 25) -> str:
    return "\n".join((LOGS / f"{label}.log").read_text().splitlines()[-lines:])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(kernels.SETTINGS))
    parser.add_argument("--no-unit", action="store_true", help="skip the two-thread unit tests")
    args = parser.parse_args(argv)

    jobs = []
    for setting in args.only or kernels.SETTINGS:
        why = kernels.unavailable(setting)
        if why:
            print(f"solutions/ under {setting}: skipped, {why}")
            continue
        command = [sys.executable, "-m", "pytest", "solutions/", *NBVAL]
        jobs.append((f"solutions-{setting}", command, kernels.environment(setting)))
    if not args.no_unit:  # the notebooks use one thread; the library must hold with two
        env = {**os.environ, "COURSE_TEST_THREADS": "2"}
        jobs.append(
            (
                "unit-2-threads",
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                env,
            )
        )

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda job: run(*job), jobs))
    failed = 0
    for label, code, seconds in results:
        last = tail(label, 1)
        print(f"{label}: {'passed' if code == 0 else 'FAILED'} in {seconds:.0f} s ({last.strip()})")
        if code:
            failed += 1
            print(tail(label))
    print(f"logs in {LOGS}/")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
