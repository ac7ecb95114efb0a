"""Tests of the exercise-check machinery: ``course_lib/checks/__init__.py``, ``_core.py``, ``_tensors.py``.

The lesson-specific checks are tested in ``test_checks_lesson03.py``.
"""

import re
import sys
import warnings
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import course_lib.checks as checks
from course_lib.checks import (
    EXERCISES,
    FAILED,
    MIME_TYPE,
    NOT_DONE,
    PASSED,
    Exercise,
    Hint,
    Result,
    _core,
    check,
    exercises,
    hint,
)
from course_lib.checks._core import (
    Mismatch,
    NotDone,
    call,
    declared,
    describe_error,
    exercise,
    multiple_choice,
)
from course_lib.checks._tensors import as_tensor, diagnose, difference

THIS_FILE = "test_checks.py"


@pytest.fixture(autouse=True)
def _fresh_hints(monkeypatch):
    """Every test starts with no hint shown, whatever ran before it."""
    monkeypatch.setattr(checks, "_hints_shown", {})


def _divides_by_zero(*args):
    return 1 / 0


ZERO_LINE = _divides_by_zero.__code__.co_firstlineno + 1  # the line of `1 / 0`


def _stub(*args):
    raise NotImplementedError()


# Result: a symbol and a word for each status, in every format ------------------------------

LOOKS = [(PASSED, "✓", "Passed"), (FAILED, "✗", "Not yet"), (NOT_DONE, "…", "Not done yet")]


@pytest.mark.parametrize("status, symbol, word", LOOKS)
def test_result_shows_a_symbol_and_a_word_in_every_format(status, symbol, word):
    result = Result("3.2", status, "got <b> & 2\nlines")
    assert result.passed is (status == PASSED)
    assert str(result) == f"{symbol} {word} (exercise 3.2): got <b> & 2\nlines"
    assert repr(result) == str(result)
    page = result._repr_html_()
    assert f"{symbol} {word}</strong>" in page
    assert "got &lt;b&gt; &amp; 2<br>lines" in page  # the message is escaped, not injected
    bundle = result._repr_mimebundle_()
    assert bundle["text/plain"] == str(result)
    assert bundle["text/html"] == page
    assert bundle[MIME_TYPE] == {"exercise": "3.2", "status": status}


def test_statuses_differ_without_their_colours():
    """Strip every style attribute: the three boxes must still read differently."""
    pages = [re.sub(r'style="[^"]*"', "", Result("3.1", s, "m")._repr_html_()) for s, *_ in LOOKS]
    assert len(set(pages)) == 3
    assert len({str(Result("3.1", s, "m")).split(" (")[0] for s, *_ in LOOKS}) == 3


# check() never raises ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "exercise_id, listed",
    [
        ("3.9", "3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7, 3.8."),
        ("99.1", ", ".join(EXERCISES) + "."),  # unknown lesson: lists them all
        ("", ", ".join(EXERCISES) + "."),
    ],
)
def test_unknown_exercise_is_a_failed_result_that_lists_the_exercises(exercise_id, listed):
    result = check(exercise_id, "b")
    assert result.status == FAILED
    assert f"there is no exercise {exercise_id!r}" in result.message
    assert listed in result.message


@dataclass
class _Found:
    name: str


def test_a_repeated_exercise_id_among_declared_exercises_is_refused(monkeypatch):
    name = "course_lib.checks.lesson99"
    monkeypatch.setitem(sys.modules, name, type(checks)(name))
    monkeypatch.setitem(_core._DECLARED, name, {"3.1": ("recall", EXERCISES["3.1"])})
    monkeypatch.setattr(
        checks.pkgutil, "iter_modules", lambda path: [_Found("lesson03"), _Found("lesson99")]
    )
    with pytest.raises(ValueError, match="exercise id '3.1' is defined twice"):
        checks._collect()


def test_exercise_id_may_be_a_number():
    assert check(3.1, "c").passed


@pytest.mark.parametrize("answers", [(), ([0.67, 0.33],), ([0.67, 0.33], 4.34, 1.0)])
def test_wrong_number_of_answers_says_what_to_write(answers):
    result = check("3.2", *answers)
    assert result.status == FAILED
    assert f"takes 2 answer(s), apply_weights, apply_output; got {len(answers)}." in result.message
    assert 'Write: check("3.2", apply_weights, apply_output)' in result.message


