"""The report of a finished run, rendered from its files.

``run_check`` writes the run folder; :func:`report_data` turns a check's results into one
JSON-able dict (``report.json``: the tables, diagnostics, timings, spec text and the analytic
curves the figures need), and :func:`render_run` builds ``report.html`` from that file and the
sampled posteriors (``posterior.nc``, ``posterior_full.nc``) alone. ``bayescheck report DIR``
calls :func:`render_run` again, so a report can be re-drawn without sampling.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from bayescheck.models.errors import BayescheckError

from . import figure_cache
from .calibration_report import (
    CALIBRATION_JSON,
    calibration_only_context,
    calibration_section,
    fingerprints,
    read_calibration,
    same_run_inputs,
)
from .figure_jobs import draw_all, job, prestart
from .plots import import_arviz_stats as _import_arviz_stats
from .posterior_arrays import Posterior
from .writers import clean_json, read_json

__all__ = ["EXIT_CODES", "REPORT_JSON", "render_run", "report_data", "write_report_data"]

#: The exit code of ``check`` and ``report`` for each verdict (here, so that ``report``
#: need not import the check and its statistics).
EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 3}
#: The structured content of a report, written at check time.
REPORT_JSON = "report.json"
#: The files a check's figures are drawn from (the figure cache's key hashes them).
CHECK_FILES = (REPORT_JSON, "posterior.nc", "posterior_full.nc")
#: More parameters than this are summarised (worst rows, histogram of z) in the report.
MAX_ROWS = 20
#: At most this many marginals are drawn one panel each (the worst first).
MAX_CURVES = 12
#: At most this many parameters go into the pair plot (the worst first).
MAX_PAIR = 6
#: Rank and trace plots are drawn for at most this many parameters (the worst first).
MAX_CHAIN_PANELS = 4
STAT_NAMES = ["mean", "sd", "q05", "q50", "q95"]
#: The sampler statistics the figures draw (the traces' divergences, the energy plot); the
#: others in ``posterior.nc`` (nutpie writes 20) are not read.
SAMPLE_STATS_DRAWN = ("diverging", "energy")


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


def _curves(fit, sample, comparison) -> list[dict]:
    """Analytic density and prior of the worst :data:`MAX_CURVES` marginals over their draws."""
    from bayescheck.inference.compare import draws_from_idata

    order = {r["name"]: i for i, r in enumerate(comparison.rows())}  # failing / worst first
    verdicts = {p.name: p.verdict for p in comparison.parameters}
    marginals = sorted(fit.marginals, key=lambda m: order.get(m.name, 0))[:MAX_CURVES]
    draws = draws_from_idata(sample.idata, marginals)
    priors = {p.name: p.dist for p in fit.priors}
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
    from bayescheck.inference.compare import INCONSISTENT_SD

    # Here, not at the top: rendering a report (``bayescheck report``) needs neither.
    from .fit_figures import fit_figures
    from .fit_summary import fit_notes

    fit, comparison, estimates = check.fit, check.comparison, check.estimates
    shown = comparison or estimates
    first = check.sample or check.estimates_sample
    diagnostics = {**_asdict(shown.diagnostics), **_sampler_extras(first.idata)}
    data = {
        "model": fit.model, "verdict": check.verdict,
        "verdict_sentence": _verdict_sentence(
            check.verdict, comparison.verdict if comparison else None,
            estimates.verdict if estimates else None, fit.certificates),
        "certificates": list(fit.certificates),
        "checks": {"exact": comparison.verdict if comparison else None,
                   "estimates": estimates.verdict if estimates else None},
        "spec_path": str(spec.path) if spec.path else "(Python)",
        "data_label": spec.data.label if spec.data is not None else "none (in the spec)",
        "n_rows": fit.n_rows, "n_batches": len(fit.batches), "log_evidence": fit.log_evidence,
        "data_fingerprints": fingerprints(fit),
        "notes": fit_notes(fit, spec), "spec_text": spec_text,
        "sampler": first.sampler,
        "sampling": {"draws": sampling.draws, "tune": sampling.tune,
                     "chains": sampling.chains, "seed": sampling.seed},
        "thresholds": _asdict(shown.thresholds), "diagnostics": diagnostics,
        "timings": check.timings,
        "exact": None, "estimates": None,
        "fit_plots": fit_figures(fit), "trajectory": list(fit.trajectory),
        "predictive": getattr(check, "predictive", None) or {},
    }
    if comparison is not None and comparison.not_judged():
        n = len(comparison.not_judged())
        data["verdict_sentence"] = (data["verdict_sentence"][:-1] + f"; {n} statistic(s) whose "
                                    f"Monte Carlo error is unreliable (heavy tails) were not "
                                    f"judged.")
    if comparison is not None:
        data["exact"] = {"rows": comparison.rows(), "z_threshold": comparison.z_threshold,
                         "not_judged": comparison.not_judged(),
                         "n_comparisons": comparison.n_comparisons,
                         "curves": _curves(fit, check.sample, comparison),
                         "has_priors": bool(fit.priors)}
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
                      for e in fit.estimates]}
    return _jsonable(data)


def _asdict(obj) -> dict:
    from dataclasses import asdict

    return asdict(obj)


def write_report_data(out: Path, data: dict) -> None:
    """Write ``report.json`` (strict JSON: NaN and inf as null)."""
    text = json.dumps(_jsonable(data), indent=1, allow_nan=False)
    (Path(out) / REPORT_JSON).write_text(text + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------ rendering


def _draws(post: Posterior, names: list[dict]) -> dict[str, np.ndarray]:
    """The ``(chain, draw)`` draws of each of ``names`` (``name``, ``var``, ``coords``)."""
    out = {}
    for n in names:
        var = post.group("posterior")[n["var"]].sel(n.get("coords"))
        out[n["name"]] = np.asarray(var.sample_first(), dtype=np.float64)
    return out


def _figure(figures: list, title: str, caption: str, draw, *args):
    """Append a figure drawn later by ``draw(*args)`` (see :mod:`bayescheck.reports.figure_jobs`)."""
    figures.append(job(title, caption, draw, *args))


def _exact_figures(data: dict, post: Posterior) -> list[dict]:
    from . import plots

    exact = data["exact"]
    rows, curves = exact["rows"], exact["curves"]
    n = len(rows)
    figures = []
    many = n > MAX_ROWS
    draws = _draws(post, curves)
    _figure(figures, "Marginal posteriors",
            ("NUTS draws (histogram) with the exact posterior density (red)"
             + (" and the prior (dashed)" if exact["has_priors"] else "")
             + (f"; the {len(curves)} worst of {n} parameters." if len(curves) < n else ".")),
            plots.curves_figure, curves, draws)
    _figure(figures, "Analytic against sampled intervals",
            "5-95 % interval and median of the exact posterior (red) and of the NUTS draws "
            "(blue), in analytic sds from the analytic mean"
            + (f"; the {MAX_ROWS} worst of {n} parameters." if many else "."),
            plots.forest_figure, rows[:MAX_ROWS])
    if many:
        z = [r.get(f"z_{s}") for r in rows for s in STAT_NAMES if _judged(r, s)]
        clipped = plots.clip_z(z, exact["z_threshold"])
        _figure(figures, "All z scores",
                f"Every judged z of the {n} parameters × {len(STAT_NAMES)} statistics, with "
                "the standard normal they follow when the closed form is right and the failure "
                "threshold (dashed)"
                + (f"; {clipped['below'] + clipped['above']} beyond ±{clipped['top']:.3g} are "
                   f"drawn in the edge bins (largest |z| {clipped['max_abs']:.3g})."
                   if clipped["below"] or clipped["above"] else "."),
                plots.z_histogram_figure, z, exact["z_threshold"])
    return figures


def _judged(row: dict, stat: str) -> bool:
    """Whether a comparison row's statistic was judged (see ``ParameterCheck.row``)."""
    return not any(part.split(":", 1)[0] == stat
                   for part in (row.get("not_judged") or "").split("; ") if part)


