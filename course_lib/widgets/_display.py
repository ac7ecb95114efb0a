"""Figures as PNG bytes, shown the same way in a live kernel, a headless run and an HTML export.

Figures are built with ``matplotlib.figure.Figure``, never ``pyplot``: no global state, no GUI
backend, nothing left open. Such a figure has no inline formatter (displaying it prints only
``<Figure size ...>``), so we render the PNG ourselves. Short texts in many places (the
numbers in a heatmap's cells) are drawn as glyph outlines in one collection: far faster.
"""

import base64
import functools
import html
import io
from pathlib import Path as FilePath

import numpy as np
from matplotlib.backend_bases import FigureCanvasBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.path import Path
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D
from PIL import Image as PILImage

PNG_DPI = 100


def figure_png(fig, dpi: int = PNG_DPI) -> bytes:
    """The figure as PNG bytes, cropped to its content like ``savefig(bbox_inches="tight")``.

    The figure is drawn once and cropped to the pixels that differ from its background, with
    a 0.1-inch margin; savefig's "tight" draws twice, which would double a widget's redraw
    time. When the drawing comes that close to the canvas edge, something may stick out,
    and savefig does the work.
    """
    if type(fig.canvas) is FigureCanvasBase:  # a Figure() made without pyplot
        FigureCanvasAgg(fig)
    if isinstance(fig.canvas, FigureCanvasAgg) and fig.dpi == dpi:
        fig.canvas.draw()
        rgba = np.asarray(fig.canvas.buffer_rgba())  # (height, width, 4), top row first
        pixels = rgba.view(np.uint32)[..., 0]  # one number per pixel: a quick comparison
        ink = pixels != pixels[0, 0]  # the top-left pixel is background
        rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
        (height, width), pad = ink.shape, round(dpi / 10)  # savefig's pad_inches=0.1
        if rows.size and min(rows[0], cols[0], height - 1 - rows[-1], width - 1 - cols[-1]) >= pad:
            crop = rgba[rows[0] - pad : rows[-1] + 1 + pad, cols[0] - pad : cols[-1] + 1 + pad]
            image = PILImage.fromarray(crop)
            if (crop[..., 3] == 255).all():  # opaque: RGB is smaller and faster to encode
                image = image.convert("RGB")
            buffer = io.BytesIO()
            image.save(buffer, format="png", compress_level=3)
            return buffer.getvalue()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()


def show_figure(fig) -> None:
    """Display a figure as a PNG image in the notebook (static figures in the lessons)."""
    from IPython.display import Image, display

    display(Image(data=figure_png(fig)))


def png_output(png: bytes, text: str) -> dict:
    """A ``display_data`` output holding a PNG, as an ``ipywidgets.Output`` stores it.

    Assigning ``output.outputs = (png_output(...),)`` replaces the widget's content in one
    step: no flicker, the same in a live kernel, under nbclient and in tests (where
    ``display()`` inside ``with output:`` would only print a repr to stdout).
    """
    data = {"image/png": base64.b64encode(png).decode("ascii"), "text/plain": text}
    return {"output_type": "display_data", "data": data, "metadata": {}}


def text_collection(ax, xy, *, gid: str) -> PathCollection:
    """An empty collection for short texts centred on the data points ``xy``; see :func:`set_texts`.

    A ``Text`` artist costs about a millisecond to draw, 144 of them a redraw's whole budget;
    one collection of glyph outlines looks the same and draws them all in a few milliseconds.
    """
    texts = PathCollection(
        [],
        offsets=xy,
        offset_transform=ax.transData,
        transform=Affine2D().scale(1 / 72) + ax.figure.dpi_scale_trans,  # points -> pixels
        edgecolors="none",
        gid=gid,
    )
    ax.add_collection(texts, autolim=False)
    return texts


def set_texts(collection, texts, colors, sizes) -> None:
    """Put ``texts`` (one per point, in points ``sizes``) into a :func:`text_collection`."""
    collection.set_paths([_outline(text, size) for text, size in zip(texts, sizes, strict=True)])
    collection.set_facecolor(colors)
    collection.labels = list(texts)  # what it says, for tests and curious readers


@functools.cache
def _outline(text: str, size: float) -> Path:
    """The glyph outlines of a short text, in points, centred on (0, 0)."""
    path = TextPath((0, 0), text, size=size)
    (x0, y0), (x1, y1) = path.get_extents().get_points()
    return Path(path.vertices - ((x0 + x1) / 2, (y0 + y1) / 2), path.codes)


def save_png(png: bytes, path: FilePath, status) -> FilePath | None:
    """Write ``png`` to ``path`` and say so, or why not, in the ``status`` HTML widget.

    Returns the path, or None when the file could not be written.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
    except OSError as error:
        status.value = _wrapping(f"could not save: {html.escape(str(error))}")
        return None
    where = html.escape(str(path.parent.resolve()))
    status.value = _wrapping(f"saved <code>{html.escape(path.name)}</code> in {where}")
    return path


def _wrapping(text: str) -> str:
    """HTML that wraps anywhere, so a long path cannot widen the controls."""
    return f'<div style="overflow-wrap: anywhere; line-height: 1.3">{text}</div>'
