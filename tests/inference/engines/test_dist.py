import math
from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np
import pytest
from bayescheck.inference.engines.dist import Dist
from scipy import stats


@pytest.mark.parametrize("family, args, kwds", [
    ("norm", (1.5, 2.0), {}),
    ("t", (7.0, -1.0, 0.5), {}),
    ("invgamma", (3.0,), {"scale": 2.0}),
    ("beta", (2.0, 5.0), {}),
])
def test_dist_equals_frozen_scipy(family, args, kwds):
    light, frozen = Dist(family, *args, **kwds), getattr(stats, family)(*args, **kwds)
    x = np.array([0.1, 0.3, 0.9])
    for method in ("mean", "std", "var"):
        assert getattr(light, method)() == pytest.approx(getattr(frozen, method)(), rel=1e-14)
    for method in ("ppf", "cdf", "pdf", "logpdf"):
        np.testing.assert_allclose(getattr(light, method)(x), getattr(frozen, method)(x),
                                   rtol=1e-14)
    assert light.interval(0.9) == pytest.approx(frozen.interval(0.9), rel=1e-14)
    np.testing.assert_array_equal(light.rvs(size=4, random_state=1),
                                  frozen.rvs(size=4, random_state=1))
    assert light.frozen().mean() == pytest.approx(frozen.mean())


RNG = np.random.default_rng(0)
FAST_CASES = [
    ("norm", (1.5, 2.0), {}),
    ("norm", (RNG.normal(size=5), RNG.gamma(2.0, size=5)), {}),
    ("norm", (), {"loc": -3.0, "scale": 1e-3}),
    ("t", (7.0, -1.0, 0.5), {}),
    ("t", (RNG.gamma(3.0, size=5) + 2.0, RNG.normal(size=5), RNG.gamma(2.0, size=5)), {}),
    ("t", (2.5,), {"scale": 3.0}),
    ("beta", (2.0, 5.0), {}),
    ("beta", (RNG.gamma(2.0, size=5), RNG.gamma(2.0, size=5)), {}),
    ("beta", (19.0, 13.0), {}),
    ("invgamma", (3.0,), {"scale": 2.0}),
    ("invgamma", (RNG.gamma(2.0, size=5) + 2.0,), {"scale": RNG.gamma(2.0, size=5)}),
]


@pytest.mark.parametrize("family, args, kwds", FAST_CASES)
def test_fast_path_equals_scipy_to_the_last_bit(family, args, kwds):
    """The fast path (no scipy.stats import) gives scipy's moments and quantiles exactly."""
    light, dist = Dist(family, *args, **kwds), getattr(stats, family)
    assert light._valid() is not None  # the case does exercise the fast path
    for method in ("mean", "std", "var"):
        got, want = getattr(light, method)(), getattr(dist, method)(*args, **kwds)
        assert type(got) is type(want) and np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want, strict=True)
    for q in (0.05, 0.95, np.array([0.05, 0.5, 0.95]), np.array([[1e-9], [1 - 1e-9]])):
        if np.ndim(q) and np.ndim(args[0] if args else 0):
            continue  # array parameters against an array of q do not broadcast
        got, want = light.ppf(q), dist.ppf(q, *args, **kwds)
        assert type(got) is type(want) and np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want, strict=True)


def test_beta_of_two_floats_equals_scipy_to_the_last_bit():
    """The scalar path (a CPT entry's marginal) against scipy and the array path.

    Every moment equals the array path's (the numbers the fit printed before); the mean
    also equals scipy's (its variance and sd differ from both by an ulp now and then).
    """
    rng = np.random.default_rng(5)
    for a, b in rng.gamma(0.5, 1e3, size=(3000, 2)) + 1e-3:
        light, arrays = Dist("beta", float(a), np.float64(b)), Dist("beta", np.asarray(a),
                                                                      np.asarray(b))
        for method in ("mean", "std", "var"):
            got = getattr(light, method)()
            assert type(got) is np.float64 and got == getattr(arrays, method)(), (method, a, b)
        assert light.mean() == stats.beta.mean(a, b)


@pytest.mark.parametrize("family, args, kwds, q", [
    ("norm", (0.0, -1.0), {}, 0.5),    # scale <= 0: scipy's nan
    ("t", (1.5, 0.0, 1.0), {}, 0.5),   # df <= 2: infinite variance
    ("beta", (0.0, 1.0), {}, 0.5),     # shape 0: invalid
    ("beta", (2.0, 3.0), {}, 0.0),     # q on the boundary
    ("invgamma", (1.5,), {"scale": 2.0}, 0.5),  # shape <= 2: infinite variance
    ("gamma", (3.0,), {"scale": 2.0}, 0.5),  # no fast path
])
def test_outside_the_fast_path_scipy_answers(family, args, kwds, q):
    light, dist = Dist(family, *args, **kwds), getattr(stats, family)
    with np.errstate(all="ignore"):
        for method in ("mean", "std", "var"):
            np.testing.assert_array_equal(getattr(light, method)(),
                                          getattr(dist, method)(*args, **kwds))
        np.testing.assert_array_equal(light.ppf(q), dist.ppf(q, *args, **kwds))


@pytest.mark.slow
def test_fast_path_does_not_import_scipy_stats():
    import subprocess
    import sys

    code = ("import sys; from bayescheck.inference.engines.dist import Dist; "
            "d = [Dist('norm', 1.0, 2.0), Dist('t', 5.0, 0.0, 1.0), Dist('beta', 2.0, 3.0), "
            "Dist('invgamma', 3.0, scale=2.0)]; "
            "[(x.mean(), x.std(), x.ppf(0.05)) for x in d]; "
            "print('scipy.stats' in sys.modules)")
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=root).stdout
    assert out.strip() == "False"


