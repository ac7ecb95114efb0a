"""Learner answers that the tests of several lessons' checks share."""


def forgets_return(*args, **kwargs):
    """Works something out, then forgets to ``return`` it: the function gives None.

    A function with no code at all is a stub, which the checks call "not done"; this one has
    code, so its None is a mistake to name.
    """
    worked_out = (args, kwargs)  # noqa: F841
