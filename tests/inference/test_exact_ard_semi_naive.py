"""Exact posterior draws of ARD (given the type-II ML hyperparameters) and of semi-naive Bayes
(SPODE, TAN, AODE) as a DataTree: the PyMC declaration's names, dims and coordinates, and
draw means and sds equal to the closed form within Monte Carlo error (a wrong mean fails)."""

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.models.counts import STICK_FRACTIONS
from scipy import stats

from bayescheck import ARD, BayescheckError, DataSource, Spec, exact_posterior, fit, load_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEMI = ["play_tennis_spode.toml", "play_tennis_tan.toml", "play_tennis_aode.toml"]
DRAWS, CHAINS = 2500, 4
N = DRAWS * CHAINS
#: Family-wise level of each fit's table of z-scores (Bonferroni over its entries).
ALPHA = 1e-3


def _dirichlet(alpha: np.ndarray):
    a0 = alpha.sum(axis=-1, keepdims=True)
    mean = alpha / a0
    return mean, np.sqrt(mean * (1 - mean) / (a0 + 1))


def _ard_closed_form(parameters: dict) -> dict:
    w = parameters["w"]
    keep = [w["features"].index(f) for f in w["cov_features"]]
    mean, sd = np.asarray(w["mean"]), np.asarray(w["sd"])
    return {"w_relevant": (mean[keep], sd[keep]), "w": (mean, sd)}


def _semi_closed_form(spec, parameters: dict) -> dict:
    """Mean and sd of every CPT entry: SPODE / TAN from the network engine's numbers in
    posterior.json; AODE counted afresh from the CSV with pandas."""
    if "network" in parameters:
        return {f"cpt_{n}": (np.asarray(c["mean"]), np.asarray(c["sd"]))
                for n, c in parameters["network"]["cpts"].items()}
    m = spec.model
    frame = pd.read_csv(spec.data.files()[0], dtype=str)
    classes, cats = parameters["classes"], parameters["categories"]
    a = m.concentration
    out = {}
    for s in m.features:
        cells = pd.crosstab(frame[m.target], frame[s]).reindex(
            index=classes, columns=cats[s], fill_value=0).to_numpy().ravel()
        out[f"joint_{s}"] = _dirichlet(a + cells.astype(float))
        for f in m.features:
            if f == s:
                continue
            t = pd.crosstab([frame[m.target], frame[s]], frame[f]).reindex(
                index=pd.MultiIndex.from_product([classes, cats[s]]), columns=cats[f],
                fill_value=0).to_numpy()
            out[f"cond_{s}_{f}"] = _dirichlet(a + t.astype(float))
    return out


def _z(tree, moments: dict) -> np.ndarray:
    """z-scores of every draw mean and draw sd against the closed form.

    The means' Monte Carlo standard error is sd / sqrt(N) (independent draws); the sds' is
    the delta-method ``sqrt((m4 - var^2) / N) / (2 sd)`` with the fourth central moment m4
    estimated from the draws. Constant entries (sd 0: pruned weights, one-state rows) must
    be exactly their mean.
    """
    out = []
    for v, (mean, sd) in moments.items():
        x = tree["posterior"][v].values.reshape(N, *np.shape(mean))
        const = sd == 0
        assert np.all(x[:, const] == mean[const]), v
        m, s = mean[~const], sd[~const]
        xs = x[:, ~const]
        dev = xs - xs.mean(axis=0)
        m4 = np.mean(dev**4, axis=0)
        se_sd = np.sqrt(np.maximum(m4 - s**4, 0) / N) / (2 * s)
        out += [(xs.mean(axis=0) - m) / (s / np.sqrt(N)), (xs.std(axis=0) - s) / se_sd]
    return np.concatenate([np.ravel(z) for z in out])


def _agrees(tree, moments) -> bool:
    z = _z(tree, moments)
    return bool(np.all(np.abs(z) < stats.norm.isf(ALPHA / (2 * z.size))))


def _diabetes_ard():
    """ARD on scikit-learn's diabetes data with five pure-noise columns (some get pruned)."""
    sklearn = pytest.importorskip("sklearn.datasets")
    X, y = sklearn.load_diabetes(return_X_y=True)
    noise = np.random.default_rng(0).standard_normal((len(y), 5)) * X.std()
    names = [f"x{j}" for j in range(X.shape[1] + 5)]
    frame = pd.DataFrame(np.column_stack([X, noise]), columns=names).assign(y=y / y.std())
    model = ARD(features=("intercept", *names), target="y", intercept=True)
    return Spec(model=model, data=DataSource.from_frame(frame))


def _ard_specs():
    return {"design": load_spec(EXAMPLES / "ard" / "design.toml"), "diabetes": _diabetes_ard()}


