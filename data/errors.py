"""The base of every error that is the user's to fix, and the error of unusable data.

They live in the lowest package, so that the data readers and every package above them
(``models``, ``inference``, ``reports``) raise and catch the same classes;
:mod:`bayescheck.models.errors` adds the spec's errors.
"""

from __future__ import annotations

__all__ = ["BayescheckError", "DataError"]


class BayescheckError(Exception):
    """Base class of the errors that are the user's to fix (exit code 2)."""

    exit_code = 2


class DataError(BayescheckError):
    """A data file cannot be used: names the file and, where it applies, column and row.

    Parameters
    ----------
    message : str
        What is wrong.
    path : str or os.PathLike, optional
        The data file (or batch) concerned.
    column : str, optional
        The column concerned.
    row : int, optional
        The 1-based data row (the header is not counted).
    """

    def __init__(self, message: str, *, path=None, column: str | None = None,
                 row: int | None = None):
        self.path = None if path is None else str(path)
        self.column = column
        self.row = row
        parts = []
        if self.path:
            parts.append(self.path)
        if column is not None:
            parts.append(f"column '{column}'")
        if row is not None:
            parts.append(f"row {row}")
        where = ", ".join(parts)
        super().__init__(f"{where}: {message}" if where else message)
