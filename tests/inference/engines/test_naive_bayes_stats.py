"""Naive Bayes: the worked example of the source material, scikit-learn equivalences, streaming."""

from __future__ import annotations

import csv
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.inference.engines.decisions import bayes_decision
from bayescheck.inference.engines.linear_gaussian import (
    NormalInverseGammaPosterior,
    regression_stats,
)
from bayescheck.inference.engines.naive_bayes_stats import (
    NaiveBayesSchema,
    UnivariateNIGPosterior,
    UnivariateNIGPrior,
    chan_combine,
    fit_naive_bayes,
    fit_naive_bayes_batches,
    naive_bayes_stats,
    normal_normal_inverse_gamma,
)
from scipy import stats
from sklearn.naive_bayes import CategoricalNB, GaussianNB

ROOT = Path(__file__).resolve().parents[3]
TENNIS = ROOT / "examples" / "naive_bayes" / "play_tennis.csv"
FEATURES = ["outlook", "temperature", "humidity", "wind"]
QUERY = {"outlook": "Sunny", "temperature": "Cool", "humidity": "High", "wind": "Strong"}


def _tennis_rows():
    with TENNIS.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _tennis_model(**options):
    df = pd.read_csv(TENNIS)
    schema = NaiveBayesSchema.infer(df[FEATURES], df["play_tennis"], kinds=["categorical"] * 4)
    return fit_naive_bayes(
        stats=naive_bayes_stats(df[FEATURES], df["play_tennis"], schema=schema), **options
    )


def _query(**override):
    return pd.DataFrame([{**QUERY, **override}], columns=FEATURES)


def _hand_score(rows, cls, query, *, laplace):
    """P(c) prod_i P(x_i | c) by counting rows of the table, in exact fractions."""
    in_class = [r for r in rows if r["play_tennis"] == cls]
    classes = {r["play_tennis"] for r in rows}
    if laplace:
        score = Fraction(len(in_class) + 1, len(rows) + len(classes))
    else:
        score = Fraction(len(in_class), len(rows))
    for f in FEATURES:
        hits = sum(1 for r in in_class if r[f] == query[f])
        n_values = len({r[f] for r in rows})
        score *= (
            Fraction(hits + 1, len(in_class) + n_values)
            if laplace
            else Fraction(hits, len(in_class))
        )
    return score


# --------------------------------------------------------------------------- PlayTennis


def test_table_is_the_source_material():
    rows = _tennis_rows()
    assert len(rows) == 14
    assert sum(r["play_tennis"] == "Yes" for r in rows) == 9
    assert sum(r["play_tennis"] == "No" for r in rows) == 5


def test_play_tennis_unsmoothed_scores():
    rows = _tennis_rows()
    model = _tennis_model(smoothing=False)
    scores = np.exp(model.joint_log_likelihood(_query()))[0]
    yes, no = model.classes.index("Yes"), model.classes.index("No")
    assert scores[yes] == pytest.approx(
        float(_hand_score(rows, "Yes", QUERY, laplace=False)), rel=1e-12
    )
    assert scores[no] == pytest.approx(
        float(_hand_score(rows, "No", QUERY, laplace=False)), rel=1e-12
    )
    # the numbers quoted by the source material
    assert round(scores[yes], 4) == 0.0053
    assert round(scores[no], 4) == 0.0206
    assert model.predict(_query()).tolist() == ["No"]
    np.testing.assert_allclose(model.predict_proba(_query())[0], scores / scores.sum(), rtol=1e-12)


def test_play_tennis_laplace_scores():
    rows = _tennis_rows()
    model = (
        _tennis_model()
    )  # smoothing=True, concentration=1: Laplace for the class prior and features
    scores = np.exp(model.joint_log_likelihood(_query()))[0]
    for cls in ("Yes", "No"):
        expected = _hand_score(rows, cls, QUERY, laplace=True)
        assert scores[model.classes.index(cls)] == pytest.approx(float(expected), rel=1e-12)
    assert model.predict(_query()).tolist() == ["No"]


def test_wrong_count_fails_the_comparison():
    # negative control: the engine's counts against a table with one row changed must disagree
    rows = _tennis_rows()
    rows[0] = {**rows[0], "outlook": "Rain"}  # D1: Sunny -> Rain, a No day
    model = _tennis_model(smoothing=False)
    score_no = np.exp(model.joint_log_likelihood(_query()))[0][model.classes.index("No")]
    assert score_no != pytest.approx(float(_hand_score(rows, "No", QUERY, laplace=False)), rel=1e-3)


