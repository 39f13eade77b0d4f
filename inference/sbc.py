"""Simulation-based calibration (SBC) of a spec's engine against its PyMC declaration.

Parameters and data are drawn from the declared model (``pm.sample_prior_predictive``) on the
spec's own design (its features, its number of rows); each simulated data set is fitted by
the analytic engine (default) or by NUTS, and the posterior CDF at the true value, or the
rank of the truth among NUTS draws, is tested for uniformity (:mod:`inference.calibration`).

A model takes part by implementing :class:`models.interface.Calibratable`:
``simulated_frame(frame, observed)`` writes one simulation's observed values into a copy of
the spec's data, and ``calibration_model(fit)`` returns the model with whatever the engine
reads from the data besides the parameters' posterior held at the fit on the spec's data, so
that simulations and engine share it. ARD holds its type-II ML hyperparameters (the engine's
posterior is then exact: ARD conditional); the categorical models hold their label sets (a
simulation may miss a label).
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from models.data import DataSource
from models.errors import BayescheckError
from models.interface import Calibratable
from models.spec import Spec

from .calibration import CalibrationResult, default_bins, uniformity
from .dispatch import fit
from .result import AnalyticFit

__all__ = ["SBCRun", "check_calibratable", "run_sbc"]


@dataclass
class SBCRun:
    """One calibration: its verdict and what it was computed from.

    Attributes
    ----------
    result : CalibrationResult
        Per-parameter uniformity tests and the family-wise verdict.
    on_data : AnalyticFit
        The fit on the spec's own data (of the calibrated model).
    model : str
        The model's name.
    """

    result: CalibrationResult
    on_data: AnalyticFit
    model: str


def check_calibratable(spec: Spec, simulations: int) -> None:
    """Refuse a calibration that cannot run, before anything is computed or written.

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


def run_sbc(spec: Spec, *, simulations: int = 1000, seed: int = 0, engine: str = "analytic",
            fit_model=None, draws: int = 199, alpha: float = 0.01, log_info: bool = False,
            on_simulation: Callable[[int, int], None] | None = None) -> SBCRun:
    """Run simulation-based calibration of ``spec``'s engine.

    Parameters
    ----------
    spec : models.Spec
        Its model is declared in PyMC to simulate; its data give the design.
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
    log_info : bool
        Let PyMC log at INFO level (its "Sampling: [...]" line).
    on_simulation : callable, optional
        Called as ``on_simulation(done, total)`` after each simulation (progress).

    Returns
    -------
    SBCRun
    """
    import pymc as pm
    from threadpoolctl import threadpool_limits

    check_calibratable(spec, simulations)
    frame = spec.data.read_all()
    on_data = fit(spec)
    held = spec.model.calibration_model(on_data)
    if held is not spec.model:
        spec = replace(spec, model=held)
        on_data = fit(spec)
    declared = spec.model.declare(spec.data)
    with _pymc_log(logging.INFO if log_info else logging.WARNING):
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
                              draws=draws, seed=seed, on_simulation=on_simulation)
    bins = default_bins(simulations)
    if levels is not None:
        bins = max(b for b in range(1, bins + 1) if levels % b == 0)
    result = uniformity(u, bins=bins, alpha=alpha, discrete_levels=levels)
    return SBCRun(result=result, on_data=on_data, model=spec.model.name)


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


def _simulate(spec, engine_model, frame, prior, oracle, *, engine, draws, seed, on_simulation):
    """The u value (posterior CDF, or normalised rank) of every parameter in every simulation."""
    simulations = prior.prior.sizes["draw"] * prior.prior.sizes["chain"]
    u = {m.name: np.empty(simulations) for m in oracle}
    truths, observed = _truths(prior.prior, oracle), _observed(prior.prior_predictive)
    levels = None
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
        if on_simulation is not None:
            on_simulation(s + 1, simulations)
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


def _nuts_ranks(spec: Spec, truth: dict[str, float], *, draws: int, seed: int):
    """Rank of each true value among ``draws`` NUTS draws thinned to be nearly independent."""
    from .compare import draws_from_idata
    from .nuts import sample_nuts

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
