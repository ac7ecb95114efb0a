"""Plain data: what an answer may be, and how it leaves a grading sandbox (``checks._plain``)."""

import inspect
import io
import os
import pickle

import numpy as np
import pytest
import torch
from torch import nn

from course_lib.checks import EXERCISES, FAILED, check
from course_lib.checks._plain import MARK, NotPlain, dumps, encode, loads, problem
from course_lib.checks._remote import Learner, signature_of


class AlwaysEqual(torch.Tensor):
    def __eq__(self, other):
        return torch.ones((), dtype=torch.bool)


class Agreeable(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


class Reference:
    def __array__(self, dtype=None, copy=None):
        return np.eye(3)


def roundtrip(x):
    registered = []

    def register(obj):
        registered.append(obj)
        return (MARK, "learner", len(registered) - 1, {"name": getattr(obj, "__name__", "")})

    return loads(dumps(encode(x, register)), lambda marker: ("stand-in", marker[2]))


@pytest.mark.parametrize(
    "value",
    [
        None,
        3,
        2.5,
        "b",
        torch.ones(2, 3),
        np.arange(4.0),
        np.float64(0.5),
        [1, (2.0, "x")],
        {"a": torch.zeros(2)},
        torch.Size([2, 3]),
        len,
        nn.Linear(2, 2),
    ],
)
def test_plain_values_and_code_are_answers(value):
    assert problem(value, "x") is None


@pytest.mark.parametrize(
    "value, said",
    [
        (torch.ones(2).as_subclass(AlwaysEqual), "AlwaysEqual, a subclass of torch.Tensor"),
        (Agreeable("b"), "Agreeable, a subclass of str"),
        (Reference(), "Reference, an object of its own class"),
        ([1, Agreeable("c")], "Agreeable"),
        (np.array([object()]), "not a plain numpy array"),
    ],
)
def test_values_that_compare_as_they_like_are_not_answers(value, said):
    message = problem(value, "causal_weights")
    assert message.startswith("`causal_weights` holds a value of type ") and said in message


def test_the_notebook_refuses_them_as_the_grader_does():
    result = check("3.1", Agreeable("c"))
    assert (result.status, result.diagnosis) == (FAILED, "type")
    assert "an answer must be plain data" in result.message
    lying = torch.ones(4, 4).as_subclass(AlwaysEqual)
    assert "subclass of torch.Tensor" in EXERCISES["3.3"].run(lying).message


def test_values_cross_as_they_are():
    values = [torch.arange(6.0).reshape(2, 3), np.arange(6, dtype=np.float32).reshape(3, 2)]
    values += [np.int64(7), (1, [2.5, "s"]), {"k": torch.Size([1])}]
    back = roundtrip(values)
    assert torch.equal(back[0], values[0]) and type(back[0]) is torch.Tensor
    assert back[1].dtype == np.float32 and np.array_equal(back[1], values[1])
    assert type(back[2]) is np.int64 and back[2] == 7
    assert back[3:] == values[3:]


def test_a_parameter_crosses_as_a_plain_tensor_and_pytorchs_layers_as_themselves():
    layer = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2), 2, enable_nested_tensor=False)
    back = roundtrip([nn.Parameter(torch.ones(2)), layer])
    assert type(back[0]) is torch.Tensor
    assert isinstance(back[1], nn.TransformerEncoder)
    assert sum(p.numel() for p in back[1].parameters()) == sum(
        p.numel() for p in layer.parameters()
    )


def test_what_is_not_plain_crosses_as_a_marker_and_code_as_a_stand_in():
    class Mine(nn.Module):  # a learner's own layer stays in the sandbox, called from outside
        def forward(self, x):
            return x

    back = roundtrip([torch.ones(2).as_subclass(AlwaysEqual), Agreeable("b"), print, Mine()])
    assert isinstance(back[0], NotPlain) and "AlwaysEqual" in back[0].what
    assert isinstance(back[1], NotPlain) and "Agreeable" in back[1].what
    assert back[2] == ("stand-in", 0) and back[3] == ("stand-in", 1)
    forged = roundtrip([(MARK, "learner", 5, {})])[0]  # a learner's tuple posing as a marker
    assert isinstance(forged, NotPlain)


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch /tmp/plain-data-was-run",))


def test_reading_runs_nothing_a_pickle_names():
    buffer = io.BytesIO()
    torch.save({"answer": _Boom()}, buffer)
    with pytest.raises(pickle.UnpicklingError):
        loads(buffer.getvalue(), lambda marker: None)
    assert not os.path.exists("/tmp/plain-data-was-run")


def test_a_stand_in_has_the_functions_signature():
    def attention(q, k, v, mask=None, *, scale=1.0):
        return q

    stand_in = Learner(
        link=None, handle=0, info={"name": "attention", "signature": signature_of(attention)}
    )
    assert inspect.signature(stand_in) == inspect.signature(attention)
    assert stand_in.__name__ == "attention"
    inspect.signature(stand_in).bind(1, 2, 3, None)
    with pytest.raises(TypeError):
        inspect.signature(stand_in).bind(1)
