"""scikit-learn estimators for the regression models: conjugate linear regression and ARD.

:class:`BayesianLinearRegression` is ``model = "linear_regression"``;
:class:`ARDRegression` is ``model = "ard"``. Both build the model object of :mod:`models`
(which validates the hyperparameters as a spec would) and run the engine of
:mod:`bayescheck.inference.engines` through the family's functions: the same numbers as
``bayescheck fit`` on the same rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import feature_names, load_model, rng, spec_text, within_range

__all__ = ["ARDRegression", "BayesianLinearRegression"]

_INTERCEPT = "intercept"


def _design(X: np.ndarray, fit_intercept: bool) -> np.ndarray:
    """The rows as the model's design: the column of ones first when there is an intercept."""
    return np.column_stack([np.ones(len(X)), X]) if fit_intercept else X


def _data_section(data, target: str, features, fit_intercept: bool, formula=None) -> dict:
    if formula is not None:
        return {"path": None if data is None else str(data), "formula": formula}
    return {"path": None if data is None else str(data), "target": target,
            "features": None if features is None else list(features),
            "intercept": bool(fit_intercept)}


def _frame_batch(X):
    """A pandas frame as the one batch the formula's design reads."""
    import pandas as pd

    from bayescheck.data.sources import DataSource

    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"with a formula, X is a pandas DataFrame holding the formula's "
                        f"columns, got {type(X).__name__}")
    return DataSource.from_frame(X), next(iter(DataSource.from_frame(X).batches()))


def _formula_rows(estimator, X, y, *, first: bool) -> tuple[np.ndarray, np.ndarray]:
    """The design ``[X | y]`` of a frame under the estimator's formula (fixed on ``first``)."""
    from bayescheck.models.design import design_on

    if y is not None:
        raise ValueError(f"with a formula, y is not given: the formula {estimator.formula!r} "
                         f"names the response, a column of X")
    source, batch = _frame_batch(X)
    if first:
        estimator.design_ = design_on(estimator.formula, source)
        k = int(estimator.design_.has_intercept)
        estimator.terms_ = np.asarray(estimator.design_.columns[k:], dtype=object)
    joint = estimator.design_.joint(batch)
    return joint[:, :-1], joint[:, -1]


def _formula_matrix(estimator, X) -> np.ndarray:
    """New rows of a frame as the fitted formula's design (unseen levels refused)."""
    return estimator.design_.matrix(_frame_batch(X)[1])


def _n_intercept(estimator) -> int:
    """1 when the design's first column is the intercept, else 0."""
    if getattr(estimator, "formula", None) is not None:
        return int(estimator.design_.has_intercept)
    return int(bool(estimator.fit_intercept))


