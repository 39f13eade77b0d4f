"""``check``: analytic fit, NUTS, comparison, and the files a user reads."""

from __future__ import annotations

import csv
import json
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

from inference.compare import (
    Comparison,
    EstimateComparison,
    Thresholds,
    compare_estimates_idata,
    compare_idata,
    draws_from_idata,
)
from inference.dispatch import estimate_check, fit
from inference.nuts import SampleResult, sample_nuts
from inference.result import AnalyticFit
from models.spec import Spec

from .html import render_report
from .plots import (
    MAX_PANELS,
    estimates_figure,
    fit_figure,
    marginals_figure,
    rank_figure,
    trace_figure,
    trajectory_figure,
)

__all__ = ["CheckResult", "EXIT_CODES", "run_check", "write_json"]

#: Exit code of ``bayescheck check`` per verdict.
EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 3}


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

    @property
    def verdict(self) -> str:
        """pass, fail or inconclusive: a failing check fails; otherwise an inconclusive one
        makes the whole inconclusive; pass only when every check ran and passed."""
        return combine_verdicts(c.verdict for c in (self.comparison, self.estimates)
                                if c is not None)


def combine_verdicts(verdicts) -> str:
    """One verdict from several checks (fail > inconclusive > pass)."""
    verdicts = list(verdicts)
    if "fail" in verdicts:
        return "fail"
    if "inconclusive" in verdicts or not verdicts:
        return "inconclusive"
    return "pass"


