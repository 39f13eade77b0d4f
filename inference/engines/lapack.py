"""Cholesky factors, triangular solves and rank-one updates without importing scipy.

Importing :mod:`scipy.linalg` costs more CPU than the whole of a small ``bayescheck fit``.
These functions call the very LAPACK and BLAS routines scipy 1.18 calls, in scipy's own
OpenBLAS (``scipy.libs``, found without importing scipy:
:func:`.linear_gaussian._openblas_library`), through :mod:`ctypes`, with the arguments scipy
passes, on one thread (:func:`_one_thread`), so the numbers are scipy's on one BLAS thread to
the last bit (``tests/inference/engines/test_lapack.py``):

- :func:`cholesky_lower` is ``scipy.linalg.cholesky(a, lower=True)``: scipy hands a C-ordered
  matrix to ``dpotrf`` as it lies, as the upper triangle of its Fortran-ordered transpose
  (the same matrix), and zeroes the other triangle;
- :func:`solve_triangular` is scipy's: ``dtrtrs`` on a Fortran-contiguous matrix as it is,
  on any other as a C-contiguous copy read as its transpose (other triangle, other
  ``trans``), the right-hand side copied to Fortran order (as scipy returns it);
  :func:`cho_solve_lower` is ``cho_solve((l, True), b)`` on a C-ordered factor (``dpotrs``,
  ``uplo = 'U'`` on its buffer);
- :func:`potri_lower` is ``scipy.linalg.lapack.dpotri(l, lower=1)`` (its f2py wrapper copies
  the factor to Fortran order first) and :func:`ger` is ``scipy.linalg.blas.dger`` with
  ``overwrite_a=1`` on a Fortran-ordered matrix.

Where that library cannot be found (a scipy that is not a Linux wheel) the scipy functions
themselves are called.
"""

from __future__ import annotations

import ctypes
import threading
from functools import cache

import numpy as np

from .linear_gaussian import _openblas_library

__all__ = ["available", "cho_solve_lower", "cholesky_lower", "ger", "potri_lower",
           "solve_lower", "solve_triangular"]

_P = ctypes.c_void_p


def _int(value: int):
    return ctypes.byref(ctypes.c_int(value))


def _char(value: bytes):
    return ctypes.c_char_p(value)


_ONE = ctypes.c_size_t(1)  # the hidden length of each character argument (gfortran)

#: ``openblas_set_num_threads_local`` is process-wide in scipy's OpenBLAS (0.3.31.dev: a count
#: set on one thread is read by all, checked): set, call and restore under one lock, so that
#: overlapping calls cannot restore each other's stale count.
_THREAD_COUNT_LOCK = threading.Lock()


@cache
def _routines():
    """``{name: function}`` from scipy's OpenBLAS, or None."""
    lib = _openblas_library()
    if lib is None:  # pragma: no cover - not a scipy wheel with its own OpenBLAS
        return None
    found = {}
    for name in ("dpotrf", "dtrtrs", "dpotrs", "dpotri", "dger"):
        function = getattr(lib, f"scipy_{name}_", None)
        if function is None:  # pragma: no cover - another build
            return None
        function.restype = None
        found[name] = function
    set_local = getattr(lib, "openblas_set_num_threads_local", None)
    for name in _ONE_THREAD:
        found[name] = _one_thread(found[name], set_local)
    return found


#: The routines run on the calling thread only: all of them. Threaded, OpenBLAS rounds some
#: of them differently from one thread (dpotrf at n = 150, dtrtrs at n >= 20: a few ulp), so
#: one thread also makes their bits independent of the machine's number of cores; they are
#: equal to scipy's on one BLAS thread (``test_lapack.py``).
_ONE_THREAD = ("dpotrf", "dtrtrs", "dpotrs", "dpotri", "dger")


