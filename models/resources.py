"""Resource limits, checked from a spec's sizes before anything of that size is allocated.

A spec with a million feature columns, or a mixture with many components over many
features, would otherwise fail minutes later with a ``MemoryError`` (or take the machine
down) while building a d x d matrix. :func:`require_memory` compares an estimate of the
memory a fit needs with the machine's physical memory and refuses with the estimate.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import SpecError

__all__ = ["available_memory", "require_memory", "square_matrices"]


def available_memory() -> int:
    """Physical memory of this machine in bytes (a large number where it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: do not refuse anything
        return 1 << 62


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def square_matrices(count: int, dim: int) -> int:
    """Bytes of ``count`` float64 matrices of ``dim x dim``."""
    return 8 * count * dim * dim


def require_memory(needed: int, what: str, *, path: Path | None, key: str) -> None:
    """Refuse a spec whose fit needs more memory than the machine has.

    Parameters
    ----------
    needed : int
        Estimated bytes.
    what : str
        What takes the memory, for the message (``"3 posterior matrices of 10^6 x 10^6"``).
    path, key : optional
        The spec file and the key whose size is at fault.

    Raises
    ------
    SpecError
        With the estimate and the machine's memory.
    """
    have = available_memory()
    if needed > have:
        raise SpecError(f"too large for this machine: {what} need about {_size(needed)} of "
                        f"memory, and it has {_size(have)}; use fewer features (or "
                        f"components)", path=path, key=key)
