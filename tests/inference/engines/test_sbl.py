"""Sparse Bayesian learning (ARD) engine against independent derivations.

References: Tipping (2001), "Sparse Bayesian learning and the relevance vector machine",
JMLR 1, eq. 7-8 (evidence), 12-13 (posterior), 16-18 (MacKay / EM updates); Tipping and
Faul (2003), AISTATS, eq. 7-8 and 20-21 (decomposition l(alpha_i), s_i, q_i and the
stationary point alpha_i = s_i^2 / (q_i^2 - s_i)).

Tolerances. Closed forms are compared with an independent float64 computation of the same
quantity on well-conditioned designs (condition number of the matrices factored < 1e4), so
the two agree to about cond * N * eps ~ 1e-10 relative: RTOL below. Fixed points are
compared after convergence to ``TOL_FIT`` in log alpha; the evidence is stationary there, so
its error is second order and the means differ by O(TOL_FIT) relative to their posterior sd.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from bayescheck.inference.engines.sbl import (
    ard_log_evidence,
    ard_optimality,
    ard_posterior,
    fit_sbl,
)
from scipy import stats

EPS = np.finfo(np.float64).eps
RTOL = 1e-10
TOL_FIT = 1e-9


def make_problem(n=200, m=10, support=(1, 4, 7), coef=(1.5, -2.0, 0.8), noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    w = np.zeros(m)
    w[list(support)] = coef
    return X, X @ w + noise * rng.normal(size=n), w


def dense_covariance(X, alpha, noise_var):
    """C = sigma2 I + X_A A^-1 X_A' over the finite-alpha columns (Tipping 2001, eq. 7)."""
    fin = np.isfinite(alpha)
    Xa = X[:, fin]
    return noise_var * np.eye(X.shape[0]) + Xa @ np.diag(1.0 / alpha[fin]) @ Xa.T


def brute_posterior(X, y, alpha, noise_var):
    """Sigma = (X'X/sigma2 + A)^-1, mu = Sigma X'y / sigma2 by a dense inverse (eq. 12-13)."""
    fin = np.isfinite(alpha)
    Xa = X[:, fin]
    cov = np.linalg.inv(Xa.T @ Xa / noise_var + np.diag(alpha[fin]))
    return cov @ Xa.T @ y / noise_var, cov


def sq_factors(X, y, alpha, noise_var, i):
    """s_i, q_i from C with column i removed (Tipping-Faul eq. 20-21), by dense solves."""
    a = alpha.copy()
    a[i] = np.inf
    c = dense_covariance(X, a, noise_var)
    return X[:, i] @ np.linalg.solve(c, X[:, i]), X[:, i] @ np.linalg.solve(c, y)


@pytest.fixture(autouse=True)
def _no_numpy_warnings():
    # small matrices only: one BLAS thread (threads cost more than they save on a busy machine)
    from threadpoolctl import threadpool_limits

    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("error", RuntimeWarning)
        yield


# ------------------------------------------------------------------ fixed hyperparameters


@pytest.mark.parametrize(
    ("n", "m"), [(40, 8), (25, 60)]
)  # k <= N (precision form), k > N (Woodbury)
def test_log_evidence_equals_scipy_mvn(n, m):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, m))
    y = rng.normal(size=n)
    alpha = rng.uniform(0.5, 3.0, size=m)
    alpha[[0, 3]] = np.inf
    noise_var = 0.3
    ref = stats.multivariate_normal(np.zeros(n), dense_covariance(X, alpha, noise_var)).logpdf(y)
    got = ard_log_evidence(X, y, alpha, noise_var)
    assert got == pytest.approx(ref, rel=RTOL)
    # the same through a sparse design
    assert ard_log_evidence(sp.csr_array(X), y, alpha, noise_var) == pytest.approx(ref, rel=RTOL)


