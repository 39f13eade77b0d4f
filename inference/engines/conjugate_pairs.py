"""Gamma conjugate updates of Poisson and Exponential rates, and the counting constants.

Gamma-Poisson
    ``lam ~ Gamma(a, b)`` (shape a, rate b) and ``y_i ~ Poisson(t_i lam)`` with known
    exposures ``t_i > 0``: the posterior is ``Gamma(a + sum y_i, b + sum t_i)``, and

        log p(y) = a log b - a' log b' + lgamma(a') - lgamma(a)
                   + sum (y_i log t_i - lgamma(y_i + 1))

    (the Poisson likelihood ``(t lam)^y exp(-t lam) / y!`` times the Gamma density,
    integrated over lam).
Gamma-Exponential
    ``y_i ~ Exponential(t_i lam)``: the posterior is ``Gamma(a + n, b + sum t_i y_i)``, and
    ``log p(y) = a log b - a' log b' + lgamma(a') - lgamma(a) + sum log t_i``.

Both updates are sums, so they merge over batches by adding statistics. The functions are
elementwise over arrays of independent rates (one per group).

The constants that the Binomial and Multinomial likelihoods carry and the Bernoulli and
Categorical sequences do not: :func:`log_binomial_coefficients`,
:func:`log_multinomial_coefficients`.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "gamma_exponential",
    "gamma_poisson",
    "gamma_rate_log_evidence",
    "log_binomial_coefficients",
    "log_multinomial_coefficients",
]


def _gammaln(x):
    from scipy.special import gammaln

    return gammaln(x)


def gamma_poisson(shape0, rate0, *, events, exposure):
    """Posterior Gamma(shape, rate) of Poisson rates.

    Parameters
    ----------
    shape0, rate0 : float or numpy.ndarray
        The prior ``Gamma(a, b)`` (rate parameterisation), elementwise.
    events : float or numpy.ndarray
        ``sum y_i`` per rate.
    exposure : float or numpy.ndarray
        ``sum t_i`` per rate (the number of observations when every ``t_i`` is 1).

    Returns
    -------
    tuple of numpy.ndarray
        ``(a + events, b + exposure)``.
    """
    return (np.asarray(shape0, dtype=float) + events, np.asarray(rate0, dtype=float) + exposure)


def gamma_exponential(shape0, rate0, *, count, total):
    """Posterior Gamma(shape, rate) of Exponential rates.

    Parameters
    ----------
    shape0, rate0 : float or numpy.ndarray
        The prior ``Gamma(a, b)``, elementwise.
    count : float or numpy.ndarray
        Observations per rate.
    total : float or numpy.ndarray
        ``sum t_i y_i`` per rate.

    Returns
    -------
    tuple of numpy.ndarray
        ``(a + count, b + total)``.
    """
    return (np.asarray(shape0, dtype=float) + count, np.asarray(rate0, dtype=float) + total)


def gamma_rate_log_evidence(shape0, rate0, shape, rate):
    """The rate-dependent part of log p(y) of a Gamma update, summed over the rates.

    ``sum (a log b - a' log b' + lgamma(a') - lgamma(a))``; add the observations' own terms
    (:func:`gamma_poisson`, :func:`gamma_exponential`).
    """
    a0, b0 = np.asarray(shape0, dtype=float), np.asarray(rate0, dtype=float)
    a, b = np.asarray(shape, dtype=float), np.asarray(rate, dtype=float)
    return float(np.sum(a0 * np.log(b0) - a * np.log(b) + _gammaln(a) - _gammaln(a0)))


def log_binomial_coefficients(n, k) -> float:
    """``sum log C(n_i, k_i)``."""
    n, k = np.asarray(n, dtype=float), np.asarray(k, dtype=float)
    return float(np.sum(_gammaln(n + 1) - _gammaln(k + 1) - _gammaln(n - k + 1)))


def log_multinomial_coefficients(counts) -> float:
    """``sum log (n_i! / prod_k c_ik!)`` over the rows of ``counts`` (last axis: categories)."""
    c = np.asarray(counts, dtype=float)
    return float(np.sum(_gammaln(c.sum(axis=-1) + 1)) - np.sum(_gammaln(c + 1)))
