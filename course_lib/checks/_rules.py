"""What an exercise's answer may use, read the same way by the notebook's check and the grader.

Each exercise declares its :class:`Rules`: which of ``course_lib``'s reference names the
answer may use (by default none: the exercise is there to be written, not imported), which
library functions the prompt rules out, and whether Python loops are allowed. The check reads
the answer objects themselves (a function's code, what its globals and closures hold) and,
for answers that are values, the source of the cell that made them: in the notebook, the
kernel's history of executed cells; at grading, the submission's cells. Nothing here runs
the learner's code.
"""

import ast
import contextlib
import dis
import functools
import importlib
import sys
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# course_lib's own helpers for notebooks and checks are not reference code. The widgets are:
# an explorer's numbers (lesson 1's path lengths and layer costs) are the lesson's reference.
NOT_REFERENCE = ("course_lib.checks", "course_lib.notebook")


@dataclass(frozen=True)
class Rules:
    """What an answer may use. Each exercise states it in its prompt (:meth:`describe`).

    Args:
        uses: dotted ``course_lib`` names the answer may use, e.g.
            ``("course_lib.masks.padding_mask",)``; any other reference name is flagged.
        forbidden: dotted names of library functions or classes the prompt rules out, e.g.
            ``("torch.nn.functional.layer_norm",)``; how the answer reaches them (an alias,
            ``from ... import``, a helper function) does not matter.
        loops: False when the exercise asks for vectorised code: no ``for``, ``while`` or
            comprehension in the answer's functions or the helpers they call.
        written_out: keyword arguments the cell that makes a value answer may not pass, where
            the exercise asks for that computation written out, e.g. ``("label_smoothing",)``.
    """

    uses: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    loops: bool = True
    written_out: tuple[str, ...] = ()

    def describe(self) -> str:
        """The prompt's sentence saying what may be used."""
        text = "*What you may use:* "
        if self.uses:
            text += "anything, but from `course_lib` only " + _listed(self.uses, "and")
        else:
            text += "anything but `course_lib`'s reference code"
        if self.forbidden:
            text += "; not " + _listed(self.forbidden, "or")
        if not self.loops:
            text += "; no Python loop (`for`, `while` or a comprehension)"
        if self.written_out:
            text += "; not " + _listed(tuple(f"{k}=" for k in self.written_out), "or")
        return text + "."

    def broken(self, answers: Iterable, names: Iterable[str], sources=None) -> tuple[str, list]:
        """Why the answers break these rules ("" if they don't), and the course_lib names used."""
        answers, names = list(answers), list(names)
        why, flagged = self.refused(course_lib_uses(answers, names, sources))
        if why:
            return why, flagged
        codes = [code for answer in answers for code in learner_code(answer)]
        reached = {id(obj): name for code, space in codes for obj, name in _reached(code, space)}
        for name in self.forbidden:
            target = _resolve(name)
            if target is not None and id(target) in reached:
                written = reached[id(target)]
                known = f" (`{_short(name)}`)" if written != _short(name) else ""
                return (
                    f"your answer uses `{written}`{known}, which this exercise rules out, so "
                    "the grader gives no point for it: write it from basic operations.",
                    [],
                )
        if not self.loops and any(_loops(code) for code, _ in codes):
            return (
                "your answer uses a Python loop (for, while or a comprehension); this exercise "
                "asks for vectorised code, whole tensors at a time, so the grader gives no "
                "point for it.",
                [],
            )
        return self._passed_keyword(names, sources), []

    def _passed_keyword(self, names: list[str], sources) -> str:
        """Why a value answer is made with a keyword of ``written_out`` ("" if it is not): in
        the statements that assign it, or in those that assign a name they read (a loss
        function made in an earlier cell). A keyword given 0 turns the feature off."""
        trees = [t for t in map(parse, notebook_history() if sources is None else sources) if t]
        for name in names if self.written_out else []:
            made = _assignments(trees, name)
            read = {n.id for s in made for n in ast.walk(s.value) if isinstance(n, ast.Name)}
            made += [s for other in read - {name} for s in _assignments(trees, other)]
            passed = {
                k.arg
                for s in made
                for k in ast.walk(s)
                if isinstance(k, ast.keyword)
                and not (isinstance(k.value, ast.Constant) and k.value.value == 0)
            }
            if keyword := next((k for k in self.written_out if k in passed), None):
                return (
                    f"`{name}` is computed with `{keyword}=`: this exercise asks for it written "
                    "out, so the grader gives no point for it."
                )
        return ""

    def refused(self, uses: Iterable[str]) -> tuple[str, list]:
        """The verdict on answers that use these course_lib names ("", [] if none is refused)."""
        flagged = sorted(n for n in uses if not self._permits(n))
        if not flagged:
            return "", []
        instead = (
            f"use only {_listed(self.uses, 'and')} from it"
            if self.uses
            else "write it without course_lib"
        )
        return (
            f"your answer uses course_lib's {_listed(flagged, 'and')}. This exercise is for "
            f"writing it yourself, so the grader gives no point for it: {instead}.",
            flagged,
        )

    def _permits(self, name: str) -> bool:
        """A declared name, the same object under its defining module's name, or a module
        that holds one (``from course_lib import masks`` to call ``masks.padding_mask``)."""
        allowed = set(self.uses) | {_qualified(o) for o in map(_resolve, self.uses) if o}
        return name in allowed or any(a.startswith(f"{name}.") for a in allowed)


