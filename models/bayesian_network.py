"""Discrete Bayesian networks: a DAG over the data's columns, one CPT per node.

The Bayesian model of the NUTS cross-check (complete data)::

    theta_v[j] ~ Dirichlet(alpha_v[j])          one row per configuration j of pa(v)
    x_nv ~ Categorical(theta_v[pa_n(v)])        every node of every row, given its parents

with ``alpha_v[j, k] = concentration`` (1 = Laplace), or the BDeu prior
``equivalent_sample_size / (q_v r_v)``. The rows are independent a posteriori:
``theta_v[j] | data ~ Dirichlet(alpha_v[j] + counts_v[j])``, so every CPT entry has an exact
Beta marginal.

The log likelihood of the rows is ``sum_v sum_j sum_k counts_v[j, k] log theta_v[j, k]``
(``counts_v[j, k]``: the rows with node v in state k and its parents in configuration j), so
``check`` declares it through the counts, as one potential (:data:`COMPLETE_DECLARATION`):
the same log density, at a gradient cost of the CPT entries used instead of the rows x
nodes. The row-by-row declaration (observed ``x_<node>``) is the one simulations are drawn
from (:meth:`BayesianNetwork.prior_declaration`). Both declare each CPT row's Dirichlet by
stick-breaking (:func:`bayescheck.models.counts.dirichlet_tables`; ``cpt_<node>`` is then a
deterministic of the free ``stick_fractions``); with missing cells it is PyMC's
``pm.Dirichlet``.

A query ``P(target | evidence)`` for a new case is ``E[P(t, e | theta)] / E[P(e | theta)]``.
``P(t, e | theta)`` is a sum of products holding one CPT entry per node, never two entries of
the same Dirichlet row, so its posterior mean is that sum at the posterior-mean CPTs (and so
is ``P(e | theta)``); their ratio's posterior mean is not, so the declaration exposes the two
sums as deterministics (``joint_<query>``, ``evidence_<query>``), computed by enumerating
the hidden ancestors (independently of the engine's variable elimination).

Node states are read as strings (``1`` in a CSV and ``1`` in a TOML evidence value are the
same state) and sorted, unless the spec's ``[states]`` table declares a node's states (then
in the declared order, every one of them in the CPTs, whether the data hold it or not).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from bayescheck.data.batch import Batch
from bayescheck.data.labels import batch_rows, category_codes, category_codes_as
from bayescheck.data.sources import DataSource

from . import validation
from .counts import COUNTS_DATA, counts_potential, dirichlet_tables, table_counts, used_cells
from .errors import BayescheckError, DataError, SpecError
from .interface import Calibratable, DeclaresSimulations, Model
from .pymc_names import dim, variable
from .spec import SamplingConfig, Section, Spec
from .states import not_declared, read_states

if TYPE_CHECKING:  # pandas is imported only where a frame is needed (fit reads with pyarrow)
    import pandas as pd

__all__ = ["SPEC_READERS", "BayesianNetwork", "Independence", "NetworkProblem", "NetworkQuery",
           "COMPLETE_DECLARATION", "SummedRows", "TooManyConfigurations",
           "bayesian_network_spec", "summed_rows",
           "MAX_COMPLETED", "MAX_ENUMERATED", "MAX_SUMMED", "SUMMED_DECLARATION"]

#: Largest number of hidden configurations a query's declaration enumerates; a query with
#: more is answered by ``fit`` but not cross-checked.
MAX_ENUMERATED = 4096

#: With missing cells, the declaration sums each row's hidden cells out by enumerating their
#: joint configurations: at most this many per pattern of missing nodes (``check`` refuses
#: more, exit 2, naming the nodes; EM's E step enumerates up to 65536).
MAX_SUMMED = 4096

#: And at most this many completed rows (distinct incomplete rows x their configurations) in
#: all: the size of the arrays the log density gathers from at every leapfrog step.
MAX_COMPLETED = 1 << 18

#: The declaration used with complete data (said in ``check``'s summary and report).
COMPLETE_DECLARATION = (
    "complete data, through the counts: theta_v[j] ~ Dirichlet(alpha_v[j]); a Potential "
    "holds sum over nodes v, parent configurations j and states k of counts_v[j, k] log "
    "theta_v[j, k], counts_v[j, k] the rows with v in state k and its parents in "
    "configuration j: the log likelihood of x_<node> ~ Categorical(theta_v[parents' "
    "values]) for every row, summed")

#: The declaration used when cells are missing (said in ``check``'s summary and report).
SUMMED_DECLARATION = (
    "missing cells summed out: theta_v[j] ~ Dirichlet(alpha_v[j]); a Potential holds "
    "sum over rows of log P(observed cells | theta), each row's hidden cells summed out "
    "exactly (logsumexp over the joint configurations of its missing nodes that are "
    "ancestors of an observed node; the other missing nodes sum to 1), rows grouped by "
    "their pattern of missing nodes and identical rows counted once with their multiplicity")

class NetworkProblem(ValueError):
    """An inconsistent network; ``key`` is the spec key concerned, ``message`` what is wrong."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


@dataclass(frozen=True)
class NetworkQuery:
    """``P(target | evidence)``: a name, the target node, evidence as (node, state) pairs."""

    name: str
    target: str
    evidence: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Independence:
    """The question "is ``x`` independent of ``y`` given ``given``?" (sets of nodes)."""

    name: str
    x: tuple[str, ...]
    y: tuple[str, ...]
    given: tuple[str, ...] = ()


def _cycle(nodes: tuple[str, ...], parents: tuple[tuple[int, ...], ...]) -> list[str] | None:
    children = [[] for _ in nodes]
    for v, pa in enumerate(parents):
        for p in pa:
            children[p].append(v)
    state = [0] * len(nodes)

    def visit(v, path):
        state[v] = 1
        path.append(v)
        for c in children[v]:
            if state[c] == 1:
                return [nodes[i] for i in path[path.index(c):]] + [nodes[c]]
            if state[c] == 0:
                found = visit(c, path)
                if found:
                    return found
        state[v] = 2
        path.pop()
        return None

    for v in range(len(nodes)):
        if state[v] == 0:
            found = visit(v, [])
            if found:
                return found
    return None


