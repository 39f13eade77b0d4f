"""The engines' exceptions: plain Python, so an engine needs nothing outside numpy and scipy.

A family module translates them into the user-facing errors of :mod:`bayescheck.models.errors`,
adding the file, column and row the engine cannot know.
"""

from __future__ import annotations

__all__ = ["NotIdentified", "OutOfRange"]


class NotIdentified(ValueError):
    """The data seen so far do not determine the posterior.

    For example a flat prior with fewer independent rows than parameters.
    """


class OutOfRange(ValueError):
    """The data (or the prior) exceed what float64 arithmetic can hold in this engine.

    For example features scaled by 1e80, whose fourth powers the evidence of ARD forms: the
    fit would lose its numbers (an infinite or NaN evidence, every weight pruned).
    """
