"""Figures as PNG bytes, shown the same way in a live kernel, a headless run and an HTML export.

Figures are built with ``matplotlib.figure.Figure``, never ``pyplot``: no global state, no GUI
backend, nothing left open. Such a figure has no inline formatter (displaying it prints only
``<Figure size ...>``), so we render the PNG ourselves.

What keeps an explorer's redraw quick: a ``Text`` artist costs about a millisecond to draw,
so short texts in many places (the numbers in a heatmap's cells, tick labels) are drawn as
glyph outlines in one collection; the still parts of a figure are drawn once and kept as
pixels (:class:`Backdrops`); and figures are redrawn in place, not rebuilt, which also
leaves no garbage for Python's collector.
"""

import base64
import functools
import gc
import html
import io
from collections import OrderedDict
from pathlib import Path as FilePath

import numpy as np
from matplotlib import rcParams
from matplotlib.backend_bases import FigureCanvasBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.font_manager import FontProperties, findfont
from matplotlib.ft2font import FT2Font
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
    canvas = _agg_canvas(fig)
    if isinstance(canvas, FigureCanvasAgg) and fig.dpi == dpi:
        canvas.draw()
        png = canvas_png(canvas)
        if png is not None:
            return png
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()


def _agg_canvas(fig):
    if type(fig.canvas) is FigureCanvasBase:  # a Figure() made without pyplot
        FigureCanvasAgg(fig)
    return fig.canvas


def canvas_png(canvas) -> bytes | None:
    """What an Agg canvas shows, cropped as :func:`figure_png` crops it, as PNG bytes.

    None when ink comes within the margin of the canvas edge: the caller must then let
    savefig find what sticks out.
    """
    rgba = np.asarray(canvas.buffer_rgba())  # (height, width, 4), top row first
    pixels = rgba.view(np.uint32)[..., 0]  # one number per pixel: a quick comparison
    ink = pixels != pixels[0, 0]  # the top-left pixel is background
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    (height, width), pad = ink.shape, round(canvas.figure.dpi / 10)  # savefig's pad_inches=0.1
    if not rows.size or min(rows[0], cols[0], height - 1 - rows[-1], width - 1 - cols[-1]) < pad:
        return None
    crop = rgba[rows[0] - pad : rows[-1] + 1 + pad, cols[0] - pad : cols[-1] + 1 + pad]
    image = PILImage.fromarray(crop)
    if (crop[..., 3] == 255).all():  # opaque: RGB is smaller and faster to encode
        image = image.convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="png", compress_level=3)
    return buffer.getvalue()


class Backdrops:
    """A figure drawn in two layers: the still parts once per layout, the moving ones each time.

    Drawing dominates a redraw, and most of a figure (axes, tick labels, colour bars) stays
    put while a slider moves. :meth:`png` draws everything but ``moving`` once per ``layout``
    key, keeps those pixels, and afterwards only pastes them and draws ``moving`` on top.
    The picture is the one a full drawing gives when every moving artist would be drawn
    after every still one it overlaps (so give them a zorder at least as high).

    Args:
        fig: the figure; a layout key must stand for one figure size and one set of still
            parts (call :meth:`forget` after changing those for a key already drawn).
        keep: layouts kept, least recently shown dropped first (each holds the canvas pixels).
    """

    def __init__(self, fig, keep: int = 8):
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(f"keep must be an int >= 1 (layouts kept); got {keep!r}")
        self.fig, self.keep, self._saved = fig, keep, OrderedDict()
        _agg_canvas(fig)

    def png(self, moving, layout=None) -> bytes:
        """PNG bytes of the figure as :func:`figure_png` makes them, ``moving`` drawn in order."""
        canvas = self.fig.canvas
        size, saved = self._saved.get(layout, (None, None))
        if size != canvas.get_width_height():  # not drawn yet, or for another figure size
            for artist in moving:
                artist.set_animated(True)  # a full drawing leaves these out
            try:
                canvas.draw()
            finally:
                for artist in moving:
                    artist.set_animated(False)
            self._saved[layout] = canvas.get_width_height(), canvas.copy_from_bbox(self.fig.bbox)
            if len(self._saved) > self.keep:
                self._saved.popitem(last=False)
        else:
            canvas.restore_region(saved)
        self._saved.move_to_end(layout)
        for artist in moving:
            self.fig.draw_artist(artist)
        png = canvas_png(canvas)
        return png if png is not None else figure_png(self.fig)

    def forget(self) -> None:
        """Drop every kept layout: the still parts have changed."""
        self._saved.clear()


def collect_garbage_now() -> None:
    """Run Python's full garbage collection now, while the learner waits for a cell anyway.

    A full collection visits every object in the kernel: about 100 ms with torch and
    matplotlib loaded. Python starts one once enough objects have survived since the last;
    importing and building an explorer makes tens of thousands, so without this the pause
    would tend to come on one of the first slider moves. Collection stays on (nothing is
    disabled or frozen): this only picks the moment. A redraw itself leaves almost nothing
    behind, so it does not bring the next full collection nearer.
    """
    gc.collect()


