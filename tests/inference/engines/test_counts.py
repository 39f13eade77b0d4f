"""Beta-Bernoulli and Dirichlet-categorical engines against independent derivations."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from bayescheck.inference.engines.counts import (
    BernoulliStats,
    BetaPrior,
    CategoricalStats,
    DirichletPrior,
    bernoulli_beta,
    bernoulli_beta_predictive,
    categorical_dirichlet,
    categorical_dirichlet_predictive,
    categorical_stats,
    categorical_stats_from_codes,
    combine,
    dirichlet_mode,
)
from scipy import stats

RTOL = 1e-12


def bernoulli_stats(y):
    """Successes and trials of 0/1 outcomes (validated 0/1 by models, where data are read)."""
    y = np.asarray(y)
    return BernoulliStats(k=int(np.count_nonzero(y)), n=int(y.size))


def _beta_post(y, a, b):
    return bernoulli_beta(stats=bernoulli_stats(y), prior=BetaPrior(a=a, b=b))


# --------------------------------------------------------------------------- Beta-Bernoulli


def test_beta_posterior_parameters_by_counting():
    y = [1, 0, 1, 1, 0, 1, 1]
    post = _beta_post(y, 2.0, 3.0)
    k = sum(1 for v in y if v == 1)
    assert (post.a, post.b) == (2.0 + k, 3.0 + len(y) - k) == (7.0, 5.0)
    # the frozen scipy distribution is the same Beta
    d = post.dist()
    assert d.mean() == pytest.approx(7 / 12, rel=RTOL)
    assert d.var() == pytest.approx(7 * 5 / (12**2 * 13), rel=RTOL)
    assert post.sd == pytest.approx(math.sqrt(7 * 5 / (12**2 * 13)), rel=RTOL)


def test_beta_posterior_density_is_prior_times_likelihood_normalised():
    # Bayes' rule on a grid: prior pdf * p^k (1-p)^(n-k), normalised by quadrature.
    from scipy import integrate

    y = np.array([1, 1, 0, 1, 0, 0, 0, 1, 1, 1])
    a, b = 1.5, 2.5
    k, n = int(y.sum()), y.size
    unnorm = lambda p: stats.beta(a, b).pdf(p) * p**k * (1 - p) ** (n - k)  # noqa: E731
    z, _ = integrate.quad(unnorm, 0, 1, epsabs=1e-14, epsrel=1e-12)
    post = _beta_post(y, a, b)
    for p in (0.05, 0.3, 0.5, 0.77, 0.99):
        assert post.dist().pdf(p) == pytest.approx(unnorm(p) / z, rel=1e-9)
    # and log evidence is log z
    assert post.log_marginal_likelihood() == pytest.approx(math.log(z), rel=1e-9)


def test_streaming_uneven_batches_equals_one_batch_bernoulli():
    rng = np.random.default_rng(3)
    y = rng.random(1001) < 0.3
    cuts = [0, 1, 4, 4, 250, 999, 1001]  # includes an empty batch
    batches = [y[i:j] for i, j in zip(cuts[:-1], cuts[1:], strict=True)]
    prior = BetaPrior(a=0.5, b=0.5)
    one = bernoulli_beta(stats=bernoulli_stats(y), prior=prior)
    # additive combine of per-batch statistics
    summed = bernoulli_beta(stats=combine(bernoulli_stats(b) for b in batches), prior=prior)
    assert (summed.a, summed.b) == (one.a, one.b)
    # sequential: posterior of batch i is the prior of batch i + 1; evidences add up
    p, log_ev = prior, 0.0
    for b in batches:
        post = bernoulli_beta(stats=bernoulli_stats(b), prior=p)
        log_ev += post.log_marginal_likelihood()
        p = post.as_prior()
    assert (p.a, p.b) == (one.a, one.b)
    assert log_ev == pytest.approx(one.log_marginal_likelihood(), rel=1e-12)


def test_log_marginal_likelihood_is_product_of_sequential_predictives():
    # p(y_1..y_n) = prod_i p(y_i | y_<i), each a Beta predictive (a + k_i) / (a + b + i),
    # in exact fractions.
    y = [1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1]
    a, b = Fraction(3, 2), Fraction(7, 4)
    prob, k = Fraction(1), 0
    for i, v in enumerate(y):
        p1 = (a + k) / (a + b + i)
        prob *= p1 if v == 1 else 1 - p1
        k += v
    post = _beta_post(y, float(a), float(b))
    assert post.log_marginal_likelihood() == pytest.approx(math.log(prob), rel=1e-12)
    # and it is the Beta-binomial pmf without the binomial coefficient
    bb = stats.betabinom(len(y), float(a), float(b)).logpmf(sum(y)) - math.log(
        math.comb(len(y), sum(y))
    )
    assert post.log_marginal_likelihood() == pytest.approx(bb, rel=1e-12)


def test_mle_map_predictive():
    post = _beta_post([1, 1, 1, 0], 2.0, 2.0)
    assert post.mle() == 3 / 4
    assert post.map() == pytest.approx((2 + 3 - 1) / (2 + 2 + 4 - 2), rel=RTOL)
    assert post.predictive() == pytest.approx(5 / 8, rel=RTOL)
    assert bernoulli_beta_predictive(posterior=post).pmf(1) == pytest.approx(5 / 8, rel=RTOL)
    # flat prior: MAP equals the MLE
    flat = _beta_post([1, 1, 1, 0, 0], 1.0, 1.0)
    assert flat.map() == pytest.approx(flat.mle(), rel=RTOL)
    # the MAP is where the scipy density peaks
    grid = np.linspace(1e-6, 1 - 1e-6, 200001)
    assert grid[np.argmax(post.dist().pdf(grid))] == pytest.approx(post.map(), abs=1e-5)


def test_mle_undefined_without_data():
    post = bernoulli_beta(stats=BernoulliStats(k=0, n=0), prior=BetaPrior(a=2, b=3))
    with pytest.raises(ValueError, match=r"n: .*needs n >= 1.*received n = 0"):
        post.mle()
    assert (post.a, post.b) == (2.0, 3.0)
    assert post.log_marginal_likelihood() == 0.0


@pytest.mark.parametrize(
    ("a", "b", "mode"),
    [
        (1.0, 3.0, 0.0),
        (0.5, 3.0, 0.0),
        (0.5, 1.0, 0.0),
        (3.0, 1.0, 1.0),
        (3.0, 0.7, 1.0),
        (1.0, 0.4, 1.0),
    ],
)
def test_map_boundary_modes(a, b, mode):
    post = bernoulli_beta(stats=BernoulliStats(k=0, n=0), prior=BetaPrior(a=a, b=b))
    assert post.map() == mode


@pytest.mark.parametrize(("a", "b"), [(1.0, 1.0), (0.5, 0.5), (0.9, 0.2)])
def test_map_without_unique_mode_is_an_error(a, b):
    post = bernoulli_beta(stats=BernoulliStats(k=0, n=0), prior=BetaPrior(a=a, b=b))
    with pytest.raises(ValueError, match=r"a, b: .*received \["):
        post.map()


def test_all_zeros_all_ones_jeffreys():
    zeros = _beta_post(np.zeros(20, dtype=int), 0.5, 0.5)
    ones = _beta_post(np.ones(20, dtype=int), 0.5, 0.5)
    assert (zeros.a, zeros.b, zeros.map(), zeros.mle()) == (0.5, 20.5, 0.0, 0.0)
    assert (ones.a, ones.b, ones.map(), ones.mle()) == (20.5, 0.5, 1.0, 1.0)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"a": 0, "b": 1}, r"a: expected a positive finite number, received 0"),
        ({"a": 1, "b": -2}, r"b: expected a positive finite number, received -2"),
        ({"a": 1, "b": float("nan")}, r"b: expected a positive finite number, received nan"),
        ({"a": "x", "b": 1}, r"a: expected a positive finite number, received 'x'"),
    ],
)
def test_bad_beta_prior(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        BetaPrior(**kwargs)


def test_bad_bernoulli_stats():
    with pytest.raises(ValueError, match=r"k: expected at most n = 3 successes, received k = 4"):
        BernoulliStats(k=4, n=3)
    with pytest.raises(ValueError, match=r"n: expected a non-negative integer count, received -1"):
        BernoulliStats(k=0, n=-1)
    with pytest.raises(ValueError, match=r"stats_seq: expected at least one batch"):
        combine([])


def test_wrong_count_fails_the_comparison():
    # negative control: one success too many must not match the independent derivation
    y = [1, 0, 1, 1, 0]
    right = _beta_post(y, 2.0, 2.0)
    wrong = bernoulli_beta(stats=BernoulliStats(k=4, n=5), prior=BetaPrior(a=2.0, b=2.0))
    assert (right.a, right.b) == (5.0, 4.0)
    assert (wrong.a, wrong.b) != (5.0, 4.0)
    assert wrong.dist().mean() != pytest.approx(right.dist().mean(), rel=1e-6)
    assert wrong.log_marginal_likelihood() != pytest.approx(
        right.log_marginal_likelihood(), rel=1e-6
    )


# --------------------------------------------------------------------------- Dirichlet-categorical

CATS = ("red", "green", "blue", "never")


def test_dirichlet_posterior_and_beta_marginals():
    y = ["red", "blue", "red", "green", "red", "blue"]
    alpha0 = np.array([0.5, 1.0, 2.0, 3.0])
    post = categorical_dirichlet(
        stats=categorical_stats(y, categories=CATS),
        prior=DirichletPrior(alpha=alpha0, categories=CATS),
    )
    counts = np.array([y.count(c) for c in CATS])
    np.testing.assert_array_equal(post.alpha, alpha0 + counts)
    np.testing.assert_array_equal(counts, [3, 1, 2, 0])
    a0 = alpha0.sum() + len(y)
    for k, c in enumerate(CATS):
        m = post.marginal(c)
        assert m.args == (alpha0[k] + counts[k], a0 - alpha0[k] - counts[k])
        assert m.mean() == pytest.approx(post.mean[k], rel=RTOL)
        assert m.std() == pytest.approx(post.sd[k], rel=RTOL)
        # marginal of the scipy Dirichlet agrees (mean and variance)
        assert post.dist().mean()[k] == pytest.approx(m.mean(), rel=RTOL)
        assert post.dist().var()[k] == pytest.approx(m.var(), rel=RTOL)
    # an unseen category keeps its prior mass
    assert post.mean[3] == pytest.approx(3.0 / a0, rel=RTOL)


def test_laplace_is_dirichlet_one_posterior_mean():
    # (count + 1) / (n + N) computed by hand, with exact fractions
    y = ["a", "b", "a", "a", "c", "a", "b"]
    cats = ("a", "b", "c", "d", "e")
    laplace = [Fraction(y.count(c) + 1, len(y) + len(cats)) for c in cats]
    post = categorical_dirichlet(
        stats=categorical_stats(y, categories=cats),
        prior=DirichletPrior.symmetric(1.0, categories=cats),
    )
    np.testing.assert_allclose(post.mean, [float(f) for f in laplace], rtol=RTOL, atol=0)
    assert post.predictive().sum() == pytest.approx(1.0, rel=RTOL)
    pmf = categorical_dirichlet_predictive(posterior=post)
    assert pmf.pmf([0, 0, 0, 1, 0]) == pytest.approx(float(laplace[3]), rel=1e-12)
    # negative control: the unsmoothed frequency is not the Laplace estimate
    assert not np.allclose(post.mle(), post.mean)


def test_dirichlet_log_marginal_likelihood_is_product_of_sequential_predictives():
    y = [2, 0, 0, 1, 2, 2, 0, 1, 1, 1, 3, 0]
    alpha = [Fraction(1, 2), Fraction(3), Fraction(1), Fraction(5, 4)]
    counts = [0, 0, 0, 0]
    prob = Fraction(1)
    for i, v in enumerate(y):
        prob *= (alpha[v] + counts[v]) / (sum(alpha) + i)
        counts[v] += 1
    post = categorical_dirichlet(
        stats=CategoricalStats(counts=categorical_stats_from_codes(y, n_categories=4)),
        prior=DirichletPrior(alpha=[float(a) for a in alpha]),
    )
    assert post.log_marginal_likelihood() == pytest.approx(math.log(prob), rel=1e-12)
    # the two-category case is the Beta-Bernoulli evidence
    yb = [v == 2 for v in y]
    beta = _beta_post(yb, 2.0, 3.5)
    dir2 = categorical_dirichlet(
        stats=categorical_stats(yb, categories=[True, False]),
        prior=DirichletPrior(alpha=[2.0, 3.5], categories=[True, False]),
    )
    assert dir2.log_marginal_likelihood() == pytest.approx(
        beta.log_marginal_likelihood(), rel=1e-12
    )
    assert dir2.marginal(True).args == beta.dist().args


def test_streaming_uneven_batches_equals_one_batch_dirichlet():
    rng = np.random.default_rng(7)
    y = rng.choice(np.array(CATS[:3]), size=777, p=[0.5, 0.3, 0.2])
    cuts = [0, 3, 3, 100, 101, 777]
    batches = [y[i:j] for i, j in zip(cuts[:-1], cuts[1:], strict=True)]
    prior = DirichletPrior(alpha=[1.0, 2.0, 0.5, 0.5], categories=CATS)
    one = categorical_dirichlet(stats=categorical_stats(y, categories=CATS), prior=prior)
    summed = categorical_dirichlet(
        stats=combine(categorical_stats(b, categories=CATS) for b in batches), prior=prior
    )
    np.testing.assert_array_equal(summed.alpha, one.alpha)
    p, log_ev = prior, 0.0
    for b in batches:
        post = categorical_dirichlet(stats=categorical_stats(b, categories=CATS), prior=p)
        log_ev += post.log_marginal_likelihood()
        p = post.as_prior()
    np.testing.assert_array_equal(p.alpha, one.alpha)
    assert log_ev == pytest.approx(one.log_marginal_likelihood(), rel=1e-12)


def test_dirichlet_mle_map():
    post = categorical_dirichlet(
        stats=CategoricalStats(counts=[4, 0, 2]), prior=DirichletPrior(alpha=[2.0, 1.0, 3.0])
    )
    np.testing.assert_allclose(post.mle(), [4 / 6, 0, 2 / 6], rtol=RTOL)
    # interior mode (alpha_k - 1) / (alpha_0 - N): alpha = (6, 1, 5) -> (5, 0, 4) / 9
    np.testing.assert_allclose(post.map(), [5 / 9, 0, 4 / 9], rtol=RTOL)
    empty = categorical_dirichlet(
        stats=CategoricalStats(counts=[0, 0, 0]), prior=DirichletPrior(alpha=[2.0, 1, 1])
    )
    with pytest.raises(ValueError, match=r"n: .*received n = 0"):
        empty.mle()


@pytest.mark.parametrize(
    ("a", "b"), [(1.0, 3.0), (0.5, 3.0), (0.5, 1.0), (3.0, 0.7), (2.5, 4.0), (1.0, 1.0), (0.3, 0.3)]
)
def test_two_category_dirichlet_map_equals_beta_map(a, b):
    beta = bernoulli_beta(stats=BernoulliStats(k=0, n=0), prior=BetaPrior(a=a, b=b))
    try:
        expected = beta.map()
    except ValueError:
        with pytest.raises(ValueError):
            dirichlet_mode([a, b])
        return
    assert dirichlet_mode([a, b])[0] == pytest.approx(expected, rel=RTOL)


def test_dirichlet_mode_boundaries():
    np.testing.assert_array_equal(dirichlet_mode([0.5, 0.2, 3.0]), [0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"alpha: the distribution is uniform"):
        dirichlet_mode([1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"alpha: expected parameters with a unique mode"):
        dirichlet_mode([0.5, 2.0, 3.0])


def test_bad_categorical_input():
    with pytest.raises(
        ValueError,
        match=r"y: expected one of the categories \['a', 'b'\], received 'z' at position 2",
    ):
        categorical_stats(["a", "b", "z"], categories=["a", "b"])
    with pytest.raises(
        ValueError, match=r"categories: expected distinct labels, received 'a' twice"
    ):
        categorical_stats(["a"], categories=["a", "b", "a"])
    with pytest.raises(
        ValueError, match=r"alpha: expected positive finite concentrations, received \[1.0, 0.0\]"
    ):
        DirichletPrior(alpha=[1.0, 0.0])
    with pytest.raises(
        ValueError, match=r"codes: expected codes in 0..2, received 3 at position 1"
    ):
        categorical_stats_from_codes([0, 3], n_categories=3)
    with pytest.raises(ValueError, match=r"stats: expected 3 counts .*received 2"):
        categorical_dirichlet(
            stats=CategoricalStats(counts=[1, 2]), prior=DirichletPrior(alpha=[1, 1, 1])
        )
    a = categorical_stats(["a"], categories=["a", "b"])
    b = categorical_stats(["a"], categories=["b", "a"])
    with pytest.raises(ValueError, match=r"categories: expected the same category order"):
        a + b


def test_growing_label_set_equals_counting_against_the_final_categories():
    batches = [["b", "b", "c"], ["c", "a", "b"], [], ["d", "a"]]
    stats = CategoricalStats(counts=np.zeros(0, dtype=np.int64))
    assert stats.n == 0 and stats.categories == ()
    for batch in batches:
        stats = stats.add_labels(np.asarray(batch, dtype=str))
    # new labels are appended batch by batch, sorted within a batch
    assert stats.categories == ("b", "c", "a", "d")
    flat = [v for b in batches for v in b]
    whole = categorical_stats(flat, categories=("a", "b", "c", "d"))
    np.testing.assert_array_equal(stats.counts_for(whole.categories), whole.counts)
    np.testing.assert_array_equal(stats.counts_for(("d", "x")), [1, 0])
    # a declared set that already holds every label is kept as it is
    declared = CategoricalStats(counts=np.zeros(4, dtype=np.int64), categories=("a", "b", "c", "d"))
    for batch in batches:
        declared = declared.add_labels(np.asarray(batch, dtype=str))
    assert declared == whole
