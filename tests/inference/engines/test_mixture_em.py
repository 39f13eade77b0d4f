"""Tests of the Gaussian-mixture EM engine (inference/engines/mixture_em.py).

Every expected value is derived independently in the test: the worked step from the E and M
formulas written out, the log-likelihood and log posterior from scipy.stats densities, the ML
trajectory from scikit-learn's GaussianMixture started at the same point.
"""

import warnings

import numpy as np
import pytest
from bayescheck.inference.engines.mixture_em import (
    NEAR_SINGULAR_RATIO,
    EMState,
    MixturePrior,
    batch_statistics,
    combine_statistics,
    fit_em,
    kmeans,
    log_likelihood,
    log_posterior,
    m_step,
    match_components,
    mixture_covariance,
    near_singular_components,
    responsibilities,
    seed_centres,
)
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats
from scipy.linalg import eigh as sla_eigh
from scipy.linalg import solve_triangular
from scipy.special import logsumexp

EPS = np.finfo(np.float64).eps
KINDS = ("full", "diag", "spherical", "tied")


def rounding_allowance(total: float) -> float:
    """Rounding error allowed on a sum of per-row log densities that totals ``total``.

    Each row's log density takes a few dozen float operations (each off by at most eps
    relative) and the rows are summed pairwise; 64 eps * |total| bounds the result.
    """
    return 64 * EPS * abs(total)


def blobs(seed=0, n=(120, 80, 100), d=2):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [4.0, 1.0], [1.0, 5.0], [6.0, 6.0]])[: len(n), :d]
    scales = [
        np.array([[1.0, 0.0], [0.6, 0.8]]),
        np.array([[0.5, 0.0], [-0.3, 0.9]]),
        np.array([[1.2, 0.0], [0.2, 0.4]]),
        np.eye(2),
    ][: len(n)]
    parts = [
        c + rng.standard_normal((m, 2))[:, :d] @ s[:d, :d].T
        for c, s, m in zip(centres, scales, n, strict=True)
    ]
    return np.concatenate(parts)


def natural(cov_full, kind):
    """EMResult's (K, D, D) covariances in scikit-learn's shape for ``kind``."""
    if kind == "full":
        return cov_full
    if kind == "tied":
        return cov_full[0]
    if kind == "diag":
        return np.diagonal(cov_full, axis1=1, axis2=2)
    return cov_full[:, 0, 0]


def precisions(cov, kind):
    """Inverse of natural-shape covariances via Cholesky factors (scikit-learn's input)."""
    if kind in ("diag", "spherical"):
        return 1.0 / cov
    mats = cov[None] if kind == "tied" else cov
    out = []
    for c in mats:
        linv = solve_triangular(np.linalg.cholesky(c), np.eye(c.shape[0]), lower=True)
        out.append(linv.T @ linv)
    out = np.stack(out)
    return out[0] if kind == "tied" else out


def mixture_loglik(X, w, mu, cov):
    """Independent log-likelihood from scipy.stats: sum_i log sum_k w_k N(x_i | mu_k, S_k)."""
    comp = np.stack(
        [np.log(w[k]) + stats.multivariate_normal(mu[k], cov[k]).logpdf(X) for k in range(len(w))]
    )
    return float(logsumexp(comp, axis=0).sum())


# ----------------------------------------------------------------------------------------
# The worked step of the source material
# ----------------------------------------------------------------------------------------


def test_worked_step_matches_e_and_m_formulas():
    data = np.array([0.0, 3.0, 7.0, 10.0])
    sd, mu = 2.0, np.array([2.0, 8.0])
    # E step, equal weights and a shared sd: gamma_i1 = N(x|mu1) / (N(x|mu1) + N(x|mu2)), the
    # normal constants cancel, leaving exp(-(x - mu_k)^2 / (2 sd^2)).
    num = np.exp(-((data[:, None] - mu[None, :]) ** 2) / (2 * sd**2))
    gamma = num / num.sum(axis=1, keepdims=True)
    # M step: mu_k = sum_i gamma_ik x_i / sum_i gamma_ik.
    expected = (gamma * data[:, None]).sum(axis=0) / gamma.sum(axis=0)

    res = fit_em(
        data,
        n_components=2,
        init_means=[2.0, 8.0],
        known_sd=sd,
        equal_weights=True,
        max_iter=1,
        tol=0.0,
    )
    assert res.n_iter == 1
    # Same formulas in another order (log space): a few ulps of the means.
    assert_allclose(res.means[:, 0], expected, rtol=8 * EPS)
    assert_allclose(res.means[:, 0], [1.60, 8.40], atol=0.005)  # the text's "about"
    assert_array_equal(res.weights, [0.5, 0.5])
    assert_allclose(res.covariances[:, 0, 0], [sd**2, sd**2], rtol=0)
    # The data are symmetric about 5, so the two means are too.
    assert res.means[0, 0] + res.means[1, 0] == pytest.approx(10.0, rel=4 * EPS)


