"""The static site's parts: index, pages, static explorers, navigation, styles, the build.

The explorers' script is tested by running its state choice in node (installed with npm);
the whole site in a browser is tests/browser/test_static_site.py.
"""

import base64
import io
import json
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from PIL import Image

from course_lib.widgets._explorer import SCRIPT_METADATA
from course_tools import setup_cell
from course_tools.site import (
    assets,
    build_site,
    explorer_data,
    explorers,
    index,
    navigation,
    pages,
    publish,
    select,
)

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
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def view(model_id="abc"):
    return {explorers.WIDGET_VIEW: {"model_id": model_id, "version_major": 2, "version_minor": 0}}


VIEW = view()
STATE = {"widgets": {WIDGET_STATE: {"state": {"abc": {}}, "version_major": 2}}}


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


def test_select_takes_every_lesson_or_the_named_ones(tmp_path):
    for name in ("01_a.ipynb", "03_b.ipynb", "notes.ipynb"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in select(tmp_path)] == ["01_a.ipynb", "03_b.ipynb"]
    assert [p.name for p in select(tmp_path, ["3", "01"])] == ["01_a.ipynb", "03_b.ipynb"]
    with pytest.raises(ValueError, match="no lesson"):
        select(tmp_path, ["07"])
    with pytest.raises(ValueError, match="holds no lesson notebooks"):
        select(tmp_path / "missing")


def test_export_cell_asks_the_widgets_for_their_export_or_writes_an_empty_object(
    tmp_path, monkeypatch
):
    target = tmp_path / "explorers.json"
    cell = pages.export_cell(target)
    assert cell.metadata[pages.MARK]
    monkeypatch.delitem(sys.modules, "course_lib.widgets", raising=False)
    exec(compile(cell.source, "export", "exec"), {})  # noqa: S102 (our own cell)
    assert json.loads(target.read_text(encoding="utf-8")) == {}
    fake = types.ModuleType("course_lib.widgets")
    fake.export_explorers = lambda path: Path(path).write_text('{"m": 2}', encoding="utf-8")
    monkeypatch.setitem(sys.modules, "course_lib.widgets", fake)
    exec(compile(cell.source, "export", "exec"), {})  # noqa: S102
    assert json.loads(target.read_text(encoding="utf-8")) == {"m": 2}


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
    """An npm folder holding the pinned lock's "install": placeholder scripts and fonts."""
    for source, _ in assets.SCRIPTS.values():
        (folder / source).parent.mkdir(parents=True, exist_ok=True)
        (folder / source).write_text("// script")
    dist = folder / assets.HTML_MANAGER / "dist"
    for name in ("a1.woff2", "b2.ttf", "embed.js.map"):
        (dist / name).write_text("x")
    for name in assets.pinned_versions():
        meta = {"version": "9.9.9", "license": "MIT"}
        (folder / "node_modules" / name / "package.json").write_text(json.dumps(meta))
    shutil.copy2(assets.HERE / "package-lock.json", folder / "package-lock.json")
    (folder / "node_modules" / ".package-lock.json").write_text("{}")
    return folder


def test_copy_static_copies_scripts_fonts_and_the_course_files(tmp_path):
    npm = fake_npm(tmp_path / "npm")
    static = assets.copy_static(npm, tmp_path / "site")
    copied = sorted(str(p.relative_to(static)) for p in static.rglob("*") if p.is_file())
    assert copied == [
        "NOTICE.txt",
        "course.css",
        "explorers.js",
        "mathjax/tex-svg-full.js",
        "require.js",
        "widgets/a1.woff2",
        "widgets/b2.ttf",
        "widgets/embed-amd.js",
    ]
    assert "requirejs 9.9.9 (licence: MIT)" in (static / "NOTICE.txt").read_text()
    assert (static / "explorers.js").read_bytes() == (assets.HERE / "explorers.js").read_bytes()
    # A site whose pages show no widget gets no widget renderer.
    bare = assets.copy_static(npm, tmp_path / "bare", widgets=False)
    copied = sorted(str(p.relative_to(bare)) for p in bare.rglob("*") if p.is_file())
    assert copied == ["NOTICE.txt", "course.css", "explorers.js", "mathjax/tex-svg-full.js"]
    assert "requirejs" not in (bare / "NOTICE.txt").read_text()
    assert "mathjax 9.9.9" in (bare / "NOTICE.txt").read_text()


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


