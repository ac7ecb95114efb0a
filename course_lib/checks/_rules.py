"""What an exercise's answer may use, read the same way by the notebook's check and the grader.

Each exercise declares its :class:`Rules`: which of ``course_lib``'s reference names the
answer may use (by default none: the exercise is there to be written, not imported), which
library functions the prompt rules out, whether Python loops are allowed, and which keywords
a value answer may not be computed with. The check reads the answer objects themselves (a
function's code, what its globals and closures hold) and, for answers that are values, the
source of the cell that made them: in the notebook, the kernel's history of executed cells;
at grading, the submission's cells. Nothing here runs the learner's code.
"""

import ast
import contextlib
import dis
import functools
import pkgutil
import sys
import sysconfig
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# course_lib's own helpers for notebooks and checks are not reference code. The widgets are:
# an explorer's numbers (lesson 1's path lengths and layer costs) are the lesson's reference.
NOT_REFERENCE = ("course_lib.checks", "course_lib.notebook")
# Code installed with Python or a package (torch, numpy) is not read: it never calls course_lib.
_INSTALLED = tuple({sysconfig.get_path(k) for k in ("stdlib", "purelib", "platlib")})
_NO_POINT = "so the grader gives no point for it"
_DEFS = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


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
        codes = [code for answer in answers for code in _walk(answer)[1]]
        return self._misused(codes) or self._passed_keyword(names, sources), []

    def _misused(self, codes: list) -> str:
        """Why the learner's code calls a ``forbidden`` function or loops ("" if it doesn't)."""
        loaded = {id(obj): name for ends, _ in codes for obj, name in ends}
        for dotted in self.forbidden:
            if written := loaded.get(id(_resolve(dotted))):  # never None's: none is loaded
                known = f" (`{_short(dotted)}`)" if written != _short(dotted) else ""
                return (
                    f"your answer uses `{written}`{known}, which this exercise rules out, "
                    f"{_NO_POINT}: write it from basic operations."
                )
        if not self.loops and any(loops for _, loops in codes):
            return (
                "your answer uses a Python loop (for, while or a comprehension); this exercise "
                f"asks for vectorised code, whole tensors at a time, {_NO_POINT}."
            )
        return ""

    def _passed_keyword(self, names: list[str], sources) -> str:
        """Why a value answer is made with a keyword of ``written_out`` ("" if it is not): in
        the statements that assign it, or in those that assign a name they read (a loss
        function made in an earlier cell). A keyword given 0 turns the feature off."""
        trees = _cells(sources) if self.written_out else []
        for name in names if trees else []:
            made = _assignments(trees, name)
            read = _names(*(s.value for s in made)) - {name}
            made += [s for other in read for s in _assignments(trees, other)]
            passed = {
                k.arg
                for s in made
                for k in ast.walk(s)
                if isinstance(k, ast.keyword)
                and not (isinstance(k.value, ast.Constant) and k.value.value == 0)
            }
            if keyword := next((k for k in self.written_out if k in passed), None):
                return (
                    f"`{name}` is computed with `{keyword}=`: this exercise asks for it "
                    f"written out, {_NO_POINT}."
                )
        return ""

    def refused(self, uses: Iterable[str]) -> tuple[str, list]:
        """The verdict on answers that use these course_lib names ("", [] if none is refused)."""
        flagged = sorted(n for n in uses if not self._permits(n))
        if not flagged:
            return "", []
        instead = "write it without course_lib"
        if self.uses:
            instead = f"use only {_listed(self.uses, 'and')} from it"
        return (
            f"your answer uses course_lib's {_listed(flagged, 'and')}. This exercise is for "
            f"writing it yourself, {_NO_POINT}: {instead}.",
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
    try:
        return pkgutil.resolve_name(dotted)
    except (ImportError, AttributeError, ValueError):
        return None


def _qualified(obj) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '?')}"


def _ours(name: str) -> bool:
    """A name from the course's reference code (not its checks or notebook helpers)."""
    return name.split(".")[0] == "course_lib" and not name.startswith(NOT_REFERENCE)


def _learners(obj) -> bool:
    """A function or class the learner wrote: defined in the notebook, not in a package."""
    module = getattr(obj, "__module__", None) or ""
    return module == "__main__" or module not in sys.modules or module.startswith("__")


# What an answer's objects reach: course_lib's names, and the learner's code -------------------


def reference_uses(obj) -> set[str]:
    """The course_lib functions and classes an answer is, wraps or calls, as dotted names."""
    return _walk(obj)[0]


