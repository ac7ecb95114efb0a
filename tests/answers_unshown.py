"""No exercise's answer is on screen before the learner has had the chance: ``make test-answers``.

For each lesson, two runs in fresh kernels:

1. The solution notebook (``solutions/NN_name.ipynb``), with a cell injected after each
   ``check("N.M", ...)`` cell that records the answers it was given: every number of an
   answer that is a number, a list, an array or a tensor of up to 64 numbers (functions and
   modules are skipped: their answers are code, which ``tests/test_hints.py`` covers). For a
   multiple choice, the specific numbers that only its correct option states are its answer
   (a fraction, or five digits or more: 65.5 and 131,072, not 64 or 1,024).
2. The untouched lesson (``lessons/NN_name.ipynb``), as a learner's Run All.

The test fails when one of an exercise's expected numbers appears in an output of the lesson
above its check, in the check cell itself, or in the next two code cells below it, or is
written in the code of the check cell or of those two cells (a reference cell that asserts
``== (5_242_880, 31_457_280)`` shows the answer to a learner who scrolls down, before any
output does), and that case is not in the reviewed allow-list ``tests/answers_shown.toml``
(each entry with its reason). It also fails when an exercise's first hint states one of its
expected numbers, and when an allow-list entry no longer matches anything (a fixed case leaves
the list).

A number is looked for as a notebook prints it or its code writes it: a whole number with and
without thousands separators (``768``, ``65,536``, ``65_536``, ``768.0``), a fraction to 1-4
decimals and to 2-4 significant figures (``0.87``, ``0.8660``), in scientific notation
(``3.4e-04``, and as code writes it, ``3.4e-4``), as a percentage, and,
from 1,000 up, in kB/MB/GB/TB and KiB/MiB/GiB/TiB with 0-2 decimals (``61.0 GiB``). Only
forms with at least 2 significant digits count (3 in the cells above the check, where a
2-digit 0.33 is more often a coincidence), and a form must stand alone (``0.87`` is not
found in ``0.875`` nor ``87`` in ``0.87``).

Values too common to say anything are left out: whole numbers below 10 and booleans (counts
of steps, heads and layers, the 0s and 1s of masks), and numbers with a single significant
digit (0.5, 0.1, 100, 20,000: the lessons' settings, printed everywhere). A printed form
that reads as such a value (0.998 printed as ``1.00``) is left out for the same reason, and so
is a fraction printed as a whole number (15.92 as ``16``). In code, an exercise's name
(``check("7.2", ...)``) is not a number.

One test per lesson, two at a time (``-n 2``): about 3.6 minutes of CPU for the nine lessons,
run twice each; 6.5 to 7 minutes of wall time on a two-core machine shared with other work.
"""

import json
import math
import re
import tomllib
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_lib.checks import EXERCISES
from course_lib.lesson_format import OPTION

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = Path(__file__).with_name("answers_shown.toml")
LESSONS = sorted(p.name for p in (ROOT / "lessons").glob("[0-9]*.ipynb"))
MARK = "<<answers>>"
BELOW = 2  # code cells under a check whose outputs must not show its answer
LARGEST = 64  # an answer with more numbers is a table, not something typed or read off

CHECK = re.compile(r"^check\(\s*['\"](\d+\.\d+)['\"]", re.MULTILINE)
HEADING = re.compile(r"^#+ ✏️ (\d+\.\d+)\b", re.MULTILINE)

RECORDER = f"""\
def __record_answers(exercise, *answers):
    import json

    import numpy

    values = []
    for answer in answers:
        if callable(answer) or isinstance(answer, (str, bytes, dict)):
            continue
        try:
            held = answer.detach().cpu() if hasattr(answer, "detach") else answer
            array = numpy.asarray(held, dtype=float)
        except (TypeError, ValueError, RuntimeError):
            continue
        if array.size <= {LARGEST}:
            values.extend(float(v) for v in array.ravel())
    print({MARK!r} + json.dumps({{"exercise": exercise, "values": values}}))
"""


# Running the notebooks ---------------------------------------------------------------------


def run(nb: nbformat.NotebookNode, where: Path) -> nbformat.NotebookNode:
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(where)}}
    ).execute()
    return nb