class TooManyConfigurations(ValueError):
    """A pattern of missing nodes with too many joint configurations to sum out.

    Attributes
    ----------
    nodes : tuple of int
        The missing nodes summed out together.
    size : int
        Their number of joint configurations (or, for ``what == "completed"``, the completed
        rows in all).
    row : int
        0-based index (in the data) of the first row with that pattern.
    what : str
        ``"pattern"`` (:data:`MAX_SUMMED` exceeded) or ``"completed"`` (:data:`MAX_COMPLETED`).
    """

    def __init__(self, nodes: tuple[int, ...], size: int, row: int, what: str = "pattern"):
        super().__init__(f"{what}: {size} configurations of nodes {nodes}")
        self.nodes, self.size, self.row, self.what = nodes, size, row, what


@dataclass(frozen=True)
class SummedRows:
    """The data of the summed-out declaration, as indices into the concatenated log-CPTs.

    ``log theta`` of every node, flattened row-major (``(q_v, r_v)``) and concatenated in node
    order, then a 0 (log 1, the padding), is one vector ``L``; an index
    ``offset_v + j r_v + k`` picks ``log theta_v[j, k]``.

    Attributes
    ----------
    complete : numpy.ndarray, shape (cells,)
        The CPT cells used by the complete rows, each once.
    complete_counts : numpy.ndarray, shape (cells,)
        How often each is used: the log likelihood of the complete rows is
        ``complete_counts @ L[complete]``.
    groups : list of (cells, counts)
        One per number S of configurations summed over: ``cells`` (m, S, nodes) indices, for
        the m distinct incomplete rows whose summed nodes have S joint configurations (of
        any pattern), their S completions and the nodes whose factors remain (the ancestors
        of the row's observed nodes), padded with the index of the final 0; ``counts`` (m,)
        multiplicities. A row's log likelihood is ``logsumexp_s sum_t L[cells[i, s, t]]``.
        (Grouped by S rather than by pattern, so the log density has a few terms, not one
        per pattern: the compiled graph grows with the terms.)
    summed : list of tuple of int
        Per pattern of missing nodes, the missing nodes summed out.
    complete_rows : numpy.ndarray, shape (mc, nodes)
        The distinct complete rows (codes) and ...
    complete_index : numpy.ndarray, shape (mc, nodes)
        ... the positions in ``complete`` of their cells.
    group_rows : list of numpy.ndarray
        Per group, its distinct incomplete rows (codes, -1 missing), in the order of its
        ``cells``. With these three, :meth:`recount` gives the counts of other data whose
        rows are among these.
    """

    complete: np.ndarray
    complete_counts: np.ndarray
    groups: list[tuple[np.ndarray, np.ndarray]]
    summed: list[tuple[int, ...]]
    complete_rows: np.ndarray
    complete_index: np.ndarray
    group_rows: list[np.ndarray]

    def recount(self, codes: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """The multiplicities of ``codes`` (rows, nodes) in this declaration's arrays.

        Returns ``(complete_counts, [counts of each group])``: what ``complete_counts`` and
        the groups' counts would be for the rows ``codes``, with 0 for a row of these arrays
        that ``codes`` lacks. The log likelihood with those counts is ``log P(codes |
        theta)``, so one declaration over the union of several data sets serves each of
        them (calibration swaps the counts, compiled once).

        Raises
        ------
        ValueError
            A row of ``codes`` not among the rows these arrays were built from.
        """
        width = self.complete_rows.shape[1]
        where = {r.tobytes(): (-1, i) for i, r in enumerate(self.complete_rows)}
        for g, rows in enumerate(self.group_rows):
            where.update((r.tobytes(), (g, i)) for i, r in enumerate(rows))
        per_row = [np.zeros(len(self.complete_rows))] + [np.zeros(len(r))
                                                         for r in self.group_rows]
        codes = np.ascontiguousarray(np.asarray(codes, np.int64).reshape(-1, width))
        if len(codes):
            rows, counts = np.unique(codes, axis=0, return_counts=True)
            for row, c in zip(rows, counts, strict=True):
                found = where.get(np.ascontiguousarray(row).tobytes())
                if found is None:
                    raise ValueError(f"row {row.tolist()} is not among the rows declared")
                per_row[found[0] + 1][found[1]] = c
        complete_counts = np.bincount(self.complete_index.ravel(),
                                      weights=np.repeat(per_row[0], width),
                                      minlength=len(self.complete))
        return complete_counts, per_row[1:]

    def log_likelihood(self, logs: np.ndarray) -> float:
        """``log P(observed cells | theta)`` for ``logs`` the concatenated log-CPTs (numpy)."""
        total = float(self.complete_counts @ logs[self.complete])
        logs = np.append(logs, 0.0)
        for cells, counts in self.groups:
            lp = logs[cells].sum(axis=2)
            top = lp.max(axis=1, keepdims=True)
            total += float(counts @ (top[:, 0] + np.log(np.exp(lp - top).sum(axis=1))))
        return total


def summed_rows(codes: np.ndarray, card: Sequence[int], parents: Sequence[Sequence[int]], *,
                max_summed: int = MAX_SUMMED, max_completed: int = MAX_COMPLETED
                ) -> SummedRows:
    """Index arrays for ``log P(observed cells | theta)`` with every missing cell summed out.

    A row's probability is the sum, over the configurations of its missing cells, of the
    product of every node's CPT entry. A missing node that is not an ancestor of one of the
    row's observed nodes sums out to 1 with its own missing descendants (a barren node), so
    only the ancestral set of the observed nodes is kept: its missing nodes are enumerated,
    its nodes' factors multiplied.

    Parameters
    ----------
    codes : numpy.ndarray, shape (rows, nodes)
        State codes, ``-1`` for a missing cell.
    card : sequence of int
        Each node's number of states.
    parents : sequence of sequence of int
        Each node's parents, in CPT-row order (mixed radix, the first parent most significant).
    max_summed, max_completed : int
        The limits (:data:`MAX_SUMMED`, :data:`MAX_COMPLETED`).

    Raises
    ------
    TooManyConfigurations
        A pattern with more than ``max_summed`` configurations, or more than
        ``max_completed`` completed rows in all.
    """
    codes = np.asarray(codes, np.int64)
    n_nodes = len(card)
    sizes = [math.prod(card[p] for p in pa) * r for pa, r in zip(parents, card, strict=True)]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)

    def cells_of(values: np.ndarray, nodes) -> np.ndarray:  # values (..., nodes) -> (..., T)
        out = []
        for v in nodes:
            idx = np.zeros(values.shape[:-1], np.int64)
            for p in parents[v]:
                idx = idx * card[p] + values[..., p]
            out.append(offsets[v] + idx * card[v] + values[..., v])
        return np.stack(out, axis=-1) if out else np.zeros(values.shape[:-1] + (0,), np.int64)

    if codes.shape[0] == 0:
        none = np.zeros((0, n_nodes), np.int64)
        return SummedRows(np.zeros(0, np.int64), np.zeros(0), [], [], none, none, [])
    rows, first, counts = np.unique(codes, axis=0, return_index=True, return_counts=True)
    masks = rows < 0
    complete = ~masks.any(axis=1)
    flat = cells_of(rows[complete], range(n_nodes)).ravel()
    weights = np.repeat(counts[complete], n_nodes).astype(np.float64)
    used, inverse = np.unique(flat, return_inverse=True)
    complete_counts = np.bincount(inverse.ravel(), weights=weights, minlength=len(used))
    complete_index = inverse.reshape(-1, n_nodes)
    pad = int(sum(sizes))  # the index of log 1 = 0 appended to the log-CPTs
    by_size: dict[int, list] = {}
    summed, completed = [], 0
    keys, which = np.unique(masks[~complete], axis=0, return_inverse=True)
    which = which.ravel()
    incomplete_rows, incomplete_first = rows[~complete], first[~complete]
    incomplete_counts = counts[~complete]
    for g, key in enumerate(keys):
        chosen = which == g
        keep = set(int(v) for v in np.flatnonzero(~key))  # the observed nodes ...
        stack = list(keep)
        while stack:  # ... and their ancestors
            for p in parents[stack.pop()]:
                if p not in keep:
                    keep.add(p)
                    stack.append(p)
        hidden = tuple(v for v in sorted(keep) if key[v])
        size = math.prod(card[v] for v in hidden)
        row0 = int(incomplete_first[chosen].min())
        if size > max_summed:
            raise TooManyConfigurations(hidden, size, row0)
        block = incomplete_rows[chosen]
        completed += len(block) * size
        if completed > max_completed:
            raise TooManyConfigurations(hidden, completed, row0, "completed")
        configs = np.array(list(itertools.product(*(range(card[v]) for v in hidden))),
                           np.int64).reshape(size, len(hidden))
        full = np.repeat(block[:, None, :], size, axis=1)  # (m, S, nodes)
        full[:, :, list(hidden)] = configs[None, :, :]
        cells = cells_of(full, sorted(keep))
        padded = np.full(cells.shape[:2] + (n_nodes,), pad, np.int64)
        padded[:, :, :cells.shape[2]] = cells
        by_size.setdefault(size, []).append((padded, incomplete_counts[chosen], block))
        summed.append(hidden)
    groups = [(np.concatenate([c for c, _, _ in parts]),
               np.concatenate([w for _, w, _ in parts]).astype(np.float64))
              for _, parts in sorted(by_size.items())]
    group_rows = [np.concatenate([b for _, _, b in parts]) for _, parts in sorted(by_size.items())]
    return SummedRows(used, complete_counts, groups, summed, rows[complete], complete_index,
                      group_rows)


