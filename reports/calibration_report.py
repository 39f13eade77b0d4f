"""The calibration section of ``report.html``, made from ``calibration.json``.

:func:`calibration_section` reads the file's results and draws one figure with a row per
parameter: the rank histogram the chi-square test judges, with each bin's 99 % binomial band
under uniformity, and the ECDF difference of the u values (ECDF(u) - u) with a 99 %
simultaneous band (Säilynoja, Bürkner and Vehtari 2022, "Graphical test for discrete
uniformity and its applications in goodness-of-fit evaluation and multiple sample
comparison", Statistics and Computing 32:32; the band is computed by
``arviz_stats.ecdf_utils``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .plots import figure_uri, new_figure
from .writers import read_json

__all__ = ["BAND_PROB", "CALIBRATION_JSON", "MAX_CALIBRATION_ROWS", "calibration_figure",
           "calibration_only_context", "calibration_section", "fingerprints",
           "read_calibration", "same_run_inputs", "shown_parameters"]

#: Written by ``bayescheck calibrate`` (:func:`bayescheck.reports.calibrate.run_calibration`).
CALIBRATION_JSON = "calibration.json"

#: Probability of the ECDF-difference band holding over its whole length under uniformity.
BAND_PROB = 0.99
#: The ECDF difference is evaluated (and its band made simultaneous) at this many points.
BAND_POINTS = 100
#: At most this many parameters are drawn (the lowest p-values first).
MAX_CALIBRATION_ROWS = 12
_COLORS = {"pass": "#9ecae1", "fail": "#ef9a9a"}


def _simultaneous_band(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Evaluation points and the lower / upper ECDF band of ``n`` uniform values.

    The ECDF is evaluated at :data:`BAND_POINTS` evenly spaced points (Säilynoja et al.
    evaluate at K points); the pointwise level that makes the band simultaneous at those
    points is found by simulation (``arviz_stats.ecdf_utils``, 1000 uniform samples). At
    every one of the n - 1 points, as ``ecdf_pit`` does, it takes seconds for n = 1000; the
    band is then barely narrower.
    """
    from arviz_stats.ecdf_utils import get_pointwise_confidence_band, simulate_confidence_bands

    k = min(n, BAND_POINTS)
    x = np.arange(1, k) / k
    level = simulate_confidence_bands(n, 1, x, BAND_PROB, 1000, np.random.default_rng(0))
    lower, upper = get_pointwise_confidence_band(level, n, x)
    return np.r_[0.0, x, 1.0], np.r_[0.0, lower, 1.0], np.r_[0.0, upper, 1.0]


def shown_parameters(calibration: dict) -> list[dict]:
    """The parameters drawn: at most :data:`MAX_CALIBRATION_ROWS`, the lowest p-values first."""
    rows = sorted(calibration["parameters"], key=lambda p: p["p_value"])
    return rows[:MAX_CALIBRATION_ROWS]