def _encoded_tennis():
    df = pd.read_csv(TENNIS)
    X = np.column_stack(
        [df[f].map({v: i for i, v in enumerate(sorted(df[f].unique()))}) for f in FEATURES]
    )
    y = df["play_tennis"].to_numpy()
    return X, y


def test_laplace_equals_sklearn_categorical_nb():
    X, y = _encoded_tennis()
    schema = NaiveBayesSchema(
        classes=("No", "Yes"),
        kinds=("categorical",) * 4,
        categories=tuple(tuple(range(X[:, j].max() + 1)) for j in range(4)),
    )
    stats_ = naive_bayes_stats(X, y, schema=schema)
    grid = np.array(np.meshgrid(*[np.arange(X[:, j].max() + 1) for j in range(4)])).reshape(4, -1).T
    # sklearn's class prior is the class frequency unless given:
    # give it the Laplace prior, counted here
    counts = np.array([(y == c).sum() for c in ("No", "Yes")])
    sk = CategoricalNB(alpha=1.0, class_prior=(counts + 1) / (counts.sum() + 2)).fit(X, y)
    ours = fit_naive_bayes(stats=stats_)
    np.testing.assert_allclose(ours.predict_proba(grid), sk.predict_proba(grid), rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        ours.predict_log_proba(grid), sk.predict_log_proba(grid), rtol=1e-12, atol=1e-12
    )
    # frequency class prior with Laplace features: sklearn's default
    sk_default = CategoricalNB(alpha=1.0).fit(X, y)
    freq = fit_naive_bayes(stats=stats_, class_prior="frequency")
    np.testing.assert_allclose(
        freq.predict_proba(grid), sk_default.predict_proba(grid), rtol=0, atol=1e-12
    )
    for f in range(4):
        np.testing.assert_allclose(ours.category_log_prob[f], sk.feature_log_prob_[f], rtol=1e-13)
    assert list(ours.predict(grid)) == list(sk.predict(grid))


def test_laplace_is_the_dirichlet_one_posterior_mean_per_class_and_feature():
    model = _tennis_model()
    rows = _tennis_rows()
    outlook = model.schema.categories[0]
    for c, cls in enumerate(model.classes):
        post = model.category_posteriors[0][c]
        n_c = sum(r["play_tennis"] == cls for r in rows)
        for v, value in enumerate(outlook):
            hits = sum(r["play_tennis"] == cls and r["outlook"] == value for r in rows)
            assert post.mean[v] == pytest.approx((hits + 1) / (n_c + len(outlook)), rel=1e-13)
            assert post.marginal(value).mean() == pytest.approx(post.mean[v], rel=1e-13)


def test_unseen_category_is_handled_by_the_prior():
    # "Overcast" never occurs on a No day; "Snowy" was never declared
    smoothed, plain = _tennis_model(), _tennis_model(smoothing=False)
    no = smoothed.classes.index("No")
    # smoothed: an undeclared label gets the prior mass alpha / (|D_c| + alpha N_i) in each class
    base = (
        smoothed.joint_log_likelihood(_query())[0] - smoothed.category_log_prob[0][:, 2]
    )  # minus log P(Sunny|c)
    snowy = smoothed.joint_log_likelihood(_query(outlook="Snowy"))[0]
    n_c = np.array([5, 9])
    np.testing.assert_allclose(snowy, base + np.log(1.0 / (n_c + 3)), rtol=1e-13)
    # unsmoothed: Overcast has probability 0 under No -> P(No | x) = 0 exactly, no NaN
    p = plain.predict_proba(_query(outlook="Overcast"))[0]
    assert p[no] == 0.0 and p[1 - no] == 1.0
    assert np.isneginf(plain.predict_log_proba(_query(outlook="Overcast"))[0][no])
    # unsmoothed: an undeclared label has probability 0 under every class,
    # so that feature is uninformative
    without_outlook = np.exp(
        np.log(np.array([5, 9]) / 14)
        + sum(
            plain.category_log_prob[f][:, plain.schema.categories[f].index(QUERY[FEATURES[f]])]
            for f in (1, 2, 3)
        )
    )
    p_snowy = plain.predict_proba(_query(outlook="Snowy"))[0]
    assert np.all(np.isfinite(p_snowy))
    np.testing.assert_allclose(p_snowy, without_outlook / without_outlook.sum(), rtol=1e-13)


