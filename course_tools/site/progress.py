"""Progress bars (tqdm's notebook widget) as plain HTML, so a page needs no widget renderer.

tqdm shows a bar as an ``HBox`` of a label (``HTML``), a ``FloatProgress`` or ``IntProgress``
and a counter (``HTML``). The page shows the bar as it ended: the same two texts around a
native ``<progress>`` element.
"""

import copy
import html

import nbformat

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
BARS = ("FloatProgressModel", "IntProgressModel")


def _models(nb) -> dict:
    return nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def bar_html(model_id: str, models: dict) -> str | None:
    """The bar shown by widget ``model_id`` as HTML, or None if it is not a progress bar."""
    box = models.get(model_id, {})
    if box.get("model_name") != "HBoxModel":
        return None
    children = [
        models.get(str(c).removeprefix("IPY_MODEL_"), {}) for c in box["state"].get("children", [])
    ]
    names = [child.get("model_name") for child in children]
    if (
        len(names) != 3
        or names[0] != "HTMLModel"
        or names[1] not in BARS
        or names[2] != "HTMLModel"
    ):
        return None
    label, bar, counter = (child["state"] for child in children)
    value, top = float(bar.get("value", 0)), float(bar.get("max", 100))
    name = html.unescape(label.get("value", "")).split(":")[0].strip() or "progress"
    # The texts are HTML already (tqdm escapes them), as the widget would show them.
    return (
        '<div class="course-progress">'
        f'<span class="course-progress-label">{label.get("value", "")}</span> '
        f'<progress max="{top:g}" value="{value:g}" aria-label="{html.escape(name, quote=True)}">'
        f"{value:g} of {top:g}</progress> "
        f'<span class="course-progress-count">{counter.get("value", "")}</span></div>'
    )


def replace(nb):
    """A copy of the notebook with every progress-bar widget output shown as HTML."""
    nb, models = copy.deepcopy(nb), _models(nb)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            shown = bar_html(view.get("model_id", ""), models) if view else None
            if shown is not None:
                output.data = nbformat.from_dict({"text/html": shown})
                output.metadata = nbformat.from_dict({})
    return nb
