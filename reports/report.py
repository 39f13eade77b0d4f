"""The report of a finished run, rendered from its files.

``run_check`` writes the run folder; :func:`report_data` turns a check's results into one
JSON-able dict (``report.json``: the tables, diagnostics, timings, spec text and the analytic
curves the figures need; :func:`model_report_data` the same for a check of a user's own PyMC
model), and :func:`render_run` builds ``report.html`` from that file and the
sampled posteriors (``posterior.nc``, ``posterior_full.nc``) alone. ``bayescheck report DIR``
calls :func:`render_run` again, so a report can be re-drawn without sampling.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from bayescheck.models.errors import BayescheckError

from .calibration_report import (
    CALIBRATION_JSON,
    calibration_only_context,
    calibration_section,
    fingerprints,
    read_calibration,
    same_run_inputs,
)
from .check_figures import MAX_ROWS, STAT_NAMES
from .writers import clean_json, read_json, write_text_atomic

__all__ = ["EXIT_CODES", "REPORT_JSON", "model_report_data", "render_run", "report_data",
           "write_report_data"]

#: The exit code of ``check`` and ``report`` for each verdict (here, so that ``report``
#: need not import the check and its statistics).
EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 3}
#: The structured content of a report, written at check time.
REPORT_JSON = "report.json"
#: At most this many marginals are drawn one panel each (the worst first).
MAX_CURVES = 12


def _json_default(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _jsonable(value):
    """Round-trip through JSON: numpy to lists, NaN and inf to None."""
    return clean_json(json.loads(json.dumps(value, default=_json_default)))


def _curves(marginals, priors: dict, sample, comparison) -> list[dict]:
    """Analytic density and prior of the worst :data:`MAX_CURVES` marginals over their draws.

    ``marginals`` are the exact marginals compared; ``priors`` maps a marginal's name to its
    prior (a distribution with ``pdf``), where one is known.
    """
    from bayescheck.inference.checking.compare import draws_from_idata

    order = {r["name"]: i for i, r in enumerate(comparison.rows())}  # failing / worst first
    verdicts = {p.name: p.verdict for p in comparison.parameters}
    marginals = sorted(marginals, key=lambda m: order.get(m.name, 0))[:MAX_CURVES]
    draws = draws_from_idata(sample.idata, marginals)
    curves = []
    for m in marginals:
        x = np.asarray(draws[m.name]).ravel()
        lo, hi = np.quantile(x, [0.001, 0.999])
        pad = 0.1 * (hi - lo) or 1e-6
        grid = np.linspace(lo - pad, hi + pad, 300)
        pdf = m.dist.pdf(grid) if m.dist is not None else None
        prior = priors.get(m.name)
        prior_pdf = None
        if prior is not None:
            density = prior.pdf(grid)
            prior_pdf = np.where(np.isfinite(density), density, np.nan)
        curves.append({"name": m.name, "var": m.var, "coords": m.coords,
                       "verdict": verdicts.get(m.name), "grid": grid, "pdf": pdf,
                       "prior": prior_pdf})
    return curves


def _verdict_sentence(verdict: str, exact: str | None, estimates: str | None,
                      certificates: list | None = None) -> str:
    """What the verdict means, in one sentence, for the checks that ran."""
    parts = []
    if exact is not None:
        parts.append({"pass": "the closed-form posterior and the NUTS draws agree on every "
                              "parameter within their Monte Carlo error",
                      "fail": "at least one parameter's closed-form posterior disagrees with "
                              "the NUTS draws by more than Monte Carlo error allows",
                      "inconclusive": "the sampler's own diagnostics failed, so its draws "
                                      "cannot judge the closed form"}[exact])
    if estimates is not None:
        parts.append({"pass": "every analytic point estimate lies where the full NUTS "
                              "posterior puts it",
                      "fail": "at least one analytic point estimate lies outside the full "
                              "NUTS posterior's interval or disagrees on its support",
                      "inconclusive": "the sampler's diagnostics failed on the full "
                                      "posterior, so the point estimates cannot be judged",
                      "differs": "the point estimates differ from the full posterior where "
                                 "the two models differ (information, not an error)"}
                     [estimates])
    for cert in certificates or []:
        parts.append(f"{cert['name']}: {cert['verdict']}")
    if not parts:
        return "nothing could be compared."
    sentence = "; ".join(parts) + ("; no verdict" if verdict == "inconclusive" else "")
    return sentence[0].upper() + sentence[1:] + "."


def _sampler_extras(idata) -> dict:
    """Tree depth and max-depth hits, where the sampler reports them (names differ)."""
    stats = idata.sample_stats if "sample_stats" in idata.children else None
    out = {}
    if stats is None:
        return out
    for name in ("depth", "tree_depth"):
        if name in stats:
            out["max_tree_depth"] = int(np.asarray(stats[name].values).max())
    for name in ("maxdepth_reached", "reached_max_treedepth"):
        if name in stats:
            out["max_depth_hits"] = int(np.asarray(stats[name].values).sum())
    return out


def report_data(check, spec, sampling, spec_text: str) -> dict:
    """Everything the report shows, as JSON-able data (the content of ``report.json``).

    Parameters
    ----------
    check : reports.check.CheckResult
    spec : models.Spec
    sampling : models.spec.Sampling
        The sampling settings that ran.
    spec_text : str
        The spec as the user wrote it.
    """
    from bayescheck.inference.checking.compare import INCONSISTENT_SD

    # Here, not at the top: rendering a report (``bayescheck report``) needs neither.
    from .fit_figures import fit_figures
    from .fit_summary import fit_notes

    fit, comparison, estimates = check.fit, check.comparison, check.estimates
    shown = comparison or estimates
    first = check.sample or check.estimates_sample
    diagnostics = {**_asdict(shown.diagnostics), **_sampler_extras(first.idata)}
    data = {
        "model": fit.model,
        "verdict": check.verdict,
        "verdict_sentence": _verdict_sentence(
            check.verdict,
            comparison.verdict if comparison else None,
            estimates.verdict if estimates else None,
            fit.record.certificates,
        ),
        "certificates": list(fit.record.certificates),
        "checks": {
            "exact": comparison.verdict if comparison else None,
            "estimates": estimates.verdict if estimates else None,
        },
        "spec_path": str(spec.path) if spec.path else "(Python)",
        "data_label": spec.data.label if spec.data is not None else "none (in the spec)",
        "n_rows": fit.record.n_rows,
        "n_batches": len(fit.record.batches),
        "log_evidence": fit.posterior.log_evidence,
        "data_fingerprints": fingerprints(fit),
        "notes": fit_notes(fit, spec),
        "spec_text": spec_text,
        "sampler": first.sampler,
        "sampling": {
            "draws": sampling.draws,
            "tune": sampling.tune,
            "chains": sampling.chains,
            "seed": sampling.seed,
            "adaptation": sampling.adaptation,
        },
        "thresholds": _asdict(shown.thresholds),
        "diagnostics": diagnostics,
        "timings": check.timings,
        "exact": None,
        "estimates": None,
        "fit_plots": fit_figures(fit),
        "trajectory": list(fit.record.trajectory),
        "predictive": getattr(check, "predictive", None) or {},
    }
    if comparison is not None:
        data["verdict_sentence"] = _with_not_judged(data["verdict_sentence"], comparison)
        priors = {p.name: p.dist for p in fit.posterior.priors}
        data["exact"] = _exact_section(comparison, check.sample, fit.posterior.marginals,
                                       priors)
    attempts = getattr(check, "attempts", None) or []
    for first_run, again in zip(attempts, attempts[1:], strict=False):
        if first_run["check"] == again["check"]:
            data["verdict_sentence"] += (
                f" The first run of the {first_run['check']} check ({first_run['draws']} draws "
                f"after {first_run['tune']} tuning steps, seed {first_run['seed']}) gave no "
                f"verdict ({'; '.join(first_run['problems'])}); it was sampled again with "
                f"{again['draws']} draws after {again['tune']} (seed {again['seed']}), and "
                f"that run alone was judged.")
    data["attempts"] = attempts
    modes = estimates.modes if estimates is not None else None
    if modes and modes.get("split"):
        judged = ", ".join(str(c) for c in modes["judged_chains"])
        data["verdict_sentence"] += (f" The chains sat in {len(modes['groups'])} separate "
                                     f"modes: the estimates were judged on chains {judged}, "
                                     f"the mode the estimate claims (see Chains and modes).")
    if estimates is not None:
        est_diag = {**_asdict(estimates.diagnostics),
                    **_sampler_extras(check.estimates_sample.idata)}
        data["estimates"] = {
            "rows": estimates.rows(), "level": estimates.level,
            "support_level": estimates.support_level, "support": estimates.support(),
            "verdict": estimates.verdict, "diagnostics": est_diag,
            "informational": estimates.informational, "inconsistent_sd": INCONSISTENT_SD,
            "separate_sampler": comparison is not None,
            "modes": estimates.modes,
            "file": "posterior_full.nc" if comparison is not None else "posterior.nc",
            "names": [{"name": e.name, "var": e.var, "coords": e.coords}
                      for e in fit.posterior.estimates]}
    return _jsonable(data)


def _with_not_judged(sentence: str, comparison) -> str:
    """The verdict sentence, saying how many statistics were left unjudged (Pareto k-hat)."""
    if not comparison.not_judged():
        return sentence
    n = len(comparison.not_judged())
    return (sentence[:-1] + f"; {n} statistic(s) whose Monte Carlo error is unreliable (heavy "
                            f"tails) were not judged.")


def _exact_section(comparison, sample, marginals, priors: dict) -> dict:
    """``report.json``'s ``exact`` entry: the table, its threshold and the curves."""
    return {"rows": comparison.rows(), "z_threshold": comparison.z_threshold,
            "not_judged": comparison.not_judged(), "n_comparisons": comparison.n_comparisons,
            "curves": _curves(marginals, priors, sample, comparison),
            "has_priors": bool(priors)}


