"""Naive Bayes from streamed sufficient statistics: Gaussian, categorical and mixed features.

    P(c | x)  ∝  P(c) prod_j P(x_j | c),   computed in log space (logsumexp).

Fitting is split like every engine of the project: :func:`naive_bayes_stats` computes the
sufficient statistics of one batch (class counts; per class and Gaussian feature the count,
mean and sum of squared deviations; per class and categorical feature the counts of each
category) and :meth:`NaiveBayesStats.__add__` combines two batches (counts by addition,
moments by Chan's parallel update), so a stream of batches gives the same model as one batch.
:func:`fit_naive_bayes` turns statistics into a :class:`NaiveBayesModel`.

What the options mean
---------------------
``smoothing=True`` (default), ``concentration=alpha`` (default 1)
    Class prior and categorical features are posterior means under symmetric
    Dirichlet(alpha) priors (the Dirichlet-categorical engine of
    :mod:`bayescheck.inference.engines.counts`): ``P(c) = (|D_c| + alpha) / (|D| + alpha N)`` and
    ``P(x_i = v | c) = (|D_c,v| + alpha) / (|D_c| + alpha N_i)``; alpha = 1 is the Laplace
    correction. ``smoothing=False``: plain maximum-likelihood frequencies.
    ``class_prior="frequency"`` / ``"dirichlet"`` overrides the class prior alone
    (for example Laplace-smoothed features with frequency class weights, as in
    scikit-learn's CategoricalNB).
``gaussian="ml"`` (default)
    Per class and feature the sample mean and the maximum-likelihood variance
    ``sum (x - mean)^2 / N`` (divides by N, not N - 1). A class with fewer than two rows, or
    a zero variance, is an error unless ``var_floor > 0`` (a lower bound on every variance).
``gaussian="nig"``
    Bayesian Gaussian features: per class and feature a Normal-Inverse-Gamma prior
    (:class:`UnivariateNIGPrior`), whose posterior predictive is a Student-t. Valid for any
    number of rows, including 0 and 1.

With ``smoothing=True`` and ``gaussian="nig"`` the scores are the exact posterior predictive
``P(c | x, D)`` of the fully Bayesian model (the parameter posteriors are independent, so the
expectation of the product is the product of the posterior-predictive factors): this is the
oracle for the NUTS cross-check.

Categories at prediction time
-----------------------------
Categories are fixed by the :class:`NaiveBayesSchema` (declared, or inferred from training
data). A declared category never seen with a class gets the prior mass
``alpha / (|D_c| + alpha N_i)`` when smoothed and probability 0 (log -inf) when not.
A label outside the declared categories is treated the same way, as a category no class has
seen: the prior mass when smoothed, 0 when not.

Log -inf never turns into NaN: when a feature value has probability 0 under *every* class
(possible only without smoothing) the value says nothing about the class, and that feature is
left out for that row (it contributes log 1 to every class). If a row still has a score of
-inf for every class (conflicting zeros), its posterior is the class prior;
:meth:`NaiveBayesModel.joint_log_likelihood` keeps the raw -inf scores so such rows can be found.

Prediction
----------
The per class and feature constants (log normalisers, inverse variances, categorical tables)
are computed once, when the :class:`NaiveBayesModel` is built; rows are then scored in blocks
that fit the L2 cache. ``x - mean`` is formed before squaring (no expansion into
``x^2 - 2 x mean + mean^2``, which cancels for tight classes far from the origin). Results
agree with the plain per-feature formulas to rounding (see
``tests/inference/engines/test_naive_bayes_predict.py``).

Errors are :class:`ValueError` whose message names the parameter (feature, class, row),
what was expected and what was received.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .counts import (
    CategoricalStats,
    DirichletPosterior,
    DirichletPrior,
    categorical_dirichlet,
    encode_labels,
)
from .dist import Dist
from .linear_gaussian import nig_log_evidence, nig_t_scale

__all__ = [
    "GAUSSIAN",
    "CATEGORICAL",
    "NaiveBayesSchema",
    "NaiveBayesStats",
    "naive_bayes_stats",
    "UnivariateNIGPrior",
    "UnivariateNIGPosterior",
    "normal_normal_inverse_gamma",
    "NaiveBayesModel",
    "fit_naive_bayes",
    "fit_naive_bayes_batches",
    "chan_combine",
]

GAUSSIAN = "gaussian"
CATEGORICAL = "categorical"
_KINDS = (GAUSSIAN, CATEGORICAL)
# float64 values of a (rows, G) temporary in prediction: 640 KiB fits the L2 cache (1 MiB here);
# 8192 rows of 10 features measured best among 2048 .. 32768
_BLOCK_VALUES = 81920


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _unique_in_order(values: np.ndarray) -> tuple:
    try:
        return tuple(_plain(v) for v in np.unique(values))
    except TypeError:  # mixed, unorderable labels: first appearance
        seen: dict = {}
        for v in values.tolist():
            seen.setdefault(v, None)
        return tuple(seen)


# ---------------------------------------------------------------------------
# schema and column access
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NaiveBayesSchema:
    """Classes, feature kinds and category sets, fixed before any batch is read.

    Parameters
    ----------
    classes : tuple
        Class labels, in output order (columns of ``predict_proba``).
    kinds : tuple of {"gaussian", "categorical"}
        One per feature.
    categories : tuple
        One entry per feature: a tuple of category labels for categorical features,
        ``None`` for Gaussian ones.
    feature_names : tuple of str, optional
        Names used in messages and to select DataFrame columns (default ``x0, x1, ...``).
    """

    classes: tuple
    kinds: tuple
    categories: tuple
    feature_names: tuple = field(default=())

    def __post_init__(self) -> None:
        classes = tuple(_plain(c) for c in self.classes)
        if len(classes) < 2 or len(set(classes)) != len(classes):
            raise ValueError(
                f"classes: expected at least 2 distinct class labels, received {list(classes)!r}"
            )
        kinds = tuple(self.kinds)
        if len(kinds) < 1:
            raise ValueError("kinds: expected one kind per feature, received none")
        names = tuple(self.feature_names) or tuple(f"x{j}" for j in range(len(kinds)))
        if len(names) != len(kinds):
            raise ValueError(
                f"feature_names: expected {len(kinds)} names (one per kind), received {len(names)}"
            )
        for name, kind in zip(names, kinds, strict=True):
            if kind not in _KINDS:
                raise ValueError(
                    f"kinds: expected 'gaussian' or 'categorical' for feature {name!r}, received "
                    f"{kind!r}"
                )
        if len(self.categories) != len(kinds):
            raise ValueError(
                f"categories: expected {len(kinds)} entries (one per feature), received "
                f"{len(self.categories)}"
            )
        cats = []
        for name, kind, c in zip(names, kinds, self.categories, strict=True):
            if kind == GAUSSIAN:
                cats.append(None)
                continue
            if c is None or len(c) < 1:
                raise ValueError(
                    f"categories: expected the category labels of feature {name!r}, received {c!r}"
                )
            c = tuple(_plain(v) for v in c)
            if len(set(c)) != len(c):
                raise ValueError(
                    f"categories: expected distinct labels for feature {name!r}, received "
                    f"{list(c)!r}"
                )
            cats.append(c)
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "categories", tuple(cats))
        object.__setattr__(self, "feature_names", names)

    @property
    def gaussian_features(self) -> tuple[int, ...]:
        """Indices of the Gaussian features."""
        return tuple(j for j, k in enumerate(self.kinds) if k == GAUSSIAN)

    @property
    def categorical_features(self) -> tuple[int, ...]:
        """Indices of the categorical features."""
        return tuple(j for j, k in enumerate(self.kinds) if k == CATEGORICAL)

    @classmethod
    def infer(
        cls, X: Any, y: Any, *, kinds: Sequence[str], feature_names: Sequence[str] | None = None
    ) -> NaiveBayesSchema:
        """Take classes and categories from the data (sorted labels where they sort).

        Parameters
        ----------
        X : 2-D array_like or pandas.DataFrame
            Training features.
        y : array_like
            Training classes.
        kinds : sequence of {"gaussian", "categorical"}
            One per column of ``X``.
        feature_names : sequence of str, optional
            Defaults to the DataFrame's columns, else ``x0, x1, ...``.
        """
        if feature_names is None and hasattr(X, "columns"):
            feature_names = [str(c) for c in X.columns]
        cols = _columns(X, len(tuple(kinds)), tuple(feature_names or ()))
        categories = tuple(
            _unique_in_order(np.asarray(col)) if kind == CATEGORICAL else None
            for kind, col in zip(kinds, cols, strict=True)
        )
        return cls(
            classes=_unique_in_order(np.asarray(y).ravel()),
            kinds=tuple(kinds),
            categories=categories,
            feature_names=tuple(feature_names or ()),
        )



#: Rows near a mean this large or larger that differ in float64 differ by at least an ulp,
#: whose square is a normal float64 number: a variance of 0 there means equal rows.
_EQUAL_ROWS_MEAN = 1e-130


def _refuse_subnormal_variances(variances: np.ndarray, floor: float, means: np.ndarray,
                                counts: np.ndarray, schema: NaiveBayesSchema) -> None:
    """Refuse a maximum-likelihood variance (after ``var_floor``) below float64's normal range.

    Below about 2.2e-308 a variance has lost its digits (the squared differences of rows
    closer than about 1.5e-154 underflow): the densities, and the class probabilities, would
    be wrong (features scaled by 1e-160) or the rows would look equal (1e-300).

    Raises
    ------
    ValueError
        Naming the feature and the class: equal rows, or values too small to square.
    """
    tiny = np.finfo(np.float64).tiny
    low = np.maximum(variances, floor) < tiny
    if not low.any():
        return
    c, g = (int(v) for v in np.argwhere(low)[0])
    where = (f"feature {schema.feature_names[schema.gaussian_features[g]]!r} in class "
             f"{schema.classes[c]!r}")
    if variances[c, g] == 0.0 and abs(means[c, g]) >= _EQUAL_ROWS_MEAN and floor == 0.0:
        raise ValueError(f"{where}: expected a positive maximum-likelihood variance, received 0 "
                         f"(all {int(counts[c])} rows equal); pass var_floor > 0")
    raise ValueError(
        f"{where}: the maximum-likelihood variance {variances[c, g]:.3g} is below float64's "
        f"smallest normal number ({tiny:.3g}): the rows (mean {means[c, g]:.3g}) differ by "
        f"less than about 1.5e-154, so their squared differences underflow (or the rows are "
        f"equal); rescale the feature, for example multiply it by a power of ten, or pass "
        f"var_floor >= {tiny:.3g}")


def _log1p_squares(U: np.ndarray, X: np.ndarray, mu: np.ndarray,
                   inv_scale: np.ndarray) -> np.ndarray:
    """``log1p(U)`` for ``U = ((X - mu) * inv_scale)^2``, also where the square overflowed.

    A value far from a class (``|z| > 1.3e154``, possible within the data's 1e150 limit when
    a class's spread is small) squares to ``inf``; there ``log1p(z^2) = 2 log|z|`` to the last
    bit, computed as ``2 (log|x - mu| + log inv_scale)``, which stays finite.
    """
    out = np.log1p(U)
    over = np.isinf(out)
    if over.any():
        rows = np.nonzero(over)[0]
        with np.errstate(divide="ignore"):
            out[over] = 2.0 * (np.log(np.abs(X[over] - mu[rows])) + np.log(inv_scale[rows]))
    return out

def _columns(X: Any, n_features: int, names: tuple) -> list[np.ndarray]:
    """Return the columns of X as 1-D arrays (DataFrames and mappings by name, else by position)."""
    if isinstance(X, Mapping):
        missing = [n for n in names if n not in X]
        if missing or not names:
            raise ValueError(f"X: a mapping of columns needs every feature by name; missing "
                             f"{missing or 'names'}")
        return [np.asarray(X[n]) for n in names]
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        if names and all(n in X.columns for n in names):
            return [X[n].to_numpy() for n in names]
        if X.shape[1] != n_features:
            raise ValueError(f"X: expected {n_features} feature columns, received {X.shape[1]}")
        return [X.iloc[:, j].to_numpy() for j in range(n_features)]
    A = np.asarray(X)
    if A.ndim != 2 or A.shape[1] != n_features:
        raise ValueError(
            f"X: expected a 2-D array with {n_features} feature columns, received shape {A.shape}"
        )
    return [A[:, j] for j in range(n_features)]


def _gaussian_matrix(
    cols: list[np.ndarray], schema: NaiveBayesSchema, X: Any = None, row0: int = 0
) -> np.ndarray:
    """Gaussian columns as a float64 (n, G) matrix; ``row0`` offsets the row in error messages."""
    idx = schema.gaussian_features
    if isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "iuf" and idx:
        # fast path: one gather of the Gaussian columns of a numeric matrix
        G = (
            X[:, list(idx)].astype(np.float64, copy=False)
            if len(idx) < X.shape[1]
            else X.astype(np.float64, copy=False)
        )
        bad = ~np.isfinite(G)
        if bad.any():
            r, g = (int(v) for v in np.argwhere(bad)[0])
            raise ValueError(
                f"X: expected finite numbers in Gaussian feature {schema.feature_names[idx[g]]!r}, "
                f"received {float(G[r, g])!r} at row {row0 + r}"
            )
        return G
    n = cols[0].shape[0] if cols else 0
    G = np.empty((n, len(idx)), dtype=np.float64)
    for g, j in enumerate(idx):
        try:
            G[:, g] = cols[j].astype(np.float64)
        except (TypeError, ValueError):
            col = cols[j]
            for r, v in enumerate(col.tolist()):
                try:
                    float(v)
                except (TypeError, ValueError):
                    raise ValueError(
                        f"X: expected numbers in Gaussian feature {schema.feature_names[j]!r}, "
                        f"received {v!r} at row {row0 + r}"
                    ) from None
            raise  # pragma: no cover
        bad = ~np.isfinite(G[:, g])
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"X: expected finite numbers in Gaussian feature {schema.feature_names[j]!r}, "
                f"received {_plain(cols[j][r])!r} at row {row0 + r}"
            )
    return G


# ---------------------------------------------------------------------------
# sufficient statistics
# ---------------------------------------------------------------------------


def chan_combine(
    n_a: np.ndarray,
    mean_a: np.ndarray,
    m2_a: np.ndarray,
    n_b: np.ndarray,
    mean_b: np.ndarray,
    m2_b: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Combine (count, mean, sum of squared deviations) of two samples (Chan, Golub & LeVeque 1979).

    ``mean = mean_a + d n_b / n`` and ``m2 = m2_a + m2_b + d^2 n_a n_b / n`` with
    ``d = mean_b - mean_a``; empty parts (count 0) are neutral. Arrays broadcast.
    """
    n_a = np.asarray(n_a, dtype=float)
    n_b = np.asarray(n_b, dtype=float)
    n = n_a + n_b
    safe = np.where(n > 0, n, 1.0)
    d = mean_b - mean_a
    mean = np.where(n > 0, mean_a + d * (n_b / safe), 0.0)
    m2 = m2_a + m2_b + d * d * (n_a * n_b / safe)
    return n, mean, m2


@dataclass(frozen=True, eq=False)
class NaiveBayesStats:
    """Sufficient statistics of one or more batches.

    Attributes
    ----------
    schema : NaiveBayesSchema
    class_counts : numpy.ndarray of int64, shape (K,)
    gaussian_mean : numpy.ndarray, shape (K, G)
        Per class and Gaussian feature, the mean (0 for a class without rows).
    gaussian_m2 : numpy.ndarray, shape (K, G)
        Per class and Gaussian feature, ``sum (x - mean)^2``.
    category_counts : tuple of numpy.ndarray of int64, shape (K, N_i)
        One per categorical feature, in schema order.
    """

    schema: NaiveBayesSchema
    class_counts: np.ndarray
    gaussian_mean: np.ndarray
    gaussian_m2: np.ndarray
    category_counts: tuple

    @classmethod
    def empty(cls, schema: NaiveBayesSchema) -> NaiveBayesStats:
        """The statistics of no rows: the neutral element of ``+``."""
        K, G = len(schema.classes), len(schema.gaussian_features)
        return cls(schema=schema, class_counts=np.zeros(K, np.int64),
                   gaussian_mean=np.zeros((K, G)), gaussian_m2=np.zeros((K, G)),
                   category_counts=tuple(np.zeros((K, len(schema.categories[j])), np.int64)
                                         for j in schema.categorical_features))

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.class_counts.sum())

    def __add__(self, other: NaiveBayesStats) -> NaiveBayesStats:
        if not isinstance(other, NaiveBayesStats):
            return NotImplemented
        if other.schema != self.schema:
            raise ValueError(
                "stats: expected batches with the same schema (classes, kinds, categories), "
                "received two"
            )
        na = self.class_counts[:, None]
        nb = other.class_counts[:, None]
        _, mean, m2 = chan_combine(
            na, self.gaussian_mean, self.gaussian_m2, nb, other.gaussian_mean, other.gaussian_m2
        )
        return NaiveBayesStats(
            schema=self.schema,
            class_counts=self.class_counts + other.class_counts,
            gaussian_mean=mean,
            gaussian_m2=m2,
            category_counts=tuple(
                a + b for a, b in zip(self.category_counts, other.category_counts, strict=True)
            ),
        )

    def reindexed(self, schema: NaiveBayesSchema) -> NaiveBayesStats:
        """The same rows under a schema with more classes or categories (counted 0 times).

        Used when a stream brings a label its first batches did not have: the statistics are
        sums, so those of the earlier batches under the larger schema are the old ones with
        zeros for the new labels, and the result equals one pass under the larger schema.

        Raises
        ------
        ValueError
            ``schema`` differs in kinds or feature names, or drops a class or category.
        """
        old = self.schema
        if schema.kinds != old.kinds or schema.feature_names != old.feature_names:
            raise ValueError("schema: expected the same features and kinds, received others")
        K = len(schema.classes)
        rows = encode_labels(np.asarray(old.classes, dtype=object), schema.classes)
        if np.any(rows < 0):
            raise ValueError(f"schema: expected the classes {list(old.classes)!r} among "
                             f"{list(schema.classes)!r}")
        G = self.gaussian_mean.shape[1]
        mean, m2 = np.zeros((K, G)), np.zeros((K, G))
        mean[rows], m2[rows] = self.gaussian_mean, self.gaussian_m2
        counts = np.zeros(K, np.int64)
        counts[rows] = self.class_counts
        tables = []
        for f, j in enumerate(old.categorical_features):
            cols = encode_labels(np.asarray(old.categories[j], dtype=object),
                                 schema.categories[j])
            if np.any(cols < 0):
                raise ValueError(f"schema: expected the categories {list(old.categories[j])!r} "
                                 f"of feature {old.feature_names[j]!r} among "
                                 f"{list(schema.categories[j])!r}")
            table = np.zeros((K, len(schema.categories[j])), np.int64)
            table[np.ix_(rows, cols)] = self.category_counts[f]
            tables.append(table)
        return NaiveBayesStats(schema=schema, class_counts=counts, gaussian_mean=mean,
                               gaussian_m2=m2, category_counts=tuple(tables))


