"""Authoring: ``solutions/`` is the single source; ``lessons/`` is generated from it.

Each solution is written as a text source, ``solutions/NN_name.py`` (a jupytext percent
script, see :mod:`course_tools.sources`), and executed into ``solutions/NN_name.ipynb``, which
keeps the outputs. In a solution, the model answer sits between two marker lines::

    def attention(q, k, v, mask=None):
        # BEGIN SOLUTION
        scores = ...
        # END SOLUTION

The lesson keeps everything else and replaces each region with a stub the learner
recognises, which keeps defined every name that later cells read:

- an indented region (a function body) becomes ``# YOUR CODE HERE`` and
  ``raise NotImplementedError()``, so the check reports "not done yet";
- a top-level region becomes ``# YOUR CODE HERE`` and ``name = None`` for each name it
  binds that a later cell reads;
- a markdown region (between ``<!-- BEGIN SOLUTION -->`` and ``<!-- END SOLUTION -->``)
  becomes an invitation to answer; a cell tagged ``solution-only`` is left out.

A written question (a markdown cell tagged ``free-text``, its model answer in a region) gets an
id in the lesson, ``2.w1``, ``2.w2``, ... in order, shown in its cell, and a cell after it that
calls ``reveal("2.w1", ...)``: the learner pastes their answer there to see the model answer
under it (:mod:`course_lib.model_answers`). The model answers go into
``course_lib/model_answers_data.py`` whenever the lessons are built.

Outputs, execution counts and run-specific metadata are dropped, so the same solutions
always give byte-identical lessons. Each lesson records in its metadata, under ``course``,
its number, a version computed from its cells (any change to a cell changes it) and a
fingerprint of each exercise's blank cell; ``course_lib.workspace`` uses these to tell a
learner that their copy is out of date and to carry their answers into the new version::

    "course": {"lesson": "03", "version": "<12 hex>", "exercises": {"<cell id>": "<8 hex>"}}

Every solution notebook, so every lesson, starts with the setup cell that installs the course
on a hosted notebook (Colab, Kaggle); the build adds it from one template and the
repository's address (:mod:`course_tools.setup_cell`, :mod:`course_tools.repository`).

Commands (run from the repository root)::

    python -m course_tools.authoring execute [SOURCE ...]  # the prompts' rules written, then
                                                           # solutions/*.ipynb built and run
    python -m course_tools.authoring lessons               # regenerate lessons/ (and the
                                                           # model answers of course_lib)
    python -m course_tools.authoring format                # ruff format the sources' code cells
    python -m course_tools.authoring rules                 # each prompt's "what you may use"
    python -m course_tools.authoring links                 # the links of README.md and docs/*.md,
                                                           # from the address
    python -m course_tools.authoring check                 # exit 1 if anything is out of date
"""

import argparse
import ast
import json
import os
import re
import sys
from pathlib import Path
from typing import NamedTuple

import nbformat
from markdown_it import MarkdownIt  # a dependency of jupytext

from course_lib import model_answers
from course_lib.lesson_format import ANSWER_PROMPT, COURSE, STUB_COMMENT, fingerprint, is_exercise

from . import prompts, repository, sources

BEGIN, END = "BEGIN SOLUTION", "END SOLUTION"
SOLUTION_ONLY = "solution-only"


def strip_region(lines: list[str], where: str):
    """Split lines into [(is_solution, lines)] chunks, a region's with both its marker lines;
    raise on unbalanced markers."""
    chunks, current, inside = [], [], False
    for line in lines:
        if BEGIN in line or END in line:
            opening = BEGIN in line
            if opening == inside:
                marker = BEGIN if opening else END
                raise ValueError(f"{where}: unbalanced '{marker}' marker in line {line.strip()!r}")
            if opening:
                chunks.append((False, current))
                current, inside = [line], True
            else:
                chunks.append((True, [*current, line]))
                current, inside = [], False
            continue
        current.append(line)
    if inside:
        raise ValueError(f"{where}: '{BEGIN}' without a matching '{END}'")
    chunks.append((False, current))
    return chunks


