"""A check's box is readable in JupyterLab's light and dark themes, and outside JupyterLab.

The colours are read from the HTML a result produces and the contrast ratios computed as
WCAG 2.1 defines them: text needs 4.5:1 against what is behind it (AA), the box's coloured
edge 3:1 against the page and the box (non-text contrast). Where the HTML uses a JupyterLab
theme variable, each theme's value is used, and its fallback outside JupyterLab; an untrusted
notebook drops the declarations that use variables, and then the text takes the theme's
colour over the page. The outcome itself never depends on colour: see test_checks.py.
"""

import re
from pathlib import Path

import pytest

from course_lib.checks import FAILED, NOT_DONE, PASSED, Result

# JupyterLab 4's themes (themes/@jupyterlab/theme-*-extension/index.css); the notebook's page
# is --jp-layout-color0. Checked against the installed themes below.
THEMES = {
    "light": {
        "--jp-content-font-color1": "rgba(0, 0, 0, 0.87)",
        "--jp-layout-color0": "#ffffff",
        "--jp-layout-color1": "#ffffff",
    },
    "dark": {
        "--jp-content-font-color1": "#ffffff",
        "--jp-layout-color0": "#111111",
        "--jp-layout-color1": "#212121",
    },
}
PAGES = ("#ffffff", "#111111")  # a white page and JupyterLab's dark one
STATUSES = (PASSED, FAILED, NOT_DONE)


def rgba(text: str) -> tuple[float, float, float, float]:
    """``#rrggbb``, ``rgb(r, g, b)`` or ``rgba(r, g, b, a)`` as (r, g, b, alpha)."""
    text = text.strip()
    if re.fullmatch(r"#[0-9a-fA-F]{6}", text):
        return (*(int(text[i : i + 2], 16) for i in (1, 3, 5)), 1.0)
    found = re.fullmatch(r"rgba?\(([^)]*)\)", text)
    if not found:
        raise ValueError(f"text is not a colour this test reads: {text!r}")
    parts = [float(p) for p in found[1].split(",")]
    return (*parts[:3], parts[3] if len(parts) == 4 else 1.0)


def over(top: str | tuple, below: str | tuple) -> tuple[float, float, float, float]:
    """``top`` painted over the opaque ``below``, as a browser blends them."""
    *fg, alpha = rgba(top) if isinstance(top, str) else top
    *bg, _ = rgba(below) if isinstance(below, str) else below
    return (*(alpha * f + (1 - alpha) * b for f, b in zip(fg, bg, strict=True)), 1.0)


def luminance(colour) -> float:
    """WCAG 2.1 relative luminance of an opaque colour."""
    *channels, _ = rgba(colour) if isinstance(colour, str) else colour

    def linear(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_the_contrast_ratio_is_the_one_wcag_defines():
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # just fails AA
    assert contrast("#ffffff", "#ffffff") == pytest.approx(1)
    assert over("rgba(0, 0, 0, 0.5)", "#ffffff")[:3] == (127.5, 127.5, 127.5)


def declarations(status: str) -> dict[str, str]:
    """The CSS declarations of the box a result of this status shows in a notebook."""
    page = Result("3.1", status, "a message with `code`")._repr_html_()
    style = re.match(r'<div style="([^"]*)">', page)[1]
    pairs = (d.split(":", 1) for d in style.split(";") if d.strip())
    return {name.strip(): value.strip() for name, value in pairs}


def resolve(value: str, theme: dict | None) -> str | None:
    """A CSS value with ``var(--name, fallback)`` resolved for a theme (None: no JupyterLab)."""
    found = re.fullmatch(r"var\((--[\w-]+),\s*(.+)\)", value)
    if not found:
        return value
    return theme[found[1]] if theme is not None else found[2]


def boxes(status: str):
    """(where, text colour, what is behind the text) for every way the box is shown."""
    css = declarations(status)
    tint = re.fullmatch(r"linear-gradient\((rgba\([^)]*\)), \1\)", css["background-image"])[1]
    for name, theme in THEMES.items():
        text = resolve(css["color"], theme)
        yield f"JupyterLab {name}", text, over(tint, resolve(css["background-color"], theme))
        # Untrusted notebook: the sanitiser drops the declarations that use var().
        page = theme["--jp-layout-color0"]
        yield f"JupyterLab {name}, untrusted", theme["--jp-content-font-color1"], over(tint, page)
    text, base = resolve(css["color"], None), resolve(css["background-color"], None)
    yield "outside JupyterLab", text, over(tint, base)


@pytest.mark.parametrize("status", STATUSES)
def test_the_text_of_a_check_meets_wcag_aa_in_every_theme(status):
    for where, text, behind in boxes(status):
        ratio = contrast(over(text, behind), behind)
        assert ratio >= 4.5, f"{status} in {where}: text contrast {ratio:.2f}"


@pytest.mark.parametrize("status", STATUSES)
def test_the_edge_of_a_check_stands_out_from_light_and_dark_pages(status):
    edge = re.fullmatch(r"4px solid (#[0-9a-fA-F]{6})", declarations(status)["border-left"])[1]
    behind = [rgba(page) for page in PAGES]  # the pages themselves
    behind += [background for _, _, background in boxes(status)]  # and the box beside it
    for background in behind:
        assert contrast(edge, background) >= 3, (status, edge, background)


def test_the_text_and_background_follow_the_theme_and_fall_back_together():
    for status in STATUSES:
        css = declarations(status)
        assert css["color"].startswith("var(--jp-content-font-color1,")
        assert css["background-color"].startswith("var(--jp-layout-color1,")
        assert "--jp" not in css["background-image"] + css["border-left"]


def _installed_theme(name: str) -> str | None:
    try:
        import jupyterlab
    except ImportError:
        return None
    themes = Path(jupyterlab.__file__).parent / "themes" / "@jupyterlab"
    css = themes / f"theme-{name}-extension" / "index.css"
    return css.read_text(encoding="utf-8") if css.is_file() else None


@pytest.mark.parametrize("name", THEMES)
def test_the_theme_colours_are_jupyterlabs(name):
    css = _installed_theme(name)
    if css is None:
        pytest.skip("JupyterLab's themes are not installed here")
    for variable, expected in THEMES[name].items():
        value = re.search(rf"{variable}:\s*([^;]+);", css)[1].strip()
        fallback = re.fullmatch(r"var\(--[\w-]+,\s*(.+)\)", value)
        value = fallback[1] if fallback else value
        named = {"white": "#ffffff", "black": "#000000"}
        if re.fullmatch(r"#[0-9a-fA-F]{3}", value):
            value = "#" + "".join(c * 2 for c in value[1:])
        assert rgba(named.get(value, value)) == pytest.approx(rgba(expected)), variable
