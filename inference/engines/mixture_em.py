"""Gaussian mixture by expectation-maximisation (EM), maximum likelihood or MAP; pure numpy.

The model: ``x_i ~ sum_k pi_k N(mu_k, Sigma_k)`` with the assignments marginalised. EM
alternates an E step (responsibilities ``gamma_ik``, in log space with a log-sum-exp) and an
M step (weights, means and covariances from responsibility-weighted moments).

Shape of the code (an ``init`` / ``step`` pair, as in blackjax):

* :class:`EMState` holds the parameters (weights, means, lower Cholesky factors of the
  covariances).
* :func:`batch_statistics` is the E step on one batch of rows; it returns :class:`EMStats`,
  the responsibility-weighted counts, first and second moments and the batch log-likelihood.
  :func:`combine_statistics` adds two of them. Statistics of any partition of the rows combine
  to the statistics of the whole, so the same M step serves a stream of files or the partitions
  of a Dask cluster.
* :func:`m_step` turns combined statistics into the next :class:`EMState`.
* :func:`fit_em` owns the loop: k-means++ starts, restarts, convergence, history.

Numerics: float64; the covariances are only ever factored (Cholesky), log-determinants come
from the factor's diagonal, and the Mahalanobis terms of all components are one matrix product
of the rows with the stacked inverse factors ``L_k^{-1}`` (triangular solves against the
identity; ``np.linalg.inv`` is never used). The moments are accumulated relative to the
current means, in the whitened coordinates ``y = L_k^{-1} (x - mu_k)`` that the E step has
already computed: the scatter about the new mean is ``L T L' - N d d'`` with ``d`` the (small)
step of the mean, never ``sum x x' - N xbar xbar'``, so data far from the origin lose nothing
(tested: a shift by 1e4 changes the estimate by ulps of 1e4). Rows are processed in batches
that fit in cache, shared by a few threads; BLAS is held to one thread meanwhile.

Objective and priors
--------------------
Maximum likelihood (``prior=None``) maximises the log-likelihood
``sum_i log sum_k pi_k N(x_i | mu_k, Sigma_k)``. Each M step adds ``reg_covar`` (default
``1e-6``) to the diagonal of every covariance (to every variance for ``diag`` /
``spherical``), exactly as scikit-learn's ``reg_covar``: a floor that keeps a component that
collapses onto one point, or a constant column, from producing a singular covariance. The
estimate is then the fixed point of this floored M step, which differs from the unfloored
maximum by ``O(reg_covar)`` in each variance (and whose log-likelihood still never decreased
in the tests, though the floored step is not an exact EM step).

MAP-EM (``prior=MixturePrior(...)``) maximises ``log p(X | theta) + log p(theta)``, the log of
the posterior *density in the parameterisation (pi, mu_k, Sigma_k)*: the simplex coordinates of
the weights, the means, and the covariance matrices themselves (for ``diag`` / ``spherical``
the variances ``sigma^2``, not the sds and not their logs). That is PyMC's
``model.logp(jacobian=False)`` for the model below declared on exactly these variables (a
Dirichlet ``weights``, ``MvNormal``/``Normal`` means, and the covariance matrices or variances
themselves, with the sds derived from them); the mode of a density depends on the
parameterisation, so a declaration on the sds, or the log density with the Jacobians of the
unconstraining transforms, has a different mode. The prior
(:class:`MixturePrior`), for every component ``k`` independently::

    pi ~ Dirichlet(alpha)                         alpha >= 1 (alpha = 1: flat)
    full:      Sigma_k ~ InvWishart(nu0, Psi0)    p ∝ |S|^{-(nu0+D+1)/2} exp(-tr(Psi0 S^{-1})/2)
    tied:      Sigma   ~ InvWishart(nu0, Psi0)    (one matrix shared by all components)
    diag:      sigma2_kd ~ InvGamma(a0, b0_d)     p ∝ s^{-(a0+1)} exp(-b0_d/s), each dimension d
    spherical: sigma2_k  ~ InvGamma(a0, b0)       Sigma_k = sigma2_k I
    mu_k | Sigma_k ~ N(m0, Sigma_k / kappa0)      kappa0 > 0; kappa0 = 0: flat prior on mu_k
    known_sd:  mu_k ~ N(m0, sd^2 I / kappa0)      (Sigma_k = sd^2 I fixed)

``InvWishart(nu0, Psi0)`` is ``scipy.stats.invwishart(df=nu0, scale=Psi0)`` and
``InvGamma(a0, b0)`` is ``scipy.stats.invgamma(a0, scale=b0)`` = PyMC's
``InverseGamma(alpha=a0, beta=b0)``. With ``N_k = sum_i gamma_ik``, ``xbar_k`` the weighted
mean, ``S_k`` the weighted scatter about ``xbar_k`` and ``c_k = kappa0 N_k / (kappa0 + N_k)``,
``m = 1`` if ``kappa0 > 0`` else ``0``, the M step is the exact joint maximiser::

    pi_k      = (N_k + alpha_k - 1) / (n + sum(alpha) - K)
    mu_k      = (N_k xbar_k + kappa0 m0) / (N_k + kappa0)
    B_k       = S_k + c_k (xbar_k - m0)(xbar_k - m0)'
    full      Sigma_k   = (Psi0 + B_k) / (nu0 + D + 1 + m + N_k)
    tied      Sigma     = (Psi0 + sum_k B_k) / (nu0 + D + 1 + K m + n)
    diag      sigma2_kd = (2 b0_d + B_k[d, d]) / (2 a0 + 2 + m + N_k)
    spherical sigma2_k  = (2 b0 + tr B_k) / (2 a0 + 2 + D m + D N_k)

plus ``reg_covar`` on the diagonal (default 0 when a covariance prior is given, since the prior
already keeps the covariances positive definite; ``1e-6`` otherwise). Leaving the covariance
prior out means a flat (improper) prior on ``Sigma_k`` (the formulas with ``nu0 = -(D+1)``,
``Psi0 = 0``, or ``a0 = -1``, ``b0 = 0``); with ``alpha = 1`` and ``kappa0 = 0`` as well, MAP-EM
is maximum likelihood. The recorded objective is ``log p(X | theta)`` plus the log prior
density up to an additive constant (the Dirichlet, inverse-Wishart and inverse-gamma
normalisers are left out; the normal prior on the means is included in full).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .blas_threads import one_blas_thread

__all__ = [
    "COVARIANCE_KINDS",
    "match_components",
    "DEFAULT_REG_COVAR",
    "NEAR_SINGULAR_RATIO",
    "EMResult",
    "EMState",
    "EMStats",
    "MatrixRows",
    "MixturePrior",
    "batch_statistics",
    "combine_statistics",
    "fit_em",
    "kmeans",
    "lloyd_centres",
    "lloyd_sums",
    "log_likelihood",
    "log_posterior",
    "m_step",
    "mixture_covariance",
    "mixture_rows",
    "near_singular_components",
    "order_centres",
    "responsibilities",
    "seed_centres",
]

COVARIANCE_KINDS = ("full", "diag", "spherical", "tied")
DEFAULT_REG_COVAR = 1e-6
# Rows per E-step batch: chosen so one (K*D, b) buffer holds about 2**16 doubles (512 KiB) and
# the handful of them stay in a core's L2 cache; measured ~5x faster than 16k-row batches at
# K*D = 15 on the benchmark machine.
_BATCH_ELEMENTS = 2**16


def _auto_batch(K: int, D: int) -> int:
    return int(min(max(_BATCH_ELEMENTS // (K * D), 1024), 65536))


_LOG_2PI = math.log(2.0 * math.pi)
# Added to every responsibility count, as scikit-learn does, so an empty component divides
# by a tiny positive number instead of zero (its mean then stays where it was).
_COUNT_GUARD = 10.0 * np.finfo(np.float64).eps


# --------------------------------------------------------------------------------------------
# Public records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MixturePrior:
    """Conjugate priors for MAP-EM (see the module docstring for the exact densities).

    Parameters
    ----------
    concentration : float or array_like of shape (K,), default 1.0
        Dirichlet ``alpha`` on the weights; every entry must be ``>= 1`` (the mode is then
        inside the simplex). ``1`` is flat.
    mean : float or array_like of shape (D,), default 0.0
        ``m0``, the centre of the normal prior on every component mean.
    kappa : float, default 0.0
        ``kappa0 >= 0``: ``mu_k | Sigma_k ~ N(m0, Sigma_k / kappa0)``. ``0`` is a flat
        (improper) prior on the means.
    iw_dof, iw_scale : float and float or array_like of shape (D, D), optional
        Inverse-Wishart ``nu0 > D - 1`` and positive definite ``Psi0`` (a scalar means
        ``Psi0 = scalar * I``) on each covariance; for ``covariance="full"`` or ``"tied"``.
    ig_shape, ig_scale : float and float or array_like of shape (D,), optional
        Inverse-gamma ``a0 > 0`` and ``b0 > 0`` on each variance; for ``covariance="diag"``
        (``b0`` may differ by dimension) or ``"spherical"``.
    """

    concentration: float | np.ndarray = 1.0
    mean: float | np.ndarray = 0.0
    kappa: float = 0.0
    iw_dof: float | None = None
    iw_scale: float | np.ndarray | None = None
    ig_shape: float | None = None
    ig_scale: float | np.ndarray | None = None


class EMState(NamedTuple):
    """Parameters of a Gaussian mixture, as the E step needs them.

    Attributes
    ----------
    weights : ndarray of shape (K,)
    means : ndarray of shape (K, D)
    chol : ndarray of shape (K, D, D)
        Lower Cholesky factor ``L_k`` of each covariance, ``Sigma_k = L_k L_k'`` (for ``tied``
        the K factors are equal; for ``diag`` / ``spherical`` they are diagonal).
    """

    weights: np.ndarray
    means: np.ndarray
    chol: np.ndarray


class EMStats(NamedTuple):
    """Sufficient statistics of one or more batches for one M step; combine them by addition.

    Moments are taken relative to the parameters ``state`` of the E step that produced them,
    in whitened coordinates ``y_ik = L_k^{-1} (x_i - mu_k)``; every batch of one iteration uses
    the same ``state``, so the statistics of disjoint batches add up.

    Attributes
    ----------
    n : int
        Number of rows.
    loglik : float
        ``sum_i log sum_k pi_k N(x_i | mu_k, Sigma_k)`` (hard assignments: the classification
        log-likelihood ``sum_i max_k log pi_k N(x_i | mu_k, Sigma_k)``).
    counts : ndarray of shape (K,)
        ``N_k = sum_i gamma_ik``.
    sums : ndarray of shape (K, D)
        ``sum_i gamma_ik y_ik``.
    second : ndarray
        ``sum_i gamma_ik y_ik y_ik'`` of shape (K, D, D) for ``full`` / ``tied``; its diagonal,
        shape (K, D), for ``diag``; its trace, shape (K,), for ``spherical``; zeros of shape
        (K,) when the covariances are known.
    """

    n: int
    loglik: float
    counts: np.ndarray
    sums: np.ndarray
    second: np.ndarray


class EMResult(NamedTuple):
    """Result of :func:`fit_em`.

    Attributes
    ----------
    weights : ndarray of shape (K,)
    means : ndarray of shape (K, D)
    covariances : ndarray of shape (K, D, D)
        Always full matrices, whatever the covariance kind (diagonal for ``diag``, ``s2 I`` for
        ``spherical`` and ``known_sd``, K equal matrices for ``tied``).
    covariance : str
        The covariance kind fitted (``"known"`` when ``known_sd`` was given).
    log_likelihood : float
        ``sum_i log sum_k pi_k N(x_i | mu_k, Sigma_k)`` at the returned estimate.
    objective : float
        What EM maximised, at the returned estimate: ``log_likelihood`` (ML) or
        ``log_likelihood + log prior`` up to a constant (MAP); the classification
        log-likelihood (plus log prior) when ``hard=True``.
    history : ndarray of shape (n_iter + 1,)
        The objective at the starting point and after every M step of the best start; it
        never decreases.
    n_iter : int
        Number of M steps of the best start.
    converged : bool
        Whether the best start stopped on ``tol`` rather than on ``max_iter``.
    restart_log_likelihoods : ndarray of shape (n_init,)
        Final ``log_likelihood`` of every start, in order.
    restart_objectives : ndarray of shape (n_init,)
        Final objective of every start; the best one is returned.
    best_restart : int
        Index of the returned start.
    reg_covar : float
        The covariance floor that was used.
    messages : tuple of str
        Notes about the data or the fit (a constant column held at the floor, ...).
    """

    weights: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    covariance: str
    log_likelihood: float
    objective: float
    history: np.ndarray
    n_iter: int
    converged: bool
    restart_log_likelihoods: np.ndarray
    restart_objectives: np.ndarray
    best_restart: int
    reg_covar: float
    messages: tuple[str, ...]

    @property
    def sds(self) -> np.ndarray:
        """Standard deviations ``sqrt(diag(Sigma_k))``, shape (K, D)."""
        return np.sqrt(np.diagonal(self.covariances, axis1=1, axis2=2))


# --------------------------------------------------------------------------------------------
# Internal configuration
# --------------------------------------------------------------------------------------------


class _Config(NamedTuple):
    kind: str  # "full", "diag", "spherical", "tied" or "known"
    reg: float
    alpha: np.ndarray | None  # (K,) Dirichlet concentration, None = equal weights
    m0: np.ndarray  # (D,)
    kappa: float
    nu0: float  # inverse-Wishart dof; flat = -(D + 1)
    psi0: np.ndarray  # (D, D); flat = 0
    a0: float  # inverse-gamma shape; flat = -1
    b0: np.ndarray  # (D,) for diag, () for spherical; flat = 0
    has_cov_prior: bool
    hard: bool


def _moments_kind(kind: str) -> str:
    return {"full": "full", "tied": "full", "diag": "diag", "spherical": "spherical"}.get(
        kind, "none"
    )


# --------------------------------------------------------------------------------------------
# E step
# --------------------------------------------------------------------------------------------


class _Whitener(NamedTuple):
    A: np.ndarray  # (K*D, D) stacked L_k^{-1}
    bias: np.ndarray  # (K*D, 1) stacked L_k^{-1} mu_k
    const: np.ndarray  # (K, 1) log pi_k - D/2 log 2pi - log|L_k|
    K: int
    D: int


def _inverse_factors(chol: np.ndarray) -> np.ndarray:
    """``L_k^{-1}`` for each lower factor, by triangular solves (diagonal: reciprocals)."""
    K, D, _ = chol.shape
    if D == 1 or not np.any(np.tril(chol, -1)):
        return np.eye(D) / np.diagonal(chol, axis1=1, axis2=2)[:, :, None]
    eye = np.eye(D)
    if D > 16:
        from scipy.linalg import solve_triangular  # here: the small-D path needs no scipy

        return np.stack([solve_triangular(chol[k], eye, lower=True) for k in range(K)])
    # Small D: forward substitution row by row, vectorised over the K factors (LAPACK's
    # per-call overhead would dominate: L^{-1}[i] = (e_i - L[i, :i] L^{-1}[:i]) / L[i, i]).
    inv = np.zeros((K, D, D))
    for i in range(D):
        row = eye[i] - np.matmul(chol[:, i : i + 1, :i], inv[:, :i, :])[:, 0, :]
        inv[:, i, :] = row / chol[:, i, i : i + 1]
    return inv


def _half_logdet(chol: np.ndarray) -> np.ndarray:
    """``log |L_k| = 0.5 log |Sigma_k|`` from the diagonal of each factor."""
    return np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)


def _whitener(state: EMState) -> _Whitener:
    K, D = state.means.shape
    inv = _inverse_factors(state.chol)
    bias = np.einsum("kij,kj->ki", inv, state.means).reshape(K * D, 1)
    with np.errstate(divide="ignore"):
        logw = np.log(state.weights)
    const = logw - 0.5 * D * _LOG_2PI - _half_logdet(state.chol)
    return _Whitener(inv.reshape(K * D, D), bias, const[:, None], K, D)


class _Workspace:
    """Buffers for one batch length, reused across batches and iterations.

    Allocating the (K*D, b) temporaries afresh for every batch costs more than the arithmetic
    (fresh pages are zero-filled by the kernel), so every array operation writes into these.
    """

    def __init__(self, K: int, D: int, b: int):
        self.XT = np.empty((D, b))  # the batch transposed: contiguous rows for the product
        self.Y = np.empty((K * D, b))
        self.Y3 = self.Y.reshape(K, D, b)
        self.Z = np.empty((K * D, b)) if D > 1 else None
        self.Z3 = None if self.Z is None else self.Z.reshape(K, D, b)
        self.maha = np.empty((K, b)) if D > 1 else self.Y  # D == 1: maha is Y squared in place
        self.logp = np.empty((K, b))
        self.top = np.empty(b)
        self.total = np.empty(b)
        self.RY3 = np.empty((K, D, b))
        self.cols = np.arange(b)


class _Workspaces(dict):
    def get_for(self, K: int, D: int, b: int) -> _Workspace:
        ws = self.get(b)
        if ws is None or ws.Y.shape[0] != K * D:
            ws = self[b] = _Workspace(K, D, b)
        return ws


def _component_log_density(Xb: np.ndarray, wh: _Whitener, ws: _Workspace) -> np.ndarray:
    """Fill ``ws``: whitened rows ``Y3`` (K, D, b), ``maha`` (K, b), ``logp = log pi_k N``."""
    np.copyto(ws.XT, Xb.T)
    if wh.D == 1:
        np.multiply(wh.A, ws.XT, out=ws.Y)  # (K, 1) * (1, b)
    else:
        np.matmul(wh.A, ws.XT, out=ws.Y)  # one BLAS product for every component: (K*D, b)
    ws.Y -= wh.bias
    if wh.D == 1:
        # Y is (K, b) and not needed after the squares except for the first moment: keep a
        # copy of it in RY3 before squaring in place.
        np.copyto(ws.RY3.reshape(wh.K, -1), ws.Y)
        np.square(ws.Y, out=ws.Y)
    else:
        np.square(ws.Y, out=ws.Z)
        np.sum(ws.Z3, axis=1, out=ws.maha)
    np.multiply(ws.maha, -0.5, out=ws.logp)
    ws.logp += wh.const
    return ws.logp


def _normalise(logp: np.ndarray, hard: bool, ws: _Workspace) -> float:
    """Turn ``log pi_k N`` (K, b) into responsibilities in place; return ``sum_i log p(x_i)``."""
    if hard:
        lab = np.argmax(logp, axis=0)
        cols = ws.cols
        ll = float(logp[lab, cols].sum())
        logp[...] = 0.0
        logp[lab, cols] = 1.0
        return ll
    top, total = ws.top, ws.total
    np.max(logp, axis=0, out=top)
    logp -= top
    np.exp(logp, out=logp)
    np.sum(logp, axis=0, out=total)
    ll = float(top.sum())
    np.log(total, out=top)
    ll += float(top.sum())
    np.reciprocal(total, out=total)
    logp *= total
    return ll


def _batch_statistics(
    Xb: np.ndarray, wh: _Whitener, moments: str, hard: bool, ws: _Workspace
) -> EMStats:
    logp = _component_log_density(Xb, wh, ws)
    ll = _normalise(logp, hard, ws)
    resp = logp
    K = wh.K
    Y3 = ws.RY3 if wh.D == 1 else ws.Y3  # whitened rows (D == 1: the copy kept before squaring)
    counts = resp.sum(axis=1)
    sums = np.einsum("kdb,kb->kd", Y3, resp)  # not BLAS: a threaded dot here only thrashes
    if moments == "full":
        if wh.D == 1:
            second = np.einsum("kb,kb->k", ws.maha, resp)[:, None, None]
        else:
            np.multiply(Y3, resp[:, None, :], out=ws.RY3)
            second = np.matmul(ws.RY3, Y3.transpose(0, 2, 1))
    elif moments == "diag":
        if wh.D == 1:
            second = np.einsum("kb,kb->k", ws.maha, resp)[:, None]
        else:
            second = np.einsum("kdb,kb->kd", ws.Z3, resp)
    elif moments == "spherical":
        second = np.einsum("kb,kb->k", ws.maha, resp)
    else:
        second = np.zeros(K)
    return EMStats(int(Xb.shape[0]), ll, counts, sums, second)


def batch_statistics(
    X: np.ndarray, state: EMState, *, covariance: str = "full", hard: bool = False
) -> EMStats:
    """E step on one batch of rows: its sufficient statistics for the next M step.

    Parameters
    ----------
    X : ndarray of shape (b, D)
        Rows of the batch (float64).
    state : EMState
        Current parameters; every batch of one iteration must use the same state.
    covariance : {"full", "diag", "spherical", "tied", "known"}, default "full"
        Decides which second moment is accumulated (none for ``"known"``).
    hard : bool, default False
        Hard (0/1) responsibilities: classification EM; k-means with equal weights and a
        known shared sd.

    Returns
    -------
    EMStats
        Combine statistics of several batches with :func:`combine_statistics`.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    K, D = state.means.shape
    ws = _Workspace(K, D, X.shape[0])
    return _batch_statistics(X, _whitener(state), _moments_kind(covariance), hard, ws)


