"""The attention-map explorer: pick an example and a head, vary τ, toggle √d_k and the mask.

Built from plain ipywidgets controls whose ``.observe`` calls :meth:`AttentionExplorer.update`,
and an ``Output`` holding a PNG: it works live in JupyterLab, in headless runs and in
static HTML exports. ipywidgets is imported only when an explorer is built.

Choices are buttons, not menus (see :mod:`._explorer`). Many examples whose names are
built from parts, like lesson 7's ``"i eat the red apple · cross-attention · layer 2"``,
get one row of buttons per part (``facets``): fewer buttons, each name readable in full.
"""

import html
import re
from pathlib import Path

from ._display import Backdrops, collect_garbage_now, png_output, save_png, status_html
from ._explorer import Explorer
from .attention_data import (
    AttentionExample,
    causal_already,
    describe_attention_map,
    map_readings,
)
from .attention_map import moving_parts, refresh_attention, render_attention
from .static_export import widget_control

KEEP_LAYOUTS = 8  # examples whose still parts are kept drawn; ~2 MB of pixels each
SEPARATOR = " · "  # between the parts of an example's name, for facets
TEMPERATURES = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0)  # τ drawn in advance for the offline site


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


class AttentionExplorer(Explorer):
    """Attention maps with controls: example, head, temperature τ, √d_k division, causal mask.

    Args:
        examples: one or more :class:`AttentionExample` (e.g. ``lesson3_examples()``).
        save_dir: where "Save PNG" writes ``attention-<example>-head<h>.png``.
        facets: names for the parts of the examples' names (split on " · "), e.g.
            ``("sentence", "attention", "layer")``: one row of buttons per part instead of
            one button per example.
        example: the example shown first, by index or name.

    Attributes:
        figure: the one figure, redrawn for every setting; ``weights`` ``(T_q, T_k)`` and
            ``hidden`` the numbers it shows; ``text`` its text alternative; ``readings``
            the lines it prints (:class:`~.attention_data.MapReadings`), which the status
            line repeats.
        example_select (None with facets), facet_selects, head_select, temperature, scale,
        causal, save_button, status, output: the widgets (setting a control's ``.value``
        redraws at once). ``example_index``: the example on show (settable).
    """

    title = "Attention explorer"

    def __init__(self, examples, *, save_dir=".", facets=None, example=0):
        import ipywidgets as w  # here, so that importing course_lib.widgets stays light

        examples = [examples] if isinstance(examples, AttentionExample) else list(examples)
        if not examples:
            raise ValueError("examples must hold at least one AttentionExample; got none")
        for i, item in enumerate(examples):
            if not isinstance(item, AttentionExample):
                raise TypeError(
                    f"examples[{i}] must be an AttentionExample; got {type(item).__name__}"
                )
        self.examples, self.save_dir = examples, Path(save_dir)
        self._parts = _facet_parts(examples, facets)
        start = _start_index(examples, example)
        self._example, self._syncing, self._png, self.text = None, False, b"", ""
        self._causal_choice, self.readings = False, None
        self.figure = self.weights = self.hidden = self._backdrops = None

        label = {"description_width": "95px"}
        self.example_select, self.facet_selects = None, []
        if facets is None:
            self.example_select = w.ToggleButtons(
                options=[(e.name, i) for i, e in enumerate(examples)],
                value=start,
                description="example",
                style=label,
            )
            self.example_select.add_class("course-example")
            self.example_select.add_class("course-wide-choices")
            if len(examples) == 1:
                self.example_select.layout.display = "none"
            choosers = [self.example_select]
        else:
            for k, facet in enumerate(facets):
                values = list(dict.fromkeys(parts[k] for parts in self._parts))
                select = w.ToggleButtons(
                    options=values, value=self._parts[start][k], description=facet, style=label
                )
                select.add_class("course-facet")
                select.add_class(f"course-facet-{_slug(facet)}")
                if max(map(len, values)) > 10 or len(values) > 4:
                    select.add_class("course-wide-choices")
                if len(values) == 1:
                    select.layout.display = "none"
                select.observe(self._facet_changed(k), names="value")
                self.facet_selects.append(select)
            choosers = self.facet_selects
        self.head_select = w.ToggleButtons(
            options=[("1", 0)], description="head", style={**label, "button_width": "40px"}
        )
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
        self.status.add_class("course-live")
        self.output = w.Output(layout=w.Layout(flex="1 1 auto"))
        settings = (self.head_select, self.temperature, self.scale, self.causal)
        if self.example_select is not None:
            self.example_select.observe(self.update, names="value")
        for control in settings:
            control.observe(self.update, names="value")
        # flex "0 0 auto" and a minimum width: a static HTML export can squeeze the box to 0 px
        controls = w.VBox(
            [*choosers, *settings, self.save_button, self.status],
            layout=w.Layout(flex="0 0 auto", width="320px", min_width="320px"),
        )
        self.widget = w.HBox([controls, self.output])
        # Stable CSS classes: the end-to-end browser tests find the parts by them.
        self.head_select.add_class("course-head")
        self.temperature.add_class("course-temperature")
        self.scale.add_class("course-scale")
        self.causal.add_class("course-causal")
        self.save_button.add_class("course-save")
        self.output.add_class("course-picture")
        self._finish(
            w, controls, "course-attention-explorer", choices=True, buttons=True, checkboxes=True
        )
        self.save_button.on_click(self.save)
        self.update()
        collect_garbage_now()

    @property
    def example_index(self) -> int:
        """Index in ``examples`` of the example on show."""
        if self.example_select is not None:
            return self.example_select.value
        chosen = tuple(select.value for select in self.facet_selects)
        return self._parts.index(chosen)

    @example_index.setter
    def example_index(self, index: int) -> None:
        index = _start_index(self.examples, index)
        if self.example_select is not None:
            self.example_select.value = index
            return
        self._syncing = True
        try:
            for select, part in zip(self.facet_selects, self._parts[index], strict=True):
                select.value = part
        finally:
            self._syncing = False
        self.update()

    def _facet_changed(self, k: int):
        """When part k changes: the example with that part most like the one on show (the
        most other parts kept, the earlier parts before the later ones)."""

        def changed(change):
            if self._syncing:
                return
            now = [select.value for select in self.facet_selects]
            fits = [i for i, parts in enumerate(self._parts) if parts[k] == change["new"]]

            def likeness(i):  # parts kept, the earlier parts first; then the first example
                kept = tuple(a == b for a, b in zip(self._parts[i], now, strict=True))
                return sum(kept), kept, -i

            self.example_index = max(fits, key=likeness)

        return changed

    def update(self, change=None):
        """Redraw from the controls' current values; every control calls this when it changes.

        A setting the example cannot take (a causal mask on a map with more queries than
        keys, or off on weights a model already masked) is put back, and the status line
        says why: the explorer keeps working.
        """
        if self._syncing:  # the head buttons are being rebuilt: draw once, afterwards
            return
        index = self.example_index
        example = self.examples[index]
        if example is not self._example:
            self._fit_controls(example)
        refused = self._refuse_impossible_causal(example)
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
        self._png = self._backdrops.png(moving_parts(self.figure), index)
        self.text = describe_attention_map(example, **settings)
        head, temperature, scale = settings["head"], settings["temperature"], settings["scale"]
        self.readings = map_readings(example, self.weights, self.hidden, head, temperature, scale)
        self.output.outputs = (png_output(self._png, self.text),)
        self._say(refused)  # a "saved" note would now be about another picture

    def _say(self, note: str = "") -> None:
        """The status line: the lines the picture prints, then ``note`` if any."""
        self.status.value = status_html(self.readings.lines, html.escape(note))

    def _refuse_impossible_causal(self, example) -> str:
        """Put the causal mask back where ``example`` cannot take the value set (from code:
        the checkbox is disabled there); returns what to tell the learner, or ""."""
        _, T_q, T_k = example.scores.shape
        if self.causal.value and T_q != T_k:
            wanted = False
            reason = (
                f"A causal mask needs one query per key; this map has {T_q} queries and "
                f"{T_k} keys, so the mask stays off."
            )
        elif not self.causal.value and causal_already(example):
            wanted = True
            reason = (
                "These weights were computed under a causal mask (every later key has "
                "weight 0), so the mask stays on."
            )
        else:
            return ""
        self._syncing = True
        try:
            self.causal.value = wanted
        finally:
            self._syncing = False
        return reason

    def _fit_controls(self, example: AttentionExample) -> None:
        """Fit the head buttons and the checkboxes to a newly chosen example.

        The causal checkbox is greyed out where it cannot change anything: ticked on weights
        that are causal already (a decoder's self-attention), unticked where queries and keys
        differ in number (cross-attention). The learner's own choice comes back on the next
        example where it means something.
        """
        H, T_q, T_k = example.scores.shape
        head = self.head_select.value
        fixed = T_q != T_k or causal_already(example)
        self._syncing = True
        try:
            self.head_select.options = [(str(h + 1), h) for h in range(H)]
            self.head_select.value = head if head < H else 0
            self.head_select.disabled = H == 1
            self.head_select.layout.display = "none" if H == 1 else None
            self.scale.disabled = example.d_k == 1  # √1 = 1: nothing to toggle
            if fixed and not self.causal.disabled:
                self._causal_choice = self.causal.value
            if fixed:
                self.causal.value = T_q == T_k  # causal already, or impossible
            elif self.causal.disabled:
                self.causal.value = self._causal_choice
            self.causal.disabled = fixed
        finally:
            self._syncing = False
        self._example = example

    def save(self, button=None) -> Path | None:
        """Write the map on show to ``save_dir``; returns the path (None if it failed)."""
        slug = _slug(self._example.name) or "example"
        path = self.save_dir / f"attention-{slug}-head{self.head_select.value + 1}.png"
        return save_png(self._png, path, self.status, self.readings.lines)

    def _static_controls(self) -> list:
        """The controls the offline site offers: the example's, head, τ, √d_k, mask."""
        controls = []
        if self.example_select is not None and len(self.examples) > 1:
            options = [(i, e.name) for i, e in enumerate(self.examples)]
            controls.append(widget_control("example", self.example_select, "buttons", options))
        for select in self.facet_selects:
            if len(select.options) > 1:
                options = [(value, value) for value in select.options]
                controls.append(
                    widget_control(_slug(select.description), select, "buttons", options)
                )
        heads = max(e.n_heads for e in self.examples)
        if heads > 1:
            options = [(h, f"head {h + 1}") for h in range(heads)]
            controls.append(widget_control("head", self.head_select, "buttons", options))
        steps = sorted({*TEMPERATURES, self.temperature.value})
        options = [(t, f"{t:.2f}") for t in steps]
        controls.append(
            widget_control(
                "temperature", self.temperature, "slider", options, describe=lambda t: f"{t:.2f}"
            )
        )
        if any(e.d_k > 1 for e in self.examples):
            controls.append(widget_control("scale", self.scale, "checkbox"))
        if any(e.scores.shape[1] == e.scores.shape[2] for e in self.examples):
            controls.append(widget_control("causal", self.causal, "checkbox"))
        return controls


