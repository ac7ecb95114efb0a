"""Checks for lesson 1, the sequence problem (paper §1, §2 and §4, Table 1).

Answers here are counts (steps, hops, multiply-adds, parameters, bytes), so each check
compares exact integers and, when they differ, names the count the learner most likely
computed instead: words instead of hops, the two costs swapped, one bias vector instead of
PyTorch's two, entries instead of bytes, and so on.
"""

import inspect

import torch

from ._core import Mismatch, call, exercise, multiple_choice
from ._mistakes import expect_returned
from ._tensors import one_number, whole_number

_WHOLE = "steps, hops, lengths and counts are whole numbers"  # why a fraction is wrong

# 1.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("1.1", "Recall: the two problems of recurrence", correct="b")
def recall_problems(answer_1_1):
    """One problem is about how long the computation takes, the other about what the model can
    learn.

    Which one is caused by h_t needing h_{t-1}? Which by information crossing many steps?

    (a) The two are swapped. Waiting for h_{t-1} before computing h_t is about time: it stops
    the steps running in parallel. Fading information and vanishing gradients are about what
    the model can learn.

    (b) Speed: h_t needs h_{t-1}, so n positions take n steps one after another and most of a
    parallel machine sits idle. Quality: what word 1 says reaches word n only through n - 1
    transformations, and it fades on the way (so do the gradients).

    (c) Those are the Transformer's own costs: its n × n score matrix grows quadratically. A
    recurrent layer's state has a fixed size whatever n is.

    (d) Neither is a problem of recurrence: an LSTM often has fewer parameters than a
    Transformer of the same width, and recurrence handles any length naturally.
    """


# 1.2 Apply: a 100-word sentence ----------------------------------------------------------------


@exercise("1.2", "Apply: steps and paths for 100 words")
def steps_and_paths(rnn_steps, rnn_path, attention_steps, attention_path) -> str:
    """The worked example had 5 words: 5 steps and 4 hops for the RNN, 1 and 1 for attention.

    The RNN path from word 1 to word n counts the arrows h1 → h2 → ... → hn: n - 1.
    """
    got = {
        "rnn_steps": whole_number("rnn_steps", rnn_steps, _WHOLE),
        "rnn_path": whole_number("rnn_path", rnn_path, _WHOLE),
        "attention_steps": whole_number("attention_steps", attention_steps, _WHOLE),
        "attention_path": whole_number("attention_path", attention_path, _WHOLE),
    }
    if got == {"rnn_steps": 1, "rnn_path": 1, "attention_steps": 100, "attention_path": 99}:
        raise Mismatch(
            "the RNN and attention answers are swapped: the RNN is the one that takes a step "
            "per word."
        )
    if 4 in (got["rnn_path"], got["rnn_steps"]) or got["rnn_steps"] == 5:
        raise Mismatch(
            "5 steps and 4 hops were the worked example's 5-word sentence; this one has 100 words."
        )
    _check_rnn(got["rnn_steps"], got["rnn_path"])
    _check_attention(got["attention_steps"], got["attention_path"])
    note = (
        " (You gave 100, which counts the words; between them lie 99 hops. Both say O(n).)"
        if got["rnn_path"] == 100
        else ""
    )
    return (
        "RNN: 100 sequential steps and a 99-hop path from word 1 to word 100; self-attention: "
        f"1 step per layer and a 1-hop path.{note}"
    )


def _check_rnn(steps: int, path: int) -> None:
    wrong_steps = {
        99: "the RNN also makes a step for the first word (h1 = f(h0, x1)): 100 words, 100 steps.",
        1: "an RNN cannot compute h_t before h_{t-1}: one step per word, one after another.",
    }
    if steps != 100:
        raise Mismatch(
            wrong_steps.get(steps) or f"`rnn_steps` = {steps}: the RNN makes one step per word."
        )
    wrong_path = {
        1: "1 hop is attention's path. In an RNN, word 1 reaches word 100 only through the "
        "chain h1 → h2 → ... → h100.",
        101: "count the links between h1 and h100: one fewer than the words they span.",
        98: "count the links between h1 and h100: h1 → h2 is the first of them.",
    }
    if path not in (99, 100):
        raise Mismatch(
            wrong_path.get(path)
            or f"`rnn_path` = {path}: follow the chain h1 → h2 → ... → h100 and count the arrows."
        )


