"""The first cell of every lesson (seeds, one torch thread, colour-blind-safe plots, versions),
and :func:`show`, which displays a pyplot figure with a text alternative."""

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


def show(alt: str, fig=None) -> None:
    """Display a figure as a picture with a text alternative, then close it.

    ``plt.show()`` in a notebook leaves an ``image/png`` output, which JupyterLab and the
    offline site draw as an ``<img>`` without ``alt``: a screen reader says only "image".
    This shows the same picture (the figure's dpi, cropped to its content as the inline
    backend does) in an output that carries ``alt``.

    Args:
        alt: what the figure shows, in words: the kind of plot, its axes, and what the
            lesson wants seen, with the key numbers.
        fig: the figure; by default pyplot's current one.
    """
    if not isinstance(alt, str):
        raise TypeError(f"alt must be a str describing the figure; got {type(alt).__name__}")
    if not alt.strip():
        raise ValueError(f"alt must describe the figure in words; got {alt!r}")
    import matplotlib.pyplot as plt  # here: start() and the model code need no pyplot
    from IPython.display import display
    from matplotlib.figure import Figure

    from .replay import graded
    from .widgets._display import figure_png, image_bundle

    if fig is None:
        if not plt.get_fignums():
            raise ValueError("no figure to show: draw one with pyplot first, or pass fig")
        fig = plt.gcf()
    elif not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure; got {type(fig).__name__}")
    if graded():  # a grader reads the answers, not the pictures: no drawing, the words stay
        plt.close(fig)
        print(alt)
        return
    try:
        png = figure_png(fig, dpi=fig.dpi)
    finally:
        plt.close(fig)  # shown once, here: the inline backend would show an open one again
    display(image_bundle(png, alt), raw=True)