def test_worked_step_hard_is_kmeans():
    data = np.array([0.0, 3.0, 7.0, 10.0])
    res = fit_em(
        data,
        n_components=2,
        init_means=[2.0, 8.0],
        known_sd=2.0,
        equal_weights=True,
        max_iter=1,
        tol=0.0,
        hard=True,
    )
    # Nearest mean: {0, 3} -> 2 and {7, 10} -> 8; the new means are the cluster averages.
    # Up to the engine's 10-eps guard on the counts and the shift by the old means: ulps.
    assert_allclose(res.means[:, 0], [1.5, 8.5], rtol=4 * EPS)


def test_kmeans_lloyd_iterations():
    X = blobs(3)
    init = X[[0, 130, 250]]
    res = fit_em(
        X,
        n_components=3,
        init_means=init,
        known_sd=1.0,
        equal_weights=True,
        hard=True,
        max_iter=4,
        tol=0.0,
    )
    centres = init.copy()
    for _ in range(4):  # Lloyd's algorithm written out
        lab = np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
        centres = np.stack([X[lab == k].mean(axis=0) for k in range(3)])
    assert_allclose(res.means, centres, rtol=1e-13)


def test_farthest_point_seeds():
    X = blobs(5)
    seeds = seed_centres(X, 3)
    # the row farthest from the data mean, then each time the row farthest from those chosen
    chosen = [int(np.argmax(((X - X.mean(axis=0)) ** 2).sum(axis=1)))]
    for _ in range(2):
        gaps = np.min([((X - X[i]) ** 2).sum(axis=1) for i in chosen], axis=0)
        chosen.append(int(np.argmax(gaps)))
    assert_array_equal(seeds, X[chosen])


def test_kmeans_plusplus_seeds_follow_the_squared_distances():
    # the second seed lands on each row with probability proportional to its squared distance
    # from the first: over many generators the two halves of the data are hit 1:100
    X = np.array([[0.0], [1.0], [10.0]])
    seconds = [seed_centres(X, 2, np.random.default_rng(s)) for s in range(400)]
    firsts_at_0 = [c for c in seconds if c[0, 0] == 0.0]
    at_10 = np.mean([c[1, 0] == 10.0 for c in firsts_at_0])
    assert at_10 == pytest.approx(100 / 101, abs=0.05)
    assert all(c[1, 0] != c[0, 0] for c in seconds)  # a chosen row has weight 0


def test_kmeans_is_a_fixed_point_of_lloyd_sorted_by_first_coordinate():
    X = blobs(6)
    centres, labels = kmeans(X, 3)
    assert_array_equal(labels, np.argmin(((X[:, None] - centres[None]) ** 2).sum(-1), axis=1))
    assert_allclose(centres, [X[labels == k].mean(axis=0) for k in range(3)], rtol=1e-12)
    assert np.all(np.diff(centres[:, 0]) > 0)
    again = kmeans(X.copy(), 3)  # deterministic
    assert_array_equal(again[0], centres)


# ----------------------------------------------------------------------------------------
# Monotone objective
# ----------------------------------------------------------------------------------------


def proper_prior(kind, d=2, k=3):
    common = dict(concentration=np.array([2.0, 1.5, 3.0])[:k], mean=np.full(d, 2.0), kappa=0.5)
    if kind in ("full", "tied"):
        return MixturePrior(**common, iw_dof=d + 2.0, iw_scale=0.5 * np.eye(d) + 0.1)
    if kind == "diag":
        return MixturePrior(**common, ig_shape=2.0, ig_scale=np.array([0.5, 0.8])[:d])
    return MixturePrior(**common, ig_shape=2.0, ig_scale=0.7)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("map_fit", [False, True], ids=["ml", "map"])