@pytest.mark.parametrize("exercise_id", ["3.4", "3.6", "3.7", "3.8"])
def test_a_learner_function_that_crashes_is_named_with_its_error_and_line(exercise_id):
    result = check(exercise_id, _divides_by_zero)
    assert result.status == FAILED
    assert "your function raised ZeroDivisionError: division by zero" in result.message
    assert f"(line {ZERO_LINE} of {THIS_FILE})" in result.message


@pytest.mark.parametrize("exercise_id", ["3.4", "3.6", "3.7", "3.8"])
def test_a_learner_function_still_raising_not_implemented_is_not_done(exercise_id):
    result = check(exercise_id, _stub)
    assert result.status == NOT_DONE
    assert f"defines `{EXERCISES[exercise_id].names[0]}`" in result.message


def _docstring_only(*args):
    """What nbgrader leaves of a function: its docstring, and a comment where the code was."""
    # YOUR CODE HERE


def _passes(*args):
    pass


@pytest.mark.parametrize("exercise_id", ["1.4", "3.4", "4.4", "5.5", "6.6", "7.11", "8.2"])
@pytest.mark.parametrize("empty", [_docstring_only, _passes, lambda *args: None])
def test_a_learner_function_with_no_code_is_not_done(exercise_id, empty):
    answers = [empty] * len(EXERCISES[exercise_id].names)
    result = check(exercise_id, *answers)
    assert result.status == NOT_DONE
    assert f"defines `{EXERCISES[exercise_id].names[0]}`" in result.message


def test_call_finds_a_function_with_no_code_not_done_but_calls_one_that_returns_none():
    with pytest.raises(NotDone):
        call(_docstring_only, 1)
    assert call(lambda x: print(end=""), 1) is None  # it does something: its result is checked


def test_require_is_silent_on_a_pass_and_raises_the_checks_message_otherwise():
    assert checks.require("3.1", "c") is None
    with pytest.raises(AssertionError) as failed:
        checks.require("3.1", "a")
    assert isinstance(failed.value, checks.CheckFailed)
    assert failed.value.result == check("3.1", "a")
    assert str(failed.value) == str(check("3.1", "a")) and failed.value.diagnosis == "mistake"
    with pytest.raises(checks.CheckFailed, match=r"^… Not done yet \(exercise 3.4\)"):
        checks.require("3.4", _docstring_only)
    with pytest.raises(checks.CheckFailed, match="there is no exercise '3.99'"):
        checks.require("3.99", 1)


def test_a_check_shows_no_warning_of_the_code_it_calls(recwarn):
    def warns(*args):
        warnings.warn("a library's warning", UserWarning, stacklevel=1)
        return _stub()

    assert check("3.4", warns).status == NOT_DONE
    with pytest.raises(checks.CheckFailed):
        checks.require("3.4", warns)
    assert len(recwarn) == 0  # nbgrader scores a test cell that writes to stderr 0
    warnings.warn("after the check", UserWarning, stacklevel=1)
    assert len(recwarn) == 1  # the learner's own warnings are shown as before


def test_none_answers_are_not_done_and_only_the_unset_names_are_listed():
    result = check("3.2", [0.67, 0.33], None)
    assert result.status == NOT_DONE
    assert "`apply_output`" in result.message and "`apply_weights`" not in result.message
    assert "# YOUR CODE HERE" in result.message


GARBAGE = [
    pytest.param("nonsense", id="str"),
    pytest.param(object(), id="object"),
    pytest.param({"a": 1}, id="dict"),
    pytest.param(float("nan"), id="nan"),
    pytest.param(torch.zeros(0), id="empty-tensor"),
    pytest.param(lambda *args: "text", id="fn-returning-str"),
    pytest.param(lambda *args: (1, 2), id="fn-returning-pair-of-ints"),
    pytest.param(lambda: 0, id="fn-taking-no-arguments"),
]


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
@pytest.mark.parametrize("answer", GARBAGE)
def test_check_never_raises_and_never_passes_garbage(exercise_id, answer):
    result = check(exercise_id, *[answer] * len(EXERCISES[exercise_id].names))
    assert isinstance(result, Result)
    assert result.status == FAILED
    assert result.message


# Exercise.run: how a verify signals its outcome ------------------------------------------------


