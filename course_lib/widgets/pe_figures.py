"""The positional-encoding explorer's picture: four panels drawn with matplotlib, no pyplot.

1. the encoding table (positions x dimensions), the current position marked;
2. chosen dimensions as waves over the positions: low dimensions turn fast, high ones slowly;
3. PE_i · PE_j for every pair of positions: constant along each diagonal, so it depends
   only on |i - j|;
4. PE(pos + k) beside R_k · PE(pos), with the largest difference printed.

A :class:`PEFigure` is redrawn in place. Its layout is fixed in inches (a layout engine would
measure every label again), and it is drawn in three layers, each pasted as pixels when
nothing in it has changed: what never changes (colour bars, fixed axes and labels), what
d_model, the number of positions and the waves change, and what the position and the offset
move. A slider step draws only the last layer; a new d_model draws the last two.
"""

import io
from collections import OrderedDict

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from PIL import Image

from ..positional import sinusoidal_encoding
from ._display import PNG_DPI, outline_tick_labels, place_tick_labels
from .pe_data import (
    PEView,
    diagonal_spread,
    format_wavelength,
    frequencies,
    pe_readings,
    rotation_error,
    similarity,
    wavelength,
)

_CMAP = matplotlib.colormaps["cividis"]  # colour-blind safe, readable in greyscale
KEEP_FRAMES = 8  # full drawings kept for reuse, ~3 MB of pixels each
MAX_WAVES = 6  # more lines than this are hard to tell apart
# One (line style, marker, colour) per wave, so that no wave is told apart by colour alone;
# the colours are from the colour-blind-safe "tableau-colorblind10" set.
_STYLES = [
    ("-", "o", "#006BA4"),
    ("--", "s", "#FF800E"),
    (":", "^", "#595959"),
    ("-.", "D", "#5F9ED1"),
    ("-", "v", "#C85200"),
    ("--", "P", "#898989"),
]
# The tick labels that d_model and the number of positions change (panel, axis).
_CHANGING_TICKS = (("table", "x"), ("table", "y"), ("waves", "x"), ("similarity", "x"))
_CHANGING_TICKS += (("similarity", "y"), ("rotation", "x"))
_W, _H = 9.4, 7.7  # inches
_PANELS = {  # (left, bottom, width, height) in inches
    "table": (0.75, 4.2, 3.2, 2.45),
    "waves": (5.5, 4.2, 3.7, 2.45),
    "similarity": (0.75, 0.6, 3.2, 2.45),
    "rotation": (5.5, 0.6, 3.7, 2.45),
}