def test_all_classes_ruled_out_falls_back_to_the_prior():
    X = np.array([["a", "x"], ["a", "x"], ["b", "y"]], dtype=object)
    y = np.array(["P", "P", "Q"])
    schema = NaiveBayesSchema.infer(X, y, kinds=["categorical", "categorical"])
    m = fit_naive_bayes(stats=naive_bayes_stats(X, y, schema=schema), smoothing=False)
    q = np.array([["a", "y"]], dtype=object)  # "a" rules out Q, "y" rules out P
    assert np.all(np.isneginf(m.joint_log_likelihood(q)))
    np.testing.assert_allclose(m.predict_proba(q)[0], [2 / 3, 1 / 3], rtol=1e-14)
    assert m.predict(q).tolist() == ["P"]


# ---------------------------------------------------------------- decisions on NB posteriors


def test_zero_one_decision_equals_max_posterior_and_a_costly_miss_moves_it():
    model = _tennis_model(smoothing=False)
    rows = pd.read_csv(TENNIS)[FEATURES]
    P = model.predict_proba(rows)
    d = bayes_decision(proba=P, options=model.classes)
    assert list(d.label) == list(model.predict(rows))
    q = model.predict_proba(_query())
    assert bayes_decision(proba=q, options=model.classes).label.tolist() == ["No"]
    # staying home on a Yes day (a miss) costs 50x a wasted trip
    no, yes = model.classes.index("No"), model.classes.index("Yes")
    loss = np.zeros((2, 2))
    loss[no, yes] = 50.0
    loss[yes, no] = 1.0
    assert bayes_decision(proba=q, loss=loss, options=model.classes).label.tolist() == ["Yes"]


# --------------------------------------------------------------------------- Gaussian features


def _gaussian_data(rng, n=600, d=4, k=3):
    y = rng.integers(0, k, size=n)
    centers = rng.normal(0, 2, size=(k, d))
    scales = rng.uniform(0.5, 2.0, size=(k, d))
    X = centers[y] + scales[y] * rng.normal(size=(n, d))
    return X, y


def test_gaussian_ml_equals_sklearn_gaussian_nb():
    rng = np.random.default_rng(1)
    X, y = _gaussian_data(rng)
    schema = NaiveBayesSchema(classes=(0, 1, 2), kinds=("gaussian",) * 4, categories=(None,) * 4)
    ours = fit_naive_bayes(stats=naive_bayes_stats(X, y, schema=schema), smoothing=False)
    sk = GaussianNB(var_smoothing=0.0).fit(X, y)
    Xt, _ = _gaussian_data(np.random.default_rng(2), n=2000)
    np.testing.assert_allclose(ours.predict_proba(Xt), sk.predict_proba(Xt), rtol=0, atol=1e-9)
    np.testing.assert_array_equal(ours.predict(Xt), sk.predict(Xt))
    np.testing.assert_allclose(ours.means, sk.theta_, rtol=1e-12)
    np.testing.assert_allclose(ours.variances, sk.var_, rtol=1e-12)
    # the ML variance divides by N, not N - 1
    for c in range(3):
        np.testing.assert_allclose(ours.variances[c], X[y == c].var(axis=0, ddof=0), rtol=1e-12)
        assert not np.allclose(ours.variances[c], X[y == c].var(axis=0, ddof=1), rtol=1e-6)
    np.testing.assert_allclose(np.exp(ours.class_log_prior), np.bincount(y) / y.size, rtol=1e-14)


def test_gaussian_score_by_hand():
    X = np.array([[1.0], [2.0], [4.0], [10.0], [12.0]])
    y = np.array(["a", "a", "a", "b", "b"])
    schema = NaiveBayesSchema.infer(X, y, kinds=["gaussian"])
    m = fit_naive_bayes(stats=naive_bayes_stats(X, y, schema=schema), smoothing=False)
    x = 5.0
    mu_a, var_a = 7 / 3, ((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 3
    mu_b, var_b = 11.0, 1.0
    expected = [
        math.log(3 / 5) + stats.norm(mu_a, math.sqrt(var_a)).logpdf(x),
        math.log(2 / 5) + stats.norm(mu_b, math.sqrt(var_b)).logpdf(x),
    ]
    np.testing.assert_allclose(m.joint_log_likelihood(np.array([[x]]))[0], expected, rtol=1e-13)


def test_single_row_class_and_zero_variance_are_clear_errors():
    X = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 5.0]])
    y = np.array(["a", "a", "lonely"])
    schema = NaiveBayesSchema.infer(X, y, kinds=["gaussian", "gaussian"])
    st = naive_bayes_stats(X, y, schema=schema)
    with pytest.raises(
        ValueError, match=r"class 'lonely': expected at least 2 rows .*received a single row"
    ):
        fit_naive_bayes(stats=st, smoothing=False)
    # var_floor (off by default) or the Bayesian features make it usable
    m = fit_naive_bayes(stats=st, smoothing=False, var_floor=1e-3)
    assert m.variances[1].tolist() == [1e-3, 1e-3]
    nig = fit_naive_bayes(
        stats=st, gaussian="nig", nig_prior=UnivariateNIGPrior(mu0=0, kappa0=1, a0=2, b0=1)
    )
    assert np.all(np.isfinite(nig.predict_proba(X)))
    # constant feature within a class
    X2 = np.array([[1.0], [1.0], [3.0], [4.0]])
    y2 = np.array([0, 0, 1, 1])
    st2 = naive_bayes_stats(X2, y2, schema=NaiveBayesSchema.infer(X2, y2, kinds=["gaussian"]))
    with pytest.raises(
        ValueError, match=r"feature 'x0' in class 0: expected a positive .*variance, received 0"
    ):
        fit_naive_bayes(stats=st2, smoothing=False)


