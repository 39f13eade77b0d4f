"""A check without Dask: xarray's question "is this a Dask array?" answered without importing it.

Every ``xarray.DataArray`` built from a numpy array asks whether its data is a Dask array,
and when Dask is installed the first such question imports it: ``array_type("dask")``
(``xarray.namedarray.pycompat``) imports ``dask.array`` for its ``Array`` class,
``is_dask_collection`` (``xarray.namedarray.utils``) imports ``dask.base``, and writing a
netCDF file asks ``dask.base`` which scheduler is active. That is 0.3-0.5 s of CPU in a
``check`` (0.85-0.95 s in a process that has not loaded Dask's own dependencies for other
reasons; benchmarks/CHECK_SPEED.md, round 9), for answers that are known in a process that
has not imported Dask: no Dask array, collection or scheduler can exist there. A check
makes none: its draws come from nutpie or PyMC as numpy arrays, and its files are written
eagerly.

:func:`without_dask` refuses ``import dask`` for the duration of a block (``sys.modules``
holds None for it, so an import raises ImportError), which is the case xarray, SciPy and
pandas are written for when Dask is not installed, and makes xarray forget what it
remembered about Dask before and after the block: the answers of its cached
``module_available`` and its cached record of the ``dask`` duck-array module. So xarray
answers "not installed" inside the block, and finds Dask again on its next question after
it: a program that imports Dask later (a notebook that runs a check, then a Dask
computation) gets xarray's usual behaviour. Nothing is done when Dask is already imported (a
Dask array may exist) or not installed, or when xarray's internals are not the ones this was
written for (then the check imports Dask as before).
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import threading

__all__ = ["without_dask"]

# sys.modules is process-wide: one block at a time (a nested one does nothing).
_LOCK = threading.Lock()


def _xarray_memories():
    """xarray's cached Dask answers: (duck-array module records, module_available), or None."""
    try:
        import xarray.namedarray.pycompat as pycompat
        import xarray.namedarray.utils as utils
    except ImportError:
        return None
    records = getattr(pycompat, "_cached_duck_array_modules", None)
    available = getattr(utils, "module_available", None)
    if not isinstance(records, dict) or not callable(getattr(available, "cache_clear", None)):
        return None
    return records, available


def _clear_chunk_managers() -> None:
    try:
        from xarray.namedarray.parallelcompat import list_chunkmanagers
    except ImportError:
        return
    clear = getattr(list_chunkmanagers, "cache_clear", None)
    if callable(clear):
        clear()


@contextlib.contextmanager
def without_dask():
    """Within the block, ``import dask`` fails and xarray treats Dask as not installed.

    Yields
    ------
    bool
        Whether Dask was refused (False: already imported or not installed, an enclosing
        block in charge, or xarray's internals not as expected).
    """
    if not _LOCK.acquire(blocking=False):
        yield False  # an enclosing block (or another thread's) is in charge
        return
    try:
        memories = None
        if "dask" not in sys.modules and importlib.util.find_spec("dask") is not None:
            memories = _xarray_memories()  # imports xarray first, with Dask importable
        if memories is None or "dask" in memories[0]:
            yield False
            return
        records, available = memories
        available.cache_clear()  # it may hold "dask is installed"
        sys.modules["dask"] = None
        try:
            yield True
        finally:
            if "dask" in sys.modules and sys.modules["dask"] is None:
                del sys.modules["dask"]
            record = records.get("dask")
            if record is not None and not getattr(record, "available", True):
                del records["dask"]  # made inside the block: "not installed"
            available.cache_clear()
            _clear_chunk_managers()  # a list made inside the block would lack Dask's
    finally:
        _LOCK.release()