def _check_attention(steps: int, path: int) -> None:
    if steps != 1:
        raise Mismatch(
            f"`attention_steps` = {steps}: self-attention computes every position at once, "
            "as one batch of matrix products: 1 step per layer, whatever n is."
        )
    if path == 0:
        raise Mismatch(
            "0 hops would mean the words are the same position; a word reading another is one hop."
        )
    if path != 1:
        raise Mismatch(
            f"`attention_path` = {path}: word 100 attends to word 1 directly, in one hop."
        )


# 1.3 Extend: the cost of a layer, n²·d against n·d² --------------------------------------------

_COST_CASES = [(50, 512), (512, 512), (1000, 64), (3, 7)]


@exercise("1.3", "Extend: which layer is cheaper?")
def costs(attention_cost, recurrent_cost, crossover_n) -> str:
    """Self-attention: n² pairs of positions, a d-dimensional dot product for each.

    Recurrence: n steps, each a d × d matrix times a vector.

    n²·d = n·d²: divide both sides by n·d.
    """
    for n, d in _COST_CASES:
        a = _cost(attention_cost, "attention_cost", n, d)
        r = _cost(recurrent_cost, "recurrent_cost", n, d)
        expected_a, expected_r = n * n * d, n * d * d
        if (a, r) == (expected_r, expected_a) != (expected_a, expected_r):
            raise Mismatch(
                "the two costs are swapped: self-attention compares every pair of positions "
                "(n² pairs, d multiply-adds each), the recurrence multiplies a d × d matrix at "
                "each of n steps."
            )
        for name, got, expected, form in (
            ("attention_cost", a, expected_a, "n²·d"),
            ("recurrent_cost", r, expected_r, "n·d²"),
        ):
            if got != expected:
                diagnosis = _cost_mistakes(n, d, expected).get(got, f"got {got:,}")
                raise Mismatch(f"`{name}({n}, {d})` should be {form} = {expected:,}: {diagnosis}.")
    x = whole_number("crossover_n", crossover_n, _WHOLE)
    wrong = {
        512 * 512: "512² is the cost ratio's numerator, not the length: n²·d = n·d² when n = d.",
        23: "√512 ≈ 22.6 is not it: n²·d = n·d² simplifies to n = d.",
        22: "√512 ≈ 22.6 is not it: n²·d = n·d² simplifies to n = d.",
        1: "divide both sides of n²·d = n·d² by n·d: n = d.",
    }
    if x != 512:
        raise Mismatch(
            wrong.get(x) or f"`crossover_n` = {x}: set n²·d = n·d² with d = 512 and solve for n."
        )
    return (
        "n²·d < n·d² exactly when n < d. At d = 512: n = 50 costs 1,280,000 against 13,107,200 "
        "(about 10× cheaper), and at n = 512 both are 134,217,728."
    )


def _cost(fn, name, n, d) -> int:
    value = expect_returned(name, call(fn, n, d, during=f"with n = {n}, d = {d}"))
    return whole_number(f"{name}({n}, {d})", value, _WHOLE)


def _cost_mistakes(n: int, d: int, expected: int) -> dict[int, str]:
    """The costs typical slips give for one layer, and why each is wrong."""
    return {
        n * n * d + n * d * d - expected: "that is the other layer's formula: self-attention "
        "costs n²·d, recurrence n·d²",
        n * d: "n·d is one pass over the input; the cost has one more factor",
        n * n * d * d: "n²·d² multiplies both costs together",
        n * n: "n² counts the pairs, but each pair costs d multiply-adds",
        d * d: "d² is the cost of one step; there are n of them",
    }