def test_objective_never_decreases(kind, map_fit):
    X = blobs(1)
    res = fit_em(
        X,
        n_components=3,
        covariance=kind,
        max_iter=200,
        tol=0.0,
        seed=5,
        prior=proper_prior(kind) if map_fit else None,
    )
    steps = np.diff(res.history)
    assert steps.min() >= -rounding_allowance(res.objective)
    assert res.history[-1] > res.history[0]
    assert res.objective == res.history[-1]
    if not map_fit:
        assert res.objective == res.log_likelihood


def test_hard_objective_never_decreases():
    X = blobs(2)
    res = fit_em(X, n_components=3, hard=True, max_iter=50, tol=0.0, seed=1)
    assert np.diff(res.history).min() >= -rounding_allowance(res.objective)


# ----------------------------------------------------------------------------------------
# Same trajectory as scikit-learn
# ----------------------------------------------------------------------------------------


def sklearn_start(X, kind, k=3):
    means = X[[5, 150, 260]][:k]
    weights = np.array([0.3, 0.3, 0.4])[:k]
    d = X.shape[1]
    full = np.stack([np.eye(d) * (1.0 + 0.5 * j) + 0.2 * (1 - np.eye(d)) for j in range(k)])
    cov = {
        "full": full,
        "tied": full[0],
        "diag": np.diagonal(full, axis1=1, axis2=2),
        "spherical": full[:, 0, 0],
    }[kind]
    return weights, means, cov


@pytest.mark.parametrize("kind", KINDS)
def test_same_trajectory_as_sklearn(kind):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture
    from threadpoolctl import threadpool_limits

    X = blobs(4)
    weights, means, cov = sklearn_start(X, kind)
    iters, reg = 40, 1e-6
    gm = GaussianMixture(
        3,
        covariance_type=kind,
        max_iter=iters,
        tol=0.0,
        reg_covar=reg,
        weights_init=weights,
        means_init=means,
        precisions_init=precisions(cov, kind),
    )
    with warnings.catch_warnings(), threadpool_limits(1):  # tiny data: BLAS threads only slow
        warnings.simplefilter("ignore", ConvergenceWarning)
        gm.fit(X)
    res = fit_em(
        X,
        n_components=3,
        covariance=kind,
        max_iter=iters,
        tol=0.0,
        reg_covar=reg,
        init_means=means,
        init_weights=weights,
        init_covariances=cov,
    )
    assert res.n_iter == gm.n_iter_ == iters
    # The same arithmetic in a different order; EM contracts towards its fixed point, so the
    # rounding differences (~1e-16 per step) do not grow beyond a few hundred ulps.
    tol = 1e-12
    assert_allclose(res.weights, gm.weights_, rtol=tol)
    assert_allclose(res.means, gm.means_, rtol=tol, atol=tol * np.abs(X).max())
    assert_allclose(
        natural(res.covariances, kind),
        gm.covariances_,
        rtol=tol,
        atol=tol * np.abs(gm.covariances_).max(),
    )
    assert res.log_likelihood == pytest.approx(gm.score(X) * len(X), rel=tol)


def test_converges_to_sklearn_fixed_point():
    from sklearn.mixture import GaussianMixture
    from threadpoolctl import threadpool_limits

    X = blobs(4)
    weights, means, cov = sklearn_start(X, "full")
    gm = GaussianMixture(
        3,
        covariance_type="full",
        max_iter=5000,
        tol=1e-13,
        reg_covar=1e-6,
        weights_init=weights,
        means_init=means,
        precisions_init=precisions(cov, "full"),
    )
    with threadpool_limits(1):
        gm.fit(X)
    res = fit_em(
        X,
        n_components=3,
        max_iter=5000,
        tol=1e-13,
        init_means=means,
        init_weights=weights,
        init_covariances=cov,
    )
    assert res.converged and gm.converged_
    # Both stop once the mean log-likelihood moves by < 1e-13 per iteration: the two
    # log-likelihoods then differ by at most about tol * n / (1 - EM's rate); 1e-9 relative.
    assert res.log_likelihood == pytest.approx(gm.score(X) * len(X), rel=1e-9)


