"""``logsumexp``, ``gammaln`` and ``digamma`` without :mod:`scipy.special`.

Importing :mod:`scipy.special` costs more CPU than the whole of a small ``bayescheck fit``
(it also imports :mod:`scipy.linalg`).

:func:`logsumexp` gives the numbers :func:`scipy.special.logsumexp` gives. It is the same
computation as scipy 1.18's for real arrays without weights (Higham
et al., "Accurately computing the log-sum-exp and softmax functions", IMA J. Numer. Anal.
41, 2021): the largest term is taken out of the sum, the rest goes through ``log1p``, ties
for the largest are counted; where that is not finite the direct ``log(sum(exp(a)))`` is
used. Same operations in the same order, so the results are equal to the last bit
(``tests/inference/engines/test_special.py`` compares the two).

:func:`gammaln` is :func:`math.lgamma` (CPython's Lanczos approximation) element by element,
not scipy's Cephes ``lgam``: the two agree to a few units in the last place (at most 8 ulp of
``max(|value|, 1)`` on 300,000 arguments from 0.01 to 1e5; on the integers 3-399 both are
within 3.2 ulp of log((n-1)!), scipy 0.53 ulp and math 0.48 ulp on average), so the log
evidences built from it moved in their last digits when it replaced scipy's
(benchmarks/RESULTS.md lists which).

:func:`digamma` takes positive arguments up to 10 by the recurrence psi(x) = psi(x + 1) - 1/x
and evaluates the asymptotic series psi(z) ~ log z - 1/(2z) - sum_k B_2k / (2k z^2k)
(Abramowitz & Stegun 6.3.5 and 6.3.18) there; it is within 4 ulp of ``max(|psi|, 1)`` of the
exact psi(n) and psi(n + 1/2), n < 400, and within 7 ulp of scipy's Cephes ``psi`` on
positive arguments from 1e-300 to 1e300 (``tests/inference/engines/test_special.py``). Zero,
negative and non-finite arguments are left to scipy.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["digamma", "gammaln", "logsumexp"]


def _lgamma(x: float) -> float:
    try:
        return math.lgamma(x)
    except ValueError:  # a pole (0, -1, -2, ...): scipy's value
        return math.inf
    except OverflowError:  # |x| near the float maximum: log |Gamma| exceeds it, as in scipy
        return math.inf


_LGAMMA = np.frompyfunc(_lgamma, 1, 1)


def gammaln(x) -> np.ndarray | float:
    """``log |Gamma(x)|`` element by element, ``inf`` at the poles.

    Parameters
    ----------
    x : array_like of real numbers

    Returns
    -------
    numpy.ndarray or float
        Float64, shaped like ``x``.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:
        return np.float64(_lgamma(float(x)))
    return _LGAMMA(x).astype(np.float64)


def logsumexp(a, axis: int | None = None) -> np.ndarray | float:
    """``log(sum(exp(a)))`` along ``axis`` (all elements when None), computed stably.

    Parameters
    ----------
    a : array_like of real numbers
    axis : int, optional

    Returns
    -------
    numpy.ndarray or numpy.float64
        Shaped like ``a`` without ``axis``; a scalar when that leaves no dimension.
    """
    a = np.asarray(a)
    if not np.issubdtype(a.dtype, np.floating):
        a = a.astype(np.float64)
    a = np.atleast_1d(a)
    axes = tuple(range(a.ndim)) if axis is None else axis
    if a.size == 0:
        shape = np.asarray(a.shape)
        shape[axes] = 1
        out = np.full(tuple(shape), -np.inf, dtype=a.dtype)
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out_inf = np.log(np.sum(np.exp(a), axis=axes, keepdims=True))
            a_max = np.max(a, axis=axes, keepdims=True)
            top = a == a_max
            rest = a.copy()
            rest[top] = -np.inf
            m = np.sum(top.astype(a.dtype), axis=axes, keepdims=True, dtype=a.dtype)
            s = np.sum(np.exp(rest - a_max), axis=axes, keepdims=True, dtype=a.dtype)
            s = np.where(s == 0, s, s / m)
            out = np.log1p(s) + np.log(m) + a_max
        out = np.where(np.isfinite(out), out, out_inf)
    out = np.squeeze(out, axis=axes)
    return out[()] if out.ndim == 0 else out


#: B_2k / (2k), k = 1..8: the asymptotic series of digamma (A&S 6.3.18), highest last.
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12,
                   -3617 / 8160)


def digamma(x) -> np.ndarray | float:
    """The digamma function psi(x) = d/dx log Gamma(x), element by element.

    Parameters
    ----------
    x : array_like of real numbers

    Returns
    -------
    numpy.ndarray or numpy.float64
        Float64, shaped like ``x``. Positive finite arguments are computed here; any other
        argument sends the whole call to :func:`scipy.special.digamma`.
    """
    x = np.asarray(x, dtype=np.float64)
    if not (np.all(x > 0) and np.all(np.isfinite(x))):
        from scipy import special  # here: only for what this function does not cover

        return special.digamma(x)
    z = np.array(x, ndmin=1)
    acc = np.zeros_like(z)
    small = z < 10.0
    while small.any():
        acc[small] -= 1.0 / z[small]
        z[small] += 1.0
        small = z < 10.0
    with np.errstate(over="ignore"):  # z * z overflows for z > 1e154: w is then 0, as it should
        w = 1.0 / (z * z)
    series = np.zeros_like(z)
    for c in _DIGAMMA_SERIES[::-1]:
        series = series * w + c
    out = acc + (np.log(z) - 0.5 / z - series * w)
    return out.reshape(x.shape)[()] if x.ndim == 0 else out.reshape(x.shape)