# 1.4 (lab L1.A) Token and sequence accuracy, first position excluded ---------------------------


@exercise("1.4", "Lab L1.A: token and sequence accuracy")
def accuracy(reversal_accuracy) -> str:
    """The decoder is given the first target token, so compare predicted[:, 1:] with
    target[:, 1:].

    Token accuracy: the mean of the matches. Sequence accuracy: the mean over rows of
    .all(dim=1).
    """
    predicted, target = _accuracy_case()
    result = call(reversal_accuracy, predicted.clone(), target.clone(), during="on a test batch")
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise Mismatch(
            "`reversal_accuracy` should return a pair (token_accuracy, sequence_accuracy); "
            f"got {type(result).__name__}."
        )
    token, sequence = (
        float(one_number(name, x))
        for name, x in zip(("token_accuracy", "sequence_accuracy"), result, strict=True)
    )
    expected = _reference_accuracy(predicted, target)  # 17/20, 2/4
    if max(token, sequence) > 1.0 + 1e-9:
        raise Mismatch(
            f"got ({token:g}, {sequence:g}): return fractions between 0 and 1, not percentages "
            "or counts (.mean(), not .sum())."
        )
    if _same_pair((token, sequence), expected):
        rows, length = target.shape
        scored = rows * (length - 1)
        return (
            f"token accuracy {token:.4f} ({round(token * scored)} of {scored} scored tokens) "
            f"and sequence accuracy {sequence:.2f} ({round(sequence * rows)} of {rows}) on the "
            "test batch; position 1 is given, so it is not scored."
        )
    for candidate, message in _accuracy_mistakes(predicted, target):
        if _same_pair((token, sequence), candidate):
            raise Mismatch(message)
    raise Mismatch(
        f"on the test batch expected ({expected[0]:.4f}, {expected[1]:.2f}); "
        f"got ({token:.4f}, {sequence:.4f})."
    )


def _accuracy_case():
    """Targets of length 6 and predictions with one, two or no scored wrong tokens per row.

    The mistakes sit at the end of rows 1 and 2 and at the (unscored) start of row 3, so
    scoring positions 1..L-1 instead of 2..L gives other numbers; with 5 scored columns and
    4 rows, a sequence accuracy taken over the wrong dimension cannot match by chance.
    """
    target = torch.tensor(
        [[9, 8, 7, 6, 5, 4], [4, 3, 2, 11, 10, 9], [12, 13, 14, 15, 16, 17], [6, 6, 7, 7, 8, 8]]
    )
    predicted = target.clone()
    predicted[1, 5] = 5  # one wrong token, the last
    predicted[2, 4:] = 3  # two wrong tokens, the last two
    predicted[3, 0] = 19  # only the given first token differs: not scored
    return predicted, target


def _reference_accuracy(predicted, target):
    right = (predicted[:, 1:] == target[:, 1:]).double()  # positions 2..L
    return right.mean().item(), right.all(dim=1).double().mean().item()


def _same_pair(got, candidate) -> bool:
    return all(abs(g - c) < 1e-6 for g, c in zip(got, candidate, strict=True))


def _accuracy_mistakes(predicted, target) -> list:
    token, sequence = _reference_accuracy(predicted, target)
    every = (predicted == target).double()  # position 1 counted
    shifted = (predicted[:, :-1] == target[:, :-1]).double()  # positions 1..L-1
    scored = (predicted[:, 1:] == target[:, 1:]).double()

    def rows(matches, how="all"):
        return getattr(matches, how)(1).double().mean().item()

    return [
        ((sequence, token), "the pair is swapped: return (token_accuracy, sequence_accuracy)."),
        (
            (every.mean().item(), sequence),
            "the token accuracy counts position 1, which the decoder is given (no BOS symbol): "
            "score positions 2..L only, predicted[:, 1:].",
        ),
        (
            (every.mean().item(), rows(every)),
            "position 1 is counted: the decoder is given the first target token, so score "
            "positions 2..L only, predicted[:, 1:].",
        ),
        (
            (token, rows(every)),
            "the sequence accuracy counts position 1, which the decoder is given: a sequence is "
            "right when positions 2..L all are.",
        ),
        (
            (token, token),
            "the sequence accuracy is the token accuracy again: a sequence counts only if all "
            "its scored tokens are right (.all(dim=1)).",
        ),
        (
            (token, rows(scored, "any")),
            "a sequence with any right token is counted: it must have all of them right (.all, "
            "not .any).",
        ),
        (
            (token, scored.all(0).double().mean().item()),
            "the sequence accuracy runs over the wrong dimension: rows are sequences, so take "
            ".all(dim=1) across each row's positions.",
        ),
        (
            (shifted.mean().item(), rows(shifted)),
            "positions 1..L-1 are scored: the decoder is given position 1 and predicts "
            "positions 2..L, so compare predicted[:, 1:] with target[:, 1:].",
        ),
    ]


