"""What every explorer offers a keyboard and screen-reader user, without a browser.

No control is a menu (JupyterLab's command mode takes the arrow keys from a focused menu),
every control has a name, each explorer carries a focus ring scoped to its CSS class and a
line of key help, and displaying one sends the script that names its sliders. The browser
tests (tests/browser) find the parts by the CSS classes checked here.
"""

import json
import re

import ipywidgets as w
import pytest

from course_lib.widgets import (
    AttentionExplorer,
    DeepStackExplorer,
    PEExplorer,
    SequenceCostExplorer,
    VectorExplorer,
    lesson3_examples,
    sequence_cost,
)
from course_lib.widgets._explorer import (
    FOCUS_COLOUR,
    SCRIPT_METADATA,
    focus_style,
    help_html,
    key_help,
    naming_script,
)
from course_lib.widgets.static_export import forget_explorers, registered


@pytest.fixture(scope="module")
def explorers():
    timings = sequence_cost.measure_grid
    # no real timing here: 0.1 ms per position, every sample alike
    sequence_cost.measure_grid = lambda points, **_: {p: [1e-4 * p[1]] for p in points}
    try:
        cost = SequenceCostExplorer(n=32, d=32)
    finally:
        sequence_cost.measure_grid = timings
    return {
        "attention": AttentionExplorer(lesson3_examples(), save_dir="/tmp"),
        "pe": PEExplorer(save_dir="/tmp"),
        "vectors": VectorExplorer(),
        "stack": DeepStackExplorer(depth=2),
        "cost": cost,
    }


