"""Data beyond float64's range: the CLI and the estimators refuse them alike, with a message
that says so, instead of pruning every weight, NaN probabilities or an empty component list.
"""

import json
import re
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from bayescheck.inference.engines.mixture_em import fit_em
from bayescheck.reports.cli import main

from bayescheck.estimators import (
    ARDRegression,
    BayesianLinearRegression,
    GaussianMixture,
    GaussianNaiveBayes,
)


def _ard_data(scale):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 6))
    y = X[:, 0] * 2.0 - X[:, 2] + rng.normal(scale=0.1, size=60)
    return X * scale, y


def _ard_cli(tmp_path, X, y):
    tmp_path.mkdir(exist_ok=True)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])]).assign(y=y)
    frame.to_csv(tmp_path / "d.csv", index=False, float_format="%.17g")
    (tmp_path / "s.toml").write_text('model = "ard"\n[data]\npath = "d.csv"\ntarget = "y"\n')
    return main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet"])


def _ard_cli_weights(folder) -> np.ndarray:
    w = json.loads((folder / "o" / "posterior.json").read_text())["parameters"]["w"]
    by_name = dict(zip(w["features"], w["mean"], strict=True))
    return np.array([by_name[f"x{i}"] for i in range(6)])


@pytest.mark.parametrize("scale", [1e-80, 1e-20, 1e80])
def test_ard_on_features_in_another_unit_gives_the_same_answer_by_cli_and_estimator(
        tmp_path, capsys, scale):
    """Type-II ML is equivariant: x c gives w / c and alpha c^2. (1e-20 and 1e-80 pruned
    every weight, 1e80 was refused: the engine's thresholds were absolute.)"""
    X, y = _ard_data(1.0)
    base = ARDRegression().fit(X, y)
    tol = 10 * base.tol  # the fit's own convergence tolerance; rounding is far below it
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        scaled = ARDRegression().fit(X * scale, y)
        code = _ard_cli(tmp_path / "scaled", X * scale, y)
    assert code == 0, capsys.readouterr().err
    assert _ard_cli(tmp_path / "base", X, y) == 0
    assert base.relevant_[[0, 2]].all()
    np.testing.assert_array_equal(scaled.relevant_, base.relevant_)
    np.testing.assert_allclose(scaled.coef_ * scale, base.coef_, rtol=tol, atol=0)
    kept = base.relevant_
    np.testing.assert_allclose(scaled.lambda_[kept] / scale**2, base.lambda_[kept], rtol=tol)
    np.testing.assert_allclose(scaled.predict(X * scale), base.predict(X), rtol=tol,
                               atol=tol * np.abs(y).max())
    np.testing.assert_allclose(_ard_cli_weights(tmp_path / "scaled") * scale,
                               _ard_cli_weights(tmp_path / "base"), rtol=tol, atol=0)


def test_ard_whose_weights_float64_cannot_hold_is_refused_naming_the_feature(tmp_path, capsys):
    """Features of 1e-160: their weights' precisions (1e-320) underflow and their variances
    (1e320) overflow. Refused by the CLI and the estimator alike, naming the feature."""
    X, y = _ard_data(1e-160)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code = _ard_cli(tmp_path, X, y)
        with pytest.raises(ValueError, match=r"feature 'x0': its weight's prior precision .* "
                                             r"beyond float64's range.*rescale the column"):
            ARDRegression().fit(X, y)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "d.csv: feature 'x0': its weight's prior precision" in err


@pytest.mark.parametrize("scale", [1e-150, 1e140])
def test_ard_on_a_target_in_another_unit_gives_the_same_answer(scale):
    """y c gives w c (y scaled by 1e-150 was an OverflowError traceback)."""
    X, y = _ard_data(1.0)
    base = ARDRegression().fit(X, y)
    scaled = ARDRegression().fit(X, y * scale)
    np.testing.assert_array_equal(scaled.relevant_, base.relevant_)
    np.testing.assert_allclose(scaled.coef_ / scale, base.coef_, rtol=10 * base.tol, atol=0)
    np.testing.assert_allclose(scaled.alpha_ * scale**2, base.alpha_, rtol=10 * base.tol)


