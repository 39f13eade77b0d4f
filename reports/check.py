"""``check``: analytic fit, NUTS, comparison, and the files a user reads."""

from __future__ import annotations

import csv
import math
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
from bayescheck.inference.families import fit
from bayescheck.inference.checking.sampling import SampleResult, sample_nuts
from bayescheck.inference.result import AnalyticFit
from bayescheck.models.interface import FullDeclaration, StartsAtEstimate
from bayescheck.models.spec import Spec

from .fit_summary import posterior_document
from .report import EXIT_CODES, render_run, report_data, write_report_data
from .writers import write_json, write_netcdf

__all__ = ["CheckResult", "EXIT_CODES", "run_check", "write_json"]


@dataclass
class CheckResult:
    """Everything ``check`` produced.

    ``sample`` and ``comparison`` are the exact check (None when the fit has no exact
    marginals); ``estimates_sample`` and ``estimates`` the point-estimate check (None when the
    fit has no point estimates).
    """

    fit: AnalyticFit
    sample: SampleResult | None
    comparison: Comparison | None
    out: Path
    timings: dict
    estimates_sample: SampleResult | None = None
    estimates: EstimateComparison | None = None
    predictive: dict = field(default_factory=dict)
    #: Every sampling run, in order: ``check`` ("exact" or "estimates"), draws, tune, seed,
    #: the verdict it gave and the sampler-health problems (see ``run_check``'s ``retry``).
    attempts: list = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """The overall verdict: pass, fail or inconclusive.

        A failing check fails; otherwise an inconclusive one makes the whole inconclusive;
        pass only when every check ran and passed. The checks are the exact comparison, the
        point-estimate comparison (an informational one, see
        :func:`bayescheck.inference.checking.compare.as_information`, counts only when it fails) and the fit's
        certificates.
        """
        verdicts = [self.comparison.verdict] if self.comparison is not None else []
        if self.estimates is not None and self.estimates.binding_verdict is not None:
            verdicts.append(self.estimates.binding_verdict)
        verdicts += [c["verdict"] for c in self.fit.certificates]
        return combine_verdicts(verdicts)


#: The retry's seed is the run's plus this (a stream no small user seed reaches).
RETRY_SEED_OFFSET = 100_003


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


def run_check(spec: Spec, out: str | Path, *, draws: int | None = None,
              tune: int | None = None, chains: int | None = None, seed: int | None = None,
              sampler: str = "nutpie", thresholds: Thresholds | None = None,
              analytic: AnalyticFit | None = None, progress: bool = False,
              report: bool = True, retry: bool = True) -> CheckResult:
    """Fit analytically, sample with NUTS, compare, and write the report files.

    Two checks, each run when the fit has something for it: the exact marginals
    (``AnalyticFit.marginals``) against NUTS on ``model.declare(data, fit=fit)``, and the
    point estimates (``AnalyticFit.estimates``) against NUTS on the model without the fit's
    estimates plugged in: ``model.declare_full(data, fit=fit)`` where a family's ``declare``
    is conditioned on its fit (ARD), else ``model.declare(data, fit=fit)``.

    Parameters
    ----------
    spec : models.Spec
        The model, its data and the sampling settings.
    out : str or pathlib.Path
        Folder for ``posterior.json``, ``comparison.csv``, ``summary.json``,
        ``report.html`` and ``posterior.nc`` (the sampled posterior, ArviZ / netCDF). With
        point estimates also ``estimates.csv``; with both checks the second sampled
        posterior is ``posterior_full.nc``.
    draws, tune, chains, seed : int, optional
        Override the spec's ``[sampling]``.
    sampler : str
        NUTS implementation (``"nutpie"`` or ``"pymc"``).
    thresholds : inference.Thresholds, optional
        Sampler-health limits and the false-alarm rate.
    analytic : inference.AnalyticFit, optional
        Use this analytic result instead of fitting (tests feed wrong ones on purpose).
    progress : bool
        Show progress on stderr.
    report : bool
        Render ``report.html`` (seconds of figures). ``report.json`` is written either way,
        so ``bayescheck report DIR`` can draw the page later.
    retry : bool
        When a check has no verdict only because the sampler's health failed (r_hat, ESS,
        divergences, E-BFMI), sample it once more, with twice the tuning steps and twice the
        draws and another seed (``seed + RETRY_SEED_OFFSET``), and judge that run alone with
        the same thresholds. Every attempt is listed in ``summary.json`` under ``"attempts"``.

    Returns
    -------
    CheckResult
    """
    return _run_check(spec, Path(out), draws=draws, tune=tune, chains=chains, seed=seed,
                      sampler=sampler, thresholds=thresholds, analytic=analytic,
                      progress=progress, report=report, retry=retry)