def combine_statistics(a: EMStats, b: EMStats) -> EMStats:
    """Statistics of the union of two disjoint sets of rows (same E-step state): the sum.

    Parameters
    ----------
    a, b : EMStats

    Returns
    -------
    EMStats
    """
    return EMStats(
        a.n + b.n, a.loglik + b.loglik, a.counts + b.counts, a.sums + b.sums, a.second + b.second
    )


class _Pool:
    """Threads that compute the batch statistics of one E step in parallel.

    numpy releases the GIL inside its array loops and BLAS, so threads over batches use the
    cores; the batch products are too small for BLAS's own threads (they only contend). The
    partition into batches and the order of the additions do not depend on the number of
    threads, so neither does the result.
    """

    def __init__(self, n_threads: int):
        self.n_threads = max(int(n_threads), 1)
        self.spaces = [_Workspaces() for _ in range(self.n_threads)]
        self.executor = ThreadPoolExecutor(self.n_threads) if self.n_threads > 1 else None

    def close(self):
        if self.executor is not None:
            self.executor.shutdown()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _statistics(X, state, moments, hard, batch_size=None, pool=None) -> EMStats:
    """E step over all rows, batch by batch, the batch statistics combined by addition."""
    wh = _whitener(state)
    if batch_size is None:
        batch_size = _auto_batch(wh.K, wh.D)
    starts = range(0, X.shape[0], batch_size)
    parts = [None] * len(starts)

    def work(worker: int, n_workers: int, spaces: _Workspaces):
        for i in range(worker, len(starts), n_workers):
            Xb = X[starts[i] : starts[i] + batch_size]
            ws = spaces.get_for(wh.K, wh.D, Xb.shape[0])
            parts[i] = _batch_statistics(Xb, wh, moments, hard, ws)

    if pool is None or pool.executor is None or len(starts) < 2 * pool.n_threads:
        work(0, 1, _Workspaces() if pool is None else pool.spaces[0])
    else:
        futures = [
            pool.executor.submit(work, w, pool.n_threads, pool.spaces[w])
            for w in range(pool.n_threads)
        ]
        for f in futures:
            f.result()
    total = parts[0]
    for part in parts[1:]:
        total = combine_statistics(total, part)
    return total


