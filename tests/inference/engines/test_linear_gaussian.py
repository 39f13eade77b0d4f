"""The conjugate regression engines against independent derivations.

References: Bishop (2006) eq. 3.49-3.51 and 3.86 (known noise); Murphy (2007), "Conjugate
Bayesian analysis of the Gaussian distribution", sec. 9 (Normal-Inverse-Gamma).
"""

import itertools

import numpy as np
import pytest
from bayescheck.inference.engines.errors import NotIdentified
from bayescheck.inference.engines.linear_gaussian import (
    GaussianPosterior,
    NormalInverseGammaPosterior,
    RegressionStats,
    regression_stats,
)
from scipy import stats

RTOL = 1e-10


def make_data(n=60, d=3, seed=0, noise=0.8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    theta = rng.normal(size=d)
    return X, X @ theta + noise * rng.normal(size=n)


def sequential(prior, X, y, cuts):
    post = prior
    for lo, hi in itertools.pairwise([0, *cuts, len(y)]):
        post = post.update(regression_stats(X[lo:hi], y[lo:hi]))
    return post


def covariance_form_posterior(X, y, mu0, cov0, s2):
    """Independent derivation: batch update in covariance form (Bishop eq. 3.50-3.51)."""
    cov = np.linalg.inv(np.linalg.inv(cov0) + X.T @ X / s2)
    mean = cov @ (np.linalg.inv(cov0) @ mu0 + X.T @ y / s2)
    return mean, cov


def kalman_row_by_row(X, y, mu0, cov0, s2):
    """Another derivation: rank-one covariance updates (the Kalman filter), one row at a time."""
    mean, cov = mu0.copy(), cov0.copy()
    for x, t in zip(X, y, strict=True):
        gain = cov @ x / (x @ cov @ x + s2)
        mean = mean + gain * (t - x @ mean)
        cov = cov - np.outer(gain, x @ cov)
    return mean, cov


@pytest.fixture
def prior_setup():
    mu0 = np.array([0.5, -1.0, 0.0])
    A = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 3.0]])
    return mu0, A, 0.8 ** 2


def test_one_batch_equals_independent_derivation(prior_setup):
    mu0, cov0, s2 = prior_setup
    X, y = make_data()
    post = GaussianPosterior.from_prior(mu0, cov0, noise_var=s2).update(regression_stats(X, y))
    mean, cov = covariance_form_posterior(X, y, mu0, cov0, s2)
    np.testing.assert_allclose(post.mean, mean, rtol=RTOL)
    np.testing.assert_allclose(post.cov, cov, rtol=RTOL)


@pytest.mark.parametrize("cuts", [[7], [1, 2, 30, 31], [59], list(range(1, 60))])
def test_sequential_equals_one_batch(prior_setup, cuts):
    mu0, cov0, s2 = prior_setup
    X, y = make_data()
    prior = GaussianPosterior.from_prior(mu0, cov0, noise_var=s2)
    one = prior.update(regression_stats(X, y))
    seq = sequential(prior, X, y, cuts)
    np.testing.assert_allclose(seq.mean, one.mean, rtol=RTOL)
    np.testing.assert_allclose(seq.cov, one.cov, rtol=RTOL)
    assert seq.log_evidence == pytest.approx(one.log_evidence, rel=RTOL)


def test_row_by_row_equals_kalman_filter(prior_setup):
    mu0, cov0, s2 = prior_setup
    X, y = make_data()
    seq = sequential(GaussianPosterior.from_prior(mu0, cov0, noise_var=s2), X, y,
                     list(range(1, len(y))))
    mean, cov = kalman_row_by_row(X, y, mu0, cov0, s2)
    np.testing.assert_allclose(seq.mean, mean, rtol=1e-9)
    np.testing.assert_allclose(seq.cov, cov, rtol=1e-9)


def test_batch_order_does_not_matter(prior_setup):
    mu0, cov0, s2 = prior_setup
    X, y = make_data()
    parts = np.array_split(np.arange(len(y)), [5, 17, 40])
    prior = GaussianPosterior.from_prior(mu0, cov0, noise_var=s2)
    results = []
    for order in itertools.permutations(range(len(parts))):
        post = prior
        for i in order:
            post = post.update(regression_stats(X[parts[i]], y[parts[i]]))
        results.append(post)
    for post in results[1:]:
        np.testing.assert_allclose(post.mean, results[0].mean, rtol=RTOL)
        np.testing.assert_allclose(post.cov, results[0].cov, rtol=RTOL)


def test_stats_combine_by_addition():
    X, y = make_data()
    total = regression_stats(X[:20], y[:20]) + regression_stats(X[20:], y[20:])
    whole = regression_stats(X, y)
    assert total.n == whole.n
    np.testing.assert_allclose(total.xtx, whole.xtx, rtol=1e-12)
    assert RegressionStats.zero(3).n == 0


