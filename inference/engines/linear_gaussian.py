"""Conjugate Bayesian linear regression in precision (natural-parameter) form.

Two posteriors, both updated by adding a batch's sufficient statistics
(:class:`RegressionStats`: n, X'X, X'y, y'y) to their natural parameters, so that the
posterior after batch i is the prior of batch i+1 and the result does not depend on how the
data were cut into batches:

- :class:`GaussianPosterior`, known noise variance s2: precision P = Lambda^-1 and shift
  h = P mu; a batch adds X'X / s2 to P and X'y / s2 to h (Bishop 2006, eq. 3.50-3.51).
- :class:`NormalInverseGammaPosterior`, unknown noise: sigma2 ~ InvGamma(a, b),
  theta | sigma2 ~ N(mu, sigma2 P^-1); a batch adds X'X to P, X'y to h, n/2 to a and y'y to
  c = 2 b + mu' P mu (Murphy 2007, "Conjugate Bayesian analysis of the Gaussian
  distribution", sec. 9; Murphy 2012, sec. 7.6.3). The marginal of each theta_j is Student-t
  with 2a degrees of freedom.

The flat prior has P = 0. Its posterior exists once X'X is positive definite; before that, any
question about the posterior raises :class:`~.errors.NotIdentified`. With unknown noise the
flat prior on theta is taken independent of sigma2, which gives a = a0 + (n - d) / 2.

Everything is solved with Cholesky factors; log-determinants come from their diagonals.

The Normal-Inverse-Gamma formulas that do not depend on how the posterior was updated (the
Student-t scale of a marginal, the log evidence) are the module functions :func:`nig_t_scale`
and :func:`nig_log_evidence`, elementwise; the univariate NIG of naive Bayes
(:mod:`inference.engines.naive_bayes_stats`, one posterior per class and feature) uses the
same two, and a test holds it equal to this regression NIG with an intercept-only design.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from scipy import linalg
from scipy.special import gammaln

from .dist import Dist
from .errors import NotIdentified

__all__ = [
    "GaussianPosterior",
    "NormalInverseGammaPosterior",
    "RegressionStats",
    "nig_log_evidence",
    "nig_t_scale",
    "regression_stats",
    "regression_stats_joint",
]

_LOG_2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True, eq=False)
class RegressionStats:
    """Sufficient statistics of a regression batch; batches combine by ``+``.

    Attributes
    ----------
    n : int
        Number of rows.
    xtx : numpy.ndarray
        X'X, shape ``(d, d)``.
    xty : numpy.ndarray
        X'y, shape ``(d,)``.
    yty : float
        y'y.
    """

    n: int
    xtx: np.ndarray
    xty: np.ndarray
    yty: float

    def __add__(self, other: RegressionStats) -> RegressionStats:
        return RegressionStats(self.n + other.n, self.xtx + other.xtx, self.xty + other.xty,
                               self.yty + other.yty)

    @classmethod
    def zero(cls, d: int) -> RegressionStats:
        """The statistics of no data."""
        return cls(0, np.zeros((d, d)), np.zeros(d), 0.0)


def regression_stats(X: np.ndarray, y: np.ndarray) -> RegressionStats:
    """Sufficient statistics of one batch.

    Parameters
    ----------
    X : numpy.ndarray
        Design matrix, shape ``(n, d)``.
    y : numpy.ndarray
        Response, shape ``(n,)``.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return RegressionStats(len(y), X.T @ X, X.T @ y, float(y @ y))


def regression_stats_joint(Z: np.ndarray) -> RegressionStats:
    """Sufficient statistics of one batch given as one block ``Z = [X | y]``.

    One product Z'Z holds X'X, X'y and y'y, so the batch is read from memory once.
    """
    Z = np.asarray(Z, dtype=np.float64)
    G = Z.T @ Z
    return RegressionStats(len(Z), G[:-1, :-1].copy(), G[:-1, -1].copy(), float(G[-1, -1]))


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
    return (-0.5 * n * _LOG_2PI + 0.5 * prior_logdet - 0.5 * posterior_logdet
            + shape0 * np.log(scale0) - shape * np.log(scale) + gammaln(shape)
            - gammaln(shape0))


