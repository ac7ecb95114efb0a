"""Pictures of the explorers for the offline site, drawn in advance for a set of settings.

Every explorer, when displayed, registers itself here. :func:`export_explorers` then sets
each one's controls to a few settings, keeps the picture and its text alternative for each,
writes them all to one JSON file, and puts the explorer back as it was::

    {model_id: {"title": "Attention explorer",
                "controls": [{"name", "label", "type", "options": [{"value", "label"}]}],
                "states": [{"values": {name: value}, "png": base64, "alt": str}],
                "default": index of the state shown when the explorer was displayed,
                "note": what the page cannot change, and why (may be "")}}

A control's type is "slider", "buttons", "checkbox" or "fixed" (shown, not changeable).
Which settings: the ones the explorer was displayed with (the default), then each control
varied alone from them over its options (a slider over a few steps), then every combination
of the button and checkbox controls that fit: taken in order, each joins the combination
while the pictures stay within ``max_images``, and one that would not fit is left out; an
explorer moved since it was displayed adds its current settings second. A state records the
values the controls actually hold: a control fitted to another (a head the example lacks, a
position beyond the positions) records where it was put, and its options include that value.
"""

import itertools
import json
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

TYPES = ("slider", "buttons", "checkbox", "fixed")
# Displayed explorers by model id, in display order. Weak: the registry keeps none alive.
_registry: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


@dataclass
class StaticControl:
    """One control as the offline site shows it, and how to read and set it here.

    ``options``: ``(value, label)`` pairs, in order (a slider's precomputed steps).
    ``enabled()`` False: the control is left as it is (e.g. a greyed-out checkbox).
    ``describe(value)``: the label of a value not among the options.
    """

    name: str
    label: str
    type: str
    options: list
    get: Callable[[], object]
    set: Callable[[object], None]
    enabled: Callable[[], bool] = lambda: True
    describe: Callable[[object], str] = str

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(
                f"type of control {self.name!r} must be one of {TYPES}; got {self.type!r}"
            )
        if not self.options:
            raise ValueError(f"control {self.name!r} needs at least one option; got none")

    def label_of(self, value) -> str:
        return next((text for v, text in self.options if _same(v, value)), None) or self.describe(
            value
        )


def widget_control(name, widget, type, options=None, *, label=None, describe=str):
    """A :class:`StaticControl` for an ipywidgets control read and set through ``.value``.

    A value the widget does not offer at the moment (a head the example lacks) is not set;
    a disabled or hidden widget is left alone.
    """
    if options is None:
        options = [(False, "off"), (True, "on")] if type == "checkbox" else [(widget.value, "")]

    def set_value(value):
        offered = getattr(widget, "_options_values", None)
        if offered is None or value in offered:
            widget.value = value

    def enabled():
        return not getattr(widget, "disabled", False) and widget.layout.display != "none"

    return StaticControl(
        name,
        widget.description if label is None else label,
        type,
        list(options),
        lambda: widget.value,
        set_value,
        enabled,
        describe,
    )


def slider_steps(low, high, current, count: int = 5, *, log: bool = False) -> list:
    """``count`` values evenly spread from ``low`` to ``high`` (in log scale if ``log``), and
    ``current``, sorted; ints when ``low``, ``high`` and ``current`` are ints."""
    if log:
        steps = [low * (high / low) ** (i / (count - 1)) for i in range(count)]
    else:
        steps = [low + (high - low) * i / (count - 1) for i in range(count)]
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high, current))
    steps = [round(v) if whole else round(v, 2) for v in steps]
    return sorted({*steps, current})


def register(explorer) -> None:
    """Note ``explorer`` (just displayed) for :func:`export_explorers`, with its settings.

    Only a weak reference is kept: an explorer nothing else refers to (its widgets closed)
    leaves the registry when it is garbage-collected.
    """
    _registry.setdefault(explorer.widget.model_id, explorer)
    explorer._displayed_values = {c.name: c.get() for c in explorer._static_controls()}


def registered() -> list:
    """The displayed explorers still alive, in the order they were first displayed."""
    return list(_registry.values())


def forget_explorers() -> None:
    """Empty the registry."""
    _registry.clear()


