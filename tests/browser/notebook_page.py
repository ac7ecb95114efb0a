"""Drive one notebook in JupyterLab and report what a learner would see go wrong.

JupyterLab 4 keeps off-screen cells out of layout (content-visibility), so everything is
read with ``textContent`` and the notebook is run through the menu, never by scrolling.
Every wait has a timeout; a problem raises ``AssertionError`` saying what was seen.
"""

import re
import time
from pathlib import Path

import nbformat

# What a learner sees when a widget or a cell goes wrong.
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\w*(Error|Exception)(: |$)", re.M)
WIDGET_ERROR = re.compile(r"Error displaying widget|Failed to (create|load|render)", re.I)
WIDGET_REPR = re.compile(r"^(HBox|VBox|Output)\(")  # the text shown when no widget manager runs

READ_OUTPUTS = """() => Array.from(document.querySelectorAll('.jp-OutputArea-output'), el => ({
    mime: el.getAttribute('data-mime-type') || '',
    text: (el.textContent || '').trim(),
    widgetError: Array.from(el.querySelectorAll('.jupyter-widgets-error-widget'),
                            e => (e.getAttribute('title') || e.textContent || '?').trim()),
}))"""


READ_PICTURE = """selector => {
    const img = document.querySelector(selector);
    return img && {src: img.getAttribute('src'), drawn: img.complete && img.naturalWidth > 0};
}"""


class NotebookPage:
    """One JupyterLab tab showing ``notebook`` (a file in the server's root directory).

    ``console`` collects the browser's console errors and uncaught page errors while the
    tab is open.
    """

    def __init__(self, page, base_url: str, token: str, notebook: Path):
        self.page, self.notebook = page, Path(notebook)
        self.url = f"{base_url}/lab/tree/{self.notebook.name}?reset&token={token}"
        self.console: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.console.append(f"page error: {error}"))

    def _console(self, message) -> None:
        if message.type == "error":
            self.console.append(f"console error: {message.text}")

    def open(self, timeout: float = 90) -> None:
        """Load the notebook and wait until its kernel is idle (Run All before that runs nothing)."""
        self.page.goto(self.url, timeout=timeout * 1000)
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout * 1000)
        idle = self.page.locator(
            ".jp-StatusBar-Widget", has_text=re.compile(r"\(ipykernel\) \| Idle")
        )
        idle.first.wait_for(timeout=timeout * 1000)

    def run_all(self, timeout: float = 240) -> None:
        """Run All Cells from the menu and wait until no cell is queued or running."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            prompts = self._prompts()
            if any(re.search(r"\d", p) for p in prompts) and not any("*" in p for p in prompts):
                return
            time.sleep(0.5)
        raise AssertionError(f"{self.notebook.name}: Run All did not finish within {timeout} s")

    def _prompts(self) -> list[str]:
        return self.page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()

    def problems(self) -> list[str]:
        """Everything wrong on the page: tracebacks, widget errors, unrun cells, console errors."""
        found = []
        for out in self.page.evaluate(READ_OUTPUTS):
            text = out["text"][:300]
            if out["mime"] == "application/vnd.jupyter.stderr" and TRACEBACK.search(out["text"]):
                found.append(f"Python traceback in an output: {text}")
            elif out["widgetError"]:
                found.append(f"widget error in an output: {' | '.join(out['widgetError'])}")
            elif WIDGET_ERROR.search(out["text"]):
                found.append(f"widget error in an output: {text}")
            elif out["mime"] == "text/plain" and WIDGET_REPR.match(out["text"]):
                found.append(f"a widget shown as text (no widget manager?): {text}")
        expected = sum(
            1
            for cell in nbformat.read(self.notebook, as_version=4).cells
            if cell.cell_type == "code" and cell.source.strip()
        )
        ran = sum(1 for p in self._prompts() if re.search(r"\d", p))
        if ran != expected:
            found.append(f"{ran} of {expected} code cells ran (Run All stops at an error)")
        counts = {}  # the same console error repeats, once per widget
        for message in self.console:
            counts[message] = counts.get(message, 0) + 1
        return found + [m if n == 1 else f"{m} (x{n})" for m, n in counts.items()]

    def assert_no_problems(self, when: str) -> None:
        found = self.problems()
        if found:
            listing = "\n  ".join(found)
            raise AssertionError(f"{self.notebook.name}, {when}:\n  {listing}")

    def picture(self, widget: str, old: str | None = None, timeout: float = 20) -> str:
        """Wait until ``widget`` shows a drawn picture other than ``old``; return its ``src``.

        The picture must stay the same for one more poll, so that an update still on its
        way is not taken for the final one.
        """
        deadline, seen = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            state = self.page.evaluate(READ_PICTURE, f"{widget} .course-picture img")
            src = state["src"] if state and state["drawn"] and state["src"] != old else None
            if src and src == seen:
                return src
            seen = src
            time.sleep(0.5)
        what = "no picture" if old is None else "the picture did not change"
        problems = "\n  ".join(self.problems()) or "no error shown"
        raise AssertionError(
            f"{self.notebook.name}: {what} in {widget} within {timeout} s; on the page:\n  {problems}"
        )

    def nudge_slider(self, widget: str, control: str) -> None:
        """Focus a slider's handle and press Page Up (five steps), as a learner at the keyboard."""
        handle = self.page.locator(f"{widget} {control} .noUi-handle").first
        handle.focus()
        handle.press("PageUp")

    def screenshot(self, selector: str, path: Path | None = None, timeout: float = 10) -> bytes:
        """A screenshot of the first element matching ``selector``, once it has stopped moving.

        Cells scrolled into view are laid out only then, so what lies above an element can
        still grow for a moment and push it down.
        """
        element = self.page.locator(selector).first
        element.scroll_into_view_if_needed(timeout=timeout * 1000)
        deadline, before = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            box = element.bounding_box()
            if box == before:
                break
            before = box
            time.sleep(0.25)
            element.scroll_into_view_if_needed(timeout=timeout * 1000)
        return element.screenshot(path=path, timeout=timeout * 1000)

    def toggle(self, widget: str, control: str) -> None:
        self.page.locator(f"{widget} {control} input[type=checkbox]").first.click()