def _cholesky(precision: np.ndarray, n: int, proper: bool = False) -> np.ndarray:
    """Lower Cholesky factor of a posterior precision, or NotIdentified.

    ``proper`` says the prior's precision is part of ``precision``: the matrix is then
    positive definite in exact arithmetic whatever the data, and only a failed factorisation
    (features whose scales differ by more than float64 can hold) is refused.
    """
    d = precision.shape[0]
    try:
        chol = linalg.cholesky(precision, lower=True, check_finite=False)
    except (linalg.LinAlgError, ValueError):
        chol = None
    if chol is not None and not np.all(np.isfinite(chol)):
        chol = None
    if proper:
        if chol is None or np.min(np.abs(np.diag(chol))) == 0:
            raise NotIdentified(
                f"the posterior precision of the {d} coefficients is not numerically positive "
                f"definite ({n} rows seen): the features' scales differ by more than float64 "
                f"arithmetic can hold; centre or rescale the features")
        return chol
    # A factor can succeed in floating point on a matrix that is singular in exact
    # arithmetic; the squared ratio of its extreme pivots estimates the reciprocal condition
    # number, and one near machine precision means the data do not determine theta.
    if chol is not None:
        pivots = np.abs(np.diag(chol))
        if pivots.min() == 0 or (pivots.min() / pivots.max()) ** 2 < 100 * d * np.finfo(float).eps:
            chol = None
    if chol is None:
        raise NotIdentified(
            f"the data do not yet determine all {d} coefficients under the flat prior "
            f"({n} rows seen; X'X is singular, or too close to it for float64, as when a "
            f"feature is far from zero compared with its spread): add rows, drop collinear "
            f"features, centre the features or use a proper prior")
    return chol


class _LinearPosteriorMixin:
    """What both posteriors compute from P and h."""

    precision: np.ndarray
    shift: np.ndarray
    n: int
    prior_logdet: float | None

    @cached_property
    def _chol(self) -> np.ndarray:
        return _cholesky(self.precision, self.n, proper=self.prior_logdet is not None)

    @property
    def dim(self) -> int:
        """Number of coefficients."""
        return self.shift.shape[0]

    @cached_property
    def mean(self) -> np.ndarray:
        """Posterior mean of theta, P^-1 h."""
        return linalg.cho_solve((self._chol, True), self.shift, check_finite=False)

    @cached_property
    def _scale_matrix(self) -> np.ndarray:
        """P^-1, formed for reporting only (solves never use it)."""
        return linalg.cho_solve((self._chol, True), np.eye(self.dim), check_finite=False)

    @property
    def scale_matrix(self) -> np.ndarray:
        """P^-1: the covariance of theta (known noise) or of theta / sigma2 (NIG)."""
        return self._scale_matrix

    def _quad_shift(self) -> float:
        """h' P^-1 h via the triangular factor."""
        z = linalg.solve_triangular(self._chol, self.shift, lower=True, check_finite=False)
        return float(z @ z)

    def _logdet_precision(self) -> float:
        return 2.0 * float(np.sum(np.log(np.diag(self._chol))))

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
        """x' P^-1 x for each row of X."""
        Z = linalg.solve_triangular(self._chol, np.atleast_2d(X).T, lower=True,
                                    check_finite=False)
        return np.sum(Z * Z, axis=0)


