"""The positional-encoding explorer: vary d_model, the position, the offset k and the waves.

Plain ipywidgets controls whose ``.observe`` calls :meth:`PEExplorer.update`, and an
``Output`` holding one PNG: it works live in JupyterLab, in headless runs and in static
HTML exports. ipywidgets is imported only when an explorer is built.

The waves are chosen with a dimension slider (its readout names the dimension, sin or cos,
and the wavelength) and two buttons, "add wave" and "remove wave", under which every drawn
wave is listed: all of it works with Tab, the arrow keys and Enter, which a multiple-choice
menu does not in JupyterLab.
"""

import html
import math
from pathlib import Path

from ._display import collect_garbage_now, png_output, save_png, status_html
from ._explorer import Explorer
from .pe_data import describe_pe, format_wavelength, frequencies, pe_readings
from .pe_figures import MAX_WAVES, PEFigure
from .static_export import StaticControl, slider_steps, widget_control

D_MODELS = (8, 16, 32, 64, 128, 256, 512)


def dimension_options(d_model: int) -> list[tuple[str, int]]:
    """``(label, dim)`` for each dimension: its function and wavelength in positions."""
    wavelengths = (2 * math.pi / frequencies(d_model)).tolist()  # one per (sin, cos) pair
    return [
        (f"{dim} {('sin', 'cos')[dim % 2]}, λ = {format_wavelength(wavelengths[dim // 2])}", dim)
        for dim in range(d_model)
    ]


