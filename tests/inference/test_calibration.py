"""The uniformity test behind simulation-based calibration, on values of known law."""

import numpy as np
import pytest
from bayescheck.inference.checking.calibration import default_bins, uniformity
from scipy import stats


def test_uniform_values_pass_and_counts_add_up():
    rng = np.random.default_rng(0)
    result = uniformity({"a": rng.uniform(size=1000), "b": rng.uniform(size=1000)})
    assert result.verdict == "pass"
    assert result.bins == default_bins(1000) == 50
    assert all(sum(p.counts) == 1000 for p in result.parameters)
    assert result.threshold == pytest.approx(0.01 / 2)


@pytest.mark.slow
def test_false_alarm_rate_of_uniform_values():
    """200 runs of 3 uniform parameters: each run fails with probability <= 0.01, so 8 or
    more failures has binomial probability below 0.001."""
    rng = np.random.default_rng(1)
    fails = sum(uniformity({k: rng.uniform(size=300) for k in "abc"}).verdict == "fail"
                for _ in range(200))
    assert fails <= 7


@pytest.mark.parametrize("make, why", [
    (lambda u: stats.beta(2, 2).ppf(u), "hump: the engine's posterior is too wide"),
    (lambda u: stats.beta(0.7, 0.7).ppf(u), "U: too narrow"),
    (lambda u: u ** 1.3, "slope: biased"),
])
def test_non_uniform_values_fail(make, why):
    rng = np.random.default_rng(2)
    result = uniformity({"ok": rng.uniform(size=1000), "bad": make(rng.uniform(size=1000))})
    assert result.verdict == "fail", why
    assert [p.verdict for p in result.parameters] == ["pass", "fail"]
    # the adjusted p-value is what the verdict compares with the family-wise alpha
    for p in result.parameters:
        assert p.p_adjusted == pytest.approx(min(1.0, 2 * p.p_value))
        assert (p.p_adjusted < result.alpha) == (p.verdict == "fail")


def test_discrete_ranks_use_whole_levels():
    rng = np.random.default_rng(3)
    ranks = rng.integers(0, 200, size=1000)  # L = 199 draws: ranks 0..199
    result = uniformity({"r": ranks / 200}, bins=20, discrete_levels=200)
    assert result.parameters[0].counts == np.bincount(ranks // 10, minlength=20).tolist()
    with pytest.raises(ValueError, match="must divide"):
        uniformity({"r": ranks / 200}, bins=30, discrete_levels=200)


def test_values_outside_unit_interval_are_refused():
    with pytest.raises(ValueError, match="values in \\[0, 1\\]"):
        uniformity({"a": np.array([0.1, 1.2] * 10)})
