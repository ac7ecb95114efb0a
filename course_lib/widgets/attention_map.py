"""Attention maps: the weights of one head as a labelled heatmap (paper §3.2.1, Eq. 1).

Shapes: H heads, T_q queries (rows, top to bottom), T_k keys (columns), d_k the width of
queries and keys.

Masks follow the course convention (``True`` = may attend); the pictures mark the opposite
set: ``masked`` is ``True`` where a cell is hidden (``~mask``).

The explorer redraws on every slider step, so drawing is kept cheap: ``pcolormesh`` (no image
resampling), the cell numbers and the explorer's tokens as collections of glyph outlines, the
masked cells as one hatched path, and a layout fixed in inches instead of a layout engine.
"""

import matplotlib
import numpy as np
import torch
from matplotlib import rcParams
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import PathPatch
from matplotlib.path import Path
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D

from ._display import PNG_DPI, ink_extents, place_axis_label, set_texts, text_collection
from .attention_data import _tokens, attention_weights, map_readings, map_title

ANNOTATE_MAX_CELLS = 144  # up to 12 x 12 the numbers stay legible in the cells
TITLE_SIZE = 12  # points
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
        ax.add_patch(_hatch(_squares(hidden)))
    if annotate if annotate is not None else T_q * T_k <= ANNOTATE_MAX_CELLS:
        cells = text_collection(ax, [(j, i) for i, j in np.ndindex(w.shape)], gid="cell labels")
        cells.font_size = 9 if max(T_q, T_k) <= 8 else 7
        _set_cell_labels(cells, w, hidden)
    return mesh


def _squares(hidden) -> Path:
    """One path of the unit squares around the hidden cells (row i, column j at (j, i))."""
    squares = [
        Path.unit_rectangle().transformed(Affine2D().translate(j - 0.5, i - 0.5))
        for i, j in np.argwhere(hidden)
    ]
    return Path.make_compound_path(*squares) if squares else Path(np.zeros((0, 2)))


def _hatch(path) -> PathPatch:
    return PathPatch(path, fill=False, hatch="///", lw=0, ec="#707070", gid="masked cells")


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
    The figure can be redrawn for any other setting, example included, by
    :func:`refresh_attention`; the tokens along the axes are the collections with gid
    "key labels" and "query labels" (``labels`` lists them), drawn like the cell numbers.
    """
    fig = Figure(dpi=PNG_DPI)
    ax = fig.add_axes((0, 0, 1, 1), gid="map")  # placed by _lay_out, for each example
    bar = fig.add_axes((0, 0, 1, 1), gid="colour bar")
    colours = ScalarMappable(Normalize(0.0, 1.0), _CMAP)  # the bar outlives each map's mesh
    fig.colorbar(colours, cax=bar, label="attention weight", ticks=[0, 0.5, 1])
    ax.set(xticks=[], yticks=[], xlabel="key (attended to)", ylabel="query (attending)")
    # Explicit zorders: the mesh is replaced for each example and must stay at the bottom.
    ax.add_patch(_hatch(Path(np.zeros((0, 2))))).set_zorder(1.1)
    text_collection(ax, np.zeros((0, 2)), gid="cell labels").set_zorder(1.2)
    # The tokens, where tick labels would be: data along the axis, axes coordinates across.
    for gid, which in (("key labels", "x"), ("query labels", "y")):
        transform = getattr(ax, f"get_{which}axis_transform")()
        tokens = text_collection(ax, np.zeros((0, 2)), gid=gid, offset_transform=transform)
        tokens.set_clip_on(False)
        tokens.axis_name = which  # for place_axis_label
    fig.text(0.5, 1, "", ha="center", va="top", fontsize=TITLE_SIZE, gid="title")
    fig.text(0.5, 1, "", ha="center", fontsize=9, gid="formula")
    fig.text(0.5, 0, "", ha="center", va="bottom", fontsize=9, gid="summary")
    refresh_attention(fig, example, head, temperature, causal, scale)
    return fig


def _parts(fig) -> dict:
    """The artists of a :func:`render_attention` figure by gid (the mesh is "weights")."""
    ax = fig.axes[0]
    parts = {artist.get_gid(): artist for artist in (*ax.collections, *ax.patches, *fig.texts)}
    return parts | {"ax": ax}


def moving_parts(fig) -> list:
    """What :func:`refresh_attention` changes without a new layout, in drawing order: the
    map, its hatching and numbers, the frame drawn over them, and the three texts."""
    parts = _parts(fig)
    return [
        *(parts[gid] for gid in ("weights", "masked cells", "cell labels")),
        *parts["ax"].spines.values(),
        *(parts[gid] for gid in ("title", "formula", "summary")),
    ]


def _lay_out(fig, example) -> None:
    """Size the figure and place its parts for ``example``'s tokens; the numbers come later."""
    parts = _parts(fig)
    ax, bar = fig.axes
    _, T_q, T_k = example.scores.shape
    (width, height), (left, bottom, map_w, map_h), cell = _geometry(example)
    fig.set_size_inches(width, height)
    ax.set_position((left / width, bottom / height, map_w / width, map_h / height))
    bar.set_position(((left + map_w + 0.15) / width, bottom / height, 0.15 / width, map_h / height))
    _new_mesh(ax, parts, T_q, T_k).laid_out_for = _layout_key(example)
    _label_axes(ax, parts, example, cell)
    _place_cell_labels(parts["cell labels"], T_q, T_k)
    x = (left + map_w / 2) / width
    parts["title"].set_position((x, 1 - 0.15 / height))
    parts["formula"].set_position((x, (bottom + map_h + 0.1) / height))
    parts["summary"].set_position((x, 0.15 / height))


