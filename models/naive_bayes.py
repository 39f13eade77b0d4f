"""Naive Bayes: P(c | x) proportional to P(c) prod_j P(x_j | c), with optional Bayes decisions.

The Bayesian model declared for the NUTS cross-check (``smoothing = true``):

    w ~ Dirichlet(concentration 1_K)                       class weights
    y_n ~ Categorical(w)
    pi[c, f] ~ Dirichlet(concentration 1_{N_f})             per class and categorical feature f
    x_nf ~ Categorical(pi[y_n, f])
    sigma2[c, g] ~ InvGamma(a0, b0)                         per class and Gaussian feature g
    mu[c, g] | sigma2 ~ Normal(mu0, sigma2 / kappa0)
    x_ng ~ Normal(mu[y_n, g], sigma2[y_n, g])

The classes and the categorical features enter the declaration through their counts: one
potential holds ``sum_c n_c log w_c + sum_f sum_{c, k} n_{c, f, k} log pi[c, f, k]``, the
log likelihood of the rows above, summed (:func:`bayescheck.models.counts.counts_potential`);
Gaussian features stay row by row, given each row's observed class. The rows are declared one
by one only to be simulated from (:meth:`NaiveBayes.prior_declaration`). The Dirichlets are
declared by stick-breaking (:func:`bayescheck.models.counts.dirichlet_tables`).

The parameter posteriors are independent, so for a query row x the posterior mean of the joint
score ``s_c(x) = w_c prod_j p(x_j | c, theta)`` is the product of the posterior means (the
Laplace-smoothed probabilities and the Student-t predictive densities): the analytic
posterior predictive class probability is ``E[s_c] / sum_c' E[s_c']``. The declaration
exposes ``score`` (dims ``query``, ``class``) as a deterministic, so NUTS can estimate each
``E[s_c]`` and the cross-check can compare it with the exact value.

Categorical values and class labels are read as strings (``1`` in a CSV and ``1`` in a TOML
query are the same category).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.labels import batch_rows, string_labels
from bayescheck.data.numbers import MAX_MAGNITUDE, numeric_columns
from bayescheck.data.sources import DataSource

from . import validation
from .counts import COUNTS_DATA, counts_potential, dirichlet_tables, table_counts, used_cells
from .errors import BayescheckError, DataError, SpecError
from .interface import Calibratable, DeclaresSimulations, Model
from .pymc_names import escaped, variable
from .spec import SamplingConfig, Section, Spec
from .states import declared_order, outside_declared, outside_error, read_states, state_codes

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SPEC_READERS", "KINDS", "NaiveBayes", "classifier_columns", "classifier_labels",
           "declared_labels",
           "decision_section", "naive_bayes_spec", "query_rows"]

#: Feature kinds: those the engine implements (``inference.engines.naive_bayes_stats``
#: ``CATEGORICAL`` and ``GAUSSIAN``; models do not import engines, a test holds them equal).
KINDS = ("categorical", "gaussian")


@dataclass(frozen=True)
class LabelSets:
    """Classes and categories seen in some batches; ``+`` is their union."""

    classes: frozenset
    categories: dict
    n: int = 0

    def __add__(self, other: LabelSets) -> LabelSets:
        return LabelSets(self.classes | other.classes,
                         {f: v | other.categories[f] for f, v in self.categories.items()},
                         self.n + other.n)

    @classmethod
    def of_batch(cls, batch: Batch, target: str, features) -> LabelSets:
        """The labels of one batch's ``target`` and ``features`` columns."""
        return cls(frozenset(string_labels(batch, target).tolist()),
                   {f: frozenset(string_labels(batch, f).tolist()) for f in features},
                   n=batch_rows(batch))

    def resolve(self, target: str, *, where: str = ""
                ) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
        """Sorted classes and categories; fewer than 2 classes is a :class:`DataError`."""
        if len(self.classes) < 2:
            raise DataError(f"a classifier needs at least 2 classes, the data have "
                            f"{len(self.classes)}: {sorted(self.classes)}", path=where or None,
                            column=target)
        return (tuple(sorted(self.classes)),
                {f: tuple(sorted(v)) for f, v in self.categories.items()})


