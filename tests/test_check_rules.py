"""What an answer may use: the rules each exercise declares, read the same way by the
notebook's check and by the grader, and stated in every prompt."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from course_lib.checks import EXERCISES, FAILED, PASSED, Exercise
from course_lib.checks._core import RULE, Mismatch
from course_lib.checks._rules import Rules, course_lib_uses, written_uses
from course_lib.masks import causal_mask
from course_lib.model import count_parameters
from course_tools import prompts, sources

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.rules  # the course_lib rule stays on in this module


def learners(source: str, **names):
    """The function defined by ``source`` as if in a notebook cell (module ``__main__``)."""
    space = {"__name__": "__main__", "torch": torch, "np": np, "math": math, **names}
    exec(source, space)
    return next(
        v
        for k, v in space.items()
        if callable(v) and getattr(v, "__module__", "") == "__main__" and k not in names
    )


def broken(rules: Rules, answer, name: str = "answer", sources=()) -> str:
    return rules.broken([answer], [name], list(sources))[0]


# Loops ---------------------------------------------------------------------------------------

LOOPED = {
    "for": "def f(n):\n    out = []\n    for i in range(n):\n        out.append(i)\n    return out",
    "while": "def f(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i",
    "comprehension": "def f(n):\n    return [i * i for i in range(n)]",
    "generator": "def f(n):\n    return sum(i for i in range(n))",
    "in a helper": "def helper(n):\n    return [0 for _ in range(n)]\n\ndef f(n):\n    return helper(n)",
    "under a library's decorator": "@torch.no_grad()\ndef f(n):\n    return [i for i in range(n)]",
}


@pytest.mark.parametrize("kind", LOOPED)
def test_a_loop_anywhere_in_the_learners_code_breaks_a_no_loop_rule(kind):
    answer = learners(LOOPED[kind])
    assert "Python loop" in broken(Rules(loops=False), answer)
    assert broken(Rules(), answer) == ""  # loops are allowed by default


def test_vectorised_code_and_library_loops_are_not_loops():
    answer = learners("def f(n):\n    return torch.arange(n)[:, None] * torch.ones(n)")
    assert broken(Rules(loops=False), answer) == ""
    assert broken(Rules(loops=False), torch.cumsum) == ""  # not the learner's code


# Functions ruled out -------------------------------------------------------------------------

LAYER_NORM = Rules(forbidden=("torch.nn.functional.layer_norm", "torch.nn.LayerNorm"))


@pytest.mark.parametrize(
    "source, names",
    [
        ("def f(x):\n    return F.layer_norm(x, x.shape[-1:])", {"F": F}),
        ("def f(x):\n    return torch.nn.functional.layer_norm(x, x.shape[-1:])", {}),
        ("def f(x):\n    return ln(x, x.shape[-1:])", {"ln": F.layer_norm}),
        ("def f(x):\n    return nn.LayerNorm(x.shape[-1])(x)", {"nn": nn}),
        (
            "def g(x):\n    return F.layer_norm(x, x.shape[-1:])\n\ndef f(x):\n    return g(x)",
            {"F": F},
        ),
        (
            "def f(x):\n    from torch.nn import functional as G\n    return G.layer_norm(x, (2,))",
            {},
        ),
        (
            "def f(x):\n    import torch.nn.functional\n    return torch.nn.functional.layer_norm(x, (2,))",
            {},
        ),
    ],
)
def test_a_ruled_out_function_is_found_however_it_is_reached(source, names):
    message = broken(LAYER_NORM, learners(source, **names))
    assert "rules out" in message and "layer" in message.lower()


def test_other_functions_of_the_same_library_are_fine():
    answer = learners("def f(x):\n    return (x - x.mean(-1, keepdim=True)) / x.std(-1)")
    assert broken(LAYER_NORM, answer) == ""


# course_lib's reference code -------------------------------------------------------------------


def test_course_lib_is_refused_unless_declared():
    answer = learners("def f(T):\n    return causal_mask(T)", causal_mask=causal_mask)
    assert "uses course_lib's `causal_mask`" in broken(Rules(), answer)
    assert broken(Rules(uses=("course_lib.masks.causal_mask",)), answer) == ""
    counted = learners(
        "def f(m):\n    return count_parameters(m)", count_parameters=count_parameters
    )
    assert broken(Rules(uses=("course_lib.model.count_parameters",)), counted) == ""  # re-export


def test_a_value_answer_is_judged_by_the_cell_that_made_it():
    cells = [
        "from course_lib.model import count_parameters\nfrom course_lib.layers import LayerNorm",
        "total = 2 * 512",
        "total = count_parameters(LayerNorm(512))",  # the cell run last wins
    ]
    assert course_lib_uses([1024], ["total"], cells) == {
        "course_lib.parameters.count_parameters",  # under its defining module
        "course_lib.layers.LayerNorm",
    }
    assert course_lib_uses([1024], ["total"], cells[:2]) == set()


def _wrong(f):
    raise Mismatch("softmax over the wrong axis?", "mistake")


def test_exercise_run_refuses_a_rule_breaking_answer_with_diagnosis_rule():
    exercise = Exercise("0.1", "t", ("f",), lambda f: "right", ("hint",), rules=Rules(loops=False))
    result = exercise.run(learners(LOOPED["comprehension"]), sources=[])
    assert (result.status, result.diagnosis) == (FAILED, RULE)
    assert result.message.endswith("Apart from that, your answer passes the check.")
    wrong = Exercise("0.1", "t", ("f",), _wrong, ("hint",), rules=Rules(loops=False))
    message = wrong.run(learners(LOOPED["comprehension"]), sources=[]).message
    assert message.endswith("Apart from that, the check says: softmax over the wrong axis?")
    assert exercise.run(learners("def f(n):\n    return n"), sources=[]).status == PASSED


def test_the_notebook_and_the_grader_read_the_same_declaration():
    """7.11 may use the masks; 6.6 may not call F.layer_norm; 5.5 may not loop."""
    assert "course_lib.masks.padding_mask" in EXERCISES["7.11"].rules.uses
    assert "torch.nn.functional.layer_norm" in EXERCISES["6.6"].rules.forbidden
    assert EXERCISES["5.5"].rules.loops is False


# Keyword arguments an exercise asks to have written out -----------------------------------------


def test_a_value_made_with_a_written_out_keyword_is_refused():
    rules = Rules(written_out=("label_smoothing",))
    made = ["import torch.nn.functional as F", "loss = F.cross_entropy(x, y, label_smoothing=0.1)"]
    message = broken(rules, 0.5, "loss", made)
    assert "`loss` is computed with `label_smoothing=`" in message and "written out" in message
    assert broken(rules, 0.5, "loss", ["loss = -(target * log_p).sum()"]) == ""
    assert broken(Rules(), 0.5, "loss", made) == ""  # no keyword ruled out by default
    assert rules.describe().endswith("; not `label_smoothing=`.")


def test_only_the_statements_that_make_the_value_count():
    rules = Rules(written_out=("label_smoothing",))
    both = [
        "import torch.nn.functional as F",
        "plain = F.cross_entropy(x, y)\nsmoothed = F.cross_entropy(x, y, label_smoothing=0.1)",
    ]
    assert broken(rules, 0.5, "plain", both) == ""  # its neighbour's keyword is not its own
    assert "`smoothed` is computed with" in broken(rules, 0.5, "smoothed", both)
    compared = [
        "smoothed = -(t * log_p).sum(-1).mean()\nok = F.cross_entropy(x, y, label_smoothing=0.1)"
    ]
    assert broken(rules, 0.5, "smoothed", compared) == ""  # a comparison beside it is fine
    earlier = ["loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)", "smoothed = loss_fn(x, y)"]
    assert "`smoothed` is computed with" in broken(rules, 0.5, "smoothed", earlier)
    off = ["smoothed = F.cross_entropy(x, y, label_smoothing=0.0)"]
    assert broken(rules, 0.5, "smoothed", off) == ""  # 0 turns it off


# What the prompts say --------------------------------------------------------------------------


def test_describe_states_each_rule():
    assert Rules().describe() == "*What you may use:* anything but `course_lib`'s reference code."
    text = Rules(
        uses=("course_lib.masks.padding_mask", "course_lib.data.PAD_ID"),
        forbidden=("torch.nn.functional.layer_norm",),
        loops=False,
    ).describe()
    assert "only `padding_mask` and `PAD_ID`" in text
    assert "not `F.layer_norm`" in text and "no Python loop" in text


@pytest.mark.parametrize(
    "source", sorted((ROOT / "solutions").glob("[0-9]*.py")), ids=lambda p: p.stem
)
def test_every_prompt_states_its_exercises_rules(source):
    assert prompts.drift(source) == []


def test_every_code_exercise_has_a_prompt():
    found = set()
    for source in sorted((ROOT / "solutions").glob("[0-9]*.py")):
        found |= set(prompts._prompt_cells(sources.read(source)))
    assert found == {i for i, e in EXERCISES.items() if e.kind == "code"}


# One verdict: the notebook's check and the grader's agree -------------------------------------

IMPORTS = """\
from course_lib.attention import MultiHeadAttention
from course_lib.layers import PositionwiseFeedForward
from course_lib.model import EncoderLayer, TransformerConfig, count_parameters"""

# Answers that count course_lib's own modules instead of writing the formula, as the lessons'
# narrative cells do: the notebook's check must refuse them as the grader does.
ON_COURSE_LIB = {
    "4.9": "def mha_parameter_count(d_model, n_heads):\n"
    "    return count_parameters(MultiHeadAttention(d_model, n_heads))['total']",
    "6.3": "def ffn_parameters(d_model, d_ff, bias=True):\n"
    "    return count_parameters(PositionwiseFeedForward(d_model, d_ff, bias=bias))['total']",
    "6.5": "def encoder_block_parameters(d_model, n_heads, d_ff):\n"
    "    return count_parameters(EncoderLayer(d_model, n_heads, d_ff))['total']",
}


@pytest.mark.parametrize("exercise_id", ON_COURSE_LIB)
def test_an_answer_built_on_course_lib_gets_the_graders_verdict_in_the_notebook(
    exercise_id, tmp_path
):
    import json

    import cloudpickle

    from course_lib import attention, layers, model
    from course_tools.grading.checking import Link, check_one
    from course_tools.grading.inside import ANSWERS

    exercise = EXERCISES[exercise_id]
    cells = [IMPORTS, ON_COURSE_LIB[exercise_id]]
    space = {**vars(attention), **vars(layers), **vars(model)}
    answer = learners(cells[1], **{k: v for k, v in space.items() if not k.startswith("_")})
    in_notebook = exercise.run(answer, sources=cells)
    (tmp_path / "answer.pickle").write_bytes(cloudpickle.dumps(answer))  # as the export writes
    exported = {exercise.names[0]: {"file": "answer.pickle"}}
    (tmp_path / ANSWERS).write_text(json.dumps(exported), encoding="utf-8")
    with Link(tmp_path, sandboxed=False) as link:  # the answer's code stays in the server
        at_grading = check_one(exercise, link.answers(exercise.names), cells)
    assert (in_notebook.status, in_notebook.diagnosis) == (FAILED, RULE)
    assert (at_grading["status"], at_grading["message"]) == (FAILED, in_notebook.message)
    assert at_grading["uses"] == list(in_notebook.uses) != []


def test_a_value_built_on_course_lib_is_refused_from_its_cell():
    """4.2's answers are values: the rule reads the cell that made them."""
    cells = [
        IMPORTS,
        "total_weights = 4 * 512 * 512\n"
        "total_with_bias = count_parameters(MultiHeadAttention(512, 8))['total']",
    ]
    result = EXERCISES["4.2"].run(1_048_576, 1_050_624, sources=cells)
    assert (result.status, result.diagnosis) == (FAILED, RULE)
    assert "`MultiHeadAttention` and `count_parameters`" in result.message
    assert EXERCISES["4.2"].run(1_048_576, 1_050_624, sources=cells[:1]).status == PASSED


