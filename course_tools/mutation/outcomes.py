"""What became of each variant, and the figures that sum a set of them up.

A variant is *broken* when its cell raises (a learner would see the error and never reach
the check), *timeout* when its cell or check runs past the limit, and otherwise reaches the
check: *accepted* (passed), *not done*, *rejected* (failed) or *crashed* (failed because the
learner's code raised inside the check, diagnosis "exception"). A harness fault is *error*.

Only variants that reach the check, are not equivalent to the model answer and are not on
the reviewed allow-list (variants no check can tell from the model answer, such as one
sample more in 10,000, each with its reason) measure the check. Of those, the rejected share
counts rejections (crashes included) and the named share counts, among the rejections that
are not crashes, those whose message names the mistake (diagnosis "mistake") or the
exercise's rule it breaks ("rule"). The share rejected counting the allow-listed variants as
accepted is given too (``rejected_share_all``).
"""

from collections import Counter

BROKEN, TIMEOUT, ERROR = "broken", "timeout", "error"
ACCEPTED, NOT_DONE, REJECTED, CRASHED = "accepted", "not done", "rejected", "crashed"
REACHED = (ACCEPTED, NOT_DONE, REJECTED, CRASHED)
NAMED = ("mistake", "rule")
GOALS = {"rejected": 0.99}  # the named share is a figure to read, not a goal


def classify(raw: dict) -> dict:
    """The status, diagnosis, message and equivalence of a child's raw JSON answer."""
    outcome = raw.get("outcome")
    message = raw.get("message", "")
    if outcome is None:  # the grader's ``isolated`` answered: the child never reported back
        status = TIMEOUT if "took over" in message else BROKEN
    elif outcome in (BROKEN, ERROR):
        status = outcome
    elif raw["status"] == "passed":
        status = ACCEPTED
    elif raw["status"] == "not done":
        status = NOT_DONE
    else:
        status = CRASHED if raw.get("diagnosis") == "exception" else REJECTED
    rejected = status in (REJECTED, CRASHED)
    return {
        "status": status,
        "diagnosis": raw.get("diagnosis", "unknown") if rejected else None,
        "message": message,
        "equivalent": raw.get("equivalent") if status in REACHED else None,
    }


def measured(variant: dict) -> bool:
    """A variant that tells about the check: it reached it and is not a right answer."""
    return variant["status"] in REACHED and variant["equivalent"] is not True


def allowed(variant: dict) -> bool:
    """A measured variant that the allow-list says no check can tell from the model answer."""
    return measured(variant) and bool(variant.get("allowed"))


def figures(variants: list[dict]) -> dict:
    """Counts and shares for a set of classified variants (see the module docstring)."""
    statuses = Counter(v["status"] for v in variants)
    reviewed = [v for v in variants if allowed(v)]
    checked = [v for v in variants if measured(v) and not allowed(v)]
    rejected = [v for v in checked if v["status"] in (REJECTED, CRASHED)]
    plain = [v for v in rejected if v["status"] == REJECTED]
    named = [v for v in plain if v["diagnosis"] in NAMED]
    equivalent = [v for v in variants if v["status"] in REACHED and v["equivalent"] is True]
    return {
        "variants": len(variants),
        "broken": statuses[BROKEN],
        "timeout": statuses[TIMEOUT],
        "error": statuses[ERROR],
        "equivalent": len(equivalent),
        "equivalent_rejected": sum(v["status"] in (REJECTED, CRASHED) for v in equivalent),
        "checked": len(checked),
        "rejected": len(rejected),
        "crashed": sum(v["status"] == CRASHED for v in checked),
        "not_done": sum(v["status"] == NOT_DONE for v in checked),
        "accepted": sum(v["status"] == ACCEPTED for v in checked),
        "named": len(named),
        "allowed": len(reviewed),
        "rejected_share": _share(len(rejected), len(checked)),
        "rejected_share_all": _share(len(rejected), len(checked) + len(reviewed)),
        "named_share": _share(len(named), len(plain)),
        "diagnoses": dict(sorted(Counter(v["diagnosis"] for v in rejected).items())),
    }


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None