def script_sources(page: str) -> list[str]:
    return sorted(re.findall(r'<script[^>]*\bsrc="([^"]*)"', page))


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
    assert script_sources(page) == ["_static/mathjax/tex-svg-full.js", "_static/require.js"]
    assert "var widgetRendererSrc = '_static/widgets/embed-amd.js'" in page
    assert '"@jupyter-widgets": "_static/widgets"' in page
    assert BeautifulSoup(page, "html.parser").select_one('link[href="_static/course.css"]')
    # No address of a CDN anywhere (the paper's link in the text is fine).
    assert not re.search(r"cdnjs|unpkg|jsdelivr|mathjax@|import\(\"http", page)
    assert "<title>Lesson 1 · Sums</title>" in page and '<html lang="en">' in page
    assert '<a href="index.html">' in page and "With solutions" in page
    assert '<a href="02_b.html">lesson 2</a>' in page
    assert "title" not in nb.metadata  # the notebook itself is unchanged


def test_a_page_without_widgets_loads_no_widget_renderer_nor_require():
    page = pages.render(notebook(md("# Lesson 1 · Plain"), code("1", {"text/plain": "1"})))
    assert script_sources(page) == ["_static/mathjax/tex-svg-full.js"]
    assert "widgetRendererSrc" not in page and "explorers.js" not in page


# --- figures' text alternatives ----------------------------------------------------------------


def png_bytes(width=20, height=10, shade=0) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (shade, 0, 0)).save(buffer, format="PNG")
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def test_png_only_outputs_get_an_alt_from_their_text_or_their_section():
    picture = b64(png_bytes())
    described = f'<img src="data:image/png;base64,{picture}" alt="Two arrows">'
    nb = notebook(
        md("# Lesson 1 · T\n## 3. Waves"),
        code("a", {"image/png": picture, "text/plain": "<Figure size 640x480 with 1 Axes>"}),
        code("b", {"image/png": picture, "text/plain": "Sine waves of 4 frequencies"}),
        code("c", {"image/png": picture, "text/html": described, "text/plain": "Two arrows"}),
        code("d", {"image/png": picture, "text/plain": "<IPython.core.display.Image object>"}),
    )
    assert pages.describe_images(nb) == ["cell 2, section '3. Waves'", "cell 5, section '3. Waves'"]
    alts = [
        BeautifulSoup(c.outputs[0].data["text/html"], "html.parser").img["alt"]
        for c in nb.cells[1:]
    ]
    assert alts[1:3] == ["Sine waves of 4 frequencies", "Two arrows"]
    assert alts[0] == alts[3] and "3. Waves" in alts[0]
    page = pages.render(nb)
    assert "No description has been provided" not in page
    assert 'alt="Sine waves of 4 frequencies"' in page


# --- the static explorers -----------------------------------------------------------------------


def option(value, label):
    return {"value": value, "label": label}


SETTINGS = [(1.0, 0, False), (0.5, 0, False), (2.0, 0, False), (1.0, 1, False), (1.0, 0, True)]


def fake_explorer(settings=SETTINGS, default=0) -> dict:
    """An export as course_lib.widgets.export_explorers writes one explorer."""
    controls = [
        {
            "name": "tau",
            "label": "temperature τ",
            "type": "slider",
            "options": [option(v, f"{v:.2f}") for v in (0.5, 1.0, 2.0, 4.0)],  # 4.0 undrawn
        },
        {"name": "head", "label": "head", "type": "buttons",
         "options": [option(0, "head 1"), option(1, "head 2")]},
        {"name": "causal", "label": "causal mask", "type": "checkbox",
         "options": [option(False, "off"), option(True, "on")]},
        {"name": "example", "label": "example", "type": "fixed",
         "options": [option("cat", "the cat sat")]},
    ]  # fmt: skip
    states = [
        {
            "values": {"tau": tau, "head": head, "causal": causal, "example": "cat"},
            "png": b64(png_bytes(20 + i, 10, shade=i)),
            "alt": f"state {i}: τ={tau}</script>",
        }
        for i, (tau, head, causal) in enumerate(settings)
    ]
    note = "Open the lesson in JupyterLab to type your own sentence."
    return {"title": "Attention explorer", "controls": controls, "states": states,
            "default": default, "note": note}  # fmt: skip