def show_figure(fig) -> None:
    """Display a figure as a PNG image in the notebook (static figures in the lessons)."""
    from IPython.display import Image, display

    display(Image(data=figure_png(fig)))


def image_bundle(png: bytes, alt: str) -> dict:
    """A picture with its text alternative, as the data of one output.

    JupyterLab draws an ``image/png`` output as an ``<img>`` with no ``alt``, so a screen
    reader says only "image". The ``text/html`` form carries ``alt`` and is what JupyterLab,
    nbconvert and the offline site show; ``image/png`` stays for tools that want the pixels,
    and ``text/plain`` is the same description for a terminal.
    """
    if not isinstance(alt, str):
        raise TypeError(f"alt must be a str describing the picture; got {type(alt).__name__}")
    if not alt.strip():
        raise ValueError(f"alt must be a non-empty description of the picture; got {alt!r}")
    encoded = base64.b64encode(png).decode("ascii")
    tag = (
        f'<img src="data:image/png;base64,{encoded}" alt="{html.escape(alt, quote=True)}" '
        'style="max-width: 100%; height: auto">'
    )
    return {"text/html": tag, "image/png": encoded, "text/plain": alt}


def png_output(png: bytes, text: str) -> dict:
    """A ``display_data`` output holding a PNG and its description ``text``, as
    ``ipywidgets.Output`` stores it.

    Assigning ``output.outputs = (png_output(...),)`` replaces the widget's content in one
    step: no flicker, the same in a live kernel, under nbclient and in tests (where
    ``display()`` inside ``with output:`` would only print a repr to stdout).
    """
    return {"output_type": "display_data", "data": image_bundle(png, text), "metadata": {}}


def text_collection(ax, xy, *, gid: str, offset_transform=None) -> PathCollection:
    """An empty collection for short texts placed at the points ``xy``; see :func:`set_texts`.

    A ``Text`` artist costs about a millisecond to draw (a tenth of one per character), 144
    of them a redraw's whole budget; one collection of glyph outlines looks the same and
    draws them all in a few milliseconds. ``xy`` are data coordinates unless
    ``offset_transform`` says otherwise (e.g. ``ax.get_xaxis_transform()`` for tick labels).
    """
    texts = PathCollection(
        [],
        offsets=xy,
        offset_transform=ax.transData if offset_transform is None else offset_transform,
        transform=Affine2D().scale(1 / 72) + ax.figure.dpi_scale_trans,  # points -> pixels
        edgecolors="none",
        gid=gid,
    )
    texts.labels = []  # what it says, set by set_texts
    ax.add_collection(texts, autolim=False)
    return texts


def outline_tick_labels(ax, which: str) -> PathCollection:
    """Draw the tick labels of ``ax``'s "x" or "y" axis as one collection of glyph outlines.

    The ticks stay where the axis' locator puts them; their ``Text`` labels are switched
    off. Call :func:`place_tick_labels` whenever the axis' limits change.
    """
    ax.tick_params(axis=which, **{"labelbottom" if which == "x" else "labelleft": False})
    transform = ax.get_xaxis_transform() if which == "x" else ax.get_yaxis_transform()
    labels = text_collection(
        ax, np.zeros((0, 2)), gid=f"{which} tick labels", offset_transform=transform
    )
    labels.set_clip_on(False)  # outside the axes, as tick labels are
    labels.axis_name = which
    return labels


def place_tick_labels(labels) -> None:
    """Write the labels of an :func:`outline_tick_labels` collection for its axis' limits."""
    which = labels.axis_name
    axis = getattr(labels.axes, f"{which}axis")
    low, high = sorted(axis.get_view_interval())
    slack = 1e-9 * (high - low)  # the locator's ticks on the limits are drawn too
    ticks = [t for t in axis.get_major_locator()() if low - slack <= t <= high + slack]
    texts = axis.get_major_formatter().format_ticks(ticks)
    size = FontProperties(size=rcParams[f"{which}tick.labelsize"]).get_size_in_points()
    gap = rcParams[f"{which}tick.major.size"] + rcParams[f"{which}tick.major.pad"]  # points
    if which == "x":
        offsets, place = [(t, 0) for t in ticks], dict(va="top", shift=(0.0, -gap))
    else:
        offsets = [(0, t) for t in ticks]
        place = dict(ha="right", va="center_baseline", shift=(-gap, 0.0))
    labels.set_offsets(np.reshape(offsets, (-1, 2)))
    ink = rcParams[f"{which}tick.labelcolor"]
    ink = rcParams[f"{which}tick.color"] if ink == "inherit" else ink
    set_texts(labels, texts, ink, [size] * len(texts), **place)


