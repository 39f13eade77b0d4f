"""Which figures a check's report shows, with their titles and captions, and drawing them.

:func:`check_figures` reads ``report.json``'s content and the sampled posteriors (xarray
DataTrees) and draws every figure in this process, one after another
(:mod:`bayescheck.reports.plots`, :mod:`bayescheck.reports.fit_plots`). Each figure is a dict
with ``title``, ``caption`` and ``uri`` (a PNG data URI); a figure that cannot be drawn has
``uri`` None and ``error`` saying why, and the rest of the report stands.
"""

from __future__ import annotations

import math

import numpy as np

from . import fit_plots, plots
from .posterior_views import draws, parameter_view, predictive_view

__all__ = ["MAX_CHAIN_PANELS", "MAX_PAIR", "MAX_ROWS", "STAT_NAMES", "check_figures",
           "judged", "worst_mixing"]

#: More parameters than this are summarised (worst rows, histogram of z) in the report.
MAX_ROWS = 20
#: At most this many parameters go into the pair plot (the worst first): each panel costs
#: about 0.08 s of CPU to lay out and draw, so 4 (10 panels) instead of 6 (21) saves about
#: 0.9 s of a report.
MAX_PAIR = 4
#: Rank and trace plots are drawn for at most this many parameters (the worst first).
MAX_CHAIN_PANELS = 4
STAT_NAMES = ["mean", "sd", "q05", "q50", "q95"]
_TRAJECTORY = "The stream, batch by batch"


def _figure(figures: list, title: str, caption: str, draw, *args) -> None:
    """Append the figure ``draw(*args)`` (a data URI); one that fails says why instead."""
    try:
        uri = draw(*args)
    except Exception as exc:  # noqa: BLE001 - one bad figure must not lose the report
        figures.append({"title": title, "caption": caption, "uri": None,
                        "error": f"not drawn: {type(exc).__name__}: {exc}"})
        return
    if uri is not None:  # None: nothing to draw (a stream of one batch)
        figures.append({"title": title, "caption": caption, "uri": uri})


def judged(row: dict, stat: str) -> bool:
    """Whether a comparison row's statistic was judged (see ``ParameterCheck.row``)."""
    return not any(part.split(":", 1)[0] == stat
                   for part in (row.get("not_judged") or "").split("; ") if part)


def _which(shown: int, n: int) -> str:
    """How the drawn parameters relate to all ``n``, for a caption."""
    return f"the {shown} worst of {n} parameters" if shown < n else \
        f"{'both' if n == 2 else 'the'} parameter{'s' if n > 1 else ''}"


def _exact_figures(data: dict, tree) -> list[dict]:
    exact = data["exact"]
    rows, curves = exact["rows"], exact["curves"]
    n = len(rows)
    figures = []
    many = n > MAX_ROWS
    names = [{k: c[k] for k in ("name", "var", "coords")} for c in curves]
    _figure(figures, "Marginal posteriors",
            ("NUTS draws (histogram, with their 89 % interval and mean underneath) and the "
             "exact posterior density (red)"
             + (" and the prior (dashed)" if exact["has_priors"] else "")
             + (f"; the {len(curves)} worst of {n} parameters." if len(curves) < n else ".")),
            lambda: plots.curves_figure(parameter_view(tree, names), curves))
    _figure(figures, "Analytic against sampled intervals",
            "5-95 % interval and median of the exact posterior (red) and of the NUTS draws "
            "(blue), in analytic sds from the analytic mean"
            + (f"; the {MAX_ROWS} worst of {n} parameters." if many else "."),
            plots.forest_figure, rows[:MAX_ROWS])
    if many:
        z = [r.get(f"z_{s}") for r in rows for s in STAT_NAMES if judged(r, s)]
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


def worst_mixing(tree, names: list[dict], rows: list[dict] | None = None) -> list[dict]:
    """Order ``names`` by how badly the chains mix.

    Highest r_hat first, then lowest bulk ESS, both over every chain of ``tree``. The check
    computed both for every parameter of its table (``rows``: arviz_stats' r_hat and bulk
    ESS of the same draws); they are taken from there, and computed here with arviz_stats
    only for names the rows lack.
    """
    known = {r["name"]: r for r in rows or [] if "r_hat" in r and "ess_bulk" in r}

    def measures(n):
        if n["name"] in known:
            r = known[n["name"]]
            return (math.nan if r["r_hat"] is None else r["r_hat"],
                    math.nan if r["ess_bulk"] is None else r["ess_bulk"])
        from arviz_stats.base import array_stats

        x = draws(tree, [n])[n["name"]]
        r_hat = float(array_stats.rhat(x)) if x.shape[0] * x.shape[1] > 3 else math.nan
        ess = float(array_stats.ess(x, method="bulk")) if x.shape[1] > 3 else math.nan
        return r_hat, ess

    def badness(n):
        r_hat, ess = measures(n)
        return (-np.nan_to_num(r_hat, nan=math.inf), np.nan_to_num(ess, nan=-math.inf))

    return sorted(names, key=badness)