# ----------------------------------------------------------------------------------------
# Restarts, flat prior, batches
# ----------------------------------------------------------------------------------------


def test_restarts_never_worse_than_one_start():
    # Four clusters fitted with three components: several local optima.
    X = blobs(6, n=(60, 60, 60, 60))
    for seed in range(4):
        one = fit_em(X, n_components=3, n_init=1, seed=seed, max_iter=300)
        many = fit_em(X, n_components=3, n_init=6, seed=seed, max_iter=300)
        # The first start of ``many`` draws from the generator exactly as ``one`` does.
        assert many.restart_objectives[0] == one.objective
        assert many.objective == many.restart_objectives.max() >= one.objective
        assert many.log_likelihood == many.restart_log_likelihoods[many.best_restart]


@pytest.mark.parametrize("kind", KINDS)
def test_flat_prior_map_is_ml(kind):
    X = blobs(7)
    ml = fit_em(X, n_components=3, covariance=kind, seed=2, max_iter=60, tol=0.0)
    # Dirichlet(1), kappa0 = 0 and no covariance prior: the log prior is constant, and the MAP
    # M step reduces to the ML one term by term (denominators nu0 + D + 1 + N = N exactly).
    flat = fit_em(
        X,
        n_components=3,
        covariance=kind,
        seed=2,
        max_iter=60,
        tol=0.0,
        prior=MixturePrior(),
        reg_covar=1e-6,
    )
    assert_array_equal(flat.means, ml.means)
    assert_array_equal(flat.covariances, ml.covariances)
    assert_array_equal(flat.history, ml.history)


def test_batch_statistics_add_up():
    X = blobs(8)
    state = EMState(
        np.array([0.2, 0.5, 0.3]),
        X[[0, 100, 200]],
        np.linalg.cholesky(np.stack([np.eye(2) * s for s in (1.0, 2.0, 0.5)])),
    )
    whole = batch_statistics(X, state, covariance="full")
    cuts = [0, 7, 150, 151, len(X)]
    parts = [
        batch_statistics(X[a:b], state, covariance="full")
        for a, b in zip(cuts[:-1], cuts[1:], strict=True)
    ]
    total = parts[0]
    for p in parts[1:]:
        total = combine_statistics(total, p)
    assert total.n == whole.n
    for a, b in zip(total[1:], whole[1:], strict=True):
        assert_allclose(a, b, rtol=1e-13, atol=1e-13 * np.max(np.abs(b)))
    # The M step from combined statistics is the M step of the whole.
    assert_allclose(m_step(total, state).chol, m_step(whole, state).chol, rtol=1e-13)
    # And the fit does not depend on the batch size beyond rounding.
    a = fit_em(X, n_components=3, seed=0, max_iter=30, tol=0.0, batch_size=13)
    b = fit_em(X, n_components=3, seed=0, max_iter=30, tol=0.0)
    assert_allclose(a.means, b.means, rtol=1e-11)


def test_result_does_not_depend_on_threads():
    X = blobs(8)
    a = fit_em(X, n_components=3, seed=0, max_iter=25, tol=0.0, batch_size=16, n_threads=1)
    b = fit_em(X, n_components=3, seed=0, max_iter=25, tol=0.0, batch_size=16, n_threads=3)
    # Same batches, same order of additions: bit for bit.
    assert_array_equal(a.means, b.means)
    assert_array_equal(a.history, b.history)


# ----------------------------------------------------------------------------------------
# Against independent densities; an estimate moved off the optimum is worse
# ----------------------------------------------------------------------------------------


def test_log_likelihood_and_responsibilities_against_scipy():
    X = blobs(9)
    res = fit_em(X, n_components=3, seed=0, max_iter=20)
    ref = mixture_loglik(X, res.weights, res.means, res.covariances)
    assert res.log_likelihood == pytest.approx(ref, rel=1e-12)
    assert log_likelihood(X, res.weights, res.means, res.covariances) == pytest.approx(
        ref, rel=1e-12
    )
    comp = np.stack(
        [
            np.log(res.weights[k])
            + stats.multivariate_normal(res.means[k], res.covariances[k]).logpdf(X)
            for k in range(3)
        ],
        axis=1,
    )
    gamma = np.exp(comp - logsumexp(comp, axis=1, keepdims=True))
    assert_allclose(responsibilities(X, res), gamma, rtol=1e-10, atol=1e-14)


