"""``check``: the files a user reads about a check (the check itself is in inference).

:func:`run_check` runs :func:`bayescheck.inference.checking.check.run_check` and writes
``posterior.json``, ``comparison.csv`` (and ``estimates.csv``), ``posterior.nc`` (and
``posterior_full.nc``), ``spec.toml``, ``summary.json``, ``report.json`` and ``report.html``.
"""

from __future__ import annotations

import time
from pathlib import Path

from bayescheck.inference.checking.check import CheckResult
from bayescheck.inference.checking.check import run_check as check_spec
from bayescheck.inference.checking.compare import Thresholds
from bayescheck.inference.checking.cost import DEFAULT_MAX_HOURS
from bayescheck.inference.result import AnalyticFit
from bayescheck.models.spec import Spec

from .fit_summary import posterior_document
from .posterior_file import sealed
from .report import EXIT_CODES, render_run, report_data, write_report_data
from .writers import write_csv_rows, write_json, write_netcdf, write_text_atomic

__all__ = ["EXIT_CODES", "CheckResult", "run_check", "summary_document", "write_check"]


def run_check(spec: Spec, out: str | Path, *, draws: int | None = None,
              tune: int | None = None, chains: int | None = None, seed: int | None = None,
              sampler: str = "nutpie", thresholds: Thresholds | None = None,
              analytic: AnalyticFit | None = None, progress: bool = False,
              report: bool = True, retry: bool = True,
              max_hours: float | None = DEFAULT_MAX_HOURS,
              adaptation: str | None = None) -> CheckResult:
    """Run the check of ``spec`` and write its files into ``out`` (:func:`write_check`).

    Parameters
    ----------
    spec, draws, tune, chains, seed, sampler, thresholds, analytic, progress, retry, max_hours,
    adaptation
        As :func:`bayescheck.inference.checking.check.run_check`.
    out : str or pathlib.Path
        The folder.
    report : bool
        Render ``report.html`` (seconds of figures). ``report.json`` is written either way,
        so ``bayescheck report DIR`` can draw the page later.

    Returns
    -------
    CheckResult
        With ``out`` set.
    """
    check = check_spec(spec, draws=draws, tune=tune, chains=chains, seed=seed,
                       sampler=sampler, thresholds=thresholds, analytic=analytic,
                       progress=progress, retry=retry, max_hours=max_hours,
                       adaptation=adaptation)
    write_check(check, spec, Path(out), report=report)
    return check


def write_check(check: CheckResult, spec: Spec, out: Path, *, report: bool = True) -> None:
    """Write a check's files into ``out`` (created when missing) and set ``check.out``."""
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    timings = check.timings
    write_json(out / "posterior.json", sealed(posterior_document(check.fit, spec)))
    first = check.first_sample
    write_csv_rows(out / "comparison.csv", (check.comparison or check.estimates).rows())
    write_netcdf(first.idata, out / "posterior.nc")
    if check.estimates is not None:
        write_csv_rows(out / "estimates.csv", check.estimates.rows())
        if check.sample is not None:
            write_netcdf(check.estimates_sample.idata, out / "posterior_full.nc")
    spec_text = spec.text()
    if spec.path:
        write_text_atomic(out / "spec.toml", spec_text)
    timings["writing files"] = time.perf_counter() - began
    # The report is drawn from the run's files, the same way `bayescheck report DIR` does.
    rendering = time.perf_counter()
    check.out = out
    write_report_data(out, report_data(check, spec, check.sampling, spec_text))
    if report:
        written = {"posterior.nc": first.idata}
        if check.estimates is not None and check.sample is not None:
            written["posterior_full.nc"] = check.estimates_sample.idata
        render_run(out, posteriors=written)
    timings["report"] = time.perf_counter() - rendering
    timings["total"] = timings.get("check", 0.0) + time.perf_counter() - began
    write_json(out / "summary.json", summary_document(check, spec))


def summary_document(check: CheckResult, spec: Spec) -> dict:
    """The content of ``summary.json``."""
    result, sampling = check.fit, check.sampling
    head = check.comparison.summary() if check.comparison is not None else {
        "parameters": [], "diagnostics": check.estimates.summary()["diagnostics"]}
    summary = {"model": result.model, **head, "verdict": check.verdict,
               "timings": check.timings, "sampler": check.first_sample.sampler,
               "spec": str(spec.path) if spec.path else None,
               "sampling": {"draws": sampling.draws, "tune": sampling.tune,
                            "chains": sampling.chains, "seed": sampling.seed,
                            "adaptation": sampling.adaptation},
               "attempts": check.attempts,
               # how the data entered the declaration: rows, or sufficient statistics
               "observed": check.observed}
    info = result.record.info
    if "declaration" in info:  # a family whose declaration depends on the data
        summary["declaration"] = info["declaration"]
    if check.estimates is not None:
        summary["estimates"] = check.estimates.summary()
    if result.record.certificates:
        summary["certificates"] = result.record.certificates
    return summary

