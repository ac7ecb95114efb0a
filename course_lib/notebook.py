"""The first cell of every lesson: seeds, one torch thread, colour-blind-safe plots, versions."""

import platform
import random

import numpy as np
import torch


def start(seed: int = 0, threads: int = 1) -> None:
    """Make the notebook reproducible and print what it runs on.

    One torch thread by default: results are bit-identical only at a fixed thread count,
    and on a busy two-core machine two threads can be many times slower than one.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    try:
        import matplotlib as mpl
        import matplotlib.style  # not loaded by `import matplotlib` alone (no pyplot yet)

        mpl.style.use("tableau-colorblind10")
        mpl.rcParams["image.cmap"] = "cividis"
        mpl.rcParams["figure.dpi"] = 100
        plotting = f" · matplotlib {mpl.__version__}"
    except ImportError:
        plotting = ""
    print(
        f"Python {platform.python_version()} · torch {torch.__version__} · "
        f"numpy {np.__version__}{plotting} · seed {seed} · {threads} torch thread(s)"
    )
