"""Figures and widgets for the lessons: matplotlib without pyplot, ipywidgets imported lazily.

    attention_data      tokens and raw scores of each head (AttentionExample), their weights
    attention_map       one head's weights drawn as a labelled heatmap, with its formula
    attention_explorer  the explorer widget: example, head, temperature, √d_k, causal mask
    examples            the examples the lessons explore (lesson 3: three of them)

In a notebook::

    from course_lib.widgets import AttentionExplorer, lesson3_examples
    AttentionExplorer(lesson3_examples())
"""

from ._display import figure_png, show_figure
from .attention_data import AttentionExample, attention_weights
from .attention_explorer import AttentionExplorer
from .attention_map import draw_attention, refresh_attention, render_attention
from .examples import lesson3_examples

__all__ = [
    "AttentionExample",
    "AttentionExplorer",
    "attention_weights",
    "draw_attention",
    "figure_png",
    "lesson3_examples",
    "refresh_attention",
    "render_attention",
    "show_figure",
]