def test_beta_of_huge_floats_gives_the_array_paths_numbers_not_an_overflow():
    """A prior of 1e308 (a hostile spec): a + b overflows; numpy's answers, no exception."""
    for a, b in ((1e308, 1.0), (1e308, 1e308), (1e200, 1e200)):
        light, arrays = Dist("beta", a, b), Dist("beta", np.asarray(a), np.asarray(b))
        with np.errstate(all="ignore"):
            for method in ("mean", "var"):
                got, want = getattr(light, method)(), getattr(arrays, method)()
                assert got == want or (np.isnan(got) and np.isnan(want)), (method, a, b)


# Quantiles against exact roots: integer Beta shapes (the binomial tail, 50-digit decimal
# arithmetic) and Student-t with an even number of degrees of freedom (Abramowitz and Stegun
# 26.7.3, the same arithmetic). scipy.special answers within 4e-15 of them here; in far tails
# of large shapes (Beta(221, 143) at 1e-12) its betaincinv is off by up to 1e-13.
VERIFIED_RTOL = 4e-15


def _rel(x: float, ref: float) -> float:
    return abs(x - ref) / abs(ref) if ref != 0 else abs(x)


def _binomial_tail(a: int, b: int, x: float) -> Decimal:
    """``I_x(a, b)`` for integers: ``P(Binomial(a + b - 1, x) >= a)``, to 50 digits."""
    with localcontext() as ctx:
        ctx.prec = 50
        X = Decimal(x)
        Y = 1 - X
        n = a + b - 1
        return sum(Decimal(math.comb(n, j)) * X**j * Y**(n - j) for j in range(a, n + 1))


def _exact_beta_root(a: int, b: int, p: float) -> float:
    """The double just below the root of ``I_x(a, b) = p`` (bisection on floats)."""
    lo, hi = 0.0, 1.0
    target = Decimal(p)
    while True:
        mid = (lo + hi) / 2
        if not lo < mid < hi:
            return lo
        if _binomial_tail(a, b, mid) < target:
            lo = mid
        else:
            hi = mid


def _half_tail(b: int, y: float) -> Decimal:
    """``I_y(1/2, b)`` for an integer b (Abramowitz and Stegun 26.7.3), to 50 digits."""
    with localcontext() as ctx:
        ctx.prec = 50
        Y = Decimal(y)
        X = 1 - Y
        term = total = Decimal(1)
        for k in range(1, b):
            term *= X * (2 * k - 1) / (2 * k)
            total += term
        return Y.sqrt() * total


def _exact_t(df: int, p: float) -> float:
    """The double nearest below the exact t quantile, p < 1/2, even df."""
    lo, hi = 0.0, 1e300  # bisection on t: P(T <= -t) = (1 - I_y(1/2, df/2)) / 2
    target = Decimal(p)
    while True:
        mid = math.sqrt(lo * hi) if lo > 0 and hi > 4 * lo else (lo + hi) / 2
        if not lo < mid < hi:
            return -lo
        y = Decimal(mid) ** 2 / (Decimal(df) + Decimal(mid) ** 2)
        if (1 - _half_tail(df // 2, y)) / 2 < target:
            hi = mid
        else:
            lo = mid


@pytest.mark.slow
@pytest.mark.parametrize("a, b", [(1, 1), (1, 29), (2, 5), (19, 13), (7, 24), (50, 10)])
def test_beta_quantiles_are_the_exact_roots(a, b):
    for p in (1e-8, 0.025, 0.05, 0.5, 0.95, 0.975, 1 - 1e-8):
        root = _exact_beta_root(a, b, p)
        assert _rel(float(Dist("beta", float(a), float(b)).ppf(p)), root) <= VERIFIED_RTOL
        if a != b:  # the shapes swapped: far off
            assert _rel(float(Dist("beta", float(b), float(a)).ppf(p)), root) > 1e-6


@pytest.mark.slow
def test_t_quantiles_are_the_exact_roots():
    for df, p in [(2, 0.05), (4, 0.2058187593334726), (6, 0.3), (10, 1e-8), (30, 0.05),
                  (1000, 0.025)]:
        exact = _exact_t(df, p)
        assert _rel(float(Dist("t", float(df)).ppf(p)), exact) <= VERIFIED_RTOL, (df, p)
        assert _rel(float(Dist("t", float(df), 0.0, 1.01).ppf(p)), exact) > 1e-3


# Non-integer shapes have no closed-form root: 40-digit mpmath roots (findroot on betainc).
NON_INTEGER_ROOTS = [
    (0.5379434046758467, 0.5474933976434181, 9.99, 0.031842515444426796),
    (0.5110548063111158, 0.884041337670255, 9.99, 0.058783488661236935),
    (0.8452249817012268, 0.6119417429847839, 9.99, 0.11683282274038502),
]


@pytest.mark.parametrize(("p", "a", "b", "root"), NON_INTEGER_ROOTS)
def test_beta_quantile_of_non_integer_shapes_is_the_mpmath_root(p, a, b, root):
    got = float(Dist("beta", a, b).ppf(p))
    assert _rel(got, root) <= VERIFIED_RTOL
    assert _rel(got * (1 + 1e-14), root) > VERIFIED_RTOL  # the bound tells 1e-14 apart


def test_t_quantile_at_1000_df_is_the_mpmath_root():
    assert _rel(float(Dist("t", 1000.0).ppf(0.01)), -2.330082674755513) <= VERIFIED_RTOL