class PEFigure:
    """The four panels on one ``Figure`` (attribute ``figure``), redrawn by :meth:`update`."""

    def __init__(self):
        self.figure = fig = Figure(figsize=(_W, _H), dpi=PNG_DPI)
        FigureCanvasAgg(fig)
        self.axes = {name: self._add_axes(name) for name in _PANELS}
        self._frame, self._background, self._table, self._still = None, None, None, None
        self._drawn = OrderedDict()  # (d_model, max_len, dims) -> pixels without the moving parts
        for name, label in (("table", "PE value"), ("similarity", "PE_i · PE_j / (d_model/2)")):
            ax = self.axes[name]
            image = ax.imshow(np.zeros((2, 2)), cmap=_CMAP, vmin=-1.0, vmax=1.0, aspect="auto")
            image.set_interpolation("nearest")
            left, bottom, width, height = _PANELS[name]
            bar = fig.add_axes(((left + width + 0.1) / _W, bottom / _H, 0.12 / _W, height / _H))
            fig.colorbar(image, cax=bar, ticks=[-1, 0, 1]).set_label(label)
            bar.yaxis.set_label_coords(3.0, 0.5)  # fixed, not measured on every drawing
        table, waves, sim, rot = self.axes.values()
        table.set(xlabel="dimension", ylabel="position")
        waves.set(xlabel="position", ylabel="PE value", ylim=(-1.15, 1.15))
        sim.set(xlabel="position j", ylabel="position i")
        rot.set(xlabel="dimension", ylabel="value", ylim=(-1.65, 1.15), yticks=[-1, 0, 1])
        # Tick labels as glyph outlines: a Text artist costs about a millisecond to draw, and
        # the ticks of four panels change with d_model and the number of positions.
        self.ticks = {
            (name, which): outline_tick_labels(ax, which)
            for name, ax in self.axes.items()
            for which in "xy"
        }
        for fixed in (("waves", "y"), ("rotation", "y")):  # the same for every setting
            place_tick_labels(self.ticks[fixed])
        table.set_title("Encoding table (markers: the waves' dimensions)", pad=9)
        waves.set_title("Waves: low dimensions turn fast", y=1.0)  # the legend goes between
        # What the position and the offset move, redrawn on every step ("moving" artists).
        self.marks = [
            ax.axhline(0, color=color, lw=lw)  # black under white: seen on any colour
            for ax in (table, sim)
            for color, lw in (("black", 2.6), ("white", 1.0))
        ]
        self.marks.append(waves.axvline(0, color="#444444", lw=1, ls=":"))
        self.rotation = [
            rot.plot([], [], "-", color="#9a9a9a", lw=1, label="PE(pos)")[0],
            rot.plot([], [], "o", mfc="none", color="#1f3a93", label="PE(pos+k)")[0],
            rot.plot([], [], "x", color="#c85200", label="R_k·PE(pos)")[0],
        ]
        rot.legend(loc="lower center", fontsize=7, ncol=3, framealpha=0.9)  # below the data
        self.here = []  # one marker per wave at the current position
        self.title = fig.text(0.5, 1 - 0.12 / _H, "", ha="center", va="top", fontsize=12)

    def _add_axes(self, name):
        left, bottom, width, height = _PANELS[name]
        ax = self.figure.add_axes((left / _W, bottom / _H, width / _W, height / _H), gid=name)
        ax.title.set_fontsize(9)
        # Fixed places for the axis labels and the title: matplotlib would otherwise measure
        # every tick label on every drawing to place them.
        ax.xaxis.set_label_coords(0.5, -0.14)
        ax.yaxis.set_label_coords(-0.42 / _PANELS[name][2], 0.5)  # 0.42 in left of the axes
        ax.set_title("", y=1.0)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(MaxNLocator(3, integer=True))  # each label costs ~1 ms
        return ax

    def moving(self) -> list:
        """The artists the position and the offset change."""
        return [*self.marks, *self.here, *self.rotation, self.axes["rotation"].title]

    def framed(self) -> list:
        """The artists d_model, max_len and the waves change, in drawing order: each is drawn
        over the still parts, so the frames (spines) of the panels whose content changes are
        drawn again over that content, as a full drawing would."""
        table, waves, sim, rot = self.axes.values()
        dims = [line for line in table.lines if line.get_gid() == "dim"]
        curves = [line for line in waves.lines if line.get_gid() == "dim" and line not in self.here]
        ticks = {key: self.ticks[key] for key in _CHANGING_TICKS}
        return [
            *(table.images[0], table.xaxis, table.yaxis, *dims, *table.spines.values()),
            *(ticks["table", "x"], ticks["table", "y"]),
            *(waves.xaxis, ticks["waves", "x"], *curves, *waves.spines.values()),
            *(waves.get_legend(), waves.title),
            *(sim.images[0], sim.xaxis, sim.yaxis, *sim.spines.values(), sim.title),
            *(ticks["similarity", "x"], ticks["similarity", "y"]),
            *(rot.xaxis, ticks["rotation", "x"]),
            self.title,
        ]

    def update(self, d_model=64, position=10, dims=(0, 8, 20), offset=3, max_len=100) -> PEView:
        """Redraw for new settings; returns the numbers shown.

        Args:
            d_model: encoding width (even).
            position: the position marked in every panel, 0 .. max_len - 1.
            dims: dimensions drawn as waves (the first 6 are shown).
            offset: k in PE(pos + k) = R_k · PE(pos).
            max_len: number of positions in the table, the waves and the similarity map.
        """
        dims = tuple(dict.fromkeys(dims))[:MAX_WAVES]
        for dim in dims:
            wavelength(dim, d_model)  # raises for a dimension the table does not have
        if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 2:
            raise ValueError(f"max_len must be an int >= 2; got {max_len!r}")
        if not 0 <= position < max_len:
            raise ValueError(
                f"position must be in 0 .. {max_len - 1} (max_len - 1); got {position!r}"
            )
        here, shifted, rotated, error = rotation_error(position, offset, d_model)
        frame = (d_model, max_len, dims)
        if frame != self._frame:
            self._frame, self._background = frame, self._drawn.get(frame)
            self._draw_frame(d_model, max_len, dims)
            if frame in self._drawn:  # seen before: its pixels are reused, no drawing needed
                self._drawn.move_to_end(frame)
        pe, sim, spread = self._table
        for line in self.marks[:4]:
            line.set_ydata([position, position])
        self.marks[4].set_xdata([position, position])
        for marker, dim in zip(self.here, dims, strict=True):
            marker.set_data([position], [pe[position, dim].item()])
        size = 5 if d_model <= 32 else 3 if d_model <= 128 else 1.5
        for line, values in zip(self.rotation, (here, shifted, rotated), strict=True):
            line.set_data(np.arange(d_model), values.numpy())
            line.set_markersize(size * (1.8 if line.get_marker() == "o" else 1))
        view = PEView(pe, sim, spread, shifted, rotated, error.item(), dims)
        title, similarity_title, rotation_title = pe_readings(view, position, offset)
        self.title.set_text(title)
        self.axes["similarity"].set_title(similarity_title)
        self.axes["rotation"].set_title(rotation_title)
        return view

    def _draw_frame(self, d_model, max_len, dims):
        """What only d_model, max_len and the chosen dimensions change."""
        pe = sinusoidal_encoding(max_len, d_model)  # (T, D)
        sim = similarity(pe)  # (T, T)
        self._table = pe, sim, diagonal_spread(sim)
        table, waves, sim_ax, rot = self.axes.values()
        for ax, values in ((table, pe), (sim_ax, sim)):
            rows, cols = values.shape
            ax.images[0].set_data(values.numpy())
            ax.images[0].set_extent((-0.5, cols - 0.5, rows - 0.5, -0.5))  # row 0 on top
            ax.set(xlim=(-0.5, cols - 0.5), ylim=(rows - 0.5, -0.5))
        for line in [line for line in [*table.lines, *waves.lines] if line.get_gid() == "dim"]:
            line.remove()
        omega, x = frequencies(d_model), np.linspace(0, max_len - 1, 600)
        self.here = []
        for dim, (style, marker, color) in zip(dims, _STYLES, strict=False):
            wave = np.sin if dim % 2 == 0 else np.cos
            label = f"{dim} {wave.__name__}, λ={format_wavelength(wavelength(dim, d_model))}"
            curve = wave(omega[dim // 2].item() * x)  # the formula between integer positions
            waves.plot(x, curve, style, color=color, lw=1.2, label=label, gid="dim")
            waves.plot(range(max_len), pe[:, dim].numpy(), marker, ms=2.5, color=color, gid="dim")
            (mark,) = waves.plot([], [], marker, ms=8, mfc="none", mec="black", mew=1.5, gid="dim")
            self.here.append(mark)
            table.plot(
                [dim], [-0.5], marker, ms=6, color="white", mec="black", clip_on=False, gid="dim"
            )
        waves.set_xlim(-0.5, max_len - 0.5)
        waves.title.set_position((0.5, 1.0 + (0.09 if len(dims) <= 3 else 0.16)))  # legend rows
        # Above the axes, where no wave or marker can run over it.
        waves.legend(
            loc="lower center",
            bbox_to_anchor=(0.5, 0.99),
            ncol=3,
            fontsize=7,
            frameon=False,
            handlelength=1.5,
            columnspacing=1.0,
        )
        rot.set_xlim(-0.5, d_model - 0.5)
        for key in _CHANGING_TICKS:
            place_tick_labels(self.ticks[key])

    def png(self) -> bytes:
        """The picture as PNG bytes, each layer drawn only when something in it changed."""
        canvas, framed, moving = self.figure.canvas, self.framed(), self.moving()
        if self._background is None:  # settings not drawn before: lay the frame on the still parts
            if self._still is None:
                self._still = self._draw_without([*framed, *moving])
            else:
                canvas.restore_region(self._still)
            for artist in framed:
                self.figure.draw_artist(artist)
            self._background = canvas.copy_from_bbox(self.figure.bbox)
            self._drawn[self._frame] = self._background
            if len(self._drawn) > KEEP_FRAMES:
                self._drawn.popitem(last=False)  # the least recently shown
        else:
            canvas.restore_region(self._background)
        for artist in moving:
            self.figure.draw_artist(artist)
        width, height = canvas.get_width_height()
        image = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, format="png", compress_level=3)  # opaque: RGB is smaller
        return buffer.getvalue()

    def _draw_without(self, artists):
        """Draw the whole figure but ``artists``; returns its pixels."""
        for artist in artists:
            artist.set_animated(True)  # a full drawing leaves these out
        try:
            self.figure.canvas.draw()
        finally:
            for artist in artists:
                artist.set_animated(False)
        return self.figure.canvas.copy_from_bbox(self.figure.bbox)


def render_pe(d_model=64, position=10, dims=(0, 8, 20), offset=3, max_len=100) -> Figure:
    """The four-panel figure (arguments as :meth:`PEFigure.update`), e.g. for ``show_figure``."""
    picture = PEFigure()
    picture.update(d_model, position, dims, offset, max_len)
    return picture.figure
