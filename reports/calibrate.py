"""``calibrate``: simulation-based calibration of a spec's engine against its declaration.

Parameters and data are drawn from the declared PyMC model (``pm.sample_prior_predictive``)
on the spec's own design (its features, its number of rows); each simulated data set is fitted
by the analytic engine (default) or by NUTS, and the posterior CDF at the true value, or the
rank of the truth among NUTS draws, is tested for uniformity (:mod:`inference.calibration`).
A model family takes part by giving its model object a method
``simulated_frame(frame, observed) -> DataFrame``, which writes one simulation's observed
values into a copy of the spec's data. A family whose engine reads more than the
parameters' posterior from the data also gives ``calibration_model(fit) -> model``: the model
with that held at the fit on the spec's data, so that simulations and engine share it. ARD
holds its type-II ML hyperparameters (the engine's posterior is then exact: ARD
conditional); the categorical models hold their label sets (a simulation may miss a label).
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from inference.calibration import CalibrationResult, default_bins, uniformity
from inference.dispatch import fit
from models.data import DataSource
from models.errors import BayescheckError
from models.interface import Calibratable
from models.spec import Spec

from .calibration_report import CALIBRATION_JSON, fingerprints
from .writers import write_json

__all__ = ["CALIBRATION_JSON", "EXIT_CODES", "run_calibration"]

EXIT_CODES = {"pass": 0, "fail": 1}


def _truths(prior, marginals) -> dict[str, np.ndarray]:
    """Each parameter's true value in every simulation (one array per name)."""
    out = {}
    for m in marginals:
        da = prior[m.var]
        if m.coords:
            da = da.sel(m.coords)
        out[m.name] = np.asarray(da.values, dtype=np.float64).reshape(-1)
    return out


def _observed(prior_predictive) -> dict[str, np.ndarray]:
    """Each observed variable's simulated values, simulations first."""
    return {name: np.asarray(prior_predictive[name].values).reshape(
        -1, *prior_predictive[name].shape[2:]) for name in prior_predictive.data_vars}


def check_arguments(spec: Spec, simulations: int) -> None:
    """Refuse a calibration that cannot run, before anything is written.

    Raises
    ------
    BayescheckError
        For a model without an exact posterior, or fewer than 10 simulations.
    """
    if not isinstance(spec.model, Calibratable):
        raise BayescheckError(f"calibrate does not support model {spec.model.name!r}: it "
                              f"calibrates engines with an exact posterior (see README, "
                              f"Calibration)")
    if simulations < 10:
        raise BayescheckError(f"--simulations must be at least 10, got {simulations}")


def run_calibration(spec: Spec, out: str | Path, *, simulations: int = 1000, seed: int = 0,
                    engine: str = "analytic", fit_model=None, draws: int = 199,
                    alpha: float = 0.01, progress: bool = False) -> CalibrationResult:
    """Run simulation-based calibration and write ``calibration.json``.

    ``bayescheck calibrate`` then draws the report (:func:`reports.report.render_run`), whose
    calibration section is made from that file.

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
    alpha : float
        Family-wise false-alarm rate.
    progress : bool
        Print progress and a time estimate to stderr.

    Returns
    -------
    CalibrationResult
    """
    import pymc as pm

    check_arguments(spec, simulations)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    spec_text = spec.text()
    frame = spec.data.read_all()
    on_data = fit(spec)
    held = spec.model.calibration_model(on_data)
    if held is not spec.model:
        spec = replace(spec, model=held)
        on_data = fit(spec)
    declared = spec.model.declare(spec.data)
    with _pymc_log(logging.INFO if progress else logging.WARNING):
        prior = pm.sample_prior_predictive(draws=simulations, model=declared,
                                           random_seed=seed)
    engine_model = fit_model or spec.model
    # Names and variables of the parameters; an oracle with an exact mean only (no
    # distribution) has no CDF to calibrate.
    oracle = [m for m in on_data.marginals if m.dist is not None]
    # Each simulation's algebra is small: multithreaded BLAS would only spin on it.
    limits = threadpool_limits(1) if engine == "analytic" else contextlib.nullcontext()
    with limits:
        u, levels = _simulate(spec, engine_model, frame, prior, oracle, engine=engine,
                              draws=draws, seed=seed, progress=progress)
    bins = default_bins(simulations)
    if levels is not None:
        bins = max(b for b in range(1, bins + 1) if levels % b == 0)
    result = uniformity(u, bins=bins, alpha=alpha, discrete_levels=levels)
    seconds = time.perf_counter() - started
    write_json(out / CALIBRATION_JSON, {
        "model": spec.model.name, "engine": engine, "seed": seed, "seconds": seconds,
        "spec_path": str(spec.path) if spec.path else "(Python)",
        "spec_text": spec_text, "data_fingerprints": fingerprints(on_data),
        **result.to_json()})
    return result