def model_report_data(check, *, model: str, source: str, source_text: str,
                      data_fingerprints: list[str]) -> dict:
    """``report.json``'s content for a check of a user's own PyMC model.

    The same entries as :func:`report_data` makes for a spec, filled with what the model
    has: its name and file instead of a spec's, the recognised family in words, its observed
    variables as the data, and its printed form (or the file's text) as the source.

    Parameters
    ----------
    check : bayescheck.inference.conjugacy.ModelCheck
    model : str
        The model's name (in the file, or the ``pm.Model``'s own).
    source : str
        The file the model came from, or ``"(Python)"``.
    source_text : str
        The file's text, or the model's ``str_repr()``.
    data_fingerprints : list of str
        Fingerprints of the observed values (which data the check saw).
    """
    comparison, ex = check.comparison, check.exact
    sentence = _verdict_sentence(check.verdict, comparison.verdict, None)
    if check.calibration is not None:
        outcome = {"pass": "passes", "fail": "fails"}[check.calibration.verdict]
        sentence = (sentence[:-1] + f"; the simulation-based calibration of the exact "
                                    f"posterior {outcome}.")
    observed = ex.graph.observed
    data = {
        "model": model,
        "verdict": check.verdict,
        "verdict_sentence": _with_not_judged(sentence, comparison),
        "certificates": [],
        "checks": {"exact": comparison.verdict, "estimates": None},
        "source_label": "model file" if source != "(Python)" else "model",
        "spec_title": "The model",
        "family": ex.family,
        "spec_path": source,
        "data_label": ", ".join(f"{name} ({np.size(ex.graph.nodes[name].data)} observed "
                                f"values)" for name in observed) or "none",
        "n_rows": None,
        "n_batches": 0,
        "log_evidence": ex.log_evidence,
        "data_fingerprints": data_fingerprints,
        "notes": list(check.advice),
        "spec_text": source_text,
        "sampler": check.sample.sampler,
        "sampling": {k: check.settings[k] for k in ("draws", "tune", "chains", "seed",
                                                     "adaptation")},
        "thresholds": _asdict(comparison.thresholds),
        "diagnostics": {**_asdict(comparison.diagnostics),
                        **_sampler_extras(check.sample.idata)},
        "timings": check.timings,
        "exact": _exact_section(comparison, check.sample, ex.marginals(), {}),
        "estimates": None,
        "fit_plots": [],
        "trajectory": [],
        "predictive": check.predictive,
        "attempts": [],
    }
    return _jsonable(data)


