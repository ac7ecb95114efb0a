"""Text alternatives for the lessons' figures: what a picture shows, in words, from its numbers.

A lesson passes the text to :func:`course_lib.notebook.show`. Numbers are rounded to two
decimals, which the same computation gives on every processor, so the text can be compared
between runs.

An explorer prints some numbers in its picture (titles, footers) and says them again in its
text alternative and its status line: all three take the same strings, formatted once by
:func:`number` where a value can be tiny or huge, so they cannot disagree.
"""


def word_list(words) -> str:
    """``["a", "b", "c"]`` -> ``"a, b and c"``."""
    words = [str(w) for w in words]
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


def _rows(matrix) -> list[list]:
    return matrix.tolist() if hasattr(matrix, "tolist") else [list(row) for row in matrix]


def matrix_rows(matrix, labels) -> str:
    """A small matrix row by row, two decimals: ``"cat 1.25, 1.20, 0.10; dog 1.20, ..."``."""
    rows = _rows(matrix)
    if len(rows) != len(labels):
        raise ValueError(f"matrix must have one row per label ({len(labels)}); got {len(rows)}")
    numbers = [", ".join(f"{v:.2f}" for v in row) for row in rows]
    return "; ".join(f"{label} {row}" for label, row in zip(labels, numbers, strict=True))


def strongest_keys(keys, row, visible=None) -> str:
    """The key(s) one query weighs most, to two decimals: ``"cat 0.72"``.

    Keys whose weights round to the same two decimals as the largest are all named (up to
    three, then counted), so that a tie reads as a tie and does not depend on which of equal
    numbers comes out larger on a given processor. ``visible``: optional booleans, False for
    a key the query may not see (masked), which is left out.
    """
    visible = [True] * len(keys) if visible is None else list(visible)
    shown = [(str(k), round(w, 2)) for k, w, v in zip(keys, row, visible, strict=True) if v]
    if not shown:
        return "no key visible"
    top = max(w for _, w in shown)
    best = [k for k, w in shown if w == top]
    if len(best) == 1:
        return f"{best[0]} {top:.2f}"
    if len(best) == len(shown):
        return f"spread evenly over all {len(shown)} visible keys, {top:.2f} each"
    names = word_list(best) if len(best) <= 3 else f"{', '.join(best[:3])} and {len(best) - 3} more"
    return f"{names} {top:.2f} each"


def describe_attention(weights, queries, keys, *, masked=None, what="attention weights") -> str:
    """A heatmap of attention weights in words: its rows and columns and each row's largest weight.

    Args:
        weights: (T_q, T_k) attention weights: a tensor, an array or nested lists.
        queries, keys: the labels of the rows (T_q) and of the columns (T_k).
        masked: optional (T_q, T_k) booleans, True where a pair is hidden (drawn ×).
        what: what the cells hold, e.g. "cross-attention weights".
    """
    rows, queries, keys = _rows(weights), [str(q) for q in queries], [str(k) for k in keys]
    if len(rows) != len(queries) or any(len(row) != len(keys) for row in rows):
        got = (len(rows), *{len(row) for row in rows})
        raise ValueError(
            f"weights must be (T_q, T_k) = ({len(queries)}, {len(keys)}), one row per query "
            f"and one column per key; got {got}"
        )
    if queries == keys:
        axes = f"{word_list(queries)} as queries (rows) and keys (columns)"
    else:
        axes = f"queries (rows) {word_list(queries)} against keys (columns) {word_list(keys)}"
    hidden = [[False] * len(keys)] * len(rows) if masked is None else _rows(masked)
    largest = [
        f"{query} → {strongest_keys(keys, row, [not m for m in row_hidden])}"
        for query, row, row_hidden in zip(queries, rows, hidden, strict=True)
    ]
    text = f"Heatmap of {what}, {axes}. Largest weight of each query: {'; '.join(largest)}."
    if masked is not None:
        count = sum(bool(m) for row in hidden for m in row)
        text += f" {count} of {len(queries) * len(keys)} pairs are masked (×, weight 0)."
    return text


def number(x: float) -> str:
    """A number as a picture, its text alternative and its status line all print it.

    Two decimals from 0.01 to 100 ("0.87"); two significant digits beyond ("3.7e-08",
    "1200"), so that float round-off reads as what it is and not as "0.00". Exactly 0 is
    "0.00", never "-0.00".
    """
    x = float(x)
    if x == 0 or 0.01 <= abs(x) < 100:
        return f"{round(x, 2) + 0.0:.2f}"
    if abs(x) >= 100:
        return f"{float(f'{x:.2g}'):g}"
    return f"{x:.1e}"
