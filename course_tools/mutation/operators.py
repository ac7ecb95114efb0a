"""The rewrites: each operator turns one AST node into wrong versions of it.

An operator is a function ``(node, parent) -> iterator of replacement nodes``; it yields
nothing for a node it does not apply to. It never changes ``node`` itself: every
replacement is a fresh tree, so the caller can splice each one into its own copy of the
cell. :data:`DELETE` stands for "remove this statement".

The operators imitate the mistakes learners make in these exercises (a transposed product,
a forgotten scale, the wrong axis, an off-by-one slice, sin for cos, a missing ``~``), not
every possible edit: each variant costs a run of the check, and the figures are meant to say
how often a check catches a *plausible* wrong answer.
"""

import ast
import copy
from collections.abc import Callable, Iterator

DELETE = object()  # the replacement that removes a statement

Operator = Callable[[ast.AST, ast.AST | None], Iterator[object]]
OPERATORS: dict[str, Operator] = {}  # name -> operator, in the order variants are listed


def operator(name: str) -> Callable[[Operator], Operator]:
    """Register an operator under the name that starts its variants' ids."""

    def register(fn: Operator) -> Operator:
        OPERATORS[name] = fn
        return fn

    return register


# Numbers --------------------------------------------------------------------------------------


def number(node: ast.AST) -> int | float | None:
    """The value of a numeric literal, ``-1`` included (a minus sign on a constant); else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = number(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None


def literal(value: int | float) -> ast.expr:
    """The node of a number, a negative one written as ``-n`` as people write it."""
    if value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def nearby(value: int | float) -> list[int | float]:
    """Numbers a slip of the mind turns ``value`` into: n ± 1, 0 ↔ 1, half or twice a float."""
    if isinstance(value, int):
        return [v for v in (value - 1, value + 1) if v != value]
    found = [1.0] if value == 0 else [value * 2, value / 2, value + 1]
    if value == 1:
        found.append(0.0)
    return [v for v in dict.fromkeys(found) if v != value]


def _is_negative_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp) and number(node) is not None


@operator("constant")
def constant(node, parent):
    """``n`` → ``n ± 1``; floats 0 ↔ 1, halved, doubled. Keyword values and slice bounds are
    the keyword and slice operators' (so their variants say which mistake they are)."""
    value = number(node)
    if value is None or isinstance(parent, ast.keyword | ast.Slice):
        return
    if _is_negative_literal(parent):  # the 1 in -1: the whole -1 is the number
        return
    for v in nearby(value):
        yield literal(v)


@operator("boolean")
def boolean(node, parent):
    """``True`` ↔ ``False`` (a keyword's value is the keyword operator's)."""
    literal_bool = isinstance(node, ast.Constant) and type(node.value) is bool
    if literal_bool and not isinstance(parent, ast.keyword):
        yield ast.Constant(not node.value)


# Binary and unary operators ---------------------------------------------------------------------

_SWAPPABLE = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)
_REPLACED = {
    ast.Add: [ast.Sub],
    ast.Sub: [ast.Add],
    ast.Mult: [ast.Div],
    ast.Div: [ast.Mult],
    ast.FloorDiv: [ast.Div],
    ast.Pow: [ast.Mult],
    ast.MatMult: [ast.Mult],
    ast.BitAnd: [ast.BitOr],
    ast.BitOr: [ast.BitAnd],
}
_KEPT_SIDES = {  # x / y → x: the scale forgotten; x * y → x or y; x + y → x or y
    ast.Mult: ("left", "right"),
    ast.Add: ("left", "right"),
    ast.Div: ("left",),
    ast.Sub: ("left",),
    ast.Pow: ("left",),
    ast.MatMult: ("left",),
}


@operator("swap-operands")
def swap_operands(node, parent):
    """``a @ b`` → ``b @ a``, ``a - b`` → ``b - a``, ``a / b`` → ``b / a`` (not + and *,
    where the swap changes nothing)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, _SWAPPABLE):
        yield ast.BinOp(copy.deepcopy(node.right), node.op, copy.deepcopy(node.left))


@operator("operator")
def replace_operator(node, parent):
    """+ ↔ -, * ↔ /, // → /, ** → *, @ → *, & ↔ |, also in ``x += ...``."""
    if isinstance(node, ast.BinOp | ast.AugAssign):
        for new in _REPLACED.get(type(node.op), []):
            changed = copy.deepcopy(node)
            changed.op = new()
            yield changed


@operator("drop-operand")
def drop_operand(node, parent):
    """``x / y`` → ``x``, ``x * y`` → ``x`` or ``y``, ``x + b`` → ``x``: a scale, a term or a
    projection left out."""
    if isinstance(node, ast.BinOp):
        for side in _KEPT_SIDES.get(type(node.op), ()):
            yield copy.deepcopy(getattr(node, side))


@operator("drop-unary")
def drop_unary(node, parent):
    """``-x`` → ``x``, ``~mask`` → ``mask``, ``not x`` → ``x`` (not on a literal like -1)."""
    unary = isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.UAdd)
    if unary and not _is_negative_literal(node):
        yield copy.deepcopy(node.operand)


