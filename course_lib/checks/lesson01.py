"""Checks for lesson 1, the sequence problem (paper §1, §2 and §4, Table 1): counts (steps,
hops, multiply-adds, parameters, bytes), compared exactly, and two accuracies. A count that
is off is read for the count the learner most likely computed instead."""

import math
from functools import partial

import numpy as np
import torch

from ._core import DIFFERENCE, MISTAKE, TYPE, Mismatch, call, exercise, multiple_choice
from ._mistakes import expect_count, expect_parameters, expect_returned
from ._tensors import DIVISION, close, diagnose, match, one_number, whole_number

# Shared by several exercises -------------------------------------------------------------------

_WHOLE = "steps, hops, lengths and counts are whole numbers"  # why a fraction is wrong


def _count(fn, name: str, names: str, *args, **sizes) -> float:
    """The learner's ``fn(*args, **sizes)`` as one number; ``names`` names the arguments."""
    called = zip(names.split(), [*args, *sizes.values()], strict=False)  # sizes may be left out
    during = "with " + ", ".join(f"{n} = {v}" for n, v in called)
    value = expect_returned(name, call(fn, *args, during=during, **sizes))
    return float(one_number(f"{name}({', '.join(map(str, args))}{', ...' * bool(sizes)})", value))


def _misread(got: list[float], right: list[float], named: str | None) -> str | None:
    """Why the counts ``got`` are not ``right``: a flipped sign, the slip ``named``, a fraction."""
    if all(g == -r != 0 for g, r in zip(got, right, strict=True)):
        return "the sign is flipped: a count is never negative."
    return named or (None if all(float(c).is_integer() for c in got) else DIVISION)


def _product_fit(count, base: tuple, steps: tuple, cases) -> tuple[float, list[int]] | None:
    """``(c, powers)`` if ``count(*sizes)`` is c·∏ sizeᵢ^powerᵢ with whole powers: read from how
    it grows as each size of ``base`` is multiplied by its step, then checked on ``cases``."""
    at_base, powers = count(*base), []
    for i, step in enumerate(steps):
        moved = count(*base[:i], base[i] * step, *base[i + 1 :])
        power = math.log(moved / at_base, step) if at_base > 0 and moved > 0 else 0.5
        if abs(power - round(power)) > 1e-6:  # not a product of whole powers
            return None
        powers.append(round(power))
    c = at_base / math.prod(x**p for x, p in zip(base, powers, strict=True))
    for case in cases:
        value = c * math.prod(x**p for x, p in zip(case, powers, strict=True))
        if not math.isclose(value, count(*case), rel_tol=1e-9):
            return None
    return c, powers


