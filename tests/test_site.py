"""The static site's parts: index table, asset URLs, which notebooks run, page export."""

import json
import re
from pathlib import Path

import nbformat
import pytest

from course_tools.site import assets, index, pages, select

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def notebook(*cells, **metadata):
    nb = nbformat.v4.new_notebook(cells=list(cells))
    nb.metadata.update(metadata)
    return nb


def code(source, *outputs):
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = [nbformat.v4.new_output("display_data", data=data) for data in outputs]
    return cell


md = nbformat.v4.new_markdown_cell
VIEW = {pages.WIDGET_VIEW: {"model_id": "abc", "version_major": 2, "version_minor": 0}}
STATE = {"widgets": {pages.WIDGET_STATE: {"state": {"abc": {}}, "version_major": 2}}}


# --- the index -------------------------------------------------------------------------------


def test_readme_rows_cover_every_lesson_with_a_topic_and_sections():
    rows = index.readme_rows(README)
    stems = {path.stem for path in (ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")}
    assert stems, "no lessons found"
    assert stems <= set(rows), f"README's lesson table lacks {sorted(stems - set(rows))}"
    assert all(topic and paper.startswith(("§", "all")) for topic, paper in rows.values())
    assert rows["03_scaled_dot_product_attention"][1] == "§3.2.1, Eq. 1"


def test_readme_rows_read_only_rows_naming_a_notebook():
    text = "| # | Notebook | Topic | Paper |\n|---|---|---|---|\n| 2 | `02_dots` | Dots `a·b` | §3 |\n| x | `attention` | no | no |"
    assert index.readme_rows(text) == {"02_dots": ("Dots `a·b`", "§3")}


def test_readme_title_is_the_first_level_one_heading():
    assert index.readme_title("intro\n## Sub\n# The course\n# Other") == "The course"
    with pytest.raises(ValueError, match="heading"):
        index.readme_title("## only a subheading")


def test_entry_splits_the_heading_and_numbers_from_the_file_name():
    rows = {"03_sdpa": ("Attention", "§3.2.1")}
    entry = index.make_entry("03_sdpa", "Lesson 3 · Scaled dot-product attention", rows)
    assert entry == index.Entry(
        3, "Lesson 3", "Scaled dot-product attention", "03_sdpa.html", "Attention", "§3.2.1"
    )
    review = index.make_entry("09_review", "Review · Five questions", {})
    assert (review.number, review.label, review.title, review.topic) == (
        9,
        "Review",
        "Five questions",
        "",
    )
    assert index.make_entry("04_x", "No separator", {}).label == ""
    with pytest.raises(ValueError, match="stem must start with a lesson number"):
        index.make_entry("intro", "Intro", {})


def test_inline_markdown_escapes_html_and_keeps_code_spans():
    assert index.inline_markdown("a <b> & `x<y`") == "a &lt;b&gt; &amp; <code>x&lt;y</code>"


def test_index_page_lists_entries_in_order_with_links_and_no_scripts():
    entries = [
        index.Entry(5, "Lesson 5", "Positional encoding", "05_pe.html", "Sinusoids", "§3.5"),
        index.Entry(1, "Lesson 1", "The <sequence> problem", "01_seq.html", "RNNs", "§1"),
    ]
    page = index.index_html("A course", entries, "Read me.")
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', page)
    assert links == [
        ("01_seq.html", "Lesson 1: The &lt;sequence&gt; problem"),
        ("05_pe.html", "Lesson 5: Positional encoding"),
    ]
    assert "<title>A course</title>" in page and "Read me." in page
    assert "<script" not in page and "http" not in page


# --- the pages -------------------------------------------------------------------------------


def test_title_is_the_first_markdown_heading():
    nb = notebook(code("# not markdown"), md("Intro text\n## Lesson 2 · Dots\n# Later"))
    assert pages.title_of(nb) == "Lesson 2 · Dots"
    with pytest.raises(ValueError, match="no markdown heading"):
        pages.title_of(notebook(md("no heading")))


@pytest.mark.parametrize(
    ("nb", "expected"),
    [
        (notebook(md("# T"), code("x = 1")), True),  # a lesson: no outputs yet
        (notebook(code("1", {"text/plain": "1"})), False),  # outputs, no widgets
        (notebook(code("w", VIEW)), True),  # shows a widget whose state was not stored
        (notebook(code("w", VIEW), **STATE), False),  # a solution run with its widget state
    ],
)
def test_needs_execution(nb, expected):
    assert pages.needs_execution(nb) is expected


def test_the_repository_lessons_need_running_and_solutions_do_not():
    lesson = nbformat.read(ROOT / "lessons/05_positional_encoding.ipynb", as_version=4)
    solution = nbformat.read(ROOT / "solutions/05_positional_encoding.ipynb", as_version=4)
    assert pages.needs_execution(lesson) and not pages.needs_execution(solution)


def test_select_takes_every_lesson_or_the_named_ones(tmp_path):
    for name in ("01_a.ipynb", "03_b.ipynb", "notes.ipynb"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in select(tmp_path)] == ["01_a.ipynb", "03_b.ipynb"]
    assert [p.name for p in select(tmp_path, ["3", "01"])] == ["01_a.ipynb", "03_b.ipynb"]
    with pytest.raises(ValueError, match="no lesson"):
        select(tmp_path, ["07"])
    with pytest.raises(ValueError, match="holds no lesson notebooks"):
        select(tmp_path / "missing")


# --- the assets ------------------------------------------------------------------------------


def test_exporter_urls_are_relative_and_under_static():
    urls = assets.exporter_urls()
    assert set(urls) == {"widget_renderer_url", "require_js_url", "mathjax_url"}
    assert all(url.startswith("_static/") for url in urls.values())
    assert assets.widget_assets_url("s") == "s/widgets/"
    with pytest.raises(ValueError, match="static must be a relative URL"):
        assets.exporter_urls("https://cdn.example.org")


def test_package_json_and_its_lock_pin_the_same_versions():
    lock = json.loads((ROOT / "course_tools/site/package-lock.json").read_text(encoding="utf-8"))
    pinned = assets.pinned_versions()
    assert lock["packages"][""]["dependencies"] == pinned
    for name, version in pinned.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    # ipywidgets 8's front end is html-manager 1.x
    assert pinned["@jupyter-widgets/html-manager"].startswith("1.")


def fake_npm(folder: Path) -> Path:
    for source, _ in assets.SCRIPTS.values():
        (folder / source).parent.mkdir(parents=True, exist_ok=True)
        (folder / source).write_text("// script")
    dist = folder / assets.HTML_MANAGER / "dist"
    for name in ("a1.woff2", "b2.ttf", "embed.js.map"):
        (dist / name).write_text("x")
    for name in assets.pinned_versions():
        meta = {"version": "9.9.9", "license": "MIT"}
        (folder / "node_modules" / name / "package.json").write_text(json.dumps(meta))
    return folder


def test_copy_static_copies_scripts_and_fonts_and_names_their_packages(tmp_path):
    npm = fake_npm(tmp_path / "npm")
    static = assets.copy_static(npm, tmp_path / "site")
    copied = sorted(str(p.relative_to(static)) for p in static.rglob("*") if p.is_file())
    assert copied == [
        "NOTICE.txt",
        "mathjax/tex-svg-full.js",
        "require.js",
        "widgets/a1.woff2",
        "widgets/b2.ttf",
        "widgets/embed-amd.js",
    ]
    assert "requirejs 9.9.9 (licence: MIT)" in (static / "NOTICE.txt").read_text()


def test_files_to_copy_names_what_the_npm_folder_lacks(tmp_path):
    npm = fake_npm(tmp_path)
    (npm / assets.SCRIPTS["mathjax"][0]).unlink()
    with pytest.raises(FileNotFoundError, match="tex-svg-full.js"):
        assets.files_to_copy(npm)


def test_links_between_lessons_point_at_their_pages():
    html = '<a href="03_sdpa.ipynb">3</a> <a href="05_pe.ipynb#The-waves">5</a> <a href="x.ipynb">'
    assert pages.link_pages(html) == (
        '<a href="03_sdpa.html">3</a> <a href="05_pe.html#The-waves">5</a> <a href="x.ipynb">'
    )


def test_rendered_page_loads_every_script_from_static():
    nb = notebook(
        md(
            "# Lesson 1 · Sums\n\n$$\\sum_i x_i$$ of [the paper](https://arxiv.org), [lesson 2](02_b.ipynb)."
        ),
        code("print(1)", {"text/plain": "1"}),
        code("w", VIEW),
        **STATE,
    )
    page = pages.render(nb, banner="With solutions")
    sources = re.findall(r'<script[^>]*\bsrc="([^"]*)"', page)
    assert sorted(sources) == ["_static/mathjax/tex-svg-full.js", "_static/require.js"]
    assert "var widgetRendererSrc = '_static/widgets/embed-amd.js'" in page
    assert '"@jupyter-widgets": "_static/widgets"' in page
    # No address of a CDN anywhere (the paper's link in the text is fine).
    assert not re.search(r"cdnjs|unpkg|jsdelivr|mathjax@|import\(\"http", page)
    assert "<title>Lesson 1 · Sums</title>" in page
    assert '<a href="index.html">' in page and "With solutions" in page
    assert '<a href="02_b.html">lesson 2</a>' in page
    assert "title" not in nb.metadata  # the notebook itself is unchanged


def test_running_a_copy_stores_the_widget_state_and_leaves_the_file_alone(tmp_path):
    source = tmp_path / "01_w.ipynb"
    nb = notebook(
        md("# Lesson 1 · W"),
        code(
            "import ipywidgets as w\nfrom IPython.display import display\n"
            "out = w.Output()\nslider = w.IntSlider(value=3)\ndisplay(w.VBox([slider, out]))\n"
        ),
        code("with out:\n    print('drawn later')"),
    )
    nbformat.write(nb, source)
    before = source.read_text(encoding="utf-8")
    ran = pages.load(source, timeout=120)
    assert source.read_text(encoding="utf-8") == before
    state = ran.metadata["widgets"][pages.WIDGET_STATE]["state"]
    models = {s["model_name"]: s["state"] for s in state.values()}
    assert models["IntSliderModel"]["value"] == 3
    # The Output widget holds what a later cell printed into it.
    assert "drawn later" in json.dumps(models["OutputModel"]["outputs"])
    assert not pages.needs_execution(ran)