_COMPARISONS = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}


@operator("comparison")
def comparison(node, parent):
    """< ↔ <=, > ↔ >=, == ↔ !=, ``is`` ↔ ``is not``, ``in`` ↔ ``not in``."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            changed = copy.deepcopy(node)
            changed.ops[i] = _COMPARISONS[type(op)]()
            yield changed


# Calls -----------------------------------------------------------------------------------------

_SWAPPED_FUNCTIONS = {
    "sin": "cos",
    "cos": "sin",
    "mean": "sum",
    "sum": "mean",
    "max": "min",
    "min": "max",
    "amax": "amin",
    "amin": "amax",
    "maximum": "minimum",
    "minimum": "maximum",
    "argmax": "argmin",
    "argmin": "argmax",
    "tril": "triu",
    "triu": "tril",
    "softmax": "log_softmax",
    "log_softmax": "softmax",
    "var": "std",
    "std": "var",
    "zeros": "ones",
    "ones": "zeros",
    "all": "any",
    "any": "all",
    "floor": "ceil",
    "ceil": "floor",
}
# Calls a learner forgets: f(x) → x. Removing clone() or contiguous() would change nothing.
_REMOVABLE = {
    "exp",
    "sqrt",
    "softmax",
    "log_softmax",
    "relu",
    "log",
    "abs",
    "tanh",
    "sigmoid",
    "maximum",
    "minimum",
    "float",
    "int",
    "item",
    "norm",
}
_MODULES = {"torch", "np", "numpy", "math", "F", "nn", "functional", "linalg"}
_TRANSPOSES = {"transpose", "permute", "swapaxes"}


def called_name(call: ast.Call) -> str | None:
    """``"softmax"`` for ``softmax(x)``, ``torch.softmax(x)`` and ``x.softmax()``."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _on_module(call: ast.Call) -> bool:
    """``torch.sqrt(x)`` rather than ``x.sqrt()``: the receiver is a module, not the input."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    while isinstance(receiver, ast.Attribute):
        if receiver.attr in _MODULES:
            return True
        receiver = receiver.value
    return receiver is None or (isinstance(receiver, ast.Name) and receiver.id in _MODULES)


def _without_call(call: ast.Call) -> Iterator[ast.expr]:
    """``x.f(...)`` → ``x``; ``f(a, b)`` → ``a`` and ``b`` (the inputs that are not literals)."""
    if not _on_module(call):
        yield copy.deepcopy(call.func.value)
        return
    for arg in call.args:
        if not isinstance(arg, ast.Starred | ast.Constant) and number(arg) is None:
            yield copy.deepcopy(arg)


@operator("swap-function")
def swap_function(node, parent):
    """sin ↔ cos, mean ↔ sum, max ↔ min, tril ↔ triu, softmax ↔ log_softmax, var ↔ std..."""
    if isinstance(node, ast.Call) and called_name(node) in _SWAPPED_FUNCTIONS:
        changed = copy.deepcopy(node)
        other = _SWAPPED_FUNCTIONS[called_name(node)]
        if isinstance(changed.func, ast.Name):
            changed.func.id = other
        else:
            changed.func.attr = other
        yield changed


@operator("drop-call")
def drop_call(node, parent):
    """``torch.exp(x)`` → ``x``, ``math.sqrt(d)`` → ``d``, ``x.softmax(-1)`` → ``x``..."""
    if isinstance(node, ast.Call) and called_name(node) in _REMOVABLE:
        yield from _without_call(node)


@operator("drop-transpose")
def drop_transpose(node, parent):
    """``x.T`` → ``x``, ``x.transpose(-2, -1)`` → ``x``, ``np.transpose(x)`` → ``x``."""
    if isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
        if isinstance(node.ctx, ast.Load):
            yield copy.deepcopy(node.value)
    elif isinstance(node, ast.Call) and called_name(node) in _TRANSPOSES:
        yield from _without_call(node)


def _changed_value(value: ast.expr) -> Iterator[ast.expr]:
    if isinstance(value, ast.Constant) and type(value.value) is bool:
        yield ast.Constant(not value.value)
    elif (n := number(value)) is not None:
        yield from map(literal, nearby(n))


@operator("keyword")
def keyword(node, parent):
    """A keyword argument's value: ``dim=-1`` → ``dim=0``/``-2``, ``keepdim=True`` → False,
    ``unbiased=False`` → True, ``axis=1`` → 0/2."""
    if isinstance(node, ast.Call):
        for i, kw in enumerate(node.keywords):
            for value in _changed_value(kw.value):
                changed = copy.deepcopy(node)
                changed.keywords[i].value = value
                yield changed


@operator("drop-keyword")
def drop_keyword(node, parent):
    """A keyword argument left out: ``keepdim=True``, ``dtype=torch.bool``, ``label_smoothing``."""
    if isinstance(node, ast.Call):
        for i, kw in enumerate(node.keywords):
            if kw.arg is not None:
                changed = copy.deepcopy(node)
                del changed.keywords[i]
                yield changed


@operator("swap-arguments")
def swap_arguments(node, parent):
    """Two neighbouring positional arguments swapped: ``f(a, b)`` → ``f(b, a)``."""
    if isinstance(node, ast.Call):
        yield from _swapped_neighbours(node, "args")


@operator("swap-elements")
def swap_elements(node, parent):
    """Two neighbours in a tuple or list swapped (``return out, weights`` → ``weights, out``),
    or two neighbouring values of a dict literal (two answers exchanged)."""
    if isinstance(node, ast.Tuple | ast.List) and isinstance(node.ctx, ast.Load):
        if 2 <= len(node.elts) <= 4:
            yield from _swapped_neighbours(node, "elts")
    elif isinstance(node, ast.Dict) and None not in node.keys:
        yield from _swapped_neighbours(node, "values")


def _swapped_neighbours(node: ast.AST, field: str) -> Iterator[ast.AST]:
    items = getattr(node, field)
    if any(isinstance(item, ast.Starred) for item in items):
        return
    for i in range(len(items) - 1):
        if ast.dump(items[i]) != ast.dump(items[i + 1]):
            changed = copy.deepcopy(node)
            seq = getattr(changed, field)
            seq[i], seq[i + 1] = seq[i + 1], seq[i]
            yield changed


# Off by one ------------------------------------------------------------------------------------


def _plus(node: ast.expr | None, step: int) -> ast.expr:
    """``node + step``, folded when ``node`` is a number (``None`` counts as 0)."""
    if node is None:
        return literal(step)
    if (n := number(node)) is not None:
        return literal(n + step)
    op = ast.Add() if step > 0 else ast.Sub()
    return ast.BinOp(copy.deepcopy(node), op, ast.Constant(abs(step)))


@operator("slice")
def slice_bounds(node, parent):
    """``a[i:j]`` → ``a[i+1:j]``, ``a[i:j±1]``, ``a[:j]`` → ``a[1:j]``, ``a[i:]`` → ``a[i:-1]``,
    ``a[::2]`` → ``a[1::2]``, ``a[0::2]`` → ``a[1::2]``, a step ± 1."""
    if not isinstance(node, ast.Slice):
        return
    yield _replaced(node, lower=_plus(node.lower, 1))
    if node.lower is not None and number(node.lower) not in (None, 0):
        yield _replaced(node, lower=_plus(node.lower, -1))
    if node.upper is None:
        yield _replaced(node, upper=literal(-1))
    else:
        yield _replaced(node, upper=_plus(node.upper, 1))
        yield _replaced(node, upper=_plus(node.upper, -1))
    if (step := number(node.step) if node.step is not None else None) is not None:
        for v in nearby(step):
            if v != 0:
                yield _replaced(node, step=literal(v))


def _replaced(node: ast.AST, **fields) -> ast.AST:
    changed = copy.deepcopy(node)
    for name, value in fields.items():
        setattr(changed, name, value)
    return changed


@operator("range")
def range_bounds(node, parent):
    """``range(n)`` → ``range(n - 1)`` or ``range(1, n)``; ``range(a, b)`` → ``range(a + 1, b)``,
    ``range(a, b ± 1)``; the same for ``arange``."""
    if not isinstance(node, ast.Call) or called_name(node) not in ("range", "arange"):
        return
    args = node.args
    if not args or any(isinstance(a, ast.Starred) for a in args):
        return
    if len(args) == 1:
        yield _with_args(node, [_plus(args[0], -1)])
        yield _with_args(node, [ast.Constant(1), copy.deepcopy(args[0])])
    else:
        yield _with_args(node, [_plus(args[0], 1), *args[1:]])
        yield _with_args(node, [args[0], _plus(args[1], -1), *args[2:]])
        yield _with_args(node, [args[0], _plus(args[1], 1), *args[2:]])


def _with_args(call: ast.Call, args: list[ast.expr]) -> ast.Call:
    changed = copy.deepcopy(call)
    changed.args = [copy.deepcopy(a) for a in args]
    return changed


# Statements ------------------------------------------------------------------------------------


@operator("negate-return")
def negate_return(node, parent):
    """``return e`` → ``return -e``; for ``return a, b``, each one negated in turn."""
    if not isinstance(node, ast.Return) or node.value is None:
        return
    if isinstance(node.value, ast.Tuple):
        for i, element in enumerate(node.value.elts):
            changed = copy.deepcopy(node)
            changed.value.elts[i] = ast.UnaryOp(ast.USub(), copy.deepcopy(element))
            yield changed
    else:
        yield ast.Return(ast.UnaryOp(ast.USub(), copy.deepcopy(node.value)))


@operator("delete-statement")
def delete_statement(node, parent):
    """A statement left out (the caller keeps it when it is the only one of its block)."""
    if isinstance(node, ast.stmt):
        yield DELETE