@dataclass(frozen=True, eq=False)
class BayesianNetwork(Model, Calibratable, DeclaresSimulations):
    """A discrete Bayesian network: nodes, edges, Dirichlet prior, queries, independences.

    Parameters
    ----------
    nodes : tuple of str
        The nodes (data columns), in order.
    edges : tuple of (str, str)
        Parent -> child pairs; the graph must be acyclic. A node's parents are ordered as
        their edges are listed (that order defines its CPT rows).
    concentration : float or None
        Dirichlet concentration of every CPT entry (1 = Laplace correction).
    equivalent_sample_size : float or None
        BDeu instead: ``ess / (q_v r_v)`` per entry. Give exactly one of the two.
    queries : tuple of NetworkQuery
    independences : tuple of Independence
    max_iter : int
        EM's largest number of iterations (used only when cells are missing).
    tol : float
        EM stops when an M step moves no CPT entry by more than ``tol``.
    held_states : dict or None
        Node -> its states, in order, fixed instead of read from the data: the spec's
        ``[states]`` table (some nodes; a value outside them is refused), or every node's
        states after :meth:`calibration_model` (so that a simulation missing a state keeps
        the declared CPT shapes). A node not in it has the sorted states of its data.

    Raises
    ------
    NetworkProblem
        A ``ValueError`` on a cycle, an edge naming an unknown node, a query on an evidence
        node, and so on (the message names the offending entry;
        :func:`bayesian_network_spec` turns each into a :class:`SpecError` naming the key).
    """

    nodes: tuple[str, ...]
    edges: tuple[tuple[str, str], ...] = ()
    concentration: float | None = 1.0
    equivalent_sample_size: float | None = None
    queries: tuple[NetworkQuery, ...] = ()
    independences: tuple[Independence, ...] = ()
    max_iter: int = 1000
    tol: float = 1e-9
    held_states: dict | None = None

    name = "bayesian_network"

    def __post_init__(self):
        problems = self.problems()
        if problems:
            raise NetworkProblem(*problems[0])

    def problems(self) -> list[tuple[str, str]]:
        """Every inconsistency as ``(spec key, message)``; empty when the model is valid."""
        out: list[tuple[str, str]] = []
        nodes = set(self.nodes)
        if not self.nodes:
            out.append(("data", "a network needs at least one node"))
        if (self.concentration is None) == (self.equivalent_sample_size is None):
            out.append(("prior", "give exactly one of concentration and "
                                 "equivalent_sample_size"))
        for value in (self.concentration, self.equivalent_sample_size):
            if value is not None and not (math.isfinite(value) and value > 0):
                out.append(("prior", f"expected a positive finite number, got {value!r}"))
        if self.concentration is not None and math.isfinite(self.concentration) \
                and self.concentration > 0:
            try:  # the rule of every Dirichlet concentration (naive and semi-naive Bayes too)
                validation.concentration(self.concentration, "concentration")
            except validation.InvalidArgument as exc:
                out.append(("prior.concentration", exc.message))
        if not (isinstance(self.max_iter, int) and self.max_iter >= 1):
            out.append(("fit.max_iter", f"expected an integer >= 1, got {self.max_iter!r}"))
        if not (math.isfinite(self.tol) and self.tol >= 0):
            out.append(("fit.tol", f"expected a finite number >= 0, got {self.tol!r}"))
        seen = set()
        for i, (a, b) in enumerate(self.edges):
            for n in (a, b):
                if n not in nodes:
                    out.append((f"structure.edges[{i}]",
                                f"node {n!r} has no data: it is not a column of the data "
                                f"(columns: {', '.join(self.nodes)})"))
            if a == b:
                out.append((f"structure.edges[{i}]", f"a self-loop on {a!r}"))
            if (a, b) in seen:
                out.append((f"structure.edges[{i}]", f"edge {a!r} -> {b!r} is listed twice"))
            seen.add((a, b))
        for n, held in (self.held_states or {}).items():
            if n not in nodes:
                out.append((f"states.{n}", f"not a node; nodes: {', '.join(self.nodes)}"))
            elif not held or len(set(held)) != len(held):
                out.append((f"states.{n}", "expected distinct states, at least one"))
        if out:
            return out
        cycle = _cycle(self.nodes, self.parents)
        if cycle:
            out.append(("structure.edges", "the graph must be acyclic; it has the cycle "
                                           + " -> ".join(cycle)))
        names = set()
        for i, q in enumerate(self.queries):
            key = f"query[{i}]"
            if q.name in names:
                out.append((f"{key}.name", f"query names must be unique, {q.name!r} is used "
                                           f"twice"))
            names.add(q.name)
            if q.target not in nodes:
                out.append((f"{key}.target", f"unknown node {q.target!r}; nodes: "
                                             f"{', '.join(self.nodes)}"))
            for node, _ in q.evidence:
                if node not in nodes:
                    out.append((f"{key}.evidence.{node}", f"unknown node {node!r}; nodes: "
                                                          f"{', '.join(self.nodes)}"))
                if node == q.target:
                    out.append((f"{key}.evidence.{node}",
                                f"the target {node!r} is also evidence: a query on an "
                                f"evidence node is already answered (its value is given)"))
        for i, ind in enumerate(self.independences):
            key = f"independence[{i}]"
            for part, group in (("x", ind.x), ("y", ind.y), ("given", ind.given)):
                for n in group:
                    if n not in nodes:
                        out.append((f"{key}.{part}", f"unknown node {n!r}; nodes: "
                                                     f"{', '.join(self.nodes)}"))
            if not ind.x or not ind.y:
                out.append((key, "x and y must each name at least one node"))
            sets = (set(ind.x), set(ind.y), set(ind.given))
            if sets[0] & sets[1] or sets[0] & sets[2] or sets[1] & sets[2]:
                out.append((key, "x, y and given must not share nodes"))
        return out

    @property
    def parents(self) -> tuple[tuple[int, ...], ...]:
        """Parent indices of each node, in the order their edges are listed."""
        index = {n: i for i, n in enumerate(self.nodes)}
        out: list[list[int]] = [[] for _ in self.nodes]
        for a, b in self.edges:
            out[index[b]].append(index[a])
        return tuple(tuple(p) for p in out)

    def topological_order(self) -> list[int]:
        """Node indices with every parent before its children (the graph is acyclic)."""
        parents = self.parents
        order: list[int] = []
        placed: set[int] = set()
        while len(order) < len(self.nodes):
            for v in range(len(self.nodes)):
                if v not in placed and all(p in placed for p in parents[v]):
                    order.append(v)
                    placed.add(v)
        return order

    # ---- data --------------------------------------------------------------------------

    def column(self, batch: Batch, node: str) -> pd.Series:
        """One node's values in a batch, as read (text; an empty cell is missing, NaN).

        Raises
        ------
        DataError
            A missing column.
        """
        self._check_columns(batch)
        return batch.frame[node]

    def _check_columns(self, batch: Batch, nodes: Sequence[str] | None = None) -> None:
        columns = batch.columns
        present = set(columns)
        for node in self.nodes if nodes is None else nodes:
            if node not in present:
                raise DataError(f"node {node!r} has no data: missing column; the file has: "
                                f"{', '.join(map(str, columns))}", path=batch.name,
                                column=node)

    def batch_codes(self, batch: Batch, nodes: Sequence[str] | None = None,
                    ) -> list[tuple[np.ndarray, list[str]]]:
        """Every node's column factorised once: ``(codes, labels)`` per node, in node order.

        ``codes`` index ``labels`` (-1 for a missing cell); see
        :func:`bayescheck.data.labels.category_codes`. ``nodes``: only these (default: every node).

        Raises
        ------
        DataError
            A missing column.
        """
        nodes = self.nodes if nodes is None else nodes
        self._check_columns(batch, nodes)
        return category_codes(batch, nodes)

    def state_columns(self, batch: Batch, states: Sequence[list[str]]
                      ) -> list[tuple[np.ndarray, bool]]:
        """Every node's column as codes of its states, one pass each (for counting).

        ``states[v]``: node ``v``'s states so far; a label not among them is appended to it
        (in the order first seen), or, with held states, is a :class:`DataError` naming its
        row. Returns per node the codes (-1 for a missing cell; possibly a read-only view)
        and whether the column has a missing cell; see
        :func:`bayescheck.data.labels.category_codes_as`.

        Raises
        ------
        DataError
            A missing column; with held states, a state not among them.
        """
        self._check_columns(batch)
        index = [{s: k for k, s in enumerate(words)} for words in states]
        held = self.held_states or {}
        fixed = [v for v, n in enumerate(self.nodes) if n in held]
        free = [v for v, n in enumerate(self.nodes) if n not in held]
        out: list = [None] * len(self.nodes)
        for nodes, grow in ((fixed, False), (free, True)):
            if not nodes:
                continue

            def unknown(j: int, label: str, row: int, nodes=nodes) -> DataError:
                v = nodes[j]
                return not_declared(label, states[v], path=batch.name, column=self.nodes[v],
                                    row=row + 1)

            codes = category_codes_as(batch, [self.nodes[v] for v in nodes],
                                      [index[v] for v in nodes], grow=grow, unknown=unknown)
            for v, c in zip(nodes, codes, strict=True):
                out[v] = c
        for words, seen in zip(states, index, strict=True):
            words.extend(list(seen)[len(words):])
        return out

    def states(self, source: DataSource) -> dict[str, tuple[str, ...]]:
        """Every node's states: held (declared), else sorted from one pass over the data.

        A held node's values are checked where they are coded (:meth:`codes`).

        Raises
        ------
        DataError
            A node with no observed value at all.
        """
        held = self.held_states or {}
        free = [n for n in self.nodes if n not in held]
        seen: dict[str, set[str]] = {n: set() for n in free}
        for batch in (source.batches() if free else ()):
            for n, (codes, labels) in zip(free, self.batch_codes(batch, free), strict=True):
                present = np.unique(codes)
                seen[n].update(labels[int(k)] for k in present[present >= 0])
        for n, s in seen.items():
            if not s:
                raise self.no_observed_value(source, n)
        return {n: tuple(held[n]) if n in held else tuple(sorted(seen[n]))
                for n in self.nodes}

    @staticmethod
    def no_observed_value(source: DataSource, node: str) -> DataError:
        """The error for a node whose every cell is empty."""
        files = source.files()
        return DataError(f"node {node!r} has no observed value (every cell is empty); a "
                         f"latent node is not supported",
                         path=files[0] if len(files) == 1 else source.label, column=node)

    def state_problems(self, states: dict[str, tuple[str, ...]]) -> list[tuple[str, str]]:
        """Evidence values never seen in the data, and a prior too small for the states read.

        As ``(spec key, message)``. Each CPT entry's concentration must be at least
        :data:`~bayescheck.models.validation.MIN_CONCENTRATION` (BDeu's
        ``equivalent_sample_size / (q r)`` depends on the states, so it is checked here,
        before anything is fitted or written).
        """
        out = []
        if self.equivalent_sample_size is not None and self.nodes:
            alpha = min(self.prior_alpha(v, states) for v in range(len(self.nodes)))
            if not alpha >= validation.MIN_CONCENTRATION:
                out.append(("prior.equivalent_sample_size", validation.concentration_too_small(
                    f"equivalent_sample_size / (parent configurations x states) = {alpha:.3g} "
                    f"for some CPT entries")))
        for i, q in enumerate(self.queries):
            for node, value in q.evidence:
                if value not in states[node]:
                    out.append((f"query[{i}].evidence.{node}",
                                f"value {value!r} never seen in the data nor declared in "
                                f"[states]; {node!r} takes "
                                f"{', '.join(map(repr, states[node]))}"))
        return out

    def codes(self, batch: Batch, states: dict[str, tuple[str, ...]], *,
              skip: frozenset[str] = frozenset()) -> np.ndarray:
        """State codes (rows, nodes) of a batch, -1 for a missing cell.

        A state not in ``states`` is a :class:`DataError` naming its row. Nodes in ``skip``
        are not read (their column may be absent): every code is -1, unobserved.
        """
        read = [n for n in self.nodes if n not in skip]
        parts = dict(zip(read, self.batch_codes(batch, read), strict=True))
        rows = len(next(iter(parts.values()))[0]) if parts else batch_rows(batch)
        out = np.full((rows, len(self.nodes)), -1, dtype=np.int64, order="F")
        for v, n in enumerate(self.nodes):
            if n in parts:
                local, labels = parts[n]
                out[:, v] = self.relabel(batch, n, states[n], local, labels)
        return out

    @staticmethod
    def relabel(batch: Batch, node: str, states: tuple[str, ...],
                            local: np.ndarray, labels: list[str]) -> np.ndarray:
        """``local`` codes of ``labels`` as codes of ``states`` (-1 stays missing).

        Raises
        ------
        DataError
            A label not among ``states``, naming its first row.
        """
        index = {s: k for k, s in enumerate(states)}
        mapping = np.array([index.get(u, -2) for u in labels] + [-1], dtype=np.int64)
        codes = mapping[local]  # a missing cell: local -1 -> the trailing -1
        if (codes == -2).any():
            r = int(np.flatnonzero(codes == -2)[0])
            raise DataError(f"state {labels[int(local[r])]!r} not among the states read before "
                            f"({', '.join(states)})", path=batch.name, column=node, row=r + 1)
        return codes

    # ---- calibration -------------------------------------------------------------------

    def calibration_model(self, fit) -> BayesianNetwork:
        """A copy holding the fit's node states, without queries.

        Every simulation then has the declaration's CPT shapes whichever states it happens to
        contain; the queries have exact means only (nothing to calibrate). With missing
        cells the fit is EM's (its states are those of the observed cells).
        """
        states = {n: tuple(fit.posterior.parameters["cpts"][n]["states"]) for n in self.nodes}
        return replace(self, held_states=states, queries=())

    def simulated_frame(self, frame: pd.DataFrame, observed: dict) -> pd.DataFrame:
        """A copy of ``frame`` whose nodes hold one simulation's states (``x_<node>`` codes).

        A cell empty in ``frame`` stays empty: the simulations keep the data's pattern of
        missing cells (fixed, so independent of the values: missing completely at random).
        """
        if self.held_states is None:
            raise BayescheckError("simulated_frame needs the states held: use "
                                  "calibration_model(fit) first")
        out = frame.copy()
        for n in self.nodes:
            values = np.asarray(self.held_states[n], dtype=object)[
                np.asarray(observed[variable("x", n)], dtype=np.int64)]
            out[n] = np.where(frame[n].isna().to_numpy(), None, values)
        return out

    def config_labels(self, v: int, states: dict[str, tuple[str, ...]]) -> list[str]:
        """Labels of the CPT rows of node ``v``: ``"p1=a, p2=b"``; ``"(root)"`` without parents."""
        pa = self.parents[v]
        if not pa:
            return ["(root)"]
        names = [self.nodes[p] for p in pa]
        return [", ".join(f"{n}={s}" for n, s in zip(names, combo, strict=True))
                for combo in itertools.product(*(states[n] for n in names))]

    def prior_alpha(self, v: int, states: dict[str, tuple[str, ...]]) -> float:
        """The prior concentration of each entry of node ``v``'s CPT."""
        if self.concentration is not None:
            return float(self.concentration)
        q = math.prod(len(states[self.nodes[p]]) for p in self.parents[v])
        return float(self.equivalent_sample_size) / (q * len(states[self.nodes[v]]))

    def enumeration(self, query: NetworkQuery, states) -> tuple[list[int], np.ndarray] | None:
        """The nodes and configurations a query's declaration sums over.

        The ancestors of the target and the evidence (the other nodes sum out to 1), with the
        evidence fixed; None when there are more than :data:`MAX_ENUMERATED`.
        """
        index = {n: i for i, n in enumerate(self.nodes)}
        parents = self.parents
        keep = {index[query.target], *(index[n] for n, _ in query.evidence)}
        stack = list(keep)
        while stack:
            for p in parents[stack.pop()]:
                if p not in keep:
                    keep.add(p)
                    stack.append(p)
        relevant = sorted(keep)
        fixed = {index[n]: states[n].index(s) for n, s in query.evidence}
        ranges = [[fixed[v]] if v in fixed else range(len(states[self.nodes[v]]))
                  for v in relevant]
        if math.prod(len(r) for r in ranges) > MAX_ENUMERATED:
            return None
        return relevant, np.array(list(itertools.product(*ranges)), dtype=np.int64)

    # ---- PyMC --------------------------------------------------------------------------

    def _too_many(self, exc: TooManyConfigurations, parts, names) -> DataError:
        """The refusal of a pattern too large to sum out, naming its first row."""
        row, b = exc.row, 0
        while row >= len(parts[b]):
            row -= len(parts[b])
            b += 1
        nodes = ", ".join(self.nodes[v] for v in exc.nodes)
        if exc.what == "pattern":
            message = (f"the row misses the nodes {nodes} together (each an ancestor of an "
                       f"observed node): {exc.size} joint configurations to sum out in the "
                       f"declaration, more than {MAX_SUMMED}; 'check' cannot declare these "
                       f"data (use 'fit' alone for the EM estimate, or drop such rows)")
        else:
            message = (f"summing out the missing cells needs {exc.size} completed rows (distinct "
                       f"incomplete rows x configurations of their missing nodes) by this "
                       f"row's pattern ({nodes}), more than {MAX_COMPLETED}; 'check' cannot "
                       f"declare these data (use 'fit' alone for the EM estimate)")
        return DataError(message, path=names[b], row=row + 1)

    def declare(self, source: DataSource, fit=None):
        """The PyMC model of every row of ``source`` (see the module docstring).

        Variables: ``cpt_<node>`` (dims ``<node>__parents``, ``<node>__state``); with complete
        data a deterministic of the free ``stick_fractions`` (stick-breaking) and the
        potential ``log_p_counts`` (:data:`COMPLETE_DECLARATION`, the counts of
        :meth:`cell_counts`); with missing cells ``pm.Dirichlet`` and instead the potential
        ``log_p_observed_cells`` (:data:`SUMMED_DECLARATION`, built by :func:`summed_rows`);
        and per query with an enumerable hidden part ``joint_<query>`` (dims
        ``<query>__target``) and, when it has evidence, ``evidence_<query>``. No variable is
        observed: the row-by-row declaration is :meth:`prior_declaration`.

        Raises
        ------
        DataError
            With missing cells, a pattern of missing nodes with more than :data:`MAX_SUMMED`
            joint configurations, or more than :data:`MAX_COMPLETED` completed rows in all
            (naming the first row of the pattern and its nodes).
        """
        states, codes, parts, names = self._read_codes(source)
        if not (codes < 0).any():
            counts = self.cell_counts(codes, states)
            return self._declare(states, counted=(np.flatnonzero(counts), counts))
        try:
            summed = summed_rows(codes, [len(states[n]) for n in self.nodes], self.parents)
        except TooManyConfigurations as exc:
            raise self._too_many(exc, parts, names) from None
        return self._declare(states, summed=summed)

    def cell_counts(self, codes: np.ndarray, states: dict[str, tuple[str, ...]]) -> np.ndarray:
        """How many of the complete rows ``codes`` use each CPT entry, flat.

        Every node's ``(q_v, r_v)`` table of counts (rows: parent configurations in
        :meth:`config_labels` order; columns: states), flattened row-major and concatenated
        in node order: the order of the ``cpt_<node>`` tables of the declaration.
        """
        card = [len(states[n]) for n in self.nodes]
        out = []
        for v, pa in enumerate(self.parents):
            row = np.zeros(len(codes), np.int64)
            for p in pa:
                row = row * card[p] + codes[:, p]
            out.append(table_counts(row, codes[:, v],
                                    (math.prod(card[p] for p in pa), card[v])).ravel())
        return np.concatenate(out)

    def prior_declaration(self, source: DataSource):
        """The complete-data declaration of ``source``'s rows, to simulate from.

        Every cell is declared observed (an empty cell as the first state: a
        prior-predictive draw replaces it), so ``pm.sample_prior_predictive`` draws every
        node of every row; :meth:`simulated_frame` then empties the cells empty in the data.
        """
        states, codes, _, _ = self._read_codes(source)
        return self._declare(states, rows=np.where(codes < 0, 0, codes))

    def declare_simulations(self, sources: Sequence[DataSource]):
        """One declaration for every simulated data set, their data in ``pm.Data``.

        When every data set is complete, the declaration through the counts
        (:data:`COMPLETE_DECLARATION`) over the CPT entries any data set uses, each data
        set's counts in ``cell_counts``; otherwise the missing cells summed out
        (:data:`SUMMED_DECLARATION`) over the union of the data sets' distinct rows, with the
        multiplicities in ``complete_counts`` and ``counts_<g>`` (a row absent from a data
        set counts 0, :meth:`SummedRows.recount`). The states are held
        (:meth:`calibration_model`).

        Returns
        -------
        model : pymc.Model
        updates : list of dict
            Per data set, ``{name: values}`` for ``model.set_data`` that make the model that
            data set's declaration.

        Raises
        ------
        DataError
            The union of the data sets' rows too large to sum out (:func:`summed_rows`).
        """
        states = self.states(sources[0])
        codes = [self._read_codes(src)[1] for src in sources]
        nodes = self.nodes
        if all((c >= 0).all() for c in codes):
            counts = [self.cell_counts(c, states) for c in codes]
            used = used_cells(counts)
            model = self._declare(states, counted=(used, counts[0]), shared=True)
            return model, [{COUNTS_DATA: c[used]} for c in counts]
        try:
            summed = summed_rows(np.concatenate(codes), [len(states[n]) for n in nodes],
                                 self.parents)
        except TooManyConfigurations as exc:
            raise DataError(f"the simulations' rows together are too many to sum out in one "
                            f"declaration ({exc.size} configurations of nodes "
                            f"{', '.join(nodes[v] for v in exc.nodes)}); use fewer rows, "
                            f"fewer missing cells or fewer simulations",
                            path=sources[0].label) from None
        model = self._declare(states, summed=summed, shared=True)
        updates = []
        for c in codes:
            complete, groups = summed.recount(c)
            updates.append({"complete_counts": complete,
                            **{f"counts_{g}": w for g, w in enumerate(groups)}})
        return model, updates

    def _read_codes(self, source: DataSource):
        """``(states, codes, per-batch codes, batch names)`` of ``source``."""
        states = self.states(source)
        parts, names = [], []
        for b in source.batches():
            parts.append(self.codes(b, states))
            names.append(b.name)
        return states, np.concatenate(parts), parts, names

    def _declare(self, states, *, rows: np.ndarray | None = None,
                 counted: tuple[np.ndarray, np.ndarray] | None = None,
                 summed: SummedRows | None = None, shared: bool = False):
        """The PyMC model of the data given one way (exactly one of the three).

        ``rows`` (rows, nodes) codes: observed ``x_<node>``. ``counted``: ``(used, counts)``,
        the CPT entries entering the sum and every entry's count (:meth:`cell_counts`), the
        potential of :data:`COMPLETE_DECLARATION`. ``summed``: the potential of
        :data:`SUMMED_DECLARATION`. ``shared``: the data in ``pm.Data`` containers.
        """
        import pymc as pm
        import pytensor.tensor as pt

        parents = self.parents
        coords = {}
        for v, n in enumerate(self.nodes):
            coords[dim(n, "parents")] = self.config_labels(v, states)
            coords[dim(n, "state")] = list(states[n])
        for q in self.queries:
            coords[dim(q.name, "target")] = list(states[q.target])
        card = [len(states[n]) for n in self.nodes]

        def row_index(v, values):  # values: (m, nodes) codes
            idx = np.zeros(values.shape[0], dtype=np.int64)
            for p in parents[v]:
                idx = idx * card[p] + values[:, p]
            return idx

        def data(name, values):
            return pm.Data(name, values) if shared else values

        with pm.Model(coords=coords) as model:
            tables = [(variable("cpt", n), np.full((len(coords[dim(n, "parents")]), card[v]),
                                            self.prior_alpha(v, states)),
                       (dim(n, "parents"), dim(n, "state"))) for v, n in enumerate(self.nodes)]
            # stick-breaking where the data enter by rows or counts (structural zeros mix
            # slowly in PyMC's log-ratio coordinates); the summed-out declaration keeps those
            # coordinates, where EM's estimate is the declared mode
            if summed is None:
                declared = dirichlet_tables(tables)
                theta = dict(enumerate(declared.tables))
            else:
                theta = {v: pm.Dirichlet(name, a=alpha, dims=dims)
                         for v, (name, alpha, dims) in enumerate(tables)}
            if rows is not None:
                # Parents first, each node's CPT row indexed by its parents' variables (their
                # observed codes in a fit; their draws in a prior-predictive simulation, so
                # that simulated rows are consistent for calibration).
                x = {}
                for v in self.topological_order():
                    row = 0
                    for p in parents[v]:
                        row = row * card[p] + x[p]
                    codes = data(variable("codes", self.nodes[v]), rows[:, v])
                    x[v] = pm.Categorical(variable("x", self.nodes[v]), p=theta[v][row],
                                          observed=codes)
            if counted is not None:
                used, counts = counted
                counts_potential(declared.log_cells, counts, used=used, shared=shared)
            if summed is not None:
                logs = pt.concatenate([pt.log(theta[v]).ravel() for v in range(len(card))]
                                      + [pt.zeros(1)])  # then the padding's log 1
                total = pt.dot(data("complete_counts", summed.complete_counts),
                               logs[summed.complete])
                for g, (cells, counts) in enumerate(summed.groups):
                    # one gather with a flat index vector (the simplest indexing op), reshaped
                    lp = logs[cells.ravel()].reshape(cells.shape).sum(axis=2)  # (rows, configs)
                    total = total + pt.dot(data(f"counts_{g}", counts),
                                           pt.logsumexp(lp, axis=1))
                pm.Potential("log_p_observed_cells", total)
            for q in self.queries:
                enum = self.enumeration(q, states)
                if enum is None:
                    continue
                relevant, configs = enum
                full = np.zeros((configs.shape[0], len(self.nodes)), dtype=np.int64)
                full[:, relevant] = configs
                term = pt.ones(configs.shape[0])
                for v in relevant:
                    term = term * theta[v][row_index(v, full), full[:, v]]
                t = self.nodes.index(q.target)
                indicator = (full[:, t][None, :] == np.arange(card[t])[:, None]).astype(float)
                joint = pm.Deterministic(variable("joint", q.name), pt.dot(indicator, term),
                                         dims=dim(q.name, "target"))
                if q.evidence:
                    pm.Deterministic(variable("evidence", q.name), pt.sum(joint))
        return model


