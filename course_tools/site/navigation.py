"""Ways around the site: previous and next lesson, the page's contents, links in the text.

Each page gets a course bar (back to the index, previous and next lesson), a list of
links to its ``##`` headings, and the same previous/next links at its foot. A recap's
plain "**Next:** lesson 4 ..." becomes a link to lesson 4's page when the site has one.
"""

import html
import re
from dataclasses import dataclass

from bs4 import BeautifulSoup

from .index import Entry

NEXT_LINE = re.compile(r"^(\s*\*\*Next:?\*\*:?)(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Link:
    href: str
    text: str  # "Lesson 3: Scaled dot-product attention"


@dataclass(frozen=True)
class Neighbours:
    previous: Link | None
    next: Link | None
    mentions: tuple[tuple[str, str], ...] = ()  # (phrase in the text, page it names)


def _link(entry: Entry) -> Link:
    return Link(entry.page, f"{entry.label}: {entry.title}" if entry.label else entry.title)


def phrase(entry: Entry) -> str:
    """How the lessons' text names a page: "lesson 4", "the project", "the review"."""
    label = entry.label or entry.title
    return label.lower() if re.fullmatch(r"Lesson \d+", label) else f"the {label.lower()}"


def plan(entries: list[Entry]) -> dict[str, Neighbours]:
    """{page: its neighbours} for the pages of one site, in lesson order."""
    ordered = sorted(entries, key=lambda entry: entry.number)
    pages = [entry.page for entry in ordered]
    if len(set(pages)) != len(pages):
        raise ValueError(f"entries must name distinct pages; got {pages}")
    mentions = tuple((phrase(entry), entry.page) for entry in ordered)
    return {
        entry.page: Neighbours(
            _link(ordered[i - 1]) if i > 0 else None,
            _link(ordered[i + 1]) if i + 1 < len(ordered) else None,
            mentions,
        )
        for i, entry in enumerate(ordered)
    }


def link_mentions(markdown: str, mentions) -> str:
    """A "**Next:** ..." line's first mention of a page ("lesson 4") made a link to it."""

    def one(match: re.Match) -> str:
        start, rest = match.groups()
        if "](" in rest:  # already links somewhere
            return match.group(0)
        found = [
            (hit, page)
            for words, page in mentions
            for hit in [re.search(rf"\b{re.escape(words)}\b", rest, flags=re.IGNORECASE)]
            if hit
        ]
        if not found:
            return match.group(0)
        hit, page = min(found, key=lambda pair: pair[0].start())
        return f"{start}{rest[: hit.start()]}[{hit.group(0)}]({page}){rest[hit.end() :]}"

    return NEXT_LINE.sub(one, markdown)


def bar_html(neighbours: Neighbours | None, banner: str = "") -> str:
    """The course bar at the top of a page: index, previous, next, and a banner."""
    parts = ['<a href="index.html">&larr; All lessons</a>']
    if neighbours and neighbours.previous:
        parts.append(_anchor(neighbours.previous, "Previous", "prev"))
    if neighbours and neighbours.next:
        parts.append(_anchor(neighbours.next, "Next", "next"))
    if banner:
        parts.append(f'<span class="course-banner">{html.escape(banner)}</span>')
    items = "".join(f"<li>{part}</li>" for part in parts)
    return f'<nav class="course-nav" aria-label="Course"><ul>{items}</ul></nav>'


def pager_html(neighbours: Neighbours | None) -> str:
    """Previous and next lesson at the foot of a page ("" for a page without either)."""
    if neighbours is None or not (neighbours.previous or neighbours.next):
        return ""
    parts = []
    if neighbours.previous:
        parts.append(_anchor(neighbours.previous, "Previous", "prev"))
    if neighbours.next:
        parts.append(_anchor(neighbours.next, "Next", "next"))
    items = "".join(f"<li>{part}</li>" for part in parts)
    return f'<nav class="course-pager" aria-label="Previous and next lesson"><ul>{items}</ul></nav>'


def _anchor(link: Link, word: str, rel: str) -> str:
    href = html.escape(link.href, quote=True)
    return f'<a href="{href}" rel="{rel}">{word}: {html.escape(link.text)}</a>'


def headings(page: str) -> list[tuple[str, str]]:
    """(anchor id, text) of each ``##`` heading of the page's markdown cells."""
    soup = BeautifulSoup(page, features="html.parser")
    found = []
    for heading in soup.select(".jp-MarkdownCell h2[id]"):
        for anchor in heading.select("a.anchor-link"):
            anchor.decompose()
        found.append((heading["id"], heading.get_text(" ", strip=True)))
    return found


def contents_html(items: list[tuple[str, str]]) -> str:
    """The page's table of contents: a labelled list of links to its headings."""
    if not items:
        return ""
    links = "".join(
        f'<li><a href="#{html.escape(ident, quote=True)}">{html.escape(text)}</a></li>'
        for ident, text in items
    )
    return (
        '<nav class="course-toc" aria-label="Contents"><details open>'
        f"<summary>Contents</summary><ul>{links}</ul></details></nav>"
    )


TOC_MARK = "<!-- course-contents -->"


def add_contents(page: str) -> str:
    """The page with its table of contents where the template left ``TOC_MARK``."""
    if page.count(TOC_MARK) != 1:
        raise ValueError(f"page must hold the mark {TOC_MARK!r} once")
    return page.replace(TOC_MARK, contents_html(headings(page)))