def test_parse_keeps_the_drawn_options_and_numbers_the_states():
    explorer = explorer_data.parse("abc", fake_explorer())
    tau, head, causal, example = explorer.controls
    assert [label for _, label in tau.options] == ["0.50", "1.00", "2.00"]  # 4.00 never drawn
    assert (tau.type, head.type, causal.type, example.type) == (
        "slider", "buttons", "checkbox", "fixed",
    )  # fmt: skip
    assert [s.values for s in explorer.states] == [
        (1, 0, 0, 0), (0, 0, 0, 0), (2, 0, 0, 0), (1, 1, 0, 0), (1, 0, 1, 0),
    ]  # fmt: skip
    assert explorer_data.png_size(explorer.states[3].png) == (23, 10)
    assert explorer_data.limit_text(explorer) == "this page has pictures for one change at a time"
    # A control drawn with one value only cannot change on the page.
    single = explorer_data.parse("abc", fake_explorer([(1.0, 0, False), (2.0, 0, False)]))
    assert [c.type for c in single.controls] == ["slider", "fixed", "fixed", "fixed"]
    pairs = explorer_data.parse("abc", fake_explorer([*SETTINGS, (2.0, 1, True)]))
    assert explorer_data.limit_text(pairs) == (
        "this page has pictures for 6 of the 12 combinations"
    )


def broken(change):
    raw = fake_explorer()
    change(raw)
    return raw


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], r"explorers\['abc'\] must be an object"),
        (broken(lambda r: r["controls"][0].update(type="dial")), r"controls\[0\]\.type must be one of"),
        (broken(lambda r: r["states"][1]["values"].update(tau=3.0)),
         r"states\[1\]\.values\['tau'\] must be one of \[0\.5, 1\.0, 2\.0, 4\.0\]"),
        (broken(lambda r: r["states"][2]["values"].pop("head")), r"states\[2\]\.values must be"),
        (broken(lambda r: r["states"][0].update(png=b64(b"GIF89a..."))), r"states\[0\]\.png must be a PNG"),
        (broken(lambda r: r["states"][0].update(alt=" ")), r"states\[0\]\.alt must be a non-empty"),
        (broken(lambda r: r.update(default=5)), r"default must be a state index in \[0, 5\)"),
        (broken(lambda r: r["states"].append(r["states"][0])), r"states must be distinct settings"),
        (broken(lambda r: r["controls"][2]["options"][0].update(value=2)), r"values\['causal'\]"),
    ],
)  # fmt: skip
def test_parse_names_what_is_wrong(raw, message):
    with pytest.raises(ValueError, match=message):
        explorer_data.parse("abc", raw)


def explorer_notebook():
    return notebook(
        md("# Lesson 3 · Attention"),
        code("explorer", VIEW),
        code("other", view("xyz")),
        **STATE,
    )


