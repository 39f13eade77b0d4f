"""Naive-Bayes prediction by blocks of rows: scores against scipy densities, extreme inputs.

Prediction precomputes per class and feature constants, scores blocks of rows, sums the
Student-t terms of a class through one ``log1p`` and normalises with a hand-written
log-sum-exp. These tests hold every path to independent references (``scipy.stats`` log
densities summed feature by feature, ``scipy.special.logsumexp``) with many blocks per call.

Tolerance: each reference term is accurate to a few ulps of its own size, so the comparison
is relative to ``scale = |log prior| + sum_j |log p(x_j | c)|`` of the row and class,
at 1e-12 (the accuracy asked of the engine; the errors seen are below 2e-15).
"""

from __future__ import annotations

import numpy as np
import pytest
from bayescheck.inference.engines.naive_bayes_stats import (
    NaiveBayesSchema,
    UnivariateNIGPrior,
    fit_naive_bayes,
    naive_bayes_stats,
)
from scipy import special, stats
from sklearn.datasets import load_breast_cancer, load_iris

RTOL = 1e-12
PRIORS = [
    UnivariateNIGPrior(mu0=0.0, kappa0=1.0, a0=1.0, b0=1.0),
    UnivariateNIGPrior(mu0=1.0, kappa0=0.01, a0=0.5, b0=0.1),
]


def _fit(X, y, **options):
    schema = NaiveBayesSchema(
        classes=tuple(np.unique(y).tolist()),
        kinds=("gaussian",) * X.shape[1],
        categories=(None,) * X.shape[1],
    )
    model = fit_naive_bayes(stats=naive_bayes_stats(X, y, schema=schema), **options)
    model._plan["rows"] = 37  # many blocks, the last one partial
    return model


def _reference_terms(model, X):
    """log P(c) and log p(x_j | c) from scipy.stats, shape (n, K, G)."""
    K = len(model.classes)
    terms = np.empty((X.shape[0], K, X.shape[1]))
    for c in range(K):
        if model.gaussian == "ml":
            dist = stats.norm(loc=model.means[c], scale=np.sqrt(model.variances[c]))
        else:
            nig = model.nig
            dist = stats.t(df=2 * nig.a[c], loc=nig.mu[c], scale=nig.predictive_scale[c])
        terms[:, c, :] = dist.logpdf(X)
    return terms


def _assert_scores_match(model, X, terms):
    ref = model.class_log_prior + terms.sum(axis=2)
    scale = np.abs(model.class_log_prior) + np.abs(terms).sum(axis=2)
    got = model.joint_log_likelihood(X)
    assert np.all(np.abs(got - ref) <= RTOL * scale)
    # normalised: differences of scores, so the row's largest scale bounds the error
    row_scale = scale.max(axis=1, keepdims=True)
    ref_log_p = ref - special.logsumexp(ref, axis=1, keepdims=True)
    assert np.all(np.abs(model.predict_log_proba(X) - ref_log_p) <= 2 * RTOL * row_scale)
    p = model.predict_proba(X)
    assert np.all(np.abs(p - np.exp(ref_log_p)) <= 2 * RTOL * row_scale)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-15 * X.shape[1])


def _queries(X, rng):
    lo, hi = X.min(axis=0), X.max(axis=0)
    wide = rng.uniform(lo - 3 * (hi - lo), hi + 3 * (hi - lo), size=(300, X.shape[1]))
    return np.vstack([X, wide, X * 1e3, X + 1e6, -X * 1e8])


@pytest.mark.parametrize("load", [load_iris, load_breast_cancer])
@pytest.mark.parametrize("options", [{"smoothing": False}] + [
    {"gaussian": "nig", "nig_prior": p} for p in PRIORS
])
def test_scores_equal_scipy_densities_on_reference_data(load, options):
    X, y = load(return_X_y=True)
    model = _fit(X, y, **options)
    Xq = _queries(X, np.random.default_rng(0))
    _assert_scores_match(model, Xq, _reference_terms(model, Xq))


def test_tight_classes_far_from_the_origin():
    # x - mean is formed before squaring: no cancellation between x^2 and mean^2 terms
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 900)
    centres = 1e8 + rng.normal(0.0, 5.0, (3, 6))
    X = centres[y] + rng.uniform(0.01, 2.0, (3, 6))[y] * rng.standard_normal((900, 6))
    Xq = np.vstack([X, X + rng.normal(0.0, 50.0, X.shape)])
    for options in ({"smoothing": False}, {"gaussian": "nig", "nig_prior": PRIORS[0]}):
        model = _fit(X, y, **options)
        _assert_scores_match(model, Xq, _reference_terms(model, Xq))


