"""ARD's optimality certificate through the family (no sampler): the example's fit satisfies
the Tipping-Faul conditions; a fit with one alpha moved fails, and a failing certificate fails
the whole check while an informational hierarchical comparison does not."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.inference.checking.check import CheckResult
from bayescheck.inference.checking.compare import as_information, compare_draws, compare_estimates
from bayescheck.inference.families import fit
from bayescheck.inference.families.ard import CERTIFICATE_TOL, certificate
from bayescheck.inference.result import ExactMarginal, PointEstimate
from bayescheck.models import load_spec
from scipy import stats

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "ard" / "design.toml"


@pytest.fixture(scope="module")
def example():
    spec = load_spec(EXAMPLE)
    frame = pd.read_csv(EXAMPLE.parent / "design.csv")
    y = frame.pop("y").to_numpy()
    return spec, fit(spec), frame.to_numpy(), y, list(frame.columns)


def test_example_fit_carries_a_passing_certificate(example):
    _, result, *_ = example
    (cert,) = result.record.certificates
    assert cert["verdict"] == "pass", cert["reason"]
    assert cert["largest_violation"] < CERTIFICATE_TOL
    assert [k["feature"] for k in cert["kept"]] == ["x2", "x6", "x9"]
    assert cert["penalised"]  # relevance_threshold = "ric"
    ratios = [p["q2_over_s"] for p in cert["pruned"]]
    assert ratios == sorted(ratios, reverse=True)  # closest to being kept first
    assert all(r <= cert["threshold"] for r in ratios)
    assert result.record.info["certificate"]["verdict"] == "pass"
    # it certifies what it shows: a local maximum, and the starts it compared
    assert cert["scope"] == "local maximum" and "a local maximum of the penalised evidence" \
        in cert["reason"]
    assert [s["start"] for s in cert["starts"]] == ["empty", "full_em"]
    assert sum(s["chosen"] for s in cert["starts"]) == 1
    assert "the best of 2 starts" in cert["reason"] and "not excluded" in cert["reason"]
    assert cert["start_gap"] >= 0 and result.record.info["certificate"]["start_gap"] == \
        cert["start_gap"]
    assert [s["start"] for s in result.record.info["starts"]] == ["empty", "full_em"]
    from bayescheck.reports.fit_summary import fit_notes

    spec = example[0]
    assert any(n.startswith("optimality certificate: pass") for n in fit_notes(result, spec))


@pytest.mark.parametrize("factor", [1.1, 0.5])
def test_certificate_fails_on_a_moved_alpha(example, factor):
    spec, result, X, y, features = example
    sbl = result.posterior.state
    alpha = sbl.alpha.copy()
    alpha[features.index("x6")] *= factor
    cert = certificate(X, y, sbl._replace(alpha=alpha), features,
                       spec.model.relevance_threshold)
    assert cert["verdict"] == "fail" and cert["worst"] == "x6"
    assert cert["largest_violation"] == pytest.approx(abs(np.log(factor)), rel=0.05)
    assert "are not a maximum of the penalised evidence" in cert["reason"]


def _passing_comparison():
    rng = np.random.default_rng(0)
    marg = [ExactMarginal("a", "a", {}, stats.norm(0.0, 1.0))]
    return compare_draws(marg, {"a": rng.normal(size=(4, 1000))})


def test_a_failing_certificate_fails_the_check_and_information_does_not(example):
    _, result, *_ = example
    comparison = _passing_comparison()
    rng = np.random.default_rng(1)
    differing = as_information(compare_estimates(
        [PointEstimate("w", "w", {}, 3.0, nonzero=True)], {"w": rng.normal(size=(4, 1000))}))
    assert differing.verdict == "differs"
    ok = CheckResult(result, None, comparison, {}, None, differing)
    assert ok.verdict == "pass"
    bad_cert = replace(result, record=replace(result.record, certificates=[
        {**result.record.certificates[0], "verdict": "fail"}]))
    assert CheckResult(bad_cert, None, comparison, {}, None, differing).verdict \
        == "fail"
    inconsistent = as_information(compare_estimates(
        [PointEstimate("w", "w", {}, 30.0, nonzero=True)], {"w": rng.normal(size=(4, 1000))}))
    assert CheckResult(result, None, comparison, {}, None, inconsistent).verdict \
        == "fail"
