"""The mutation harness (course_tools.mutation) on tiny synthetic cells and exercises.

No lesson runs here: ``make test-mutants`` runs the harness on the lessons themselves.
"""

import textwrap
from functools import partial

import numpy as np
import pytest
import torch
from torch import nn

from course_tools.grading.checking import isolated
from course_tools.mutation import allowlist, equivalence, outcomes, report
from course_tools.mutation.mutants import mutants, regions, sample


def cell(body: str, before: str = "x = 1\n") -> str:
    """A cell with ``body`` as its solution region, after a given line."""
    return f"{before}# BEGIN SOLUTION\n{textwrap.dedent(body).strip()}\n# END SOLUTION\n"


def ids(source: str) -> set[str]:
    return {m.id for m in mutants("0.1", source)}


# Operators -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("y = a @ b", "swap-operands: y = a @ b → y = b @ a"),
        ("y = a - b", "swap-operands: y = a - b → y = b - a"),
        ("y = a + b", "operator: y = a + b → y = a - b"),
        ("y = a * b", "operator: y = a * b → y = a / b"),
        ("y = a ** 2", "operator: y = a ** 2 → y = a * 2"),
        ("y = x / s", "drop-operand: y = x / s → y = x"),
        ("y = x * s", "drop-operand: y = x * s → y = s"),
        ("y = 3", "constant: y = 3 → y = 4"),
        ("y = 0.5 * a", "constant: y = 0.5 * a → y = 1.0 * a"),
        ("y = a.sum(dim=-1)", "keyword: y = a.sum(dim=-1) → y = a.sum(dim=0)"),
        ("y = a.sum(dim=-1)", "keyword: y = a.sum(dim=-1) → y = a.sum(dim=-2)"),
        (
            "y = a.var(unbiased=False)",
            "keyword: y = a.var(unbiased=False) → y = a.var(unbiased=True)",
        ),
        ("y = a.sum(keepdim=True)", "drop-keyword: y = a.sum(keepdim=True) → y = a.sum()"),
        ("y = np.sin(a)", "swap-function: y = np.sin(a) → y = np.cos(a)"),
        ("y = a.mean()", "swap-function: y = a.mean() → y = a.sum()"),
        ("y = torch.exp(a)", "drop-call: y = torch.exp(a) → y = a"),
        ("y = math.sqrt(d)", "drop-call: y = math.sqrt(d) → y = d"),
        ("y = torch.softmax(s, dim=-1)", "drop-call: y = torch.softmax(s, dim=-1) → y = s"),
        ("y = a[1:3]", "slice: y = a[1:3] → y = a[2:3]"),
        ("y = a[:j]", "slice: y = a[:j] → y = a[:j + 1]"),
        ("y = a[::2]", "slice: y = a[::2] → y = a[1::2]"),
        ("y = list(range(n))", "range: y = list(range(n)) → y = list(range(n - 1))"),
        ("y = list(range(n))", "range: y = list(range(n)) → y = list(range(1, n))"),
        ("y = a < b", "comparison: y = a < b → y = a <= b"),
        ("y = a == b", "comparison: y = a == b → y = a != b"),
        ("y = True", "boolean: y = True → y = False"),
        ("y = f(a, b)", "swap-arguments: y = f(a, b) → y = f(b, a)"),
        ("y = a.T @ b", "drop-transpose: y = a.T @ b → y = a @ b"),
        ("y = a.transpose(-2, -1)", "drop-transpose: y = a.transpose(-2, -1) → y = a"),
        (
            "y = s.masked_fill(~m, 0)",
            "drop-unary: y = s.masked_fill(~m, 0) → y = s.masked_fill(m, 0)",
        ),
        ("y = 1\nz = 2", "delete-statement: y = 1 → (deleted)"),
    ],
)
def test_each_operator_makes_its_variant(body, expected):
    assert expected in ids(cell(body))


def test_returns_are_negated_one_element_at_a_time():
    source = cell("return out, w", before="def f(out, w):\n")
    source = source.replace("return", "    return").replace("# END", "    # END")
    assert {
        "negate-return: return (out, w) → return (-out, w)",
        "negate-return: return (out, w) → return (out, -w)",
        "swap-elements: return (out, w) → return (w, out)",
    } <= ids(source)


