"""Conjugate Bayesian linear regression, carried as a square root of the augmented precision.

The natural parameters of both posteriors are the precision P and shift h = P mu, plus a
scalar q; in place of them a posterior keeps an upper-triangular root S of the augmented
matrix

    S'S = [[P, h], [h', q]],  S = [[R, z], [0, rho]],

so that P = R'R, h = R'z, the posterior mean solves R mu = z, h'P^-1 h = z'z and
q - h'P^-1 h = rho^2 (a residual sum of squares plus prior terms, never formed as a
difference). A batch is its own root (:class:`RegressionStats`: the R factor of the QR of
[X y]), and two roots merge by the QR of the two stacked (TSQR, Demmel et al. 2012,
"Communication-optimal parallel and sequential QR and LU factorizations"), so the statistics
are never squared: the posterior mean keeps as many digits as a QR least-squares solver
(``numpy.linalg.lstsq``), where X'X would lose the condition number of X once more
(``tests/inference/engines/test_nist_strd.py``, on the NIST StRD data sets). The merge is
associative, so the posterior after batch i is the prior of batch i+1 and the result does not
depend on how the data were cut into batches.

- :class:`GaussianPosterior`, known noise variance s2: precision P = Lambda^-1 and shift
  h = P mu; a batch adds X'X / s2 to P and X'y / s2 to h (Bishop 2006, eq. 3.50-3.51), i.e.
  stacks its root divided by s.
- :class:`NormalInverseGammaPosterior`, unknown noise: sigma2 ~ InvGamma(a, b),
  theta | sigma2 ~ N(mu, sigma2 P^-1); a batch adds X'X to P, X'y to h, n/2 to a and y'y to
  c = 2 b + mu' P mu (Murphy 2007, "Conjugate Bayesian analysis of the Gaussian
  distribution", sec. 9; Murphy 2012, sec. 7.6.3), so b = b0 + rho^2 / 2. The marginal of
  each theta_j is Student-t with 2a degrees of freedom.

The prior enters as its square-root precision: the root of [[P0, P0 mu0], [mu0' P0, mu0' P0
mu0]]. The flat prior has a zero root. Its posterior exists once R is nonsingular; before that,
any question about the posterior raises :class:`~.errors.NotIdentified`. With unknown noise
the flat prior on theta is taken independent of sigma2, which gives a = a0 + (n - d) / 2.

Everything is solved with triangular solves on R; log-determinants come from its diagonal.

The Normal-Inverse-Gamma formulas that do not depend on how the posterior was updated (the
Student-t scale of a marginal, the log evidence) are the module functions :func:`nig_t_scale`
and :func:`nig_log_evidence`, elementwise; the univariate NIG of naive Bayes
(:mod:`bayescheck.inference.engines.naive_bayes_stats`, one posterior per class and feature) uses
the same two, and a test holds it equal to this regression NIG with an intercept-only design.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from .dist import Dist
from .errors import NotIdentified

__all__ = [
    "GaussianPosterior",
    "NormalInverseGammaPosterior",
    "RegressionStats",
    "load_lapack",
    "merge_roots",
    "nig_log_evidence",
    "nig_t_scale",
    "regression_stats",
    "regression_stats_joint",
    "triangular_root",
]

_LOG_2PI = np.log(2.0 * np.pi)


def load_lapack() -> None:
    """Import :mod:`scipy.linalg`, whose LAPACK the QR calls, so that a BLAS limit covers it.

    A stream limits BLAS to one thread (:func:`bayescheck.inference.scale.streaming.run_stream`,
    with threadpoolctl, which limits the libraries loaded at that moment) and then factors its
    first batches on reading threads.
    """
    import scipy.linalg  # noqa: F401


#: Rows factored at a time by :func:`triangular_root` on a tall block, and LAPACK's block
#: size (columns per compact-WY reflector block) there. Measured on 10,000 x 51 (one thread):
#: dgeqrt on the whole block 7.7-7.9 ms; blocks of 1024 rows merged by dtpqrt, 16 columns,
#: 5.9-6.1 ms (a 1024-row block stays in the cache while its reflectors are applied).
ROW_BLOCK = 1024
COLUMN_BLOCK = 16


def _householder_r(a: np.ndarray) -> np.ndarray:
    """The upper triangle of a QR of the column-major float64 ``a`` (m x n), which it overwrites.

    Returns the top ``min(m, n)`` rows of LAPACK's result; below the diagonal they hold
    reflectors. A tall block (more than ``ROW_BLOCK`` rows, at least 4 times as many rows
    per block as columns) is factored in row blocks: ``dgeqrt`` on the first ``ROW_BLOCK``
    rows, then each next block is folded into that R by ``dtpqrt`` (the QR of R stacked on
    the block: a sequential TSQR, as LAPACK's ``dlatsqr``), with BLAS on one thread.
    Otherwise one ``dgeqrt`` call.
    """
    from scipy.linalg.lapack import dgeqrt, dtpqrt

    m, n = a.shape
    nb = min(COLUMN_BLOCK, m, n)
    # The row blocks' BLAS calls are too small for threads: with OpenBLAS's 2 threads on
    # a shared 2-core machine, 200,000 x 51 took 3.1 s blocked, 1.1-2.0 s in one call,
    # 0.23-0.27 s blocked on one thread. A tall block is therefore factored on one BLAS
    # thread (a big stream has set that already; otherwise it is set for this call).
    blocked = m > ROW_BLOCK and 4 * n <= ROW_BLOCK
    if blocked and not _blas_on_one_thread():
        from .blas_threads import one_blas_thread

        with one_blas_thread():
            return _householder_r(a)
    first = ROW_BLOCK if blocked else m
    head = a if first == m else np.asfortranarray(a[:first])
    head, _, info = dgeqrt(nb, head, overwrite_a=True)
    if info != 0:  # pragma: no cover - LAPACK reports illegal arguments only
        raise ValueError(f"LAPACK dgeqrt failed with info = {info}")
    if not blocked:
        return head[:min(m, n)]
    r = np.asfortranarray(head[:n])
    for row in range(first, m, ROW_BLOCK):
        block = np.asfortranarray(a[row:row + ROW_BLOCK])
        r, _, _, info = dtpqrt(0, nb, r, block, overwrite_a=True, overwrite_b=True)
        if info != 0:  # pragma: no cover
            raise ValueError(f"LAPACK dtpqrt failed with info = {info}")
    return r


def _blas_on_one_thread() -> bool:
    from .blas_threads import blas_on_one_thread

    return blas_on_one_thread()


def triangular_root(Z: np.ndarray, *, overwrite: bool = False) -> np.ndarray:
    """The R factor of a QR of ``Z`` (n x k), as a k x k upper-triangular matrix.

    Rows beyond n are zero when n < k; each row's sign is chosen so that the diagonal is
    non-negative, which makes the factor unique when Z has full column rank (R'R = Z'Z).

    Householder QR by LAPACK (:func:`_householder_r`: ``dgeqrt`` on blocks of 1024 rows
    merged by ``dtpqrt``; on a 10,000 x 51 batch it takes about a third of the time of
    ``dgeqrf`` through ``numpy.linalg.qr``, and the same digits, all being backward stable).

    Parameters
    ----------
    Z : numpy.ndarray
        Shape ``(n, k)``, float64; column-major (Fortran) order avoids a copy.
    overwrite : bool
        Let the factorisation overwrite ``Z`` (when it is a column-major float64 array the
        caller no longer needs).

    Returns
    -------
    numpy.ndarray
        Shape ``(k, k)``.
    """
    n, k = Z.shape
    if n == 0 or k == 0:
        return np.zeros((k, k))
    a = np.asfortranarray(Z, dtype=np.float64)
    if a is Z and not (overwrite and a.flags.writeable):
        a = a.copy(order="F")
    r = np.triu(_householder_r(a))
    if r.shape[0] < k:
        r = np.vstack([r, np.zeros((k - r.shape[0], k))])
    r *= np.where(np.diag(r) < 0, -1.0, 1.0)[:, None]
    return r


def merge_roots(*roots: np.ndarray) -> np.ndarray:
    """One root of the stacked roots: ``S'S = sum of R_i'R_i``, by the QR of their stack."""
    return triangular_root(np.vstack(roots))


@dataclass(frozen=True, eq=False)
class RegressionStats:
    """Statistics of a regression batch: the R factor of [X y]; batches combine by ``+``.

    ``root`` R satisfies R'R = [X y]'[X y], so X'X, X'y and y'y are available (the
    properties below, formed for inspection only), but the posterior works with R itself:
    it keeps the digits that forming X'X would lose. ``+`` merges two batches by the QR of
    their stacked roots (:func:`merge_roots`).

    Attributes
    ----------
    n : int
        Number of rows.
    root : numpy.ndarray
        Upper-triangular R, shape ``(d + 1, d + 1)``.
    """

    n: int
    root: np.ndarray

    def __add__(self, other: RegressionStats) -> RegressionStats:
        return RegressionStats(self.n + other.n, merge_roots(self.root, other.root))

    @classmethod
    def zero(cls, d: int) -> RegressionStats:
        """The statistics of no data."""
        return cls(0, np.zeros((d + 1, d + 1)))

    @property
    def xtx(self) -> np.ndarray:
        """X'X, shape ``(d, d)``."""
        r = self.root[:, :-1]
        return r.T @ r

    @property
    def xty(self) -> np.ndarray:
        """X'y, shape ``(d,)``."""
        return self.root[:, :-1].T @ self.root[:, -1]

    @property
    def yty(self) -> float:
        """y'y."""
        return float(self.root[:, -1] @ self.root[:, -1])


