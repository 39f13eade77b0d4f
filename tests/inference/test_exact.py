"""The exact posterior of a regression fit as a DataTree: the declaration's names and dims,
and draws whose distribution is the closed-form posterior (and a wrong one is caught).

The count models and naive Bayes: tests/inference/test_exact_conjugate.py."""

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from bayescheck import BayescheckError, exact_posterior, fit, load_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DRAWS, CHAINS = 1000, 4
N = DRAWS * CHAINS
#: Per-statistic test level; Bonferroni over the few statistics each fit is judged on.
ALPHA = 1e-3


def _agrees(tree, post: dict) -> bool:
    """Draws against the analytic marginals (KS) and correlations (Fisher z)."""
    theta = tree["posterior"]["theta"].values.reshape(N, -1)
    t = post["theta"]
    d = theta.shape[1]
    if t["distribution"] == "normal":
        marginals = [stats.norm(m, s) for m, s in zip(t["mean"], t["sd"], strict=True)]
    else:
        marginals = [stats.t(t["df"], m, s) for m, s in zip(t["mean"], t["scale"], strict=True)]
        s2 = post["sigma2"]
        marginals_s2 = stats.invgamma(s2["shape"], scale=s2["scale"])
        sigma2 = tree["posterior"]["sigma2"].values.ravel()
        if stats.kstest(sigma2, marginals_s2.cdf).pvalue < ALPHA / (2 * d + 1):
            return False
    for j in range(d):
        if stats.kstest(theta[:, j], marginals[j].cdf).pvalue < ALPHA / (2 * d + 1):
            return False
    # Correlations: atanh(r_hat) is normal with sd 1 / sqrt(N - 3) around atanh(r).
    cov = np.array(t["cov"])
    r = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    r_hat = np.corrcoef(theta.T)
    iu = np.triu_indices(d, 1)
    z = (np.arctanh(r_hat[iu]) - np.arctanh(r[iu])) * np.sqrt(N - 3)
    return bool(np.all(np.abs(z) < stats.norm.isf(ALPHA / (2 * (2 * d + 1)))))


@pytest.mark.parametrize("name", ["unknown_noise", "stream"])
def test_exact_draws_follow_the_closed_form_posterior(name):
    spec = load_spec(EXAMPLES / "linear_regression" / f"{name}.toml")
    f = fit(spec)
    tree = exact_posterior(spec, f, draws=DRAWS, chains=CHAINS, seed=1)
    assert _agrees(tree, f.posterior.parameters)
    post = tree["posterior"]
    assert post["theta"].dims == ("chain", "draw", "feature")
    assert list(post["feature"].values) == list(spec.model.features)
    assert ("sigma2" in post) == (name == "unknown_noise")


def test_draws_from_a_wrong_posterior_are_caught():
    spec = load_spec(EXAMPLES / "linear_regression" / "unknown_noise.toml")
    f = fit(spec)
    # A plausible slip: theta | sigma2 drawn with the marginal cov b / (a - 1) P^-1 in place of
    # P^-1, so sigma2 enters twice (sd off by a factor sqrt(b / (a - 1)) = 0.71 here).
    wrong = f.to_json()
    theta = {**wrong["parameters"]["theta"], "scale_matrix": wrong["parameters"]["theta"]["cov"]}
    wrong["parameters"] = {**wrong["parameters"], "theta": theta}
    tree = exact_posterior(spec, wrong, draws=DRAWS, chains=CHAINS, seed=1)
    assert not _agrees(tree, f.posterior.parameters)


def test_names_and_dims_are_the_declarations_and_arviz_summarises_them():
    import arviz as az

    spec = load_spec(EXAMPLES / "linear_regression" / "unknown_noise.toml")
    f = fit(spec)
    tree = exact_posterior(spec, f, draws=200, chains=2, seed=0)
    model = spec.model.declare(spec.data)
    free = {v.name for v in model.free_RVs}
    assert set(tree["posterior"].data_vars) == free
    for v in free:
        assert tree["posterior"][v].dims[2:] == tuple(model.named_vars_to_dims.get(v, ()))
    summary = az.summary(tree)
    assert {"theta[size]", "theta[age]", "theta[dist]", "sigma2"} <= set(summary.index)


def test_a_model_without_exact_draws_is_refused():
    spec = load_spec(EXAMPLES / "gaussian_mixture" / "blobs.toml")  # EM: a point estimate
    with pytest.raises(BayescheckError, match="no exact posterior draws"):
        exact_posterior(spec, fit(spec))
