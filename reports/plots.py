"""Figures for the report, returned as data URIs so the HTML is self-contained.

The report's own figures (marginals, intervals, z scores, rank, trace, energy, pair and
predictive plots, point estimates) and the fits' series, mixture, component-interval and
trajectory plots are SVG written with numpy (:class:`bayescheck.reports.panels.PanelGrid`); the network
DAG and the calibration figure are matplotlib PNGs (their drawing functions carry
``matplotlib``, which :mod:`bayescheck.reports.figure_jobs` reads).
"""

from __future__ import annotations

import base64
import io
import math

import numpy as np

__all__ = ["FIT_PLOTS", "dag_figure", "estimates_figure", "figure_uri", "fit_figure",
           "intervals_figure", "layered_layout", "mixture_figure", "rank_figure", "series_figure",
           "trace_figure",
           "trajectory_figure"]

#: More parameters than this are not drawn one panel each.
MAX_PANELS = 20
#: Rank plots use at most this many evenly spaced draws per chain.
RANK_DRAWS = 300
#: Pair plot scatters show at most this many evenly spaced draws (chains pooled).
PAIR_POINTS = 2000
#: The posterior predictive check of continuous data draws this many predictive data sets.
PPC_SAMPLES = 50
#: zlib level of the embedded PNGs (1: fastest; the pixels do not depend on it).
PNG_COMPRESSION = 1


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def import_arviz_stats() -> None:
    """Import arviz_stats (the figures' KDE, ranks and tests) without its costly stack walk.

    Importing arviz_base runs ``lazy_loader.load("jax")`` and ``load("numpyro")``; neither
    is installed here, and for a missing module lazy_loader calls ``inspect.stack()``, which
    reads the source of every frame and searches ``sys.modules`` for each: 0.3-1 s of CPU
    once matplotlib, pandas and scipy are loaded (benchmarks/REPORTS.md), for an error
    message that names where jax would have been used. During this import
    ``inspect.stack`` returns the frames without their source; it is restored after.
    """
    import sys

    from bayescheck.inference.lazy_imports import frames_without_source

    if "arviz_stats.base" in sys.modules:
        return
    with frames_without_source():
        import arviz_stats.base  # noqa: F401


def light_ticks(fig, nbins: int = 4) -> None:
    """Give every automatically ticked axis of ``fig`` at most about ``nbins`` ticks.

    Drawing tick marks and labels is most of the cost of saving a figure of many small
    panels (about 40 ms per default panel on the build machine); fixed ticks such as
    category labels are left alone.
    """
    from matplotlib.ticker import AutoLocator, MaxNLocator

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if type(axis.get_major_locator()) is AutoLocator:
                axis.set_major_locator(MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10]))


def figure_uri(fig, dpi: int = 80, *, crop: bool = True) -> str:
    """Encode a matplotlib figure as a ``data:image/png;base64,...`` URI and close it.

    Automatically ticked axes get fewer ticks first (:func:`light_ticks`).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    dpi : int
    crop : bool
        Crop the image to what is drawn (``bbox_inches="tight"``). That costs one more
        layout pass over every label, about 10 % of the time of a figure of many panels; a
        figure laid out with ``tight_layout`` already fills its canvas and is not cropped.
    """
    plt = _plt()
    light_ticks(fig)
    buffer = io.BytesIO()
    # zlib level 1, not 6: the same pixels, 15-25 % less CPU to save, PNGs 8-12 % larger
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight" if crop else None,
                pil_kwargs={"compress_level": PNG_COMPRESSION})
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _two_lines(name: str) -> str:
    """An element's name with its index on a second line (``mu[a, b]``: ``mu``, ``[a, b]``)."""
    return name.replace("[", "\n[", 1)


#: Colours of the chains in the rank, trace and energy figures.
CHAIN_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                 "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
#: Significance of the multi-chain rank test (arviz_plots' default envelope_prob, 0.94).
RANK_ALPHA = 0.06


def _chain_colour(c: int) -> str:
    return CHAIN_COLOURS[c % len(CHAIN_COLOURS)]


def rank_deviations(x, alpha: float = RANK_ALPHA) -> dict:
    """Fractional-rank Δ-ECDF of each chain of ``x`` (``(chain, draw)``) and its test.

    The draws are ranked over all chains and scaled to (0, 1]; each chain's ECDF of those
    ranks, minus the uniform CDF it follows when the chains mix, is returned at every draw
    (``x``, ``y``: ``(chain, draw)``), with the multi-chain uniformity test's p-value and the
    points that contribute most to a rejection (``suspicious``, only when ``p < alpha``).
    The same quantities as arviz_plots.plot_rank (method ``"mtc_c"``), computed as
    arviz_stats does (:mod:`bayescheck.reports.figure_stats`).
    """
    from .figure_stats import fractional_ranks, mchain_uniformity_test, pit_ecdf

    x = np.asarray(x, dtype=np.float64)
    ranks = fractional_ranks(x)
    ecdf = pit_ecdf(ranks, npoints=x.shape[1])
    p_value, between, within = mchain_uniformity_test(ranks)
    p_value = float(p_value)
    suspicious = (between.T > 0) & (within[None, :] > 0) & (p_value < alpha)
    return {"x": ecdf[0], "y": ecdf[1], "p_value": p_value, "suspicious": suspicious,
            "epsilon": max(1.3 * math.sqrt(math.log(2 / alpha) / (2 * x.shape[1])),
                           float(np.max(np.abs(ecdf[1]))))}


