"""Gaussian models written as PyMC users write them, against formulas written here.

Each exact posterior is compared with an independent dense computation: the joint Gaussian of
latents and observations conditioned with ``numpy.linalg.solve``, the evidence as the
observations' marginal density (``scipy.stats.multivariate_normal`` / ``multivariate_t``);
the Normal-inverse-gamma regression also with the conjugate-models package.
"""

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from scipy import stats

import bayescheck

RNG = np.random.default_rng(20261205)


def gaussian_condition(prior_mean, prior_cov, design, offset, noise_cov, y):
    """Posterior mean, covariance of z and log p(y) for y = design @ z + offset + noise."""
    marginal_cov = design @ prior_cov @ design.T + noise_cov
    gain = np.linalg.solve(marginal_cov, design @ prior_cov).T
    mean = prior_mean + gain @ (y - design @ prior_mean - offset)
    cov = prior_cov - gain @ design @ prior_cov
    evidence = stats.multivariate_normal(design @ prior_mean + offset, marginal_cov).logpdf(y)
    return mean, cov, evidence


def exact_table(ex, names):
    """Posterior means and sds of the listed variables, flattened in order."""
    table = ex.summary(deterministics=False)
    rows = [r for r in table.index if r.split("[")[0] in names]
    return table.loc[rows, "mean"].to_numpy(), table.loc[rows, "sd"].to_numpy()


EIGHT_Y = np.array([28.0, 8, -3, 7, -1, 1, 18, 12])
EIGHT_S = np.array([15.0, 10, 16, 11, 9, 11, 10, 18])


def eight_schools(tau=5.0):
    with pm.Model(coords={"school": list("ABCDEFGH")}) as model:
        mu = pm.Normal("mu", 0, 5)
        theta = pm.Normal("theta", mu, tau, dims="school")
        pm.Normal("y", theta, EIGHT_S, observed=EIGHT_Y, dims="school")
    return model


def test_eight_schools_with_a_fixed_tau():
    ex = bayescheck.exact(eight_schools())
    assert ex.family == "Gaussian linear (9 latent, 8 observed)"
    # (mu, theta): mu ~ N(0, 25), theta_j = mu + 5 e_j
    prior_cov = np.full((9, 9), 25.0) + np.diag([0.0] + [25.0] * 8)
    design = np.hstack([np.zeros((8, 1)), np.eye(8)])
    mean, cov, evidence = gaussian_condition(np.zeros(9), prior_cov, design, np.zeros(8),
                                             np.diag(EIGHT_S ** 2), EIGHT_Y)
    got_mean, got_sd = exact_table(ex, ["mu", "theta"])
    np.testing.assert_allclose(got_mean, mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_sd, np.sqrt(np.diag(cov)), rtol=1e-10)
    assert ex.log_evidence == pytest.approx(evidence, rel=1e-12)
    assert list(ex.summary().index[:3]) == ["mu", "theta[A]", "theta[B]"]


def test_a_wrong_prior_scale_changes_the_answer():
    """The negative of the test above: tau = 10 is not the answer for tau = 5."""
    right, wrong = bayescheck.exact(eight_schools(5.0)), bayescheck.exact(eight_schools(10.0))
    assert not np.allclose(right.summary()["sd"], wrong.summary()["sd"], rtol=1e-3)


def regression_data(n=40, d=3):
    x = RNG.normal(size=(n, d))
    return x, x @ RNG.normal(size=d) + RNG.normal(size=n)


def test_regression_with_known_noise_and_pm_data():
    x, y = regression_data()
    with pm.Model(coords={"feature": ["a", "b", "c"], "row": np.arange(len(y))}) as model:
        xd = pm.Data("X", x, dims=("row", "feature"))
        b0 = pm.Normal("b0", 1.0, 10)
        beta = pm.Normal("beta", 0, 2, dims="feature")
        mu = pm.Deterministic("mu", b0 + xd @ beta, dims="row")
        pm.Normal("y", mu, 0.8, observed=y, dims="row")
    ex = bayescheck.exact(model)
    design = np.column_stack([np.ones(len(y)), x])
    prior_cov = np.diag([100.0, 4, 4, 4])
    mean, cov, evidence = gaussian_condition(np.array([1.0, 0, 0, 0]), prior_cov, design,
                                             np.zeros(len(y)), 0.64 * np.eye(len(y)), y)
    got_mean, got_sd = exact_table(ex, ["b0", "beta"])
    np.testing.assert_allclose(got_mean, mean, rtol=1e-9)
    np.testing.assert_allclose(got_sd, np.sqrt(np.diag(cov)), rtol=1e-9)
    assert ex.log_evidence == pytest.approx(evidence, rel=1e-11)
    # the deterministic mu = design @ z is exact too: its marginal sd from the covariance
    table = ex.summary()
    mu_rows = [r for r in table.index if r.startswith("mu[")]
    np.testing.assert_allclose(table.loc[mu_rows, "mean"], design @ mean, rtol=1e-9)
    np.testing.assert_allclose(table.loc[mu_rows, "sd"],
                               np.sqrt(np.einsum("ij,jk,ik->i", design, cov, design)),
                               rtol=1e-9)


