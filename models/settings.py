"""Settings read from the environment: one reader for a variable with a fixed set of values."""

from __future__ import annotations

import os
from collections.abc import Sequence

from .errors import SpecError

__all__ = ["choice"]


def choice(name: str, choices: Sequence[str]) -> str:
    """The value of environment variable ``name``, one of ``choices`` (the first when unset).

    Blanks around the value and its case do not matter.

    Raises
    ------
    SpecError
        When the variable holds anything else, naming the values it may take.
    """
    raw = os.environ.get(name, "").strip().lower()
    if raw and raw not in choices:
        quoted = [f"'{c}'" for c in choices]
        allowed = " or ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1
                              else quoted)
        raise SpecError(f"{name} must be {allowed}, got {raw!r}")
    return raw or choices[0]
