"""check_model: NUTS on the user's own model judged against the exact posterior.

Long NUTS runs on each recognised family must pass (every statistic within its Monte Carlo
error, Bonferroni-corrected); a deliberately wrong exact posterior must fail; an unhealthy
sampler must be inconclusive, never pass.
"""

import json

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from bayescheck.inference.checking.compare import Thresholds
from bayescheck.inference.conjugacy.check import calibrate_model

import bayescheck

EIGHT_Y = np.array([28.0, 8, -3, 7, -1, 1, 18, 12])
EIGHT_S = np.array([15.0, 10, 16, 11, 9, 11, 10, 18])
RNG = np.random.default_rng(33)


def eight_schools(tau=5.0):
    with pm.Model(coords={"school": list("ABCDEFGH")}) as model:
        mu = pm.Normal("mu", 0, 5)
        theta = pm.Normal("theta", mu, tau, dims="school")
        pm.Normal("y", theta, EIGHT_S, observed=EIGHT_Y, dims="school")
    return model


@pytest.mark.nuts
def test_eight_schools_passes_and_writes_the_check_files(tmp_path):
    res = bayescheck.check_model(eight_schools(), out=tmp_path / "run", random_seed=1,
                                 simulations=100)
    assert res.verdict == "pass", res.comparison.summary()
    assert res.calibration.verdict == "pass"
    assert res.comparison.diagnostics.healthy
    assert len(res.comparison.parameters) == 9
    names = {p.name for p in res.comparison.parameters}
    assert {"mu", "theta[A]", "theta[H]"} <= names
    files = {p.name for p in (tmp_path / "run").iterdir()}
    assert files == {"summary.json", "comparison.csv", "posterior.json", "posterior.nc",
                     "calibration.json", "report.json", "report.html",
                     ".bayescheck-manifest.json"}
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["verdict"] == "pass"
    assert summary["family"] == "Gaussian linear (9 latent, 8 observed)"


@pytest.mark.nuts
def test_a_prior_variance_off_by_four_fails(tmp_path):
    wrong = bayescheck.exact(eight_schools(tau=10.0))  # the variance is 4 times too large
    res = bayescheck.check_model(eight_schools(), posterior=wrong, random_seed=1)
    assert res.verdict == "fail"
    assert not any(tmp_path.iterdir())  # out=None writes nothing


@pytest.mark.nuts
def test_unhealthy_sampling_is_inconclusive_never_pass():
    impossible = Thresholds(ess_bulk_min=1e9)
    res = bayescheck.check_model(eight_schools(), random_seed=1, thresholds=impossible)
    assert res.verdict == "inconclusive"
    assert res.comparison.diagnostics.problems


def nig_regression():
    x = RNG.normal(size=(40, 2))
    y = x @ [1.0, -0.5] + RNG.normal(0, 0.8, 40)
    with pm.Model() as model:
        s2 = pm.InverseGamma("s2", 3.0, 2.0)
        beta = pm.Normal("beta", 0, 2.0 * pm.math.sqrt(s2), shape=2)
        pm.Normal("y", pt.dot(x, beta), pm.math.sqrt(s2), observed=y)
    return model


def grouped_binomial():
    with pm.Model() as model:
        p = pm.Beta("p", 2.0, 2.0, shape=3)
        pm.Binomial("k", n=[10, 12, 8, 9], p=p[np.array([0, 1, 2, 2])], observed=[3, 7, 6, 2])
    return model


def dirichlet_multinomial():
    with pm.Model() as model:
        pi = pm.Dirichlet("pi", a=np.array([1.0, 2.0, 3.0]))
        pm.Multinomial("counts", n=20, p=pi, observed=[[4, 7, 9]])
    return model


def gamma_poisson():
    with pm.Model() as model:
        lam = pm.Gamma("lam", 2.0, 1.0, shape=2)
        pm.Poisson("c", lam[np.array([0, 0, 1, 1, 1])] * np.array([1.0, 2, 1, 1, 3]),
                   observed=[2, 5, 1, 0, 4])
    return model


def gamma_precision():
    with pm.Model() as model:
        tau = pm.Gamma("tau", 2.0, 1.0)
        pm.Normal("y", 0.2, tau=tau, observed=RNG.normal(0.2, 1.5, 15))
    return model


@pytest.mark.nuts
@pytest.mark.parametrize("build", [nig_regression, grouped_binomial, dirichlet_multinomial,
                                   gamma_poisson, gamma_precision],
                         ids=lambda f: f.__name__)
def test_long_nuts_runs_agree_with_each_family(build):
    res = bayescheck.check_model(build(), draws=3000, tune=1000, random_seed=2)
    assert res.verdict == "pass", res.comparison.summary()


@pytest.mark.slow
def test_calibration_from_the_prior_predictive():
    result = calibrate_model(eight_schools(), 200, random_seed=3)
    assert result.verdict == "pass"
    assert len(result.parameters) == 9
    wrong = calibrate_model(eight_schools(), 200, random_seed=3,
                            posterior_model=eight_schools(tau=10.0))
    assert wrong.verdict == "fail"