def _asdict(obj) -> dict:
    from dataclasses import asdict

    return asdict(obj)


def write_report_data(out: Path, data: dict) -> None:
    """Write ``report.json`` (strict JSON: NaN and inf as null)."""
    text = json.dumps(_jsonable(data), indent=1, allow_nan=False)
    write_text_atomic(Path(out) / REPORT_JSON, text + "\n")


# ------------------------------------------------------------------------------ rendering

_VERDICTS = ("pass", "fail", "inconclusive")
#: The types of report.json's entries that the page iterates or formats; a file holding
#: another type (edited by hand) is refused naming the key, not met as a traceback.
REPORT_TYPES = {"model": (str,), "verdict_sentence": (str,), "notes": (list,),
                "certificates": (list,), "checks": (dict,), "spec_path": (str,),
                "data_label": (str,), "spec_text": (str, type(None)),
                "sampling": (dict,), "thresholds": (dict,), "diagnostics": (dict,),
                "timings": (dict,), "trajectory": (list,), "attempts": (list,),
                "predictive": (dict,), "exact": (dict, type(None)),
                "estimates": (dict, type(None)), "family": (str,), "source_label": (str,),
                "spec_title": (str,)}


def _check_report_types(data: dict, where: Path) -> None:
    """Refuse a ``report.json`` entry of another type than :data:`REPORT_TYPES` says."""
    for key, kinds in REPORT_TYPES.items():
        if key in data and not isinstance(data[key], kinds):
            names = " or ".join("null" if k is type(None) else
                                {str: "a string", list: "a list", dict: "a table"}[k]
                                for k in kinds)
            raise BayescheckError(f"{where}: key '{key}': expected {names}, got "
                                  f"{data[key]!r:.60}; re-run the command that writes it")
    for i, note in enumerate(data.get("notes") or []):
        if not isinstance(note, str):
            raise BayescheckError(f"{where}: key 'notes[{i}]': expected a string, got "
                                  f"{note!r:.60}; re-run the command that writes it")