def _bound_names(code: str) -> list[str]:
    """Names a top-level block binds, in order: assignments, for targets, defs and classes."""
    names = []
    for node in ast.parse(code).body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For)):
            targets = [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        for target in targets:
            names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    return list(dict.fromkeys(names))


def _read_later(names: list[str], later_cells: list[str]) -> set[str]:
    """Which of ``names`` a later cell reads before binding it again."""
    pending, read = set(names), set()
    for code in later_cells:
        try:
            statements = ast.parse(code).body
        except SyntaxError:  # IPython magics: fall back to a textual search
            read |= {n for n in pending if re.search(rf"\b{n}\b", code)}
            continue
        for statement in statements:
            nodes = [n for n in ast.walk(statement) if isinstance(n, ast.Name)]
            read |= {n.id for n in nodes if isinstance(n.ctx, ast.Load) and n.id in pending}
            pending -= {n.id for n in nodes if isinstance(n.ctx, ast.Store)} | read
    return read


def _code_stub(region: list[str], later_cells: list[str]) -> list[str]:
    begin, body = region[0], region[1:]
    indent = begin[: len(begin) - len(begin.lstrip())]
    if indent:
        return [f"{indent}{STUB_COMMENT}", f"{indent}raise NotImplementedError()"]
    bound = _bound_names("\n".join(body))
    read = _read_later(bound, later_cells)
    return [STUB_COMMENT] + [f"{name} = None" for name in bound if name in read]


def _without_solutions(source: str, where: str) -> str:
    return "\n".join(
        line
        for solution, lines in strip_region(source.splitlines(), where)
        if not solution
        for line in lines
    )


class Chunk(NamedTuple):
    """Consecutive lines of a solution cell: a solution region (``solution``, its lines with
    their markers) or the lines around one; ``stub`` is what the lesson shows instead of a
    region (empty for the lines around)."""

    solution: bool
    lines: list[str]
    stub: list[str]


def regions(
    solution: nbformat.NotebookNode, name: str = "notebook"
) -> list[tuple[nbformat.NotebookNode, list[Chunk]]]:
    """Each cell a lesson keeps (``solution-only`` cells are left out), as ``(cell, chunks)``.

    The stubs are those the module docstring describes; nbgrader's and otter's builds
    (:mod:`course_tools.classroom`) reuse them.
    """
    cells = [c for c in solution.cells if SOLUTION_ONLY not in c.metadata.get("tags", [])]
    # What later cells read decides which names a top-level stub must keep defined.
    visible = [_without_solutions(c.source, f"{name} cell {i}") for i, c in enumerate(cells)]
    found = []
    for i, cell in enumerate(cells):
        later = [
            v
            for c, v in zip(cells[i + 1 :], visible[i + 1 :], strict=True)
            if c.cell_type == "code"
        ]
        chunks = strip_region(cell.source.splitlines(), f"{name} cell {i}")
        kept = []
        for j, (solution_part, lines) in enumerate(chunks):
            if not solution_part:
                stub = []
            elif cell.cell_type == "code":
                rest_of_cell = "\n".join(line for s, c in chunks[j + 1 :] if not s for line in c)
                stub = _code_stub(lines, [rest_of_cell, *later])
            else:
                stub = [ANSWER_PROMPT]
            kept.append(Chunk(solution_part, lines, stub))
        found.append((cell, kept))
    return found


def lesson_source(chunks: list[Chunk]) -> str:
    """A cell's source as the lesson shows it: each solution region replaced by its stub."""
    return "\n".join(line for c in chunks for line in (c.stub if c.solution else c.lines))


def make_lesson(solution: nbformat.NotebookNode, name: str = "notebook") -> nbformat.NotebookNode:
    """The lesson notebook for one solution notebook (a new object; the input is unchanged)."""
    written = {cell.get("id"): question for question, cell, _ in written_questions(solution, name)}
    lesson_cells = []
    for cell, chunks in regions(solution, name):
        question = written.get(cell.get("id"))
        if question is None:
            lesson_cells.append(clean_cell(cell, lesson_source(chunks)))
        else:
            lesson_cells += [
                clean_cell(cell, _labelled(lesson_source(chunks), question)),
                _reveal_cell(cell, question),
            ]
    lesson = nbformat.v4.new_notebook(cells=lesson_cells)
    lesson.metadata = {
        "kernelspec": solution.metadata.get(
            "kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"}
        ),
        "language_info": {"name": "python"},
        COURSE: course_metadata(lesson, name),
    }
    return lesson