def test_log_evidence_detects_wrong_hyperparameters():
    """A wrong alpha (one weight's precision doubled) or noise is far outside RTOL."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 6))
    y = X @ rng.normal(size=6) + 0.5 * rng.normal(size=40)
    alpha = np.full(6, 1.0)
    ref = stats.multivariate_normal(np.zeros(40), dense_covariance(X, alpha, 0.25)).logpdf(y)
    wrong = alpha.copy()
    wrong[2] *= 2.0
    for a, s2 in [(wrong, 0.25), (alpha, 0.25 * 1.01)]:
        assert abs(ard_log_evidence(X, y, a, s2) - ref) > 1e3 * RTOL * abs(ref)


@pytest.mark.parametrize(("n", "m"), [(40, 8), (25, 60)])
def test_posterior_equals_dense_formula(n, m):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, m))
    y = rng.normal(size=n)
    alpha = rng.uniform(0.5, 3.0, size=m)
    alpha[[1, 5]] = np.inf
    mean_ref, cov_ref = brute_posterior(X, y, alpha, 0.4)
    post = ard_posterior(X, y, alpha, 0.4)
    np.testing.assert_array_equal(post.relevant, np.flatnonzero(np.isfinite(alpha)))
    assert post.cov.shape == (m - 2, m - 2)
    np.testing.assert_allclose(
        post.mean[post.relevant], mean_ref, rtol=RTOL, atol=RTOL * np.abs(mean_ref).max()
    )
    np.testing.assert_allclose(post.cov, cov_ref, rtol=0, atol=RTOL * np.abs(cov_ref).max())
    assert np.all(post.mean[[1, 5]] == 0.0)
    # a deliberately wrong covariance (one precision off by 2x) is far outside the tolerance
    wrong = alpha.copy()
    wrong[0] *= 2.0
    assert (
        np.abs(ard_posterior(X, y, wrong, 0.4).cov - cov_ref).max()
        > 1e3 * RTOL * np.abs(cov_ref).max()
    )


def test_tied_precision_equals_ridge_posterior():
    """One alpha for all weights is ridge-style regression.

    Posterior N((X'X + lam I)^-1 X'y, sigma2 (X'X + lam I)^-1) with lam = sigma2 alpha.
    """
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 5))
    y = X @ rng.normal(size=5) + 0.7 * rng.normal(size=50)
    a, s2 = 2.5, 0.49
    lam = s2 * a
    ridge = np.linalg.inv(X.T @ X + lam * np.eye(5))
    post = ard_posterior(X, y, a, s2)
    np.testing.assert_allclose(post.mean, ridge @ X.T @ y, rtol=RTOL)
    np.testing.assert_allclose(post.cov, s2 * ridge, rtol=RTOL)
    # and the Bayesian linear-regression engine with prior N(0, I / alpha)
    from bayescheck.inference.engines.linear_gaussian import GaussianPosterior, regression_stats

    blr = GaussianPosterior.from_prior(np.zeros(5), np.eye(5) / a, noise_var=s2).update(
        regression_stats(X, y)
    )
    np.testing.assert_allclose(post.mean, blr.mean, rtol=RTOL)
    np.testing.assert_allclose(post.cov, blr.cov, rtol=RTOL)
    assert post.log_evidence == pytest.approx(blr.log_evidence, rel=RTOL)


# ------------------------------------------------------------------ hyperparameter fits


def _n_eps_bound(log_ev, n):
    """Round-off of an evidence evaluation: N * eps * |L| (N terms of size up to |L|)."""
    return n * EPS * np.max(np.abs(log_ev))


def test_em_log_evidence_never_decreases():
    X, y, _ = make_problem(seed=5)
    res = fit_sbl(X, y, method="em", max_iter=400)
    assert res.log_evidence.shape == (res.n_iter + 1,)
    assert np.all(np.diff(res.log_evidence) >= -_n_eps_bound(res.log_evidence, len(y)))
    # not a flat sequence: the check has something to check
    assert res.log_evidence[-1] - res.log_evidence[0] > 1.0


def test_fast_with_fixed_noise_never_decreases():
    """Each Tipping-Faul action is an exact maximisation in one alpha_i: monotone at fixed noise."""
    X, y, _ = make_problem(seed=6)
    res = fit_sbl(X, y, noise_var=0.01)
    assert res.converged
    assert np.all(np.diff(res.log_evidence) >= -_n_eps_bound(res.log_evidence, len(y)))


@pytest.fixture(scope="module")
def three_fits():
    # EM's cost is set by near-marginal weights (theta_i ~ 0 at the optimum): this seed has
    # none, so EM converges in under 2000 iterations
    X, y, w = make_problem(support=(1, 4, 5), seed=1)
    fits = {
        "fast": fit_sbl(X, y, method="fast", tol=TOL_FIT, max_iter=5000),
        "mackay": fit_sbl(X, y, method="mackay", tol=TOL_FIT, max_iter=5000),
        "em": fit_sbl(X, y, method="em", tol=TOL_FIT, max_iter=5000),
    }
    return X, y, w, fits


def test_three_methods_reach_the_same_optimum(three_fits):
    X, y, w, fits = three_fits
    ref = fits["fast"]
    assert set(np.flatnonzero(w)) <= set(ref.relevant)
    for name, res in fits.items():
        assert res.converged, name
        np.testing.assert_array_equal(res.relevant, ref.relevant, err_msg=name)
        sd = np.sqrt(np.diag(ref.cov))
        np.testing.assert_allclose(
            res.mean[ref.relevant], ref.mean[ref.relevant], rtol=0, atol=1e-4 * sd.min()
        )
        assert res.noise_var == pytest.approx(ref.noise_var, rel=1e-6)
        # stationary point: first-order errors vanish, the evidence agrees to second order
        assert res.log_evidence[-1] == pytest.approx(ref.log_evidence[-1], rel=1e-10, abs=1e-8)


def test_fast_optimum_satisfies_tipping_faul_conditions(three_fits):
    """Independent check of the fixed point with s_i, q_i from dense solves of C_-i.

    Relevant: alpha_i = s_i^2 / (q_i^2 - s_i). Pruned: q_i^2 <= s_i. Noise (MacKay):
    sigma2 = ||y - X mu||^2 / (N - sum gamma_i).
    """
    X, y, _, fits = three_fits
    res = fits["fast"]
    for i in range(X.shape[1]):
        s, q = sq_factors(X, y, res.alpha, res.noise_var, i)
        if i in res.relevant:
            assert res.alpha[i] == pytest.approx(s**2 / (q**2 - s), rel=1e-6)
        else:
            assert q**2 <= s
    gamma = 1.0 - res.alpha[res.relevant] * np.diag(res.cov)
    r = y - X @ res.mean
    assert res.noise_var == pytest.approx(r @ r / (len(y) - gamma.sum()), rel=1e-6)


def test_result_is_the_posterior_at_the_estimates(three_fits):
    X, y, _, fits = three_fits
    for res in fits.values():
        assert np.all(np.diff(res.relevant) > 0)
        assert np.all(np.isinf(np.delete(res.alpha, res.relevant)))
        assert np.all(np.delete(res.mean, res.relevant) == 0.0)
        mean_ref, cov_ref = brute_posterior(X, y, res.alpha, res.noise_var)
        np.testing.assert_allclose(
            res.mean[res.relevant], mean_ref, rtol=RTOL, atol=RTOL * np.abs(mean_ref).max()
        )
        np.testing.assert_allclose(res.cov, cov_ref, rtol=0, atol=RTOL * np.abs(cov_ref).max())
        assert res.log_evidence[-1] == pytest.approx(
            ard_log_evidence(X, y, res.alpha, res.noise_var), rel=RTOL
        )


def test_pruning_is_scale_free():
    """Rescaling a column by c rescales its weight by 1/c and changes nothing else."""
    X, y, _ = make_problem(seed=7)
    base = fit_sbl(X, y, tol=TOL_FIT)
    Xs = X.copy()
    Xs[:, 1] *= 1e4
    Xs[:, 2] *= 1e-4
    scaled = fit_sbl(Xs, y, tol=TOL_FIT)
    np.testing.assert_array_equal(scaled.relevant, base.relevant)
    rescaled = scaled.mean.copy()
    rescaled[1] *= 1e4
    rescaled[2] *= 1e-4
    np.testing.assert_allclose(rescaled, base.mean, rtol=1e-6, atol=1e-9)


def test_sparse_design_gives_the_dense_result():
    X, y, _ = make_problem(seed=8)
    X[np.abs(X) < 0.8] = 0.0
    dense = fit_sbl(X, y, tol=TOL_FIT)
    sparse = fit_sbl(sp.csr_array(X), y, tol=TOL_FIT)
    np.testing.assert_array_equal(sparse.relevant, dense.relevant)
    np.testing.assert_allclose(sparse.mean, dense.mean, rtol=1e-8, atol=1e-12)
    assert sparse.n_iter == dense.n_iter


def test_auto_threshold_resolves_by_shape_method_and_noise():
    from bayescheck.inference.engines.sbl import resolve_relevance_threshold as resolve

    assert resolve("auto", 100, 100) == "ric" and resolve("auto", 100, 2000) == "ric"
    assert resolve("auto", 101, 100) == 1.0
    assert resolve("auto", 100, 200, method="em") == 1.0
    assert resolve("auto", 100, 200, noise_fixed=True) == 1.0
    assert resolve("ric", 101, 100) == "ric" and resolve(3, 10, 20) == 3.0
    for bad in ("RIC", 0.99, True, float("inf")):
        with pytest.raises(ValueError, match="relevance_threshold must be"):
            resolve(bad, 10, 20)
    X, y, _ = make_problem(n=40, m=60, support=(3, 20, 41), noise=0.1, seed=1)
    auto, ric = fit_sbl(X, y, relevance_threshold="auto"), fit_sbl(X, y, relevance_threshold="ric")
    assert np.array_equal(auto.relevant, ric.relevant)
    assert auto.log_evidence[-1] == ric.log_evidence[-1]


def test_relevance_threshold_is_the_penalised_fixed_point():
    """With threshold t: relevant columns have q^2/s > t, all others q^2/s <= t."""
    rng = np.random.default_rng(9)
    n, m = 80, 200
    X = rng.normal(size=(n, m))
    w = np.zeros(m)
    w[[3, 50, 120]] = [1.0, -1.5, 2.0]
    y = X @ w + 0.3 * rng.normal(size=n)
    res = fit_sbl(X, y, relevance_threshold="ric", tol=TOL_FIT)
    t = 2 * np.log(m)
    assert res.converged
    assert {3, 50, 120} <= set(res.relevant)
    for i in range(m):
        s, q = sq_factors(X, y, res.alpha, res.noise_var, i)
        assert (q**2 / s > t) == (i in res.relevant)


# ------------------------------------------------------------------ incremental Tipping-Faul


def sparse_wide_problem(seed=0, n=100, m=400, cut=1.2):
    """A sparse design with M = 4 N: the active set grows to ~45 columns, so the rank-one
    updates run for several actions between recomputations (``refactor_every() > 1``)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    w = np.zeros(m)
    w[rng.choice(m, 8, replace=False)] = rng.normal(size=8)
    y = X @ w + 0.3 * rng.normal(size=n)
    return sp.csc_array(np.where(np.abs(X) > cut, X, 0.0)), y


def dense_sq(X, y, alpha, noise_var):
    """S_m = x_m' C^-1 x_m, Q_m = x_m' C^-1 y for every column, by a dense solve with C."""
    Xd = X.toarray() if sp.issparse(X) else X
    c = dense_covariance(Xd, alpha, noise_var)
    sol = np.linalg.solve(c, np.column_stack([Xd, y]))
    return np.einsum("ij,ij->j", Xd, sol[:, :-1]), Xd.T @ sol[:, -1]


@pytest.fixture(scope="module")
def incremental_and_reference():
    X, y = sparse_wide_problem()
    kw = {"noise_var": 0.09, "relevance_threshold": 2.0, "max_iter": 3000, "tol": TOL_FIT}
    return X, y, kw, fit_sbl(X, y, **kw), fit_sbl(X, y, _incremental=False, **kw)


def test_incremental_updates_follow_the_recomputing_reference(incremental_and_reference):
    """Same actions, same evidence after every action, same optimum as recomputing each step."""
    from bayescheck.inference.engines import sbl

    X, y, _, inc, ref = incremental_and_reference
    prob = sbl._problem(X, y, True)
    fs = sbl._FastIncremental(prob, sbl._to_unit_alpha(prob, inc.alpha),
                              sbl._to_unit_noise(prob, inc.noise_var))
    assert fs.refactor_every() > 1  # the updates really run between recomputations here
    assert inc.converged and ref.converged and min(inc.n_iter, ref.n_iter) > 100
    common = min(len(inc.log_evidence), len(ref.log_evidence))
    np.testing.assert_allclose(inc.log_evidence[:common], ref.log_evidence[:common],
                               rtol=RTOL, atol=0)
    # At the optimum the re-estimations change the evidence only by rounding (|change| <
    # 1e-13), so when the convergence test is met can depend on the BLAS's rounding: the
    # same number of actions on one machine, 572 and 577 on another. Whatever actions the
    # longer run takes beyond the shorter one's must be such rounding.
    longer = max(inc.log_evidence, ref.log_evidence, key=len)[common - 1:]
    assert np.ptp(longer) <= 64 * np.finfo(float).eps * abs(longer[-1])
    np.testing.assert_array_equal(inc.relevant, ref.relevant)
    np.testing.assert_allclose(inc.alpha[inc.relevant], ref.alpha[ref.relevant], rtol=1e-8)
    np.testing.assert_allclose(inc.mean, ref.mean, rtol=1e-8, atol=1e-12)


def test_small_problem_with_estimated_noise_is_the_reference_path():
    """When a recomputation costs about as much as an action, the noise is re-estimated after
    every action, as the reference does: the evidence sequence is the same."""
    X, y, _ = make_problem(seed=6)
    inc = fit_sbl(X, y, tol=TOL_FIT)
    ref = fit_sbl(X, y, tol=TOL_FIT, _incremental=False)
    assert inc.converged and inc.n_iter == ref.n_iter
    np.testing.assert_allclose(inc.log_evidence, ref.log_evidence, rtol=RTOL, atol=0)
    assert inc.noise_var == pytest.approx(ref.noise_var, rel=1e-10)


def test_incremental_optimum_satisfies_the_conditions(incremental_and_reference):
    """Independent check at the end: S, Q from dense solves with C; relevant columns sit at
    alpha_i = s_i^2 / (q_i^2 - s_i), the others have q_i^2 / s_i <= threshold."""
    X, y, kw, inc, _ = incremental_and_reference
    S, Q = dense_sq(X, y, inc.alpha, inc.noise_var)
    a = inc.alpha
    act = np.isfinite(a)
    s = np.where(act, a * S / np.where(act, a - S, 1.0), S)
    q = np.where(act, a * Q / np.where(act, a - S, 1.0), Q)
    np.testing.assert_allclose(a[act], s[act] ** 2 / (q[act] ** 2 - s[act]), rtol=1e-6)
    assert np.all(q[act] ** 2 / s[act] > kw["relevance_threshold"])
    usable = ~act & (np.asarray(abs(X).sum(axis=0)).ravel() > 0)
    assert np.all(q[usable] ** 2 / s[usable] <= kw["relevance_threshold"])
    # a wrong optimum (one relevant precision doubled) violates the first condition
    assert not np.allclose(2 * a[act][0], s[act][0] ** 2 / (q[act][0] ** 2 - s[act][0]),
                           rtol=1e-6)


def _fresh_in_column_order(sbl, fs):
    """Sigma, mu (by column index) and S, Q of a state recomputed from a fresh factor."""
    fresh = sbl._FastIncremental(fs.prob, fs.alpha, fs.noise_var)
    pos = {j: c for c, j in enumerate(fresh.order[: fresh.k])}
    perm = [pos[j] for j in fs.order[: fs.k]]
    return fresh, fresh.sigma[np.ix_(perm, perm)], fresh.mu[perm]


def test_rank_one_updates_drift_little_from_a_full_recompute():
    """250 actions by rank-one updates only (no recomputation): Sigma, mu, S, Q and the log
    evidence (the sum of the actions' gains) against a fresh factor and against dense
    formulas. Drift grows like (number of updates) * cond * eps: bound 1e-8 relative."""
    from bayescheck.inference.engines import sbl

    X, y = sparse_wide_problem(seed=1)
    prob = sbl._problem(X, y, True)
    X, y = prob.X, prob.y  # the unit-size problem the engine runs on (powers of two)
    noise = sbl._to_unit_noise(prob, 0.09)
    fs = sbl._FastIncremental(prob, np.full(prob.m, np.inf), noise)
    kinds = set()
    for _ in range(250):
        s, q, s_max = fs.factors()
        ch = sbl._choose(prob, fs.alpha, fs.order[: fs.k], s, q, s_max, tol=TOL_FIT,
                         threshold=1.0)
        assert not ch.basis_converged
        kinds.add(ch.kind)
        {"add": fs.add, "reestimate": fs.reestimate, "delete": fs.delete}[ch.kind](
            ch.j, *([] if ch.kind == "delete" else [ch.alpha_new])
        )
        fs.log_evidence += ch.d_log_ev
    assert kinds == {"add", "reestimate", "delete"} and fs.n_refactor == 1
    k = fs.k
    fresh, sig, mu = _fresh_in_column_order(sbl, fs)
    scale = np.abs(sig).max()
    np.testing.assert_allclose(fs.sigma[:k, :k], sig, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(fs.mu[:k], mu, rtol=0, atol=1e-8 * np.abs(mu).max())
    np.testing.assert_allclose(fs.S, fresh.S, rtol=1e-8, atol=1e-8 * fresh.S.max())
    np.testing.assert_allclose(fs.Q, fresh.Q, rtol=0, atol=1e-8 * np.abs(fresh.Q).max())
    assert fs.log_evidence == pytest.approx(fresh.log_evidence, rel=1e-10)
    # independent: the dense posterior covariance and S, Q from C
    idx = fs.order[:k]
    mean_ref, cov_ref = brute_posterior(X.toarray(), y, fs.alpha, noise)
    order = np.argsort(idx)
    np.testing.assert_allclose(fs.sigma[:k, :k][np.ix_(order, order)], cov_ref, rtol=0,
                               atol=1e-8 * scale)
    np.testing.assert_allclose(fs.mu[:k][order], mean_ref, rtol=0,
                               atol=1e-8 * np.abs(mean_ref).max())
    S, Q = dense_sq(X, y, fs.alpha, noise)
    np.testing.assert_allclose(fs.S, S, rtol=1e-8, atol=1e-8 * S.max())
    np.testing.assert_allclose(fs.Q, Q, rtol=0, atol=1e-8 * np.abs(Q).max())
    assert fs.log_evidence == pytest.approx(ard_log_evidence(X, y, fs.alpha, noise), rel=1e-10)
    # the comparison can fail: one more update not applied to S is far outside the bound
    s, q, s_max = fs.factors()
    ch = sbl._choose(prob, fs.alpha, idx, s, q, s_max, tol=TOL_FIT, threshold=1.0)
    S_before = fs.S.copy()
    {"add": fs.add, "reestimate": fs.reestimate, "delete": fs.delete}[ch.kind](
        ch.j, *([] if ch.kind == "delete" else [ch.alpha_new])
    )
    S_after, _ = dense_sq(X, y, fs.alpha, noise)
    assert np.abs(S_before - S_after).max() > 1e3 * 1e-8 * S_after.max()


def test_lost_positive_definiteness_forces_a_recompute():
    """An update that leaves a Sigma_ii outside (0, 1/alpha_i] is thrown away: the state is
    recomputed from a fresh Cholesky factor, and equals the exact one."""
    from bayescheck.inference.engines import sbl

    X, y = sparse_wide_problem(seed=2)
    prob = sbl._problem(X, y, True)
    X, y = prob.X, prob.y  # the unit-size problem the engine runs on (powers of two)
    noise = sbl._to_unit_noise(prob, 0.09)
    start = np.full(prob.m, np.inf)
    start[::8] = 1.0  # 50 active columns
    fs = sbl._FastIncremental(prob, start, noise)
    assert fs.refactor_every() > 1  # so the recompute below is the guard, not the schedule
    s, q, s_max = fs.factors()
    ch = sbl._choose(prob, fs.alpha, fs.order[: fs.k], s, q, s_max, tol=TOL_FIT,
                     threshold=1.0)
    other = 1 if fs.order[0] == ch.j else 0
    fs.sigma[other, other] *= -1.0  # as lost definiteness would
    fs.act(ch)
    assert fs.n_refactor == 2 and fs.since_refactor == 0
    _, sig, _ = _fresh_in_column_order(sbl, fs)
    np.testing.assert_allclose(fs.sigma[: fs.k, : fs.k], sig, rtol=0,
                               atol=1e-10 * np.abs(sig).max())
    assert fs.log_evidence == pytest.approx(ard_log_evidence(X, y, fs.alpha, noise), rel=RTOL)


# ------------------------------------------------------------------ awkward designs


@pytest.mark.parametrize("method", ["fast", "em", "mackay"])
def test_all_zero_column_is_never_relevant(method):
    X, y, _ = make_problem(seed=10)
    X[:, 2] = 0.0
    res = fit_sbl(X, y, method=method, max_iter=3000)
    assert 2 not in res.relevant
    assert np.isinf(res.alpha[2]) and res.mean[2] == 0.0
    assert np.all(np.isfinite(res.log_evidence))
    assert ard_log_evidence(X, y, 1.0, 0.01) == pytest.approx(
        ard_log_evidence(np.delete(X, 2, axis=1), y, 1.0, 0.01), rel=RTOL
    )


@pytest.mark.parametrize("method", ["fast", "em", "mackay"])
def test_constant_column_carries_the_offset(method):
    X, y, _ = make_problem(seed=11)
    X[:, 0] = 1.0
    y = y + 3.0
    res = fit_sbl(X, y, method=method, max_iter=2000)
    assert 0 in res.relevant
    sd0 = np.sqrt(res.cov[0, 0])
    # offset 3 plus the mean of the noise: within 5 posterior sd of 3
    assert abs(res.mean[0] - 3.0) < 5 * sd0


@pytest.fixture(scope="module")
def wide_problem():
    rng = np.random.default_rng(12)
    n, m = 32, 80
    X = rng.normal(size=(n, m))
    w = np.zeros(m)
    w[[5, 60, 70]] = [2.0, -1.5, 1.0]
    return X, X @ w + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("method", ["fast", "em", "mackay"])
@pytest.mark.parametrize("noise_var", [None, 0.01])
def test_more_features_than_rows(wide_problem, method, noise_var):
    """M = 2.5 N: EM and MacKay start in the N x N (Woodbury) form; nothing breaks.

    With the noise estimated, type-II ML over M > N may collapse the noise towards its floor
    (a known ARD degeneracy), so only consistency is asserted then.
    """
    X, y = wide_problem
    n = len(y)
    max_iter = 300 if method == "em" else 5000  # EM prunes slowly: only its monotonicity here
    res = fit_sbl(X, y, method=method, noise_var=noise_var, max_iter=max_iter)
    k = len(res.relevant)
    assert res.cov.shape == (k, k)
    if noise_var is not None and res.converged:
        assert k < n
    assert np.all(np.isfinite(res.mean)) and res.noise_var > 0
    assert np.all(np.isfinite(res.log_evidence))
    if method == "em":
        assert np.all(np.diff(res.log_evidence) >= -_n_eps_bound(res.log_evidence, n))
    elif noise_var is not None:
        assert res.converged
    if noise_var is not None:
        assert {5, 60, 70} <= set(res.relevant)
    mean_ref, _ = brute_posterior(X, y, res.alpha, res.noise_var)
    np.testing.assert_allclose(
        res.mean[res.relevant], mean_ref, rtol=1e-6, atol=1e-8 * np.abs(mean_ref).max()
    )


def test_more_features_than_rows_ric_finds_the_support(wide_problem):
    X, y = wide_problem
    res = fit_sbl(X, y, relevance_threshold="ric")
    assert res.converged
    np.testing.assert_array_equal(res.relevant, [5, 60, 70])
    assert 0.05**2 < res.noise_var < 0.2**2


@pytest.mark.parametrize("method", ["fast", "mackay"])
def test_all_zero_target_keeps_nothing(method):
    X, _, _ = make_problem(seed=14)
    res = fit_sbl(X, np.zeros(len(X)), method=method)
    assert res.converged and res.relevant.size == 0 and np.all(res.mean == 0.0)
    assert res.cov.shape == (0, 0) and res.noise_var > 0


def test_alpha_init_is_honoured():
    X, y, _ = make_problem(seed=13)
    start = np.full(X.shape[1], np.inf)
    start[[1, 4]] = 1.0
    res = fit_sbl(X, y, alpha_init=start, noise_var=0.01, max_iter=1)
    # one action from the initial model {1, 4}: at most one column added
    assert set(res.relevant) >= {1, 4} or len(set(res.relevant) ^ {1, 4}) == 1
    assert res.log_evidence[0] == pytest.approx(ard_log_evidence(X, y, start, 0.01), rel=RTOL)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "gibbs"}, r"method must be one of .*'gibbs'"),
        ({"max_iter": 0}, r"max_iter must be an integer >= 1, got 0"),
        ({"tol": -1.0}, r"tol must be a positive finite float, got -1.0"),
        ({"noise_var": 0.0}, r"noise_var must be a positive finite float, got 0.0"),
        ({"prune": 1.5}, r"prune must be a float in \(0, 1\), got 1.5"),
        (
            {"alpha_init": np.ones(3)},
            r"alpha_init must be a scalar or have shape \(10,\), got shape \(3,\)",
        ),
        ({"alpha_init": -1.0}, r"alpha_init must be > 0"),
        (
            {"relevance_threshold": 0.5},
            r"relevance_threshold must be a float >= 1, 'ric' or 'auto', got 0.5",
        ),
        (
            {"relevance_threshold": 4.0, "method": "em"},
            r"relevance_threshold applies to method='fast' only",
        ),
    ],
)
def test_bad_options_name_the_parameter(kwargs, match):
    X, y, _ = make_problem(n=20)
    with pytest.raises(ValueError, match=match):
        fit_sbl(X, y, **kwargs)