def test_bad_input_names_feature_and_row():
    X = pd.DataFrame({"height": [1.0, 2.0, np.nan], "colour": ["r", "g", "r"]})
    y = ["a", "b", "a"]
    schema = NaiveBayesSchema(
        classes=("a", "b"),
        kinds=("gaussian", "categorical"),
        categories=(None, ("r", "g")),
        feature_names=("height", "colour"),
    )
    with pytest.raises(
        ValueError,
        match=r"X: expected finite numbers in Gaussian feature 'height', received nan at row 2",
    ):
        naive_bayes_stats(X, y, schema=schema)
    X2 = pd.DataFrame({"height": [1.0, 2.0, 3.0], "colour": ["r", "blue", "r"]})
    with pytest.raises(
        ValueError,
        match=r"X: expected one of the categories \['r', 'g'\] in feature 'colour', "
        r"received 'blue' at row 1",
    ):
        naive_bayes_stats(X2, y, schema=schema)
    with pytest.raises(
        ValueError, match=r"y: expected one of the classes \['a', 'b'\], received 'c' at row 2"
    ):
        naive_bayes_stats(X2.assign(colour="r"), ["a", "b", "c"], schema=schema)
    X3 = pd.DataFrame({"height": [1.0, "tall", 3.0], "colour": ["r", "g", "r"]})
    with pytest.raises(ValueError, match=r"Gaussian feature 'height', received 'tall' at row 1"):
        naive_bayes_stats(X3, y, schema=schema)
    with pytest.raises(
        ValueError,
        match=r"kinds: expected 'gaussian' or 'categorical' for feature 'x0', received 'poisson'",
    ):
        NaiveBayesSchema(classes=(0, 1), kinds=("poisson",), categories=(None,))
    with pytest.raises(
        ValueError,
        match=r"nig_prior: expected a UnivariateNIGPrior when gaussian='nig', received None",
    ):
        fit_naive_bayes(
            stats=naive_bayes_stats(X2.assign(colour="r"), y, schema=schema), gaussian="nig"
        )


# --------------------------------------------------------------------------- streaming


def _mixed_data(rng, n):
    y = rng.choice(np.array(["u", "v", "w"]), size=n, p=[0.5, 0.3, 0.2])
    shift = {"u": 0.0, "v": 1.5, "w": -2.0}
    g1 = (
        1e6 + np.array([shift[c] for c in y]) + rng.normal(size=n)
    )  # large offset: needs a stable combine
    g2 = rng.normal(size=n) * np.where(y == "u", 1.0, 3.0)
    colour = np.where(
        rng.random(n) < np.where(y == "v", 0.8, 0.3),
        "red",
        rng.choice(np.array(["green", "blue"]), size=n),
    )
    size = rng.integers(0, 4, size=n)
    return pd.DataFrame({"g1": g1, "colour": colour, "g2": g2, "size": size}), y


MIXED_SCHEMA = NaiveBayesSchema(
    classes=("u", "v", "w"),
    kinds=("gaussian", "categorical", "gaussian", "categorical"),
    categories=(None, ("red", "green", "blue", "purple"), None, (0, 1, 2, 3)),
    feature_names=("g1", "colour", "g2", "size"),
)