def check_calls(cell) -> list[str]:
    """The exercises a code cell checks as a statement (``check("3.2", ...)``), in order."""
    return CHECK.findall(cell.source) if cell.cell_type == "code" else []


def recorded_answers(name: str) -> dict[str, list[float]]:
    """The numbers each exercise's check receives when the solution notebook runs."""
    nb = nbformat.read(ROOT / "solutions" / name, as_version=4)
    cells = [nbformat.v4.new_code_cell(RECORDER)]
    for cell in nb.cells:
        cells.append(cell)
        for exercise in check_calls(cell):
            call = re.search(
                rf"^check\(\s*['\"]{re.escape(exercise)}['\"](.*)\)\s*$", cell.source, re.M
            )
            cells.append(nbformat.v4.new_code_cell(f"__record_answers({exercise!r}{call[1]})"))
    nb.cells = cells
    run(nb, ROOT / "solutions")
    found: dict[str, list[float]] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            for line in output.get("text", "").splitlines():
                if line.startswith(MARK):
                    record = json.loads(line[len(MARK) :])
                    found.setdefault(record["exercise"], []).extend(record["values"])
    return found


def choice_numbers(nb) -> dict[str, list[float]]:
    """For each multiple choice, the numbers its correct option states and no other line of
    its question does: what a learner who saw them printed would not need to work out."""
    found: dict[str, list[float]] = {}
    current = None
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        heading = HEADING.search(cell.source)
        current = heading[1] if heading else current
        exercise = EXERCISES.get(current)
        if exercise is None or exercise.kind != "choice" or not OPTION.search(cell.source):
            continue
        right = next(letter for letter in "abcdefgh" if exercise.run(letter).passed)
        lines = cell.source.splitlines()
        mine = [x for x in lines if re.match(rf"- \*\*{right}\.\*\*", x)]
        others = [x for x in lines if x not in mine]
        elsewhere = set(numbers_in(" ".join(others)))
        found[current] = [
            v for v in numbers_in(" ".join(mine)) if v not in elsewhere and _specific(v)
        ]
    return found


def _specific(x: float) -> bool:
    """An option's number specific enough to be its answer: a fraction (65.5) or one of five
    digits or more (131,072); a round count such as 64 or 1,024 is the lesson's vocabulary."""
    return x != round(x) or abs(x) >= 10_000


def numbers_in(text: str) -> list[float]:
    """The numbers written in ``text`` (thousands separators allowed)."""
    return [
        float(n.replace(",", ""))
        for n in re.findall(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])\d+(?:\.\d+)?", text)
    ]


# How a number is printed ---------------------------------------------------------------------

UNITS = [
    (1e3, "kB"),
    (1e6, "MB"),
    (1e9, "GB"),
    (1e12, "TB"),
    (2**10, "KiB"),
    (2**20, "MiB"),
    (2**30, "GiB"),
    (2**40, "TiB"),
]


def significant(text: str) -> int:
    """Significant digits of a printed number: '0.0870' has 3, '61.0' has 3, '100' has 3."""
    digits = re.sub(r"[eE].*$", "", text)
    digits = re.sub(r"\D", "", digits).lstrip("0")
    return len(digits)


def trivial(x: float) -> bool:
    """Too common to mean anything: whole numbers below 10 (and booleans), and numbers with
    a single significant digit (0.5, 0.1, 100, 20,000)."""
    if not math.isfinite(x):
        return True
    if x == round(x) and abs(x) < 10:
        return True
    mantissa = f"{abs(x):.6e}".split("e")[0].rstrip("0").rstrip(".")  # 2.000000e+04 -> 2
    return len(mantissa.replace(".", "")) <= 1


def _as_code(form: str) -> str:
    """Scientific notation as code writes it: '3.4e-04' -> '3.4e-4', '1.6e+10' -> '1.6e10'."""
    return re.sub(r"e\+?(-?)0*(\d)", r"e\1\2", form)