@dataclass(frozen=True, eq=False)
class GaussianPosterior(_LinearPosteriorMixin):
    """Posterior of theta with known noise variance, in natural parameters.

    Attributes
    ----------
    precision : numpy.ndarray
        P = Lambda^-1, shape ``(d, d)`` (zero for the flat prior before any data).
    shift : numpy.ndarray
        h = P mu, shape ``(d,)``.
    noise_var : float
        The known sigma^2.
    n : int
        Rows absorbed so far.
    yty : float
        Sum of y'y over the rows absorbed (for the evidence).
    prior_logdet : float or None
        log |P0| of the prior, None for the flat prior (no evidence then).
    prior_quad : float
        mu0' P0 mu0.
    """

    precision: np.ndarray
    shift: np.ndarray
    noise_var: float
    n: int = 0
    yty: float = 0.0
    prior_logdet: float | None = None
    prior_quad: float = 0.0

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
        mean = np.asarray(mean, dtype=np.float64)
        cov = np.asarray(cov, dtype=np.float64)
        chol = linalg.cholesky(cov, lower=True)
        eye = np.eye(len(mean))
        # P0 = cov^-1 via two triangular solves of the factor, not a general inverse.
        chol_inv = linalg.solve_triangular(chol, eye, lower=True)
        precision = chol_inv.T @ chol_inv
        shift = linalg.cho_solve((chol, True), mean)
        logdet = -2.0 * float(np.sum(np.log(np.diag(chol))))
        return cls(precision, shift, float(noise_var), prior_logdet=logdet,
                   prior_quad=float(mean @ shift))

    @classmethod
    def flat(cls, dim: int, *, noise_var: float) -> GaussianPosterior:
        """The flat prior (precision 0) over ``dim`` coefficients."""
        return cls(np.zeros((dim, dim)), np.zeros(dim), float(noise_var))

    def update(self, batch: RegressionStats) -> GaussianPosterior:
        """Absorb one batch: this posterior is the batch's prior."""
        return replace(self, precision=self.precision + batch.xtx / self.noise_var,
                       shift=self.shift + batch.xty / self.noise_var, n=self.n + batch.n,
                       yty=self.yty + batch.yty)

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
        """The normal marginal of each coefficient (:class:`~inference.engines.dist.Dist`)."""
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
        return float(-0.5 * self.n * (_LOG_2PI + np.log(s2)) - 0.5 * self.yty / s2
                     - 0.5 * self.prior_quad + 0.5 * self._quad_shift()
                     + 0.5 * self.prior_logdet - 0.5 * self._logdet_precision())


@dataclass(frozen=True, eq=False)
class NormalInverseGammaPosterior(_LinearPosteriorMixin):
    """Normal-Inverse-Gamma posterior of (theta, sigma2), in natural parameters.

    Attributes
    ----------
    precision : numpy.ndarray
        P: theta | sigma2 ~ N(P^-1 h, sigma2 P^-1).
    shift : numpy.ndarray
        h.
    shape0, scale0 : float
        The prior InvGamma(shape0, scale0) of sigma2.
    c : float
        2 * scale0 + mu0' P0 mu0 + sum of y'y; the scale is b = (c - h' P^-1 h) / 2.
    n : int
        Rows absorbed.
    prior_logdet : float or None
        log |P0|; None for the flat prior.
    """

    precision: np.ndarray
    shift: np.ndarray
    shape0: float
    scale0: float
    c: float
    n: int = 0
    prior_logdet: float | None = None

    @classmethod
    def from_prior(cls, mean, cov, *, shape: float, scale: float) -> NormalInverseGammaPosterior:
        """The prior sigma2 ~ InvGamma(shape, scale), theta | sigma2 ~ N(mean, sigma2 cov)."""
        g = GaussianPosterior.from_prior(mean, cov, noise_var=1.0)
        return cls(g.precision, g.shift, float(shape), float(scale),
                   2.0 * float(scale) + g.prior_quad, prior_logdet=g.prior_logdet)

    @classmethod
    def flat(cls, dim: int, *, shape: float, scale: float) -> NormalInverseGammaPosterior:
        """theta flat (independent of sigma2), sigma2 ~ InvGamma(shape, scale)."""
        return cls(np.zeros((dim, dim)), np.zeros(dim), float(shape), float(scale),
                   2.0 * float(scale))

    def update(self, batch: RegressionStats) -> NormalInverseGammaPosterior:
        """Absorb one batch: this posterior is the batch's prior."""
        return replace(self, precision=self.precision + batch.xtx, shift=self.shift + batch.xty,
                       c=self.c + batch.yty, n=self.n + batch.n)

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
        """Posterior scale b of sigma2."""
        self._check_shape()
        # c - h'P^-1 h is a residual sum of squares plus prior terms: >= 2 * scale0 > 0 in
        # exact arithmetic; cancellation cannot make it smaller than that.
        return max(0.5 * (self.c - self._quad_shift()), self.scale0)

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
        """The Student-t marginal of each theta_j (:class:`~inference.engines.dist.Dist`)."""
        return [Dist("t", self.df, m, s) for m, s in zip(self.mean, self.t_scale, strict=True)]

    def noise_marginal(self):
        """The InvGamma(a, b) marginal of sigma2 (:class:`~inference.engines.dist.Dist`)."""
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