class PEExplorer(Explorer):
    """The encoding table, waves, position similarity and the shift by R_k, with controls.

    Args:
        d_model: starting width, one of 8, 16, ..., 512.
        max_len: starting number of positions (10 .. 200).
        dims: dimensions drawn as waves at the start (1 to 6 of them).
        save_dir: where "Save PNG" writes ``positional-encoding-d<d_model>-pos<position>.png``.

    Attributes:
        picture: the :class:`PEFigure`; ``view`` the numbers drawn last (a ``PEView``);
            ``waves`` the dimensions drawn; ``text`` the picture's text alternative;
            ``readings`` the lines with numbers it prints, which the status line repeats.
        d_model, max_len, position, offset, dimension, add_wave, remove_wave, wave_list,
        save_button, status, output: the widgets (setting a slider's ``.value`` or clicking
        a button redraws at once).
    """

    title = "Positional-encoding explorer"
    note = (
        "The waves drawn cannot be changed here (adding or removing waves needs the live "
        "notebook). A d_model too small for some of them draws only the dimensions below it "
        "(dimension 0 if none is)."
    )

    def __init__(self, d_model=64, max_len=100, dims=(0, 8, 20), *, save_dir="."):
        import ipywidgets as w  # here, so that importing course_lib.widgets stays light

        if d_model not in D_MODELS:
            raise ValueError(f"d_model must be one of {D_MODELS}; got {d_model!r}")
        if isinstance(max_len, bool) or not isinstance(max_len, int) or not 10 <= max_len <= 200:
            raise ValueError(f"max_len must be an int in 10 .. 200; got {max_len!r}")
        dims = tuple(dict.fromkeys(dims))
        if any(isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < d_model for d in dims):
            raise ValueError(f"dims must be ints in 0 .. {d_model - 1} (d_model - 1); got {dims}")
        if not 1 <= len(dims) <= MAX_WAVES:
            raise ValueError(f"dims must hold 1 to {MAX_WAVES} dimensions; got {len(dims)}: {dims}")
        self.picture, self.save_dir, self.view, self._png = PEFigure(), Path(save_dir), None, b""
        self._syncing, self._waves, self.text, self.readings = False, dims, "", ()
        label = {"description_width": "90px"}
        wide = w.Layout(width="290px")
        self.d_model = w.SelectionSlider(
            options=D_MODELS, value=d_model, description="d_model", style=label, layout=wide
        )
        self.max_len = w.IntSlider(
            value=max_len,
            min=10,
            max=200,
            step=10,
            description="positions",
            style=label,
            layout=wide,
        )
        self.position = w.IntSlider(
            value=min(10, max_len - 1),
            min=0,
            max=max_len - 1,
            description="position",
            style=label,
            layout=wide,
        )
        self.offset = w.IntSlider(
            value=3, min=1, max=50, description="offset k", style=label, layout=wide
        )
        self.dimension = w.SelectionSlider(
            options=dimension_options(d_model),
            value=dims[0],
            description="dimension",
            style=label,
            layout=wide,
        )
        self.add_wave = w.Button(
            description="add wave", icon="plus", layout=w.Layout(width="140px")
        )
        self.remove_wave = w.Button(
            description="remove wave", icon="minus", layout=w.Layout(width="140px")
        )
        self.wave_list = w.HTML(layout=w.Layout(width="290px"))
        self.save_button = w.Button(description="Save PNG", icon="download")
        self.status = w.HTML(layout=w.Layout(width="290px"))  # fixed: a long path wraps
        for live in (self.wave_list, self.status):
            live.add_class("course-live")
        self.output = w.Output(layout=w.Layout(flex="1 1 auto"))
        self.d_model.observe(self._d_model_changed, names="value")
        self.max_len.observe(self._max_len_changed, names="value")
        for control in (self.position, self.offset):
            control.observe(self.update, names="value")
        self.add_wave.on_click(self._add)
        self.remove_wave.on_click(self._remove)
        # flex "0 0 auto" and a minimum width: a static HTML export can squeeze the box to 0 px;
        # "wrap" puts the picture under the controls on a narrow screen.
        buttons = w.HBox([self.add_wave, self.remove_wave])
        settings = [self.d_model, self.max_len, self.position, self.offset, self.dimension]
        controls = w.VBox(
            [*settings, buttons, self.wave_list, self.save_button, self.status],
            layout=w.Layout(flex="0 0 auto", width="300px", min_width="300px"),
        )
        self.widget = w.HBox([controls, self.output], layout=w.Layout(flex_flow="row wrap"))
        # Stable CSS classes: the end-to-end browser tests find the parts by them.
        classes = {
            self.d_model: "course-d-model",
            self.max_len: "course-positions",
            self.position: "course-position",
            self.offset: "course-offset",
            self.dimension: "course-wave-dimension",
            self.add_wave: "course-add-wave",
            self.remove_wave: "course-remove-wave",
            self.wave_list: "course-wave-list",
            self.save_button: "course-save",
            self.output: "course-picture",
        }
        for widget, name in classes.items():
            widget.add_class(name)
        self.dimension.add_class("course-long-readout")  # the readout gets a line of its own
        self._finish(w, controls, "course-pe-explorer", buttons=True)
        self.save_button.on_click(self.save)
        self.update()
        collect_garbage_now()

    @property
    def waves(self) -> tuple[int, ...]:
        """The dimensions drawn as waves, in the order they were added."""
        return self._waves

    def set_waves(self, dims, message: str = "") -> None:
        """Draw the waves of ``dims`` (1 to 6 dimensions below d_model) and redraw."""
        dims = tuple(dict.fromkeys(dims))
        d_model = self.d_model.value
        if any(isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < d_model for d in dims):
            raise ValueError(f"dims must be ints in 0 .. {d_model - 1} (d_model - 1); got {dims}")
        if not 1 <= len(dims) <= MAX_WAVES:
            raise ValueError(f"dims must hold 1 to {MAX_WAVES} dimensions; got {len(dims)}: {dims}")
        self._waves = dims
        self.update()
        self._list_waves(message)

    def _add(self, button=None) -> None:
        dim = self.dimension.value
        if dim in self._waves:
            self._list_waves(f"Dimension {dim} is drawn already.")
        elif len(self._waves) == MAX_WAVES:
            self._list_waves(f"At most {MAX_WAVES} waves are drawn: remove one first.")
        else:
            self.set_waves((*self._waves, dim), f"Added dimension {dim}.")

    def _remove(self, button=None) -> None:
        dim = self.dimension.value
        if dim not in self._waves:
            self._list_waves(f"Dimension {dim} is not drawn: move the slider to one listed here.")
        elif len(self._waves) == 1:
            self._list_waves("One wave stays drawn: add another before removing this one.")
        else:
            self.set_waves(tuple(d for d in self._waves if d != dim), f"Removed dimension {dim}.")

    def wave_labels(self) -> list[str]:
        """The drawn waves as the wave list names them: dimension, sin or cos, wavelength."""
        labels = dict((dim, text) for text, dim in self.dimension.options)
        return [labels[dim] for dim in self._waves]

    def _list_waves(self, message: str = "") -> None:
        """Every drawn wave, one per line, and what the last button press did."""
        lines = "".join(f"<li>{html.escape(label)}</li>" for label in self.wave_labels())
        head = f"Waves drawn ({len(self._waves)}, at most {MAX_WAVES}):"
        note = f"<div>{html.escape(message)}</div>" if message else ""
        self.wave_list.value = (
            f'<div style="font-size: 90%; line-height: 1.35">{head}'
            f'<ul style="margin: 2px 0; padding-left: 18px">{lines}</ul>{note}</div>'
        )

    def _d_model_changed(self, change):
        """New dimension options; keep the drawn dimensions that still exist."""
        d_model, dim = change["new"], self.dimension.value
        self._waves = tuple(d for d in self._waves if d < d_model) or (0,)
        self._syncing = True
        try:
            self.dimension.options = dimension_options(d_model)
            self.dimension.value = dim if dim < d_model else self._waves[0]
        finally:
            self._syncing = False
        self.update()

    def _max_len_changed(self, change):
        self._syncing = True
        try:
            self.position.max = change["new"] - 1  # clamps the value too
        finally:
            self._syncing = False
        self.update()

    def update(self, change=None):
        """Redraw from the controls' current values; every control calls this when it changes."""
        if self._syncing:  # a control is being fitted to another: draw once, afterwards
            return
        self.view = self.picture.update(
            d_model=self.d_model.value,
            position=self.position.value,
            dims=self._waves,
            offset=self.offset.value,
            max_len=self.max_len.value,
        )
        self._png = self.picture.png()
        self.text = describe_pe(self.view, self.position.value, self.offset.value)
        self.readings = pe_readings(self.view, self.position.value, self.offset.value)
        self.output.outputs = (png_output(self._png, self.text),)
        self._list_waves()
        # the numbers the picture prints; a "saved" note would now be about another picture
        self.status.value = status_html(self.readings)

    def save(self, button=None) -> Path | None:
        """Write the picture on show to ``save_dir``; returns the path (None if it failed)."""
        name = f"positional-encoding-d{self.d_model.value}-pos{self.position.value}.png"
        return save_png(self._png, self.save_dir / name, self.status, self.readings)

    def _static_controls(self) -> list:
        """d_model, positions, position and offset; the waves are shown, not changeable.

        The waves' value is the wave list's text ("0 sin, λ = 6.28; 8 sin, λ = 19.9"): it
        names the wavelengths at the d_model drawn, so each state says what its picture shows.
        """

        def waves():
            return "; ".join(self.wave_labels())

        def set_waves(value):
            dims = [int(part.split(" ", 1)[0]) for part in value.split("; ")]
            dims = [d for d in dims if d < self.d_model.value] or [0]
            if tuple(dims) != self._waves:
                self.set_waves(dims)

        max_len, position, offset = self.max_len.value, self.position.value, self.offset.value
        sliders = (
            ("d_model", self.d_model, list(D_MODELS)),
            ("positions", self.max_len, sorted({10, 50, 100, 150, 200, max_len})),
            ("position", self.position, slider_steps(0, max_len - 1, position)),
            ("offset", self.offset, sorted({1, 10, 25, 50, offset})),
        )
        controls = [
            widget_control(name, widget, "slider", [(v, str(v)) for v in steps])
            for name, widget, steps in sliders
        ]
        drawn = waves()
        controls.append(
            StaticControl("waves", "waves drawn", "fixed", [(drawn, drawn)], waves, set_waves)
        )
        return controls
