"""Every kind of refusal: the model is refused, naming the variable that breaks it and why.

Each non-conjugate model has a conjugate twin, one line away, that is accepted: the refusal is
about that line, not about the model at large.
"""

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from bayescheck.models.errors import BayescheckError, DataError

import bayescheck

Y = np.array([0.3, -1.2, 0.8, 2.1, 0.4])
X = np.array([[1.0, 0.5], [0.2, -1.0], [1.5, 0.3], [-0.7, 0.9], [0.1, 0.1]])


def noise_scale(bad):
    with pm.Model() as m:
        sigma = pm.HalfNormal("sigma", 1.0) if bad else pm.InverseGamma("sigma2", 2, 2)
        mu = pm.Normal("mu", 0, 10 if bad else 10 * pm.math.sqrt(sigma))
        pm.Normal("y", mu, sigma if bad else pm.math.sqrt(sigma), observed=Y)
    return m


def non_affine_mean(bad):
    with pm.Model() as m:
        beta = pm.Normal("beta", 0, 1, shape=2)
        mean = pt.exp(pt.dot(X, beta)) if bad else pt.dot(X, beta)
        pm.Normal("y", mean, 1.0, observed=Y)
    return m


def product_of_latents(bad):
    with pm.Model() as m:
        a = pm.Normal("a", 0, 1)
        b = pm.Normal("b", 0, 1)
        pm.Normal("y", a * b if bad else a * 2.0 + b, 1.0, observed=Y)
    return m


def latent_in_a_scale(bad):
    with pm.Model() as m:
        a = pm.Normal("a", 1, 1)
        b = pm.Normal("b", 0, a if bad else 1.0)
        pm.Normal("y", a + b, 1.0, observed=Y)
    return m


def beta_prior_on_a_normal_mean(bad):
    with pm.Model() as m:
        mu = pm.Beta("m", 1, 1) if bad else pm.Normal("m", 0.5, 0.3)
        pm.Normal("y", mu, 1.0, observed=Y)
    return m


def semi_conjugate_variance(bad):
    with pm.Model() as m:
        s2 = pm.InverseGamma("s2", 3, 2)
        beta = pm.Normal("beta", 0, 10.0 if bad else 10.0 * pm.math.sqrt(s2), shape=2)
        pm.Normal("y", pt.dot(X, beta), pm.math.sqrt(s2), observed=Y)
    return m


def variance_used_as_a_scale(bad):
    with pm.Model() as m:
        s2 = pm.InverseGamma("s2", 3, 2)
        pm.Normal("y", 0.0, s2 if bad else pm.math.sqrt(s2), observed=Y)
    return m


def logit_probability(bad):
    with pm.Model() as m:
        p = pm.Beta("p", 1, 1)
        if bad:
            pm.Bernoulli("k", logit_p=p, observed=[1, 0, 1])
        else:
            pm.Bernoulli("k", p=p, observed=[1, 0, 1])
    return m


def hierarchical_beta(bad):
    with pm.Model() as m:
        if bad:
            kappa = pm.Gamma("kappa", 2, 1)
            p = pm.Beta("p", kappa, kappa)
        else:
            p = pm.Beta("p", 2.0, 2.0)
        pm.Bernoulli("k", p=p, observed=[1, 0, 1])
    return m


def student_t_observations(bad):
    with pm.Model() as m:
        z = pm.Normal("z", 0, 1)
        if bad:
            pm.StudentT("y", nu=3, mu=z, sigma=1.0, observed=Y)
        else:
            pm.Normal("y", mu=z, sigma=1.0, observed=Y)
    return m


def two_variances(bad):
    with pm.Model() as m:
        s2 = pm.InverseGamma("s2", 3, 2)
        t2 = pm.InverseGamma("t2", 3, 2) if bad else s2
        mu = pm.Normal("mu", 0, pm.math.sqrt(t2))
        pm.Normal("y", mu, pm.math.sqrt(s2), observed=Y)
    return m


def two_rates_in_one_count(bad):
    with pm.Model() as m:
        a = pm.Gamma("a", 1, 1)
        b = pm.Gamma("b", 1, 1)
        pm.Poisson("c", a + b if bad else a, observed=[3, 4])
        if not bad:
            pm.Poisson("d", b, observed=[1])
    return m


def vector_variance_with_latents(bad):
    with pm.Model() as m:
        s2 = pm.InverseGamma("s2", 3, 2, shape=2 if bad else ())
        scale = pm.math.sqrt(s2)[np.array([0, 0, 1, 1, 1])] if bad else pm.math.sqrt(s2)
        mu = pm.Normal("mu", 0, pm.math.sqrt(s2[0]) if bad else pm.math.sqrt(s2))
        pm.Normal("y", mu, scale, observed=Y)
    return m


def variance_in_a_mean(bad):
    with pm.Model() as m:
        s2 = pm.InverseGamma("s2", 3, 2)
        mu = pm.Normal("mu", s2 if bad else 0.0, pm.math.sqrt(s2))
        pm.Normal("y", mu, pm.math.sqrt(s2), observed=Y)
    return m