# --------------------------------------------------------------------------------------------
# M step
# --------------------------------------------------------------------------------------------


_COLLAPSED = (
    "the component collapsed onto fewer distinct points than dimensions (or onto a constant "
    "column); raise reg_covar or give a proper covariance prior"
)


def _cholesky(cov: np.ndarray, kind: str) -> np.ndarray:
    """Lower factors (K, D, D) from covariances in their natural shape for ``kind``."""
    per_component = cov.reshape(cov.shape[0], -1)
    overflowed = np.flatnonzero(~np.all(np.isfinite(per_component), axis=1))
    if overflowed.size:
        raise ValueError(
            f"covariance of component(s) {overflowed.tolist()} is not finite: the data's "
            f"squares exceed float64's range (about 1.8e308); rescale the features, for "
            f"example divide them by a power of ten")
    if kind in ("diag", "spherical"):
        bad = np.flatnonzero(~np.all(cov > 0, axis=-1) if kind == "diag" else ~(cov > 0))
        if bad.size:
            raise ValueError(
                f"variance of component(s) {bad.tolist()} is not positive: " + _COLLAPSED
            )
        sd = np.sqrt(cov)
        if kind == "diag":
            return sd[:, :, None] * np.eye(sd.shape[1])
        return sd[:, None, None] * np.eye(1)
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        bad = [k for k in range(cov.shape[0]) if not _is_pd(cov[k])]
        raise ValueError(
            f"covariance of component(s) {bad} is not positive definite: " + _COLLAPSED
        ) from None


