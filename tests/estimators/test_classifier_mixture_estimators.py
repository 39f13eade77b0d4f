"""Naive Bayes classifiers and the Gaussian mixture against scikit-learn, streams and specs."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_iris, load_wine  # noqa: E402
from sklearn.mixture import GaussianMixture as SklearnMixture  # noqa: E402
from sklearn.naive_bayes import CategoricalNB, GaussianNB  # noqa: E402
from sklearn.preprocessing import OrdinalEncoder  # noqa: E402

import bayescheck  # noqa: E402
from bayescheck.estimators import (  # noqa: E402
    CategoricalNaiveBayes,
    GaussianMixture,
    GaussianNaiveBayes,
)

ROOT = Path(__file__).resolve().parents[2]
LOADERS = {"iris": load_iris, "wine": load_wine}


@pytest.mark.parametrize("data", ["iris", "wine"])
def test_gaussian_ml_is_gaussian_nb(data):
    X, y = LOADERS[data](return_X_y=True)
    sk = GaussianNB(var_smoothing=0.0).fit(X, y)
    ours = GaussianNaiveBayes(gaussian="ml", class_prior="frequency").fit(X, y)
    np.testing.assert_allclose(ours.theta_, sk.theta_, rtol=1e-12)
    np.testing.assert_allclose(ours.var_, sk.var_, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))


@pytest.mark.parametrize("data", ["iris", "wine"])
def test_gaussian_nig_at_a_flat_ish_prior(data):
    """Posterior means: mu -> the class mean, E[sigma2] = m2 / (n - 2) as the prior vanishes."""
    X, y = LOADERS[data](return_X_y=True)
    sk = GaussianNB(var_smoothing=0.0).fit(X, y)
    ours = GaussianNaiveBayes(kappa0=1e-12, a0=1e-12, b0=1e-12).fit(X, y)
    n = ours.class_count_[:, None]
    np.testing.assert_allclose(ours.theta_, sk.theta_, rtol=1e-9)
    np.testing.assert_allclose(ours.var_ * (n - 2) / n, sk.var_, rtol=1e-9)
    # the default (proper) prior is not that: the comparison can fail
    default = GaussianNaiveBayes().fit(X, y)
    assert not np.allclose(default.var_ * (n - 2) / n, sk.var_, rtol=1e-3)


def _codes(data):
    X, y = LOADERS[data](return_X_y=True)
    return np.floor((X - X.min(axis=0)) / X.std(axis=0)).astype(int), y


@pytest.mark.parametrize("data", ["iris", "wine"])
def test_categorical_laplace_is_categorical_nb(data):
    X, y = _codes(data)
    sk = CategoricalNB(alpha=1.0).fit(X, y)
    ours = CategoricalNaiveBayes(concentration=1.0, class_prior="frequency").fit(X, y)
    np.testing.assert_array_equal(ours.n_categories_, np.maximum(sk.n_categories_, 2))
    for mine, theirs in zip(ours.feature_log_prob_, sk.feature_log_prob_, strict=True):
        if mine.shape == theirs.shape:
            np.testing.assert_allclose(mine, theirs, rtol=1e-12)
    if np.all(sk.n_categories_ >= 2):
        np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-12)
    # another concentration is another classifier: the comparison can fail
    other = CategoricalNaiveBayes(concentration=2.0, class_prior="frequency").fit(X, y)
    assert not np.allclose(other.predict_proba(X), sk.predict_proba(X), rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("estimator", [GaussianNaiveBayes(), GaussianNaiveBayes(gaussian="ml"),
                                       CategoricalNaiveBayes()])
def test_partial_fit_over_100_batches_is_one_fit(estimator):
    X, y = load_wine(return_X_y=True)
    if isinstance(estimator, CategoricalNaiveBayes):
        X, y = _codes("wine")
        order = np.argsort(X[:, 0], kind="stable")  # categories arrive late: the schema grows
        X, y = X[order], y[order]
    one = estimator.__class__(**estimator.get_params()).fit(X, y)
    streamed = estimator.__class__(**estimator.get_params())
    for idx in np.array_split(np.arange(len(y)), 100):
        streamed.partial_fit(X[idx], y[idx], classes=np.unique(y))
    np.testing.assert_allclose(streamed.predict_proba(X), one.predict_proba(X), rtol=1e-12,
                               atol=1e-300)
    if isinstance(estimator, GaussianNaiveBayes):
        np.testing.assert_allclose(streamed.theta_, one.theta_, rtol=1e-12)
        np.testing.assert_allclose(streamed.var_, one.var_, rtol=1e-12)
    # a batch fed twice is another posterior
    twice = estimator.__class__(**estimator.get_params()).fit(X, y).partial_fit(X[:5], y[:5])
    assert not np.allclose(twice.predict_proba(X), one.predict_proba(X), rtol=1e-9)


def test_partial_fit_refuses_a_class_it_was_not_told_about():
    X, y = load_iris(return_X_y=True)
    est = GaussianNaiveBayes().partial_fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="classes= on the first call"):
        est.partial_fit(X[100:], y[100:])


def test_gaussian_from_spec_predicts_as_bayescheck_predict():
    path = ROOT / "examples" / "naive_bayes" / "cells.toml"
    spec = bayescheck.load_spec(path)
    frame = pd.read_csv(path.parent / "cells.csv")
    X, y = frame[list(spec.model.features)], frame[spec.model.target].astype(str)
    est = GaussianNaiveBayes.from_spec(path).fit(X, y)
    table = bayescheck.predict(spec, bayescheck.fit(spec), X)
    cli = table[[f"p_{c}" for c in est.classes_]].to_numpy()
    np.testing.assert_allclose(est.predict_proba(X), cli, rtol=1e-12)


def test_categorical_from_spec_predicts_as_bayescheck_fit():
    path = ROOT / "examples" / "naive_bayes" / "play_tennis.toml"
    spec = bayescheck.load_spec(path)
    frame = pd.read_csv(path.parent / "play_tennis.csv")
    features = list(spec.model.features)
    encoder = OrdinalEncoder(dtype=int).fit(frame[features])  # sorted, as the spec's labels
    est = CategoricalNaiveBayes.from_spec(path).fit(encoder.transform(frame[features]),
                                                    frame[spec.model.target])
    query = pd.DataFrame([{f: q[f] for f in features} for q in spec.model.queries])
    fitted = bayescheck.fit(spec).posterior.parameters["query"][0]
    proba = est.predict_proba(encoder.transform(query))[0]
    expected = [fitted["probabilities"][c] for c in est.classes_]
    np.testing.assert_allclose(proba, expected, rtol=1e-12)


def test_naive_bayes_to_spec_round_trips(tmp_path):
    for est in (GaussianNaiveBayes(concentration=2.0, mu0=1.5, kappa0=0.1, a0=2.0, b0=3.0),
                CategoricalNaiveBayes(concentration=0.5, class_prior="frequency")):
        (tmp_path / "s.toml").write_text(est.to_spec("d.csv", target="c", features=["a", "b"]))
        (tmp_path / "d.csv").write_text("a,b,c\n1,2,x\n2,1,y\n")
        assert est.__class__.from_spec(tmp_path / "s.toml").get_params() == est.get_params()
    with pytest.raises(ValueError, match="categorical"):
        CategoricalNaiveBayes.from_spec(ROOT / "examples" / "naive_bayes" / "cells.toml")


@pytest.mark.slow
def test_mixture_reaches_scikit_learns_optimum_on_iris():
    X, _ = load_iris(return_X_y=True)
    sk = SklearnMixture(3, n_init=5, tol=1e-12, max_iter=5000, random_state=0).fit(X)
    ours = GaussianMixture(3, tol=1e-12, max_iter=5000).fit(X)
    assert ours.score(X) >= sk.score(X) - 1e-9
    a, b = np.argsort(ours.means_[:, 0]), np.argsort(sk.means_[:, 0])
    np.testing.assert_allclose(ours.means_[a], sk.means_[b], atol=1e-5)
    np.testing.assert_allclose(ours.predict_proba(X)[:, a], sk.predict_proba(X)[:, b], atol=1e-5)
    np.testing.assert_allclose(ours.score_samples(X), sk.score_samples(X), atol=1e-6)
    # a fit stopped after one step is not there: the comparison can fail
    early = GaussianMixture(3, max_iter=1, n_init=1).fit(X)
    assert early.score(X) < sk.score(X) - 1e-3


def test_mixture_from_spec_fits_as_bayescheck_fit(tmp_path):
    path = ROOT / "examples" / "gaussian_mixture" / "blobs.toml"
    frame = pd.read_csv(path.parent / "blobs.csv")
    est = GaussianMixture.from_spec(path).fit(frame[["x1", "x2"]])
    fitted = bayescheck.fit(path).posterior.parameters
    np.testing.assert_array_equal(est.means_, fitted["means"]["estimate"])
    np.testing.assert_array_equal(est.covariances_, fitted["covariances"]["estimate"])
    frame.to_csv(tmp_path / "blobs.csv", index=False)
    (tmp_path / "s.toml").write_text(est.to_spec("blobs.csv"))
    back = GaussianMixture.from_spec(tmp_path / "s.toml")
    mine, theirs = est.get_params(), back.get_params()
    for key in mine:
        np.testing.assert_array_equal(np.asarray(theirs[key]), np.asarray(mine[key]), key)


def test_mixture_sample_has_the_fitted_moments():
    X, _ = load_iris(return_X_y=True)
    est = GaussianMixture(1, covariance_type="diag").fit(X)
    draws, labels = est.sample(40000, random_state=3)
    assert draws.shape == (40000, 4) and np.all(labels == 0)
    sd = np.sqrt(est.covariances_[0])
    assert np.all(np.abs(draws.mean(axis=0) - est.means_[0]) < 5 * sd / np.sqrt(40000))


def test_a_stream_that_does_not_yet_determine_the_classifier_waits():
    X, y = load_wine(return_X_y=True)  # sorted by class: the first rows are all class 0
    est = GaussianNaiveBayes(gaussian="ml").partial_fit(X[:10], y[:10], classes=[0, 1, 2])
    with pytest.raises(ValueError, match="do not determine the classifier"):
        est.predict(X)
    with pytest.raises(ValueError, match="expected at least 2 rows"):
        GaussianNaiveBayes(gaussian="ml").fit(X[:60], y[:60])  # one row of class 1
    assert est.partial_fit(X[10:], y[10:]).score(X, y) > 0.9


@pytest.mark.parametrize(("estimator", "match"), [
    (GaussianNaiveBayes(kappa0=-1.0), "kappa0"),
    (GaussianNaiveBayes(class_prior="uniform"), "class_prior"),
    (CategoricalNaiveBayes(concentration=0.0), "concentration"),
])
def test_bad_settings_are_refused_by_partial_fit(estimator, match):
    X, y = _codes("iris")
    with pytest.raises(ValueError, match=match):
        estimator.partial_fit(X, y)