def place_axis_label(labels) -> None:
    """Put the axis label one label pad beyond the farthest outlined tick label.

    That is where matplotlib puts it beside ``Text`` tick labels; it cannot see outlines.
    ``labels``: an :func:`outline_tick_labels` collection (or one with the same
    ``axis_name``), filled for the current layout.
    """
    ax, which = labels.axes, labels.axis_name
    extents = [ink_extents(path) for path in labels.get_paths() if len(path.vertices)]
    width, height = ax.get_position().size * ax.figure.get_size_inches() * 72  # points
    pad = rcParams["axes.labelpad"]
    if which == "x":
        depth = max([-y0 for _, y0, _, _ in extents], default=0.0)
        ax.xaxis.set_label_coords(0.5, -(depth + pad) / height)
    else:
        depth = max([-x0 for x0, _, _, _ in extents], default=0.0)
        ax.yaxis.set_label_coords(-(depth + pad) / width, 0.5)


def set_texts(collection, texts, colors, sizes, **placement) -> None:
    """Put ``texts`` (one per point, in points ``sizes``) into a :func:`text_collection`.

    Each is centred on its point, or placed as ``placement`` says: the ``ha``, ``va``,
    ``rotation`` and ``shift`` of :func:`_outline`.
    """
    collection.set_paths(
        [_outline(text, size, **placement) for text, size in zip(texts, sizes, strict=True)]
    )
    collection.set_facecolor(colors)
    collection.labels = list(texts)  # what it says, for tests and curious readers


@functools.lru_cache(maxsize=4096)
def _outline(
    text: str, size: float, ha="center", va="center", rotation=0.0, shift=(0.0, 0.0)
) -> Path:
    """The glyph outlines of a short text, in points, placed on (0, 0).

    By default the ink is centred on (0, 0). Otherwise the text is aligned as a ``Text``
    with ``rotation_mode="anchor"``: ``ha`` "right" puts its right end on (0, 0), ``va``
    "top" or "center_baseline" its top or half its ascent above the baseline; then it is
    turned by ``rotation`` degrees around (0, 0) and moved by ``shift`` points. That is
    how matplotlib places tick labels ("right"/"top" turned 45° for slanted x labels,
    "right"/"center_baseline" for y labels, shifted by the tick label pad).
    """
    if not text.strip():  # nothing to draw, and TextPath cannot take an empty string
        return Path(np.zeros((0, 2)))
    path = TextPath((0, 0), text, size=size)
    x0, y0, x1, y1 = ink_extents(path)
    dx = {"center": -(x0 + x1) / 2, "right": -x1}[ha]
    ascent = _ascent() * size
    dy = {"center": -(y0 + y1) / 2, "top": -ascent, "center_baseline": -ascent / 2}[va]
    place = Affine2D().translate(dx, dy).rotate_deg(rotation).translate(*shift)
    return place.transform_path(path)


def ink_extents(path) -> tuple[float, float, float, float]:
    """``(x0, y0, x1, y1)`` around the points of a glyph outline.

    A curve lies within its points, and a glyph's control points sit on or next to its
    outline: within a fraction of a point of ``get_extents()``, which solves for every
    curve's extremes and costs milliseconds per text.
    """
    points = path.vertices
    if path.codes is not None:
        points = points[path.codes != Path.CLOSEPOLY]  # a closing point is a placeholder
    (x0, y0), (x1, y1) = points.min(axis=0), points.max(axis=0)
    return x0, y0, x1, y1


@functools.cache
def _ascent() -> float:
    """The default font's ascent per point of size, as matplotlib's text layout reads it.

    matplotlib 3.11 lays text out from the font's typographic ascender (``sTypoAscender``,
    which FT2Font reports from 3.11 on); earlier versions from the ink of "lp", whose top is
    the top of "l". In DejaVu Sans, the default font, both are 1556 of its 2048 units per em.
    TextPath rounds outlines to 1/64 of a point at 100 points; rounding to whole font units
    undoes that.
    """
    font = FT2Font(findfont(FontProperties()))
    units = font.get_sfnt_table("head")["unitsPerEm"]
    ascender = (font.get_sfnt_table("OS/2") or {}).get("sTypoAscender")
    if ascender is None:  # matplotlib before 3.11
        ascender = round(ink_extents(TextPath((0, 0), "l", size=units))[3])
    return ascender / units


def status_html(lines, note: str = "") -> str:
    """An explorer's status line: ``lines`` (plain text: the lines its picture prints, one
    per line), then ``note``, HTML already (what a button did, or why a setting was refused)."""
    rows = "".join(f"<div>{html.escape(line)}</div>" for line in lines)
    return _wrapping(rows + (f"<div><b>{note}</b></div>" if note else ""))


def save_png(png: bytes, path: FilePath, status, lines=()) -> FilePath | None:
    """Write ``png`` to ``path`` and say so, or why not, in the ``status`` HTML widget, under
    the status ``lines`` (see :func:`status_html`).

    Returns the path, or None when the file could not be written.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
    except OSError as error:
        status.value = status_html(lines, f"could not save: {html.escape(str(error))}")
        return None
    where = html.escape(str(path.parent.resolve()))
    status.value = status_html(lines, f"saved <code>{html.escape(path.name)}</code> in {where}")
    return path


def _wrapping(text: str) -> str:
    """HTML that wraps anywhere, so a long path cannot widen the controls."""
    return f'<div style="overflow-wrap: anywhere; line-height: 1.3">{text}</div>'