def test_bad_data_is_named():
    X, y, _ = make_problem(n=20)
    with pytest.raises(
        ValueError, match=r"y must have shape \(20,\) to match X with 20 rows, got shape \(19,\)"
    ):
        fit_sbl(X, y[:-1])
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="X must contain only finite values"):
        fit_sbl(X, y)
    with pytest.raises(ValueError, match=r"X must be a 2-D array \(N, M\), got shape \(20,\)"):
        ard_posterior(y, y, 1.0, 1.0)


# ---- the optimality certificate (Tipping & Faul 2003 conditions) ---------------------------


@pytest.mark.parametrize("kw", [{}, {"relevance_threshold": "ric"}, {"method": "mackay"}])
def test_a_converged_fit_satisfies_the_optimality_conditions(kw):
    from bayescheck.inference.engines.sbl import ard_optimality

    X, y, _ = make_problem()
    r = fit_sbl(X, y, **kw)
    assert r.converged
    opt = ard_optimality(X, y, r.alpha, r.noise_var,
                         relevance_threshold=kw.get("relevance_threshold", 1.0))
    assert opt.max_violation < 1e-4
    kept = np.isfinite(r.alpha)
    # the conditions themselves: alpha = s^2 / (q^2 - s) kept, q^2 / s <= t pruned
    np.testing.assert_allclose(r.alpha[kept], opt.alpha_opt[kept], rtol=1e-4)
    assert np.all(opt.ratio[~kept] <= opt.threshold * (1 + 1e-6))


