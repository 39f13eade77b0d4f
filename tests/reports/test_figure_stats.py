"""The figures' statistics (reports.figure_stats, numpy only) equal arviz_stats' own.

arviz_stats is the reference the report's figures followed before: its KDE (default
bandwidth), fractional ranks, PIT ECDF and multi-chain rank test. Each comparison is on
samples where the answer is not trivial (skewed, heavy-tailed, several modes, where the
bandwidth equation has more than one root), and each has a negative check.
"""

import warnings

import numpy as np
import pytest
from bayescheck.reports import figure_stats as fs

array_stats = pytest.importorskip("arviz_stats.base").array_stats


def _samples():
    rng = np.random.default_rng(11)
    yield "normal", rng.normal(size=(4, 1000))
    yield "gamma", rng.gamma(1.5, size=(4, 800))
    yield "student t 2", rng.standard_t(2, size=(4, 500))
    yield "two modes", np.concatenate([rng.normal(-3, 1, (4, 300)),
                                       rng.normal(3, 0.5, (4, 300))], axis=1)
    yield "four modes", np.concatenate([rng.normal(3 * k, 0.4, (2, 150)) for k in range(4)],
                                       axis=1)
    yield "few draws", rng.normal(size=(2, 9))
    yield "integers", rng.integers(0, 5, size=(4, 400)).astype(float)


@pytest.mark.parametrize(("name", "x"), list(_samples()))
def test_kde_equals_arviz_stats(name, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid, pdf, _ = array_stats.kde(x, axis=-1)
    mine_grid, mine_pdf = fs.kde(x)
    np.testing.assert_array_equal(mine_grid, grid)
    np.testing.assert_allclose(mine_pdf, pdf, rtol=1e-9, atol=1e-12 * np.max(pdf))


def test_kde_bandwidth_root_is_the_one_arviz_finds_when_there_are_several():
    """On this two-mode sample the ISJ equation has three roots in (0, 0.01); the KDE
    differs by 5 % if another than Brent's first one is taken (bisection finds the third)."""
    rng = np.random.default_rng(1)
    # the draws of the exploration that found the case, kept so that the sample is the same
    rng.normal(size=(4, 1000)), rng.gamma(1.5, size=(4, 1000)), rng.normal(size=(2, 7))
    rng.standard_t(2, size=(4, 500))
    x = np.concatenate([rng.normal(-3, 1, (4, 300)), rng.normal(3, 0.5, (4, 300))], axis=1)[2]
    _, pdf, _ = array_stats.kde(x)
    np.testing.assert_allclose(fs.kde(x)[1], pdf, rtol=1e-9, atol=1e-12)
    lo, hi = x.min(), x.max()
    counts, _ = np.histogram(x, bins=fs.GRID_LEN, range=(lo, hi))
    a = fs._dct(counts / x.size)
    k_sq, a_sq = np.arange(1, 511.0) ** 2, a[1:511] ** 2
    t = np.linspace(0, 0.01, 4001)
    equation = fs._IsjEquation(x.size, k_sq, a_sq)
    values = np.array([equation(s) for s in t])
    assert np.count_nonzero(np.diff(np.sign(values))) >= 2  # the case is really ambiguous


def test_kde_of_one_value_has_nothing_to_draw():
    grid, pdf = fs.kde(np.ones((2, 5)))
    assert np.all(grid == 0) and np.all(np.isnan(pdf))


def test_kde_of_other_data_differs():
    x = np.random.default_rng(2).normal(size=500)
    _, pdf, _ = array_stats.kde(x)
    assert not np.allclose(fs.kde(1.3 * x)[1], pdf, rtol=1e-3)


@pytest.mark.parametrize(("name", "x"), [s for s in _samples() if s[1].shape[1] > 50])
def test_rank_test_equals_arviz_stats(name, x):
    x = x[:, :300]
    ranks = array_stats.compute_ranks(x.ravel(), relative=True).reshape(x.shape)
    np.testing.assert_array_equal(fs.fractional_ranks(x), ranks)
    ecdf = array_stats.ecdf(ranks, pit=True, npoints=x.shape[1])
    mine = fs.pit_ecdf(ranks, x.shape[1])
    np.testing.assert_array_equal(mine[0], ecdf[0])
    np.testing.assert_array_equal(mine[1], ecdf[1])
    p, between, within = array_stats.mchain_uniformity_test(ranks)
    my_p, my_between, my_within = fs.mchain_uniformity_test(ranks)
    assert my_p == pytest.approx(float(p), rel=1e-8, abs=1e-14)
    # Shapley contributions: where a chain's mid-p value at a point is 1 (gamma = 1, the
    # pole of tan((0.5 - gamma) pi)) both are rounding noise of the order of 1e11-1e16, so
    # the chains' are compared away from it (their signs, which points the figure marks,
    # agree there too) and the points' (each holds the mean of all) only without a pole.
    between = np.asarray(between)
    ok = np.abs(between) < 1e6
    assert ok.mean() > 0.8
    np.testing.assert_allclose(my_between[ok], between[ok], rtol=1e-5, atol=1e-6)
    assert np.all(np.sign(my_between[~ok]) == np.sign(between[~ok]))
    if np.all(np.abs(within) < 1e6):
        np.testing.assert_allclose(my_within, within, rtol=1e-5, atol=1e-6)


def test_rank_test_rejects_a_shifted_chain_as_arviz_does():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(4, 300))
    x[0] += 0.5
    ranks = fs.fractional_ranks(x)
    p, _, _ = fs.mchain_uniformity_test(ranks)
    assert p < 1e-6
    assert p == pytest.approx(float(array_stats.mchain_uniformity_test(ranks)[0]), rel=1e-6)
    # chains that mix: the test rejects at its level (0.06 in the figure) about that often
    mixed = [fs.mchain_uniformity_test(fs.fractional_ranks(rng.normal(size=(4, 300))))[0]
             for _ in range(40)]
    assert np.mean(np.asarray(mixed) < 0.06) < 0.25


def test_hypergeometric_cdf_is_accurate_in_both_tails():
    """The rank test's mid-p upper tail is 1 - lower, so near 1 the cdf must be as accurate
    as its smaller tail (as scipy's boost is): each tail within 1e-11 relative (the log
    factorials' rounding) plus the float's own rounding. A cdf summed from 0 alone was 1e-14
    off near 1, for upper tails far smaller than that."""
    from fractions import Fraction
    from math import comb

    total, good = 1200, 300
    drawn = np.array([100, 600, 1100])
    pmf, cdf = fs._hypergeom_tables(total, good, drawn)
    for row, n in enumerate(drawn):
        exact, whole = Fraction(0), comb(total, n)
        for k in range(good + 1):
            if 0 <= n - k <= total - good:
                exact += Fraction(comb(good, k) * comb(total - good, n - k), whole)
            tail = float(min(exact, 1 - exact))
            error = abs(float(exact - Fraction(cdf[row, k])))
            assert error <= 1e-11 * tail + np.finfo(float).eps, (n, k, error, tail)
