"""Attention maps: the weights of one head as a labelled heatmap (paper §3.2.1, Eq. 1).

Shapes: H heads, T_q queries (rows, top to bottom), T_k keys (columns), d_k the width of
queries and keys.

Masks follow the course convention (``True`` = may attend); the pictures mark the opposite
set: ``masked`` is ``True`` where a cell is hidden (``~mask``).

The explorer redraws on every slider step, so drawing is kept cheap: ``pcolormesh`` (no image
resampling), the cell numbers as one collection of glyph outlines, the masked cells as one
hatched path, and a layout fixed in inches instead of a layout engine.
"""

import matplotlib
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch
from matplotlib.path import Path
from matplotlib.transforms import Affine2D

from ._display import PNG_DPI, set_texts, text_collection
from .attention_data import _tokens, attention_weights

ANNOTATE_MAX_CELLS = 144  # up to 12 x 12 the numbers stay legible in the cells
_CMAP = matplotlib.colormaps["cividis"].with_extremes(bad="#e0e0e0")  # colour-blind safe


def _matrix(name: str, x, dtype=float) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    x = np.asarray(x, dtype=dtype)
    if x.ndim != 2:
        raise ValueError(f"{name} must be 2-D (T_q, T_k); got shape {x.shape}")
    return x


def draw_attention(
    ax, weights, query_tokens, key_tokens, *, masked=None, title=None, annotate=None
):
    """Draw one weight matrix on ``ax``: queries down the y axis, keys along the x axis.

    Colours use "cividis" (readable with colour-blind eyes and in greyscale) on a fixed 0..1
    scale, so maps stay comparable. Masked cells are grey, hatched and marked "×".

    Args:
        ax: a matplotlib ``Axes``.
        weights: ``(T_q, T_k)`` tensor or array of weights in [0, 1].
        query_tokens, key_tokens: labels of the T_q rows and T_k columns.
        masked: optional boolean ``(T_q, T_k)``, ``True`` where a cell is hidden by a mask.
        title: optional title of the axes.
        annotate: print each weight in its cell; by default when T_q·T_k <= 144.

    Returns:
        The heatmap artist: ``get_array()`` holds the weights, with the masked cells masked.
        The numbers in the cells are the collection with gid "cell labels" in
        ``ax.collections``; its ``labels`` attribute lists them row by row.
    """
    w = _matrix("weights", weights)
    if not np.isfinite(w).all():
        raise ValueError("weights must be finite; got NaN or inf")
    T_q, T_k = w.shape
    query_tokens = _tokens("query_tokens", query_tokens, T_q, "T_q (rows of weights)")
    key_tokens = _tokens("key_tokens", key_tokens, T_k, "T_k (columns of weights)")
    hidden = np.zeros(w.shape, bool) if masked is None else _matrix("masked", masked, bool)
    if hidden.shape != w.shape:
        raise ValueError(f"masked must have the shape of weights {w.shape}; got {hidden.shape}")
    edges_k, edges_q = np.arange(T_k + 1) - 0.5, np.arange(T_q + 1) - 0.5
    data = np.ma.masked_array(w, hidden)
    mesh = ax.pcolormesh(edges_k, edges_q, data, cmap=_CMAP, vmin=0.0, vmax=1.0)
    ax.set(xlim=(-0.5, T_k - 0.5), ylim=(T_q - 0.5, -0.5), aspect="equal")  # row 0 on top
    ax.set_xticks(range(T_k), key_tokens, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(T_q), query_tokens)
    ax.tick_params(length=0)
    ax.set(xlabel="key (attended to)", ylabel="query (attending)")
    if title is not None:
        ax.set_title(title)
    if hidden.any():  # hatched and crossed out, not told apart by colour alone
        squares = [
            Path.unit_rectangle().transformed(Affine2D().translate(j - 0.5, i - 0.5))
            for i, j in np.argwhere(hidden)
        ]
        path = Path.make_compound_path(*squares)
        ax.add_patch(PathPatch(path, fill=False, hatch="///", lw=0, ec="#707070"))
    if annotate if annotate is not None else T_q * T_k <= ANNOTATE_MAX_CELLS:
        cells = text_collection(ax, [(j, i) for i, j in np.ndindex(w.shape)], gid="cell labels")
        cells.font_size = 9 if max(T_q, T_k) <= 8 else 7
        _set_cell_labels(cells, w, hidden)
    return mesh