def _num(x: float) -> str:
    """``1,280,000`` for a whole number, ``4.88281`` otherwise."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.6g}"


def _constant(c: float, fitted, sizes: str) -> str | None:
    """The message for a product that does not grow with any size."""
    return None if any(fitted) else f"your function returns {_num(c)} whatever {sizes} are."


# 1.1 Recall ------------------------------------------------------------------------------------


@multiple_choice("1.1", "Recall: the two problems of recurrence", correct="c")
def recall_problems(answer_1_1):
    """One problem is about how long the computation takes, the other about what the model can
    learn.

    Which one is caused by h_t needing h_{t-1}? Which by information crossing many steps?

    (a) The two are swapped. Waiting for h_{t-1} before computing h_t is about time: it stops
    the steps running in parallel. Fading information and vanishing gradients are about what
    the model can learn.

    (b) Those are the Transformer's own costs: its n × n score matrix grows quadratically. A
    recurrent layer's state has a fixed size whatever n is, and what fades along its chain
    fades whatever its number of parameters.

    (c) Speed: h_t needs h_{t-1}, so n positions take n steps one after another and most of a
    parallel machine sits idle. Quality: what word 1 says reaches word n only through n - 1
    transformations, and it fades on the way (so do the gradients).

    (d) Neither is a problem of recurrence: an LSTM often has fewer parameters than a
    Transformer of the same width, and recurrence reads inputs of any length, one step each.
    """


# 1.2 Apply: a 100-word sentence ----------------------------------------------------------------

_ONE_BY_ONE = "an RNN cannot compute h_t before h_{t-1}: one step per word, one after another."
_AT_ONCE = "self-attention computes every position at once, as one batch of matrix products"
_DIRECTLY = "word 100 attends to word 1 directly, in one hop."
_HOPS = {"rnn_steps": 100, "rnn_path": 99, "attention_steps": 1, "attention_path": 1}
_HOP_SLIPS = {  # each count's typical slips, what they mean, and what to do (None) otherwise
    "rnn_steps": {
        None: "the RNN makes one step per word, and there are 100.",
        99: "the RNN also makes a step for the first word (h1 = f(h0, x1)): 100 words, 100 steps.",
        101: "h0 is the initial state, given rather than computed: the 100 words make 100 "
        "steps, h1 to h100.",
        1: _ONE_BY_ONE,
    },
    "rnn_path": {
        None: "follow the chain h1 → h2 → ... → h100 and count the arrows.",
        1: "1 hop is attention's path. In an RNN, word 1 reaches word 100 only through the "
        "chain h1 → h2 → ... → h100.",
        98: "count the links between h1 and h100: h1 → h2 is the first of them.",
    },
    "attention_steps": {
        None: "self-attention computes every position at once: 1 step per layer.",
        100: f"that is the RNN's count, a step per word; {_AT_ONCE}: 1 step per layer.",
        0: "the layer still runs once: it computes every position in that one step.",
        2: "the scores and the weighted sum are matrix products over all positions at once; "
        "Table 1 counts sequential operations per layer, and a layer is 1 step whatever n is.",
    },
    "attention_path": {
        None: _DIRECTLY,
        0: "0 hops would mean the words are the same position; a word reading another is one hop.",
        2: "query → key → value is still one hop: word 100 reads word 1 directly, in one "
        "attention step.",
        99: f"that is the RNN's path; {_DIRECTLY}",
    },
}


@exercise("1.2", "Apply: steps and paths for 100 words")
def steps_and_paths(rnn_steps, rnn_path, attention_steps, attention_path) -> str:
    """Redo the worked example of section 3 with 100 words instead of 5: what grows with the
    number of words, and what does not?

    The RNN makes one step per word. Its path from word 1 to word n counts the arrows
    h1 → h2 → ... → hn, one fewer than the words.
    """
    answers = (rnn_steps, rnn_path, attention_steps, attention_path)
    got = {n: whole_number(n, x, _WHOLE) for n, x in zip(_HOPS, answers, strict=True)}
    if got["rnn_steps"] == 1 and got["attention_steps"] in (99, 100):
        swapped = "the RNN and attention answers are swapped: the RNN is the one that takes a step"
        raise Mismatch(f"{swapped} per word.", MISTAKE)
    if 4 in (got["rnn_path"], got["rnn_steps"]) or got["rnn_steps"] == 5:
        example = "5 steps and 4 hops were the worked example's 5-word sentence"
        raise Mismatch(f"{example}; this one has 100 words.", MISTAKE)
    for name, right in _HOPS.items():
        if (name, got[name]) != ("rnn_path", 100):  # the words, not the arrows: also O(n)
            slips = _HOP_SLIPS[name]
            expect_count(got[name], right, slips, f"`{name}` =", slips[None])
    note = " (You gave 100, which counts the words; between them lie 99 hops. Both say O(n).)"
    return (
        "RNN: 100 sequential steps and a 99-hop path from word 1 to word 100; self-attention: "
        f"1 step per layer and a 1-hop path.{note if got['rnn_path'] == 100 else ''}"
    )


# 1.3 Extend: the cost of a layer, n²·d against n·d² --------------------------------------------

_COST_CASES = [(50, 512), (512, 512), (1000, 64), (3, 7)]
CROSSOVER_D = 1024  # the big model's d_model (Table 3): crossover_n asks where its costs cross


@exercise("1.3", "Extend: which layer is cheaper?")
def costs(attention_cost, recurrent_cost, crossover_n) -> str:
    """Count what each layer repeats, and what one repetition costs: self-attention works on
    pairs of positions, the recurrence on steps.

    Self-attention: n² pairs of positions, a d-dimensional dot product for each. Recurrence:
    n steps, each a d × d matrix times a vector.

    Set the two costs equal and divide both sides by n·d. The question is about d = 1,024, not
    section 4's 512.
    """
    fns = {"attention_cost": attention_cost, "recurrent_cost": recurrent_cost}
    got = {name: [_count(fn, name, "n d", *c) for c in _COST_CASES] for name, fn in fns.items()}
    right = [[n * n * d for n, d in _COST_CASES], [n * d * d for n, d in _COST_CASES]]
    if list(got.values()) == right[::-1]:
        raise Mismatch(
            "the two costs are swapped: self-attention compares every pair of positions "
            "(n² pairs, d multiply-adds each), the recurrence multiplies a d × d matrix at "
            "each of n steps.",
            MISTAKE,
        )
    for (name, fn), form, want in zip(fns.items(), ("n²·d", "n·d²"), right, strict=True):
        said = [f"{name}{case}" for case in _COST_CASES]
        _judge_counts(said, got[name], want, form, partial(_cost_mistake, fn, name, got[name]))
    d = CROSSOVER_D
    crossover_slips = {
        d * d: f"{d:,}² = d² is not a length: n²·d = n·d² when n = d.",
        32: f"√{d:,} = 32 is not it: n²·d = n·d² simplifies to n = d.",
        1: "divide both sides of n²·d = n·d² by n·d: n = d.",
        d + 1: f"at n = {d + 1:,} attention is already the dearer layer; they are equal at n = d.",
        d - 1: f"at n = {d - 1:,} attention is still the cheaper layer; they are equal at n = d.",
        512: "512 is the crossover for the base model's d = 512, the one section 4 drew; the "
        f"big model has d = {d:,}, and the costs cross at n = d.",
        2 * d: "n²·d = n·d² simplifies to n = d, not 2·d.",
    }
    solve = f"set n²·d = n·d² with d = {d:,} and solve for n."
    got_n = whole_number("crossover_n", crossover_n, _WHOLE)
    expect_count(got_n, d, crossover_slips, "`crossover_n` =", solve)
    paragraph, document = ((n * n * d, n * d * d) for n in (200, 5_000))
    return (
        f"n²·d < n·d² exactly when n < d, so at d = {d:,} the costs cross at n = {d:,}. "
        f"A 200-token paragraph costs attention {paragraph[0]:,} multiply-adds against "
        f"{paragraph[1]:,} ({paragraph[1] / paragraph[0]:.2f}× cheaper); a 5,000-token document "
        f"{document[0]:,} against {document[1]:,} ({document[0] / document[1]:.2f}× dearer)."
    )


def _judge_counts(said: list[str], got: list[float], right: list[float], formula, slip) -> None:
    """A Mismatch at the first call ``said[i]`` whose count is off: a flipped sign, the slip
    that ``slip()`` names, a fraction, else the ``formula`` and its value (only then: a named
    slip needs no formula, and the formula would answer the exercise)."""
    if got != right:
        i = next(i for i, (g, r) in enumerate(zip(got, right, strict=True)) if g != r)
        if why := _misread(got, right, slip()):
            raise Mismatch(f"`{said[i]}` = {_num(got[i])}, not {_num(right[i])}: {why}", MISTAKE)
        wrong = f"`{said[i]}` should be {formula} = {_num(right[i])}; got {_num(got[i])}."
        raise Mismatch(wrong, DIFFERENCE)


_COST_PARTS = {  # what each factor of a layer's cost is, for a formula that gets it wrong
    "attention_cost": ("self-attention scores n² pairs of positions", "each pair costs a "
                       "d-long dot product, d multiply-adds"),
    "recurrent_cost": ("there are n steps", "each step multiplies a d × d matrix by a vector, "
                       "d² multiply-adds"),
}  # fmt: skip


def _cost_mistake(fn, name: str, values: list[float]) -> str | None:
    """Why the costs ``values`` (one per case of ``_COST_CASES``) are wrong, if the formula
    they follow is a typical slip or a product c·nᵃ·dᵇ whose parts can be named."""
    attention = name == "attention_cost"
    n, d = (torch.tensor(x, dtype=torch.float64) for x in zip(*_COST_CASES, strict=True))
    other = "recurrence, n·d²" if attention else "self-attention, n²·d"
    typical = [
        (n * d * d if attention else n * n * d, f"that is the other layer's formula ({other})."),
        (n * d, "n·d is one pass over the input; the cost has one more factor."),
        (n * n * d * d, "n²·d² multiplies both costs together."),
        (n * (n - 1) * d, "a position also attends to itself: n² pairs, not n(n - 1)."),
        ((n - 1) * d * d, "the recurrence makes a step for every position: n steps, not n - 1."),
    ]
    fitted = match(values, typical) or _product_fit(
        lambda *c: _count(fn, name, "n d", *c), (7, 5), (2, 3), _COST_CASES
    )
    if fitted is None or isinstance(fitted, str):
        return fitted
    c, powers = fitted
    if constant := _constant(c, powers, "n and d"):
        return constant
    want = (2, 1) if attention else (1, 2)
    parts = [why for p, w, why in zip(powers, want, _COST_PARTS[name], strict=True) if p != w]
    if c != 1:
        parts.append("a multiply-add counts once, not as two operations" if c == 2 else "")
        parts[-1] = parts[-1] or f"there is no factor {c:g}"
    written = _written(c, zip("nd", powers, strict=True))
    return f"your function computes {written}, but {'; '.join(parts)}."


def _written(c: float, powers) -> str:
    """c·nᵃ·dᵇ written out, each size with its power."""
    digits = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    terms = [x + ("" if p == 1 else str(p).translate(digits)) for x, p in powers if p]
    return "·".join(([f"{c:g}"] if c != 1 else []) + terms)


# 1.4 (lab L1.A) Token and sequence accuracy, first position excluded ---------------------------


def _batches() -> dict[str, tuple]:
    """Two batches of targets of length 6 and predictions, by how messages name them.

    In the test batch the wrong tokens sit at the end of rows 1 and 2 and at the unscored start
    of row 3, so that each typical slip gives other numbers. In the second every scored token
    is right: a whole-batch .all() gives 1 there, a count compared with L (not L - 1) still 0.
    """
    target = torch.tensor(
        [[9, 8, 7, 6, 5, 4], [4, 3, 2, 11, 10, 9], [12, 13, 14, 15, 16, 17], [6, 6, 7, 7, 8, 8]]
    )
    predicted, all_right = target.clone(), target.clone()
    predicted[1, 5] = 5  # one wrong token, the last
    predicted[2, 4:] = 3  # two wrong tokens, the last two
    predicted[3, 0] = all_right[0, 0] = 19  # only the given first token differs: not scored
    return {
        "the test batch (4 rows of 6 tokens, 20 scored)": (predicted, target),
        "a second batch, every scored token right": (all_right, target),
    }


_BATCHES = _batches()


@exercise("1.4", "Lab L1.A: token and sequence accuracy")
def accuracy(reversal_accuracy) -> str:
    """Which position is the decoder given rather than asked to predict? Only the positions
    it predicts are scored.

    Compare predicted and target at positions 2 to L. Token accuracy is the share of those
    comparisons that match; sequence accuracy the share of rows whose comparisons all match.

    `right = predicted[:, 1:] == target[:, 1:]`, then `right.float().mean()` and
    `right.all(dim=1).float().mean()`, each as a Python number with `.item()`.
    """
    got = {b: _pair(reversal_accuracy, *batch, b) for b, batch in _BATCHES.items()}
    want = {b: _rates(p[:, 1:] == t[:, 1:]) for b, (p, t) in _BATCHES.items()}
    (token, sequence), flat = got[next(iter(got))], [x for pair in got.values() for x in pair]
    if not close(flat, [x for pair in want.values() for x in pair]):
        if min(flat) < 0 or max(flat) > 1 + 1e-9:
            sign = "a share of right answers is never negative; check the sign"
            share = "return fractions between 0 and 1, not percentages or counts (.mean(), not "
            why = sign if min(flat) < 0 else f"{share}.sum())"
            raise Mismatch(f"got ({token:g}, {sequence:g}): {why}.", MISTAKE)
        slips = [_accuracy_mistakes(*batch) for batch in _BATCHES.values()]
        if named := match(flat, [(a + b, m) for (a, m), (b, _) in zip(*slips, strict=True)]):
            raise Mismatch(named, MISTAKE)
    for batch, pair in got.items():
        for i, name in enumerate(_ACCURACIES):
            diagnose(name, pair[i], want[batch][i], during=f"on {batch}")
    return (
        f"token accuracy {token:.4f} ({round(token * 20)} of 20 scored tokens) and sequence "
        f"accuracy {sequence:.2f} ({round(sequence * 4)} of 4) on the test batch; position 1 is "
        "given, so it is not scored."
    )


def _pair(fn, predicted, target, batch: str) -> tuple[float, float]:
    """The learner's (token_accuracy, sequence_accuracy) on copies of a batch."""
    result = call(fn, predicted.clone(), target.clone(), during=f"on {batch}", tip=_accuracy_tip)
    result = expect_returned("reversal_accuracy", result)
    if not isinstance(result, tuple | list) or len(result) != 2:
        what = f"a tensor of shape {tuple(result.shape)}" if torch.is_tensor(result) else None
        pair = "a pair of numbers (token_accuracy, sequence_accuracy)"
        raise Mismatch(
            f"`reversal_accuracy` should return {pair}; got {what or type(result).__name__}.", TYPE
        )
    return tuple(float(one_number(n, x)) for n, x in zip(_ACCURACIES, result, strict=True))


