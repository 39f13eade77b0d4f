"""``calibrate``: run simulation-based calibration and write ``calibration.json``.

The simulations and the uniformity tests are
:func:`bayescheck.inference.checking.sbc.run_sbc`; this module adds the progress bar
(:class:`~bayescheck.inference.checking.progress.ProgressBar`) and the file the report's
calibration section is drawn from.
"""

from __future__ import annotations

import time
from pathlib import Path

from bayescheck.inference.checking.calibration import CalibrationResult
from bayescheck.inference.checking.progress import ProgressBar
from bayescheck.inference.checking.sbc import check_calibratable as check_arguments
from bayescheck.inference.checking.sbc import run_sbc
from bayescheck.models.spec import Spec

from .calibration_report import CALIBRATION_JSON, fingerprints
from .writers import write_json

__all__ = ["CALIBRATION_JSON", "EXIT_CODES", "check_arguments", "run_calibration"]

EXIT_CODES = {"pass": 0, "fail": 1}


def run_calibration(spec: Spec, out: str | Path, *, simulations: int = 1000, seed: int = 0,
                    engine: str = "analytic", fit_model=None, draws: int = 199, tune: int = 500,
                    alpha: float = 0.01, progress: bool = False,
                    blank=None, block: int | None = None) -> CalibrationResult:
    """Run simulation-based calibration and write ``calibration.json``.

    ``bayescheck calibrate`` then draws the report (:func:`bayescheck.reports.report.render_run`),
    whose calibration section is made from that file.

    Parameters
    ----------
    spec : models.Spec
        Its model is declared in PyMC to simulate; its data give the design.
    out : str or pathlib.Path
        Output folder.
    simulations : int
        Number of simulated data sets (Talts et al. suggest 100 to 1000).
    seed : int
        Seed of the prior-predictive simulations (and of NUTS).
    engine : {"analytic", "nuts"}
        What computes each posterior.
    fit_model : object, optional
        A model object for the engine that differs from the declared one (tests use it to
        show that a mismatch between declaration and engine fails).
    draws : int
        Draws per chain kept from NUTS when ``engine="nuts"`` (ranks are taken among
        ``draws`` thinned draws, so there are ``draws + 1`` rank levels).
    tune : int
        NUTS tuning steps per chain.
    alpha : float
        Family-wise false-alarm rate.
    progress : bool
        Print progress and a time estimate to stderr.
    blank : callable, optional
        A missingness mechanism applied to each simulation (tests and benchmarks; see
        :func:`bayescheck.inference.checking.sbc.run_sbc`).
    block : int, optional
        Simulations per compiled declaration under NUTS for a model that declares its
        simulations together (:func:`bayescheck.inference.checking.sbc.run_sbc`); default: all in
        one.

    Returns
    -------
    CalibrationResult
    """
    check_arguments(spec, simulations)
    started = time.perf_counter()
    spec_text = spec.text()
    bar = ProgressBar(simulations) if progress else None
    run = run_sbc(spec, simulations=simulations, seed=seed, engine=engine,
                  fit_model=fit_model, draws=draws, tune=tune, alpha=alpha, log_info=progress,
                  on_simulation=None if bar is None else lambda done, total: bar.update(done),
                  blank=blank, block=block)
    seconds = time.perf_counter() - started
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / CALIBRATION_JSON, {
        "model": run.model, "engine": engine, "seed": seed, "seconds": seconds,
        "spec_path": str(spec.path) if spec.path else "(Python)",
        "spec_text": spec_text, "data_fingerprints": fingerprints(run.on_data),
        **run.result.to_json()})
    return run.result
