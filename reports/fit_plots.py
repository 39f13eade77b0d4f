"""The model's own pictures, drawn with matplotlib from the numbers of its fit.

:mod:`bayescheck.reports.fit_figures` chooses them and keeps their data in ``report.json``
(``fit_plots``: a ``kind`` of :data:`FIT_PLOTS`, a title, a caption and the drawing
function's arguments); :func:`fit_figure` draws one. :func:`trajectory_figure` draws a
stream's posterior batch by batch. Each returns a PNG data URI.
"""

from __future__ import annotations

import math

import numpy as np

from .plots import figure_uri, new_figure, pyplot

__all__ = ["FIT_PLOTS", "MAX_PANELS", "dag_figure", "fit_figure", "intervals_figure",
           "layered_layout", "mixture_figure", "separating_pair", "series_figure",
           "trajectory_figure"]

#: A stream's trajectory draws at most this many coefficients, one panel each.
MAX_PANELS = 20
#: matplotlib's default colour cycle, for the mixture's components.
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


def series_figure(values, *, xlabel: str = "iteration", ylabel: str = "value",
                  **_) -> str:
    """A quantity per iteration, such as the log evidence; with markers when there are few."""
    values = np.asarray(values, dtype=np.float64)
    fig, ax = new_figure(5.5, 2.6)
    ax.plot(np.arange(values.size), values, color="#08519c", lw=1.5,
            marker="o" if values.size <= 60 else None, ms=3.0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return figure_uri(fig)


def intervals_figure(names, mean, lower, upper, *, zero=None, **_) -> str:
    """A vector parameter's components: mean and interval each, one row per component.

    Components marked in ``zero`` (exactly zero, for example pruned weights) are drawn as
    open circles at 0.
    """
    n = len(names)
    mean, lower, upper = (np.asarray(v, dtype=np.float64) for v in (mean, lower, upper))
    zero = np.zeros(n, dtype=bool) if zero is None else np.asarray(zero, dtype=bool)
    kept = ~zero
    fig, ax = new_figure(5.0, 0.6 + 0.28 * n)
    y = np.arange(n)[::-1].astype(float)
    ax.set_yticks(y, [str(name) for name in names], fontsize=8)
    ax.set_ylim(-0.6, n - 0.4)
    ax.axvline(0.0, color="#bdbdbd", lw=1.0)
    ax.hlines(y[kept], lower[kept], upper[kept], color="#08519c", lw=2.0)
    ax.plot(mean[kept], y[kept], "o", ms=6.0, color="#08519c", label="kept")
    if zero.any():
        ax.plot(np.zeros(int(zero.sum())), y[zero], "o", ms=6.0, color="#737373",
                mfc="white", label="pruned (exactly 0)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return figure_uri(fig)


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
    two features), labelled by weight.
    """
    X = np.asarray(points, dtype=np.float64)
    w, mu, cov = (np.asarray(v, dtype=np.float64) for v in (weights, means, covariances))
    if X.shape[1] == 1:
        fig, ax = new_figure(5.5, 3.0)
        lo, hi = X.min(), X.max()
        pad = 0.15 * (hi - lo) + 3 * np.sqrt(cov[:, 0, 0].max())
        grid = np.linspace(lo - pad, hi + pad, 400)
        ax.hist(X[:, 0], bins=max(1, min(60, X.shape[0] // 2)), density=True,
                color="#d9d9d9", label="data")
        if X.shape[0] <= 50:
            ax.plot(X[:, 0], np.zeros(X.shape[0]), "|", ms=14.0, color="#252525")
        total = np.zeros_like(grid)
        for k in range(w.size):
            sd = np.sqrt(cov[k, 0, 0])
            dens = w[k] * np.exp(-0.5 * ((grid - mu[k, 0]) / sd) ** 2) / (sd * np.sqrt(2 * np.pi))
            total += dens
            ax.plot(grid, dens, color=COLOURS[k % len(COLOURS)], lw=1.2,
                    label=f"component {k} (weight {w[k]:.2f}, mean {mu[k, 0]:.3g})")
        ax.plot(grid, total, color="#111111", lw=1.8, label="mixture")
        ax.set_xlabel(features[0])
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return figure_uri(fig)
    a, b = separating_pair(w, mu, cov)
    idx = np.array([a, b])
    t = np.linspace(0, 2 * np.pi, 200)
    circle = np.stack([np.cos(t), np.sin(t)])
    fig, ax = new_figure(5.5, 3.8)
    ax.scatter(X[:, a], X[:, b], s=6, color="#969696", alpha=0.6, label="data")
    for k in range(w.size):
        colour = COLOURS[k % len(COLOURS)]
        L = np.linalg.cholesky(cov[k][np.ix_(idx, idx)])
        for r, ls in ((1.0, "solid"), (2.0, "--")):
            e = mu[k, idx, None] + r * (L @ circle)
            ax.plot(e[0], e[1], color=colour, ls=ls, lw=1.4)
        ax.plot([mu[k, a]], [mu[k, b]], "x", ms=8.0, mew=2.0, color=colour,
                label=f"component {k} (weight {w[k]:.2f})")
    ax.set_xlabel(features[a])
    ax.set_ylabel(features[b])
    if X.shape[1] > 2:
        ax.set_title(f"the pair of the {X.shape[1]} features that separates the components "
                     f"best", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return figure_uri(fig)


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
    plt = pyplot()
    pos = layered_layout(nodes, edges)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    width = max(xs) - min(xs) + 1
    height = max(ys) - min(ys) + 1
    fig, ax = new_figure(min(12.0, 1.0 + 1.5 * width), min(10.0, 0.6 + 1.0 * height))
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
    return figure_uri(fig)


def trajectory_figure(trajectory: list[dict]) -> str | None:
    """Posterior mean and 90 % interval of each coefficient after each batch of a stream.

    One panel per coefficient (at most :data:`MAX_PANELS`), three to a row; None for a
    stream of one batch (nothing to draw).
    """
    steps = [t for t in trajectory if "mean" in t]
    if len(trajectory) < 2 or not steps:
        return None
    names = list(steps[-1]["mean"])[:MAX_PANELS]
    index = np.array([i + 1 for i, t in enumerate(trajectory) if "mean" in t], dtype=float)
    cols = min(3, len(names))
    rows = math.ceil(len(names) / cols)
    fig, axes = new_figure(3.6 * cols, 2.1 * rows, rows, cols, squeeze=False)
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    for ax, name in zip(axes.ravel(), names, strict=False):
        mean = np.array([t["mean"][name] for t in steps], dtype=float)
        lo = np.array([t["q05"][name] for t in steps], dtype=float)
        hi = np.array([t["q95"][name] for t in steps], dtype=float)
        ax.fill_between(index, lo, hi, color="#c6dbef", label="90 % interval")
        ax.plot(index, mean, color="#08519c", lw=1.5, marker="o", ms=4.0, label="mean")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("after batch", fontsize=8)
        ax.tick_params(labelsize=7)
    axes.ravel()[0].legend(fontsize=7, frameon=False)
    return figure_uri(fig)


#: ``kind`` of a :func:`bayescheck.reports.fit_figures.fit_figures` entry -> the function
#: drawing it from the entry's data.
FIT_PLOTS = {"series": series_figure, "intervals": intervals_figure,
             "mixture": mixture_figure, "dag": dag_figure}


def fit_figure(entry: dict) -> str:
    """Draw one :func:`bayescheck.reports.fit_figures.fit_figures` entry; return its data URI."""
    data = {k: v for k, v in entry.items() if k not in ("kind", "title", "caption")}
    return FIT_PLOTS[entry["kind"]](**data)