_ACCURACIES = ("token_accuracy", "sequence_accuracy")
_SLICED = "predicted and target were sliced differently; compare the same positions of both, "
_SLICED += "predicted[:, 1:] == target[:, 1:]."
_DIMS = "the batch is (B, L), dimensions 0 and 1; a sequence runs along dim=1."
_CRASHES = {  # what a crash's words on the test batch most likely mean
    "must match the size of tensor": _SLICED,
    "could not be broadcast": _SLICED,
    "could not infer output dtype": "the matches are booleans, which have no mean: "
    ".float().mean().",
    "Dimension out of range": _DIMS,
    "out of bounds": _DIMS,
}


def _accuracy_tip(error: Exception) -> str | None:
    return next((f"Tip: {tip}" for words, tip in _CRASHES.items() if words in str(error)), None)


def _rates(right) -> tuple[float, float]:
    """Token and sequence accuracy of a table of matches (B, positions)."""
    return _mean(right), _mean(right.all(dim=1))


def _accuracy_mistakes(predicted, target) -> list:
    """The pairs (token, sequence) that the typical slips give on one batch, and their messages."""
    scored, L = predicted[:, 1:] == target[:, 1:], target.shape[1]
    (token, sequence), compare = _rates(scored), "compare predicted[:, 1:] with target[:, 1:]"
    return [
        ((sequence, token), "the pair is swapped: return (token_accuracy, sequence_accuracy)."),
        (_rates(predicted == target), "position 1 is counted: the decoder is given the first "
         "target token, so score positions 2..L only, predicted[:, 1:]."),
        ((token, token), "the sequence accuracy is the token accuracy again: a sequence counts "
         "only if all its scored tokens are right (.all(dim=1))."),
        ((token, _mean(scored.any(dim=1))), "a sequence with any right token is counted: it "
         "must have all of them right (.all, not .any)."),
        ((token, _mean(scored.all(dim=0))), "the sequence accuracy runs over the wrong "
         "dimension: rows are sequences, so take .all(dim=1) across each row's positions."),
        (_rates(predicted[:, :-1] == target[:, :-1]), "positions 1..L-1 are scored: the decoder "
         f"is given position 1 and predicts positions 2..L, so {compare}."),
        (_rates(predicted[:, 2:] == target[:, 2:]), "positions 3..L are scored: only position 1 "
         f"is given, so {compare}."),
        (_rates(predicted[:, 1:-1] == target[:, 1:-1]), "the last position is left out: score "
         "positions 2..L, predicted[:, 1:] (no end bound)."),
        ((token, float(scored.all())), ".all() without dim asks whether every scored token of "
         "the whole batch is right; a sequence accuracy takes .all(dim=1), one answer per "
         "sequence, then the mean."),
        ((token, _mean(scored.sum(dim=1) == L)), "no sequence is counted right, not even one "
         f"whose scored tokens all are: a row has L - 1 = {L - 1} scored tokens, so its count of "
         f"right ones never reaches L = {L}. Compare with L - 1, or take .all(dim=1) over the "
         "scored positions."),
        (_rates(~scored), "these are error rates: `!=` finds the wrong tokens; the accuracy "
         "counts the right ones, predicted[:, 1:] == target[:, 1:]."),
    ]  # fmt: skip