def _layout_key(example) -> tuple:
    """What the layout depends on: the tokens, and the name and head count in the title."""
    return example.name, example.n_heads, example.query_tokens, example.key_tokens


def _new_mesh(ax, parts, T_q, T_k):
    """A heatmap of T_q x T_k cells in place of the last one (a mesh keeps its shape)."""
    if "weights" in parts:
        parts["weights"].remove()
    edges_k, edges_q = np.arange(T_k + 1) - 0.5, np.arange(T_q + 1) - 0.5
    mesh = ax.pcolormesh(
        edges_k, edges_q, np.zeros((T_q, T_k)), cmap=_CMAP, vmin=0, vmax=1, gid="weights"
    )
    mesh.set_zorder(1)
    ax.set(xlim=(-0.5, T_k - 0.5), ylim=(T_q - 0.5, -0.5), aspect="equal")  # row 0 on top
    return mesh


def _place_cell_labels(cells, T_q, T_k) -> None:
    """One label per cell, row by row, up to ANNOTATE_MAX_CELLS cells; none beyond."""
    cells.set_offsets([(j, i) for i, j in np.ndindex(T_q, T_k)])
    cells.font_size = 9 if max(T_q, T_k) <= 8 else 7
    cells.set_visible(T_q * T_k <= ANNOTATE_MAX_CELLS)
    if not cells.get_visible():
        set_texts(cells, [], [], [])


def _geometry(example):
    """``(width, height)`` of the figure, ``(left, bottom, width, height)`` of the map, all in
    inches, and the side of a cell.

    A layout fixed in inches, from the longest tokens (~0.08 in a character): a layout
    engine would measure every label again on every redraw. The figure is wide enough for
    the title, centred over the map: if anything came within 0.1 in of the canvas edge,
    figure_png would have to let savefig draw it three times.
    """
    H, T_q, T_k = example.scores.shape
    cell = min(0.6, 5.0 / max(T_q, T_k))
    left = 0.5 + 0.08 * max(map(len, example.query_tokens))  # y label and tick labels
    bottom = 0.9 + 0.06 * max(map(len, example.key_tokens))  # x tick labels, label, summary
    map_w, map_h = T_k * cell, T_q * cell
    title = max(_width(map_title(example, H - 1), TITLE_SIZE), *map(_width, _widest_lines(example)))
    offset = abs(left - 1.2)  # how far the map's centre is from the figure's
    width, height = max(left + map_w + 1.2, 5.2, title + offset), bottom + map_h + 0.8
    left = (width - map_w) / 2 + (left - 1.2) / 2  # centred when the texts set the width
    return (width, height), (left, bottom, map_w, map_h), cell


