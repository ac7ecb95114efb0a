"""Run experiments from the command line; one JSON line per run.

    python -m course_lib.experiments leaky_decoder translator --seeds 0 1

Kernel settings (see :mod:`.kernels`) must be chosen in the environment before torch starts,
so the sweep in ``tests/sweep/`` starts one process per setting.
"""

import argparse
import json
import sys
import time

from . import NAMES, get
from .kernels import describe


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_lib.experiments", description=__doc__)
    parser.add_argument("names", nargs="+", choices=NAMES)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    args = parser.parse_args(argv)

    import torch  # after argparse, so that --help stays quick

    torch.set_num_threads(1)  # as in the notebooks
    for name in args.names:
        for seed in args.seeds:
            start = time.perf_counter()
            result = get(name).run(seed)
            seconds = time.perf_counter() - start
            line = {"name": name, "seed": seed, "kernels": describe(), "seconds": seconds}
            print(json.dumps({**line, "result": result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