def descendants(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from descendants(child)


MENUS = (w.Dropdown, w.SelectMultiple, w.Select, w.RadioButtons, w.Combobox)


def test_no_explorer_has_a_menu(explorers):
    for name, explorer in explorers.items():
        menus = [type(c).__name__ for c in descendants(explorer.widget) if isinstance(c, MENUS)]
        assert not menus, f"{name} explorer has {menus}"


CONTROLS = (w.IntSlider, w.FloatSlider, w.FloatLogSlider, w.SelectionSlider, w.Checkbox)


def test_every_control_has_a_visible_name(explorers):
    for name, explorer in explorers.items():
        for control in descendants(explorer.widget):
            if isinstance(control, (*CONTROLS, w.ToggleButtons, w.Button)):
                assert control.description.strip(), f"{name}: {type(control).__name__} unnamed"
            if isinstance(control, w.ToggleButtons):
                assert all(label.strip() for label in control._options_labels), name


CLASSES = {
    "attention": {
        "course-attention-explorer": "widget",
        "course-example": "example_select",
        "course-head": "head_select",
        "course-temperature": "temperature",
        "course-scale": "scale",
        "course-causal": "causal",
        "course-save": "save_button",
        "course-picture": "output",
    },
    "pe": {
        "course-pe-explorer": "widget",
        "course-d-model": "d_model",
        "course-positions": "max_len",
        "course-position": "position",
        "course-offset": "offset",
        "course-wave-dimension": "dimension",
        "course-add-wave": "add_wave",
        "course-remove-wave": "remove_wave",
        "course-wave-list": "wave_list",
        "course-save": "save_button",
        "course-picture": "output",
    },
    "vectors": {
        "course-vector-explorer": "widget",
        "course-angle-a": "angle_a",
        "course-length-a": "length_a",
        "course-angle-b": "angle_b",
        "course-length-b": "length_b",
        "course-readout": "readout_label",
        "course-picture": "output",
    },
    "stack": {
        "course-deep-stack-explorer": "widget",
        "course-depth": "depth",
        "course-residual": "residual",
        "course-norm": "norm",
        "course-picture": "output",
    },
    "cost": {
        "course-sequence-cost-explorer": "widget",
        "course-length-n": "n_select",
        "course-width-d": "d_select",
        "course-cost-summary": "status",
        "course-picture": "output",
    },
}


@pytest.mark.parametrize("name", CLASSES)
def test_the_parts_carry_the_css_classes_the_browser_tests_use(explorers, name):
    explorer = explorers[name]
    for css_class, attribute in CLASSES[name].items():
        assert css_class in getattr(explorer, attribute)._dom_classes, (name, css_class)
    assert "course-explorer" in explorer.widget._dom_classes
    assert f"course-id-{explorer.widget.model_id}" in explorer.widget._dom_classes


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.parametrize("background", ["#ffffff", "#111111", "#212121"])  # light, dark themes
def test_the_focus_ring_contrasts_3_to_1_with_light_and_dark_backgrounds(background):
    lighter, darker = sorted([_luminance(FOCUS_COLOUR), _luminance(background)], reverse=True)
    assert (lighter + 0.05) / (darker + 0.05) >= 3


@pytest.mark.parametrize("name", CLASSES)
def test_each_explorer_carries_a_focus_ring_scoped_to_it_and_key_help(explorers, name):
    explorer = explorers[name]
    css_class = next(iter(CLASSES[name]))  # the explorer's own class comes first
    html = [c.value for c in descendants(explorer.widget) if isinstance(c, w.HTML)]
    styles = [value for value in html if "<style>" in value]
    assert styles == [focus_style(css_class)]
    rules = re.findall(r"([^{}]+)\{([^}]*)\}", styles[0].removeprefix("<style>"))
    assert rules and all(selector.startswith(f".{css_class} ") for selector, _ in rules)
    ring = next(body for selector, body in rules if ":focus-visible" in selector)
    width = re.search(r"outline: (\d+)px solid (#[0-9A-Fa-f]{6})", ring)
    assert int(width.group(1)) >= 2 and width.group(2) == FOCUS_COLOUR
    helps = [c for c in descendants(explorer.widget) if "course-key-help" in c._dom_classes]
    assert len(helps) == 1 and "Keys: Tab moves between controls" in helps[0].value


SLIDERS = (w.IntSlider, w.FloatSlider, w.FloatLogSlider, w.SelectionSlider)


@pytest.mark.parametrize("name", CLASSES)
def test_each_explorers_key_help_names_exactly_the_kinds_of_control_it_has(explorers, name):
    parts = list(descendants(explorers[name].widget))

    def has(kind):
        return any(isinstance(c, kind) for c in parts)

    expected = key_help(
        sliders=has(SLIDERS),
        choices=has(w.ToggleButtons),  # a row of toggle buttons: the arrow keys pick
        buttons=has(w.Button),  # a plain button (ToggleButtons is not one)
        checkboxes=has(w.Checkbox),
    )
    assert explorers[name].key_help.value == help_html(expected)


def test_key_help_names_only_the_keys_of_the_controls_there():
    assert key_help(sliders=True) == "Keys: Tab moves between controls · ←/→ move a slider"
    text = key_help(sliders=False, choices=True, buttons=True, checkboxes=True)
    assert "slider" not in text and "Space ticks a box" in text and "Enter presses a button" in text
    assert "←/→ pick the next choice in a row of buttons" in text


def test_explorers_with_rows_of_buttons_say_the_arrow_keys_pick_a_choice(explorers):
    for name, explorer in explorers.items():
        rows = any(isinstance(c, w.ToggleButtons) for c in descendants(explorer.widget))
        assert ("pick the next choice" in explorer.key_help.value) == rows, name


def test_focus_style_refuses_a_class_that_could_break_out_of_the_rule():
    with pytest.raises(ValueError, match="css_class must be letters, digits and hyphens"):
        focus_style("x{} body")


def test_the_naming_script_labels_handles_buttons_and_live_regions_of_one_explorer():
    script = naming_script("course-id-abc123")
    assert 'const selector = ".course-id-abc123";' in script
    for part in (
        'set(handle, "aria-label", label)',  # the slider's description names its handle
        'set(handle, "aria-valuetext", text(readout))',  # "1.00", not the log exponent "0"
        'set(group, "aria-label", text(box.querySelector(".widget-label")))',
        '"aria-pressed", String(button.classList.contains("mod-active"))',
        'set(live, "aria-live", "polite")',
        'attributeFilter: ["class"]',  # its own aria-* changes do not wake it again
        "observer.disconnect()",  # stops once its cell ran again
        'root.addEventListener("keydown", keys)',  # added once per explorer (dataset flag)
        "event.stopPropagation()",  # arrow keys never reach JupyterLab's cell navigation
        "next.focus(); next.click();",  # in a row of buttons they pick the neighbour
    ):
        assert part in script, part
    assert "node.getAttribute(name) !== value" in script  # sets only what differs: idempotent
    assert json.loads(script.split("const selector = ")[1].split(";")[0]) == ".course-id-abc123"


def test_the_naming_script_escapes_its_selector():
    script = naming_script('course-id-"x</script>')
    selector = script.split("const selector = ")[1].split(";\n")[0]
    assert json.loads(selector) == '.course-id-"x</script>'


def test_displaying_an_explorer_sends_its_naming_script_and_registers_it(explorers, monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: shown.append((a, k)))
    forget_explorers()
    explorer = explorers["vectors"]
    explorer._ipython_display_()
    explorer._ipython_display_()  # shown twice, registered once
    (view, raw), (script, options), *_ = shown
    assert view == (explorer.display_data(),) and raw == {"raw": True}  # widget and picture
    assert script[0] == {"application/javascript": naming_script(explorer.instance_class)}
    assert options == {
        "raw": True,
        "metadata": {SCRIPT_METADATA: {"explorer_names": explorer.widget.model_id}},
    }
    assert registered() == [explorer]
    forget_explorers()
    assert registered() == []
