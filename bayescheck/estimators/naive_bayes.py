"""scikit-learn classifiers for naive Bayes (``model = "naive_bayes"``), Gaussian or categorical.

Both feed the engine of :mod:`bayescheck.inference.engines.naive_bayes_stats` (sufficient statistics
merged by addition) and fit it with the family's prior (``inference.families.naive_bayes
.fitted_model``), so :meth:`partial_fit` over any batching equals one :meth:`fit`. The
engine sees the classes as their codes ``0 .. K-1`` in the order of ``classes_``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import (
    feature_names,
    load_model,
    require_code_tables,
    spec_text,
    within_range,
)
from ._frames import FrameOutputMixin, categories_of, category_table, declared_sizes

__all__ = ["CategoricalNaiveBayes", "GaussianNaiveBayes"]


class _NaiveBayes(FrameOutputMixin, ClassifierMixin, BaseEstimator):
    """What the two classifiers share: classes, streaming statistics, prediction."""

    _kind: str

    def _settings(self) -> dict:
        raise NotImplementedError

    def _categories(self, X, old) -> tuple:
        """One entry per feature for the schema (None for Gaussian features)."""
        return (None,) * X.shape[1]

    def _validate(self, X, y=None, *, reset, fit=False):
        """``X`` (``fit``: ``(X, y)``) checked; the category codes as integers."""
        raise NotImplementedError

    def fit(self, X, y):
        """Posterior of the classifier given the rows (the prior forgotten before)."""
        for attr in ("stats_", "classes_"):
            self.__dict__.pop(attr, None)
        self.partial_fit(X, y)
        if not hasattr(self, "model_"):
            raise ValueError(self.not_fitted_reason_)
        return self

    def partial_fit(self, X, y, classes=None):
        """Add rows to the statistics (exact: any batching gives the same classifier).

        Parameters
        ----------
        X, y : array_like
            The rows and their classes.
        classes : array_like, optional
            Every class label, on the first call (a later batch with a new label is refused,
            as in scikit-learn); default: the labels of ``y``.
        """
        from bayescheck.inference.engines.naive_bayes_stats import (
            NaiveBayesSchema,
            NaiveBayesStats,
            naive_bayes_stats,
        )

        first = not hasattr(self, "stats_")
        X, y = self._validate(X, y, reset=first, fit=True)
        check_classification_targets(y)
        if first:
            self.classes_ = np.unique(y if classes is None else np.asarray(classes))
        codes = np.searchsorted(self.classes_, y)
        codes = np.minimum(codes, len(self.classes_) - 1)
        unknown = self.classes_[codes] != y
        if np.any(unknown):
            raise ValueError(f"y holds the label {y[np.flatnonzero(unknown)[0]]!r}, not among "
                             f"the classes {self.classes_.tolist()}; pass every class in "
                             f"classes= on the first call to partial_fit")
        if len(self.classes_) < 2:
            raise ValueError(f"naive Bayes needs at least 2 classes; y has one class "
                             f"({self.classes_.tolist()})")
        old = None if first else self.stats_
        schema = NaiveBayesSchema(
            classes=tuple(range(len(self.classes_))), kinds=(self._kind,) * X.shape[1],
            categories=self._categories(X, old),
            feature_names=feature_names(self, X.shape[1]))
        batch = naive_bayes_stats(X, codes, schema=schema)
        if first:
            self.stats_ = NaiveBayesStats.empty(schema) + batch
        else:
            self.stats_ = (old if old.schema == schema else old.reindexed(schema)) + batch
        # A stream may not yet determine the classifier (maximum-likelihood variances of a
        # class without two rows): the statistics are kept, prediction waits for more rows.
        self.__dict__.pop("model_", None)
        options = self._engine_options()  # bad settings are refused now, not deferred
        try:
            self._publish(options)
            self.not_fitted_reason_ = None
        except ValueError as exc:
            self.not_fitted_reason_ = str(exc)
        return self

    def _engine_options(self) -> dict:
        """The engine's fit options from the settings, validated (a ValueError names one)."""
        from bayescheck.inference.engines.naive_bayes_stats import UnivariateNIGPrior

        m = self._model()
        if not (isinstance(m.concentration, float) and m.concentration > 0
                and np.isfinite(m.concentration)):
            raise ValueError(f"concentration must be a positive number, got "
                             f"{self.concentration!r}")
        if m.class_prior not in ("dirichlet", "frequency") or m.gaussian not in ("nig", "ml"):
            raise ValueError(f"class_prior must be 'dirichlet' or 'frequency' and gaussian "
                             f"'nig' or 'ml', got {m.class_prior!r} and {m.gaussian!r}")
        return {"smoothing": m.smoothing, "concentration": m.concentration,
                "class_prior": m.class_prior, "gaussian": m.gaussian,
                "nig_prior": UnivariateNIGPrior(mu0=m.mu0, kappa0=m.kappa0, a0=m.a0, b0=m.b0)}

    def _publish(self, options: dict):
        from bayescheck.inference.engines.naive_bayes_stats import fit_naive_bayes

        self.model_ = fit_naive_bayes(stats=self.stats_, **options)
        self.class_count_ = self.stats_.class_counts.astype(float)
        self.class_log_prior_ = self.model_.class_log_prior.copy()
        self.log_evidence_ = self._log_evidence()

    def _log_evidence(self) -> float | None:
        """log p(y, X) with every weight integrated out; None for the plug-in settings."""
        m = self.model_
        if not (m.smoothing and self.class_prior == "dirichlet" and m.gaussian == "nig"):
            return None
        total = m.class_posterior.log_marginal_likelihood()
        for per_class in m.category_posteriors:
            total += sum(p.log_marginal_likelihood() for p in per_class or () if p is not None)
        if m.nig is not None:
            total += float(np.sum(m.nig.log_marginal_likelihood()))
        return float(total)

    def _model(self):
        from bayescheck.models.naive_bayes import NaiveBayes

        names = self.stats_.schema.feature_names
        return NaiveBayes(features=names, kinds=(self._kind,) * len(names), target="y",
                          **self._settings())

    def _check_fitted(self):
        check_is_fitted(self, "stats_")
        if not hasattr(self, "model_"):
            raise ValueError(f"the rows so far do not determine the classifier: "
                             f"{self.not_fitted_reason_}")

    def predict_proba(self, X):
        """Posterior predictive probability of each class (columns in ``classes_`` order)."""
        self._check_fitted()
        return self.model_.predict_proba(self._validate(X, reset=False))

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`, computed in log space."""
        self._check_fitted()
        return self.model_.predict_log_proba(self._validate(X, reset=False))

    def predict(self, X):
        """The most probable class of each row."""
        log_proba = self.predict_log_proba(X)
        return self.classes_[np.argmax(log_proba, axis=1)]

    @classmethod
    def _from_model(cls, model) -> dict:
        raise NotImplementedError

    @classmethod
    def from_spec(cls, path: str | Path):
        """The estimator of a ``naive_bayes`` spec's priors (every feature of this kind)."""
        model = load_model(path, "naive_bayes")
        if set(model.kinds) != {cls._kind}:
            raise ValueError(f"{path}: the spec's features are of kinds "
                             f"{sorted(set(model.kinds))}; {cls.__name__} has {cls._kind!r} "
                             f"features only")
        return cls(**cls._from_model(model))

    def to_spec(self, data=None, target: str = "y", features=None) -> str:
        """TOML text of the ``naive_bayes`` spec with these priors.

        ``data``: ``[data] path``; ``target``: the class column; ``features``: the feature
        columns (default: the fitted DataFrame's).
        """
        if features is None and hasattr(self, "feature_names_in_"):
            features = list(self.feature_names_in_)
        data_section = {"path": None if data is None else str(data), "target": target,
                        "features": None if features is None else list(features),
                        "features_kind": self._kind}
        return spec_text("naive_bayes", {"data": data_section, "prior": self._settings()})


class GaussianNaiveBayes(_NaiveBayes):
    """Naive Bayes with Gaussian features: the exact posterior predictive of its model.

    The spec ``model = "naive_bayes"`` with every feature ``gaussian``
    (docs/models/naive_bayes.md): class weights ~ Dirichlet(concentration); per class and
    feature ``sigma2 ~ InvGamma(a0, b0)``, ``mu | sigma2 ~ N(mu0, sigma2 / kappa0)``. The class
    probability of a row is the posterior predictive (Student-t factors, Dirichlet-mean class
    weights). ``gaussian="ml"`` with ``class_prior="frequency"`` is scikit-learn's GaussianNB
    without its variance smoothing (maximum-likelihood means and variances).

    Parameters
    ----------
    concentration : float
        Dirichlet concentration of the class weights.
    class_prior : {"dirichlet", "frequency"}
        Class weights: posterior mean, or plain frequencies.
    gaussian : {"nig", "ml"}
        Student-t posterior predictive, or the maximum-likelihood Normal.
    mu0, kappa0, a0, b0 : float
        The Normal-Inverse-Gamma prior shared by every class and feature.

    Attributes
    ----------
    classes_ : numpy.ndarray
    class_count_ : numpy.ndarray of shape (n_classes,)
    class_prior_ : numpy.ndarray of shape (n_classes,)
    theta_ : numpy.ndarray of shape (n_classes, n_features)
        Posterior means of the class means (maximum likelihood for ``gaussian="ml"``).
    var_ : numpy.ndarray of shape (n_classes, n_features)
        Posterior means ``b / (a - 1)`` of the variances (``inf`` while ``a <= 1``), or the
        maximum-likelihood variances.
    model_ : inference.engines.naive_bayes_stats.NaiveBayesModel
        The engine's classifier (its ``nig`` posterior per class and feature).
    stats_ : inference.engines.naive_bayes_stats.NaiveBayesStats
    """

    _kind = "gaussian"

    def __init__(self, concentration=1.0, class_prior="dirichlet", gaussian="nig", mu0=0.0,
                 kappa0=1.0, a0=1.0, b0=1.0):
        self.concentration = concentration
        self.class_prior = class_prior
        self.gaussian = gaussian
        self.mu0 = mu0
        self.kappa0 = kappa0
        self.a0 = a0
        self.b0 = b0

    def _settings(self) -> dict:
        return {"concentration": float(self.concentration), "class_prior": self.class_prior,
                "gaussian": self.gaussian, "mu0": float(self.mu0),
                "kappa0": float(self.kappa0), "a0": float(self.a0), "b0": float(self.b0)}

    def _validate(self, X, y=None, *, reset, fit=False):
        checked = (validate_data(self, X, y, reset=reset, dtype=np.float64) if fit else
                   validate_data(self, X, reset=reset, dtype=np.float64))
        within_range(checked[0] if fit else checked)
        return checked

    def _publish(self, options: dict):
        super()._publish(options)
        self.theta_ = np.asarray(self.model_.means, dtype=float).copy()
        self.var_ = np.asarray(self.model_.variances, dtype=float).copy()
        self.class_prior_ = np.exp(self.class_log_prior_)

    @classmethod
    def _from_model(cls, m) -> dict:
        return {"concentration": m.concentration, "class_prior": m.class_prior,
                "gaussian": m.gaussian, "mu0": m.mu0, "kappa0": m.kappa0, "a0": m.a0,
                "b0": m.b0}


class CategoricalNaiveBayes(_NaiveBayes):
    """Naive Bayes with categorical features coded ``0, 1, ...``, Dirichlet-smoothed.

    The spec ``model = "naive_bayes"`` with every feature ``categorical``: class weights and
    each class's category probabilities ~ Dirichlet(concentration); the class probability of
    a row is the posterior predictive (posterior-mean factors; ``concentration=1`` is the
    Laplace correction). As in scikit-learn's CategoricalNB, feature ``j`` has the categories
    ``0 .. max seen`` (``n_categories_``, at least 2); with ``class_prior="frequency"`` and
    ``concentration=alpha`` it is CategoricalNB(alpha). A category beyond those seen gets the
    prior mass of an unseen category. ``smoothing=False`` gives maximum-likelihood
    frequencies.

    Parameters
    ----------
    concentration : float
    class_prior : {"dirichlet", "frequency"}
    smoothing : bool

    Attributes
    ----------
    classes_, class_count_, class_log_prior_ : numpy.ndarray
    n_categories_ : numpy.ndarray of int, shape (n_features,)
    category_count_ : list of numpy.ndarray of shape (n_classes, n_categories_[j])
    feature_log_prob_ : list of numpy.ndarray of shape (n_classes, n_categories_[j])
    model_, stats_ : the engine's classifier and statistics
    """

    _kind = "categorical"

    def __init__(self, concentration=1.0, class_prior="dirichlet", smoothing=True):
        self.concentration = concentration
        self.class_prior = class_prior
        self.smoothing = smoothing

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        return tags

    def _settings(self) -> dict:
        return {"concentration": float(self.concentration), "class_prior": self.class_prior,
                "smoothing": bool(self.smoothing)}

    def _validate(self, X, y=None, *, reset, fit=False):
        return category_table(self, X, y, reset=reset, fit=fit,
                              unseen="gets the prior's mass of a category no class has")

    def _categories(self, X, old) -> tuple:
        top = X.max(axis=0) if len(X) else np.zeros(X.shape[1], np.int64)
        top = np.maximum(top, declared_sizes(self) - 1)  # declared, unused ones included
        if old is not None:
            top = np.maximum(top, [len(c) - 1 for c in old.schema.categories])
        require_code_tables(self, np.maximum(top, 1) + 1, len(self.classes_))
        # at least two categories: a Dirichlet needs them (a feature always 0 says nothing)
        return tuple(tuple(range(max(int(t), 1) + 1)) for t in top)

    def _publish(self, options: dict):
        super()._publish(options)
        self.n_categories_ = np.array([len(c) for c in self.stats_.schema.categories])
        self.categories_ = categories_of(self, self.n_categories_)
        self.category_count_ = [c.astype(float) for c in self.stats_.category_counts]
        self.feature_log_prob_ = [t.copy() for t in self.model_.category_log_prob]

    @classmethod
    def _from_model(cls, m) -> dict:
        return {"concentration": m.concentration, "class_prior": m.class_prior,
                "smoothing": m.smoothing}