def log_posterior_scipy(X, w, mu, cov, kind, prior):
    """log p(X | theta) + log p(theta), all densities from scipy.stats (normalised)."""
    lp = mixture_loglik(X, w, mu, cov)
    lp += stats.dirichlet(prior.concentration).logpdf(w)
    for k in range(len(w)):
        lp += stats.multivariate_normal(prior.mean, cov[k] / prior.kappa).logpdf(mu[k])
        if kind == "full" or (kind == "tied" and k == 0):
            lp += stats.invwishart(df=prior.iw_dof, scale=prior.iw_scale).logpdf(cov[k])
        elif kind == "diag":
            lp += stats.invgamma(prior.ig_shape, scale=prior.ig_scale).logpdf(np.diag(cov[k])).sum()
        elif kind == "spherical":
            lp += stats.invgamma(prior.ig_shape, scale=prior.ig_scale).logpdf(cov[k][0, 0])
    return lp


def perturbations(w, mu, cov, kind, h):
    """Each parameter coordinate moved by +-h (relative), staying a valid parameter."""
    k, d = mu.shape
    for sign in (1.0, -1.0):
        for j in range(1, k):  # move weight between components 0 and j
            w2 = w.copy()
            w2[0] += sign * h * w[0]
            w2[j] -= sign * h * w[0]
            yield w2, mu, cov
        for j in range(k):
            for a in range(d):
                mu2 = mu.copy()
                mu2[j, a] += sign * h * np.sqrt(cov[j, a, a])
                yield w, mu2, cov
        for j in range(1 if kind == "tied" else k):
            for a in range(d):
                for b in range(a + 1 if kind in ("full", "tied") else a + 1):
                    if kind == "spherical" and (a, b) != (0, 0):
                        continue
                    if kind == "diag" and a != b:
                        continue
                    e = np.zeros((d, d))
                    if kind == "spherical":
                        e = np.eye(d)
                    else:
                        e[a, b] = e[b, a] = 1.0
                    step = sign * h * np.sqrt(cov[j, a, a] * cov[j, b, b]) * e
                    cov2 = cov.copy()
                    if kind == "tied":
                        cov2 = cov2 + step
                    else:
                        cov2[j] = cov2[j] + step
                    yield w, mu, cov2


@pytest.mark.parametrize("kind", KINDS)
def test_map_estimate_is_the_mode_of_the_scipy_posterior(kind):
    X = blobs(10, n=(25, 20, 15))
    prior = proper_prior(kind)
    res = fit_em(X, n_components=3, covariance=kind, prior=prior, max_iter=5000, tol=1e-15, seed=3)
    assert res.reg_covar == 0.0
    w, mu, cov = res.weights, res.means, res.covariances
    best = log_posterior_scipy(X, w, mu, cov, kind, prior)
    # The engine's objective is the same log posterior up to the priors' normalisers, so the
    # difference between start and end agrees with scipy's.
    start = fit_em(X, n_components=3, covariance=kind, prior=prior, max_iter=0, seed=3)
    assert start.history[0] == res.history[0]
    ref_gain = best - log_posterior_scipy(
        X, start.weights, start.means, start.covariances, kind, prior
    )
    assert res.objective - start.objective == pytest.approx(ref_gain, rel=1e-9)
    # The mode: every coordinate moved by 1e-3 of its scale lowers the posterior density.
    # A wrong M-step denominator (e.g. N + D + 1 instead of N + D + 2 with N ~ 20) moves the
    # covariances by ~5 %, far more than 1e-3, and would fail here.
    for w2, mu2, cov2 in perturbations(w, mu, cov, kind, 1e-3):
        assert log_posterior_scipy(X, w2, mu2, cov2, kind, prior) < best


