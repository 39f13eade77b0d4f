"""EM for the CPTs of a discrete Bayesian network when some cells of the data are missing.

The data are the complete rows (their counts,
:class:`~bayescheck.inference.engines.networks.NetworkCounts`)
and the incomplete rows, kept as their distinct patterns with multiplicities
(:class:`MissingPatterns`, code ``-1`` for a missing cell); both merge by addition, so a
stream of batches is absorbed once and EM then runs on the merged statistics.

Each iteration, for CPTs ``theta``:

- E step: for each pattern, the posterior of its missing cells given its observed ones,
  ``P(x_M | x_O, theta)``, by exact enumeration of the missing cells' configurations (the
  product of every node's CPT entry, normalised over the configurations); the expected count
  of every CPT cell is the sum over patterns of multiplicity x posterior weight, plus the
  complete rows' counts.
- M step: ``theta_v[j] = (E[n_vj] + alpha_vj) / (E[n_vj.] + sum_k alpha_vjk)``.

This is EM for the maximum of the objective ::

    log P(observed cells | theta) + sum_vjk alpha_vjk log theta_vjk

(the log posterior density under independent Dirichlet(``alpha + 1``) rows, up to a constant):
it rises at every iteration (Dempster, Laird & Rubin 1977). With no missing cell the first M
step gives ``(n + alpha) / (n_row + sum alpha)``, the exact Dirichlet(``alpha``) posterior mean,
and EM stops there, so the complete-data fit is the special case. With missing cells the
result is a point estimate, not a posterior: the posterior of the CPTs is then a mixture over
the completions and its mean is not available in closed form.

Numpy and scipy only; errors are :class:`ValueError`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .networks import NetworkCounts, NetworkSchema

__all__ = ["EMResult", "MissingPatterns", "log_objective", "network_em"]

#: Most configurations of the missing cells of one row that the E step enumerates.
MAX_CONFIGURATIONS = 1 << 16


@dataclass(frozen=True)
class MissingPatterns:
    """Distinct incomplete rows and how often each occurs.

    Attributes
    ----------
    rows : numpy.ndarray, shape (m, nodes)
        State codes, ``-1`` for a missing cell; every row has at least one.
    counts : numpy.ndarray, shape (m,)
        Multiplicities.
    """

    rows: np.ndarray
    counts: np.ndarray

    @classmethod
    def empty(cls, nodes: int) -> MissingPatterns:
        """No incomplete row."""
        return cls(np.zeros((0, nodes), np.int64), np.zeros(0, np.int64))

    @classmethod
    def from_codes(cls, codes: np.ndarray) -> MissingPatterns:
        """The incomplete rows of ``codes`` (rows, nodes), grouped."""
        codes = np.asarray(codes, np.int64)
        incomplete = codes[(codes < 0).any(axis=1)]
        return cls._grouped(incomplete, np.ones(len(incomplete), np.int64), codes.shape[1])

    @classmethod
    def _grouped(cls, rows: np.ndarray, counts: np.ndarray, nodes: int) -> MissingPatterns:
        if len(rows) == 0:
            return cls.empty(nodes)
        unique, inverse = np.unique(rows, axis=0, return_inverse=True)
        return cls(unique.astype(np.int64),
                   np.bincount(inverse.ravel(), weights=counts, minlength=len(unique)
                               ).astype(np.int64))

    def __add__(self, other: MissingPatterns) -> MissingPatterns:
        if other.rows.shape[1] != self.rows.shape[1]:
            raise ValueError("patterns of different networks cannot be added")
        return self._grouped(np.concatenate([self.rows, other.rows]),
                             np.concatenate([self.counts, other.counts]), self.rows.shape[1])

    def recoded(self, maps: Sequence[np.ndarray]) -> MissingPatterns:
        """The same rows with node ``v``'s code ``k`` replaced by ``maps[v][k]``, regrouped.

        A missing cell stays ``-1``.
        """
        rows = self.rows.copy()
        for v, m in enumerate(maps):
            col = rows[:, v]
            seen = col >= 0
            col[seen] = np.asarray(m, np.int64)[col[seen]]
        return self._grouped(rows, self.counts, self.rows.shape[1])

    @property
    def n(self) -> int:
        """Number of incomplete rows."""
        return int(self.counts.sum())

    @property
    def cells(self) -> int:
        """Number of missing cells."""
        return int(((self.rows < 0).sum(axis=1) * self.counts).sum())


@dataclass(frozen=True)
class EMResult:
    """The EM estimate of every CPT.

    Attributes
    ----------
    cpts : tuple of numpy.ndarray
        ``theta_v`` (q_v, r_v), rows summing to 1.
    expected_counts : tuple of numpy.ndarray
        ``E[n_v | observed, cpts]`` (complete rows included).
    log_likelihood : float
        ``log P(observed cells | cpts)``.
    objective : tuple of float
        The objective (log likelihood + ``sum alpha log theta``) at each iterate, the last at
        ``cpts``; non-decreasing.
    converged : bool
        The last M step moved no entry by more than ``tol``; False when ``max_iter`` stopped
        EM.
    """

    cpts: tuple[np.ndarray, ...]
    expected_counts: tuple[np.ndarray, ...]
    log_likelihood: float
    objective: tuple[float, ...]
    converged: bool

    @property
    def iterations(self) -> int:
        """M steps taken."""
        return len(self.objective) - 1


class _Group:
    """Patterns sharing one set of missing nodes, completed in every configuration."""

    def __init__(self, schema: NetworkSchema, rows: np.ndarray, counts: np.ndarray,
                 missing: tuple[int, ...]):
        card = schema.cardinality
        size = math.prod(card[v] for v in missing)
        if size > MAX_CONFIGURATIONS:
            names = ", ".join(schema.nodes[v] for v in missing)
            raise ValueError(f"a row misses the nodes {names} together: {size} configurations "
                             f"to enumerate, more than {MAX_CONFIGURATIONS}")
        configs = np.array(list(itertools.product(*(range(card[v]) for v in missing))),
                           np.int64).reshape(size, len(missing))
        completed = np.repeat(rows, size, axis=0)
        completed[:, list(missing)] = np.tile(configs, (len(rows), 1))
        self.shape = (len(rows), size)
        self.counts = counts.astype(np.float64)
        self.cells = [schema.config_index(v, completed) * r + completed[:, v]
                      for v, r in enumerate(card)]


def _groups(schema: NetworkSchema, patterns: MissingPatterns) -> list[_Group]:
    masks = patterns.rows < 0
    keys, inverse = np.unique(masks, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    return [_Group(schema, patterns.rows[inverse == g], patterns.counts[inverse == g],
                   tuple(int(v) for v in np.flatnonzero(key)))
            for g, key in enumerate(keys)]


def _e_step(theta, groups, complete: NetworkCounts):
    from scipy.special import logsumexp

    logs = [np.log(t).ravel() for t in theta]
    expected = [c.astype(np.float64).ravel() for c in complete.tables]
    loglik = float(sum(np.sum(c.ravel() * lt) for c, lt in zip(complete.tables, logs,
                                                                  strict=True)))
    for g in groups:
        lp = sum(lt[cells] for lt, cells in zip(logs, g.cells, strict=True)).reshape(g.shape)
        norm = logsumexp(lp, axis=1)
        loglik += float(g.counts @ norm)
        w = (np.exp(lp - norm[:, None]) * g.counts[:, None]).ravel()
        for v, cells in enumerate(g.cells):
            expected[v] += np.bincount(cells, weights=w, minlength=expected[v].size)
    return loglik, [e.reshape(t.shape) for e, t in zip(expected, theta, strict=True)]


def _m_step(expected, prior):
    return tuple((e + a) / (e + a).sum(axis=1, keepdims=True)
                 for e, a in zip(expected, prior, strict=True))


def network_em(complete: NetworkCounts, patterns: MissingPatterns, prior: Sequence[np.ndarray],
               *, max_iter: int = 1000, tol: float = 1e-9) -> EMResult:
    """EM estimate of the CPTs from complete-row counts and incomplete-row patterns.

    Starts from the complete rows' posterior means; stops when an M step moves no CPT entry
    by more than ``tol``, or after ``max_iter`` M steps. (A rule on the objective's rise
    stops too early where EM is slow: the rise is second order in the step.)

    Parameters
    ----------
    complete : NetworkCounts
        Counts of the complete rows.
    patterns : MissingPatterns
        The incomplete rows.
    prior : sequence of numpy.ndarray
        Dirichlet concentrations ``alpha_v`` (q_v, r_v), all positive.

    Raises
    ------
    ValueError
        A prior of the wrong shape or not positive, a pattern of the wrong width or with a
        code out of range, or a row missing so many nodes that enumerating them is too large.
    """
    schema = complete.schema
    prior = tuple(np.asarray(a, np.float64) for a in prior)
    for v, (a, c) in enumerate(zip(prior, complete.tables, strict=True)):
        if a.shape != c.shape or not np.all(a > 0):
            raise ValueError(f"prior of {schema.nodes[v]!r}: expected positive values of "
                             f"shape {c.shape}")
    rows = np.asarray(patterns.rows, np.int64)
    if rows.ndim != 2 or rows.shape[1] != len(schema.nodes):
        raise ValueError(f"patterns: expected shape (m, {len(schema.nodes)}), received "
                         f"{rows.shape}")
    card = np.array(schema.cardinality)
    if (rows >= card).any() or (rows < -1).any():
        raise ValueError("patterns: a code outside -1..r_v - 1")
    if max_iter < 1:
        raise ValueError(f"max_iter: expected at least 1, received {max_iter}")
    groups = _groups(schema, patterns)

    def objective(theta, loglik):
        return loglik + float(sum(np.sum(a * np.log(t)) for a, t in zip(prior, theta,
                                                                          strict=True)))

    theta = _m_step([c.astype(np.float64) for c in complete.tables], prior)
    loglik, expected = _e_step(theta, groups, complete)
    trajectory = [objective(theta, loglik)]
    converged = False
    for _ in range(max_iter):
        new = _m_step(expected, prior)
        change = max(float(np.max(np.abs(a - b))) for a, b in zip(new, theta, strict=True))
        theta = new
        loglik, expected = _e_step(theta, groups, complete)
        trajectory.append(objective(theta, loglik))
        if change <= tol:
            converged = True
            break
    return EMResult(theta, tuple(expected), loglik, tuple(trajectory), converged)


def log_objective(cpts: Sequence[np.ndarray], complete: NetworkCounts, patterns: MissingPatterns,
                  prior: Sequence[np.ndarray], *, chunk: int = 256) -> np.ndarray:
    """EM's objective at many CPT sets: ``log P(observed cells | theta) + sum alpha log theta``.

    Up to a constant this is the log posterior density under independent Dirichlet(``alpha``)
    rows in additive log-ratio coordinates (``y_k = log theta_k / theta_r``, whose Jacobian
    is ``prod_k theta_k``), the coordinates a sampler of the simplex moves in; EM's estimate
    is its maximum.

    Parameters
    ----------
    cpts : sequence of numpy.ndarray
        Per node, ``(S, q_v, r_v)``: S sets of CPTs (posterior draws), or ``(q_v, r_v)`` for
        one.
    complete, patterns, prior
        As for :func:`network_em`.
    chunk : int
        CPT sets evaluated together (memory: chunk x completed rows).

    Returns
    -------
    numpy.ndarray, shape (S,)
        (A 0-d array for one set of CPTs.)
    """
    from scipy.special import logsumexp

    schema = complete.schema
    single = np.ndim(cpts[0]) == 2
    logs = [np.log(np.asarray(t, np.float64).reshape(-1, *np.shape(t)[-2:])).reshape(
        -1, np.shape(t)[-2] * np.shape(t)[-1]) for t in cpts]
    S = logs[0].shape[0]
    out = np.zeros(S)
    for lt, c, a in zip(logs, complete.tables, prior, strict=True):
        out += lt @ (c.ravel() + np.asarray(a, np.float64).ravel())
    for g in _groups(schema, patterns):
        for start in range(0, S, chunk):
            part = slice(start, start + chunk)
            lp = sum(lt[part][:, cells] for lt, cells in zip(logs, g.cells, strict=True))
            lp = lp.reshape(-1, *g.shape)
            out[part] += logsumexp(lp, axis=2) @ g.counts
    return out[0] if single else out