def _listed(names: Iterable[str], word: str) -> str:
    """``a``, ``a and b``, ``a, b and c`` (or with "or"), each name short and in backticks."""
    *rest, last = [f"`{_short(name)}`" if name != "course_lib" else "package" for name in names]
    return f"{', '.join(rest)} {word} {last}" if rest else last


def _short(name: str) -> str:
    """``course_lib.masks.padding_mask`` -> ``padding_mask``; ``torch.nn.functional.x`` ->
    ``F.x``; ``torch.nn.X`` -> ``nn.X``: the names as the lessons write them."""
    for long, short in (("torch.nn.functional.", "F."), ("torch.nn.", "nn.")):
        if name.startswith(long):
            return short + name[len(long) :]
    return name.rsplit(".", 1)[-1] if name.startswith("course_lib.") else name


def _resolve(dotted: str):
    """The object a dotted name refers to, or None if it cannot be imported."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        with contextlib.suppress(AttributeError):
            return functools.reduce(getattr, parts[cut:], obj)
        return None
    return None


def _qualified(obj) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '?')}"


def _ours(name: str) -> bool:
    """A name from the course's reference code (not its checks or notebook helpers)."""
    name = name or ""
    return (name == "course_lib" or name.startswith("course_lib.")) and not name.startswith(
        NOT_REFERENCE
    )


def _learners(obj) -> bool:
    """A function or class the learner wrote: defined in the notebook, not in a package."""
    module = getattr(obj, "__module__", None) or ""
    return module == "__main__" or module not in sys.modules or module.startswith("__")


# The answer's code: its functions, the helpers they call, what they reach ---------------------


def learner_code(answer) -> list[tuple[types.CodeType, dict]]:
    """Every code object the learner wrote that ``answer`` runs: its own, nested functions and
    comprehensions, and those of the learner's functions it reaches through its globals,
    closure and defaults; each with the globals it runs in."""
    found, seen = [], set()
    pending = [answer]
    while pending:
        obj = pending.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        obj = _unwrapped(obj)
        if isinstance(obj, types.MethodType | staticmethod | classmethod):
            pending.append(obj.__func__)
        elif isinstance(obj, functools.partial):
            pending.append(obj.func)
        elif isinstance(obj, type) and _learners(obj):
            pending += [v for v in vars(obj).values() if callable(v) or isinstance(v, property)]
        elif isinstance(obj, types.FunctionType) and _learners(obj):
            for code in _nested(obj.__code__):
                found.append((code, obj.__globals__))
                pending += [obj.__globals__[n] for n in _globals(code) if n in obj.__globals__]
            for cell in obj.__closure__ or ():
                with contextlib.suppress(ValueError):  # an empty cell has no contents
                    pending.append(cell.cell_contents)
            pending += [*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values()]
        elif callable(obj) and not isinstance(obj, type) and _learners(type(obj)):
            pending.append(type(obj))  # an instance of a class the learner wrote
    return found


def _unwrapped(obj):
    """``obj`` without ``functools.wraps`` layers (a recorder or decorator around it)."""
    while hasattr(obj, "__wrapped__") and isinstance(obj, types.FunctionType):
        obj = obj.__wrapped__
    return obj


def _globals(code: types.CodeType) -> set[str]:
    """The global names ``code`` loads (``co_names`` also holds attribute names: ``model.train``
    must not count as a global ``train``)."""
    return {
        i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")
    }