def _which(shown: int, n: int) -> str:
    """How the drawn parameters relate to all ``n``, for a caption."""
    return f"the {shown} worst of {n} parameters" if shown < n else \
        f"{'both' if n == 2 else 'the'} parameter{'s' if n > 1 else ''}"


def _diverging(post: Posterior):
    """The ``(chain, draw)`` divergence flags of a sampled posterior, or None."""
    var = post.get("sample_stats", "diverging")
    return None if var is None else np.asarray(var.sample_first())


def _worst_mixing(post: Posterior, names: list[dict], rows: list[dict] | None = None
                  ) -> list[dict]:
    """Order ``names`` by how badly the chains mix.

    Highest r_hat first, then lowest bulk ESS, both over every chain of ``post``. The check
    computed both for every parameter of its table (``rows``: arviz_stats' r_hat and bulk
    ESS of the same draws); they are taken from there, and computed here (importing
    arviz_stats) only for names the rows lack.
    """
    known = {r["name"]: r for r in rows or [] if "r_hat" in r and "ess_bulk" in r}

    def measures(n):
        if n["name"] in known:
            r = known[n["name"]]
            return (math.nan if r["r_hat"] is None else r["r_hat"],
                    math.nan if r["ess_bulk"] is None else r["ess_bulk"])
        from arviz_stats.base import array_stats

        x = _draws(post, [n])[n["name"]]
        r_hat = float(array_stats.rhat(x)) if x.shape[0] * x.shape[1] > 3 else math.nan
        ess = float(array_stats.ess(x, method="bulk")) if x.shape[1] > 3 else math.nan
        return r_hat, ess

    def badness(n):
        r_hat, ess = measures(n)
        return (-np.nan_to_num(r_hat, nan=math.inf), np.nan_to_num(ess, nan=-math.inf))

    return sorted(names, key=badness)


