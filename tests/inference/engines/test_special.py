"""``inference.engines.special``: logsumexp equal to scipy's bit for bit, gammaln and digamma
within ulps."""

from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from bayescheck.inference.engines import special as special_module
from bayescheck.inference.engines.special import digamma, gammaln, logsumexp
from scipy import special as sps

RNG = np.random.default_rng(12)
INF = np.inf

CASES = [
    RNG.normal(size=7),
    RNG.normal(scale=300.0, size=(5, 9)),
    np.log(RNG.dirichlet(np.ones(4), size=6)),  # log probabilities: sums near 0
    np.array([-1e308, -1e308, 0.0]),
    np.array([3.0, 3.0, 3.0, 1.0]),  # ties for the largest
    np.array([-INF, -INF]),  # an impossible observation: log 0
    np.array([-INF, 2.0, -INF]),
    np.array([INF, 1.0]),
    np.array([INF, -INF]),
    np.array([np.nan, 1.0]),
    np.array([750.0, 749.0]),  # exp overflows without the shift
    np.array([[0.0, -INF], [-INF, -INF]]),
    np.array([5]),  # integers
    np.zeros((0, 3)),
]


@pytest.mark.parametrize("a", CASES, ids=range(len(CASES)))
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_equal_to_scipy_to_the_last_bit(a, axis):
    if a.size == 0 and axis is None:
        pytest.skip("scipy 1.18 raises IndexError on an empty array with axis=None")
    with np.errstate(all="ignore"):
        want = sps.logsumexp(a, axis=axis)
    got = logsumexp(a, axis=axis)
    assert np.shape(got) == np.shape(want)
    assert type(got) is type(want)
    np.testing.assert_array_equal(got, want, strict=True)


def test_a_naive_formula_would_be_told_apart():
    """The comparison above is exact: ``log(sum(exp))`` differs from scipy in the last bits."""
    a = np.log(RNG.dirichlet(np.ones(5), size=200))
    naive = np.log(np.sum(np.exp(a), axis=1))
    assert np.any(naive != sps.logsumexp(a, axis=1))
    np.testing.assert_array_equal(logsumexp(a, axis=1), sps.logsumexp(a, axis=1))


def _ulps_apart(a, b):
    """|a - b| in units of the spacing at max(|b|, 1) (absolute near the zeros of lgamma)."""
    return np.abs(a - b) / np.spacing(np.maximum(np.abs(b), 1.0))


X = np.concatenate([RNG.uniform(0.01, 3.0, 2000), RNG.uniform(3.0, 100.0, 2000),
                    RNG.uniform(100.0, 1e5, 2000), np.arange(1.0, 300.0), [0.5, 1.0, 2.0]])


def test_gammaln_is_scipys_to_a_few_ulp():
    """math.lgamma, not Cephes' lgam: within 8 ulp of max(|value|, 1) on these arguments
    (inference/engines/special.py gives the measured bounds)."""
    assert _ulps_apart(gammaln(X), sps.gammaln(X)).max() <= 16
    assert gammaln(1.0) == 0.0 and gammaln(2.0) == 0.0


def test_gammaln_shapes_poles_and_a_wrong_function_told_apart():
    assert gammaln(np.ones((2, 3))).shape == (2, 3)
    assert isinstance(gammaln(3.5), np.float64)
    np.testing.assert_array_equal(gammaln([0.0, -1.0, -2.0]), sps.gammaln([0.0, -1.0, -2.0]))
    assert np.isnan(gammaln(np.nan)) and gammaln(np.inf) == np.inf
    # log Gamma(x + 1) = log Gamma(x) + log x: an off-by-one argument is far outside 16 ulp
    assert _ulps_apart(gammaln(X + 1.0), sps.gammaln(X)).max() > 1e6


def test_gammaln_overflows_to_inf_as_scipys_does():
    """math.lgamma raises OverflowError near the float maximum; scipy gives inf there."""
    huge = [1e306, 1e308, np.finfo(np.float64).max, -1.5e308]
    np.testing.assert_array_equal(gammaln(huge), sps.gammaln(huge))
    assert gammaln(1e308) == np.inf


def _exact_digamma():
    """psi(n) = -gamma + H_(n-1) and psi(n + 1/2) = -gamma - 2 log 2 + sum_k 2 / (2k - 1)
    (A&S 6.3.2, 6.3.4), summed exactly and rounded once, n < 400."""
    getcontext().prec = 50
    euler = Decimal("0.57721566490153286060651209008240243104215933593992")
    log2 = Decimal(2).ln()

    def rounded(f):
        return Decimal(f.numerator) / Decimal(f.denominator)

    xs, exact = [], []
    harmonic = Fraction(0)
    for n in range(1, 400):
        xs.append(float(n))
        exact.append(float(rounded(harmonic) - euler))
        harmonic += Fraction(1, n)
    odd = Fraction(0)
    for n in range(0, 400):
        xs.append(n + 0.5)
        exact.append(float(rounded(odd) - euler - 2 * log2))
        odd += Fraction(2, 2 * n + 1)
    return np.array(xs), np.array(exact)


def test_digamma_is_within_4_ulp_of_exact_values():
    xs, exact = _exact_digamma()
    assert _ulps_apart(digamma(xs), exact).max() <= 4


def test_digamma_is_scipys_to_a_few_ulp_over_the_positive_floats():
    rng = np.random.default_rng(5)
    wide = np.exp(rng.uniform(np.log(1e-300), np.log(1e300), 20000))
    near = rng.uniform(0.01, 50.0, 20000)
    for x in (wide, near, X):
        assert _ulps_apart(digamma(x), sps.digamma(x)).max() <= 8


def test_digamma_shapes_edges_and_a_wrong_series_told_apart(monkeypatch):
    assert digamma(np.ones((2, 3))).shape == (2, 3)
    assert isinstance(digamma(3.5), np.float64)
    edges = [0.0, -0.5, -2.0, np.nan, np.inf]  # scipy's values, through the fallback
    np.testing.assert_array_equal(digamma(edges), sps.digamma(edges))
    xs, exact = _exact_digamma()
    # the series' second coefficient with the wrong sign: far outside 4 ulp
    monkeypatch.setattr(special_module, "_DIGAMMA_SERIES",
                        (1 / 12, 1 / 120) + special_module._DIGAMMA_SERIES[2:])
    assert _ulps_apart(digamma(xs), exact).max() > 1e3
