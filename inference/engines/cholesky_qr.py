"""A batch's triangular root by preconditioned Cholesky QR, guarded, else Householder QR.

The statistic of a regression batch is an upper-triangular R with R'R = Z'Z, Z = [X y]
(:class:`~.linear_gaussian.RegressionStats`). Householder QR gives it backward stable, at
about 2mn^2 flops in panels that are partly matrix-vector work. For a tall batch (m rows
much more than n columns) this module gets the same root with matrix-matrix work only:

1. P = the Householder R of a sample of k rows (one in each of k equal strata of the
   batch, :func:`sample_index`; k about 10n): a preconditioner, cheap (k << m);
2. Y = Z P^-1 by a triangular solve (BLAS ``dtrsm``, on 2048 rows at a time);
3. G = Y'Y (BLAS ``dsyrk``) and its Cholesky factor C (LAPACK ``dpotrf``), C'C = G;
4. R = C P, so R'R = P'Y'YP = Z'Z.

This is the second step of CholeskyQR2 (Fukaya, Nakatsukasa, Yanagisawa, Yamamoto 2014,
"CholeskyQR2: a simple and communication-avoiding algorithm for computing a tall-skinny QR
factorization") with the first step's Cholesky factor replaced by the Householder R of a
row sample, as randomised preconditioned Cholesky QR does with a sketch (Fan, Guo, Lin
2021; Balabanov 2022, "Randomized Cholesky QR factorizations"). Forming a Gram matrix squares
a condition number: the rounding error of G is about eps |Y|^2, so Y must be well
conditioned for C to be accurate. Yamamoto, Nakatsukasa, Yanagisawa, Fukaya (2015,
"Roundoff error analysis of the CholeskyQR2 algorithm") show that the second step is then
as accurate as Householder QR; the loss grows with cond(Y)^2 eps. When the sample is
representative of the batch, Y is nearly orthogonal up to scale (cond(Y) about 1.2 on
Gaussian rows, about 2 on Student-t(3) or log-normal ones, whatever the condition of Z
itself: the sample's R carries the ill-conditioning, and the triangular solve removes it
backward stably row by row).

The guard: the root is used only when P has no negligible pivot, the Cholesky succeeds and
LAPACK's estimate of cond_1(C) = cond(Y) (``dtrcon``) is at most :data:`MAX_COND`;
otherwise the batch is factored by Householder QR (:func:`~.linear_gaussian.triangular_root`),
as before. :data:`MAX_COND` = 10 costs at most about one digit against Householder in the
worst-case bounds (cond(P) cond(Y)^2 eps against about cond(P) cond(Y) eps); the tests
(``tests/inference/engines/test_cholesky_qr.py``) measure no loss on accepted batches, and
show a refused one losing 4 digits when the guard is switched off.

A refused batch costs the Gram work and the Householder QR (about 1.8x Householder alone
on 10,000 x 51): on Gaussian, Student-t(3), log-normal or sparse 0/1 features cond(Y) is
1.2-2.2 and nothing is refused; on Cauchy features (a sample of 10n rows misses the largest
values) every batch is. Stopping after the first rows when they look badly conditioned was
tried and dropped: on sorted rows the first rows are not representative either, and it
refused batches the whole check accepts.

Short batches (fewer than :data:`MIN_ROWS_PER_SAMPLE` times the sample) are factored by
Householder QR: there the sample would be most of the batch. Every call releases the GIL
(ctypes), so a stream's reading threads run beside it, and it needs no scipy import (the
routines are taken from scipy's OpenBLAS library, as the Householder QR's are).
"""

from __future__ import annotations

import ctypes
from functools import cache

import numpy as np

from .linear_gaussian import _openblas_library, triangular_root

__all__ = ["MAX_COND", "MIN_ROWS_PER_SAMPLE", "batch_root", "gram_root", "sample_index",
           "sample_rows"]

#: Largest estimated cond(Y) of the preconditioned batch accepted by :func:`batch_root`.
MAX_COND = 10.0
#: A batch goes the Gram way only with at least this many times its sample's rows.
MIN_ROWS_PER_SAMPLE = 4


def sample_rows(n_columns: int) -> int:
    """Rows in the preconditioner's sample for ``n_columns`` columns: 10 per column, >= 256."""
    return max(256, 10 * n_columns)


def sample_index(m: int, k: int) -> np.ndarray:
    """``k`` of ``m`` row numbers, one in each of ``k`` equal strata, in order.

    Stratified, so that sorted rows are sampled over their whole range, and placed within
    each stratum by the fractional parts of j times the golden ratio (a low-discrepancy
    sequence: rows repeating with a period are not sampled in step with it). A fixed function
    of ``(m, k)``, so a batch's statistic depends on its rows only.
    """
    edges = np.arange(k + 1) * m // k
    jitter = (np.arange(k) * 0.6180339887498949) % 1.0
    return edges[:-1] + (jitter * (edges[1:] - edges[:-1])).astype(np.intp)


@cache  # on first use
def _blas():
    """``dtrsm``, ``dsyrk``, ``dpotrf``, ``dtrcon`` of scipy's OpenBLAS via ctypes, or None."""
    lib = _openblas_library()
    if lib is None:  # pragma: no cover - not a scipy wheel with its own OpenBLAS
        return None
    try:
        return tuple(getattr(lib, f"scipy_{name}_")
                     for name in ("dtrsm", "dsyrk", "dpotrf", "dtrcon"))
    except AttributeError:  # pragma: no cover - another build
        return None