def _health_figures(data: dict, post: Posterior, names: list[dict], n: int,
                    suffix: str = "", rows: list[dict] | None = None) -> list[dict]:
    """Rank, trace, energy and pair plots of one sampled posterior of ``n`` parameters.

    ``names`` lists the parameters worst first (by the check's own measure): rank and trace
    plots show the :data:`MAX_CHAIN_PANELS` of them whose chains mix worst (highest r_hat,
    then lowest bulk ESS, over every chain), whatever the model's size; the pair plot the
    first :data:`MAX_PAIR`. ``rows`` are the check's table rows (see :func:`_worst_mixing`).
    """
    from . import plots

    figures = []
    chained = _worst_mixing(post, names, rows)[:MAX_CHAIN_PANELS]
    draws = _draws(post, chained)
    which = (f"the {len(chained)} of {n} parameters whose chains mix worst (highest r_hat, "
             f"then lowest bulk ESS, over every chain)" if len(chained) < n
             else _which(len(chained), n))
    if post.chains() >= 2:
        _figure(figures, "Rank plots" + suffix,
                f"Fractional-rank ECDF of each chain for {which} (at most "
                f"{plots.RANK_DRAWS} evenly spaced draws per chain), with the multi-chain "
                "test's p-value; flat and close together when the chains mix.",
                plots.rank_figure, draws)
    _figure(figures, "Traces" + suffix,
            f"Draws per chain and their densities, for {which}.",
            plots.trace_figure, draws, _diverging(post))
    energy = post.get("sample_stats", "energy")
    if energy is not None:
        _figure(figures, "Energy" + suffix,
                "Marginal energy against energy transitions; similar widths mean the "
                "sampler explores the tails (E-BFMI).", plots.energy_figure,
                np.asarray(energy.sample_first(), dtype=np.float64))
    else:
        figures.append({"title": "Energy" + suffix, "caption": "", "uri": None,
                        "error": "not drawn: the sampler records no energy (Gibbs or "
                                 "Metropolis steps for discrete parameters, no Hamiltonian)"})
    pair = names[:MAX_PAIR]
    if len(pair) >= 2:
        _figure(figures, "Pair plot" + suffix,
                f"Joint draws of {_which(len(pair), n)}: each pair's scatter (at most "
                f"{plots.PAIR_POINTS} evenly spaced draws) below the diagonal, each "
                "parameter's histogram on it.",
                plots.pair_figure, _draws(post, pair))
    return figures


def _ppc_variables(post: Posterior) -> dict[str, dict]:
    """Each observed variable with predictive draws, as plain arrays for the PPC figures.

    ``observed`` (the data), ``predicted`` (``(chain, draw, *observed dims)``), ``labels``
    (of the observed's last dimension, for one panel per column) and ``discrete``.
    """
    from . import plots

    observed, predictive = post.group("observed_data"), post.group("posterior_predictive")
    out = {}
    for name, pred in predictive.items():
        if name not in observed:
            continue
        obs = observed[name]
        order = [pred.dims.index(d) for d in ("chain", "draw", *obs.dims)]
        out[name] = {"name": name, "observed": obs.values,
                     "predicted": np.transpose(pred.values, order),
                     "labels": list(obs.labels(obs.dims[-1])) if obs.dims else None,
                     "discrete": plots.is_discrete(obs.values)}
    return out


