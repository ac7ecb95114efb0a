"""The examples the lessons explore, ready for :class:`AttentionExplorer`.

Shapes: H heads, T tokens, d_k the width of queries and keys.
"""

import torch

from .attention_data import AttentionExample

SENTENCE = "the animal didn't cross the street because it was too tired"
# The feature table of the hand-built heads; a word not listed has all three features 0.
FEATURES = {"animal": (1, 1, 0), "street": (1, 0, 0), "it": (0, 0, 1)}  # noun, animate, pronoun
STRENGTH = 10.0  # the dot product of a match: a clear winner even after dividing by √d_k


def lesson3_examples() -> list[AttentionExample]:
    """The four examples of lesson 3, in the lesson's order.

    1. The worked example: three tokens, d_k = 2, numbers small enough to check by hand.
    2. Random queries and keys with d_k = 64: dot products have standard deviation √64 = 8,
       so without the √d_k division the rows are nearly one-hot (§3.2.1, footnote 4).
    3. A sentence with two hand-built heads: head 1 looks at the previous word, head 2 makes
       "it" look at "animal".
    4. Cross-attention, T_q != T_k: French queries look for the English words they translate.
    """
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    worked = AttentionExample.from_qk("the cat sat (worked example)", "the cat sat", q, k)
    q, k = torch.randn(2, 8, 64, generator=torch.Generator().manual_seed(0))  # (T, d_k) each
    tokens = [f"t{i}" for i in range(1, 9)]
    random = AttentionExample.from_qk("random vectors, d_k = 64", tokens, q, k)
    return [worked, random, _two_heads(), _translation()]


def _two_heads() -> AttentionExample:
    words = SENTENCE.split()
    T, d_k = len(words), len(words)
    features = torch.tensor([FEATURES.get(w, (0, 0, 0)) for w in words], dtype=torch.float)
    x = torch.cat([torch.eye(T), features], dim=1)  # (T, T + 3): one-hot position | features
    NOUN, ANIMATE, PRONOUN = T, T + 1, T + 2  # the feature columns of x
    w_q, w_k = torch.zeros(2, T + 3, d_k), torch.zeros(2, T + 3, d_k)  # (H, T + 3, d_k)
    # Head 1, "previous word": the query at position i asks for position i - 1 (the first
    # word, having none, asks for itself); the key at position j answers with j.
    w_q[0, :T] = STRENGTH * torch.eye(T)[(torch.arange(T) - 1).clamp(min=0)]
    w_k[0, :T] = torch.eye(T)
    # Head 2, "what does 'it' refer to?": a pronoun asks for a living thing, and a little for
    # any noun; keys answer with their features. "street" is a noun but not alive, so "it"
    # (too tired) picks "animal". Words that ask for nothing spread their attention evenly.
    w_q[1, PRONOUN, 0], w_q[1, PRONOUN, 1] = STRENGTH, STRENGTH / 2
    w_k[1, ANIMATE, 0], w_k[1, NOUN, 1] = 1.0, 1.0
    q, k = x @ w_q, x @ w_k  # (T, T + 3) @ (H, T + 3, d_k) -> (H, T, d_k)
    return AttentionExample.from_qk("two hand-built heads", words, q, k)


def _translation() -> AttentionExample:
    """Queries from the French target, keys from the English source: a 6 x 5 map (§3.2.3)."""
    english = ["i", "do", "not", "eat", "apples"]
    french = ["je", "ne", "mange", "pas", "de", "pommes"]
    # The English word each French word comes from: "ne ... pas" both come from "not", and
    # "do" has no French counterpart, so no query looks for it.
    source = {"je": "i", "ne": "not", "mange": "eat", "pas": "not", "de": "apples"}
    source["pommes"] = "apples"
    q = torch.zeros(len(french), len(english))  # (T_q, d_k), one dimension per English word
    for i, word in enumerate(french):
        q[i, english.index(source[word])] = STRENGTH
    k = torch.eye(len(english))  # each English word's key is its own dimension
    return AttentionExample.from_qk("cross-attention, fr → en", french, q, k, key_tokens=english)