def multiple_of_a_probability(bad):
    with pm.Model() as m:
        p = pm.Beta("p", 1, 1)
        pm.Bernoulli("k", p=0.5 * p if bad else p, observed=[1, 0, 1])
    return m


def permuted_dirichlet(bad):
    with pm.Model() as m:
        pi = pm.Dirichlet("pi", np.ones(3))
        pm.Categorical("c", p=pi[::-1] if bad else pi, observed=[0, 2, 2])
    return m


def discrete_latent(bad):
    with pm.Model() as m:
        n = pm.Poisson("n", 3.0) if bad else pm.Normal("n", 3.0, 1.0)
        pm.Normal("y", n, 1.0, observed=Y)
    return m


def potential(bad):
    with pm.Model() as m:
        mu = pm.Normal("mu", 0, 1)
        if bad:
            pm.Potential("penalty", -(mu ** 2))
        pm.Normal("y", mu, 1.0, observed=Y)
    return m


def uniform_probability(bad):
    with pm.Model() as m:
        p = pm.Uniform("p", 0, 1) if bad else pm.Beta("p", 1, 1)
        pm.Bernoulli("k", p=p, observed=[1, 0, 1])
    return m


def lognormal_rate(bad):
    with pm.Model() as m:
        lam = pm.LogNormal("lam", 0, 1) if bad else pm.Gamma("lam", 2, 1)
        pm.Poisson("c", lam, observed=[1, 2])
    return m


def mvnormal_with_variance(bad):
    with pm.Model() as m:
        s2 = pm.InverseGamma("s2", 3, 2)
        if bad:
            z = pm.MvNormal("z", mu=np.zeros(2), cov=s2 * np.eye(2))
        else:
            z = pm.Normal("z", 0, pm.math.sqrt(s2), shape=2)
        pm.Normal("y", pt.dot(X, z), pm.math.sqrt(s2), observed=Y)
    return m


CASES = [
    (noise_scale, "sigma", "the noise scale has no conjugate prior"),
    (non_affine_mean, "y", "not affine in beta (it applies Exp)"),
    (product_of_latents, "y", "Mul of two expressions"),
    (latent_in_a_scale, "b", "its scale depends on a ~ Normal"),
    (beta_prior_on_a_normal_mean, "m", "m ~ Beta in y ~ Normal"),
    (semi_conjugate_variance, "beta", "only conditionally conjugate"),
    (variance_used_as_a_scale, "y", "proportional to s2**1"),
    (logit_probability, "k", "Sigmoid"),
    (hierarchical_beta, "kappa", "kappa ~ Gamma is a parameter of the prior of p ~ Beta"),
    (student_t_observations, "y", "y ~ StudentT"),
    (two_variances, "t2", "a second variance"),
    (two_rates_in_one_count, "c", "depends on a ~ Gamma and on b"),
    (vector_variance_with_latents, "s2", "a variance with 2 elements"),
    (variance_in_a_mean, "mu", "its mean depends on s2"),
    (multiple_of_a_probability, "k", "a multiple of p"),
    (permuted_dirichlet, "c", "not whole rows of pi in category order"),
    (discrete_latent, "n", "discrete latent"),
    (potential, "penalty", "pm.Potential"),
    (uniform_probability, "p", "its conjugate prior is Beta"),
    (lognormal_rate, "lam", "its conjugate prior is Gamma"),
    (mvnormal_with_variance, "z", "MvNormal whose covariance scales with s2"),
]


@pytest.mark.parametrize("build, name, phrase", CASES, ids=[c[0].__name__ for c in CASES])
def test_refused_with_the_variable_named(build, name, phrase):
    with pytest.raises(bayescheck.NotConjugate) as info:
        bayescheck.exact(build(True))
    assert info.value.variable == name
    assert phrase in str(info.value)
    assert isinstance(info.value, BayescheckError)  # exit code 2 on the command line


@pytest.mark.parametrize("build, name, phrase", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_conjugate_twin_is_accepted(build, name, phrase):
    ex = bayescheck.exact(build(False))
    assert np.isfinite(ex.log_evidence)


def test_partly_conjugate_model_names_what_is_conjugate():
    with pm.Model() as m:
        p = pm.Beta("p", 1, 1)
        z = pm.Normal("z", 0, 1)
        s = pm.HalfNormal("s", 1)
        pm.Bernoulli("k", p, observed=[1, 0])
        pm.Normal("y", z, s, observed=[0.5])
    with pytest.raises(bayescheck.NotConjugate) as info:
        bayescheck.exact(m)
    assert info.value.variable == "s"
    assert info.value.conjugate == ["p"]
    assert "conjugate elsewhere in the model: p" in str(info.value)


def test_impossible_data_is_a_data_error():
    with pm.Model() as m:
        p = pm.Beta("p", 1, 1)
        pm.Binomial("k", n=3, p=p, observed=[1, 4])
    with pytest.raises(DataError, match="k: observed value 4 at position 1"):
        bayescheck.exact(m)