def _is_pd(a: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return False
    return True


def _m_step(stats: EMStats, state: EMState, cfg: _Config) -> EMState:
    K, D = state.means.shape
    L = state.chol
    N = stats.counts + _COUNT_GUARD
    ntot = float(N.sum())
    d = np.einsum("kij,kj->ki", L, stats.sums) / N[:, None]  # xbar_k - mu_k(old)
    xbar = state.means + d
    if cfg.kappa > 0:
        means = (N[:, None] * xbar + cfg.kappa * cfg.m0) / (N + cfg.kappa)[:, None]
        shrink = cfg.kappa * N / (cfg.kappa + N)
        e = xbar - cfg.m0
    else:
        means = xbar
    if cfg.alpha is None:
        weights = np.full(K, 1.0 / K)
    else:
        weights = (N + cfg.alpha - 1.0) / (ntot + cfg.alpha.sum() - K)
    if cfg.kind == "known":
        return EMState(weights, means, L)

    mf = 1.0 if cfg.kappa > 0 else 0.0
    if cfg.kind in ("full", "tied"):
        scatter = np.matmul(np.matmul(L, stats.second), L.transpose(0, 2, 1))
        scatter -= N[:, None, None] * (d[:, :, None] * d[:, None, :])
        if cfg.kappa > 0:
            scatter += shrink[:, None, None] * (e[:, :, None] * e[:, None, :])
        if cfg.kind == "full":
            cov = (cfg.psi0 + scatter) / (cfg.nu0 + D + 1 + mf + N)[:, None, None]
        else:
            cov = (cfg.psi0 + scatter.sum(axis=0)) / (cfg.nu0 + D + 1 + K * mf + ntot)
            cov = cov[None]
        cov = 0.5 * (cov + cov.transpose(0, 2, 1))
        cov[:, np.arange(D), np.arange(D)] += cfg.reg
        chol = _cholesky(cov, "full")
        if cfg.kind == "tied":
            chol = np.broadcast_to(chol, (K, D, D)).copy()
        return EMState(weights, means, chol)

    if cfg.kind == "diag":
        var_old = np.square(np.diagonal(L, axis1=1, axis2=2))
        scatter = np.maximum(var_old * stats.second - N[:, None] * np.square(d), 0.0)
        if cfg.kappa > 0:
            scatter += shrink[:, None] * np.square(e)
        var = (2.0 * cfg.b0 + scatter) / (2.0 * cfg.a0 + 2.0 + mf + N)[:, None] + cfg.reg
        return EMState(weights, means, _cholesky(var, "diag"))

    # spherical
    var_old = np.square(L[:, 0, 0])
    scatter = np.maximum(var_old * stats.second - N * np.square(d).sum(axis=1), 0.0)
    if cfg.kappa > 0:
        scatter += shrink * np.square(e).sum(axis=1)
    var = (2.0 * cfg.b0 + scatter) / (2.0 * cfg.a0 + 2.0 + D * mf + D * N) + cfg.reg
    return EMState(weights, means, _cholesky(var, "spherical")[:, :1, :1] * np.eye(D))


def m_step(
    stats: EMStats,
    state: EMState,
    *,
    covariance: str = "full",
    reg_covar: float | None = None,
    prior: MixturePrior | None = None,
    known_sd: float | None = None,
    equal_weights: bool = False,
) -> EMState:
    """M step: the next parameters from the combined statistics of the E step at ``state``.

    Parameters
    ----------
    stats : EMStats
        Statistics of all the rows (combined with :func:`combine_statistics`).
    state : EMState
        The parameters the statistics were computed with.
    covariance, reg_covar, prior, known_sd, equal_weights
        As in :func:`fit_em`.

    Returns
    -------
    EMState
    """
    K, D = state.means.shape
    cfg = _config(
        covariance,
        K,
        D,
        reg_covar=reg_covar,
        prior=prior,
        known_sd=known_sd,
        equal_weights=equal_weights,
        hard=False,
    )
    return _m_step(stats, state, cfg)


# --------------------------------------------------------------------------------------------
# Objective
# --------------------------------------------------------------------------------------------


def _log_prior(state: EMState, cfg: _Config) -> float:
    """Log prior density up to a constant (see the module docstring)."""
    K, D = state.means.shape
    lp = 0.0
    if cfg.alpha is not None and np.any(cfg.alpha != 1.0):
        lp += float(np.sum((cfg.alpha - 1.0) * np.log(state.weights)))
    half_logdet = _half_logdet(state.chol)  # 0.5 log|Sigma_k|
    inv = None
    if cfg.kappa > 0:
        inv = _inverse_factors(state.chol)
        z = np.einsum("kij,kj->ki", inv, state.means - cfg.m0)
        lp += float(
            np.sum(
                -0.5 * D * _LOG_2PI
                + 0.5 * D * math.log(cfg.kappa)
                - half_logdet
                - 0.5 * cfg.kappa * np.square(z).sum(axis=1)
            )
        )
    if not cfg.has_cov_prior:
        return lp
    if cfg.kind in ("full", "tied"):
        if inv is None:
            inv = _inverse_factors(state.chol)
        ks = range(K) if cfg.kind == "full" else range(1)
        for k in ks:
            trace = float(np.sum((inv[k] @ cfg.psi0) * inv[k]))  # tr(Psi0 Sigma_k^{-1})
            lp += -(cfg.nu0 + D + 1) * float(half_logdet[k]) - 0.5 * trace
    elif cfg.kind == "diag":
        var = np.square(np.diagonal(state.chol, axis1=1, axis2=2))
        lp += float(np.sum(-(cfg.a0 + 1.0) * np.log(var) - cfg.b0 / var))
    elif cfg.kind == "spherical":
        var = np.square(state.chol[:, 0, 0])
        lp += float(np.sum(-(cfg.a0 + 1.0) * np.log(var) - cfg.b0 / var))
    return lp


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _as_data(X) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"X must be 1-D (n,) or 2-D (n, D); got an array of shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X is empty: shape {X.shape}")
    finite = np.isfinite(X)
    if not finite.all():
        row, col = np.argwhere(~finite)[0]
        raise ValueError(
            f"X has a non-finite value ({X[row, col]}) at row {row}, column {col}; "
            "remove or impute missing values before fitting"
        )
    return np.ascontiguousarray(X)


