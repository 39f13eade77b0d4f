"""One-dependence estimators: SPODE, AODE and TAN from mergeable pair counts.

Every feature depends on the class and on at most one other feature. All three need only the
counts of (class, x_i, x_j) for every pair of features, which merge by addition
(:class:`PairCounts`), plus the class and (class, x_i) counts.

SPODE (super-parent one-dependence estimator), super-parent ``s``::

    P(c, x) = P(c) P(x_s | c) prod_{j != s} P(x_j | c, x_s)

TAN (tree-augmented naive Bayes; Friedman, Geiger & Goldszmidt 1997): every feature's extra
parent comes from the maximum-weight spanning tree of the conditional mutual information
``I(x_i; x_j | c)`` (plug-in frequencies), rooted at a chosen feature::

    P(c, x) = P(c) prod_j P(x_j | c, x_pa(j))

Both are Bayesian networks with independent Dirichlet(``alpha``) CPT rows; the factors are the
rows' posterior means (``(n + alpha) / (n_row + r alpha)``), so the product is the exact
posterior mean of ``P(c, x | theta)``.

AODE (averaged one-dependence estimators; Webb, Boughton & Wang 2005) averages the SPODEs
whose super-parent value ``x_i`` was seen in at least ``m_prime`` rows::

    P(c, x) ∝ sum_{i: n(x_i) >= m'} P(c, x_i) prod_{j != i} P(x_j | c, x_i)

with ``P(c, x_i)`` the posterior mean of a Dirichlet(``alpha``) over the K N_i joint cells,
``(n(c, x_i) + alpha) / (n + K N_i alpha)`` (the source notes' denominator ``|D| + N_i`` does not
make the table sum to 1). When no super-parent qualifies it falls back to naive Bayes.

Numpy only; errors are :class:`ValueError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Rows per block of AODE's gathers (bounds the (K, rows, d - 1) temporary).
_BLOCK = 16384

__all__ = [
    "PairCounts",
    "aode_log_scores",
    "conditional_mutual_information",
    "maximum_spanning_tree",
    "naive_bayes_log_scores",
    "one_dependence_log_scores",
    "pair_counts",
    "spode_parents",
]


@dataclass(frozen=True)
class PairCounts:
    """Counts of the class, (class, x_i) and (class, x_i, x_j) for i < j.

    Attributes
    ----------
    cardinality : tuple of int
        ``(K, N_1, ..., N_d)``: classes, then each feature's number of categories.
    class_counts : numpy.ndarray, shape (K,)
    singles : tuple of numpy.ndarray
        ``singles[i]`` shape ``(K, N_i)``.
    pairs : dict
        ``pairs[i, j]`` (i < j) shape ``(K, N_i, N_j)``.
    """

    cardinality: tuple[int, ...]
    class_counts: np.ndarray
    singles: tuple[np.ndarray, ...]
    pairs: dict

    @property
    def n(self) -> int:
        """Rows counted."""
        return int(self.class_counts.sum())

    @property
    def d(self) -> int:
        """Number of features."""
        return len(self.cardinality) - 1

    def __add__(self, other: PairCounts) -> PairCounts:
        if other.cardinality != self.cardinality:
            raise ValueError("pair counts of different schemas cannot be added")
        return PairCounts(self.cardinality, self.class_counts + other.class_counts,
                          tuple(a + b for a, b in zip(self.singles, other.singles, strict=True)),
                          {k: v + other.pairs[k] for k, v in self.pairs.items()})

    def pair(self, i: int, j: int) -> np.ndarray:
        """Counts of (class, x_i, x_j), shape ``(K, N_i, N_j)``, for any i != j."""
        return self.pairs[i, j] if i < j else self.pairs[j, i].transpose(0, 2, 1)

    def flat(self) -> np.ndarray:
        """Every count in one vector (a checkpointable state)."""
        parts = [self.class_counts, *(s.ravel() for s in self.singles),
                 *(self.pairs[k].ravel() for k in sorted(self.pairs))]
        return np.concatenate(parts).astype(np.int64)

    @classmethod
    def from_flat(cls, cardinality: Sequence[int], flat: np.ndarray) -> PairCounts:
        """Inverse of :meth:`flat`."""
        empty = cls.empty(cardinality)
        flat = np.asarray(flat, np.int64)
        if flat.shape != empty.flat().shape:
            raise ValueError(f"expected {empty.flat().size} counts, received {flat.size}")
        K = cardinality[0]
        pos = K
        singles = []
        for s in empty.singles:
            singles.append(flat[pos:pos + s.size].reshape(s.shape))
            pos += s.size
        pairs = {}
        for k in sorted(empty.pairs):
            shape = empty.pairs[k].shape
            size = int(np.prod(shape))
            pairs[k] = flat[pos:pos + size].reshape(shape)
            pos += size
        return cls(tuple(cardinality), flat[:K].copy(), tuple(singles), pairs)

    def grown(self, cardinality: Sequence[int]) -> PairCounts:
        """The same counts in a schema with at least as many categories of each column.

        The new categories are appended after the old ones, with count 0.
        """
        cardinality = tuple(int(c) for c in cardinality)
        if len(cardinality) != len(self.cardinality) or any(
                new < old for new, old in zip(cardinality, self.cardinality, strict=True)):
            raise ValueError(f"cannot shrink or reshape counts {self.cardinality} to "
                             f"{cardinality}")
        K, *N = cardinality

        def pad(a: np.ndarray, shape) -> np.ndarray:
            return np.pad(a, [(0, s - c) for s, c in zip(shape, a.shape, strict=True)])

        return PairCounts(cardinality, pad(self.class_counts, (K,)),
                          tuple(pad(t, (K, N[i])) for i, t in enumerate(self.singles)),
                          {(i, j): pad(t, (K, N[i], N[j])) for (i, j), t in self.pairs.items()})

    @classmethod
    def empty(cls, cardinality: Sequence[int]) -> PairCounts:
        """No rows."""
        K, *N = cardinality
        d = len(N)
        return cls(tuple(cardinality), np.zeros(K, np.int64),
                   tuple(np.zeros((K, n), np.int64) for n in N),
                   {(i, j): np.zeros((K, N[i], N[j]), np.int64)
                    for i in range(d) for j in range(i + 1, d)})


def pair_counts(y: np.ndarray, X: np.ndarray, cardinality: Sequence[int]) -> PairCounts:
    """Count a batch: class codes ``y`` (n,), feature codes ``X`` (n, d)."""
    y = np.asarray(y, np.int64)
    X = np.asarray(X, np.int64)
    K, *N = cardinality
    if X.ndim != 2 or X.shape[1] != len(N) or y.shape != (X.shape[0],):
        raise ValueError(f"expected y (n,) and X (n, {len(N)}), received {y.shape}, {X.shape}")
    for j, r in enumerate([K, *N]):
        col = y if j == 0 else X[:, j - 1]
        if col.size and (col.min() < 0 or col.max() >= r):
            raise ValueError(f"column {j}: codes must be in 0..{r - 1}")
    cls = np.bincount(y, minlength=K)
    singles = tuple(np.bincount(y * n + X[:, i], minlength=K * n).reshape(K, n)
                    for i, n in enumerate(N))
    pairs = {}
    for i in range(len(N)):
        for j in range(i + 1, len(N)):
            flat = (y * N[i] + X[:, i]) * N[j] + X[:, j]
            pairs[i, j] = np.bincount(flat, minlength=K * N[i] * N[j]).reshape(K, N[i], N[j])
    return PairCounts(tuple(cardinality), cls, singles, pairs)


def conditional_mutual_information(counts: PairCounts) -> np.ndarray:
    """``I(x_i; x_j | c)`` from plug-in frequencies, a symmetric (d, d) matrix (0 diagonal)."""
    d, n = counts.d, counts.n
    out = np.zeros((d, d))
    if n == 0:
        return out
    for (i, j), t in counts.pairs.items():
        p = t / n
        pc = counts.class_counts[:, None, None] / n
        pi = counts.singles[i][:, :, None] / n
        pj = counts.singles[j][:, None, :] / n
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p > 0, p * np.log(p * pc / (pi * pj)), 0.0)
        out[i, j] = out[j, i] = float(terms.sum())
    return out


def maximum_spanning_tree(weights: np.ndarray, root: int = 0) -> tuple[int, ...]:
    """Parent of each node in the maximum-weight spanning tree (Prim), -1 for ``root``.

    Ties go to the lowest (tree node, new node) indices.
    """
    w = np.asarray(weights, np.float64)
    d = w.shape[0]
    parent = [-1] * d
    in_tree = [False] * d
    in_tree[root] = True
    best = np.full(d, -np.inf)
    via = np.full(d, -1)
    for j in range(d):
        if j != root:
            best[j], via[j] = w[root, j], root
    for _ in range(d - 1):
        cand = [j for j in range(d) if not in_tree[j]]
        j = max(cand, key=lambda k: (best[k], -via[k], -k))
        in_tree[j] = True
        parent[j] = int(via[j])
        for k in range(d):
            if not in_tree[k] and w[j, k] > best[k]:
                best[k], via[k] = w[j, k], j
    return tuple(parent)


def spode_parents(d: int, super_parent: int) -> tuple[int, ...]:
    """The extra parent of each feature in the SPODE with ``super_parent`` (-1 for it)."""
    if not 0 <= super_parent < d:
        raise ValueError(f"super_parent: expected 0..{d - 1}, received {super_parent}")
    return tuple(-1 if j == super_parent else super_parent for j in range(d))


def one_dependence_log_scores(counts: PairCounts, parents: Sequence[int], X: np.ndarray,
                              alpha: float) -> np.ndarray:
    """``log E[P(c, x | theta)]`` for each row of ``X`` (m, d) and class: shape (m, K).

    ``parents[j]`` is feature j's extra parent (-1: the class only). A category code of -1
    (never seen in training) leaves that feature out.
    """
    X = np.asfortranarray(X, np.int64)  # the columns contiguous: each is read apart
    K, *N = counts.cardinality
    n = counts.n
    total = np.zeros((K, X.shape[0]))
    for j, p in enumerate(parents):
        x = X[:, j]
        if p < 0:
            table = np.log((counts.singles[j] + alpha)
                           / (counts.class_counts[:, None] + N[j] * alpha))  # (K, N_j)
            ok, idx = x >= 0, x
        else:
            t = counts.pair(p, j)  # (K, N_p, N_j)
            table = np.log((t + alpha) / (counts.singles[p][:, :, None] + N[j] * alpha)
                           ).reshape(K, -1)
            xp = X[:, p]
            ok, idx = (x >= 0) & (xp >= 0), xp * N[j] + x
        # a last column of zeros takes the rows whose factor is left out
        table = np.concatenate([table, np.zeros((K, 1))], axis=1)
        total += np.take(table, np.where(ok, idx, table.shape[1] - 1), axis=1)
    return np.log((counts.class_counts + alpha) / (n + K * alpha)) + total.T


def naive_bayes_log_scores(counts: PairCounts, X: np.ndarray, alpha: float) -> np.ndarray:
    """Naive Bayes ``log E[P(c, x | theta)]`` (every feature's parent is the class only)."""
    return one_dependence_log_scores(counts, [-1] * counts.d, X, alpha)


def aode_log_scores(counts: PairCounts, X: np.ndarray, alpha: float,
                    m_prime: int) -> tuple[np.ndarray, np.ndarray]:
    """AODE ``log`` of the averaged SPODE scores, and which super-parents qualified.

    Returns
    -------
    scores : numpy.ndarray, shape (m, K)
        ``log mean_i P_i(c, x)`` over the qualifying super-parents of each row (naive Bayes
        where none qualifies).
    used : numpy.ndarray of bool, shape (m, d)
        ``used[r, i]``: super-parent i qualified for row r.
    """
    X = np.asarray(X, np.int64)
    K, *N = counts.cardinality
    n, d = counts.n, counts.d
    m = X.shape[0]
    logs = np.full((m, d, K), -np.inf)
    used = np.zeros((m, d), bool)
    cards = np.asarray(N, np.int64)
    seen = X >= 0
    unseen = not seen.all()
    for i in range(d):
        xi = X[:, i]
        seen_i = xi >= 0
        support = np.zeros(m, np.int64)
        support[seen_i] = counts.singles[i].sum(0)[xi[seen_i]]
        used[:, i] = seen_i & (support >= m_prime)
        rows = np.flatnonzero(used[:, i])
        if rows.size == 0:
            continue
        log_joint = np.log((counts.singles[i] + alpha) / (n + K * N[i] * alpha))  # (K, N_i)
        # Every P(x_j | c, x_i) table of this SPODE, flattened side by side (zeros in the
        # place of j = i), plus a column of zeros for an unseen x_j (left out): one gather
        # per block of rows sums every factor.
        tables = [np.zeros((K, N[i] * N[i])) if j == i else
                  np.log((counts.pair(i, j) + alpha)
                         / (counts.singles[i][:, :, None] + N[j] * alpha)).reshape(K, -1)
                  for j in range(d)]
        offsets = np.cumsum([0] + [t.shape[1] for t in tables])
        flat = np.concatenate([*tables, np.zeros((K, 1))], axis=1)
        everyone = rows.size == m
        for start in range(0, rows.size, _BLOCK):
            block = slice(start, start + _BLOCK) if everyone else rows[start:start + _BLOCK]
            Xb = X[block]
            xi_b = Xb[:, i]
            idx = offsets[:-1] + xi_b[:, None] * cards + Xb  # (b, d)
            if unseen:
                idx = np.where(seen[block], idx, offsets[-1])
            # np.take: ~10x faster than the equivalent flat[:, idx] (measured here)
            logs[block, i] = (np.take(log_joint, xi_b, axis=1)
                              + np.take(flat, idx, axis=1).sum(axis=2)).T
    out = np.empty((m, K))
    any_used = used.any(axis=1)
    if any_used.any():
        lg = logs[any_used]
        top = lg.max(axis=1, keepdims=True)
        out[any_used] = (top[:, 0] + np.log(np.exp(lg - top).sum(axis=1))
                         - np.log(used[any_used].sum(axis=1))[:, None])
    if (~any_used).any():
        out[~any_used] = naive_bayes_log_scores(counts, X[~any_used], alpha)
    return out, used