def regression_stats(X: np.ndarray, y: np.ndarray) -> RegressionStats:
    """Statistics of one batch.

    Parameters
    ----------
    X : numpy.ndarray
        Design matrix, shape ``(n, d)``.
    y : numpy.ndarray
        Response, shape ``(n,)``.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return regression_stats_joint(np.column_stack([X, y]))


def regression_stats_joint(Z: np.ndarray, *, overwrite: bool = False) -> RegressionStats:
    """Statistics of one batch given as one block ``Z = [X | y]`` (one QR of the block).

    This is the statistic of one batch that a parallel reduction maps over partitions;
    two of them merge by ``+`` (:meth:`RegressionStats.__add__`), in any grouping.

    Parameters
    ----------
    Z : numpy.ndarray
        Shape ``(n, d + 1)``; column-major order avoids a copy.
    overwrite : bool
        Let the QR overwrite ``Z`` (see :func:`triangular_root`).
    """
    return RegressionStats(len(Z), triangular_root(Z, overwrite=overwrite))


def nig_t_scale(shape, scale, variance_factor):
    """Scale of a Student-t marginal of a Normal-Inverse-Gamma posterior, elementwise.

    Under sigma2 ~ InvGamma(a, b) and z | sigma2 ~ N(m, sigma2 v), z is Student-t with 2a
    degrees of freedom, location m and scale sqrt(b / a * v).

    Parameters
    ----------
    shape, scale : float or numpy.ndarray
        The posterior a and b of sigma2.
    variance_factor : float or numpy.ndarray
        v: a diagonal entry of P^-1 for a coefficient (1 / kappa in one dimension),
        1 + x' P^-1 x for a new response at x.

    Returns
    -------
    numpy.ndarray or float
        sqrt(b / a * v), broadcast.
    """
    return np.sqrt(scale / shape * variance_factor)


def nig_log_evidence(*, n, shape0, scale0, shape, scale, prior_logdet, posterior_logdet):
    """log p(data) of a Normal-Inverse-Gamma model, theta and sigma2 integrated out, elementwise.

    ``-n/2 log(2 pi) + (log|P0| - log|P|) / 2 + a0 log b0 - a log b + lgamma(a) - lgamma(a0)``
    (Murphy 2007, "Conjugate Bayesian analysis of the Gaussian distribution"; for one Gaussian
    P0 = kappa0 and P = kappa).

    Parameters
    ----------
    n : int or numpy.ndarray
        Rows (observations) absorbed.
    shape0, scale0, shape, scale : float or numpy.ndarray
        Prior and posterior InvGamma parameters of sigma2.
    prior_logdet, posterior_logdet : float or numpy.ndarray
        log |P0| and log |P| of the precisions of theta (in units of 1 / sigma2).

    Returns
    -------
    numpy.ndarray or float
    """
    from scipy.special import gammaln

    return (-0.5 * n * _LOG_2PI + 0.5 * prior_logdet - 0.5 * posterior_logdet
            + shape0 * np.log(scale0) - shape * np.log(scale) + gammaln(shape)
            - gammaln(shape0))


def _identified_factor(root: np.ndarray, n: int, proper: bool = False) -> np.ndarray:
    """The d x d block R of a posterior's root, or NotIdentified when it is singular.

    ``proper`` says the prior's square-root precision is stacked into ``root``: the posterior
    is then defined in exact arithmetic whatever the data, and only a factor that float64
    could not hold (a zero or non-finite pivot) is refused.
    """
    d = root.shape[0] - 1
    r = root[:d, :d]
    if proper:
        pivots = np.abs(np.diag(r))
        if d and (not np.all(np.isfinite(r)) or pivots.min() == 0):
            raise NotIdentified(
                f"the posterior precision of the {d} coefficients is not numerically positive "
                f"definite ({n} rows seen): the features' scales differ by more than float64 "
                f"arithmetic can hold; centre or rescale the features")
        return r
    # r_jj over the norm of column j is the sine of the angle between column j of the
    # (prior-augmented) design and the span of the columns before it: scale-free, and near
    # machine precision when the data do not determine theta.
    norms = np.sqrt(np.sum(r * r, axis=0))
    pivots = np.abs(np.diag(r))
    if d and (norms.min() == 0 or np.min(pivots / norms) < 100 * d * np.finfo(float).eps):
        raise NotIdentified(
            f"the data do not yet determine all {d} coefficients under the flat prior "
            f"({n} rows seen; X'X is singular): add rows, drop collinear features or use a "
            f"proper prior")
    return r


def _prior_root(mean, cov) -> tuple[np.ndarray, float]:
    """Root of [[P0, P0 mu0], [mu0' P0, mu0' P0 mu0]] and log |P0|, from cov = C C'."""
    from scipy.linalg import cholesky, solve_triangular

    mean = np.asarray(mean, dtype=np.float64)
    chol = cholesky(np.asarray(cov, dtype=np.float64), lower=True)
    # C^-1 is a square root of P0 = cov^-1 (by a triangular solve, not a general inverse);
    # the QR of [C^-1, C^-1 mu0] makes it triangular.
    chol_inv = solve_triangular(chol, np.eye(len(mean)), lower=True, check_finite=False)
    root = triangular_root(np.column_stack([chol_inv, chol_inv @ mean]))
    return root, -2.0 * float(np.sum(np.log(np.diag(chol))))


