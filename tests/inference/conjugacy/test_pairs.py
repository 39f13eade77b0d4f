"""Beta, Dirichlet and Gamma pairs written as PyMC users write them, against formulas.

Each posterior is checked against the update written here and, where it covers the pair,
against the conjugate-models package; each evidence against a formula or a quadrature.
"""

import numpy as np
import pymc as pm
import pytest
from scipy import integrate, special, stats

import bayescheck

COIN = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1])


def test_coin_flips():
    with pm.Model() as model:
        p = pm.Beta("p", 2.0, 3.0)
        pm.Bernoulli("flips", p=p, observed=COIN)
    ex = bayescheck.exact(model)
    assert ex.family == "Beta-Bernoulli (p: 1 latent, 10 observed)"
    k, n = COIN.sum(), len(COIN)
    post = stats.beta(2 + k, 3 + n - k)
    row = ex.summary().loc["p"]
    assert row["mean"] == pytest.approx(post.mean(), rel=1e-14)
    assert row["sd"] == pytest.approx(post.std(), rel=1e-12)
    assert row["eti89_lb"] == pytest.approx(post.ppf(0.055), rel=1e-10)
    evidence = special.betaln(2 + k, 3 + n - k) - special.betaln(2, 3)
    assert ex.log_evidence == pytest.approx(evidence, rel=1e-12)
    # the evidence is the integral of PyMC's own joint density
    total = integrate.quad(lambda q: np.exp(stats.bernoulli(q).logpmf(COIN).sum()
                                            + stats.beta(2, 3).logpdf(q) - ex.log_evidence),
                           0, 1)[0]
    assert total == pytest.approx(1.0, rel=1e-8)


def test_coin_flips_against_conjugate_models():
    cm = pytest.importorskip("conjugate.models")
    cd = pytest.importorskip("conjugate.distributions")
    with pm.Model() as model:
        p = pm.Beta("p", 1.5, 0.5)
        pm.Bernoulli("flips", p=p, observed=COIN)
    v = bayescheck.exact(model).variables["p"]
    post = cm.binomial_beta(n=len(COIN), x=COIN.sum(), prior=cd.Beta(1.5, 0.5))
    assert (float(v.args[0]), float(v.args[1])) == pytest.approx((post.alpha, post.beta),
                                                                 rel=1e-14)


def test_binomial_with_p_indexed_by_group():
    cm = pytest.importorskip("conjugate.models")
    cd = pytest.importorskip("conjugate.distributions")
    trials = np.array([5, 6, 7, 8, 3])
    hits = np.array([2, 3, 4, 8, 0])
    group = np.array([0, 1, 1, 2, 0])
    with pm.Model(coords={"arm": ["a", "b", "c"]}) as model:
        p = pm.Beta("p", 1.0, np.array([1.0, 2.0, 3.0]), dims="arm")
        pm.Binomial("hits", n=trials, p=p[group], observed=hits)
    ex = bayescheck.exact(model)
    a = 1.0 + np.bincount(group, weights=hits)
    b = np.array([1.0, 2, 3]) + np.bincount(group, weights=trials - hits)
    np.testing.assert_allclose(ex.summary()["mean"], a / (a + b), rtol=1e-14)
    post = cm.binomial_beta(n=np.bincount(group, weights=trials),
                            x=np.bincount(group, weights=hits),
                            prior=cd.Beta(np.ones(3), np.array([1.0, 2, 3])))
    np.testing.assert_allclose(ex.variables["p"].args[0], post.alpha, rtol=1e-14)
    evidence = (np.sum(special.betaln(a, b) - special.betaln(1.0, np.array([1.0, 2, 3])))
                + np.sum(np.log(special.comb(trials, hits))))
    assert ex.log_evidence == pytest.approx(evidence, rel=1e-12)
    assert list(ex.summary().index) == ["p[a]", "p[b]", "p[c]"]


def test_shared_p_over_two_observed_variables():
    with pm.Model() as model:
        p = pm.Beta("p", 1.0, 1.0)
        pm.Bernoulli("a", p=p, observed=[1, 1, 0])
        pm.Binomial("b", n=4, p=p, observed=[3])
    v = bayescheck.exact(model).variables["p"]
    assert (float(v.args[0]), float(v.args[1])) == (1.0 + 5, 1.0 + 2)


def test_dirichlet_categorical_and_multinomial_against_conjugate_models():
    cm = pytest.importorskip("conjugate.models")
    cd = pytest.importorskip("conjugate.distributions")
    rolls = np.array([0, 2, 2, 1, 2, 0, 2])
    counts = np.array([[2, 3, 5], [1, 0, 4]])
    with pm.Model(coords={"face": ["x", "y", "z"]}) as model:
        pi = pm.Dirichlet("pi", a=np.array([1.0, 2.0, 0.5]), dims="face")
        pm.Categorical("roll", p=pi, observed=rolls)
        pm.Multinomial("counts", n=counts.sum(axis=1), p=pi, observed=counts)
    ex = bayescheck.exact(model)
    total = np.bincount(rolls, minlength=3) + counts.sum(axis=0)
    post = cm.multinomial_dirichlet(x=total, prior=cd.Dirichlet(np.array([1.0, 2.0, 0.5])))
    alpha = ex.variables["pi"].args[0] + ex.variables["pi"].args[1]  # Beta(a_k, A - a_k)
    np.testing.assert_allclose(ex.variables["pi"].args[0], post.alpha, rtol=1e-14)
    np.testing.assert_allclose(alpha, post.alpha.sum(), rtol=1e-14)
    a0 = np.array([1.0, 2.0, 0.5])
    a1 = a0 + total
    evidence = (special.gammaln(a0.sum()) - special.gammaln(a1.sum())
                + np.sum(special.gammaln(a1) - special.gammaln(a0)))
    evidence += np.sum(special.gammaln(counts.sum(axis=1) + 1)) - np.sum(
        special.gammaln(counts + 1))
    assert ex.log_evidence == pytest.approx(evidence, rel=1e-12)


