"""Sparse Bayesian learning (automatic relevance determination) in pure numpy.

Model::

    y = X w + eps,   eps ~ N(0, sigma2 I),   w_i ~ N(0, 1 / alpha_i).

Given the hyperparameters ``(alpha, sigma2)`` the posterior of ``w`` is Gaussian with
``Sigma = (X'X / sigma2 + diag(alpha))^-1`` and ``mu = Sigma X'y / sigma2``; weights with
``alpha_i = inf`` are exactly zero and are left out. The hyperparameters maximise the
evidence ``log N(y | 0, C)``, ``C = sigma2 I + X diag(1/alpha) X'`` (type-II maximum
likelihood). Three ways of doing that are offered by :func:`fit_sbl`:

``"fast"`` (default)
    The fast marginal-likelihood algorithm of M. E. Tipping and A. C. Faul, "Fast marginal
    likelihood maximisation for sparse Bayesian models", Proc. 9th Int. Workshop on AI and
    Statistics (AISTATS), 2003. The evidence separates in one weight ``i`` as
    ``L(alpha) = L(alpha_-i) + l(alpha_i)`` with
    ``l(a) = 0.5 * (log a - log(a + s_i) + q_i**2 / (a + s_i))``, where the *sparsity*
    and *quality* factors ``s_i = a S_i / (a - S_i)``, ``q_i = a Q_i / (a - S_i)``
    (``S_i = x_i' C^-1 x_i``, ``Q_i = x_i' C^-1 y``) do not depend on ``alpha_i``. Its
    maximiser is ``alpha_i = s_i**2 / theta_i`` when ``theta_i = q_i**2 - s_i > 0`` and
    ``alpha_i = inf`` otherwise. Every iteration takes the single action (add a column,
    re-estimate an active one, delete an active one) with the largest evidence gain, read
    off ``s, q`` of all ``M`` columns. As in the paper's appendix, the posterior covariance
    ``Sigma`` of the ``k`` active weights, their mean and the factors ``S, Q`` of every
    column are then updated by rank-one corrections, ``O(M k + k^2)`` per action
    (``O(nnz(X) + k^2)`` for a sparse design) instead of ``O(M k^2 + k^3)`` for
    recomputing them (:class:`_FastIncremental`). They are recomputed from a fresh Cholesky
    factor when the noise variance changes, after at most a few hundred updates, and
    whenever an update loses positive definiteness. The noise variance, when estimated, is
    re-estimated (MacKay's rule) after an action whenever that gains more evidence than the
    action did, whenever the state is due to be recomputed anyway (then once, at the new
    noise), and at the basis's fixed point; on small problems, where a recomputation costs
    about as much as an action, after every action. Memory is ``O(M k + k^2)`` (``X' X_A``
    and ``Sigma``); nothing ``M x M``.

    One run of this coordinate ascent stops at the first local maximum it meets, and the
    evidence has many (different supports). On designs with ``M < N`` (up to
    ``FULL_START_MAX_COLUMNS``) the default (``starts="auto"``) therefore runs it twice,
    from the empty model and from the full model after a few EM steps, and keeps the higher
    (``SBLResult.starts`` lists both). That is the best of two local maxima, not a proof of
    the global one.
``"em"``
    Expectation-maximisation with ``w`` as the latent variable:
    ``alpha_i = 1 / (mu_i**2 + Sigma_ii)`` and, when the noise is estimated,
    ``sigma2 = (||y - X mu||^2 + sigma2 * sum(gamma)) / N`` (the exact M-step, so the
    evidence never decreases).
``"mackay"``
    MacKay's fixed point ``alpha_i = gamma_i / mu_i**2`` with
    ``gamma_i = 1 - alpha_i Sigma_ii`` and ``sigma2 = ||y - X mu||^2 / (N - sum(gamma))``.

Pruning (all methods) uses quantities that do not change when a column is rescaled. The fast
method deletes column ``i`` exactly when ``theta_i <= 0`` (its evidence-optimal precision
given the others is infinite). EM and MacKay only move ``alpha`` towards infinity, so a weight
is removed when ``theta_i <= 0`` *and* it is already switched off to within ``prune``:
``gamma_i = s_i / (alpha_i + s_i) < prune`` (``gamma_i`` is the fraction of the weight
determined by the data; it is dimensionless). Removing a weight with ``theta_i <= 0`` never
lowers the evidence, which keeps EM's evidence non-decreasing. All-zero columns are never
relevant.

Numerics: float64; Cholesky factors and triangular solves (never an explicit inverse);
log-determinants from the Cholesky diagonal; one factorisation per evaluated posterior; the
``k x k`` precision form when ``k <= N`` and the ``N x N`` (Woodbury) form
``C = sigma2 I + X_A A^-1 X_A'`` when there are more active weights than rows; ``X'y`` and the
column norms are computed once. ``X`` may be a dense array or a ``scipy.sparse`` matrix.
EM and MacKay start with all M weights in the model (``X'X`` once when ``M <= N``, else the
N x N form), so their first iterations cost ``O(M^2)`` or ``O(N M)`` memory; only the fast
method stays at ``O(N k + M k + k^2)`` throughout, which is why it is the default.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = [
    "METHODS",
    "RELEVANCE_WORDS",
    "resolve_relevance_threshold",
    "ARDPosterior",
    "SBLResult",
    "SBLState",
    "SBLInfo",
    "ard_posterior",
    "ard_log_evidence",
    "ard_optimality",
    "fit_sbl",
    "SBLOptimality",
    "SBLStart",
    "STARTS",
]

METHODS = ("fast", "em", "mackay")
#: The words ``relevance_threshold`` accepts besides a number >= 1.
RELEVANCE_WORDS = ("auto", "ric")
#: The values of :func:`fit_sbl`'s ``starts``.
STARTS = ("auto", "empty")
_LOG_2PI = math.log(2.0 * math.pi)


# --------------------------------------------------------------------------- results


class ARDPosterior(NamedTuple):
    """Gaussian posterior of ``w`` given fixed ``(alpha, noise_var)``.

    Attributes
    ----------
    mean : ndarray, shape (M,)
        Posterior mean; exactly 0 where ``alpha`` is infinite.
    cov : ndarray, shape (k, k)
        Posterior covariance of the weights listed in ``relevant`` (finite ``alpha``).
    relevant : ndarray of int, shape (k,)
        Sorted indices of the weights with finite ``alpha``.
    log_evidence : float
        ``log N(y | 0, noise_var I + X diag(1/alpha) X')``.
    """

    mean: np.ndarray
    cov: np.ndarray
    relevant: np.ndarray
    log_evidence: float

    def sd(self) -> np.ndarray:
        """Posterior standard deviations, shape (M,), 0 for pruned weights."""
        out = np.zeros_like(self.mean)
        out[self.relevant] = np.sqrt(np.diag(self.cov))
        return out

    def frozen(self):
        """Return the posterior of the relevant weights as a frozen ``scipy.stats`` MVN."""
        from scipy.stats import multivariate_normal  # costly: on first use

        return multivariate_normal(mean=self.mean[self.relevant], cov=self.cov)


class SBLStart(NamedTuple):
    """One start of the fast method and the local maximum it reached.

    Attributes
    ----------
    start : str
        ``"empty"``: the empty model, columns added one at a time; ``"full_em"``: every
        column in the model after a few EM steps, columns deleted and re-estimated;
        ``"given"``: the caller's ``alpha_init``.
    log_evidence : float
        Log evidence at the end of the run.
    objective : float
        What the run maximised: the log evidence minus ``(t - 1 - log t) / 2`` nats per kept
        weight (``t`` the relevance threshold; equal to ``log_evidence`` at ``t = 1``).
    n_relevant : int
        Weights kept.
    n_iter : int
        Actions taken.
    converged : bool
        Whether the run met its convergence criterion before ``max_iter``.
    """

    start: str
    log_evidence: float
    objective: float
    n_relevant: int
    n_iter: int
    converged: bool


class SBLResult(NamedTuple):
    """Result of :func:`fit_sbl`.

    Attributes
    ----------
    alpha : ndarray, shape (M,)
        Estimated prior precisions; ``np.inf`` for pruned weights.
    noise_var : float
        Estimated (or the given, fixed) noise variance ``sigma2``.
    mean : ndarray, shape (M,)
        Posterior mean of ``w`` given the estimates; 0 for pruned weights.
    relevant : ndarray of int, shape (k,)
        Sorted indices of the weights kept (finite ``alpha``).
    cov : ndarray, shape (k, k)
        Posterior covariance over ``relevant`` only.
    log_evidence : ndarray, shape (n_iter + 1,)
        Log evidence of the initial state and after every iteration.
    n_iter : int
        Number of iterations that changed the state.
    converged : bool
        Whether the convergence criterion was met before ``max_iter``.
    method : str
        The method used.
    starts : tuple of SBLStart
        The fast method: every start run, in the order run; the result is the one with the
        highest ``objective`` (its ``log_evidence``, ``n_iter`` and ``converged`` are those
        above). Empty for EM and MacKay.
    """

    alpha: np.ndarray
    noise_var: float
    mean: np.ndarray
    relevant: np.ndarray
    cov: np.ndarray
    log_evidence: np.ndarray
    n_iter: int
    converged: bool
    method: str
    starts: tuple[SBLStart, ...] = ()

    def posterior(self) -> ARDPosterior:
        """Return the Gaussian posterior of ``w`` at the estimates (no refit)."""
        return ARDPosterior(self.mean, self.cov, self.relevant, float(self.log_evidence[-1]))


class _Post(NamedTuple):
    """Posterior on an active set, in the order of ``idx`` (internal)."""

    idx: np.ndarray  # active column indices (any order)
    mean: np.ndarray  # (k,)
    cov_diag: np.ndarray  # (k,)
    resid2: float  # ||y - X_A mean||^2
    log_evidence: float
    chol: np.ndarray | None  # lower Cholesky of the k x k precision (k-space form only)


class SBLState(NamedTuple):
    """State carried between iterations.

    Attributes
    ----------
    alpha : ndarray, shape (M,)
        Current precisions (``inf`` = not in the model).
    noise_var : float
        Current noise variance.
    post : _Post
        Posterior on the active set at ``(alpha, noise_var)``.
    xtx_active : ndarray, shape (M, k) or None
        ``X' X_A`` for the active columns, in the order of ``post.idx`` (fast method only).
    """

    alpha: np.ndarray
    noise_var: float
    post: _Post
    xtx_active: np.ndarray | None


class SBLInfo(NamedTuple):
    """Diagnostics of one iteration.

    Attributes
    ----------
    log_evidence : float
        Log evidence after the step.
    max_dlog_alpha : float
        Largest ``|log(alpha_new / alpha_old)|`` over weights active before and after.
    dlog_noise : float
        ``|log(noise_new / noise_old)|``.
    action : str
        What the step did: ``"update"``, ``"add"``, ``"delete"``, ``"reestimate"``, ``"none"``.
    n_pruned : int
        Number of weights removed in this step.
    converged : bool
        True when the step found the fixed point and changed nothing.
    """

    log_evidence: float
    max_dlog_alpha: float
    dlog_noise: float
    action: str
    n_pruned: int
    converged: bool


# --------------------------------------------------------------------------- problem


class _Problem(NamedTuple):
    X: np.ndarray | sp.csc_array
    y: np.ndarray
    xty: np.ndarray  # (M,)
    yty: float
    colnorm2: np.ndarray  # (M,)
    usable: np.ndarray  # (M,) bool: column is not all-zero
    n: int
    m: int
    noise_fixed: bool
    # X holds the caller's column j times 2**-shift[j], y the caller's y times 2**-yshift,
    # so the weights are the caller's times 2**wshift, wshift = shift - yshift
    wshift: np.ndarray  # (M,) int
    yshift: int
    colmax: np.ndarray  # (M,) the caller's largest |x| per column
    ymax: float  # the caller's largest |y|


def _issparse(x) -> bool:
    """``scipy.sparse.issparse`` without importing scipy.sparse on the dense path.

    No sparse array can exist before that module is loaded, so a dense fit never loads it.
    """
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(x)


def _as_design(X, name="X"):
    if _issparse(X):
        import scipy.sparse as sp
        Xc = sp.csc_array(X, dtype=np.float64)
        if Xc.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {Xc.shape}")
        if not np.all(np.isfinite(Xc.data)):
            raise ValueError(f"{name} must contain only finite values")
        return Xc
    Xd = np.asarray(X, dtype=np.float64)
    if Xd.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (N, M), got shape {Xd.shape}")
    if not np.all(np.isfinite(Xd)):
        raise ValueError(f"{name} must contain only finite values")
    return Xd


def _problem(X, y, noise_fixed) -> _Problem:
    Xc = _as_design(X)
    n, m = Xc.shape
    yv = np.asarray(y, dtype=np.float64)
    if yv.ndim == 2 and 1 in yv.shape:
        yv = yv.ravel()
    if yv.ndim != 1 or yv.shape[0] != n:
        raise ValueError(
            f"y must have shape ({n},) to match X with {n} rows, got shape {np.shape(y)}"
        )
    if not np.all(np.isfinite(yv)):
        raise ValueError("y must contain only finite values")
    if n < 1 or m < 1:
        raise ValueError(f"X must have at least one row and one column, got shape {Xc.shape}")
    Xc, shift, colmax = _unit_columns(Xc)
    ymax = float(np.max(np.abs(yv)))
    yshift = int(np.frexp(ymax)[1])
    yv = np.ldexp(yv, -yshift)
    if _issparse(Xc):
        xty = np.asarray(Xc.T @ yv, dtype=np.float64).ravel()
        colnorm2 = np.asarray(Xc.multiply(Xc).sum(axis=0), dtype=np.float64).ravel()
    else:
        xty = Xc.T @ yv
        colnorm2 = np.einsum("ij,ij->j", Xc, Xc)
    usable = colmax > 0.0
    return _Problem(Xc, yv, xty, float(yv @ yv), colnorm2, usable, n, m, noise_fixed,
                    shift - yshift, yshift, colmax, ymax)


def _unit_columns(Xc):
    """Every column scaled by a power of two to a largest ``|x|`` in ``[0.5, 1)``.

    Type-II ML is equivariant to the units of the columns and of ``y`` (``x_j c`` gives
    ``w_j / c`` and ``alpha_j c^2``), but float64 is not: squares of values below about
    1e-154 underflow and fourth powers of values above about 1e77 overflow. A power of two
    changes no digit, so the fit runs on columns (and a ``y``) of unit size and
    :func:`_to_caller_units` moves the answer back exactly. All-zero columns keep shift 0.

    Returns
    -------
    tuple
        ``(X scaled, shift, colmax)``: column ``j`` of the result is column ``j`` of ``Xc``
        times ``2**-shift[j]``; ``colmax`` the largest ``|x|`` of each column of ``Xc``.
    """
    if _issparse(Xc):
        colmax = np.asarray(abs(Xc).max(axis=0).toarray(), dtype=np.float64).ravel()
    else:
        colmax = np.max(np.abs(Xc), axis=0) if Xc.shape[0] else np.zeros(Xc.shape[1])
    shift = np.frexp(colmax)[1].astype(np.intp)  # colmax = mantissa * 2**shift, 0 -> 0
    if _issparse(Xc):
        import scipy.sparse as sp

        cols = np.repeat(np.arange(Xc.shape[1]), np.diff(Xc.indptr))
        scaled = sp.csc_array((np.ldexp(Xc.data, -shift[cols]), Xc.indices, Xc.indptr),
                              shape=Xc.shape)
        return scaled, shift, colmax
    return np.ldexp(Xc, -shift), shift, colmax


def _to_unit_alpha(prob: _Problem, alpha: np.ndarray) -> np.ndarray:
    """Precisions on the unit-size problem from the caller's: ``alpha_j 2**(-2 wshift_j)``."""
    return np.ldexp(alpha, -2 * prob.wshift)


def _to_unit_noise(prob: _Problem, noise_var: float) -> float:
    """The noise variance on the unit-size problem from the caller's (``2**(-2 t)``).

    Raises
    ------
    ValueError
        When it is not a normal float64 number there (a noise variance below about 1e-308
        times ``y``'s squared size, or that much above it).
    """
    unit = float(np.ldexp(noise_var, -2 * prob.yshift))
    if not np.finfo(np.float64).tiny <= unit < math.inf:
        raise ValueError(f"noise_var {noise_var!r} is beyond float64's range relative to y's "
                         f"size (largest |y| = {prob.ymax:.3g})")
    return unit


def _log_evidence_offset(prob: _Problem) -> float:
    """The caller's log evidence minus that of the unit-size ``y`` (the Jacobian)."""
    return -prob.n * prob.yshift * math.log(2.0)


def _to_caller_units(prob: _Problem, alpha, mean, relevant, cov, noise_var=None):
    """``(alpha, mean, cov, noise_var)`` of the unit-size problem in the caller's units.

    The fit ran on ``x'_j = x_j 2**-shift_j`` and ``y' = y 2**-t``, so with
    ``wshift_j = shift_j - t``: ``w_j = w'_j 2**-wshift_j``, ``alpha_j = alpha'_j
    2**(2 wshift_j)``, ``cov_ij = cov'_ij 2**-(wshift_i + wshift_j)``, ``sigma2 = sigma2'
    2**(2 t)``: exact, powers of two.

    Raises
    ------
    OutOfRange
        When a kept weight's precision, mean or variance, or the noise variance, is beyond
        float64's normal range in the caller's units (a column or a target of values so small,
        or so large, that the answer's squares are not normal float64 numbers); a column is
        named by its index.
    """
    from .errors import OutOfRange

    ws = prob.wshift[relevant]
    alpha = np.ldexp(alpha, 2 * prob.wshift)
    mean = np.ldexp(mean, -prob.wshift)
    cov = np.ldexp(cov, -(ws[:, None] + ws[None, :]))
    tiny = np.finfo(np.float64).tiny
    var = np.diagonal(cov)
    lost = ~(np.isfinite(alpha[relevant]) & (alpha[relevant] >= tiny)
             & np.isfinite(mean[relevant]) & np.isfinite(var) & (var >= tiny)
             & np.all(np.isfinite(cov), axis=0))
    if lost.any():
        pos = int(np.flatnonzero(lost)[0])
        j = int(relevant[pos])
        raise OutOfRange(
            f"its weight's prior precision alpha ({alpha[j]:.3g}) or posterior variance "
            f"({var[pos]:.3g}) is beyond float64's range: the weight is in units of y / x "
            f"(largest |x| = {prob.colmax[j]:.3g}, largest |y| = {prob.ymax:.3g}) and its "
            f"precision in their square; rescale the column or the target, for example by a "
            f"power of ten", column=j)
    if noise_var is None:
        return alpha, mean, cov
    noise_var = float(np.ldexp(noise_var, 2 * prob.yshift))
    if not tiny <= noise_var < math.inf:
        raise OutOfRange(
            f"the noise variance ({noise_var:.3g}) is beyond float64's range: the target's "
            f"values are too {'small' if prob.ymax < 1.0 else 'large'} (largest |y| = "
            f"{prob.ymax:.3g}); rescale the target, for example by a power of ten")
    return alpha, mean, cov, noise_var


def _columns(prob: _Problem, idx) -> np.ndarray:
    """Dense N x k copy of the columns ``idx``."""
    if _issparse(prob.X):
        return prob.X[:, idx].toarray()
    return prob.X[:, idx]


def _xt_times(prob: _Problem, v: np.ndarray) -> np.ndarray:
    return np.asarray(prob.X.T @ v, dtype=np.float64).ravel()


# --------------------------------------------------------------------------- posterior


def _posterior(prob: _Problem, idx, alpha_a, noise_var, gram=None, want_cov=False, kspace=None):
    """Posterior on active columns ``idx`` (order kept) at ``(alpha_a, noise_var)``.

    Uses the k x k precision ``P = X_A'X_A / sigma2 + diag(alpha_a)`` when ``k <= N`` and the
    N x N covariance ``C = sigma2 I + X_A diag(1/alpha_a) X_A'`` otherwise (``kspace`` forces
    the choice). Returns ``(_Post,
    cov)`` with ``cov`` the k x k posterior covariance when ``want_cov`` (else None).
    """
    n = prob.n
    idx = np.asarray(idx, dtype=np.intp)
    k = idx.size
    beta = 1.0 / noise_var
    if k == 0:
        log_ev = -0.5 * (n * _LOG_2PI + n * math.log(noise_var) + beta * prob.yty)
        post = _Post(idx, np.zeros(0), np.zeros(0), prob.yty, log_ev, np.zeros((0, 0)))
        return post, (np.zeros((0, 0)) if want_cov else None)
    from scipy.linalg import cho_solve, cholesky, solve_triangular

    xa = _columns(prob, idx)
    xty_a = prob.xty[idx]
    if kspace or (kspace is None and k <= n):
        g = gram if gram is not None else xa.T @ xa
        prec = beta * g
        prec[np.diag_indices(k)] += alpha_a
        chol = cholesky(prec, lower=True, check_finite=False)
        mean = beta * cho_solve((chol, True), xty_a, check_finite=False)
        linv = solve_triangular(chol, np.eye(k), lower=True, check_finite=False)
        cov_diag = np.einsum("ij,ij->j", linv, linv)
        resid = prob.y - xa @ mean
        resid2 = float(resid @ resid)
        logdet_prec = 2.0 * np.sum(np.log(np.diag(chol)))
        log_ev = -0.5 * (
            n * _LOG_2PI
            + n * math.log(noise_var)
            - np.sum(np.log(alpha_a))
            + logdet_prec
            + beta * resid2
            + float(np.sum(alpha_a * mean**2))
        )
        cov = (linv.T @ linv) if want_cov else None
        return _Post(idx, mean, cov_diag, resid2, float(log_ev), chol), cov
    # Woodbury / n-space form: more active weights than rows
    inv_a = 1.0 / alpha_a
    c = (xa * inv_a) @ xa.T
    c[np.diag_indices(n)] += noise_var
    lc = cholesky(c, lower=True, check_finite=False)
    v = solve_triangular(lc, xa * inv_a, lower=True, check_finite=False)  # L^-1 X_A A^-1
    u = solve_triangular(lc, prob.y, lower=True, check_finite=False)  # L^-1 y
    mean = v.T @ u
    cov_diag = inv_a - np.einsum("ij,ij->j", v, v)
    resid = prob.y - xa @ mean
    log_ev = -0.5 * (n * _LOG_2PI + 2.0 * np.sum(np.log(np.diag(lc))) + float(u @ u))
    cov = None
    if want_cov:
        cov = -(v.T @ v)
        cov[np.diag_indices(k)] += inv_a
    return _Post(idx, mean, cov_diag, float(resid @ resid), float(log_ev), None), cov


def _check_alpha(alpha, m, name="alpha"):
    a = np.asarray(alpha, dtype=np.float64)
    if a.ndim == 0:
        a = np.full(m, float(a))
    if a.shape != (m,):
        raise ValueError(f"{name} must be a scalar or have shape ({m},), got shape {a.shape}")
    if np.any(np.isnan(a)) or np.any(a <= 0):
        raise ValueError(
            f"{name} must be > 0 (np.inf to exclude a weight), got min {np.nanmin(a)!r}"
        )
    return a


def _check_noise(noise_var, name="noise_var"):
    try:
        v = float(noise_var)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive float, got {noise_var!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be a positive finite float, got {noise_var!r}")
    return v


def ard_posterior(X, y, alpha, noise_var) -> ARDPosterior:
    """Gaussian posterior of ``w`` for fixed hyperparameters.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (N, M)
        Design matrix.
    y : array_like, shape (N,)
        Targets.
    alpha : float or array_like, shape (M,)
        Prior precisions, ``> 0``; ``np.inf`` removes a weight (its posterior is a point mass
        at 0).
    noise_var : float
        Noise variance ``sigma2 > 0``.

    Returns
    -------
    ARDPosterior
        ``mean`` (length M, 0 where ``alpha`` is infinite), ``cov`` over ``relevant`` (the
        finite-``alpha`` indices, sorted) and ``log_evidence``.
    """
    noise_var = _check_noise(noise_var)
    prob = _problem(X, y, True)
    a = _to_unit_alpha(prob, _check_alpha(alpha, prob.m))
    idx = np.flatnonzero(np.isfinite(a))
    post, cov = _posterior(prob, idx, a[idx], _to_unit_noise(prob, noise_var), want_cov=True)
    mean = np.zeros(prob.m)
    mean[idx] = post.mean
    _, mean, cov = _to_caller_units(prob, a, mean, idx, cov)
    return ARDPosterior(mean, cov, idx, post.log_evidence + _log_evidence_offset(prob))


def ard_log_evidence(X, y, alpha, noise_var) -> float:
    """Log evidence ``log N(y | 0, noise_var I + X diag(1/alpha) X')``.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (N, M)
        Design matrix.
    y : array_like, shape (N,)
        Targets.
    alpha : float or array_like, shape (M,)
        Prior precisions, ``> 0``; ``np.inf`` removes a weight.
    noise_var : float
        Noise variance ``sigma2 > 0``.

    Returns
    -------
    float
        The log marginal likelihood, computed from a Cholesky factor (k x k precision form
        when ``k <= N``, N x N covariance form otherwise).
    """
    noise_var = _check_noise(noise_var)
    prob = _problem(X, y, True)
    a = _to_unit_alpha(prob, _check_alpha(alpha, prob.m))
    idx = np.flatnonzero(np.isfinite(a))
    post, _ = _posterior(prob, idx, a[idx], _to_unit_noise(prob, noise_var))
    return post.log_evidence + _log_evidence_offset(prob)


class SBLOptimality(NamedTuple):
    """How far ``(alpha, sigma2)`` are from the conditions of an evidence maximum.

    Tipping and Faul (2003): with the sparsity and quality factors ``s_i, q_i`` of every
    column at the given hyperparameters, a maximum of the evidence over each ``alpha_i``
    alone has ``alpha_i = s_i**2 / (q_i**2 - s_i)`` for a kept weight (which needs
    ``q_i**2 > s_i``) and ``q_i**2 <= s_i`` for a pruned one; with a relevance threshold
    ``t`` (the penalised objective of :func:`fit_sbl`) the dividing line is ``q_i**2 / s_i``
    against ``t``. The noise variance is stationary when
    ``sigma2 = ||y - X mu||**2 / (N - sum(gamma))``, ``gamma_i = 1 - alpha_i Sigma_ii``.

    Attributes
    ----------
    s, q : ndarray, shape (M,)
        Sparsity and quality factors (NaN for all-zero columns).
    ratio : ndarray, shape (M,)
        ``q**2 / s``, the scale-free relevance of each column.
    alpha_opt : ndarray, shape (M,)
        The evidence-optimal ``alpha_i`` given the others (``inf``: pruned).
    violation : ndarray, shape (M,)
        Kept: ``|log(alpha_i / alpha_opt_i)|`` (``inf`` when the column should be pruned);
        pruned: ``max(0, log(ratio_i / t))`` (how far it is from staying pruned); 0 for
        all-zero columns and columns in the span of the kept ones (flat evidence).
    noise_opt : float
        The stationary noise variance at the given ``alpha``.
    noise_violation : float
        ``|log(sigma2 / noise_opt)|`` (0 when the noise is fixed, or at its floor with
        ``noise_opt`` below it).
    max_violation : float
        The largest of all of them.
    worst : int or None
        Index of the column with the largest violation, None when it is the noise.
    threshold : float
        ``t``.
    """

    s: np.ndarray
    q: np.ndarray
    ratio: np.ndarray
    alpha_opt: np.ndarray
    violation: np.ndarray
    noise_opt: float
    noise_violation: float
    max_violation: float
    worst: int | None
    threshold: float


def ard_optimality(X, y, alpha, noise_var, *, relevance_threshold: float | str = 1.0,
                   noise_estimated: bool = True) -> SBLOptimality:
    """Evaluate the Tipping-Faul optimality conditions at ``(alpha, noise_var)``.

    A deterministic certificate that a type-II maximum-likelihood fit stopped at a maximum
    of the evidence (or, with ``relevance_threshold`` above 1, of the penalised evidence that
    :func:`fit_sbl` maximises): every violation is 0 at an exact optimum; a converged fit
    leaves violations of the order of its ``tol``.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (N, M)
        Design matrix.
    y : array_like, shape (N,)
        Targets.
    alpha : array_like, shape (M,)
        Precisions, ``np.inf`` for pruned weights.
    noise_var : float
        Noise variance.
    relevance_threshold : float >= 1, "ric" or "auto", default 1.0
        As in :func:`fit_sbl`.
    noise_estimated : bool, default True
        False when the noise variance was fixed (its condition is then not checked).

    Returns
    -------
    SBLOptimality
    """
    noise_var = _check_noise(noise_var)
    prob = _problem(X, y, not noise_estimated)
    a = _to_unit_alpha(prob, _check_alpha(alpha, prob.m))
    noise_var = _to_unit_noise(prob, noise_var)
    relevance_threshold = resolve_relevance_threshold(
        relevance_threshold, prob.n, prob.m, noise_fixed=not noise_estimated)
    threshold = (max(2.0 * math.log(prob.m), 1.0) if relevance_threshold == "ric"
                 else float(relevance_threshold))
    idx = np.flatnonzero(np.isfinite(a))
    post, cov = _posterior(prob, idx, a[idx], noise_var, want_cov=True)
    beta = 1.0 / noise_var
    big_s = beta * prob.colnorm2.copy()
    big_q = beta * prob.xty.copy()
    if idx.size:
        b = np.column_stack([_xt_times(prob, c) for c in _columns(prob, idx).T])  # X'X_A
        big_s -= beta**2 * np.einsum("ij,jk,ik->i", b, cov, b)
        big_q -= beta**2 * (b @ (cov @ prob.xty[idx]))
    s, q = big_s, big_q
    if idx.size:
        s[idx], q[idx] = _active_sq(post, a[idx])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = q**2 / s
        theta = q**2 - s
        alpha_opt = np.where(ratio > threshold, s**2 / theta, np.inf)
        kept = np.isfinite(a)
        viol = np.where(kept, np.abs(np.log(a / alpha_opt)),
                        np.maximum(0.0, np.log(ratio / threshold)))
    # columns the evidence cannot see: all-zero, or in the span of the kept ones (S ~ 0)
    flat = ~prob.usable | (~kept & (s <= 1e-10 * beta * prob.colnorm2))
    viol = np.where(flat, 0.0, viol)
    ratio = np.where(prob.usable, ratio, np.nan)
    noise_opt, noise_viol = noise_var, 0.0
    if noise_estimated:
        gamma = 1.0 - a[idx] * post.cov_diag
        dof = prob.n - float(np.sum(gamma))
        noise_opt = post.resid2 / dof if dof > 0 else 0.0
        at_floor = noise_var <= _noise_floor(prob) * (1 + 1e-9) and noise_opt <= noise_var
        noise_viol = 0.0 if at_floor else (abs(math.log(noise_var / noise_opt))
                                           if noise_opt > 0 else math.inf)
    j = int(np.argmax(viol)) if viol.size else None
    if j is None or noise_viol >= viol[j]:
        worst, largest = None, noise_viol
    else:
        worst, largest = j, float(viol[j])
    # in the caller's units (ratio and violations are scale-free)
    s, q = np.ldexp(s, 2 * prob.wshift), np.ldexp(q, prob.wshift)
    alpha_opt = np.ldexp(alpha_opt, 2 * prob.wshift)
    noise_opt = float(np.ldexp(noise_opt, 2 * prob.yshift))
    return SBLOptimality(s=s, q=q, ratio=ratio, alpha_opt=alpha_opt, violation=viol,
                         noise_opt=float(noise_opt), noise_violation=float(noise_viol),
                         max_violation=float(largest), worst=worst, threshold=threshold)


# --------------------------------------------------------------------------- shared pieces


def _ell(alpha, s, q):
    """Evidence contribution ``l(alpha)`` of one weight; 0 at ``alpha = inf``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 0.5 * (-np.log1p(s / alpha) + q**2 / (alpha + s))
    return np.where(np.isinf(alpha), 0.0, out)


def _active_sq(post: _Post, alpha_a):
    """Sparsity and quality factors of active weights from the posterior diagonal."""
    s = 1.0 / post.cov_diag - alpha_a
    q = post.mean / post.cov_diag
    return s, q


def _prune_step(prob, alpha, noise_var, post, gram_of, prune):
    """Remove switched-off weights (theta <= 0 and gamma < prune); evidence never drops.

    Returns ``(alpha, post, n_pruned)``.
    """
    idx = post.idx
    if idx.size == 0:
        return alpha, post, 0
    a = alpha[idx]
    s, q = _active_sq(post, a)
    theta = q**2 - s
    gamma = 1.0 - a * post.cov_diag
    cand = (theta <= 0) & (gamma < prune)
    if not np.any(cand):
        return alpha, post, 0
    new_alpha = alpha.copy()
    new_alpha[idx[cand]] = np.inf
    keep = idx[~cand]
    new_post, _ = _posterior(prob, keep, new_alpha[keep], noise_var, gram=gram_of(keep))
    if new_post.log_evidence >= post.log_evidence:
        return new_alpha, new_post, int(cand.sum())
    # Joint removal lost evidence: remove only the single best one (gain -l(alpha) >= 0).
    gain = np.where(cand, -_ell(a, s, q), -np.inf)
    j = int(np.argmax(gain))
    new_alpha = alpha.copy()
    new_alpha[idx[j]] = np.inf
    keep = np.delete(idx, j)
    new_post, _ = _posterior(prob, keep, new_alpha[keep], noise_var, gram=gram_of(keep))
    return new_alpha, new_post, 1


def _gram_factory(prob: _Problem):
    """Return ``gram_of(idx)``: X_A'X_A from a once-computed X'X when that is cheap."""
    if prob.m <= prob.n and prob.m <= 4000:
        if _issparse(prob.X):
            full = (prob.X.T @ prob.X).toarray()
        else:
            full = prob.X.T @ prob.X
        return lambda idx: full[np.ix_(idx, idx)] if idx.size <= prob.n else None
    return lambda idx: None


# --------------------------------------------------------------------------- EM / MacKay


def _fixed_point_step(prob: _Problem, state: SBLState, *, rule: str, prune: float, gram_of):
    """One EM or MacKay update of ``(alpha, noise_var)`` followed by pruning."""
    post = state.post
    idx = post.idx
    a_old = state.alpha[idx]
    gamma = 1.0 - a_old * post.cov_diag
    if rule == "em":
        a_new = 1.0 / (post.mean**2 + post.cov_diag)
        noise = (post.resid2 + state.noise_var * float(np.sum(gamma))) / prob.n
    else:
        gamma_c = np.clip(gamma, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            a_new = gamma_c / post.mean**2
        a_new = np.where(post.mean == 0.0, np.inf, a_new)
        a_new = np.where(a_new <= 0.0, np.inf, a_new)
        dof = prob.n - float(np.sum(gamma_c))
        noise = post.resid2 / dof if dof > 0 else state.noise_var
    if prob.noise_fixed:
        noise = state.noise_var
    noise = max(noise, _noise_floor(prob))
    alpha = state.alpha.copy()
    alpha[idx] = a_new
    keep = idx[np.isfinite(a_new)]
    n_pruned = idx.size - keep.size
    new_post, _ = _posterior(prob, keep, alpha[keep], noise, gram=gram_of(keep))
    alpha, new_post, n_pr2 = _prune_step(prob, alpha, noise, new_post, gram_of, prune)
    n_pruned += n_pr2
    still = np.isfinite(alpha[idx]) & np.isfinite(a_new)
    dlog_a = float(np.max(np.abs(np.log(a_new[still] / a_old[still])), initial=0.0))
    dlog_n = abs(math.log(noise / state.noise_var))
    info = SBLInfo(new_post.log_evidence, dlog_a, dlog_n, "update", n_pruned, False)
    return SBLState(alpha, noise, new_post, None), info


def _y_scale(prob: _Problem) -> float:
    """Mean square of y; 1.0 for an all-zero y (nothing sets a scale then)."""
    return prob.yty / prob.n if prob.yty > 0 else 1.0


def _noise_floor(prob: _Problem) -> float:
    # keeps sigma2 > 0 when the active set interpolates y (relative to the data scale)
    return 1e-12 * _y_scale(prob)


# --------------------------------------------------------------------------- fast (Tipping-Faul)


def _fast_factors(prob: _Problem, state: SBLState):
    """Sparsity/quality factors ``s, q`` (length M) at the current state (k-space form)."""
    post = state.post
    beta = 1.0 / state.noise_var
    idx = post.idx
    if idx.size == 0:
        s = beta * prob.colnorm2
        q = beta * prob.xty
        return s, q, beta * prob.colnorm2
    from scipy.linalg import solve_triangular

    b = state.xtx_active  # (M, k)
    z = solve_triangular(post.chol, b.T, lower=True, check_finite=False)  # (k, M)
    big_s = beta * prob.colnorm2 - beta**2 * np.einsum("ij,ij->j", z, z)
    big_q = beta * (prob.xty - b @ post.mean)
    s = big_s.copy()
    q = big_q.copy()
    s_a, q_a = _active_sq(post, state.alpha[idx])
    s[idx] = s_a
    q[idx] = q_a
    return s, q, beta * prob.colnorm2


class _Choice(NamedTuple):
    """The Tipping-Faul action chosen from the sparsity / quality factors (internal)."""

    j: int  # column acted on; -1 = the basis is at its fixed point
    kind: str  # "add" | "reestimate" | "delete" | "none"
    alpha_new: float  # the new alpha_j (inf for a deletion)
    d_log_ev: float  # evidence change of the action at fixed noise
    max_dlog: float  # largest proposed |log alpha change| over the re-estimable weights
    basis_converged: bool


def _choose(prob: _Problem, alpha, idx, s, q, s_max, *, tol: float, threshold: float):
    """Pick one action (add / re-estimate / delete) from ``s, q`` of every column.

    A column is in the model only when ``r_i = q_i**2 / s_i > threshold``; this is coordinate
    ascent on ``L - c k`` with ``c = (threshold - 1 - log threshold) / 2`` nats per active
    weight (``threshold = 1``, ``c = 0``: exact evidence maximisation, ``r_i > 1`` is
    ``theta_i > 0``). The action with the largest (penalised) gain is taken; when only
    re-estimations remain, the one with the largest change in ``log alpha`` (their gains are
    second order in the change and can sit at round-off level).
    """
    theta = q**2 - s
    penalty = 0.5 * (threshold - 1.0 - math.log(threshold))
    active = np.zeros(prob.m, dtype=bool)
    active[idx] = True
    # Columns (nearly) in the span of the active set have S ~ 0 up to round-off: not addable.
    addable = ~active & prob.usable & (s > 1e-10 * s_max)
    gain = np.full(prob.m, -np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(addable, q**2 / np.where(addable, s, 1.0), 0.0)
        add = addable & (theta > 0) & (ratio > threshold)
        gain[add] = 0.5 * (ratio[add] - 1.0 - np.log(ratio[add])) - penalty
        a_act = alpha[idx]
        s_act, q_act, th_act = s[idx], q[idx], theta[idx]
        re = (th_act > 0) & (q_act**2 > threshold * s_act)
        a_re = np.where(re, s_act**2 / np.where(re, th_act, 1.0), np.inf)
        ell_old = _ell(a_act, s_act, q_act)
        gain_act = np.where(re, _ell(a_re, s_act, q_act) - ell_old, penalty - ell_old)
    gain[idx] = gain_act
    n_add = int(np.count_nonzero(add))
    n_del = int(np.count_nonzero(~re))
    dlog = np.abs(np.log(a_re[re] / a_act[re])) if np.any(re) else np.zeros(0)
    max_dlog = float(np.max(dlog, initial=0.0))
    if n_add == 0 and n_del == 0 and max_dlog < tol:
        return _Choice(-1, "none", math.nan, 0.0, max_dlog, True)
    if n_add or n_del:
        j = int(np.argmax(gain))
    else:
        j = int(idx[re][np.argmax(dlog)])
    if not active[j]:
        r = float(ratio[j])
        return _Choice(j, "add", float(s[j] ** 2 / theta[j]), 0.5 * (r - 1.0 - math.log(r)),
                       max_dlog, False)
    pos = int(np.flatnonzero(idx == j)[0])
    if re[pos]:
        d = float(_ell(a_re[pos], s_act[pos], q_act[pos]) - ell_old[pos])
        return _Choice(j, "reestimate", float(a_re[pos]), d, max_dlog, False)
    return _Choice(j, "delete", math.inf, -float(ell_old[pos]), max_dlog, False)


def _fast_step(prob: _Problem, state: SBLState, *, tol: float, threshold: float):
    """One Tipping-Faul action, every quantity recomputed from a fresh factorisation.

    The reference implementation of :class:`_FastIncremental` (which updates the same
    quantities by rank-one corrections): ``O(M k^2 + k^3)`` per action, then the noise
    update after every action. Kept for the tests.
    """
    alpha = state.alpha
    post = state.post
    idx = post.idx
    s, q, s_max = _fast_factors(prob, state)
    ch = _choose(prob, alpha, idx, s, q, s_max, tol=tol, threshold=threshold)
    if ch.basis_converged and prob.noise_fixed:
        return state, SBLInfo(post.log_evidence, ch.max_dlog, 0.0, "none", 0, True)
    j = ch.j
    new_alpha = alpha.copy()
    xtx = state.xtx_active
    order = idx
    action = ch.kind
    n_pruned = 0
    if action == "reestimate":
        new_alpha[j] = ch.alpha_new
    elif action == "delete":
        pos = int(np.flatnonzero(idx == j)[0])
        new_alpha[j] = np.inf
        order = np.delete(idx, pos)
        xtx = np.delete(xtx, pos, axis=1)
        n_pruned = 1
    elif action == "add":
        new_alpha[j] = ch.alpha_new
        col = _columns(prob, [j])[:, 0]
        xtx = np.column_stack([xtx, _xt_times(prob, col)])
        order = np.append(idx, j)
    gram = xtx[order]
    noise = state.noise_var
    new_post, _ = _posterior(prob, order, new_alpha[order], noise, gram=gram, kspace=True)
    dlog_n = 0.0
    if not prob.noise_fixed:
        gamma = 1.0 - new_alpha[order] * new_post.cov_diag
        dof = prob.n - float(np.sum(gamma))
        if dof > 0:
            noise_new = max(new_post.resid2 / dof, _noise_floor(prob))
            dlog_n = abs(math.log(noise_new / noise))
            if dlog_n > 0:
                noise = noise_new
                new_post, _ = _posterior(
                    prob, order, new_alpha[order], noise, gram=gram, kspace=True
                )
    if j < 0 and dlog_n < tol:
        return state, SBLInfo(post.log_evidence, ch.max_dlog, dlog_n, "none", 0, True)
    if j < 0:
        action = "noise"
    changed_a = ch.max_dlog if action == "reestimate" else 0.0
    info = SBLInfo(new_post.log_evidence, changed_a, dlog_n, action, n_pruned, False)
    return SBLState(new_alpha, noise, new_post, xtx), info


class _FastIncremental:
    """Tipping-Faul state updated by rank-one corrections (Tipping and Faul 2003, appendix).

    Holds, for the ``k`` active columns (in the order of ``order[:k]``), the posterior
    covariance ``Sigma`` (``k x k``, explicit: its rank-one updates are the algorithm), the
    mean ``mu``, ``B = X' X_A`` (``M x k``) and, for every column ``m``, the factors
    ``S_m = x_m' C^-1 x_m`` and ``Q_m = x_m' C^-1 y``. With ``beta = 1 / sigma2``, the
    ``M``-vector ``e = beta B Sigma_j`` (re-estimate, delete) or
    ``e = beta X' x_i - beta^2 B Sigma X_A' x_i`` (add) gives every update:

    re-estimate ``alpha_j -> a``, ``kappa = 1 / (Sigma_jj + 1 / (a - alpha_j))``:
        ``Sigma -= kappa Sigma_j Sigma_j'``, ``mu -= kappa mu_j Sigma_j``,
        ``S += kappa e^2``, ``Q += kappa mu_j e``;
    delete ``j`` (the limit ``a -> inf``, ``kappa = 1 / Sigma_jj``);
    add ``i`` with ``alpha_i = a``, ``Sigma_ii = 1 / (a + S_i)``, ``mu_i = Sigma_ii Q_i``,
    ``u = beta Sigma X_A' x_i``:
        ``Sigma -> [[Sigma + Sigma_ii u u', -Sigma_ii u], [-Sigma_ii u', Sigma_ii]]``,
        ``mu -> [mu - mu_i u, mu_i]``, ``S -= Sigma_ii e^2``, ``Q -= mu_i e``.

    Each action costs ``O(M k + k^2)`` (``B Sigma_j`` is computed as ``X' (X_A Sigma_j)``
    when that is cheaper, ``O(nnz(X))`` for a sparse design), against ``O(M k^2 + k^3)``
    for a recomputation. Everything is recomputed from a fresh Cholesky factor of the
    ``k x k`` precision (:meth:`refactor`) when the noise variance changes, every
    ``refactor_every`` actions (bounding the drift of the updates) and whenever an update
    leaves a diagonal element of ``Sigma`` outside ``(0, 1 / alpha_i]`` (lost positive
    definiteness). The log evidence is carried as the sum of the actions' exact gains and
    reset to the value of the fresh factor at every recomputation.
    """

    def __init__(self, prob: _Problem, alpha: np.ndarray, noise_var: float):
        self.prob = prob
        self.alpha = alpha.copy()
        self.noise_var = float(noise_var)
        idx = np.flatnonzero(np.isfinite(alpha))
        self.k = idx.size
        cap = min(prob.m, max(16, 2 * self.k))
        self.order = np.empty(cap, dtype=np.intp)
        self.order[: self.k] = idx
        self.B = np.empty((prob.m, cap), order="F")
        for c, j in enumerate(idx):
            self.B[:, c] = self._xt_column(j)
        self.sigma = np.empty((0, 0), order="F")  # exactly k x k, Fortran order (BLAS ger)
        self.mu = np.empty(cap)
        self.nnz = prob.X.nnz if _issparse(prob.X) else prob.n * prob.m
        self.n_refactor = 0
        self.refactor()

    # ------------------------------------------------------------------ pieces

    def _xt_column(self, j: int) -> np.ndarray:
        return _xt_times(self.prob, _columns(self.prob, [j])[:, 0])

    def _grow(self):
        cap = min(self.prob.m, 2 * self.order.size)
        k = self.k
        order, B, mu = self.order, self.B, self.mu
        self.order = np.empty(cap, dtype=np.intp)
        self.order[:k] = order[:k]
        self.B = np.empty((self.prob.m, cap), order="F")
        self.B[:, :k] = B[:, :k]
        self.mu = np.empty(cap)
        self.mu[:k] = mu[:k]

    def _b_times(self, v: np.ndarray) -> np.ndarray:
        """``B v = X' X_A v`` (length M), by whichever way costs fewer operations."""
        k = self.k
        if _issparse(self.prob.X) and 2 * self.nnz < self.prob.m * k:
            full = np.zeros(self.prob.m)
            full[self.order[:k]] = v
            return _xt_times(self.prob, np.asarray(self.prob.X @ full).ravel())
        return self.B[:, :k] @ v

    def active_mean(self) -> np.ndarray:
        """Posterior mean (length M, 0 for inactive columns)."""
        full = np.zeros(self.prob.m)
        full[self.order[: self.k]] = self.mu[: self.k]
        return full

    def resid2(self) -> float:
        """``||y - X mu||^2``."""
        r = self.prob.y - np.asarray(self.prob.X @ self.active_mean()).ravel()
        return float(r @ r)

    def refactor(self):
        """Recompute ``Sigma, mu, S, Q`` and the log evidence from a fresh Cholesky factor."""
        prob, k = self.prob, self.k
        beta = 1.0 / self.noise_var
        self.n_refactor += 1
        self.since_refactor = 0
        if k == 0:
            self.sigma = np.empty((0, 0), order="F")
            self.S = beta * prob.colnorm2
            self.Q = beta * prob.xty
            self.log_evidence = -0.5 * (
                prob.n * _LOG_2PI + prob.n * math.log(self.noise_var) + beta * prob.yty
            )
            return
        from scipy.linalg import cho_solve, cholesky, solve_triangular
        from scipy.linalg.lapack import dpotri

        idx = self.order[:k]
        b = self.B[:, :k]
        a = self.alpha[idx]
        prec = beta * b[idx]
        prec[np.diag_indices(k)] += a
        chol = cholesky(prec, lower=True, check_finite=False)
        # Sigma itself is what the rank-one updates act on: from the factor (LAPACK potri)
        inv, info = dpotri(chol, lower=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"potri failed (info {info})")
        low = np.tril(inv)
        self.sigma = np.asfortranarray(low + np.tril(low, -1).T)
        mu = beta * cho_solve((chol, True), prob.xty[idx], check_finite=False)
        self.mu[:k] = mu
        z = solve_triangular(chol, b.T, lower=True, check_finite=False)  # (k, M)
        self.S = beta * prob.colnorm2 - beta**2 * np.einsum("ij,ij->j", z, z)
        self.Q = beta * (prob.xty - b @ mu)
        self.log_evidence = -0.5 * (
            prob.n * _LOG_2PI
            + prob.n * math.log(self.noise_var)
            - float(np.sum(np.log(a)))
            + 2.0 * float(np.sum(np.log(np.diag(chol))))
            + beta * self.resid2()
            + float(np.sum(a * mu**2))
        )

    def factors(self):
        """``s, q`` of every column and ``beta ||x_m||^2`` (as :func:`_fast_factors`)."""
        k = self.k
        idx = self.order[:k]
        beta = 1.0 / self.noise_var
        s = self.S.copy()
        q = self.Q.copy()
        if k:
            d = np.diagonal(self.sigma)
            s[idx] = 1.0 / d - self.alpha[idx]
            q[idx] = self.mu[:k] / d
        return s, q, beta * self.prob.colnorm2

    def cov_diag(self) -> np.ndarray:
        return np.diagonal(self.sigma).copy()

    def _healthy(self) -> bool:
        """Every ``Sigma_ii`` in ``(0, 1 / alpha_i]`` (``0 <= gamma_i < 1``), up to round-off."""
        if self.k == 0:
            return True
        g = self.alpha[self.order[: self.k]] * np.diagonal(self.sigma)
        return bool(np.all((g > 0) & (g <= 1.0 + 1e-8)))

    # ------------------------------------------------------------------ actions

    def reestimate(self, j: int, a_new: float):
        from scipy.linalg.blas import dger

        k = self.k
        pos = int(np.flatnonzero(self.order[:k] == j)[0])
        a_old = self.alpha[j]
        sj = self.sigma[:, pos].copy()
        kappa = 1.0 / (sj[pos] + 1.0 / (a_new - a_old))
        mu_j = self.mu[pos]
        self.sigma = dger(-kappa, sj, sj, a=self.sigma, overwrite_a=1)  # in place
        self.mu[:k] -= (kappa * mu_j) * sj
        e = self._b_times(sj) / self.noise_var
        self.S += kappa * e**2
        self.Q += (kappa * mu_j) * e
        self.alpha[j] = a_new

    def delete(self, j: int):
        from scipy.linalg.blas import dger

        k = self.k
        pos = int(np.flatnonzero(self.order[:k] == j)[0])
        sj = self.sigma[:, pos].copy()
        sjj = sj[pos]
        mu_j = self.mu[pos]
        sig = dger(-1.0 / sjj, sj, sj, a=self.sigma, overwrite_a=1)
        self.mu[:k] -= (mu_j / sjj) * sj
        e = self._b_times(sj) / self.noise_var
        self.S += e**2 / sjj
        self.Q += (mu_j / sjj) * e
        self.alpha[j] = np.inf
        last = k - 1  # move the last active column into the freed slot
        if pos != last:
            self.order[pos] = self.order[last]
            self.B[:, pos] = self.B[:, last]
            sig[pos, :] = sig[last, :]
            sig[:, pos] = sig[:, last]
            self.mu[pos] = self.mu[last]
        self.sigma = np.asfortranarray(sig[:last, :last])
        self.k = last

    def add(self, i: int, a: float):
        from scipy.linalg.blas import dger

        if self.k == self.order.size:
            self._grow()
        k = self.k
        beta = 1.0 / self.noise_var
        b_i = self._xt_column(i)  # X' x_i
        sii = 1.0 / (a + self.S[i])
        mu_i = sii * self.Q[i]
        new = np.empty((k + 1, k + 1), order="F")
        if k:
            u = beta * (self.sigma @ b_i[self.order[:k]])
            e = beta * (b_i - self._b_times(u))
            new[:k, :k] = dger(sii, u, u, a=self.sigma, overwrite_a=1)
            new[:k, k] = -sii * u
            new[k, :k] = -sii * u
            self.mu[:k] -= mu_i * u
        else:
            e = beta * b_i
        new[k, k] = sii
        self.sigma = new
        self.mu[k] = mu_i
        self.S -= sii * e**2
        self.Q -= mu_i * e
        self.order[k] = i
        self.B[:, k] = b_i
        self.k = k + 1
        self.alpha[i] = a

    def act(self, ch: _Choice, *, defer: bool = False) -> bool:
        """Apply the chosen action; recompute when it is due or the update went bad.

        With ``defer`` a recomputation that is merely due is left to the caller (who is about
        to move the noise variance, which recomputes anyway): returns True when it is due.
        """
        if ch.kind == "reestimate":
            self.reestimate(ch.j, ch.alpha_new)
        elif ch.kind == "delete":
            self.delete(ch.j)
        elif ch.kind == "add":
            self.add(ch.j, ch.alpha_new)
        self.log_evidence += ch.d_log_ev
        self.since_refactor += 1
        if not self._healthy():
            self.refactor()
            return False
        due = self.since_refactor >= self.refactor_every()
        if due and not defer:
            self.refactor()
        return due and defer

    def refactor_every(self) -> int:
        """Actions between recomputations: the recomputation's cost over an action's.

        Operation counts: a recomputation ``M k^2 + k^3 / 3``, an action ``M k'`` with
        ``k' = min(k, 2 nnz(X) / M)``, plus a fixed ``_CALL_COST`` each for the numpy calls,
        so small problems (where the calls dominate) recompute after every action. At most
        ``_MAX_UPDATES`` actions in a row, which bounds the round-off drift of the updates.
        """
        m, k = self.prob.m, self.k
        full = m * k * k + k**3 / 3 + _CALL_COST
        step = m * min(k, 2 * self.nnz / m) + k * k + _CALL_COST
        return int(min(_MAX_UPDATES, max(1, full // step)))

    def noise_proposal(self):
        """MacKay's noise estimate ``||y - X mu||^2 / (N - sum gamma)`` and its gain.

        Returns ``(noise_new, gain)``: ``gain = dof (x - 1 - log x) / 2`` with
        ``x = noise_new / noise_var`` approximates the evidence gained by moving to it
        (exact when ``sum gamma`` does not depend on the noise). ``(noise_var, 0.0)`` when
        the degrees of freedom ``N - sum gamma`` are not positive. Costs ``O(nnz(X) + k)``.
        """
        k = self.k
        gamma = 1.0 - self.alpha[self.order[:k]] * np.diagonal(self.sigma)
        dof = self.prob.n - float(np.sum(gamma))
        if dof <= 0:
            return self.noise_var, 0.0
        noise_new = max(self.resid2() / dof, _noise_floor(self.prob))
        x = noise_new / self.noise_var
        return noise_new, 0.5 * dof * (x - 1.0 - math.log(x))

    def noise_update(self, noise_new: float | None = None) -> float:
        """Move the noise variance to ``noise_new`` (default: :meth:`noise_proposal`).

        Returns ``|log(new / old)|``; the state is recomputed at the new value.
        """
        if noise_new is None:
            noise_new = self.noise_proposal()[0]
        dlog_n = abs(math.log(noise_new / self.noise_var))
        if dlog_n > 0:
            self.noise_var = noise_new
            self.refactor()
        return dlog_n


#: Operation-count equivalent of the fixed cost of the numpy calls of one action or one
#: recomputation (about 30 calls of a few microseconds each, at a few GFLOP/s).
_CALL_COST = 2e5
#: At most this many rank-one updates between two recomputations from a fresh factor.
_MAX_UPDATES = 400


def _fit_fast_incremental(prob: _Problem, alpha, noise_var, *, max_iter, tol, threshold):
    """Tipping-Faul with rank-one updates; the noise re-estimated at every recomputation.

    The noise variance (when estimated) is re-estimated whenever the state is recomputed
    anyway (:meth:`_FastIncremental.refactor_every` actions; after every action on small
    problems) and whenever the basis is at its fixed point for the current noise. The fit
    has converged when the basis is at its fixed point and the noise estimate moves by less
    than ``tol`` in log.

    Returns
    -------
    tuple
        ``(log_ev, n_iter, converged, fs)`` with ``fs`` the final :class:`_FastIncremental`.
    """
    fs = _FastIncremental(prob, alpha, noise_var)
    log_ev = [fs.log_evidence]
    converged = False
    n_iter = 0
    while n_iter < max_iter:
        idx = fs.order[: fs.k]
        s, q, s_max = fs.factors()
        ch = _choose(prob, fs.alpha, idx, s, q, s_max, tol=tol, threshold=threshold)
        if ch.basis_converged:
            if prob.noise_fixed:
                converged = True
                break
            noise_new, _ = fs.noise_proposal()
            if abs(math.log(noise_new / fs.noise_var)) < tol:  # (not applied, as the reference)
                converged = True
                break
            fs.noise_update(noise_new)
        else:
            refactors = fs.n_refactor
            due = fs.act(ch, defer=not prob.noise_fixed)
            if not prob.noise_fixed:
                # the proposal from the updated state; one recomputation at the new noise
                noise_new, gain = fs.noise_proposal()
                if due or fs.n_refactor > refactors or gain > ch.d_log_ev:
                    if fs.noise_update(noise_new) == 0 and due:
                        fs.refactor()
        n_iter += 1
        log_ev.append(fs.log_evidence)
    if fs.since_refactor:  # the last value from a fresh factor, not the sum of the gains
        fs.refactor()
        log_ev[-1] = fs.log_evidence
    return log_ev, n_iter, converged, fs


# --------------------------------------------------------------------------- driver


def _small_blas():
    """Limit BLAS to one thread while the SBL loop runs.

    The loops make thousands of small (k x k, k x M with k ~ tens) BLAS calls; measured
    here, OpenBLAS threads made a 30 x 30 triangular solve 60-200x slower (2.6-8.5 ms instead
    of 0.04 ms) on a busy 2-core machine. The limit covers the libraries loaded when it is
    set, so :mod:`scipy.linalg` (whose OpenBLAS is not numpy's) is imported first.
    """
    import scipy.linalg  # noqa: F401

    from .blas_threads import one_blas_thread

    return one_blas_thread()


def resolve_relevance_threshold(setting, n: int, m: int, *, method: str = "fast",
                                noise_fixed: bool = False) -> float | str:
    """The relevance threshold a setting stands for on an ``n x m`` design.

    ``"auto"`` is ``"ric"`` when ``m >= n``, the method is ``"fast"`` and the noise is
    estimated, and exact type-II maximum likelihood (1.0) otherwise. With ``m >= n`` the
    columns can span ``y``, and the exact evidence is then typically maximised on its
    boundary: ``y`` interpolated by about ``n`` weights with the noise variance at its floor
    (measured in ``benchmarks/ARD.md``: n = 1000, M = 2000, 979 weights kept, residual norm
    1e-6). The fast method reaches that region only after thousands of one-weight actions
    and cannot meet ``tol`` there, so the exact fit neither converges nor gives a useful
    answer. With ``m < n``, or a fixed noise, the exact evidence has interior maxima
    (usually several: :func:`fit_sbl` compares two starts there) and is kept: on real
    designs without added noise columns it cross-validated as well as "ric" or better
    (docs/models/ard.md). EM and MacKay implement only the exact criterion.

    Parameters
    ----------
    setting : float >= 1, "ric" or "auto"
        The user's setting.
    n, m : int
        Rows and columns of the design.
    method : str
        The hyperparameter update.
    noise_fixed : bool
        Whether the noise variance is fixed.

    Returns
    -------
    float or "ric"

    Raises
    ------
    ValueError
        On a setting that is none of those.
    """
    if isinstance(setting, str):
        if setting not in RELEVANCE_WORDS:
            raise ValueError(f"relevance_threshold must be a float >= 1, 'ric' or 'auto', "
                             f"got {setting!r}")
        if setting == "ric":
            return "ric"
        return "ric" if method == "fast" and not noise_fixed and m >= n else 1.0
    if isinstance(setting, bool) or not (isinstance(setting, (int, float, np.floating))
                                         and 1 <= setting < math.inf):
        raise ValueError(f"relevance_threshold must be a float >= 1, 'ric' or 'auto', "
                         f"got {setting!r}")
    return float(setting)


def fit_sbl(
    X,
    y,
    *,
    method: str = "fast",
    max_iter: int = 1000,
    tol: float = 1e-6,
    noise_var: float | None = None,
    alpha_init=None,
    prune: float = 1e-3,
    relevance_threshold: float | str = 1.0,
    starts: str = "auto",
    _incremental: bool = True,
) -> SBLResult:
    """Fit sparse Bayesian learning (ARD) by type-II maximum likelihood.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (N, M)
        Design matrix (no intercept is added; include a constant column if one is wanted).
    y : array_like, shape (N,)
        Targets.
    method : {"fast", "em", "mackay"}, default "fast"
        Hyperparameter update: Tipping-Faul fast marginal likelihood, EM, or MacKay's fixed
        point (see the module docstring).
    max_iter : int, default 1000
        Maximum number of iterations (for "fast", one iteration = one add / delete /
        re-estimate action, per start). EM moves irrelevant precisions to infinity only
        linearly and may need many more iterations than the others.
    tol : float, default 1e-6
        Convergence threshold on ``|log(alpha_new / alpha_old)|`` (largest over the active
        weights) and on ``|log(noise_new / noise_old)|``; "fast" also requires that no column
        is waiting to be added or deleted.
    noise_var : float or None, default None
        Fixed noise variance; None estimates it (initial value ``0.1 * y'y / N``).
    alpha_init : float, array_like of shape (M,), or None
        Initial precisions; ``np.inf`` starts a weight outside the model. None: for "em" and
        "mackay" ``alpha_i = M ||x_i||^2 / y'y`` (each weight a priori explains ``1/M`` of
        ``y'y``); for "fast" see ``starts``.
    prune : float in (0, 1), default 1e-3
        EM / MacKay remove weight ``i`` when ``theta_i = q_i^2 - s_i <= 0`` and
        ``gamma_i = 1 - alpha_i Sigma_ii < prune``; both are invariant to column scaling.
        "fast" deletes exactly when ``theta_i <= 0`` and ignores ``prune``.
    relevance_threshold : float >= 1, "ric" or "auto", default 1.0
        "fast" only ("auto" is allowed with every method). A column is added / kept only
        when ``q_i^2 / s_i > relevance_threshold`` (scale-free). 1.0 is exact type-II
        maximum likelihood (``theta_i > 0``). Larger values
        maximise the evidence minus ``(t - 1 - log t) / 2`` nats per relevant weight. Under
        the null (``w_i = 0``) ``q_i^2 / s_i`` is about chi-square(1), so with many candidate
        columns exact evidence maximisation keeps roughly a third of the irrelevant ones
        (ARD over-fits when M is large); ``"ric"`` uses ``2 log M``, the risk-inflation
        threshold of Foster and George (1994), which admits a null column with probability
        about ``1 / (M sqrt(pi log M))``. ``"auto"``: ``"ric"`` when ``M >= N`` (and the
        method is "fast" with the noise estimated), 1.0 otherwise
        (:func:`resolve_relevance_threshold` says why).
    starts : {"auto", "empty"}, default "auto"
        "fast" without ``alpha_init`` only. The evidence has local maxima, and one run of
        coordinate ascent stops at the first it meets. ``"empty"``: one run, from the empty
        model (columns added one at a time). ``"auto"``: when ``M < N`` and
        ``M <= FULL_START_MAX_COLUMNS`` also a second run, from every column in the model
        after :data:`FULL_START_EM_STEPS` EM steps (the columns below the threshold then
        deleted together), and the run with the higher objective is returned;
        ``SBLResult.starts`` lists both. With ``M >= N`` the full model interpolates ``y``,
        so "auto" is one run there.

    Returns
    -------
    SBLResult
        Estimates, posterior of ``w`` given them (covariance over the relevant set only),
        log evidence per iteration, iteration count, convergence flag and the starts run.

    Notes
    -----
    ``_incremental=False`` (private, for the tests) runs ``"fast"`` with every quantity
    recomputed from a fresh factorisation after each action and the noise re-estimated after
    every action: the reference the rank-one updates are tested against.

    Exactly duplicated columns make the evidence flat along a ridge (only the sum of their
    prior variances matters), so ``"fast"`` may then run to ``max_iter`` and report
    ``converged=False``; the posterior returned is still exact at the estimates. EM and
    MacKay need many iterations when a weight is near the relevance boundary
    (``theta_i ~ 0``). With ``M >= N`` and the noise estimated, type-II maximum likelihood
    can drive the noise variance to its floor (``1e-12 * y'y / N``) by interpolating ``y``;
    fix ``noise_var`` or use ``relevance_threshold`` ("auto" does) there.

    Raises
    ------
    ValueError
        On a bad ``method``, ``max_iter``, ``tol``, ``noise_var``, ``alpha_init``, ``prune``
        or ``starts``, or on ``X`` / ``y`` of the wrong shape or with non-finite values.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    if not (isinstance(tol, (int, float, np.floating)) and tol > 0 and math.isfinite(tol)):
        raise ValueError(f"tol must be a positive finite float, got {tol!r}")
    if not (isinstance(prune, (int, float, np.floating)) and 0 < prune < 1):
        raise ValueError(f"prune must be a float in (0, 1), got {prune!r}")
    if starts not in STARTS:
        raise ValueError(f"starts must be one of {STARTS}, got {starts!r}")
    resolve_relevance_threshold(relevance_threshold, 1, 1)  # a bad value fails before X
    fixed = noise_var is not None
    if fixed:
        noise_var = _check_noise(noise_var)
    prob = _problem(X, y, fixed)
    if fixed:
        noise_var = _to_unit_noise(prob, noise_var)
    relevance_threshold = resolve_relevance_threshold(
        relevance_threshold, prob.n, prob.m, method=method, noise_fixed=fixed)
    if method != "fast" and relevance_threshold != 1.0:
        raise ValueError(
            f"relevance_threshold applies to method='fast' only, "
            f"got {relevance_threshold!r} with method={method!r}"
        )
    threshold = (
        max(2.0 * math.log(prob.m), 1.0)
        if relevance_threshold == "ric"
        else float(relevance_threshold)
    )
    if not fixed:
        noise_var = 0.1 * _y_scale(prob)

    if alpha_init is None:
        if method == "fast":
            alpha = np.full(prob.m, np.inf)
        else:
            alpha = _full_model_alpha(prob)
    else:
        alpha = _to_unit_alpha(prob, _check_alpha(alpha_init, prob.m, "alpha_init"))
    alpha[~prob.usable] = np.inf
    idx = np.flatnonzero(np.isfinite(alpha))
    full_start = (method == "fast" and alpha_init is None and starts == "auto"
                  and prob.m < prob.n and prob.m <= FULL_START_MAX_COLUMNS)

    with _small_blas():
        if method != "fast":
            return _fit_fixed_point(prob, alpha, idx, noise_var, rule=method,
                                    max_iter=max_iter, tol=tol, prune=prune)
        runs = [_fast_run(prob, alpha, noise_var, "empty" if alpha_init is None else "given",
                          max_iter=max_iter, tol=tol, threshold=threshold,
                          incremental=_incremental)]
        if full_start:
            alpha_em, noise_em = _em_smoothed_full_model(prob, noise_var, prune, threshold)
            runs.append(_fast_run(prob, alpha_em, noise_em, "full_em", max_iter=max_iter,
                                  tol=tol, threshold=threshold, incremental=_incremental))
        return _best_run(prob, runs, threshold)


#: EM steps from the full model before the second start of the fast method. A few steps
#: shrink every weight at once, which is what lets the deletions that follow find another
#: maximum than the additions from the empty model. Measured on 40 real designs with M < N
#: (star98, statecrime, macrodata, fair and randhie with 30-50 noise columns; benchmarks/
#: bench_ard_real.py): with the empty start, 10 steps reached the higher maximum in 37, 30
#: steps in 38; the fast method from the full model with no EM step did worse.
FULL_START_EM_STEPS = 10
#: The second start is run on designs with at most this many columns. Its EM steps cost
#: ``O(M^3)`` each: measured (dense 2000 x 1000, 30 true weights, load 8), "ric" took 1.6 s
#: with both starts against 0.27 s with one, and 300 columns 0.21 s against 0.06 s.
FULL_START_MAX_COLUMNS = 500


def _full_model_alpha(prob: _Problem) -> np.ndarray:
    """Every weight in the model, each a priori explaining ``1/M`` of ``y'y``."""
    scale = prob.yty if prob.yty > 0 else 1.0
    with np.errstate(divide="ignore"):
        return prob.m * prob.colnorm2 / scale


def _em_smoothed_full_model(prob: _Problem, noise_var: float, prune: float, threshold: float):
    """The second start: :data:`FULL_START_EM_STEPS` EM steps from the full model.

    Then every weight whose ``q_i^2 / s_i`` is at most ``threshold`` is deleted at once (the
    fast method would delete them one by one, at ``O(M k)`` each with ``k`` near ``M``).
    Returns ``(alpha, noise_var)``.
    """
    alpha = _full_model_alpha(prob)
    alpha[~prob.usable] = np.inf
    idx = np.flatnonzero(np.isfinite(alpha))
    gram_of = _gram_factory(prob)
    post, _ = _posterior(prob, idx, alpha[idx], noise_var, gram=gram_of(idx))
    state = SBLState(alpha, noise_var, post, None)
    for _ in range(FULL_START_EM_STEPS):
        state, _ = _fixed_point_step(prob, state, rule="em", prune=prune, gram_of=gram_of)
    alpha, post = state.alpha.copy(), state.post
    s, q = _active_sq(post, alpha[post.idx])
    alpha[post.idx[q**2 <= threshold * s]] = np.inf
    return alpha, state.noise_var


class _Run(NamedTuple):
    """One start of the fast method, before the final posterior is computed (internal)."""

    start: str
    alpha: np.ndarray
    noise_var: float
    order: np.ndarray
    log_ev: np.ndarray
    n_iter: int
    converged: bool


def _fast_run(prob, alpha, noise_var, start, *, max_iter, tol, threshold, incremental) -> _Run:
    """The fast method from ``(alpha, noise_var)``: rank-one updates, or the reference."""
    if incremental:
        log_ev, n_iter, converged, fs = _fit_fast_incremental(
            prob, alpha, noise_var, max_iter=max_iter, tol=tol, threshold=threshold
        )
        return _Run(start, fs.alpha, fs.noise_var, fs.order[: fs.k], np.asarray(log_ev),
                    n_iter, converged)
    idx = np.flatnonzero(np.isfinite(alpha))
    xtx = np.zeros((prob.m, idx.size))
    for c, j in enumerate(idx):
        xtx[:, c] = _xt_times(prob, _columns(prob, [j])[:, 0])
    post, _ = _posterior(prob, idx, alpha[idx], noise_var, gram=xtx[idx], kspace=True)

    def step(st):
        return _fast_step(prob, st, tol=tol, threshold=threshold)

    log_ev, n_iter, converged, state = _drive(step, SBLState(alpha, noise_var, post, xtx),
                                              max_iter, tol, "fast")
    return _Run(start, state.alpha, state.noise_var, state.post.idx, np.asarray(log_ev),
                n_iter, converged)


def _best_run(prob, runs: list[_Run], threshold: float) -> SBLResult:
    """The run with the highest objective, as a result that lists every start.

    A later run replaces an earlier one only when it is higher by more than round-off
    (``1e-9`` relative): two runs that reach the same maximum differ in the last digits.
    """
    penalty = 0.5 * (threshold - 1.0 - math.log(threshold))
    offset = _log_evidence_offset(prob)
    starts = tuple(SBLStart(r.start, float(r.log_ev[-1]) + offset,
                            float(r.log_ev[-1]) + offset - penalty * r.order.size,
                            int(r.order.size), int(r.n_iter), bool(r.converged)) for r in runs)
    best = 0
    for i in range(1, len(runs)):
        top = starts[best].objective
        if starts[i].objective > top + 1e-9 * max(1.0, abs(top)):
            best = i
    r = runs[best]
    return _result(prob, r.alpha, r.noise_var, r.order, r.log_ev, r.n_iter, r.converged,
                   "fast", starts)


def _fit_fixed_point(prob, alpha, idx, noise_var, *, rule, max_iter, tol, prune) -> SBLResult:
    """EM or MacKay from ``alpha`` (BLAS on one thread, :func:`_small_blas`)."""
    gram_of = _gram_factory(prob)
    post, _ = _posterior(prob, idx, alpha[idx], noise_var, gram=gram_of(idx))
    state = SBLState(alpha, noise_var, post, None)

    def step(st):
        return _fixed_point_step(prob, st, rule=rule, prune=prune, gram_of=gram_of)

    log_ev, n_iter, converged, state = _drive(step, state, max_iter, tol, rule)
    return _result(prob, state.alpha, state.noise_var, state.post.idx, np.asarray(log_ev),
                   n_iter, converged, rule)


def _drive(step, state, max_iter, tol, method):
    """Own the loop: call ``step`` until it reports convergence or ``max_iter`` is reached."""
    log_ev = [state.post.log_evidence]
    converged = False
    n_iter = 0
    for _ in range(max_iter):
        state, info = step(state)
        if info.converged:
            converged = True
            break
        n_iter += 1
        log_ev.append(info.log_evidence)
        if (
            method != "fast"
            and info.n_pruned == 0
            and info.max_dlog_alpha < tol
            and info.dlog_noise < tol
        ):
            converged = True
            break
    return log_ev, n_iter, converged, state


def _result(prob, alpha_all, noise_var, order, log_ev, n_iter, converged, method,
            starts=()) -> SBLResult:
    """The exact posterior at the final estimates, from a fresh factorisation."""
    order = np.asarray(order, dtype=np.intp)
    relevant = np.sort(order)
    alpha = np.full(prob.m, np.inf)
    alpha[relevant] = alpha_all[relevant]
    post, cov = _posterior(prob, relevant, alpha[relevant], noise_var, want_cov=True)
    mean = np.zeros(prob.m)
    mean[relevant] = post.mean
    alpha, mean, cov, noise_var = _to_caller_units(prob, alpha, mean, relevant, cov,
                                                   noise_var)
    return SBLResult(
        alpha=alpha,
        noise_var=float(noise_var),
        mean=mean,
        relevant=relevant,
        cov=cov,
        log_evidence=np.asarray(log_ev) + _log_evidence_offset(prob),
        n_iter=int(n_iter),
        converged=bool(converged),
        method=method,
        starts=starts,
    )
