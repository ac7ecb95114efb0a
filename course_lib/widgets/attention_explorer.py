"""The attention-map explorer: pick an example and a head, vary τ, toggle √d_k and the mask.

Built from plain ipywidgets controls whose ``.observe`` calls :meth:`AttentionExplorer.update`,
and an ``Output`` holding a PNG: it works live in JupyterLab, in headless runs and in
static HTML exports. ipywidgets is imported only when an explorer is built.
"""

import re
from pathlib import Path

from ._display import Backdrops, collect_garbage_now, png_output, save_png
from .attention_data import AttentionExample
from .attention_map import moving_parts, refresh_attention, render_attention

KEEP_LAYOUTS = 8  # examples whose still parts are kept drawn; ~2 MB of pixels each


class AttentionExplorer:
    """Attention maps with controls: example, head, temperature τ, √d_k division, causal mask.

    Args:
        examples: one or more :class:`AttentionExample` (e.g. ``lesson3_examples()``).
        save_dir: where "Save PNG" writes ``attention-<example>-head<h>.png``.

    Attributes:
        figure: the one figure, redrawn for every setting; ``weights`` ``(T_q, T_k)`` and
            ``hidden`` the numbers it shows.
        example_select, head_select, temperature, scale, causal, save_button, status, output:
            the widgets (setting a control's ``.value`` redraws at once).
    """

    def __init__(self, examples, *, save_dir="."):
        import ipywidgets as w  # here, so that importing course_lib.widgets stays light

        examples = [examples] if isinstance(examples, AttentionExample) else list(examples)
        if not examples:
            raise ValueError("examples must hold at least one AttentionExample; got none")
        for i, example in enumerate(examples):
            if not isinstance(example, AttentionExample):
                raise TypeError(
                    f"examples[{i}] must be an AttentionExample; got {type(example).__name__}"
                )
        self.examples, self.save_dir = examples, Path(save_dir)
        self._example, self._syncing, self._png = None, False, b""
        self.figure = self.weights = self.hidden = self._backdrops = None

        label = {"description_width": "95px"}
        self.example_select = w.Dropdown(
            options=[(e.name, i) for i, e in enumerate(examples)],
            description="example",
            style=label,
            layout=w.Layout(width="310px"),
        )
        self.head_select = w.Dropdown(options=[("head 1", 0)], description="head", style=label)
        self.temperature = w.FloatLogSlider(
            value=1.0,
            base=10,
            min=-1,
            max=1,
            step=0.02,
            readout_format=".2f",
            description="temperature τ",
            style=label,
        )
        self.scale = w.Checkbox(value=True, description="divide by √d_k", indent=False)
        self.causal = w.Checkbox(value=False, description="causal mask", indent=False)
        self.save_button = w.Button(description="Save PNG", icon="download")
        # A fixed width: a long path must wrap, not widen the column and shrink the picture.
        self.status = w.HTML(layout=w.Layout(width="300px"))
        self.output = w.Output(layout=w.Layout(flex="1 1 auto"))
        if len(examples) == 1:
            self.example_select.layout.display = "none"
        settings = (
            self.example_select,
            self.head_select,
            self.temperature,
            self.scale,
            self.causal,
        )
        for control in settings:
            control.observe(self.update, names="value")
        # flex "0 0 auto" and a minimum width: a static HTML export can squeeze the box to 0 px
        controls = w.VBox(
            [*settings, self.save_button, self.status],
            layout=w.Layout(flex="0 0 auto", width="320px", min_width="320px"),
        )
        self.widget = w.HBox([controls, self.output])
        # Stable CSS classes: the end-to-end browser tests find the parts by them.
        self.widget.add_class("course-attention-explorer")
        self.temperature.add_class("course-temperature")
        self.causal.add_class("course-causal")
        self.output.add_class("course-picture")
        self.save_button.on_click(self.save)
        self.update()
        collect_garbage_now()

    def update(self, change=None):
        """Redraw from the controls' current values; every control calls this when it changes."""
        if self._syncing:  # the head menu is being rebuilt: draw once, afterwards
            return
        example = self.examples[self.example_select.value]
        if example is not self._example:
            self._fit_controls(example)
        settings = dict(
            head=self.head_select.value,
            temperature=self.temperature.value,
            causal=self.causal.value,
            scale=self.scale.value,
        )
        # One figure for every setting: the example fixes its layout, the rest is redrawn in
        # place. The still parts of each example's layout (tokens, axis labels, colour bar)
        # are drawn once and kept as pixels, so a redraw draws only the map and the texts,
        # and no figure is built or thrown away (which would also make work for Python's
        # garbage collector).
        if self.figure is None:
            self.figure = render_attention(example, **settings)
            self._backdrops = Backdrops(self.figure, keep=KEEP_LAYOUTS)
        self.weights, self.hidden = refresh_attention(self.figure, example, **settings)
        layout = self.example_select.value
        self._png = self._backdrops.png(moving_parts(self.figure), layout)
        text = f"<attention map: {example.name}, head {settings['head'] + 1}>"
        self.output.outputs = (png_output(self._png, text),)
        self.status.value = ""  # a "saved" note would now be about another picture

    def _fit_controls(self, example: AttentionExample) -> None:
        """Fit the head menu and the checkboxes to a newly chosen example."""
        H, T_q, T_k = example.scores.shape
        head = self.head_select.value
        self._syncing = True
        try:
            self.head_select.options = [(f"head {h + 1}", h) for h in range(H)]
            self.head_select.value = head if head < H else 0
            self.head_select.disabled = H == 1
            self.head_select.layout.display = "none" if H == 1 else None
            self.scale.disabled = example.d_k == 1  # √1 = 1: nothing to toggle
            if T_q != T_k:
                self.causal.value = False
            self.causal.disabled = T_q != T_k  # a causal mask needs one query per key
        finally:
            self._syncing = False
        self._example = example

    def save(self, button=None) -> Path | None:
        """Write the map on show to ``save_dir``; returns the path (None if it failed)."""
        slug = re.sub(r"[^a-z0-9]+", "-", self._example.name.lower()).strip("-") or "example"
        path = self.save_dir / f"attention-{slug}-head{self.head_select.value + 1}.png"
        return save_png(self._png, path, self.status)

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)
