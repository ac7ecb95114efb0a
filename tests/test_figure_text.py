"""course_lib.figure_text: the figures' text alternatives say what the numbers say."""

import numpy as np
import pytest
import torch

from course_lib.figure_text import describe_attention, matrix_rows, number, word_list
from course_lib.masks import causal_mask

THE_CAT_SAT = ["the", "cat", "sat"]


@pytest.mark.parametrize(
    "words, text", [([], ""), (["a"], "a"), (["a", "b"], "a and b"), ([1, 2, 3], "1, 2 and 3")]
)
def test_word_list(words, text):
    assert word_list(words) == text


@pytest.mark.parametrize("kind", [torch.tensor, np.array, lambda rows: rows])
def test_each_row_names_its_largest_weight(kind):
    weights = kind([[0.4555, 0.2246, 0.3199], [0.2246, 0.4555, 0.3199], [0.1, 0.2, 0.7]])
    assert describe_attention(weights, THE_CAT_SAT, THE_CAT_SAT) == (
        "Heatmap of attention weights, the, cat and sat as queries (rows) and keys (columns). "
        "Largest weight of each query: the → the 0.46; cat → cat 0.46; sat → sat 0.70."
    )


def test_a_tie_names_every_key_in_it():
    weights = torch.full((2, 3), 1 / 3, dtype=torch.float64)
    weights[1] = torch.tensor([0.4999, 0.5001, 0.0])  # equal at two decimals
    text = describe_attention(weights, ["x", "y"], THE_CAT_SAT)
    assert (
        "x → spread evenly over all 3 visible keys, 0.33 each; y → the and cat 0.50 each." in text
    )
    assert "queries (rows) x and y against keys (columns) the, cat and sat" in text


def test_masked_pairs_are_counted():
    weights = torch.tensor(
        [[1.0, 0, 0, 0], [0.3, 0.7, 0, 0], [0.2, 0.2, 0.6, 0], [0.1] * 3 + [0.7]]
    )
    text = describe_attention(weights, "abcd", "abcd", masked=~causal_mask(4), what="weights")
    assert text.startswith("Heatmap of weights, a, b, c and d as queries")
    assert text.endswith(" 6 of 16 pairs are masked (×, weight 0).")
    assert "a → a 1.00;" in text  # the masked keys' zeros are no tie


@pytest.mark.parametrize(
    "weights, got",
    [
        (torch.rand(2, 3), r"\(2, 3\)"),
        (torch.rand(3, 2), r"\(3, 2\)"),
        ([[0.5, 0.5, 0.0], [1.0, 0.0], [0.2, 0.3, 0.5]], r"\(3, (2, 3|3, 2)\)"),
    ],
)
def test_weights_of_the_wrong_shape_are_refused(weights, got):
    with pytest.raises(ValueError, match=r"weights must be \(T_q, T_k\) = \(3, 3\).*got " + got):
        describe_attention(weights, THE_CAT_SAT, THE_CAT_SAT)


def test_matrix_rows():
    matrix = torch.tensor([[1.25, 1.2, 0.1], [1.2, 1.17, 0.21]])
    assert matrix_rows(matrix, ["cat", "dog"]) == "cat 1.25, 1.20, 0.10; dog 1.20, 1.17, 0.21"
    with pytest.raises(ValueError, match="one row per label"):
        matrix_rows(matrix, ["cat"])


@pytest.mark.parametrize(
    "x, text",
    [
        (0.0, "0.00"),
        (-1e-4, "-1.0e-04"),
        (3.7e-8, "3.7e-08"),  # float round-off reads as such, not as 0.00
        (0.87, "0.87"),
        (-0.001, "-1.0e-03"),
        (-0.0, "0.00"),
        (99.994, "99.99"),
        (480.2, "480"),
        (123456, "120000"),
    ],
)
def test_number_is_one_formatting_for_picture_alt_and_status(x, text):
    assert number(x) == text
