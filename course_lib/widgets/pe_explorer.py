"""The positional-encoding explorer: vary d_model, the position, the offset k and the waves.

Plain ipywidgets controls whose ``.observe`` calls :meth:`PEExplorer.update`, and an
``Output`` holding one PNG: it works live in JupyterLab, in headless runs and in static
HTML exports. ipywidgets is imported only when an explorer is built.
"""

import math
from pathlib import Path

from ._display import collect_garbage_now, png_output, save_png
from .pe_data import format_wavelength, frequencies
from .pe_figures import MAX_WAVES, PEFigure

D_MODELS = (8, 16, 32, 64, 128, 256, 512)


def dimension_options(d_model: int) -> list[tuple[str, int]]:
    """``(label, dim)`` for each dimension: its function and wavelength in positions."""
    wavelengths = (2 * math.pi / frequencies(d_model)).tolist()  # one per (sin, cos) pair
    return [
        (f"{dim} {('sin', 'cos')[dim % 2]}, λ = {format_wavelength(wavelengths[dim // 2])}", dim)
        for dim in range(d_model)
    ]


class PEExplorer:
    """The encoding table, waves, position similarity and the shift by R_k, with controls.

    Args:
        d_model: starting width, one of 8, 16, ..., 512.
        max_len: starting number of positions (10 .. 200).
        dims: dimensions drawn as waves at the start (at most 6 are drawn).
        save_dir: where "Save PNG" writes ``positional-encoding-d<d_model>-pos<position>.png``.

    Attributes:
        picture: the :class:`PEFigure`; ``view`` the numbers drawn last (a ``PEView``).
        d_model, max_len, position, offset, dims, save_button, status, output: the widgets
            (setting a control's ``.value`` redraws at once).
    """

    def __init__(self, d_model=64, max_len=100, dims=(0, 8, 20), *, save_dir="."):
        import ipywidgets as w  # here, so that importing course_lib.widgets stays light

        if d_model not in D_MODELS:
            raise ValueError(f"d_model must be one of {D_MODELS}; got {d_model!r}")
        if isinstance(max_len, bool) or not isinstance(max_len, int) or not 10 <= max_len <= 200:
            raise ValueError(f"max_len must be an int in 10 .. 200; got {max_len!r}")
        dims = tuple(dims)
        if any(isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < d_model for d in dims):
            raise ValueError(f"dims must be ints in 0 .. {d_model - 1} (d_model - 1); got {dims}")
        self.picture, self.save_dir, self.view, self._png = PEFigure(), Path(save_dir), None, b""
        self._syncing = False
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
        self.dims = w.SelectMultiple(
            options=dimension_options(d_model),
            value=dims,
            rows=7,
            description="waves",
            style=label,
            layout=wide,
        )
        help_text = f"Ctrl/Shift-click for several dimensions (the first {MAX_WAVES} are drawn)"
        hint = w.HTML(f'<div style="font-size: 85%; line-height: 1.3">{help_text}</div>')
        self.save_button = w.Button(description="Save PNG", icon="download")
        self.status = w.HTML(layout=w.Layout(width="290px"))  # fixed: a long path wraps
        self.output = w.Output(layout=w.Layout(flex="1 1 auto"))
        self.d_model.observe(self._d_model_changed, names="value")
        self.max_len.observe(self._max_len_changed, names="value")
        for control in (self.position, self.offset, self.dims):
            control.observe(self.update, names="value")
        # flex "0 0 auto" and a minimum width: a static HTML export can squeeze the box to 0 px;
        # "wrap" puts the picture under the controls on a narrow screen.
        settings = [self.d_model, self.max_len, self.position, self.offset, self.dims, hint]
        controls = w.VBox(
            [*settings, self.save_button, self.status],
            layout=w.Layout(flex="0 0 auto", width="300px", min_width="300px"),
        )
        self.widget = w.HBox([controls, self.output], layout=w.Layout(flex_flow="row wrap"))
        # Stable CSS classes: the end-to-end browser tests find the parts by them.
        self.widget.add_class("course-pe-explorer")
        self.position.add_class("course-position")
        self.output.add_class("course-picture")
        self.save_button.on_click(self.save)
        self.update()
        collect_garbage_now()

    def _d_model_changed(self, change):
        """New dimension options; keep the chosen dimensions that still exist."""
        kept = tuple(d for d in self.dims.value if d < change["new"]) or (0,)
        self._syncing = True
        try:
            self.dims.options = dimension_options(change["new"])
            self.dims.value = kept
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
            dims=self.dims.value,
            offset=self.offset.value,
            max_len=self.max_len.value,
        )
        self._png = self.picture.png()
        text = (
            f"<positional encoding: d_model {self.d_model.value}, position {self.position.value}>"
        )
        self.output.outputs = (png_output(self._png, text),)
        self.status.value = ""  # a "saved" note would now be about another picture

    def save(self, button=None) -> Path | None:
        """Write the picture on show to ``save_dir``; returns the path (None if it failed)."""
        name = f"positional-encoding-d{self.d_model.value}-pos{self.position.value}.png"
        return save_png(self._png, self.save_dir / name, self.status)

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)