def test_streaming_uneven_batches_equals_one_batch():
    rng = np.random.default_rng(5)
    X, y = _mixed_data(rng, 3001)
    one = naive_bayes_stats(X, y, schema=MIXED_SCHEMA)
    cuts = [0, 1, 2, 2, 17, 1000, 2999, 3001]
    parts = [(X.iloc[i:j], y[i:j]) for i, j in zip(cuts[:-1], cuts[1:], strict=True)]
    total = None
    for Xb, yb in parts:
        s = naive_bayes_stats(Xb, yb, schema=MIXED_SCHEMA)
        total = s if total is None else total + s
    np.testing.assert_array_equal(total.class_counts, one.class_counts)
    for a, b in zip(total.category_counts, one.category_counts, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(total.gaussian_mean, one.gaussian_mean, rtol=1e-14)
    np.testing.assert_allclose(total.gaussian_m2, one.gaussian_m2, rtol=1e-10)
    # against numpy's two-pass moments
    for c, cls in enumerate(MIXED_SCHEMA.classes):
        sel = X[y == cls]
        np.testing.assert_allclose(
            total.gaussian_mean[c], sel[["g1", "g2"]].mean().to_numpy(), rtol=1e-14
        )
        np.testing.assert_allclose(
            total.gaussian_m2[c] / (y == cls).sum(),
            sel[["g1", "g2"]].var(ddof=0).to_numpy(),
            rtol=1e-9,
        )
    Xt, _ = _mixed_data(np.random.default_rng(6), 500)
    for options in (
        {},
        {"smoothing": False},
        {"gaussian": "nig", "nig_prior": UnivariateNIGPrior(mu0=0, kappa0=0.1, a0=1, b0=1)},
    ):
        streamed = fit_naive_bayes_batches(parts, schema=MIXED_SCHEMA, **options)
        batch = fit_naive_bayes(stats=one, **options)
        np.testing.assert_allclose(
            streamed.predict_log_proba(Xt), batch.predict_log_proba(Xt), rtol=1e-9, atol=1e-9
        )


def test_chan_combine_matches_two_pass():
    rng = np.random.default_rng(9)
    x = 1e8 + rng.normal(size=1000)
    a, b = x[:137], x[137:]
    n, mean, m2 = chan_combine(
        a.size, a.mean(), ((a - a.mean()) ** 2).sum(), b.size, b.mean(), ((b - b.mean()) ** 2).sum()
    )
    assert n == 1000
    assert mean == pytest.approx(x.mean(), rel=1e-15)
    assert m2 == pytest.approx(((x - x.mean()) ** 2).sum(), rel=1e-8)
    # an empty part is neutral
    n0, mean0, m20 = chan_combine(0, 0.0, 0.0, a.size, a.mean(), ((a - a.mean()) ** 2).sum())
    assert (n0, mean0) == (a.size, a.mean())


def test_mixed_scores_by_hand():
    rng = np.random.default_rng(11)
    X, y = _mixed_data(rng, 400)
    m = fit_naive_bayes(stats=naive_bayes_stats(X, y, schema=MIXED_SCHEMA), smoothing=False)
    row = X.iloc[[7]]
    for c, cls in enumerate(MIXED_SCHEMA.classes):
        sel = X[y == cls]
        expected = math.log(len(sel) / len(X))
        for g in ("g1", "g2"):
            v = sel[g].tolist()
            mu = math.fsum(v) / len(v)  # exactly rounded sums: the offset of 1e6 costs nothing
            var = math.fsum((t - mu) ** 2 for t in v) / len(v)
            expected += stats.norm(mu, math.sqrt(var)).logpdf(row[g].iloc[0])
        for f in ("colour", "size"):
            expected += math.log((sel[f] == row[f].iloc[0]).sum() / len(sel))
        # g1 sits at 1e6, where one ulp is 1.2e-10: means agree to a few ulps, scores to ~1e-10
        assert m.joint_log_likelihood(row)[0, c] == pytest.approx(expected, rel=0, abs=1e-9)


# --------------------------------------------------------------------------- Normal-Inverse-Gamma


def test_nig_evidence_is_a_multivariate_t_and_predictive_is_its_ratio():
    # Marginally x ~ MVT_{2 a0}(mu0 1, (b0 / a0) (I + 1 1' / kappa0)): an independent derivation.
    prior = UnivariateNIGPrior(mu0=0.5, kappa0=0.7, a0=1.5, b0=2.0)
    x = np.array([1.2, -0.3, 2.2, 0.9, 1.7])

    def mvt_logpdf(v):
        n = v.size
        shape = prior.b0 / prior.a0 * (np.eye(n) + np.ones((n, n)) / prior.kappa0)
        return stats.multivariate_t(loc=np.full(n, prior.mu0), shape=shape, df=2 * prior.a0).logpdf(
            v
        )

    post = normal_normal_inverse_gamma(
        count=x.size, mean=x.mean(), m2=((x - x.mean()) ** 2).sum(), prior=prior
    )
    assert float(post.log_marginal_likelihood()) == pytest.approx(mvt_logpdf(x), rel=1e-12)
    for x_new in (-2.0, 0.4, 3.1):
        ratio = mvt_logpdf(np.append(x, x_new)) - mvt_logpdf(x)
        assert float(post.predictive_logpdf(x_new)) == pytest.approx(ratio, rel=1e-11)
        assert float(post.predictive().logpdf(x_new)) == pytest.approx(ratio, rel=1e-11)


def test_nig_sequential_equals_batch():
    prior = UnivariateNIGPrior(mu0=-1.0, kappa0=2.0, a0=3.0, b0=0.5)
    x = np.random.default_rng(3).normal(2.0, 1.5, size=50)
    batch = normal_normal_inverse_gamma(
        count=x.size, mean=x.mean(), m2=((x - x.mean()) ** 2).sum(), prior=prior
    )
    p = prior
    for v in x:  # one observation at a time, each posterior the next prior
        post = normal_normal_inverse_gamma(count=1, mean=v, m2=0.0, prior=p)
        p = UnivariateNIGPrior(
            mu0=float(post.mu), kappa0=float(post.kappa), a0=float(post.a), b0=float(post.b)
        )
    np.testing.assert_allclose(
        [p.mu0, p.kappa0, p.a0, p.b0], [batch.mu, batch.kappa, batch.a, batch.b], rtol=1e-12
    )
    # the marginal of mu is the scipy Student-t; of sigma2 the inverse gamma
    assert batch.mean_marginal().mean() == pytest.approx(float(batch.mu), rel=1e-14)
    assert batch.variance_marginal().mean() == pytest.approx(
        float(batch.b / (batch.a - 1)), rel=1e-14
    )


def test_nig_naive_bayes_uses_student_t_predictives():
    rng = np.random.default_rng(4)
    X, y = _gaussian_data(rng, n=60, d=2, k=2)
    prior = UnivariateNIGPrior(mu0=0.0, kappa0=0.5, a0=2.0, b0=1.0)
    schema = NaiveBayesSchema(
        classes=(0, 1), kinds=("gaussian", "gaussian"), categories=(None, None)
    )
    m = fit_naive_bayes(
        stats=naive_bayes_stats(X, y, schema=schema), gaussian="nig", nig_prior=prior
    )
    xq = np.array([[0.3, -1.0]])
    for c in (0, 1):
        expected = math.log(((y == c).sum() + 1) / (y.size + 2))
        for j in range(2):
            col = X[y == c, j]
            post = normal_normal_inverse_gamma(
                count=col.size, mean=col.mean(), m2=((col - col.mean()) ** 2).sum(), prior=prior
            )
            expected += stats.t(df=2 * post.a, loc=post.mu, scale=post.predictive_scale).logpdf(
                xq[0, j]
            )
        assert m.joint_log_likelihood(xq)[0, c] == pytest.approx(expected, rel=1e-12)


def test_bad_nig_prior():
    with pytest.raises(ValueError, match=r"kappa0: expected a positive finite number, received 0"):
        UnivariateNIGPrior(mu0=0, kappa0=0, a0=1, b0=1)
    with pytest.raises(ValueError, match=r"mu0: expected a finite number, received inf"):
        UnivariateNIGPrior(mu0=float("inf"), kappa0=1, a0=1, b0=1)


@pytest.mark.parametrize("offset", [0.0, 50.0])
def test_naive_bayes_nig_equals_regression_nig_with_intercept_only_design(offset):
    # Two implementations of one posterior: the univariate NIG of naive Bayes (centred moments,
    # merged per class by Chan's formulas) and the regression NIG (natural parameters) with
    # X = a column of ones, fed each class's values of each feature.
    rng = np.random.default_rng(11)
    X, y = _gaussian_data(rng, n=80, d=2, k=3)
    X = X + offset
    prior = UnivariateNIGPrior(mu0=0.4, kappa0=0.3, a0=2.5, b0=1.7)
    schema = NaiveBayesSchema(classes=(0, 1, 2), kinds=("gaussian", "gaussian"),
                              categories=(None, None))
    halves = naive_bayes_stats(X[:37], y[:37], schema=schema) + naive_bayes_stats(
        X[37:], y[37:], schema=schema)
    nig = fit_naive_bayes(stats=halves, gaussian="nig", nig_prior=prior).nig
    for c in range(3):
        for j in range(2):
            col = X[y == c, j]
            reg = NormalInverseGammaPosterior.from_prior(
                [prior.mu0], [[1.0 / prior.kappa0]], shape=prior.a0, scale=prior.b0
            ).update(regression_stats(np.ones((col.size, 1)), col))
            nb = UnivariateNIGPosterior(mu=nig.mu[c, j], kappa=nig.kappa[c, j], a=nig.a[c, j],
                                        b=nig.b[c, j], count=nig.count[c, j], prior=prior)
            assert nb.count == col.size
            rtol = 1e-12
            np.testing.assert_allclose(
                [nb.mu, nb.kappa, nb.a, nb.b],
                [reg.mean[0], reg.precision[0, 0], reg.shape, reg.scale], rtol=rtol)
            t_nb, t_reg = nb.mean_marginal(), reg.marginal()
            np.testing.assert_allclose(
                [t_nb.args[0], t_nb.args[2], t_nb.std(), nb.variance_marginal().mean()],
                [t_reg.args[0], t_reg.args[2][0], reg.sd[0], reg.noise_marginal().mean()],
                rtol=rtol)
            pred = reg.predictive(np.ones((1, 1)))
            np.testing.assert_allclose([nb.predictive_scale, nb.predictive().logpdf(offset)],
                                       [pred.args[2][0], pred.logpdf(offset)[0]], rtol=rtol)
            assert float(nb.log_marginal_likelihood()) == pytest.approx(reg.log_evidence,
                                                                        rel=rtol)


def test_nig_expected_logpdf_matches_exact_draws():
    """E[log N(x | mu, sigma2)] under the NIG posterior against 200,000 exact draws, to 5
    Monte Carlo standard errors; a sign slip in the digamma term would be off by ~0.2."""
    from bayescheck.inference.engines.naive_bayes_stats import (
        UnivariateNIGPrior,
        normal_normal_inverse_gamma,
    )

    post = normal_normal_inverse_gamma(count=7, mean=1.3, m2=2.5,
                                       prior=UnivariateNIGPrior(mu0=0.0, kappa0=0.5, a0=2.0,
                                                                b0=1.0))
    rng = np.random.default_rng(0)
    sigma2 = post.variance_marginal().rvs(size=200_000, random_state=rng)
    mu = rng.normal(post.mu, np.sqrt(sigma2 / post.kappa))
    for x in (1.0, 9.0):  # near the data and ~8 sd away
        logpdf = -0.5 * np.log(2 * np.pi * sigma2) - 0.5 * (x - mu) ** 2 / sigma2
        mcse = logpdf.std() / np.sqrt(logpdf.size)
        assert abs(float(post.expected_logpdf(x)) - logpdf.mean()) < 5 * mcse


def _tennis_with_constant():
    """The tennis table plus a feature that takes one value in every row (code 0)."""
    X, y = _encoded_tennis()
    return np.column_stack([X, np.zeros(len(y), dtype=int)]), y


def _grid(X):
    axes = [np.arange(X[:, j].max() + 1) for j in range(X.shape[1])]
    return np.array(np.meshgrid(*axes)).reshape(X.shape[1], -1).T


def _schema_with_constant(X, constant_categories=(0,)):
    cats = [tuple(range(X[:, j].max() + 1)) for j in range(X.shape[1] - 1)]
    return NaiveBayesSchema(classes=("No", "Yes"), kinds=("categorical",) * X.shape[1],
                            categories=(*cats, constant_categories))


def test_single_category_feature_equals_sklearn_and_is_uninformative():
    # A Dirichlet over one category is the point mass at 1: the feature's factor is 1 under
    # every class, as scikit-learn's (c + alpha) / (n_c + alpha * 1) = 1.
    X, y = _tennis_with_constant()
    grid = _grid(X)
    stats_ = naive_bayes_stats(X, y, schema=_schema_with_constant(X))
    for smoothing in (True, False):
        ours = fit_naive_bayes(stats=stats_, class_prior="frequency", smoothing=smoothing)
        assert ours.category_posteriors[4] is None
        np.testing.assert_array_equal(ours.category_log_prob[4], np.zeros((2, 1)))
    ours = fit_naive_bayes(stats=stats_, class_prior="frequency")
    sk = CategoricalNB(alpha=1.0).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(grid), sk.predict_proba(grid), rtol=0,
                               atol=1e-12)
    np.testing.assert_array_equal(sk.feature_log_prob_[4], ours.category_log_prob[4])
    # the same classifier as without the feature
    without = fit_naive_bayes(stats=naive_bayes_stats(X[:, :4], y, schema=NaiveBayesSchema(
        classes=("No", "Yes"), kinds=("categorical",) * 4,
        categories=_schema_with_constant(X).categories[:4])), class_prior="frequency")
    np.testing.assert_array_equal(ours.predict_proba(grid), without.predict_proba(grid[:, :4]))
    # a label never seen at predict time gets alpha / (n_c + alpha * 1), as any other feature's
    counts = np.array([(y == c).sum() for c in ("No", "Yes")])
    np.testing.assert_allclose(ours.unknown_log_prob[4], np.log(1.0 / (counts + 1.0)),
                               rtol=1e-15)


