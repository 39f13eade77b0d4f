"""The likelihood of categorical tables declared through the counts of their cells.

With complete data, the row-by-row likelihood of a product of categorical tables (a network's
CPTs, naive Bayes' class weights and per-class feature tables, a one-dependence model's
tables) is ``prod_n prod_t theta_t[cell used by row n]``: its log is
``sum_cells n_cell log theta_cell``, with ``n_cell`` the number of rows that use the cell.
Declared that way, as one ``pm.Potential``, the log density is the same function of the
parameters (no constant is even dropped), and a gradient costs the number of cells used, not
the number of rows.

Only the cells some row uses enter the sum (a cell no row uses adds ``0 log theta``, and
would give ``nan`` where ``theta`` underflows to 0).

The tables' rows are declared Dirichlet through their stick-breaking Betas
(:func:`dirichlet_table`): the same prior, in coordinates where a Dirichlet posterior is a
product of independent Betas. PyMC's own Dirichlet samples in centred log-ratio coordinates,
where a cell no row uses, in a table row that many rows use (a structural zero: posterior
``Beta(1, n)``, its log skewed over several units), is coupled to every other cell of its
row, and NUTS mixes slowly (measured in benchmarks/REAL_DATA.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["COUNTS_DATA", "COUNTS_POTENTIAL", "counts_potential", "dirichlet_table",
           "table_counts", "used_cells"]

#: The name of the potential holding ``sum n_cell log theta_cell``.
COUNTS_POTENTIAL = "log_p_counts"

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


def counts_potential(tables: Sequence, counts: np.ndarray, *, used: np.ndarray | None = None,
                     shared: bool = False):
    """Add ``sum_cells counts * log theta`` to the current PyMC model as one potential.

    Parameters
    ----------
    tables : sequence of pytensor tensors
        The probability tables (each row on the simplex), flattened and concatenated in this
        order to match ``counts``.
    counts : numpy.ndarray, shape (cells,)
        The count of every cell of the concatenated tables.
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
    theta = pt.concatenate([pt.as_tensor(t).ravel() for t in tables])
    return pm.Potential(COUNTS_POTENTIAL, pt.dot(values, pt.log(theta[used])))


def dirichlet_table(name: str, alpha: np.ndarray, *, dims=None):
    """A table whose rows are ``Dirichlet(alpha[j])``, declared by stick-breaking.

    For a row of ``r`` states, ``v_k ~ Beta(alpha_k, sum_{j > k} alpha_j)`` for ``k < r - 1``
    (the free variable ``<name>_stick``, shape ``(rows, r - 1)``) and ``theta_k = v_k
    prod_{j < k} (1 - v_j)``, ``theta_{r-1} = prod_{j < r-1} (1 - v_j)``: the Dirichlet
    distribution exactly (Connor and Mosimann 1969; its density in ``theta`` is the
    Dirichlet's, see ``tests/models/test_count_declarations.py``). The table is the
    deterministic ``name``. With one state the rows are the constant 1 (no free variable).

    Parameters
    ----------
    name : str
    alpha : numpy.ndarray, shape (rows, r)
        Positive concentrations.
    dims : tuple of str, optional
        The table's dims.
    """
    import pymc as pm
    import pytensor.tensor as pt

    alpha = np.asarray(alpha, np.float64)
    if alpha.shape[-1] == 1:
        return pm.Deterministic(name, pt.ones(alpha.shape), dims=dims)
    after = np.cumsum(alpha[..., ::-1], axis=-1)[..., ::-1][..., 1:]  # sum_{j > k} alpha_j
    v = pm.Beta(f"{name}_stick", alpha=alpha[..., :-1], beta=after)
    ones = pt.ones_like(v[..., :1])
    left = pt.concatenate([ones, pt.cumprod(1 - v, axis=-1)], axis=-1)  # prod_{j < k}
    return pm.Deterministic(name, left * pt.concatenate([v, ones], axis=-1), dims=dims)
