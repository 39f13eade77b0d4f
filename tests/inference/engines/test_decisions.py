"""Minimum-risk decisions and the discrete Bayes-rule calculator."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from bayescheck.inference.engines.decisions import (
    bayes_decision,
    bayes_rule,
    conditional_risk,
    validate_loss,
    zero_one_loss,
)


def _random_proba(rng, n, k):
    p = rng.dirichlet(np.ones(k), size=n)
    return p / p.sum(axis=1, keepdims=True)


def test_conditional_risk_is_the_sum_over_classes():
    rng = np.random.default_rng(0)
    P = _random_proba(rng, 5, 3)
    L = rng.uniform(0, 10, size=(4, 3))  # 4 options (e.g. one "reject"), 3 classes
    R = conditional_risk(proba=P, loss=L)
    assert R.shape == (5, 4)
    for r in range(5):
        for i in range(4):
            assert R[r, i] == pytest.approx(sum(L[i, j] * P[r, j] for j in range(3)), rel=1e-13)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_zero_one_loss_decision_is_max_posterior(k):
    rng = np.random.default_rng(k)
    P = _random_proba(rng, 2000, k)
    d = bayes_decision(proba=P, loss=zero_one_loss(k))
    np.testing.assert_array_equal(d.index, P.argmax(axis=1))
    np.testing.assert_allclose(d.min_risk, 1.0 - P.max(axis=1), rtol=0, atol=1e-15)
    # default loss is zero-one
    np.testing.assert_array_equal(bayes_decision(proba=P).index, d.index)
    assert d.bayes_risk == pytest.approx(np.mean(1.0 - P.max(axis=1)), rel=1e-12)


def test_costly_miss_moves_the_decision():
    # classes (healthy, ill); options (send home, treat).
    # Missing an illness is 50x worse than a false alarm.
    P = np.array([[0.9, 0.1], [0.99, 0.01], [0.97, 0.03]])
    symmetric = bayes_decision(proba=P, options=("home", "treat"))
    assert list(symmetric.label) == ["home", "home", "home"]
    loss = np.array([[0.0, 50.0], [1.0, 0.0]])
    d = bayes_decision(proba=P, loss=loss, options=("home", "treat"))
    # by hand: R(home) = 50 P(ill), R(treat) = P(healthy)
    np.testing.assert_allclose(d.risk[:, 0], 50 * P[:, 1], rtol=1e-14)
    np.testing.assert_allclose(d.risk[:, 1], P[:, 0], rtol=1e-14)
    assert list(d.label) == [
        "treat",
        "home",
        "treat",
    ]  # R(home) = 5, 0.5, 1.5 vs R(treat) = 0.9, 0.99, 0.97
    assert (d.index != P.argmax(axis=1)).any()


def test_single_row_and_ties():
    d = bayes_decision(proba=[0.5, 0.5])
    assert d.index.tolist() == [0]  # ties go to the lowest index
    assert d.risk.shape == (1, 2)


@pytest.mark.parametrize(
    ("loss", "pattern"),
    [
        (
            np.ones((3, 3)) - np.eye(3),
            r"loss: expected a matrix of shape \(n_options, 2\).*received shape \(3, 3\)",
        ),
        ([0.0, 1.0], r"loss: expected a matrix of shape \(n_options, 2\).*received shape \(2,\)"),
        (
            [[0.0, 1.0], [-1.0, 0.0]],
            r"loss: expected finite non-negative entries, received -1.0 at row 1, column 0",
        ),
        (
            [[0.0, np.nan], [1.0, 0.0]],
            r"loss: expected finite non-negative entries, received nan at row 0, column 1",
        ),
    ],
)
def test_bad_loss_matrix(loss, pattern):
    with pytest.raises(ValueError, match=pattern):
        bayes_decision(proba=[[0.3, 0.7]], loss=loss)
    with pytest.raises(ValueError, match=pattern):
        validate_loss(loss, n_classes=2)


def test_bad_probabilities_and_options():
    with pytest.raises(
        ValueError, match=r"proba: expected each row to sum to 1, received a sum of 0.9 at row 1"
    ):
        bayes_decision(proba=[[0.5, 0.5], [0.4, 0.5]])
    with pytest.raises(
        ValueError,
        match=r"proba: expected probabilities in \[0, 1\], received -0.1 at row 0, column 0",
    ):
        bayes_decision(proba=[[-0.1, 1.1]])
    with pytest.raises(ValueError, match=r"options: expected 2 labels .*received 3"):
        bayes_decision(proba=[[0.5, 0.5]], options=("a", "b", "c"))
    with pytest.raises(ValueError, match=r"n_classes: expected an integer >= 2, received 1"):
        zero_one_loss(1)


def test_disease_test_posterior():
    r = bayes_rule(
        prior={"cancer": 0.008, "healthy": 0.992}, likelihoods={"cancer": 0.98, "healthy": 0.03}
    )
    # by hand, exactly: 0.98*0.008 / (0.98*0.008 + 0.03*0.992) = 0.00784 / 0.0376
    exact = (
        Fraction(98, 100)
        * Fraction(8, 1000)
        / (Fraction(98, 100) * Fraction(8, 1000) + Fraction(3, 100) * Fraction(992, 1000))
    )
    assert r["cancer"] == pytest.approx(float(exact), rel=1e-13)
    assert round(r["cancer"], 4) == 0.2085
    assert r["healthy"] == pytest.approx(1 - float(exact), rel=1e-13)
    np.testing.assert_allclose(r.joint, [0.00784, 0.02976], rtol=1e-13)
    assert r.evidence == pytest.approx(0.0376, rel=1e-13)
    # the same with plain sequences, and keys in another order
    r2 = bayes_rule(prior=[0.008, 0.992], likelihoods=[0.98, 0.03])
    np.testing.assert_allclose(r2.posterior, r.posterior, rtol=1e-15)
    r3 = bayes_rule(
        prior={"healthy": 0.992, "cancer": 0.008}, likelihoods={"cancer": 0.98, "healthy": 0.03}
    )
    assert r3["cancer"] == pytest.approx(r["cancer"], rel=1e-15)
    # negative control: confusing P(+|cancer) with P(cancer|+)
    assert r["cancer"] != pytest.approx(0.98, rel=1e-3)


def test_bayes_rule_errors():
    with pytest.raises(
        ValueError, match=r"prior: expected probabilities summing to 1, received a sum of 0.9"
    ):
        bayes_rule(prior=[0.5, 0.4], likelihoods=[0.1, 0.2])
    with pytest.raises(ValueError, match=r"likelihoods: expected 2 values .*received 3"):
        bayes_rule(prior=[0.5, 0.5], likelihoods=[0.1, 0.2, 0.3])
    with pytest.raises(
        ValueError,
        match=r"likelihoods: expected the hypotheses \['a', 'b'\], received \['a', 'c'\]",
    ):
        bayes_rule(prior={"a": 0.5, "b": 0.5}, likelihoods={"a": 0.1, "c": 0.2})
    with pytest.raises(
        ValueError,
        match=r"likelihoods: expected finite non-negative values, received -0.2 for hypothesis 1",
    ):
        bayes_rule(prior=[0.5, 0.5], likelihoods=[0.1, -0.2])
    with pytest.raises(ValueError, match=r"P\(D\) = 0"):
        bayes_rule(prior=[1.0, 0.0], likelihoods=[0.0, 0.7])
    # a zero-prior hypothesis stays at zero, no NaN
    r = bayes_rule(prior=[1.0, 0.0], likelihoods=[0.2, 0.7])
    np.testing.assert_array_equal(r.posterior, [1.0, 0.0])