def _simulate(spec, engine_model, frame, prior, oracle, *, engine, draws, seed, progress):
    """The u value (posterior CDF, or normalised rank) of every parameter in every simulation."""
    simulations = prior.prior.sizes["draw"] * prior.prior.sizes["chain"]
    u = {m.name: np.empty(simulations) for m in oracle}
    truths, observed = _truths(prior.prior, oracle), _observed(prior.prior_predictive)
    levels = None
    bar = _ProgressBar(simulations) if progress else None
    for s in range(simulations):
        sim = spec.model.simulated_frame(frame, {k: v[s] for k, v in observed.items()})
        sim_spec = replace(spec, model=engine_model, data=DataSource.from_frame(sim), path=None)
        truth = {name: values[s] for name, values in truths.items()}
        if engine == "analytic":
            for m in fit(sim_spec).marginals:
                if m.name in u:
                    u[m.name][s] = float(m.dist.cdf(truth[m.name]))
        else:
            ranks, levels = _nuts_ranks(sim_spec, truth, draws=draws, seed=seed + s)
            for name, r in ranks.items():
                u[name][s] = r / levels
        if bar is not None:
            bar.update(s + 1)
    return u, levels


@contextlib.contextmanager
def _pymc_log(level: int):
    """PyMC's logger at ``level`` inside the block (its "Sampling: [...]" line is INFO)."""
    logger = logging.getLogger("pymc")
    before = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(before)


class _ProgressBar:
    """Simulations done and the time left, on stderr.

    On a terminal one line redrawn after every simulation; otherwise (a log) a line after the
    first simulation, which carries the first estimate, and after every 5 %.
    """

    def __init__(self, total: int, stream=None):
        self.total, self.stream = total, stream or sys.stderr
        self.tty = self.stream.isatty()
        self.every = max(1, total // 20)
        self.started = time.perf_counter()

    def update(self, done: int) -> None:
        """Report ``done`` simulations finished."""
        if not self.tty and done != 1 and done % self.every and done != self.total:
            return
        spent = time.perf_counter() - self.started
        left = spent / done * (self.total - done)
        filled = round(30 * done / self.total)
        line = (f"[{'#' * filled}{'.' * (30 - filled)}] simulation {done}/{self.total}, "
                f"{spent:.1f} s, about {left:.0f} s left")
        end = "\n" if not self.tty or done == self.total else ""
        print(("\r" if self.tty else "") + line, end=end, file=self.stream, flush=True)


def _nuts_ranks(spec: Spec, truth: dict[str, float], *, draws: int, seed: int):
    """Rank of each true value among ``draws`` NUTS draws thinned to be nearly independent."""
    from inference.compare import draws_from_idata
    from inference.nuts import sample_nuts

    marginals = [m for m in fit(spec).marginals if m.name in truth]
    sample = sample_nuts(spec.model.declare(spec.data), draws=draws * 2, tune=500, chains=2,
                         seed=seed)
    all_draws = draws_from_idata(sample.idata, marginals)
    ranks = {}
    for name, x in all_draws.items():
        flat = x.reshape(-1)
        kept = flat[:: max(1, math.ceil(flat.size / draws))][:draws]
        ranks[name] = int(np.sum(kept < truth[name]))
    return ranks, draws + 1
