"""Judging NUTS on a user's own PyMC model against the model's exact posterior.

The same cross-check as ``bayescheck check`` (:mod:`bayescheck.inference.checking.compare`): each
scalar's mean, sd and 5 / 50 / 95 % quantiles from the draws against the exact values, in
units of their Monte Carlo standard errors, one Bonferroni threshold for the table, the
sampler's health judged first (a failing r_hat, ESS, divergence count or E-BFMI makes the
verdict "inconclusive", never "pass") and statistics whose Monte Carlo error is unreliable
(Pareto k-hat) left unjudged. The draws come from the user's model itself, not from a
re-declaration.

On request, simulation-based calibration of the recognition itself: parameters and data drawn
from the model's prior predictive, the exact posterior of each simulated data set, and the
posterior CDF at the true value tested for uniformity
(:mod:`bayescheck.inference.checking.calibration`).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np
from bayescheck.inference.checking.compare import Comparison, Thresholds, compare_idata
from bayescheck.inference.checking.cost import (
    DEFAULT_MAX_HOURS,
    require_affordable,
    sampling_cost,
)
from bayescheck.models.errors import BayescheckError

from .advice import sampler_advice
from .posterior import ExactPosterior, exact

__all__ = ["ModelCheck", "calibrate_model", "check_model"]


@dataclass
class ModelCheck:
    """What :func:`check_model` found.

    Attributes
    ----------
    exact : ExactPosterior
        The exact posterior the draws were judged against.
    sample : bayescheck.inference.checking.sampling.SampleResult
        The NUTS run (``sample.idata`` is ``pm.sample``'s DataTree).
    comparison : bayescheck.inference.checking.compare.Comparison
        The table and the sampler's health.
    calibration : bayescheck.inference.checking.calibration.CalibrationResult or None
        Simulation-based calibration, when asked for.
    out : pathlib.Path or None
        Where the files were written (:func:`bayescheck.reports.model_check.check_model`
        sets it).
    timings : dict
        Seconds per phase.
    settings : dict
        Draws, tune, chains, seed, sampler, adaptation.
    predictive : dict
        What :func:`~bayescheck.inference.checking.predictive.add_posterior_predictive`
        said: its seconds, or why there are no posterior predictive draws.
    advice : list of str
        When the sampler's health left no verdict: what the exact posterior says about why,
        and what to change (:func:`.advice.sampler_advice`).
    """

    exact: ExactPosterior
    sample: object
    comparison: Comparison
    calibration: object = None
    out: object = None
    timings: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    predictive: dict = field(default_factory=dict)
    advice: list = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``"pass"``, ``"fail"`` or ``"inconclusive"``.

        A failing comparison or calibration fails; else an inconclusive comparison (the
        sampler's health) makes the whole inconclusive; pass only when everything passed.
        """
        verdicts = [self.comparison.verdict]
        if self.calibration is not None:
            verdicts.append(self.calibration.verdict)
        if "fail" in verdicts:
            return "fail"
        return "inconclusive" if "inconclusive" in verdicts else "pass"

    def summary(self) -> dict:
        """``summary.json``'s content (the ``check`` layout, plus the family and evidence)."""
        model = getattr(self.exact.model, "name", "") or "pymc model"
        out = {"model": model, **self.comparison.summary(), "verdict": self.verdict,
               "family": self.exact.family, "log_evidence": self.exact.log_evidence,
               "timings": self.timings, "sampler": getattr(self.sample, "sampler", None),
               "sampling": self.settings, "advice": self.advice}
        if self.calibration is not None:
            out["calibration"] = self.calibration.to_json()
        return out


def check_model(model, *, draws: int = 1000, tune: int = 1000, chains: int = 4,
                random_seed: int = 1, sampler: str = "nutpie", simulations: int | None = None,
                thresholds: Thresholds | None = None, posterior: ExactPosterior | None = None,
                progress: bool = False,
                max_hours: float | None = DEFAULT_MAX_HOURS,
                adaptation: str = "diag") -> ModelCheck:
    """Sample a PyMC model with NUTS and judge the draws against its exact posterior.

    Nothing is written: :func:`bayescheck.check_model`
    (:func:`bayescheck.reports.model_check.check_model`) adds the files and the report.

    Parameters
    ----------
    model : pymc.Model
        The user's model, with its observed data.
    draws, tune, chains : int
        NUTS draws kept per chain, tuning steps per chain, chains.
    random_seed : int
        Seed of the sampler (and of the calibration's simulations).
    sampler : str
        NUTS implementation: ``"nutpie"`` or ``"pymc"`` (or ``"numpyro"``, ``"blackjax"``
        where installed).
    simulations : int, optional
        Also run simulation-based calibration with this many simulations (at least 10).
    thresholds : bayescheck.inference.checking.compare.Thresholds, optional
        Sampler-health limits and the false-alarm rate.
    posterior : ExactPosterior, optional
        Judge against this exact posterior instead of ``exact(model)`` (tests give a wrong
        one on purpose).
    progress : bool
        Say the sampling's estimated cost on stderr, then show a bar of the draws (on a
        terminal).
    max_hours : float or None
        Refuse a sampling estimated above this many hours (None: no limit); see
        :mod:`bayescheck.inference.checking.cost`.
    adaptation : {"diag", "low_rank"}
        The mass matrix nutpie adapts; ``"low_rank"`` follows strongly correlated directions
        (see :func:`~bayescheck.inference.checking.sampling.sample_nuts`).

    Returns
    -------
    ModelCheck
        ``verdict``, the comparison, the draws and the exact posterior.

    Raises
    ------
    bayescheck.NotConjugate
        When the model has no exact posterior here (before anything is sampled).
    bayescheck.models.resources.TooLarge
        A sampling estimated above ``max_hours`` (before it starts).
    """
    from bayescheck.inference.checking.predictive import add_posterior_predictive
    from bayescheck.inference.checking.sampling import check_adaptation, sample_nuts

    if simulations is not None and simulations < 10:
        raise BayescheckError(f"simulations must be at least 10, got {simulations}")
    check_adaptation(adaptation, sampler)
    started = time.perf_counter()
    ex = posterior if posterior is not None else exact(model)
    timings = {"exact posterior": time.perf_counter() - started}
    marginals = ex.marginals()
    began = time.perf_counter()
    cost = sampling_cost(model, draws=draws, tune=tune, chains=chains,
                         cores=max(1, min(chains, os.cpu_count() or 1)), sampler=sampler)
    if progress:
        print(f"sampling: {cost.describe()}", file=sys.stderr, flush=True)
    timings["NUTS compile and cost estimate"] = time.perf_counter() - began
    require_affordable(cost, max_hours=max_hours)
    sampled = sample_nuts(model, draws=draws, tune=tune, chains=chains, seed=random_seed,
                          sampler=sampler, progress=progress, adaptation=adaptation)
    timings["NUTS (compile + sample)"] = sampled.seconds
    began = time.perf_counter()
    comparison = compare_idata(marginals, sampled.idata, thresholds=thresholds)
    timings["comparison"] = time.perf_counter() - began
    # the report's posterior predictive check, drawn from the user's own model
    predictive = add_posterior_predictive(model, sampled.idata, seed=random_seed)
    if "seconds" in predictive:
        timings["posterior predictive"] = predictive["seconds"]
    calibration = None
    if simulations is not None:
        began = time.perf_counter()
        calibration = calibrate_model(model, simulations, random_seed=random_seed)
        timings["calibration"] = time.perf_counter() - began
    settings = {"draws": draws, "tune": tune, "chains": chains, "seed": random_seed,
                "sampler": sampler, "adaptation": adaptation}
    timings["total"] = time.perf_counter() - started
    return ModelCheck(ex, sampled, comparison, calibration, None, timings, settings,
                      predictive, sampler_advice(ex, comparison, adaptation))


def calibrate_model(model, simulations: int, *, random_seed: int = 1, alpha: float = 0.01,
                    posterior_model=None):
    """Simulation-based calibration of the exact posterior against the model's own prior.

    Each simulation draws the latents and the data from ``model``'s prior predictive
    (``pm.sample_prior_predictive``), solves the exact posterior of the simulated data and
    takes every scalar's posterior CDF at its true value; under a right exact posterior those
    values are uniform, which :func:`bayescheck.inference.checking.calibration.uniformity` tests per
    scalar (chi-square on equal bins, Bonferroni over the scalars).

    Parameters
    ----------
    model : pymc.Model
        The model simulated from.
    simulations : int
        Number of simulated data sets.
    random_seed : int
        Seed of the simulations.
    alpha : float
        Family-wise false-alarm rate of the uniformity tests.
    posterior_model : pymc.Model, optional
        The model whose exact posterior is ranked (default ``model``); a model with other
        priors is miscalibrated, which tests use to see the calibration fail.

    Returns
    -------
    bayescheck.inference.checking.calibration.CalibrationResult
    """
    import pymc as pm
    from bayescheck.inference.checking.calibration import uniformity

    first = exact(model)
    free = list(first.graph.free)
    observed = list(first.graph.observed)
    draws = pm.sample_prior_predictive(draws=simulations, model=model,
                                       var_names=free + observed, random_seed=random_seed,
                                       return_inferencedata=False)
    labels = {name: list(first.scalar_labels(name, first.graph.nodes[name].dims,
                                       first.graph.nodes[name].shape)) for name in free}
    pit: dict = {label: [] for name in free for _, label, _ in labels[name]}
    for s in range(simulations):
        ex = exact(posterior_model if posterior_model is not None else model,
                   observed={o: np.asarray(draws[o][s]) for o in observed})
        variables = ex.variables
        for name in free:
            truth = np.asarray(draws[name][s], dtype=float)
            u = np.broadcast_to(variables[name].dist().cdf(truth), truth.shape)
            for index, label, _ in labels[name]:
                pit[label].append(float(u[index]))
    return uniformity({k: np.clip(np.asarray(v), 0.0, 1.0) for k, v in pit.items()},
                      alpha=alpha)