def test_dirichlet_rows_indexed_by_group():
    labels = np.array([0, 1, 1, 2, 0])
    group = np.array([0, 0, 1, 1, 1])
    with pm.Model() as model:
        pi = pm.Dirichlet("pi", a=np.ones((2, 3)))
        pm.Categorical("y", p=pi[group], observed=labels)
    v = bayescheck.exact(model).variables["pi"]
    expected = np.ones((2, 3))
    np.add.at(expected, (group, labels), 1.0)
    np.testing.assert_allclose(v.args[0], expected)


def test_gamma_poisson_with_exposure_and_groups():
    cm = pytest.importorskip("conjugate.models")
    cd = pytest.importorskip("conjugate.distributions")
    counts = np.array([3, 0, 7, 2, 5])
    exposure = np.array([1.0, 0.5, 2.0, 1.0, 3.0])
    group = np.array([0, 0, 1, 1, 1])
    with pm.Model() as model:
        lam = pm.Gamma("lam", alpha=2.0, beta=0.5, shape=2)
        pm.Poisson("counts", mu=exposure * lam[group], observed=counts)
    ex = bayescheck.exact(model)
    shape = 2.0 + np.bincount(group, weights=counts)
    rate = 0.5 + np.bincount(group, weights=exposure)
    np.testing.assert_allclose(ex.summary()["mean"], shape / rate, rtol=1e-14)
    np.testing.assert_allclose(ex.summary()["sd"], np.sqrt(shape) / rate, rtol=1e-12)
    post = cm.poisson_gamma(x_total=np.bincount(group, weights=counts),
                            n=np.bincount(group, weights=exposure),
                            prior=cd.Gamma(np.full(2, 2.0), np.full(2, 0.5)))
    np.testing.assert_allclose(ex.variables["lam"].args[0], post.alpha, rtol=1e-14)
    # evidence: quadrature of each group's rate
    total = 0.0
    for g in (0, 1):
        mask = group == g

        def integrand(v, mask=mask):
            return np.exp(stats.poisson(exposure[mask] * v).logpmf(counts[mask]).sum()
                          + stats.gamma(2.0, scale=2.0).logpdf(v))

        total += np.log(integrate.quad(integrand, 0, np.inf)[0])
    assert ex.log_evidence == pytest.approx(total, rel=1e-8)


def test_gamma_exponential():
    cm = pytest.importorskip("conjugate.models")
    cd = pytest.importorskip("conjugate.distributions")
    waits = np.array([0.5, 1.2, 0.1, 2.2])
    with pm.Model() as model:
        lam = pm.Gamma("lam", 3.0, 2.0)
        pm.Exponential("wait", lam=lam, observed=waits)
    ex = bayescheck.exact(model)
    post = cm.exponential_gamma(x_total=waits.sum(), n=len(waits), prior=cd.Gamma(3.0, 2.0))
    v = ex.variables["lam"]
    assert float(v.args[0]) == pytest.approx(post.alpha, rel=1e-14)
    assert float(1.0 / v.kwds["scale"]) == pytest.approx(post.beta, rel=1e-14)
    total = integrate.quad(lambda r: np.exp(stats.expon(scale=1 / r).logpdf(waits).sum()
                                            + stats.gamma(3.0, scale=0.5).logpdf(r)
                                            - ex.log_evidence), 0, np.inf)[0]
    assert total == pytest.approx(1.0, rel=1e-8)


def test_independent_pairs_in_one_model():
    with pm.Model() as model:
        p = pm.Beta("p", 1, 1)
        lam = pm.Gamma("lam", 1, 1)
        pm.Bernoulli("k", p, observed=[1, 0])
        pm.Poisson("c", lam, observed=[3, 4])
    ex = bayescheck.exact(model)
    assert ex.family == ("Beta-Bernoulli (p: 1 latent, 2 observed) + "
                         "Gamma-Poisson (lam: 1 latent, 2 observed)")
    beta_part = special.betaln(2, 2) - special.betaln(1, 1)
    gamma_part = (special.gammaln(8) - 8 * np.log(3) - special.gammaln(4) - special.gammaln(5))
    assert ex.log_evidence == pytest.approx(beta_part + gamma_part, rel=1e-12)


def test_pair_draws_match_their_moments():
    with pm.Model() as model:
        pi = pm.Dirichlet("pi", a=np.array([2.0, 3.0, 4.0]))
        pm.Categorical("y", p=pi, observed=[0, 1, 2, 2])
    ex = bayescheck.exact(model)
    draws = ex.sample(draws=5000, chains=2, random_seed=7).posterior["pi"].values.reshape(-1, 3)
    np.testing.assert_allclose(draws.sum(axis=1), 1.0)
    table = ex.summary()
    assert np.all(np.abs(draws.mean(axis=0) - table["mean"].to_numpy())
                  < 5 * table["sd"].to_numpy() / np.sqrt(len(draws)))
