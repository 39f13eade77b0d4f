"""Errors a user can fix: every one names what is wrong and where.

All of them map to exit code 2 on the command line (bad spec, bad data, bad usage). The base
class and the data's error are :mod:`bayescheck.data.errors`' (the readers below ``models``
raise them), named here too.
"""

from __future__ import annotations

from bayescheck.data.errors import BayescheckError, DataError

__all__ = ["BayescheckError", "SpecError", "DataError", "NotIdentifiedError"]


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


class NotIdentifiedError(BayescheckError):
    """The data seen so far do not determine the posterior.

    For example a flat prior with fewer independent rows than parameters.
    """