def classifier_labels(source: DataSource, target: str, features: list[str] | tuple[str, ...],
                      declared: dict | None = None
                      ) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """The classes and categories of each feature, from one pass over every batch.

    Shared by naive and semi-naive Bayes; the schema must be fixed before statistics are added.
    ``declared``: the spec's ``[states]`` (:func:`declared_labels`).

    Returns
    -------
    classes : tuple of str
    categories : dict
        Feature -> its labels (declared, or sorted).

    Raises
    ------
    DataError
        A missing column or value, fewer than 2 classes, or a label outside its declared
        states (naming its row).
    """
    seen = LabelSets(frozenset(), {f: frozenset() for f in features})
    for batch in source.batches():
        seen = seen + LabelSets.of_batch(batch, target, features)
    return declared_labels(seen, target, declared, where=source.label, source=source)


def declared_labels(seen: LabelSets, target: str, declared: dict | None, *, where: str = "",
                    source: DataSource | None = None
                    ) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """Classes and categories from the labels seen: the declared ones in order, others sorted.

    ``declared``: column -> its declared states (``[states]``, :mod:`.states`); a declared
    state no row holds is kept. ``source`` is read again only to name the row of a label
    outside its declared states.

    Raises
    ------
    DataError
        Fewer than 2 classes, or a label outside its declared states.
    """
    declared = declared or {}
    bad = outside_declared(declared, {target: seen.classes, **seen.categories})
    if bad:
        column, value = bad
        raise outside_error(source.batches() if source is not None else (), column, value,
                            declared[column], string_labels)
    seen = LabelSets(seen.classes | frozenset(declared.get(target, ())),
                     {f: v | frozenset(declared.get(f, ())) for f, v in seen.categories.items()},
                     seen.n)
    classes, categories = seen.resolve(target, where=where)
    return (declared_order(declared, target, classes),
            {f: declared_order(declared, f, v) for f, v in categories.items()})