def _mean(x) -> float:
    return x.double().mean().item()


# 1.5 (lab L1.B) The parameters of one LSTM layer -----------------------------------------------

# (d_in, hidden): the lab's layer first; enough others to tell every part of the count apart.
_LSTM_CASES = [(256, 128), (64, 128), (3, 5), (1, 1), (2, 7), (9, 4), (5, 11), (13, 3)]
# The parts a count can have, one column each, and their names in a formula.
_TERMS = np.array([[h * d, h * h, h, d, d * d, 1] for d, h in _LSTM_CASES], dtype=float)
_TERM_NAMES = ("hidden·d_in", "hidden²", "hidden", "d_in", "d_in²", "")
_LSTM_RIGHT = (4, 4, 8, 0, 0, 0)  # 4·hidden·d_in (W_ih) + 4·hidden² (W_hh) + 8·hidden (biases)
_LSTM_FORMULA = "4·hidden·d_in (W_ih) + 4·hidden² (W_hh) + 8·hidden (b_ih and b_hh)"


@exercise("1.5", "Lab L1.B: the parameters of an LSTM layer")
def lstm_parameter_count(lstm_parameters) -> str:
    """Count one gate first: which vector does each of its weight matrices read, and how
    long is what it writes? Then count the gates.

    A gate's input weights are hidden × d_in, its recurrent weights hidden × hidden, and
    PyTorch gives it two bias vectors of length hidden, b_ih and b_hh. There are four gates.

    Compare your count with PyTorch's:
    `sum(p.numel() for p in torch.nn.LSTM(d_in, hidden).parameters())`.
    """
    counts = [_count(lstm_parameters, "lstm_parameters", "d_in hidden", *c) for c in _LSTM_CASES]
    said = [f"lstm_parameters{case}" for case in _LSTM_CASES]
    _judge_counts(said, counts, list(_TERMS @ _LSTM_RIGHT), _LSTM_FORMULA,
                  lambda: _lstm_mistake(counts))  # fmt: skip
    return (
        "4·hidden·d_in + 4·hidden² + 8·hidden: 197,632 for one direction of the BiLSTM's first "
        "layer."
    )