def test_radon_style_varying_intercepts_with_known_variances():
    n, groups = 50, 4
    county = RNG.integers(0, groups, n)
    floor = RNG.integers(0, 2, n).astype(float)
    y = 1.0 + 0.2 * county - 0.5 * floor + RNG.normal(0, 0.7, n)
    with pm.Model(coords={"county": ["a", "b", "c", "d"]}) as model:
        idx = pm.Data("county_idx", county)
        fl = pm.Data("floor", floor)
        mu_a = pm.Normal("mu_a", 0, 10)
        alpha = pm.Normal("alpha", mu_a, 0.3, dims="county")
        beta = pm.Normal("beta", 0, 1)
        pm.Normal("log_radon", alpha[idx] + beta * fl, 0.7, observed=y)
    ex = bayescheck.exact(model)
    # z = (mu_a, alpha_1..4, beta)
    prior_cov = np.zeros((6, 6))
    prior_cov[:5, :5] = 100.0
    prior_cov[1:5, 1:5] += 0.09 * np.eye(4)
    prior_cov[5, 5] = 1.0
    design = np.zeros((n, 6))
    design[np.arange(n), 1 + county] = 1.0
    design[:, 5] = floor
    mean, cov, evidence = gaussian_condition(np.zeros(6), prior_cov, design, np.zeros(n),
                                             0.49 * np.eye(n), y)
    got_mean, got_sd = exact_table(ex, ["mu_a", "alpha", "beta"])
    np.testing.assert_allclose(got_mean, mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got_sd, np.sqrt(np.diag(cov)), rtol=1e-9)
    assert ex.log_evidence == pytest.approx(evidence, rel=1e-11)


def test_mvnormal_latent_and_observations():
    cov0 = np.array([[1.0, 0.5], [0.5, 2.0]])
    noise = np.array([[0.5, 0.1], [0.1, 0.3]])
    y = np.array([[1.0, 2.0], [0.0, 1.0], [0.5, -0.5]])
    with pm.Model() as model:
        z = pm.MvNormal("z", mu=np.array([0.2, -0.1]), cov=cov0)
        pm.MvNormal("obs", mu=z, cov=noise, observed=y)
    ex = bayescheck.exact(model)
    design = np.vstack([np.eye(2)] * 3)
    mean, cov, evidence = gaussian_condition(np.array([0.2, -0.1]), cov0, design, np.zeros(6),
                                             np.kron(np.eye(3), noise), y.reshape(-1))
    got_mean, got_sd = exact_table(ex, ["z"])
    np.testing.assert_allclose(got_mean, mean, rtol=1e-10)
    np.testing.assert_allclose(got_sd, np.sqrt(np.diag(cov)), rtol=1e-10)
    assert ex.log_evidence == pytest.approx(evidence, rel=1e-12)


def test_graph_shapes_users_write():
    """cumsum, stack, set_subtensor, einsum, mean, a latent observed variable as data."""
    y1, y2 = RNG.normal(size=5), RNG.normal(size=4)
    x_obs = RNG.normal(size=4)
    with pm.Model() as model:
        eps = pm.Normal("eps", 0, 1, shape=5)
        a = pm.Normal("a", 0, 2)
        b = pm.Normal("b", 1, 1)
        x = pm.Normal("x", 0, 1, observed=x_obs)
        v = pt.stack([a, b, a - b])
        w = pt.set_subtensor(pt.zeros(4)[1:], v)
        pm.Normal("o1", pt.cumsum(eps) + eps.mean(), 1.5, observed=y1)
        pm.Normal("o2", w + b * x, 1.0, observed=y2)
        pm.Normal("o3", pt.einsum("ij,j->i", np.ones((2, 3)), v), 0.5, observed=[1.0, 2.0])
    ex = bayescheck.exact(model)
    # z = (eps_1..5, a, b)
    prior_cov = np.diag([1.0] * 5 + [4.0, 1.0])
    prior_mean = np.array([0.0] * 5 + [0.0, 1.0])
    cum = np.tril(np.ones((5, 5))) + np.full((5, 5), 0.2)
    d1 = np.hstack([cum, np.zeros((5, 2))])
    stack = np.array([[1.0, 0], [0, 1], [1, -1]])
    d2 = np.zeros((4, 7))
    d2[1:, 5:] = stack
    d2[:, 6] += x_obs
    d3 = np.zeros((2, 7))
    d3[:, 5:] = np.ones((2, 3)) @ stack
    design = np.vstack([d1, d2, d3])
    noise = np.diag([2.25] * 5 + [1.0] * 4 + [0.25] * 2)
    y = np.concatenate([y1, y2, [1.0, 2.0]])
    mean, cov, evidence = gaussian_condition(prior_mean, prior_cov, design, np.zeros(11), noise,
                                             y)
    got_mean, got_sd = exact_table(ex, ["eps", "a", "b"])
    np.testing.assert_allclose(got_mean, mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got_sd, np.sqrt(np.diag(cov)), rtol=1e-9)
    # the observed x adds its own N(0, 1) density to the evidence
    evidence += stats.norm(0, 1).logpdf(x_obs).sum()
    assert ex.log_evidence == pytest.approx(evidence, rel=1e-11)


