"""Operate an explorer with the keyboard alone, as a learner who uses no mouse.

Focus starts on the explorer's first control (where Tab from the text above lands); from
there only keys are pressed. Each step Tabs forward to one control, checks that it shows a
focus ring of at least 2 px, presses a key on it, and checks that focus is still there
(JupyterLab must not have taken the key to move between cells) and that the picture
changed. A failure says which control, which key, and what happened instead.
"""

import time
from dataclasses import dataclass

FOCUSABLE = "button, input, select, textarea, [tabindex]:not([tabindex='-1'])"

FOCUSED = """([widget, control]) => {
    const box = document.querySelector(widget), el = document.activeElement;
    if (!box || !el || !box.contains(el)) return {inside: false, tag: el ? el.outerHTML.slice(0, 120) : ""};
    const style = getComputedStyle(el);
    const ring = style.outlineStyle === "none" ? 0 : parseFloat(style.outlineWidth) || 0;
    return {
        inside: true,
        target: control === null ? false : el.closest(`${widget} ${control}`) !== null,
        ring: ring,
        tag: el.outerHTML.slice(0, 120),
    };
}"""


@dataclass(frozen=True)
class Step:
    name: str  # what the learner changes, for messages
    control: str  # CSS selector, within the explorer, of the element to focus and operate
    key: str  # the key pressed on it (playwright's names: "ArrowRight", "Space", "Enter"...)
    redraws: bool = True  # False for a control that only prepares another (a picker)


def start(page, widget: str) -> None:
    """Put focus on the explorer's first focusable control."""
    page.locator(widget).locator(FOCUSABLE).first.focus()


def tab_to(page, widget: str, step: Step, max_tabs: int = 40) -> dict:
    """Press Tab until ``step.control`` has focus; focus must stay inside the explorer."""
    for _ in range(max_tabs + 1):
        state = page.evaluate(FOCUSED, [widget, step.control])
        if not state["inside"]:
            raise AssertionError(
                f"{step.name}: Tab left the explorer before reaching {step.control}; "
                f"focus is on {state['tag']!r}"
            )
        if state["target"]:
            return state
        page.keyboard.press("Tab")
    raise AssertionError(f"{step.name}: {max_tabs} Tabs never reached {step.control}")


def operate(page, widget: str, steps, picture, settle: float = 0.3) -> list[str]:
    """Do ``steps`` in order; ``picture(old)`` waits for a picture other than ``old``.

    ``picture(None)`` returns the one on show. Returns the pictures seen, the first first.
    """
    start(page, widget)
    seen = [picture(None)]
    for step in steps:
        state = tab_to(page, widget, step)
        if state["ring"] < 2:
            raise AssertionError(
                f"{step.name}: the focused control shows no focus ring of 2 px or more "
                f"(outline {state['ring']} px): {state['tag']!r}"
            )
        page.keyboard.press(step.key)
        time.sleep(settle)  # let a key that moved focus elsewhere show it
        after = page.evaluate(FOCUSED, [widget, step.control])
        if not after["inside"]:
            raise AssertionError(
                f"{step.name}: pressing {step.key} took focus out of the explorer, "
                f"to {after['tag']!r}"
            )
        if step.redraws:
            try:
                seen.append(picture(seen[-1]))
            except AssertionError as error:
                raise AssertionError(f"{step.name} ({step.key}): {error}") from None
    return seen