def test_the_only_statement_of_a_block_is_not_deleted():
    source = "def f(x):\n    # BEGIN SOLUTION\n    return x + 1\n    # END SOLUTION\n"
    assert not any(i.startswith("delete-statement") for i in ids(source))
    # Nor the only one after a docstring: the function would be a stub, which is "not done".
    documented = source.replace("(x):\n", '(x):\n    """Doc."""\n')
    assert not any(i.startswith("delete-statement") for i in ids(documented))
    two = documented.replace("    return x + 1\n", "    y = x\n    return y + 1\n")
    assert "delete-statement: y = x → (deleted)" in ids(two)


def test_only_the_solution_regions_change():
    source = "a = 2 * 3\n# BEGIN SOLUTION\nb = 4 * 5\n# END SOLUTION\nc = 6 * 7\n"
    assert regions(source) == [(3, 3)]
    for m in mutants("0.1", source):
        lines = m.source.splitlines()
        assert lines[0] == "a = 2 * 3" and lines[-1] == "c = 6 * 7", m.id
        compile(m.source, "<variant>", "exec")
        assert m.source != source


def test_several_regions_in_one_cell():
    source = (
        "def f(n):\n    # BEGIN SOLUTION\n    return n * n\n    # END SOLUTION\n\n\n"
        "def g(n):\n    # BEGIN SOLUTION\n    return n - 1\n    # END SOLUTION\n"
    )
    found = ids(source)
    assert "drop-operand: return n * n → return n" in found
    assert "constant: return n - 1 → return n - 2" in found


def test_ids_do_not_depend_on_the_rest_of_the_cell_or_on_comments():
    plain = cell("y = a @ b / s")
    edited = "import math\n" + cell("y = a @ b / s  # scaled").replace("x = 1", "x = 2  # other")
    assert ids(plain) == ids(edited)


def test_identical_rewrites_of_identical_statements_are_numbered():
    found = ids(cell("y = a - b\ny = a - b"))
    assert "swap-operands: y = a - b → y = b - a" in found
    assert "swap-operands: y = a - b → y = b - a (2)" in found


def test_the_diff_shows_the_changed_line():
    source = cell("y = a @ b  # a comment")
    (swap,) = [m for m in mutants("0.1", source) if m.operator == "swap-operands"]
    assert swap.diff(source).splitlines()[1:] == ["-y = a @ b  # a comment", "+y = b @ a"]


def test_a_sample_is_fixed_and_keeps_its_members_when_others_are_added():
    few = mutants("0.1", cell("y = a @ b / s + 3"))
    more = mutants("0.1", cell("y = a @ b / s + 3\nz = torch.sin(y)"))
    picked = sample(few, 4)
    assert len(picked) == 4 and picked == sample(few, 4)
    chosen_from_more = {m.id for m in sample(more, len(more) - 1)}
    assert len({m.id for m in picked} - chosen_from_more) <= 1


# Equivalence -----------------------------------------------------------------------------------


def test_same_values():
    same = equivalence.same
    assert same(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
    assert not same(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.01]))
    assert not same(torch.ones(2), torch.ones(2, dtype=torch.float64))
    assert not same(torch.ones(2), torch.ones(1, 2))
    assert same(np.arange(3.0), np.arange(3.0))
    assert not same(2_097_151, 2_097_152)  # counts exactly, whatever the relative tolerance
    assert same(2, torch.tensor(2)) and same(0.4, np.float64(0.4))
    assert same({"a": (1, [2.0])}, {"a": (1, [2.0])})
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not same(nn.Linear(2, 2), nn.Linear(2, 2))  # a module cannot be compared
    layer = nn.Linear(2, 2)
    assert same(layer, layer, effects=True)  # ...but a module changed in place, by its state


def double(x):
    return x * 2


def plus_self(x):
    return x + x


def triple(x):
    return x * 3


def relu(x):
    return x.clamp(min=0)


def absolute(x):
    return x.abs()