def export_explorers(path, max_images: int = 48) -> int:
    """Write every displayed explorer's pictures to the JSON file ``path``; returns how many.

    At most ``max_images`` pictures per explorer. Each explorer is put back to the settings
    it had, and its picture with them.
    """
    _check_max_images(max_images)
    exported = {}
    for explorer in registered():
        model_id = getattr(getattr(explorer.widget, "comm", None), "comm_id", None)
        if model_id is not None:  # a closed widget is shown nowhere
            exported[model_id] = static_states(explorer, max_images)
    Path(path).write_text(json.dumps(exported, ensure_ascii=False), encoding="utf-8")
    return len(exported)


def static_states(explorer, max_images: int = 48) -> dict:
    """One explorer's entry of :func:`export_explorers` (see the module's docstring)."""
    _check_max_images(max_images)
    controls = explorer._static_controls()
    names = [c.name for c in controls]
    if len(set(names)) != len(names):
        raise ValueError(f"control names must be distinct; got {names}")
    start = {c.name: c.get() for c in controls}
    shown = getattr(explorer, "_displayed_values", None)
    if shown is None or set(shown) != set(names):
        shown = start
    # Every variation starts from the displayed settings, the default; the settings the
    # explorer was moved to since come second.
    requests = _requests(controls, shown, max_images)
    if shown != start:
        requests.insert(1, start)
    states, seen = [], set()
    try:
        for request in requests:
            if len(states) == max_images:
                break
            values = _apply(controls, request)
            key = json.dumps([values[name] for name in names])
            if key not in seen:
                seen.add(key)
                data = explorer.output.outputs[0]["data"]
                states.append(
                    {"values": values, "png": data["image/png"], "alt": data["text/plain"]}
                )
    finally:
        _apply(controls, start)
    return {
        "title": explorer.title,
        "controls": [_describe(c, states) for c in controls],
        "states": states,
        "default": 0,  # the first request: the displayed settings
        "note": explorer.note,
    }


def _check_max_images(max_images) -> None:
    if isinstance(max_images, bool) or not isinstance(max_images, int):
        raise TypeError(f"max_images must be an int; got {type(max_images).__name__}")
    if max_images < 1:
        raise ValueError(f"max_images must be at least 1 (pictures per explorer); got {max_images}")


def _requests(controls, base: dict, max_images: int) -> list[dict]:
    """The settings to draw, most useful first: ``base``, each control alone from it, then
    combinations."""
    varying = [c for c in controls if c.type != "fixed"]

    def alone(control):
        return [
            {**base, control.name: v}
            for v, _ in control.options
            if not _same(v, base[control.name])
        ]

    requests = [dict(base)]
    for control in varying:
        requests += alone(control)
    # A combination of controls includes each one alone: the pictures number at most the
    # product plus the other controls' variations.
    combined, size = [], 1
    for control in (c for c in varying if c.type in ("buttons", "checkbox")):
        rest = sum(len(c.options) - 1 for c in varying if c is not control and c not in combined)
        if size * len(control.options) + rest <= max_images:
            combined.append(control)
            size *= len(control.options)
    for combination in itertools.product(*(c.options for c in combined)):
        requests.append(
            {**base, **{c.name: v for c, (v, _) in zip(combined, combination, strict=True)}}
        )
    return requests


def _apply(controls, values: dict) -> dict:
    """Set the controls in order (earlier ones may fit later ones); returns what they hold."""
    for control in controls:
        want = values[control.name]
        if not _same(control.get(), want) and control.enabled():
            control.set(want)
    held = {}
    for control in controls:
        value = control.get()
        if value is not None and not isinstance(value, (str, int, float, bool)):
            raise TypeError(
                f"control {control.name!r} must hold a JSON scalar; got {type(value).__name__}"
            )
        held[control.name] = value
    return held


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12)
    return type(a) is type(b) and a == b


def _describe(control, states) -> dict:
    """The control as JSON, its options extended by any value a state holds."""
    options = list(control.options)
    for state in states:
        value = state["values"][control.name]
        if not any(_same(v, value) for v, _ in options):
            options.append((value, control.label_of(value)))
    if control.type == "slider":
        options.sort(key=lambda option: option[0])
    return {
        "name": control.name,
        "label": control.label,
        "type": control.type,
        "options": [{"value": v, "label": control.label_of(v)} for v, _ in options],
    }
