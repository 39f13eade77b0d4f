"""Work split into parts run at once on threads, every thread joined before returning."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["on_threads"]


def on_threads(work: Callable[[int], None], count: int, name: str) -> None:
    """Run ``work(i)`` for ``i`` in ``range(count)`` at once, ``work(0)`` on this thread.

    Each other part runs on a thread of its own. Meant for work that releases the GIL (a C
    routine called through ctypes, a read). Every started thread is joined before this
    returns or raises, even through a ``KeyboardInterrupt`` (raised once they have all
    finished): the threads may write into memory that the caller frees when it is left.
    ``work`` records its own errors; one it raises on a thread of its own is reported by
    :func:`threading.excepthook` and lost.
    """
    threads: list[threading.Thread] = []
    try:
        for i in range(1, count):
            thread = threading.Thread(target=work, args=(i,), name=name, daemon=True)
            thread.start()
            threads.append(thread)
        work(0)
    finally:
        _join_all(threads)


def _join_all(threads: list[threading.Thread]) -> None:
    interrupted: BaseException | None = None
    for thread in threads:
        while thread.is_alive():
            try:
                thread.join()
            except BaseException as exc:  # noqa: BLE001 - joined first, raised below
                interrupted = interrupted or exc
    if interrupted is not None:
        raise interrupted