def test_functions_are_compared_on_the_recorded_inputs_and_perturbed_copies():
    calls = [[((torch.tensor([1.0, 2.0]),), {})]]
    far = float("inf")
    assert equivalence.equivalent([double], [plus_self], calls, far) is True
    assert equivalence.equivalent([double], [triple], calls, far) is False
    # on positive inputs ReLU and abs agree: the perturbed copies tell them apart
    assert equivalence.equivalent([relu], [absolute], calls, far) is False
    assert equivalence.equivalent([3], [3], [[]], far) is True
    assert equivalence.equivalent([double], [double], calls, deadline=0) is None
    assert equivalence.equivalent([double], [double], [[]], far) is None  # never called


def test_the_recorder_keeps_copies_of_the_arguments():
    recorder = equivalence.Recorder()

    def scale_in_place(x):
        x *= 2
        return x

    wrapped = recorder.wrap(scale_in_place)
    wrapped(torch.ones(2))
    assert torch.equal(recorder.calls[0][0][0], torch.ones(2))
    assert wrapped.__wrapped__ is scale_in_place


def test_copies_keep_the_gradients_a_training_step_depends_on():
    layer = nn.Linear(2, 2)
    layer.weight.grad = torch.ones(2, 2)
    optimizer = torch.optim.SGD(layer.parameters(), lr=1.0)
    model, copied_optimizer = equivalence._copy((layer, optimizer))
    assert torch.equal(model.weight.grad, torch.ones(2, 2))
    assert copied_optimizer.param_groups[0]["params"][0] is model.weight  # still linked


# Classification and figures --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        ({"outcome": "broken", "status": "failed", "message": "NameError"}, "broken"),
        (
            {
                "status": "failed",
                "message": "checking this answer took over 4 s (an endless loop?)",
            },
            "timeout",
        ),
        (
            {"status": "failed", "message": "your code stopped the check before it finished"},
            "broken",
        ),
        (
            {"outcome": "checked", "status": "passed", "message": "", "equivalent": False},
            "accepted",
        ),
        (
            {"outcome": "checked", "status": "not done", "message": "", "equivalent": False},
            "not done",
        ),
        (
            {"outcome": "checked", "status": "failed", "message": "", "diagnosis": "mistake"},
            "rejected",
        ),
        (
            {"outcome": "checked", "status": "failed", "message": "", "diagnosis": "exception"},
            "crashed",
        ),
        ({"outcome": "checked", "status": "failed", "message": ""}, "rejected"),
    ],
)
def test_classify(raw, status):
    assert outcomes.classify(raw)["status"] == status


def variant(status, diagnosis=None, equivalent=False, exercise="0.1"):
    return {
        "exercise": exercise,
        "id": f"{status} {diagnosis} {equivalent}",
        "status": status,
        "diagnosis": diagnosis,
        "equivalent": equivalent,
        "message": "",
        "diff": "",
    }


def test_figures_leave_out_broken_and_equivalent_variants():
    found = [
        variant("broken", equivalent=None),
        variant("timeout", equivalent=None),
        variant("accepted", equivalent=True),  # a right answer, rightly accepted
        variant("rejected", "mistake", equivalent=True),  # a right answer rejected: listed apart
        variant("rejected", "mistake"),
        variant("rejected", "rule"),
        variant("rejected", "difference"),
        variant("crashed", "exception"),
        variant("accepted"),
    ]
    f = outcomes.figures(found)
    assert (f["variants"], f["broken"], f["timeout"], f["equivalent"]) == (9, 1, 1, 2)
    assert (f["checked"], f["rejected"], f["crashed"], f["accepted"]) == (5, 4, 1, 1)
    assert f["rejected_share"] == 4 / 5
    assert f["named_share"] == 2 / 3  # mistake and rule, of the three rejections not crashes
    assert f["diagnoses"] == {"difference": 1, "exception": 1, "mistake": 1, "rule": 1}
    assert f["equivalent_rejected"] == 1
    assert [v["id"] for v in report.survivors(found)] == ["accepted None False"]
    table = report.table(report.by_exercise(found), f)
    assert "80.0%" in table and "66.7%" in table and "overall" in table