def test_single_category_check_fails_on_a_second_declared_category():
    # Negative: declaring a second, never-seen category gives it prior mass, so the feature's
    # factor is (n_c + 1) / (n_c + 2), class-dependent: the comparison with sklearn fails.
    X, y = _tennis_with_constant()
    grid = _grid(X)
    wrong = fit_naive_bayes(stats=naive_bayes_stats(
        X, y, schema=_schema_with_constant(X, (0, 1))), class_prior="frequency")
    sk = CategoricalNB(alpha=1.0).fit(X, y)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(wrong.predict_proba(grid), sk.predict_proba(grid), rtol=0,
                                   atol=1e-12)


def test_a_mapping_of_columns_is_read_as_the_frame_with_those_columns():
    """``fit`` passes the columns of a batch as a dict (no pandas): same statistics, same
    probabilities; a mapping that lacks a feature is refused."""
    df = pd.read_csv(TENNIS)
    schema = NaiveBayesSchema.infer(df[FEATURES], df["play_tennis"], kinds=["categorical"] * 4)
    y = df["play_tennis"].to_numpy(dtype=object)
    columns = {f: df[f].to_numpy(dtype=object) for f in reversed(FEATURES)}
    by_frame = naive_bayes_stats(df[FEATURES], y, schema=schema)
    by_mapping = naive_bayes_stats(columns, y, schema=schema)
    for name in ("class_counts", "category_counts"):
        a, b = getattr(by_frame, name), getattr(by_mapping, name)
        if isinstance(a, (list, tuple)):
            for u, v in zip(a, b, strict=True):
                np.testing.assert_array_equal(u, v)
        else:
            np.testing.assert_array_equal(a, b)
    model = fit_naive_bayes(stats=by_mapping)
    q = _query()
    np.testing.assert_array_equal(
        model.predict_proba({f: q[f].to_numpy(dtype=object) for f in FEATURES}),
        model.predict_proba(q))
    with pytest.raises(ValueError, match="missing"):
        naive_bayes_stats({f: columns[f] for f in FEATURES[:3]}, y, schema=schema)


