"""Users' own PyMC models on public data nobody here made (statsmodels' bundled sets): the
exact posterior against formulas written here, and NUTS on the user's model judged by
``check_model``.

- Longley (the NIST StRD reference regression, condition number about 5e9) as a
  Normal-inverse-gamma regression, against the posterior computed in exact rational arithmetic;
- RAND health insurance doctor visits (20,190 rows) as Poisson counts with a Gamma rate per
  self-rated health group;
- California STAR test scores (303 districts) as Binomial counts with a Beta probability per
  pupil-teacher-ratio tercile;
- Fair's marriage ratings (6,366 rows) as a Categorical with a Dirichlet prior.
"""

import json
import math
from fractions import Fraction

import numpy as np
import pymc as pm
import pytest
from scipy import special, stats

import bayescheck

sm = pytest.importorskip("statsmodels.api")

U = np.finfo(np.float64).eps


def longley():
    d = sm.datasets.longley.load_pandas().data
    cols = ["GNPDEFL", "GNP", "UNEMP", "ARMED", "POP", "YEAR"]
    X = np.column_stack([np.ones(len(d)), d[cols].to_numpy(np.float64)])
    return X, d["TOTEMP"].to_numpy(np.float64)


def nig_model(X, y, scale, a, b):
    with pm.Model() as model:
        s2 = pm.InverseGamma("s2", a, b)
        beta = pm.Normal("beta", 0, scale * pm.math.sqrt(s2), shape=X.shape[1])
        pm.Normal("y", pm.math.dot(X, beta), pm.math.sqrt(s2), observed=y)
    return model


def nig_in_rationals(X, y, scale, a, b):
    """Posterior mean of beta, b_n and log p(y) of the NIG regression, the linear algebra in
    exact rational arithmetic (every float of the data is a rational), logs in float."""
    n, p = X.shape
    Xf = [[Fraction(v) for v in row] for row in X]
    yf = [Fraction(v) for v in y]
    prec = 1 / Fraction(scale) ** 2
    A = [[sum(Xf[k][i] * Xf[k][j] for k in range(n)) + (prec if i == j else 0)
          for j in range(p)] for i in range(p)]
    r = [sum(Xf[k][i] * yf[k] for k in range(n)) for i in range(p)]
    M = [A[i][:] + [r[i]] for i in range(p)]
    det = Fraction(1)
    for i in range(p):
        det *= M[i][i]
        for j in range(i + 1, p):
            f = M[j][i] / M[i][i]
            M[j] = [M[j][k] - f * M[i][k] for k in range(p + 1)]
    m = [Fraction(0)] * p
    for i in reversed(range(p)):
        m[i] = (M[i][p] - sum(M[i][k] * m[k] for k in range(i + 1, p))) / M[i][i]
    b_n = Fraction(b) + (sum(v * v for v in yf) - sum(m[i] * r[i] for i in range(p))) / 2
    a_n = a + n / 2
    log_det_A = math.log(det.numerator) - math.log(det.denominator)
    log_ev = (-n / 2 * math.log(2 * math.pi) - 0.5 * log_det_A - p * math.log(scale)
              + a * math.log(b) - a_n * (math.log(b_n.numerator) - math.log(b_n.denominator))
              + math.lgamma(a_n) - math.lgamma(a))
    return np.array([float(v) for v in m]), float(b_n), log_ev


@pytest.mark.parametrize("scale", [1e3, 1e8], ids=["informative", "near_flat"])
def test_longley_nig_regression_is_exact_against_rational_arithmetic(scale):
    X, y = longley()
    ex = bayescheck.exact(nig_model(X, y, scale, 2.0, 1e5))
    assert ex.family.startswith("Normal-inverse-gamma")
    mean, b_n, log_ev = nig_in_rationals(X, y, scale, 2.0, 1e5)
    got = ex.summary().loc[[f"beta[{i}]" for i in range(X.shape[1])], "mean"].to_numpy()
    # A backward-stable least-squares solve errs by about kappa * u in norm (the residual term
    # kappa^2 u |r| / (|X| |beta|) is smaller here); kappa of the prior-augmented design.
    aug = np.vstack([X, np.eye(X.shape[1]) / scale])
    bound = 10 * np.linalg.cond(aug) * U
    assert np.linalg.norm(got - mean) / np.linalg.norm(mean) <= bound
    # log p(y): sums of a few dozen terms of size up to 300 nats, each good to a few ulps.
    assert abs(ex.log_evidence - log_ev) <= 1e3 * U * 300
    if scale == 1e8:  # the prior's sd is 1e8 posterior noise sds: NIST's certified OLS values
        nist = [-3482258.63459582, 15.0618722713733, -0.358191792925910e-1,
                -2.02022980381683, -1.03322686717359, -0.511041056535807e-1,
                1829.15146461355]
        np.testing.assert_allclose(got, nist, rtol=1e-6)
    # The same check catches a wrong prior: a = 2.5 instead of 2 moves the evidence.
    _, _, wrong = nig_in_rationals(X, y, scale, 2.5, 1e5)
    assert abs(ex.log_evidence - wrong) > 1e3 * U * 300