def forms(x: float) -> set[str]:
    """The ways a notebook may print ``x`` (see the module docstring)."""
    found = set()
    if x == round(x) and abs(x) < 1e15:
        n = int(round(x))
        found |= {str(n), f"{n:,}", f"{n:_}", f"{x:.1f}", f"{x:.2f}"}
    else:
        found |= {f"{x:.{d}f}" for d in range(1, 5)}
        found |= {f for p in range(2, 5) if "." in (f := f"{x:.{p}g}") and "e" not in f}
        if 0 < abs(x) < 1:
            found |= {f"{100 * x:.{d}f}%" for d in range(1, 3)}
    if abs(x) < 1e-3 or abs(x) >= 1e5:
        found |= {f"{x:.{p}e}" for p in range(1, 4)}
        found |= {_as_code(f"{x:.{p}e}") for p in range(1, 4)}
    if abs(x) >= 1e3:
        for size, unit in UNITS:
            for d in range(0, 3):
                scaled = f"{x / size:.{d}f}"
                if 1 <= abs(x / size) < 1e4:
                    found |= {f"{scaled} {unit}", f"{scaled}{unit}"}
    found = {f for f in found if significant(f) >= 2 and not trivial(_value(f))}
    return found | {f.replace("-", "−") for f in found if f.startswith("-")}


def _value(form: str) -> float:
    """The number a printed form reads as: '61.0 GiB' -> 61.0, '86.6%' -> 86.6, '1.00' -> 1."""
    return float(
        re.match(r"[-−]?[\d.,_e+-]+", form)[0]
        .replace("−", "-")
        .replace(",", "")
        .replace("_", "")
        .rstrip("e+-")
    )


def pattern(form: str) -> re.Pattern:
    """``form`` standing alone: not a part of a longer number, nor the positive part of a
    negative one."""
    before = r"(?<![\d.])(?<!\d,)(?<!\d_)" + ("" if form[0] in "-−" else r"(?<![-−])")
    return re.compile(before + re.escape(form) + r"(?!\d)(?![.,_]\d)")


# What the lesson shows -----------------------------------------------------------------------


def shown_text(cell) -> str:
    """What a cell's outputs show as text: streams, plain text, HTML without its tags, errors."""
    parts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            parts.append(output["text"])
        data = output.get("data", {})
        if "text/plain" in data:
            parts.append(data["text/plain"])
        elif "text/html" in data:
            parts.append(re.sub(r"<[^>]+>", " ", data["text/html"]))
        if "text/markdown" in data:
            parts.append(data["text/markdown"])
        if output.get("output_type") == "error":
            parts.append(f"{output.get('ename')}: {output.get('evalue')}")
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


NAMES = re.compile(r"""(['"])\d+\.\d+\1""")  # "7.2" in check("7.2", ...) names an exercise


def written_text(cell) -> str:
    """What a code cell's source writes, less the exercises' names; nothing for markdown."""
    return NAMES.sub("", cell.source) if cell.cell_type == "code" else ""


def windows(nb) -> dict[str, list[tuple[int, str]]]:
    """For each checked exercise: (index, where) of the cells whose outputs must not show its
    answer: every cell above its check, the check cell, and the next code cells below it."""
    found = {}
    for index, cell in enumerate(nb.cells):
        for exercise in check_calls(cell):
            if exercise in found:
                continue
            cells = [(i, "above") for i in range(index)] + [(index, "the check")]
            below = [i for i in range(index + 1, len(nb.cells)) if nb.cells[i].cell_type == "code"]
            found[exercise] = cells + [(i, "below") for i in below[:BELOW]]
    return found


def giveaways(nb, expected: dict[str, list[float]]) -> list[dict]:
    """Every place an exercise's expected number is shown in its window (above its check, a
    form needs 3 significant digits: 0.33 far above is more often a coincidence than 0.330),
    or written in the code of the check cell and of the cells under it."""
    found = []
    texts = [shown_text(cell) for cell in nb.cells]
    codes = [written_text(cell) for cell in nb.cells]
    for exercise, cells in windows(nb).items():
        values = {v for v in expected.get(exercise, []) if not trivial(v)}
        patterns = {f: pattern(f) for v in values for f in forms(v)}
        for index, where in cells:
            places = [("output", texts[index])]
            if where != "above":
                places.append(("code", codes[index]))
            for form, regex in patterns.items():
                if where == "above" and significant(form) < 3:
                    continue
                for place, text in places:
                    hit = regex.search(text)
                    if hit:
                        start = max(0, hit.start() - 40)
                        found.append(
                            {
                                "exercise": exercise,
                                "shown": form,
                                "cell": nb.cells[index].get("id"),
                                "where": f"{where} (cell {index}, its {place})",
                                "context": " ".join(text[start : hit.end() + 40].split()),
                            }
                        )
    return _longest(found)


