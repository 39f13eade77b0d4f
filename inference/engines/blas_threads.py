"""BLAS thread counts, read and limited through threadpoolctl.

The engines' loops make many small BLAS and LAPACK calls, too small for OpenBLAS threads to
pay (on a shared 2-core machine the threads spin against each other). numpy and scipy each
load an OpenBLAS of their own; threadpoolctl sees the libraries loaded when its controller
is made, so a caller that wants scipy's covered imports :mod:`scipy.linalg` first.

The controller (threadpoolctl's scan of the loaded libraries, which reads each library's
file) is kept and made again only when modules were imported since: a BLAS library comes
with a module. The thread counts themselves are read and set on every call.
"""

from __future__ import annotations

import sys

__all__ = ["blas_on_one_thread", "one_blas_thread"]

#: threadpoolctl's controller and ``len(sys.modules)`` when it was made.
_CONTROLLER: tuple = (None, -1)


def _controller():
    global _CONTROLLER
    controller, seen = _CONTROLLER
    if controller is None or seen != len(sys.modules):
        from threadpoolctl import ThreadpoolController

        controller = ThreadpoolController()
        _CONTROLLER = (controller, len(sys.modules))
    return controller


def one_blas_thread():
    """A context in which every loaded BLAS runs on one thread.

    Returns
    -------
    contextlib.AbstractContextManager
        ``threadpoolctl``'s limit; the counts before it are restored on exit.
    """
    return _controller().limit(limits=1, user_api="blas")


def blas_on_one_thread() -> bool:
    """Whether every loaded BLAS runs on one thread (as inside :func:`one_blas_thread`).

    Returns
    -------
    bool
        False when no BLAS library is loaded.
    """
    libraries = _controller().select(user_api="blas").info()
    return bool(libraries) and all(lib["num_threads"] == 1 for lib in libraries)