def _one_thread(function, set_local):
    """``function`` run with OpenBLAS limited to the calling thread (when it can be asked).

    These routines serve small factors (k x k, k up to a few hundred) in loops. Left to
    OpenBLAS's threads, a 3 x 3 triangular solve with 12 right-hand sides took 8 ms instead of
    0.015 ms on the 2-core machine while another process kept a core busy (waking a thread
    that must wait for a core), and a 200 x 200 one with 500 sides 8 ms instead of 1.5 ms;
    the results were equal bit for bit there (but not always: :data:`_ONE_THREAD`).
    ``openblas_set_num_threads_local`` (OpenBLAS 0.3.27) returns the old count; in scipy's
    build it sets the library's count for every thread (checked), so another thread's BLAS
    call runs on one thread while a call here is under way. The loops already asked for
    one thread with threadpoolctl (``sbl._small_blas``), which limits only the libraries
    loaded at that moment: this library is loaded later, on first use.
    """
    if set_local is None:  # pragma: no cover - an older OpenBLAS
        return function
    set_local.restype = ctypes.c_int
    set_local.argtypes = [ctypes.c_int]

    def call(*args):
        with _THREAD_COUNT_LOCK:
            old = set_local(1)
            try:
                function(*args)
            finally:
                set_local(old)

    return call


def available() -> bool:
    """Whether the routines are called directly (else through scipy)."""
    return _routines() is not None


def _as_matrix(b: np.ndarray, n: int) -> np.ndarray:
    """A Fortran-ordered float64 copy of ``b`` as an ``n x k`` matrix, shapes checked.

    As scipy checks them: LAPACK would read past the end of a short buffer.
    """
    b = np.asarray(b, dtype=np.float64)
    if b.ndim not in (1, 2) or b.shape[0] != n:
        raise ValueError(f"shapes of a ({n}, {n}) and b {b.shape} are incompatible")
    return np.array(b.reshape(n, 1 if b.ndim == 1 else b.shape[1]), order="F", copy=True)


def _square(a: np.ndarray) -> int:
    """``n`` of a square ``a``; anything else is refused before LAPACK writes into it."""
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"expected a square matrix, got shape {a.shape}")
    return a.shape[0]


def cholesky_lower(a) -> np.ndarray:
    """The lower Cholesky factor of the symmetric positive-definite ``a`` (C-ordered).

    Parameters
    ----------
    a : array_like, shape (n, n)

    Returns
    -------
    numpy.ndarray
        ``L`` with ``a = L L'``, C-ordered, zeros above the diagonal.

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``a`` is not positive definite (as scipy).
    """
    routines = _routines()
    if routines is None:  # pragma: no cover
        from scipy.linalg import cholesky

        return cholesky(a, lower=True, check_finite=False)
    c = np.array(a, dtype=np.float64, order="C", copy=True)
    n = _square(c)
    if n == 0:
        return c
    info = ctypes.c_int(0)
    routines["dpotrf"](_char(b"U"), _int(n), c.ctypes.data_as(_P), _int(n), ctypes.byref(info),
                       _ONE)
    if info.value > 0:
        raise np.linalg.LinAlgError(
            f"{info.value}-th leading minor of the array is not positive definite")
    if info.value < 0:  # pragma: no cover - an argument error: a bug here
        raise ValueError(f"dpotrf: illegal value in argument {-info.value}")
    return np.tril(c)