def test_allow_list_entries_and_stale_ones(tmp_path):
    path = tmp_path / "allowed.toml"
    path.write_text(
        '[[allowed]]\nexercise = "3.4"\nvariant = "constant: a → b"\nreason = "same"\n'
        '[[allowed]]\nexercise = "3.4"\nvariant = "constant: gone → b"\nreason = "same"\n'
        '[[allowed]]\nexercise = "99.9"\nvariant = "x"\nreason = "no such exercise"\n',
        encoding="utf-8",
    )
    entries = allowlist.read(path)
    assert ("3.4", "constant: a → b") in allowlist.keys(entries)
    stale = allowlist.stale(entries, {"3.4": {"constant: a → b"}})
    assert [e.variant for e in stale] == ["constant: gone → b", "x"]
    path.write_text('[[allowed]]\nexercise = "3.4"\nvariant = "v"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="reason"):
        allowlist.read(path)
    assert allowlist.read(tmp_path / "missing.toml") == []


def test_the_shipped_allow_list_is_well_formed():
    for entry in allowlist.read(allowlist.DEFAULT):
        assert entry.reason.strip()


# A synthetic exercise, end to end ---------------------------------------------------------------

ANSWER = """\
def scale(x, factor):
    # BEGIN SOLUTION
    y = x * factor
    return y * 1
    # END SOLUTION
"""


def _synthetic_run() -> dict:
    """In a forked child (the IPython shell stays out of the test process): one exercise
    whose check calls ``scale`` twice, run with every variant of its answer cell."""
    from course_lib.checks._core import Mismatch, call, exercise
    from course_tools.mutation import runner
    from course_tools.mutation.lesson import AnswerCell
    from course_tools.mutation.session import Session

    @exercise("99.1", "Synthetic: scale")
    def verify(scale):
        """Multiply."""
        for x, factor in ((torch.tensor([1.0, -2.0]), 3.0), (torch.tensor([0.5]), 2.0)):
            got = call(scale, x, factor)
            if not torch.allclose(got, x * factor):
                raise Mismatch(f"scale({x.tolist()}, {factor}) should be {(x * factor).tolist()}")
        return "right"

    session = Session()
    session.run("import torch")
    answer = AnswerCell(verify, 1, ANSWER, ANSWER)
    results, problem = runner._exercise(session, answer, runner.variants(answer))
    return {"status": "passed", "message": "", "problem": problem, "results": results}


def test_a_synthetic_exercise_runs_each_variant_through_its_check():
    done = isolated(_synthetic_run, timeout=60)
    assert done.get("problem") is None, done
    by_id = {v["id"]: v for v in done["results"]}
    divided = by_id["operator: y = x * factor → y = x / factor"]
    assert (divided["status"], divided["equivalent"]) == ("rejected", False)
    assert "should be" in divided["message"]
    unchanged = by_id["drop-operand: return y * 1 → return y"]
    assert (unchanged["status"], unchanged["equivalent"]) == ("accepted", True)
    deleted = by_id["delete-statement: y = x * factor → (deleted)"]
    assert deleted["status"] in ("rejected", "crashed") and "NameError" in deleted["message"]
    assert by_id["negate-return: return y * 1 → return -(y * 1)"]["status"] == "rejected"
    assert not report.survivors(done["results"])


def _endless() -> dict:
    from course_lib.checks._core import exercise
    from course_tools.mutation import runner
    from course_tools.mutation.lesson import AnswerCell
    from course_tools.mutation.session import Session

    @exercise("99.2", "Synthetic: a loop")
    def verify(count):
        """Count."""
        return "right"

    source = "n = 0\n# BEGIN SOLUTION\nwhile n < 3:\n    n += 1\ncount = n\n# END SOLUTION\n"
    session = Session()
    answer = AnswerCell(verify, 1, source, source)
    runner.BASE_TIMEOUT = 1.0
    chosen = [m for m in runner.variants(answer) if m.id == "operator: n += 1 → n -= 1"]
    results, problem = runner._exercise(session, answer, chosen)
    return {"status": "passed", "message": "", "results": results}


def test_an_endless_loop_is_a_timeout():
    done = isolated(partial(_endless), timeout=60)
    assert [v["status"] for v in done["results"]] == ["timeout"]
