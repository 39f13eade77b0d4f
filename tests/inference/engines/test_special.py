"""``inference.engines.special.logsumexp`` gives scipy's numbers, bit for bit."""

import numpy as np
import pytest
from scipy import special as sps

from inference.engines.special import logsumexp

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
