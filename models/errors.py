"""Errors a user can fix: every one names what is wrong and where.

All of them map to exit code 2 on the command line (bad spec, bad data, bad usage).
"""

from __future__ import annotations

__all__ = ["BayescheckError", "SpecError", "DataError", "NotIdentifiedError"]


class BayescheckError(Exception):
    """Base class of the errors that are the user's to fix (exit code 2)."""

    exit_code = 2


class SpecError(BayescheckError):
    """A spec file is malformed: names the file and the offending key.

    Parameters
    ----------
    message : str
        What is wrong, what was expected and what was received.
    path : str or os.PathLike, optional
        The spec file.
    key : str, optional
        The dotted key, for example ``"prior.cov"``.
    """

    def __init__(self, message: str, *, path=None, key: str | None = None):
        self.path = None if path is None else str(path)
        self.key = key
        where = ", ".join(
            part for part in (self.path and f"{self.path}", key and f"key '{key}'") if part
        )
        super().__init__(f"{where}: {message}" if where else message)


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


class NotIdentifiedError(BayescheckError):
    """The data seen so far do not determine the posterior.

    For example a flat prior with fewer independent rows than parameters.
    """