def test_log_evidence_equals_marginal_gaussian(prior_setup):
    mu0, cov0, s2 = prior_setup
    X, y = make_data(n=25)
    post = GaussianPosterior.from_prior(mu0, cov0, noise_var=s2).update(regression_stats(X, y))
    expected = stats.multivariate_normal(X @ mu0, s2 * np.eye(25) + X @ cov0 @ X.T).logpdf(y)
    assert post.log_evidence == pytest.approx(expected, rel=RTOL)
    wrong = GaussianPosterior.from_prior(mu0, 2 * cov0, noise_var=s2).update(
        regression_stats(X, y))
    assert abs(wrong.log_evidence - expected) > 0.1


def test_predictive_known_noise(prior_setup):
    mu0, cov0, s2 = prior_setup
    X, y = make_data()
    post = GaussianPosterior.from_prior(mu0, cov0, noise_var=s2).update(regression_stats(X, y))
    mean, cov = covariance_form_posterior(X, y, mu0, cov0, s2)
    Xnew = np.array([[1.0, 2.0, -1.0], [0.0, 0.5, 0.5]])
    pred = post.predictive(Xnew)
    np.testing.assert_allclose(pred.mean(), Xnew @ mean, rtol=RTOL)
    np.testing.assert_allclose(pred.var(), s2 + np.einsum("ij,jk,ik->i", Xnew, cov, Xnew),
                               rtol=RTOL)


def test_flat_prior_is_least_squares():
    X, y = make_data()
    s2 = 0.8 ** 2
    post = GaussianPosterior.flat(3, noise_var=s2).update(regression_stats(X, y))
    ls, *_ = np.linalg.lstsq(X, y, rcond=None)
    np.testing.assert_allclose(post.mean, ls, rtol=RTOL)
    np.testing.assert_allclose(post.cov, s2 * np.linalg.inv(X.T @ X), rtol=RTOL)
    assert post.log_evidence is None  # improper prior: no evidence


def test_flat_prior_first_batch_then_stream_equals_least_squares():
    """The source material's algorithm without its bug: batch 1 gives least squares, then
    every later batch updates it (nothing is thrown away)."""
    X, y = make_data(n=90)
    post = sequential(GaussianPosterior.flat(3, noise_var=1.0), X, y, [30, 60])
    ls, *_ = np.linalg.lstsq(X, y, rcond=None)
    np.testing.assert_allclose(post.mean, ls, rtol=RTOL)


def test_flat_prior_too_few_rows_is_not_identified():
    X, y = make_data(n=2)
    post = GaussianPosterior.flat(3, noise_var=1.0).update(regression_stats(X, y))
    assert not post.identified
    with pytest.raises(NotIdentified, match="do not yet determine all 3 coefficients"):
        post.mean  # noqa: B018


def test_flat_prior_collinear_columns_not_identified():
    X, y = make_data(n=20)
    X[:, 2] = 2 * X[:, 0]
    post = GaussianPosterior.flat(3, noise_var=1.0).update(regression_stats(X, y))
    with pytest.raises(NotIdentified):
        post.mean  # noqa: B018


def murphy_nig(X, y, m0, V0, a0, b0):
    """Murphy (2007) eq. 86-89 in covariance form."""
    V0inv = np.linalg.inv(V0)
    Vn = np.linalg.inv(V0inv + X.T @ X)
    mn = Vn @ (V0inv @ m0 + X.T @ y)
    an = a0 + len(y) / 2
    bn = b0 + 0.5 * (y @ y + m0 @ V0inv @ m0 - mn @ np.linalg.inv(Vn) @ mn)
    return mn, Vn, an, bn


@pytest.mark.parametrize("cuts", [[], [10, 11, 40]])
def test_nig_marginals_are_student_t(cuts):
    X, y = make_data(n=50)
    m0, V0, a0, b0 = np.array([0.0, 1.0, -1.0]), np.diag([4.0, 2.0, 1.0]), 2.0, 1.5
    post = sequential(NormalInverseGammaPosterior.from_prior(m0, V0, shape=a0, scale=b0),
                      X, y, cuts)
    mn, Vn, an, bn = murphy_nig(X, y, m0, V0, a0, b0)
    assert post.shape == pytest.approx(an, rel=RTOL)
    assert post.scale == pytest.approx(bn, rel=RTOL)
    for j, marginal in enumerate(post.marginals()):
        expected = stats.t(2 * an, mn[j], np.sqrt(bn / an * Vn[j, j]))
        for q in (0.05, 0.5, 0.95):
            assert marginal.ppf(q) == pytest.approx(expected.ppf(q), rel=RTOL)
        assert marginal.std() == pytest.approx(expected.std(), rel=RTOL)
    noise = post.noise_marginal()
    assert noise.mean() == pytest.approx(bn / (an - 1), rel=RTOL)