def _width(text: str, size: float = 9) -> float:
    """Inches a line of text takes, with a margin on either side."""
    x0, _, x1, _ = ink_extents(TextPath((0, 0), text, size=size))
    return (x1 - x0) / 72 + 0.5


def _widest_lines(example) -> list[str]:
    """The longest formula and summary lines any setting of ``example`` prints."""
    _, T_q, T_k = example.scores.shape
    many = f"{T_q * T_k} of {T_q * T_k} pairs masked"
    formula = f"softmax({example.score_label} / (τ·√d_k)), τ = 10.00, d_k = {example.d_k}"
    summary = "mean largest weight per query: 0.00 (uniform rows: 0.00, one-hot: 1)"
    return [f"{formula}, no √d_k, {many}", summary]


def _label_axes(ax, parts, example, cell) -> None:
    """The tokens where matplotlib would put tick labels, and the axis labels beyond them."""
    size = FontProperties(size=rcParams["xtick.labelsize"]).get_size_in_points()
    size = max(3.0, 50 * cell) if cell < 0.2 else size  # long sequences: smaller labels
    pad = rcParams["xtick.major.pad"]  # points between the axes and a tick label
    keys, queries = parts["key labels"], parts["query labels"]
    keys.set_offsets([(j, 0) for j in range(len(example.key_tokens))])
    queries.set_offsets([(0, i) for i in range(len(example.query_tokens))])
    ink = "black"
    sizes = [size] * len(example.key_tokens)
    set_texts(
        keys, example.key_tokens, ink, sizes, ha="right", va="top", rotation=45, shift=(0, -pad)
    )
    sizes = [size] * len(example.query_tokens)
    set_texts(
        queries, example.query_tokens, ink, sizes, ha="right", va="center_baseline", shift=(-pad, 0)
    )
    for labels in (keys, queries):
        place_axis_label(labels)


def _describe(fig, readings) -> None:
    """Write the title, the formula above the map and the peak weight below it."""
    texts = {t.get_gid(): t for t in fig.texts}
    for gid, line in zip(("title", "formula", "summary"), readings.lines, strict=True):
        texts[gid].set_text(line)


def refresh_attention(fig, example, head=0, temperature=1.0, causal=False, scale=True):
    """Redraw a figure of :func:`render_attention` in place for another setting.

    Any setting: another head, mask, τ or √d_k keeps the layout (several times faster than
    a new figure); another example lays the figure out again first.

    Returns:
        ``(weights, hidden)`` as :func:`attention_weights`.
    """
    weights, hidden = attention_weights(example, head, temperature, causal, scale)
    parts = _parts(fig)
    if "weights" not in parts or parts["weights"].laid_out_for != _layout_key(example):
        _lay_out(fig, example)
        parts = _parts(fig)
    w = weights.numpy()
    mask = np.zeros(w.shape, bool) if hidden is None else hidden.numpy()
    parts["weights"].set_array(np.ma.masked_array(w, mask))
    parts["masked cells"].set_path(_squares(mask))
    parts["masked cells"].set_visible(mask.any())
    if parts["cell labels"].get_visible():
        _set_cell_labels(parts["cell labels"], w, mask)
    _describe(fig, map_readings(example, weights, hidden, head, temperature, scale))
    return weights, hidden