def rank_figure(draws: dict, max_draws: int = RANK_DRAWS) -> str:
    """Rank Δ-ECDF plots of the chains, one panel per parameter (see :func:`rank_deviations`).

    ``draws`` maps a name to its ``(chain, draw)`` array. Every k-th draw is used, so that
    each chain keeps at most ``max_draws`` (the multi-chain test's cost grows with the draws).
    Small multiples on one Axes (:class:`bayescheck.reports.panels.PanelGrid`), three to a row.
    """
    from .panels import PanelGrid

    step = max(1, math.ceil(next(iter(draws.values())).shape[1] / max_draws))
    cols = min(3, len(draws))
    grid_fig = PanelGrid(math.ceil(len(draws) / cols), cols, 3.1, 1.45, left=0.15,
                         bottom=0.45, top=0.4)
    chains = 0
    for i, (name, x) in enumerate(draws.items()):
        dev = rank_deviations(np.asarray(x)[:, ::step])
        eps = dev["epsilon"]
        panel = grid_fig.panel(*divmod(i, cols), title=_two_lines(name), xlim=(0.0, 1.0),
                               ylim=(-eps, eps), xlabel="fractional rank",
                               note=f"p = {dev['p_value']:.2f} (α = {RANK_ALPHA:.2f})")
        panel.hline(0.0, color="#999999", lw=0.6)
        chains = dev["x"].shape[0]
        for c in range(chains):
            colour = _chain_colour(c)
            # the ECDF as steps: each value held until the next point
            sx = np.repeat(dev["x"][c], 2)[1:]
            sy = np.repeat(dev["y"][c], 2)[:-1]
            panel.line(sx, sy, color=colour, lw=1.0)
            hit = dev["suspicious"][c]
            if hit.any():
                panel.markers(dev["x"][c][hit], dev["y"][c][hit], ms=3.0, color=colour)
    for c in range(chains):
        grid_fig.legend_entry(f"chain {c}", color=_chain_colour(c), lw=1.0)
    return grid_fig.uri()


def trace_figure(draws: dict, diverging=None) -> str:
    """Densities and traces per chain, one row per parameter.

    ``draws`` maps a name to its ``(chain, draw)`` array; divergent draws are marked (ticks
    under the trace and under the density) when ``diverging`` (``(chain, draw)`` flags) has
    any. As arviz_plots.plot_trace_dist draws it (compact off): the density of each chain
    (arviz_stats' KDE, :func:`bayescheck.reports.figure_stats.kde`) on the left, its draws on the
    right; small multiples on one Axes (:class:`bayescheck.reports.panels.PanelGrid`).
    """
    from .figure_stats import kde
    from .panels import PanelGrid

    k = len(draws)
    flags = None if diverging is None else np.asarray(diverging, dtype=bool)
    grid_fig = PanelGrid(k, 2, 0.0, 1.05, cell_widths=[2.4, 5.2], left=0.2, bottom=0.4,
                         top=0.4)
    chains = next(iter(draws.values())).shape[0]
    for row, (name, x) in enumerate(draws.items()):
        x = np.asarray(x, dtype=np.float64)
        grid, pdf = kde(x)
        density = grid_fig.panel(row, 0, title=_two_lines(name))
        trace = grid_fig.panel(row, 1, title=_two_lines(name), yticks=True,
                               xlabel="draw" if row == k - 1 else "")
        steps = np.arange(x.shape[1])
        for c in range(chains):
            density.line(grid[c], pdf[c], color=_chain_colour(c), lw=1.0)
            trace.line(steps, x[c], color=_chain_colour(c), lw=0.5, alpha=0.8)
        if flags is not None and flags.any():
            bad = x[flags]
            trace.markers(np.nonzero(flags)[1], np.full(bad.size, x.min()), marker="|",
                          ms=6.0, color="black")
            density.markers(bad, np.zeros(bad.size), marker="|", ms=6.0, color="black")
    for c in range(chains):
        grid_fig.legend_entry(f"chain {c}", color=_chain_colour(c), lw=1.0)
    if flags is not None and flags.any():
        grid_fig.legend_entry("divergent (ticks)", color="black", lw=1.0)
    return grid_fig.uri()


def _left_margin(values, extra: float = 0.0) -> float:
    """Inches left of a frame for the 7-point tick labels of ``values``' round ticks."""
    from .panels import tick_labels, tick_values

    lo, hi = values
    return 0.15 + 0.055 * max(map(len, tick_labels(tick_values(lo, hi))), default=1) + extra


def series_figure(values, *, xlabel: str = "iteration", ylabel: str = "value",
                  **_) -> str:
    """A quantity per iteration, such as the log evidence; with markers when there are few.

    An SVG (:class:`bayescheck.reports.panels.PanelGrid`).
    """
    from .panels import PanelGrid

    values = np.asarray(values, dtype=np.float64)
    steps = np.arange(values.size, dtype=np.float64)
    ylim = _padded([values])
    grid_fig = PanelGrid(1, 1, 5.0, 2.2, left=_left_margin(ylim, 0.25), bottom=0.55, top=0.1)
    panel = grid_fig.panel(0, 0, xlim=_padded([steps]), ylim=ylim, yticks=True,
                           xlabel=xlabel, ylabel=ylabel, ylabel_pad=None)
    panel.line(steps, values, color="#08519c", lw=1.5)
    if values.size <= 60:
        panel.markers(steps, values, ms=3.0, mew=1.0, color="#08519c")
    return grid_fig.uri()