# ---- spec ------------------------------------------------------------------------------


def _label(value, row: Section, key: str) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise row.error(key, f"expected a state label, got {value!r}")


def _queries(top: Section) -> tuple[NetworkQuery, ...]:
    out = []
    for i, row in enumerate(top.tables("query", "[[query]] tables")):
        name = row.string("name", f"q{i + 1}")
        target = row.string("target")
        evidence = row.raw("evidence", {})
        if not isinstance(evidence, dict):
            raise row.error("evidence", f"expected a table node = state, got {evidence!r}")
        pairs = tuple((str(k), _label(v, row, f"evidence.{k}")) for k, v in evidence.items())
        row.finish()
        out.append(NetworkQuery(name, target, pairs))
    return tuple(out)


def _independences(top: Section) -> tuple[Independence, ...]:
    out = []
    for i, row in enumerate(top.tables("independence", "[[independence]] tables")):
        name = row.string("name", f"i{i + 1}")
        groups = []
        for key, default in (("x", None), ("y", None), ("given", [])):
            value = row.raw(key) if default is None else row.raw(key, default)
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise row.error(key, f"expected a node name or a list of node names, "
                                     f"got {value!r}")
            groups.append(tuple(value))
        row.finish()
        out.append(Independence(name, *groups))
    return tuple(out)


