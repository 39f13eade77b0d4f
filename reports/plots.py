"""Figures for the report, returned as PNG data URIs so the HTML is self-contained."""

from __future__ import annotations

import base64
import io
import math

import numpy as np

__all__ = ["figure_uri", "marginals_figure", "rank_figure", "trace_figure", "trajectory_figure"]

#: More parameters than this are not drawn one panel each.
MAX_PANELS = 20


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure_uri(fig, dpi: int = 80) -> str:
    """Encode a matplotlib figure as a ``data:image/png;base64,...`` URI and close it."""
    plt = _plt()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _arviz_figure(plot, idata, var_names):
    pc = plot(idata, var_names=var_names, backend="matplotlib")
    fig = pc.viz["figure"]
    return fig.item() if hasattr(fig, "item") else fig


def rank_figure(idata, var_names) -> str:
    """Rank ECDF plots of the chains (arviz_plots.plot_rank)."""
    import arviz_plots as azp

    return figure_uri(_arviz_figure(azp.plot_rank, idata, list(var_names)))


def trace_figure(idata, var_names) -> str:
    """Traces and marginal densities per chain (arviz_plots.plot_trace_dist)."""
    import arviz_plots as azp

    return figure_uri(_arviz_figure(azp.plot_trace_dist, idata, list(var_names)))


def marginals_figure(marginals, draws, verdicts: dict | None = None,
                     priors: dict | None = None) -> str:
    """Each NUTS marginal as a histogram with the exact density drawn over it.

    ``priors`` (name -> frozen scipy distribution), where given, adds the prior marginal as a
    dashed line, so the reader sees how far the data moved it.
    """
    plt = _plt()
    shown = marginals[:MAX_PANELS]
    cols = min(3, len(shown))
    rows = math.ceil(len(shown) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 2.8 * rows), squeeze=False)
    for ax, m in zip(axes.flat, shown, strict=False):
        x = np.asarray(draws[m.name]).ravel()
        lo, hi = np.quantile(x, [0.001, 0.999])
        pad = 0.1 * (hi - lo)
        grid = np.linspace(lo - pad, hi + pad, 300)
        ax.hist(x, bins=60, range=(grid[0], grid[-1]), density=True, color="#9ecae1",
                label="NUTS draws")
        if m.dist is not None:
            ax.plot(grid, m.dist.pdf(grid), color="#d62728", lw=1.8, label="exact posterior")
        prior = (priors or {}).get(m.name)
        if prior is not None:
            density = prior.pdf(grid)
            ax.plot(grid, np.where(np.isfinite(density), density, np.nan), color="#525252",
                    lw=1.2, ls="--", label="prior")
        verdict = (verdicts or {}).get(m.name)
        ax.set_title(m.name + (f"  ({verdict})" if verdict else ""), fontsize=10)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(shown):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=8)
    fig.tight_layout()
    return figure_uri(fig)


def trajectory_figure(trajectory: list[dict]) -> str | None:
    """Posterior mean and 90 % interval of each coefficient after each batch of a stream."""
    steps = [t for t in trajectory if "mean" in t]
    if len(trajectory) < 2 or not steps:
        return None
    plt = _plt()
    names = list(steps[-1]["mean"])[:MAX_PANELS]
    cols = min(3, len(names))
    rows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 2.6 * rows), squeeze=False)
    index = [i + 1 for i, t in enumerate(trajectory) if "mean" in t]
    for ax, name in zip(axes.flat, names, strict=False):
        mean = np.array([t["mean"][name] for t in steps])
        lo = np.array([t["q05"][name] for t in steps])
        hi = np.array([t["q95"][name] for t in steps])
        ax.fill_between(index, lo, hi, color="#c6dbef", label="90 % interval")
        ax.plot(index, mean, marker="o", color="#08519c", label="mean")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("after batch", fontsize=8)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=8)
    fig.tight_layout()
    return figure_uri(fig)
