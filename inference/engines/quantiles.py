"""Beta, Student-t and normal quantiles with numpy and :mod:`math` only.

Importing :mod:`scipy.special` (it imports :mod:`scipy.linalg`) costs more CPU than the whole
of a small ``bayescheck fit``, whose only use of it is often a few quantiles. These are
computed here instead:

- the regularised incomplete beta function ``I_x(a, b)`` and its complement by the continued
  fraction of DLMF 8.17.22 (evaluated by the modified Lentz method), on the side of the mean
  where it converges fast (``I_x(a, b) = 1 - I_{1-x}(b, a)``), with the factor
  ``x^a (1-x)^b / B(a, b)`` taken in the form of DiDonato and Morris (ACM TOMS 18, 1992,
  "Algorithm 708", their ``brcomp``): Stirling's series with its remainder
  (DLMF 5.11.1, Bernoulli numbers) so that the large terms cancel analytically, not in
  floating point;
- its inverse by Halley's method inside a bracket that shrinks at every step (a step that
  leaves it is replaced by bisection), always solving for the smaller of ``x`` and ``1 - x``
  and for the smaller of ``p`` and ``1 - p``, so both are carried to relative precision;
- the Student-t quantile through the same inverse (the t distribution function as an
  incomplete beta, Abramowitz and Stegun 26.7.1: ``P(|T| > t) = I_{df/(df+t^2)}(df/2, 1/2)``),
  solved for ``y = t^2 / (df + t^2)`` and its complement, so ``t = sqrt(df y / (1 - y))``
  loses nothing;
- the normal quantile by Halley's method on :func:`math.erfc` (:func:`math.erf` near the centre).

Verified domain: Beta shapes in [:data:`MIN_SHAPE`, :data:`MAX_SHAPE`], t degrees of freedom in
[:data:`MIN_DF`, :data:`MAX_DF`], probabilities in [:data:`MIN_P`, 1 - :data:`MIN_P`].
``tests/inference/engines/test_quantiles.py`` checks it against exact roots (integer shapes and
even df, in 50-digit decimal arithmetic; df 1 and 2 in closed form): within
:data:`VERIFIED_RTOL` (4e-15; Beta mostly 1-2 ulp; t up to 3.3e-15 at 1000 df); and against
scipy 1.18 (``betaincinv``, ``stdtrit``, ``ndtri``) on a wide grid and a Hypothesis property,
within 1e-13, where the larger differences are scipy's own error (its ``betaincinv`` up to 9e-14
in far tails, its ``stdtrit`` up to 4e-13). On non-integer shapes, which have no closed-form
root, a review against 40-digit mpmath roots found up to 1.4e-14 (Beta(0.547, 9.99) at
0.538, both shapes under 10: the prefactor exp(lgamma(c) - lgamma(a) - lgamma(b)) carries
lgamma's absolute error) and 5.6e-15 for t at 1000 df, 0.01: :data:`VERIFIED_RTOL` holds for
the exact roots above, not everywhere in the domain; ``test_quantiles.py`` pins these cases
at 2e-14. Past ``MAX_SHAPE`` the error grows for a small shape
against a large one (the continued fraction at ``1 - x`` near 1: 5e-15 at Beta(2, 1000)), hence
the limit.
Anything outside the domain, and any case where an iteration does not settle, is computed by
scipy (imported then), so no answer silently loses accuracy.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MAX_DF", "MAX_OWN_VALUES", "MAX_SHAPE", "MIN_DF", "MIN_P", "MIN_SHAPE", "VERIFIED_RTOL",
           "beta_ppf", "betainc", "norm_ppf", "t_ppf"]

MIN_SHAPE = 0.5
MAX_SHAPE = 300.0
MIN_DF = 1.0
MAX_DF = 1000.0
MIN_P = 1e-12
VERIFIED_RTOL = 4e-15
#: More distinct quantiles than this in one call are all left to scipy (see _elementwise).
MAX_OWN_VALUES = 1000

_EPS = 2.220446049250313e-16
_HALF_LOG_2PI = 0.9189385332046728  # log(2 pi) / 2
_SQRT_HALF = 0.7071067811865476
# Stirling's series of log Gamma: B_2k / (2k (2k - 1)), k = 1..9 (DLMF 5.11.1, 24.2.2)
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400, 43867 / 244188)
_STIRLING_MIN = 10.0  # from here the remainder after 9 terms is below 1e-18
_MAX_CF_TERMS = 20000
_MAX_STEPS = 200


class NotConverged(ArithmeticError):
    """An iteration that did not settle: the caller asks scipy instead."""


def _stirling_remainder(z: float) -> float:
    """``log Gamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2)`` for ``z >= 10``."""
    w = 1.0 / (z * z)
    total = 0.0
    for c in reversed(_STIRLING):
        total = total * w + c
    return total / z


def _log1pmx(t: float) -> float:
    """``log(1 + t) - t``."""
    if abs(t) < 0.125:  # the series: no cancellation between log1p(t) and t
        power = t * t
        total, k = -0.5 * power, 2
        while True:
            k += 1
            power *= -t
            new = total - power / k
            if new == total:
                return total
            total = new
    return math.log1p(t) - t


def _log_x_y(x: float, y: float) -> tuple[float, float]:
    """``(log x, log y)`` for ``x + y = 1``, each from the operand that is exact."""
    lx = math.log(x) if x <= 0.5 else math.log1p(-y)
    ly = math.log(y) if y <= 0.5 else math.log1p(-x)
    return lx, ly


def _power_terms(a: float, b: float, x: float, y: float) -> float:
    """``x^a y^b / B(a, b)`` for ``x + y = 1`` (DiDonato and Morris's ``brcomp``)."""
    c = a + b
    if a >= _STIRLING_MIN and b >= _STIRLING_MIN:
        lam = a - c * x if x <= y else c * y - b  # a y - b x, from the exact operand
        exponent = (a * _log1pmx(-lam / a) + b * _log1pmx(lam / b)
                    + _stirling_remainder(c) - _stirling_remainder(a)
                    - _stirling_remainder(b))
        return math.sqrt(a * b / c) * math.exp(exponent - _HALF_LOG_2PI)
    lx, ly = _log_x_y(x, y)
    if max(a, b) >= _STIRLING_MIN:
        # log B(a, b) = log Gamma(s) - [log Gamma(c) - log Gamma(L)], the bracket by
        # Stirling's series so that the large log Gamma values never meet
        small, large = (a, b) if a < b else (b, a)
        lsmall, llarge = (lx, ly) if a < b else (ly, lx)
        log_ratio = ((large - 0.5) * math.log1p(small / large) + small * math.log(c) - small
                     + _stirling_remainder(c) - _stirling_remainder(large))
        exponent = (small * lsmall + large * llarge + log_ratio - math.lgamma(small))
        return math.exp(exponent)
    return math.exp(a * lx + b * ly + math.lgamma(c) - math.lgamma(a) - math.lgamma(b))


def _continued_fraction(a: float, b: float, x: float, y: float) -> float:
    """The continued fraction of ``I_x(a, b) a B(a, b) / (x^a y^b)`` (DLMF 8.17.22)."""
    tiny = 1e-300
    # its first denominator 1 - (a + b) x / (a + 1), written so that an x near 1 (rounded,
    # when y is the exact operand) does not cancel
    c_, d = 1.0, (a * y - b * x + 1.0) / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, _MAX_CF_TERMS):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
                    -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c_ = 1.0 + num / c_
            if abs(c_) < tiny:
                c_ = tiny
            h *= d * c_
        if abs(d * c_ - 1.0) <= _EPS:
            return h
    raise NotConverged(f"incomplete beta continued fraction, a={a}, b={b}, x={x}")