def test_ard_on_a_target_too_small_for_its_noise_variance_is_refused():
    X, y = _ard_data(1.0)
    with pytest.raises(ValueError, match=r"beyond float64's range.*largest \|y\| = .*e-300"):
        ARDRegression().fit(X, y * 1e-300)


@pytest.mark.parametrize("scale", [1e151, 1e160, 1e300])
def test_the_estimators_refuse_values_beyond_the_cli_limit(scale):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + 5])
    y = np.repeat([0, 1], 30)
    for fit in (lambda: GaussianNaiveBayes().fit(X * scale, y),
                lambda: GaussianMixture(n_components=2).fit(X * scale),
                lambda: BayesianLinearRegression().fit(X * scale, y)):
        with pytest.raises(ValueError, match=r"X\[\d+, \d+\]: value .* is too large: its "
                                             r"square overflows"):
            fit()
    model = GaussianNaiveBayes().fit(X * 1e140, y)  # within the limit: probabilities
    proba = model.predict_proba(X[:5] * 1e140)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="too large"):
        model.predict_proba(X[:5] * scale)


@pytest.mark.parametrize("covariance", ["full", "diag"])
def test_a_mixture_whose_squares_overflow_says_so(covariance):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + 5]) * 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=r"component\(s\) \[\d.*\] is not finite: the "
                                             r"data's squares exceed float64's range"):
            fit_em(X, n_components=2, covariance=covariance)


def _student_t_logpdf(x, nu, loc, scale):
    """log of the Student-t density, its z^2 taken in logs where it would overflow."""
    from scipy.special import gammaln

    z = (x - loc) / scale
    log_z2 = 2 * (np.log(np.abs(x - loc)) - np.log(scale))  # finite for any x != loc
    with np.errstate(over="ignore"):  # the branch np.where does not take
        tail = np.where(np.abs(z) < 1e100, np.log1p(z * z / nu), log_z2 - np.log(nu))
    return (gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi)
            - np.log(scale) - (nu + 1) / 2 * tail)


def test_a_new_value_within_the_limit_far_from_every_class_gets_the_student_t_tails():
    """1e150 is within the limit; a class spread of 1e-6 puts it 1e156 scales away, whose
    square overflows: the predictive's tails still decide the class (it was the class prior,
    0.5 / 0.5, as if the row said nothing)."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) * 3 + 5]) * 1e-6
    y = np.repeat([0, 1], 30)
    model = GaussianNaiveBayes(b0=1e-12).fit(X, y)
    nig = model.model_.nig
    nu, loc = 2 * nig.a, nig.mu
    scale = np.sqrt(nig.b * (nig.kappa + 1) / (nig.a * nig.kappa))
    rows = np.array([[1e150, 0.0], [-1e150, 1e150], [3e-6, 2e-6]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        got = model.predict_log_proba(rows)
    joint = model.model_.class_log_prior + np.stack(
        [_student_t_logpdf(r[None, :], nu, loc, scale).sum(axis=1) for r in rows])
    top = joint.max(axis=1, keepdims=True)
    want = joint - top - np.log(np.exp(joint - top).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert np.ptp(np.exp(got[:2]), axis=1).min() > 0.5  # the tails decide, far from 0.5 / 0.5


def test_predict_holds_new_rows_of_gaussian_naive_bayes_to_the_fit_limit(tmp_path, capsys):
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": np.r_[rng.normal(size=20), rng.normal(size=20) + 3],
                          "c": ["y"] * 20 + ["x"] * 20})
    frame.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text('model = "naive_bayes"\n[data]\npath = "d.csv"\n'
                                     'target = "c"\nfeatures_kind = "gaussian"\n')
    assert main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    (tmp_path / "new.csv").write_text("a\n1.0\n1e200\n")
    code = main(["predict", str(tmp_path / "s.toml"), "--model-from", str(tmp_path / "o"),
                 "--data", str(tmp_path / "new.csv")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "new.csv, column 'a', row 2: value 1e+200 is too large" in err


@pytest.mark.parametrize("scale", [1e-160, 1e-300])
def test_gaussian_naive_bayes_ml_variances_below_float64s_normal_range_are_refused(
        tmp_path, capsys, scale):
    """1e-160: subnormal variances gave wrong probabilities (0.4375 for 0.51); 1e-300: refused
    as "all 13 rows equal". CLI (smoothing = false: ML variances) and estimator alike."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, "a", "b")
    message = (r"feature 'x0' in class 'a': the maximum-likelihood variance .* is below "
               r"float64's smallest normal number .* rescale the feature")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=message.replace("'a'", "(?:'a'|0)")):
            GaussianNaiveBayes(gaussian="ml").fit(X * scale, y)
        pd.DataFrame({"x0": X[:, 0] * scale, "x1": X[:, 1] * scale, "c": y}).to_csv(
            tmp_path / "d.csv", index=False, float_format="%.17g")
        (tmp_path / "s.toml").write_text(
            'model = "naive_bayes"\n[data]\npath = "d.csv"\ntarget = "c"\n'
            'features_kind = "gaussian"\n[prior]\nsmoothing = false\n')
        code = main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert re.search(message, err), err
    # within the range: the probabilities of unit scale
    base = GaussianNaiveBayes(gaussian="ml").fit(X, y).predict_proba(X)
    near = GaussianNaiveBayes(gaussian="ml").fit(X * 1e-150, y).predict_proba(X * 1e-150)
    np.testing.assert_allclose(near, base, rtol=1e-12, atol=1e-12)