def _ppc(data: dict, post: Posterior) -> tuple[list[dict], str | None]:
    from . import plots

    if "posterior_predictive" not in post or "observed_data" not in post:
        reason = (data.get("predictive") or {}).get("skipped") or \
            "the sampled model has no posterior predictive draws"
        return [], reason
    variables = _ppc_variables(post)
    names = list(variables)
    discrete = [v for v in names if variables[v]["discrete"]]
    continuous = [v for v in names if v not in discrete]
    figures = []
    if discrete and continuous:  # a class label and measurements (naive Bayes): one each
        _figure(figures, "Posterior predictive check: discrete data",
                "Rootogram of " + ", ".join(discrete) + ": how often each value (class, "
                "category code) occurs, observed points against the predictive interval.",
                plots.ppc_figure, [variables[v] for v in discrete])
        _figure(figures, "Posterior predictive check: continuous data",
                f"Densities of {plots.PPC_SAMPLES} evenly spaced predictive data sets (thin) "
                "against the data's (thick), one panel per variable and per column.",
                plots.ppc_figure, [variables[v] for v in continuous])
        return figures, None
    _figure(figures, "Posterior predictive check",
            "Data sets drawn from the posterior predictive against the observed data: for "
            "discrete data a rootogram (how often each value occurs: observed points against "
            f"the predictive interval), otherwise the densities of {plots.PPC_SAMPLES} evenly "
            "spaced predictive data sets (thin) against the data's (thick).",
            plots.ppc_figure, [variables[v] for v in names])
    return figures, None


_VERDICTS = ("pass", "fail", "inconclusive")
_TRAJECTORY = "The stream, batch by batch"