def calibration_figure(calibration: dict) -> str:
    """Rank histogram and ECDF difference of each shown parameter (see the module notes).

    Parameters
    ----------
    calibration : dict
        The content of ``calibration.json``.

    Returns
    -------
    str
        A PNG data URI.
    """
    from scipy import stats

    shown = shown_parameters(calibration)
    n, bins = calibration["simulations"], calibration["bins"]
    lo, hi = stats.binom(n, 1 / bins).ppf([0.005, 0.995])
    x, band_lo, band_hi = _simultaneous_band(n)
    fig, axes = new_figure(9.0, 2.4 * len(shown), len(shown), 2, squeeze=False)
    for (hist_ax, ecdf_ax), p in zip(axes, shown, strict=True):
        hist_ax.axhspan(lo, hi, color="#e0e0e0", label="99 % band per bin")
        hist_ax.bar(np.arange(bins) + 0.5, p["counts"], width=1.0,
                    color=_COLORS.get(p["verdict"], "#bdbdbd"), edgecolor="white")
        hist_ax.axhline(n / bins, color="#636363", lw=1)
        hist_ax.set_title(f"{p['name']}  (chi-square p = {p['p_value']:.3g}, {p['verdict']})",
                          fontsize=10)
        hist_ax.set_xlabel("rank bin of the truth", fontsize=8)
        u = np.sort(np.asarray(p["pit"], dtype=np.float64))
        ecdf = np.searchsorted(u, x, side="right") / u.size
        ecdf_ax.fill_between(x, band_lo - x, band_hi - x, color="#e0e0e0",
                             label=f"{BAND_PROB:.0%} simultaneous band")
        ecdf_ax.plot(x, ecdf - x, color="#08519c", lw=1.2)
        ecdf_ax.axhline(0.0, color="#636363", lw=1)
        ecdf_ax.set_xlim(0, 1)
        ecdf_ax.set_title(f"{p['name']}: ECDF(u) − u", fontsize=10)
        ecdf_ax.set_xlabel("u (posterior CDF at the truth)", fontsize=8)
        for ax in (hist_ax, ecdf_ax):
            ax.tick_params(labelsize=8)
    axes[0][0].legend(fontsize=8, loc="lower right")
    axes[0][1].legend(fontsize=8, loc="lower right")
    return figure_uri(fig)


def fingerprints(fit) -> list[str]:
    """The SHA-256 fingerprints of the batches a fit read, in order (which data it saw)."""
    return [b["fingerprint"] for b in fit.record.batches]


def same_run_inputs(report: dict, calibration: dict) -> bool:
    """Whether a check's ``report.json`` and a ``calibration.json`` are of one spec and data.

    Both must have the same spec text and, where both record them, the same batch
    fingerprints (a file without fingerprints is judged by its spec alone).
    """
    if calibration.get("spec_text") != report.get("spec_text"):
        return False
    ours, theirs = calibration.get("data_fingerprints"), report.get("data_fingerprints")
    return ours is None or theirs is None or ours == theirs


def read_calibration(out: str | Path) -> dict | None:
    """The content of ``out/calibration.json``, or None when the folder has none."""
    return read_json(Path(out) / CALIBRATION_JSON)


def calibration_only_context(calibration: dict) -> dict:
    """The report's context for a folder with a calibration and no check."""
    sentence = ("the ranks of the true parameters among the engine's posteriors are "
                "consistent with uniform: the declaration and the engine agree."
                if calibration["verdict"] == "pass" else
                "the ranks of the true parameters are not uniform: the PyMC declaration and "
                "the engine disagree about the model.")
    return {"model": calibration["model"], "verdict": calibration["verdict"],
            "verdict_sentence": "Calibration: " + sentence, "checks": {}, "has_check": False,
            "spec_path": calibration.get("spec_path", "(unknown)"),
            "spec_text": calibration.get("spec_text", "")}


def calibration_section(calibration: dict) -> dict:
    """What the report's calibration section shows: ``calibration.json`` with its figure.

    Parameters
    ----------
    calibration : dict
        The content of ``calibration.json``.

    Returns
    -------
    dict
        The file's content plus ``figure`` (a PNG data URI, or None), ``figure_error`` and
        ``shown`` (how many parameters the figure draws).
    """
    k = len(calibration["parameters"])
    # Files written before the adjusted p-value was recorded get it from the raw one.
    parameters = [{"p_adjusted": min(1.0, k * p["p_value"]), **p}
                  for p in calibration["parameters"]]
    calibration = {**calibration, "parameters": parameters}
    section = {**calibration, "figure": None, "figure_error": None,
               "shown": len(shown_parameters(calibration))}
    try:
        section["figure"] = calibration_figure(calibration)
    except Exception as exc:  # noqa: BLE001 - a figure that fails must not lose the report
        section["figure_error"] = f"not drawn: {type(exc).__name__}: {exc}"
    return section
