"""The check of a spec: analytic fit, NUTS on the declaration, the comparison, a retry.

:func:`run_check` does the work and returns a :class:`CheckResult`; it writes nothing
(:func:`bayescheck.reports.check.run_check` writes the files a user reads).
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from bayescheck.inference.checking.compare import (
    Comparison,
    EstimateComparison,
    Thresholds,
    compare_estimates_idata,
    compare_idata,
)
from bayescheck.inference.checking.cost import (
    DEFAULT_MAX_HOURS,
    require_affordable,
    sampling_cost,
)
from bayescheck.inference.checking.predictive import add_posterior_predictive
from bayescheck.inference.checking.sampling import SampleResult, check_adaptation, sample_nuts
from bayescheck.inference.families import fit
from bayescheck.inference.result import AnalyticFit
from bayescheck.models.errors import SpecError
from bayescheck.models.interface import FullDeclaration, StartsAtEstimate
from bayescheck.models.spec import SamplingConfig, Spec

__all__ = ["RETRY_SEED_OFFSET", "CheckResult", "combine_verdicts", "run_check"]

#: The retry's seed is the run's plus this (a stream no small user seed reaches).
RETRY_SEED_OFFSET = 100_003


@dataclass
class CheckResult:
    """Everything a check produced.

    Attributes
    ----------
    fit : AnalyticFit
        The analytic side.
    sample, comparison : SampleResult, Comparison or None
        The exact check: NUTS on ``declare(data, fit=...)`` and its comparison with the exact
        marginals (None when the fit has no exact marginals).
    timings : dict
        Seconds per phase.
    estimates_sample, estimates : SampleResult, EstimateComparison or None
        The point-estimate check (None when the fit has no point estimates).
    predictive : dict
        What :func:`~bayescheck.inference.checking.predictive.add_posterior_predictive` said.
    attempts : list of dict
        Every sampling run, in order: ``check`` ("exact" or "estimates"), draws, tune, seed,
        the verdict it gave and the sampler-health problems (see :func:`run_check`'s
        ``retry``).
    observed : list of str
        The declarations' observed variables: how the data entered (rows, or sufficient
        statistics; empty when they enter through a potential).
    sampling : SamplingConfig or None
        The sampler settings of the first run.
    out : pathlib.Path or None
        Where the files were written (None: kept in memory).
    """

    fit: AnalyticFit
    sample: SampleResult | None
    comparison: Comparison | None
    timings: dict = field(default_factory=dict)
    estimates_sample: SampleResult | None = None
    estimates: EstimateComparison | None = None
    predictive: dict = field(default_factory=dict)
    attempts: list = field(default_factory=list)
    observed: list = field(default_factory=list)
    sampling: SamplingConfig | None = None
    out: Path | None = None

    @property
    def verdict(self) -> str:
        """The overall verdict: pass, fail or inconclusive.

        A failing check fails; otherwise an inconclusive one makes the whole inconclusive;
        pass only when every check ran and passed. The checks are the exact comparison, the
        point-estimate comparison (an informational one, see
        :func:`bayescheck.inference.checking.compare.as_information`, counts only when it
        fails) and the fit's certificates.
        """
        verdicts = [self.comparison.verdict] if self.comparison is not None else []
        if self.estimates is not None and self.estimates.binding_verdict is not None:
            verdicts.append(self.estimates.binding_verdict)
        verdicts += [c["verdict"] for c in self.fit.record.certificates]
        return combine_verdicts(verdicts)

    @property
    def first_sample(self) -> SampleResult:
        """The run whose draws are the check's ``posterior.nc``."""
        return self.sample or self.estimates_sample


def _binding(comparison) -> str | None:
    """The verdict a comparison gives the check (None: an informational one with no say)."""
    if isinstance(comparison, EstimateComparison):
        return comparison.binding_verdict
    return comparison.verdict


def _health_only(comparison) -> bool:
    """The comparison has no verdict only because a sampler-health limit was broken."""
    return _binding(comparison) == "inconclusive" and not comparison.diagnostics.healthy


def combine_verdicts(verdicts) -> str:
    """One verdict from several checks (fail > inconclusive > pass)."""
    verdicts = list(verdicts)
    if "fail" in verdicts:
        return "fail"
    if "inconclusive" in verdicts or not verdicts:
        return "inconclusive"
    return "pass"