_FOUR = "an LSTM has four gates (input, forget, cell, output): multiply by 4"
_LSTM_MISCOUNTS = {
    (4, 4, 4, 0, 0, 0): "one bias vector per gate: PyTorch's LSTM has two bias vectors per gate, "
    "b_ih and b_hh, so 8·hidden biases, not 4·hidden.",
    (4, 4, 0, 0, 0, 0): "the biases are missing: PyTorch adds b_ih and b_hh, 4·hidden each.",
    (4, 0, 8, 0, 0, 0): "the recurrent weights W_hh (4·hidden × hidden) are missing: each gate "
    "also reads h_{t-1}.",
    (0, 4, 8, 0, 0, 0): "the input weights W_ih (4·hidden × d_in) are missing: each gate also "
    "reads x_t.",
    (1, 1, 2, 0, 0, 0): f"that is one gate; {_FOUR}.",
    (1, 1, 1, 0, 0, 0): f"that is one gate with one bias; {_FOUR}, and PyTorch gives each two "
    "bias vectors.",
    (3, 3, 6, 0, 0, 0): "that is a GRU's three gates; an LSTM has four.",
    (8, 8, 16, 0, 0, 0): "that counts both directions; the function is for one direction of one "
    "layer.",
    (4, 0, 0, 8, 4, 0): "d_in and hidden are swapped: W_ih is (4·hidden) × d_in, W_hh is "
    "(4·hidden) × hidden and the biases are 4·hidden long.",
    (4, 4, 0, 8, 0, 0): "the biases are 4·hidden long each, one entry per gate unit; you sized "
    "them by d_in.",
}
_LSTM_PARTS = (
    "W_ih, four gates' (hidden × d_in), is 4·hidden·d_in",
    "W_hh, four gates' (hidden × hidden), is 4·hidden²",
    "the biases b_ih and b_hh are 4·hidden each, 8·hidden",
)