def _exercise(verify):
    return Exercise("0.1", "test", ("x",), verify, ("first", "second"))


def _raise(error):
    def verify(x):
        raise error

    return verify


@pytest.mark.parametrize(
    "verify, status, message",
    [
        (lambda x: "well done", PASSED, "well done"),
        (_raise(Mismatch("off by 2")), FAILED, "off by 2"),
        (_raise(NotDone("fill in `x` first")), NOT_DONE, "fill in `x` first"),
        (_raise(NotDone()), NOT_DONE, "replace the `# YOUR CODE HERE` part that defines `x`"),
        (_raise(NotImplementedError()), NOT_DONE, "defines `x`"),
        (_divides_by_zero, FAILED, "your code raised ZeroDivisionError: division by zero"),
    ],
)
def test_exercise_run_turns_every_outcome_into_a_result(verify, status, message):
    result = _exercise(verify).run(1)
    assert (result.exercise, result.status) == ("0.1", status)
    assert message in result.message


# Declaring an exercise -----------------------------------------------------------------------


@pytest.fixture
def registry(monkeypatch):
    """A registry of its own, so the exercises a test declares do not join the course's."""
    monkeypatch.setattr(_core, "_DECLARED", {})
    return _core._DECLARED


def test_a_declaration_takes_the_names_from_the_parameters_and_the_hints_from_the_docstring(
    registry,
):
    @exercise("0.1", "Apply: two answers")
    def apply(first_answer, second_answer) -> str:
        """A gentle hint that runs over
        two lines.

        An explicit one: x @ y.
        """
        return f"{first_answer + second_answer} is right"

    assert isinstance(apply, Exercise)
    assert (apply.id, apply.title, apply.kind) == ("0.1", "Apply: two answers", "code")
    assert apply.names == ("first_answer", "second_answer")
    assert apply.hints == ("A gentle hint that runs over two lines.", "An explicit one: x @ y.")
    assert apply.run(1, 2) == Result("0.1", PASSED, "3 is right")
    assert declared(__name__) == [apply]


def test_declarations_keep_their_order_and_refuse_a_repeated_id(registry):
    @exercise("0.2", "second")
    def later(x) -> str:
        """Hint."""

    @exercise("0.1", "first")
    def earlier(y) -> str:
        """Hint."""

    assert [e.id for e in declared(__name__)] == ["0.2", "0.1"]
    with pytest.raises(ValueError, match="'0.1' is declared twice"):

        @exercise("0.1", "again")
        def another(z) -> str:
            """Hint."""


def test_declaring_again_from_the_same_function_replaces_it_as_a_reload_does(registry):
    for title in ("before", "after"):

        @exercise("0.1", title)
        def same(x) -> str:
            """Hint."""

    assert [e.title for e in declared(__name__)] == ["after"]


def test_a_verifier_needs_a_docstring_and_plain_parameters(registry):
    with pytest.raises(ValueError, match="needs a docstring"):

        @exercise("0.1", "no hints")
        def bare(x) -> str:
            return "ok"

    with pytest.raises(ValueError, match="plain parameter"):

        @exercise("0.2", "varargs")
        def many(*answers) -> str:
            """Hint."""


def test_a_multiple_choice_reads_its_options_and_hints_from_the_docstring(registry):
    @multiple_choice("0.1", "Recall: which?", correct="b")
    def recall(answer_0_1):
        """Think about
        it.

        (a) Not this one: it
        is too slow.

        (b) This one.

        A second hint.
        """

    assert (recall.kind, recall.names) == ("choice", ("answer_0_1",))
    assert recall.hints == ("Think about it.", "A second hint.")
    assert recall.run(" (B). ") == Result("0.1", PASSED, "(b) is right. This one.")
    assert recall.run("a").message == "(a) is not the best answer. Not this one: it is too slow."
    assert recall.run("c").message == 'answer with one of "a", "b" (a string); got \'c\''


def test_a_multiple_choice_must_explain_its_correct_option(registry):
    with pytest.raises(ValueError, match="explains the correct option"):

        @multiple_choice("0.1", "Recall", correct="c")
        def recall(answer_0_1):
            """Hint.

            (a) One.

            (b) Two.
            """


# call: the one way to run the learner's code ----------------------------------------------------