def _ibeta_pair(a: float, b: float, x: float, y: float) -> tuple[float, float, float]:
    """``(I_x(a, b), 1 - I_x(a, b), x^a y^b / B(a, b))`` for ``x + y = 1``.

    The one computed by the continued fraction carries relative precision; the other is
    1 minus it (relative precision only while it is the larger).
    """
    if x <= 0.0:
        return 0.0, 1.0, 0.0
    if y <= 0.0:
        return 1.0, 0.0, 0.0
    front = _power_terms(a, b, x, y)
    if x < (a + 1.0) / (a + b + 2.0):
        lower = front * _continued_fraction(a, b, x, y) / a
        return lower, 1.0 - lower, front
    upper = front * _continued_fraction(b, a, y, x) / b
    return 1.0 - upper, upper, front


def _in_shape_domain(*shapes: float) -> bool:
    return all(MIN_SHAPE <= s <= MAX_SHAPE for s in shapes)


def _first_guess(a: float, b: float, tail: float) -> float:
    """A start for the inverse: the normal approximation, or the lower tail's power law."""
    try:
        if a > 5.0 and b > 5.0:
            c = a + b
            z = _norm_ppf_scalar(min(max(tail, MIN_P), 1.0 - MIN_P))
            guess = a / c + z * math.sqrt(a * b / (c * c * (c + 1.0)))
            if 0.0 < guess < 0.5:
                return guess
        log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
        return math.exp((math.log(tail) + math.log(a) + log_beta) / a)  # I_u ~ u^a / (a B)
    except (ValueError, OverflowError):
        return 0.25