def test_missing_observations_are_latent_normals():
    y = np.array([0.3, np.nan, 1.2, -0.4])
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 1)
        pm.Normal("y", mu, 0.5, observed=y)
    ex = bayescheck.exact(model)
    seen = y[~np.isnan(y)]
    post_var = 1.0 / (1.0 + len(seen) / 0.25)
    post_mean = post_var * seen.sum() / 0.25
    table = ex.summary()
    assert table.loc["mu", "mean"] == pytest.approx(post_mean, rel=1e-12)
    assert table.loc["y_unobserved[0]", "sd"] == pytest.approx(np.sqrt(post_var + 0.25),
                                                               rel=1e-12)


def test_normal_inverse_gamma_regression_against_conjugate_models():
    cm = pytest.importorskip("conjugate.models")
    cd = pytest.importorskip("conjugate.distributions")
    x, y = regression_data(n=30)
    with pm.Model() as model:
        s2 = pm.InverseGamma("s2", 3.0, 2.0)
        beta = pm.Normal("beta", np.array([0.5, 0, 0]), 2.0 * pm.math.sqrt(s2), shape=3)
        pm.Normal("y", pt.dot(x, beta), pm.math.sqrt(s2), observed=y)
    ex = bayescheck.exact(model)
    assert ex.family.startswith("Normal-inverse-gamma (3 latent, variance s2, 30 observed)")
    prior = cd.NormalInverseGamma(mu=np.array([0.5, 0, 0]), alpha=3.0, beta=2.0,
                                  delta_inverse=4.0 * np.eye(3))
    post = cm.linear_regression(X=x, y=y, prior=prior)
    table = ex.summary()
    beta_rows = ["beta[0]", "beta[1]", "beta[2]"]
    np.testing.assert_allclose(table.loc[beta_rows, "mean"], post.mu, rtol=1e-9)
    t_scale = np.sqrt(post.beta / post.alpha * np.diag(post.delta_inverse))
    np.testing.assert_allclose(table.loc[beta_rows, "sd"],
                               stats.t(2 * post.alpha, 0, t_scale).std(), rtol=1e-9)
    assert table.loc["s2", "mean"] == pytest.approx(post.beta / (post.alpha - 1), rel=1e-9)
    # evidence: y is multivariate t with 2 a0 degrees of freedom
    shape = 2.0 / 3.0 * (np.eye(30) + 4.0 * x @ x.T)
    evidence = stats.multivariate_t(x @ np.array([0.5, 0, 0]), shape, df=6.0).logpdf(y)
    assert ex.log_evidence == pytest.approx(evidence, rel=1e-10)


def test_gamma_precision_is_the_same_model_as_an_inverse_gamma_variance():
    # rate 2: PyMC's Gamma keeps 1 / rate as a constant of the smallest exact dtype, and
    # float32(1 / 1.5) would make the two models differ in the 8th digit
    x, y = regression_data(n=25, d=2)
    with pm.Model() as by_variance:
        s2 = pm.InverseGamma("s2", 2.5, 2.0)
        beta = pm.Normal("beta", 0, 3.0 * pm.math.sqrt(s2), shape=2)
        pm.Normal("y", pt.dot(x, beta), pm.math.sqrt(s2), observed=y)
    with pm.Model() as by_precision:
        tau = pm.Gamma("tau", 2.5, 2.0)
        beta = pm.Normal("beta", 0, 3.0 / pm.math.sqrt(tau), shape=2)
        pm.Normal("y", pt.dot(x, beta), tau=tau, observed=y)
    a, b = bayescheck.exact(by_variance), bayescheck.exact(by_precision)
    np.testing.assert_allclose(a.summary().loc[["beta[0]", "beta[1]"]],
                               b.summary().loc[["beta[0]", "beta[1]"]], rtol=1e-10)
    assert a.log_evidence == pytest.approx(b.log_evidence, rel=1e-12)
    post_s2 = stats.invgamma(a.variables["s2"].args[0], scale=a.variables["s2"].kwds["scale"])
    post_tau = stats.gamma(b.variables["tau"].args[0], scale=b.variables["tau"].kwds["scale"])
    assert post_tau.mean() == pytest.approx(post_s2.expect(lambda s: 1.0 / s), rel=1e-8)


