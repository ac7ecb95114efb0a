"""Lesson sources as text: every solution notebook is built from its percent script."""

from pathlib import Path

import nbformat
import pytest

from course_tools import setup_cell, sources

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9]*.ipynb"))


def test_every_solution_has_a_text_source_and_every_source_a_notebook():
    notebooks = {p.stem for p in SOLUTIONS}
    texts = {p.stem for p in (ROOT / "solutions").glob("[0-9]*.py")}
    assert notebooks and notebooks == texts


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solution_notebooks_match_their_sources(path):
    problem = sources.drift(path)
    assert problem is None, f"{problem}; rebuild with: make solutions"


def _notebook(cells, kernel="python3"):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": "Python 3", "language": "python"}
    nb.cells = cells
    return nb


def test_text_keeps_ids_tags_and_kernel_and_drops_outputs(tmp_path):
    code = nbformat.v4.new_code_cell("x = 1\nprint(x)", id="c0de0001")
    code.metadata = {"tags": ["nbval-ignore-output"], "execution": {"iopub.status.idle": "t"}}
    code.outputs = [nbformat.v4.new_output("stream", text="1\n")]
    prose = nbformat.v4.new_markdown_cell("# Title\n\nSome *text*.", id="a1b2c3d4")
    nb = _notebook([prose, code])
    text = sources.to_text(nb)
    assert '# %% id="c0de0001" tags=["nbval-ignore-output"]' in text
    assert '# %% [markdown] id="a1b2c3d4"' in text
    assert "execution" not in text and "1\\n" not in text
    path = tmp_path / "01_x.py"
    path.write_text(text, encoding="utf-8")
    back = sources.read(path)
    assert sources.inputs(back) == sources.inputs(nb)
    assert back.metadata["kernelspec"]["name"] == "python3"


def test_drift_is_reported_for_a_changed_cell_a_changed_tag_and_a_missing_source(tmp_path):
    nb = _notebook([nbformat.v4.new_code_cell("x = 1", id="c0de0001")])
    notebook = tmp_path / "01_x.ipynb"
    nbformat.write(setup_cell.with_setup(nbformat.from_dict(nb)), notebook)  # as built
    assert sources.drift(notebook) == f"{notebook} has no text source 01_x.py"
    source = sources.source_of(notebook)
    source.write_text(sources.to_text(nb), encoding="utf-8")
    assert sources.drift(notebook) is None
    source.write_text(sources.to_text(nb).replace("x = 1", "x = 2"), encoding="utf-8")
    assert sources.drift(notebook) == f"{notebook} is out of date with 01_x.py"
    nb.cells[0].metadata["tags"] = ["nbval-ignore-output"]
    source.write_text(sources.to_text(nb).replace("x = 2", "x = 1"), encoding="utf-8")
    assert sources.drift(notebook) == f"{notebook} is out of date with 01_x.py"


def test_a_new_cell_gets_an_id_written_back_into_its_source(tmp_path):
    source = tmp_path / "01_x.py"
    source.write_text('# %% id="c0de0001"\nx = 1\n\n# %%\ny = 2\n', encoding="utf-8")
    nbformat.write(_notebook([]), tmp_path / "01_x.ipynb")
    assert sources.drift(tmp_path / "01_x.ipynb") == "01_x.py has new cells without an id"
    nb = sources.build(source)  # the setup cell first, then the source's cells
    new_id = nb.cells[2].id
    assert len(new_id) == 8 and new_id != "c0de0001"
    assert f'# %% id="{new_id}"' in source.read_text(encoding="utf-8")
    assert sources.build(source).cells[2].id == new_id  # stable from then on


def test_format_code_formats_and_sorts_code_cells_only(tmp_path):
    source = tmp_path / "01_x.py"
    nb = _notebook(
        [
            nbformat.v4.new_markdown_cell("x=[1,2]  stays prose", id="a1b2c3d4"),
            nbformat.v4.new_code_cell("import sys\nimport os\nx=[1,2]", id="c0de0001"),
            nbformat.v4.new_code_cell("%timeit x=[1,2]", id="c0de0002"),
        ]
    )
    source.write_text(sources.to_text(nb), encoding="utf-8")
    assert sources.format_code(source) is True
    cells = [c.source for c in sources.read(source).cells]
    assert cells == [
        "x=[1,2]  stays prose",
        "import os\nimport sys\n\nx = [1, 2]",
        "%timeit x=[1,2]",
    ]
    assert sources.format_code(source) is False  # already formatted


def test_a_code_line_that_would_start_a_cell_is_refused():
    nb = _notebook([nbformat.v4.new_code_cell("x = 1\n# %% not a new cell", id="c0de0001")])
    with pytest.raises(ValueError, match="cell c0de0001: a line starting with '# %%'"):
        sources.to_text(nb)
