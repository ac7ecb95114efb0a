"""The static site opens from disk, with the network off; its explorers respond to the keyboard.

By default the site is built here for two lessons of the instructors' version (each lesson
is run in a copy, about 30 s): lesson 1, whose text holds an equation and which has the
sequence-cost explorer, and lesson 5, the positional-encoding explorer. To test a site built
beforehand, for example the learners' full site of ``make site``, set ``SITE_DIR=build/site``.

Chromium runs headless with every request that is not a ``file://`` URL aborted and
recorded: a page that tried to reach a CDN fails the test even if it still rendered. Every
page is scanned with axe-core at a desktop width and at a phone's (390 px), where nothing
may scroll sideways but a wide picture's own box. It shares ``conftest.py``'s chromium, and
none of its JupyterLab fixtures.
"""

import os
import re
from pathlib import Path

import accessibility
import pytest
from keyboard import Step, operate

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

    def __init__(self, browser, width: int = 1300):
        self.context = browser.new_context(offline=True, viewport={"width": width, "height": 900})
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


def test_pages_link_to_their_neighbours_and_list_their_sections(site, tab):
    pages = lesson_pages(site)
    for i, path in enumerate(pages):
        page = tab.open(path)
        neighbours = {"prev": pages[i - 1] if i else None, "next": pages[i + 1 : i + 2]}
        neighbours["next"] = neighbours["next"][0] if neighbours["next"] else None
        for rel, neighbour in neighbours.items():
            links = page.locator(f"nav.course-nav a[rel={rel}]")
            wanted = [] if neighbour is None else [neighbour.name]
            assert [a.get_attribute("href") for a in links.all()] == wanted, (path.name, rel)
        for link in page.locator("nav.course-nav a[href]").all():
            assert (site / link.get_attribute("href")).is_file(), (path.name, link)
        toc = page.locator("nav.course-toc a[href^='#']")
        assert toc.count() >= 2, f"{path.name}: no table of contents"
        for anchor in toc.all():
            target = anchor.get_attribute("href")[1:]
            assert page.locator(f"[id='{target}']").count() == 1, (path.name, target)
    tab.assert_clean()


def explorer_pages(site: Path) -> list[Path]:
    return [p for p in lesson_pages(site) if "course-static-explorer" in p.read_text("utf-8")]


# The picture on show and the settings the controls show, read from the page itself.
READ_EXPLORER = """section => {
    const img = section.querySelector(".course-explorer-picture");
    const data = JSON.parse(section.querySelector(".course-explorer-data").textContent);
    const shown = Array.from(section.querySelectorAll("[data-control]"), box => {
        const checked = box.querySelector("input[type=radio]:checked");
        if (checked) return Number(checked.value);
        const tick = box.querySelector("input[type=checkbox]");
        if (tick) return tick.checked ? 1 : 0;
        const range = box.querySelector("input[type=range]");
        if (range) return Number(range.value);
        const fixed = box.querySelector("textarea, input");  // shown, not changeable
        return data.controls[Number(box.dataset.control)].options.indexOf(fixed.value);
    });
    const spoken = section.querySelector(".course-explorer-announce").textContent;
    return {src: img.getAttribute("src"), alt: img.getAttribute("alt"), shown: shown, spoken,
            drawn: img.complete && img.naturalWidth > 0, data: data};
}"""


def keyboard_steps(page, section: str) -> list[Step]:
    """One step per control the page lets you change, with a key that changes it."""
    steps = []
    for box in page.locator(f"{section} [data-control]").all():
        name, index = box.get_attribute("data-name"), box.get_attribute("data-control")
        control = f"[data-control='{index}']"
        if box.locator("input[type=range]").count():
            slider = box.locator("input[type=range]")
            at_end = slider.input_value() == slider.get_attribute("max")
            steps.append(Step(name, f"{control} input", "ArrowLeft" if at_end else "ArrowRight"))
        elif box.locator("input[type=radio]").count():
            radios = box.locator("input[type=radio]")
            last = radios.nth(radios.count() - 1).is_checked()
            steps.append(Step(name, f"{control} input", "ArrowUp" if last else "ArrowDown"))
        elif box.locator("input[type=checkbox]").count():
            steps.append(Step(name, f"{control} input", "Space"))
    return steps


def test_explorers_respond_to_the_keyboard_offline(site, tab):
    """Each control, reached with Tab and moved with a key, brings its own picture."""
    pages = explorer_pages(site)
    assert pages, "no page of the site shows an explorer"
    for path in pages:
        page = tab.open(path)
        for section in page.locator("section.course-static-explorer").all():
            selector = f"#{section.get_attribute('id')}"

            def picture(old, section=section, selector=selector, path=path, page=page):
                for _ in range(40):
                    now = section.evaluate(READ_EXPLORER)
                    if now["drawn"] and now["src"] != old:
                        break
                    page.wait_for_timeout(100)
                else:
                    raise AssertionError(f"{path.name} {selector}: the picture did not change")
                # The controls show exactly the settings this picture was drawn with.
                state = [s for s in now["data"]["states"] if s["src"] == now["src"]]
                assert [s["v"] for s in state] == [now["shown"]], (path.name, now["shown"])
                assert now["alt"] == state[0]["alt"] and len(now["alt"]) > 20, path.name
                if old is not None:  # a screen reader hears what the new picture shows
                    assert now["spoken"] == now["alt"], path.name
                return now["src"]

            steps = keyboard_steps(page, selector)
            assert steps, f"{path.name} {selector}: no control to change"
            operate(page, selector, steps, picture)
    tab.assert_clean()


@pytest.mark.parametrize("width", [1300, 390])
def test_every_page_passes_axe_and_fits_the_width(site, browser, width):
    tab = OfflineTab(browser, width)
    try:
        for path in [site / "index.html", *lesson_pages(site)]:
            page = tab.open(path)
            page.wait_for_load_state("load")
            found = accessibility.violations(page)
            assert found == [], accessibility.report(found, f"{path.name} at {width} px")
            overflow = page.evaluate("document.documentElement.scrollWidth")
            assert overflow <= width, f"{path.name} scrolls sideways at {width} px ({overflow})"
        tab.assert_clean()
    finally:
        tab.context.close()


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