def _factor_buffer(factor: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(factor, dtype=np.float64)


def solve_triangular(a, b, *, lower: bool = False, trans: bool = False) -> np.ndarray:
    """``scipy.linalg.solve_triangular(a, b, trans, lower)``: ``a x = b`` or ``a' x = b``.

    As scipy 1.18 does: a Fortran-contiguous ``a`` goes to ``dtrtrs`` as it is; any other
    (C-ordered, or a slice of either) as a C-contiguous copy, read by LAPACK as the transpose,
    so with the other triangle and the other ``trans``.

    Parameters
    ----------
    a : array_like, shape (n, n)
        Triangular; only the triangle named by ``lower`` is read.
    b : array_like, shape (n,) or (n, k)
    lower : bool
    trans : bool
        Solve with ``a'``.

    Returns
    -------
    numpy.ndarray
        Shaped like ``b`` (Fortran-ordered when 2-D, as scipy's).
    """
    routines = _routines()
    if routines is None:  # pragma: no cover
        from scipy import linalg

        return linalg.solve_triangular(a, b, trans=int(trans), lower=lower,
                                       check_finite=False)
    a = np.asarray(a, dtype=np.float64)
    if a.flags.f_contiguous and not a.flags.c_contiguous:
        uplo, op = (b"L" if lower else b"U"), (b"T" if trans else b"N")
    else:
        a = np.ascontiguousarray(a)
        uplo, op = (b"U" if lower else b"L"), (b"N" if trans else b"T")
    n = _square(a)
    b = np.asarray(b)
    x = _as_matrix(b, n)
    info = ctypes.c_int(0)
    if n and x.shape[1]:
        routines["dtrtrs"](_char(uplo), _char(op), _char(b"N"), _int(n), _int(x.shape[1]),
                           a.ctypes.data_as(_P), _int(n), x.ctypes.data_as(_P), _int(n),
                           ctypes.byref(info), _ONE, _ONE, _ONE)
    if info.value > 0:
        raise np.linalg.LinAlgError(
            f"singular matrix: resolution failed at diagonal {info.value - 1}")
    return x.reshape(b.shape, order="F") if b.ndim == 1 else x


def solve_lower(factor, b) -> np.ndarray:
    """``solve_triangular(factor, b, lower=True)`` (:func:`solve_triangular`).

    Parameters
    ----------
    factor : array_like, shape (n, n)
        Lower triangular.
    b : array_like, shape (n,) or (n, k)

    Returns
    -------
    numpy.ndarray
    """
    return solve_triangular(factor, b, lower=True)


def cho_solve_lower(factor, b) -> np.ndarray:
    """``cho_solve((factor, True), b)``: ``x`` with ``L L' x = b``.

    Parameters
    ----------
    factor : array_like, shape (n, n)
        The lower Cholesky factor (:func:`cholesky_lower`).
    b : array_like, shape (n,) or (n, k)

    Returns
    -------
    numpy.ndarray
        Shaped like ``b``.
    """
    routines = _routines()
    if routines is None:  # pragma: no cover
        from scipy.linalg import cho_solve

        return cho_solve((factor, True), b, check_finite=False)
    factor = _factor_buffer(factor)
    n = _square(factor)
    b = np.asarray(b)
    x = _as_matrix(b, n)
    info = ctypes.c_int(0)
    if n and x.shape[1]:
        routines["dpotrs"](_char(b"U"), _int(n), _int(x.shape[1]), factor.ctypes.data_as(_P),
                           _int(n), x.ctypes.data_as(_P), _int(n), ctypes.byref(info), _ONE)
    if info.value != 0:  # pragma: no cover - an argument error: a bug here
        raise ValueError(f"dpotrs: illegal value in argument {-info.value}")
    return x.reshape(b.shape, order="F") if b.ndim == 1 else x


def potri_lower(factor) -> tuple[np.ndarray, int]:
    """``scipy.linalg.lapack.dpotri(factor, lower=1)``: the inverse from the lower factor.

    Parameters
    ----------
    factor : array_like, shape (n, n)

    Returns
    -------
    inv : numpy.ndarray
        Fortran-ordered; its lower triangle holds the inverse, the rest is ``factor``'s.
    info : int
        LAPACK's: 0 on success.
    """
    routines = _routines()
    if routines is None:  # pragma: no cover
        from scipy.linalg.lapack import dpotri

        return dpotri(factor, lower=1)
    f = np.array(factor, dtype=np.float64, order="F", copy=True)
    n = _square(f)
    info = ctypes.c_int(0)
    routines["dpotri"](_char(b"L"), _int(n), f.ctypes.data_as(_P), _int(max(n, 1)),
                       ctypes.byref(info), _ONE)
    return f, info.value


def ger(alpha: float, x, y, a: np.ndarray) -> np.ndarray:
    """``a += alpha x y'`` in place (``scipy.linalg.blas.dger(..., overwrite_a=1)``).

    Parameters
    ----------
    alpha : float
    x, y : numpy.ndarray, shape (m,) and (n,)
    a : numpy.ndarray, shape (m, n), float64, Fortran-ordered

    Returns
    -------
    numpy.ndarray
        ``a`` itself, updated.
    """
    routines = _routines()
    if routines is None or not (a.flags.f_contiguous and a.dtype == np.float64):
        from scipy.linalg.blas import dger  # pragma: no cover - as scipy would (a copy)

        return dger(alpha, x, y, a=a, overwrite_a=1)
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    m, n = a.shape
    if x.size != m or y.size != n:
        raise ValueError(f"ger: x {x.shape}, y {y.shape} against a {a.shape}")
    if m and n:
        routines["dger"](_int(m), _int(n), ctypes.byref(ctypes.c_double(alpha)),
                         x.ctypes.data_as(_P), _int(1), y.ctypes.data_as(_P), _int(1),
                         a.ctypes.data_as(_P), _int(max(m, 1)))
    return a