def _run_check(spec: Spec, out: Path, *, draws, tune, chains, seed, sampler, thresholds,
               analytic, progress, report, retry) -> CheckResult:
    out.mkdir(parents=True, exist_ok=True)
    sampling = replace(spec.sampling, **{k: v for k, v in
                                         dict(draws=draws, tune=tune, chains=chains,
                                              seed=seed).items() if v is not None})
    started = time.perf_counter()
    # declaration=True: the declaration's statistics are taken on the fit's pass over the
    # files, so they are read once.
    result = (analytic if analytic is not None else
              fit(spec, progress=progress, declaration=True))
    write_json(out / "posterior.json", posterior_document(result, spec))
    fitted = time.perf_counter()

    # A model with discrete parameters names the sampler it needs (NUTS cannot move them).
    sampler = spec.model.sampler or sampler

    predictive = {}
    observed = []

    def run(pymc_model, initvals=None, settings=None):
        settings = settings or sampling
        observed.extend(rv.name for rv in pymc_model.observed_RVs if rv.name not in observed)
        sampled = sample_nuts(pymc_model, draws=settings.draws, tune=settings.tune,
                              chains=settings.chains, seed=settings.seed, sampler=sampler,
                              progress=progress, initvals=initvals)
        return sampled

    timings = {"analytic fit": fitted - started}
    attempts: list[dict] = []

    def judged(what, declare_model, judge, starts=None):
        """Sample and judge; once more, longer, when only sampler health stood in the way."""
        settings, pymc_model = sampling, declare_model()
        while True:
            sampled = run(pymc_model, starts, settings)
            began = time.perf_counter()
            comparison = judge(sampled.idata)
            attempts.append({"check": what, "draws": settings.draws, "tune": settings.tune,
                             "seed": settings.seed, "verdict": _binding(comparison),
                             "problems": list(comparison.diagnostics.problems),
                             "seconds": sampled.seconds})
            if not (retry and settings is sampling and _health_only(comparison)):
                seconds = time.perf_counter() - began
                if not predictive:  # the first kept run's model is the one checked against data
                    predictive.update(add_posterior_predictive(pymc_model, sampled.idata,
                                                               seed=sampling.seed))
                return sampled, comparison, seconds
            settings = replace(sampling, draws=2 * sampling.draws, tune=2 * sampling.tune,
                               seed=sampling.seed + RETRY_SEED_OFFSET)

    sample = comparison = est_sample = estimates = None
    if result.marginals or not result.estimates:
        sample, comparison, seconds = judged(
            "exact", lambda: spec.model.declare(spec.data, fit=result),
            lambda idata: compare_idata(result.marginals, idata, thresholds=thresholds))
        timings.update({"NUTS (compile + sample)": sample.seconds,
                        "NUTS sampling only": sample.sampling_seconds or math.nan,
                        "comparison": seconds})
    if result.estimates:
        declare_full = (spec.model.declare_full if isinstance(spec.model, FullDeclaration)
                        else spec.model.declare)
        # A multimodal posterior (mixture): chains start at the estimate, each jittered.
        starts = (spec.model.initial_values(result)
                  if isinstance(spec.model, StartsAtEstimate) else None)

        def judge_estimates(idata):
            judged_ = compare_estimates_idata(result.estimates, idata, thresholds=thresholds)
            if result.posterior_checks is not None:  # the family's own (mixture: mode, ...)
                judged_ = result.posterior_checks(result, judged_, idata, spec)
            return judged_

        est_sample, estimates, seconds = judged(
            "estimates", lambda: declare_full(spec.data, fit=result), judge_estimates, starts)
        timings.update({"NUTS for the estimates (compile + sample)": est_sample.seconds,
                        "NUTS for the estimates, sampling only":
                            est_sample.sampling_seconds or math.nan,
                        "estimates comparison": seconds})
    if "seconds" in predictive:
        timings["posterior predictive"] = predictive["seconds"]
    compared = time.perf_counter()
    check = CheckResult(result, sample, comparison, out, timings, est_sample, estimates,
                        predictive, attempts)

    first = sample or est_sample
    _write_rows_csv(out / "comparison.csv", (comparison or estimates).rows())
    write_netcdf(first.idata, out / "posterior.nc")
    if estimates is not None:
        _write_rows_csv(out / "estimates.csv", estimates.rows())
        if sample is not None:
            write_netcdf(est_sample.idata, out / "posterior_full.nc")
    spec_text = spec.text()
    if spec.path:
        (out / "spec.toml").write_text(spec_text)
    timings["writing files"] = time.perf_counter() - compared
    head = comparison.summary() if comparison is not None else {
        "parameters": [], "diagnostics": estimates.summary()["diagnostics"]}
    summary = {"model": result.model, **head, "verdict": check.verdict, "timings": timings,
               "sampler": first.sampler,
               "spec": str(spec.path) if spec.path else None,
               "sampling": {"draws": sampling.draws, "tune": sampling.tune,
                            "chains": sampling.chains, "seed": sampling.seed},
               "attempts": attempts}
    # How the data entered the declaration: rows ("y"), or sufficient statistics at large n.
    summary["observed"] = observed
    if "declaration" in result.info:  # a family whose declaration depends on the data
        summary["declaration"] = result.info["declaration"]
    if estimates is not None:
        summary["estimates"] = estimates.summary()
    if result.certificates:
        summary["certificates"] = result.certificates
    # The report is drawn from the run's files, the same way `bayescheck report DIR` does.
    rendering = time.perf_counter()
    write_report_data(out, report_data(check, spec, sampling, spec_text))
    if report:
        written = {"posterior.nc": first.idata}
        if estimates is not None and sample is not None:
            written["posterior_full.nc"] = est_sample.idata
        render_run(out, posteriors=written)
    timings["report"] = time.perf_counter() - rendering
    timings["total"] = time.perf_counter() - started
    write_json(out / "summary.json", summary)
    return check


