"""The explorers a lesson's kernel exports, read and checked.

``course_lib.widgets.export_explorers`` writes ``{model_id: explorer}``, each explorer
``{"title": str, "controls": [...], "states": [...], "default": int, "note": str}``; a control
is ``{"name", "label", "type": "slider"|"buttons"|"checkbox"|"fixed", "options": [{"value":
scalar, "label": str}]}`` and a state ``{"values": {name: value for every control}, "png":
base64, "alt": str}``. :func:`parse` turns one into an :class:`Explorer` whose states hold an
option index per control, keeping only the options some state was drawn with;
:func:`script_data` is what the page's script reads.
"""

import base64
import struct
from dataclasses import dataclass

from course_lib.widgets.static_export import TYPES


@dataclass(frozen=True)
class Control:
    name: str
    label: str
    type: str  # one of TYPES; a control with a single picturable value is "fixed"
    options: tuple[tuple[object, str], ...]  # (value, label), only values some state has


@dataclass(frozen=True)
class State:
    values: tuple[int, ...]  # an option index per control
    png: bytes
    alt: str


@dataclass(frozen=True)
class Explorer:
    title: str
    controls: tuple[Control, ...]
    states: tuple[State, ...]  # in the export's order (the file names use its indices)
    default: int
    note: str


def _require(condition: bool, where: str, expected: str, got) -> None:
    if not condition:
        raise ValueError(f"{where} must be {expected}; got {got!r}"[:400])


def _text(value, where: str) -> str:
    _require(isinstance(value, str) and value.strip() != "", where, "a non-empty string", value)
    return value


def _key(value) -> tuple:
    """A value's identity across JSON: 1 and 1.0 are one number, True is not 1."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    return ("number", float(value))


def _control(raw, where: str) -> tuple[str, str, str, list]:
    _require(isinstance(raw, dict), where, "an object", raw)
    kind = raw.get("type")
    _require(kind in TYPES, f"{where}.type", f"one of {TYPES}", kind)
    options = raw.get("options")
    _require(isinstance(options, list) and options, f"{where}.options", "a non-empty list", options)
    pairs = []
    for i, option in enumerate(options):
        here = f"{where}.options[{i}]"
        _require(isinstance(option, dict) and "value" in option, here, "{value, label}", option)
        value = option["value"]
        _require(
            value is None or isinstance(value, (str, int, float, bool)), here, "a scalar", value
        )
        pairs.append((value, _text(option.get("label"), f"{here}.label")))
    values = [_key(value) for value, _ in pairs]
    _require(len(set(values)) == len(values), f"{where}.options", "distinct values", values)
    return (
        _text(raw.get("name"), f"{where}.name"),
        _text(raw.get("label"), f"{where}.label"),
        kind,
        pairs,
    )


def parse(model_id: str, raw) -> Explorer:
    """One exported explorer, checked; ValueError names the part that is wrong."""
    where = f"explorers[{model_id!r}]"
    _require(isinstance(raw, dict), where, "an object", raw)
    controls = [
        _control(c, f"{where}.controls[{i}]") for i, c in enumerate(raw.get("controls", []))
    ]
    names = [name for name, *_ in controls]
    _require(len(set(names)) == len(names), f"{where}.controls", "distinct names", names)
    raw_states = raw.get("states")
    _require(
        isinstance(raw_states, list) and raw_states,
        f"{where}.states",
        "a non-empty list",
        raw_states,
    )
    keys = [{_key(value): i for i, (value, _) in enumerate(c[3])} for c in controls]
    states = []
    for s, state in enumerate(raw_states):
        here = f"{where}.states[{s}]"
        _require(isinstance(state, dict), here, "an object", state)
        values = state.get("values")
        _require(
            isinstance(values, dict) and set(values) == set(names),
            f"{here}.values",
            f"a value for each of {names}",
            values,
        )
        index = []
        for (name, _, _, pairs), key in zip(controls, keys, strict=True):
            value = values[name]
            scalar = value is None or isinstance(value, (str, int, float))
            found = key.get(_key(value)) if scalar else None
            options = [v for v, _ in pairs]
            _require(found is not None, f"{here}.values[{name!r}]", f"one of {options}", value)
            index.append(found)
        try:
            png = base64.b64decode(_text(state.get("png"), f"{here}.png"), validate=True)
        except ValueError as error:
            raise ValueError(f"{here}.png must be base64 PNG data: {error}") from error
        _require(png.startswith(b"\x89PNG\r\n\x1a\n"), f"{here}.png", "a PNG image", png[:8])
        states.append((tuple(index), png, _text(state.get("alt"), f"{here}.alt")))
    seen = [values for values, *_ in states]
    _require(len(set(seen)) == len(seen), f"{where}.states", "distinct settings", seen)
    default = raw.get("default")
    ok = isinstance(default, int) and not isinstance(default, bool) and 0 <= default < len(states)
    _require(ok, f"{where}.default", f"a state index in [0, {len(states)})", default)
    return _keep_used(raw.get("title"), controls, states, default, raw.get("note", ""), where)


def _keep_used(title, controls, states, default, note, where) -> Explorer:
    """Drop options no state was drawn with; a control left with one value is shown fixed."""
    kept, remaps = [], []
    for c, (name, label, kind, pairs) in enumerate(controls):
        used = sorted({values[c] for values, *_ in states})
        remaps.append({old: new for new, old in enumerate(used)})
        pairs = tuple(pairs[i] for i in used)
        kind = "fixed" if len(pairs) == 1 else kind
        if kind == "checkbox":
            truth = sorted(bool(value) for value, _ in pairs)
            _require(
                truth == [False, True],
                f"{where}.controls[{c}].options",
                "one false and one true value",
                pairs,
            )
        kept.append(Control(name, label, kind, pairs))
    new_states = tuple(
        State(tuple(remaps[c][i] for c, i in enumerate(values)), png, alt)
        for values, png, alt in states
    )
    note = note if isinstance(note, str) else ""
    return Explorer(_text(title, f"{where}.title"), tuple(kept), new_states, default, note.strip())


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's header."""
    return struct.unpack(">II", png[16:24])


def limit_text(explorer: Explorer) -> str:
    """What the page has pictures for, said when a change moves another control."""
    default = explorer.states[explorer.default].values
    changes = [sum(a != b for a, b in zip(s.values, default, strict=True)) for s in explorer.states]
    if max(changes) <= 1:
        return "this page has pictures for one change at a time"
    total = 1
    for control in explorer.controls:
        total *= len(control.options)
    return f"this page has pictures for {len(explorer.states)} of the {total} combinations"


def script_data(explorer: Explorer, pictures: list[str]) -> dict:
    """What explorers.js reads: controls with option labels, states as option indices."""
    controls = []
    for control in explorer.controls:
        entry = {"name": control.name, "label": control.label, "type": control.type}
        entry["options"] = [label for _, label in control.options]
        if control.type == "checkbox":
            entry["on"] = next(i for i, (value, _) in enumerate(control.options) if value)
        controls.append(entry)
    states = []
    for state, src in zip(explorer.states, pictures, strict=True):
        width, height = png_size(state.png)
        states.append(
            {"v": list(state.values), "src": src, "alt": state.alt, "w": width, "h": height}
        )
    return {
        "controls": controls,
        "states": states,
        "default": explorer.default,
        "limit": limit_text(explorer),
    }