def _walk(answer) -> tuple[set[str], list[tuple[list, bool]]]:
    """The course_lib names ``answer`` is, wraps or calls, and every code object of the
    learner's it runs (its own, nested functions and comprehensions, the learner's functions
    it reaches through globals, closures and defaults): what each loads, and if it loops."""
    uses, codes, seen = set(), [], set()
    pending = [answer, type(answer)] if callable(answer) else [answer]  # an instance's class
    while pending:
        obj = pending.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        named = isinstance(obj, types.ModuleType | types.FunctionType | type)
        if named and (name := _qualified(obj)).startswith("course_lib"):
            uses |= {name} if _ours(name) else set()  # not read further: reference or a check
        elif isinstance(obj, types.MethodType | staticmethod | classmethod):
            pending.append(obj.__func__)
        elif isinstance(obj, functools.partial):
            pending += [obj.func, *obj.args, *obj.keywords.values()]
        elif isinstance(obj, types.FunctionType):
            pending.append(getattr(obj, "__wrapped__", None))  # under a library's decorator
            if not obj.__code__.co_filename.startswith(_INSTALLED):
                nested = [obj.__code__]  # and the functions and comprehensions inside it
                for code in nested:
                    nested += [c for c in code.co_consts if isinstance(c, types.CodeType)]
                    ends, imported, loops = _read(code, obj.__globals__)
                    codes += [(ends, loops)] if _learners(obj) else []
                    uses |= {n for n in imported if _ours(n)}
                    pending += [o for o, _ in ends]
                for cell in obj.__closure__ or ():
                    with contextlib.suppress(ValueError):  # an empty cell has no contents
                        pending.append(cell.cell_contents)
                pending += [*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values()]
        elif isinstance(obj, type) and _learners(obj):
            pending += [*obj.__bases__, *vars(obj).values()]
        elif callable(obj) and not isinstance(obj, type) and _learners(type(obj)):
            pending.append(type(obj))  # an instance of a class the learner wrote
    return uses, codes


def _read(code: types.CodeType, space: dict) -> tuple[list[tuple[object, str]], set[str], bool]:
    """What ``code`` loads, imports and whether it loops, read from its bytecode: the object
    at the end of each global-and-attribute chain, with the name written there (for
    ``F.layer_norm`` the function, not the module; ``co_names`` would also hold attributes:
    ``model.train`` is no global ``train``), chains from names an import inside ``code`` bound
    included (modules already loaded only: reading imports nothing); ``import a.b`` and ``from
    a import b`` as a.b; a loop steps an iterator (FOR_ITER) or jumps back, whatever the jump
    is called in this Python.
    """
    builtins = space.get("__builtins__", {})
    builtins = vars(builtins) if isinstance(builtins, types.ModuleType) else builtins
    ends, imported, loops, chain, module, names, previous = [], set(), False, None, "", (), None
    bound, binding = {}, None  # local names an import inside the function bound, and to what
    for ins in dis.get_instructions(code):
        op, arg = ins.opname, ins.argval
        if op in ("LOAD_GLOBAL", "LOAD_NAME") or (op.startswith("LOAD_FAST") and arg in bound):
            chain = (bound[arg] if arg in bound else space.get(arg, builtins.get(arg)), arg)
            ends.append(chain)
        elif op in ("LOAD_ATTR", "LOAD_METHOD") and chain is not None:
            chain = (getattr(chain[0], arg, None), f"{chain[1]}.{arg}")
            ends[-1] = chain
        else:
            chain = None
        if op == "IMPORT_NAME":  # after LOAD_CONST of its fromlist: None for `import a.b`
            module, names = arg, previous
            imported.add(module)
            binding = sys.modules.get(module.partition(".")[0])  # `import a.b` binds a
        elif op == "IMPORT_FROM":
            if names:  # (`import a.b as c` fetches b too, but means a.b)
                imported = imported - {module} | {f"{module}.{arg}"}
            what = f"{module}.{arg}" if names else module
            binding = sys.modules.get(what, getattr(sys.modules.get(module), arg, None))
        elif op in ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"):
            if binding is None:  # the name now holds something else
                bound.pop(arg, None)
            else:
                bound[arg], binding = binding, None
        previous = arg if op == "LOAD_CONST" else None
        loops |= op == "FOR_ITER" or ("JUMP" in op and isinstance(arg, int) and arg <= ins.offset)
    return [(obj, name) for obj, name in ends if obj is not None], imported, loops


# What the cells say: the cell that made a value, the def that made a function -----------------


def course_lib_uses(answers: list, names: list[str], sources=None) -> set[str]:
    """The course_lib names the answers use.

    A function (or class, or module) answer is judged by what its code reaches at run time,
    as the grader's copy of it is. A value cannot tell how it was made, so for a value the
    cell that last bound its name is read, with the course_lib imports of the cells run up
    to that one (in the notebook, the kernel's history; at grading, the notebook's cells).
    """
    found = set().union(*map(reference_uses, answers))
    values = [n for n, a in zip(names, answers, strict=True) if not callable(a)]
    return found | (written_uses(values, sources) if values else set())