@dataclass(frozen=True, eq=False)
class NaiveBayes(Model, Calibratable, DeclaresSimulations):
    """A naive Bayes classifier: columns, feature kinds, priors, queries and the loss matrix.

    Parameters
    ----------
    features : tuple of str
        Feature columns, in order.
    kinds : tuple of {"categorical", "gaussian"}
        One per feature.
    target : str
        The class column.
    concentration : float
        Symmetric Dirichlet concentration of the class weights and of every categorical
        feature (1 = Laplace correction).
    smoothing : bool
        True: posterior means (Dirichlet; Normal-Inverse-Gamma Student-t predictive for
        Gaussian features unless ``gaussian = "ml"``). False: maximum-likelihood frequencies,
        means and variances (the variance divides by N).
    class_prior : {"dirichlet", "frequency"}
        Class weights: Dirichlet posterior mean, or plain class frequencies.
    gaussian : {"nig", "ml"}
        Gaussian features: Student-t posterior predictive under the NIG prior, or the
        maximum-likelihood Normal.
    mu0, kappa0, a0, b0 : float
        NIG prior of every class and Gaussian feature: sigma2 ~ InvGamma(a0, b0),
        mu | sigma2 ~ Normal(mu0, sigma2 / kappa0).
    queries : tuple of dict
        Query rows (feature -> value) whose class probabilities ``fit`` reports.
    query_names : tuple of str
        One name per query row.
    decision_classes : tuple of str or None
        Column order of ``loss`` (the true classes).
    decision_options : tuple of str or None
        Row labels of ``loss`` (the options decided between).
    loss : numpy.ndarray or None
        ``loss[i, j]``: loss of deciding option i when the truth is class j; None = zero-one.
    held_labels : tuple, optional
        ``(classes, categories)`` fixed instead of read from the data (``categories``: feature
        -> its labels): made by :meth:`calibration_model`, so that every simulated data set
        has the declaration's label sets whichever labels it happens to contain.
    declared_states : dict, optional
        The spec's ``[states]``: the target or a categorical feature -> its states, in order
        (:mod:`bayescheck.models.states`); the other columns' labels are read from the data.
    """

    features: tuple[str, ...]
    kinds: tuple[str, ...]
    target: str
    concentration: float = 1.0
    smoothing: bool = True
    class_prior: str = "dirichlet"
    gaussian: str = "nig"
    mu0: float = 0.0
    kappa0: float = 1.0
    a0: float = 1.0
    b0: float = 1.0
    queries: tuple = ()
    query_names: tuple = ()
    decision_classes: tuple | None = None
    decision_options: tuple | None = None
    loss: np.ndarray | None = field(default=None)
    held_labels: tuple | None = None
    declared_states: dict | None = None

    name = "naive_bayes"

    def __post_init__(self):
        if len(self.kinds) != len(self.features) or not self.features:
            raise ValueError("give one kind per feature, and at least one feature")
        for k in self.kinds:
            if k not in KINDS:
                raise ValueError(f"kind must be one of {KINDS}, got {k!r}")
        if len(self.query_names) != len(self.queries):
            raise ValueError("give one name per query row")
        for column in self.declared_states or {}:
            if column != self.target and column not in self.categorical:
                raise ValueError(f"[states] {column!r}: not the target nor a categorical "
                                 f"feature")
        set_ = partial(object.__setattr__, self)
        set_("concentration", validation.concentration(self.concentration, "concentration"))
        for key in ("kappa0", "a0"):
            set_(key, validation.prior_weight(getattr(self, key), key, strict=True))
        set_("b0", validation.positive_number(self.b0, "b0"))
        set_("mu0", float(validation.vector(self.mu0, 1, "mu0", max_magnitude=MAX_MAGNITUDE)[0]))
        # b0 and kappa0 mu0^2 are added to sums of squares of the data in the posterior's
        # scale (b_n): each must stay far below float64's 1.8e308
        if self.b0 > MAX_MAGNITUDE**2:
            raise validation.InvalidArgument("b0", f"{self.b0:.6g} is too large: the "
                                                   f"posterior's scale overflows float64 above "
                                                   f"{MAX_MAGNITUDE**2:.0e}; rescale the "
                                                   f"Gaussian features")
        if self.kappa0 * self.mu0 * self.mu0 > MAX_MAGNITUDE**2:
            raise validation.InvalidArgument(
                "kappa0", f"{self.kappa0:.6g} with mu0 = {self.mu0:.6g}: kappa0 * mu0^2 exceeds "
                          f"{MAX_MAGNITUDE**2:.0e} and overflows the posterior's scale in "
                          f"float64; rescale the Gaussian features or lower kappa0")

    @property
    def categorical(self) -> list[str]:
        """The categorical features, in order."""
        return [f for f, k in zip(self.features, self.kinds, strict=True) if k == "categorical"]

    @property
    def gaussians(self) -> list[str]:
        """The Gaussian features, in order."""
        return [f for f, k in zip(self.features, self.kinds, strict=True) if k == "gaussian"]

    @property
    def bayesian_predictive(self) -> bool:
        """True when the fitted class probabilities are the exact posterior predictive.

        The posterior predictive is that of the declared model (so the cross-check can compare
        them).
        """
        return self.smoothing and self.class_prior == "dirichlet" and (
            self.gaussian == "nig" or not self.gaussians)

    # ---- data --------------------------------------------------------------------------

    def table(self, batch: Batch, *, with_target: bool = True) -> tuple[pd.DataFrame, Any]:
        """The features and the classes of a batch, validated, the features as a frame.

        As :meth:`columns`, in a pandas frame with one column per feature.
        """
        import pandas as pd
        out, y = self.columns(batch, with_target=with_target)
        X = pd.DataFrame(out, columns=list(self.features), index=range(batch_rows(batch)))
        return X, y

    def columns(self, batch: Batch, *, with_target: bool = True
                ) -> tuple[dict[str, np.ndarray], Any]:
        """The features and the classes of a batch, validated: feature name -> column.

        Categorical features are read as strings (object arrays), Gaussian ones as float64; a
        missing column or value is a :class:`DataError` naming it. The classes are None
        without ``with_target``.
        """
        out = {}
        gaussian = (numeric_columns(batch, self.gaussians, max_magnitude=MAX_MAGNITUDE)
                    if self.gaussians else None)
        for f, kind in zip(self.features, self.kinds, strict=True):
            if kind == "categorical":
                out[f] = string_labels(batch, f)
            else:
                out[f] = gaussian[:, self.gaussians.index(f)]
        y = string_labels(batch, self.target) if with_target else None
        return out, y

    def labels(self, source: DataSource) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
        """Classes and the categories of each categorical feature (declared, or sorted).

        One pass over the labels; the schema must be fixed before statistics are added.
        """
        if self.held_labels is not None:
            return self.held_labels
        seen = LabelSets(frozenset(), {f: frozenset() for f in self.categorical})
        for batch in source.batches():
            seen = seen + self.batch_labels(batch)
        return self.resolve_labels(seen, where=source.label, source=source)

    def batch_labels(self, batch: Batch) -> LabelSets:
        """The classes and categories of one batch (their union over batches: ``+``)."""
        return LabelSets.of_batch(batch, self.target, self.categorical)

    def resolve_labels(self, seen: LabelSets, *, where: str = "",
                       source: DataSource | None = None
                       ) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
        """Classes and categories from the labels of every batch (at least 2 classes).

        Declared ones (``[states]``) in their order, the others sorted; ``source`` names the
        row of a label outside its declared states (:func:`declared_labels`).
        """
        return declared_labels(seen, self.target, self.declared_states, where=where,
                               source=source)

    def query_frame(self) -> pd.DataFrame:
        """The spec's query rows as a frame (categorical values as strings)."""
        import pandas as pd
        rows = [{f: (str(q[f]) if k == "categorical" else float(q[f]))
                 for f, k in zip(self.features, self.kinds, strict=True)} for q in self.queries]
        return pd.DataFrame(rows, columns=list(self.features))

    def query_columns(self) -> dict[str, np.ndarray]:
        """The spec's query rows as columns, the columns of :meth:`query_frame` without pandas.

        Categorical values as strings (object arrays), Gaussian ones as float64.
        """
        return {f: (np.array([str(q[f]) for q in self.queries], dtype=object)
                    if k == "categorical" else
                    np.array([float(q[f]) for q in self.queries], dtype=np.float64))
                for f, k in zip(self.features, self.kinds, strict=True)}

    def checked_queries(self, categories: dict[str, tuple[str, ...]]) -> list[int]:
        """Indices of the query rows the cross-check compares.

        Those are the rows whose categories were all seen in training (an unseen label gets
        prior mass outside the declared model).
        """
        return [i for i, q in enumerate(self.queries)
                if all(str(q[f]) in categories[f] for f in self.categorical)]

    # ---- calibration -------------------------------------------------------------------

    def calibration_model(self, fit) -> NaiveBayes:
        """A copy holding the fit's classes and categories, without query rows.

        The label sets of every simulation are then the declaration's, and no query scores
        are computed (they have exact means only, nothing to calibrate). The plug-in settings
        (``smoothing = false``, frequency class priors, ML Gaussians) are set to the Bayesian
        ones: they change the reported class probabilities, not the exact marginals that are
        calibrated, and ML estimates do not exist for a simulation that misses a class.
        """
        stats = fit.posterior.parameters["statistics"]
        held = (tuple(stats["classes"]),
                {f: tuple(stats["categories"][f]) for f in self.categorical})
        return replace(self, held_labels=held, queries=(), query_names=(), smoothing=True,
                       class_prior="dirichlet", gaussian="nig")

    def simulated_frame(self, frame: pd.DataFrame, observed: dict) -> pd.DataFrame:
        """A copy of ``frame`` holding one simulation's classes and features (calibration).

        ``observed`` holds the declared model's codes: ``y`` (class), ``x_<feature>`` (each
        categorical feature) and ``x_gaussian`` (rows x Gaussian features). Needs the label
        sets held (:meth:`calibration_model`) to turn codes back into labels.
        """
        if self.held_labels is None:
            raise BayescheckError("simulated_frame needs the label sets held: use "
                                  "calibration_model(fit) first")
        classes, categories = self.held_labels
        out = frame.copy()
        out[self.target] = np.asarray(classes, dtype=object)[np.asarray(observed["y"])]
        for f in self.categorical:
            out[f] = np.asarray(categories[f], dtype=object)[np.asarray(observed[variable("x", f)])]
        for g, f in enumerate(self.gaussians):
            out[f] = np.asarray(observed["x_gaussian"], dtype=np.float64)[:, g]
        return out

    # ---- PyMC --------------------------------------------------------------------------

    def declare(self, source: DataSource, fit=None):
        """The PyMC model on every row of ``source`` (see the module docstring).

        Variables: ``class_weight`` (dims ``class``), ``p_<feature>`` (``class``,
        ``<feature>_category``) per categorical feature (deterministics of the free
        ``stick_fractions``, their Dirichlets by stick-breaking), ``mu`` and ``sigma2``
        (``class``, ``gaussian_feature``) and the deterministics ``score`` and ``log_score``
        (``query``, ``class``) for the query rows whose categories were seen in training.

        The classes and the categorical features enter through their counts: the potential
        ``log_p_counts`` holds ``sum_c n_c log w_c + sum_f sum_{c, k} n_{c, f, k} log
        pi[c, f, k]``, the log likelihood of ``y_n ~ Categorical(w)`` and ``x_nf ~
        Categorical(pi[y_n, f])`` summed over the rows. Gaussian features stay row by row,
        observed ``x_gaussian`` (dims ``row``, ``gaussian_feature``) given each row's class.
        The row-by-row declaration of everything is :meth:`prior_declaration`.
        """
        return self._declare(self._read(source), rows=False)

    def prior_declaration(self, source: DataSource):
        """The row-by-row declaration of ``source``, to simulate from.

        Observed ``y`` (classes), ``x_<feature>`` per categorical feature and ``x_gaussian``,
        each feature drawn given the class variable, so ``pm.sample_prior_predictive`` draws
        whole rows (:meth:`simulated_frame` reads them).
        """
        return self._declare(self._read(source), rows=True)

    def declare_simulations(self, sources: Sequence[DataSource]):
        """One declaration for every simulated data set, their data in ``pm.Data``.

        The declaration of :meth:`declare` with the counts of the cells any data set uses in
        ``cell_counts``, and, with Gaussian features, each row's class in ``gaussian_class``
        and the values in ``gaussian_values``. Needs the label sets held
        (:meth:`calibration_model`).

        Returns
        -------
        model : pymc.Model
        updates : list of dict
            Per data set, ``{name: values}`` for ``model.set_data``.
        """
        read = [self._read(src) for src in sources]
        counts = [self._counts(r) for r in read]
        used = used_cells(counts)
        model = self._declare(read[0], rows=False, counted=(used, counts[0]), shared=True)
        updates = []
        for r, c in zip(read, counts, strict=True):
            update = {COUNTS_DATA: c[used]}
            if self.gaussians:
                update.update(gaussian_class=r.classes, gaussian_values=r.gaussian)
            updates.append(update)
        return model, updates

    def _read(self, source: DataSource) -> _Rows:
        """The label sets and every row's codes (classes, categorical features) and values."""
        classes, categories = self.labels(source)
        parts = [self.columns(b) for b in source.batches()]
        y = np.concatenate([p[1] for p in parts])
        codes = {f: state_codes(np.concatenate([p[0][f] for p in parts]), categories[f])
                 for f in self.categorical}
        gaussian = (np.column_stack([np.concatenate([p[0][f] for p in parts])
                                     for f in self.gaussians]).astype(np.float64)
                    if self.gaussians else np.zeros((len(y), 0)))
        yc = state_codes(y, classes)
        return _Rows(classes, categories, yc, codes, gaussian)

    def _counts(self, rows: _Rows) -> np.ndarray:
        """The class counts, then each categorical feature's (class, category) counts, flat."""
        K = len(rows.labels)
        parts = [np.bincount(rows.classes, minlength=K).astype(np.float64)]
        for f in self.categorical:
            parts.append(table_counts(rows.classes, rows.codes[f],
                                      (K, len(rows.categories[f]))).ravel())
        return np.concatenate(parts)

    def _declare(self, data: _Rows, *, rows: bool,
                 counted: tuple[np.ndarray, np.ndarray] | None = None, shared: bool = False):
        """Row by row (``rows``), or the classes and categorical features through their counts.

        ``counted``: ``(used, counts)`` (default: :meth:`_counts` of ``data``, the cells
        used); ``shared``: the data in ``pm.Data`` (:meth:`declare_simulations`).
        """
        import pymc as pm
        import pytensor.tensor as pt

        classes, categories = data.labels, data.categories
        K = len(classes)
        alpha = self.concentration
        checked = self.checked_queries(categories)
        Q = self.query_frame().iloc[checked]
        coords = {"class": list(classes), "query": [self.query_names[i] for i in checked]}
        for f in self.categorical:
            coords[f"{escaped(f)}_category"] = list(categories[f])
        if self.gaussians:
            coords["gaussian_feature"] = list(self.gaussians)
            if not shared:
                coords["row"] = np.arange(len(data.classes))
        with pm.Model(coords=coords) as model:
            declared = dirichlet_tables(
                [("class_weight", np.full(K, alpha), "class")]
                + [(variable("p", f), np.full((K, len(categories[f])), alpha),
                    ("class", f"{escaped(f)}_category")) for f in self.categorical])
            w, *pis = declared.tables
            if rows:
                # The features are indexed by the class variable, not by the observed codes,
                # so that prior-predictive draws (calibration) are generated class first;
                # under conditioning the variable is the observed codes.
                y_class = pm.Categorical("y", p=w, observed=data.classes)
            else:
                y_class = (pm.Data("gaussian_class", data.classes) if shared and self.gaussians
                           else data.classes)
            log_score = pt.broadcast_to(pt.log(w)[None, :], (len(Q), K))
            for f, pi in zip(self.categorical, pis, strict=True):
                cats = categories[f]
                if rows:
                    pm.Categorical(variable("x", f), p=pi[y_class], observed=data.codes[f])
                if len(Q):
                    qc = np.searchsorted(np.asarray(cats, dtype=object),
                                         Q[f].to_numpy(dtype=object))
                    log_score = log_score + pt.log(pi[:, qc]).T
            if not rows:
                used, counts = counted or (None, self._counts(data))
                counts_potential(declared.log_cells, counts, used=used, shared=shared)
            if self.gaussians:
                sigma2 = pm.InverseGamma("sigma2", alpha=self.a0, beta=self.b0,
                                         dims=("class", "gaussian_feature"))
                mu = pm.Normal("mu", mu=self.mu0, sigma=pt.sqrt(sigma2 / self.kappa0),
                               dims=("class", "gaussian_feature"))
                if shared:
                    pm.Normal("x_gaussian", mu=mu[y_class], sigma=pt.sqrt(sigma2[y_class]),
                              observed=pm.Data("gaussian_values", data.gaussian))
                else:
                    pm.Normal("x_gaussian", mu=mu[y_class], sigma=pt.sqrt(sigma2[y_class]),
                              observed=data.gaussian, dims=("row", "gaussian_feature"))
                if len(Q):
                    xq = Q[self.gaussians].to_numpy(dtype=np.float64)  # (q, g)
                    d = xq[:, None, :] - mu[None, :, :]  # (q, K, g)
                    log_score = log_score + pt.sum(
                        -0.5 * pt.log(2 * np.pi * sigma2)[None] - 0.5 * d ** 2 / sigma2[None],
                        axis=2)
            if len(Q):
                pm.Deterministic("score", pt.exp(log_score), dims=("query", "class"))
                pm.Deterministic("log_score", log_score, dims=("query", "class"))
        return model