def _solve(a: float, b: float, p: float, upper: bool) -> float:
    """``u <= 1/2`` with ``I_u(a, b) = p`` (``1 - I_u(a, b) = p`` when ``upper``).

    Requires the root to lie in (0, 1/2]: the caller mirrors the problem otherwise.
    """
    lo, hi = 0.0, 0.5
    tail = 1.0 - p if upper else p  # the lower-tail probability at the root
    u = _first_guess(a, b, tail)
    if not lo < u < hi:
        u = 0.25
    previous = math.inf
    for _ in range(_MAX_STEPS):
        lower, upper_p, front = _ibeta_pair(a, b, u, 1.0 - u)
        r = (p - upper_p) if upper else (lower - p)  # increasing in u
        if r == 0.0:
            return u
        if r < 0.0:
            lo = u
        else:
            hi = u
        density = front / (u * (1.0 - u))
        step = r / density if density > 0.0 else math.inf
        if math.isfinite(step):
            curvature = (a - 1.0) / u - (b - 1.0) / (1.0 - u)
            denominator = 1.0 - 0.5 * step * curvature
            if denominator > 0.5:  # Halley's correction only while it is a correction
                step /= denominator
        new = u - step
        # bisect when the step leaves the bracket, or when it is not at most half the last
        # one (Newton crawling from far out in a tail: as Numerical Recipes' rtsafe)
        if not (lo < new < hi) or not math.isfinite(new) or abs(new - u) > 0.5 * previous:
            new = math.sqrt(lo * hi) if lo > 0.0 and hi > 4.0 * lo else (
                hi / 64.0 if lo == 0.0 else 0.5 * (lo + hi))
            previous = hi - lo  # the next Newton step is judged against the bracket
        else:
            previous = abs(new - u)
        if abs(new - u) <= 2.0 * _EPS * u:
            return new
        u = new
    raise NotConverged(f"incomplete beta inverse, a={a}, b={b}, p={p}")


def _beta_quantile_pair(a: float, b: float, p: float, q: float) -> tuple[float, float]:
    """``(x, 1 - x)`` with ``I_x(a, b) = p``; ``q = 1 - p`` given exactly by the caller."""
    lower, _, _ = _ibeta_pair(a, b, 0.5, 0.5)
    target_upper = q < p  # solve for the smaller probability, carried exactly
    if lower >= p:  # root at x <= 1/2
        u = _solve(a, b, q, True) if target_upper else _solve(a, b, p, False)
        return u, 1.0 - u
    # mirrored: 1 - x = v <= 1/2 with I_v(b, a) = q
    v = _solve(b, a, p, True) if not target_upper else _solve(b, a, q, False)
    return 1.0 - v, v


def _beta_ppf_scalar(q: float, a: float, b: float) -> float:
    if not (_in_shape_domain(a, b) and MIN_P <= q <= 1.0 - MIN_P):
        raise NotConverged("outside the verified domain")
    return _beta_quantile_pair(a, b, q, 1.0 - q)[0]


def _t_ppf_scalar(q: float, df: float) -> float:
    if not (MIN_DF <= df <= MAX_DF and MIN_P <= q <= 1.0 - MIN_P):
        raise NotConverged("outside the verified domain")
    if q == 0.5:
        return 0.0
    tail = q if q < 0.5 else 1.0 - q  # exact for q >= 1/2
    # P(|T| > t) = 2 tail = 1 - I_y(1/2, df/2) with y = t^2 / (df + t^2)
    two_tail = 2.0 * tail
    y, x = _beta_quantile_pair(0.5, 0.5 * df, 1.0 - two_tail, two_tail)
    t = math.sqrt(df * y / x)
    return -t if q < 0.5 else t


