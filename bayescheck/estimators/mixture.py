"""A scikit-learn estimator for the Gaussian mixture (``model = "gaussian_mixture"``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import feature_names, load_model, rng, spec_text, within_range

__all__ = ["GaussianMixture"]

_KINDS = ("full", "tied", "diag", "spherical")


class GaussianMixture(DensityMixin, BaseEstimator):
    """Gaussian mixture fitted by EM: maximum likelihood, or MAP under the spec's priors.

    The spec ``model = "gaussian_mixture"`` (docs/models/gaussian_mixture.md): the same
    engine (``inference.engines.mixture_em.fit_em``) and the same naming of the components
    as ``bayescheck fit`` (sorted by mean in one dimension, aligned to the k-means centres in
    several). Any prior different from flat (``concentration != 1``, ``kappa > 0``, an
    inverse-Wishart or inverse-gamma covariance prior) makes the estimate MAP.

    Parameters
    ----------
    n_components : int
    covariance_type : {"full", "tied", "diag", "spherical"}
    concentration : float
        Dirichlet concentration of the weights (>= 1).
    prior_mean : float or array_like
        ``m0`` of ``means | Sigma ~ N(m0, Sigma / kappa)``.
    kappa : float
        0: flat prior on the means.
    iw_dof, iw_scale : float and array_like, optional
        Inverse-Wishart prior of each covariance (full / tied).
    ig_shape, ig_scale : float and float or array_like, optional
        Inverse-gamma prior of each variance (diag / spherical).
    known_sd : float, optional
        Every component's covariance fixed at ``known_sd^2 I``.
    equal_weights : bool
        Hold the weights at ``1 / n_components``.
    n_init, max_iter, tol : EM settings (``tol`` per row, as scikit-learn's).
    means_init : array_like of shape (n_components, n_features), optional
        One deterministic start.
    random_state : int, optional
        Seeds the k-means++ starts.

    Attributes
    ----------
    weights_ : numpy.ndarray of shape (n_components,)
    means_ : numpy.ndarray of shape (n_components, n_features)
    covariances_ : numpy.ndarray
        scikit-learn's shapes: full (K, D, D), tied (D, D), diag (K, D), spherical (K,).
    converged_ : bool
    n_iter_ : int
    log_likelihood_ : float
        Total log-likelihood of the training rows at the estimate.

    Model choice: :meth:`bic` and :meth:`aic` as scikit-learn defines them (lower is better),
    with the free parameters of this model; an EM estimate has no exact log evidence, so there
    is no ``log_evidence_``.
    lower_bound_ : float
        The objective EM maximised (the log-likelihood, plus the log prior for MAP).
    result_ : inference.engines.mixture_em.EMResult
    """

    def __init__(self, n_components=1, covariance_type="full", concentration=1.0,
                 prior_mean=0.0, kappa=0.0, iw_dof=None, iw_scale=None, ig_shape=None,
                 ig_scale=None, known_sd=None, equal_weights=False, n_init=5, max_iter=500,
                 tol=1e-8, means_init=None, random_state=0):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.concentration = concentration
        self.prior_mean = prior_mean
        self.kappa = kappa
        self.iw_dof = iw_dof
        self.iw_scale = iw_scale
        self.ig_shape = ig_shape
        self.ig_scale = ig_scale
        self.known_sd = known_sd
        self.equal_weights = equal_weights
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.means_init = means_init
        self.random_state = random_state

    def _model(self, n_features: int):
        from bayescheck.models.gaussian_mixture import GaussianMixture as Model

        seed = self.random_state
        if not isinstance(seed, (int, np.integer)):
            seed = int(rng(seed).integers(2**31 - 1))
        init = None if self.means_init is None else np.asarray(self.means_init, float)
        iw_scale = ig_scale = None
        if self.iw_scale is not None:  # a number is that times the identity, as in a spec
            iw_scale = np.asarray(self.iw_scale, float)
            iw_scale = iw_scale * np.eye(n_features) if iw_scale.ndim == 0 else iw_scale
        if self.ig_scale is not None:
            ig_scale = np.asarray(self.ig_scale, float)
            if self.covariance_type == "diag":
                ig_scale = np.broadcast_to(ig_scale, (n_features,)).copy()
            else:
                ig_scale = float(ig_scale)
        return Model(features=feature_names(self, n_features), n_components=int(self.n_components),
                     covariance=self.covariance_type, concentration=float(self.concentration),
                     prior_mean=self.prior_mean, kappa=float(self.kappa), iw_dof=self.iw_dof,
                     iw_scale=iw_scale, ig_shape=self.ig_shape, ig_scale=ig_scale,
                     n_init=1 if init is not None else int(self.n_init),
                     max_iter=int(self.max_iter), tol=float(self.tol), seed=int(seed),
                     init_means=init, known_sd=self.known_sd,
                     equal_weights=bool(self.equal_weights))

    def fit(self, X, y=None):
        """Run EM on the rows of ``X`` (``y`` is ignored)."""
        from bayescheck.inference.families.gaussian_mixture import estimate

        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        within_range(X)
        K = int(self.n_components)
        if X.shape[0] < K:
            raise ValueError(f"n_samples={X.shape[0]} should be >= n_components={K}: every "
                             f"component needs at least one row")
        self.model_ = self._model(X.shape[1])
        result, _ = estimate(self.model_, X)
        self.result_ = result
        self.weights_ = result.weights.copy()
        self.means_ = result.means.copy()
        covs = result.covariances
        kind = self.model_.kind
        self.covariances_ = {"full": covs, "known": covs, "tied": covs[0],
                             "diag": np.diagonal(covs, axis1=1, axis2=2).copy(),
                             "spherical": covs[:, 0, 0].copy()}[kind]
        self.converged_ = bool(result.converged)
        self.n_iter_ = int(result.n_iter)
        self.log_likelihood_ = float(result.log_likelihood)
        self.lower_bound_ = float(result.objective)
        return self

    def _rows(self, X):
        from bayescheck.inference.engines.mixture_em import mixture_rows

        check_is_fitted(self, "result_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        within_range(X)
        r = self.result_
        return mixture_rows(X, r.weights, r.means, r.covariances)

    def predict_proba(self, X):
        """Responsibilities: the probability of each component given each row, (n, K)."""
        return self._rows(X)[0]

    def predict(self, X):
        """The most probable component of each row."""
        return np.argmax(self.predict_proba(X), axis=1)

    def fit_predict(self, X, y=None):
        """Fit, then the most probable component of each training row."""
        return self.fit(X).predict(X)

    def score_samples(self, X):
        """Log density ``log p(x)`` of each row under the fitted mixture."""
        return self._rows(X)[1]

    def score(self, X, y=None):
        """Mean log density of the rows."""
        return float(np.mean(self.score_samples(X)))

    def _n_parameters(self) -> int:
        """Free parameters: means, covariances (none when known), weights (none when equal)."""
        check_is_fitted(self, "result_")
        K, D = self.means_.shape
        cov = {"full": K * D * (D + 1) // 2, "tied": D * (D + 1) // 2, "diag": K * D,
               "spherical": K, "known": 0}[self.model_.kind]
        weights = 0 if self.equal_weights else K - 1
        return int(K * D + cov + weights)

    def bic(self, X):
        """Bayesian information criterion of the rows: ``-2 log L + p log n`` (lower is better).

        ``log L`` is the log-likelihood of ``X`` at the estimate and ``p`` the free parameters:
        ``K D`` means, the covariances (``K D (D + 1) / 2`` full, ``D (D + 1) / 2`` tied,
        ``K D`` diag, ``K`` spherical, none with ``known_sd``) and ``K - 1`` weights (none with
        ``equal_weights``), scikit-learn's ``GaussianMixture.bic`` for its four kinds.
        """
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return float(-2.0 * self.score(X) * X.shape[0] + self._n_parameters() * np.log(len(X)))

    def aic(self, X):
        """Akaike information criterion of the rows: ``-2 log L + 2 p`` (lower is better).

        ``p`` counts the free parameters as :meth:`bic` does.
        """
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return float(-2.0 * self.score(X) * X.shape[0] + 2 * self._n_parameters())

    def sample(self, n_samples=1, random_state=None):
        """Draws from the fitted mixture: rows ``(n_samples, D)`` and their components."""
        check_is_fitted(self, "result_")
        gen = rng(random_state)
        r = self.result_
        labels = gen.choice(len(r.weights), size=int(n_samples), p=r.weights)
        chol = np.linalg.cholesky(r.covariances)
        z = gen.standard_normal((int(n_samples), r.means.shape[1]))
        return r.means[labels] + np.einsum("nij,nj->ni", chol[labels], z), labels

    @classmethod
    def from_spec(cls, path: str | Path) -> GaussianMixture:
        """The estimator of a ``gaussian_mixture`` spec's priors and EM settings."""
        m = load_model(path, "gaussian_mixture")
        mean = m.prior_mean
        return cls(n_components=m.n_components, covariance_type=m.covariance,
                   concentration=m.concentration,
                   prior_mean=float(mean[0]) if np.all(mean == mean[0]) else mean,
                   kappa=m.kappa, iw_dof=m.iw_dof, iw_scale=m.iw_scale, ig_shape=m.ig_shape,
                   ig_scale=m.ig_scale, known_sd=m.known_sd, equal_weights=m.equal_weights,
                   n_init=m.n_init, max_iter=m.max_iter, tol=m.tol, means_init=m.init_means,
                   random_state=m.seed)

    def to_spec(self, data=None, features=None) -> str:
        """TOML text of the ``gaussian_mixture`` spec with these settings.

        ``data``: ``[data] path``; ``features``: its columns (default: the fitted DataFrame's,
        else every column).
        """
        if features is None and hasattr(self, "feature_names_in_"):
            features = list(self.feature_names_in_)
        mean = np.asarray(self.prior_mean, float)
        prior = {"concentration": float(self.concentration), "kappa": float(self.kappa),
                 "mean": float(mean) if mean.ndim == 0 else mean,
                 "iw_dof": self.iw_dof, "iw_scale": self.iw_scale,
                 "ig_shape": self.ig_shape, "ig_scale": self.ig_scale}
        seed = self.random_state if isinstance(self.random_state, (int, np.integer)) else None
        fit = {"n_init": None if self.means_init is not None else int(self.n_init),
               "max_iter": int(self.max_iter), "tol": float(self.tol), "seed": seed,
               "init_means": self.means_init, "known_sd": self.known_sd,
               "equal_weights": bool(self.equal_weights)}
        return spec_text("gaussian_mixture", {
            "data": {"path": None if data is None else str(data),
                     "features": None if features is None else list(features)},
            "fit": fit, "prior": prior},
            top={"n_components": int(self.n_components), "covariance": self.covariance_type})