def render_run(out: str | Path, posteriors: dict | None = None) -> str:
    """Render ``DIR/report.html`` from a finished run's files; return the HTML.

    Reads ``report.json`` and the sampled posterior(s) of a check, and ``calibration.json``
    of a calibration, whichever the folder holds (both: one report with both); never samples
    or simulates. When the two files are of different specs, the newer one is shown and the
    page says why the other is not.

    Parameters
    ----------
    out : str or Path
        The run folder.
    posteriors : dict, optional
        Sampled posteriors already in memory by file name (``"posterior.nc"``,
        ``"posterior_full.nc"``): the very objects just written to those files, which
        ``check`` passes instead of having them read back (0.3-1 s of CPU for a
        naive-Bayes run). The page is the same (``tests/reports/test_report_html.py``).
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
    stale_note = None
    if data is not None and calibration is not None and \
            not same_run_inputs(data, calibration):
        older = min((REPORT_JSON, CALIBRATION_JSON), key=lambda f: (out / f).stat().st_mtime)
        stale_note = (f"this folder also holds an older {older} of a different spec or data; "
                      f"it is not shown (re-run that command with another --out)")
        data, calibration = (None, calibration) if older == REPORT_JSON else (data, None)
    shown = ", ".join(name for name, content in ((REPORT_JSON, data),
                                                 (CALIBRATION_JSON, calibration)) if content)
    keys = {"check": figure_cache.cache_key(out, "check", CHECK_FILES) if data else None,
            "calibration": figure_cache.cache_key(out, "calibration", (CALIBRATION_JSON,))
            if calibration else None}
    try:
        context = _check_context(out, data, keys, posteriors or {}) if data is not None else \
            calibration_only_context(calibration)
        context.update(calibration=_calibration(out, calibration, keys) if calibration
                       else None, stale_note=stale_note)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OSError) as exc:
        # A foreign, truncated or hand-edited file: say which, not where the reader tripped.
        what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise BayescheckError(f"{out}: {shown} is incomplete or not written by this version "
                              f"of bayescheck ({type(exc).__name__}: {what}); re-run the "
                              f"command that writes it") from None
    html = render_report(context)
    (out / "report.html").write_text(html, encoding="utf-8")
    return html


def _calibration(out: Path, calibration: dict, keys: dict) -> dict:
    """The calibration section, its figure from the cache when the inputs are unchanged."""
    cached = figure_cache.load(out, keys["calibration"])
    if cached and isinstance(cached.get("figure"), str):
        return calibration_section(calibration, figure=cached["figure"])
    _import_arviz_stats()
    section = calibration_section(calibration)
    if section["figure_error"] is None:
        figure_cache.store(out, keys["calibration"], {"figure": section["figure"]},
                           keep=tuple(k for k in keys.values() if k))
    return section


def _check_context(out: Path, data: dict, keys: dict, posteriors: dict) -> dict:
    """The template's context for a check's ``report.json``: its data and figures.

    The figures come from the folder's figure cache when they were drawn from these very
    files by this code (:mod:`bayescheck.reports.figure_cache`); otherwise they are drawn and stored.
    """
    cached = figure_cache.load(out, keys["check"])
    if not (cached and isinstance(cached.get("figures"), list)):
        cached = _draw_check_figures(out, data, posteriors)
        if not any(f.get("failed") for f in cached["figures"]):
            figure_cache.store(out, keys["check"], cached,
                               keep=tuple(k for k in keys.values() if k))
    return {**data, **cached, "has_check": True, "max_rows": MAX_ROWS,
            "stat_names": STAT_NAMES}


def _draw_check_figures(out: Path, data: dict, posteriors: dict) -> dict:
    """Draw a check's figures from ``report.json`` and the sampled posteriors.

    ``posteriors`` holds DataTrees already in memory by file name; the others are read
    from the run folder as plain arrays (:class:`bayescheck.reports.posterior_arrays.Posterior`).
    """
    from . import plots

    if any(entry["kind"] in plots.MATPLOTLIB_FIT_PLOTS for entry in data["fit_plots"]):
        prestart()  # matplotlib figures: the worker's imports overlap the reading below
    figures, ppc_note = [], None

    def posterior(name: str) -> Posterior:
        if name in posteriors:
            return Posterior.of_tree(posteriors[name])
        return Posterior.read(out / name, only={"sample_stats": SAMPLE_STATS_DRAWN})

    post = posterior("posterior.nc")
    if data["exact"] is not None:
        figures += _exact_figures(data, post)
        names = [{k: c[k] for k in ("name", "var", "coords")}
                 for c in data["exact"]["curves"]]
        figures += _health_figures(data, post, names, len(data["exact"]["rows"]),
                                   rows=data["exact"]["rows"])
        ppc_figs, ppc_note = _ppc(data, post)
        figures += ppc_figs
    if data["trajectory"]:
        _figure(figures, _TRAJECTORY,
                "Posterior mean and 90 % interval of each coefficient after each batch; the "
                "last point is the final posterior.",
                plots.trajectory_figure, data["trajectory"])
    for entry in data["fit_plots"]:
        _figure(figures, entry["title"], entry.get("caption", ""), plots.fit_figure_uri,
                entry)
    est = data["estimates"]
    if est is not None:
        full = post if est["file"] == "posterior.nc" else posterior(est["file"])
        figures += _estimate_figures(est, full)
        suffix = " (full posterior)" if est["separate_sampler"] else ""
        names = _worst_estimates(est)
        figures += _health_figures(data, full, names, len(names), suffix, rows=est["rows"])
        if data["exact"] is None:
            ppc_figs, ppc_note = _ppc(data, full)
            figures += ppc_figs
    # a stream of one batch has no trajectory to draw: trajectory_figure returns None
    figures = [f for f in draw_all(figures)
               if not (f["title"] == _TRAJECTORY and f.get("uri", "") is None
                       and "error" not in f)]
    return {"figures": figures, "ppc_note": ppc_note}


def _worst_estimates(est: dict) -> list[dict]:
    order = {r["name"]: i for i, r in enumerate(est["rows"])}
    return sorted(est["names"], key=lambda n: order.get(n["name"], len(order)))


def _estimate_figures(est: dict, post: Posterior) -> list[dict]:
    from . import plots

    draws = _draws(post, est["names"])
    rows = [SimpleNamespace(name=r["name"], verdict=r["verdict"], estimate=r["estimate"],
                            distance_sd=r["distance_sd"] if r["distance_sd"] is not None
                            else math.nan,
                            sampled={"mean": r.get("posterior_mean"),
                                     "lower": r.get("posterior_lower"),
                                     "upper": r.get("posterior_upper")})
            for r in est["rows"]]
    pct = f"{100 * est['level']:g} %"
    figures = []
    _figure(figures, "Point estimates against the full posterior",
            f"NUTS posterior of the model without the estimates plugged in, each row in its "
            f"own posterior sds from its posterior mean (open circle at 0): median and {pct} "
            "central interval (bars) and the analytic point estimate (cross, red when it "
            "fails).",
            plots.estimates_figure, SimpleNamespace(parameters=rows), draws)
    return figures