def _norm_ppf_scalar(q: float) -> float:
    if not MIN_P <= q <= 1.0 - MIN_P:
        raise NotConverged("outside the verified domain")
    if q == 0.5:
        return 0.0
    p = q if q < 0.5 else 1.0 - q  # exact for q >= 1/2
    # a first guess (Abramowitz and Stegun 26.2.23, |error| < 4.5e-4), then Halley's method on
    # Phi(x) - p = erfc(-x / sqrt 2) / 2 - p, or near the centre (where the root is small and
    # that difference cancels) on erf(x / sqrt 2) / 2 - (p - 1/2), p - 1/2 being exact there
    t = math.sqrt(-2.0 * math.log(p))
    x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t)
          / (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t ** 3))
    centre = p > 0.25
    previous = math.inf
    for _ in range(_MAX_STEPS):
        if centre:
            residual = 0.5 * math.erf(x * _SQRT_HALF) - (p - 0.5)
        else:
            residual = 0.5 * math.erfc(-x * _SQRT_HALF) - p
        pdf = math.exp(-0.5 * x * x - _HALF_LOG_2PI)
        step = residual / pdf
        step /= 1.0 + 0.5 * x * step
        if abs(step) >= 0.5 * previous:  # no longer converging: at the noise of the residual
            break
        x -= step
        previous = abs(step)
        if abs(step) <= 2.0 * _EPS * abs(x):
            break
    else:
        raise NotConverged(f"normal quantile, q={q}")  # pragma: no cover - settles in 3-5
    return x if q < 0.5 else -x


def _elementwise(scalar, fallback, *args) -> np.ndarray | float:
    """``scalar`` over broadcast arrays; elements it refuses go to ``fallback`` (scipy).

    Each distinct combination of arguments is computed once. More than
    :data:`MAX_OWN_VALUES` distinct ones all go to scipy: at 15-300 us each here, scipy's
    vectorised loop (and its import) is then the cheaper (its numbers are within the bound
    the tests state).
    """
    arrays = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in args))
    shape = arrays[0].shape
    rows = np.stack([x.ravel() for x in arrays], axis=1)
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    if len(distinct) > MAX_OWN_VALUES:
        out = np.asarray(fallback(*arrays), dtype=np.float64)
        return out[()] if out.ndim == 0 else out
    values = np.empty(len(distinct), dtype=np.float64)
    refused = np.zeros(len(distinct), dtype=bool)
    for i, row in enumerate(distinct.tolist()):
        try:
            values[i] = scalar(*row)
        except (NotConverged, ValueError, OverflowError, ZeroDivisionError):
            refused[i] = True
    if refused.any():
        values[refused] = fallback(*distinct[refused].T)
    out = values[np.asarray(inverse).ravel()].reshape(shape)
    return out[()] if out.ndim == 0 else out


def _scipy_beta_ppf(q, a, b):
    from scipy.special import betaincinv

    return betaincinv(a, b, q)


def _scipy_t_ppf(q, df):
    from scipy.special import stdtrit

    return stdtrit(df, q)


def _scipy_norm_ppf(q):
    from scipy.special import ndtri

    return ndtri(q)


def beta_ppf(q, a, b) -> np.ndarray | float:
    """Quantile ``x`` of ``Beta(a, b)``: ``I_x(a, b) = q``, element by element.

    Parameters
    ----------
    q : array_like
        Probabilities.
    a, b : array_like
        Shapes, broadcast against ``q``.

    Returns
    -------
    numpy.ndarray or float
        Computed here inside the verified domain (see the module's notes), by scipy's
        ``betaincinv`` outside it.
    """
    return _elementwise(_beta_ppf_scalar, _scipy_beta_ppf, q, a, b)


def t_ppf(q, df) -> np.ndarray | float:
    """Quantile of the standard Student-t with ``df`` degrees of freedom, element by element.

    Parameters
    ----------
    q : array_like
        Probabilities.
    df : array_like
        Degrees of freedom, broadcast against ``q``.

    Returns
    -------
    numpy.ndarray or float
        Computed here inside the verified domain, by scipy's ``stdtrit`` outside it.
    """
    return _elementwise(_t_ppf_scalar, _scipy_t_ppf, q, df)


def norm_ppf(q) -> np.ndarray | float:
    """Quantile of the standard normal, element by element.

    Parameters
    ----------
    q : array_like
        Probabilities.

    Returns
    -------
    numpy.ndarray or float
        Computed here inside the verified domain, by scipy's ``ndtri`` outside it.
    """
    return _elementwise(_norm_ppf_scalar, _scipy_norm_ppf, q)


def betainc(a, b, x) -> float:
    """``I_x(a, b)``, the regularised incomplete beta function, for scalars (tests, checks).

    Parameters
    ----------
    a, b : float
        Shapes, positive.
    x : float
        In [0, 1].

    Returns
    -------
    float
    """
    return _ibeta_pair(float(a), float(b), float(x), 1.0 - float(x))[0]
