"""The analytic side of a cross-check, as every model family returns it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["AnalyticFit", "ExactMarginal", "FitRecord", "PointEstimate", "Posterior"]


@dataclass(frozen=True)
class ExactMarginal:
    """The exact marginal posterior of one scalar parameter: the cross-check's oracle.

    Attributes
    ----------
    name : str
        Display name, for example ``"theta[x1]"``.
    var : str
        The variable in the PyMC model (``"theta"``).
    coords : dict
        Selection of the scalar inside ``var`` (``{"feature": "x1"}``); empty for scalars.
    dist : scipy.stats frozen distribution or None
        Gives mean, sd and quantiles exactly. None when only the exact mean is known
        (for example a posterior predictive probability, which is a posterior mean with no
        closed-form marginal distribution): then give ``exact_mean``.
    exact_mean : float, optional
        The exact posterior mean, for an oracle without ``dist``. Only the mean is compared;
        sd and quantiles are left unchecked (NaN z, not counted in the correction).
    """

    name: str
    var: str
    coords: dict
    dist: Any
    exact_mean: float | None = None

    def __post_init__(self):
        if self.dist is None and self.exact_mean is None:
            raise ValueError(f"{self.name}: give a distribution or an exact mean")

    @property
    def mean(self) -> float:
        """The exact posterior mean (from ``dist`` when there is one)."""
        return float(self.dist.mean()) if self.dist is not None else float(self.exact_mean)


@dataclass(frozen=True)
class PointEstimate:
    """A point estimate (EM, type-II maximum likelihood) of one scalar parameter.

    It is to be compared with the full posterior of the model declared without the fit.

    Attributes
    ----------
    name : str
        Display name, for example ``"w[x1]"``.
    var : str
        The variable in the PyMC model.
    coords : dict
        Selection of the scalar inside ``var``; empty for scalars.
    value : float
        The estimate.
    nonzero : bool or None
        What the estimator says about the support: True (kept, non-zero), False (pruned,
        exactly zero) or None (no claim). Compared with whether the posterior's central
        interval excludes 0 (see :func:`bayescheck.inference.checking.compare.compare_estimates`).
    """

    name: str
    var: str
    coords: dict
    value: float
    nonzero: bool | None = None


@dataclass
class Posterior:
    """A fit's posterior: what ``posterior.json`` holds about the parameters, and the oracles.

    Attributes
    ----------
    model : str
        The spec's ``model`` value.
    parameters : dict
        Name -> summary (mean, sd, cov where it exists, distribution and its parameters).
    marginals : list of ExactMarginal
        One per scalar parameter compared with NUTS.
    log_evidence : float or None
        log marginal likelihood, where the prior is proper.
    priors : list of ExactMarginal
        Optional prior marginals of the same scalars (matched by ``name``), drawn dashed in
        the report's marginal plots.
    estimates : list of PointEstimate
        Point estimates (EM, type-II ML), checked against the posterior of the model without
        the estimates plugged in (``declare_full(source, fit=...)`` where the family's
        ``declare`` is conditioned on the fit, as ARD's is; else ``declare(source,
        fit=...)``), while ``marginals`` are checked against ``declare(source, fit=...)``.
    state : object
        The engine's final posterior object, for Python users.
    """

    model: str
    parameters: dict
    marginals: list[ExactMarginal]
    log_evidence: float | None = None
    priors: list[ExactMarginal] = field(default_factory=list)
    estimates: list[PointEstimate] = field(default_factory=list)
    state: Any = None


@dataclass
class FitRecord:
    """The fit's own record: what it read, how it ran, what it found, what the check needs.

    Attributes
    ----------
    n_rows : int
        Rows absorbed.
    batches : list of dict
        Name, fingerprint and rows of each batch.
    trajectory : list of dict
        Per-batch posterior summaries (streams).
    seconds : float
        Wall time of the fit.
    info : dict
        What the engine reports about its run (iterations, convergence, objective per
        iteration, ...), kept in ``posterior.json`` as ``"fit"``.
    findings : dict
        Facts the family established about the data that ``posterior.json`` does not hold,
        as plain values (ARD: ``zero_columns``, ``constant_columns``, ``noise_collapsed``);
        :mod:`bayescheck.reports.fit_summary` puts them into words.
    certificates : list of dict
        Deterministic checks of the fit itself that need no sampler, each with at least
        ``"name"``, ``"verdict"`` ("pass" or "fail") and ``"reason"`` (ARD: the Tipping-Faul
        optimality conditions of its hyperparameters). ``check`` counts their verdicts with
        the cross-checks' and writes them to ``summary.json``.
    data_matrix : numpy.ndarray or None
        The rows the engine fitted (n x D), kept where the report draws the data (the
        mixture).
    declaration : dict
        What the model's ``declare(source, fit=...)`` needs from an engine or from the fit's
        pass over the files, computed by the family because models do not import engines
        (the mixture's k-means clustering, under ``"clustering"``; the regression's QR roots).
    posterior_checks : callable, optional
        This fit's own criteria added to the generic point-estimate comparison:
        ``posterior_checks(fit, comparison, idata, spec)`` edits the ``EstimateComparison``
        in place and returns it (the mixture judges its mode and responsibilities this way).
    """

    n_rows: int = 0
    batches: list[dict] = field(default_factory=list)
    trajectory: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    info: dict = field(default_factory=dict)
    findings: dict = field(default_factory=dict)
    certificates: list[dict] = field(default_factory=list)
    data_matrix: np.ndarray | None = None
    declaration: dict = field(default_factory=dict)
    posterior_checks: Callable | None = None


@dataclass
class AnalyticFit:
    """A closed-form (or EM / type-II ML) fit: its posterior and its own record.

    ``posterior.json`` is :meth:`to_json` (plus the lines of text that
    :func:`bayescheck.reports.fit_summary.posterior_document` adds).
    """

    posterior: Posterior
    record: FitRecord = field(default_factory=FitRecord)

    @property
    def model(self) -> str:
        """The spec's ``model`` value."""
        return self.posterior.model

    def cpt(self, node: str):
        """A network fit's CPT of ``node`` as a pandas table (parents' states x node's states).

        See :func:`bayescheck.inference.cpt_tables.cpt_table`.
        """
        from .cpt_tables import cpt_table

        return cpt_table(self.posterior.parameters, node)

    def tabular_cpd(self, node: str):
        """A network fit's CPT of ``node`` as pgmpy's ``TabularCPD`` (needs pgmpy)."""
        from .cpt_tables import tabular_cpd

        return tabular_cpd(self.posterior.parameters, node)

    def to_pgmpy(self):
        """A network fit as pgmpy's ``DiscreteBayesianNetwork``, checked (needs pgmpy)."""
        from .cpt_tables import to_pgmpy

        return to_pgmpy(self.posterior.parameters)

    def to_json(self) -> dict:
        """The content of ``posterior.json`` without the lines of text."""
        post, record = self.posterior, self.record
        return {
            "model": post.model,
            "parameters": post.parameters,
            "log_evidence": post.log_evidence,
            "n_rows": record.n_rows,
            "batches": record.batches,
            "trajectory": record.trajectory,
            "seconds": record.seconds,
            **({"fit": record.info} if record.info else {}),
        }