def test_wrong_density_fails_the_comparison():
    # negative control: the Student-t engine against Normal densities of the same scale
    X, y = load_iris(return_X_y=True)
    model = _fit(X, y, gaussian="nig", nig_prior=PRIORS[0])
    nig = model.nig
    terms = np.stack(
        [stats.norm(nig.mu[c], nig.predictive_scale[c]).logpdf(X) for c in range(3)], axis=1
    )
    with pytest.raises(AssertionError):
        _assert_scores_match(model, X, terms)


def test_student_t_sum_survives_an_overflowing_product():
    # 60 features 1e12 scales away: prod_j (1 + z_j^2 / nu) overflows, the scores must not
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 600)
    X = rng.normal(0.0, 1.0, (600, 60)) + y[:, None]
    model = _fit(X, y, gaussian="nig", nig_prior=PRIORS[0])
    Xq = np.vstack([X[:50], X[:50] * 1e12])
    nig = model.nig
    u = ((Xq[50:] - nig.mu[0]) / nig.predictive_scale[0]) ** 2 / (2 * nig.a[0])
    with np.errstate(over="ignore"):
        assert np.all(np.isinf(np.prod(1.0 + u, axis=1)))  # the guarded case is exercised
    assert np.all(np.isfinite(model.joint_log_likelihood(Xq)))
    _assert_scores_match(model, Xq, _reference_terms(model, Xq))


def test_log_probability_near_one_keeps_its_digits():
    # unit variances, means 0 and d = sqrt(92): at x = 0 the scores are 46 nats apart, so
    # log P(class 0) = -exp(-46) ~ -1e-20, which log(sum exp) rounds to 0
    d = np.sqrt(92.0)
    X = np.array([[-1.0], [1.0], [d - 1.0], [d + 1.0]])
    y = np.array([0, 0, 1, 1])
    model = _fit(X, y, smoothing=False)
    xq = np.array([[0.0], [-0.5]])
    jll = model.joint_log_likelihood(xq)
    gap = jll[:, 1] - jll[:, 0]
    ref = np.column_stack([-np.log1p(np.exp(gap)), gap - np.log1p(np.exp(gap))])
    got = model.predict_log_proba(xq)
    assert np.all((got[:, 0] < 0) & (got[:, 0] > -1e-15))
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    # what subtracting the log-sum-exp from the scores gives (the code before blocks did that)
    shifted = jll - special.logsumexp(jll, axis=1, keepdims=True)
    assert np.all(shifted[:, 0] == 0.0)


def test_tied_classes_split_evenly():
    X = np.array([[-1.0], [1.0], [-1.0], [1.0]])
    y = np.array([0, 0, 1, 1])
    model = _fit(X, y, smoothing=False)
    xq = np.array([[0.3], [5.0]])
    assert np.array_equal(model.predict_log_proba(xq), np.full((2, 2), np.log(0.5)))
    assert np.array_equal(model.predict_proba(xq), np.full((2, 2), 0.5))
    assert model.predict(xq).tolist() == [0, 0]  # ties: first class


def test_error_names_the_row_of_the_whole_input():
    X, y = load_iris(return_X_y=True)
    model = _fit(X, y, smoothing=False)
    Xq = X.copy()
    Xq[100, 2] = np.nan  # in the third block of 37 rows
    with pytest.raises(ValueError, match=r"'x2', received nan at row 100$"):
        model.predict_proba(Xq)
    with pytest.raises(ValueError, match=r"at row 100$"):
        model.predict_proba(Xq.astype(object))  # column-by-column path


def test_integer_codes_equal_labels_in_every_block():
    # integer codes take a shortcut when a block holds only declared codes; a block with an
    # undeclared code (-1, 7) must score it as unseen, like string labels do
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, (400, 3))
    y = rng.integers(0, 2, 400)
    X[y == 0, 0] = np.minimum(X[y == 0, 0], 2)  # code 3 of feature 0 never seen with class 0
    Xq = rng.integers(0, 5, (200, 3))
    Xq[150, 1], Xq[160, 2] = -1, 7
    names = np.array(["a", "b", "c", "d", "e"])
    lab = names[X]
    lab_q = np.where((Xq >= 0) & (Xq < 5), names[np.clip(Xq, 0, 4)], "zz")
    for smoothing in (True, False):
        models = []
        for data, cats in ((X, tuple(range(5))), (lab, tuple(names))):
            schema = NaiveBayesSchema(
                classes=(0, 1), kinds=("categorical",) * 3, categories=(cats,) * 3
            )
            m = fit_naive_bayes(
                stats=naive_bayes_stats(data, y, schema=schema), smoothing=smoothing
            )
            m._plan["rows"] = 37
            models.append(m)
        by_code, by_label = models
        got, ref = by_code.predict_log_proba(Xq), by_label.predict_log_proba(lab_q)
        assert np.array_equal(got, ref)
        finite = np.isfinite(ref)
        assert finite.all() == smoothing  # unsmoothed: some classes ruled out