class _LinearPosteriorMixin:
    """What both posteriors compute from their root S = [[R, z], [0, rho]]."""

    root: np.ndarray
    n: int
    prior_logdet: float | None

    @cached_property
    def _chol(self) -> np.ndarray:
        return _identified_factor(self.root, self.n, proper=self.prior_logdet is not None)

    @property
    def dim(self) -> int:
        """Number of coefficients."""
        return self.root.shape[0] - 1

    @property
    def _z(self) -> np.ndarray:
        return self.root[:-1, -1]

    @property
    def _rho2(self) -> float:
        """q - h' P^-1 h = rho^2."""
        return float(self.root[-1, -1] ** 2)

    @property
    def precision(self) -> np.ndarray:
        """P = R'R (formed for inspection only)."""
        r = self.root[:-1, :-1]
        return r.T @ r

    @property
    def shift(self) -> np.ndarray:
        """h = R'z (formed for inspection only)."""
        return self.root[:-1, :-1].T @ self._z

    @cached_property
    def mean(self) -> np.ndarray:
        """Posterior mean of theta: R mu = z."""
        from scipy.linalg import solve_triangular

        return solve_triangular(self._chol, self._z, check_finite=False)

    @cached_property
    def _scale_matrix(self) -> np.ndarray:
        """P^-1 = R^-1 R^-T, formed for reporting only (solves never use it)."""
        from scipy.linalg import solve_triangular

        r_inv = solve_triangular(self._chol, np.eye(self.dim), check_finite=False)
        return r_inv @ r_inv.T

    @property
    def scale_matrix(self) -> np.ndarray:
        """P^-1: the covariance of theta (known noise) or of theta / sigma2 (NIG)."""
        return self._scale_matrix

    def _quad_shift(self) -> float:
        """h' P^-1 h = z'z."""
        return float(self._z @ self._z)

    def _logdet_precision(self) -> float:
        return 2.0 * float(np.sum(np.log(np.abs(np.diag(self._chol)))))

    def require_identified(self) -> None:
        """Raise :class:`~.errors.NotIdentified` unless the data determine the posterior."""
        self._chol  # noqa: B018 - factoring is the check

    @property
    def identified(self) -> bool:
        """Whether the data seen so far determine the posterior."""
        try:
            self.require_identified()
        except NotIdentified:
            return False
        return True

    def _row_variances(self, X: np.ndarray) -> np.ndarray:
        """x' P^-1 x = |R^-T x|^2 for each row of X."""
        from scipy.linalg import solve_triangular

        Z = solve_triangular(self._chol, np.atleast_2d(X).T, trans=1, check_finite=False)
        return np.sum(Z * Z, axis=0)