def test_replace_puts_native_controls_and_the_default_picture_in_place_of_the_widget():
    nb = explorer_notebook()
    replaced, files = explorers.replace(nb, {"abc": fake_explorer(default=3)}, "03_sdpa")
    assert sorted(files) == [f"_static/explorers/03_sdpa-1-{s}.png" for s in range(5)]
    assert files["_static/explorers/03_sdpa-1-4.png"] == png_bytes(24, 10, shade=4)
    assert nb.cells[1].outputs[0].data == VIEW  # the original is untouched
    assert replaced.cells[2].outputs[0].data == view("xyz")  # not exported: left as it was
    assert "widgets" in replaced.metadata  # ... so the widget renderer stays
    section = BeautifulSoup(replaced.cells[1].outputs[0].data["text/html"], "html.parser")
    box = section.select_one("section.course-static-explorer")
    assert box["aria-label"] == "Attention explorer"

    def label_of(element):
        return section.select_one(f"label[for='{element['id']}']").get_text()

    slider = box.select_one("input[type=range]")  # default: state 3 (τ 1.00, head 2)
    assert (slider["min"], slider["max"], slider["value"]) == ("0", "2", "1")
    assert slider["aria-valuetext"] == "1.00" and label_of(slider) == "temperature τ"
    assert box.select_one(".course-explorer-readout").get_text() == "1.00"
    group = box.select_one("fieldset.course-explorer-buttons")
    assert group.legend.get_text() == "head"
    radios = group.select("input[type=radio]")
    assert [r.parent.get_text(strip=True) for r in radios] == ["head 1", "head 2"]
    assert [r.has_attr("checked") for r in radios] == [False, True]
    checkbox = box.select_one("input[type=checkbox]")
    assert label_of(checkbox) == "causal mask" and not checkbox.has_attr("checked")
    fixed = box.select_one(".course-explorer-fixed textarea")
    assert fixed.has_attr("disabled") and fixed.get_text() == "the cat sat"
    assert label_of(fixed) == "example"
    assert box.select_one(".course-explorer-keys").get_text().startswith("Keys: Tab")
    assert "JupyterLab" in box.select_one(".course-explorer-note").get_text()
    assert box.select_one(".course-explorer-status")["aria-live"] == "polite"
    img = box.select_one("img.course-explorer-picture")
    assert img["src"] == "_static/explorers/03_sdpa-1-3.png"
    assert img["alt"] == "state 3: τ=1.0</script>"
    assert (img["width"], img["height"]) == ("23", "10")
    data = json.loads(box.select_one("script.course-explorer-data").string)
    assert [s["alt"] for s in data["states"]][:2] == [
        "state 0: τ=1.0</script>",
        "state 1: τ=0.5</script>",
    ]
    assert [s["v"] for s in data["states"]][3] == [1, 1, 0, 0] and data["default"] == 3
    assert data["controls"][2]["on"] == 1
    assert (
        "</script>"
        not in replaced.cells[1].outputs[0].data["text/html"][: -len("</script></section>")]
    )


def test_replace_drops_the_script_that_names_live_controls_and_adds_a_spoken_status():
    nb = explorer_notebook()
    script = nbformat.v4.new_output(
        "display_data",
        data={"application/javascript": "/* names sliders */"},
        metadata={SCRIPT_METADATA: {"explorer_names": "abc"}},
    )
    other_script = nbformat.v4.new_output("display_data", data={"application/javascript": "1"})
    nb.cells[1].outputs += [script, other_script]
    replaced, _ = explorers.replace(nb, {"abc": fake_explorer()}, "03_sdpa")
    kept = [o.data for o in replaced.cells[1].outputs]
    assert len(kept) == 2 and "text/html" in kept[0] and kept[1] == other_script.data
    section = BeautifulSoup(kept[0]["text/html"], "html.parser")
    spoken = section.select_one(".course-explorer-announce")
    assert spoken["aria-live"] == "polite" and "course-sr-only" in spoken["class"]


def test_a_page_whose_widgets_are_all_explorers_loads_only_the_explorer_script():
    nb = notebook(md("# Lesson 3 · Attention"), code("explorer", VIEW), **STATE)
    replaced, _ = explorers.replace(nb, {"abc": {**fake_explorer(), "note": ""}}, "03_sdpa")
    page = pages.render(replaced)
    assert "widget-state+json" not in page
    assert script_sources(page) == ["_static/explorers.js", "_static/mathjax/tex-svg-full.js"]
    assert page.count('class="course-static-explorer"') == 1
    note = BeautifulSoup(page, "html.parser").select_one(".course-explorer-note").get_text()
    assert note.startswith("This page has pictures for 5 settings") and "JupyterLab" in note
    with pytest.raises(TypeError, match="exported must be a dict"):
        explorers.replace(nb, [], "03_sdpa")


