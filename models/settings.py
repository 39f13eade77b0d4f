"""Settings read from the environment, and the cores this process may use.

One reader for an environment variable with a fixed set of values (:func:`choice`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from .errors import SpecError

__all__ = ["choice", "usable_cores"]


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


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1
