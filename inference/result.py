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
    priors : list of ExactMarginal
        Optional prior marginals of the same scalars (matched by ``name``), drawn dashed in
        the report's marginal plots.
    notes : list of str
        Lines ``bayescheck fit`` prints after the marginals (for example query predictions),
        also kept in ``posterior.json``.
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
    priors: list[ExactMarginal] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

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
            **({"notes": self.notes} if self.notes else {}),
        }
