"""Conjugate engines on counts: Beta-Bernoulli and Dirichlet-categorical.

Counts are sufficient statistics. Each model has a per-batch statistic
(:class:`BernoulliStats` from the number of ones and of outcomes, which are validated as 0/1
where they are read: ``models.beta_bernoulli.bernoulli_labels``; :func:`categorical_stats`)
and an additive combine step
(``stats_a + stats_b`` or :func:`combine`), so streaming over batches gives
exactly the same posterior as one batch, and a posterior can be used as the
prior of the next batch (:meth:`BetaPosterior.as_prior`,
:meth:`DirichletPosterior.as_prior`).

Models
------
Beta-Bernoulli
    ``p ~ Beta(a, b)``, ``y_i ~ Bernoulli(p)``. With ``k`` successes in ``n``
    trials the posterior is ``Beta(a + k, b + n - k)``.
Dirichlet-categorical
    ``pi ~ Dirichlet(alpha)``, ``y_i ~ Categorical(pi)``. With counts ``c`` (one
    per category, in a fixed category order) the posterior is
    ``Dirichlet(alpha + c)``; each marginal ``pi_k`` is
    ``Beta(alpha_k, alpha_0 - alpha_k)`` with ``alpha_0 = sum(alpha)``.

    With ``alpha = 1`` (every category) the posterior mean is exactly the
    Laplace-corrected estimate ``(c_k + 1) / (n + N)`` with ``N`` categories:
    Laplace smoothing *is* the posterior mean under a uniform Dirichlet prior.

The posterior objects hand out frozen :mod:`scipy.stats` distributions
(``dist()``, ``marginal(k)``), which the NUTS cross-check uses as its oracle.
Errors are :class:`ValueError` whose message names the parameter, what was
expected and what was received.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dist import Dist

__all__ = [
    "BernoulliStats",
    "BetaPrior",
    "BetaPosterior",
    "bernoulli_beta",
    "bernoulli_beta_predictive",
    "CategoricalStats",
    "DirichletPrior",
    "DirichletPosterior",
    "categorical_stats",
    "categorical_stats_from_codes",
    "categorical_dirichlet",
    "categorical_dirichlet_predictive",
    "dirichlet_mode",
    "encode_labels",
    "combine",
]


# ---------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------


def _positive_finite(name: str, value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a positive finite number, received {value!r}") from None
    if not np.isfinite(x) or x <= 0.0:
        raise ValueError(f"{name}: expected a positive finite number, received {value!r}")
    return x


def _count(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected a non-negative integer count, received {value!r}")
    try:
        x = int(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name}: expected a non-negative integer count, received {value!r}"
        ) from None
    if x != value or x < 0:
        raise ValueError(f"{name}: expected a non-negative integer count, received {value!r}")
    return x


def _plain(v: Any) -> Any:
    """Return a numpy scalar as the Python value it holds (for messages)."""
    return v.item() if isinstance(v, np.generic) else v


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


def combine(stats_seq: Iterable[Any]) -> Any:
    """Combine per-batch sufficient statistics by addition.

    Parameters
    ----------
    stats_seq : iterable of BernoulliStats or CategoricalStats
        The statistics of each batch, all of one kind (and, for categorical,
        of one category set).

    Returns
    -------
    BernoulliStats or CategoricalStats
        Their sum: the statistics of the concatenated batches.

    Raises
    ------
    ValueError
        If ``stats_seq`` is empty.
    """
    it = iter(stats_seq)
    try:
        total = next(it)
    except StopIteration:
        raise ValueError(
            "stats_seq: expected at least one batch of statistics, received none"
        ) from None
    for s in it:
        total = total + s
    return total


# ---------------------------------------------------------------------------
# Beta-Bernoulli
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BernoulliStats:
    """Sufficient statistics of Bernoulli data: ``k`` successes in ``n`` trials.

    Parameters
    ----------
    k : int
        Number of successes (ones).
    n : int
        Number of trials; ``0 <= k <= n``.
    """

    k: int
    n: int

    def __post_init__(self) -> None:
        k = _count("k", self.k)
        n = _count("n", self.n)
        if k > n:
            raise ValueError(f"k: expected at most n = {n} successes, received k = {k}")
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "n", n)

    def __add__(self, other: BernoulliStats) -> BernoulliStats:
        if not isinstance(other, BernoulliStats):
            return NotImplemented
        return BernoulliStats(k=self.k + other.k, n=self.n + other.n)


@dataclass(frozen=True)
class BetaPrior:
    """Beta(a, b) prior on a Bernoulli probability.

    Parameters
    ----------
    a, b : float
        Positive shape parameters (``a`` counts prior successes, ``b`` prior failures).
    """

    a: float = 1.0
    b: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "a", _positive_finite("a", self.a))
        object.__setattr__(self, "b", _positive_finite("b", self.b))

    def dist(self) -> Any:
        """``scipy.stats.beta(a, b)``, as a cheap :class:`~.dist.Dist`."""
        return Dist("beta", self.a, self.b)


@dataclass(frozen=True)
class BetaPosterior:
    """Posterior Beta(a, b) of a Bernoulli probability, with the data it came from.

    Attributes
    ----------
    a, b : float
        Posterior shape parameters, ``a = a0 + k`` and ``b = b0 + n - k``.
    prior : BetaPrior
        The prior that was updated.
    stats : BernoulliStats
        The data (successes, trials) used in this update.
    """

    a: float
    b: float
    prior: BetaPrior
    stats: BernoulliStats

    def dist(self) -> Any:
        """The exact posterior of ``p``, ``scipy.stats.beta(a, b)`` (a cheap ``Dist``)."""
        return Dist("beta", self.a, self.b)

    def as_prior(self) -> BetaPrior:
        """Return this posterior as the prior of the next batch."""
        return BetaPrior(a=self.a, b=self.b)

    @property
    def mean(self) -> float:
        """Posterior mean ``a / (a + b)``."""
        return self.a / (self.a + self.b)

    @property
    def sd(self) -> float:
        """Posterior standard deviation."""
        s = self.a + self.b
        return float(np.sqrt(self.a * self.b / (s * s * (s + 1.0))))

    def mle(self) -> float:
        """Maximum-likelihood estimate ``k / n`` of this update's data.

        Raises
        ------
        ValueError
            If ``n = 0``: the likelihood is flat, the MLE is undefined.
        """
        if self.stats.n == 0:
            raise ValueError(
                "n: the maximum-likelihood estimate k/n needs n >= 1 trials, received n = 0"
            )
        return self.stats.k / self.stats.n

    def map(self) -> float:
        """Maximum a posteriori estimate (the mode of Beta(a, b)).

        ``(a - 1) / (a + b - 2)`` when ``a > 1`` and ``b > 1``. On the boundary:

        * ``a <= 1 <= b`` (not both 1): the density is non-increasing, mode at 0
          (for ``a < 1`` the density is unbounded at 0; 0 is still its supremum);
        * ``b <= 1 <= a`` (not both 1): mode at 1;
        * ``a = b = 1``: the posterior is uniform, every point is a mode;
        * ``a < 1`` and ``b < 1``: bimodal at 0 and 1.

        Raises
        ------
        ValueError
            In the last two cases, where no unique MAP exists.
        """
        return float(dirichlet_mode(np.array([self.a, self.b]), name="a, b")[0])

    def predictive(self) -> float:
        """Posterior predictive probability that the next trial is a success, ``a / (a + b)``."""
        return self.mean

    def log_marginal_likelihood(self) -> float:
        """Log probability of the observed *sequence* under the prior.

        ``log B(a0 + k, b0 + n - k) - log B(a0, b0)`` (Beta-Bernoulli; the
        Beta-binomial probability of ``k`` without the binomial coefficient).
        Summed over a chain of batch updates it equals the value of one batch. Computed as
        the two-category Dirichlet's, in its order of operations, so the two models give the
        same number on the same counts.
        """
        from scipy.special import gammaln

        a0, b0 = self.prior.a, self.prior.b
        with np.errstate(invalid="ignore"):  # inf - inf near the float maximum: the fit says so
            return float(gammaln(a0 + b0) - gammaln(self.a + self.b)
                         + ((gammaln(self.a) - gammaln(a0)) + (gammaln(self.b) - gammaln(b0))))


def bernoulli_beta(*, stats: BernoulliStats, prior: BetaPrior) -> BetaPosterior:
    """Conjugate update of a Beta prior with Bernoulli data.

    Parameters
    ----------
    stats : BernoulliStats
        Successes ``k`` and trials ``n`` (per batch, possibly combined).
    prior : BetaPrior
        ``Beta(a0, b0)``.

    Returns
    -------
    BetaPosterior
        ``Beta(a0 + k, b0 + n - k)``.
    """
    if not isinstance(stats, BernoulliStats):
        raise ValueError(f"stats: expected BernoulliStats, received {type(stats).__name__}")
    if not isinstance(prior, BetaPrior):
        raise ValueError(f"prior: expected BetaPrior, received {type(prior).__name__}")
    return BetaPosterior(
        a=prior.a + stats.k, b=prior.b + (stats.n - stats.k), prior=prior, stats=stats
    )


def bernoulli_beta_predictive(*, posterior: BetaPosterior | BetaPrior, n_trials: int = 1) -> Any:
    """Posterior (or prior) predictive number of successes in ``n_trials`` future trials.

    Parameters
    ----------
    posterior : BetaPosterior or BetaPrior
        The Beta distribution of ``p``.
    n_trials : int, default 1
        Number of future trials.

    Returns
    -------
    scipy.stats frozen distribution
        ``scipy.stats.betabinom(n_trials, a, b)``; with ``n_trials = 1`` it is a
        Bernoulli with success probability ``a / (a + b)``.
    """
    n = _count("n_trials", n_trials)
    if n < 1:
        raise ValueError(f"n_trials: expected at least 1, received {n_trials!r}")
    from scipy import stats as sps  # on first use: costly to import

    return sps.betabinom(n, posterior.a, posterior.b)


# ---------------------------------------------------------------------------
# Dirichlet-categorical
# ---------------------------------------------------------------------------


def _label_tuple(categories: Any) -> tuple:
    try:
        cats = tuple(np.asarray(categories, dtype=object).ravel().tolist())
    except Exception:  # pragma: no cover - defensive
        raise ValueError(
            f"categories: expected a sequence of labels, received {categories!r}"
        ) from None
    if len(cats) < 1:
        raise ValueError("categories: expected at least one category, received none")
    if len(set(cats)) != len(cats):
        seen: set = set()
        dup = next(c for c in cats if c in seen or seen.add(c))
        raise ValueError(f"categories: expected distinct labels, received {dup!r} twice")
    return cats


@dataclass(frozen=True, eq=False)
class CategoricalStats:
    """Sufficient statistics of categorical data: one count per category.

    Batches over one category set combine by ``+``. A stream whose label set is not declared
    starts from no categories (``counts`` of length 0) and grows it with :meth:`add_labels`;
    the fields are an array and a tuple of labels, so the statistics are checkpointed as they
    are (:mod:`bayescheck.inference.scale.streaming`).

    Parameters
    ----------
    counts : array_like of int, shape (N,)
        Counts in the fixed category order (N = 0: no category yet).
    categories : tuple, optional
        The labels, in that order (default ``0 .. N-1``).
    """

    counts: np.ndarray
    categories: tuple = field(default=())

    def __post_init__(self) -> None:
        c = np.asarray(self.counts)
        if c.ndim != 1:
            raise ValueError(f"counts: expected a 1-D array of counts, received shape {c.shape}")
        if c.dtype.kind not in "iuf" or np.any(c < 0) or np.any(c != np.floor(c)):
            raise ValueError(
                f"counts: expected non-negative integer counts, received {c.tolist()!r}"
            )
        cats = _label_tuple(self.categories) if len(self.categories) else tuple(range(c.size))
        if len(cats) != c.size:
            raise ValueError(
                f"categories: expected {c.size} labels (one per count), received {len(cats)}"
            )
        object.__setattr__(self, "counts", _readonly(c.astype(np.int64)))
        object.__setattr__(self, "categories", cats)

    @property
    def n(self) -> int:
        """Total number of observations."""
        return int(self.counts.sum())

    def __add__(self, other: CategoricalStats) -> CategoricalStats:
        if not isinstance(other, CategoricalStats):
            return NotImplemented
        if other.categories != self.categories:
            raise ValueError(
                f"categories: expected the same category order in both batches, received "
                f"{self.categories!r} and {other.categories!r}"
            )
        return CategoricalStats(counts=self.counts + other.counts, categories=self.categories)

    def add_labels(self, labels: Any) -> CategoricalStats:
        """These statistics plus one batch of labels, over a category set that may grow.

        Labels not yet among the categories are appended, in sorted order.

        Parameters
        ----------
        labels : array_like
            One batch of labels (sortable: all strings, or all numbers).

        Returns
        -------
        CategoricalStats
        """
        values, counts = np.unique(np.asarray(labels).ravel(), return_counts=True)
        values = values.tolist()
        known = set(self.categories)
        cats = self.categories + tuple(v for v in values if v not in known)
        total = np.zeros(len(cats), dtype=np.int64)
        total[: self.counts.size] = self.counts
        index = {c: i for i, c in enumerate(cats)}
        np.add.at(total, [index[v] for v in values], counts)
        return CategoricalStats(counts=total, categories=cats)

    def union(self, other: CategoricalStats) -> CategoricalStats:
        """The statistics of both, over the union of their categories.

        ``other``'s categories that this one lacks are appended in ``other``'s order, so
        merging the statistics of consecutive batches in any grouping gives the category order
        of :meth:`add_labels` over the same batches in sequence.
        """
        known = set(self.categories)
        cats = self.categories + tuple(c for c in other.categories if c not in known)
        return CategoricalStats(counts=self.counts_for(cats) + other.counts_for(cats),
                                categories=cats)

    def counts_for(self, categories: Sequence) -> np.ndarray:
        """The counts in the order of ``categories``; a category never counted has 0."""
        known = dict(zip(self.categories, self.counts.tolist(), strict=True))
        return np.array([known.get(c, 0) for c in categories], dtype=np.int64)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, CategoricalStats)
            and self.categories == other.categories
            and np.array_equal(self.counts, other.counts)
        )

    __hash__ = None  # type: ignore[assignment]


def categorical_stats_from_codes(codes: Any, *, n_categories: int) -> np.ndarray:
    """Count integer codes ``0 .. n_categories-1`` (fast path, no labels).

    Parameters
    ----------
    codes : array_like of int
        Category indices.
    n_categories : int
        Number of categories.

    Returns
    -------
    numpy.ndarray of int64, shape (n_categories,)

    Raises
    ------
    ValueError
        If a code is outside ``0 .. n_categories-1``.
    """
    n_cat = _count("n_categories", n_categories)
    c = np.asarray(codes).ravel()
    if c.size and (c.dtype.kind not in "iu"):
        raise ValueError(f"codes: expected integer category codes, received dtype {c.dtype}")
    if c.size:
        bad = (c < 0) | (c >= n_cat)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"codes: expected codes in 0..{n_cat - 1}, received {_plain(c[i])!r} at position "
                f"{i}"
            )
    return np.bincount(c.astype(np.intp), minlength=n_cat).astype(np.int64)


def encode_labels(values: Any, categories: Sequence) -> np.ndarray:
    """Map labels to their index in ``categories``; labels not in it map to -1.

    Numeric and string arrays use a sorted search; other (object) arrays a dict.
    """
    v = np.asarray(values)
    cats = np.asarray(list(categories))
    if v.size == 0:
        return np.zeros(v.shape, dtype=np.intp)
    if (
        v.dtype.kind in "iu"
        and cats.dtype.kind in "iu"
        and np.array_equal(cats, np.arange(cats.size))
    ):
        # codes already: 0 .. N-1 in order
        return np.where((v >= 0) & (v < cats.size), v, -1).astype(np.intp, copy=False)
    numeric = v.dtype.kind in "biuf" and cats.dtype.kind in "biuf"
    strings = v.dtype.kind == "U" and cats.dtype.kind == "U"
    if numeric or strings:
        order = np.argsort(cats, kind="stable")
        sorted_cats = cats[order]
        pos = np.searchsorted(sorted_cats, v)
        pos_c = np.minimum(pos, sorted_cats.size - 1)
        found = sorted_cats[pos_c] == v
        return np.where(found, order[pos_c], -1).astype(np.intp)
    index = {c: i for i, c in enumerate(categories)}
    flat = [index.get(x, -1) for x in v.ravel().tolist()]
    return np.asarray(flat, dtype=np.intp).reshape(v.shape)


def categorical_stats(y: Any, *, categories: Sequence) -> CategoricalStats:
    """Per-batch counts of labelled observations, in the order of ``categories``.

    Parameters
    ----------
    y : array_like
        One batch of labels.
    categories : sequence
        The fixed label set and its order. Categories that do not occur get a
        count of 0 (and keep their prior mass in the posterior).

    Returns
    -------
    CategoricalStats

    Raises
    ------
    ValueError
        If a label is not one of ``categories`` (message: position, label and
        the valid labels).
    """
    cats = _label_tuple(categories)
    a = np.asarray(y).ravel()
    codes = encode_labels(a, cats)
    bad = codes < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"y: expected one of the categories {list(cats)!r}, received {_plain(a[i])!r} at "
            f"position {i}"
        )
    return CategoricalStats(counts=np.bincount(codes, minlength=len(cats)), categories=cats)


@dataclass(frozen=True, eq=False)
class DirichletPrior:
    """Dirichlet(alpha) prior on categorical probabilities.

    Parameters
    ----------
    alpha : array_like, shape (N,)
        Positive concentrations, one per category (``1`` everywhere is the
        uniform prior whose posterior mean is Laplace smoothing).
    categories : tuple, optional
        The labels, in the order of ``alpha`` (default ``0 .. N-1``).
    """

    alpha: np.ndarray
    categories: tuple = field(default=())

    def __post_init__(self) -> None:
        a = np.asarray(self.alpha, dtype=float)
        if a.ndim != 1 or a.size < 2:
            raise ValueError(
                "alpha: expected a 1-D array of at least 2 concentrations, received shape "
                f"{a.shape}"
            )
        if not np.all(np.isfinite(a)) or np.any(a <= 0):
            raise ValueError(
                f"alpha: expected positive finite concentrations, received {a.tolist()!r}"
            )
        cats = _label_tuple(self.categories) if len(self.categories) else tuple(range(a.size))
        if len(cats) != a.size:
            raise ValueError(
                f"categories: expected {a.size} labels (one per alpha), received {len(cats)}"
            )
        object.__setattr__(self, "alpha", _readonly(a))
        object.__setattr__(self, "categories", cats)

    @classmethod
    def symmetric(cls, concentration: float = 1.0, *, categories: Sequence) -> DirichletPrior:
        """Build the prior with the same ``concentration`` for every category."""
        cats = _label_tuple(categories)
        c = _positive_finite("concentration", concentration)
        return cls(alpha=np.full(len(cats), c), categories=cats)

    def dist(self) -> Any:
        """Frozen ``scipy.stats.dirichlet(alpha)``."""
        from scipy import stats as sps

        return sps.dirichlet(self.alpha)


def dirichlet_mode(alpha: Any, *, name: str = "alpha") -> np.ndarray:
    """Mode of Dirichlet(alpha), boundary cases included.

    * every ``alpha_k >= 1`` and not all equal to 1: ``(alpha_k - 1) / sum_j (alpha_j - 1)``
      (categories with ``alpha_k = 1`` get 0);
    * exactly one ``alpha_j >= 1`` and every other ``alpha_k < 1``: the vertex
      ``e_j`` (the density is unbounded there; it is the supremum);
    * otherwise no unique mode: all ``alpha_k = 1`` is uniform; several
      ``alpha_k < 1`` with another ``alpha_k`` make the density unbounded on a
      whole face of the simplex.

    Raises
    ------
    ValueError
        When there is no unique mode.
    """
    a = np.asarray(alpha, dtype=float)
    excess = a - 1.0
    if np.all(excess >= 0):
        total = excess.sum()
        if total <= 0:
            raise ValueError(
                f"{name}: the distribution is uniform (all parameters equal 1), no unique MAP; "
                f"received {a.tolist()!r}"
            )
        return excess / total
    below = excess < 0
    if below.sum() == a.size - 1:
        j = int(np.flatnonzero(~below)[0])
        mode = np.zeros_like(a)
        mode[j] = 1.0
        return mode
    raise ValueError(
        f"{name}: expected parameters with a unique mode (all >= 1 and not all 1, or exactly one "
        ">= 1); "
        f"received {a.tolist()!r}, whose density is unbounded on more than one point"
    )


@dataclass(frozen=True, eq=False)
class DirichletPosterior:
    """Posterior Dirichlet(alpha) of categorical probabilities.

    Attributes
    ----------
    alpha : numpy.ndarray
        Posterior concentrations ``alpha0 + counts``.
    categories : tuple
        Category labels, in the order of ``alpha``.
    prior : DirichletPrior
    stats : CategoricalStats
    """

    alpha: np.ndarray
    categories: tuple
    prior: DirichletPrior
    stats: CategoricalStats

    def dist(self) -> Any:
        """Frozen ``scipy.stats.dirichlet(alpha)``: the exact joint posterior."""
        from scipy import stats as sps

        return sps.dirichlet(self.alpha)

    def marginal(self, k: int | Any) -> Any:
        """Exact marginal of ``pi_k``: ``beta(alpha_k, alpha_0 - alpha_k)`` (a cheap ``Dist``).

        Parameters
        ----------
        k : int or label
            A category index, or a label of ``categories`` when it is not an int.
        """
        i = self._index(k)
        # the others summed, not the total minus alpha_i, which cancels to 0 beside tiny ones
        return Dist("beta", float(self.alpha[i]), float(np.delete(self.alpha, i).sum()))

    def marginals(self) -> list:
        """Every marginal, in category order."""
        return [self.marginal(i) for i in range(self.alpha.size)]

    def _index(self, k: Any) -> int:
        if (
            isinstance(k, (int, np.integer))
            and not isinstance(k, bool)
            and 0 <= k < self.alpha.size
        ):
            return int(k)
        if k in self.categories:
            return self.categories.index(k)
        raise ValueError(
            f"k: expected a category index 0..{self.alpha.size - 1} or one of "
            f"{list(self.categories)!r}, "
            f"received {k!r}"
        )

    def as_prior(self) -> DirichletPrior:
        """Return this posterior as the prior of the next batch."""
        return DirichletPrior(alpha=self.alpha, categories=self.categories)

    @property
    def mean(self) -> np.ndarray:
        """Posterior mean ``alpha / alpha_0``.

        With the prior ``alpha0 = 1`` it is ``(c_k + 1) / (n + N)``: Laplace smoothing.
        """
        return self.alpha / self.alpha.sum()

    @property
    def sd(self) -> np.ndarray:
        """Marginal posterior standard deviations."""
        a0 = self.alpha.sum()
        m = self.alpha / a0
        return np.sqrt(m * (1.0 - m) / (a0 + 1.0))

    def mle(self) -> np.ndarray:
        """Maximum-likelihood estimate ``c_k / n`` of this update's data.

        Raises
        ------
        ValueError
            If ``n = 0``.
        """
        n = self.stats.n
        if n == 0:
            raise ValueError(
                "n: the maximum-likelihood estimate c/n needs n >= 1 observations, received n = 0"
            )
        return self.stats.counts / n

    def map(self) -> np.ndarray:
        """Maximum a posteriori estimate (mode).

        See :func:`dirichlet_mode` for the boundary cases.
        """
        return dirichlet_mode(self.alpha, name="alpha")

    def predictive(self) -> np.ndarray:
        """Posterior predictive probabilities of the next observation, ``alpha / alpha_0``."""
        return self.mean

    def log_marginal_likelihood(self) -> float:
        """Log probability of the observed *sequence* under the prior (Dirichlet-multinomial).

        ``log G(A) - log G(A + n) + sum_k [log G(a_k + c_k) - log G(a_k)]`` with
        ``A = sum_k a_k`` for the prior ``a``; no multinomial coefficient.
        """
        from scipy.special import gammaln

        a = self.prior.alpha
        c = self.stats.counts
        with np.errstate(invalid="ignore"):  # inf - inf near the float maximum: the fit says so
            return float(
                gammaln(a.sum())
                - gammaln(a.sum() + c.sum())
                + np.sum(gammaln(a + c) - gammaln(a))
            )


def categorical_dirichlet(*, stats: CategoricalStats, prior: DirichletPrior) -> DirichletPosterior:
    """Conjugate update of a Dirichlet prior with categorical counts.

    Parameters
    ----------
    stats : CategoricalStats
        Counts per category (from :func:`categorical_stats`, possibly combined).
    prior : DirichletPrior
        ``Dirichlet(alpha0)`` over the same categories, in the same order.

    Returns
    -------
    DirichletPosterior
        ``Dirichlet(alpha0 + counts)``.
    """
    if not isinstance(stats, CategoricalStats):
        raise ValueError(f"stats: expected CategoricalStats, received {type(stats).__name__}")
    if not isinstance(prior, DirichletPrior):
        raise ValueError(f"prior: expected DirichletPrior, received {type(prior).__name__}")
    if stats.counts.size != prior.alpha.size:
        raise ValueError(
            f"stats: expected {prior.alpha.size} counts (one per prior category), received "
            f"{stats.counts.size}"
        )
    if stats.categories != prior.categories:
        raise ValueError(
            f"stats: expected the prior's categories {list(prior.categories)!r}, "
            f"received {list(stats.categories)!r}"
        )
    return DirichletPosterior(
        alpha=_readonly(prior.alpha + stats.counts),
        categories=prior.categories,
        prior=prior,
        stats=stats,
    )


def categorical_dirichlet_predictive(
    *, posterior: DirichletPosterior | DirichletPrior, n_draws: int = 1
) -> Any:
    """Posterior (or prior) predictive counts of ``n_draws`` future observations.

    Returns
    -------
    scipy.stats frozen distribution
        ``scipy.stats.dirichlet_multinomial(alpha, n_draws)``; with ``n_draws = 1``
        the probability of category ``k`` is ``alpha_k / alpha_0``.
    """
    n = _count("n_draws", n_draws)
    if n < 1:
        raise ValueError(f"n_draws: expected at least 1, received {n_draws!r}")
    from scipy import stats as sps  # on first use: costly to import

    return sps.dirichlet_multinomial(np.asarray(posterior.alpha), n)
