import pytest
import torch

from course_lib.masks import causal_mask, padding_mask, target_mask


def test_causal_mask_is_lower_triangular_true_means_may_attend():
    expected = torch.tensor([[True, False, False], [True, True, False], [True, True, True]])
    assert torch.equal(causal_mask(3), expected)
    assert causal_mask(1).dtype == torch.bool


def test_padding_mask_hides_pad_keys_and_broadcasts():
    tokens = torch.tensor([[5, 6, 0, 0], [7, 0, 0, 0]])
    mask = padding_mask(tokens, pad_id=0)
    assert mask.shape == (2, 1, 1, 4)
    assert mask[:, 0, 0].tolist() == [[True, True, False, False], [True, False, False, False]]
    scores = torch.zeros(2, 3, 4, 4)
    assert torch.broadcast_shapes(mask.shape, scores.shape) == scores.shape


def test_padding_mask_respects_pad_id():
    assert padding_mask(torch.tensor([[3, 3, 1]]), pad_id=3)[0, 0, 0].tolist() == [
        False,
        False,
        True,
    ]


def test_target_mask_is_causal_and_padding():
    tgt = torch.tensor([[1, 4, 0]])
    mask = target_mask(tgt, pad_id=0)
    assert mask.shape == (1, 1, 3, 3)
    assert mask[0, 0].tolist() == [[True, False, False], [True, True, False], [True, True, False]]


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: causal_mask(0), ValueError, "T must be a positive int; got 0"),
        (lambda: causal_mask(2.0), TypeError, "T must be an int; got float"),
        (lambda: padding_mask(torch.tensor([1, 0]), 0), ValueError, "tokens must be 2-D; got 1-D"),
        (
            lambda: padding_mask(torch.zeros(1, 2), 0),
            TypeError,
            "tokens must hold integer token ids",
        ),
        (
            lambda: padding_mask(torch.zeros(1, 2, dtype=torch.long), None),
            TypeError,
            "pad_id must be an int",
        ),
    ],
)
def test_masks_reject_bad_input(call, error, words):
    with pytest.raises(error, match=words):
        call()
