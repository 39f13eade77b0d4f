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

    For example an ARD weight whose precision, in the units of features of about 1e-160, is
    below float64's smallest normal number.

    Parameters
    ----------
    reason : str
        What is out of range.
    column : int, optional
        The index of the column of the design concerned; the message then starts with
        ``column <index>:`` and a family may name the column by its ``reason``.
    """

    def __init__(self, reason: str, *, column: int | None = None):
        self.reason = reason
        self.column = column
        super().__init__(reason if column is None else f"column {column}: {reason}")
