"""Semi-naive Bayes: one-dependence estimators (SPODE, AODE, TAN) on categorical features.

Each feature depends on the class and at most one other feature:

- ``spode``: one super-parent feature ``s`` is the extra parent of every other feature,
  ``P(c, x) = P(c) P(x_s | c) prod_{j != s} P(x_j | c, x_s)``; ``s`` is given or chosen by
  k-fold cross-validated accuracy.
- ``tan``: the extra parents form the maximum-weight spanning tree of the conditional mutual
  information ``I(x_i; x_j | c)``, rooted at ``root`` (default: the first feature).
- ``aode``: the average of the SPODEs whose super-parent value was seen in at least
  ``m_prime`` rows, with ``P(c, x_i)`` a Dirichlet posterior mean over the joint cells.

SPODE and TAN are Bayesian networks (class -> every feature, plus the extra edges) with
independent Dirichlet(``concentration``) CPT rows; the declaration for ``check`` is that
network's (:class:`bayescheck.models.bayesian_network.BayesianNetwork`), with one query per query
row (target = the class, evidence = the row), so NUTS checks every CPT entry and the exact
posterior mean of each class's joint score ``P(c, x | theta)``. Every declaration takes the
rows through the counts of the tables' cells (:mod:`bayescheck.models.counts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.labels import string_labels
from bayescheck.data.sources import DataSource

from . import validation
from .bayesian_network import BayesianNetwork, NetworkQuery
from .counts import counts_potential, dirichlet_tables, table_counts
from .errors import BayescheckError, SpecError
from .interface import Model
from .naive_bayes import classifier_columns, classifier_labels, decision_section, query_rows
from .pymc_names import dim, variable
from .spec import SamplingConfig, Section, Spec
from .states import read_states, state_codes

__all__ = ["SPEC_READERS", "KINDS", "SemiNaiveBayes", "semi_naive_bayes_spec"]

KINDS = ("spode", "aode", "tan")


@dataclass(frozen=True, eq=False)
class SemiNaiveBayes(Model):
    """A one-dependence classifier on categorical features.

    Parameters
    ----------
    features : tuple of str
    target : str
        The class column.
    kind : {"spode", "aode", "tan"}
    super_parent : str or None
        SPODE's super-parent; None chooses it by ``folds``-fold cross-validation.
    folds : int
        Folds of that cross-validation (row ``r`` of the stream is in fold ``r mod folds``).
    m_prime : int
        AODE: a super-parent value needs at least this many rows.
    root : str or None
        TAN: the root of the tree (default the first feature).
    concentration : float
        Symmetric Dirichlet concentration of every table (1 = Laplace).
    queries : tuple of dict
        Query rows, feature -> category.
    query_names : tuple of str
    decision_classes, decision_options : tuple of str or None
        ``[decision]``: the classes in the order of the loss matrix's columns, and the option
        labels of its rows (as naive Bayes).
    loss : numpy.ndarray or None
        The loss matrix (options x classes); None: zero-one loss over the classes.
    declared_states : dict or None
        The spec's ``[states]``: the target or a feature -> its states, in order
        (:mod:`bayescheck.models.states`); the other columns' labels are read from the data.
    """

    features: tuple[str, ...]
    target: str
    kind: str = "tan"
    super_parent: str | None = None
    folds: int = 5
    m_prime: int = 30
    root: str | None = None
    concentration: float = 1.0
    queries: tuple = ()
    query_names: tuple = ()
    decision_classes: tuple | None = None
    decision_options: tuple | None = None
    loss: np.ndarray | None = field(default=None)
    declared_states: dict | None = None

    name = "semi_naive_bayes"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if len(self.features) < 2:
            raise ValueError("a one-dependence estimator needs at least 2 features")
        for key, value in (("super_parent", self.super_parent), ("root", self.root)):
            if value is not None and value not in self.features:
                raise ValueError(f"{key} {value!r} is not a feature; features: "
                                 f"{', '.join(self.features)}")
        if self.super_parent is not None and self.kind != "spode":
            raise ValueError("super_parent only applies to kind = 'spode'")
        if self.root is not None and self.kind != "tan":
            raise ValueError("root only applies to kind = 'tan'")
        if self.folds < 2:
            raise ValueError(f"folds must be at least 2, got {self.folds}")
        if len(self.query_names) != len(self.queries):
            raise ValueError("give one name per query row")
        object.__setattr__(self, "concentration",
                           validation.concentration(self.concentration, "concentration"))

    # ---- data --------------------------------------------------------------------------

    def labels(self, source: DataSource) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
        """Classes and categories of every feature (declared, or sorted), from one pass."""
        return classifier_labels(source, self.target, self.features, self.declared_states)

    def codes(self, batch: Batch, classes, categories) -> tuple[np.ndarray, np.ndarray]:
        """Class codes (n,) and feature codes (n, d) of a batch."""
        y = state_codes(string_labels(batch, self.target), classes)
        X = np.column_stack([state_codes(string_labels(batch, f), categories[f])
                             for f in self.features])
        return y, X

    def query_codes(self, categories) -> np.ndarray:
        """Codes of the query rows; -1 for a category never seen in training."""
        out = np.full((len(self.queries), len(self.features)), -1, dtype=np.int64)
        for r, q in enumerate(self.queries):
            for j, f in enumerate(self.features):
                v = str(q[f])
                if v in categories[f]:
                    out[r, j] = categories[f].index(v)
        return out

    # ---- as a Bayesian network ---------------------------------------------------------

    def network(self, parents: dict[str, str | None], categories,
                classes: tuple[str, ...] | None = None) -> BayesianNetwork:
        """The SPODE / TAN network: class -> every feature, plus each feature's extra parent.

        ``parents`` maps a feature to its extra parent (None: the class only). The queries are
        the query rows whose categories were all seen (target = the class). With ``classes``
        the network holds the fit's states (the classes and ``categories``), declared ones
        included, so its declaration has the fit's CPT shapes.
        """
        edges = [(self.target, f) for f in self.features]
        edges += [(p, f) for f, p in parents.items() if p is not None]
        queries = tuple(
            NetworkQuery(name, self.target, tuple((f, str(q[f])) for f in self.features))
            for name, q in zip(self.query_names, self.queries, strict=True)
            if all(str(q[f]) in categories[f] for f in self.features))
        held = (None if classes is None else
                {self.target: tuple(classes), **{f: tuple(categories[f]) for f in self.features}})
        return BayesianNetwork(nodes=(self.target, *self.features), edges=tuple(edges),
                               concentration=self.concentration, queries=queries,
                               held_states=held)

    def declare(self, source: DataSource, fit=None):
        """The PyMC model of the fit (needs the fit's structure and label sets).

        SPODE / TAN: the Bayesian network of :meth:`network` (declared through its counts).
        AODE: one SPODE per super-parent used by a checked query, each with its own
        parameters and the same rows (a product of independent SPODE posteriors), and the
        deterministic ``score`` (dims ``query``, ``class``): the average of the query's SPODE
        joint scores. Each SPODE ``s`` has ``joint_<s>`` (the cells (class, x_s)) and
        ``cond_<s>_<f>`` (x_f given the cell); its rows enter through the counts, one
        potential ``log_p_counts`` for all: ``sum n_cell log joint_s[cell] + sum_f sum
        n_{cell, k} log cond_{s, f}[cell, k]``, the log likelihood of ``cell_n ~
        Categorical(joint_s)`` and ``x_nf ~ Categorical(cond_{s, f}[cell_n])`` summed over
        the rows.
        """
        if fit is None:
            raise BayescheckError("the semi-naive declaration needs the fit (structure and "
                                  "labels): use check")
        parameters = fit.posterior.parameters
        categories = {f: tuple(v) for f, v in parameters["categories"].items()}
        if self.kind == "aode":
            return self._declare_aode(source, fit, categories)
        structure = parameters["structure"]["parents"]
        return self.network(structure, categories, tuple(parameters["classes"])).declare(source)

    def aode_checked(self, fit) -> list[dict]:
        """The query records whose AODE score is compared: all categories seen, no fallback."""
        return [q for q in fit.posterior.parameters["query"]
                if not q["unseen"] and not q.get("naive_bayes_fallback", True)]

    def aode_super_parents(self, fit) -> list[str]:
        """The super-parents used by at least one checked query, in feature order."""
        used = {f for q in self.aode_checked(fit) for f in q["super_parents"]}
        return [f for f in self.features if f in used]

    def _declare_aode(self, source: DataSource, fit, categories):
        import pymc as pm
        import pytensor.tensor as pt

        classes = tuple(fit.posterior.parameters["classes"])
        K = len(classes)
        parts = [self.codes(b, classes, categories) for b in source.batches()]
        y = np.concatenate([p[0] for p in parts])
        X = np.concatenate([p[1] for p in parts])
        checked = self.aode_checked(fit)
        supers = self.aode_super_parents(fit)
        a = self.concentration
        coords = {"class": list(classes), "query": [q["name"] for q in checked]}
        for f in self.features:
            coords[dim(f, "category")] = list(categories[f])
        for s in supers:
            coords[dim(s, "joint")] = [f"{c}, {s}={v}" for c in classes for v in categories[s]]
        with pm.Model(coords=coords) as model:
            tables, counts, which = [], [], []  # which: (super-parent, feature or None)
            for s in supers:
                i = self.features.index(s)
                Ni = len(categories[s])
                cell = y * Ni + X[:, i]
                tables.append((variable("joint", s), np.full(K * Ni, a), dim(s, "joint")))
                counts.append(np.bincount(cell, minlength=K * Ni).astype(np.float64))
                which.append((s, None))
                for j, f in enumerate(self.features):
                    if j != i:
                        shape = (K * Ni, len(categories[f]))
                        tables.append((variable("cond", s, f), np.full(shape, a),
                                       (dim(s, "joint"), dim(f, "category"))))
                        counts.append(table_counts(cell, X[:, j], shape).ravel())
                        which.append((s, j))
            terms: dict[str, list] = {q["name"]: [] for q in checked}
            if tables:
                declared = dirichlet_tables(tables)
                counts_potential(declared.log_cells, np.concatenate(counts))
                table = dict(zip(which, declared.tables, strict=True))
                for q in checked:
                    xq = [categories[f].index(str(q["values"][f])) for f in self.features]
                    for s in q["super_parents"]:
                        i = self.features.index(s)
                        rows = np.arange(K) * len(categories[s]) + xq[i]
                        term = table[(s, None)][rows]
                        for j in range(len(self.features)):
                            if j != i:
                                term = term * table[(s, j)][rows, xq[j]]
                        terms[q["name"]].append(term)
            if checked:
                pm.Deterministic("score", pt.stack([sum(terms[q["name"]]) / len(terms[q["name"]])
                                                    for q in checked]),
                                 dims=("query", "class"))
        return model


# ---- spec ------------------------------------------------------------------------------


def semi_naive_bayes_spec(top: Section, path: Path) -> Spec:
    """Build a :class:`~bayescheck.models.spec.Spec` for ``model = "semi_naive_bayes"``.

    Keys: ``[data] path, target, features``; ``[fit] kind, super_parent, folds, m_prime,
    root``; ``[prior] concentration``; ``[[query]]`` rows (feature = value, optional
    ``name``); ``[states]`` (:mod:`bayescheck.models.states`); ``[sampling]``. See
    docs/models/semi_naive_bayes.md.
    """
    data = top.subsection("data")
    source, target, features = classifier_columns(data, path, text=True)
    data.finish()
    fit = top.subsection("fit")
    kind = fit.string("kind", "tan", choices=KINDS)
    super_parent = fit.string("super_parent", None)
    folds = fit.number("folds", 5, integer=True, minimum=2)
    m_prime = fit.number("m_prime", 30, integer=True, minimum=0)
    root = fit.string("root", None)
    for key, value, allowed in (("super_parent", super_parent, "spode"),
                                ("root", root, "tan")):
        if value is not None and kind != allowed:
            raise fit.error(key, f"only applies to kind = {allowed!r}")
        if value is not None and value not in features:
            raise fit.error(key, f"{value!r} is not a feature; features: {', '.join(features)}")
    for key, allowed in (("folds", "spode"), ("m_prime", "aode")):
        if key in fit and kind != allowed:
            raise fit.error(key, f"only applies to kind = {allowed!r}")
    if "folds" in fit and super_parent is not None:
        raise fit.error("folds", "the super-parent is given: there is nothing to cross-validate")
    fit.finish()
    prior = top.subsection("prior")
    concentration = prior.number("concentration", 1.0, positive=True)
    prior.finish()
    if len(features) < 2:
        raise SpecError("a one-dependence estimator needs at least 2 features", path=path,
                        key="data.features")
    queries, names = query_rows(top, features)
    classes, options, loss = decision_section(top)
    declared = read_states(top, [target, *features], what="class or feature column")
    sampling = SamplingConfig.from_section(top.subsection("sampling"))
    with validation.spec_keys(path, {"concentration": "prior.concentration"}):
        model = SemiNaiveBayes(features=tuple(features), target=target, kind=kind,
                               super_parent=super_parent, folds=int(folds),
                               m_prime=int(m_prime), root=root,
                               concentration=float(concentration), queries=queries,
                               query_names=names, decision_classes=classes,
                               decision_options=options, loss=loss,
                               declared_states=declared or None)
    return Spec(model=model, data=source, sampling=sampling, path=path, raw=top.table)


#: The spec reader of each model of this module (:func:`bayescheck.models.registry.spec_reader`).
SPEC_READERS = {"semi_naive_bayes": semi_naive_bayes_spec}