@dataclass(frozen=True, eq=False)
class GaussianPosterior(_LinearPosteriorMixin):
    """Posterior of theta with known noise variance, as the root of its natural parameters.

    Attributes
    ----------
    root : numpy.ndarray
        Upper-triangular S, shape ``(d + 1, d + 1)``, with
        S'S = [[P, h], [h', mu0' P0 mu0 + y'y / s2]], P = Lambda^-1, h = P mu (zero for the
        flat prior before any data).
    noise_var : float
        The known sigma^2.
    n : int
        Rows absorbed so far.
    prior_logdet : float or None
        log |P0| of the prior, None for the flat prior (no evidence then).
    """

    root: np.ndarray
    noise_var: float
    n: int = 0
    prior_logdet: float | None = None

    @classmethod
    def from_prior(cls, mean, cov, *, noise_var: float) -> GaussianPosterior:
        """The prior N(mean, cov) as a posterior of no data.

        Parameters
        ----------
        mean : array_like
            Prior mean, shape ``(d,)``.
        cov : array_like
            Prior covariance, shape ``(d, d)``, positive definite.
        noise_var : float
            Known noise variance sigma^2.
        """
        root, logdet = _prior_root(mean, cov)
        return cls(root, float(noise_var), prior_logdet=logdet)

    @classmethod
    def flat(cls, dim: int, *, noise_var: float) -> GaussianPosterior:
        """The flat prior (precision 0) over ``dim`` coefficients."""
        return cls(np.zeros((dim + 1, dim + 1)), float(noise_var))

    def update(self, batch: RegressionStats) -> GaussianPosterior:
        """Absorb one batch: this posterior is the batch's prior."""
        return replace(self, root=merge_roots(self.root, batch.root / np.sqrt(self.noise_var)),
                       n=self.n + batch.n)

    @property
    def cov(self) -> np.ndarray:
        """Posterior covariance Lambda = P^-1."""
        return self._scale_matrix

    @property
    def sd(self) -> np.ndarray:
        """Marginal posterior standard deviations."""
        return np.sqrt(np.diag(self._scale_matrix))

    def marginal(self) -> Dist:
        """All coefficients' normal marginals as one vectorised :class:`~.dist.Dist`."""
        return Dist("norm", self.mean, self.sd)

    def marginals(self) -> list:
        """The normal marginal of each coefficient (a :class:`~.dist.Dist`)."""
        return [Dist("norm", m, s) for m, s in zip(self.mean, self.sd, strict=True)]

    def predictive(self, X: np.ndarray):
        """Posterior predictive of new responses at rows ``X``: a vector normal ``Dist``."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        return Dist("norm", X @ self.mean, np.sqrt(self.noise_var + self._row_variances(X)))

    @property
    def log_evidence(self) -> float | None:
        """log p(y | X) of every row absorbed; None under the flat (improper) prior."""
        if self.prior_logdet is None:
            return None
        s2 = self.noise_var
        # y'y / s2 + mu0' P0 mu0 - h' P^-1 h is rho^2: no cancellation.
        return float(-0.5 * self.n * (_LOG_2PI + np.log(s2)) - 0.5 * self._rho2
                     + 0.5 * self.prior_logdet - 0.5 * self._logdet_precision())


@dataclass(frozen=True, eq=False)
class NormalInverseGammaPosterior(_LinearPosteriorMixin):
    """Normal-Inverse-Gamma posterior of (theta, sigma2), as the root of its natural parameters.

    Attributes
    ----------
    root : numpy.ndarray
        Upper-triangular S, shape ``(d + 1, d + 1)``, with
        S'S = [[P, h], [h', mu0' P0 mu0 + y'y]]: theta | sigma2 ~ N(P^-1 h, sigma2 P^-1).
    shape0, scale0 : float
        The prior InvGamma(shape0, scale0) of sigma2.
    n : int
        Rows absorbed.
    prior_logdet : float or None
        log |P0|; None for the flat prior.
    """

    root: np.ndarray
    shape0: float
    scale0: float
    n: int = 0
    prior_logdet: float | None = None

    @classmethod
    def from_prior(cls, mean, cov, *, shape: float, scale: float) -> NormalInverseGammaPosterior:
        """The prior sigma2 ~ InvGamma(shape, scale), theta | sigma2 ~ N(mean, sigma2 cov)."""
        root, logdet = _prior_root(mean, cov)
        return cls(root, float(shape), float(scale), prior_logdet=logdet)

    @classmethod
    def flat(cls, dim: int, *, shape: float, scale: float) -> NormalInverseGammaPosterior:
        """theta flat (independent of sigma2), sigma2 ~ InvGamma(shape, scale)."""
        return cls(np.zeros((dim + 1, dim + 1)), float(shape), float(scale))

    def update(self, batch: RegressionStats) -> NormalInverseGammaPosterior:
        """Absorb one batch: this posterior is the batch's prior."""
        return replace(self, root=merge_roots(self.root, batch.root), n=self.n + batch.n)

    @property
    def c(self) -> float:
        """2 * scale0 + mu0' P0 mu0 + sum of y'y (formed for inspection only)."""
        return 2.0 * self.scale0 + self._quad_shift() + self._rho2

    @property
    def shape(self) -> float:
        """Posterior shape a of sigma2."""
        flat_correction = self.dim / 2.0 if self.prior_logdet is None else 0.0
        return self.shape0 + self.n / 2.0 - flat_correction

    def require_identified(self) -> None:
        """Raise :class:`~.errors.NotIdentified` unless the data determine the posterior."""
        self._chol  # noqa: B018 - factoring is the check
        self._check_shape()

    @cached_property
    def scale(self) -> float:
        """Posterior scale b = b0 + rho^2 / 2 of sigma2."""
        self._check_shape()
        return self.scale0 + 0.5 * self._rho2

    def _check_shape(self):
        if self.shape <= 0:
            raise NotIdentified(
                f"the flat prior needs more rows than coefficients to determine sigma2: "
                f"{self.n} rows, {self.dim} coefficients, noise_shape {self.shape0}")

    @property
    def df(self) -> float:
        """Degrees of freedom 2a of the Student-t marginals."""
        return 2.0 * self.shape

    @property
    def cov(self) -> np.ndarray:
        """Marginal posterior covariance of theta, b / (a - 1) P^-1 (needs a > 1)."""
        if self.shape <= 1:
            return np.full((self.dim, self.dim), np.inf)
        return self.scale / (self.shape - 1.0) * self._scale_matrix

    @property
    def sd(self) -> np.ndarray:
        """Marginal posterior standard deviations of theta."""
        return np.sqrt(np.diag(self.cov))

    @property
    def t_scale(self) -> np.ndarray:
        """Scale of each theta_j's Student-t marginal, sqrt(b / a * (P^-1)_jj)."""
        return nig_t_scale(self.shape, self.scale, np.diag(self._scale_matrix))

    def marginal(self) -> Dist:
        """All theta_j's Student-t marginals as one vectorised :class:`~.dist.Dist`."""
        return Dist("t", self.df, self.mean, self.t_scale)

    def marginals(self) -> list:
        """The Student-t marginal of each theta_j (a :class:`~.dist.Dist`)."""
        return [Dist("t", self.df, m, s) for m, s in zip(self.mean, self.t_scale, strict=True)]

    def noise_marginal(self):
        """The InvGamma(a, b) marginal of sigma2 (a :class:`~.dist.Dist`)."""
        self._check_shape()
        return Dist("invgamma", self.shape, scale=self.scale)

    def predictive(self, X: np.ndarray):
        """Posterior predictive at rows ``X``: a frozen Student-t with 2a degrees of freedom."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        spread = nig_t_scale(self.shape, self.scale, 1.0 + self._row_variances(X))
        return Dist("t", self.df, X @ self.mean, spread)

    @property
    def log_evidence(self) -> float | None:
        """log p(y | X) with theta and sigma2 integrated out; None under the flat prior."""
        if self.prior_logdet is None:
            return None
        return float(nig_log_evidence(
            n=self.n, shape0=self.shape0, scale0=self.scale0, shape=self.shape,
            scale=self.scale, prior_logdet=self.prior_logdet,
            posterior_logdet=self._logdet_precision()))