def _config(kind, K, D, *, reg_covar, prior, known_sd, equal_weights, hard) -> _Config:
    if kind not in COVARIANCE_KINDS and kind != "known":
        raise ValueError(f"covariance must be one of {', '.join(COVARIANCE_KINDS)}; got {kind!r}")
    if known_sd is not None:
        kind = "known"
    p = MixturePrior() if prior is None else prior
    if not isinstance(p, MixturePrior):
        raise ValueError(f"prior must be a MixturePrior or None; got {type(p).__name__}")

    alpha = (
        np.broadcast_to(np.asarray(p.concentration, dtype=np.float64), (K,)).copy()
        if np.ndim(p.concentration) == 0
        else np.asarray(p.concentration, dtype=np.float64)
    )
    if alpha.shape != (K,):
        raise ValueError(
            f"prior concentration must be a scalar or have {K} entries; got shape {alpha.shape}"
        )
    if not np.all(np.isfinite(alpha)) or np.any(alpha < 1.0):
        raise ValueError(
            f"prior concentration must be >= 1 (the MAP weights are then inside the simplex); "
            f"got {alpha.tolist()}"
        )
    if equal_weights:
        if np.any(alpha != 1.0):
            raise ValueError("prior concentration has no effect with equal_weights=True; drop one")
        alpha = None

    m0 = np.asarray(p.mean, dtype=np.float64)
    m0 = np.full(D, float(m0)) if m0.ndim == 0 else m0
    if m0.shape != (D,) or not np.all(np.isfinite(m0)):
        raise ValueError(f"prior mean must be a scalar or {D} finite values; got {p.mean!r}")
    kappa = float(p.kappa)
    if not (np.isfinite(kappa) and kappa >= 0):
        raise ValueError(f"prior kappa must be >= 0 (0 = flat prior on the means); got {kappa}")

    iw = p.iw_dof is not None or p.iw_scale is not None
    ig = p.ig_shape is not None or p.ig_scale is not None
    nu0, psi0, a0, b0 = -(D + 1.0), np.zeros((D, D)), -1.0, np.zeros(D if kind == "diag" else ())
    if kind == "known" and (iw or ig):
        raise ValueError("a covariance prior has no effect with known_sd; drop iw_*/ig_*")
    if iw:
        if kind not in ("full", "tied"):
            raise ValueError(
                f"iw_dof/iw_scale (inverse-Wishart) apply to covariance 'full' or 'tied', not "
                f"{kind!r}; use ig_shape/ig_scale (inverse-gamma) for 'diag' or 'spherical'"
            )
        if p.iw_dof is None or p.iw_scale is None:
            raise ValueError("give both iw_dof and iw_scale for an inverse-Wishart prior")
        nu0 = float(p.iw_dof)
        if not nu0 > D - 1:
            raise ValueError(f"iw_dof must be > D - 1 = {D - 1}; got {nu0}")
        psi0 = np.asarray(p.iw_scale, dtype=np.float64)
        psi0 = psi0 * np.eye(D) if psi0.ndim == 0 else psi0
        if (
            psi0.shape != (D, D)
            or not np.allclose(psi0, psi0.T, rtol=0, atol=0)
            or not _is_pd(psi0)
        ):
            raise ValueError(
                f"iw_scale must be a positive scalar or a symmetric positive definite {D}x{D} "
                f"matrix; got {p.iw_scale!r}"
            )
    if ig:
        if kind not in ("diag", "spherical"):
            raise ValueError(
                f"ig_shape/ig_scale (inverse-gamma) apply to covariance 'diag' or 'spherical', "
                f"not {kind!r}; use iw_dof/iw_scale (inverse-Wishart) for 'full' or 'tied'"
            )
        if p.ig_shape is None or p.ig_scale is None:
            raise ValueError("give both ig_shape and ig_scale for an inverse-gamma prior")
        a0 = float(p.ig_shape)
        b0 = np.asarray(p.ig_scale, dtype=np.float64)
        if kind == "diag":
            b0 = np.full(D, float(b0)) if b0.ndim == 0 else b0
        if (
            not a0 > 0
            or b0.shape not in ((), (D,))
            or (kind == "spherical" and b0.ndim)
            or not np.all(b0 > 0)
        ):
            raise ValueError(
                f"ig_shape must be > 0 and ig_scale > 0 (a scalar, or {D} values for 'diag'); "
                f"got ig_shape={p.ig_shape!r}, ig_scale={p.ig_scale!r}"
            )
    has_cov_prior = iw or ig
    if reg_covar is None:
        reg = 0.0 if has_cov_prior else DEFAULT_REG_COVAR
    else:
        reg = float(reg_covar)
        if not (np.isfinite(reg) and reg >= 0):
            raise ValueError(f"reg_covar must be a finite number >= 0; got {reg_covar!r}")
    return _Config(kind, reg, alpha, m0, kappa, nu0, psi0, a0, b0, has_cov_prior, bool(hard))


def _state_from_covariances(weights, means, covs, kind: str) -> EMState:
    """Build a state from covariances in the natural shape of ``kind`` (as scikit-learn)."""
    K, D = means.shape
    covs = np.asarray(covs, dtype=np.float64)
    shapes = {"full": (K, D, D), "tied": (D, D), "diag": (K, D), "spherical": (K,)}
    if covs.shape != shapes[kind]:
        raise ValueError(
            f"init_covariances for covariance={kind!r} must have shape {shapes[kind]}; "
            f"got {covs.shape}"
        )
    if kind in ("diag", "spherical") and not np.all(covs > 0):
        raise ValueError("init_covariances must be positive")
    if kind == "full":
        chol = _cholesky(covs, "full")
    elif kind == "tied":
        chol = np.broadcast_to(_cholesky(covs[None], "full"), (K, D, D)).copy()
    elif kind == "diag":
        chol = _cholesky(covs, "diag")
    else:
        chol = np.sqrt(covs)[:, None, None] * np.eye(D)
    return EMState(weights, means, chol)


# --------------------------------------------------------------------------------------------
# Starts
# --------------------------------------------------------------------------------------------


def seed_centres(X: np.ndarray, K: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """K rows of ``X`` chosen one by one by their squared distance to the nearest row chosen.

    With ``rng``: k-means++ seeding (Arthur & Vassilvitskii 2007), the first row uniformly,
    each next one with probability proportional to that squared distance. Without:
    deterministic farthest-point seeding, the first row the farthest from the data mean, each
    next one the farthest from the rows chosen.

    Parameters
    ----------
    X : numpy.ndarray
        Data, shape ``(n, D)``.
    K : int
        Number of centres.
    rng : numpy.random.Generator, optional
        Source of the random choices; None for the deterministic seeding.

    Returns
    -------
    numpy.ndarray
        The chosen rows, shape ``(K, D)`` (a copy).
    """
    n = X.shape[0]
    if rng is None:
        first = int(np.argmax(np.square(X - X.mean(axis=0)).sum(axis=1)))
    else:
        first = int(rng.integers(n))
    chosen = [first]
    d2 = np.square(X - X[first]).sum(axis=1)
    for _ in range(1, K):
        if rng is None:
            nxt = int(np.argmax(d2))
        elif d2.sum() > 0:
            cdf = np.cumsum(d2)
            nxt = min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), n - 1)
        else:  # every row equals a chosen centre
            nxt = int(rng.integers(n))
        chosen.append(nxt)
        np.minimum(d2, np.square(X - X[nxt]).sum(axis=1), out=d2)
    return X[chosen]


