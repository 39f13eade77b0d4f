"""The model's own figures in a report: which, with what title, caption and data.

Chosen here from what the family put in the fit (``parameters``, ``info``, ``n_rows`` and,
for the mixture, ``data_matrix``). Each figure is a dict with a ``"kind"`` that
:data:`bayescheck.reports.fit_plots.FIT_PLOTS` draws, a ``"title"``, a ``"caption"`` and the keyword
arguments of the drawing function. :func:`bayescheck.reports.report.report_data` keeps them in
``report.json`` (``"fit_plots"``), from which ``bayescheck report DIR`` draws them again.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from bayescheck.inference.result import AnalyticFit

__all__ = ["FIGURES", "INTERVAL_LEVEL", "MAX_DRAWN_POINTS", "MAX_DRAWN_QUERIES",
           "MAX_DRAWN_WEIGHTS", "fit_figures"]

#: Central interval drawn for each ARD weight.
INTERVAL_LEVEL = 0.9
#: Above this many features the ARD weight figure draws the relevant ones only.
MAX_DRAWN_WEIGHTS = 60
#: At most this many rows (evenly spaced) are drawn under the fitted mixture.
MAX_DRAWN_POINTS = 5000
#: A network's DAG is drawn once per query, for at most this many queries.
MAX_DRAWN_QUERIES = 3


def _ard(fit: AnalyticFit) -> list[dict]:
    from scipy import stats

    w, info = fit.posterior.parameters["w"], fit.record.info
    features, relevant, pruned = w["features"], w["relevant"], set(w["pruned"])
    mean = np.asarray(w["mean"], dtype=np.float64)
    sd = np.asarray(w["sd"], dtype=np.float64)
    z = stats.norm.ppf(0.5 + INTERVAL_LEVEL / 2)
    if len(features) <= MAX_DRAWN_WEIGHTS:
        shown = np.arange(len(features))
    else:
        index = {f: i for i, f in enumerate(features)}
        shown = np.array([index[f] for f in relevant[:MAX_DRAWN_WEIGHTS]], dtype=int)
    caption = (f"Posterior mean and {round(100 * INTERVAL_LEVEL)} % interval of each weight "
               f"given the type-II ML estimates of alpha and sigma2; pruned weights (alpha "
               f"infinite) are exactly 0 (open circles).")
    if len(shown) < len(features):
        caption += (f" {len(features)} weights: only the relevant ones are drawn"
                    f"{f' (the first {len(shown)})' if len(shown) < len(relevant) else ''}.")
    return [
        {"kind": "intervals", "title": "Weights", "caption": caption,
         "names": [features[i] for i in shown], "mean": mean[shown].tolist(),
         "lower": (mean - z * sd)[shown].tolist(), "upper": (mean + z * sd)[shown].tolist(),
         "zero": [features[i] in pruned for i in shown]},
        {"kind": "series", "title": "Log evidence per iteration",
         "caption": f"{info['method']}: log p(y | alpha, sigma2) after each iteration "
                    f"(0 = the starting point).",
         "values": info["log_evidence_per_iteration"], "xlabel": "iteration",
         "ylabel": "log evidence"},
    ]


def _mixture_covariances(parameters: dict) -> np.ndarray:
    """Each component's covariance (K, D, D); with a known sd, ``sd**2 I`` from the sds."""
    if "covariances" in parameters:
        return np.asarray(parameters["covariances"]["estimate"], dtype=np.float64)
    sds = np.asarray(parameters["sds"]["estimate"], dtype=np.float64)
    return sds[:, :, None] ** 2 * np.eye(sds.shape[1])


def _gaussian_mixture(fit: AnalyticFit) -> list[dict]:
    info, p = fit.record.info, fit.posterior.parameters
    estimate = info["estimate"]
    figures = [{"kind": "series", "title": "EM objective per iteration",
                "caption": ("Log-likelihood plus log prior" if estimate == "MAP" else
                            "Log-likelihood") + " after each M step of the best start (it "
                                                "never decreases).",
                "values": info["history"], "xlabel": "iteration", "ylabel": "objective"}]
    X = fit.record.data_matrix
    if X is None:  # a fit built without its data (in Python): nothing to draw the data from
        return figures
    n = X.shape[0]
    rows = np.unique(np.linspace(0, n - 1, min(MAX_DRAWN_POINTS, n)).astype(int))
    figures.append(
        {"kind": "mixture", "title": "The data with the fitted components",
         "caption": f"The {n} rows (at most {MAX_DRAWN_POINTS} drawn) and the {estimate} "
                    f"mixture: each weighted component"
                    + (" density and their sum." if X.shape[1] == 1 else
                       " as its 1- and 2-sd ellipses, on the two features that "
                       "separate the components best (named on the axes)."),
         "points": X[rows], "weights": np.asarray(p["weights"]["estimate"], dtype=np.float64),
         "means": np.asarray(p["means"]["estimate"], dtype=np.float64),
         "covariances": _mixture_covariances(p), "features": p["means"]["features"]})
    return figures


def _bayesian_network(fit: AnalyticFit) -> list[dict]:
    p = fit.posterior.parameters
    nodes, edges = p["nodes"], p["edges"]
    figures = []
    for q in p["query"][:MAX_DRAWN_QUERIES]:
        given = ", ".join(f"{k}={v}" for k, v in q["evidence"].items()) or "no evidence"
        figures.append({"kind": "dag", "title": f"The network, query {q['name']}",
                        "caption": f"Parent -> child, in layers from the roots. The query "
                                   f"P({q['target']} | {given}): target filled orange, "
                                   f"evidence blue.",
                        "nodes": nodes, "edges": edges, "targets": [q["target"]],
                        "evidence": list(q["evidence"])})
    if not figures:
        figures.append({"kind": "dag", "title": "The network",
                        "caption": "Parent -> child, in layers from the roots.",
                        "nodes": nodes, "edges": edges})
    return figures


def _semi_naive_bayes(fit: AnalyticFit) -> list[dict]:
    structure = fit.posterior.parameters["structure"]
    if "edges" not in structure:  # AODE: an average of SPODEs, no single structure
        return []
    target = structure["edges"][0][0]
    nodes = [target, *fit.posterior.parameters["categories"]]
    what = (f"SPODE with super-parent {structure['super_parent']}"
            if structure["kind"] == "spode" else f"TAN rooted at {structure['root']}")
    return [{"kind": "dag", "title": f"The {structure['kind'].upper()} structure",
             "caption": f"{what}: the class (orange) is a parent of every feature; each "
                        f"feature has at most one other feature as parent.",
             "nodes": nodes, "edges": structure["edges"], "targets": [target]}]


#: ``model`` value -> its own figures; models not listed have none.
FIGURES: dict[str, Callable[[AnalyticFit], list[dict]]] = {
    "ard": _ard,
    "gaussian_mixture": _gaussian_mixture,
    "bayesian_network": _bayesian_network,
    "semi_naive_bayes": _semi_naive_bayes,
}


def fit_figures(fit: AnalyticFit) -> list[dict]:
    """The model's own figures of a fit, as data to draw.

    Parameters
    ----------
    fit : inference.AnalyticFit

    Returns
    -------
    list of dict
        Each with ``"kind"`` (a key of :data:`bayescheck.reports.fit_plots.FIT_PLOTS`), ``"title"``,
        ``"caption"`` and the drawing function's arguments; empty for models without figures.
    """
    figures = FIGURES.get(fit.model)
    return figures(fit) if figures is not None else []