def _health_figures(tree, names: list[dict], n: int, suffix: str = "",
                    rows: list[dict] | None = None) -> list[dict]:
    """Rank, trace, energy and pair plots of one sampled posterior of ``n`` parameters.

    ``names`` lists the parameters worst first (by the check's own measure): rank and trace
    plots show the :data:`MAX_CHAIN_PANELS` of them whose chains mix worst (highest r_hat,
    then lowest bulk ESS, over every chain), whatever the model's size; the pair plot the
    first :data:`MAX_PAIR`. ``rows`` are the check's table rows (see :func:`worst_mixing`).
    """
    figures = []
    chained = worst_mixing(tree, names, rows)[:MAX_CHAIN_PANELS]
    which = (f"the {len(chained)} of {n} parameters whose chains mix worst (highest r_hat, "
             f"then lowest bulk ESS, over every chain)" if len(chained) < n
             else _which(len(chained), n))
    view = parameter_view(tree, chained)
    if view["posterior"].sizes["chain"] >= 2:
        _figure(figures, "Rank plots" + suffix,
                f"Fractional-rank Δ-ECDF of each chain for {which} (at most "
                f"{plots.RANK_DRAWS} evenly spaced draws per chain), with the p-value of the "
                "multi-chain uniformity test; close to 0 when the chains mix, the points that "
                "drive a rejection marked.",
                plots.rank_figure, view)
    _figure(figures, "Traces" + suffix,
            f"Each chain's density and draws, for {which}; divergent draws ticked.",
            plots.trace_figure, view)
    if "sample_stats" in view.children and "energy" in view["sample_stats"]:
        _figure(figures, "Energy" + suffix,
                f"Each chain's E-BFMI against {plots.BFMI_THRESHOLD} (left), and the marginal "
                "energy against the energy transitions; similar widths mean the sampler "
                "explores the tails.", plots.energy_figure, view)
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
                lambda: plots.pair_figure(parameter_view(tree, pair,
                                                         max_draws=plots.PAIR_POINTS)))
    return figures


def _ppc(data: dict, tree) -> tuple[list[dict], str | None]:
    if "posterior_predictive" not in tree.children or "observed_data" not in tree.children:
        reason = (data.get("predictive") or {}).get("skipped") or \
            "the sampled model has no posterior predictive draws"
        return [], reason
    view, discrete, continuous = predictive_view(tree)
    rootogram = ("Rootogram of {}: for each value (class, category code, count) the mean "
                 "count over the predictive data sets and its 89 % interval, against the "
                 "observed count, on a square-root scale.")
    densities = (f"Densities of {plots.PPC_SAMPLES} predictive data sets (thin) against the "
                 "data's (thick), one panel per variable and per column.")
    figures = []
    if discrete and continuous:  # a class label and measurements (naive Bayes): one each
        _figure(figures, "Posterior predictive check: discrete data",
                rootogram.format(", ".join(discrete)), plots.ppc_figure, view, discrete, True)
        _figure(figures, "Posterior predictive check: continuous data", densities,
                plots.ppc_figure, view, continuous, False)
    elif discrete:
        _figure(figures, "Posterior predictive check", rootogram.format(", ".join(discrete)),
                plots.ppc_figure, view, discrete, True)
    else:
        _figure(figures, "Posterior predictive check", densities, plots.ppc_figure, view,
                continuous, False)
    return figures, None


def _worst_estimates(est: dict) -> list[dict]:
    order = {r["name"]: i for i, r in enumerate(est["rows"])}
    return sorted(est["names"], key=lambda n: order.get(n["name"], len(order)))


def _estimate_figures(est: dict, tree) -> list[dict]:
    rows = [{"name": r["name"], "verdict": r["verdict"], "estimate": r["estimate"],
             "distance_sd": r["distance_sd"], "lower": r.get("posterior_lower"),
             "upper": r.get("posterior_upper")} for r in est["rows"]]
    pct = f"{100 * est['level']:g} %"
    figures = []
    _figure(figures, "Point estimates against the full posterior",
            f"NUTS posterior of the model without the estimates plugged in, each row in its "
            f"own posterior sds from its posterior mean (open circle at 0): median and {pct} "
            "central interval (bars) and the analytic point estimate (cross, red when it "
            "fails).",
            lambda: plots.estimates_figure(rows, draws(tree, est["names"])))
    return figures


def check_figures(data: dict, posterior) -> tuple[list[dict], str | None]:
    """Draw a check's figures from ``report.json``'s content and its sampled posteriors.

    Parameters
    ----------
    data : dict
        The content of ``report.json``.
    posterior : callable
        ``posterior(file_name)`` returns the DataTree of ``"posterior.nc"`` or
        ``"posterior_full.nc"``.

    Returns
    -------
    figures : list of dict
        ``title``, ``caption``, ``uri`` (a PNG data URI, or None with an ``error``).
    ppc_note : str or None
        Why there is no posterior predictive check, when there is none.
    """
    figures, ppc_note = [], None
    tree = posterior("posterior.nc")
    if data["exact"] is not None:
        figures += _exact_figures(data, tree)
        names = [{k: c[k] for k in ("name", "var", "coords")} for c in data["exact"]["curves"]]
        figures += _health_figures(tree, names, len(data["exact"]["rows"]),
                                   rows=data["exact"]["rows"])
        ppc_figs, ppc_note = _ppc(data, tree)
        figures += ppc_figs
    if data["trajectory"]:
        _figure(figures, _TRAJECTORY,
                "Posterior mean and 90 % interval of each coefficient after each batch; the "
                "last point is the final posterior.",
                fit_plots.trajectory_figure, data["trajectory"])
    for entry in data["fit_plots"]:
        _figure(figures, entry["title"], entry.get("caption", ""), fit_plots.fit_figure,
                entry)
    est = data["estimates"]
    if est is not None:
        full = tree if est["file"] == "posterior.nc" else posterior(est["file"])
        figures += _estimate_figures(est, full)
        suffix = " (full posterior)" if est["separate_sampler"] else ""
        names = _worst_estimates(est)
        figures += _health_figures(full, names, len(names), suffix, rows=est["rows"])
        if data["exact"] is None:
            ppc_figs, ppc_note = _ppc(data, full)
            figures += ppc_figs
    return figures, ppc_note
