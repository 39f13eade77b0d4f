"""`bayescheck predict` for the regression, ARD, mixture and count models, each checked against
an independent computation from the raw data (numpy / scipy / scikit-learn), and bad new data
that exits 2 naming file, column and row."""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.models.spec import load_spec
from bayescheck.reports.cli import main
from bayescheck.reports.posterior_file import sealed
from scipy import stats

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LR = EXAMPLES / "linear_regression"
EPS = np.finfo(float).eps


def _fit(spec: Path, out: Path) -> Path:
    assert main(["fit", str(spec), "--out", str(out), "--quiet"]) == 0
    return out


def _predict(spec: Path, fit_dir: Path, tmp_path: Path, new: pd.DataFrame | None = None,
             *extra: str) -> pd.DataFrame:
    args = ["predict", str(spec), "--model-from", str(fit_dir), "--out", str(tmp_path / "p.csv")]
    if new is not None:
        new.to_csv(tmp_path / "new.csv", index=False)
        args += ["--data", str(tmp_path / "new.csv")]
    assert main([*args, *extra]) == 0
    return pd.read_csv(tmp_path / "p.csv")


def _rtol(precision: np.ndarray) -> float:
    # Cholesky solves against numpy's LU solve: both backward stable, so they differ by about
    # cond(P) * eps; a factor 100 covers the products around them.
    return 100 * np.linalg.cond(precision) * EPS


def _new_rows(rng, columns, n=7):
    return pd.DataFrame(rng.normal(size=(n, len(columns))) * 2.0, columns=columns)


