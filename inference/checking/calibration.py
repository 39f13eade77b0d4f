"""Simulation-based calibration (Talts et al. 2018): testing whether ranks of the truth are uniform.

For each simulation s, parameters theta_s are drawn from the declared model's prior and data
from its likelihood; the engine under test then computes the posterior given those data. If
the engine and the declaration describe the same model, the posterior CDF at the truth,
u_s = F_s(theta_s), is uniform on [0, 1] (the probability integral transform; the rank of the
truth among L posterior draws divided by L + 1 is its discrete version, and with draws from
NUTS that is what is used). Uniformity is tested per parameter with a chi-square test on equal
bins, and the verdict is Bonferroni-corrected over the parameters, so a correct model fails
with probability at most ``alpha``.

This module is numpy / scipy only: it takes the u values (or ranks), not models.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import stats

__all__ = ["CalibrationResult", "ParameterCalibration", "default_bins", "uniformity"]


def default_bins(simulations: int) -> int:
    """Bins for the rank histogram: about 20 expected per bin, between 5 and 50."""
    return int(np.clip(simulations // 20, 5, 50))


@dataclass
class ParameterCalibration:
    """One parameter's calibration.

    The histogram of u (or of the ranks), its chi-square p-value (``p_value``) and that
    p-value Bonferroni-adjusted for the number of parameters (``p_adjusted``, min(1, k p):
    the parameter fails when it is below the family-wise ``alpha``), the KS p-value, and the
    u values themselves (``pit``, one per simulation, for the ECDF-difference plot).
    """

    name: str
    counts: list[int]
    chi2: float
    p_value: float
    p_adjusted: float
    ks_p_value: float
    mean_u: float
    verdict: str = ""
    pit: list[float] = field(default_factory=list)


@dataclass
class CalibrationResult:
    """All parameters, the corrected threshold and the verdict."""

    parameters: list[ParameterCalibration]
    simulations: int
    bins: int
    alpha: float
    threshold: float
    verdict: str

    def to_json(self) -> dict:
        """The statistics part of ``calibration.json``."""
        return {"simulations": self.simulations, "bins": self.bins, "alpha": self.alpha,
                "p_value_threshold": self.threshold, "verdict": self.verdict,
                "parameters": [asdict(p) for p in self.parameters]}


def uniformity(u: dict[str, np.ndarray], *, bins: int | None = None, alpha: float = 0.01,
               discrete_levels: int | None = None) -> CalibrationResult:
    """Test each parameter's PIT values (or normalised ranks) for uniformity.

    Parameters
    ----------
    u : dict of str to numpy.ndarray
        Name -> values in [0, 1], one per simulation.
    bins : int, optional
        Equal-width bins of the chi-square test (default :func:`default_bins`).
    alpha : float
        Family-wise false-alarm rate; each parameter is tested at ``alpha / k``.
    discrete_levels : int, optional
        When the values are ranks r / (L + 1) with r in 0..L, the number of levels L + 1;
        bins then hold whole rank values (``bins`` must divide it) and the KS test, which
        assumes continuity, is reported but not used.

    Returns
    -------
    CalibrationResult
    """
    names = list(u)
    n = len(np.asarray(u[names[0]]))
    bins = bins or default_bins(n)
    if discrete_levels is not None and discrete_levels % bins:
        raise ValueError(f"bins ({bins}) must divide the number of rank levels "
                         f"({discrete_levels})")
    threshold = alpha / len(names)
    rows = []
    for name in names:
        values = np.asarray(u[name], dtype=np.float64)
        if values.shape != (n,) or not np.all((values >= 0) & (values <= 1)):
            raise ValueError(f"{name}: expected {n} values in [0, 1]")
        if discrete_levels is not None:
            ranks = np.rint(values * discrete_levels).astype(int)
            counts = np.bincount(np.minimum(ranks, discrete_levels - 1) * bins // discrete_levels,
                                 minlength=bins)
        else:
            counts = np.bincount(np.minimum((values * bins).astype(int), bins - 1),
                                 minlength=bins)
        chi2, p = stats.chisquare(counts)
        ks = stats.kstest(values, "uniform").pvalue
        rows.append(ParameterCalibration(name, counts.tolist(), float(chi2), float(p),
                                         min(1.0, float(p) * len(names)), float(ks),
                                         float(values.mean()),
                                         "fail" if p < threshold else "pass", values.tolist()))
    verdict = "fail" if any(r.verdict == "fail" for r in rows) else "pass"
    return CalibrationResult(rows, n, bins, alpha, threshold, verdict)