def run_check(spec: Spec, *, draws: int | None = None, tune: int | None = None,
              chains: int | None = None, seed: int | None = None, sampler: str = "nutpie",
              thresholds: Thresholds | None = None, analytic: AnalyticFit | None = None,
              progress: bool = False, retry: bool = True,
              max_hours: float | None = DEFAULT_MAX_HOURS,
              adaptation: str | None = None) -> CheckResult:
    """Fit analytically, sample with NUTS and compare; nothing is written.

    Two checks, each run when the fit has something for it: the exact marginals against
    NUTS on ``model.declare(data, fit=fit)``, and the point estimates against NUTS on the
    model without the fit's estimates plugged in: ``model.declare_full(data, fit=fit)``
    where a family's ``declare`` is conditioned on its fit (ARD), else
    ``model.declare(data, fit=fit)``.

    Parameters
    ----------
    spec : bayescheck.models.Spec
        The model, its data and the sampling settings.
    draws, tune, chains, seed : int, optional
        Override the spec's ``[sampling]``.
    sampler : str
        NUTS implementation (``"nutpie"`` or ``"pymc"``).
    thresholds : Thresholds, optional
        Sampler-health limits and the false-alarm rate.
    adaptation : {"diag", "low_rank"}, optional
        Override the spec's ``[sampling] adaptation`` (the mass matrix nutpie adapts; see
        :func:`~bayescheck.inference.checking.sampling.sample_nuts`).
    analytic : AnalyticFit, optional
        Use this analytic result instead of fitting (tests feed wrong ones on purpose).
    progress : bool
        Show progress on stderr.
    retry : bool
        When a check has no verdict only because the sampler's health failed (r_hat, ESS,
        divergences, E-BFMI), sample it once more, with twice the tuning steps and twice the
        draws and another seed (``seed + RETRY_SEED_OFFSET``), and judge that run alone with
        the same thresholds. Every attempt is listed in :attr:`CheckResult.attempts`.
    max_hours : float or None
        Before each declaration is sampled, its cost is estimated from its compiled model
        (:func:`~bayescheck.inference.checking.cost.sampling_cost`: free parameters, one
        gradient timed, the time of ``draws + tune`` iterations per chain) and said on stderr
        (with ``progress``); a run estimated above ``max_hours`` is refused (None or ``inf``:
        no limit).

    Returns
    -------
    CheckResult

    Raises
    ------
    bayescheck.models.resources.TooLarge
        A sampling estimated above ``max_hours``, or whose draws this machine cannot hold.
    """
    sampling = replace(spec.sampling, **{k: v for k, v in
                                         dict(draws=draws, tune=tune, chains=chains, seed=seed,
                                              adaptation=adaptation).items()
                                         if v is not None})
    started = time.perf_counter()
    # declaration=True: the declaration's statistics are taken on the fit's pass over the
    # files, so they are read once.
    result = analytic if analytic is not None else fit(spec, progress=progress,
                                                       declaration=True)
    post = result.posterior
    timings = {"analytic fit": time.perf_counter() - started}
    require_proper = getattr(spec.model, "require_proper", None)
    if require_proper is not None:  # the data's errors first, then the prior in the spec's name
        require_proper(spec.path)
    # A model with discrete parameters names the sampler it needs (NUTS cannot move them).
    sampler = spec.model.sampler or sampler
    try:
        check_adaptation(sampling.adaptation, sampler)
    except ValueError as exc:
        raise SpecError(str(exc), path=spec.path, key="sampling.adaptation") from None
    check = CheckResult(result, None, None, timings, sampling=sampling)
    cores = max(1, min(sampling.chains, os.cpu_count() or 1))  # as sample_nuts runs them

    def judged(what, declare_model, judge, starts=None):
        """Sample and judge; once more, longer, when only sampler health stood in the way."""
        settings, pymc_model = sampling, declare_model()
        check.observed.extend(rv.name for rv in pymc_model.observed_RVs
                              if rv.name not in check.observed)
        began = time.perf_counter()
        cost = sampling_cost(pymc_model, draws=settings.draws, tune=settings.tune,
                             chains=settings.chains, cores=cores, sampler=sampler,
                             initvals=starts)
        timings[f"NUTS compile and cost estimate ({what})"] = time.perf_counter() - began
        if progress:
            print(f"sampling ({what}): {cost.describe()}", file=sys.stderr, flush=True)
        require_affordable(cost, max_hours=max_hours, what=f"the check ({what})")
        while True:
            sampled = sample_nuts(pymc_model, draws=settings.draws, tune=settings.tune,
                                  chains=settings.chains, seed=settings.seed,
                                  sampler=sampler, progress=progress, initvals=starts,
                                  adaptation=settings.adaptation)
            began = time.perf_counter()
            comparison = judge(sampled.idata)
            check.attempts.append({
                "check": what, "draws": settings.draws, "tune": settings.tune,
                "seed": settings.seed, "verdict": _binding(comparison),
                "problems": list(comparison.diagnostics.problems),
                "seconds": sampled.seconds})
            if not (retry and settings is sampling and _health_only(comparison)):
                seconds = time.perf_counter() - began
                if not check.predictive:  # the first kept run's model is checked against data
                    check.predictive.update(add_posterior_predictive(
                        pymc_model, sampled.idata, seed=sampling.seed))
                return sampled, comparison, seconds
            settings = replace(sampling, draws=2 * sampling.draws, tune=2 * sampling.tune,
                               seed=sampling.seed + RETRY_SEED_OFFSET)

    if post.marginals or not post.estimates:
        check.sample, check.comparison, seconds = judged(
            "exact", lambda: spec.model.declare(spec.data, fit=result),
            lambda idata: compare_idata(post.marginals, idata, thresholds=thresholds))
        timings.update({"NUTS (compile + sample)": check.sample.seconds,
                        "NUTS sampling only": check.sample.sampling_seconds or math.nan,
                        "comparison": seconds})
    if post.estimates:
        declare_full = (spec.model.declare_full if isinstance(spec.model, FullDeclaration)
                        else spec.model.declare)
        # A multimodal posterior (mixture): chains start at the estimate, each jittered.
        starts = (spec.model.initial_values(result)
                  if isinstance(spec.model, StartsAtEstimate) else None)
        own_checks = result.record.posterior_checks

        def judge_estimates(idata):
            judged_ = compare_estimates_idata(post.estimates, idata, thresholds=thresholds)
            if own_checks is not None:  # the family's own (mixture: mode, ...)
                judged_ = own_checks(result, judged_, idata, spec)
            return judged_

        check.estimates_sample, check.estimates, seconds = judged(
            "estimates", lambda: declare_full(spec.data, fit=result), judge_estimates, starts)
        timings.update({"NUTS for the estimates (compile + sample)":
                            check.estimates_sample.seconds,
                        "NUTS for the estimates, sampling only":
                            check.estimates_sample.sampling_seconds or math.nan,
                        "estimates comparison": seconds})
    if "seconds" in check.predictive:
        timings["posterior predictive"] = check.predictive["seconds"]
    timings["check"] = time.perf_counter() - started
    return check