def test_call_maps_stubs_crashes_and_non_functions():
    with pytest.raises(NotDone):
        call(_stub, 4)
    with pytest.raises(Mismatch, match="^expected a function; got int$"):
        call(4)
    with pytest.raises(Mismatch, match=r"raised ZeroDivisionError.* when called for T = 4\.$"):
        call(_divides_by_zero, 4, during="for T = 4")


def test_call_adds_a_tip_to_a_crash():
    with pytest.raises(Mismatch, match=r"when called for T = 4\. Use //\.$"):
        call(_divides_by_zero, 4, during="for T = 4", tip="Use //.")
    with pytest.raises(Mismatch, match=r"ZeroDivisionError: division by zero.*\. 0 is ZeroDiv"):
        call(_divides_by_zero, during="now", tip=lambda e: f"0 is {type(e).__name__[:7]}")
    with pytest.raises(Mismatch, match=r"when called now\.$"):
        call(_divides_by_zero, during="now", tip=lambda e: None)


@dataclass(frozen=True)
class _Params:
    w: np.ndarray
    b: torch.Tensor


def _scale_in_place(x, params):
    x *= 2
    params.w[0] = 5.0
    return x


def test_call_refuses_inputs_changed_in_place_and_keeps_the_originals():
    x, params = torch.ones(3), _Params(np.zeros(2), torch.zeros(2))
    with pytest.raises(Mismatch, match="^changed in place$"):
        call(_scale_in_place, x, params, in_place="changed in place")
    assert torch.equal(x, torch.ones(3)) and np.array_equal(params.w, np.zeros(2))
    result = call(lambda x, p: x + 1, torch.tensor([float("nan")]), params, in_place="no")
    assert torch.isnan(result).all()


def _calls_a_stub(x):
    return _stub(x) + 1


def test_call_names_an_unfinished_function_that_the_learners_function_calls():
    with pytest.raises(NotDone, match="^finish 0.1 first$"):
        call(_calls_a_stub, 1, unfinished="finish 0.1 first")
    with pytest.raises(NotDone, match="^$"):  # its own stub: the usual "not done"
        call(_stub, 1, unfinished="finish 0.1 first")
    with pytest.raises(NotDone, match="^$"):
        call(_calls_a_stub, 1)


# describe_error ---------------------------------------------------------------------------------


def test_describe_error_names_type_text_and_line():
    with pytest.raises(ZeroDivisionError) as info:
        _divides_by_zero()
    assert describe_error(info.value) == (
        f"ZeroDivisionError: division by zero (line {ZERO_LINE} of {THIS_FILE})"
    )


def test_describe_error_calls_a_notebook_cell_your_cell():
    namespace = {}
    cell = "def f():\n    x = 1\n    return x / 0\n"
    exec(compile(cell, "/tmp/ipykernel_4242/1234567.py", "exec"), namespace)
    with pytest.raises(ZeroDivisionError) as info:
        namespace["f"]()
    assert describe_error(info.value).endswith("(line 3 of your cell)")


@pytest.mark.parametrize("filename", ["<string>", "<dynamic-code>"])
def test_describe_error_calls_code_without_a_file_your_cell(filename):
    """exec'd code, or an answer cloudpickle carried out of the kernel, came from a cell."""
    namespace = {}
    exec(compile("def f():\n    return 1 / 0\n", filename, "exec"), namespace)
    with pytest.raises(ZeroDivisionError) as info:
        namespace["f"]()
    assert describe_error(info.value).endswith("(line 2 of your cell)")


def test_describe_error_without_text_or_traceback():
    assert describe_error(ValueError()) == "ValueError"
    assert describe_error(KeyError("k")) == "KeyError: 'k'"


def _softmax_over_a_missing_axis():
    return F.softmax(torch.zeros(2, 3), dim=3)


def test_describe_error_names_the_learners_line_when_torch_raises():
    with pytest.raises(IndexError) as info:
        _softmax_over_a_missing_axis()
    line = _softmax_over_a_missing_axis.__code__.co_firstlineno + 1
    assert f"(line {line} of {THIS_FILE})" in describe_error(info.value)


# hint(): progressive, per exercise ---------------------------------------------------------------


