"""A whole local file read into ``bytes``: into huge pages, on several threads when large.

``Path.read_bytes`` copies a file into a fresh allocation that the kernel backs one 4 KiB
page at a time, each zeroed on its first touch: for the 208 MB CSV of 1e6 rows of the Alarm
network that took 0.17 s of CPU, two thirds of it page faults, against 0.05 s into 2 MiB
pages (``MADV_HUGEPAGE``; the machine's transparent huge pages are "madvise" only, as is
common) and 0.03 s of wall time on two threads (benchmarks/NETWORKS.md). With the kernel's
``defrag`` setting at its usual "madvise", a fault in such a region may compact memory first
when no huge page is free (as for numpy's large arrays, which are advised the same way).

:func:`read_file` gets a new ``bytes`` object of the file's size from CPython's
``PyBytes_FromStringAndSize(NULL, size)`` (documented: "the contents of the bytes object are
uninitialized"; CPython's own ``FileIO.readall`` fills one the same way), advises huge pages
for it and fills it with ``os.preadv`` on threads of their own parts (the GIL is released
while each reads). Nothing else holds the object until it is returned, full, and every
thread is joined first, even through a ``KeyboardInterrupt``. A file that shrinks or grows
while it is read is read again the plain way, as is one whose read fails (the plain read
raises the error), a small file, anything not a regular file, and any failure of the fast
way (no ``ctypes``, not CPython).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .parallel import on_threads
from .settings import usable_cores

__all__ = ["BIG_BYTES", "read_file"]

#: Files at least this large are read the fast way; each thread reads at least this much.
BIG_BYTES = 16 << 20
#: At most this many threads read one file.
MAX_THREADS = 4
_HUGE_PAGE = 2 << 20


def read_file(path: str | Path) -> bytes:
    """Every byte of a local file, as ``Path.read_bytes`` gives them.

    Raises
    ------
    OSError
        As ``Path.read_bytes`` does.
    """
    with open(path, "rb", buffering=0) as fh:
        info = os.fstat(fh.fileno())
        if info.st_size >= BIG_BYTES and stat.S_ISREG(info.st_mode):
            content = _read_fast(fh.fileno(), info.st_size)
            if content is not None:
                return content
            fh.seek(0)
        return fh.readall()


def _read_fast(fd: int, size: int) -> bytes | None:
    """The file's ``size`` bytes, or None when it did not hold exactly that many."""
    try:
        import ctypes

        make = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_ssize_t)(
            ("PyBytes_FromStringAndSize", ctypes.pythonapi))
        content = make(None, size)
        address = ctypes.cast(ctypes.c_char_p(content), ctypes.c_void_p).value
        view = memoryview((ctypes.c_char * size).from_address(address)).cast("B")
    except (AttributeError, ImportError, TypeError, ValueError, OSError):
        return None
    _advise_huge_pages(address, size)
    count = max(1, min(usable_cores(), MAX_THREADS, size // BIG_BYTES))
    cuts = [size * i // count for i in range(count + 1)]
    full = [False] * count

    def read(i, _writes_into=content):  # the object stays alive while a thread fills it
        at, end = cuts[i], cuts[i + 1]
        try:
            while at < end:
                got = os.preadv(fd, [view[at:end]], at)
                if got == 0:  # the file shrank while it was read
                    return
                at += got
        except OSError:  # the plain read that follows meets it again, and raises it
            return
        full[i] = True

    try:
        on_threads(read, count, "bayescheck-read")
    finally:
        view.release()
    if not all(full) or os.pread(fd, 1, size):  # shrank, grew, or failed while it was read
        return None
    return content


def _advise_huge_pages(address: int, size: int) -> None:
    """Ask for 2 MiB pages over the whole huge pages inside ``[address, address + size)``.

    Nothing happens when the kernel has none to give: the advice is only advice.
    """
    import ctypes
    import mmap

    advice = getattr(mmap, "MADV_HUGEPAGE", None)  # Linux only
    start = -(-address // _HUGE_PAGE) * _HUGE_PAGE
    length = (address + size - start) // _HUGE_PAGE * _HUGE_PAGE
    if advice is None or length <= 0:
        return
    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    madvise(start, length, advice)