def randhie():
    r = sm.datasets.randhie.load_pandas().data
    group = (r.hlthg + 2 * r.hlthf + 3 * r.hlthp).to_numpy(np.int64)  # 0 = excellent
    return group, r["mdvis"].to_numpy(np.int64)


def visits_model(group, visits, a=2.0, b=1.0):
    with pm.Model(coords={"health": ["excellent", "good", "fair", "poor"]}) as model:
        lam = pm.Gamma("lam", a, b, dims="health")
        pm.Poisson("visits", lam[group], observed=visits)
    return model


def test_randhie_gamma_poisson_is_exact():
    group, visits = randhie()
    ex = bayescheck.exact(visits_model(group, visits))
    s = ex.summary()
    shape = 2.0 + np.bincount(group, weights=visits, minlength=4)
    rate = 1.0 + np.bincount(group, minlength=4)
    names = [f"lam[{h}]" for h in ("excellent", "good", "fair", "poor")]
    np.testing.assert_allclose(s.loc[names, "mean"], shape / rate, rtol=1e-13)
    np.testing.assert_allclose(s.loc[names, "sd"], np.sqrt(shape) / rate, rtol=1e-13)
    level = [c for c in s.columns if c.endswith("_lb")][0]
    q = float(level.removeprefix("eti").removesuffix("_lb")) / 100
    np.testing.assert_allclose(s.loc[names, level],
                               stats.gamma.ppf((1 - q) / 2, shape, scale=1 / rate), rtol=1e-9)
    # log p(y) = sum_g [a log b - lgamma(a) + lgamma(a + S_g) - (a + S_g) log(b + n_g)]
    #            - sum lgamma(y + 1)
    a, b = 2.0, 1.0
    log_ev = (np.sum(a * np.log(b) - special.gammaln(a) + special.gammaln(shape)
                     - shape * np.log(rate)) - special.gammaln(visits + 1.0).sum())
    assert ex.log_evidence == pytest.approx(log_ev, rel=1e-12)


def star98():
    s = sm.datasets.star98.load_pandas().data
    tercile = np.digitize(s.PTRATIO, np.quantile(s.PTRATIO, [1 / 3, 2 / 3]))
    return tercile, s["NABOVE"].to_numpy(np.int64), (s.NABOVE + s.NBELOW).to_numpy(np.int64)


def star98_model(tercile, above, total):
    with pm.Model() as model:
        p = pm.Beta("p", 1.0, 1.0, shape=3)
        pm.Binomial("above", n=total, p=p[tercile], observed=above)
    return model


def test_star98_beta_binomial_is_exact():
    tercile, above, total = star98()
    ex = bayescheck.exact(star98_model(tercile, above, total))
    a = 1.0 + np.bincount(tercile, weights=above, minlength=3)
    b = 1.0 + np.bincount(tercile, weights=total - above, minlength=3)
    s = ex.summary()
    names = [f"p[{i}]" for i in range(3)]
    np.testing.assert_allclose(s.loc[names, "mean"], a / (a + b), rtol=1e-13)
    np.testing.assert_allclose(s.loc[names, "sd"], np.sqrt(stats.beta.var(a, b)), rtol=1e-12)
    log_choose = (special.gammaln(total + 1.0) - special.gammaln(above + 1.0)
                  - special.gammaln(total - above + 1.0))
    log_ev = log_choose.sum() + np.sum(special.betaln(a, b) - special.betaln(1.0, 1.0))
    assert ex.log_evidence == pytest.approx(log_ev, rel=1e-12)