# What does not count as using course_lib ------------------------------------------------------


def test_an_attribute_or_a_local_variable_named_like_course_lib_is_not_a_use():
    from course_lib.training import train

    source = (
        "def step(model, T):\n"
        "    model.train()  # the module's method, not course_lib's train\n"
        "    causal_mask = torch.ones(T, T).tril()  # a local variable\n"
        "    return causal_mask"
    )
    answer = learners(source, train=train, causal_mask=causal_mask)
    assert broken(Rules(), answer) == ""


def test_an_allowed_name_may_be_imported_in_any_form():
    rules = Rules(uses=("course_lib.masks.padding_mask",))
    inside = learners(
        "def f(t):\n    from course_lib.masks import padding_mask\n    return padding_mask(t, 0)"
    )
    assert broken(rules, inside) == ""
    aliased = learners(
        "def f(t):\n    import course_lib.masks as M\n    return M.padding_mask(t, 0)"
    )
    assert broken(rules, aliased) == ""
    other_inside = "def f(t):\n    from course_lib import masks\n    return masks.causal_mask(4)"
    assert "`causal_mask`" in broken(rules, learners(other_inside))
    from course_lib import masks

    through_module = learners("def f(t):\n    return masks.padding_mask(t, 0)", masks=masks)
    assert broken(rules, through_module) == ""
    other = learners("def f(t):\n    return masks.causal_mask(3)", masks=masks)
    assert "`causal_mask`" in broken(rules, other)
    assert "use only `padding_mask` from it" in broken(rules, other)


def test_the_grader_reads_in_the_cells_what_a_def_calls_of_course_lib():
    """At grading the sandbox reports what an answer's code uses; the grader also reads the
    ``def`` in the cells itself, so an answer that forges the first is still flagged."""
    cells = [
        IMPORTS,
        "import course_lib.attention as A\n\n"
        "def attention(q, k, v, mask=None):\n    return A.scaled_dot_product_attention(q, k, v, mask)\n\n"
        "shown = A.scaled_dot_product_attention",
        "def make_causal_mask(T):\n    return torch.ones(T, T).tril().bool()",
        "from course_lib.masks import padding_mask as make_padding_mask",
    ]
    assert written_uses(["attention"], cells) == {
        "course_lib.attention.scaled_dot_product_attention"
    }
    assert written_uses(["make_causal_mask", "absent"], cells) == set()
    assert written_uses(["make_padding_mask"], cells) == {"course_lib.masks.padding_mask"}
    why, uses = EXERCISES["3.4"].rules.refused(written_uses(["attention"], cells))
    assert "uses course_lib's `scaled_dot_product_attention`" in why and uses