def progress_state(bar="FloatProgressModel"):
    def model(name, **state):
        return {"model_name": name, "model_module": "@jupyter-widgets/controls", "state": state}

    models = {
        "abc": model("HBoxModel", children=["IPY_MODEL_l", "IPY_MODEL_b", "IPY_MODEL_c"]),
        "l": model("HTMLModel", value="training: 100%"),
        "b": model(bar, value=250.0, max=250.0),
        "c": model("HTMLModel", value=" 250/250 [00:16&lt;00:00, loss=0.947]"),
    }
    return {"widgets": {WIDGET_STATE: {"state": models, "version_major": 2}}}


def test_a_progress_bar_is_shown_as_a_native_progress_element():
    page = pages.render(notebook(md("# Lesson 7 · T"), code("train()", VIEW), **progress_state()))
    bar = BeautifulSoup(page, "html.parser").select_one(".course-progress")
    assert bar.progress.attrs == {"max": "250", "value": "250", "aria-label": "training"}
    assert bar.get_text(" ", strip=True).startswith("training: 100%")
    assert "250/250 [00:16<00:00, loss=0.947]" in bar.get_text()
    assert "widgetRendererSrc" not in page and "widget-state+json" not in page
    # Another HBox of three is not a progress bar: the widget renderer stays.
    other = pages.render(
        notebook(md("# Lesson 7 · T"), code("w", VIEW), **progress_state("IntSliderModel"))
    )
    assert "course-progress" not in other and "widgetRendererSrc" in other


NODE = shutil.which("node")