# Written questions ----------------------------------------------------------------------------

WRITTEN_LABEL = "**Your answer:**"  # how a written question's cell starts


def written_questions(
    solution: nbformat.NotebookNode, name: str = "notebook"
) -> list[tuple[str, nbformat.NotebookNode, str]]:
    """Each written question of a solution notebook, as ``(id, cell, model answer)``.

    The ids are ``N.w1``, ``N.w2``, ... in order, N from the file name ``NN_name.ipynb``; a
    notebook not named so has no lesson number, so its written questions get no ids and are
    left out. A written question without a model answer is a ValueError.
    """
    prefix = Path(name).stem.split("_")[0]
    if not prefix.isdigit():
        return []
    found = []
    for cell, chunks in regions(solution, name):
        if cell.cell_type != "markdown" or model_answers.TAG not in cell.metadata.get("tags", []):
            continue
        # a region's lines without its two marker lines
        model = "\n".join(line for c in chunks if c.solution for line in c.lines[1:-1]).strip()
        model = re.sub(r"^\*Model answer\.\*\s*", "", model)  # reveal gives it its own title
        if not model:
            raise ValueError(
                f"{name}: the written question in cell {cell.get('id')} has no model answer "
                "between '<!-- BEGIN SOLUTION -->' and '<!-- END SOLUTION -->'"
            )
        found.append((model_answers.question_id(int(prefix), len(found) + 1), cell, model))
    return found


def _labelled(source: str, question: str) -> str:
    """A written question's lesson source with its id: ``**✍️ 2.w1 · Your answer:** ...``."""
    if source.startswith(WRITTEN_LABEL):
        return f"**✍️ {question} · Your answer:**{source[len(WRITTEN_LABEL) :]}"
    return f"**✍️ {question}**\n\n{source}"


def _reveal_cell(cell, question: str) -> nbformat.NotebookNode:
    """The cell after a written question's, which shows its model answer on request."""
    new = nbformat.v4.new_code_cell(
        model_answers.reveal_cell(question), metadata={"tags": [model_answers.REVEAL_TAG]}
    )
    new.id = f"{cell.get('id')}-reveal"
    return new


ANSWERS_HEADER = '''# ruff: noqa: E501
"""The model answers of the written questions, by id; :mod:`course_lib.model_answers` shows them.

Generated from ``solutions/`` by ``python -m course_tools.authoring lessons``: do not edit
(``python -m course_tools.authoring check`` fails while it disagrees with the solutions).
"""

'''


def model_answers_text(solutions: Path) -> str:
    """The text of ``course_lib/model_answers_data.py`` for the notebooks of ``solutions``:
    each written question's lesson cell id and its model answer, as markdown and as HTML."""
    markdown = MarkdownIt("commonmark", {"html": False})  # raw HTML in an answer shows as text
    entries = []
    for path in sorted(solutions.glob("[0-9]*.ipynb")):
        solution = nbformat.read(path, as_version=4)
        for question, cell, model in written_questions(solution, path.name):
            where = f"{path.name} cell {cell.get('id')}"
            entries.append(
                f'    "{question}": {{\n'
                f'        "cell": "{cell.get("id")}",\n'
                f'        "markdown": {_literal(model, where)},\n'
                f'        "html": {_literal(markdown.render(model), where)},\n'
                "    },\n"
            )
    return ANSWERS_HEADER + "ANSWERS = {\n" + "".join(entries) + "}\n"


def _literal(text: str, where: str) -> str:
    """``text`` as a raw triple-quoted literal on lines of its own (the reader strips the first
    and last line break); lines lose their trailing spaces, as the linter wants."""
    if '"""' in text:
        raise ValueError(f"{where}: a model answer cannot contain three double quotes in a row")
    lines = "\n".join(line.rstrip() for line in text.strip().splitlines())
    return f'r"""\n{lines}\n"""'