def _write_rows_csv(path: Path, rows: list[dict]) -> None:
    fields = list(dict.fromkeys(k for row in rows for k in row))  # rows may differ in keys
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


#: Categorical values drawn per predictive (draws x observed cells) above which the draws
#: are compiled with PyTensor's default linker (Numba) rather than run op by op in Python:
#: PyTensor's Python categorical draw makes a Python call per cell, about 3 microseconds
#: (the Asia network's 8 nodes x 1000 rows x 500 draws: 12 s in Python; 0.4 s with Numba
#: from PyTensor's compile cache, 3 s on an empty cache).
PYTHON_CATEGORICAL_CELLS = 250_000


def add_posterior_predictive(pymc_model, idata, *, seed: int = 0,
                             max_draws: int = 500) -> dict:
    """Add ``posterior_predictive`` draws of the model's observed variables to ``idata``.

    At most ``max_draws`` posterior draws are used, thinned evenly. Return ``{"seconds",
    "mode"}``, or ``{"skipped": why}`` when the model has no observed variable or the draws
    fail.

    The forward graph is compiled in PyTensor's FAST_COMPILE mode (Python linker, numpy
    ``perform`` of each op): for a few hundred draws of a small model that takes hundredths
    of a second, where loading the Numba linker's compiled graph from PyTensor's cache takes
    0.3-2 s. Categorical observations are the exception: PyTensor draws them with a Python
    call per cell, so above :data:`PYTHON_CATEGORICAL_CELLS` cells the graph is compiled with
    PyTensor's default linker instead.
    """
    import pymc as pm
    from pytensor.tensor.random.basic import CategoricalRV

    observed = [rv.name for rv in pymc_model.observed_RVs]
    if not observed:
        return {"skipped": "the model has no observed variable (the data enter through "
                           "sufficient statistics or a potential), so there is nothing to "
                           "predict"}
    started = time.perf_counter()
    try:
        total = idata.posterior.sizes["chain"] * idata.posterior.sizes["draw"]
        step = max(1, math.ceil(total / max_draws))  # every step-th draw of each chain
        thinned = idata.posterior.isel(draw=slice(None, None, step))
        draws = thinned.sizes["chain"] * thinned.sizes["draw"]
        data = idata["observed_data"] if "observed_data" in idata.children else {}
        cells = sum(data[rv.name].size for rv in pymc_model.observed_RVs
                    if isinstance(rv.owner.op, CategoricalRV) and rv.name in data)
        mode = "FAST_COMPILE" if draws * cells <= PYTHON_CATEGORICAL_CELLS else None
        with pymc_model:
            pp = pm.sample_posterior_predictive(thinned, var_names=observed,
                                                random_seed=seed, progressbar=False,
                                                compile_kwargs={"mode": mode} if mode else {})
        idata["posterior_predictive"] = pp["posterior_predictive"]
        if "observed_data" not in idata.children and "observed_data" in pp.children:
            idata["observed_data"] = pp["observed_data"]
    except Exception as exc:  # noqa: BLE001 - the check stands without this figure
        return {"skipped": f"posterior predictive draws failed: {type(exc).__name__}: {exc}"}
    return {"seconds": time.perf_counter() - started, "mode": mode or "default (Numba)"}
