import os

import pytest
import torch
from check_audit import audited

from course_lib.checks import Exercise, _rules

# One thread: results are bit-identical only at a fixed thread count, and on a busy
# two-core machine two threads can be many times slower than one. `make test-portable` runs
# the tests again with COURSE_TEST_THREADS=2: nothing may depend on the thread count.
torch.set_num_threads(int(os.environ.get("COURSE_TEST_THREADS", "1")))


@pytest.fixture(autouse=True)
def _seed():
    """Every test starts from the same random state, so failures reproduce."""
    torch.manual_seed(0)


@pytest.fixture(autouse=True)
def _checks_leave_the_session_alone(request, monkeypatch):
    """In the check tests, every check call is audited: a check that changes the global random
    states, dtype, threads or grad mode, or one of the answers, fails the test that made it.
    The lesson modules run every exercise's model answer, stub and typical mistakes."""
    if request.path.name.startswith("test_check"):
        monkeypatch.setattr(Exercise, "run", audited(Exercise.run))
        if os.environ.get("CHECKS_THROUGH_THE_GRADER"):  # make test-sandbox
            from through_the_grader import compared

            monkeypatch.setattr(Exercise, "run", compared(Exercise.run))


@pytest.fixture(autouse=True)
def _reference_code_as_answers(request, monkeypatch):
    """The check tests hand in course_lib's own functions as right answers (and build wrong
    ones on them), which the exercises' rules would refuse as "uses course_lib". There, only
    tests marked ``@pytest.mark.rules`` see that rule; the others test the verdict on values.
    The rules themselves are tested in test_check_rules.py, and on real notebooks by nbval and
    the grader's validation of solutions/ and lessons/."""
    if request.path.name.startswith("test_check") and not request.node.get_closest_marker("rules"):
        monkeypatch.setattr(_rules, "course_lib_uses", lambda *args, **kwargs: set())