class BayesianLinearRegression(RegressorMixin, BaseEstimator):
    """Conjugate Bayesian linear regression with an exact, streaming posterior.

    The spec ``model = "linear_regression"`` (README, "Bayesian linear regression"): with
    ``noise="known"``, ``y ~ N(X theta, noise_sd^2)`` and ``theta ~ N(prior_mean, prior_cov)``;
    with ``noise="unknown"``, the Normal-Inverse-Gamma prior ``sigma2 ~ InvGamma(noise_shape,
    noise_scale)``, ``theta | sigma2 ~ N(prior_mean, sigma2 prior_cov)``. ``theta`` is
    ``[intercept_, *coef_]`` when ``fit_intercept``. The posterior is updated by a QR of the
    rows (``inference.engines.linear_gaussian``), so :meth:`partial_fit` over any batching
    gives the posterior of one :meth:`fit` on all the rows.

    Parameters
    ----------
    noise : {"known", "unknown"}
        Whether the noise sd is fixed at ``noise_sd`` or has the inverse-gamma prior.
    noise_sd : float
        The known noise standard deviation (``noise="known"``).
    noise_shape, noise_scale : float
        InvGamma(shape, scale) prior of the noise variance (``noise="unknown"``).
    prior_precision : float
        ``prior_cov = I / prior_precision`` when ``prior_cov`` is None (ridge's penalty for
        unknown noise); 0 is the flat prior.
    prior_mean : float or array_like
        Prior mean of theta (a number for every coefficient, or one per coefficient,
        intercept first).
    prior_cov : array_like, optional
        Full prior covariance of theta (intercept first), instead of ``prior_precision``.
    fit_intercept : bool
        Add a column of ones (named ``intercept`` in the spec), with the same prior. Not
        used with ``formula``: the formula has its own intercept (``- 1`` removes it).
    formula : str, optional
        ``"y ~ x1 + np.log(x2) + C(region) + x1:x3"`` (formulaic's syntax): ``fit(frame)``
        takes a DataFrame holding the response and the terms' columns (no ``y``); the
        categorical levels of the first ``fit`` / ``partial_fit`` fix the encoding, and a
        level seen later is refused, naming the row.

    Attributes
    ----------
    coef_ : numpy.ndarray of shape (n_features,)
        Posterior mean of the coefficients.
    intercept_ : float
        Posterior mean of the intercept (0.0 without one).
    sigma_ : numpy.ndarray of shape (n_features, n_features)
        Posterior covariance of ``coef_``.
    alpha_ : float
        Noise precision: ``1 / noise_sd^2`` (known), its posterior mean ``a / b`` (unknown).
    lambda_ : float
        ``prior_precision``.
    posterior_ : GaussianPosterior or NormalInverseGammaPosterior
        The engine's posterior (its ``log_evidence``, ``marginal()``, ``predictive(X)``).
    log_evidence_ : float or None
        ``log p(y | X)``, theta (and sigma2) integrated out: the exact evidence for comparing
        feature sets or priors; None under the flat (improper) prior.
    model_ : models.LinearRegression
        The model object (what the spec reads into).
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray
        When ``X`` was a DataFrame with string column names (not with ``formula``).
    design_ : models.formula.FormulaDesign
        With ``formula``: the encoding fixed by the first fit.
    terms_ : numpy.ndarray of str
        With ``formula``: the names of ``coef_`` (the design's columns but ``Intercept``).
    """

    def __init__(self, noise="known", noise_sd=1.0, noise_shape=1.0, noise_scale=1.0,
                 prior_precision=1.0, prior_mean=0.0, prior_cov=None, fit_intercept=True,
                 formula=None):
        self.noise = noise
        self.noise_sd = noise_sd
        self.noise_shape = noise_shape
        self.noise_scale = noise_scale
        self.prior_precision = prior_precision
        self.prior_mean = prior_mean
        self.prior_cov = prior_cov
        self.fit_intercept = fit_intercept
        self.formula = formula

    # ---- the model -----------------------------------------------------------------------

    def _model(self, n_features: int):
        from bayescheck.models.linear_regression import LinearRegression

        if self.noise not in ("known", "unknown"):
            raise ValueError(f"noise must be 'known' or 'unknown', got {self.noise!r}")
        design = getattr(self, "design_", None) if self.formula is not None else None
        if design is not None:
            features = design.columns
        else:
            names = feature_names(self, n_features)
            features = (_INTERCEPT, *names) if self.fit_intercept else names
        d = len(features)
        if self.prior_cov is None:
            precision = float(self.prior_precision)
            if not (precision >= 0 and np.isfinite(precision)):
                raise ValueError(f"prior_precision must be >= 0 and finite, got "
                                 f"{self.prior_precision!r}")
            flat = precision == 0
            cov = None if flat else np.eye(d) / precision
        else:
            flat, cov = False, self.prior_cov
        mean = None if flat else np.broadcast_to(np.asarray(self.prior_mean, float), (d,)).copy()
        return LinearRegression(
            features=features, target="y" if design is None else design.target,
            prior_mean=mean, prior_cov=cov,
            noise_sd=self.noise_sd if self.noise == "known" else None,
            noise_shape=self.noise_shape, noise_scale=self.noise_scale,
            intercept=bool(self.fit_intercept) and design is None, formula=design)

    def fit(self, X, y=None):
        """Posterior of the model given the rows ``(X, y)`` (the prior forgotten before).

        With ``formula``, ``X`` is a DataFrame holding the response and ``y`` is not given.
        """
        for attr in ("posterior_", "model_", "design_", "terms_"):
            self.__dict__.pop(attr, None)
        return self.partial_fit(X, y)

    def partial_fit(self, X, y=None):
        """Absorb more rows: the posterior so far is their prior (exact, any batching)."""
        from bayescheck.inference.engines.linear_gaussian import regression_stats
        from bayescheck.inference.families.linear_regression import prior_posterior

        first = not hasattr(self, "posterior_")
        if self.formula is not None:
            rows, y = _formula_rows(self, X, y, first=first)
        else:
            X, y = validate_data(self, X, y, reset=first, y_numeric=True, dtype=np.float64)
            within_range(X, y)
            rows = _design(X, self.fit_intercept)
        if first:
            self.model_ = self._model(rows.shape[1] - _n_intercept(self))
            state = prior_posterior(self.model_)
        else:
            state = self.posterior_
        state = state.update(regression_stats(rows, y))
        state.require_identified()  # a NotIdentified (ValueError) says why
        self.posterior_ = state
        self._publish()
        return self

    def _publish(self):
        post, k = self.posterior_, _n_intercept(self)
        self.coef_ = post.mean[k:].copy()
        self.intercept_ = float(post.mean[0]) if k else 0.0
        self.sigma_ = post.cov[k:, k:].copy()
        self.alpha_ = (1.0 / self.model_.noise_sd ** 2 if self.model_.known_noise
                       else post.shape / post.scale)
        self.lambda_ = None if self.prior_cov is not None else float(self.prior_precision)
        self.log_evidence_ = post.log_evidence

    # ---- prediction ----------------------------------------------------------------------

    def _rows(self, X) -> np.ndarray:
        check_is_fitted(self, "posterior_")
        if self.formula is not None:
            return _formula_matrix(self, X)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        within_range(X)
        return _design(X, self.fit_intercept)

    def predict(self, X, return_std=False):
        """Posterior predictive mean of the response at each row (and its sd).

        Parameters
        ----------
        X : array_like of shape (n_rows, n_features)
        return_std : bool
            Also return the predictive standard deviation (noise included): Normal for known
            noise, Student-t with ``2a`` degrees of freedom for unknown noise.

        Returns
        -------
        mean : numpy.ndarray of shape (n_rows,)
        std : numpy.ndarray of shape (n_rows,)
            Only when ``return_std``.
        """
        dist = self.posterior_predictive(X)
        mean = np.asarray(dist.mean(), dtype=float)
        return (mean, np.asarray(dist.std(), dtype=float)) if return_std else mean

    def posterior_predictive(self, X):
        """The predictive distribution of each row's response, a vector ``Dist`` (ppf, pdf)."""
        rows = self._rows(X)
        return self.posterior_.predictive(rows)

    def sample_y(self, X, n_samples=1, random_state=0):
        """Draws of the responses at ``X`` from the joint posterior predictive.

        Each draw takes theta (and sigma2) from the exact posterior, then the noise: the rows
        of one draw share the parameters.

        Returns
        -------
        numpy.ndarray of shape (n_rows, n_samples)
        """
        from bayescheck.inference.families.linear_regression import (
            exact_draws_linear_regression,
            posterior_parameters,
        )

        Xd = self._rows(X)
        gen = rng(random_state)
        posterior = {"parameters": posterior_parameters(self.model_, self.posterior_)}
        draws, _ = exact_draws_linear_regression(posterior, draws=n_samples, chains=1, rng=gen)
        theta = draws["theta"][1][0]  # (n_samples, d)
        sigma2 = (np.full(n_samples, self.model_.noise_sd ** 2) if "sigma2" not in draws
                  else draws["sigma2"][1][0])
        noise = gen.standard_normal((len(Xd), n_samples)) * np.sqrt(sigma2)
        return Xd @ theta.T + noise

    # ---- specs ---------------------------------------------------------------------------

    @classmethod
    def from_spec(cls, path: str | Path) -> BayesianLinearRegression:
        """The estimator of a ``linear_regression`` spec's hyperparameters (not its data)."""
        model = load_model(path, "linear_regression")
        precision, mean, cov = 0.0, 0.0, None
        if not model.flat:
            precision, mean, cov = 1.0, model.prior_mean, model.prior_cov
            if np.all(mean == mean[0]):
                mean = float(mean[0])
            if np.array_equal(cov, cov[0, 0] * np.eye(len(cov))):  # c I: a ridge precision
                precision, cov = 1.0 / float(cov[0, 0]), None
        return cls(
            noise="known" if model.known_noise else "unknown",
            noise_sd=model.noise_sd if model.known_noise else 1.0,
            noise_shape=model.noise_shape, noise_scale=model.noise_scale,
            prior_precision=precision, prior_mean=mean, prior_cov=cov,
            fit_intercept=model.intercept or model.formula is not None,
            formula=None if model.formula is None else model.formula.formula)

    def to_spec(self, data=None, target: str = "y", features=None) -> str:
        """TOML text of the ``linear_regression`` spec with these hyperparameters.

        Parameters
        ----------
        data : str or pathlib.Path, optional
            ``[data] path``; the spec can only be fitted once it is given.
        target : str
            The response column.
        features : sequence of str, optional
            The feature columns (default: the fitted DataFrame's columns, else every column
            but the target).
        """
        if features is None and hasattr(self, "feature_names_in_"):
            features = list(self.feature_names_in_)
        known = self.noise == "known"
        prior = {}
        if self.prior_cov is None and float(self.prior_precision) == 0:
            prior["flat"] = True
        else:
            prior["cov"] = (1.0 / float(self.prior_precision) if self.prior_cov is None
                            else np.asarray(self.prior_cov, float))  # a number: times I
            mean = np.asarray(self.prior_mean, float)
            prior["mean"] = float(mean) if mean.ndim == 0 else mean
        if not known:
            prior.update(noise_shape=float(self.noise_shape), noise_scale=float(self.noise_scale))
        return spec_text("linear_regression", {
            "data": _data_section(data, target, features, self.fit_intercept, self.formula),
            "likelihood": {"noise_sd": float(self.noise_sd)} if known else {},
            "prior": prior})