# 1.5 (lab L1.B) The parameters of one LSTM layer -----------------------------------------------


@exercise("1.5", "Lab L1.B: the parameters of an LSTM layer")
def lstm_parameter_count(lstm_parameters) -> str:
    """Four gates; each has a weight matrix for the input (hidden × d_in) and one for h_{t-1}
    (hidden × hidden).

    PyTorch gives each gate two bias vectors, b_ih and b_hh.

    Check against sum(p.numel() for p in torch.nn.LSTM(d_in, hidden).parameters()).
    """
    for d_in, hidden in [(256, 128), (64, 128), (3, 5)]:
        value = call(lstm_parameters, d_in, hidden, during=f"with d_in = {d_in}, hidden = {hidden}")
        value = expect_returned("lstm_parameters", value)
        got = whole_number(f"lstm_parameters({d_in}, {hidden})", value, _WHOLE)
        expected = sum(p.numel() for p in torch.nn.LSTM(d_in, hidden).parameters())
        if got != expected:
            raise Mismatch(
                _lstm_mistakes(d_in, hidden, expected).get(got)
                or f"`lstm_parameters({d_in}, {hidden})` should be {expected:,}; got {got:,}. "
                "Count W_ih, W_hh, b_ih and b_hh."
            )
    return (
        "4·hidden·(d_in + hidden) + 8·hidden: 197,632 for one direction of the BiLSTM's first "
        "layer."
    )


def _lstm_mistakes(d_in: int, hidden: int, expected: int) -> dict[int, str]:
    """The counts typical slips give for one LSTM layer, and why each is wrong."""
    gates = 4 * hidden * (d_in + hidden)
    return {
        gates + 4 * hidden: "PyTorch's LSTM has two bias vectors per gate, b_ih and b_hh: "
        "8·hidden biases, not 4·hidden.",
        gates: "the biases are missing: PyTorch adds b_ih and b_hh, 4·hidden each.",
        4 * hidden * d_in + 8 * hidden: "the recurrent weights W_hh (4·hidden × hidden) are "
        "missing: each gate also reads h_{t-1}.",
        hidden * (d_in + hidden) + 2 * hidden: "an LSTM has four gates (input, forget, cell, "
        "output): multiply by 4.",
        3 * hidden * (d_in + hidden) + 6 * hidden: "that is a GRU's three gates; an LSTM has four.",
        2 * expected: "that counts both directions; the function is for one direction of one "
        "layer.",
    }


# 1.6 (lab L1.C) The memory of the score matrix -------------------------------------------------