@pytest.mark.parametrize("name", ["design", "diabetes"])
def test_ard_draws_are_the_gaussian_given_the_estimates(name):
    spec = _ard_specs()[name]
    f = fit(spec)
    assert f.posterior.parameters["w"]["pruned"]  # both have pruned weights: w is 0 there
    tree = exact_posterior(spec, f, draws=DRAWS, chains=CHAINS, seed=3)
    assert _agrees(tree, _ard_closed_form(f.posterior.parameters))
    attrs = tree["posterior"].attrs
    assert "type-II maximum-likelihood" in attrs["conditional_on"]
    assert attrs["sigma2"] == f.posterior.parameters["sigma2"]["value"]
    pruned = [i for i, f_ in enumerate(f.posterior.parameters["w"]["features"])
              if f_ in f.posterior.parameters["w"]["pruned"]]
    assert np.all(np.isinf(attrs["alpha"][pruned]))
    # the correlations are the posterior covariance's, not only the marginals
    w = tree["posterior"]["w_relevant"].values.reshape(N, -1)
    cov = np.asarray(f.posterior.parameters["w"]["cov"])
    r, r_hat = (c / np.sqrt(np.outer(np.diag(c), np.diag(c))) for c in (cov, np.cov(w.T)))
    iu = np.triu_indices(len(cov), 1)
    z = (np.arctanh(r_hat[iu]) - np.arctanh(r[iu])) * np.sqrt(N - 3)
    assert np.all(np.abs(z) < stats.norm.isf(ALPHA / (2 * max(len(z), 1))))


def test_ard_draws_with_a_wrong_mean_are_caught():
    spec = load_spec(EXAMPLES / "ard" / "design.toml")
    right = fit(spec)
    wrong = copy.deepcopy(right.to_json())
    w = wrong["parameters"]["w"]
    i = w["features"].index(w["cov_features"][0])
    w["mean"][i] += 0.1 * w["sd"][i]  # a tenth of a posterior sd
    tree = exact_posterior(spec, wrong, draws=DRAWS, chains=CHAINS, seed=3)
    assert not _agrees(tree, _ard_closed_form(right.posterior.parameters))


@pytest.mark.parametrize("name", SEMI)
def test_semi_naive_draws_are_the_dirichlet_posterior(name):
    spec = load_spec(EXAMPLES / "semi_naive_bayes" / name)
    f = fit(spec)
    tree = exact_posterior(spec, f, draws=DRAWS, chains=CHAINS, seed=4)
    assert _agrees(tree, _semi_closed_form(spec, f.posterior.parameters))


@pytest.mark.parametrize("name", ["play_tennis_tan.toml", "play_tennis_aode.toml"])
def test_semi_naive_draws_with_a_wrong_concentration_are_caught(name):
    spec = load_spec(EXAMPLES / "semi_naive_bayes" / name)
    right = fit(spec)
    wrong = copy.deepcopy(right.to_json())
    wrong["parameters"]["concentration"] = 1.5
    tree = exact_posterior(spec, wrong, draws=DRAWS, chains=CHAINS, seed=4)
    assert not _agrees(tree, _semi_closed_form(spec, right.posterior.parameters))


def _declared(model) -> dict:
    """Free variables of a PyMC model and its deterministics but the query sums (which the
    exact draws leave out, as for Bayesian networks) and the stick-breaking fractions the
    tables are declared through (a parametrisation): name -> (dims, coords)."""
    out = {}
    for v in [*model.free_RVs, *model.deterministics]:
        dims = tuple(model.named_vars_to_dims.get(v.name, ()))
        query_sum = v.name.startswith("evidence_") or (
            v.name.startswith("joint_") and dims[-1:] != (f"{v.name[6:]}__joint",))
        if (query_sum and v in model.deterministics) or v.name == STICK_FRACTIONS:
            continue  # AODE's tables joint_<s> (dims <s>__joint) are kept
        out[v.name] = (dims, {d: list(model.coords[d]) for d in dims})
    return out


def _drawn(tree) -> dict:
    post = tree["posterior"]
    return {v: (post[v].dims[2:], {d: list(post[d].values) for d in post[v].dims[2:]})
            for v in post.data_vars}


@pytest.mark.slow  # builds the PyMC declarations (imports PyMC)
@pytest.mark.parametrize("name", ["ard", *SEMI])
def test_names_dims_and_coords_are_the_declarations(name):
    spec = load_spec(EXAMPLES / ("ard/design.toml" if name == "ard"
                                 else f"semi_naive_bayes/{name}"))
    f = fit(spec)
    drawn = _drawn(exact_posterior(spec, f, draws=20, chains=2, seed=0))
    declared = _declared(spec.model.declare(spec.data, fit=f))
    if name == "play_tennis_aode.toml":
        # The declaration holds the SPODEs of the super-parents its checked queries use and
        # their averaged query score; the draws hold every SPODE, under the same names.
        score = declared.pop("score")
        assert score[0] == ("query", "class")
        assert set(declared) < set(drawn)
        unused = {s for s in spec.model.features if f"joint_{s}" not in declared}
        assert unused == {"temperature"}  # m' = 5: Cool was seen 4 times
        assert all(v.startswith(("joint_temperature", "cond_temperature_")) for v in
                   set(drawn) - set(declared))
        drawn = {v: drawn[v] for v in declared}
    assert drawn == declared


@pytest.mark.slow  # imports ArviZ
def test_arviz_summarises_the_draws_next_to_the_declaration():
    az = pytest.importorskip("arviz")
    spec = load_spec(EXAMPLES / "semi_naive_bayes" / "play_tennis_tan.toml")
    summary = az.summary(exact_posterior(spec, fit(spec), draws=200, chains=2, seed=0))
    assert "cpt_play_tennis[(root), No]" in summary.index


def test_ard_with_every_weight_pruned_is_refused():
    spec = load_spec(EXAMPLES / "ard" / "design.toml")
    post = copy.deepcopy(fit(spec).to_json())
    post["parameters"]["w"]["cov_features"] = []
    with pytest.raises(BayescheckError, match="every weight was pruned"):
        exact_posterior(spec, post)
