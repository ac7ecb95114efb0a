"""The written questions' model answers (``course_lib/model_answers.py``): ``reveal`` shows one
only under the learner's own answer, every written question of every lesson has one, and an
untouched lesson shows none."""

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib import model_answers
from course_lib.checks import EXERCISES, check, hint, reveal
from course_lib.lesson_format import ANSWER_PROMPT, is_exercise
from course_lib.model_answers import ANSWERS, ModelAnswer
from course_tools.authoring import written_questions

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9]*.ipynb"))
MINE = "The path between any two tokens is one hop, so gradients reach far."


def _model(question: str) -> str:
    return ANSWERS[question]["markdown"].strip()


@pytest.mark.parametrize(
    "answer", [None, "", "   \n\n  ", ANSWER_PROMPT, f"\n{ANSWER_PROMPT}\n", "not sure", "idk"]
)
def test_without_an_answer_of_a_few_words_only_the_way_to_use_it_shows(answer):
    shown = reveal("9.w1", answer)
    assert not shown.shown
    for text in (str(shown), shown._repr_html_()):
        assert "9.w1" in text and "paste" in text
        assert _model("9.w1")[:40] not in text and "Model answer" not in text


def test_an_answer_shows_the_model_answer_under_it_as_text_and_html():
    shown = reveal("9.w1", f"  {MINE}\n")
    assert shown.shown and shown.answer == MINE
    text = str(shown)
    assert text.index(MINE) < text.index("Model answer:") < text.index(_model("9.w1"))
    page = shown._repr_html_()
    assert page.index(MINE) < page.index(ANSWERS["9.w1"]["html"].strip())


def test_the_html_escapes_the_learners_answer_and_reads_well_aloud():
    page = reveal("9.w2", "Because <script>alert(1)</script> & the rest")._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; the" in page
    page = reveal("9.w2", MINE)._repr_html_()
    assert 'role="region"' in page and 'aria-label="Written question 9.w2: your answer' in page
    assert '<span aria-hidden="true">✍️ </span>' in page  # the words, not the emoji's name
    assert "<button" not in page and "<details" not in page, "nothing to open: keyboard-free"


@pytest.mark.parametrize(
    "args, error, words",
    [
        ((2.1,), TypeError, ['question must be a str such as "2.w1"', "got float"]),
        (("9.w9",), ValueError, ["one of the written questions 9.w1, 9.w2", "got '9.w9'"]),
        (("9.1",), ValueError, ["written questions 9.w1", "got '9.1'"]),
        (("9.w1", ["my", "answer"]), TypeError, ["answer must be your answer as a str", "list"]),
    ],
)
def test_bad_arguments_are_named(args, error, words):
    with pytest.raises(error) as raised:
        reveal(*args)
    for word in words:
        assert word in str(raised.value)


def test_check_and_hint_point_a_written_question_to_reveal():
    for result in (check("2.w1"), hint("2.w1")):
        assert not result.passed and 'reveal("2.w1", my_answer)' in result.message


def test_written_ids_cannot_be_taken_for_exercise_ids():
    assert ANSWERS and all(model_answers.ID.fullmatch(q) for q in ANSWERS)
    assert not set(ANSWERS) & set(EXERCISES)
    assert all(re.fullmatch(r"\d+\.\d+", e) for e in EXERCISES)


def test_every_written_question_of_the_solutions_has_its_model_answer():
    found = {}
    for path in sorted((ROOT / "solutions").glob("[0-9]*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        found |= {q: (cell.id, model) for q, cell, model in written_questions(nb, path.name)}
    assert {q: (e["cell"], e["markdown"].strip()) for q, e in ANSWERS.items()} == found
    assert {q.split(".")[0] for q in found} >= {"1", "2", "3", "4", "5", "6", "9"}
    assert [q for q in found if q.startswith("9.")] == [f"9.w{n}" for n in range(1, 6)]


def _written_and_reveal_cells(nb):
    cells = nb.cells
    return [
        (cell, cells[i + 1] if i + 1 < len(cells) else None)
        for i, cell in enumerate(cells)
        if model_answers.TAG in cell.metadata.get("tags", [])
    ]


def _last_value(source: str):
    """What a cell shows: the value of its last expression, the rest run first."""
    tree = ast.parse(source)
    namespace = {}
    exec(compile(ast.Module(tree.body[:-1], []), "cell", "exec"), namespace)
    return eval(compile(ast.Expression(tree.body[-1].value), "cell", "eval"), namespace)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name[:2])
def test_each_lessons_written_question_shows_its_id_and_is_followed_by_a_quiet_reveal(path):
    nb = nbformat.read(path, as_version=4)
    pairs = _written_and_reveal_cells(nb)
    lesson = int(path.name[:2])
    for n, (written, after) in enumerate(pairs, 1):
        question = f"{lesson}.w{n}"
        assert f"✍️ {question}" in written.source and written.source.endswith(ANSWER_PROMPT)
        assert after.metadata.get("tags") == [model_answers.REVEAL_TAG] and not is_exercise(after)
        assert after.source == model_answers.reveal_cell(question)
        shown = _last_value(after.source)  # the cell as an untouched Run All runs it
        assert isinstance(shown, ModelAnswer) and shown.question == question and not shown.shown
        answered = after.source.replace('"""\n\n"""', f'"""\n{MINE}\n"""')
        assert _last_value(answered).model == _model(question)
    assert len(pairs) == sum(q.startswith(f"{lesson}.") for q in ANSWERS)


def test_the_data_file_is_formatted_and_linted_as_the_code_around_it():
    ruff = shutil.which("ruff") or str(ROOT / ".venv" / "bin" / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed")
    data = str(ROOT / "course_lib" / "model_answers_data.py")
    for command in (["format", "--check"], ["check"]):
        done = subprocess.run([ruff, *command, data], capture_output=True, text=True, cwd=ROOT)
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_box_reads_in_light_and_dark_themes_as_the_checks_boxes_do():
    from test_checks_contrast import PAGES, THEMES, contrast, over

    style = re.match(r'<div style="([^"]*)"', reveal("9.w1", MINE)._repr_html_())[1]
    css = dict(map(str.strip, d.split(":", 1)) for d in style.split(";") if d.strip())
    assert css["color"] == "var(--jp-content-font-color1, #1a1a1a)"
    assert css["background-color"] == "var(--jp-layout-color1, #ffffff)"
    edge = re.fullmatch(r"4px solid (#[0-9a-fA-F]{6})", css["border-left"])[1]
    for theme in THEMES.values():
        box = theme["--jp-layout-color1"]
        assert contrast(over(theme["--jp-content-font-color1"], box), box) >= 4.5
        assert min(contrast(edge, box), *(contrast(edge, page) for page in PAGES)) >= 3
    assert contrast("#1a1a1a", "#ffffff") >= 4.5  # outside JupyterLab


def test_without_the_model_answers_a_class_release_still_runs_and_says_why():
    code = (
        "import sys; sys.modules['course_lib.model_answers_data'] = None  # as if left out\n"
        "from course_lib.checks import check, reveal\n"
        "for shown in (reveal('2.w1'), reveal('9.w3', 'my own answer in words')):\n"
        "    assert not shown.shown and not shown.available, shown\n"
        "    print(shown)\n"
        "print(check('2.w1').message)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.count("this copy of the course has no model answers") == 2
    assert 'reveal("2.w1", my_answer)' in done.stdout