def write_model_answers(solutions: Path, target: Path) -> bool:
    """Write the model answers of ``solutions`` into ``target``; returns whether it changed."""
    text = model_answers_text(solutions)
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return False
    target.write_text(text, encoding="utf-8")
    return True


def stale_model_answers(solutions: Path, target: Path) -> list[str]:
    """Why ``target`` differs from what :func:`write_model_answers` would write (empty: in sync)."""
    if not target.exists():
        return [f"{target} is missing"]
    if target.read_text(encoding="utf-8") != model_answers_text(solutions):
        return [f"{target} differs from the model answers of {solutions}/"]
    return []


def lesson_version(lesson: nbformat.NotebookNode) -> str:
    """The version of a lesson: a fingerprint of its cells' ids, types, tags and sources.

    Only the cells count, not the notebook metadata, so the version can be stored in the
    notebook it describes, and read back and recomputed from a saved copy.
    """
    cells = [
        [c.get("id"), c.cell_type, list(c.metadata.get("tags", [])), c.source] for c in lesson.cells
    ]
    return fingerprint(json.dumps(cells, ensure_ascii=False), 12)


def course_metadata(lesson: nbformat.NotebookNode, name: str = "notebook") -> dict:
    """What a lesson records under ``metadata["course"]``; see the module docstring.

    ``exercises`` maps each exercise cell's id to a fingerprint of its blank source, so an
    update can tell an answer from an untouched stub, even in a cell that is gone since.
    """
    return {
        "lesson": Path(name).stem.split("_")[0],
        "version": lesson_version(lesson),
        "exercises": {c.id: fingerprint(c.source) for c in lesson.cells if is_exercise(c)},
    }


def clean_cell(cell, source: str) -> nbformat.NotebookNode:
    """A new cell of the same type and id with ``source``, its tags and nothing else."""
    tags = cell.metadata.get("tags", [])
    metadata = {"tags": list(tags)} if tags else {}
    if cell.cell_type == "code":
        new = nbformat.v4.new_code_cell(source, metadata=metadata)
    else:
        new = nbformat.v4.new_markdown_cell(source, metadata=metadata)
    new.id = cell.get("id", new.id)
    return new


def lesson_text(solution_path: Path) -> str:
    """The exact text of the lesson generated from one solution notebook."""
    solution = nbformat.read(solution_path, as_version=4)
    return nbformat.writes(make_lesson(solution, solution_path.name)) + "\n"


def build_lessons(solutions: Path, lessons: Path, only: list[Path] = ()) -> list[Path]:
    """Write every lesson notebook (or those of ``only``); returns the files whose text changed."""
    lessons.mkdir(exist_ok=True)
    changed = []
    for path in sorted(only or solutions.glob("*.ipynb")):
        target = lessons / path.name
        text = lesson_text(path)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            changed.append(target)
    return changed


def stale_lessons(solutions: Path, lessons: Path) -> list[str]:
    """Why ``lessons/`` differs from what ``build_lessons`` would write (empty: in sync)."""
    problems = []
    expected = {p.name for p in solutions.glob("*.ipynb")}
    for name in sorted({p.name for p in lessons.glob("*.ipynb")} - expected):
        problems.append(f"lessons/{name} has no solutions/{name}")
    for name in sorted(expected):
        target = lessons / name
        if not target.exists():
            problems.append(f"lessons/{name} is missing")
        elif target.read_text(encoding="utf-8") != lesson_text(solutions / name):
            problems.append(f"lessons/{name} differs from what solutions/{name} generates")
    return problems


def execute(path: Path, timeout: int = 600) -> None:
    """Run a notebook top to bottom in a fresh kernel and save it with its outputs.

    A solution notebook is first rebuilt from its text source (``NN_name.py`` beside it), so
    what runs is what the source says; a notebook without a source (e.g. a copy of a lesson)
    runs as it is.
    """
    from nbclient import NotebookClient

    source = sources.source_of(path)
    nb = sources.build(source) if source.exists() else nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,
        record_timing=False,  # timestamps in every cell would make each run a diff
    ).execute()
    nbformat.write(nb, path)