def _clean(value):
    """JSON has no NaN or inf: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def write_json(path: Path, content: dict) -> None:
    """Write ``content`` as strict JSON (NaN and inf become null)."""
    Path(path).write_text(json.dumps(_clean(content), indent=2, allow_nan=False) + "\n")


def run_check(spec: Spec, out: str | Path, *, draws: int | None = None,
              tune: int | None = None, chains: int | None = None, seed: int | None = None,
              sampler: str = "nutpie", thresholds: Thresholds | None = None,
              analytic: AnalyticFit | None = None, progress: bool = False) -> CheckResult:
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

    Returns
    -------
    CheckResult
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sampling = replace(spec.sampling, **{k: v for k, v in
                                         dict(draws=draws, tune=tune, chains=chains,
                                              seed=seed).items() if v is not None})
    started = time.perf_counter()
    result = analytic if analytic is not None else fit(spec, progress=progress)
    write_json(out / "posterior.json", result.to_json())
    fitted = time.perf_counter()

    # A model with discrete parameters names the sampler it needs (NUTS cannot move them).
    sampler = getattr(spec.model, "sampler", None) or sampler

    def run(pymc_model):
        return sample_nuts(pymc_model, draws=sampling.draws, tune=sampling.tune,
                           chains=sampling.chains, seed=sampling.seed, sampler=sampler,
                           progress=progress)

    timings = {"analytic fit": fitted - started}
    sample = comparison = est_sample = estimates = None
    if result.marginals or not result.estimates:
        sample = run(spec.model.declare(spec.data, fit=result))
        sampled = time.perf_counter()
        comparison = compare_idata(result.marginals, sample.idata, thresholds=thresholds)
        timings.update({"NUTS (compile + sample)": sample.seconds,
                        "NUTS sampling only": sample.sampling_seconds or math.nan,
                        "comparison": time.perf_counter() - sampled})
    if result.estimates:
        declare_full = getattr(spec.model, "declare_full", None) or spec.model.declare
        est_sample = run(declare_full(spec.data, fit=result))
        sampled = time.perf_counter()
        estimates = compare_estimates_idata(result.estimates, est_sample.idata,
                                            thresholds=thresholds)
        family_check = estimate_check(result.model)
        if family_check is not None:  # a family's own criteria (mixture: mode, responsibilities)
            estimates = family_check(result, estimates, est_sample.idata, spec)
        timings.update({"NUTS for the estimates (compile + sample)": est_sample.seconds,
                        "NUTS for the estimates, sampling only":
                            est_sample.sampling_seconds or math.nan,
                        "estimates comparison": time.perf_counter() - sampled})
    compared = time.perf_counter()
    check = CheckResult(result, sample, comparison, out, timings, est_sample, estimates)

    first = sample or est_sample
    _write_rows_csv(out / "comparison.csv", (comparison or estimates).rows())
    first.idata.to_netcdf(out / "posterior.nc", engine="h5netcdf")
    if estimates is not None:
        _write_rows_csv(out / "estimates.csv", estimates.rows())
        if sample is not None:
            est_sample.idata.to_netcdf(out / "posterior_full.nc", engine="h5netcdf")
    figures = [] if comparison is None else _figures(result, sample, comparison)
    figures += [fit_figure(p) for p in result.plots]
    if estimates is not None:
        figures += _estimate_figures(result, est_sample, estimates)
    timings["report"] = time.perf_counter() - compared
    timings["total"] = time.perf_counter() - started
    head = comparison.summary() if comparison is not None else {
        "parameters": [], "diagnostics": estimates.summary()["diagnostics"]}
    summary = {"model": result.model, **head, "verdict": check.verdict, "timings": timings,
               "sampler": first.sampler, "spec": str(spec.path) if spec.path else None,
               "sampling": {"draws": sampling.draws, "tune": sampling.tune,
                            "chains": sampling.chains, "seed": sampling.seed}}
    if estimates is not None:
        summary["estimates"] = estimates.summary()
    write_json(out / "summary.json", summary)
    spec_text = spec.path.read_text() if spec.path else json.dumps(spec.raw, indent=2,
                                                                    default=str)
    shown = comparison or estimates
    html = render_report({
        "model": result.model, "verdict": check.verdict, "spec_path": spec.path or "(Python)",
        "data_label": spec.data.label if spec.data is not None else "none (in the spec)",
        "n_rows": result.n_rows,
        "n_batches": len(result.batches), "log_evidence": result.log_evidence,
        "z_threshold": comparison.z_threshold if comparison else None,
        "n_comparisons": comparison.n_comparisons if comparison else 0,
        "thresholds": shown.thresholds, "rows": _clean(comparison.rows()) if comparison else [],
        "stat_names": ["mean", "sd", "q05", "q50", "q95"],
        "diagnostics": shown.diagnostics, "figures": figures, "timings": timings,
        "sampler": first.sampler, "spec_text": spec_text,
        "estimates": None if estimates is None else {
            "rows": _clean(estimates.rows()), "level": estimates.level,
            "support_level": estimates.support_level, "support": estimates.support(),
            "verdict": estimates.verdict, "diagnostics": estimates.diagnostics,
            "separate_sampler": comparison is not None},
        "notes": result.notes,
    })
    (out / "report.html").write_text(html, encoding="utf-8")
    return check


def _write_rows_csv(path: Path, rows: list[dict]) -> None:
    fields = list(dict.fromkeys(k for row in rows for k in row))  # rows may differ in keys
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def _figures(result: AnalyticFit, sample: SampleResult, comparison: Comparison) -> list[dict]:
    verdicts = {p.name: p.verdict for p in comparison.parameters}
    draws = draws_from_idata(sample.idata, result.marginals)
    # Show the worst parameters when there are too many to draw.
    worst = sorted(result.marginals, key=lambda m: -next(
        (p.max_abs_z for p in comparison.parameters if p.name == m.name), 0.0))
    marginals = result.marginals if len(result.marginals) <= MAX_PANELS else worst[:MAX_PANELS]
    var_names = sorted({m.var for m in marginals})
    figures = [{"title": "Marginal posteriors",
                "caption": "NUTS draws (histogram) with the exact posterior density (red)"
                           + (" and the prior (dashed)." if result.priors else "."),
                "uri": marginals_figure(marginals, draws, verdicts,
                                        {p.name: p.dist for p in result.priors})}]
    trajectory = trajectory_figure(result.trajectory)
    if trajectory:
        figures.append({"title": "The stream, batch by batch",
                        "caption": "Posterior mean and 90 % interval of each coefficient "
                                   "after each batch; the last point is the final posterior.",
                        "uri": trajectory})
    if len(result.marginals) <= MAX_PANELS:
        if comparison.diagnostics.chains >= 2:  # ranks compare chains with each other
            figures.append({"title": "Rank plots",
                            "caption": "Fractional-rank ECDF of each chain; uniform (flat) when "
                                       "the chains mix.",
                            "uri": rank_figure(sample.idata, var_names)})
        figures.append({"title": "Traces", "caption": "Draws per chain and their densities.",
                        "uri": trace_figure(sample.idata, var_names)})
    return figures


def _estimate_figures(result: AnalyticFit, sample: SampleResult,
                      estimates: EstimateComparison) -> list[dict]:
    draws = draws_from_idata(sample.idata, result.estimates)
    pct = f"{100 * estimates.level:g} %"
    figures = [{"title": "Point estimates against the full posterior",
                "caption": f"NUTS posterior of the model without the estimates plugged in: "
                           f"median and {pct} central interval (bars), posterior mean (open "
                           f"circle), and the analytic point estimate (red cross).",
                "uri": estimates_figure(estimates, draws)}]
    var_names = sorted({e.var for e in result.estimates})
    if len(result.estimates) <= MAX_PANELS:
        figures.append({"title": "Traces (full posterior)",
                        "caption": "Draws per chain and their densities.",
                        "uri": trace_figure(sample.idata, var_names)})
    return figures