def _set_cell_labels(cells, w, hidden):
    labels = np.where(hidden, "×", np.char.mod("%.2f", w)).ravel().tolist()
    r, g, b, _ = np.moveaxis(_CMAP(w), -1, 0)
    light = 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5  # dark ink on light cells, and back
    inks = np.where(hidden, "#202020", np.where(light, "black", "white")).ravel()
    set_texts(cells, labels, inks, [cells.font_size + 3 * (s == "×") for s in labels])


def render_attention(example, head=0, temperature=1.0, causal=False, scale=True) -> Figure:
    """One head's attention map as a figure: heatmap, colour bar, the formula used, how peaked.

    Arguments as :func:`attention_weights`. Below the map: the mean over queries of each
    row's largest weight (1 = every query looks at one key), next to its value for uniform rows.
    """
    weights, hidden = attention_weights(example, head, temperature, causal, scale)
    H, T_q, T_k = example.scores.shape
    # A fixed layout in inches, from the longest tokens (~0.08 in a character): a layout
    # engine would measure every label again on every redraw.
    cell = min(0.6, 5.0 / max(T_q, T_k))
    left = 0.5 + 0.08 * max(map(len, example.query_tokens))  # y label and tick labels
    bottom = 0.9 + 0.06 * max(map(len, example.key_tokens))  # x tick labels, label, summary
    map_w, map_h = T_k * cell, T_q * cell
    width, height = max(left + map_w + 1.2, 5.2), bottom + map_h + 0.8
    left = (width - map_w) / 2 + (left - 1.2) / 2  # centred when the texts set the width
    fig = Figure(figsize=(width, height), dpi=PNG_DPI)
    ax = fig.add_axes((left / width, bottom / height, map_w / width, map_h / height))
    bar = ((left + map_w + 0.15) / width, bottom / height, 0.15 / width, map_h / height)
    mesh = draw_attention(ax, weights, example.query_tokens, example.key_tokens, masked=hidden)
    if cell < 0.2:  # long sequences: smaller tick labels
        ax.tick_params(labelsize=max(3.0, 50 * cell))
    fig.colorbar(mesh, cax=fig.add_axes(bar), label="attention weight", ticks=[0, 0.5, 1])
    x = (left + map_w / 2) / width
    title = example.name + (f" — head {head + 1} of {H}" if H > 1 else "")
    fig.text(x, 1 - 0.15 / height, title, ha="center", va="top", fontsize=12, gid="title")
    fig.text(x, (bottom + map_h + 0.1) / height, "", ha="center", fontsize=9, gid="formula")
    fig.text(x, 0.15 / height, "", ha="center", va="bottom", fontsize=9, gid="summary")
    _describe(fig, example, weights, hidden, temperature, causal, scale)
    return fig


def _describe(fig, example, weights, hidden, temperature, causal, scale):
    """Write the formula above the map and the peak weight below it."""
    divided = scale and example.d_k > 1
    formula = f"softmax({example.score_label} / {'(τ·√d_k)' if divided else 'τ'})"
    formula += f", τ = {temperature:.2f}"
    if example.d_k > 1:
        formula += f", d_k = {example.d_k}" + ("" if scale else ", no √d_k")
    seen = (~hidden if hidden is not None else torch.ones_like(weights, dtype=bool)).sum(-1)
    rows = seen > 0  # a query that sees nothing has no largest weight
    peak = weights.max(dim=-1).values[rows].mean().item()
    uniform = (1 / seen[rows]).mean().item()
    texts = {t.get_gid(): t for t in fig.texts}
    texts["formula"].set_text(formula + (", causal mask on" if causal else ""))
    texts["summary"].set_text(
        f"mean largest weight per query: {peak:.2f}  (uniform rows: {uniform:.2f}, one-hot: 1)"
    )


def refresh_attention(fig, example, head=0, temperature=1.0, causal=False, scale=True):
    """Redraw a figure of :func:`render_attention` in place for another τ or √d_k setting.

    About twice as fast as a new figure, since the layout, the labels and the mask stay: the
    example, head and causal setting must be the ones the figure was rendered with.

    Returns:
        ``(weights, hidden)`` as :func:`attention_weights`.
    """
    weights, hidden = attention_weights(example, head, temperature, causal, scale)
    ax = fig.axes[0]
    w = weights.numpy()
    mask = np.zeros(w.shape, bool) if hidden is None else hidden.numpy()
    ax.collections[0].set_array(np.ma.masked_array(w, mask))  # the heatmap
    for cells in ax.collections[1:]:
        if cells.get_gid() == "cell labels":
            _set_cell_labels(cells, w, mask)
    _describe(fig, example, weights, hidden, temperature, causal, scale)
    return weights, hidden