def written_uses(names: list[str], sources: list[str] | None) -> set[str]:
    """The course_lib names written inside the ``def`` (or ``class``) that last binds each of
    ``names`` in the cells, or in the whole cell where an import or an assignment binds it:
    what the cells' text alone says of the answers' code. At grading the grader reads it
    itself, whatever the sandbox that holds the code reports."""
    trees, found = _cells(sources), set()
    for name in names:
        last = _last(trees, name)
        if last is None:
            continue
        defs = [n for n in trees[last].body if isinstance(n, _DEFS) and n.name == name]
        tree = ast.Module(body=defs, type_ignores=[]) if defs else trees[last]
        aliases = {}  # bound to course_lib by the cells run up to that one, in their order
        for cell in trees[: last + 1]:  # a cell that binds a name otherwise takes it back
            aliases = {k: v for k, v in aliases.items() if k not in binds(cell)}
            aliases |= {bound: held for bound, held, _ in _imports(cell)}
        found |= cell_uses(tree, aliases)
    return {n for n in found if _ours(n)}


def _cells(sources: list[str] | None) -> list[ast.Module]:
    """The cells as syntax trees, IPython magics and shell escapes blanked out, those that do
    not parse left out; by default the cells this IPython kernel has run, oldest first."""
    if sources is None:
        shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
        sources = [c for c in getattr(shell, "user_ns", {}).get("In", []) if isinstance(c, str)]
    trees = []
    for source in sources:
        lines = ["" if ln.lstrip().startswith(("%", "!")) else ln for ln in source.splitlines()]
        with contextlib.suppress(SyntaxError):
            trees.append(ast.parse("\n".join(lines)))
    return trees


def _last(trees: list[ast.Module], name: str) -> int | None:
    """Which cell last binds ``name`` (None if none does)."""
    return next((i for i in reversed(range(len(trees))) if name in binds(trees[i])), None)


def _assignments(trees: list[ast.Module], name: str) -> list[ast.stmt]:
    """The statements that assign ``name`` in the last cell that binds it."""
    last, kinds = _last(trees, name), ast.Assign | ast.AnnAssign | ast.AugAssign
    made = [s for s in ast.walk(trees[last]) if isinstance(s, kinds)] if last is not None else []
    return [
        s for s in made if s.value and name in _names(*(getattr(s, "targets", None) or [s.target]))
    ]


def _names(*nodes: ast.AST) -> set[str]:
    """The plain names in ``nodes``, read or bound."""
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def binds(tree: ast.Module) -> set[str]:
    """Names a cell binds at top level, also under ``if``, ``for``, ``with`` or ``try``:
    assignments, loop targets, defs, classes and imports (not names inside the functions)."""
    defs = [s for s in tree.body if isinstance(s, _DEFS)]
    nodes = [n for s in tree.body if not isinstance(s, _DEFS) for n in ast.walk(s)]
    stored = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    imported = {(n.asname or n.name).split(".")[0] for n in nodes if isinstance(n, ast.alias)}
    return {s.name for s in defs} | stored | imported


def _imports(tree: ast.AST) -> Iterator[tuple[str, str, str]]:
    """Each course_lib import in ``tree``: the name it binds, what that name holds, and what
    it imports (``import course_lib.masks`` binds ``course_lib`` to the package)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "course_lib":
            for a in node.names:
                yield a.asname or a.name, f"{node.module}.{a.name}", f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "course_lib":
                    yield a.asname or "course_lib", a.name if a.asname else "course_lib", a.name


def cell_uses(tree: ast.Module, aliases: dict[str, str]) -> set[str]:
    """The course_lib objects a cell refers to, as dotted names: what it imports, and the
    names bound to course_lib that it reads (not those it binds itself)."""
    own = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    own |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    aliases = {k: v for k, v in aliases.items() if k not in own}
    found = {imported for _, _, imported in _imports(tree)}
    found |= {".".join([aliases[p[0]], *p[1:]]) for p in _chains(tree) if p[0] in aliases}
    return {_canonical(n) for n in found}


def _chains(node: ast.AST) -> Iterator[list[str]]:
    """Each ``a.b.c`` read in ``node`` as ``["a", "b", "c"]`` (and not ``a`` again alone)."""
    parts, inner = [], node
    while isinstance(inner, ast.Attribute):
        parts.insert(0, inner.attr)
        inner = inner.value
    if isinstance(inner, ast.Name):
        yield [inner.id, *parts]
    else:  # in `f(x).attr` the names inside are read on their own
        for child in ast.iter_child_nodes(node):
            yield from _chains(child)


def _canonical(dotted: str) -> str:
    """A dotted name under its defining module (``course_lib.masks.causal_mask`` for a
    re-export); unchanged if it cannot be resolved."""
    obj = _resolve(dotted)
    return _qualified(obj) if obj is not None and not isinstance(obj, int | float | str) else dotted