def test_known_mean_inverse_gamma_variance_against_conjugate_models():
    cm = pytest.importorskip("conjugate.models")
    cd = pytest.importorskip("conjugate.distributions")
    y = RNG.normal(0.3, 1.7, size=20)
    with pm.Model() as model:
        s2 = pm.InverseGamma("s2", 2.0, 3.0)
        pm.Normal("y", 0.3, pm.math.sqrt(s2), observed=y)
    ex = bayescheck.exact(model)
    post = cm.normal_known_mean(x_total=y.sum(), x2_total=(y ** 2).sum(), n=len(y), mu=0.3,
                                prior=cd.InverseGamma(2.0, 3.0))
    v = ex.variables["s2"]
    assert v.args[0] == pytest.approx(post.alpha, rel=1e-12)
    assert v.kwds["scale"] == pytest.approx(post.beta, rel=1e-12)
    # evidence by quadrature over s2
    from scipy.integrate import quad

    def integrand(s):
        return np.exp(stats.norm(0.3, np.sqrt(s)).logpdf(y).sum()
                      + stats.invgamma(2.0, scale=3.0).logpdf(s) - ex.log_evidence)

    total = quad(integrand, 0, 20, points=[1, 3, 10])[0] + quad(integrand, 20, np.inf)[0]
    assert total == pytest.approx(1.0, rel=1e-7)


def test_group_precisions_with_known_means():
    y = np.array([0.1, -0.4, 2.0, 3.5, -1.0])
    group = np.array([0, 0, 1, 1, 1])
    with pm.Model() as model:
        tau = pm.Gamma("tau", np.array([2.0, 3.0]), np.array([1.0, 0.5]), shape=2)
        pm.Normal("y", np.array([0.0, 0.0, 1.0, 1.0, 1.0]), 2.0 / pm.math.sqrt(tau)[group],
                  observed=y)
    ex = bayescheck.exact(model)
    resid = (y - np.array([0.0, 0, 1, 1, 1])) / 2.0
    shape = np.array([2.0 + 1.0, 3.0 + 1.5])
    rate = np.array([1.0 + 0.5 * (resid[:2] ** 2).sum(), 0.5 + 0.5 * (resid[2:] ** 2).sum()])
    np.testing.assert_allclose(ex.summary()["mean"], shape / rate, rtol=1e-12)


def test_exact_draws_match_the_exact_moments_and_pm_sample_layout():
    model = eight_schools()
    with model:
        pm.Deterministic("shift", model["theta"] - model["mu"], dims="school")
    ex = bayescheck.exact(model)
    tree = ex.sample(draws=5000, chains=4, random_seed=3)
    prior = pm.sample_prior_predictive(draws=5, model=model, random_seed=1)
    assert set(tree.posterior.data_vars) == set(prior.prior.data_vars)
    for name in prior.prior.data_vars:
        assert tree.posterior[name].dims == prior.prior[name].dims
    assert list(tree.posterior["theta"].coords["school"].values) == list("ABCDEFGH")
    assert list(tree.observed_data["y"].values) == list(EIGHT_Y)
    table = ex.summary()
    draws = tree.posterior["theta"].values.reshape(-1, 8)
    sd = table.loc[[f"theta[{s}]" for s in "ABCDEFGH"], "sd"].to_numpy()
    mean = table.loc[[f"theta[{s}]" for s in "ABCDEFGH"], "mean"].to_numpy()
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * sd / np.sqrt(len(draws)))
    shift = tree.posterior["shift"].values.reshape(-1, 8)
    np.testing.assert_allclose(shift, draws - tree.posterior["mu"].values.reshape(-1, 1))
    # the sd of the draws within 5 of its standard errors (normal: sd * sqrt(1 / (2 (n - 1))))
    assert np.all(np.abs(draws.std(axis=0, ddof=1) - sd) < 5 * sd / np.sqrt(2 * len(draws)))
