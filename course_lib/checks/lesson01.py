"""Checks for lesson 1, the sequence problem (paper §1, §2 and §4, Table 1).

Answers here are counts (steps, hops, multiply-adds, parameters, bytes), so each check
compares exact integers and, when they differ, names the count the learner most likely
computed instead: words instead of hops, the two costs swapped, one bias vector instead of
PyTorch's two, entries instead of bytes, and so on.
"""

import inspect
import math

import numpy as np
import torch

from ._core import DIFFERENCE, MISTAKE, TYPE, Mismatch, call, exercise, multiple_choice
from ._mistakes import expect_returned
from ._tensors import one_number, whole_number

_WHOLE = "steps, hops, lengths and counts are whole numbers"  # why a fraction is wrong


def _flipped(got: list[float], right: list[float]) -> str | None:
    """A message if every count came out as minus the right one."""
    if all(g == -r != 0 for g, r in zip(got, right, strict=True)):
        return "the sign is flipped: a count is never negative."
    return None


def _fraction(counts: list[float]) -> str | None:
    """A message if a count is not a whole number (a / where a * belongs, most often)."""
    if any(not float(c).is_integer() for c in counts):
        return "a count is a whole number, so a division crept in: is there a / where a * belongs?"
    return None


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


@exercise("1.2", "Apply: steps and paths for 100 words")
def steps_and_paths(rnn_steps, rnn_path, attention_steps, attention_path) -> str:
    """Redo the worked example of section 3 with 100 words instead of 5: what grows with the
    number of words, and what does not?

    The RNN makes one step per word. Its path from word 1 to word n counts the arrows
    h1 → h2 → ... → hn, one fewer than the words.
    """
    got = {
        "rnn_steps": whole_number("rnn_steps", rnn_steps, _WHOLE),
        "rnn_path": whole_number("rnn_path", rnn_path, _WHOLE),
        "attention_steps": whole_number("attention_steps", attention_steps, _WHOLE),
        "attention_path": whole_number("attention_path", attention_path, _WHOLE),
    }
    if got["rnn_steps"] == 1 and got["attention_steps"] in (99, 100):
        raise Mismatch(
            "the RNN and attention answers are swapped: the RNN is the one that takes a step "
            "per word.",
            MISTAKE,
        )
    if 4 in (got["rnn_path"], got["rnn_steps"]) or got["rnn_steps"] == 5:
        raise Mismatch(
            "5 steps and 4 hops were the worked example's 5-word sentence; this one has 100 words.",
            MISTAKE,
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
        101: "h0 is the initial state, given rather than computed: the 100 words make 100 steps, "
        "h1 to h100.",
        1: "an RNN cannot compute h_t before h_{t-1}: one step per word, one after another.",
        0: "an RNN cannot compute h_t before h_{t-1}: one step per word, one after another.",
    }
    if steps != 100:
        why = wrong_steps.get(steps)
        raise Mismatch(
            why or f"`rnn_steps` = {steps}: the RNN makes one step per word, and there are 100.",
            MISTAKE if why else DIFFERENCE,
        )
    wrong_path = {
        1: "1 hop is attention's path. In an RNN, word 1 reaches word 100 only through the "
        "chain h1 → h2 → ... → h100.",
        0: "0 hops would mean word 1 and word 100 are the same position; in an RNN, word 1 "
        "reaches word 100 through the chain h1 → h2 → ... → h100.",
        101: "count the links between h1 and h100: one fewer than the words they span.",
        98: "count the links between h1 and h100: h1 → h2 is the first of them.",
    }
    if path not in (99, 100):
        why = wrong_path.get(path)
        raise Mismatch(
            why
            or f"`rnn_path` = {path}: follow the chain h1 → h2 → ... → h100 and count the arrows.",
            MISTAKE if why else DIFFERENCE,
        )


