"""The analytic side of a cross-check, as every model family returns it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AnalyticFit", "ExactMarginal"]


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
    dist : scipy.stats frozen distribution
        Gives mean, sd and quantiles exactly.
    """

    name: str
    var: str
    coords: dict
    dist: Any


@dataclass
class AnalyticFit:
    """A closed-form fit: what ``posterior.json`` holds, plus the oracles for the check.

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
    n_rows : int
        Rows absorbed.
    batches : list of dict
        Name, fingerprint and rows of each batch.
    trajectory : list of dict
        Per-batch posterior summaries (streams).
    seconds : float
        Wall time of the fit.
    state : object
        The engine's final posterior object, for Python users.
    """

    model: str
    parameters: dict
    marginals: list[ExactMarginal]
    log_evidence: float | None = None
    n_rows: int = 0
    batches: list[dict] = field(default_factory=list)
    trajectory: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    state: Any = None

    def to_json(self) -> dict:
        """The content of ``posterior.json``."""
        return {
            "model": self.model,
            "parameters": self.parameters,
            "log_evidence": self.log_evidence,
            "n_rows": self.n_rows,
            "batches": self.batches,
            "trajectory": self.trajectory,
            "seconds": self.seconds,
        }
