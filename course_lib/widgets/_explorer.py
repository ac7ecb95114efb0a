"""What every explorer shares: a visible focus ring, a line of key help, names for the parts
ipywidgets leaves unnamed, and its place in the registry the offline site exports from.

Keyboard. In JupyterLab's command mode the arrow keys on a focused menu move between
cells, so the explorers use no menus: sliders (arrow keys move them), buttons and
checkboxes (Space or Enter). A ``<style>`` in an ``HTML`` widget, scoped to the explorer's
CSS class, draws a 3 px ring around whatever has keyboard focus.

Names. ipywidgets draws a slider's handle (``role="slider"``) with no name, its value as a
bare number, and a toggle button's state as a CSS class only; no Python option changes
that. When an explorer is displayed, :func:`naming_script` goes out with it: it copies each
slider's description onto its handle (``aria-label``) and the visible readout onto
``aria-valuetext``, names each group of toggle buttons and sets ``aria-pressed``, and does
it again whenever the view changes. JupyterLab runs such scripts for outputs made in the
session; elsewhere nothing happens and the controls keep their visible labels. The same
script keeps the arrow keys inside the explorer: in a row of toggle buttons they pick the
previous or next choice, as in a group of radio buttons.

Where widgets cannot render. An explorer's output carries, beside the widget's view, the
picture it currently shows with its text alternative (:meth:`Explorer.display_data`). A
front end shows the richest form it can render: the live widget where widgets work
(JupyterLab ranks a widget view above any other form), the picture elsewhere (a front end
without widget support, a notebook viewer, nbconvert without the widget state).
"""

import html
import json

FOCUS_COLOUR = "#2F7FD8"  # contrast 4.1:1 on white, 4.6:1 on #111 and 4.0:1 on #212121 (dark)
SCRIPT_METADATA = "course_lib"  # output metadata key marking the naming script
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def key_help(
    *, sliders: bool = True, choices: bool = False, buttons: bool = False, checkboxes: bool = False
) -> str:
    """One line saying which keys work, for the controls an explorer has (``choices``: rows
    of toggle buttons)."""
    parts = ["Tab moves between controls"]
    if sliders or choices:
        moved = " or ".join(
            ["move a slider"] * sliders + ["pick the next choice in a row of buttons"] * choices
        )
        parts.append(f"←/→ {moved}")
    if buttons:
        parts.append("Space or Enter presses a button")
    if checkboxes:
        parts.append("Space ticks a box")
    return "Keys: " + " · ".join(parts)


def help_html(text: str) -> str:
    return f'<div style="font-size: 85%; line-height: 1.3; opacity: 0.85">{html.escape(text)}</div>'


def focus_style(css_class: str) -> str:
    """A ``<style>`` giving every focusable part of ``.css_class`` a 3 px focus ring.

    The chosen toggle button is marked by weight and an underline, not by shade alone. Wide
    choices (class ``course-wide-choices``): one button per line, the label wrapped instead
    of cut off, the description above the buttons. A slider with class
    ``course-long-readout`` shows its readout on a line of its own.
    """
    if not css_class.replace("-", "").isalnum():
        raise ValueError(f"css_class must be letters, digits and hyphens; got {css_class!r}")
    scope = f".{css_class}"
    ring = f"outline: 3px solid {FOCUS_COLOUR} !important; outline-offset: 2px;"
    wide = f"{scope} .course-wide-choices"
    return (
        "<style>"
        f"{scope} :is(button, input, [tabindex], [contenteditable='true']):focus-visible {{{ring}}}"
        f"{wide} {{flex-direction: column; align-items: stretch;}}"
        f"{wide} > .widget-label {{width: auto !important; text-align: left;}}"
        f"{wide} > div {{display: flex; flex-direction: column; gap: 3px;}}"
        f"{wide} button.widget-toggle-button {{width: auto !important; height: auto;"
        " min-height: 28px; white-space: normal; text-align: left; line-height: 1.3;"
        " padding: 4px 8px; margin: 0 2px;}"
        f"{scope} button.widget-toggle-button.mod-active {{font-weight: 600;"
        " box-shadow: inset 0 -3px 0 currentColor;}"
        f"{scope} .course-long-readout {{flex-wrap: wrap; height: auto;}}"
        f"{scope} .course-long-readout .widget-readout {{max-width: none; flex: 1 0 100%;"
        " text-align: right; overflow: visible;}"
        "</style>"
    )