def run_js(expression: str, *arguments):
    """The JSON value of ``expression`` in node, with explorers.js loaded as ``x``."""
    script = (
        "const x = require(process.argv[1]); const args = JSON.parse(process.argv[2]);"
        f"console.log(JSON.stringify({expression}));"
    )
    done = subprocess.run(
        [NODE, "-e", script, str(assets.HERE / "explorers.js"), json.dumps(arguments)],
        capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    return json.loads(done.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_script_shows_the_exact_settings_else_the_nearest_state():
    states = [[1, 0, 0], [0, 0, 0], [2, 0, 0], [1, 1, 0], [1, 0, 1], [2, 1, 0], [0, 1, 1]]
    default = states[0]
    cases = [
        (states, [1, 0, 0], 0, 2, default),  # exact: (2, 0, 0)
        (states, [1, 1, 0], 0, 2, default),  # exact: (2, 1, 0)
        (states, [1, 1, 0], 0, 0, default),  # (0, 1, 0) undrawn: (0, 1, 1) and (0, 0, 0)
        #   agree with one other control each; (0, 0, 0) agrees with the default on both
        (states, [1, 0, 1], 0, 2, default),  # (2, 0, 1) undrawn: (2, 0, 0) keeps head
        (states, [1, 0, 0], 2, 1, default),  # exact: (1, 0, 1)
        (states, [2, 0, 0], 1, 1, default),  # exact: (2, 1, 0)
        (states, [1, 0, 0], 0, 3, default),  # no state has option 3: -1
        ([[0, 0, 0], [1, 1, 0], [1, 0, 1]], [0, 0, 0], 0, 1, [0, 0, 0]),  # a tie: the first
    ]
    assert run_js("args.map(c => x.choose(...c))", *cases) == [2, 5, 1, 2, 4, 5, -1, 1]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_script_says_what_else_changed():
    controls = [
        {"label": "τ", "options": ["0.50", "1.00", "2.00"]},
        {"label": "head", "options": ["1", "2"]},
        {"label": "causal mask", "options": ["off", "on"]},
    ]
    limit = "this page has pictures for one change at a time"
    said = run_js(
        "[x.describe(...args), x.describe(args[0], [1, 0, 0], [2, 0, 0], 0, [1, 0, 0], args[5]),"
        " x.unavailable(args[0][2], 1)]",
        controls, [2, 1, 0], [1, 0, 1], 2, [1, 0, 0], limit,
    )  # fmt: skip
    assert said == [
        "τ set back to 1.00; head set back to 1: this page has pictures for one change at a "
        "time; open the lesson in JupyterLab for every combination.",
        "",
        "No picture for causal mask = on on this page; open the lesson in JupyterLab to see it.",
    ]


# --- navigation --------------------------------------------------------------------------------


ENTRIES = [
    index.Entry(2, "Lesson 2", "Dots", "02_dots.html"),
    index.Entry(8, "Project", "An encoder in numpy", "08_project.html"),
    index.Entry(1, "Lesson 1", "Sequences", "01_seq.html"),
]


def test_plan_links_each_page_to_its_neighbours_in_lesson_order():
    plan = navigation.plan(ENTRIES)
    first, middle, last = plan["01_seq.html"], plan["02_dots.html"], plan["08_project.html"]
    assert first.previous is None and first.next == navigation.Link(
        "02_dots.html", "Lesson 2: Dots"
    )
    assert middle.previous.href == "01_seq.html" and middle.next.href == "08_project.html"
    assert last.next is None and last.previous.text == "Lesson 2: Dots"
    assert dict(first.mentions) == {
        "lesson 1": "01_seq.html", "lesson 2": "02_dots.html", "the project": "08_project.html",
    }  # fmt: skip
    with pytest.raises(ValueError, match="distinct pages"):
        navigation.plan([*ENTRIES, ENTRIES[0]])


def test_next_lines_link_the_page_they_name():
    mentions = navigation.plan(ENTRIES)["01_seq.html"].mentions
    text = "Intro about lesson 2.\n\n**Next:** lesson 2 looks at dot products; lesson 1 is done."
    assert navigation.link_mentions(text, mentions) == (
        "Intro about lesson 2.\n\n**Next:** [lesson 2](02_dots.html) looks at dot products; "
        "lesson 1 is done."
    )
    assert navigation.link_mentions("**Next:** the project builds it.", mentions) == (
        "**Next:** [the project](08_project.html) builds it."
    )
    for unchanged in ("**Next:** lesson 9 is missing.", "**Next:** [lesson 2](02_dots.html)"):
        assert navigation.link_mentions(unchanged, mentions) == unchanged


def test_a_page_has_landmarks_a_course_bar_contents_and_a_pager():
    nb = notebook(
        md("# Lesson 2 · Dots\n\n## 1. The idea\n\ntext\n\n### A detail"),
        code("x = 1"),
        md('## 2. Worked example: "cat"\n\n**Next:** the project builds one.'),
    )
    page = pages.render(nb, neighbours=navigation.plan(ENTRIES)["02_dots.html"])
    soup = BeautifulSoup(page, "html.parser")
    assert soup.html["lang"] == "en" and soup.title.get_text() == "Lesson 2 · Dots"
    assert len(soup.select("main")) == 1
    navs = soup.select("nav")
    assert all(nav.get("aria-label") for nav in navs)
    assert len({nav["aria-label"] for nav in navs}) == len(navs) == 3
    bar = soup.select_one("nav.course-nav")
    assert [a["href"] for a in bar.select("a")] == ["index.html", "01_seq.html", "08_project.html"]
    assert bar.select_one("a[rel=next]").get_text() == "Next: Project: An encoder in numpy"
    contents = soup.select_one('nav[aria-label="Contents"]')
    links = [(a["href"], a.get_text()) for a in contents.select("li a")]
    assert [text for _, text in links] == ["1. The idea", '2. Worked example: "cat"']
    for href, _ in links:
        assert soup.find(id=href[1:]) is not None, href
    pager = soup.select_one("nav.course-pager")
    assert [a["rel"] for a in pager.select("a")] == [["prev"], ["next"]]
    assert soup.select_one("main a[href='08_project.html']").get_text() == "the project"
    with pytest.raises(ValueError, match="mark"):
        navigation.add_contents("<html></html>")


# --- colours -----------------------------------------------------------------------------------


def luminance(colour: str) -> float:
    """WCAG 2 relative luminance of a #rgb or #rrggbb colour."""
    digits = colour.lstrip("#")
    digits = "".join(c * 2 for c in digits) if len(digits) == 3 else digits
    channels = [int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_contrast_is_computed_as_wcag_defines_it():
    assert contrast("#000", "#fff") == pytest.approx(21)
    assert contrast("#777", "#fff") == pytest.approx(4.48, abs=0.01)  # just below AA


STYLESHEET = (ROOT / "course_tools/site/course.css").read_text(encoding="utf-8")


def declared_colours() -> dict[str, str]:
    return dict(re.findall(r"(--[\w-]+):\s*(#[0-9a-fA-F]{3,6})\s*;", STYLESHEET))


def test_code_and_prompt_colours_pass_wcag_aa_on_code_and_page_backgrounds():
    colours = declared_colours()
    backgrounds = [colours["--jp-cell-editor-background"], colours["--course-page-background"]]
    texts = {name: value for name, value in colours.items() if "background" not in name}
    for needed in (
        "--jp-mirror-editor-keyword-color",
        "--jp-mirror-editor-comment-color",
        "--jp-mirror-editor-number-color",
        "--jp-mirror-editor-operator-color",
        "--jp-mirror-editor-atom-color",
        "--jp-cell-inprompt-font-color",
        "--jp-cell-outprompt-font-color",
    ):
        assert needed in texts, f"course.css sets no {needed}"
    low = {
        (name, background): round(contrast(value, background), 2)
        for name, value in texts.items()
        for background in backgrounds
        if contrast(value, background) < 4.5
    }
    assert low == {}, f"below 4.5:1: {low}"
    # nbconvert greys the prompts of inactive cells (every cell of a page) at half opacity.
    for prompt, colour in (("InputPrompt", "inprompt"), ("OutputPrompt", "outprompt")):
        rule = (
            rf"\.jp-Cell:not\(\.jp-mod-active\) \.jp-{prompt} {{"
            rf"\s*color: var\(--jp-cell-{colour}-font-color\);\s*opacity: 1;"
        )
        assert re.search(rule, STYLESHEET), f"course.css does not restore the {prompt}'s colour"


# --- building a site ---------------------------------------------------------------------------


def lesson_folder(tmp_path: Path, second: str) -> tuple[Path, Path]:
    folder = tmp_path / "lessons"
    folder.mkdir()
    nbformat.write(
        notebook(md("# Lesson 1 · One\n## Part"), code("x = 1")), folder / "01_one.ipynb"
    )
    nbformat.write(notebook(md("# Lesson 2 · Two"), code(second)), folder / "02_two.ipynb")
    readme = tmp_path / "README.md"
    readme.write_text("# A course\n\n| 1 | `01_one` | One | §1 |\n| 2 | `02_two` | Two | §2 |\n")
    return folder, readme


def old_site(out: Path) -> dict[str, str]:
    (out / "_static").mkdir(parents=True)
    files = {"index.html": "old index", "01_one.html": "old one", "_static/course.css": "old"}
    for name, text in files.items():
        (out / name).write_text(text)
    return files


def test_a_lesson_that_fails_leaves_the_previous_site_untouched(tmp_path):
    source, readme = lesson_folder(tmp_path, "raise ValueError('lesson two is broken')")
    out = tmp_path / "site"
    before = old_site(out)
    failures = build_site(
        source, out, npm_dir=fake_npm(tmp_path / "npm"), readme=readme, log=lambda _: None
    )
    assert len(failures) == 1 and "02_two.ipynb" in failures[0]
    assert "lesson two is broken" in failures[0] and "\x1b[" not in failures[0]
    after = {str(p.relative_to(out)): p.read_text() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "lessons", "npm", "site"]


def test_a_build_that_succeeds_replaces_the_whole_site(tmp_path, monkeypatch):
    source, readme = lesson_folder(tmp_path, "y = 2")
    out = tmp_path / "site"
    old_site(out)
    (out / "05_gone.html").write_text("a lesson no longer built")

    def ran(path, timeout=600):  # as if run: one output, no explorers
        nb = nbformat.read(path, as_version=4)
        nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="ran\n")]
        return pages.Built(nb, {})

    monkeypatch.setattr(pages, "load", ran)
    npm = fake_npm(tmp_path / "npm")
    assert build_site(source, out, npm_dir=npm, readme=readme, log=lambda _: None) == []
    built = sorted(str(p.relative_to(out)) for p in out.glob("*"))
    assert built == ["01_one.html", "02_two.html", "_static", "index.html"]
    assert (out / "_static/course.css").read_text() == STYLESHEET
    assert not (out / "_static/widgets").exists()  # no page shows a widget
    first = BeautifulSoup((out / "01_one.html").read_text(encoding="utf-8"), "html.parser")
    assert first.select_one("nav.course-nav a[rel=next]")["href"] == "02_two.html"
    assert "Lesson 2: Two" in (out / "index.html").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "lessons", "npm", "site"]
    assert out.stat().st_mode & 0o755 == 0o755  # readable by all, like any folder