def test_optimality_conditions_catch_a_perturbed_fit():
    """Each kind of condition fails on its own mistake: a kept alpha moved by 10 %, a
    relevant weight pruned, the noise variance moved by 10 %."""
    from bayescheck.inference.engines.sbl import ard_optimality

    X, y, _ = make_problem()
    r = fit_sbl(X, y)
    i = 4  # a true non-zero weight (coefficient -2), kept
    assert i in r.relevant
    alpha = r.alpha.copy()
    alpha[i] *= 1.1
    bad = ard_optimality(X, y, alpha, r.noise_var)
    assert bad.worst == i and bad.max_violation == pytest.approx(np.log(1.1), rel=0.05)
    alpha = r.alpha.copy()
    alpha[i] = np.inf  # a true non-zero pruned: its q^2 / s is huge
    bad = ard_optimality(X, y, alpha, r.noise_var)
    assert bad.worst == i and bad.max_violation > 1.0
    bad = ard_optimality(X, y, r.alpha, 1.1 * r.noise_var)
    # (at the wrong noise a marginal weight's own condition may break too)
    assert bad.noise_violation == pytest.approx(np.log(1.1), rel=0.05)
    assert bad.max_violation >= bad.noise_violation


@pytest.mark.parametrize("sparse", [False, True])
def test_columns_and_target_in_other_units_give_the_equivariant_answer(sparse):
    """Columns scaled by 1e-100 and 1e100 and y by 1e-50 (absolute thresholds had pruned the
    small column and overflowed on the large one): ``w_j c_y / c_j``, ``alpha_j c_j^2 /
    c_y^2``, ``sigma2 c_y^2``, the log evidence less ``N log c_y``, the optimality ratios
    unchanged. Within the fit's tolerance (rounding is far below it)."""
    X, y, _ = make_problem(seed=7)
    c = np.ones(X.shape[1])
    c[1], c[3] = 1e-100, 1e100
    cy = 1e-50
    Xs = X * c
    if sparse:
        X, Xs = sp.csc_array(X), sp.csc_array(Xs)
    base = fit_sbl(X, y, tol=TOL_FIT)
    scaled = fit_sbl(Xs, y * cy, tol=TOL_FIT)
    np.testing.assert_array_equal(scaled.relevant, base.relevant)
    assert {1, 3} <= set(base.relevant.tolist())
    rel = 10 * TOL_FIT
    np.testing.assert_allclose(scaled.mean * c / cy, base.mean, rtol=rel, atol=0)
    kept = base.relevant
    np.testing.assert_allclose(scaled.alpha[kept] / c[kept] ** 2 * cy**2, base.alpha[kept],
                               rtol=rel)
    np.testing.assert_allclose(scaled.noise_var / cy**2, base.noise_var, rtol=rel)
    assert scaled.log_evidence[-1] + len(y) * np.log(cy) == pytest.approx(
        base.log_evidence[-1], rel=rel)
    np.testing.assert_allclose(scaled.cov * np.outer(c[kept], c[kept]) / cy**2, base.cov,
                               rtol=rel, atol=0)
    opt_b = ard_optimality(X, y, base.alpha, base.noise_var)
    opt_s = ard_optimality(Xs, y * cy, scaled.alpha, scaled.noise_var)
    np.testing.assert_allclose(opt_s.ratio, opt_b.ratio, rtol=rel)
    assert opt_s.max_violation < 1e-3
