"""The likelihood of categorical tables declared through the counts of their cells.

With complete data, the row-by-row likelihood of a product of categorical tables (a network's
CPTs, naive Bayes' class weights and per-class feature tables, a one-dependence model's
tables) is ``prod_n prod_t theta_t[cell used by row n]``: its log is
``sum_cells n_cell log theta_cell``, with ``n_cell`` the number of rows that use the cell.
Declared that way, as one ``pm.Potential``, the log density is the same function of the
parameters (no constant is even dropped), and a gradient costs the number of cells used, not
the number of rows.

Only the cells some row uses enter the sum (a cell no row uses adds ``0 log theta``).

The tables' rows are declared Dirichlet through their stick-breaking Betas
(:func:`dirichlet_tables`): the same prior, in coordinates where a Dirichlet posterior is a
product of independent Betas. PyMC's own Dirichlet samples in centred log-ratio coordinates,
where a cell no row uses, in a table row that many rows use (a structural zero: posterior
``Beta(1, n)``, its log skewed over several units), is coupled to every other cell of its
row, and NUTS mixes slowly (measured in benchmarks/REAL_DATA.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["COUNTS_DATA", "COUNTS_POTENTIAL", "STICK_FRACTIONS", "DirichletTables",
           "counts_potential", "dirichlet_tables", "table_counts", "used_cells"]

#: The name of the potential holding ``sum n_cell log theta_cell``.
COUNTS_POTENTIAL = "log_p_counts"

#: The free variable holding every stick-breaking fraction of a declaration's tables: a
#: parametrisation of the Dirichlets, not a parameter of the model (the tables are).
STICK_FRACTIONS = "stick_fractions"

#: The name of the ``pm.Data`` holding the counts of a declaration whose data are swapped
#: (calibration: one declaration for every simulated data set).
COUNTS_DATA = "cell_counts"


def table_counts(rows: np.ndarray, columns: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """How many times each cell ``(row, column)`` of a ``shape`` table is used.

    Parameters
    ----------
    rows, columns : numpy.ndarray of int, shape (n,)
        Each data row's table row (a parent configuration, a class) and column (a state).
    shape : (int, int)

    Returns
    -------
    numpy.ndarray of float64, shape ``shape``
    """
    cells = np.asarray(rows, np.int64) * shape[1] + np.asarray(columns, np.int64)
    return np.bincount(cells, minlength=shape[0] * shape[1]).astype(np.float64).reshape(shape)


def used_cells(counts: Sequence[np.ndarray]) -> np.ndarray:
    """Flat indices of the cells used by at least one of several data sets' ``counts``."""
    return np.flatnonzero(np.sum([np.asarray(c, np.float64).ravel() for c in counts], axis=0))


def counts_potential(log_cells, counts: np.ndarray, *, used: np.ndarray | None = None,
                     shared: bool = False):
    """Add ``sum_cells counts * log theta`` to the current PyMC model as one potential.

    Parameters
    ----------
    log_cells : pytensor tensor, shape (cells,)
        ``log theta`` of every cell of the tables, flattened and concatenated
        (:attr:`DirichletTables.log_cells`).
    counts : numpy.ndarray, shape (cells,)
        The count of every cell, in the same order.
    used : numpy.ndarray of int, optional
        The cells that enter the sum (default: those with a non-zero count). A declaration
        whose counts are swapped later gives the union of every data set's cells
        (:func:`used_cells`).
    shared : bool
        Hold ``counts[used]`` in ``pm.Data`` named :data:`COUNTS_DATA`, for ``pm.set_data``.

    Returns
    -------
    The potential (named :data:`COUNTS_POTENTIAL`).
    """
    import pymc as pm
    import pytensor.tensor as pt

    counts = np.asarray(counts, np.float64).ravel()
    used = np.flatnonzero(counts) if used is None else np.asarray(used, np.int64)
    values = pm.Data(COUNTS_DATA, counts[used]) if shared else counts[used]
    return pm.Potential(COUNTS_POTENTIAL, pt.dot(values, log_cells[used]))


@dataclass
class DirichletTables:
    """Tables of Dirichlet rows declared by stick-breaking (:func:`dirichlet_tables`).

    Attributes
    ----------
    tables : list
        Each table, the deterministic of its name, shaped as its concentrations.
    log_cells : pytensor tensor, shape (cells,)
        ``log theta`` of every cell, the tables flattened row-major and concatenated in
        order: the layout of :func:`counts_potential`'s ``counts``.
    """

    tables: list
    log_cells: object


def dirichlet_tables(tables: Sequence[tuple[str, np.ndarray, tuple | None]]
                     ) -> DirichletTables:
    """Tables whose rows are ``Dirichlet(alpha[j])``, declared by stick-breaking.

    For a row of ``r`` states, ``v_k ~ Beta(alpha_k, sum_{j > k} alpha_j)`` for ``k < r - 1``
    and ``theta_k = v_k prod_{j < k} (1 - v_j)``, ``theta_{r-1} = prod_{j < r-1} (1 - v_j)``:
    the Dirichlet distribution exactly (its density in ``theta`` is the Dirichlet's, see
    ``tests/models/test_count_declarations.py``). Every fraction of every table is one free
    variable, ``stick_fractions`` (the log density is then a few operations whatever the
    number of tables; a variable per table grows the compiled graph with them), and
    ``log theta`` is taken as ``log v_k + sum_{j < k} log(1 - v_j)``. A row of one state is
    the constant 1.

    Parameters
    ----------
    tables : sequence of (name, alpha, dims)
        Each table's name (its deterministic), positive concentrations (shape ``(..., r)``,
        one Dirichlet per row) and dims (or None).
    """
    import pymc as pm
    import pytensor.tensor as pt

    a_parts, b_parts, v_index, start, end, slices = [], [], [], [], [], []
    sticks = cells = 0
    for _, alpha, _ in tables:
        alpha = np.asarray(alpha, np.float64)
        r = alpha.shape[-1]
        rows = alpha.reshape(-1, r)
        after = np.cumsum(rows[:, ::-1], axis=1)[:, ::-1][:, 1:]  # sum_{j > k} alpha_j
        a_parts.append(rows[:, :-1].ravel())
        b_parts.append(after.ravel())
        first = sticks + (r - 1) * np.arange(len(rows))  # each row's first fraction
        k = np.arange(r)
        # the fraction of state k (the last state has none: the index of the padding 0)
        v_index.append(np.where(k[None, :] < r - 1, first[:, None] + k[None, :], -1).ravel())
        start.append(np.repeat(first, r))
        end.append((first[:, None] + k[None, :]).ravel())
        slices.append((cells, cells + rows.size, alpha.shape))
        sticks += rows[:, :-1].size
        cells += rows.size
    v = (pm.Beta(STICK_FRACTIONS, alpha=np.concatenate(a_parts),
                 beta=np.concatenate(b_parts)) if sticks else pt.zeros(0))
    log_v = pt.concatenate([pt.log(v), pt.zeros(1)])  # then the padding (index -1)
    before = pt.concatenate([pt.zeros(1), pt.cumsum(pt.log1p(-v))])  # sum_{m < i} log(1 - v_m)
    v_index, start, end = (np.concatenate(x) for x in (v_index, start, end))
    log_cells = log_v[v_index] + before[end] - before[start]
    out = [pm.Deterministic(name, pt.exp(log_cells[lo:hi]).reshape(shape), dims=dims)
           for (name, _, dims), (lo, hi, shape) in zip(tables, slices, strict=True)]
    return DirichletTables(out, log_cells)
