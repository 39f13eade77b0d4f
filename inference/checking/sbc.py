"""Simulation-based calibration (SBC) of a spec's engine against its PyMC declaration.

Parameters and data are drawn from the declared model (``pm.sample_prior_predictive``) on the
spec's own design (its features, its number of rows); each simulated data set is fitted by
the analytic engine (default) or by NUTS, and the posterior CDF at the true value, or the
rank of the truth among NUTS draws, is tested for uniformity
(:mod:`bayescheck.inference.checking.calibration`).

A model takes part by implementing :class:`bayescheck.models.interface.Calibratable`:
``simulated_frame(frame, observed)`` writes one simulation's observed values into a copy of
the spec's data, and ``calibration_model(fit)`` returns the model with whatever the engine
reads from the data besides the parameters' posterior held at the fit on the spec's data, so
that simulations and engine share it. ARD holds its type-II ML hyperparameters (the engine's
posterior is then exact: ARD conditional); the categorical models hold their label sets (a
simulation may miss a label).

A model that also implements :class:`bayescheck.models.interface.DeclaresSimulations` (the
Bayesian network) is simulated from its ``prior_declaration`` and, under NUTS, declared once
for every simulation (``declare_simulations``: the data in ``pm.Data``, swapped with
``pm.set_data``), so the log density is compiled once: nutpie's compiled model is given each
simulation's data with its ``with_data``
(:func:`bayescheck.inference.checking.sampling.compiled_for_nutpie`).
Its data may have missing cells: the simulations keep them missing, the analytic engine (EM,
point estimates) has no posterior to rank the truth in, and NUTS on the declaration with the
missing cells summed out is what is calibrated, for every quantity EM estimates. Tests and
benchmarks may blank cells of each simulation by a mechanism of their own (``blank``: at
random, a column often missing, depending on other values).
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from bayescheck.data.sources import DataSource
from bayescheck.inference.checking.calibration import CalibrationResult, default_bins, uniformity
from bayescheck.inference.families import fit
from bayescheck.inference.result import AnalyticFit
from bayescheck.models.errors import BayescheckError
from bayescheck.models.interface import Calibratable, DeclaresSimulations
from bayescheck.models.resources import check_simulations
from bayescheck.models.spec import Spec

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
    check_simulations(simulations)


def run_sbc(spec: Spec, *, simulations: int = 1000, seed: int = 0, engine: str = "analytic",
            fit_model=None, draws: int = 199, tune: int = 500, alpha: float = 0.01,
            log_info: bool = False,
            on_simulation: Callable[[int, int], None] | None = None,
            blank: Callable | None = None, block: int | None = None) -> SBCRun:
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
    tune : int
        NUTS tuning steps per chain.
    alpha : float
        Family-wise false-alarm rate.
    log_info : bool
        Let PyMC log at INFO level (its "Sampling: [...]" line).
    on_simulation : callable, optional
        Called as ``on_simulation(done, total)`` after each simulation (progress).
    blank : callable, optional
        ``blank(frame, rng)`` returns a simulated frame with cells emptied (a missingness
        mechanism; tests and benchmarks), ``rng`` a ``numpy.random.Generator`` seeded from
        ``seed``. Needs ``engine="nuts"``.
    block : int, optional
        Under NUTS, for a model that declares its simulations together
        (:class:`bayescheck.models.interface.DeclaresSimulations`): simulations per declaration (one
        compile each). Default: one declaration for all. With missing cells each simulation
        samples the union of its declaration's distinct rows, which grows with the
        simulations until it holds every row the network can have; blocks of ``block`` cap
        it, at one compile per block (benchmarks/NETWORKS.md). The simulated
        data and the NUTS seeds are the same either way, and so is the posterior (its draws
        differ only as far as rounding in the log density moves the sampler).

    Returns
    -------
    SBCRun

    Raises
    ------
    BayescheckError
        The analytic engine asked for data with missing cells (its EM estimates have no
        posterior to rank the truth in).
    """
    import pymc as pm
    from threadpoolctl import threadpool_limits

    check_calibratable(spec, simulations)
    if block is not None and block < 1:
        raise BayescheckError(f"block must be at least 1 simulation, got {block}")
    frame = spec.data.read_all()
    on_data = fit(spec)
    held = spec.model.calibration_model(on_data)
    if held is not spec.model:
        spec = replace(spec, model=held)
        on_data = fit(spec)
    if isinstance(spec.model, DeclaresSimulations):
        declared = spec.model.prior_declaration(spec.data)
    else:
        declared = spec.model.declare(spec.data)
    with _pymc_log(logging.INFO if log_info else logging.WARNING):
        prior = pm.sample_prior_predictive(draws=simulations, model=declared,
                                           random_seed=seed)
    engine_model = fit_model or spec.model
    if block is not None and (engine != "nuts" or
                              not isinstance(engine_model, DeclaresSimulations)):
        raise BayescheckError(
            f"block (simulations per compiled declaration) applies to the nuts engine on a "
            f"model that declares its simulations together (bayesian_network), not to "
            f"{spec.model.name} with the {engine} engine")
    # Names and variables of the parameters; an oracle with an exact mean only (no
    # distribution) has no CDF to calibrate. With missing cells the fit gives EM point
    # estimates: NUTS's posterior of each estimated quantity is calibrated.
    oracle = [m for m in on_data.posterior.marginals if m.dist is not None] or list(
        on_data.posterior.estimates
    )
    if engine == "analytic" and (blank is not None or not on_data.posterior.marginals):
        raise BayescheckError(
            f"calibrate --engine analytic needs complete data: with missing cells "
            f"{spec.model.name}'s fit gives EM point estimates, which have no posterior to "
            f"rank the truth in; use --engine nuts (the declaration with the missing cells "
            f"summed out is then calibrated)")
    # Each simulation's algebra is small: multithreaded BLAS would only spin on it.
    limits = threadpool_limits(1) if engine == "analytic" else contextlib.nullcontext()
    with limits:
        u, levels = _simulate(spec, engine_model, frame, prior, oracle, engine=engine,
                              draws=draws, tune=tune, seed=seed, on_simulation=on_simulation,
                              blank=blank, block=block)
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