@dataclass(frozen=True)
class _Rows:
    """A data set read for a declaration: label sets, class codes, feature codes and values."""

    labels: tuple[str, ...]
    categories: dict[str, tuple[str, ...]]
    classes: np.ndarray
    codes: dict[str, np.ndarray]
    gaussian: np.ndarray


# ---- spec ------------------------------------------------------------------------------


def _kinds(data: Section, features: list[str]) -> list[str]:
    raw = data.raw("features_kind", "categorical")
    if isinstance(raw, str):
        if raw not in KINDS:
            raise data.error("features_kind", f"expected one of {', '.join(map(repr, KINDS))} "
                                              f"or a table feature -> kind, got {raw!r}")
        return [raw] * len(features)
    if not isinstance(raw, dict):
        raise data.error("features_kind", f"expected a kind or a table feature -> kind, "
                                          f"got {raw!r}")
    for f, k in raw.items():
        if f not in features:
            raise data.error(f"features_kind.{f}", f"not a feature; the features are: "
                                                   f"{', '.join(features)}")
        if k not in KINDS:
            raise data.error(f"features_kind.{f}", f"expected one of "
                                                   f"{', '.join(map(repr, KINDS))}, got {k!r}")
    return [raw.get(f, "categorical") for f in features]


def query_rows(top: Section, features: list[str], kinds: list[str] | None = None
               ) -> tuple[tuple[dict, ...], tuple[str, ...]]:
    """Read the ``[[query]]`` rows of a classifier spec (naive and semi-naive Bayes).

    Each row gives every feature a value (a category label; a finite number for a Gaussian
    feature) and optionally a unique ``name`` (default ``q1``, ``q2``, ...).

    Parameters
    ----------
    top : Section
        The whole spec.
    features : list of str
        The feature columns, in order.
    kinds : list of str, optional
        One kind per feature; default every feature categorical.

    Returns
    -------
    rows, names : tuple
        One dict feature -> value per row, and the rows' names.
    """
    kinds = kinds or ["categorical"] * len(features)
    rows, names = [], []
    for i, row in enumerate(top.tables("query", "[[query]] rows (tables of feature = value)")):
        name = row.string("name", f"q{i + 1}")
        values = {}
        for f, kind in zip(features, kinds, strict=True):
            v = row.raw(f)
            if kind == "gaussian":
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                    raise row.error(f, f"Gaussian feature: expected a finite number, got {v!r}")
            elif not isinstance(v, (str, int, float, bool)):
                raise row.error(f, f"expected a category label, got {v!r}")
            values[f] = v
        row.finish()
        if name in names:
            raise row.error("name", f"query names must be unique, {name!r} is used twice")
        rows.append(values)
        names.append(name)
    return tuple(rows), tuple(names)