def render_run(out: str | Path, posteriors: dict | None = None) -> str:
    """Render ``DIR/report.html`` from a finished run's files; return the HTML.

    Reads ``report.json`` and the sampled posterior(s) of a check, and ``calibration.json``
    of a calibration, whichever the folder holds (both: one report with both); never samples
    or simulates. When the two files are of different specs, the newer one is shown and the
    page says why the other is not. The figures are drawn in this process
    (:mod:`bayescheck.reports.check_figures`).

    Parameters
    ----------
    out : str or Path
        The run folder.
    posteriors : dict, optional
        Sampled posteriors already in memory by file name (``"posterior.nc"``,
        ``"posterior_full.nc"``): the very DataTrees just written to those files, which
        ``check`` passes instead of having them read back. The page is the same
        (``tests/reports/test_report_html.py``).
    """
    from .html import render_report

    out = Path(out)
    data, calibration = read_json(out / REPORT_JSON), read_calibration(out)
    if data is None and calibration is None:
        raise BayescheckError(f"{out}: neither {REPORT_JSON} nor {CALIBRATION_JSON} found; is "
                              f"it the --out folder of a finished 'bayescheck check' or "
                              f"'bayescheck calibrate'?")
    for name, content in ((REPORT_JSON, data), (CALIBRATION_JSON, calibration)):
        if content is not None and not (isinstance(content, dict) and
                                        content.get("verdict") in _VERDICTS):
            raise BayescheckError(f"{out / name}: not a result written by bayescheck (no "
                                  f"verdict); re-run the command that writes it")
    if data is not None:
        _check_report_types(data, out / REPORT_JSON)
    stale_note = None
    if data is not None and calibration is not None and \
            not same_run_inputs(data, calibration):
        older = min((REPORT_JSON, CALIBRATION_JSON), key=lambda f: (out / f).stat().st_mtime)
        stale_note = (f"this folder also holds an older {older} of a different spec or data; "
                      f"it is not shown (re-run that command with another --out)")
        data, calibration = (None, calibration) if older == REPORT_JSON else (data, None)
    shown = ", ".join(name for name, content in ((REPORT_JSON, data),
                                                 (CALIBRATION_JSON, calibration)) if content)
    opened = []
    try:
        context = _check_context(out, data, posteriors or {}, opened) if data is not None \
            else calibration_only_context(calibration)
        context.update(calibration=calibration_section(calibration) if calibration else None,
                       stale_note=stale_note)
        html = render_report(context)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OSError) as exc:
        # A foreign, truncated or hand-edited file: say which, not where the reader tripped.
        what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise BayescheckError(f"{out}: {shown} is incomplete or not written by this version "
                              f"of bayescheck ({type(exc).__name__}: {what}); re-run the "
                              f"command that writes it") from None
    finally:
        for tree in opened:
            tree.close()
    write_text_atomic(out / "report.html", html)
    return html


def _check_context(out: Path, data: dict, posteriors: dict, opened: list) -> dict:
    """The template's context for a check's ``report.json``: its data and figures.

    ``posteriors`` holds DataTrees already in memory by file name; the others are opened
    from the run folder (and appended to ``opened``, for the caller to close).
    """
    from .check_figures import check_figures
    from .posterior_views import open_posterior

    def posterior(name: str):
        if name not in posteriors:
            posteriors[name] = open_posterior(out / name)
            opened.append(posteriors[name])
        return posteriors[name]

    posteriors = dict(posteriors)
    figures, ppc_note = check_figures(data, posterior)
    return {**data, "figures": figures, "ppc_note": ppc_note, "has_check": True,
            "max_rows": MAX_ROWS, "stat_names": STAT_NAMES}