def test_equal_rows_are_still_called_equal():
    X = np.r_[np.full(5, 3.0), np.arange(5.0)][:, None]
    y = np.repeat(["a", "b"], 5)
    with pytest.raises(ValueError, match=r"received 0 \(all 5 rows equal\); pass var_floor"):
        GaussianNaiveBayes(gaussian="ml").fit(X, y)



def _exact_ml_proba(model, row) -> np.ndarray:
    """Class probabilities of ML Gaussian naive Bayes at ``row``: the squared distances in
    exact rational arithmetic (no overflow), the logs in float."""
    m = model.model_
    log_terms = [float(lp) - 0.5 * float(np.sum(np.log(2 * np.pi * v)))
                 for lp, v in zip(m.class_log_prior, m.variances, strict=True)]
    quad = [sum((Fraction(float(x)) - Fraction(float(mu))) ** 2 / (2 * Fraction(float(v)))
                for x, mu, v in zip(row, means, variances, strict=True))
            for means, variances in zip(m.means, m.variances, strict=True)]
    best = min(quad)
    # beyond float64 a difference means a probability of exactly 0
    diffs = [float(q - best) if q - best < 1e300 else np.inf for q in quad]
    logp = np.array(log_terms) - np.array(diffs)
    p = np.exp(logp - logp.max())
    return p / p.sum()


def test_ml_naive_bayes_far_beyond_every_class_gets_the_exact_probabilities():
    """ML variances: a new value 1e150 (within the limit) is 1e156 class sds away, whose
    square overflows in every class. The classes are compared up to a constant of the row,
    giving the exact probabilities (it was 0.5 / 0.5, the class prior, as if the row said
    nothing; the CLI said to set smoothing, which the answer does not need)."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) * 3 + 5]) * 1e-6
    y = np.repeat([0, 1], 30)
    model = GaussianNaiveBayes(gaussian="ml").fit(X, y)
    rows = np.array([[1e150, 0.0], [-1e150, -1e150], [3e-6, 2e-6], [1e140, 1e-6]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        got = model.predict_proba(rows)
    want = np.array([_exact_ml_proba(model, r) for r in rows])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)
    assert got[0, 1] == 1.0 and got[1, 1] == 1.0  # the wider class, far from 0.5 / 0.5


def test_ml_naive_bayes_predict_far_beyond_every_class_by_the_cli(tmp_path, capsys):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": np.r_[rng.normal(size=20), rng.normal(size=20) * 3 + 3] * 1e-6,
                          "c": ["y"] * 20 + ["x"] * 20})
    frame.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text('model = "naive_bayes"\n[data]\npath = "d.csv"\n'
                                     'target = "c"\nfeatures_kind = "gaussian"\n'
                                     '[prior]\nsmoothing = false\n')
    assert main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    (tmp_path / "new.csv").write_text("a\n1e-6\n1e150\n")
    out = tmp_path / "pred.csv"
    code = main(["predict", str(tmp_path / "s.toml"), "--model-from", str(tmp_path / "o"),
                 "--data", str(tmp_path / "new.csv"), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(out)
    assert table.loc[1, "p_x"] == 1.0 and table.loc[1, "decision"] == "x"  # the wider class