def test_hints_are_progressive_then_stay_on_the_last():
    texts = EXERCISES["3.2"].hints
    shown = [hint("3.2") for _ in range(len(texts) + 2)]
    assert all(isinstance(h, Hint) for h in shown)
    assert [h.number for h in shown] == [1, 2, 3, 3, 3]
    assert [h.text for h in shown[:3]] == list(texts)
    assert str(shown[0]) == f"Hint 1 of 3 for exercise 3.2: {texts[0]}"
    assert str(shown[1]).startswith("Hint 2 of 3 for exercise 3.2: ")
    assert str(shown[4]) == f"Hint 3 of 3 (the last one) for exercise 3.2: {texts[2]}"
    assert shown[0]._repr_html_().startswith("<div>💡 Hint 1 of 3")


def test_hints_of_one_exercise_do_not_advance_another():
    hint("3.2")
    hint("3.2")
    assert hint("3.4").number == 1
    assert hint("3.2").number == 3
    assert hint("3.4").number == 2


@pytest.mark.parametrize("exercise_id", ["3.9", "12"])
def test_hint_for_an_unknown_exercise_says_which_exist(exercise_id):
    answer = hint(exercise_id)
    assert isinstance(answer, Result) and answer.status == FAILED
    assert (
        f"there is no exercise {exercise_id!r}" in answer.message and "3.1, 3.2" in answer.message
    )
    assert checks._hints_shown == {}


# Multiple choice ------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["c", " C ", "(c)", "c.", "C)", "(C)."])
def test_choice_accepts_the_letter_however_it_is_written(answer):
    result = check("3.1", answer)
    assert result.passed
    assert result.message.startswith("(c) is right.")


@pytest.mark.parametrize("answer", ["e", 2, "", "bc", ["b"]])
def test_choice_rejects_what_is_not_a_letter_and_lists_the_letters(answer):
    result = check("3.1", answer)
    assert result.status == FAILED
    assert result.message == f'answer with one of "a", "b", "c", "d" (a string); got {answer!r}'


def test_choice_explains_a_wrong_letter():
    explanation = "Overflow is not the issue:"
    assert check("3.1", "(A)").message.startswith(f"(a) is not the best answer. {explanation}")


def test_the_right_letters_of_the_multiple_choices_are_spread_over_their_options():
    """Not "b" most of the time: each letter is right about as often as the others."""
    right = Counter(
        next(letter for letter in "abcdefgh" if e.run(letter).passed)
        for e in EXERCISES.values()
        if e.kind == "choice"
    )
    assert set(right) == set("abcd"), right
    assert max(right.values()) - min(right.values()) <= 1, right


# The registry ---------------------------------------------------------------------------------


def test_exercises_returns_a_lessons_exercises_in_order():
    assert [e.id for e in exercises(3)] == [f"3.{n}" for n in range(1, 9)]
    assert exercises("3") == exercises(3)
    assert exercises(99) == []


@pytest.mark.parametrize("exercise", list(EXERCISES.values()), ids=lambda e: e.id)
def test_every_exercise_is_well_formed(exercise):
    assert re.fullmatch(r"\d+\.\d+", exercise.id)
    assert EXERCISES[exercise.id] is exercise
    assert exercise.title.strip()
    assert len(exercise.names) >= 1 and all(name.isidentifier() for name in exercise.names)
    assert len(exercise.hints) >= 2 and all(h.strip() for h in exercise.hints)
    assert exercise.kind in {"code", "choice"}


def test_answer_names_are_unique_across_exercises():
    """The instructor's grader reads each name from the notebook."""
    names = [name for e in EXERCISES.values() for name in e.names]
    assert len(names) == len(set(names))


# Comparing numbers (_tensors) -------------------------------------------------------------------


@pytest.mark.parametrize("value", [[1, 2], np.array([1.0, 2.0]), torch.tensor([1, 2]), (1, 2)])
def test_as_tensor_accepts_numbers_in_any_container(value):
    got = as_tensor("x", value)
    assert got.dtype == torch.float64 and got.tolist() == [1.0, 2.0]


def test_as_tensor_names_the_answer_when_it_is_not_numbers():
    for value in ([0.5, "x"], object()):
        with pytest.raises(Mismatch, match=r"^`w` should be a number, a list, .*; got ") as e:
            as_tensor("w", value)
        assert e.value.kind == "type"
    with pytest.raises(Mismatch, match=r"^`w` is the text 'about a half'; it should be a number"):
        as_tensor("w", "about a half")