def test_an_explorer_exported_wrongly_fails_its_lesson_and_writes_nothing(tmp_path, monkeypatch):
    source, readme = lesson_folder(tmp_path, "y = 2")
    out = tmp_path / "site"
    before = old_site(out)
    bad = {"abc": broken(lambda r: r.update(default=9))}
    monkeypatch.setattr(
        pages, "load", lambda path, timeout=600: pages.Built(explorer_notebook(), bad)
    )
    npm = fake_npm(tmp_path / "npm")
    failures = build_site(source, out, npm_dir=npm, readme=readme, log=lambda _: None)
    assert [f.split(":")[0] for f in failures] == [
        str(source / "01_one.ipynb"),
        str(source / "02_two.ipynb"),
    ]
    assert "default must be a state index" in failures[0]
    assert {str(p.relative_to(out)): p.read_text() for p in out.rglob("*") if p.is_file()} == before


def test_a_folder_holding_other_files_is_never_replaced(tmp_path):
    out = tmp_path / "docs"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(
        ValueError, match=r"out .* holds files that are not part of a site \(notes.txt\)"
    ):
        publish.check_replaceable(out)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="out must be a folder"):
        publish.check_replaceable(tmp_path / "file")
    publish.check_replaceable(tmp_path / "new")  # a new folder is fine