def _lstm_mistake(counts: list[float]) -> str | None:
    """Which part of the count is wrong, if the counts follow a formula in the parts: its
    coefficients on ``_TERMS`` (whole or half numbers) give every count exactly."""
    solution = np.linalg.lstsq(_TERMS, np.array(counts), rcond=None)[0]
    fitted = tuple(float(x) for x in np.round(solution * 2) / 2)
    if list(_TERMS @ fitted) != counts:
        return None
    if fitted in _LSTM_MISCOUNTS or not any(fitted[:5]):
        return _LSTM_MISCOUNTS.get(fitted) or _constant(fitted[5], (), "d_in and hidden")
    gates = fitted[0]  # as many gates as W_ih counts (hidden × d_in each)
    if fitted == (gates, gates, 2 * gates, 0, 0, 0):
        return f"that counts {gates:g} gates; an LSTM has four: multiply by 4."
    parts = [
        what for c, r, what in zip(fitted, _LSTM_RIGHT[:3], _LSTM_PARTS, strict=False) if c != r
    ]
    if any(fitted[3:5]):
        parts.append(
            "no part grows with d_in alone or with d_in² (d_in and hidden swapped somewhere?)"
        )
    if fitted[5]:
        parts.append(f"no part has a fixed size (your formula adds {fitted[5]:g})")
    written = " + ".join(
        f"{'' if c == 1 else f'{c:g}·'}{name}" if name else f"{c:g}"
        for c, name in zip(fitted, _TERM_NAMES, strict=True)
        if c
    )
    return f"your count is {written}, but " + "; ".join(parts) + "."