def test_fair_dirichlet_categorical_is_exact():
    codes = sm.datasets.fair.load_pandas().data["rate_marriage"].to_numpy(np.int64) - 1
    with pm.Model() as model:
        pi = pm.Dirichlet("pi", np.ones(5))
        pm.Categorical("rating", p=pi, observed=codes)
    ex = bayescheck.exact(model)
    alpha = 1.0 + np.bincount(codes, minlength=5)
    s = ex.summary()
    names = [f"pi[{i}]" for i in range(5)]
    np.testing.assert_allclose(s.loc[names, "mean"], alpha / alpha.sum(), rtol=1e-13)
    np.testing.assert_allclose(s.loc[names, "sd"], np.sqrt(stats.dirichlet.var(alpha)),
                               rtol=1e-12)
    log_ev = (special.gammaln(5.0) - special.gammaln(alpha.sum())
              + np.sum(special.gammaln(alpha)))
    assert ex.log_evidence == pytest.approx(log_ev, rel=1e-12)


@pytest.mark.nuts
def test_nuts_on_the_users_own_real_data_models_passes():
    """NUTS on the user's own models of randhie and star98: healthy, and every statistic
    within its Monte Carlo error of the exact posterior."""
    group, visits = randhie()
    res = bayescheck.check_model(visits_model(group, visits), random_seed=4)
    assert res.verdict == "pass", res.comparison.summary()
    res = bayescheck.check_model(star98_model(*star98()), random_seed=4)
    assert res.verdict == "pass", res.comparison.summary()


@pytest.mark.nuts
def test_a_wrong_exact_posterior_fails_on_real_data():
    """The randhie model judged against the exact posterior of a Gamma(20, 1) prior: on 20,190
    rows it moves the poor-health group's rate by 0.06, about 0.4 posterior sds, which is
    many Monte Carlo standard errors of the sampled mean."""
    group, visits = randhie()
    wrong = bayescheck.exact(visits_model(group, visits, a=20.0))
    res = bayescheck.check_model(visits_model(group, visits), posterior=wrong, random_seed=4)
    assert res.verdict == "fail"


def test_strongest_correlations_are_the_exact_posterior_correlations():
    """Longley's exact posterior correlations from the precision X'X + I / scale^2 (in units
    of s2), formed here, against what the advice reads from the exact posterior."""
    from bayescheck.inference.conjugacy.advice import strongest_correlations

    X, y = longley()
    pairs = strongest_correlations(bayescheck.exact(nig_model(X, y, 1e3, 2.0, 1e5)))
    cov = np.linalg.inv(X.T @ X + np.eye(X.shape[1]) / 1e6)
    corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    expected = sorted(((f"beta[{i}]", f"beta[{j}]", corr[i, j])
                       for i in range(7) for j in range(i + 1, 7) if abs(corr[i, j]) >= 0.99),
                      key=lambda p: -abs(p[2]))
    assert [p[:2] for p in pairs] == [p[:2] for p in expected]
    assert ("beta[0]", "beta[6]") == pairs[0][:2]
    np.testing.assert_allclose([p[2] for p in pairs], [p[2] for p in expected], atol=1e-9)


@pytest.mark.nuts
def test_longley_diagonal_mass_matrix_is_inconclusive_with_advice_and_low_rank_passes(
        tmp_path):
    """The user's default sampler cannot follow Longley's intercept-YEAR correlation: no
    verdict, and the advice (in the result, summary.json and the report) names that pair and
    the low-rank mass matrix, which then passes."""
    model = nig_model(*longley(), 1e3, 2.0, 1e5)
    res = bayescheck.check_model(model, random_seed=4, out=tmp_path / "run")
    assert res.verdict == "inconclusive"
    assert "beta[0] and beta[6]" in res.advice[0] and "low_rank" in res.advice[0]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["advice"] == res.advice
    assert "beta[0] and beta[6] correlated at" in (tmp_path / "run" / "report.html").read_text()
    res = bayescheck.check_model(model, random_seed=4, adaptation="low_rank")
    assert res.verdict == "pass", res.comparison.summary()
    assert res.advice == []
