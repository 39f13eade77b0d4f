import numpy as np
import pytest
from scipy import stats

from inference.engines.dist import Dist


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