@pytest.mark.parametrize("kind", KINDS)
def test_log_posterior_is_the_objective_anywhere(kind):
    """log_posterior at the estimate is EM's objective; elsewhere it moves as scipy's does."""
    X = blobs(12, n=(25, 20, 15))
    prior = proper_prior(kind)
    res = fit_em(X, n_components=3, covariance=kind, prior=prior, seed=1)
    at = log_posterior(X, res.weights, res.means, res.covariances, covariance=kind, prior=prior)
    assert at == pytest.approx(res.objective, rel=1e-12)
    start = fit_em(X, n_components=3, covariance=kind, prior=prior, max_iter=0, seed=1)
    there = log_posterior(X, start.weights, start.means, start.covariances, covariance=kind,
                          prior=prior)
    ref = (log_posterior_scipy(X, res.weights, res.means, res.covariances, kind, prior)
           - log_posterior_scipy(X, start.weights, start.means, start.covariances, kind, prior))
    assert at - there == pytest.approx(ref, rel=1e-9)
    assert at > there  # the start is not the mode
    ml = fit_em(X, n_components=3, covariance=kind, seed=1)
    assert log_posterior(X, ml.weights, ml.means, ml.covariances,
                         covariance=kind) == pytest.approx(ml.log_likelihood, rel=1e-12)


def test_ml_estimate_moved_is_worse():
    X = blobs(11)
    res = fit_em(X, n_components=3, max_iter=5000, tol=1e-15, reg_covar=0.0, seed=0)
    best = mixture_loglik(X, res.weights, res.means, res.covariances)
    for w2, mu2, cov2 in perturbations(res.weights, res.means, res.covariances, "full", 1e-3):
        assert mixture_loglik(X, w2, mu2, cov2) < best


def test_known_sd_map_means():
    data = np.array([0.0, 3.0, 7.0, 10.0])
    prior = MixturePrior(mean=5.0, kappa=2.0)
    res = fit_em(
        data,
        n_components=2,
        init_means=[2.0, 8.0],
        known_sd=2.0,
        equal_weights=True,
        max_iter=1,
        tol=0.0,
        prior=prior,
    )
    num = np.exp(-((data[:, None] - np.array([2.0, 8.0])) ** 2) / 8.0)
    g = num / num.sum(axis=1, keepdims=True)
    # mu_k ~ N(m0, sd^2 / kappa0): posterior mode (sum g x + kappa0 m0) / (sum g + kappa0).
    expected = ((g * data[:, None]).sum(0) + 2.0 * 5.0) / (g.sum(0) + 2.0)
    assert_allclose(res.means[:, 0], expected, rtol=8 * EPS)


def test_one_dimensional_input():
    rng = np.random.default_rng(12)
    x = np.concatenate([rng.normal(-2, 0.5, 200), rng.normal(3, 1.0, 300)])
    res = fit_em(x, n_components=2, seed=0, n_init=3)
    assert res.means.shape == (2, 1) and res.covariances.shape == (2, 1, 1)
    order = np.argsort(res.means[:, 0])
    assert_allclose(res.means[order, 0], [-2, 3], atol=0.2)
    assert_allclose(res.sds[order, 0], [0.5, 1.0], atol=0.15)
    ref = float(
        logsumexp(
            np.log(res.weights) + stats.norm(res.means[:, 0], res.sds[:, 0]).logpdf(x[:, None]),
            axis=1,
        ).sum()
    )
    assert res.log_likelihood == pytest.approx(ref, rel=1e-12)


# ----------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------


def test_more_components_than_rows():
    with pytest.raises(ValueError, match=r"n_components=5 is larger than the number of rows \(3\)"):
        fit_em(np.arange(3.0), n_components=5)


