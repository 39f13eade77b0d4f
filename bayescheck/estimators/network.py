"""scikit-learn classifier over a discrete Bayesian network (``model = "bayesian_network"``).

One node is the target (the class), the others are the columns of ``X``, coded ``0, 1, ...``;
the structure is a list of edges between their names. ``fit`` counts every CPT as
``bayescheck fit`` does (:mod:`bayescheck.inference.engines.networks`; with missing cells, NaN, the
EM estimate of :mod:`bayescheck.inference.engines.network_em`), and ``predict_proba`` is
``P(target | the row's observed cells)`` by exact inference on the posterior-mean CPTs (the
posterior predictive of a new case; plug-in at the EM estimate): a missing cell is summed
out, so rows may be incomplete.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ._base import feature_names, load_model, spec_text
from ._frames import FrameOutputMixin, categories_of, category_table, declared_sizes
from .semi_naive import class_codes, known_codes

__all__ = ["BayesianNetworkClassifier"]


class BayesianNetworkClassifier(FrameOutputMixin, ClassifierMixin, BaseEstimator):
    """Predict one node of a discrete Bayesian network from the others by exact inference.

    The spec ``model = "bayesian_network"`` (docs/models/bayesian_network.md): every CPT row
    Dirichlet (``concentration``, or BDeu with ``equivalent_sample_size``), the class
    probability of a row the query ``P(target | evidence)`` whose evidence is the row's
    observed cells, by variable elimination on the posterior-mean CPTs (complete rows: the
    product of the CPT entries, in log space). Feature ``j`` has the states ``0 .. max
    seen`` (``n_categories_``); a missing cell (NaN), or a code beyond those seen in
    ``fit``, is summed out. Training rows with missing cells make the CPTs EM estimates
    (plug-in predictions), as ``bayescheck fit`` does.

    Parameters
    ----------
    edges : list of (str, str), optional
        Parent -> child pairs of node names: ``target`` and the columns (``x<j>`` for an
        array). Default: naive Bayes, ``target`` -> every column.
    target : str
        The name of the target node (not a column of ``X``).
    concentration : float or None
        Dirichlet concentration of every CPT entry (1 = Laplace).
    equivalent_sample_size : float or None
        BDeu instead (set ``concentration=None``).
    max_iter, tol :
        EM settings, used only when training cells are missing.

    Attributes
    ----------
    classes_ : numpy.ndarray
    n_categories_ : numpy.ndarray of int, shape (n_features,)
    nodes_ : tuple of str
        ``(target, *columns)``.
    cpts_ : tuple of numpy.ndarray
        Per node, ``P(node = k | parent configuration j)`` (rows j): posterior means, or the
        EM estimate.
    counts_ : inference.engines.networks.NetworkCounts
        The complete rows' counts.
    em_ : inference.engines.network_em.EMResult or None
        The EM fit when training cells were missing.
    n_iter_ : int
        EM's iterations; 0 for complete training rows (closed form).
    """

    def __init__(self, edges=None, target="y", concentration=1.0, equivalent_sample_size=None,
                 max_iter=1000, tol=1e-9):
        self.edges = edges
        self.target = target
        self.concentration = concentration
        self.equivalent_sample_size = equivalent_sample_size
        self.max_iter = max_iter
        self.tol = tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        tags.input_tags.allow_nan = True
        return tags

    def _model(self, features):
        from bayescheck.models.bayesian_network import BayesianNetwork

        target = str(self.target)
        if target in features:
            raise ValueError(f"the target {target!r} is also a column of X")
        edges = ([(target, f) for f in features] if self.edges is None
                 else [tuple(e) for e in self.edges])
        if not all(len(e) == 2 for e in edges):
            raise ValueError(f"edges must be (parent, child) pairs, got {self.edges!r}")
        if not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                   for v in (self.concentration, self.equivalent_sample_size)):
            raise ValueError("concentration and equivalent_sample_size must be numbers or None")
        return BayesianNetwork(
            nodes=(target, *features), edges=tuple((str(a), str(b)) for a, b in edges),
            concentration=None if self.concentration is None else float(self.concentration),
            equivalent_sample_size=(None if self.equivalent_sample_size is None
                                    else float(self.equivalent_sample_size)),
            max_iter=self.max_iter, tol=float(self.tol))

    def fit(self, X, y):
        """Count every CPT (EM over the missing cells, if any)."""
        from bayescheck.inference.engines.network_em import MissingPatterns, network_em
        from bayescheck.inference.engines.networks import (
            NetworkCounts,
            cpt_posterior,
            log_marginal_likelihood,
            network_counts,
        )
        from bayescheck.inference.families.bayesian_network import network_prior, network_schema
        from bayescheck.models.resources import require_cpts

        X, y = category_table(self, X, y, reset=True, fit=True, allow_nan=True)
        features = feature_names(self, X.shape[1])
        model = self._model(features)  # a NetworkProblem is a ValueError naming the entry
        codes = np.column_stack([class_codes(self, y), X])
        unobserved = [f for j, f in enumerate(features) if np.all(X[:, j] < 0)]
        if unobserved:
            raise ValueError(f"column {unobserved[0]!r} has no observed value (a latent node "
                             f"is not supported)")
        self.n_categories_ = np.maximum(X.max(axis=0) + 1, declared_sizes(self))
        self.categories_ = categories_of(self, self.n_categories_)
        require_cpts(model.nodes, [len(self.classes_), *self.n_categories_], model.parents,
                     remedy="the tables are sized by each column's largest code: encode the "
                            "values as codes 0, 1, ..., k-1 (sklearn.preprocessing."
                            "OrdinalEncoder), or give the node fewer parents (edges)", writes=False)
        states = {model.nodes[0]: tuple(str(c) for c in self.classes_)}
        states.update({f: tuple(str(k) for k in range(n))
                       for f, n in zip(features, self.n_categories_, strict=True)})
        self.schema_ = network_schema(model, states)
        prior = network_prior(model, self.schema_, states)
        incomplete = (codes < 0).any(axis=1)
        self.counts_ = (network_counts(codes[~incomplete], self.schema_) if (~incomplete).any()
                        else NetworkCounts.empty(self.schema_))
        self.nodes_ = model.nodes
        if incomplete.any():
            self.em_ = network_em(self.counts_, MissingPatterns.from_codes(codes[incomplete]),
                                  prior, max_iter=model.max_iter, tol=model.tol)
            self.cpts_ = self.em_.cpts
            self.n_iter_ = self.em_.iterations
            self.log_evidence_ = None  # EM's estimate: no closed-form evidence
        else:
            self.em_ = None
            self.cpts_ = cpt_posterior(self.counts_, prior).mean
            self.n_iter_ = 0  # counted in closed form: max_iter is EM's, unused
            self.log_evidence_ = log_marginal_likelihood(self.counts_, prior)
        return self

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict_proba(self, X):
        """``P(target | observed cells)`` per row (columns in ``classes_`` order).

        Complete rows at once by numpy gathers over the target's CPT and its children's;
        rows with missing cells by variable elimination, once per distinct pattern
        (:func:`bayescheck.inference.engines.networks.predict_target`).
        """
        from bayescheck.inference.engines.networks import predict_target

        check_is_fitted(self, "cpts_")
        X = known_codes(category_table(self, X, reset=False, allow_nan=True,
                                       unseen="is summed out, as a missing cell is"),
                        self.n_categories_)
        codes = np.column_stack([np.zeros(len(X), np.int64), X])
        proba, _ = predict_target(self.cpts_, self.schema_, 0, codes)
        return proba

    def predict(self, X):
        """The most probable target state of each row."""
        check_is_fitted(self, "cpts_")
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    @classmethod
    def from_spec(cls, path: str | Path, target: str | None = None):
        """The classifier of a ``bayesian_network`` spec's structure, prior and EM settings.

        ``target`` defaults to the target of the spec's queries when they all share one.
        """
        m = load_model(path, "bayesian_network")
        if target is None:
            targets = {q.target for q in m.queries}
            if len(targets) != 1:
                raise ValueError(f"{path}: give target= (the spec's queries have "
                                 f"{len(targets)} targets: {sorted(targets)})")
            target = targets.pop()
        if target not in m.nodes:
            raise ValueError(f"{path}: target {target!r} is not a node of the spec")
        return cls(edges=[tuple(e) for e in m.edges], target=target,
                   concentration=m.concentration,
                   equivalent_sample_size=m.equivalent_sample_size, max_iter=m.max_iter,
                   tol=m.tol)

    def to_spec(self, data=None, features=None) -> str:
        """TOML text of the ``bayesian_network`` spec with this structure and these settings.

        Nodes ``(target, *features)``, edges, prior, EM settings; ``features`` default to the
        fitted columns' names.
        """
        if features is None and hasattr(self, "nodes_"):
            features = list(self.nodes_[1:])
        if features is None and self.edges is None:
            raise ValueError("the default (naive Bayes) edges need the feature names: pass "
                             "features= or fit first")
        edges = ([(self.target, f) for f in features] if self.edges is None
                 else [tuple(e) for e in self.edges])
        nodes = None if features is None else [self.target, *features]
        return spec_text("bayesian_network", {
            "data": {"path": None if data is None else str(data), "nodes": nodes},
            "structure": {"edges": [list(e) for e in edges]},
            "fit": {"max_iter": self.max_iter, "tol": float(self.tol)},
            "prior": {"concentration": self.concentration,
                      "equivalent_sample_size": self.equivalent_sample_size}})