def _facet_parts(examples, facets) -> list[tuple[str, ...]]:
    """Each example's name split into its facets' parts (one part each without facets)."""
    if facets is None:
        return [(e.name,) for e in examples]
    if isinstance(facets, str) or not all(isinstance(f, str) and f.strip() for f in facets):
        raise TypeError(f"facets must be a list of non-empty strings; got {facets!r}")
    facets = list(facets)
    parts = [tuple(e.name.split(SEPARATOR)) for e in examples]
    for i, split in enumerate(parts):
        if len(split) != len(facets):
            raise ValueError(
                f"facets {facets} need names of {len(facets)} parts joined by {SEPARATOR!r}; "
                f"examples[{i}].name is {examples[i].name!r}"
            )
        if split in parts[:i]:
            raise ValueError(f"examples[{i}].name {examples[i].name!r} repeats an earlier name")
    return parts


def _start_index(examples, example) -> int:
    if isinstance(example, str):
        names = [e.name for e in examples]
        if example not in names:
            raise ValueError(f"example must be the name of one of the examples; got {example!r}")
        return names.index(example)
    if isinstance(example, bool) or not isinstance(example, int):
        raise TypeError(
            f"example must be an int (an index) or a name; got {type(example).__name__}"
        )
    if not 0 <= example < len(examples):
        raise ValueError(f"example must be in 0..{len(examples) - 1}; got {example}")
    return example
