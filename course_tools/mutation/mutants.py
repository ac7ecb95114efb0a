"""The wrong variants of one answer cell: every operator at every node of its solution regions.

Only nodes whose lines lie between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` change: the
rest of the cell (the given inputs, a function's signature and docstring) is the lesson's,
not the learner's. A variant is the cell's text with one statement rewritten (or removed),
so the diff a maintainer reads is one line, with the cell's comments and layout intact.

Each variant's id names the operator and the statement before and after, both written by
``ast.unparse`` (comments and layout do not count). It depends on nothing else, so an
allow-list entry survives edits elsewhere in the lesson and the order variants run in; the
same rewrite of an identical statement a second time gets `` (2)``.
"""

import ast
import copy
import difflib
import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from .operators import DELETE, OPERATORS

BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"


@dataclass(frozen=True)
class Mutant:
    """One wrong variant of an answer cell."""

    exercise: str
    operator: str
    before: str  # the statement that changed, one line (a block: its first line)
    after: str  # what it became, or "(deleted)"
    occurrence: int  # 1, or n for the n-th identical rewrite of an identical statement
    line: int  # where the statement starts in the cell
    source: str  # the whole cell, rewritten

    @property
    def id(self) -> str:
        text = f"{self.operator}: {self.before} → {self.after}"
        return text if self.occurrence == 1 else f"{text} ({self.occurrence})"

    def diff(self, original: str) -> str:
        """The changed lines, as a unified diff without its header."""
        lines = difflib.unified_diff(
            original.splitlines(), self.source.splitlines(), lineterm="", n=0
        )
        return "\n".join(line for line in lines if not line.startswith(("---", "+++")))


def sample(found: list[Mutant], size: int) -> list[Mutant]:
    """A fixed sample of ``size`` variants, in their usual order: those whose ids hash lowest.

    The hash is of the exercise and the id alone, so a variant is in the sample or not
    whatever else changed in the lesson, and every run of the same sample is comparable.
    """
    if size >= len(found):
        return found

    def rank(m: Mutant) -> str:
        return hashlib.sha256(f"{m.exercise}\n{m.id}".encode()).hexdigest()

    kept = {m.id for m in sorted(found, key=rank)[:size]}
    return [m for m in found if m.id in kept]


def regions(source: str) -> list[tuple[int, int]]:
    """The (first, last) lines, 1-based, between each BEGIN and END SOLUTION pair."""
    found, start = [], None
    for number, line in enumerate(source.splitlines(), 1):
        if line.strip() == BEGIN:
            start = number
        elif line.strip() == END and start is not None:
            found.append((start + 1, number - 1))
            start = None
    return found


def python_source(cell_source: str) -> str:
    """The cell as plain Python (IPython magics rewritten), which the variants are built from."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell_source)


def mutants(exercise: str, source: str) -> list[Mutant]:
    """Every distinct variant of ``source`` (plain Python) inside its solution regions."""
    tree = ast.parse(source)
    lines = source.splitlines()
    spans = regions(source)
    found, seen, counts = [], {source}, Counter()
    for site in _sites(tree):
        if not _inside(site.node, spans):
            continue
        for name, rewrite in OPERATORS.items():
            for replacement in rewrite(site.node, site.parent):
                made = _apply(tree, lines, site, replacement)
                if made is None or made[2] in seen or not _compiles(made[2]):
                    continue
                before, after, text, line = made
                seen.add(text)
                counts[name, before, after] += 1
                occurrence = counts[name, before, after]
                found.append(Mutant(exercise, name, before, after, occurrence, line, text))
    return found


@dataclass(frozen=True)
class _Site:
    node: ast.AST
    parent: ast.AST | None
    path: tuple  # ((field, index or None), ...) from the module down to the node
    statement: tuple  # the path of the innermost statement holding the node


def _sites(tree: ast.Module) -> Iterator[_Site]:
    """Every node with its parent, its path and its innermost statement's path, in order."""

    def visit(node, parent, path, statement):
        if isinstance(node, ast.stmt):
            statement = path
        yield _Site(node, parent, path, statement)
        for field, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for i, child in enumerate(children):
                if isinstance(child, ast.AST):
                    step = (field, i if isinstance(value, list) else None)
                    yield from visit(child, node, (*path, step), statement)

    for i, statement in enumerate(tree.body):
        yield from visit(statement, tree, (("body", i),), ())


def _inside(node: ast.AST, spans: list[tuple[int, int]]) -> bool:
    start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    return start is not None and any(a <= start and end <= b for a, b in spans)


def _inert(statement: ast.stmt) -> bool:
    """A statement that does nothing: a docstring, ``...`` or another lone constant."""
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _locate(tree: ast.AST, path: tuple) -> ast.AST:
    node = tree
    for field, index in path:
        node = getattr(node, field) if index is None else getattr(node, field)[index]
    return node


def _apply(tree, lines, site: _Site, replacement) -> tuple[str, str, str, int] | None:
    """(before, after, the rewritten cell, line) for one replacement; None if it cannot be made."""
    original = _locate(tree, site.statement)
    if not _whole_lines(original, lines):
        return None
    field, index = site.path[-1]
    if replacement is DELETE:
        # A block needs a statement, and a function left with only its docstring is a stub
        # (the check calls it "not done"): deleting the only statement is no variant.
        rest = [s for s in getattr(site.parent, field) if s is not original]
        if all(_inert(s) for s in rest):
            return None
        changed, text = None, None
    else:
        copied = copy.deepcopy(tree)
        holder = _locate(copied, site.path[:-1])
        if index is None:
            setattr(holder, field, replacement)
        else:
            getattr(holder, field)[index] = replacement
        changed = _locate(copied, site.statement)
        text = _indented(ast.unparse(changed), lines[original.lineno - 1][: original.col_offset])
    before = headline(original)
    after = "(deleted)" if changed is None else headline(changed)
    if before == after:
        return None
    kept = [text] if text else []
    new_lines = lines[: original.lineno - 1] + kept + lines[original.end_lineno :]
    return before, after, "\n".join(new_lines) + "\n", original.lineno


def _whole_lines(statement: ast.stmt, lines: list[str]) -> bool:
    """Whether the statement has its lines to itself (no ``a = 1; b = 2``), so they can be
    replaced as a whole; a comment after it may go."""
    head = lines[statement.lineno - 1][: statement.col_offset]
    tail = lines[statement.end_lineno - 1][statement.end_col_offset :].strip()
    return not head.strip() and (not tail or tail.startswith("#"))


def _indented(text: str, indent: str) -> str:
    return "\n".join(indent + line if line else line for line in text.splitlines())


def headline(statement: ast.stmt) -> str:
    """A statement on one line; a block (``if``, ``for``, ``def``...) by its first line."""
    if hasattr(statement, "body"):
        statement = copy.copy(statement)
        statement.body = [ast.Expr(ast.Constant(...))]
        for field in ("orelse", "finalbody", "handlers", "decorator_list"):
            if hasattr(statement, field):
                setattr(statement, field, [])
        return ast.unparse(statement).splitlines()[0]
    return " ".join(ast.unparse(statement).split("\n"))


def _compiles(source: str) -> bool:
    try:
        compile(source, "<variant>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True