def decision_section(top: Section):
    """Read ``[decision] classes, options, loss`` (naive and semi-naive Bayes).

    Returns ``(classes, options, loss)``, all None without a loss matrix.
    """
    decision = top.subsection("decision")
    classes = decision.strings("classes", None)
    options = decision.strings("options", None)
    loss = decision.array("loss", None)
    decision.finish()
    if loss is None:
        for key, value in (("classes", classes), ("options", options)):
            if value is not None:
                raise decision.error(key, "only applies with a loss matrix (decision.loss)")
        return None, None, None
    if classes is None:
        raise decision.error("classes", "is required with a loss matrix: the true classes, "
                                        "in the order of the loss matrix's columns")
    options = classes if options is None else options
    if loss.ndim != 2 or loss.shape != (len(options), len(classes)):
        raise decision.error("loss", f"expected a matrix of shape ({len(options)}, "
                                     f"{len(classes)}) (one row per option {options}, one column "
                                     f"per class {classes}), got shape {loss.shape}")
    if np.any(loss < 0):
        i, j = (int(v) for v in np.argwhere(loss < 0)[0])
        raise decision.error("loss", f"entries must be non-negative, got {loss[i, j]:g} at "
                                     f"row {i + 1} ({options[i]}), column {j + 1} ({classes[j]})")
    return tuple(classes), tuple(options), loss


