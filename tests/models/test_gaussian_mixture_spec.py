"""gaussian_mixture through the spec path: the source material's worked step, posterior.json,
alignment of the components with the declaration, bad input exits 2 naming what is wrong,
and the PyMC declaration's log density against an independent scipy derivation."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.inference.engines.mixture_em import kmeans
from bayescheck.inference.families import fit
from bayescheck.inference.families.gaussian_mixture import marginal_mode
from bayescheck.models import load_spec
from bayescheck.models.errors import DataError, SpecError
from bayescheck.reports.cli import main
from scipy import stats

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "gaussian_mixture"


def _one_step(x, means, sd, kappa=0.0, m0=0.0):
    """One EM step of the source material's model by hand: equal weights, shared known sd.

    E step: gamma_ik = N(x_i | mu_k, sd) / sum_j N(x_i | mu_j, sd) (the weights cancel);
    M step: mu_k = (sum_i gamma_ik x_i + kappa m0) / (sum_i gamma_ik + kappa).
    """
    x = np.asarray(x, float)[:, None]
    dens = np.exp(-0.5 * ((x - np.asarray(means)[None]) / sd) ** 2)
    gamma = dens / dens.sum(axis=1, keepdims=True)
    return (gamma * x).sum(0) + kappa * m0, gamma.sum(0) + kappa


def test_worked_step_reproduces_the_source(tmp_path):
    spec = load_spec(EXAMPLES / "worked_step.toml")
    result = fit(spec)
    num, den = _one_step([0, 3, 7, 10], [2.0, 8.0], 2.0, kappa=0.01, m0=5.0)
    means = np.array(result.posterior.parameters["means"]["estimate"])[:, 0]
    np.testing.assert_allclose(means, num / den, rtol=1e-12)
    assert means == pytest.approx([1.6145, 8.3855], abs=1e-4)
    assert result.record.info["n_iter"] == 1
    # the same step without the prior (maximum likelihood) is the source's exact formula
    ml = tmp_path / "ml.toml"
    text = (EXAMPLES / "worked_step.toml").read_text()
    text = text.replace("kappa = 0.01\n", "kappa = 0.0\n")
    ml.write_text(text.replace('path = "worked_step.csv"',
                               f'path = "{EXAMPLES / "worked_step.csv"}"'))
    ml_fit = fit(load_spec(ml))
    num, den = _one_step([0, 3, 7, 10], [2.0, 8.0], 2.0)
    got = np.array(ml_fit.posterior.parameters["means"]["estimate"])[:, 0]
    np.testing.assert_allclose(got, num / den, rtol=1e-12)
    assert got == pytest.approx([1.5976, 8.4024], abs=1e-4)
    assert ml_fit.record.info["estimate"] == "ML"


def test_fit_cli_writes_posterior_json(tmp_path, capsys):
    code = main(["fit", str(EXAMPLES / "blobs.toml"), "--out", str(tmp_path), "--quiet"])
    assert code == 0
    post = json.loads((tmp_path / "posterior.json").read_text())
    assert post["model"] == "gaussian_mixture"
    params = post["parameters"]
    assert set(params) >= {"weights", "means", "sds", "covariances"}
    assert sum(params["weights"]["estimate"]) == pytest.approx(1.0)
    info = post["fit"]
    assert len(info["restart_log_likelihoods"]) == 5
    assert info["log_likelihood"] == pytest.approx(max(info["restart_log_likelihoods"]))
    assert np.all(np.diff(info["history"]) >= -1e-9 * abs(info["history"][-1]))
    assert "log-likelihood" in capsys.readouterr().out


def test_components_are_named_as_the_declaration_names_them():
    spec = load_spec(EXAMPLES / "blobs.toml")
    result = fit(spec)
    X = spec.model.data_matrix(spec.data)
    ref = kmeans(X, spec.model.n_components)[0]
    means = np.array(result.posterior.parameters["means"]["estimate"])
    np.testing.assert_allclose(means, ref, atol=0.3)  # matched component by component
    names = [e.name for e in result.posterior.estimates]
    assert names[:3] == ["weights[0]", "weights[1]", "weights[2]"]
    assert "covariances[0, x2, x1]" in names and "covariances[0, x1, x2]" not in names


def test_declaration_starts_from_the_fits_clustering_and_needs_it():
    spec = load_spec(EXAMPLES / "blobs.toml")
    result = fit(spec)
    X = spec.model.data_matrix(spec.data)
    centres, labels = result.record.declaration["clustering"]
    expected = kmeans(X, spec.model.n_components)
    np.testing.assert_array_equal(centres, expected[0])
    np.testing.assert_array_equal(labels, expected[1])
    with pytest.raises(SpecError, match="needs its EM fit"):
        spec.model.declare(spec.data)


def test_one_dimensional_components_sorted_by_mean(tmp_path):
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(5, 1, 60), rng.normal(-5, 1, 40)])
    pd.DataFrame({"x": x}).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text('model = "gaussian_mixture"\nn_components = 2\n'
                                     'covariance = "diag"\n[data]\npath = "d.csv"\n')
    result = fit(load_spec(tmp_path / "s.toml"))
    means = np.array(result.posterior.parameters["means"]["estimate"])[:, 0]
    assert means[0] < means[1]
    assert result.posterior.parameters["weights"]["estimate"] == pytest.approx([0.4, 0.6], abs=1e-6)


def _write(tmp_path, body, data=None):
    if data is not None:
        data.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text('model = "gaussian_mixture"\n' + body)
    return tmp_path / "s.toml"


@pytest.mark.parametrize("body, key, match", [
    ('n_components = 2\ncovariance = "banana"\n[data]\npath = "d.csv"\n', "covariance",
     "expected one of 'full', 'diag', 'spherical', 'tied', got 'banana'"),
    ('n_components = 0\n[data]\npath = "d.csv"\n', "n_components", ">= 1"),
    ('n_components = 2\n[data]\npath = "d.csv"\n[fit]\nbogus = 1\n', "fit.bogus",
     "valid keys here are: equal_weights, init_means, known_sd, max_iter, n_init, seed, tol"),
    ('n_components = 2\ncovariance = "diag"\n[data]\npath = "d.csv"\n[prior]\niw_dof = 3\n'
     'iw_scale = 1\n', "prior.iw_dof", "inverse-Wishart prior applies to covariance 'full'"),
    ('n_components = 2\n[data]\npath = "d.csv"\n[prior]\niw_dof = 3\n', "prior.iw_scale",
     "is required with iw_dof"),
    ('n_components = 2\n[data]\npath = "d.csv"\n[prior]\nconcentration = 0.5\n',
     "prior.concentration", ">= 1"),
    ('n_components = 2\n[data]\npath = "d.csv"\n[prior]\nkappa = 1e308\n', "prior.kappa",
     r"1e\+308 is too large: a prior worth more than 1e\+15 observations"),
    ('n_components = 2\n[data]\npath = "d.csv"\n[prior]\nconcentration = 1e300\n',
     "prior.concentration", "too large"),
    ('n_components = 2\n[data]\npath = "d.csv"\n[prior]\niw_dof = 1e300\niw_scale = 1\n',
     "prior.iw_dof", "too large"),
    ('n_components = 2\n[data]\npath = "d.csv"\n[prior]\niw_dof = 0.5\niw_scale = 1\n',
     "prior.iw_dof", "expected a number > 1, got 0.5"),
    ('n_components = 2\ncovariance = "diag"\n[data]\npath = "d.csv"\n[prior]\n'
     'ig_shape = 1e16\nig_scale = 1\n', "prior.ig_shape", "too large"),
    ('n_components = 2\ncovariance = "diag"\n[data]\npath = "d.csv"\n[prior]\n'
     'ig_shape = 1\nig_scale = 1e200\n', "prior.ig_scale", "its square overflows"),
    ('n_components = 2\n[data]\npath = "d.csv"\n[prior]\nmean = 1e200\n', "prior.mean",
     "its square overflows"),
    ('n_components = 2\n[data]\npath = "d.csv"\n[prior]\nmean = 1e150\nkappa = 1e15\n',
     "prior.kappa", r"kappa \* mean\^2 exceeds"),
    ('n_components = 2\n[data]\npath = "d.csv"\n[fit]\ninit_means = [1, 2, 3]\n',
     "fit.init_means", "expected 2 x 2 numbers"),
    ('n_components = 2\n[data]\npath = "d.csv"\nfeatures = ["a", "zz"]\n', "data.features",
     "column 'zz' is not in"),
])
def test_bad_spec_names_the_key(tmp_path, body, key, match):
    path = _write(tmp_path, body, pd.DataFrame({"a": [0.0, 1, 2, 5], "b": [1.0, 0, 3, 2]}))
    with pytest.raises(SpecError, match=match) as info:
        load_spec(path)
    assert info.value.key == key
    assert str(path) in str(info.value)


def test_the_constructor_refuses_what_the_spec_refuses():
    """A mixture built in Python is refused for the same reasons, naming the argument."""
    from bayescheck.models.gaussian_mixture import GaussianMixture
    from bayescheck.models.validation import InvalidArgument

    base = {"features": ("a", "b"), "n_components": 2}
    for kw, key in (({"kappa": -1.0}, "kappa"), ({"kappa": 1e308}, "kappa"),
                    ({"concentration": 0.5}, "concentration"), ({"n_init": 0}, "n_init"),
                    ({"tol": float("nan")}, "tol"), ({"iw_dof": 3.0}, "iw_scale"),
                    ({"iw_dof": 1.0, "iw_scale": 1.0}, "iw_dof"),
                    ({"known_sd": 0.0}, "known_sd"), ({"prior_mean": [1.0]}, "prior_mean")):
        with pytest.raises(InvalidArgument, match=f"^{key}: "):
            GaussianMixture(**base, **kw)
    model = GaussianMixture(**base, kappa=1e15, iw_dof=1e15, iw_scale=1.0)  # the limits
    assert (model.kappa, model.iw_scale.tolist()) == (1e15, [[1.0, 0.0], [0.0, 1.0]])


def test_bad_data_exits_2_naming_what_is_wrong(tmp_path, capsys):
    frame = pd.DataFrame({"a": [0.0, 1, 2, 5], "b": [1.0, 0, 3, 2]})
    cases = [
        ("n_components = 5\n", frame, "n_components = 5 is more than the 4 row"),
        ("n_components = 2\n", frame.assign(b=[1.0, np.nan, 3, 2]),
         "column 'b', row 2: missing value (NaN)"),
        ("n_components = 2\n", frame.assign(b=3.0),
         "column 'b': constant column (every row is 3)"),
    ]
    for body, data, message in cases:
        path = _write(tmp_path, body + '[data]\npath = "d.csv"\n', data)
        for command in ("fit", "check"):
            code = main([command, str(path), "--out", str(tmp_path / "out"), "--quiet"])
            err = capsys.readouterr().err
            assert code == 2, (command, message, err)
            assert message in err and "d.csv" in err


def test_check_refuses_an_improper_prior(tmp_path, capsys):
    data = pd.DataFrame({"a": [0.0, 1, 2, 5, 8, 9], "b": [1.0, 0, 3, 2, 7, 8]})
    path = _write(tmp_path, 'n_components = 2\n[data]\npath = "d.csv"\n', data)
    assert main(["check", str(path), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "prior.kappa" in capsys.readouterr().err
    path = _write(tmp_path, 'n_components = 2\n[data]\npath = "d.csv"\n[prior]\nkappa = 0.1\n')
    assert main(["check", str(path), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "prior.iw_dof" in capsys.readouterr().err


def test_data_errors_are_bayescheck_errors(tmp_path):
    path = _write(tmp_path, 'n_components = 9\n[data]\npath = "d.csv"\n',
                  pd.DataFrame({"a": [0.0, 1, 2]}))
    with pytest.raises(DataError, match="more than the 3 row"):
        fit(load_spec(path))


def test_marginal_mode():
    rng = np.random.default_rng(0)
    assert marginal_mode(rng.normal(3.0, 1.0, 4000)) == pytest.approx(3.0, abs=0.4)
    # gamma(3, 1) has its mode at 2 (mean 3)
    assert marginal_mode(rng.gamma(3.0, 1.0, 4000)) == pytest.approx(2.0, abs=0.5)
    assert marginal_mode([2.0, 2.0]) == 2.0


@pytest.mark.slow
def test_declared_log_density_against_scipy():
    """The declaration's log density (full covariance, two components, equal weights) equals,
    up to a constant, the independent derivation: likelihood + normal prior of each mean given
    its Sigma + inverse-Wishart log density of each Sigma + the log Jacobian of the sampled
    coordinates. These are, per component, the Cholesky factor U (log-diagonal, off-diagonal)
    of the precision in whitened coordinates y = L^-1 (x - s) (s, L L' the mean and covariance
    of the anchor mixture) and z in mu = s + L (a + U^-T z / c), a the anchor's mean in y,
    c = sqrt(n w + kappa). |dSigma / dU| = |L|^(D+1) |Sigma_y|^(D+1) 2^D prod_i U_ii^(D-i+2),
    |dmu / dz| = |L| |U|^-1 c^-D."""
    from bayescheck.models.gaussian_mixture import GaussianMixture
    from scipy.special import logsumexp

    rng = np.random.default_rng(2)
    X = rng.normal(size=(15, 2)) @ np.array([[1.0, 0.4], [0.0, 0.7]])
    X[:7] += [3.0, 1.0]
    model = GaussianMixture(features=("a", "b"), n_components=2, equal_weights=True,
                            prior_mean=np.array([0.5, -0.5]), kappa=0.3, iw_dof=4.0,
                            iw_scale=np.array([[1.0, 0.2], [0.2, 2.0]]))
    w = np.array([0.5, 0.5])
    anchor_means = np.array([[3.0, 1.2], [0.1, -0.2]])
    anchor_covs = np.array([[[1.0, 0.3], [0.3, 0.6]], [[0.8, -0.1], [-0.1, 0.5]]])
    pm_model = model.pymc_model(X, kmeans(X, 2), reference=anchor_means,
                                estimate=(w, anchor_means, anchor_covs))
    logp = pm_model.compile_logp()
    s = w @ anchor_means
    T = sum(w[k] * (anchor_covs[k] + np.outer(anchor_means[k] - s, anchor_means[k] - s))
            for k in range(2))
    L = np.linalg.cholesky(T)
    a = np.linalg.solve(L, (anchor_means - s).T).T
    c = np.sqrt(w * len(X) + model.kappa)
    D, values = 2, []
    for _ in range(4):
        log_diag = rng.normal(scale=0.3, size=(2, D))
        off = rng.normal(scale=0.3, size=(2, 1))
        z = rng.normal(size=(2, D))
        total = 0.0
        dens = []
        for k in range(2):
            U = np.diag(np.exp(log_diag[k]))
            U[1, 0] = off[k, 0]
            sigma_y = np.linalg.inv(U @ U.T)
            sigma = L @ sigma_y @ L.T
            mu = s + L @ (a[k] + np.linalg.solve(U.T, z[k]) / c[k])
            dens.append(np.log(0.5) + stats.multivariate_normal(mu, sigma).logpdf(X))
            total += (stats.multivariate_normal(model.prior_mean, sigma / model.kappa)
                      .logpdf(mu)
                      + stats.invwishart(df=model.iw_dof, scale=model.iw_scale).logpdf(sigma)
                      + (D + 1) * np.linalg.slogdet(sigma_y)[1]
                      + sum((D - i + 1) * log_diag[k, i] for i in range(D))
                      - np.sum(log_diag[k]))
        theirs = total + logsumexp(np.array(dens), axis=0).sum()
        ours = logp({"prec_chol_log_diag_raw": log_diag, "prec_chol_offdiag_raw": off,
                     "means_z_raw": z})
        values.append(float(ours) - float(theirs))
    assert np.ptp(values) < 1e-8, values


@pytest.mark.slow  # compiles the PyMC model's initial point function: 3-11 s
@pytest.mark.parametrize("covariance", ["full", "diag"])
def test_chains_start_at_the_em_estimate_with_a_small_jitter(covariance):
    """initial_values, without jitter, is the EM estimate in the declaration's coordinates
    (the covariance rebuilt from the sampled precision factor); with jitter, each seed (one
    per chain) starts elsewhere, within a few approximate posterior sds of the estimate."""
    from dataclasses import replace

    from pymc.initial_point import make_initial_point_fn

    spec = load_spec(EXAMPLES / "blobs.toml")
    if covariance == "diag":
        model = replace(spec.model, covariance="diag", iw_dof=None, iw_scale=None,
                        ig_shape=2.0, ig_scale=np.array([1.0, 1.0]))
        spec = replace(spec, model=model)
    result = fit(spec)
    em = result.posterior.state
    declared = spec.model.declare(spec.data, fit=result)

    def start(seed, **kwargs):
        fn = make_initial_point_fn(model=declared, jitter_rvs=set(), return_transformed=False,
                                   overrides=spec.model.initial_values(result, **kwargs))
        return fn(seed)

    exact = start(0, jitter_sd=0.0)
    np.testing.assert_allclose(exact["weights_raw"], em.weights, rtol=1e-12)
    n_k = em.weights * result.record.n_rows
    if covariance == "full":
        # whitened by the estimate's own mixture moments; the means standardised at it
        K, D = em.means.shape
        s = em.weights @ em.means
        T = sum(em.weights[k] * (em.covariances[k] + np.outer(em.means[k] - s,
                                                              em.means[k] - s))
                for k in range(K))
        L = np.linalg.cholesky(T)
        np.testing.assert_array_equal(exact["means_z_raw"], 0.0)
        for k in range(K):
            U = np.diag(np.exp(exact["prec_chol_log_diag_raw"][k]))
            U[np.tril_indices(D, -1)] = exact["prec_chol_offdiag_raw"][k]
            np.testing.assert_allclose(L @ np.linalg.inv(U @ U.T) @ L.T, em.covariances[k],
                                       rtol=1e-9)
    else:
        np.testing.assert_allclose(exact["means_raw"], em.means, rtol=1e-12)
        np.testing.assert_allclose(exact["variances_raw"],
                                   np.diagonal(em.covariances, axis1=1, axis2=2), rtol=1e-12)
    a, b = start(1), start(2)
    key = "means_z_raw" if covariance == "full" else "means_raw"
    for p in (a, b):
        moved = (p["means_z_raw"] if covariance == "full" else
                 (p["means_raw"] - em.means) / (em.sds / np.sqrt(n_k)[:, None]))
        assert 0 < np.max(np.abs(moved)) < 0.5 * 5  # jitter_sd 0.5 sds, 5-sigma bound
        assert np.all(p["weights_raw"] > 0) and p["weights_raw"].sum() == pytest.approx(1.0)
    assert np.max(np.abs(a[key] - b[key])) > 0