@exercise("1.6", "Lab L1.C: the memory of the score matrix")
def score_memory(attention_bytes) -> str:
    """One head of one layer for one sequence holds n × n scores of 4 bytes each.

    Every head, every layer and every sequence in the batch has its own matrix: multiply.
    """
    cases = [(512, 1, 1, 1), (128_000, 1, 1, 1), (2048, 8, 6, 3), (10, 2, 3, 5)]
    if not callable(attention_bytes):
        raise Mismatch(f"expected a function; got {type(attention_bytes).__name__}")
    try:
        inspect.signature(attention_bytes).bind(1, heads=1, layers=1, batch=1)
    except (TypeError, ValueError):
        raise Mismatch(
            "`attention_bytes` must take heads, layers and batch as keyword arguments with "
            "default 1: def attention_bytes(n, heads=1, layers=1, batch=1)."
        ) from None
    for n, heads, layers, batch in cases:
        during = f"with n = {n}, heads = {heads}, layers = {layers}, batch = {batch}"
        sizes = {"heads": heads, "layers": layers, "batch": batch}
        if (heads, layers, batch) == (1, 1, 1):
            sizes = {}  # the defaults: called as attention_bytes(n)
        value = expect_returned("attention_bytes", call(attention_bytes, n, during=during, **sizes))
        got = float(one_number(f"attention_bytes({n}, ...)", value))
        copies = heads * layers * batch
        expected = 4 * n * n * copies
        if got == expected:
            continue
        typical = _byte_mistakes(n, heads, layers, batch)
        message = next((m for v, m in typical.items() if abs(got - v) <= 1e-9 * max(v, 1)), None)
        called = f"attention_bytes({n}, heads={heads}, layers={layers}, batch={batch})"
        raise Mismatch(
            f"`{called}` gave {got:,.6g}: {message}"
            if message
            else f"`{called}` should be 4·n²·heads·layers·batch = {expected:,}; got {got:,.6g}."
        )
    return (
        "4·n² bytes per head, layer and sequence: 1 MiB at 512 tokens, 65.5 GB (61.0 GiB) at "
        "128,000."
    )


def _byte_mistakes(n: int, heads: int, layers: int, batch: int) -> dict[float, str]:
    """The sizes typical slips give for the score matrices, and why each is wrong."""
    copies = heads * layers * batch
    entries, right = n * n * copies, 4 * n * n * copies
    return {
        entries: "that is the number of entries; each float32 entry takes 4 bytes.",
        2 * entries: "2 bytes per entry is float16; the table is float32, 4 bytes.",
        8 * entries: "8 bytes per entry is float64; the table is float32, 4 bytes.",
        4 * n * copies: "the score matrix is n × n: n² entries, not n.",
        4 * n * n: "heads, layers and batch were ignored: every head of every layer of every "
        "sequence holds its own n × n matrix.",
        4 * n * n * heads * layers: "the batch was ignored: every sequence in the batch has its "
        "own matrices.",
        4 * n * n * heads * batch: "the layers were ignored: every layer computes its own score "
        "matrices.",
        4 * n * n * layers * batch: "the heads were ignored: every head computes its own n × n "
        "matrix.",
        32 * entries: "that is in bits (32 per float32 entry); return bytes, 4 per entry.",
        right / 2**10: "that is in KiB; return bytes (the notebook converts).",
        right / 2**20: "that is in MiB; return bytes (the notebook converts).",
        right / 1e9: "that is in GB; return bytes (the notebook converts).",
        right / 2**30: "that is in GiB; return bytes (the notebook converts).",
    }


# 1.7 (lab L1.C) The inconsistent last row ------------------------------------------------------


@multiple_choice("1.7", "Lab L1.C: the inconsistent row", correct="b")
def inconsistent_row(answer_1_7):
    """Compute 128,000² × 4 bytes and compare it with 64 × 10⁹ and with 64 × 2³⁰.

    Which n gives exactly 64 GiB? Try n = 128 × 1,024.

    (a) The entry count is right: 128,000² = 16,384,000,000. The trouble is the memory figure.

    (b) 16,384,000,000 entries × 4 bytes = 65,536,000,000 B = 65.5 GB = 61.0 GiB. 64 is exact
    only for 131,072 = 128 × 1,024 tokens: 17,179,869,184 entries, 64 GiB.

    (c) float32 takes 4 bytes (float64 takes 8); with 8 bytes the row would say about 131 GB.

    (d) The table is for one head, one layer and one sequence; more heads or layers would
    multiply every row, not explain why one row disagrees with its own entry count.
    """
