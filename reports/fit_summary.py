"""The lines of text that describe an analytic fit.

``bayescheck fit`` prints them after the marginals, ``posterior.json`` keeps them as
``"notes"`` and the report shows them. They are worded here from what the family put in the
fit (``parameters``, ``info`` and ``findings``) and from the spec; the families in
``inference.families`` produce numbers, not sentences.

This module is on the path of ``bayescheck fit``: it imports nothing heavy.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
from bayescheck.inference.result import AnalyticFit
from bayescheck.models.spec import Spec

__all__ = ["NOTES", "SUMMARY_LINES", "fit_notes", "marginals_heading", "missing_moments",
           "model_settings", "parameter_lines", "posterior_document", "summary_lines"]


def _ard_threshold(info: dict, n: int, m: int) -> list[str]:
    """What ``relevance_threshold = "auto"`` chose, and why (nothing for other settings)."""
    if info.get("relevance_threshold") != "auto" or "relevance_threshold_used" not in info:
        return []
    if info["relevance_threshold_used"] == "ric":
        return [f"relevance_threshold \"auto\" chose \"ric\" (keep a weight when q^2/s > "
                f"2 log M): the design has at least as many columns ({m}) as rows ({n}), "
                f"where exact type-II ML interpolates y; set [fit] relevance_threshold = 1 "
                f"for the exact criterion"]
    return ["relevance_threshold \"auto\": exact type-II ML (q^2/s > 1)"]


def _ard(fit: AnalyticFit, spec: Spec) -> list[str]:
    w, sigma2, info = (
        fit.posterior.parameters["w"],
        fit.posterior.parameters["sigma2"],
        fit.record.info,
    )
    features, relevant = w["features"], w["relevant"]
    lines = [("alpha and sigma2 held fixed (not estimated)" if not sigma2["estimated"] else
              f"{info['method']}: {info['n_iter']} iteration(s), "
              f"{'converged' if info['converged'] else 'NOT converged (max_iter reached)'}"),
             f"relevant: {', '.join(relevant) or '(none)'} ({len(relevant)} of {len(features)})",
             *_ard_threshold(info, fit.record.n_rows, len(features)),
             f"sigma2 {sigma2['value']:.6g}"]
    n, m = fit.record.n_rows, len(features)
    if n < m:
        lines.append(f"more features ({m}) than rows ({n}): the weights are not identified "
                     f"by the data alone; at the type-II ML optimum at most {n} of them are "
                     f"kept")
    zero = fit.record.findings.get("zero_columns", [])
    if zero:
        lines.append(f"all-zero column(s) {', '.join(zero)} in {spec.data.label}: never "
                     f"relevant, pruned")
    const = fit.record.findings.get("constant_columns", [])
    if const and spec.model.intercept:
        lines.append(f"constant column(s) {', '.join(const)} duplicate the intercept: they "
                     f"share its role (collinear columns; the evidence decides which are kept)")
    elif len(const) > 1:
        lines.append(f"constant columns {', '.join(const)} duplicate each other: at most one "
                     f"acts as the intercept (collinear columns; the evidence decides)")
    if fit.record.findings.get("noise_collapsed"):
        lines.append(f"sigma2 ({sigma2['value']:.3g}) collapsed: the {len(relevant)} kept "
                     f"weights interpolate the {n} rows (type-II ML over-fits here); a larger "
                     f"[fit] relevance_threshold (\"ric\") keeps fewer weights")
    for cert in fit.record.certificates:
        lines.append(f"optimality certificate: {cert['verdict']}: {cert['reason']}")
    return lines


def _gaussian_mixture(fit: AnalyticFit, spec: Spec) -> list[str]:
    info, p = fit.record.info, fit.posterior.parameters
    lines = [f"{info['estimate']} by EM: {info['n_iter']} iteration(s), "
             f"{'converged' if info['converged'] else 'stopped at max_iter'}; "
             f"log-likelihood {info['log_likelihood']:.6f}"]
    components = zip(p["weights"]["estimate"], p["means"]["estimate"], p["sds"]["estimate"],
                     strict=True)
    for k, (weight, means, sds) in enumerate(components):
        mean = ", ".join(f"{v:.6g}" for v in means)
        sd = ", ".join(f"{v:.4g}" for v in sds)
        lines.append(f"component {k}: weight {weight:.4f}  mean ({mean})  sd ({sd})")
    if len(info["restart_log_likelihoods"]) > 1:
        lines.append("final log-likelihood of each start: " + ", ".join(
            f"{v:.4f}" for v in info["restart_log_likelihoods"]))
    for c in info.get("near_singular_components", []):
        eig = ", ".join(f"{v:.3g}" for v in c["eigenvalues"])
        lines.append(f"component {c['component']} is near singular: {c['rows']:.1f} rows, "
                     f"covariance eigenvalues {eig}; in its thinnest direction its variance "
                     f"is {c['relative_variance']:.2g} of the whole mixture's (flagged below "
                     f"{info['near_singular_ratio']:g}): its points lie almost on a "
                     f"lower-dimensional plane, a degenerate maximum of the likelihood "
                     f"rather than a cluster; fewer components or a covariance prior "
                     f"([prior] iw_* / ig_*) avoid it")
    return lines + list(info["messages"])


def _naive_bayes_plug_in(fit: AnalyticFit, spec: Spec) -> list[str]:
    """The probabilities the predictions use, named like the marginals, with their source."""
    model, p = spec.model, fit.posterior.parameters
    source = {"frequency": "maximum-likelihood class frequencies",
              "dirichlet": "Dirichlet posterior means"}[model.class_prior]
    used = [f"class prior = {source}",
            "categorical features = " + ("posterior means" if model.smoothing else
                                         "maximum-likelihood frequencies")]
    if model.gaussians:
        used.append("Gaussian features = " + (
            "maximum-likelihood Normal (variance / N)" if model.gaussian == "ml" else
            "Student-t posterior predictive"))
    lines = ["the predictions (query probabilities, decisions, predict) use these plug-in "
             "values, not the marginals above: " + "; ".join(used)]
    for c, v in p["class_prior"].items():
        lines.append(f"plug-in {f'class_prior[{c}]':<24} {v:.6g}")
    for name, entry in p["features"].items():
        if entry["kind"] == "categorical":
            for c, probs in entry["probabilities"].items():
                lines += [f"plug-in {f'p_{name}[{c}, {v}]':<24} {q:.6g}"
                          for v, q in probs.items()]
        elif entry["model"] == "ml":
            for c in entry["mean"]:
                lines.append(f"plug-in {f'mean[{c}, {name}]':<24} {entry['mean'][c]:.6g}  "
                             f"variance {entry['variance'][c]:.6g}")
        else:
            t = entry["predictive"]
            for c in t["loc"]:
                lines.append(f"plug-in {f'predictive[{c}, {name}]':<24} Student-t loc "
                             f"{t['loc'][c]:.6g}  scale {t['scale'][c]:.6g}  df {t['df'][c]:.6g}")
    return lines


def _naive_bayes(fit: AnalyticFit, spec: Spec) -> list[str]:
    queries = fit.posterior.parameters["query"]
    lines = [] if spec.model.bayesian_predictive else _naive_bayes_plug_in(fit, spec)
    for q in queries:
        probs = ", ".join(f"P({c}|x) = {p:.4f}" for c, p in q["probabilities"].items())
        scores = ", ".join(f"{c} {v:.4g}" for c, v in q["scores"].items())
        risks = ", ".join(f"{o} {r:.4g}" for o, r in q["risk"].items())
        lines.append(f"query {q['name']}: {probs}; scores {scores}; decide {q['decision']} "
                     f"(expected risk: {risks})")
    if queries and not spec.model.bayesian_predictive:
        lines.append("the query probabilities are not cross-checked: with smoothing = false, "
                     "class_prior = 'frequency' or gaussian = 'ml' they are not the posterior "
                     "predictive of the declared model; check compares that model's parameter "
                     "posteriors only")
    return lines


def _bayes_rule(fit: AnalyticFit, spec: Spec) -> list[str]:
    p = fit.posterior.parameters
    observation = p["observation"]
    lines = [f"P({h} | {observation}) = {v:.6g}" for h, v in p["posterior"]["mean"].items()]
    lines.append(f"P({observation}) = {p['evidence']:.6g}")
    return lines


def _bayesian_network(fit: AnalyticFit, spec: Spec) -> list[str]:
    queries, independences = (
        fit.posterior.parameters["query"],
        fit.posterior.parameters["independence"],
    )
    lines = []
    for q in queries:
        given = ", ".join(f"{k}={v}" for k, v in q["evidence"].items()) or "no evidence"
        probs = ", ".join(f"{s} {p:.4f}" for s, p in q["probabilities"].items())
        lines.append(f"query {q['name']}: P({q['target']} | {given}) = {probs} "
                     f"(P(evidence) = {q['p_evidence']:.4g})")
    for ind in independences:
        what = (f"{','.join(ind['x'])} _||_ {','.join(ind['y'])} | "
                f"{','.join(ind['given']) or '{}'}")
        if ind["d_separated"]:
            lines.append(f"independence {ind['name']}: {what}: d-separated")
        else:
            lines.append(f"independence {ind['name']}: {what}: NOT d-separated, path "
                         f"{' - '.join(ind['path'])} in the moral graph of the ancestral set"
                         + (f" (married parents: {ind['moral_links']})"
                            if ind["moral_links"] else ""))
    em = fit.posterior.parameters.get("em")
    if em is not None:
        lines.append(f"{em['missing_cells']} missing cell(s) in {em['incomplete_rows']} of "
                     f"{fit.record.n_rows} rows: the CPTs are {em['words']}")
        state = "converged" if fit.posterior.parameters["fit"]["converged"] else "NOT converged"
        lines.append(
            f"EM: {state} after {fit.posterior.parameters['fit']['n_iter']} iteration(s); log "
            f"likelihood of the observed cells {em['log_likelihood']:.4f}"
        )
        if "declaration" in fit.record.info:
            lines.append(f"check's PyMC declaration: {fit.record.info['declaration']}; the EM "
                         f"estimate is judged as the posterior mode")
        return lines
    bdeu = "bdeu" in fit.posterior.parameters["prior"]
    lines.append(f"log marginal likelihood of the structure ({'BDeu' if bdeu else 'BD'}): "
                 f"{fit.record.info['log_marginal_likelihood']:.4f}")
    skipped = [q["name"] for q in queries if not q["cross_checked"]]
    if skipped:
        lines.append(f"queries {skipped} have too many hidden configurations to enumerate in "
                     f"the PyMC declaration: answered, not cross-checked")
    return lines


def _semi_naive_bayes(fit: AnalyticFit, spec: Spec) -> list[str]:
    kind, structure = spec.model.kind, fit.posterior.parameters["structure"]
    queries = fit.posterior.parameters["query"]
    lines = []
    if kind == "spode":
        cv = structure.get("cross_validation")
        how = (f"chosen by {cv['folds']}-fold cross-validation (accuracy "
               + ", ".join(f"{f} {a:.3f}" for f, a in cv["accuracy"].items()) + ")"
               if cv else "given")
        lines.append(f"SPODE super-parent {structure['super_parent']}: {how}")
    elif kind == "tan":
        lines.append("TAN tree: " + ", ".join(f"{p} -> {f}" for f, p in
                                               structure["parents"].items() if p))
    for q in queries:
        probs = ", ".join(f"P({c}|x) = {p:.4f}" for c, p in q["probabilities"].items())
        extra = ""
        if kind == "aode":
            extra = (" (naive Bayes: no super-parent value has m' rows)"
                     if q["naive_bayes_fallback"] else
                     f" (super-parents: {', '.join(q['super_parents'])})")
        decide = ""
        if not fit.posterior.parameters["decision"]["zero_one"]:
            risks = ", ".join(f"{o} {r:.4g}" for o, r in q["risk"].items())
            decide = f"; decision {q['decision']} (expected loss {risks})"
        lines.append(f"query {q['name']}: {probs}; most probable {q['most_probable']}{extra}"
                     f"{decide}")
    if kind == "aode":
        skipped = [q["name"] for q in queries if q["unseen"] or q["naive_bayes_fallback"]]
        if skipped:
            lines.append(f"queries {skipped} are not cross-checked (an unseen category, or the "
                         f"naive-Bayes fallback)")
    return lines


#: ``model`` value -> the lines describing its fit; models not listed have none (their
#: marginals and log evidence say it all).
NOTES: dict[str, Callable[[AnalyticFit, Spec], list[str]]] = {
    "ard": _ard,
    "gaussian_mixture": _gaussian_mixture,
    "naive_bayes": _naive_bayes,
    "bayes_rule": _bayes_rule,
    "bayesian_network": _bayesian_network,
    "semi_naive_bayes": _semi_naive_bayes,
}


def _linear_regression_moments(fit: AnalyticFit, spec: Spec) -> str | None:
    """Unknown noise: what a posterior shape a <= 2 of sigma2 leaves without a finite value.

    theta's sd needs a > 1 (Student-t, df = 2a > 2), sigma2's mean a > 1 and its sd a > 2
    (InverseGamma).
    """
    sigma2 = fit.posterior.parameters.get("sigma2", {})
    if "shape" not in sigma2:
        return None  # known noise: Normal marginals, every moment finite
    model = spec.model
    a, a0, n = float(sigma2["shape"]), float(model.noise_shape), int(fit.record.n_rows)
    d = len(fit.posterior.parameters["theta"]["features"])
    if a > 2:
        return None
    if a <= 1:
        what = (f"theta's posterior marginals are Student-t with df = 2a = {2 * a:g} <= 2 "
                f"degrees of freedom, whose variance is infinite, so theta has no sd (nor "
                f"covariance); and sigma2's posterior, InverseGamma with shape a = {a:g}, has "
                f"no finite mean nor sd (they need a > 1 and a > 2)")
    else:
        what = (f"sigma2's posterior is InverseGamma with shape a = {a:g} <= 2, whose variance "
                f"is infinite, so sigma2 has no sd (it needs a > 2; theta's Student-t "
                f"marginals, df = 2a = {2 * a:g}, do have one)")
    if model.flat:
        how = f"noise_shape + (rows - coefficients) / 2 = {a0:g} + ({n} - {d}) / 2"
        rows = math.floor(d + 2 * (2 - a0)) + 1  # the least n with a0 + (n - d) / 2 > 2
        shape = 2 - (n - d) / 2
    else:
        how = f"noise_shape + rows / 2 = {a0:g} + {n} / 2"
        rows = math.floor(2 * (2 - a0)) + 1
        shape = 2 - n / 2
    proper = (", or give theta a proper prior ([prior] mean and cov: a gains coefficients / "
              "2)" if model.flat and a + d / 2 > 2 else "")
    return (f"the posterior is proper but heavy-tailed: {what}; posterior.json holds only "
            f"finite means and sds. Here a = {how}: fit at least {rows} rows (a > 2), or "
            f"raise [prior] noise_shape above {shape:g}{proper}")


#: ``model`` value -> why its fit has a moment posterior.json cannot hold (a posterior mean or
#: sd that is infinite or undefined although the posterior itself is proper), else None.
MISSING_MOMENTS: dict[str, Callable[[AnalyticFit, Spec], str | None]] = {
    "linear_regression": _linear_regression_moments,
}


def missing_moments(fit: AnalyticFit, spec: Spec) -> str | None:
    """Why the fit's posterior has a mean or sd that does not exist, or None.

    A heavy-tailed posterior (Student-t with df <= 2, InverseGamma with shape <= 2) is proper,
    but its variance (or mean) is infinite; ``posterior.json`` promises a finite mean and sd
    for every parameter, so ``fit`` refuses it with this explanation (the quantity, why, and
    what to change) instead of a bare non-finite value.
    """
    why = MISSING_MOMENTS.get(fit.model)
    return why(fit, spec) if why is not None else None


def marginals_heading(fit: AnalyticFit, spec: Spec) -> str | None:
    """The line ``fit`` prints above the marginals when they are not what predictions use.

    Parameters
    ----------
    fit : inference.AnalyticFit
    spec : models.Spec
        The spec that was fitted.

    Returns
    -------
    str or None
        For naive Bayes with plug-in settings (``smoothing = false``, frequency class prior
        or ML Gaussians): the marginals are the declared Bayesian model's, what ``check``
        compares; None otherwise (the marginals are what the fit reports).
    """
    if fit.model == "naive_bayes" and not spec.model.bayesian_predictive:
        return ("posterior marginals of the declared Bayesian model (Dirichlet / NIG "
                "priors): what check compares; the predictions do not use them")
    return None


def fit_notes(fit: AnalyticFit, spec: Spec) -> list[str]:
    """The lines describing a fit beyond its marginals and estimates.

    Parameters
    ----------
    fit : inference.AnalyticFit
        From :func:`bayescheck.inference.fit` on ``spec``.
    spec : models.Spec
        The spec that was fitted (some lines name its data or depend on its settings).

    Returns
    -------
    list of str
        For example the iterations of an iterative fit, the relevant weights, query
        predictions or what is unusual about the data; empty for models without notes.
    """
    lines = NOTES.get(fit.model)
    return lines(fit, spec) if lines is not None else []


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def model_settings(spec: Spec) -> dict:
    """What the fit used: every field of the model object, and the defaults applied.

    Parameters
    ----------
    spec : models.Spec
        The spec that was fitted.

    Returns
    -------
    dict
        ``"model"``: each field of the model dataclass (priors, intercept, smoothing, ...) as
        the fit used it, arrays as lists; ``"sampling"``: the NUTS settings of the spec (flags
        of ``check`` may override them); ``"defaults_applied"``: the dotted spec keys that were
        absent, so their value in ``"model"`` is the default (empty for a spec built in
        Python).
    """
    model = spec.model
    values = ({f.name: _jsonable(getattr(model, f.name)) for f in dataclasses.fields(model)}
              if dataclasses.is_dataclass(model) else {})
    sampling = (dataclasses.asdict(spec.sampling) if dataclasses.is_dataclass(spec.sampling)
                else {})
    return {"model": values, "sampling": sampling, "defaults_applied": list(spec.defaults)}


def posterior_document(fit: AnalyticFit, spec: Spec) -> dict:
    """The content of ``posterior.json``: the fit's JSON, its settings and notes.

    Parameters
    ----------
    fit : inference.AnalyticFit
    spec : models.Spec
        The spec that was fitted.

    Returns
    -------
    dict
        :meth:`bayescheck.inference.AnalyticFit.to_json` with ``"settings"``
        (:func:`model_settings`), then ``"notes"`` when there are any, then ``"fit"``.
    """
    document = fit.to_json()
    info = document.pop("fit", None)
    document["settings"] = model_settings(spec)
    notes = fit_notes(fit, spec)
    if notes:
        document["notes"] = notes
    if info is not None:
        document["fit"] = info
    return document


#: ``bayescheck fit`` without ``--verbose`` prints about this many parameter lines at most.
SUMMARY_LINES = 60

#: A table (the entries of one variable) of at most this many entries is printed whole;
#: a larger one shows its first :data:`SHOWN_OF_LARGE` entries.
SMALL_TABLE = 8
SHOWN_OF_LARGE = 3


def parameter_lines(lines: list[tuple[str, str]]) -> list[str]:
    """Every line of ``(variable, text)`` pairs (``fit --verbose``)."""
    return [text for _, text in lines]


def summary_lines(lines: list[tuple[str, str]], where) -> list[str]:
    """The lines ``bayescheck fit`` prints by default: the largest tables cut short.

    ``lines`` are ``(variable, text)`` pairs in order, one per scalar parameter. When they
    number at most :data:`SUMMARY_LINES` they are all printed. Otherwise a variable with
    at most :data:`SMALL_TABLE` entries is printed whole and a larger one shows its first
    :data:`SHOWN_OF_LARGE` and how many more it has, until :data:`SUMMARY_LINES` lines are
    printed; the last line says how many were left out and where they all are (``where``,
    the ``posterior.json`` written, or ``--verbose``).
    """
    if len(lines) <= SUMMARY_LINES:
        return parameter_lines(lines)
    groups: dict[str, list[str]] = {}
    for var, text in lines:
        groups.setdefault(var, []).append(text)
    out: list[str] = []
    left_tables = left_entries = 0
    for var, texts in groups.items():
        if len(out) >= SUMMARY_LINES:
            left_tables += 1
            left_entries += len(texts)
            continue
        if len(texts) <= SMALL_TABLE:
            out += texts
        else:
            out += texts[:SHOWN_OF_LARGE]
            out.append(f"  ... {len(texts) - SHOWN_OF_LARGE} more entries of {var}")
    if left_tables:
        out.append(f"  ... {left_tables} more tables ({left_entries} entries)")
    out.append(f"  (a summary of {len(lines)} values: all of them are in {where},")
    out.append("   and 'bayescheck fit --verbose' prints them)")
    return out