def _imported(code: types.CodeType) -> set[str]:
    """What ``code`` imports, dotted: ``import a.b`` gives a.b, ``from a import b`` gives a.b."""
    found, module = set(), ""
    for ins in dis.get_instructions(code):
        if ins.opname == "IMPORT_NAME":
            module = ins.argval
            found.add(module)
        elif ins.opname == "IMPORT_FROM":
            found.discard(module)  # the names imported count, not the module they come from
            found.add(f"{module}.{ins.argval}")
    return found


def _nested(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _nested(const)


def _reached(code: types.CodeType, space: dict) -> Iterator[tuple[object, str]]:
    """The objects ``code`` loads by a global name and attribute chain (``F.layer_norm``),
    with the name written in the code."""
    obj, name = None, ""
    builtins = space.get("__builtins__", {})
    builtins = vars(builtins) if isinstance(builtins, types.ModuleType) else builtins
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            name = ins.argval
            obj = space.get(name, builtins.get(name))
        elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and obj is not None:
            name = f"{name}.{ins.argval}"
            obj = getattr(obj, ins.argval, None)
        else:
            obj = None
            continue
        if obj is not None:
            yield obj, name


def _chain_ends(code: types.CodeType, space: dict) -> list[object]:
    """The object at the end of each global-and-attribute chain ``code`` loads: for
    ``masks.causal_mask(3)`` the function, not the module it was reached through."""
    ends, last = [], None
    for obj, name in _reached(code, space):
        if last is not None and not name.startswith(f"{last[1]}."):
            ends.append(last[0])
        last = (obj, name)
    return ends + ([last[0]] if last is not None else [])


def _loops(code: types.CodeType) -> bool:
    """Whether ``code`` loops: a for loop or a comprehension steps an iterator (FOR_ITER),
    and every loop jumps back to an earlier instruction (whatever the jump is called in this
    Python version)."""
    return any(
        ins.opname == "FOR_ITER"
        or ("JUMP" in ins.opname and isinstance(ins.argval, int) and ins.argval <= ins.offset)
        for ins in dis.get_instructions(code)
    )


# Which course_lib names an answer uses ---------------------------------------------------------


def reference_uses(obj, seen=None, top=True) -> set[str]:
    """The course_lib functions and classes an answer is, wraps or calls, as dotted names."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return set()
    seen.add(id(obj))
    more = functools.partial(reference_uses, seen=seen, top=False)
    if isinstance(obj, types.ModuleType):
        return {obj.__name__} if _ours(obj.__name__) else set()
    if isinstance(obj, functools.partial):
        return set().union(more(obj.func), *map(more, obj.args), *map(more, obj.keywords.values()))
    if isinstance(obj, types.MethodType | staticmethod | classmethod):
        return more(obj.__func__)
    if isinstance(obj, types.FunctionType | type | types.BuiltinFunctionType):
        if _ours(getattr(obj, "__module__", "")):
            return {_qualified(obj)}
        if isinstance(obj, types.FunctionType):
            return _function_uses(obj, more)
        if isinstance(obj, type) and obj.__module__ == "__main__":  # a class the learner wrote
            parts = [*obj.__bases__, *vars(obj).values()]
            return set().union(*(more(p) for p in parts if p is not object))
        return set()
    if top and callable(obj):  # an instance handed in as the answer, e.g. a module
        return {_qualified(type(obj))} if _ours(type(obj).__module__) else more(type(obj))
    return set()


def _function_uses(fn, more) -> set[str]:
    codes = list(_nested(fn.__code__))
    found = {n for code in codes for n in _imported(code) if _ours(n)}  # imports inside it
    found |= set().union(
        *(more(obj) for code in codes for obj in _chain_ends(code, fn.__globals__))
    )
    for cell in fn.__closure__ or ():
        with contextlib.suppress(ValueError):  # an empty closure cell has no contents
            found |= more(cell.cell_contents)
    defaults = (*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values())
    return found.union(*map(more, defaults))


def course_lib_uses(answers: list, names: list[str], sources=None) -> set[str]:
    """The course_lib names the answers use.

    A function (or class, or module) answer is judged by what its code reaches at run time,
    as the grader's copy of it is. A value cannot tell how it was made, so for a value the
    cell that last bound its name is read, with the course_lib imports of the cells run up
    to that one (in the notebook, the kernel's history; at grading, the notebook's cells).
    """
    found = set().union(*(reference_uses(a) for a in answers))
    values = [n for n, a in zip(names, answers, strict=True) if not callable(a)]
    trees = [parse(s) for s in (notebook_history() if sources is None else sources)]
    trees = [t for t in trees if t is not None]
    for name in values:
        last = next((i for i in reversed(range(len(trees))) if name in binds(trees[i])), None)
        if last is not None:
            found |= cell_uses(trees[last], course_lib_aliases(trees[: last + 1]))
    return {n for n in found if _ours(n)}


def written_uses(names: list[str], sources: list[str]) -> set[str]:
    """The course_lib names written inside the ``def`` (or ``class``) that last binds each of
    ``names`` in the cells, or in the whole cell where an import or an assignment binds it:
    what the cells' text alone says of the answers' code. At grading the grader reads it
    itself, whatever the sandbox that holds the code reports."""
    trees = [t for t in map(parse, sources) if t is not None]
    found = set()
    for name in names:
        last = next((i for i in reversed(range(len(trees))) if name in binds(trees[i])), None)
        if last is None:
            continue
        kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
        defs = [n for n in trees[last].body if isinstance(n, kinds) and n.name == name]
        tree = ast.Module(body=defs, type_ignores=[]) if defs else trees[last]
        found |= cell_uses(tree, course_lib_aliases(trees[: last + 1]))
    return {n for n in found if _ours(n)}


def notebook_history() -> list[str]:
    """The cells run so far in this IPython kernel, oldest first; empty outside IPython."""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    history = getattr(shell, "user_ns", {}).get("In", []) if shell else []
    return [cell for cell in history if isinstance(cell, str)]


def parse(source: str) -> ast.Module | None:
    """A cell as a syntax tree; IPython magics and shell escapes are blanked out first."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _assignments(trees: list[ast.Module], name: str) -> list[ast.stmt]:
    """The statements that assign ``name`` in the last cell that binds it."""
    tree = next((t for t in reversed(trees) if name in binds(t)), ast.Module([], []))
    kinds = ast.Assign | ast.AnnAssign | ast.AugAssign
    return [
        s
        for s in ast.walk(tree)
        if isinstance(s, kinds)
        and s.value is not None
        and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(_targets(s)))
    ]