def _encode_classes(y: Any, schema: NaiveBayesSchema) -> np.ndarray:
    a = np.asarray(y).ravel()
    codes = encode_labels(a, schema.classes)
    bad = codes < 0
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"y: expected one of the classes {list(schema.classes)!r}, received {_plain(a[r])!r} "
            f"at row {r}"
        )
    return codes


def naive_bayes_stats(X: Any, y: Any, *, schema: NaiveBayesSchema) -> NaiveBayesStats:
    """Sufficient statistics of one batch.

    Parameters
    ----------
    X : 2-D array_like or pandas.DataFrame, shape (n, d)
        Features, one column per entry of ``schema.kinds`` (DataFrames are selected by
        ``schema.feature_names`` when they have those columns).
    y : array_like, shape (n,)
        Class labels, each one of ``schema.classes``.
    schema : NaiveBayesSchema

    Returns
    -------
    NaiveBayesStats

    Raises
    ------
    ValueError
        Unknown class label, non-numeric or non-finite Gaussian value, a categorical label
        outside the declared categories (each message names the feature and the row).
    """
    if not isinstance(schema, NaiveBayesSchema):
        raise ValueError(f"schema: expected NaiveBayesSchema, received {type(schema).__name__}")
    cols = _columns(X, len(schema.kinds), schema.feature_names)
    yc = _encode_classes(y, schema)
    n = yc.size
    if cols and cols[0].shape[0] != n:
        raise ValueError(f"y: expected {cols[0].shape[0]} labels (one per row of X), received {n}")
    K = len(schema.classes)
    counts = np.bincount(yc, minlength=K).astype(np.int64)
    safe = np.where(counts > 0, counts, 1).astype(float)
    G = _gaussian_matrix(cols, schema, X).T.copy()  # one contiguous row per feature
    mean = np.zeros((K, G.shape[0]))
    m2 = np.zeros((K, G.shape[0]))
    for g in range(G.shape[0]):
        x = G[g]
        mu = np.bincount(yc, weights=x, minlength=K) / safe
        d = x - mu[yc]
        mu = mu + np.bincount(yc, weights=d, minlength=K) / safe  # second-pass correction
        d = x - mu[yc]
        mean[:, g] = np.where(counts > 0, mu, 0.0)
        m2[:, g] = np.bincount(yc, weights=d * d, minlength=K)
    cat_counts = []
    for j in schema.categorical_features:
        cats = schema.categories[j]
        codes = encode_labels(cols[j], cats)
        bad = codes < 0
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"X: expected one of the categories {list(cats)!r} in feature "
                f"{schema.feature_names[j]!r}, "
                f"received {_plain(cols[j][r])!r} at row {r}"
            )
        Ni = len(cats)
        cat_counts.append(
            np.bincount(yc * Ni + codes, minlength=K * Ni).reshape(K, Ni).astype(np.int64)
        )
    return NaiveBayesStats(
        schema=schema,
        class_counts=counts,
        gaussian_mean=mean,
        gaussian_m2=m2,
        category_counts=tuple(cat_counts),
    )