def _check_attention(steps: int, path: int) -> None:
    wrong_steps = {
        100: "that is the RNN's count, a step per word; self-attention computes every position "
        "at once, as one batch of matrix products: 1 step per layer.",
        99: "that is about the RNN's count; self-attention computes every position at once, as "
        "one batch of matrix products: 1 step per layer.",
        0: "the layer still runs once: it computes every position in that one step.",
        2: "the scores and the weighted sum are matrix products over all positions at once; "
        "Table 1 counts sequential operations per layer, and a layer is 1 step whatever n is.",
        6: "6 is the number of layers in the paper's encoder; the question is about one layer.",
    }
    if steps != 1:
        why = wrong_steps.get(steps)
        raise Mismatch(
            f"`attention_steps` = {steps}: "
            + (why or "self-attention computes every position at once: 1 step per layer."),
            MISTAKE if why else DIFFERENCE,
        )
    wrong_path = {
        0: "0 hops would mean the words are the same position; a word reading another is one hop.",
        2: "query → key → value is still one hop: word 100 reads word 1 directly, in one "
        "attention step.",
        99: "that is the RNN's path; word 100 attends to word 1 directly, in one hop.",
        100: "that is about the RNN's path; word 100 attends to word 1 directly, in one hop.",
    }
    if path != 1:
        why = wrong_path.get(path)
        raise Mismatch(
            f"`attention_path` = {path}: "
            + (why or "word 100 attends to word 1 directly, in one hop."),
            MISTAKE if why else DIFFERENCE,
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
    got = {
        name: [_cost(fn, name, n, d) for n, d in _COST_CASES]
        for name, fn in (("attention_cost", attention_cost), ("recurrent_cost", recurrent_cost))
    }
    right = {
        "attention_cost": [n * n * d for n, d in _COST_CASES],
        "recurrent_cost": [n * d * d for n, d in _COST_CASES],
    }
    if got["attention_cost"] == right["recurrent_cost"] != right["attention_cost"] and (
        got["recurrent_cost"] == right["attention_cost"]
    ):
        raise Mismatch(
            "the two costs are swapped: self-attention compares every pair of positions "
            "(n² pairs, d multiply-adds each), the recurrence multiplies a d × d matrix at "
            "each of n steps.",
            MISTAKE,
        )
    for name, form in (("attention_cost", "n²·d"), ("recurrent_cost", "n·d²")):
        if got[name] != right[name]:
            i = next(
                i for i, (g, r) in enumerate(zip(got[name], right[name], strict=True)) if g != r
            )
            (n, d), value, expected = _COST_CASES[i], got[name][i], right[name][i]
            said = f"`{name}({n}, {d})` should be {form} = {expected:,}; got {_num(value)}"
            why = (
                _flipped(got[name], right[name])
                or _cost_mistake(name, got[name])
                or _fraction(got[name])
            )
            if why:
                raise Mismatch(f"{said}: {why}", MISTAKE)
            whole_number(f"{name}({n}, {d})", value, _WHOLE)  # a fraction says so
            raise Mismatch(f"{said}.", DIFFERENCE)
    x = whole_number("crossover_n", crossover_n, _WHOLE)
    d = CROSSOVER_D
    wrong = {
        d * d: f"{d:,}² = d² is not a length: n²·d = n·d² when n = d.",
        32: f"√{d:,} = 32 is not it: n²·d = n·d² simplifies to n = d.",
        1: "divide both sides of n²·d = n·d² by n·d: n = d.",
        d + 1: f"at n = {d + 1:,} attention is already the dearer layer; the two are equal at "
        "n = d.",
        d - 1: f"at n = {d - 1:,} attention is still the cheaper layer; the two are equal at "
        "n = d.",
        512: "512 is the crossover for the base model's d = 512, the one section 4 drew; the "
        f"big model has d = {d:,}, and the costs cross at n = d.",
        2 * d: "n²·d = n·d² simplifies to n = d, not 2·d.",
    }
    if x != d:
        why = wrong.get(x)
        raise Mismatch(
            why or f"`crossover_n` = {x}: set n²·d = n·d² with d = {d:,} and solve for n.",
            MISTAKE if why else DIFFERENCE,
        )
    paragraph, document = ((n * n * d, n * d * d) for n in (200, 5_000))
    return (
        f"n²·d < n·d² exactly when n < d, so at d = {d:,} the costs cross at n = {d:,}. "
        f"A 200-token paragraph costs attention {paragraph[0]:,} multiply-adds against "
        f"{paragraph[1]:,} ({paragraph[1] / paragraph[0]:.2f}× cheaper); a 5,000-token document "
        f"{document[0]:,} against {document[1]:,} ({document[0] / document[1]:.2f}× dearer)."
    )


def _cost(fn, name, n, d) -> float:
    value = expect_returned(name, call(fn, n, d, during=f"with n = {n}, d = {d}"))
    return float(one_number(f"{name}({n}, {d})", value))


def _cost_mistake(name: str, values: list[int]) -> str | None:
    """Why the costs ``values`` (one per case of ``_COST_CASES``) are wrong, if the formula
    they follow is a typical slip or a product c·nᵃ·dᵇ whose parts can be named."""
    attention = name == "attention_cost"
    other = "recurrence, n·d²" if attention else "self-attention, n²·d"
    typical = [
        (
            lambda n, d: n * d * d if attention else n * n * d,
            f"that is the other layer's formula ({other}).",
        ),
        (lambda n, d: n * d, "n·d is one pass over the input; the cost has one more factor."),
        (lambda n, d: n * n * d * d, "n²·d² multiplies both costs together."),
        (lambda n, d: n * n * d + n * d * d, "n²·d + n·d² adds the two layers' costs."),
        (
            lambda n, d: n * (n - 1) * d,
            "a position also attends to itself: n² pairs, not n(n - 1).",
        ),
        (
            lambda n, d: (n - 1) * d * d,
            "the recurrence makes a step for every position: n steps, not n - 1.",
        ),
    ]
    for formula, message in typical:
        if all(
            math.isclose(v, formula(n, d)) for v, (n, d) in zip(values, _COST_CASES, strict=True)
        ):
            return message
    if all(math.isclose(v, values[0]) for v in values):
        return f"your function returns {_num(values[0])} whatever n and d are."
    fitted = _monomial(values)
    if fitted is None:
        return None
    c, a, b = fitted
    if (a, b) == (2, 0) and attention:
        return "n² counts the pairs, but each pair costs d multiply-adds."
    if (a, b) == (0, 2) and not attention:
        return "d² is the cost of one step; there are n of them."
    want = (2, 1) if attention else (1, 2)
    parts = []
    if a != want[0]:
        parts.append(
            "self-attention scores n² pairs of positions" if attention else "there are n steps"
        )
    if b != want[1]:
        parts.append(
            "each pair costs a d-long dot product, d multiply-adds"
            if attention
            else "each step multiplies a d × d matrix by a vector, d² multiply-adds"
        )
    if c == 2:
        parts.append("a multiply-add counts once, not as two operations")
    elif c == 0.5 and attention:
        parts.append("every ordered pair (i, j) counts, not half of them")
    elif c != 1:
        parts.append(f"there is no factor {c:g}")
    return (
        f"your function computes {_product(c, ('n', a), ('d', b))}, but " + "; ".join(parts) + "."
    )


def _num(x: float) -> str:
    """``1,280,000`` for a whole number, ``4.88281`` otherwise."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.6g}"


def _monomial(values: list[int]) -> tuple[float, int, int] | None:
    """``(c, a, b)`` if ``values`` are c·nᵃ·dᵇ at every case, with small a, b and a simple c."""
    for a in range(-1, 4):
        for b in range(-1, 4):
            for c in (1, 2, 0.5, 4, 3):
                guess = [c * float(n) ** a * float(d) ** b for n, d in _COST_CASES]
                if all(math.isclose(v, g) for v, g in zip(values, guess, strict=True)):
                    return c, a, b
    return None


def _product(c: float, *factors: tuple[str, int]) -> str:
    """``2·n²·d`` from ``(2, ("n", 2), ("d", 1))``; a power 0 leaves its factor out."""
    powers = {-1: "⁻¹", 1: "", 2: "²", 3: "³"}
    terms = [f"{x}{powers[p]}" for x, p in factors if p]
    if c != 1 or not terms:
        terms.insert(0, f"{c:g}")
    return "·".join(terms)


# 1.4 (lab L1.A) Token and sequence accuracy, first position excluded ---------------------------


@exercise("1.4", "Lab L1.A: token and sequence accuracy")
def accuracy(reversal_accuracy) -> str:
    """Which position is the decoder given rather than asked to predict? Only the positions
    it predicts are scored.

    Compare predicted and target at positions 2 to L. Token accuracy is the share of those
    comparisons that match; sequence accuracy the share of rows whose comparisons all match.

    `right = predicted[:, 1:] == target[:, 1:]`, then `right.float().mean()` and
    `right.all(dim=1).float().mean()`, each as a Python number with `.item()`.
    """
    predicted, target = _accuracy_case()
    result = call(
        reversal_accuracy,
        predicted.clone(),
        target.clone(),
        during="on a test batch",
        tip=_accuracy_tip,
    )
    expect_returned("reversal_accuracy", result)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise Mismatch(
            "`reversal_accuracy` should return a pair of numbers (token_accuracy, "
            f"sequence_accuracy); got {_what(result)}.",
            TYPE,
        )
    token, sequence = (
        float(one_number(name, x))
        for name, x in zip(("token_accuracy", "sequence_accuracy"), result, strict=True)
    )
    expected = _reference_accuracy(predicted, target)  # 17/20, 2/4
    if _same_pair((token, sequence), expected):
        rows, length = target.shape
        scored = rows * (length - 1)
        return (
            f"token accuracy {token:.4f} ({round(token * scored)} of {scored} scored tokens) "
            f"and sequence accuracy {sequence:.2f} ({round(sequence * rows)} of {rows}) on the "
            "test batch; position 1 is given, so it is not scored."
        )
    if min(token, sequence) < 0:
        raise Mismatch(
            f"got ({token:g}, {sequence:g}): a share of right answers is never negative; check "
            "the sign.",
            MISTAKE,
        )
    if max(token, sequence) > 1.0 + 1e-9:
        raise Mismatch(
            f"got ({token:g}, {sequence:g}): return fractions between 0 and 1, not percentages "
            "or counts (.mean(), not .sum()).",
            MISTAKE,
        )
    for candidate, message in _accuracy_mistakes(predicted, target):
        if _same_pair((token, sequence), candidate):
            raise Mismatch(message, MISTAKE)
    which = [
        f"{name} {value:.4f}, expected {want:.4f}"
        for name, value, want in (
            ("the token accuracy is", token, expected[0]),
            ("the sequence accuracy is", sequence, expected[1]),
        )
        if abs(value - want) >= 1e-6
    ]
    raise Mismatch(
        f"on the test batch (4 rows of 6 tokens, 20 scored), {' and '.join(which)}.",
        DIFFERENCE,
    )


def _what(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"a tensor of shape {tuple(x.shape)}"
    return type(x).__name__


def _accuracy_tip(error: Exception) -> str | None:
    """What a crash on the test batch most likely means."""
    text = str(error)
    if "must match the size of tensor" in text or "could not be broadcast" in text:
        return (
            "Tip: predicted and target were sliced differently; compare the same positions of "
            "both, predicted[:, 1:] == target[:, 1:]."
        )
    if "could not infer output dtype" in text:
        return "Tip: the matches are booleans, which have no mean: .float().mean()."
    if "Dimension out of range" in text or "out of bounds" in text:
        return "Tip: the batch is (B, L), dimensions 0 and 1; a sequence runs along dim=1."
    return None


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
    late = (predicted[:, 2:] == target[:, 2:]).double()  # positions 3..L
    inner = (predicted[:, 1:-1] == target[:, 1:-1]).double()  # positions 2..L-1

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
        (
            (late.mean().item(), rows(late)),
            "positions 3..L are scored: only position 1 is given, so compare predicted[:, 1:] "
            "with target[:, 1:].",
        ),
        (
            (inner.mean().item(), rows(inner)),
            "the last position is left out: score positions 2..L, predicted[:, 1:] (no end bound).",
        ),
        (
            (token, scored.all().double().item()),
            ".all() without dim asks whether every scored token of the whole batch is right; a "
            "sequence accuracy takes .all(dim=1), one answer per sequence, then the mean.",
        ),
        (
            (1 - token, rows(1 - scored)),
            "these are error rates: `!=` finds the wrong tokens; the accuracy counts the right "
            "ones, predicted[:, 1:] == target[:, 1:].",
        ),
    ]


# 1.5 (lab L1.B) The parameters of one LSTM layer -----------------------------------------------

# (d_in, hidden): the lab's layer first; enough others to tell every part of the count apart.
_LSTM_CASES = [(256, 128), (64, 128), (3, 5), (1, 1), (2, 7), (9, 4), (5, 11), (13, 3)]
# The parts a count can have, as (what it multiplies, its name in a formula).
_LSTM_TERMS = [
    (lambda d, h: h * d, "hidden·d_in"),
    (lambda d, h: h * h, "hidden²"),
    (lambda d, h: h, "hidden"),
    (lambda d, h: d, "d_in"),
    (lambda d, h: d * d, "d_in²"),
    (lambda d, h: 1, ""),
]
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
    counts = []
    for d_in, hidden in _LSTM_CASES:
        value = call(lstm_parameters, d_in, hidden, during=f"with d_in = {d_in}, hidden = {hidden}")
        value = expect_returned("lstm_parameters", value)
        counts.append(float(one_number(f"lstm_parameters({d_in}, {hidden})", value)))
    right = [_lstm_count(_LSTM_RIGHT, d, h) for d, h in _LSTM_CASES]
    if counts != right:
        i = next(i for i, (g, r) in enumerate(zip(counts, right, strict=True)) if g != r)
        (d_in, hidden), got, expected = _LSTM_CASES[i], counts[i], right[i]
        said = f"`lstm_parameters({d_in}, {hidden})` = {_num(got)}, not {expected:,}"
        why = _flipped(counts, right) or _fraction(counts) or _lstm_mistake(counts)
        if why:
            raise Mismatch(f"{said}: {why}", MISTAKE)
        raise Mismatch(f"{said}. One direction of one layer has {_LSTM_FORMULA}.", DIFFERENCE)
    return (
        "4·hidden·d_in + 4·hidden² + 8·hidden: 197,632 for one direction of the BiLSTM's first "
        "layer."
    )


def _lstm_count(coefficients, d_in: int, hidden: int) -> float:
    return sum(
        c * term(d_in, hidden) for c, (term, _) in zip(coefficients, _LSTM_TERMS, strict=True)
    )


def _lstm_fit(counts: list[float]) -> tuple[float, ...] | None:
    """The coefficients of ``counts`` on the parts of ``_LSTM_TERMS`` (whole or half numbers),
    if such a formula gives every count exactly; else None."""
    terms = np.array([[float(t(d, h)) for t, _ in _LSTM_TERMS] for d, h in _LSTM_CASES])
    solution = np.linalg.lstsq(terms, np.array(counts, dtype=float), rcond=None)[0]
    coefficients = tuple(float(x) for x in np.round(solution * 2) / 2)
    fits = all(
        _lstm_count(coefficients, d, h) == c for (d, h), c in zip(_LSTM_CASES, counts, strict=True)
    )
    return coefficients if fits else None


_LSTM_MISCOUNTS = {
    (4, 4, 4, 0, 0, 0): "one bias vector per gate: PyTorch's LSTM has two bias vectors per gate, "
    "b_ih and b_hh, so 8·hidden biases, not 4·hidden.",
    (4, 4, 0, 0, 0, 0): "the biases are missing: PyTorch adds b_ih and b_hh, 4·hidden each.",
    (4, 0, 8, 0, 0, 0): "the recurrent weights W_hh (4·hidden × hidden) are missing: each gate "
    "also reads h_{t-1}.",
    (4, 0, 4, 0, 0, 0): "the recurrent weights W_hh (4·hidden × hidden) and the second bias are "
    "missing: each gate also reads h_{t-1}, and PyTorch has b_ih and b_hh.",
    (0, 4, 8, 0, 0, 0): "the input weights W_ih (4·hidden × d_in) are missing: each gate also "
    "reads x_t.",
    (1, 1, 2, 0, 0, 0): "that is one gate; an LSTM has four gates (input, forget, cell, "
    "output): multiply by 4.",
    (1, 1, 1, 0, 0, 0): "that is one gate with one bias; an LSTM has four gates (multiply by 4), "
    "and PyTorch gives each two bias vectors.",
    (1, 1, 0, 0, 0, 0): "that is one gate without biases; an LSTM has four gates (multiply by "
    "4), and PyTorch gives each two bias vectors.",
    (3, 3, 6, 0, 0, 0): "that is a GRU's three gates; an LSTM has four.",
    (8, 8, 16, 0, 0, 0): "that counts both directions; the function is for one direction of one "
    "layer.",
    (4, 0, 0, 8, 4, 0): "d_in and hidden are swapped: W_ih is (4·hidden) × d_in, W_hh is "
    "(4·hidden) × hidden and the biases are 4·hidden long.",
    (4, 0, 0, 4, 4, 0): "d_in and hidden are swapped (W_ih is (4·hidden) × d_in, W_hh is "
    "(4·hidden) × hidden), and PyTorch has two bias vectors per gate.",
    (4, 4, 0, 8, 0, 0): "the biases are 4·hidden long each, one entry per gate unit; you sized "
    "them by d_in.",
    (4, 4, 0, 4, 0, 0): "the biases are 4·hidden long, one entry per gate unit (and PyTorch has "
    "two of them); you sized them by d_in.",
    (0, 4, 8, 0, 4, 0): "the input weights are (4·hidden) × d_in, not d_in × d_in.",
}


def _lstm_mistake(counts: list[float]) -> str | None:
    """Which part of the count is wrong, if the counts follow a formula in the parts."""
    fitted = _lstm_fit(counts)
    if fitted is None:
        return None
    named = _LSTM_MISCOUNTS.get(fitted)
    if named:
        return named
    written = " + ".join(
        f"{_coefficient(c)}{name}" if name else f"{c:g}"
        for c, (_, name) in zip(fitted, _LSTM_TERMS, strict=True)
        if c
    )
    if not any(fitted[:5]):
        return f"your function returns {fitted[5]:g} whatever d_in and hidden are."
    gates = fitted[0]  # as many gates as W_ih counts (hidden × d_in each)
    if fitted == (gates, gates, 2 * gates, 0, 0, 0):
        return f"that counts {gates:g} gates; an LSTM has four: multiply by 4."
    parts = []
    for c, right, what in (
        (fitted[0], 4, "W_ih, four gates' (hidden × d_in), is 4·hidden·d_in"),
        (fitted[1], 4, "W_hh, four gates' (hidden × hidden), is 4·hidden²"),
        (fitted[2], 8, "the biases b_ih and b_hh are 4·hidden each, 8·hidden"),
    ):
        if c != right:
            parts.append(what)
    if any(fitted[3:5]):
        parts.append(
            "no part grows with d_in alone or with d_in² (d_in and hidden swapped somewhere?)"
        )
    if fitted[5]:
        parts.append(f"no part has a fixed size (your formula adds {fitted[5]:g})")
    return f"your count is {written}, but " + "; ".join(parts) + "."


def _coefficient(c: float) -> str:
    return "" if c == 1 else f"{c:g}·"


# 1.6 (lab L1.C) The memory of the score matrix -------------------------------------------------

# (n, heads, layers, batch): the table's rows, a whole model, and cases that vary one size at
# a time from (6, 1, 1, 1), to tell which factor a wrong formula gets wrong.
_BYTE_CASES = [(512, 1, 1, 1), (128_000, 1, 1, 1), (2048, 8, 6, 3), (10, 2, 3, 5)]
_BYTE_BASE, _BYTE_STEPS = (6, 1, 1, 1), (2, 2, 3, 5)  # n ×2, heads 2, layers 3, batch 5


@exercise("1.6", "Lab L1.C: the memory of the score matrix")
def score_memory(attention_bytes) -> str:
    """Start with one head of one layer for one sequence: how many scores does it hold, and
    how many bytes does a float32 take?

    One such matrix holds n × n scores of 4 bytes each. Every head, every layer and every
    sequence in the batch has its own matrix.

    `4 * n * n * heads * layers * batch`.
    """
    if not callable(attention_bytes):
        raise Mismatch(f"expected a function; got {type(attention_bytes).__name__}", TYPE)
    try:
        inspect.signature(attention_bytes).bind(1, heads=1, layers=1, batch=1)
        inspect.signature(attention_bytes).bind(1)
    except (TypeError, ValueError):
        raise Mismatch(
            "`attention_bytes` must take heads, layers and batch as keyword arguments with "
            "default 1: def attention_bytes(n, heads=1, layers=1, batch=1).",
            MISTAKE,
        ) from None
    for case in _BYTE_CASES:
        n, heads, layers, batch = case
        got = _bytes(attention_bytes, *case)
        expected = 4 * n * n * heads * layers * batch
        if got == expected:
            continue
        called = f"attention_bytes({n}, heads={heads}, layers={layers}, batch={batch})"
        why = _flipped([got], [expected]) or _byte_mistake(attention_bytes)
        if why:
            raise Mismatch(f"`{called}` gave {_num(got)}: {why}", MISTAKE)
        raise Mismatch(
            f"`{called}` should be 4·n²·heads·layers·batch = {expected:,}; got {_num(got)}.",
            DIFFERENCE,
        )
    return (
        "4·n² bytes per head, layer and sequence: 1 MiB for one head at 512 tokens, 24 GiB for "
        "the base model's 8 heads × 6 layers on 32 sequences of 2,048 tokens."
    )


def _bytes(fn, n, heads, layers, batch) -> float:
    during = f"with n = {n}, heads = {heads}, layers = {layers}, batch = {batch}"
    sizes = {"heads": heads, "layers": layers, "batch": batch}
    if (heads, layers, batch) == (1, 1, 1):
        sizes = {}  # the defaults: called as attention_bytes(n)
    value = expect_returned("attention_bytes", call(fn, n, during=during, **sizes))
    return float(one_number(f"attention_bytes({n}, ...)", value))


_PER_ENTRY = {  # bytes per entry that a typical slip gives, and what it is
    1: "that is the number of entries; each float32 entry takes 4 bytes",
    2: "2 bytes per entry is float16; the scores are float32, 4 bytes",
    8: "8 bytes per entry is float64; the scores are float32, 4 bytes",
    32: "that is in bits (32 per float32 entry); return bytes, 4 per entry",
    0.5: "that divides the entries by 2; each float32 entry takes 4 bytes",
    4 / 2**10: "that is in KiB; return bytes (the notebook converts)",
    4 / 2**20: "that is in MiB; return bytes (the notebook converts)",
    4 / 2**30: "that is in GiB; return bytes (the notebook converts)",
    4 / 1e3: "that is in kB; return bytes (the notebook converts)",
    4 / 1e6: "that is in MB; return bytes (the notebook converts)",
    4 / 1e9: "that is in GB; return bytes (the notebook converts)",
}


def _byte_mistake(fn) -> str | None:
    """Which factor of 4·n²·heads·layers·batch the learner's formula gets wrong, from how its
    result grows with each size in turn; None unless it is such a product."""
    base = _bytes(fn, *_BYTE_BASE)
    powers = []
    for i, step in enumerate(_BYTE_STEPS):
        case = list(_BYTE_BASE)
        case[i] *= step
        moved = _bytes(fn, *case)
        if base <= 0 or moved <= 0:
            return None
        power = math.log(moved / base) / math.log(step)
        if abs(power - round(power)) > 1e-6:
            return None
        powers.append(round(power))
    per_entry = base / _BYTE_BASE[0] ** powers[0]
    p_n, p_heads, p_layers, p_batch = powers
    if not any(powers):
        return f"your function returns {_num(base)} whatever n, heads, layers and batch are."
    for n, heads, layers, batch in _BYTE_CASES:  # the product must give every case
        value = per_entry * n**p_n * heads**p_heads * layers**p_layers * batch**p_batch
        if not math.isclose(value, _bytes(fn, n, heads, layers, batch), rel_tol=1e-9):
            return None
    parts = []
    entry = next(
        (m for v, m in _PER_ENTRY.items() if math.isclose(per_entry, v, rel_tol=1e-9)), None
    )
    if entry:
        parts.append(entry)
    elif not math.isclose(per_entry, 4, rel_tol=1e-9):
        parts.append(f"{per_entry:g} bytes per entry; a float32 entry takes 4")
    if p_n == 1:
        parts.append("the score matrix is n × n: n² entries, not n")
    elif p_n != 2:
        parts.append(f"n appears to the power {p_n}; the score matrix is n × n, n² entries")
    ignored = [
        name for name, p in zip(("heads", "layers", "batch"), powers[1:], strict=True) if p == 0
    ]
    if len(ignored) == 3:
        parts.append(
            "heads, layers and batch were ignored: every head of every layer of every sequence "
            "holds its own n × n matrix"
        )
    else:
        own = {
            "heads": "the heads were ignored: every head computes its own n × n matrix",
            "layers": "the layers were ignored: every layer computes its own score matrices",
            "batch": "the batch was ignored: every sequence in the batch has its own matrices",
        }
        parts += [own[name] for name in ignored]
    for name, p in zip(("heads", "layers", "batch"), powers[1:], strict=True):
        if p not in (0, 1):
            parts.append(f"{name} appears to the power {p}; each multiplies the count once")
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