def _simulate(spec, engine_model, frame, prior, oracle, *, engine, draws, tune, seed,
              on_simulation, blank, block=None):
    """The u value (posterior CDF, or normalised rank) of every parameter in every simulation."""
    simulations = prior.prior.sizes["draw"] * prior.prior.sizes["chain"]
    u = {m.name: np.empty(simulations) for m in oracle}
    truths, observed = _truths(prior.prior, oracle), _observed(prior.prior_predictive)
    rng = np.random.default_rng([seed, 16])

    def sim_spec(s):
        sim = spec.model.simulated_frame(frame, {k: v[s] for k, v in observed.items()})
        if blank is not None:
            sim = blank(sim, rng)
        return replace(spec, model=engine_model, data=DataSource.from_frame(sim), path=None)

    def truth(s):
        return {name: values[s] for name, values in truths.items()}

    def ranked(s, sample):
        for name, r in _ranks(sample.idata, oracle, truth(s), draws).items():
            u[name][s] = r / (draws + 1)
        if on_simulation is not None:
            on_simulation(s + 1, simulations)

    if engine == "analytic":
        for s in range(simulations):
            at = truth(s)
            for m in fit(sim_spec(s)).posterior.marginals:
                if m.name in u:
                    u[m.name][s] = float(m.dist.cdf(at[m.name]))
            if on_simulation is not None:
                on_simulation(s + 1, simulations)
        return u, None
    import pymc as pm
    from bayescheck.inference.checking.sampling import sample_nuts

    if isinstance(engine_model, DeclaresSimulations):
        # one declaration (one compile) for every simulation of a block, its data swapped in
        # turn; the data sets are all drawn first, so blank's rng gives the same cells emptied
        # whatever the blocks
        sources = [sim_spec(s).data for s in range(simulations)]
        size = block or simulations
        for first in range(0, simulations, size):
            model, updates = engine_model.declare_simulations(sources[first:first + size])
            for s, update in enumerate(updates, start=first):
                pm.set_data(update, model=model)
                ranked(s, sample_nuts(model, draws=draws * 2, tune=tune, chains=2,
                                      seed=seed + s))
    else:
        for s in range(simulations):
            one = sim_spec(s)
            ranked(s, sample_nuts(one.model.declare(one.data), draws=draws * 2, tune=tune,
                                  chains=2, seed=seed + s))
    return u, draws + 1


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


def _ranks(idata, quantities, truth: dict[str, float], draws: int) -> dict[str, int]:
    """Rank of each true value among ``draws`` NUTS draws thinned to be nearly independent."""
    from bayescheck.inference.checking.compare import draws_from_idata

    ranks = {}
    for name, x in draws_from_idata(idata, quantities).items():
        flat = x.reshape(-1)
        kept = flat[:: max(1, math.ceil(flat.size / draws))][:draws]
        ranks[name] = int(np.sum(kept < truth[name]))
    return ranks