@pytest.mark.parametrize(
    "text, written", [("1,048,576", "1_048_576"), (" 12 ", "12"), ("-0.9589", "-0.9589")]
)
def test_a_number_written_as_text_is_told_how_to_write_it(text, written):
    with pytest.raises(Mismatch, match=f"is the text '{text}', not a number: .* e.g. {written} "):
        as_tensor("count", text)


def test_a_difference_shows_the_digits_that_differ():
    message = difference("x", torch.tensor([1.10842]), torch.tensor([1.10840]))
    assert "expected 1.10840, got 1.10842" in message
    assert "expected 0.5000, got 0.7000" in difference("x", torch.tensor(0.7), torch.tensor(0.5))


def test_difference_says_where_and_how_far_off():
    expected = torch.tensor([[0.1, 0.2], [0.3, 0.4]])
    got = expected.clone()
    got[1, 0] += 0.05
    assert difference("w", got, expected) == (
        "`w` is off by up to 0.05 at index (1, 0): expected 0.3000, got 0.3500."
    )
    assert "contains NaN" in difference("w", torch.tensor([float("nan"), 1.0]), torch.ones(2))


def test_diagnose_prefers_the_named_mistake_and_checks_shape_first():
    expected = torch.tensor([0.7, 0.3])
    diagnose("w", [0.70001, 0.3], expected)  # within tolerance: no exception
    with pytest.raises(Mismatch, match="^swapped$"):
        diagnose("w", [0.3, 0.7], expected, wrong=[(expected.flip(0), "swapped")])
    with pytest.raises(Mismatch, match=r"should have shape \(2,\); got \(3,\)"):
        diagnose("w", [0.7, 0.3, 0.0], expected)


def test_diagnose_starts_its_message_with_how_the_function_was_called():
    expected = torch.tensor([0.7, 0.3])
    with pytest.raises(Mismatch, match=r"^on x \(2,\): swapped$"):
        diagnose("w", [0.3, 0.7], expected, [(expected.flip(0), "swapped")], during="on x (2,)")
    with pytest.raises(Mismatch, match=r"^on x: `w` should have shape \(2,\); got \(1,\)$"):
        diagnose("w", [0.3], expected, during="on x")


def test_backticks_in_a_message_show_as_code_in_html():
    page = Result("3.2", FAILED, "set `apply_weights` to <the weights>")._repr_html_()
    assert "set <code>apply_weights</code> to &lt;the weights&gt;" in page


# Every failure says what kind of diagnosis it is -----------------------------------------------


def test_every_mismatch_in_the_lesson_checks_states_its_kind():
    """The figures on the checks (``make test-mutants``) count named mistakes by this kind,
    so none may fall back on the default without saying so."""
    import ast
    from pathlib import Path

    unlabelled = []
    for module in sorted(Path(checks.__file__).parent.glob("lesson*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Mismatch"):
                continue
            if len(node.args) < 2 and "kind" not in {k.arg for k in node.keywords}:
                unlabelled.append(f"{module.name}:{node.lineno}")
    assert unlabelled == []


def test_a_result_carries_its_diagnosis():
    def wrong(x):
        raise Mismatch("softmax over the wrong axis?", "mistake")

    result = Exercise("0.1", "t", ("x",), wrong, ("hint",)).run(1)
    assert (result.status, result.diagnosis) == (FAILED, "mistake")
    crashed = Exercise("0.1", "t", ("x",), lambda x: 1 / 0, ("hint",)).run(1)
    assert crashed.diagnosis == "exception"
    assert Exercise("0.1", "t", ("x",), lambda x: "ok", ("hint",)).run(1).diagnosis is None
    with pytest.raises(ValueError, match="kind should be one of"):
        Mismatch("m", "vague")


def test_a_not_implemented_error_from_a_library_is_a_crash_not_a_stub():
    import asyncio

    def stub(x):
        raise NotImplementedError()

    def calls_a_library_that_has_no_such_operation(x):
        asyncio.AbstractEventLoop().run_forever()  # raised inside asyncio's own code

    with pytest.raises(NotDone):
        call(stub, 1)
    with pytest.raises(Mismatch, match="^your function raised NotImplementedError") as crash:
        call(calls_a_library_that_has_no_such_operation, 1)
    assert crash.value.kind == "exception"