# ---------------------------------------------------------------------------
# Normal-Inverse-Gamma, one dimension
# ---------------------------------------------------------------------------


def _positive(name: str, value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a positive finite number, received {value!r}") from None
    if not np.isfinite(x) or x <= 0:
        raise ValueError(f"{name}: expected a positive finite number, received {value!r}")
    return x


@dataclass(frozen=True, kw_only=True)
class UnivariateNIGPrior:
    """Normal-Inverse-Gamma prior on the mean and variance of a 1-D Gaussian.

    ``sigma2 ~ InvGamma(a0, b0)`` (shape ``a0``, scale ``b0``;
    density ∝ sigma2^-(a0+1) exp(-b0/sigma2)),
    ``mu | sigma2 ~ Normal(mu0, sigma2 / kappa0)``; ``x | mu, sigma2 ~ Normal(mu, sigma2)``.
    ``kappa0`` acts as a number of prior pseudo-observations of the mean, ``2 a0`` of the variance.

    Parameters
    ----------
    mu0 : float
    kappa0, a0, b0 : float
        Positive.
    """

    mu0: float
    kappa0: float
    a0: float
    b0: float

    def __post_init__(self) -> None:
        try:
            mu0 = float(self.mu0)
        except (TypeError, ValueError):
            raise ValueError(f"mu0: expected a finite number, received {self.mu0!r}") from None
        if not np.isfinite(mu0):
            raise ValueError(f"mu0: expected a finite number, received {self.mu0!r}")
        object.__setattr__(self, "mu0", mu0)
        for name in ("kappa0", "a0", "b0"):
            object.__setattr__(self, name, _positive(name, getattr(self, name)))


@dataclass(frozen=True, eq=False)
class UnivariateNIGPosterior:
    """Posterior NIG(mu, kappa, a, b), elementwise over arrays of any shape.

    Each element is the regression posterior
    :class:`~bayescheck.inference.engines.linear_gaussian.NormalInverseGammaPosterior` of an
    intercept-only design, vectorised over classes and features and updated from centred
    moments (count, mean, m2) instead of natural parameters, so that b does not come from the
    difference of two large sums; the Student-t scales and the evidence are the same functions
    (:func:`~bayescheck.inference.engines.linear_gaussian.nig_t_scale`,
    :func:`~bayescheck.inference.engines.linear_gaussian.nig_log_evidence`).

    Attributes
    ----------
    mu, kappa, a, b : numpy.ndarray
        ``mu = (kappa0 mu0 + n xbar) / kappa``, ``kappa = kappa0 + n``, ``a = a0 + n / 2``,
        ``b = b0 + m2 / 2 + kappa0 n (xbar - mu0)^2 / (2 kappa)``.
    count : numpy.ndarray
        ``n`` of the update.
    prior : UnivariateNIGPrior
    """

    mu: np.ndarray
    kappa: np.ndarray
    a: np.ndarray
    b: np.ndarray
    count: np.ndarray
    prior: UnivariateNIGPrior

    def predictive(self) -> Dist:
        """Posterior predictive of a new x: Student-t(2a, mu, :attr:`predictive_scale`)."""
        return Dist("t", 2 * self.a, self.mu, self.predictive_scale)

    @property
    def predictive_scale(self) -> np.ndarray:
        """Scale of the Student-t predictive, ``sqrt(b / a * (1 + 1 / kappa))``."""
        return nig_t_scale(self.a, self.b, 1.0 + 1.0 / self.kappa)

    def predictive_logpdf(self, x: np.ndarray) -> np.ndarray:
        """Log density of the Student-t predictive (broadcasts ``x`` against the parameters)."""
        from scipy import special

        nu = 2.0 * self.a
        s = self.predictive_scale
        z = (x - self.mu) / s
        return (
            special.gammaln((nu + 1.0) / 2.0)
            - special.gammaln(nu / 2.0)
            - 0.5 * np.log(nu * np.pi)
            - np.log(s)
            - (nu + 1.0) / 2.0 * np.log1p(z * z / nu)
        )

    def expected_logpdf(self, x: np.ndarray) -> np.ndarray:
        """Posterior mean of the log density ``E[log N(x | mu, sigma2)]`` (broadcasts ``x``).

        With ``sigma2 ~ InvGamma(a, b)``, ``E[log sigma2] = log b - digamma(a)`` and
        ``E[1 / sigma2] = a / b``; with ``mu | sigma2 ~ N(m, sigma2 / kappa)``,
        ``E[(x - mu)^2 / sigma2] = (x - m)^2 a / b + 1 / kappa``. Unlike the mean of the
        density itself (the Student-t predictive), this is the mean of a light-tailed quantity.
        """
        from scipy import special

        return (-0.5 * np.log(2.0 * np.pi) - 0.5 * (np.log(self.b) - special.digamma(self.a))
                - 0.5 * ((x - self.mu) ** 2 * self.a / self.b + 1.0 / self.kappa))

    def mean_marginal(self) -> Dist:
        """Marginal posterior of mu: Student-t(2a, mu, ``sqrt(b / (a kappa))``)."""
        return Dist("t", 2 * self.a, self.mu, nig_t_scale(self.a, self.b, 1.0 / self.kappa))

    def variance_marginal(self) -> Dist:
        """Marginal posterior of sigma2: InvGamma(a, scale=b)."""
        return Dist("invgamma", self.a, scale=self.b)

    def log_marginal_likelihood(self) -> np.ndarray:
        """Log density of the data under the prior (:func:`~.linear_gaussian.nig_log_evidence`).

        ``lgamma(a) - lgamma(a0) + a0 log b0 - a log b``
        ``+ (log kappa0 - log kappa) / 2 - n log(2 pi) / 2``.
        """
        p = self.prior
        return nig_log_evidence(n=self.count, shape0=p.a0, scale0=p.b0, shape=self.a,
                                scale=self.b, prior_logdet=np.log(p.kappa0),
                                posterior_logdet=np.log(self.kappa))


def normal_normal_inverse_gamma(
    *, count: Any, mean: Any, m2: Any, prior: UnivariateNIGPrior
) -> UnivariateNIGPosterior:
    """Conjugate NIG update from (count, mean, sum of squared deviations), elementwise.

    Parameters
    ----------
    count, mean, m2 : array_like
        Sufficient statistics of the Gaussian data (broadcast together); ``count`` may be 0.
    prior : UnivariateNIGPrior

    Returns
    -------
    UnivariateNIGPosterior
    """
    n = np.asarray(count, dtype=float)
    xbar = np.asarray(mean, dtype=float)
    m2 = np.asarray(m2, dtype=float)
    if np.any(n < 0) or np.any(m2 < 0):
        raise ValueError(
            "count, m2: expected non-negative sufficient statistics, received negative values"
        )
    kappa = prior.kappa0 + n
    mu = (prior.kappa0 * prior.mu0 + n * xbar) / kappa
    a = prior.a0 + 0.5 * n
    b = prior.b0 + 0.5 * m2 + 0.5 * prior.kappa0 * n * (xbar - prior.mu0) ** 2 / kappa
    return UnivariateNIGPosterior(
        mu=mu, kappa=kappa, a=a * np.ones_like(mu), b=b, count=n * np.ones_like(mu), prior=prior
    )


# ---------------------------------------------------------------------------
# the fitted model
# ---------------------------------------------------------------------------


def _ml_gaussian_scores(Gm: np.ndarray, means: np.ndarray, half_inv_var: np.ndarray,
                        relative: bool) -> np.ndarray:
    """``-sum_g (x_g - mean_cg)^2 / (2 var_cg)`` per class and row, shape (K, rows).

    Where a square overflows in some class (a value some 1e154 class sds away) the term is
    -inf. With ``relative`` such a row is computed again up to a constant of its own: with
    ``s`` the row's largest distance, ``T_c = s^2 sum_g ((x_g - mean_cg) / s)^2 h_cg`` and the
    row's terms become ``-s^2 (T~_c - min T~)`` (an overflow there is a class whose
    probability is 0 next to the closest one, exactly as in real arithmetic), so the class
    probabilities are those of the exact scores instead of 0 / 0.
    """
    K = means.shape[0]
    out = np.empty((K, Gm.shape[0]))
    d = np.empty_like(Gm)
    with np.errstate(over="ignore"):
        for c in range(K):
            np.subtract(Gm, means[c], out=d)
            d *= d
            out[c] = d @ half_inv_var[c]
    far = np.flatnonzero(np.any(np.isneginf(out), axis=0)) if relative else ()
    for i in far:
        dist = Gm[i][None, :] - means  # (K, G)
        s = np.max(np.abs(dist))
        t = np.sum((dist / s) ** 2 * -half_inv_var, axis=1)  # T~_c, finite
        with np.errstate(over="ignore"):
            out[:, i] = -(s * (s * (t - t.min())))
    return out


@dataclass(frozen=True, eq=False)
class NaiveBayesModel:
    """A fitted naive Bayes classifier.

    Attributes
    ----------
    schema : NaiveBayesSchema
    stats : NaiveBayesStats
        The statistics it was fitted from.
    class_log_prior : numpy.ndarray, shape (K,)
    gaussian : {"ml", "nig"}
    means, variances : numpy.ndarray, shape (K, G)
        Per class and Gaussian feature (``gaussian="ml"``; for ``"nig"`` the posterior means
        of mu and sigma2, for information).
    nig : UnivariateNIGPosterior or None
        Per class and Gaussian feature, shape (K, G) (``gaussian="nig"``).
    category_log_prob : tuple of numpy.ndarray, shape (K, N_i)
        ``log P(x_i = v | c)`` per categorical feature.
    unknown_log_prob : tuple of numpy.ndarray, shape (K,)
        ``log P`` given to a label outside the declared categories.
    class_posterior : DirichletPosterior
        Posterior of the class weights under Dirichlet(concentration).
    category_posteriors : tuple of (tuple of DirichletPosterior or None)
        ``[feature][class]``, under Dirichlet(concentration); None for a feature with a
        single category, whose probability is 1 under every class (a Dirichlet over one
        category is the point mass at 1: the feature carries no information).
    smoothing : bool
    concentration : float
    """

    schema: NaiveBayesSchema
    stats: NaiveBayesStats
    class_log_prior: np.ndarray
    gaussian: str
    means: np.ndarray
    variances: np.ndarray
    nig: UnivariateNIGPosterior | None
    category_log_prob: tuple
    unknown_log_prob: tuple
    class_posterior: DirichletPosterior
    category_posteriors: tuple
    smoothing: bool
    concentration: float
    _plan: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_plan", self._prediction_plan())

    def _prediction_plan(self) -> dict:
        """Per class and feature constants of the log scores, computed once per model."""
        s = self.schema
        K = len(s.classes)
        G = len(s.gaussian_features)
        base = np.asarray(self.class_log_prior, dtype=float).copy()
        plan: dict = {"K": K, "G": G}
        if G and self.gaussian == "ml":
            var = np.asarray(self.variances, dtype=float)
            base -= 0.5 * np.sum(np.log(2.0 * np.pi * var), axis=1)
            plan["means"] = np.asarray(self.means, dtype=float)
            plan["half_inv_var"] = -0.5 / var  # exact: -0.5 (d @ (1/var)) == d @ (-0.5/var)
        elif G:
            from scipy import special

            nig = self.nig
            nu = 2.0 * nig.a
            scale = nig.predictive_scale
            base += np.sum(
                special.gammaln((nu + 1.0) / 2.0)
                - special.gammaln(nu / 2.0)
                - 0.5 * np.log(nu * np.pi)
                - np.log(scale),
                axis=1,
            )
            plan["mu"] = np.asarray(nig.mu, dtype=float)
            plan["inv_scale"] = 1.0 / (scale * np.sqrt(nu))  # z^2 / nu = ((x - mu) * r)^2
            plan["weight"] = -(nu + 1.0) / 2.0
            # one nu per class (the usual case): sum_g log1p(u_g) = log1p(q) (see _score_block)
            plan["one_nu"] = np.all(nu == nu[:, :1], axis=1)
        tables, direct = [], []
        for f in range(len(s.categorical_features)):
            # one column per category, the last for labels outside the declared ones (code -1)
            table = np.concatenate(
                [self.category_log_prob[f], self.unknown_log_prob[f][:, None]], axis=1
            )
            impossible = np.all(np.isneginf(table), axis=0)
            table[:, impossible] = 0.0  # a value no class can produce says nothing about the class
            tables.append(np.ascontiguousarray(table))
            cats = np.asarray(list(s.categories[s.categorical_features[f]]))
            # categories 0 .. N-1: integer labels in range are their own codes
            direct.append(
                cats.size
                if cats.dtype.kind in "iu" and np.array_equal(cats, np.arange(cats.size))
                else 0
            )
        plan["tables"] = tables
        plan["direct"] = direct
        plan["base"] = base
        # rows per block: the (rows, G) temporaries stay in the L2 cache
        plan["rows"] = int(np.clip(_BLOCK_VALUES // max(G, K, 1), 1024, 16384))
        return plan

    @property
    def classes(self) -> tuple:
        """Class labels, in column order."""
        return self.schema.classes

    def _map_blocks(self, X: Any, finish, *, relative: bool = True) -> np.ndarray:
        """Score X block by block; ``finish(S)`` turns raw (K, rows) scores into output rows.

        ``relative``: a row whose ML Gaussian terms overflow in some class is scored up to a
        constant of its own (see :func:`_ml_gaussian_scores`), which the class probabilities
        do not see; without it such a row keeps its -inf scores.
        """
        s = self.schema
        cols = _columns(X, len(s.kinds), s.feature_names)
        n = cols[0].shape[0]
        out = np.empty((n, len(s.classes)))
        dense = isinstance(X, np.ndarray)
        step = self._plan["rows"]
        for a in range(0, n, step):
            b = min(a + step, n)
            S = self._score_block([c[a:b] for c in cols], X[a:b] if dense else None, a,
                                  relative=relative)
            out[a:b] = finish(S).T
        return out

    def _score_block(self, cols: list, X: Any, row0: int, *, relative: bool = True
                     ) -> np.ndarray:
        s = self.schema
        plan = self._plan
        K = plan["K"]
        m = cols[0].shape[0]
        S = np.empty((K, m))
        S[:] = plan["base"][:, None]
        if plan["G"]:
            Gm = _gaussian_matrix(cols, s, X, row0)
            if self.gaussian == "ml":
                S += _ml_gaussian_scores(Gm, plan["means"], plan["half_inv_var"], relative)
            else:
                XT = np.ascontiguousarray(Gm.T)
                U = np.empty_like(XT)
                q = np.empty(m)
                t = np.empty(m)
                for c in range(K):
                    np.subtract(XT, plan["mu"][c][:, None], out=U)
                    U *= plan["inv_scale"][c][:, None]
                    with np.errstate(over="ignore"):  # handled by _log1p_squares
                        U *= U  # u_g = z_g^2 / nu_g
                    w = plan["weight"][c]
                    if not plan["one_nu"][c]:
                        S[c] += w @ _log1p_squares(U, XT, plan["mu"][c], plan["inv_scale"][c])
                        continue
                    # prod_g (1 + u_g) = 1 + q with q_g = q + u_g + q u_g: sums of non-negative
                    # terms, so q keeps full relative accuracy and one log1p per row replaces G.
                    q[:] = U[0]
                    with np.errstate(over="ignore", invalid="ignore"):  # handled below
                        for g in range(1, U.shape[0]):
                            np.multiply(q, U[g], out=t)
                            q += U[g]
                            q += t
                    bad = ~np.isfinite(q)  # product overflowed: sum the G terms for those rows
                    np.log1p(q, out=q)
                    q *= w[0]
                    if bad.any():
                        q[bad] = w @ _log1p_squares(U[:, bad], XT[:, bad], plan["mu"][c],
                                                    plan["inv_scale"][c])
                    S[c] += q
        lo = hi = -1
        if any(plan["direct"]) and X is not None and X.dtype.kind in "iu":
            lo, hi = X.min(), X.max()  # whole block at once; strided per-column passes are slow
        for f, j in enumerate(s.categorical_features):
            codes = cols[j]
            N = plan["direct"][f]
            if not (N and codes.dtype.kind in "iu" and lo >= 0 and hi < N):
                codes = encode_labels(codes, s.categories[j])
            S += np.take(plan["tables"][f], codes, axis=1)  # code -1 takes the last column
        return S

    def _revive(self, S: np.ndarray) -> np.ndarray:
        """Set all-(-inf) columns of S to the class log prior; return the column maxima."""
        mx = S.max(axis=0)
        dead = np.isneginf(mx)
        if dead.any():
            S[:, dead] = self.class_log_prior[:, None]
            mx[dead] = np.max(self.class_log_prior)
        return mx

    def joint_log_likelihood(self, X: Any, *, relative: bool = False) -> np.ndarray:
        """Unnormalised log scores ``log P(c) + sum_j log P(x_j | c)``, shape (n, K).

        A feature whose value has probability 0 under every class is left out for that row
        (see the module notes); otherwise -inf scores are kept. ``relative``: a row whose
        maximum-likelihood Gaussian squares overflow is scored up to a constant of its own
        (its class probabilities exact) instead of -inf in every class.
        """
        return self._map_blocks(X, lambda S: S, relative=relative)

    def _scores(self, X: Any) -> np.ndarray:
        """Return :meth:`joint_log_likelihood`, all-(-inf) rows set to the class log prior."""

        def finish(S: np.ndarray) -> np.ndarray:
            self._revive(S)
            return S

        return self._map_blocks(X, finish)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Log posterior class probabilities, shape (n, K), columns in ``classes`` order.

        ``log P(c | x) = d_c - log(sum_k exp d_k)`` with ``d = score - max score``; as in
        :func:`scipy.special.logsumexp`, the maxima are taken out of the sum and the rest goes
        through ``log1p``, so a probability close to 1 keeps an accurate logarithm.
        """

        def finish(S: np.ndarray) -> np.ndarray:
            S -= self._revive(S)  # the maxima become exactly 0
            top = S == 0.0
            E = np.exp(S)
            E[top] = 0.0
            ties = top.sum(axis=0)
            rest = E.sum(axis=0)
            if ties.max() > 1:
                rest /= ties
                S -= np.log(ties)
            S -= np.log1p(rest)
            return S

        return self._map_blocks(X, finish)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Posterior class probabilities, shape (n, K)."""

        def finish(S: np.ndarray) -> np.ndarray:
            S -= self._revive(S)
            np.exp(S, out=S)
            S /= S.sum(axis=0)
            return S

        return self._map_blocks(X, finish)

    def predict(self, X: Any) -> np.ndarray:
        """Maximum-posterior class label of each row (ties: first class)."""
        idx = np.argmax(self._scores(X), axis=1)
        labels = self.schema.classes
        mixed = len({type(v) for v in labels}) > 1
        return np.asarray(labels, dtype=object if mixed else None)[idx]


def fit_naive_bayes(
    *,
    stats: NaiveBayesStats,
    smoothing: bool = True,
    concentration: float = 1.0,
    class_prior: Literal["dirichlet", "frequency"] | None = None,
    gaussian: Literal["ml", "nig"] = "ml",
    nig_prior: UnivariateNIGPrior | None = None,
    var_floor: float = 0.0,
) -> NaiveBayesModel:
    """Fit naive Bayes from sufficient statistics.

    Parameters
    ----------
    stats : NaiveBayesStats
        From :func:`naive_bayes_stats`, combined over batches by ``+``.
    smoothing : bool, default True
        Dirichlet(concentration) posterior means (Laplace for 1) for the class prior and the
        categorical features; False: maximum-likelihood frequencies.
    concentration : float, default 1.0
        Symmetric Dirichlet concentration.
    class_prior : {"dirichlet", "frequency"}, optional
        Override for the class prior alone; default follows ``smoothing``.
    gaussian : {"ml", "nig"}, default "ml"
        Maximum-likelihood mean and variance (divides by N), or Normal-Inverse-Gamma
        posterior with Student-t predictive (needs ``nig_prior``).
    nig_prior : UnivariateNIGPrior, optional
        Shared by every class and Gaussian feature.
    var_floor : float, default 0.0
        Lower bound on every ML variance; 0 disables it (then a zero variance is an error).

    Returns
    -------
    NaiveBayesModel

    Raises
    ------
    ValueError
        A class without rows where frequencies are needed; a class with a single row, or a
        zero variance, for ML Gaussian features; bad option values.
    """
    if not isinstance(stats, NaiveBayesStats):
        raise ValueError(f"stats: expected NaiveBayesStats, received {type(stats).__name__}")
    s = stats.schema
    alpha = _positive("concentration", concentration)
    if class_prior is None:
        class_prior = "dirichlet" if smoothing else "frequency"
    if class_prior not in ("dirichlet", "frequency"):
        raise ValueError(
            f"class_prior: expected 'dirichlet' or 'frequency', received {class_prior!r}"
        )
    if gaussian not in ("ml", "nig"):
        raise ValueError(f"gaussian: expected 'ml' or 'nig', received {gaussian!r}")
    try:
        floor = float(var_floor)
    except (TypeError, ValueError):
        floor = -1.0
    if not np.isfinite(floor) or floor < 0:
        raise ValueError(
            f"var_floor: expected a non-negative finite number, received {var_floor!r}"
        )
    n = stats.n
    if n == 0:
        raise ValueError("stats: expected at least one row of training data, received 0")
    counts = stats.class_counts

    class_post = categorical_dirichlet(
        stats=CategoricalStats(counts=counts, categories=s.classes),
        prior=DirichletPrior.symmetric(alpha, categories=s.classes),
    )
    with np.errstate(divide="ignore"):
        if class_prior == "dirichlet":
            log_prior = np.log(class_post.mean)
        else:
            log_prior = np.log(counts / n)

    # Gaussian features
    gidx = s.gaussian_features
    K = len(s.classes)
    nig = None
    if gaussian == "ml":
        if gidx:
            for c in range(K):
                if counts[c] < 2 and floor == 0.0:
                    what = "no rows" if counts[c] == 0 else "a single row"
                    raise ValueError(
                        f"class {s.classes[c]!r}: expected at least 2 rows for the "
                        "maximum-likelihood variance "
                        f"of its Gaussian features, received {what}; pass var_floor > 0 or "
                        "gaussian='nig'"
                    )
                if counts[c] == 0:
                    raise ValueError(
                        f"class {s.classes[c]!r}: expected at least 1 row for the mean of its "
                        "Gaussian features, "
                        f"received no rows; use gaussian='nig'"
                    )
        safe = np.where(counts > 0, counts, 1).astype(float)[:, None]
        means = stats.gaussian_mean.copy()
        variances = stats.gaussian_m2 / safe
        if gidx:
            _refuse_subnormal_variances(variances, floor, means, counts, s)
            variances = np.maximum(variances, floor)
    else:
        if gidx and nig_prior is None:
            raise ValueError(
                "nig_prior: expected a UnivariateNIGPrior when gaussian='nig', received None"
            )
        if nig_prior is not None and not isinstance(nig_prior, UnivariateNIGPrior):
            raise ValueError(
                f"nig_prior: expected UnivariateNIGPrior, received {type(nig_prior).__name__}"
            )
        prior = nig_prior or UnivariateNIGPrior(mu0=0.0, kappa0=1.0, a0=1.0, b0=1.0)
        nig = normal_normal_inverse_gamma(
            count=np.broadcast_to(counts[:, None], stats.gaussian_mean.shape),
            mean=stats.gaussian_mean,
            m2=stats.gaussian_m2,
            prior=prior,
        )
        means = nig.mu
        with np.errstate(divide="ignore", invalid="ignore"):
            variances = np.where(nig.a > 1, nig.b / np.maximum(nig.a - 1.0, 1e-300), np.inf)

    # categorical features
    cat_lp, unk_lp, cat_posts = [], [], []
    for f, j in enumerate(s.categorical_features):
        cats = s.categories[j]
        Ni = len(cats)
        cc = stats.category_counts[f]
        posts = None if Ni == 1 else tuple(
            categorical_dirichlet(
                stats=CategoricalStats(counts=cc[c], categories=cats),
                prior=DirichletPrior.symmetric(alpha, categories=cats),
            )
            for c in range(K)
        )
        cat_posts.append(posts)
        if smoothing:
            table = (np.zeros((K, 1)) if posts is None
                     else np.log(np.stack([p.mean for p in posts])))
            unknown = np.log(alpha / (counts + alpha * Ni))
        else:
            empty = counts == 0
            if empty.any():
                c = int(np.flatnonzero(empty)[0])
                raise ValueError(
                    f"class {s.classes[c]!r}: expected at least 1 row for unsmoothed frequencies "
                    "of "
                    f"categorical feature {s.feature_names[j]!r}, received no rows; use "
                    "smoothing=True"
                )
            with np.errstate(divide="ignore"):
                table = np.log(cc / counts[:, None])
            unknown = np.full(K, -np.inf)
        cat_lp.append(table)
        unk_lp.append(unknown)

    return NaiveBayesModel(
        schema=s,
        stats=stats,
        class_log_prior=log_prior,
        gaussian=gaussian,
        means=means,
        variances=variances,
        nig=nig,
        category_log_prob=tuple(cat_lp),
        unknown_log_prob=tuple(unk_lp),
        class_posterior=class_post,
        category_posteriors=tuple(cat_posts),
        smoothing=bool(smoothing),
        concentration=alpha,
    )


def fit_naive_bayes_batches(
    batches: Iterable[tuple[Any, Any]], *, schema: NaiveBayesSchema, **fit_options: Any
) -> NaiveBayesModel:
    """Stream ``(X, y)`` batches: statistics per batch, combined by addition, then one fit.

    Parameters
    ----------
    batches : iterable of (X, y)
    schema : NaiveBayesSchema
    **fit_options
        Passed to :func:`fit_naive_bayes`.
    """
    total = None
    for X, y in batches:
        st = naive_bayes_stats(X, y, schema=schema)
        total = st if total is None else total + st
    if total is None:
        raise ValueError("batches: expected at least one (X, y) batch, received none")
    return fit_naive_bayes(stats=total, **fit_options)
