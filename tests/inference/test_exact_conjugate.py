"""Exact posterior draws of the count models, naive Bayes and discrete Bayesian networks as a
DataTree: the PyMC declaration's names, dims and coordinates, and moments equal to the closed
form."""

import copy
from pathlib import Path

import numpy as np
import pytest
from bayescheck.inference.engines.naive_bayes_stats import (
    UnivariateNIGPrior,
    normal_normal_inverse_gamma,
)
from bayescheck.models.counts import STICK_FRACTIONS

from bayescheck import exact_posterior, fit, load_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SPECS = ["beta_bernoulli/coin.toml", "dirichlet_categorical/die.toml",
         "naive_bayes/play_tennis.toml", "naive_bayes/cells.toml", "bayesian_network/asia.toml"]
DRAWS, CHAINS = 2500, 4
N = DRAWS * CHAINS


def _closed_form(parameters: dict) -> dict:
    """Posterior mean and sd of every declared variable, from posterior.json's numbers."""
    if "p" in parameters:
        a, b = parameters["p"]["a"], parameters["p"]["b"]
        return {"p": (a / (a + b), np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1))))}
    if "pi" in parameters:
        return {"pi": _dirichlet(np.asarray(parameters["pi"]["alpha"]))}
    if "cpts" in parameters:
        return {f"cpt_{n}": _dirichlet(np.asarray(c["concentration"], float))
                for n, c in parameters["cpts"].items()}
    st, settings = parameters["statistics"], parameters["settings"]
    alpha = settings["concentration"]
    out = {"class_weight": _dirichlet(alpha + np.asarray(st["class_counts"], float))}
    for f, table in st["category_counts"].items():
        out[f"p_{f}"] = _dirichlet(alpha + np.asarray(table, float))
    if settings["nig_prior"] is not None:
        K = len(st["classes"])
        nig = normal_normal_inverse_gamma(
            count=np.broadcast_to(np.asarray(st["class_counts"], float)[:, None],
                                  np.shape(st["gaussian_mean"])),
            mean=np.asarray(st["gaussian_mean"]).reshape(K, -1),
            m2=np.asarray(st["gaussian_m2"]).reshape(K, -1),
            prior=UnivariateNIGPrior(**settings["nig_prior"]))
        mu, s2 = nig.mean_marginal(), nig.variance_marginal()
        out["mu"] = (np.asarray(mu.mean()), np.asarray(mu.std()))
        out["sigma2"] = (np.asarray(s2.mean()), np.asarray(s2.std()))
    return out


def _dirichlet(alpha: np.ndarray):
    a0 = alpha.sum(axis=-1, keepdims=True)
    mean = alpha / a0
    return mean, np.sqrt(mean * (1 - mean) / (a0 + 1))


@pytest.mark.slow  # builds the PyMC declarations (imports PyMC)
@pytest.mark.parametrize("name", SPECS)
def test_names_dims_and_coords_are_the_declarations(name):
    spec = load_spec(EXAMPLES / name)
    tree = exact_posterior(spec, fit(spec), draws=50, chains=2, seed=0)
    model = spec.model.declare(spec.data)
    # the declaration's parameters: its free variables, and the tables declared as
    # deterministics of their stick-breaking fractions (a parametrisation, not drawn)
    free = {v.name for v in [*model.free_RVs, *model.deterministics]
            if v.name != STICK_FRACTIONS and v.name not in ("score", "log_score")
            and not v.name.startswith(("joint_", "evidence_"))}
    post = tree["posterior"]
    assert set(post.data_vars) == free
    for v in free:
        dims = tuple(model.named_vars_to_dims.get(v, ()))
        assert post[v].dims == ("chain", "draw", *dims)
        for d in dims:
            assert list(post[d].values) == list(model.coords[d])


def _z(tree, moments) -> dict:
    """Standardised error of each draw mean (independent draws: sd / sqrt(N))."""
    out = {}
    for v, (mean, sd) in moments.items():
        draws = tree["posterior"][v].values.reshape(N, *np.shape(mean))
        out[v] = (draws.mean(axis=0) - mean) / (sd / np.sqrt(N))
    return out


@pytest.mark.parametrize("name", SPECS)
def test_draw_moments_are_the_closed_form(name):
    spec = load_spec(EXAMPLES / name)
    f = fit(spec)
    tree = exact_posterior(spec, f, draws=DRAWS, chains=CHAINS, seed=2)
    moments = _closed_form(f.posterior.parameters)
    n_stats = sum(np.size(m) for m, _ in moments.values())
    limit = 3.3 + 0.5 * np.log(n_stats)  # a family-wise bound on |z| over every entry
    for v, z in _z(tree, moments).items():
        assert np.all(np.abs(z) < limit), (v, z)
    for v, (mean, sd) in moments.items():  # the sds too (10 % is far beyond MC error here)
        draws = tree["posterior"][v].values.reshape(N, *np.shape(mean))
        np.testing.assert_allclose(draws.std(axis=0), sd, rtol=0.1)


def test_draws_from_a_wrong_concentration_are_caught():
    spec = load_spec(EXAMPLES / "naive_bayes" / "play_tennis.toml")
    right = fit(spec)
    wrong = copy.deepcopy(right.to_json())
    wrong["parameters"]["settings"] = {**wrong["parameters"]["settings"], "concentration": 2.0}
    tree = exact_posterior(spec, wrong, draws=DRAWS, chains=CHAINS, seed=2)
    z = _z(tree, _closed_form(right.posterior.parameters))
    assert max(np.max(np.abs(v)) for v in z.values()) > 10


@pytest.mark.parametrize("wrong", [False, True])
def test_bayes_rule_draws_are_the_posterior_over_hypotheses(wrong):
    """The indicator means are P(h | D) within 4 binomial standard errors; a wrong one fails.

    Names and dims are the declaration's (``h`` scalar, ``posterior`` over ``hypothesis``).
    """
    spec = load_spec(EXAMPLES / "bayes_rule" / "disease.toml")
    result = fit(spec)
    tree = exact_posterior(spec, result, draws=DRAWS, chains=CHAINS)
    post = tree["posterior"]
    model = spec.model.declare()
    assert post["posterior"].dims[2:] == tuple(model.named_vars_to_dims["posterior"])
    assert post["h"].dims == ("chain", "draw")
    p = np.array([result.posterior.parameters["posterior"]["mean"][h]
                  for h in post["hypothesis"].values])
    if wrong:
        p = p[::-1]
    means = post["posterior"].values.reshape(N, -1).mean(axis=0)
    z = (means - p) / np.sqrt(p * (1 - p) / N)
    assert (np.max(np.abs(z)) > 4) == wrong
    assert np.array_equal(post["posterior"].values.argmax(-1), post["h"].values)
