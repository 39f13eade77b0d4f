"""The report's figures of a sampled posterior, as PNG data URIs (the HTML is self-contained).

The sampler's diagnostics are arviz_plots' own figures (``plot_dist``, ``plot_rank``,
``plot_trace_dist``, ``plot_energy``, ``plot_pair``, ``plot_ppc_rootogram``,
``plot_ppc_dist``, with arviz_stats' KDE, ranks and tests), drawn on views of the posterior
that hold one variable per drawn parameter (:mod:`bayescheck.reports.posterior_views`). The
figures made of the check's own numbers (analytic against sampled intervals, the z scores,
the point estimates) are plain matplotlib. Everything is drawn with the headless Agg
backend, in the process that asks; the model's own pictures are in
:mod:`bayescheck.reports.fit_plots`.
"""

from __future__ import annotations

import base64
import io
import math
import sys
import warnings
from contextlib import contextmanager

import numpy as np

__all__ = ["BFMI_THRESHOLD", "PAIR_POINTS", "PPC_SAMPLES", "RANK_DRAWS", "clip_z",
           "curves_figure", "energy_figure", "estimates_figure", "figure_uri",
           "forest_figure", "new_figure", "pair_figure", "ppc_figure", "rank_figure",
           "trace_figure", "z_histogram_figure"]

#: Rank plots use at most this many evenly spaced draws per chain (the multi-chain test's
#: cost grows with the draws).
RANK_DRAWS = 300
#: Pair plots show at most this many evenly spaced draws (chains pooled).
PAIR_POINTS = 2000
#: The posterior predictive check of continuous data draws this many predictive data sets.
PPC_SAMPLES = 50
#: E-BFMI below this suggests the sampler explores the tails poorly (arviz' threshold).
BFMI_THRESHOLD = 0.3
#: zlib level of the embedded PNGs (1: fastest; the pixels do not depend on it).
PNG_COMPRESSION = 1
#: Colours of the analytic (red) and sampled (blue) marks.
ANALYTIC, SAMPLED = "#d62728", "#08519c"


def pyplot():
    """matplotlib.pyplot, with the headless Agg backend unless the caller chose one.

    A program that imported pyplot itself (a notebook) keeps its backend; figures are
    closed once encoded either way.
    """
    if "matplotlib.pyplot" not in sys.modules:
        import matplotlib

        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def new_figure(width: float, height: float, rows: int = 1, cols: int = 1, **kwargs):
    """A matplotlib figure and its axes (``plt.subplots``, squeezed), on Agg.

    Laid out by matplotlib's constrained layout, which keeps labels and legends (also
    those right of the axes) inside the figure.
    """
    kwargs.setdefault("layout", "constrained")
    return pyplot().subplots(rows, cols, figsize=(width, height), **kwargs)


def figure_uri(fig, dpi: int = 80) -> str:
    """Encode a matplotlib figure as a ``data:image/png;base64,...`` URI and close it.

    Every figure here is laid out by constrained layout, so the image is not cropped to
    what is drawn (``bbox_inches="tight"``: one more layout pass, 10-40 % of the save).
    """
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=dpi,
                    pil_kwargs={"compress_level": PNG_COMPRESSION})
    finally:
        pyplot().close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _collection_uri(pc) -> str:
    """The data URI of an arviz_plots PlotCollection's figure."""
    return figure_uri(pc.viz["figure"].item())


def _layout(panels: int, cols: int, width: float, height: float) -> dict:
    """arviz_plots' ``figure_kwargs`` for ``panels`` panels, ``cols`` to a row.

    Each panel ``width`` x ``height`` inches, laid out by matplotlib's constrained layout (no
    title over a tick label).
    """
    rows = math.ceil(panels / min(cols, panels))
    return {"figsize": (width * min(cols, panels), height * rows), "figsize_units": "inches",
            "layout": "constrained"}


def _arviz_plots():
    pyplot()
    import arviz_plots

    return arviz_plots


