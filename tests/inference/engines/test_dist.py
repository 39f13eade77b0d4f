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
    """The fast path (no scipy.stats import) gives scipy's moments exactly, not nearly.

    Its norm, t and beta quantiles come from :mod:`bayescheck.inference.engines.quantiles`, within a
    few ulp of scipy's (``tests/inference/engines/test_quantiles.py``).
    """
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
        if family == "invgamma":  # scipy.special's gammainccinv, as scipy.stats calls it
            np.testing.assert_array_equal(got, want, strict=True)
        else:  # inference.engines.quantiles: within a few ulp (its tests give the bound)
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


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

    code = ("import sys; from inference.engines.dist import Dist; "
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