# 1.6 (lab L1.C) The memory of the score matrix -------------------------------------------------

# (n, heads, layers, batch): the table's rows, a whole model, and a small mixed case.
_BYTE_CASES = [(512, 1, 1, 1), (128_000, 1, 1, 1), (2048, 8, 6, 3), (10, 2, 3, 5)]
_UNITS = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "kB": 1e3, "MB": 1e6, "GB": 1e9}
_PER_ENTRY = {  # bytes per entry that a typical slip gives, and what it is
    1: "that is the number of entries; each float32 entry takes 4 bytes",
    2: "2 bytes per entry is float16; the scores are float32, 4 bytes",
    8: "8 bytes per entry is float64; the scores are float32, 4 bytes",
    32: "that is in bits (32 per float32 entry); return bytes, 4 per entry",
    **{4 / s: f"that is in {u}; return bytes (the notebook converts)" for u, s in _UNITS.items()},
}
_OWN = {  # the factors besides n², and what leaving one out means
    "heads": "the heads were ignored: every head computes its own n × n matrix",
    "layers": "the layers were ignored: every layer computes its own score matrices",
    "batch": "the batch was ignored: every sequence in the batch has its own matrices",
}


@exercise("1.6", "Lab L1.C: the memory of the score matrix")
def score_memory(attention_bytes) -> str:
    """Start with one head of one layer for one sequence: how many scores does it hold, and
    how many bytes does a float32 take?

    One such matrix holds n × n scores of 4 bytes each. Every head, every layer and every
    sequence in the batch has its own matrix.

    `4 * n * n * heads * layers * batch`.
    """
    usage = (
        "`attention_bytes` must take heads, layers and batch as keyword arguments with "
        "default 1: def attention_bytes(n, heads=1, layers=1, batch=1)."
    )
    expect_parameters(attention_bytes, usage, 1, heads=1, layers=1, batch=1)
    expect_parameters(attention_bytes, usage, 1)
    said = [f"attention_bytes({n}, heads={h}, layers={x}, batch={b})" for n, h, x, b in _BYTE_CASES]
    got = [_bytes(attention_bytes, *case) for case in _BYTE_CASES]
    right = [4 * math.prod(case) * case[0] for case in _BYTE_CASES]
    formula = "4·n²·heads·layers·batch"
    _judge_counts(said, got, right, formula, lambda: _byte_mistake(attention_bytes))
    return (
        "4·n² bytes per head, layer and sequence: 1 MiB for one head at 512 tokens, 24 GiB for "
        "the base model's 8 heads × 6 layers on 32 sequences of 2,048 tokens."
    )


