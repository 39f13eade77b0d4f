"""Resource limits: what a fit, a check or a calibration would need, refused before it allocates.

Every size a spec, its data or an estimator's arguments can make large is estimated here from
the sizes alone, before an array of that size exists, and refused with the estimate, the limit
and what to change (:class:`TooLarge`, exit code 2 on the command line):

- d x d matrices of the regression and mixture engines (:func:`require_memory`);
- count tables: a network node's CPT (its parents' configurations x its states), the
  categorical naive Bayes and one-dependence (SPODE, AODE, TAN) tables, with the
  ``posterior.json`` they would write (:func:`require_cells`, :func:`require_cpts`);
- the sampler's settings and the memory of its draws (:func:`check_sampler_setting`,
  :func:`require_draws_memory`), the calibration's simulations and a local cluster's workers
  (:func:`check_simulations`, :func:`check_workers`).

The time a check's sampling will take is estimated from its compiled model in
:mod:`bayescheck.inference.checking.cost`, which refuses through :class:`TooLarge` as well.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

from .errors import BayescheckError

__all__ = ["BYTES_PER_CPT_CELL", "JSON_BYTES_PER_CPT_CELL", "MAX_CHAINS", "MAX_DRAWS",
           "MAX_POSTERIOR_JSON", "MAX_SIMULATIONS", "MAX_TUNE", "TooLarge", "available_memory",
           "require_category_tables",
           "check_sampler_setting", "check_simulations", "check_workers", "cpt_cells",
           "draws_bytes", "max_workers", "readable_bytes", "require_cells", "require_cpts",
           "require_draws_memory", "require_memory", "square_matrices"]

#: Memory of a fit per CPT cell: the counts, the Dirichlet's concentration, mean and sd, and
#: their rows in the ``posterior.json`` document being built (Python floats and labels).
#: Measured: 2,100 bytes per cell for a node with 14 binary parents, 2,400 with 20.
BYTES_PER_CPT_CELL = 2_500
#: ``posterior.json`` per CPT cell (four numbers and a share of the row's label); measured
#: 180 bytes with 14 binary parents, 200 with 20.
JSON_BYTES_PER_CPT_CELL = 200
#: The largest ``posterior.json`` written: a file no JSON reader loads comfortably.
MAX_POSTERIOR_JSON = 1 << 30

#: Draws kept per chain, tuning steps per chain and chains: beyond these nuts-rs aborts the
#: process (a Rust panic, exit 134) or a check cannot end; a verdict needs far fewer.
MAX_DRAWS = 10_000_000
MAX_TUNE = 10_000_000
MAX_CHAINS = 1_000
#: Sample statistics nutpie keeps per draw (depth, step size, energy, divergence, ...).
STATS_PER_DRAW = 12
#: Simulations of a calibration: a thousand resolve a rank histogram; this bound keeps a typo
#: (an extra three zeros) from running for days.
MAX_SIMULATIONS = 100_000
#: Workers of a local cluster per core: more processes than that only share the same cores.
WORKERS_PER_CORE = 4

_SAMPLER_LIMITS = {"draws": MAX_DRAWS, "tune": MAX_TUNE, "chains": MAX_CHAINS}


class TooLarge(BayescheckError, ValueError):
    """A request this machine cannot hold or finish: the size, the limit and what to change.

    A ``ValueError`` too, so that scikit-learn's conventions (and a caller's ``except
    ValueError``) hold for the estimators.

    Parameters
    ----------
    message : str
        The estimate, the limit and the remedy.
    path : str or os.PathLike, optional
        The spec or data file.
    key : str, optional
        The spec key (or command-line option) at fault.
    column : str, optional
        The data column (or node) at fault.
    """

    def __init__(self, message: str, *, path=None, key: str | None = None,
                 column: str | None = None):
        self.path = None if path is None else str(path)
        self.key, self.column = key, column
        parts = [p for p in (self.path, key and f"key '{key}'",
                             column and f"column '{column}'") if p]
        super().__init__(f"{', '.join(parts)}: {message}" if parts else message)


def available_memory() -> int:
    """Physical memory of this machine in bytes (a large number where it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: do not refuse anything
        return 1 << 62


def readable_bytes(n: float) -> str:
    """``n`` bytes in the largest unit that keeps a number of at least 1 (``"1.8 MB"``)."""
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def square_matrices(count: int, dim: int) -> int:
    """Bytes of ``count`` float64 matrices of ``dim x dim``."""
    return 8 * count * dim * dim


def require_memory(needed: int, what: str, *, path: Path | None = None, key: str | None = None,
                   column: str | None = None,
                   remedy: str = "use fewer features (or components)") -> None:
    """Refuse work that needs more memory than the machine has.

    Parameters
    ----------
    needed : int
        Estimated bytes.
    what : str
        What takes the memory, for the message (``"3 posterior matrices of 10^6 x 10^6"``).
    path, key, column : optional
        The file, and the key or column whose size is at fault.
    remedy : str
        What to change.

    Raises
    ------
    TooLarge
        With the estimate and the machine's memory.
    """
    have = available_memory()
    if needed > have:
        raise TooLarge(f"too large for this machine: {what} need about "
                       f"{readable_bytes(needed)} of memory, and it has {readable_bytes(have)}; "
                       f"{remedy}", path=path, key=key, column=column)


def require_cells(cells: int, what: str, *, bytes_per_cell: int, json_bytes_per_cell: int = 0,
                  path: Path | None = None, key: str | None = None, column: str | None = None,
                  remedy: str) -> None:
    """Refuse count tables whose memory, or whose ``posterior.json``, is out of bounds.

    Parameters
    ----------
    cells : int
        Cells of the tables (an exact integer: a product of category counts).
    what : str
        Which tables, for the message (``"node 'B': 2^30 parent configurations x 2 states"``).
    bytes_per_cell, json_bytes_per_cell : int
        Memory of the fit and size of ``posterior.json`` per cell (0: nothing written).
    path, key, column : optional
        Where the size comes from.
    remedy : str
        What to change.

    Raises
    ------
    TooLarge
        Above the machine's memory or :data:`MAX_POSTERIOR_JSON`, naming both estimates.
    """
    needed, written = cells * bytes_per_cell, cells * json_bytes_per_cell
    have = available_memory()
    if needed <= have and written <= MAX_POSTERIOR_JSON:
        return
    file = (f" and a posterior.json of about {readable_bytes(written)} (at most "
            f"{readable_bytes(MAX_POSTERIOR_JSON)} is written)" if json_bytes_per_cell else "")
    raise TooLarge(f"too large for this machine: {what}: {cells:,} table cells need about "
                   f"{readable_bytes(needed)} of memory{file}, and the machine has "
                   f"{readable_bytes(have)}; {remedy}", path=path, key=key, column=column)


def cpt_cells(card: Sequence[int], parents: Sequence[Sequence[int]]) -> list[int]:
    """Cells of every node's CPT: its parents' joint configurations times its states."""
    return [math.prod(int(card[p]) for p in pa) * int(r)
            for pa, r in zip(parents, card, strict=True)]


def require_cpts(nodes: Sequence[str], card: Sequence[int], parents: Sequence[Sequence[int]],
                 *, path: Path | None = None, key: str | None = None,
                 remedy: str | None = None, writes: bool = True) -> None:
    """Refuse a network whose CPTs this machine cannot hold or write.

    Parameters
    ----------
    nodes : sequence of str
        The node names.
    card : sequence of int
        Every node's number of states.
    parents : sequence of sequence of int
        Every node's parents (indices into ``nodes``).
    path, key : optional
        The spec (or data) file and key the sizes come from.
    remedy : str, optional
        What to change (default: fewer parents for the largest node, or fewer states).
    writes : bool
        The CPTs are written to ``posterior.json`` (``fit``), so its size is bounded too
        (not for an estimator, which keeps them in memory).

    Raises
    ------
    TooLarge
        Naming the node with the largest CPT (as the column), its size, the memory and
        posterior.json estimates and the machine's memory.
    """
    cells = cpt_cells(card, parents)
    worst = max(range(len(cells)), key=cells.__getitem__, default=None)
    if worst is None:
        return
    name, pa = nodes[worst], parents[worst]
    q = cells[worst] // max(int(card[worst]), 1)
    what = (f"node {name!r} has {len(pa)} parent(s) with {q:,} joint configurations x "
            f"{card[worst]:,} states = {cells[worst]:,} CPT cells (the network: "
            f"{sum(cells):,})")
    remedy = remedy or (f"give {name!r} fewer parents (fewer [structure] edges into it), or "
                        f"merge rare states of it and of its parents")
    require_cells(sum(cells), what, bytes_per_cell=BYTES_PER_CPT_CELL,
                  json_bytes_per_cell=JSON_BYTES_PER_CPT_CELL if writes else 0, path=path,
                  key=key, column=name, remedy=remedy)


#: Memory per cell of categorical naive Bayes and one-dependence tables (counts, their float
#: copy, the log probabilities and the category lists).
BYTES_PER_CATEGORY_CELL = 48


def require_category_tables(names: Sequence[str], sizes: Sequence[int], n_classes: int, *,
                            pairs: bool = False, path: Path | None = None,
                            remedy: str) -> None:
    """Refuse categorical tables (a row per class) this machine cannot hold.

    Parameters
    ----------
    names : sequence of str
        The columns.
    sizes : sequence of int
        Categories per column.
    n_classes : int
        Classes: every table has a row per class.
    pairs : bool
        A table per pair of columns too (SPODE, AODE, TAN), not only one per column (naive
        Bayes).
    path : optional
        The data file the categories come from.
    remedy : str
        What to change.

    Raises
    ------
    TooLarge
        Naming the column with the most categories, the cells and the machine's memory.
    """
    sizes = [int(n) for n in sizes]
    if not sizes:
        return
    total = sum(sizes)
    cells = n_classes * (1 + total + ((total * total - sum(n * n for n in sizes)) // 2
                                      if pairs else 0))
    j = max(range(len(sizes)), key=sizes.__getitem__)
    what = (f"{sizes[j]:,} categories x {n_classes} classes"
            + (" in its table and in its tables with every other column" if pairs else ""))
    require_cells(cells, what, bytes_per_cell=BYTES_PER_CATEGORY_CELL, path=path,
                  column=names[j], remedy=remedy)


def check_sampler_setting(name: str, value: int, *, path: Path | None = None,
                          key: str | None = None) -> None:
    """Refuse ``draws``, ``tune`` or ``chains`` above its limit, naming the key.

    Parameters
    ----------
    name : {"draws", "tune", "chains"}
        The setting.
    value : int
        Its value.
    path, key : optional
        The spec and its key (``"sampling.draws"``), or ``key="--draws"`` for an option.

    Raises
    ------
    TooLarge
        Above :data:`MAX_DRAWS`, :data:`MAX_TUNE` or :data:`MAX_CHAINS`.
    """
    limit = _SAMPLER_LIMITS[name]
    if value > limit:
        hint = {"draws": "a verdict needs a few thousand draws per chain",
                "tune": "a few thousand tuning steps adapt any model the check can sample",
                "chains": "4 chains give the verdict; more only repeat it"}[name]
        raise TooLarge(f"{name} = {value:,} is above the limit of {limit:,} per check ({hint}); "
                       f"lower it", path=path, key=key or name)


def draws_bytes(parameters: int, draws: int, chains: int) -> int:
    """Memory of the kept draws: (parameters + sampler statistics) x draws x chains x 8."""
    return (int(parameters) + STATS_PER_DRAW) * int(draws) * int(chains) * 8


def require_draws_memory(parameters: int, draws: int, chains: int) -> None:
    """Refuse a sampling whose draws this machine cannot hold.

    Raises
    ------
    TooLarge
        Naming the estimate, the settings and the machine's memory.
    """
    require_memory(draws_bytes(parameters, draws, chains),
                   f"{draws:,} draws x {chains:,} chains of {parameters:,} parameters (and "
                   f"{STATS_PER_DRAW} sampler statistics per draw)", key="sampling.draws",
                   remedy="lower [sampling] draws or chains (--draws, --chains)")


def check_simulations(simulations: int) -> None:
    """Refuse a calibration of more than :data:`MAX_SIMULATIONS` simulations.

    Raises
    ------
    TooLarge
        Naming the option, the limit and what to change.
    """
    if simulations > MAX_SIMULATIONS:
        raise TooLarge(f"{simulations:,} simulations is above the limit of "
                       f"{MAX_SIMULATIONS:,} (1000 resolve a rank histogram; each simulation "
                       f"is a fit, or a NUTS run); lower --simulations", key="--simulations")


def max_workers() -> int:
    """The most workers of a local cluster: :data:`WORKERS_PER_CORE` per core."""
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


def check_workers(workers: int) -> None:
    """Refuse more local-cluster workers than :func:`max_workers`.

    Raises
    ------
    TooLarge
        Naming the option, the limit and the machine's cores.
    """
    limit = max_workers()
    if workers > limit:
        raise TooLarge(f"{workers:,} workers is above the limit of {limit} for this machine "
                       f"({os.cpu_count() or 1} cores, {WORKERS_PER_CORE} workers per core; each "
                       f"worker is a process); lower --workers, or give --scheduler the address "
                       f"of a cluster", key="--workers")