def kmeans(X: np.ndarray, K: int, iterations: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic k-means: farthest-point seeding (:func:`seed_centres`), then Lloyd steps.

    It stops when the centres no longer move (``numpy.allclose``) or after ``iterations``
    steps. Used to name the components of a mixture the same way on the EM side and in the
    PyMC declaration, and to start the declaration's sampler.

    Parameters
    ----------
    X : numpy.ndarray
        Data, shape ``(n, D)``.
    K : int
        Number of clusters.
    iterations : int, default 50
        Most Lloyd steps.

    Returns
    -------
    centres : numpy.ndarray
        Shape ``(K, D)``, sorted by their first coordinate (then the next, on ties).
    labels : numpy.ndarray of int64
        The cluster of each row, in the sorted numbering.
    """
    X = np.asarray(X, dtype=np.float64)
    centres = seed_centres(X, K)
    for _ in range(iterations):
        new = lloyd_centres(*lloyd_sums(X, centres), centres)
        if np.allclose(new, centres):
            break
        centres = new
    centres = order_centres(centres)
    return centres, np.argmin(_sq_distances(X, centres), axis=1)


def _sq_distances(X: np.ndarray, centres: np.ndarray) -> np.ndarray:
    return np.sum((X[:, None, :] - centres[None]) ** 2, axis=2)


def lloyd_sums(X: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One Lloyd step's statistics of a block of rows: count and sum of rows per nearest centre.

    Statistics of disjoint blocks add up (the k-means of a Dask cluster sums them).

    Returns
    -------
    counts : numpy.ndarray
        Shape ``(K,)``.
    sums : numpy.ndarray
        Shape ``(K, D)``.
    """
    K = centres.shape[0]
    labels = np.argmin(_sq_distances(X, centres), axis=1)
    counts = np.bincount(labels, minlength=K).astype(np.float64)
    sums = np.zeros_like(centres, dtype=np.float64)
    np.add.at(sums, labels, X)
    return counts, sums


def lloyd_centres(counts: np.ndarray, sums: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """The next centres: the mean of each centre's rows; a centre without rows stays put."""
    safe = np.maximum(counts, 1.0)[:, None]
    return np.where(counts[:, None] > 0, sums / safe, centres)


def order_centres(centres: np.ndarray) -> np.ndarray:
    """Centres sorted by their first coordinate (then the next, on ties)."""
    return centres[np.lexsort(centres.T[::-1])]


class MatrixRows:
    """Rows held in memory as one matrix: what :func:`fit_em` asks of its data.

    This is the ``Rows`` protocol of the driver: ``n`` and ``D``, ``statistics(state,
    moments, hard)`` (the E step over every row, :class:`EMStats`), ``ptp()`` (each column's
    range), ``seed_centres(K, rng)`` (:func:`seed_centres`). :func:`fit_em` wraps an array in
    it; :class:`bayescheck.inference.scale.distributed.ClusterRows` implements the same protocol
    over the partitions of a Dask cluster, each partition one ``MatrixRows`` on a worker.

    Parameters
    ----------
    X : numpy.ndarray
        Shape ``(n, D)``, float64, finite (see :func:`fit_em`).
    batch_size : int, optional
        Rows per E-step batch.
    pool : optional
        Threads sharing the batches (internal).
    name, fingerprint : str
        Where the rows came from (a partition's file), for the caller's records.
    """

    def __init__(self, X: np.ndarray, *, batch_size: int | None = None, pool=None,
                 name: str = "", fingerprint: str = ""):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.batch_size = batch_size
        self.pool = pool
        self.name = name
        self.fingerprint = fingerprint

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

    @property
    def D(self) -> int:
        """Number of columns."""
        return int(self.X.shape[1])

    def statistics(self, state: EMState, moments: str, hard: bool) -> EMStats:
        """E step over every row at ``state`` (batches combined by addition)."""
        return _statistics(self.X, state, moments, hard, self.batch_size, self.pool)

    def ptp(self) -> np.ndarray:
        """Range (max - min) of every column."""
        return np.ptp(self.X, axis=0)

    def seed_centres(self, K: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """:func:`seed_centres` of the rows."""
        return seed_centres(self.X, K, rng)


def _start_from_centres(rows, centres, cfg: _Config, known_chol) -> EMState:
    """Hard-assign each row to its nearest centre; one M step gives weights and covariances."""
    K, D = centres.shape
    probe = EMState(np.full(K, 1.0 / K), centres, np.broadcast_to(np.eye(D), (K, D, D)).copy())
    stats = rows.statistics(probe, _moments_kind(cfg.kind), True)
    state = _m_step(stats, probe, cfg._replace(hard=True))
    if known_chol is not None:
        state = EMState(state.weights, state.means, known_chol)
    return state


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------


def _run(rows, state, cfg, *, max_iter, tol, history=(), on_step=None):
    """EM from ``state`` (after ``len(history)`` M steps whose objectives ``history`` holds).

    ``on_step(state, history)`` is called after each M step.
    """
    moments = _moments_kind(cfg.kind)
    n = rows.n
    history = list(history)
    converged = False
    n_iter = len(history)
    while True:
        stats = rows.statistics(state, moments, cfg.hard)
        obj = stats.loglik + _log_prior(state, cfg)
        history.append(obj)
        if len(history) > 1 and abs(history[-1] - history[-2]) < tol * n:
            converged = True
            break
        if n_iter >= max_iter:
            break
        state = _m_step(stats, state, cfg)
        n_iter += 1
        if on_step is not None:
            on_step(state, history)
    return state, stats.loglik, np.asarray(history), n_iter, converged


def fit_em(
    X,
    *,
    n_components: int,
    covariance: str = "full",
    max_iter: int = 100,
    tol: float = 1e-6,
    n_init: int = 1,
    seed: int | np.random.Generator | None = 0,
    init_means=None,
    init_weights=None,
    init_covariances=None,
    known_sd: float | None = None,
    equal_weights: bool = False,
    prior: MixturePrior | None = None,
    reg_covar: float | None = None,
    hard: bool = False,
    batch_size: int | None = None,
    n_threads: int | None = None,
    journal=None,
) -> EMResult:
    """Fit a Gaussian mixture by EM: maximum likelihood, or MAP when ``prior`` is given.

    Parameters
    ----------
    X : array_like of shape (n,) or (n, D), or rows
        Data, one row per observation; 1-D input is one feature. Or an object of the
        ``Rows`` protocol (:class:`MatrixRows`;
        :class:`bayescheck.inference.scale.distributed.ClusterRows`
        for rows held on the workers of a Dask cluster), whose own validation applies.
    n_components : int
        Number of components K (at most the number of rows).
    covariance : {"full", "diag", "spherical", "tied"}, default "full"
        Covariance structure (ignored when ``known_sd`` is given).
    max_iter : int, default 100
        Maximum number of M steps per start.
    tol : float, default 1e-6
        Stop when the objective changes by less than ``tol`` per observation between two
        iterations (scikit-learn's criterion on the mean log-likelihood). ``0`` runs exactly
        ``max_iter`` steps.
    n_init : int, default 1
        Number of k-means++ starts; the one with the highest final objective is kept.
    seed : int or numpy.random.Generator or None, default 0
        Seeds the k-means++ starts.
    init_means : array_like of shape (K, D) or (K,), optional
        Start from these means (one start; ``n_init`` must be 1). Unless ``init_weights`` /
        ``init_covariances`` are given, weights and covariances come from assigning every row
        to its nearest initial mean.
    init_weights : array_like of shape (K,), optional
        Starting weights (requires ``init_means``).
    init_covariances : array_like, optional
        Starting covariances in the natural shape of ``covariance`` (scikit-learn's): full
        (K, D, D), tied (D, D), diag (K, D), spherical (K,) (requires ``init_means``).
    known_sd : float, optional
        The source material's simplified model: one known sd shared by all components and
        dimensions (``Sigma_k = known_sd**2 I``); only means (and weights) are estimated.
    equal_weights : bool, default False
        Hold the weights at ``1/K``.
    prior : MixturePrior, optional
        Priors for MAP-EM (see the module docstring for the densities and the M step).
    reg_covar : float, optional
        Added to the diagonal of every covariance after each M step. Default ``1e-6``, or 0
        when ``prior`` has a covariance prior.
    hard : bool, default False
        Hard responsibilities (classification EM); with ``known_sd`` and ``equal_weights`` this
        is k-means.
    batch_size : int, optional
        Rows per E-step batch (memory and cache use only; the result does not depend on it
        beyond rounding). Default: about ``2**16 / (K * D)`` rows, within [1024, 65536].
    n_threads : int, optional
        Threads that share the batches of each E step (default: the number of cores, at most
        4). The result does not depend on it. While the fit runs, BLAS is held to one thread
        (:func:`.blas_threads.one_blas_thread`).
    journal : object, optional
        Keeps the progress of the fit so that an interrupted one continues where it was:
        ``journal.load()`` gives None (start afresh) or ``(starts, runs, current)`` saved
        before, and ``journal.save(starts, runs, current)`` is called with the starting states
        (:class:`EMState`, one per start), the finished runs (``(state, loglik, history,
        n_iter, converged)``) and the run in progress (``(state, history)`` after each M
        step, None between runs). A run continued from ``current`` performs the same
        operations on the same numbers as one that was not interrupted.

    Returns
    -------
    EMResult

    Raises
    ------
    ValueError
        Bad input: ``n_components`` larger than the number of rows, a non-finite value (its
        row and column are named), an unknown covariance kind, inconsistent initial values or
        priors, a constant column with ``reg_covar=0`` and no covariance prior, or a
        covariance that is not positive definite.
    """
    rows = X if hasattr(X, "statistics") else None
    if rows is None:
        X = _as_data(X)
        n, D = X.shape
    else:
        n, D = rows.n, rows.D
    K = n_components
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or K < 1:
        raise ValueError(f"n_components must be a positive integer; got {n_components!r}")
    K = int(K)
    if K > n:
        raise ValueError(
            f"n_components={K} is larger than the number of rows ({n}): every component "
            "needs at least one observation"
        )
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 0):
        raise ValueError(f"max_iter must be an integer >= 0; got {max_iter!r}")
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be a finite number >= 0; got {tol!r}")
    if not (isinstance(n_init, (int, np.integer)) and n_init >= 1):
        raise ValueError(f"n_init must be an integer >= 1; got {n_init!r}")
    if batch_size is not None and not (
        isinstance(batch_size, (int, np.integer)) and batch_size >= 1
    ):
        raise ValueError(f"batch_size must be an integer >= 1; got {batch_size!r}")
    if known_sd is not None:
        known_sd = float(known_sd)
        if not (np.isfinite(known_sd) and known_sd > 0):
            raise ValueError(f"known_sd must be a positive finite number; got {known_sd!r}")
    cfg = _config(
        covariance,
        K,
        D,
        reg_covar=reg_covar,
        prior=prior,
        known_sd=known_sd,
        equal_weights=equal_weights,
        hard=hard,
    )

    messages = []
    constant = np.flatnonzero((np.ptp(X, axis=0) if rows is None else rows.ptp()) == 0)
    if constant.size and cfg.kind != "known":
        if cfg.reg == 0 and not cfg.has_cov_prior:
            raise ValueError(
                f"column(s) {constant.tolist()} of X are constant: their variance would be 0; "
                "drop them, set reg_covar > 0 or give a covariance prior"
            )
        msg = (
            f"column(s) {constant.tolist()} of X are constant; their variance in every "
            f"component is held up only by reg_covar={cfg.reg:g} and the covariance prior"
        )
        messages.append(msg)
        warnings.warn(msg, UserWarning, stacklevel=2)

    if n_threads is None:
        n_threads = min(os.cpu_count() or 1, 4)
    if not (isinstance(n_threads, (int, np.integer)) and n_threads >= 1):
        raise ValueError(f"n_threads must be an integer >= 1; got {n_threads!r}")
    with contextlib.ExitStack() as stack:
        stack.enter_context(one_blas_thread())
        if rows is None:
            pool = stack.enter_context(_Pool(n_threads))
            rows = MatrixRows(X, batch_size=batch_size, pool=pool)
        return _fit(
            rows,
            K,
            cfg,
            messages,
            max_iter=max_iter,
            tol=tol,
            n_init=n_init,
            seed=seed,
            init_means=init_means,
            init_weights=init_weights,
            init_covariances=init_covariances,
            known_sd=known_sd,
            journal=journal,
        )


def _fit(
    rows,
    K,
    cfg,
    messages,
    *,
    max_iter,
    tol,
    n_init,
    seed,
    init_means,
    init_weights,
    init_covariances,
    known_sd,
    journal=None,
) -> EMResult:
    saved = None if journal is None else journal.load()
    if saved is None:
        starts = _starts(rows, K, cfg, n_init=n_init, seed=seed, init_means=init_means,
                         init_weights=init_weights, init_covariances=init_covariances,
                         known_sd=known_sd)
        runs, current = [], None
    else:
        starts, runs, current = saved
        runs = list(runs)
    for j in range(len(runs), len(starts)):
        state, history = current if current is not None else (starts[j], ())
        on_step = None
        if journal is not None:
            def on_step(st, h, done=tuple(runs)):
                journal.save(starts, list(done), (st, list(h)))
        runs.append(_run(rows, state, cfg, max_iter=max_iter, tol=tol, history=history,
                         on_step=on_step))
        current = None
        if journal is not None:
            journal.save(starts, list(runs), None)
    return _result(rows, runs, cfg, messages)


def _starts(rows, K, cfg, *, n_init, seed, init_means, init_weights, init_covariances,
            known_sd) -> list[EMState]:
    """The starting states of the runs: the given values, or k-means++ seeds."""
    D = rows.D
    known_chol = None
    if known_sd is not None:
        known_chol = np.broadcast_to(known_sd * np.eye(D), (K, D, D)).copy()

    starts = []
    if init_means is not None:
        if n_init != 1:
            raise ValueError(
                f"init_means gives one deterministic start; n_init must be 1, got {n_init}"
            )
        means0 = np.asarray(init_means, dtype=np.float64)
        if means0.ndim == 1 and D == 1:
            means0 = means0[:, None]
        if means0.shape != (K, D) or not np.all(np.isfinite(means0)):
            raise ValueError(
                f"init_means must be {K}x{D} finite values; got shape {np.shape(init_means)}"
            )
        if init_weights is not None and (init_covariances is not None or known_sd is not None):
            state = None  # everything is given: no assignment pass needed
        else:
            state = _start_from_centres(rows, means0, cfg, known_chol)
        weights = None if state is None else state.weights
        if init_weights is not None:
            weights = np.asarray(init_weights, dtype=np.float64)
            if (
                weights.shape != (K,)
                or np.any(weights <= 0)
                or not np.isclose(weights.sum(), 1.0, rtol=0, atol=1e-12)
            ):
                raise ValueError(
                    f"init_weights must be {K} positive numbers summing to 1; got {init_weights!r}"
                )
        if cfg.alpha is None:
            weights = np.full(K, 1.0 / K)
        if init_covariances is not None:
            if known_sd is not None:
                raise ValueError("init_covariances has no effect with known_sd; drop one")
            state = _state_from_covariances(weights, means0, init_covariances, cfg.kind)
        else:
            state = EMState(weights, means0, known_chol if state is None else state.chol)
        starts.append(state)
    elif init_weights is not None or init_covariances is not None:
        raise ValueError("init_weights and init_covariances need init_means")
    else:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        for _ in range(n_init):
            centres = rows.seed_centres(K, rng)
            starts.append(_start_from_centres(rows, centres, cfg, known_chol))
    return starts


def _result(rows, runs, cfg, messages) -> EMResult:
    """The best of the finished runs."""
    objectives = np.array([r[2][-1] for r in runs])
    best = int(np.argmax(objectives))
    state, ll, history, n_iter, converged = runs[best]
    restart_ll = []
    for r in runs:
        if cfg.hard:  # the runs recorded the classification log-likelihood
            restart_ll.append(rows.statistics(r[0], "none", False).loglik)
        else:
            restart_ll.append(r[1])
    cov = np.matmul(state.chol, state.chol.transpose(0, 2, 1))
    return EMResult(
        weights=state.weights,
        means=state.means,
        covariances=cov,
        covariance=cfg.kind,
        log_likelihood=float(restart_ll[best]),
        objective=float(objectives[best]),
        history=history,
        n_iter=int(n_iter),
        converged=bool(converged),
        restart_log_likelihoods=np.asarray(restart_ll),
        restart_objectives=objectives,
        best_restart=best,
        reg_covar=cfg.reg,
        messages=tuple(messages),
    )


# --------------------------------------------------------------------------------------------
# Evaluation at given parameters
# --------------------------------------------------------------------------------------------


def _state_from_full(weights, means, covs) -> EMState:
    means = np.asarray(means, dtype=np.float64)
    if means.ndim == 1:
        means = means[:, None]
    K, D = means.shape
    weights = np.asarray(weights, dtype=np.float64)
    covs = np.asarray(covs, dtype=np.float64)
    if covs.ndim == 1 and D == 1:
        covs = covs[:, None, None]
    if weights.shape != (K,) or covs.shape != (K, D, D):
        raise ValueError(
            f"weights (K,), means (K, D) and covariances (K, D, D) must agree; got "
            f"{weights.shape}, {means.shape}, {covs.shape}"
        )
    return EMState(weights, means, _cholesky(covs, "full"))


def log_likelihood(X, weights, means, covs, *, batch_size: int | None = None) -> float:
    """Total log-likelihood ``sum_i log sum_k pi_k N(x_i | mu_k, Sigma_k)``.

    Parameters
    ----------
    X : array_like of shape (n,) or (n, D)
    weights : array_like of shape (K,)
    means : array_like of shape (K, D) (or (K,) for 1-D data)
    covs : array_like of shape (K, D, D) (or (K,) variances for 1-D data)
    batch_size : int, optional
        Rows per batch (default as in :func:`fit_em`).

    Returns
    -------
    float
    """
    X = _as_data(X)
    state = _state_from_full(weights, means, covs)
    if state.means.shape[1] != X.shape[1]:
        raise ValueError(f"means have {state.means.shape[1]} columns, X has {X.shape[1]}")
    with one_blas_thread():
        return _statistics(X, state, "none", False, batch_size).loglik


def log_posterior(X, weights, means, covs, *, covariance: str = "full",
                  prior: MixturePrior | None = None, known_sd: float | None = None,
                  equal_weights: bool = False, batch_size: int | None = None) -> float:
    """What MAP-EM maximises, at any parameters: log-likelihood plus log prior.

    The same function, with the same constants, as :attr:`EMResult.objective` (and the
    ``history`` of :func:`fit_em`), so a value at other parameters (a posterior draw, say)
    compares directly with the objective at the EM estimate.

    Parameters
    ----------
    X : array_like of shape (n,) or (n, D)
    weights, means, covs : array_like
        As for :func:`log_likelihood` (full covariance matrices whatever ``covariance``).
    covariance : {"full", "diag", "spherical", "tied"}
        Which prior applies to the covariances (``tied`` and ``spherical`` read the first
        matrix / the first variance of each component).
    prior : MixturePrior, optional
        None for maximum likelihood (the log prior is then 0).
    known_sd, equal_weights : as for :func:`fit_em`.
    batch_size : int, optional
        Rows per batch.

    Returns
    -------
    float
    """
    X = _as_data(X)
    state = _state_from_full(weights, means, covs)
    K, D = state.means.shape
    cfg = _config(covariance, K, D, reg_covar=None, prior=prior, known_sd=known_sd,
                  equal_weights=equal_weights, hard=False)
    with one_blas_thread():
        loglik = _statistics(X, state, "none", False, batch_size).loglik
    return loglik + _log_prior(state, cfg)


#: A component is *near singular* when its variance in its thinnest direction is below this
#: fraction of the whole fitted mixture's variance in that direction (its sd below about 3 %
#: of the mixture's). Components of real data sit well above it (iris, wine, the breast-cancer
#: measurements, macrodata at K = 2-3: 1.4e-3 and more); a component that holds a few
#: points lying almost on a line or a plane, the degenerate winners of maximum likelihood,
#: falls orders of magnitude below it.
NEAR_SINGULAR_RATIO = 1e-3


def mixture_covariance(weights, means, covs) -> np.ndarray:
    """The covariance of the fitted mixture as a whole, ``(D, D)``.

    ``sum_k pi_k (Sigma_k + (mu_k - mu)(mu_k - mu)')`` with ``mu = sum_k pi_k mu_k``; at a
    maximum-likelihood fixed point of EM it is the data's own (``1/n``) covariance, plus the
    covariance floor.
    """
    w = np.asarray(weights, dtype=np.float64)
    mu = np.asarray(means, dtype=np.float64)
    covs = np.asarray(covs, dtype=np.float64)
    centred = mu - w @ mu
    return np.einsum("k,kij->ij", w, covs) + np.einsum("k,ki,kj->ij", w, centred, centred)


def near_singular_components(weights, means, covs, n_rows: float, *,
                             ratio: float = NEAR_SINGULAR_RATIO) -> list[dict]:
    """The components whose covariance is near singular, relative to the whole mixture's.

    For each component the smallest generalised eigenvalue ``r`` of ``(Sigma_k, T)``, with
    ``T`` :func:`mixture_covariance`: the least, over directions ``v``, of
    ``v' Sigma_k v / v' T v`` (computed as the smallest eigenvalue of ``L^-1 Sigma_k L^-T``,
    ``L`` the Cholesky factor of ``T``). It does not change when the features are rescaled or
    rotated, so a component thin only because two features are collinear in all the data is
    not flagged, while one whose points lie almost on a line that the rest of the data does
    not follow is. Components with ``r < ratio`` are reported.

    Parameters
    ----------
    weights, means, covs : array_like
        The estimate: shapes (K,), (K, D), (K, D, D).
    n_rows : float
        Rows of data (a component holds ``weight * n_rows`` of them).
    ratio : float
        The threshold (:data:`NEAR_SINGULAR_RATIO`).

    Returns
    -------
    list of dict
        Per flagged component: ``component`` (its index), ``rows`` (``weight * n_rows``),
        ``relative_variance`` (``r``), ``eigenvalues`` (of ``Sigma_k``, ascending) and
        ``condition_number`` (largest over smallest eigenvalue of ``Sigma_k``).
    """
    w = np.asarray(weights, dtype=np.float64)
    covs = np.asarray(covs, dtype=np.float64)
    inv = _inverse_factors(np.linalg.cholesky(mixture_covariance(w, means, covs))[None])[0]
    out = []
    for k, S in enumerate(covs):
        r = float(np.linalg.eigvalsh(inv @ S @ inv.T)[0])
        if not r < ratio:
            continue
        eig = np.linalg.eigvalsh(S)
        out.append({"component": k, "rows": float(w[k] * n_rows), "relative_variance": r,
                    "eigenvalues": eig.tolist(),
                    "condition_number": float(eig[-1] / eig[0]) if eig[0] > 0 else math.inf})
    return out


def responsibilities(X, result: EMResult) -> np.ndarray:
    """Posterior assignment probabilities ``gamma_ik`` at a fitted estimate.

    Parameters
    ----------
    X : array_like of shape (n,) or (n, D)
    result : EMResult

    Returns
    -------
    ndarray of shape (n, K)
        Soft responsibilities (also for a fit with ``hard=True``); rows sum to 1.
    """
    X = _as_data(X)
    state = _state_from_full(result.weights, result.means, result.covariances)
    wh = _whitener(state)
    n, b = X.shape[0], _auto_batch(wh.K, wh.D)
    out = np.empty((n, wh.K))
    spaces = _Workspaces()
    with one_blas_thread():
        for start in range(0, n, b):
            Xb = X[start : start + b]
            ws = spaces.get_for(wh.K, wh.D, Xb.shape[0])
            logp = _component_log_density(Xb, wh, ws)
            _normalise(logp, False, ws)
            out[start : start + b] = logp.T
    return out


def mixture_rows(X, weights, means, covs) -> tuple[np.ndarray, np.ndarray]:
    """Responsibilities and log density of each row at given parameters.

    Parameters
    ----------
    X : array_like of shape (n,) or (n, D)
    weights : array_like of shape (K,)
    means : array_like of shape (K, D) (or (K,) for 1-D data)
    covs : array_like of shape (K, D, D) (or (K,) variances for 1-D data)

    Returns
    -------
    responsibilities : ndarray of shape (n, K)
        ``pi_k N(x_i | mu_k, Sigma_k) / p(x_i)``; rows sum to 1.
    log_density : ndarray of shape (n,)
        ``log p(x_i) = log sum_k pi_k N(x_i | mu_k, Sigma_k)``.
    """
    X = _as_data(X)
    state = _state_from_full(weights, means, covs)
    if state.means.shape[1] != X.shape[1]:
        raise ValueError(f"means have {state.means.shape[1]} columns, X has {X.shape[1]}")
    wh = _whitener(state)
    n, b = X.shape[0], _auto_batch(wh.K, wh.D)
    resp = np.empty((n, wh.K))
    logdens = np.empty(n)
    spaces = _Workspaces()
    with one_blas_thread():
        for start in range(0, n, b):
            Xb = X[start : start + b]
            ws = spaces.get_for(wh.K, wh.D, Xb.shape[0])
            logp = _component_log_density(Xb, wh, ws)
            top = np.max(logp, axis=0)
            # _normalise overwrites the row maxima; keep them for the log density.
            _normalise(logp, False, ws)
            logdens[start : start + b] = top + ws.top
            resp[start : start + b] = logp.T
    return resp, logdens


#: Up to this many components :func:`match_components` tries every permutation (5040 at 7).
MAX_ENUMERATED_MATCH = 7


def match_components(means: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The permutation of ``means`` closest to ``reference``: ``perm[k]`` plays ``reference[k]``.

    Minimises ``sum_k |means[perm[k]] - reference[k]|^2``, the assignment problem that
    ``scipy.optimize.linear_sum_assignment`` solves. Up to :data:`MAX_ENUMERATED_MATCH`
    components every permutation is scored instead (importing ``scipy.optimize`` costs about
    0.3 s of CPU here, more than a whole small fit); when the best is not ahead of the next
    by far more than rounding, or with more components, ``linear_sum_assignment`` decides,
    so both give the same permutation.

    Parameters
    ----------
    means, reference : numpy.ndarray
        Shape (K, D) each.

    Returns
    -------
    numpy.ndarray
        Integer array (K,).
    """
    means = np.asarray(means, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    cost = np.sum((means[None, :, :] - reference[:, None, :]) ** 2, axis=-1)  # [k, j]
    k = len(reference)
    if k <= MAX_ENUMERATED_MATCH:
        perms = np.array(list(itertools.permutations(range(k))), dtype=np.int64)
        totals = cost[np.arange(k), perms].sum(axis=1)
        first, second = (np.partition(totals, 1)[:2] if len(totals) > 1 else
                         (totals[0], np.inf))
        if second - first > 1e-8 * k * max(float(cost.max()), np.finfo(np.float64).tiny):
            return perms[int(np.argmin(totals))]
    from scipy.optimize import linear_sum_assignment
    return linear_sum_assignment(cost)[1].astype(np.int64)
