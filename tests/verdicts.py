"""What the tests of several lessons' checks assert about a check's result."""

from course_lib.checks import FAILED
from course_lib.checks._core import MISTAKE


def fails(result, words, request, kinds: dict[str, str]) -> None:
    """The result failed, its message has every word, and its diagnosis is the one ``kinds``
    gives the test's case (its parametrize id), a named mistake by default."""
    assert result.status == FAILED, result.message
    for word in words:
        assert word in result.message, result.message
    case = request.node.callspec.id
    assert result.diagnosis == kinds.get(case, MISTAKE), (case, result.diagnosis, result.message)