def naming_script(instance_class: str) -> str:
    """JavaScript naming the sliders and toggle buttons inside ``.instance_class``.

    Idempotent: it sets an attribute only when its value differs, so running it twice, or
    its observer seeing its own changes, does nothing more. It watches only the output area
    of its own cell, and stops once its output is gone (the cell ran again).
    """
    selector = json.dumps(f".{instance_class}")
    return f"""(function () {{
  const selector = {selector};
  const here = (typeof element !== "undefined" && element) ? (element[0] || element) : null;
  const area = here && here.closest ? here.closest(".jp-OutputArea, .output_area") : null;
  const scope = area || document.body;
  const set = (node, name, value) => {{
    if (node && value && node.getAttribute(name) !== value) node.setAttribute(name, value);
  }};
  const text = (node) => (node ? node.textContent.replace(/\\s+/g, " ").trim() : "");
  const name = () => {{
    for (const root of scope.querySelectorAll(selector)) {{
      for (const box of root.querySelectorAll(".widget-slider")) {{
        const label = text(box.querySelector(".widget-label"));
        const handle = box.querySelector(".noUi-handle, .ui-slider-handle");  // ipywidgets 8, 7
        const readout = box.querySelector(".widget-readout");
        set(handle, "aria-label", label);
        set(handle, "aria-valuetext", text(readout));
        if (readout && readout.isContentEditable) {{
          set(readout, "role", "textbox");
          set(readout, "aria-label", label + " (type a value)");
        }}
      }}
      for (const box of root.querySelectorAll(".widget-toggle-buttons")) {{
        const group = box.querySelector(":scope > div");
        set(group, "role", "group");
        set(group, "aria-label", text(box.querySelector(".widget-label")));
        for (const button of box.querySelectorAll("button.widget-toggle-button")) {{
          set(button, "aria-pressed", String(button.classList.contains("mod-active")));
        }}
      }}
      for (const live of root.querySelectorAll(".course-live")) set(live, "aria-live", "polite");
      if (!root.dataset.courseKeys) {{
        root.dataset.courseKeys = "1";
        root.addEventListener("keydown", keys);
      }}
    }}
  }};
  // Arrow keys stay inside the explorer (JupyterLab would move to another cell); in a row
  // of toggle buttons they pick the previous or next choice, as in a group of radio buttons.
  const steps = {{ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1}};
  function keys(event) {{
    if (!(event.key in steps) || event.altKey || event.ctrlKey || event.metaKey) return;
    event.stopPropagation();
    const target = event.target;
    const button = target.closest ? target.closest("button.widget-toggle-button") : null;
    if (!button) return;
    const row = [...button.parentElement.querySelectorAll("button.widget-toggle-button")];
    const next = row[row.indexOf(button) + steps[event.key]];
    event.preventDefault();
    if (next && !next.disabled) {{ next.focus(); next.click(); }}
  }}
  const observer = new MutationObserver(() => {{
    if (here && !here.isConnected) {{ observer.disconnect(); return; }}
    name();
  }});
  name();
  observer.observe(scope, {{subtree: true, childList: true, characterData: true,
                           attributes: true, attributeFilter: ["class"]}});
}})();"""


class Explorer:
    """The parts every explorer shares; a subclass builds ``self.widget`` and ``self.output``.

    ``title`` and ``note`` describe it to the offline site, and ``_static_controls`` lists
    its controls there (see :mod:`course_lib.widgets.static_export`).
    """

    title = "Explorer"
    note = ""

    def _finish(self, w, controls, css_class: str, **keys) -> None:
        """Add the key help and the focus style to the ``controls`` box, and the classes."""
        hint = w.HTML(help_html(key_help(**keys)))
        hint.add_class("course-key-help")
        style = w.HTML(focus_style(css_class), layout=w.Layout(height="0px", margin="0px"))
        style.add_class("course-focus-style")
        controls.children = (*controls.children, hint, style)
        self.key_help = hint
        for name in (css_class, "course-explorer", self.instance_class):
            self.widget.add_class(name)

    @property
    def instance_class(self) -> str:
        """A CSS class only this explorer's widget has."""
        return f"course-id-{self.widget.model_id}"

    def _static_controls(self) -> list:
        raise NotImplementedError(f"{type(self).__name__} lists no controls for the offline site")

    def display_data(self) -> dict:
        """What displaying the explorer sends: the widget's view, the picture it shows now
        (``text/html`` with its alt text, ``image/png``) and that text as ``text/plain``.

        The view is the data ipywidgets 7 (``_ipython_display_``) and 8
        (``_repr_mimebundle_``) both send for a widget; the picture is the one in the
        explorer's ``output``, made by :func:`._display.image_bundle`.
        """
        view = {"version_major": 2, "version_minor": 0, "model_id": self.widget.model_id}
        shown = self.output.outputs
        picture = dict(shown[-1]["data"]) if shown else {"text/plain": self.title}
        return {**picture, WIDGET_VIEW: view}

    def _ipython_display_(self):
        from IPython.display import display

        from .static_export import register

        display(self.display_data(), raw=True)
        script = {"application/javascript": naming_script(self.instance_class)}
        meta = {SCRIPT_METADATA: {"explorer_names": self.widget.model_id}}
        display(script, raw=True, metadata=meta)
        register(self)
