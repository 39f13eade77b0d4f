"""scikit-learn classifier for semi-naive Bayes (``model = "semi_naive_bayes"``).

SPODE, AODE and TAN on categorical features coded ``0, 1, ...``.

The pair counts of :mod:`bayescheck.inference.engines.one_dependence` (merged by addition), the
structure chosen as the family does (SPODE's super-parent by k-fold cross-validation, TAN's spanning
tree of the conditional mutual information) and the class scores of
``inference.families.semi_naive_bayes.class_log_scores``: the numbers of ``bayescheck fit``
and ``bayescheck predict`` on the same rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ._base import (
    feature_names,
    load_model,
    require_code_tables,
    spec_text,
)
from ._frames import FrameOutputMixin, categories_of, category_table, declared_sizes

__all__ = ["SemiNaiveBayesClassifier"]


def class_codes(estimator, y) -> np.ndarray:
    """Set ``classes_`` from ``y`` (at least two) and return the class codes."""
    check_classification_targets(y)
    estimator.classes_ = np.unique(y)
    if len(estimator.classes_) < 2:
        raise ValueError(f"{type(estimator).__name__} needs at least 2 classes; y has one "
                         f"class ({estimator.classes_.tolist()})")
    return np.searchsorted(estimator.classes_, y).astype(np.int64)


def known_codes(X: np.ndarray, n_categories: np.ndarray) -> np.ndarray:
    """Codes beyond those seen in ``fit`` become -1 (left out of the score, as in predict)."""
    return np.where(X < np.asarray(n_categories)[None, :], X, -1)


class SemiNaiveBayesClassifier(FrameOutputMixin, ClassifierMixin, BaseEstimator):
    """One-dependence classifier (SPODE, AODE or TAN) on categorical features.

    The spec ``model = "semi_naive_bayes"`` (docs/models/semi_naive_bayes.md): every feature
    depends on the class and at most one other feature, each CPT row Dirichlet
    (``concentration``); the class probability of a row is the exact posterior predictive of
    the SPODE / TAN network, or the AODE average of SPODEs. Feature ``j`` has the categories
    ``0 .. max seen`` (``n_categories_``); a code beyond them at prediction is left out of
    that row's score (for SPODE / TAN also the factors it is the extra parent of), as
    ``bayescheck predict`` does with a category never seen.

    Parameters
    ----------
    kind : {"tan", "spode", "aode"}
    super_parent : str, optional
        SPODE: the super-parent's column name (``x<j>`` for an array); None chooses it by
        ``folds``-fold cross-validated accuracy (row ``r`` in fold ``r mod folds``).
    folds : int
        SPODE without ``super_parent``: the folds.
    m_prime : int
        AODE: a super-parent value needs at least this many rows.
    root : str, optional
        TAN: the tree's root (default the first feature).
    concentration : float
        Symmetric Dirichlet concentration of every table (1 = Laplace).

    Attributes
    ----------
    classes_ : numpy.ndarray
    n_categories_ : numpy.ndarray of int, shape (n_features,)
    counts_ : inference.engines.one_dependence.PairCounts
        The (class, x_i, x_j) counts; :meth:`partial_fit` adds to them (every kind but SPODE
        with its super-parent to choose), so any batching gives the classifier of ``fit``.
    parents_ : dict or None
        SPODE / TAN: each feature's extra parent (None: the class only); None for AODE.
    super_parent_ : str
        SPODE: the super-parent used. ``cross_validation_`` holds the candidates'
        accuracies and log losses when it was chosen.
    conditional_mutual_information_ : numpy.ndarray
        TAN: the matrix the tree was grown on.
    """

    def __init__(self, kind="tan", super_parent=None, folds=5, m_prime=30, root=None,
                 concentration=1.0):
        self.kind = kind
        self.super_parent = super_parent
        self.folds = folds
        self.m_prime = m_prime
        self.root = root
        self.concentration = concentration

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        return tags

    def _model(self, features):
        from bayescheck.models.semi_naive_bayes import SemiNaiveBayes

        c = self.concentration
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 < c < np.inf:
            raise ValueError(f"concentration must be a positive number, got {c!r}")
        for key in ("folds", "m_prime"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"{key} must be an integer, got {v!r}")
        if self.m_prime < 0:
            raise ValueError(f"m_prime must be at least 0, got {self.m_prime}")
        if len(features) < 2:
            raise ValueError(f"a one-dependence estimator needs at least 2 features; X has "
                             f"{len(features)} feature(s)")
        return SemiNaiveBayes(features=features, target="y", kind=self.kind,
                              super_parent=self.super_parent, folds=int(self.folds),
                              m_prime=int(self.m_prime), root=self.root,
                              concentration=float(c))

    def fit(self, X, y):
        """Count the rows and choose the structure (SPODE's super-parent, TAN's tree)."""
        from bayescheck.inference.engines.one_dependence import PairCounts, pair_counts
        from bayescheck.inference.families.semi_naive_bayes import choose_super_parent

        for attr in ("counts_", "classes_", "super_parent_", "cross_validation_",
                     "conditional_mutual_information_"):
            self.__dict__.pop(attr, None)  # a refit (of another kind) starts afresh
        X, y = category_table(self, X, y, reset=True, fit=True)
        features = feature_names(self, X.shape[1])
        model = self._model(features)
        codes = class_codes(self, y)
        self._count(X, codes)
        chosen = None
        if model.kind == "spode" and model.super_parent is None:
            card = self.counts_.cardinality
            fold = np.arange(len(codes)) % model.folds
            folds = [pair_counts(codes[fold == f], X[fold == f], card)
                     if np.any(fold == f) else PairCounts.empty(card)
                     for f in range(model.folds)]
            chosen, self.cross_validation_ = choose_super_parent(
                features, folds, self.counts_, [(codes, X)], model.concentration)
        self._structure(model, features, chosen)
        return self

    def _streamable(self) -> bool:
        return not (self.kind == "spode" and self.super_parent is None)

    @available_if(_streamable)
    def partial_fit(self, X, y, classes=None):
        """Add rows to the pair counts (exact: any batching gives the classifier of ``fit``).

        Not available for SPODE without ``super_parent``: its cross-validated choice needs
        the rows twice. TAN's tree is regrown from the running counts after each call.

        Parameters
        ----------
        X, y : array_like
            The rows (category codes) and their classes.
        classes : array_like, optional
            Every class label, on the first call (default: the labels of ``y``); a later
            batch with another label is refused.
        """
        first = not hasattr(self, "counts_")
        X, y = category_table(self, X, y, reset=first, fit=True)
        features = feature_names(self, X.shape[1])
        model = self._model(features)
        if first:
            codes = class_codes(self, y if classes is None else np.asarray(classes))
            codes = np.searchsorted(self.classes_, y)
        else:
            codes = np.minimum(np.searchsorted(self.classes_, y), len(self.classes_) - 1)
        unknown = self.classes_[codes] != y
        if np.any(unknown):
            raise ValueError(f"y holds the label {y[np.flatnonzero(unknown)[0]]!r}, not among "
                             f"the classes {self.classes_.tolist()}; pass every class in "
                             f"classes= on the first call to partial_fit")
        self._count(X, codes.astype(np.int64))
        self._structure(model, features, None)
        return self

    def _count(self, X: np.ndarray, codes: np.ndarray):
        """Add the rows' pair counts to ``counts_``, growing the categories as they appear."""
        from bayescheck.inference.engines.one_dependence import pair_counts

        seen = X.max(axis=0) + 1 if len(X) else np.ones(X.shape[1], np.int64)
        seen = np.maximum(seen, declared_sizes(self))  # declared, unused ones included
        old = getattr(self, "counts_", None)
        if old is not None:
            seen = np.maximum(seen, old.cardinality[1:])
        require_code_tables(self, seen, len(self.classes_), pairs=True)
        self.n_categories_ = np.asarray(seen, np.int64)
        self.categories_ = categories_of(self, self.n_categories_)
        card = (len(self.classes_), *(int(n) for n in self.n_categories_))
        batch = pair_counts(codes, X, card)
        self.counts_ = batch if old is None else old.grown(card) + batch

    def _structure(self, model, features, chosen: int | None):
        """SPODE's super-parent (given, or ``chosen`` by cross-validation), TAN's tree."""
        from bayescheck.inference.engines.one_dependence import (
            conditional_mutual_information,
            maximum_spanning_tree,
            spode_parents,
        )

        d = len(features)
        parents = None
        if model.kind == "spode":
            s = features.index(model.super_parent) if chosen is None else chosen
            self.super_parent_ = features[s]
            parents = spode_parents(d, s)
        elif model.kind == "tan":
            self.conditional_mutual_information_ = conditional_mutual_information(self.counts_)
            root = 0 if model.root is None else features.index(model.root)
            parents = maximum_spanning_tree(self.conditional_mutual_information_, root=root)
        self.parents_ = None if parents is None else {
            f: None if p < 0 else features[p] for f, p in zip(features, parents, strict=True)}
        self._parents = parents
        self._engine_model = model
        self.log_evidence_ = None if parents is None else self._log_evidence(model, features)

    def _log_evidence(self, model, features) -> float:
        """log p(y, X | the SPODE / TAN network): the BD score of its counts."""
        from bayescheck.inference.engines.networks import log_marginal_likelihood
        from bayescheck.inference.families.bayesian_network import network_prior, network_schema
        from bayescheck.inference.families.semi_naive_bayes import network_counts_from_pairs

        states = {f: tuple(str(k) for k in range(int(n)))
                  for f, n in zip(features, self.n_categories_, strict=True)}
        net = model.network(self.parents_, states)
        states = {model.target: tuple(str(c) for c in self.classes_), **states}
        schema = network_schema(net, states)
        counts = network_counts_from_pairs(net, schema, self.counts_, self._parents)
        return log_marginal_likelihood(counts, network_prior(net, schema, states))

    def predict_log_proba(self, X):
        """Log posterior predictive probability of each class (columns in ``classes_`` order)."""
        from bayescheck.inference.families.semi_naive_bayes import class_log_scores

        check_is_fitted(self, "counts_")
        X = known_codes(category_table(self, X, reset=False,
                                       unseen="is left out of the row's score"),
                        self.n_categories_)
        scores, _ = class_log_scores(self._engine_model, self.counts_, self._parents, X)
        top = scores.max(axis=1, keepdims=True)
        return scores - top - np.log(np.exp(scores - top).sum(axis=1, keepdims=True))

    def predict_proba(self, X):
        """Posterior predictive probability of each class (columns in ``classes_`` order)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The most probable class of each row."""
        check_is_fitted(self, "counts_")
        return self.classes_[np.argmax(self.predict_log_proba(X), axis=1)]

    @classmethod
    def from_spec(cls, path: str | Path):
        """The classifier of a ``semi_naive_bayes`` spec's ``[fit]`` and ``[prior]``."""
        m = load_model(path, "semi_naive_bayes")
        return cls(kind=m.kind, super_parent=m.super_parent, folds=m.folds,
                   m_prime=m.m_prime, root=m.root, concentration=m.concentration)

    def to_spec(self, data=None, target: str = "y", features=None) -> str:
        """TOML text of the ``semi_naive_bayes`` spec with these settings.

        Only the ``[fit]`` keys that apply to ``kind`` are written (the spec refuses the
        others): ``folds`` for SPODE without a super-parent, ``m_prime`` for AODE.
        """
        if features is None and hasattr(self, "feature_names_in_"):
            features = list(self.feature_names_in_)
        spode_cv = self.kind == "spode" and self.super_parent is None
        fit = {"kind": self.kind, "super_parent": self.super_parent,
               "folds": self.folds if spode_cv else None,
               "m_prime": self.m_prime if self.kind == "aode" else None,
               "root": self.root}
        data_section = {"path": None if data is None else str(data), "target": target,
                        "features": None if features is None else list(features)}
        return spec_text("semi_naive_bayes", {"data": data_section, "fit": fit,
                                              "prior": {"concentration":
                                                        float(self.concentration)}})
