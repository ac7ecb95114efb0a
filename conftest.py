"""Notebook runs check the exercise checks too.

When nbval runs a notebook, every ``check(...)`` result it produces must say "passed" in
``solutions/`` and "not done" in ``lessons/``: a check that passes an untouched stub, or fails
the model answer, fails the test run. The status travels in the result's own MIME type.
"""

from pathlib import Path

import pytest

from course_lib.checks import MIME_TYPE, NOT_DONE, PASSED

EXPECTED_STATUS = {"solutions": PASSED, "lessons": NOT_DONE}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    expected = EXPECTED_STATUS.get(Path(str(item.fspath)).parent.name)
    outputs = getattr(item, "test_outputs", None)  # set by nbval once the cell has run
    if call.when != "call" or report.failed or expected is None or not outputs:
        return
    for output in outputs:
        result = output.get("data", {}).get(MIME_TYPE)
        if result and result["status"] != expected:
            report.outcome = "failed"
            report.longrepr = (
                f"check({result['exercise']!r}) reported {result['status']!r}; "
                f"in {Path(str(item.fspath)).parent.name}/ every check must report {expected!r}"
            )