def intervals_figure(names, mean, lower, upper, *, zero=None, **_) -> str:
    """A vector parameter's components: mean and interval each, one row per component.

    Components marked in ``zero`` (exactly zero, for example pruned weights) are drawn as open
    circles at 0. An SVG (:class:`bayescheck.reports.panels.PanelGrid`), the names as y tick labels.
    """
    from .panels import PanelGrid

    n = len(names)
    mean, lower, upper = (np.asarray(v, dtype=np.float64) for v in (mean, lower, upper))
    zero = np.zeros(n, dtype=bool) if zero is None else np.asarray(zero, dtype=bool)
    rows = np.arange(n)[::-1].astype(float)
    kept = ~zero
    labels = [str(name) for name in names]
    grid_fig = PanelGrid(1, 1, 4.6, 0.25 + 0.28 * n,
                         left=0.25 + 0.055 * max(map(len, labels), default=0), bottom=0.4,
                         top=0.15, gap=0.2)
    panel = grid_fig.panel(0, 0, xlim=_padded([lower[kept], upper[kept], mean[kept],
                                               np.zeros(1)]),
                           ylim=(-0.6, n - 0.4), yticks=tuple(rows), yticklabels=tuple(labels),
                           ytick_fontsize=8)
    panel.vline(0.0, color="#bdbdbd", lw=1.0)
    gap = np.full(int(kept.sum()), np.nan)
    panel.line(np.column_stack([lower[kept], upper[kept], gap]).ravel(),
               np.column_stack([rows[kept], rows[kept], gap]).ravel(), color="#08519c", lw=2.0)
    kept_style = {"ms": 6.0, "mew": 1.0, "color": "#08519c"}
    panel.markers(mean[kept], rows[kept], **kept_style)
    grid_fig.legend_entry("kept", "marker", **kept_style)
    if zero.any():
        pruned_style = {"ms": 6.0, "mew": 1.0, "color": "#737373", "mfc": "white"}
        panel.markers(np.zeros(int(zero.sum())), rows[zero], **pruned_style)
        grid_fig.legend_entry("pruned (exactly 0)", "marker", **pruned_style)
    return grid_fig.uri()


def separating_pair(weights, means, covariances) -> tuple[int, int]:
    """The two features along which the mixture's components are told apart best.

    For each pair of features, the squared Mahalanobis distance between every two component
    means, under the average of their two covariances restricted to those features; the pair
    whose worst-separated two components are farthest apart wins (ties: the larger total).
    With one feature, ``(0, 0)``; with two, ``(0, 1)``.
    """
    means = np.asarray(means, dtype=np.float64)
    cov = np.asarray(covariances, dtype=np.float64)
    K, D = means.shape
    if D <= 2:
        return (0, min(1, D - 1))
    best, best_key = (0, 1), None
    for a in range(D):
        for b in range(a + 1, D):
            idx = np.array([a, b])
            seps = []
            for k in range(K):
                for m in range(k + 1, K):
                    S = 0.5 * (cov[k][np.ix_(idx, idx)] + cov[m][np.ix_(idx, idx)])
                    diff = means[k, idx] - means[m, idx]
                    seps.append(float(diff @ np.linalg.solve(S, diff)))
            key = (min(seps), sum(seps)) if seps else (0.0, 0.0)
            if best_key is None or key > best_key:
                best, best_key = (a, b), key
    return best