def _bytes(fn, n, heads=1, layers=1, batch=1) -> float:
    """The learner's count; with the default sizes, called as ``attention_bytes(n)``."""
    sizes = {"heads": heads, "layers": layers, "batch": batch}
    sizes = {} if (heads, layers, batch) == (1, 1, 1) else sizes
    return _count(fn, "attention_bytes", "n heads layers batch", n, **sizes)


def _byte_mistake(fn) -> str | None:
    """Which factor of 4·n²·heads·layers·batch the learner's formula gets wrong, from how its
    result grows with each size in turn; None unless it is such a product."""
    fitted = _product_fit(lambda *s: _bytes(fn, *s), (6, 1, 1, 1), (2, 2, 3, 5), _BYTE_CASES)
    if fitted is None:
        return None
    per_entry, (p_n, *powers) = fitted
    if constant := _constant(per_entry, (p_n, *powers), "n, heads, layers and batch"):
        return constant
    parts = [m for v, m in _PER_ENTRY.items() if math.isclose(per_entry, v, rel_tol=1e-9)]
    if not parts and not math.isclose(per_entry, 4, rel_tol=1e-9):
        parts.append(f"{per_entry:g} bytes per entry; a float32 entry takes 4")
    if p_n != 2:
        power = "n² entries, not n" if p_n == 1 else f"n² entries, not n to the power {p_n}"
        parts.append(f"the score matrix is n × n: {power}")
    if not any(powers):
        parts.append(
            "heads, layers and batch were ignored: every head of every layer of every sequence "
            "holds its own n × n matrix"
        )
    for (name, why), p in zip(_OWN.items(), powers, strict=True):
        if p != 1 and any(powers):
            parts.append(why if p == 0 else f"{name} appears to the power {p}; each "
                         "multiplies the count once")  # fmt: skip
    return "; ".join(parts) + "." if parts else None


# 1.7 (lab L1.C) The inconsistent last row ------------------------------------------------------


@multiple_choice("1.7", "Lab L1.C: the inconsistent row", correct="a")
def inconsistent_row(answer_1_7):
    """Check the row one number at a time: the entries from the tokens, then the bytes from
    the entries.

    Compute 128,000² × 4 bytes and compare it with 64 × 10⁹ (64 GB) and with 64 × 2³⁰
    (64 GiB). Which n gives exactly 64 GiB? Try n = 128 × 1,024.

    (a) 16,384,000,000 entries × 4 bytes = 65,536,000,000 B = 65.5 GB = 61.0 GiB. 64 is exact
    only for 131,072 = 128 × 1,024 tokens: 17,179,869,184 entries, 64 GiB.

    (b) The entry count is right: 128,000² = 16,384,000,000. The trouble is the memory figure.

    (c) float32 takes 4 bytes (float64 takes 8); with 8 bytes the row would say about 131 GB.

    (d) The table is for one head, one layer and one sequence, and so is its entry count; 8
    heads would take 8 times as much, about 524 GB, not ~64 GB.
    """