def test_known_noise_regression_is_the_normal_predictive_with_the_intercept(tmp_path):
    spec = LR / "stream.toml"
    fit_dir = _fit(spec, tmp_path / "fit")
    new = _new_rows(np.random.default_rng(0), ["x1", "x2"])
    got = _predict(spec, fit_dir, tmp_path, new, "--level", "0.8")

    data = pd.concat([pd.read_csv(f) for f in sorted((LR / "batches").glob("*.csv"))])
    X = np.column_stack([np.ones(len(data)), data[["x1", "x2"]]])
    P = np.eye(3) / 10.0 + X.T @ X  # prior N(0, 10 I), sigma = 1
    mean = np.linalg.solve(P, X.T @ data["y"].to_numpy())
    Xn = np.column_stack([np.ones(len(new)), new])
    sd = np.sqrt(1.0 + np.einsum("ij,ij->i", Xn, np.linalg.solve(P, Xn.T).T))
    ref = stats.norm(Xn @ mean, sd)
    rtol = _rtol(P)
    np.testing.assert_allclose(got["mean"], Xn @ mean, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(got["sd"], sd, rtol=rtol)
    np.testing.assert_allclose(got["lower_80"], ref.ppf(0.1), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(got["upper_80"], ref.ppf(0.9), rtol=rtol, atol=rtol)
    assert list(got["row"]) == list(range(1, 8))


def test_unknown_noise_regression_is_the_student_t_predictive(tmp_path):
    spec = LR / "unknown_noise.toml"
    fit_dir = _fit(spec, tmp_path / "fit")
    data = pd.read_csv(LR / "houses.csv")
    features = ["size", "age", "dist"]
    new = _new_rows(np.random.default_rng(1), features)
    got = _predict(spec, fit_dir, tmp_path, new)

    X, y = data[features].to_numpy(), data["price"].to_numpy()
    P0 = np.eye(3) / 4.0  # theta | sigma2 ~ N(0, sigma2 4 I), sigma2 ~ InvGamma(2, 1)
    P = P0 + X.T @ X
    m = np.linalg.solve(P, X.T @ y)
    a = 2.0 + len(y) / 2
    b = 1.0 + 0.5 * (y @ y - m @ P @ m)
    Xn = new.to_numpy()
    ref = stats.t(2 * a, Xn @ m,
                  np.sqrt(b / a * (1 + np.einsum("ij,ij->i", Xn, np.linalg.solve(P, Xn.T).T))))
    rtol = _rtol(P)
    np.testing.assert_allclose(got["mean"], ref.mean(), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(got["sd"], ref.std(), rtol=rtol)
    np.testing.assert_allclose(got["lower_90"], ref.ppf(0.05), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(got["upper_90"], ref.ppf(0.95), rtol=rtol, atol=rtol)


def test_ard_predictive_given_the_estimated_hyperparameters(tmp_path):
    spec = EXAMPLES / "ard" / "design.toml"
    fit_dir = _fit(spec, tmp_path / "fit")
    post = json.loads((fit_dir / "posterior.json").read_text())["parameters"]
    data = pd.read_csv(EXAMPLES / "ard" / "design.csv")
    features = [f"x{i}" for i in range(1, 13)]
    new = _new_rows(np.random.default_rng(2), features)
    got = _predict(spec, fit_dir, tmp_path, new)

    alpha = np.array([np.inf if v is None else v for v in post["alpha"]["value"]])
    keep = np.isfinite(alpha)
    assert 0 < keep.sum() < len(features)  # both pruned and relevant weights are exercised
    s2 = post["sigma2"]["value"]
    X, y = data[features].to_numpy()[:, keep], data["y"].to_numpy()
    P = np.diag(alpha[keep]) + X.T @ X / s2
    m = np.linalg.solve(P, X.T @ y / s2)
    Xn = new.to_numpy()[:, keep]
    sd = np.sqrt(s2 + np.einsum("ij,ij->i", Xn, np.linalg.solve(P, Xn.T).T))
    rtol = _rtol(P)
    np.testing.assert_allclose(got["mean"], Xn @ m, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(got["sd"], sd, rtol=rtol)
    np.testing.assert_allclose(got["upper_90"], stats.norm(Xn @ m, sd).ppf(0.95), rtol=rtol,
                               atol=rtol)


def test_mixture_responsibilities_and_density_match_scikit_learn(tmp_path):
    from sklearn.mixture import GaussianMixture

    spec = EXAMPLES / "gaussian_mixture" / "blobs.toml"
    fit_dir = _fit(spec, tmp_path / "fit")
    post = json.loads((fit_dir / "posterior.json").read_text())["parameters"]
    new = pd.DataFrame(np.random.default_rng(3).uniform(-3, 9, size=(50, 2)),
                       columns=["x1", "x2"])
    got = _predict(spec, fit_dir, tmp_path, new)

    covs = np.array(post["covariances"]["estimate"])
    gm = GaussianMixture(3, covariance_type="full")
    gm.weights_ = np.array(post["weights"]["estimate"])
    gm.means_ = np.array(post["means"]["estimate"])
    gm.covariances_ = covs
    # scikit-learn's convention: upper-triangular U with U U' = Sigma^-1, U = (L^-1)' for
    # Sigma = L L'.
    gm.precisions_cholesky_ = np.linalg.inv(np.linalg.cholesky(covs)).transpose(0, 2, 1)
    rtol = 100 * max(np.linalg.cond(c) for c in covs) * EPS
    proba = gm.predict_proba(new.to_numpy())
    np.testing.assert_allclose(got[["p_0", "p_1", "p_2"]], proba, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(got["log_density"], gm.score_samples(new.to_numpy()), rtol=rtol)
    assert list(got["component"]) == list(proba.argmax(axis=1))


@pytest.mark.parametrize(("spec", "expected"), [
    (EXAMPLES / "beta_bernoulli" / "coin.toml",
     lambda d: ([1, 0], np.array([10 + d.heads.sum(), 10 + (1 - d.heads).sum()]))),
    (EXAMPLES / "dirichlet_categorical" / "die.toml",
     lambda d: (list(range(1, 7)), 1.0 + np.bincount(d.face, minlength=7)[1:])),
])
def test_counts_predict_the_next_outcome(tmp_path, spec, expected):
    fit_dir = _fit(spec, tmp_path / "fit")
    got = _predict(spec, fit_dir, tmp_path)
    labels, weights = expected(pd.read_csv(spec.parent / load_spec(spec).data.files()[0].name))
    assert list(got["outcome"]) == labels
    np.testing.assert_allclose(got["probability"], weights / weights.sum(), rtol=4 * EPS)


@pytest.fixture(scope="module")
def regression_fit(tmp_path_factory):
    return _fit(LR / "unknown_noise.toml", tmp_path_factory.mktemp("lr"))


def _run(tmp_path, fit_dir, text: str | None, *extra: str, spec=LR / "unknown_noise.toml"):
    args = ["predict", str(spec), "--model-from", str(fit_dir)]
    if text is not None:
        (tmp_path / "new.csv").write_text(text)
        args += ["--data", str(tmp_path / "new.csv")]
    return main([*args, *extra])


@pytest.mark.parametrize(("text", "extra", "message"), [
    ("size,age\n1,2\n", (), "new.csv, column 'dist': missing column"),
    ("size,age,dist\n1,2,3\n1,abc,3\n", (), "new.csv, column 'age', row 2: "),
    ("size,age,dist\n1,2,\n", (), "new.csv, column 'dist', row 1: missing value"),
    ("size,age,dist\n", (), "new.csv: file has a header but no rows"),
    (None, (), "needs --data"),
    ("size,age,dist\n1,2,3\n", ("--level", "1.5"), "--level must be strictly between 0 and 1"),
    ("size,age,dist\n1,2,3\n", ("--loss", "x.csv"), "--loss applies to naive_bayes and semi_naive"),
])
def test_bad_new_data_exits_2_naming_what_is_wrong(regression_fit, tmp_path, capsys, text,
                                                   extra, message):
    assert _run(tmp_path, regression_fit, text, *extra) == 2
    assert message in capsys.readouterr().err


def test_counts_refuse_new_rows(tmp_path, capsys):
    spec = EXAMPLES / "beta_bernoulli" / "coin.toml"
    fit_dir = _fit(spec, tmp_path / "fit")
    assert _run(tmp_path, fit_dir, "heads\n1\n", spec=spec) == 2
    assert "leave out --data" in capsys.readouterr().err


def test_a_fit_without_the_scale_matrix_asks_for_a_refit(regression_fit, tmp_path, capsys):
    shutil.copytree(regression_fit, tmp_path / "old")
    path = tmp_path / "old" / "posterior.json"
    post = json.loads(path.read_text())
    del post["parameters"]["theta"]["scale_matrix"]
    path.write_text(json.dumps(sealed(post)))  # a fit of an older shape
    assert _run(tmp_path, tmp_path / "old", "size,age,dist\n1,2,3\n") == 2
    assert "key 'parameters.theta.scale_matrix' is missing" in capsys.readouterr().err


def test_a_fit_of_another_model_is_refused(regression_fit, tmp_path, capsys):
    spec = EXAMPLES / "ard" / "design.toml"
    assert _run(tmp_path, regression_fit, "x1\n1\n", spec=spec) == 2
    assert "holds a 'linear_regression' fit" in capsys.readouterr().err


def test_mixture_with_a_known_sd_uses_it_on_the_diagonal(tmp_path):
    from sklearn.mixture import GaussianMixture

    spec = EXAMPLES / "gaussian_mixture" / "worked_step.toml"  # known_sd = 2, one feature
    fit_dir = _fit(spec, tmp_path / "fit")
    post = json.loads((fit_dir / "posterior.json").read_text())["parameters"]
    assert "covariances" not in post  # the sds are the only spread saved
    new = pd.DataFrame({"x": np.linspace(-4.0, 14.0, 19)})
    got = _predict(spec, fit_dir, tmp_path, new)

    gm = GaussianMixture(2, covariance_type="spherical")
    gm.weights_ = np.array(post["weights"]["estimate"])
    gm.means_ = np.array(post["means"]["estimate"])
    gm.covariances_ = np.full(2, 4.0)
    gm.precisions_cholesky_ = np.full(2, 0.5)
    rtol = 100 * EPS * np.abs(new["x"]).max() ** 2  # squares of the rows dominate the error
    np.testing.assert_allclose(got[["p_0", "p_1"]], gm.predict_proba(new.to_numpy()),
                               rtol=rtol, atol=rtol)
    np.testing.assert_allclose(got["log_density"], gm.score_samples(new.to_numpy()), rtol=rtol)