# --- running a copy (a kernel) -----------------------------------------------------------------


def test_running_a_copy_stores_the_widget_state_and_leaves_the_file_alone(tmp_path):
    source = tmp_path / "01_w.ipynb"
    nb = notebook(
        md("# Lesson 1 · W"),
        setup_cell.cell(),  # the lesson's setup cell: no use on a page
        code(
            "import ipywidgets as w\nfrom IPython.display import display\n"
            "out = w.Output()\nslider = w.IntSlider(value=3)\ndisplay(w.VBox([slider, out]))\n"
        ),
        code("with out:\n    print('drawn later')"),
    )
    nbformat.write(nb, source)
    before = source.read_text(encoding="utf-8")
    built = pages.load(source, timeout=120)
    assert source.read_text(encoding="utf-8") == before
    assert built.explorers == {}  # course_lib.widgets was never imported
    assert len(built.nb.cells) == 3 and not any(pages.MARK in c.metadata for c in built.nb.cells)
    assert not any(setup_cell.is_setup(c) for c in built.nb.cells)
    state = built.nb.metadata["widgets"][WIDGET_STATE]["state"]
    models = {s["model_name"]: s["state"] for s in state.values()}
    assert models["IntSliderModel"]["value"] == 3
    # The Output widget holds what a later cell printed into it.
    assert "drawn later" in json.dumps(models["OutputModel"]["outputs"])


def test_running_a_copy_reads_what_the_kernel_exported(tmp_path):
    source = tmp_path / "01_x.ipynb"
    stand_in = (  # a course_lib.widgets whose export writes a known object
        "import sys, types, json\nfake = types.ModuleType('course_lib.widgets')\n"
        "fake.export_explorers = lambda path: open(path, 'w').write(json.dumps({'m1': 1}))\n"
        "sys.modules['course_lib.widgets'] = fake"
    )
    nbformat.write(notebook(md("# Lesson 1 · X"), code(stand_in)), source)
    assert pages.load(source, timeout=120).explorers == {"m1": 1}