def test_nig_evidence_is_multivariate_t():
    X, y = make_data(n=20)
    m0, V0, a0, b0 = np.zeros(3), 3.0 * np.eye(3), 3.0, 2.0
    post = NormalInverseGammaPosterior.from_prior(m0, V0, shape=a0, scale=b0).update(
        regression_stats(X, y))
    # y ~ t_{2 a0}(X m0, b0 / a0 (I + X V0 X'))  (Murphy 2007, eq. 99)
    expected = stats.multivariate_t(X @ m0, b0 / a0 * (np.eye(20) + X @ V0 @ X.T),
                                    df=2 * a0).logpdf(y)
    assert post.log_evidence == pytest.approx(expected, rel=RTOL)


def test_nig_predictive():
    X, y = make_data(n=30)
    m0, V0, a0, b0 = np.zeros(3), np.eye(3), 2.0, 1.0
    post = NormalInverseGammaPosterior.from_prior(m0, V0, shape=a0, scale=b0).update(
        regression_stats(X, y))
    mn, Vn, an, bn = murphy_nig(X, y, m0, V0, a0, b0)
    x = np.array([[0.3, -0.2, 1.0]])
    pred = post.predictive(x)
    expected = stats.t(2 * an, x @ mn, np.sqrt(bn / an * (1 + x @ Vn @ x.T)).ravel())
    assert pred.ppf(0.9) == pytest.approx(expected.ppf(0.9), rel=RTOL)


def test_nig_flat_prior_gives_classical_result():
    """theta flat and independent of sigma2: integrating theta out leaves
    sigma2 | y ~ InvGamma(a0 + (n - d) / 2, b0 + RSS / 2), theta_j ~ t around least squares."""
    X, y = make_data(n=40)
    a0, b0 = 1.0, 0.5
    post = NormalInverseGammaPosterior.flat(3, shape=a0, scale=b0).update(regression_stats(X, y))
    ls, rss, *_ = np.linalg.lstsq(X, y, rcond=None)
    assert post.shape == pytest.approx(a0 + (40 - 3) / 2, rel=RTOL)
    assert post.scale == pytest.approx(b0 + rss[0] / 2, rel=RTOL)
    np.testing.assert_allclose(post.mean, ls, rtol=RTOL)
    assert post.log_evidence is None


def test_nig_flat_prior_too_few_rows():
    X, y = make_data(n=2)
    post = NormalInverseGammaPosterior.flat(3, shape=0.5, scale=1.0).update(
        regression_stats(X, y))
    assert not post.identified
    with pytest.raises(NotIdentified, match="flat prior"):
        post.noise_marginal()