def _longest(found: list[dict]) -> list[dict]:
    """One entry per exercise, cell and spot: '0.8660' found, '0.866' in it is not repeated."""
    kept = []
    for item in sorted(found, key=lambda f: -len(f["shown"])):
        same = [k for k in kept if (k["exercise"], k["cell"]) == (item["exercise"], item["cell"])]
        if not any(item["shown"] in k["shown"] for k in same):
            kept.append(item)
    return kept


def allowed() -> list[dict]:
    return tomllib.loads(ALLOWED.read_text(encoding="utf-8")).get("allowed", [])


def is_allowed(item: dict, entries: list[dict]) -> dict | None:
    return next(
        (
            e
            for e in entries
            if (e["exercise"], e["shown"], e["cell"])
            == (item["exercise"], item["shown"], item["cell"])
        ),
        None,
    )


# The tests -----------------------------------------------------------------------------------


def test_the_allow_list_gives_a_reason_for_each_case():
    for entry in allowed():
        assert set(entry) == {"exercise", "shown", "cell", "reason"}, entry
        assert len(entry["reason"].split()) >= 4, entry


def test_the_number_forms_find_what_a_notebook_prints():
    assert pattern("0.87").search("mean 0.87 and") and not pattern("0.87").search("0.875")
    assert not pattern("87").search("0.87") and not pattern("768").search("1,768")
    assert not pattern("768").search("-768") and pattern("-8.0").search("a·b = -8.0")
    assert {"65,536,000,000", "65.5 GB", "61.0 GiB"} <= forms(65_536_000_000)
    assert {"0.87", "0.866", "0.8660", "86.6%"} <= forms(0.86603)
    assert trivial(3) and trivial(0.5) and trivial(20_000) and not trivial(768)
    assert "5_242_880" in forms(5_242_880) and pattern("5_242_880").search("(5_242_880, 3)")
    assert not pattern("242_880").search("5_242_880") and not pattern("5_242").search("5_242_880")
    assert {"3.4e-04", "3.4e-4"} <= forms(3.4e-4) and "1.64e10" in forms(1.6384e10)


def test_the_code_under_a_check_is_read_as_well_as_its_outputs():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell('check("7.2", layer_weights)'),
        nbformat.v4.new_markdown_cell("The reference:"),
        nbformat.v4.new_code_cell("assert reference == 5_242_880"),
        nbformat.v4.new_code_cell("assert other == 31_457_280"),
        nbformat.v4.new_code_cell("assert reference == 5_242_880  # a third cell down"),
    ]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell{i}"
    found = giveaways(nb, {"7.2": [5_242_880.0, 7.2]})
    assert [(g["shown"], g["cell"]) for g in found] == [("5_242_880", "cell2")], found
    assert "its code" in found[0]["where"]


@pytest.mark.parametrize("name", LESSONS)
def test_no_answer_is_shown_before_or_right_under_its_check(name):
    expected = recorded_answers(name)
    lesson = run(nbformat.read(ROOT / "lessons" / name, as_version=4), ROOT / "lessons")
    for exercise, values in choice_numbers(lesson).items():
        expected.setdefault(exercise, []).extend(values)
    entries = allowed()
    shown = giveaways(lesson, expected)
    problems = [g for g in shown if not is_allowed(g, entries)]
    for exercise, values in expected.items():
        first = EXERCISES[exercise].hints[0] if exercise in EXERCISES else ""
        for value in {v for v in values if not trivial(v)}:
            problems += [
                {"exercise": exercise, "shown": f, "cell": "-", "where": "its first hint"}
                | {"context": first}
                for f in forms(value)
                if pattern(f).search(first)
            ]
    lesson_number = str(int(name[:2]))
    stale = [
        e
        for e in entries
        if e["exercise"].split(".")[0] == lesson_number
        and not any(is_allowed(g, [e]) for g in shown)
    ]
    report = [
        f"{p['exercise']}: {p['shown']!r} in {p['where']}, id {p['cell']}: ...{p['context']}..."
        for p in problems
    ] + [f"allowed but no longer shown: {e}" for e in stale]
    assert not report, f"{name}: answers on screen too early:\n" + "\n".join(report)
