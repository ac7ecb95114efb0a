"""Run one command and print how long it took: ``make test`` reports each phase this way.

python tests/timed.py "unit tests" python -m pytest -n 2
"""

import subprocess
import sys
import time


def main() -> int:
    label, command = sys.argv[1], sys.argv[2:]
    start = time.perf_counter()
    code = subprocess.call(command)
    outcome = "" if code == 0 else f", exit code {code}"
    print(f"=== {label}: {time.perf_counter() - start:.0f} s{outcome}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