def _exact_digamma(x2: int) -> float:
    """psi(x2 / 2) for a positive integer x2, summed exactly and rounded once.

    psi(n) = -gamma + H_(n-1) and psi(n + 1/2) = -gamma - 2 log 2 + sum_(k<n) 2 / (2k + 1)
    (Abramowitz and Stegun 6.3.2, 6.3.4).
    """
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 50
        euler = Decimal("0.57721566490153286060651209008240243104215933593992")
        if x2 % 2 == 0:
            s = sum((Fraction(1, k) for k in range(1, x2 // 2)), Fraction(0))
            head = -euler
        else:
            s = sum((Fraction(2, 2 * k + 1) for k in range(x2 // 2)), Fraction(0))
            head = -euler - 2 * Decimal(2).ln()
        return float(head + Decimal(s.numerator) / Decimal(s.denominator))


def test_expected_log_density_uses_the_exact_digamma():
    """E[log N(x | mu, sigma2)] = -log(2 pi) / 2 - (log b - psi(a)) / 2 - ((x - m)^2 a / b
    + 1 / kappa) / 2, with psi at integers and half-integers summed exactly."""
    x2 = np.array([1, 2, 3, 7, 20, 41, 400])  # a = x2 / 2
    a = x2 / 2.0
    post = UnivariateNIGPosterior(mu=np.full(7, 0.3), kappa=np.full(7, 2.5), a=a,
                                  b=np.full(7, 1.7), count=np.full(7, 3.0), prior=None)
    x = 1.1
    psi = np.array([_exact_digamma(int(n)) for n in x2])
    want = (-0.5 * math.log(2 * math.pi) - 0.5 * (math.log(1.7) - psi)
            - 0.5 * ((x - 0.3) ** 2 * a / 1.7 + 1 / 2.5))
    got = post.expected_logpdf(x)
    np.testing.assert_allclose(got, want, rtol=4e-15, atol=4e-15)
    # psi(a + 1) = psi(a) + 1/a in its place: off by 1 / (2a)
    off = want + 0.5 / a
    assert np.all(np.abs(got - off) > 1e-4)