def _edges(structure: Section) -> tuple[tuple[str, str], ...]:
    raw = structure.raw("edges", [])
    if not isinstance(raw, list) or not all(
            isinstance(e, list) and len(e) == 2 and all(isinstance(n, str) for n in e)
            for e in raw):
        raise structure.error("edges", f"expected a list of [parent, child] pairs of node "
                                       f"names, got {raw!r}")
    return tuple((a, b) for a, b in raw)


def bayesian_network_spec(top: Section, path: Path) -> Spec:
    """Build a :class:`~bayescheck.models.spec.Spec` for ``model = "bayesian_network"``.

    Keys: ``[data] path, nodes`` (default: every column); ``[structure] edges``; ``[fit]
    max_iter, tol`` (EM, used only when cells are missing);
    ``[prior] concentration`` or ``equivalent_sample_size``; ``[states] node = [states]``
    (:mod:`bayescheck.models.states`); ``[[query]] name, target, evidence``;
    ``[[independence]] name, x, y, given``; ``[sampling]``. See
    docs/models/bayesian_network.md.
    """
    data = top.subsection("data")
    source = DataSource(data.string("path"), base=path.parent, text=True)
    columns = source.columns()
    nodes = data.strings("nodes", None)
    if nodes is None:
        nodes = columns
    for n in nodes:
        if n not in columns:
            raise SpecError(f"node {n!r} has no data: it is not a column of "
                            f"{source.files()[0]}; it has: {', '.join(columns)}",
                            path=path, key="data.nodes")
    data.finish()
    structure = top.subsection("structure")
    edges = _edges(structure)
    structure.finish()
    fit = top.subsection("fit")
    max_iter = int(fit.number("max_iter", 1000, integer=True, minimum=1))
    tol = float(fit.number("tol", 1e-9, minimum=0))
    fit.finish()
    prior = top.subsection("prior")
    concentration = prior.number("concentration", None, positive=True)
    ess = prior.number("equivalent_sample_size", None, positive=True)
    prior.finish()
    if concentration is not None and ess is not None:
        raise prior.error("equivalent_sample_size", "give either concentration (the same "
                                                    "Dirichlet concentration everywhere) or "
                                                    "equivalent_sample_size (BDeu), not both")
    if concentration is None and ess is None:
        concentration = 1.0
    queries = _queries(top)
    independences = _independences(top)
    declared = read_states(top, nodes)
    sampling = SamplingConfig.from_section(top.subsection("sampling"))
    fields = dict(nodes=tuple(nodes), edges=edges, held_states=declared or None,
                  concentration=None if concentration is None else float(concentration),
                  equivalent_sample_size=None if ess is None else float(ess),
                  queries=queries, independences=independences, max_iter=max_iter, tol=tol)
    try:
        model = BayesianNetwork(**fields)
    except NetworkProblem as exc:
        where = f"; data: {source.label}" if "has no data" in exc.message else ""
        raise SpecError(exc.message + where, path=path, key=exc.key) from None
    return Spec(model=model, data=source, sampling=sampling, path=path, raw=top.table)


#: The spec reader of each model of this module (:func:`bayescheck.models.registry.spec_reader`).
SPEC_READERS = {"bayesian_network": bayesian_network_spec}