def _ref(value, kind):
    return ctypes.byref(kind(value))


# Fortran character arguments: one byte each; the hidden lengths (1) follow the others.
_ONE = ctypes.c_size_t(1)


#: Rows of the block solved and added to the Gram matrix at a time (a buffer that stays in
#: the cache, and the block itself is left as it was, for the Householder fallback).
CHUNK_ROWS = 2048


def gram_root(Z: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, float] | None:
    """R = C P with C'C = (Z P^-1)'(Z P^-1), and the estimated cond(Z P^-1).

    ``Z`` is not modified: it is solved and accumulated :data:`CHUNK_ROWS` rows at a time
    in a buffer.

    Parameters
    ----------
    Z : numpy.ndarray
        Shape ``(m, n)``, float64.
    P : numpy.ndarray
        Shape ``(n, n)``, upper triangular and nonsingular (any preconditioner: the result
        is a root of Z'Z in exact arithmetic whatever it is; its accuracy depends on
        cond(Z P^-1)).

    Returns
    -------
    (numpy.ndarray, float) or None
        The upper-triangular root (non-negative diagonal) and LAPACK's 1-norm condition
        estimate of C, which is cond(Z P^-1) to within a small factor; None when the BLAS
        cannot be had or the Cholesky factorisation fails (G not numerically positive
        definite).
    """
    routines = _blas()
    if routines is None:  # pragma: no cover - not a scipy wheel with its own OpenBLAS
        return None
    trsm, syrk, potrf, trcon = routines
    m, n = Z.shape
    p = np.asfortranarray(P, dtype=np.float64)
    c_int, c_dbl, ptr = ctypes.c_int, ctypes.c_double, ctypes.c_void_p
    rows = min(CHUNK_ROWS, m)
    buf = np.empty((rows, n), order="F")
    g = np.zeros((n, n), order="F")
    for lo in range(0, m, rows):
        r = min(rows, m - lo)
        buf[:r] = Z[lo:lo + r]
        trsm(b"R", b"U", b"N", b"N", _ref(r, c_int), _ref(n, c_int), _ref(1.0, c_dbl),
             ptr(p.ctypes.data), _ref(n, c_int), ptr(buf.ctypes.data), _ref(rows, c_int),
             _ONE, _ONE, _ONE, _ONE)
        syrk(b"U", b"T", _ref(n, c_int), _ref(r, c_int), _ref(1.0, c_dbl),
             ptr(buf.ctypes.data), _ref(rows, c_int), _ref(1.0, c_dbl), ptr(g.ctypes.data),
             _ref(n, c_int), _ONE, _ONE)
    info = c_int(0)
    potrf(b"U", _ref(n, c_int), ptr(g.ctypes.data), _ref(n, c_int), ctypes.byref(info), _ONE)
    if info.value != 0:
        return None
    c = np.triu(g)
    if not np.all(np.isfinite(c)):
        return None
    rcond, work, iwork = c_dbl(0.0), np.empty(3 * n), np.empty(n, dtype=np.int32)
    trcon(b"1", b"U", b"N", _ref(n, c_int), ptr(c.ctypes.data), _ref(n, c_int),
          ctypes.byref(rcond), ptr(work.ctypes.data), ptr(iwork.ctypes.data),
          ctypes.byref(info), _ONE, _ONE, _ONE)
    cond = np.inf if info.value != 0 or rcond.value <= 0 else 1.0 / rcond.value
    return c @ p, cond


def batch_root(Z: np.ndarray, *, overwrite: bool = False, max_cond: float = MAX_COND,
               sample: int | None = None) -> np.ndarray:
    """A batch's root R (R'R = Z'Z, upper triangular, non-negative diagonal).

    Preconditioned Cholesky QR (:func:`gram_root`; the preconditioner is the Householder R
    of ``sample`` rows, :func:`sample_index`, default :func:`sample_rows`) when the batch is
    tall enough and the guard holds (see the module's description); Householder QR
    (:func:`~.linear_gaussian.triangular_root`) otherwise.

    Parameters
    ----------
    Z : numpy.ndarray
        Shape ``(m, n)``; column-major float64 avoids a copy.
    overwrite : bool
        Let the factorisation overwrite ``Z``.
    max_cond : float
        Largest estimated cond(Z P^-1) accepted (``inf`` switches the guard off: for the
        tests that show what it guards against).
    sample : int, optional
        Rows in the preconditioner's sample.

    Returns
    -------
    numpy.ndarray
        Shape ``(n, n)``.
    """
    m, n = Z.shape
    k = sample_rows(n) if sample is None else sample
    if n == 0 or k < n or m < MIN_ROWS_PER_SAMPLE * k or _blas() is None:
        return triangular_root(Z, overwrite=overwrite)
    P = triangular_root(Z[sample_index(m, k)])  # a copy of the sampled rows, factored
    pivots, norms = np.abs(np.diag(P)), np.sqrt(np.sum(P * P, axis=0))
    # A column (nearly) dependent on the others in the sample: no preconditioner.
    if norms.min() > 0 and np.min(pivots / norms) >= 100 * n * np.finfo(float).eps:
        done = gram_root(Z, P)
        if done is not None and done[1] <= max_cond:
            return done[0]
    return triangular_root(Z, overwrite=overwrite)