def classifier_columns(data: Section, path: Path, *,
                       text: bool = False) -> tuple[DataSource, str, list[str]]:
    """Read ``[data] path, target, features`` of a classifier spec (naive and semi-naive Bayes).

    ``text``: every column is categorical, read as strings (see :class:`DataSource`).

    ``features`` defaults to every column but the target. A missing column, or the target
    listed as a feature, is a :class:`SpecError` naming the file and the key.
    """
    source = DataSource(data.string("path"), base=path.parent, text=text)
    target = data.string("target")
    features = data.strings("features", None)
    columns = source.columns()
    if target not in columns:
        raise SpecError(f"column {target!r} is not in {source.files()[0]}; it has: "
                        f"{', '.join(columns)}", path=path, key="data.target")
    if features is None:
        features = [c for c in columns if c != target]
    for f in features:
        if f not in columns:
            raise SpecError(f"column {f!r} is not in {source.files()[0]}; it has: "
                            f"{', '.join(columns)}", path=path, key="data.features")
    if target in features:
        raise SpecError(f"the target {target!r} is also listed as a feature", path=path,
                        key="data.features")
    return source, target, list(features)


def naive_bayes_spec(top: Section, path: Path) -> Spec:
    """Build a :class:`~bayescheck.models.spec.Spec` for ``model = "naive_bayes"``.

    Keys: ``[data] path, target, features, features_kind``; ``[prior] concentration,
    smoothing, class_prior, gaussian, mu0, kappa0, a0, b0``; ``[[query]]`` rows (feature =
    value, optional ``name``); ``[decision] classes, options, loss``; ``[states]`` (the
    target's or a categorical feature's states, :mod:`bayescheck.models.states`);
    ``[sampling]``. See docs/models/naive_bayes.md.
    """
    data = top.subsection("data")
    source, target, features = classifier_columns(data, path)
    if not features:
        raise SpecError("no features: the data have only the target column", path=path,
                        key="data.features")
    kinds = _kinds(data, features)
    data.finish()

    prior = top.subsection("prior")
    concentration = prior.number("concentration", 1.0, positive=True)
    smoothing = prior.boolean("smoothing", True)
    class_prior = prior.string("class_prior", "dirichlet" if smoothing else "frequency",
                               choices=("dirichlet", "frequency"))
    has_gaussian = "gaussian" in kinds
    gaussian = prior.string("gaussian", "nig" if smoothing else "ml", choices=("nig", "ml"))
    nig = {}
    for key, default, positive in (("mu0", 0.0, False), ("kappa0", 1.0, True),
                                   ("a0", 1.0, True), ("b0", 1.0, True)):
        if key in prior and not has_gaussian:
            raise prior.error(key, "only applies to Gaussian features; there are none "
                                   "(see data.features_kind)")
        nig[key] = float(prior.number(key, default, positive=positive))
    if "gaussian" in prior.table and not has_gaussian:
        raise prior.error("gaussian", "only applies to Gaussian features; there are none "
                                      "(see data.features_kind)")
    prior.finish()

    queries, names = query_rows(top, features, kinds)
    classes, options, loss = decision_section(top)
    declared = read_states(top, [target, *(f for f, k in zip(features, kinds, strict=True)
                                           if k == "categorical")], what="class or categorical "
                                                                        "feature column")
    sampling = SamplingConfig.from_section(top.subsection("sampling"))
    with validation.spec_keys(path, {k: f"prior.{k}" for k in ("concentration", *nig)}):
        model = NaiveBayes(features=tuple(features), kinds=tuple(kinds), target=target,
                           concentration=float(concentration), smoothing=smoothing,
                           class_prior=class_prior, gaussian=gaussian, **nig, queries=queries,
                           query_names=names, decision_classes=classes,
                           decision_options=options, loss=loss,
                           declared_states=declared or None)
    return Spec(model=model, data=source, sampling=sampling, path=path, raw=top.table)


#: The spec reader of each model of this module (:func:`bayescheck.models.registry.spec_reader`).
SPEC_READERS = {"naive_bayes": naive_bayes_spec}
