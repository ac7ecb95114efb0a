"""Explorers that respond on a static page: native controls over pictures drawn in advance.

A lesson's kernel writes, after its last cell, every explorer's pictures for a set of
settings (``course_lib.widgets.export_explorers``, read by :mod:`.explorer_data`). Each
widget output showing one of those explorers is replaced by plain HTML: a ``<section
class="course-static-explorer">`` with one labelled form control per explorer control, a
key help line, the explorer's note, a live status line and the default state's picture;
``explorers.js`` swaps pictures as the controls change. Pictures become files
``_static/explorers/<page>-<n>-<state>.png`` (the n-th explorer of the page, counted from
1; the state's index in the export, from 0).
"""

import copy
import html
import json

import nbformat

from course_lib.widgets._explorer import SCRIPT_METADATA

from . import assets
from .explorer_data import Control, Explorer, parse, png_size, script_data
from .progress import WIDGET_VIEW

FOLDER = "explorers"  # under _static/
KEYS = (
    "Keys: Tab moves between controls; arrow keys move a slider or choose a button; "
    "Space ticks a box."
)


def _json_in_html(data: dict) -> str:
    """JSON safe inside <script>: no '<' that could close it."""
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")


def _control_html(control: Control, value: int, key: str, c: int) -> str:
    e = html.escape
    ident = f"{key}-c{c}"
    label = e(control.label)
    shown = e(control.options[value][1])
    attrs = f'data-control="{c}" data-name="{e(control.name, quote=True)}"'
    if control.type == "slider":
        last = len(control.options) - 1
        return (
            f'<div class="course-explorer-control course-explorer-slider" {attrs}>'
            f'<label for="{ident}">{label}</label>'
            f'<input type="range" id="{ident}" min="0" max="{last}" step="1" value="{value}" '
            f'aria-valuetext="{shown}">'
            f'<output for="{ident}" class="course-explorer-readout" aria-hidden="true">'
            f"{shown}</output></div>"
        )
    if control.type == "buttons":
        choices = "".join(
            f'<label class="course-explorer-choice"><input type="radio" name="{ident}" '
            f'value="{i}"{" checked" if i == value else ""}> {e(text)}</label>'
            for i, (_, text) in enumerate(control.options)
        )
        return (
            f'<fieldset class="course-explorer-control course-explorer-buttons" {attrs}>'
            f"<legend>{label}</legend>{choices}</fieldset>"
        )
    if control.type == "checkbox":
        on = next(i for i, (v, _) in enumerate(control.options) if v)
        checked = " checked" if value == on else ""
        return (
            f'<div class="course-explorer-control course-explorer-checkbox" {attrs}>'
            f'<input type="checkbox" id="{ident}"{checked}> '
            f'<label for="{ident}">{label}</label></div>'
        )
    rows = 1 + len(control.options[value][1]) // 32  # a long value wraps rather than hides
    return (
        f'<div class="course-explorer-control course-explorer-fixed" {attrs}>'
        f'<label for="{ident}">{label}</label>'
        f'<textarea id="{ident}" rows="{rows}" disabled>{shown}</textarea></div>'
    )


def explorer_html(explorer: Explorer, key: str, pictures: list[str]) -> str:
    """The static explorer: controls, key help, note, live status, and the default picture.

    ``key`` makes the page's element ids unique (e.g. "explorer-2"); ``pictures`` holds
    each state's image URL, in the states' order.
    """
    if len(pictures) != len(explorer.states):
        raise ValueError(
            f"pictures must hold {len(explorer.states)} URLs, one per state; got {len(pictures)}"
        )
    e = html.escape
    state, picture = explorer.states[explorer.default], pictures[explorer.default]
    width, height = png_size(state.png)
    controls = "".join(
        _control_html(control, value, key, c)
        for c, (control, value) in enumerate(zip(explorer.controls, state.values, strict=True))
    )
    note = explorer.note or (
        f"This page has pictures for {len(explorer.states)} settings drawn in advance; "
        "open the lesson in JupyterLab for any other."
    )
    title = e(explorer.title, quote=True)
    return (
        f'<section class="course-static-explorer" id="{key}" aria-label="{title}">'
        f'<p class="course-explorer-title">{e(explorer.title)}</p>'
        '<div class="course-explorer-body">'
        f'<form class="course-explorer-controls" autocomplete="off">{controls}'
        f'<p class="course-explorer-keys">{e(KEYS)}</p>'
        f'<p class="course-explorer-note">{e(note)}</p>'
        '<p class="course-explorer-status" aria-live="polite"></p>'
        '<p class="course-explorer-announce course-sr-only" aria-live="polite"></p></form>'
        f"{_figure_open(explorer, title)}"
        f'<img class="{_picture_class(explorer)}" src="{e(picture, quote=True)}" '
        f'alt="{e(state.alt, quote=True)}" width="{width}" height="{height}"></div></div>'
        f'<script type="application/json" class="course-explorer-data">'
        f"{_json_in_html(script_data(explorer, pictures))}</script></section>"
    )


# Wider pictures than this are not shrunk to a phone's width (their labels would be too small
# to read); their box scrolls sideways instead. Its width in CSS pixels, as course.css says.
WIDE_PICTURE = 700


def _is_wide(explorer: Explorer) -> bool:
    return max(png_size(state.png)[0] for state in explorer.states) > WIDE_PICTURE


def _picture_class(explorer: Explorer) -> str:
    return "course-explorer-picture" + (" course-wide-picture" if _is_wide(explorer) else "")


def _figure_open(explorer: Explorer, title: str) -> str:
    """The picture's box; a wide picture's box can scroll, so it takes keyboard focus too."""
    if not _is_wide(explorer):
        return '<div class="course-explorer-figure">'
    return (
        '<div class="course-explorer-figure course-scrolls" tabindex="0" role="region" '
        f'aria-label="{title}: picture (scrolls sideways on a narrow screen)">'
    )


def replace(nb, exported: dict, page: str, static: str = assets.STATIC):
    """The notebook with each exported explorer's widget output replaced by its static form.

    Returns ``(notebook copy, {file path under the site: PNG bytes})``. Other widgets are
    left as they are.
    """
    if not isinstance(exported, dict):
        raise TypeError(
            f"exported must be a dict of explorers by model id; got {type(exported).__name__}"
        )
    parsed = {model_id: parse(model_id, raw) for model_id, raw in exported.items()}
    nb = copy.deepcopy(nb)
    files, urls, count = {}, {}, 0
    for cell in nb.cells:
        if "outputs" in cell:  # the script naming the live controls has nothing to name here
            cell.outputs = [o for o in cell.outputs if SCRIPT_METADATA not in o.get("metadata", {})]
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                continue
            explorer = parsed.get(view.get("model_id"))
            if explorer is None:
                continue
            count += 1
            if view["model_id"] not in urls:
                number = len(urls) + 1
                names = [f"{FOLDER}/{page}-{number}-{s}.png" for s in range(len(explorer.states))]
                for name, state in zip(names, explorer.states, strict=True):
                    files[f"{static}/{name}"] = state.png
                urls[view["model_id"]] = [f"{static}/{name}" for name in names]
            section = explorer_html(explorer, f"explorer-{count}", urls[view["model_id"]])
            output.data = nbformat.from_dict({"text/html": section})
            output.metadata = nbformat.from_dict({})
    return nb, files
