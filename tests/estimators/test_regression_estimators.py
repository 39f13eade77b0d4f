"""BayesianLinearRegression and ARDRegression: exact streaming, scikit-learn's numbers, specs."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from bayescheck.inference.engines.sbl import ard_posterior  # noqa: E402
from bayescheck.models.spec import load_spec  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402
from sklearn.linear_model import ARDRegression as SklearnARD  # noqa: E402
from sklearn.linear_model import BayesianRidge  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import bayescheck  # noqa: E402
from bayescheck.estimators import ARDRegression, BayesianLinearRegression  # noqa: E402

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def diabetes():
    return load_diabetes(return_X_y=True)


def _state(est):
    return np.concatenate([[est.intercept_], est.coef_, est.sigma_.ravel(), [est.alpha_]])


@pytest.mark.slow  # 100 partial fits through scikit-learn's validation: 3-8 s each
@pytest.mark.parametrize("noise", ["known", "unknown"])
def test_partial_fit_over_100_batches_is_one_fit(diabetes, noise):
    X, y = diabetes
    kw = {"noise": noise, "noise_sd": 50.0, "prior_precision": 1e-4}
    one = BayesianLinearRegression(**kw).fit(X, y)
    streamed = BayesianLinearRegression(**kw)
    for idx in np.array_split(np.arange(len(y)), 100):
        streamed.partial_fit(X[idx], y[idx])
    np.testing.assert_allclose(_state(streamed), _state(one), rtol=1e-12, atol=0)
    mean, sd = one.predict(X[:7], return_std=True)
    mean_s, sd_s = streamed.predict(X[:7], return_std=True)
    np.testing.assert_allclose(np.r_[mean_s, sd_s], np.r_[mean, sd], rtol=1e-12)
    # a stream that lost one row is not the same posterior
    lost = BayesianLinearRegression(**kw)
    for idx in np.array_split(np.arange(len(y) - 1), 100):
        lost.partial_fit(X[idx], y[idx])
    assert not np.allclose(_state(lost), _state(one), rtol=1e-9, atol=0)


def test_known_noise_at_bayesian_ridge_estimates_is_bayesian_ridge(diabetes):
    """BayesianRidge's posterior is ours at its (alpha_, lambda_), on centred data."""
    X, y = diabetes
    br = BayesianRidge().fit(X, y)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    ours = BayesianLinearRegression(noise_sd=1 / np.sqrt(br.alpha_), prior_precision=br.lambda_,
                                    fit_intercept=False).fit(Xc, yc)
    np.testing.assert_allclose(ours.coef_, br.coef_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ours.sigma_, br.sigma_, rtol=1e-10, atol=1e-12)
    mean, sd = br.predict(X[:20], return_std=True)
    mean_o, sd_o = ours.predict(X[:20] - X.mean(axis=0), return_std=True)
    np.testing.assert_allclose(mean_o + y.mean(), mean, rtol=1e-12)
    np.testing.assert_allclose(sd_o, sd, rtol=1e-12)
    # at another prior precision the coefficients move: the comparison can fail
    other = BayesianLinearRegression(noise_sd=1 / np.sqrt(br.alpha_),
                                     prior_precision=10 * br.lambda_,
                                     fit_intercept=False).fit(Xc, yc)
    assert not np.allclose(other.coef_, br.coef_, rtol=1e-3)


def test_ard_evidence_is_at_least_scikit_learns(diabetes):
    """Type-II ML: the evidence at our estimate is no lower than at ARDRegression's."""
    X, y = diabetes
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    sk = SklearnARD().fit(Xc, yc)
    ours = ARDRegression(fit_intercept=False).fit(Xc, yc)
    alpha = np.where(sk.lambda_ < sk.threshold_lambda, sk.lambda_, np.inf)
    at_sklearn = ard_posterior(Xc, yc, alpha, 1 / sk.alpha_).log_evidence
    assert ours.result_.log_evidence[-1] >= at_sklearn - 1e-9
    # the weights scikit-learn keeps above 1e-3 are ours, within 0.1 % of their size
    big = np.abs(sk.coef_) > 1e-3
    assert set(np.flatnonzero(big)) == set(np.flatnonzero(ours.relevant_))
    np.testing.assert_allclose(ours.coef_[big], sk.coef_[big], rtol=1e-3)
    # ours with a weight held at 0 has a lower evidence: the comparison can fail
    held = np.array(ours.lambda_)
    held[np.flatnonzero(ours.relevant_)[0]] = np.inf
    assert ard_posterior(Xc, yc, held, 1 / ours.alpha_).log_evidence < \
        ours.result_.log_evidence[-1] - 1.0