def _targets(statement) -> ast.AST:
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return ast.Tuple(targets, ast.Store())


def binds(tree: ast.Module) -> set[str]:
    """Names a cell binds at top level, also under ``if``, ``for``, ``with`` or ``try``:
    assignments, loop targets, defs, classes and imports (not names inside the functions)."""
    names = set()
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(statement.name)
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    return names


def course_lib_aliases(trees) -> dict[str, str]:
    """The names the cells, run in this order, leave bound to course_lib by an import:
    alias -> dotted origin. A cell that binds a name otherwise takes it back."""
    aliases = {}
    for tree in trees:
        for name in binds(tree):
            aliases.pop(name, None)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "course_lib":
                        aliases[a.asname or "course_lib"] = a.name if a.asname else "course_lib"
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course_lib"):
                for a in node.names:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _dotted(node) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return [node.id, *parts] if isinstance(node, ast.Name) else None


def cell_uses(tree: ast.Module, aliases: dict[str, str]) -> set[str]:
    """The course_lib objects a cell refers to, as dotted names."""
    found, inner = set(), set()
    stored = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    stored |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in _all_args(n)}
    aliases = {k: v for k, v in aliases.items() if k not in stored}  # names the cell rebinds
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute | ast.Name) and id(node) not in inner:
            parts = _dotted(node)  # None for `f(x).attr`: the name inside is found on its own
            if parts and parts[0] in aliases:
                found.add(".".join([aliases[parts[0]], *parts[1:]]))
            if parts:
                inner |= {id(n) for n in ast.walk(node)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "course_lib"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "course_lib":
            found |= {f"{node.module}.{a.name}" for a in node.names}  # what is imported
    return {_canonical(n) for n in found}


def _all_args(arguments: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *extra]


def _canonical(dotted: str) -> str:
    """A dotted name under its defining module (``course_lib.masks.causal_mask`` for a
    re-export); unchanged if it cannot be resolved."""
    obj = _resolve(dotted)
    return _qualified(obj) if obj is not None and not isinstance(obj, int | float | str) else dotted