@contextmanager
def _quiet():
    """Silence arviz' advice while drawing (``look binary``, chain longer than draw).

    The report draws what it must; the warnings would only reach the user's terminal.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


# -------------------------------------------------------------------- arviz_plots figures


def curves_figure(view, curves: list[dict]) -> str:
    """Each marginal's draws as a histogram, with the exact density and the prior over it.

    ``view`` holds one posterior variable per curve (``curves[i]["name"]``); the exact
    density is ``curves[i]["pdf"]`` on ``curves[i]["grid"]`` (computed at check time), the
    prior ``"prior"`` (dashed). ``arviz_plots.plot_dist`` (histogram, 89 % interval and
    mean), three to a row, with the curves drawn on its panels.
    """
    from .posterior_views import panel_name

    azp = _arviz_plots()
    with _quiet():
        pc = azp.plot_dist(view, kind="hist", col_wrap=3,
                           visuals={"point_estimate_text": False},
                           figure_kwargs=_layout(len(curves), 3, 3.6, 1.9))
    drawn = {"pdf": False, "prior": False}
    for c in curves:
        ax = pc.get_target(panel_name(c["name"]), {})
        grid = np.asarray(c["grid"], dtype=np.float64)
        if c.get("pdf") is not None:
            ax.plot(grid, np.asarray(c["pdf"], dtype=np.float64), color=ANALYTIC, lw=1.8,
                    label="exact posterior")
            drawn["pdf"] = True
        if c.get("prior") is not None:
            ax.plot(grid, np.asarray(c["prior"], dtype=np.float64), color="#525252", lw=1.2,
                    ls="--", label="prior")
            drawn["prior"] = True
        if c.get("verdict"):
            ax.set_title(f"{panel_name(c['name'])}  ({c['verdict']})", fontsize=9)
    if any(drawn.values()):
        first = pc.get_target(panel_name(curves[0]["name"]), {})
        first.legend(fontsize=7, loc="upper left", frameon=False)
    return _collection_uri(pc)


def rank_figure(view, max_draws: int = RANK_DRAWS) -> str:
    """Fractional-rank Δ-ECDF of each chain, one panel per parameter (``plot_rank``).

    Every k-th draw is used so that each chain keeps at most ``max_draws``. The multi-chain
    uniformity test's p-value is written on each panel; when it rejects, the points that
    drive the rejection are marked.
    """
    azp = _arviz_plots()
    step = max(1, math.ceil(view["posterior"].sizes["draw"] / max_draws))
    thinned = view.isel(draw=slice(None, None, step))
    with _quiet():
        pc = azp.plot_rank(thinned, col_wrap=3,
                           figure_kwargs=_layout(len(thinned["posterior"].data_vars), 3, 3.6,
                                                 1.9))
        pc.add_legend("chain", loc="outside right upper", fontsize=7)
    return _collection_uri(pc)


def trace_figure(view) -> str:
    """Each chain's density (arviz_stats' KDE) and draws, one row per parameter.

    ``plot_trace_dist`` with ``compact=False``; divergent draws, when the view's
    ``sample_stats`` has any, are ticked under the trace and the density.
    """
    azp = _arviz_plots()
    with _quiet():
        rows = len(view["posterior"].data_vars)
        pc = azp.plot_trace_dist(view, compact=False,
                                 figure_kwargs={"figsize": (10.0, 0.4 + 1.7 * rows),
                                                "figsize_units": "inches",
                                                "layout": "constrained"})
        pc.add_legend("chain", loc="outside right upper", fontsize=7)
    return _collection_uri(pc)


def energy_figure(view) -> str:
    """E-BFMI of each chain against 0.3, and the marginal energy against its transitions.

    ``plot_energy`` on the view's ``sample_stats.energy``.
    """
    azp = _arviz_plots()
    with _quiet():
        pc = azp.plot_energy(view, threshold=BFMI_THRESHOLD,
                             figure_kwargs={"figsize": (9.0, 2.6), "figsize_units": "inches",
                                            "layout": "constrained"})
    return _collection_uri(pc)


def pair_figure(view) -> str:
    """Every pair's scatter below the diagonal, each parameter's histogram on it (``plot_pair``).

    The view should be thinned already (see
    :func:`bayescheck.reports.posterior_views.parameter_view`'s ``max_draws``).
    """
    azp = _arviz_plots()
    with _quiet():
        k = len(view["posterior"].data_vars)
        pm = azp.plot_pair(view, marginal_kind="hist",
                           visuals={"scatter": {"alpha": 0.3}, "divergence": False},
                           figure_kwargs={"figsize": (0.6 + 1.9 * k, 0.4 + 1.6 * k),
                                          "figsize_units": "inches", "layout": "constrained"})
    return _collection_uri(pm)


def ppc_figure(view, var_names: list[str], discrete: bool) -> str:
    """Posterior predictive draws against the observed data, one panel per variable.

    ``view`` from :func:`bayescheck.reports.posterior_views.predictive_view`. Integer or
    boolean data get a rootogram (``plot_ppc_rootogram``: each value's mean count and 89 %
    interval over the predictive data sets against the observed count, on a square-root
    scale); other data the densities of :data:`PPC_SAMPLES` predictive data sets against
    the data's (``plot_ppc_dist``).
    """
    azp = _arviz_plots()
    with _quiet():
        if discrete:
            pc = azp.plot_ppc_rootogram(view, var_names=var_names, col_wrap=4,
                                        figure_kwargs=_layout(len(var_names), 4, 3.0, 2.1))
        else:
            pc = azp.plot_ppc_dist(view, var_names=var_names, kind="kde",
                                   num_samples=PPC_SAMPLES, col_wrap=3,
                                   figure_kwargs=_layout(len(var_names), 3, 3.6, 1.9))
    return _collection_uri(pc)


# ------------------------------------------------------------ figures of the check's numbers


def _row_labels(ax, labels: list[str]) -> np.ndarray:
    """Put ``labels`` top to bottom as y tick labels; return their y positions."""
    y = np.arange(len(labels))[::-1].astype(float)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_ylim(-0.6, len(labels) - 0.4)
    return y


def _standardise(v, *, mu: float, sd: float) -> float:
    return np.nan if v is None else (v - mu) / sd


def forest_figure(rows: list[dict]) -> str:
    """Analytic against sampled 5-95 % intervals and medians, one row per parameter.

    Each row is on the scale of its analytic sd around its analytic mean, so parameters of
    any size share one axis; rows with an exact mean only (no sd) have no interval.
    """
    labels = [f"{r['name']} ({r['verdict']})" for r in rows]
    fig, ax = new_figure(5.5, 0.6 + 0.34 * len(rows))
    y = _row_labels(ax, labels)
    drawn = [(yi, r) for yi, r in zip(y, rows, strict=True)
             if r["analytic_mean"] is not None and r["analytic_sd"]]
    ax.axvline(0.0, color="#bdbdbd", lw=1.0)
    for kind, offset, colour, label in (("analytic", 0.12, ANALYTIC, "analytic"),
                                        ("sampled", -0.12, SAMPLED, "NUTS")):
        if not drawn:
            break
        at = np.array([yi + offset for yi, _ in drawn])
        lo, mid, hi = (np.array([_standardise(r[f"{kind}_{q}"], mu=r["analytic_mean"],
                                              sd=r["analytic_sd"]) for _, r in drawn])
                       for q in ("q05", "q50", "q95"))
        ax.hlines(at, lo, hi, color=colour, lw=3.0, label=label)
        ax.plot(mid, at, "|", ms=10.0, color=colour)
    ax.set_xlabel("(value − analytic mean) / analytic sd")
    if drawn:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return figure_uri(fig)


def clip_z(z, threshold: float) -> dict:
    """The z scores a histogram can show, with the outliers put in its edge bins.

    The axis spans ``±max(4, 1.5 * threshold)``: the standard normal and every z between the
    threshold and half as far again stay readable whatever the largest |z| (one z of 1e24 used
    to squeeze every other score into one bin). Scores beyond are clipped to the ends.

    Parameters
    ----------
    z : iterable of float or None
        The scores; None and non-finite values are dropped.
    threshold : float
        The failure threshold on |z|.

    Returns
    -------
    dict
        ``z`` (clipped array), ``top`` (axis half-width), ``below`` / ``above`` (how many
        were clipped at each end) and ``max_abs`` (largest |z| before clipping, NaN if none).
    """
    z = np.asarray([v for v in z if v is not None and np.isfinite(v)], dtype=np.float64)
    top = max(4.0, 1.5 * threshold)
    return {"z": np.clip(z, -top, top), "top": top, "below": int(np.sum(z < -top)),
            "above": int(np.sum(z > top)),
            "max_abs": float(np.abs(z).max()) if z.size else math.nan}


def z_histogram_figure(z, threshold: float) -> str:
    """Histogram of every z score with the standard normal density and the ±threshold lines.

    Scores beyond the axis (see :func:`clip_z`) are drawn in the edge bins and counted in a
    note on the figure, with the largest |z|.
    """
    c = clip_z(z, threshold)
    top = c["top"]
    grid = np.linspace(-top, top, 300)
    fig, ax = new_figure(6.0, 2.6)
    if c["z"].size:
        ax.hist(c["z"], bins=40, range=(-top, top), density=True, color="#9ecae1",
                label="z scores")
    ax.plot(grid, np.exp(-0.5 * grid**2) / math.sqrt(2.0 * math.pi), color="#525252",
            lw=1.2, label="N(0, 1)")
    for s in (-threshold, threshold):
        ax.axvline(s, color=ANALYTIC, ls="--", lw=1.0)
    if c["below"] or c["above"]:
        ax.text(0.01, 0.97, f"clipped to ±{top:.3g}: {c['below']} below, {c['above']} above "
                f"(largest |z| {c['max_abs']:.3g})", transform=ax.transAxes, va="top",
                fontsize=7, color=ANALYTIC)
    ax.set_xlim(-top, top)
    ax.set_xlabel(f"z (fail beyond ±{threshold:.3g})")
    ax.legend(fontsize=7, loc="upper right", frameon=False)
    return figure_uri(fig)


#: Beyond this many point estimates the figure draws the failing and the farthest ones.
MAX_ESTIMATE_ROWS = 60


def estimates_figure(rows: list[dict], draws: dict) -> str:
    """Point estimates against the sampled posterior, in posterior sds.

    For each row (``name``, ``verdict``, ``estimate``, ``distance_sd``, ``lower``,
    ``upper``: the posterior's central interval), on the scale of that row's posterior
    (``(value - posterior mean) / posterior sd``, so a covariance of 0.01 and a mean of 5
    share one axis): the posterior median and interval (bar), the posterior mean (0, open
    circle) and the estimate (cross, red when the row fails). A row without draws of its own
    (the mixture's responsibilities) is drawn at its ``distance_sd``. Beyond
    :data:`MAX_ESTIMATE_ROWS` rows, the failing ones and then the farthest are drawn.
    """
    if len(rows) > MAX_ESTIMATE_ROWS:
        order = {"fail": 0, "inconclusive": 1, "differs": 2, "pass": 3}
        rows = sorted(rows, key=lambda r: (order[r["verdict"]],
                                           -abs(np.nan_to_num(r["distance_sd"] or 0.0))))
        rows = rows[:MAX_ESTIMATE_ROWS]
    fig, ax = new_figure(5.5, 0.6 + 0.3 * len(rows))
    y = _row_labels(ax, [f"{r['name']} ({r['verdict']})" for r in rows])
    ax.axvline(0.0, color="#bdbdbd", lw=1.0)
    for yi, r in zip(y, rows, strict=True):
        colour = ANALYTIC if r["verdict"] == "fail" else "#111111"
        x = draws.get(r["name"])
        x = None if x is None else np.asarray(x, dtype=np.float64).ravel()
        sd = float(np.std(x, ddof=1)) if x is not None and x.size > 1 else 0.0
        if not sd > 0:  # no draws of its own, or constant draws: the row's own distance
            ax.plot([np.nan_to_num(r["distance_sd"] or 0.0)], [yi], "x", ms=7.0, mew=2.0,
                    color=colour)
            continue
        mean = float(np.mean(x))
        if r.get("lower") is not None and r.get("upper") is not None:
            ax.hlines(yi, (r["lower"] - mean) / sd, (r["upper"] - mean) / sd,
                      color="#9ecae1", lw=4.0)
        ax.plot([(float(np.median(x)) - mean) / sd], [yi], "|", ms=10.0, color=SAMPLED)
        ax.plot([0.0], [yi], "o", ms=5.0, mew=1.0, color=SAMPLED, mfc="white")
        ax.plot([(r["estimate"] - mean) / sd], [yi], "x", ms=7.0, mew=2.0, color=colour)
    ax.set_xlabel("(value − posterior mean) / posterior sd")
    return figure_uri(fig)