class ARDRegression(RegressorMixin, BaseEstimator):
    """Automatic relevance determination (sparse Bayesian learning) by type-II ML.

    The spec ``model = "ard"`` (docs/models/ard.md): ``y ~ N(X w, sigma2)``,
    ``w_i ~ N(0, 1 / alpha_i)``; ``(alpha, sigma2)`` maximise the evidence
    (``inference.engines.sbl.fit_sbl``), an infinite ``alpha_i`` prunes weight ``i``, and
    ``w`` has its exact Gaussian posterior given them. The intercept, when fitted, is a
    weight with its own ``alpha``. Not streaming: type-II ML needs every row.

    Parameters
    ----------
    method : {"fast", "em", "mackay"}
        The hyperparameter update (Tipping-Faul fast marginal likelihood, EM, MacKay).
    max_iter : int
    tol : float
        Convergence tolerance on log alpha and log sigma2.
    relevance_threshold : float or "ric" or "auto"
        Fast method: a weight is kept when ``q_i^2 / s_i`` exceeds it (1: exact type-II ML).
        ``"auto"`` (the spec's default) is ``"ric"`` when the design has at least as many
        columns as rows and 1 otherwise.
    fit_intercept : bool
        Not used with ``formula`` (the formula has its own intercept).
    alpha_shape, alpha_rate, noise_shape, noise_rate : float
        Hyperpriors of the hierarchical declaration that ``bayescheck check`` samples; they
        do not change this fit and are kept for :meth:`to_spec`.
    formula : str, optional
        As in :class:`BayesianLinearRegression`: ``fit(frame)`` without ``y``.

    Attributes
    ----------
    coef_ : numpy.ndarray of shape (n_features,)
        Posterior mean of the weights (0 where pruned).
    intercept_ : float
    alpha_ : float
        Noise precision ``1 / sigma2`` (scikit-learn's name).
    lambda_ : numpy.ndarray of shape (n_features,)
        Weight precisions ``alpha_i`` (``inf`` where pruned).
    sigma_ : numpy.ndarray
        Posterior covariance of the kept weights of ``coef_`` (``relevant_``).
    relevant_ : numpy.ndarray of bool, shape (n_features,)
    log_evidence_ : float
        ``log p(y | X, alpha, sigma2)`` at the estimate: the maximised (type-II) evidence.
    result_ : inference.engines.sbl.SBLResult
        The engine's result (``log_evidence`` per iteration, ``converged``, ...).
    design_, terms_
        With ``formula``, as in :class:`BayesianLinearRegression`.
    """

    def __init__(self, method="fast", max_iter=1000, tol=1e-6, relevance_threshold="auto",
                 fit_intercept=True, alpha_shape=1.0, alpha_rate=1.0, noise_shape=1.0,
                 noise_rate=1.0, formula=None):
        self.method = method
        self.max_iter = max_iter
        self.tol = tol
        self.relevance_threshold = relevance_threshold
        self.fit_intercept = fit_intercept
        self.alpha_shape = alpha_shape
        self.alpha_rate = alpha_rate
        self.noise_shape = noise_shape
        self.noise_rate = noise_rate
        self.formula = formula

    def fit(self, X, y=None):
        """Estimate ``(alpha, sigma2)`` and the posterior of the weights given them."""
        from bayescheck.inference.families.ard import estimate
        from bayescheck.models.ard import ARD

        settings = dict(method=self.method, max_iter=int(self.max_iter), tol=self.tol,
                        relevance_threshold=self.relevance_threshold,
                        alpha_shape=self.alpha_shape, alpha_rate=self.alpha_rate,
                        noise_shape=self.noise_shape, noise_rate=self.noise_rate)
        if self.formula is not None:
            self.__dict__.pop("design_", None)
            rows, y = _formula_rows(self, X, y, first=True)
            design = self.design_
            self.model_ = ARD(features=design.columns, target=design.target, formula=design,
                              **settings)
        else:
            X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
            within_range(X, y)
            names = feature_names(self, X.shape[1])
            self.model_ = ARD(features=(_INTERCEPT, *names) if self.fit_intercept else names,
                              target="y", intercept=bool(self.fit_intercept), **settings)
            rows = _design(X, self.fit_intercept)
        if not np.any(y != 0):
            raise ValueError("y is 0 in every row: the noise variance cannot be estimated")
        sbl = estimate(self.model_, rows, y)
        k = _n_intercept(self)
        self.result_ = sbl
        self.coef_ = sbl.mean[k:].copy()
        self.intercept_ = float(sbl.mean[0]) if k else 0.0
        self.alpha_ = 1.0 / sbl.noise_var
        self.lambda_ = sbl.alpha[k:].copy()
        self.relevant_ = np.isfinite(self.lambda_)
        keep = np.flatnonzero(np.isin(sbl.relevant, np.arange(k, len(sbl.alpha))))
        self.sigma_ = sbl.cov[np.ix_(keep, keep)]
        self.n_iter_ = sbl.n_iter
        self.log_evidence_ = float(sbl.log_evidence[-1])
        return self

    def predict(self, X, return_std=False):
        """Predictive mean (and sd, noise included) at each row given the estimates."""
        from bayescheck.inference.families.linear_regression import row_variances

        check_is_fitted(self, "result_")
        if self.formula is not None:
            Xd = _formula_matrix(self, X)
        else:
            X = validate_data(self, X, reset=False, dtype=np.float64)
            within_range(X)
            Xd = _design(X, self.fit_intercept)
        sbl = self.result_
        mean = Xd @ sbl.mean
        if not return_std:
            return mean
        relevant = np.asarray(sbl.relevant, dtype=int)
        return mean, np.sqrt(sbl.noise_var + row_variances(Xd[:, relevant], sbl.cov))

    @classmethod
    def from_spec(cls, path: str | Path) -> ARDRegression:
        """The estimator of an ``ard`` spec's settings (not its data)."""
        model = load_model(path, "ard")
        return cls(method=model.method, max_iter=model.max_iter, tol=model.tol,
                   relevance_threshold=model.relevance_threshold,
                   fit_intercept=model.intercept or model.formula is not None,
                   formula=None if model.formula is None else model.formula.formula,
                   alpha_shape=model.alpha_shape,
                   alpha_rate=model.alpha_rate, noise_shape=model.noise_shape,
                   noise_rate=model.noise_rate)

    def to_spec(self, data=None, target: str = "y", features=None) -> str:
        """TOML text of the ``ard`` spec with these settings.

        Arguments as :meth:`BayesianLinearRegression.to_spec`.
        """
        if features is None and hasattr(self, "feature_names_in_"):
            features = list(self.feature_names_in_)
        return spec_text("ard", {
            "data": _data_section(data, target, features, self.fit_intercept, self.formula),
            "fit": {"method": self.method, "max_iter": int(self.max_iter),
                    "tol": float(self.tol), "relevance_threshold": self.relevance_threshold},
            "prior": {"alpha_shape": float(self.alpha_shape),
                      "alpha_rate": float(self.alpha_rate),
                      "noise_shape": float(self.noise_shape),
                      "noise_rate": float(self.noise_rate)}})