def test_joint_block_stats_equal_separate_stats():
    from bayescheck.inference.engines.linear_gaussian import regression_stats_joint

    X, y = make_data()
    a, b = regression_stats(X, y), regression_stats_joint(np.column_stack([X, y]))
    assert a.n == b.n
    np.testing.assert_allclose(b.xtx, a.xtx, rtol=1e-12)
    np.testing.assert_allclose(b.xty, a.xty, rtol=1e-12)
    assert b.yty == pytest.approx(a.yty, rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_random_batchings_agree_to_1e12(seed, prior_setup):
    """Random cuts (batches of 1 row up to most of the data, merged sequentially or as a
    tree of statistics) give the same posterior to 1e-12 relative on well-conditioned data."""
    mu0, cov0, s2 = prior_setup
    X, y = make_data(n=200, seed=seed)
    rng = np.random.default_rng(100 + seed)
    cuts = np.sort(rng.choice(np.arange(1, 200), size=rng.integers(1, 30), replace=False))
    priors = [GaussianPosterior.from_prior(mu0, cov0, noise_var=s2),
              NormalInverseGammaPosterior.from_prior(mu0, cov0, shape=2.0, scale=1.5)]
    for prior in priors:
        whole = prior.update(regression_stats(X, y))
        streamed = sequential(prior, X, y, list(cuts))
        parts = [regression_stats(X[lo:hi], y[lo:hi])
                 for lo, hi in itertools.pairwise([0, *cuts, 200])]
        while len(parts) > 1:  # a pairwise tree reduction, as partitions would merge
            parts = [a + b for a, b in zip(parts[::2], parts[1::2], strict=False)] + \
                ([parts[-1]] if len(parts) % 2 else [])
        tree = prior.update(parts[0])
        for post in (streamed, tree):
            assert post.n == whole.n
            np.testing.assert_allclose(post.mean, whole.mean, rtol=1e-12)
            np.testing.assert_allclose(post.cov, whole.cov, rtol=1e-12)
            assert post.log_evidence == pytest.approx(whole.log_evidence, rel=1e-12)
            np.testing.assert_allclose(post.predictive(X[:5]).std(),
                                       whole.predictive(X[:5]).std(), rtol=1e-12)


def test_random_batchings_check_can_fail(prior_setup):
    """Negative control: dropping one row from one batch is seen at that tolerance."""
    mu0, cov0, s2 = prior_setup
    X, y = make_data(n=200)
    prior = GaussianPosterior.from_prior(mu0, cov0, noise_var=s2)
    whole = prior.update(regression_stats(X, y))
    short = prior.update(regression_stats(X[:100], y[:100])).update(
        regression_stats(X[101:], y[101:]))
    assert not np.allclose(short.mean, whole.mean, rtol=1e-12, atol=0)


def test_timestamp_scale_feature_is_identified():
    """A feature at 1e9 + noise beside an intercept: X'X would be numerically singular; the
    triangular root is not, and the mean matches least squares on the shifted feature t - 1e9
    (exact in floating point), mapped back."""
    rng = np.random.default_rng(3)
    t = 1e9 + rng.normal(size=100)
    X = np.column_stack([np.ones(100), t])
    y = 2.0 + 0.5 * (t - 1e9) + 0.1 * rng.normal(size=100)
    post = GaussianPosterior.flat(2, noise_var=0.01).update(regression_stats(X, y))
    a, b = np.linalg.lstsq(np.column_stack([np.ones(100), t - 1e9]), y, rcond=None)[0]
    # The data carry t to 1e-7 absolute (its float spacing): about 7 digits of the slope.
    np.testing.assert_allclose(post.mean, [a - 1e9 * b, b], rtol=1e-6)


@pytest.mark.parametrize("rows", [1024, 1025, 2048, 3001, 10_000])
def test_row_blocked_root_equals_one_factorisation(rows, monkeypatch):
    """The R of a tall block, factored in row blocks (dgeqrt, then dtpqrt per block), is the
    R of one dgeqrt of the whole block (unique with a non-negative diagonal) to 1e-13, and
    R'R = Z'Z; the last block may hold a single row."""
    from bayescheck.inference.engines import linear_gaussian as lg
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(rows)
    Z = np.asfortranarray(rng.normal(size=(rows, 51)) * rng.uniform(0.1, 10, size=51))
    with threadpool_limits(1, user_api="blas"):  # the blocked path needs BLAS on one thread
        blocked = lg.triangular_root(Z)
        short = lg.triangular_root(Z[1:])
        monkeypatch.setattr(lg, "ROW_BLOCK", 10 ** 9)
        whole = lg.triangular_root(Z)
    np.testing.assert_allclose(blocked, whole, rtol=0, atol=1e-13 * np.abs(whole).max())
    np.testing.assert_allclose(blocked.T @ blocked, Z.T @ Z, rtol=0,
                               atol=1e-12 * np.abs(Z.T @ Z).max())
    # Negative control: one row left out is seen at this tolerance.
    assert not np.allclose(short, whole, rtol=0, atol=1e-13 * np.abs(whole).max())


def test_tall_blocks_are_folded_in_on_one_blas_thread_and_the_setting_is_restored(monkeypatch):
    """A tall block is factored in row blocks on one BLAS thread whatever the caller's thread
    count (the small blocked calls would spin threads), the caller's count is restored, and
    the R equals one dgeqrt call over all the rows to 1e-13."""
    from bayescheck.inference.engines import linear_gaussian as lg
    from threadpoolctl import threadpool_info, threadpool_limits

    lg.load_lapack()  # scipy's BLAS loaded, so that the limits below cover it
    Z = np.asfortranarray(np.random.default_rng(1).normal(size=(5000, 20)))
    roots = {}
    for threads in (1, 2):
        with threadpool_limits(threads, user_api="blas"):
            if threads == 2 and lg._blas_on_one_thread():
                pytest.skip("BLAS cannot run on two threads here")
            roots[threads] = lg.triangular_root(Z)
            assert {lib["num_threads"] for lib in threadpool_info()
                    if lib["user_api"] == "blas"} == {threads}
    with monkeypatch.context() as m:
        m.setattr(lg, "ROW_BLOCK", 10 ** 9)  # one call
        whole = lg.triangular_root(Z)
    np.testing.assert_array_equal(roots[1], roots[2])  # the same blocked computation
    assert not np.array_equal(roots[1], whole)  # blocked: other roundings
    np.testing.assert_allclose(roots[1], whole, rtol=0, atol=1e-13 * np.abs(whole).max())
