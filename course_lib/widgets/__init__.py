"""Figures and widgets for the lessons: matplotlib without pyplot, ipywidgets imported lazily.

    sequence_cost       lesson 1: measured RNN/LSTM vs self-attention time, path lengths, n²d vs nd²
    vectors             lesson 2: two arrows with their dot product, cosine and angle
    attention_data      tokens and raw scores of each head (AttentionExample), their weights
    attention_map       one head's weights drawn as a labelled heatmap, with its formula
    attention_explorer  the explorer widget: example, head, temperature, √d_k, causal mask
    examples            the examples the lessons explore (lesson 3: three of them)
    pe_data, pe_figures lesson 5: encoding table, waves, similarity and the shift as a rotation
    pe_explorer         lesson 5: the positional-encoding waves explorer
    deep_stack          lesson 6: activation scale through a deep stack, with and without residuals
    model_examples      lesson 7: a trained model's attention on sentences, for the explorer
    static_export       every displayed explorer's pictures for a set of settings, for the
                        offline site (export_explorers)

Every explorer works with the keyboard (sliders, buttons and checkboxes; no menus), shows a
focus ring and a line of key help, and gives its picture a text alternative computed from
the numbers drawn (describe_attention_map, describe_pe, describe_vectors, describe_stack,
describe_sequence_cost). The lines with numbers that a picture prints (titles, footers) are
made once and repeated word for word in its text alternative and its status line, so the
three cannot disagree; a setting the example cannot take is put back, and the status line
says why.

Every widget keeps its drawing in plain functions that tests call without a browser.
In a notebook::

    from course_lib.widgets import AttentionExplorer, lesson3_examples
    AttentionExplorer(lesson3_examples())
"""

from ._display import figure_png, show_figure
from .attention_data import AttentionExample, attention_weights, describe_attention_map
from .attention_explorer import AttentionExplorer
from .attention_map import draw_attention, refresh_attention, render_attention
from .deep_stack import DeepStackExplorer, describe_stack, stack_profile
from .examples import lesson3_examples
from .model_examples import model_examples, sentence_attention
from .pe_data import describe_pe
from .pe_explorer import PEExplorer
from .pe_figures import render_pe
from .sequence_cost import SequenceCostExplorer, describe_sequence_cost
from .static_export import export_explorers
from .vectors import VectorExplorer, describe_vectors, render_vectors, vector_pair

__all__ = [
    "AttentionExample",
    "AttentionExplorer",
    "DeepStackExplorer",
    "PEExplorer",
    "SequenceCostExplorer",
    "VectorExplorer",
    "attention_weights",
    "describe_attention_map",
    "describe_pe",
    "describe_sequence_cost",
    "describe_stack",
    "describe_vectors",
    "draw_attention",
    "export_explorers",
    "figure_png",
    "lesson3_examples",
    "model_examples",
    "refresh_attention",
    "render_attention",
    "render_pe",
    "render_vectors",
    "sentence_attention",
    "show_figure",
    "stack_profile",
    "vector_pair",
]