def mixture_figure(points, weights, means, covariances, features, **_) -> str:
    """Data with the fitted Gaussian mixture.

    In 1-D a histogram with each weighted component density and their sum; in 2-D or more a
    scatter of two features, the pair that separates the components best
    (:func:`separating_pair`), with each component's 1- and 2-sd ellipses (marginal of those
    two features), labelled by weight. An SVG (:class:`bayescheck.reports.panels.PanelGrid`).
    """
    from .panels import PanelGrid

    X = np.asarray(points, dtype=np.float64)
    w, mu, cov = (np.asarray(v, dtype=np.float64) for v in (weights, means, covariances))
    colours = CHAIN_COLOURS  # matplotlib's default colour cycle
    if X.shape[1] == 1:
        lo, hi = X.min(), X.max()
        pad = 0.15 * (hi - lo) + 3 * np.sqrt(cov[:, 0, 0].max())
        grid = np.linspace(lo - pad, hi + pad, 400)
        bins = max(1, min(60, X.shape[0] // 2))
        curves = []
        total = np.zeros_like(grid)
        for k in range(w.size):
            sd = np.sqrt(cov[k, 0, 0])
            dens = w[k] * np.exp(-0.5 * ((grid - mu[k, 0]) / sd) ** 2) / (sd * np.sqrt(2 * np.pi))
            total += dens
            curves.append((dens, {"color": colours[k % len(colours)], "lw": 1.2},
                           f"component {k} (weight {w[k]:.2f}, mean {mu[k, 0]:.3g})"))
        heights = np.histogram(X[:, 0], bins=bins, density=True)[0]
        ylim = (0.0, 1.05 * max(float(heights.max()), float(total.max())))
        grid_fig = PanelGrid(1, 1, 5.0, 2.8, left=_left_margin(ylim), bottom=0.55, top=0.1)
        panel = grid_fig.panel(0, 0, xlim=_padded([grid]), ylim=ylim, yticks=True,
                               xlabel=features[0])
        panel.hist(X[:, 0], bins=bins, color="#d9d9d9")
        grid_fig.legend_entry("data", "fill", color="#d9d9d9")
        if X.shape[0] <= 50:
            panel.markers(X[:, 0], np.zeros(X.shape[0]), marker="|", ms=14.0, color="#252525")
        for dens, style, label in curves:
            panel.line(grid, dens, **style)
            grid_fig.legend_entry(label, **style)
        panel.line(grid, total, color="#111111", lw=1.8)
        grid_fig.legend_entry("mixture", color="#111111", lw=1.8)
        return grid_fig.uri()
    a, b = separating_pair(w, mu, cov)
    idx = np.array([a, b])
    t = np.linspace(0, 2 * np.pi, 200)
    circle = np.stack([np.cos(t), np.sin(t)])
    ellipses = []
    for k in range(w.size):
        L = np.linalg.cholesky(cov[k][np.ix_(idx, idx)])
        for r, ls in ((1.0, "solid"), (2.0, "--")):
            ellipses.append((k, mu[k, idx, None] + r * (L @ circle), ls))
    xlim = _padded([X[:, a]] + [e[0] for _, e, _ in ellipses] + [mu[:, a]])
    ylim = _padded([X[:, b]] + [e[1] for _, e, _ in ellipses] + [mu[:, b]])
    grid_fig = PanelGrid(1, 1, 5.0, 3.3, left=_left_margin(ylim, 0.25), bottom=0.55,
                         top=0.3 if X.shape[1] > 2 else 0.1)
    panel = grid_fig.panel(0, 0, xlim=xlim, ylim=ylim, yticks=True, xlabel=features[a],
                           ylabel=features[b], ylabel_pad=None,
                           title=f"the pair of the {X.shape[1]} features that separates the "
                                 f"components best" if X.shape[1] > 2 else "")
    data_style = {"color": "#969696", "alpha": 0.6, "ms": math.sqrt(6.0)}  # scatter's s=6
    panel.markers(X[:, a], X[:, b], **data_style)
    grid_fig.legend_entry("data", "marker", color="#969696", ms=math.sqrt(6.0))
    for k, e, ls in ellipses:
        panel.line(e[0], e[1], color=colours[k % len(colours)], ls=ls, lw=1.4)
    for k in range(w.size):
        style = {"marker": "x", "ms": 8.0, "mew": 2.0, "color": colours[k % len(colours)]}
        panel.markers([mu[k, a]], [mu[k, b]], **style)
        grid_fig.legend_entry(f"component {k} (weight {w[k]:.2f})", "marker", **style)
    return grid_fig.uri()


def layered_layout(nodes, edges) -> dict:
    """Positions ``node -> (x, y)`` of a DAG drawn top-down in layers.

    A node's layer is the length of the longest directed path reaching it (roots at the top,
    y = 0, -1, ...); within a layer nodes are ordered by the mean position of their parents
    (a barycentre sweep, which removes most crossings of shallow graphs), ties by name order,
    and centred on x = 0 with unit spacing.
    """
    nodes = list(nodes)
    parents = {n: [] for n in nodes}
    for a, b in edges:
        parents[b].append(a)
    layer: dict = {}

    def depth(n, seen=()):
        if n not in layer:
            if n in seen:
                raise ValueError(f"the graph has a cycle through {n!r}")
            layer[n] = 1 + max((depth(p, (*seen, n)) for p in parents[n]), default=-1)
        return layer[n]

    for n in nodes:
        depth(n)
    rows: dict[int, list] = {}
    for n in nodes:
        rows.setdefault(layer[n], []).append(n)
    x: dict = {}
    for d in sorted(rows):
        members = rows[d]
        if d > 0:
            members.sort(key=lambda n: (np.mean([x[p] for p in parents[n]]), nodes.index(n)))
        for i, n in enumerate(members):
            x[n] = i - (len(members) - 1) / 2
    return {n: (float(x[n]), -float(layer[n])) for n in nodes}


def dag_figure(nodes, edges, *, targets=(), evidence=(), **_) -> str:
    """A DAG in layers (:func:`layered_layout`): query targets and evidence nodes filled."""
    plt = _plt()
    pos = layered_layout(nodes, edges)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    width = max(xs) - min(xs) + 1
    height = max(ys) - min(ys) + 1
    fig, ax = plt.subplots(figsize=(min(12.0, 1.0 + 1.5 * width), min(10.0, 0.6 + 1.0 * height)))
    colours = {n: "white" for n in nodes}
    colours.update({n: "#c6dbef" for n in evidence})
    colours.update({n: "#fdae6b" for n in targets})
    for a, b in edges:
        ax.annotate("", xy=pos[b], xytext=pos[a],
                    arrowprops={"arrowstyle": "-|>", "color": "#525252", "lw": 1.0,
                                "shrinkA": 13, "shrinkB": 13})
    for n in nodes:
        ax.text(*pos[n], str(n), ha="center", va="center", fontsize=8, zorder=3,
                bbox={"boxstyle": "round,pad=0.35", "fc": colours[n], "ec": "#252525"})
    handles = [plt.Rectangle((0, 0), 1, 1, fc=c, ec="#252525") for c in ("#fdae6b", "#c6dbef")]
    shown = [(h, label) for h, label, group in zip(handles, ("target", "evidence"),
                                                    (targets, evidence), strict=True) if group]
    if shown:
        ax.legend(*zip(*shown, strict=True), fontsize=7, loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
    ax.set_xlim(min(xs) - 0.7, max(xs) + 0.7)
    ax.set_ylim(min(ys) - 0.5, max(ys) + 0.5)
    ax.axis("off")
    fig.tight_layout()
    return figure_uri(fig)


#: ``kind`` of a :func:`bayescheck.reports.fit_figures.fit_figures` entry -> the function drawing it from
#: the entry's data.
FIT_PLOTS = {"series": series_figure, "intervals": intervals_figure,
             "mixture": mixture_figure, "dag": dag_figure}


def fit_figure(entry: dict) -> dict:
    """Draw one :func:`bayescheck.reports.fit_figures.fit_figures` entry; return its title, caption, uri."""
    data = {k: v for k, v in entry.items() if k not in ("kind", "title", "caption")}
    return {"title": entry["title"], "caption": entry.get("caption", ""),
            "uri": FIT_PLOTS[entry["kind"]](**data)}


def fit_figure_uri(entry: dict) -> str:
    """The data URI of :func:`fit_figure` (a figure job's drawing call)."""
    return fit_figure(entry)["uri"]


#: The fit plots still drawn with matplotlib (the others are SVG).
MATPLOTLIB_FIT_PLOTS = frozenset({"dag"})
# which jobs need matplotlib: see reports.figure_jobs
fit_figure_uri.matplotlib = lambda entry: entry["kind"] in MATPLOTLIB_FIT_PLOTS

def estimates_figure(comparison, draws) -> str:
    """Point estimates against the sampled posterior, in posterior sds.

    For each row of an :class:`bayescheck.inference.compare.EstimateComparison`, on the scale of that
    row's posterior (``(value - posterior mean) / posterior sd``, so a covariance of 0.01 and
    a mean of 5 share one axis): the posterior median and central interval (bar), the
    posterior mean (0, open circle) and the estimate (cross, red when the row fails). A row
    without draws of its own (the mixture's responsibilities) is drawn at its
    ``distance_sd``. Beyond 60 rows, the failing ones and then the farthest from their
    posterior are drawn. An SVG (:class:`bayescheck.reports.panels.PanelGrid`), the row names as y
    tick labels.
    """
    from .panels import PanelGrid

    rows = comparison.parameters
    if len(rows) > 60:
        order = {"fail": 0, "inconclusive": 1, "differs": 2, "pass": 3}
        rows = sorted(rows, key=lambda r: (order[r.verdict],
                                           -abs(np.nan_to_num(r.distance_sd))))[:60]
    n = len(rows)
    labels = [f"{r.name} ({r.verdict})" for r in rows]
    y = np.arange(n)[::-1].astype(float)
    bars, medians, means, crosses = [], [], [], {"#d62728": [], "#111111": []}
    for yi, r in zip(y, rows, strict=True):
        colour = "#d62728" if r.verdict == "fail" else "#111111"
        x = None if r.name not in draws else np.asarray(draws[r.name], dtype=np.float64).ravel()
        sd = float(np.std(x, ddof=1)) if x is not None and x.size > 1 else 0.0
        if not sd > 0:  # no draws of its own, or constant draws: the row's own distance
            crosses[colour].append((float(np.nan_to_num(r.distance_sd)), yi))
            continue
        mean = float(np.mean(x))

        def scale(v, mean=mean, sd=sd):
            return (v - mean) / sd

        bars += [(scale(r.sampled["lower"]), yi), (scale(r.sampled["upper"]), yi),
                 (np.nan, np.nan)]
        medians.append((scale(float(np.median(x))), yi))
        means.append((0.0, yi))
        crosses[colour].append((scale(r.estimate), yi))
    every = [np.zeros(1)] + [np.asarray(p, dtype=np.float64)[:, 0]
                             for p in (bars, medians, *crosses.values()) if p]
    grid_fig = PanelGrid(1, 1, 4.6, 0.25 + 0.3 * n,
                         left=0.25 + 0.055 * max(map(len, labels), default=0), bottom=0.55,
                         top=0.15, gap=0.2)
    panel = grid_fig.panel(0, 0, xlim=_padded(every), ylim=(-0.6, n - 0.4), yticks=tuple(y),
                           yticklabels=tuple(labels), ytick_fontsize=8,
                           xlabel="(value − posterior mean) / posterior sd")
    panel.vline(0.0, color="#bdbdbd", lw=1.0)
    if bars:
        panel.line(*np.array(bars).T, color="#9ecae1", lw=4.0)
        panel.markers(*np.array(medians).T, marker="|", ms=10.0, color="#08519c")
        panel.markers(*np.array(means).T, ms=5.0, mew=1.0, color="#08519c", mfc="white")
    for colour, points in crosses.items():
        if points:
            panel.markers(*np.array(points).T, marker="x", ms=7.0, mew=2.0, color=colour)
    return grid_fig.uri()


def trajectory_figure(trajectory: list[dict]) -> str | None:
    """Posterior mean and 90 % interval of each coefficient after each batch of a stream.

    One panel per coefficient (at most :data:`MAX_PANELS`), three to a row; an SVG
    (:class:`bayescheck.reports.panels.PanelGrid`).
    """
    from .panels import PanelGrid

    steps = [t for t in trajectory if "mean" in t]
    if len(trajectory) < 2 or not steps:
        return None
    names = list(steps[-1]["mean"])[:MAX_PANELS]
    index = np.array([i + 1 for i, t in enumerate(trajectory) if "mean" in t], dtype=float)
    cols = min(3, len(names))
    grid_fig = PanelGrid(math.ceil(len(names) / cols), cols, 3.4, 1.8, left=0.6, bottom=0.5,
                         top=0.3)
    band_style = {"color": "#c6dbef"}
    mean_style = {"color": "#08519c", "lw": 1.5}
    for i, name in enumerate(names):
        mean = np.array([t["mean"][name] for t in steps], dtype=float)
        lo = np.array([t["q05"][name] for t in steps], dtype=float)
        hi = np.array([t["q95"][name] for t in steps], dtype=float)
        panel = grid_fig.panel(*divmod(i, cols), title=name, xlabel="after batch",
                               xlim=_padded([index]), ylim=_padded([lo, hi, mean]), yticks=True)
        panel.band(index, lo, hi, **band_style)
        panel.line(index, mean, **mean_style)
        panel.markers(index, mean, ms=6.0, mew=1.0, color="#08519c")
    grid_fig.legend_entry("90 % interval", "fill", **band_style)
    grid_fig.legend_entry("mean", **mean_style)
    return grid_fig.uri()


# ----------------------------------------------------------------- report figures from files


def curves_figure(curves, draws) -> str:
    """Each NUTS marginal as a histogram with the analytic density and the prior over it.

    The density is ``curves[i]["pdf"]`` on ``curves[i]["grid"]`` (computed at check time), the
    prior ``"prior"`` (dashed). ``draws`` maps a curve's ``name`` to its draws. Small
    multiples on one Axes (:class:`bayescheck.reports.panels.PanelGrid`), three to a row, no y ticks
    (a density's scale says nothing here).
    """
    from .panels import PanelGrid

    shown = curves[:MAX_PANELS]
    cols = min(3, len(shown))
    grid_fig = PanelGrid(math.ceil(len(shown) / cols), cols, 3.4, 1.75, left=0.15)
    hist_style = {"color": "#9ecae1"}
    pdf_style = {"color": "#d62728", "lw": 1.8}
    prior_style = {"color": "#525252", "lw": 1.2, "ls": "--"}
    has = {"pdf": False, "prior": False}
    for i, c in enumerate(shown):
        grid = np.asarray(c["grid"], dtype=np.float64)
        panel = grid_fig.panel(*divmod(i, cols), xlim=(grid[0], grid[-1]),
                               title=c["name"] + (f"  ({c['verdict']})" if c.get("verdict")
                                                  else ""))
        panel.hist(np.asarray(draws[c["name"]]).ravel(), bins=60, range=(grid[0], grid[-1]),
                   **hist_style)
        for key, style in (("pdf", pdf_style), ("prior", prior_style)):
            if c.get(key) is not None:
                panel.line(grid, np.asarray(c[key], dtype=np.float64), **style)
                has[key] = True
    grid_fig.legend_entry("NUTS draws", "fill", **hist_style)
    if has["pdf"]:
        grid_fig.legend_entry("exact posterior", **pdf_style)
    if has["prior"]:
        grid_fig.legend_entry("prior", **prior_style)
    return grid_fig.uri()


def _standardise(v, *, mu: float, sd: float) -> float:
    return np.nan if v is None else (v - mu) / sd


def _padded(arrays, pad: float = 0.05) -> tuple[float, float]:
    """The finite extent of ``arrays`` widened by ``pad`` of it each side (matplotlib's margins)."""
    values = np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in arrays])
    values = values[np.isfinite(values)]
    if values.size == 0:
        return (-1.0, 1.0)
    lo, hi = float(values.min()), float(values.max())
    if hi <= lo:
        return (lo - 0.5 * (abs(lo) or 1.0), hi + 0.5 * (abs(hi) or 1.0))
    return (lo - pad * (hi - lo), hi + pad * (hi - lo))


def forest_figure(rows) -> str:
    """Analytic against sampled 5-95 % intervals and medians, one row per parameter.

    Each row is on the scale of its analytic sd around its analytic mean, so parameters of
    any size share one axis. The row names are the y tick labels; the left margin follows
    the longest (about 0.055 in a character at 8 points). An SVG (:class:`PanelGrid`).
    """
    from .panels import PanelGrid

    n = len(rows)
    labels = [f"{r['name']} ({r['verdict']})" for r in rows]
    grid_fig = PanelGrid(1, 1, 4.2, 0.25 + 0.34 * n, left=0.25 + 0.055 * max(map(len, labels),
                                                                              default=0),
                         bottom=0.55, top=0.15, gap=0.2)
    y = np.arange(n)[::-1].astype(float)
    drawn = [(yi, r) for yi, r in zip(y, rows, strict=True)
             if r["analytic_mean"] is not None and r["analytic_sd"]]
    extent = [np.zeros(1)]
    marks = []
    for kind, offset, colour, label in (("analytic", 0.12, "#d62728", "analytic"),
                                        ("sampled", -0.12, "#08519c", "NUTS")):
        if not drawn:  # rows with exact means only (no sd) draw no interval
            break
        at = np.array([yi + offset for yi, _ in drawn])
        lo, mid, hi = (np.array([_standardise(r[f"{kind}_{q}"], mu=r["analytic_mean"],
                                              sd=r["analytic_sd"]) for _, r in drawn])
                       for q in ("q05", "q50", "q95"))
        extent += [lo, mid, hi]
        marks.append((at, lo, mid, hi, colour, label))
    panel = grid_fig.panel(0, 0, xlim=_padded(extent), ylim=(-0.6, n - 0.4),
                           yticks=tuple(y), yticklabels=tuple(labels), ytick_fontsize=8,
                           xlabel="(value − analytic mean) / analytic sd")
    panel.vline(0.0, color="#bdbdbd", lw=1.0)
    for at, lo, mid, hi, colour, label in marks:
        # every interval one polyline, broken by NaN
        gap = np.full(at.size, np.nan)
        panel.line(np.column_stack([lo, hi, gap]).ravel(),
                   np.column_stack([at, at, gap]).ravel(), color=colour, lw=3.0)
        panel.markers(mid, at, marker="|", ms=10.0, color=colour)
        grid_fig.legend_entry(label, color=colour, lw=3.0)
    return grid_fig.uri()


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
    note on the figure, with the largest |z|. An SVG (:class:`PanelGrid`).
    """
    from .panels import PanelGrid

    c = clip_z(z, threshold)
    top = c["top"]
    grid = np.linspace(-top, top, 300)
    normal = np.exp(-0.5 * grid**2) / math.sqrt(2.0 * math.pi)
    heights = np.histogram(c["z"], bins=40, range=(-top, top), density=True)[0] \
        if c["z"].size else np.zeros(1)
    note = (f"clipped to ±{top:.3g}: {c['below']} below, {c['above']} above (largest |z| "
            f"{c['max_abs']:.3g})" if c["below"] or c["above"] else "")
    grid_fig = PanelGrid(1, 1, 5.2, 2.2, left=0.5, bottom=0.55, top=0.1)
    panel = grid_fig.panel(0, 0, xlim=(-top, top),
                           ylim=(0.0, 1.05 * max(float(np.max(heights)), float(normal.max()))),
                           yticks=True, xlabel=f"z (fail beyond ±{threshold:.3g})",
                           note=note, note_color="#d62728")
    hist_style = {"color": "#9ecae1"}
    normal_style = {"color": "#525252", "lw": 1.2}
    if c["z"].size:
        panel.hist(c["z"], bins=40, range=(-top, top), **hist_style)
    panel.line(grid, normal, **normal_style)
    for s in (-threshold, threshold):
        panel.vline(s, color="#d62728", ls="--", lw=1.0)
    grid_fig.legend_entry("z scores", "fill", **hist_style)
    grid_fig.legend_entry("N(0, 1)", **normal_style)
    return grid_fig.uri()


#: E-BFMI below this suggests the sampler explores the tails poorly (arviz' threshold).
BFMI_THRESHOLD = 0.3


def energy_figure(energy) -> str:
    """E-BFMI of each chain and the marginal energy against energy-transition densities.

    The energy (``sample_stats.energy``, a ``(chain, draw)`` array) centred on its mean, and its
    draw-to-draw changes, each as one KDE over all chains: similar widths mean the
    sampler explores the tails. Beside them each chain's E-BFMI (mean squared change over
    the energy's variance) against :data:`BFMI_THRESHOLD`. The panels arviz_plots.plot_energy
    draws, as an SVG (:class:`PanelGrid`).
    """
    from .figure_stats import kde
    from .panels import PanelGrid

    energy = np.asarray(energy, dtype=np.float64)
    change = np.diff(energy, axis=1)
    bfmi = np.mean(change**2, axis=1) / np.var(energy, axis=1)
    chains = np.arange(len(bfmi))
    grid_fig = PanelGrid(1, 2, 0.0, 2.0, cell_widths=[2.0, 4.6], left=0.55, bottom=0.35,
                         top=0.3)
    left = grid_fig.panel(0, 0, title="E-BFMI",
                          xlim=(0.0, max(1.05, float(np.nanmax(bfmi)) * 1.1)),
                          ylim=(-0.5, len(bfmi) - 0.5), yticks=tuple(float(c) for c in chains),
                          ylabel="chain", ylabel_pad=0.2)
    left.vline(BFMI_THRESHOLD, color="#999999", ls="--", lw=1.0)
    for c in chains:
        left.markers([bfmi[c]], [c], ms=6.0, color=_chain_colour(c))
    right = grid_fig.panel(0, 1, title="Energy")
    for values, label, colour in ((energy - energy.mean(), "marginal energy", "#1f77b4"),
                                  (change, "energy transition", "#ff7f0e")):
        grid, pdf = kde(values.ravel())
        right.fill(np.concatenate([grid[:1], grid, grid[-1:]]),
                   np.concatenate([[0.0], pdf, [0.0]]), color=colour, alpha=0.35)
        grid_fig.legend_entry(label, "fill", color=colour, alpha=0.35)
    return grid_fig.uri()


def pair_figure(draws: dict, max_points: int = PAIR_POINTS) -> str:
    """Pair plot of ``draws`` (name -> ``(chain, draw)`` array).

    Below the diagonal a scatter of every pair on at most ``max_points`` evenly spaced draws
    (chains pooled), on the diagonal each parameter's histogram of all its draws. Only the
    lower triangle, panels of a column on one x range and of a row on one y range, tick
    labels on the outer panels; small multiples on one Axes (:class:`bayescheck.reports.panels.PanelGrid`).
    """
    from .panels import PanelGrid

    names = list(draws)
    k = len(names)
    flat = [np.asarray(draws[n], dtype=np.float64).ravel() for n in names]
    every = np.linspace(0, flat[0].size - 1, min(flat[0].size, max_points)).round().astype(int)
    ranges = []
    for x in flat:
        lo, hi = float(np.min(x)), float(np.max(x))
        pad = 0.04 * (hi - lo) or 0.5 * (abs(lo) or 1.0)
        ranges.append((lo - pad, hi + pad))
    grid_fig = PanelGrid(k, k, 1.55, 1.55, left=0.0, bottom=0.0, top=0.08, gap=0.08,
                         outer_left=1.05, outer_bottom=0.6)
    for i in range(k):
        bottom = i == k - 1
        diagonal = grid_fig.panel(i, i, xlim=ranges[i], xticks=bottom,
                                  xlabel=_two_lines(names[i]) if bottom else "")
        diagonal.hist(flat[i], bins=40, range=ranges[i], color="#9ecae1")
        for j in range(i):
            panel = grid_fig.panel(i, j, xlim=ranges[j], ylim=ranges[i], xticks=bottom,
                                   yticks=j == 0,
                                   xlabel=_two_lines(names[j]) if bottom else "",
                                   ylabel=_two_lines(names[i]) if j == 0 else "")
            panel.markers(flat[j][every], flat[i][every], ms=2.2, color="#08519c", alpha=0.35)
    return grid_fig.uri()


def is_discrete(values) -> bool:
    """Whether observed data hold integers or booleans (counts, codes)."""
    dtype = np.asarray(values).dtype
    return bool(np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.bool_))


def ppc_figure(variables: list[dict]) -> str:
    """Posterior predictive draws against the observed data, one panel per variable.

    ``variables``: one dict per observed variable, ``name``, ``observed`` (the data),
    ``predicted`` (``(chain, draw, *observed dims)``), ``labels`` (of the data's last
    dimension) and ``discrete`` (:func:`is_discrete`), as ``reports.report`` builds them.
    For integer or boolean data a rootogram (arviz_plots.plot_ppc_rootogram), otherwise the
    densities of :data:`PPC_SAMPLES` predictive data sets against the data's (see
    :func:`_ppc_densities`).
    """
    if not all(v["discrete"] for v in variables):
        return _ppc_densities(variables)
    return rootogram_figure(variables)


#: The rootogram's predictive interval and point (arviz_plots' defaults: the rcParams
#: ``stats.ci_prob`` and ``stats.point_estimate``).
ROOTOGRAM_PROB = 0.89


def rootogram_counts(predicted, observed, prob: float = ROOTOGRAM_PROB) -> dict:
    """How often each value occurs in each predictive data set and in the observed data.

    ``predicted`` is ``(chain, draw, ...)``, ``observed`` the data. For every value that
    occurs among the predictive draws: its mean count over the ``chain * draw`` data sets
    and the central ``prob`` interval of the counts (``np.percentile``); for the observed
    data the count of each value that occurs. The quantities arviz_plots.plot_ppc_rootogram
    draws (arviz_stats' ``point_interval_unique`` and ``point_unique``).
    """
    predicted = np.asarray(predicted)
    sets = predicted.reshape(predicted.shape[0] * predicted.shape[1], -1)
    values = np.unique(sets)
    counts = np.stack([np.sum(sets == v, axis=1) for v in values], axis=1)
    lb = (1 - prob) / 2 * 100
    lower, upper = np.percentile(counts, [lb, 100 - lb], axis=0)
    seen, seen_counts = np.unique(np.asarray(observed), return_counts=True)
    return {"values": values, "mean": np.mean(counts, axis=0), "lower": lower,
            "upper": upper, "observed_values": seen, "observed": seen_counts}


def rootogram_figure(variables: list[dict]) -> str:
    """Rootograms of discrete data, one panel per variable, four to a row.

    For each value (class, category code, count), the predictive data sets' mean count
    and central interval (:func:`rootogram_counts`) against the observed count, on a
    square-root scale of frequency. What arviz_plots.plot_ppc_rootogram draws, as small
    multiples on one Axes (:class:`bayescheck.reports.panels.PanelGrid`).
    """
    from .panels import PanelGrid

    names = [v["name"] for v in variables]
    cols = min(4, len(names))
    grid_fig = PanelGrid(math.ceil(len(names) / cols), cols, 2.75, 1.35, left=0.65,
                         bottom=0.5, top=0.3)
    mean_style = {"color": "#1f77b4", "marker": "d", "ms": 5.0}
    interval_style = {"color": "#1f77b4", "alpha": 0.3, "lw": 3.0}
    observed_style = {"color": "#111111", "marker": "D", "ms": 3.5}
    for i, (name, var) in enumerate(zip(names, variables, strict=True)):
        c = rootogram_counts(var["predicted"], var["observed"])
        top = max(float(np.max(c["upper"])), float(np.max(c["observed"])), 1.0)
        x = np.asarray(c["values"], dtype=np.float64)
        pad = 0.05 * (x[-1] - x[0]) or 0.5
        panel = grid_fig.panel(*divmod(i, cols), title=name, xlabel="counts",
                               ylabel="frequency", yticks=True, ysqrt=True, ygrid=True,
                               xlim=(x[0] - pad, x[-1] + pad), ylim=(0.0, 1.05 * math.sqrt(top)),
                               xticks=tuple(x) if x.size <= 10 else True)
        for v, lo, hi in zip(x, c["lower"], c["upper"], strict=True):
            panel.line([v, v], np.sqrt([lo, hi]), **interval_style)
        panel.markers(x, np.sqrt(c["mean"]), **mean_style)
        panel.markers(c["observed_values"], np.sqrt(c["observed"]), **observed_style)
    grid_fig.legend_entry(f"predictive {100 * ROOTOGRAM_PROB:g} % interval", **interval_style)
    grid_fig.legend_entry("predictive mean", "marker", **mean_style)
    grid_fig.legend_entry("observed", "marker", **observed_style)
    return grid_fig.uri()


def _ppc_densities(variables: list[dict], samples: int = PPC_SAMPLES) -> str:
    """Densities of ``samples`` evenly spaced predictive data sets and of the observed data.

    The predictive ones thin, the observed one thick, each a KDE over all of a variable's
    values; a variable with columns (``x_gaussian``: rows x features) gets one panel per
    column, since the columns' scales differ.

    The KDE is arviz_stats' (:func:`bayescheck.reports.figure_stats.kde`), the one
    arviz_plots.plot_ppc_dist draws; the panels are small
    multiples on one Axes (:class:`bayescheck.reports.panels.PanelGrid`).
    """
    from .figure_stats import kde

    panels = []  # (title, predictive data sets as rows, observed values)
    for var in variables:
        name, observed = var["name"], np.asarray(var["observed"], dtype=np.float64)
        predicted = np.asarray(var["predicted"], dtype=np.float64)
        if observed.ndim < 2:
            panels.append((name, predicted.reshape(-1, predicted[0, 0].size), observed.ravel()))
            continue
        # one panel per column (e.g. per Gaussian feature): their scales differ
        for j, label in enumerate(var["labels"]):
            column = predicted[..., j]
            panels.append((f"{name}[{label}]", column.reshape(-1, column[0, 0].size),
                           observed[..., j].ravel()))
    from .panels import PanelGrid

    cols = min(3, len(panels))
    grid_fig = PanelGrid(math.ceil(len(panels) / cols), cols, 4.4, 1.9, left=0.15)
    predictive_style = {"color": "#3182bd", "alpha": 0.3, "lw": 1.0}
    observed_style = {"color": "#111111", "lw": 1.8}
    for i, (name, predicted, observed) in enumerate(panels):
        panel = grid_fig.panel(*divmod(i, cols), title=name)
        every = np.linspace(0, len(predicted) - 1, min(samples, len(predicted)))
        grid, pdf = kde(predicted[every.round().astype(int)])
        for g, d in zip(grid, pdf, strict=True):
            panel.line(g, d, **predictive_style)
        grid, pdf = kde(observed)
        panel.line(grid, pdf, **observed_style)
    grid_fig.legend_entry("predictive data sets", **predictive_style)
    grid_fig.legend_entry("observed data", **observed_style)
    return grid_fig.uri()