@pytest.mark.parametrize("noise", ["known", "unknown"])
def test_predictive_and_sample_y_agree(diabetes, noise):
    X, y = diabetes
    est = BayesianLinearRegression(noise=noise, noise_sd=55.0).fit(X, y)
    mean, sd = est.predict(X[:3], return_std=True)
    n = 20000
    draws = est.sample_y(X[:3], n_samples=n, random_state=1)
    assert draws.shape == (3, n)
    assert np.all(np.abs(draws.mean(axis=1) - mean) < 5 * sd / np.sqrt(n))
    if noise == "known":  # Normal: the sd of a sample sd is sd / sqrt(2 n)
        assert np.all(np.abs(draws.std(axis=1) - sd) < 5 * sd / np.sqrt(2 * n))
    # a predictive sd off by 5 % would be caught (the tolerance is 2.5 %)
    assert np.all(np.abs(draws.std(axis=1) - 1.05 * sd) > 5 * sd / np.sqrt(2 * n))


def test_pipeline_and_grid_search_over_the_prior_precision(diabetes):
    X, y = diabetes
    pipe = make_pipeline(StandardScaler(), BayesianLinearRegression(noise="unknown"))
    grid = GridSearchCV(pipe, {"bayesianlinearregression__prior_precision": [1e-3, 1.0, 1e4]},
                        cv=3).fit(X, y)
    scores = grid.cv_results_["mean_test_score"]
    assert grid.best_params_["bayesianlinearregression__prior_precision"] != 1e4
    assert scores.max() > 0.4 and scores[2] < 0.1  # 1e4 shrinks the slopes to nothing


def _spec_rows(path):
    spec = load_spec(path)
    model = spec.model
    frame = pd.concat([b.frame for b in spec.data.batches()], ignore_index=True)
    return frame[model.data_columns], frame[model.target].to_numpy()


@pytest.mark.parametrize("spec", ["linear_regression/unknown_noise.toml",
                                  "linear_regression/stream.toml"])
def test_from_spec_fits_as_bayescheck_fit(spec):
    path = ROOT / "examples" / spec
    X, y = _spec_rows(path)
    est = BayesianLinearRegression.from_spec(path).fit(X, y)
    theta = bayescheck.fit(path).posterior.parameters["theta"]
    k = int(est.fit_intercept)
    mean = np.r_[[est.intercept_] if k else [], est.coef_]
    np.testing.assert_allclose(mean, theta["mean"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(est.sigma_, np.asarray(theta["cov"])[k:, k:], rtol=1e-12)


def test_to_spec_round_trips(tmp_path, diabetes):
    X, y = diabetes
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    frame.assign(target=y).to_csv(tmp_path / "d.csv", index=False)
    for est in (BayesianLinearRegression(noise="unknown", prior_precision=0.5, noise_shape=3.0),
                BayesianLinearRegression(noise_sd=40.0, prior_precision=0.0),
                BayesianLinearRegression(prior_mean=[1.0, 2.0] + [0.0] * 9,
                                         prior_cov=np.diag(np.arange(1.0, 12.0)))):
        est.fit(frame, y)
        (tmp_path / "s.toml").write_text(est.to_spec("d.csv", target="target"))
        back = BayesianLinearRegression.from_spec(tmp_path / "s.toml")
        mine, theirs = est.get_params(), back.get_params()
        for key in mine:
            np.testing.assert_array_equal(np.asarray(theirs[key]), np.asarray(mine[key]), key)
        fitted = bayescheck.fit(tmp_path / "s.toml").posterior.parameters["theta"]["mean"]
        np.testing.assert_allclose(fitted, np.r_[est.intercept_, est.coef_], rtol=1e-12)
    ard = ARDRegression(method="mackay", tol=1e-7, alpha_shape=2.0)
    (tmp_path / "a.toml").write_text(ard.to_spec("d.csv", target="target"))
    assert ARDRegression.from_spec(tmp_path / "a.toml").get_params() == ard.get_params()


def test_ard_from_spec_fits_as_bayescheck_fit():
    path = ROOT / "examples" / "ard" / "design.toml"
    X, y = _spec_rows(path)
    est = ARDRegression.from_spec(path).fit(X, y)
    w = bayescheck.fit(path).posterior.parameters["w"]
    k = int(est.fit_intercept)
    np.testing.assert_array_equal(np.r_[[est.intercept_] if k else [], est.coef_], w["mean"])


def test_from_spec_refuses_another_model():
    with pytest.raises(bayescheck.SpecError, match="'ard' spec"):
        BayesianLinearRegression.from_spec(ROOT / "examples" / "ard" / "design.toml")
