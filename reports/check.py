"""``check``: analytic fit, NUTS, comparison, and the files a user reads."""

from __future__ import annotations

import csv
import json
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

from inference.compare import Comparison, Thresholds, compare_idata, draws_from_idata
from inference.dispatch import fit
from inference.nuts import SampleResult, sample_nuts
from inference.result import AnalyticFit
from models.spec import Spec

from .html import render_report
from .plots import MAX_PANELS, marginals_figure, rank_figure, trace_figure, trajectory_figure

__all__ = ["CheckResult", "EXIT_CODES", "run_check", "write_json"]

#: Exit code of ``bayescheck check`` per verdict.
EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 3}


@dataclass
class CheckResult:
    """Everything ``check`` produced."""

    fit: AnalyticFit
    sample: SampleResult
    comparison: Comparison
    out: Path
    timings: dict

    @property
    def verdict(self) -> str:
        """pass, fail or inconclusive."""
        return self.comparison.verdict


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

    Parameters
    ----------
    spec : models.Spec
        The model, its data and the sampling settings.
    out : str or pathlib.Path
        Folder for ``posterior.json``, ``comparison.csv``, ``summary.json``,
        ``report.html`` and ``posterior.nc`` (the sampled posterior, ArviZ / netCDF).
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

    pymc_model = spec.model.declare(spec.data)
    # A model with discrete parameters names the sampler it needs (NUTS cannot move them).
    sampler = getattr(spec.model, "sampler", None) or sampler
    sample = sample_nuts(pymc_model, draws=sampling.draws, tune=sampling.tune,
                         chains=sampling.chains, seed=sampling.seed, sampler=sampler,
                         progress=progress)
    sampled = time.perf_counter()
    comparison = compare_idata(result.marginals, sample.idata, thresholds=thresholds)
    compared = time.perf_counter()

    _write_comparison_csv(out / "comparison.csv", comparison)
    sample.idata.to_netcdf(out / "posterior.nc", engine="h5netcdf")
    timings = {"analytic fit": fitted - started, "NUTS (compile + sample)": sample.seconds,
               "NUTS sampling only": sample.sampling_seconds or math.nan,
               "comparison": compared - sampled}
    figures = _figures(result, sample, comparison)
    timings["report"] = time.perf_counter() - compared
    timings["total"] = time.perf_counter() - started
    summary = {"model": result.model, **comparison.summary(), "timings": timings,
               "sampler": sample.sampler, "spec": str(spec.path) if spec.path else None,
               "sampling": {"draws": sampling.draws, "tune": sampling.tune,
                            "chains": sampling.chains, "seed": sampling.seed}}
    write_json(out / "summary.json", summary)
    spec_text = spec.path.read_text() if spec.path else json.dumps(spec.raw, indent=2,
                                                                    default=str)
    html = render_report({
        "model": result.model, "verdict": comparison.verdict, "spec_path": spec.path or "(Python)",
        "data_label": spec.data.label if spec.data is not None else "none (in the spec)",
        "n_rows": result.n_rows,
        "n_batches": len(result.batches), "log_evidence": result.log_evidence,
        "z_threshold": comparison.z_threshold, "n_comparisons": comparison.n_comparisons,
        "thresholds": comparison.thresholds, "rows": _clean(comparison.rows()),
        "stat_names": ["mean", "sd", "q05", "q50", "q95"],
        "diagnostics": comparison.diagnostics, "figures": figures, "timings": timings,
        "sampler": sample.sampler, "spec_text": spec_text,
    })
    (out / "report.html").write_text(html, encoding="utf-8")
    return CheckResult(result, sample, comparison, out, timings)


def _write_comparison_csv(path: Path, comparison: Comparison) -> None:
    rows = comparison.rows()
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
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
