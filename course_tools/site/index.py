"""The site's front page: the lesson table, built from the notebooks and the README.

Each row's number and title come from the notebook (its file name and first heading);
the topic and the paper's sections come from the lesson table in README.md, so the page
cannot drift from either.
"""

import html
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One row of the lesson table."""

    number: int  # from the file name: 03_... is 3
    label: str  # "Lesson 3", "Project", "Review": the heading's part before " · "
    title: str  # the heading's part after " · "
    page: str  # the page's file name, relative to the index
    topic: str = ""
    paper: str = ""


def readme_rows(readme: str) -> dict[str, tuple[str, str]]:
    """{notebook stem: (topic, paper sections)} from README's table rows.

    A row is a Markdown table line whose second cell is a notebook name in backticks:
    ``| 3 | `03_scaled_dot_product_attention` | softmax(QKᵀ/√d_k)V, masks | §3.2.1 | ... |``.
    """
    rows = {}
    for line in readme.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(r"`\d\d_\w+`", cells[1]):
            rows[cells[1].strip("`")] = (cells[2], cells[3])
    return rows


def readme_title(readme: str) -> str:
    """The README's first level-1 heading: the course's name."""
    for line in readme.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise ValueError("README.md has no '# ' heading to use as the course's name")


def make_entry(stem: str, heading: str, rows: dict[str, tuple[str, str]]) -> Entry:
    """The table row of notebook ``stem`` (e.g. "03_scaled_...") titled ``heading``."""
    match = re.match(r"(\d+)_", stem)
    if match is None:
        raise ValueError(f"stem must start with a lesson number and '_', got {stem!r}")
    label, _, title = heading.rpartition(" · ")
    topic, paper = rows.get(stem, ("", ""))
    return Entry(int(match.group(1)), label, title, f"{stem}.html", topic, paper)


def inline_markdown(text: str) -> str:
    """Escaped HTML for a table cell, with `code` spans kept as code."""
    parts = re.split(r"`([^`]*)`", text)
    return "".join(
        f"<code>{html.escape(part)}</code>" if i % 2 else html.escape(part)
        for i, part in enumerate(parts)
    )


def _row(entry: Entry) -> str:
    name = f"{entry.label}: {entry.title}" if entry.label else entry.title
    link = f'<a href="{html.escape(entry.page, quote=True)}">{html.escape(name)}</a>'
    cells = [str(entry.number), link, inline_markdown(entry.topic), inline_markdown(entry.paper)]
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; color: #1b1b1b; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.5rem; }
th, td { border-bottom: 1px solid #c8c8c8; padding: 0.4rem 0.6rem; text-align: left;
         vertical-align: top; }
a { color: #1f4e99; }
"""


def index_html(course: str, entries: list[Entry], note: str) -> str:
    """The complete front page: the course's name, a note, and the lesson table."""
    rows = "\n".join(_row(entry) for entry in sorted(entries, key=lambda e: e.number))
    headings = "".join(f'<th scope="col">{h}</th>' for h in ("#", "Lesson", "Topic", "Paper"))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(course)}</title>
<style>{STYLE}</style>
</head>
<body>
<main>
<h1>{html.escape(course)}</h1>
<p>{html.escape(note)}</p>
<table>
<caption>Lessons</caption>
<thead><tr>{headings}</tr></thead>
<tbody>
{rows}
</tbody>
</table>
</main>
</body>
</html>
"""