def record(paths: list[Path], afresh: bool) -> list[Path]:
    """Run the solution notebooks as a grader runs them, with ``course_lib.replay`` recording
    what each replayable demonstration returns there (lesson 7's on the shipped checkpoint),
    for graded runs to replay; ``afresh``, every earlier record goes first. The notebooks are
    not saved."""
    from nbclient import NotebookClient

    from course_lib import replay

    for old in replay.STORED.glob("*.pt") if afresh else ():
        old.unlink()
    os.environ[replay.RECORD] = os.environ[replay.GRADING] = "1"  # the kernels inherit them
    try:
        for path in paths:
            print(f"recording the demonstrations of {path}", flush=True)
            nb = sources.build(sources.source_of(path))
            resources = {"metadata": {"path": str(path.parent)}}
            NotebookClient(nb, timeout=600, kernel_name="python3", resources=resources).execute()
    finally:
        del os.environ[replay.RECORD], os.environ[replay.GRADING]
    return sorted(replay.STORED.glob("*.pt"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_tools.authoring", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "command", choices=["execute", "record", "lessons", "check", "format", "rules", "links"]
    )
    parser.add_argument(
        "notebooks",
        nargs="*",
        type=Path,
        help="solution notebooks (or their .py sources) to execute, regenerate, format or "
        "write the rules into (default: all of solutions/)",
    )
    parser.add_argument("--solutions", type=Path, default=Path("solutions"))
    parser.add_argument("--lessons", type=Path, default=Path("lessons"))
    parser.add_argument(
        "--pages",
        nargs="+",
        type=Path,
        help="the pages whose links are written from the address (default: README.md, docs/*.md)",
    )
    parser.add_argument("--answers", type=Path, default=Path("course_lib/model_answers_data.py"))
    args = parser.parse_args(argv)
    chosen = [p.with_suffix(".ipynb") for p in args.notebooks]
    every = sorted(p.with_suffix(".ipynb") for p in args.solutions.glob("[0-9]*.py"))
    if args.command == "execute":  # the prompts' rules first: they are part of the source
        for path in chosen or every:
            if prompts.write(sources.source_of(path)):
                print(f"wrote the rules into the prompts of {sources.source_of(path)}")
            print(f"executing {sources.source_of(path)} -> {path}", flush=True)
            execute(path)
        return 0
    if args.command == "record":
        for path in record(chosen or every, afresh=not chosen):
            print(f"wrote {path}")
        return 0
    if args.command == "format":
        for path in chosen or every:
            if sources.format_code(sources.source_of(path)):
                print(f"formatted {sources.source_of(path)}")
        return 0
    if args.command == "rules":
        for path in chosen or every:
            if prompts.write(sources.source_of(path)):
                print(f"wrote the rules into the prompts of {sources.source_of(path)}")
        return 0
    if args.command == "lessons":
        for path in build_lessons(args.solutions, args.lessons, chosen):
            print(f"wrote {path}")
        if write_model_answers(args.solutions, args.answers):
            print(f"wrote {args.answers}")
        return 0
    pages = args.pages or repository.documents(Path("."))
    if args.command == "links":
        try:
            written = repository.write_links(pages, repository.address(), args.lessons)
        except (ValueError, OSError) as e:  # no table, two tables, a page that is not there
            parser.error(str(e))
        for page in written:
            print(f"wrote the links of {repository.address()} into {page}")
        return 0
    problems = [d for p in sorted(args.solutions.glob("[0-9]*.ipynb")) if (d := sources.drift(p))]
    problems += stale_lessons(args.solutions, args.lessons)
    problems += stale_model_answers(args.solutions, args.answers)
    links = repository.links_drift(pages, repository.address(), args.lessons)
    if links:
        print(f"{links}; write them with: python -m course_tools.authoring links")
    prompt_problems = [d for p in every for d in prompts.drift(sources.source_of(p))]
    for problem in problems + prompt_problems:
        print(problem)
    if prompt_problems:
        print("Write the rules into the prompts with: python -m course_tools.authoring rules")
    if problems or prompt_problems:
        print("Rebuild them with: make solutions  (or, for lessons/ only: make lessons)")
    return 1 if problems or prompt_problems or links else 0


if __name__ == "__main__":
    sys.exit(main())
