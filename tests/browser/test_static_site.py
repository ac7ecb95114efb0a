"""The static site opens from disk, with the network off, and its widgets and math render.

By default the site is built here for two lessons from ``solutions/`` (stored outputs and
widget state, so nothing runs): lesson 1, whose text holds an equation and which has a
widget, and lesson 5, the positional-encoding explorer. To test a site built beforehand,
for example the learners' full site of ``make site``, set ``SITE_DIR=build/site``.

Chromium runs headless with every request that is not a ``file://`` URL aborted and
recorded: a page that tried to reach a CDN fails the test even if it still rendered.
It shares ``conftest.py``'s chromium, and none of its JupyterLab fixtures.
"""

import os
import re
from pathlib import Path

import pytest

from course_tools.site import build_site

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ["01", "05"]
MATH_PAGE = "01_sequence_problem.html"  # its markdown holds $$h_t = f(h_{t-1}, x_t)$$


def _unavailable(reason: str):
    if os.environ.get("BROWSER_TESTS_REQUIRED") == "1":
        pytest.fail(f"browser tests required but {reason}", pytrace=False)
    pytest.skip(f"static-site browser test skipped: {reason}")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A built site: $SITE_DIR, or lessons 1 and 5 of the instructors' site built now."""
    if os.environ.get("SITE_DIR"):
        folder = Path(os.environ["SITE_DIR"]).resolve()
        if not (folder / "index.html").is_file():
            pytest.fail(f"SITE_DIR={folder} holds no index.html: build it with make site")
        return folder
    folder = tmp_path_factory.mktemp("site")
    try:
        failures = build_site(
            ROOT / "solutions",
            folder,
            LESSONS,
            instructors=True,
            npm_dir=ROOT / "build" / "npm",
            readme=ROOT / "README.md",
            log=lambda _: None,
        )
    except RuntimeError as error:  # npm missing
        _unavailable(str(error))
    assert failures == []
    return folder


class OfflineTab:
    """A browser tab that may load only file:// URLs, recording everything else it tried."""

    def __init__(self, browser):
        self.context = browser.new_context(offline=True, viewport={"width": 1300, "height": 900})
        self.context.set_default_timeout(30_000)
        self.blocked, self.failed, self.errors = [], [], []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("requestfailed", lambda request: self.failed.append(request.url))

    def _route(self, route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def open(self, path: Path):
        self.page.goto(path.as_uri())
        return self.page

    def wait_for(self, locator, what: str, state: str = "visible"):
        """Wait for ``locator``; on a timeout, fail saying what the page tried and missed."""
        from playwright.sync_api import TimeoutError

        try:
            locator.first.wait_for(state=state)
        except TimeoutError:
            pytest.fail(
                f"{what} never appeared; blocked: {self.blocked}, failed to load: "
                f"{self.failed}, JavaScript errors: {self.errors}"
            )

    def assert_clean(self):
        assert self.blocked == [], f"the page tried to reach the network: {self.blocked}"
        assert self.failed == [], f"files the page could not load: {self.failed}"
        assert self.errors == [], f"JavaScript errors: {self.errors}"


@pytest.fixture
def tab(browser):
    tab = OfflineTab(browser)
    try:
        yield tab
    finally:
        tab.context.close()


def lesson_pages(site: Path) -> list[Path]:
    return sorted(site.glob("[0-9][0-9]_*.html"))


def test_no_page_names_a_remote_script_or_stylesheet(site):
    for page in [site / "index.html", *lesson_pages(site)]:
        text = page.read_text(encoding="utf-8")
        remote = re.findall(r'<(?:script|link)[^>]*(?:src|href)="(?:https?:)?//[^"]*"', text)
        assert remote == [], f"{page.name} loads {remote}"
        for local in re.findall(r'<script[^>]*\bsrc="([^"]+)"', text):
            assert (site / local).is_file(), f"{page.name} loads {local}, which is missing"
        notebooks = re.findall(r'href="(\d\d_[^"/]*\.ipynb)', text)
        assert notebooks == [], f"{page.name} links to notebooks, not pages: {notebooks}"


def test_index_lists_every_page_and_its_links_open_them(site, tab):
    page = tab.open(site / "index.html")
    links = page.locator("table a")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert hrefs == [p.name for p in lesson_pages(site)]
    assert page.locator("tbody tr").count() == len(hrefs) > 0
    first = links.first.inner_text()
    assert re.match(r"(Lesson \d+|Project|Review): \S", first), first
    links.first.click()
    page.wait_for_load_state("load")
    assert page.url.endswith(hrefs[0])
    assert page.locator("nav.course-nav a[href='index.html']").count() == 1
    tab.assert_clean()


def widget_pages(site: Path) -> list[Path]:
    marker = "application/vnd.jupyter.widget-view+json"
    return [p for p in lesson_pages(site) if marker in p.read_text(encoding="utf-8")]


def test_widgets_show_their_controls_and_last_picture_offline(site, tab):
    pages = widget_pages(site)
    assert pages, "no page of the site shows a widget"
    for path in pages:
        page = tab.open(path)
        picture = page.locator(".jupyter-widgets .widget-output img[src^='data:image/png']")
        tab.wait_for(picture, f"{path.name}: the widget's picture")
        width = picture.first.evaluate("img => img.complete ? img.naturalWidth : 0")
        assert width > 100, f"{path.name}: the widget's picture did not decode"
        assert page.locator(".jupyter-widgets .widget-slider").count() > 0, path.name
        # A view the renderer could not create is replaced by its error widget.
        broken = page.locator(".jupyter-widgets-error-widget").count()
        assert broken == 0, f"{path.name}: {broken} widget(s) failed to render"
    tab.assert_clean()


def test_mathjax_renders_the_equations_offline(site, tab):
    path = site / MATH_PAGE
    if not path.is_file():
        pytest.skip(f"{MATH_PAGE} is not part of this site")
    page = tab.open(path)
    math = page.locator(".jp-MarkdownCell mjx-container svg")
    tab.wait_for(math, f"{MATH_PAGE}: an equation typeset by MathJax", state="attached")
    assert math.count() >= 1
    assert "$$h_t" not in page.inner_text("body")  # no raw TeX left on the page
    tab.assert_clean()