def test_nan_names_row_and_column():
    X = blobs(0)
    X[17, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite value .* row 17, column 1"):
        fit_em(X, n_components=2)


def test_unknown_covariance_kind():
    with pytest.raises(
        ValueError, match="covariance must be one of full, diag, spherical, tied; got 'banana'"
    ):
        fit_em(blobs(0), n_components=2, covariance="banana")


def test_constant_column_is_floored_with_a_message():
    X = blobs(0)
    X[:, 1] = 3.0
    with pytest.warns(UserWarning, match=r"column\(s\) \[1\] of X are constant"):
        res = fit_em(X, n_components=2, seed=0)
    assert np.all(np.isfinite(res.covariances)) and np.isfinite(res.log_likelihood)
    assert res.messages and "constant" in res.messages[0]
    # The constant column's variance is exactly the floor in every component.
    assert_allclose(res.covariances[:, 1, 1], 1e-6, rtol=1e-9)
    with pytest.raises(ValueError, match=r"column\(s\) \[1\] of X are constant"):
        fit_em(X, n_components=2, reg_covar=0.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(prior=MixturePrior(ig_shape=1.0, ig_scale=1.0)), "ig_shape/ig_scale .* 'full'"),
        (dict(covariance="diag", prior=MixturePrior(iw_dof=3.0, iw_scale=1.0)), "iw_dof"),
        (dict(prior=MixturePrior(iw_dof=0.5, iw_scale=1.0)), "iw_dof must be > D - 1 = 1"),
        (dict(prior=MixturePrior(concentration=0.5)), "concentration must be >= 1"),
        (dict(prior=MixturePrior(kappa=-1.0)), "kappa must be >= 0"),
        (dict(equal_weights=True, prior=MixturePrior(concentration=2.0)), "equal_weights"),
        (dict(init_means=[[0.0, 0.0]]), "init_means must be 2x2"),
        (dict(init_means=[[0.0, 0.0], [1.0, 1.0]], n_init=3), "n_init must be 1"),
        (dict(known_sd=-1.0), "known_sd must be a positive"),
        (dict(n_init=0), "n_init must be an integer >= 1"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_em(blobs(0), n_components=2, **kwargs)


@pytest.mark.parametrize("kind", ["full", "diag", "spherical"])
def test_collapsed_component_without_floor_is_an_error(kind):
    x = np.array([0.0, 0.0, 0.0, 5.0, 5.0, 5.0])  # each component collapses onto one value
    with pytest.raises(ValueError, match="not positive.*raise reg_covar"):
        fit_em(x, n_components=2, covariance=kind, reg_covar=0.0, init_means=[0.0, 5.0])
    res = fit_em(x, n_components=2, covariance=kind, init_means=[0.0, 5.0])  # default floor
    assert_allclose(res.covariances[:, 0, 0], 1e-6, rtol=1e-9)
    assert np.isfinite(res.log_likelihood)


@pytest.mark.parametrize("kind", KINDS)
def test_translation_equivariance_far_from_the_origin(kind):
    # EM commutes with a shift of the data. Far from the origin, moments formed as raw sums
    # (sum x^2 - n xbar^2) lose about eps * offset^2 / var ~ 1e-8 of each variance (scikit-learn's
    # diag / spherical / tied formulas move the means by ~1e-9 here); moments about the
    # current means lose only the representation error of x + offset, half an ulp of 1e4.
    rng = np.random.default_rng(14)
    X = np.concatenate([rng.normal(c, s, (400, 4)) for c, s in ((0, 1), (3, 0.7), (-2, 1.5))])
    offset = 1e4
    start = fit_em(X, n_components=3, covariance=kind, seed=1, max_iter=0)
    cov0 = natural(start.covariances, kind)
    common = dict(
        n_components=3,
        covariance=kind,
        max_iter=40,
        tol=0.0,
        init_weights=start.weights,
        init_covariances=cov0,
    )
    a = fit_em(X, init_means=start.means, **common)
    b = fit_em(X + offset, init_means=start.means + offset, **common)
    assert_allclose(b.means - offset, a.means, rtol=0, atol=100 * np.spacing(offset))
    assert_allclose(b.covariances, a.covariances, rtol=0, atol=100 * np.spacing(offset))


@pytest.mark.parametrize("k", [1, 2, 3, 5, 7, 8])
def test_match_components_is_the_assignment_scipy_solves(k):
    """Enumeration (k <= 7) and linear_sum_assignment (k = 8) give the optimal permutation."""
    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(k)
    for _ in range(20):
        reference = rng.normal(size=(k, 2))
        means = reference[rng.permutation(k)] + 0.3 * rng.normal(size=(k, 2))
        cost = ((means[None, :, :] - reference[:, None, :]) ** 2).sum(axis=-1)
        assert_array_equal(match_components(means, reference), linear_sum_assignment(cost)[1])


def test_match_components_recovers_a_shuffle_and_defers_ties_to_scipy():
    reference = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    shuffle = np.array([2, 0, 1])
    # means[j] = reference[shuffle[j]]: reference k is played by the j with shuffle[j] = k
    assert_array_equal(match_components(reference[shuffle], reference), np.argsort(shuffle))
    # Two components at the same place: two permutations tie, scipy's choice is kept.
    from scipy.optimize import linear_sum_assignment
    means = np.array([[1.0, 1.0], [1.0, 1.0], [9.0, 9.0]])
    cost = ((means[None, :, :] - reference[:, None, :]) ** 2).sum(axis=-1)
    assert_array_equal(match_components(means, reference), linear_sum_assignment(cost)[1])


# --------------------------------------------------------------------------------------------
# Near-singular components
# --------------------------------------------------------------------------------------------


def _engel_log():
    """statsmodels' engel data (income, food expenditure of 235 households), in logs."""
    sm = pytest.importorskip("statsmodels.api")
    return np.log(sm.datasets.engel.load_pandas().data.to_numpy(dtype=np.float64))


def test_engel_maximum_likelihood_winner_is_flagged_near_singular():
    """K = 3 on log engel: the best of 10 starts holds 10 rows almost on a line (covariance
    eigenvalues 4.1e-6 and 0.31); its thinnest variance, as scipy's generalised eigenvalue
    against the data's own covariance, is far below the threshold; the other two are not
    flagged."""
    X = _engel_log()
    r = fit_em(X, n_components=3, covariance="full", n_init=10, seed=0, max_iter=500, tol=1e-8)
    flagged = near_singular_components(r.weights, r.means, r.covariances, len(X))
    assert len(flagged) == 1
    c = flagged[0]
    assert c["rows"] == pytest.approx(10.0, abs=0.1)
    assert_allclose(c["eigenvalues"], np.linalg.eigvalsh(r.covariances[c["component"]]))
    assert c["eigenvalues"][0] == pytest.approx(4.08e-6, rel=0.01)
    assert c["eigenvalues"][1] == pytest.approx(0.313, rel=0.01)
    # against the data's covariance, not the mixture's: at an ML fixed point they agree
    data_cov = np.cov(X.T, ddof=0)
    assert_allclose(mixture_covariance(r.weights, r.means, r.covariances), data_cov,
                    rtol=1e-3, atol=1e-5)
    expected = [sla_eigh(S, data_cov, eigvals_only=True)[0] for S in r.covariances]
    assert c["relative_variance"] == pytest.approx(expected[c["component"]], rel=1e-2)
    assert c["relative_variance"] < NEAR_SINGULAR_RATIO / 2
    others = [e for k, e in enumerate(expected) if k != c["component"]]
    assert min(others) > 100 * NEAR_SINGULAR_RATIO


def test_near_singular_flag_ignores_the_units_and_the_data_collinearity():
    """Rescaling the features (units) changes nothing; a component thin only along a direction
    in which all the data are thin (two features nearly equal everywhere) is not flagged."""
    X = _engel_log()
    r = fit_em(X, n_components=3, covariance="full", n_init=10, seed=0, max_iter=500, tol=1e-8)
    scale = np.array([1e3, 1e-2])
    base = near_singular_components(r.weights, r.means, r.covariances, len(X))
    moved = near_singular_components(r.weights, r.means * scale,
                                     r.covariances * np.outer(scale, scale), len(X))
    assert [c["component"] for c in moved] == [c["component"] for c in base]
    assert moved[0]["relative_variance"] == pytest.approx(base[0]["relative_variance"],
                                                          rel=1e-9)
    rng = np.random.default_rng(3)
    a = np.concatenate([rng.normal(0, 1, 150), rng.normal(6, 1, 150)])
    Y = np.column_stack([a, a + rng.normal(0, 1e-3, a.size), rng.normal(0, 1, a.size)])
    r = fit_em(Y, n_components=2, covariance="full", n_init=3, seed=0, max_iter=500)
    assert np.linalg.cond(r.covariances[0]) > 1e5  # singular-looking in absolute terms
    assert near_singular_components(r.weights, r.means, r.covariances, len(Y)) == []


def test_real_mixtures_are_not_flagged():
    from sklearn.datasets import load_iris, load_wine

    for X in (load_iris().data, load_wine().data[:, [0, 6, 9]]):
        r = fit_em(X, n_components=3, covariance="full", n_init=10, seed=0, max_iter=500)
        assert near_singular_components(r.weights, r.means, r.covariances, len(X)) == []
