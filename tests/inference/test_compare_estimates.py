"""Point estimates against a sampled posterior (inference.compare.compare_estimates), on iid
draws of known normal posteriors: right estimates pass, estimates 3 posterior sds away fail,
support claims are checked both ways, and an unhealthy sampler gives no verdict."""

import numpy as np
import pytest
from bayescheck.inference.checking.compare import Thresholds, compare_estimates
from bayescheck.inference.result import PointEstimate


def _draws(mean, sd, *, seed=0, chains=4, draws=2000):
    return np.random.default_rng(seed).normal(mean, sd, size=(chains, draws))


def _est(name, value, nonzero=None):
    return PointEstimate(name, name, {}, value, nonzero)


def test_estimate_at_the_posterior_mean_passes():
    draws = {"a": _draws(1.0, 0.2), "b": _draws(-3.0, 1.5, seed=1)}
    result = compare_estimates([_est("a", 1.0), _est("b", -2.9)], draws)
    assert result.verdict == "pass"
    assert [r.verdict for r in result.parameters] == ["pass", "pass"]
    assert result.parameters[0].distance_sd == pytest.approx(0.0, abs=0.05)
    assert result.parameters[1].distance_sd == pytest.approx(0.1 / 1.5, abs=0.05)


@pytest.mark.parametrize("direction", [1.0, -1.0])
def test_estimate_moved_by_three_posterior_sds_fails(direction):
    draws = {"a": _draws(1.0, 0.2), "b": _draws(0.0, 1.0, seed=1)}
    result = compare_estimates([_est("a", 1.0 + direction * 3 * 0.2), _est("b", 0.0)], draws)
    assert result.verdict == "fail"
    a, b = result.parameters
    assert (a.verdict, b.verdict) == ("fail", "pass")
    assert a.distance_sd == pytest.approx(3 * direction, abs=0.1)
    assert not a.inside and "outside the posterior's 99 % interval" in a.reasons[0]


def test_support_claims_agree_and_disagree():
    draws = {"kept": _draws(1.0, 0.2), "pruned": _draws(0.0, 0.1, seed=1)}
    right = compare_estimates([_est("kept", 1.0, True), _est("pruned", 0.0, False)], draws)
    assert right.verdict == "pass"
    assert right.support() == {"estimate_nonzero": ["kept"],
                               "posterior_excludes_zero": ["kept"], "agree": True}
    # the estimator keeps a weight whose posterior sits on 0, and prunes one that is far from 0
    wrong = compare_estimates([_est("kept", 0.0, False), _est("pruned", 0.01, True)], draws)
    assert wrong.verdict == "fail"
    assert [r.verdict for r in wrong.parameters] == ["fail", "fail"]
    assert "estimated zero (pruned)" in wrong.parameters[0].reasons[0]
    assert "contains 0" in wrong.parameters[1].reasons[0]
    assert wrong.support()["agree"] is False


def test_a_pruned_estimate_is_judged_by_support_only():
    # exactly zero claims need only a posterior interval containing 0, not 0 near the mean
    draws = {"w": _draws(0.5, 0.3)}  # the 95 % interval [-0.09, 1.09] contains 0
    result = compare_estimates([_est("w", 0.0, False)], draws)
    assert result.verdict == "pass"


def test_unhealthy_sampler_is_inconclusive_never_pass():
    stuck = _draws(1.0, 0.2) + np.array([[0.0], [0.0], [0.0], [2.0]])  # one chain elsewhere
    result = compare_estimates([_est("a", 1.0)], {"a": stuck})
    assert result.verdict == "inconclusive"
    assert any("r_hat" in p for p in result.diagnostics.problems)
    diverging = np.zeros((4, 2000), dtype=bool)
    diverging[0, 5] = True
    result = compare_estimates([_est("a", 1.0)], {"a": _draws(1.0, 0.2)}, diverging=diverging)
    assert result.verdict == "inconclusive"
    relaxed = compare_estimates([_est("a", 1.0)], {"a": _draws(1.0, 0.2)}, diverging=diverging,
                                thresholds=Thresholds(max_divergences=1))
    assert relaxed.verdict == "pass"


def test_bad_arguments():
    draws = {"a": _draws(1.0, 0.2)}
    with pytest.raises(ValueError, match="level must be in"):
        compare_estimates([_est("a", 1.0)], draws, level=1.0)
    with pytest.raises(ValueError, match="no point estimates"):
        compare_estimates([], draws)
    with pytest.raises(ValueError, match=r"draws of a must be \(chain, draw\)"):
        compare_estimates([_est("a", 1.0)], {"a": np.zeros(10)})


# ---- informational comparison: fails only on numerical inconsistency -----------------------


def test_informational_comparison_reports_differences_without_failing():
    """A kept weight whose posterior interval contains 0 and an estimate 3 sds off are
    differences between two models: "differs", reasons kept, no say in the overall verdict."""
    from bayescheck.inference.checking.compare import as_information

    draws = {"a": _draws(0.1, 0.2), "b": _draws(0.0, 1.0, seed=1)}
    result = compare_estimates([_est("a", 0.1, nonzero=True), _est("b", 3.0)], draws)
    assert result.verdict == "fail"  # the strict reading
    info = as_information(result)
    assert info.informational and info.verdict == "differs"
    assert [r.verdict for r in info.parameters] == ["differs", "differs"]
    assert all(r.reasons and not r.inconsistent for r in info.parameters)
    assert info.binding_verdict is None
    assert info.summary()["informational"] is True


@pytest.mark.parametrize("value", [20.0, float("nan")])
def test_informational_comparison_fails_on_an_inconsistent_estimate(value):
    from bayescheck.inference.checking.compare import INCONSISTENT_SD, as_information

    draws = {"a": _draws(0.0, 1.0), "b": _draws(2.0, 0.5, seed=1)}
    info = as_information(compare_estimates([_est("a", value), _est("b", 2.0)], draws))
    assert info.verdict == "fail" and info.binding_verdict == "fail"
    assert [r.verdict for r in info.parameters] == ["fail", "pass"]
    assert info.parameters[0].inconsistent
    assert abs(value - 0.0) > INCONSISTENT_SD or not np.isfinite(value)


def test_informational_comparison_with_an_unhealthy_sampler_has_no_say():
    from bayescheck.inference.checking.compare import as_information

    draws = {"a": _draws(0.0, 1.0)}
    draws["a"][3] += 5.0  # one chain elsewhere
    info = as_information(compare_estimates([_est("a", 4.0)], draws))
    assert info.verdict == "inconclusive" and info.binding_verdict is None
