"""Small multiples drawn on one matplotlib Axes, for the report's many-panel figures.

A matplotlib Axes costs about 10-30 ms to create and as much again to lay out and draw its
ticks, and a report's figures had about 50 of them (benchmarks/REPORTS.md). A
:class:`PanelGrid` draws every panel of a figure on a single invisible Axes whose units are
the figure's inches: each :class:`Panel` keeps what is drawn on it in its own data units,
and :meth:`PanelGrid.uri` maps every panel into its cell, draws its frame, a few ticks, its
title and labels, and batches the lines, filled areas and markers of all panels into one
artist per style. The layout is fixed (margins in inches), so no layout pass measures text.

What each panel holds stays inspectable after drawing: ``fig.panels`` lists the panels, each
with its ``title``, ``xlabel``, ``ylabel``, limits and the ``items`` drawn in data units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Panel", "PanelGrid", "tick_labels", "tick_values"]

#: Inches at the top of a figure for its legend, one row of entries.
LEGEND_STRIP = 0.3


def tick_values(lo: float, hi: float, nbins: int = 4) -> np.ndarray:
    """At most about ``nbins`` + 1 round tick positions between ``lo`` and ``hi``."""
    from matplotlib.ticker import MaxNLocator

    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return np.array([])
    ticks = MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
    span = hi - lo
    return ticks[(ticks >= lo - 1e-9 * span) & (ticks <= hi + 1e-9 * span)]


def tick_labels(ticks) -> list[str]:
    """Labels of evenly spaced ``ticks`` with as many decimals as their step needs."""
    ticks = np.asarray(ticks, dtype=np.float64)
    if ticks.size == 0:
        return []
    step = float(np.min(np.diff(ticks))) if ticks.size > 1 else abs(float(ticks[0])) or 1.0
    top = float(np.max(np.abs(ticks)))
    if step < 1e-3 or top >= 1e5:
        return [f"{v:.3g}" for v in ticks]
    decimals = 0
    while decimals < 6 and abs(step * 10**decimals - round(step * 10**decimals)) > 1e-6:
        decimals += 1
    return [f"{0.0 if abs(v) < 1e-12 * top else v:.{decimals}f}" for v in ticks]


@dataclass
class Panel:
    """One panel: what is drawn on it, in its own data units.

    ``items`` holds ``(kind, x, y, style)`` with kind ``"line"``, ``"fill"`` (the area
    between ``y`` and 0), ``"markers"``, ``"hline"`` or ``"vline"``.
    """

    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    #: True: a few round ticks; a sequence: ticks at these values (category codes)
    xticks: bool | tuple = True
    yticks: bool = False
    note: str = ""
    #: y is drawn on a square-root scale (a rootogram): the items' y and ``ylim`` are given
    #: as square roots, the ticks are labelled in the original units
    ysqrt: bool = False
    #: light horizontal lines at the y ticks
    ygrid: bool = False
    items: list = field(default_factory=list)

    def line(self, x, y, **style) -> None:
        """A polyline (NaN breaks it)."""
        self.items.append(("line", np.asarray(x, float), np.asarray(y, float), style))

    def fill(self, x, y, **style) -> None:
        """The area between the curve ``(x, y)`` and zero."""
        self.items.append(("fill", np.asarray(x, float), np.asarray(y, float), style))

    def hist(self, values, bins: int, range=None, **style) -> None:  # noqa: A002 - numpy's name
        """A filled density histogram of ``values``."""
        counts, edges = np.histogram(np.asarray(values, float), bins=bins, range=range,
                                     density=True)
        self.fill(np.repeat(edges, 2), np.concatenate([[0.0], np.repeat(counts, 2), [0.0]]),
                  **style)

    def markers(self, x, y, **style) -> None:
        """One marker per point."""
        self.items.append(("markers", np.asarray(x, float), np.asarray(y, float), style))

    def hline(self, y: float, **style) -> None:
        """A horizontal line across the panel."""
        self.items.append(("hline", None, np.asarray([y], float), style))

    def limits(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """The x and y limits: as set, else the drawn data's extent (y from 0 for fills)."""
        xs = [i[1] for i in self.items if i[1] is not None]
        ys = [i[2] for i in self.items if i[0] != "vline"]
        ys += [np.zeros(1) for i in self.items if i[0] == "fill"]
        return (self.xlim or _extent(xs, 0.0), self.ylim or _extent(ys, 0.05))


def _extent(arrays, pad: float) -> tuple[float, float]:
    finite = [a[np.isfinite(a)] for a in arrays]
    finite = [a for a in finite if a.size]
    if not finite:
        return (0.0, 1.0)
    lo = min(float(a.min()) for a in finite)
    hi = max(float(a.max()) for a in finite)
    if hi <= lo:
        lo, hi = lo - 0.5 * (abs(lo) or 1.0), hi + 0.5 * (abs(hi) or 1.0)
    return (lo - pad * (hi - lo), hi + pad * (hi - lo))


class PanelGrid:
    """A figure of panels in a grid, drawn on one Axes in inch units.

    Parameters
    ----------
    rows, cols : int
        The grid.
    width, height : float
        Inches of one panel's frame.
    left, bottom, top : float
        Inches around each frame for tick labels and axis labels (left, bottom) and the
        title (top).
    gap : float
        Inches between a frame and the next cell's margin.
    cell_widths : list of float, optional
        Frame widths per column instead of ``width`` (a trace's density beside its draws).
    outer_left, outer_bottom : float
        Extra inches left of the first column and under the last row (outer tick labels
        and axis labels of a grid whose inner panels have none).
    """

    def __init__(self, rows: int, cols: int, width: float, height: float, *,
                 left: float = 0.3, bottom: float = 0.35, top: float = 0.3,
                 gap: float = 0.15, cell_widths: list[float] | None = None,
                 outer_left: float = 0.0, outer_bottom: float = 0.0):
        self.rows, self.cols = rows, cols
        self.widths = list(cell_widths) if cell_widths else [width] * cols
        self.height, self.left, self.bottom, self.top, self.gap = height, left, bottom, top, gap
        self.outer_left, self.outer_bottom = outer_left, outer_bottom
        self.panels: dict[tuple[int, int], Panel] = {}
        self.legend: list[tuple[str, dict]] = []

    def panel(self, row: int, col: int, **settings) -> Panel:
        """The panel at ``(row, col)``, made on first use with ``settings`` (Panel's fields)."""
        if (row, col) not in self.panels:
            self.panels[row, col] = Panel(**settings)
        return self.panels[row, col]

    def legend_entry(self, label: str, kind: str = "line", **style) -> None:
        """An entry of the legend drawn at the top of the figure.

        ``kind`` is ``"line"``, ``"fill"`` or ``"marker"``; ``style`` as for the items.
        """
        self.legend.append((label, {"kind": kind, **style}))

    # -------------------------------------------------------------------------- drawing

    def _frame(self, row: int, col: int) -> tuple[float, float, float, float]:
        """Inches of the frame of cell ``(row, col)``: x0, y0 (bottom), width, height."""
        x0 = self.outer_left + sum(self.left + w + self.gap for w in self.widths[:col]) \
            + self.left
        cell = self.bottom + self.height + self.top
        y0 = self.outer_bottom + (self.rows - 1 - row) * cell + self.bottom
        return x0, y0, self.widths[col], self.height

    def size(self) -> tuple[float, float]:
        """The figure's size in inches (a strip at the top holds the legend, if any)."""
        width = self.outer_left + sum(self.left + w + self.gap for w in self.widths)
        strip = LEGEND_STRIP if self.legend else 0.0
        return width, (self.outer_bottom + self.rows * (self.bottom + self.height + self.top)
                       + strip)

    def figure(self):
        """Draw every panel on a new figure; return it (``fig.panels`` lists the panels)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection, PolyCollection

        width, height = self.size()
        fig = plt.figure(figsize=(width, height))
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_axis_off()
        ax.set_xlim(0, width)
        ax.set_ylim(0, height)
        lines, fills, marks = {}, {}, {}
        frames, ticks, grid = [], [], []
        for (row, col), p in self.panels.items():
            x0, y0, w, h = self._frame(row, col)
            (xlo, xhi), (ylo, yhi) = p.limits()
            sx, sy = w / (xhi - xlo), h / (yhi - ylo)

            def X(v, x0=x0, xlo=xlo, sx=sx):
                return x0 + (v - xlo) * sx

            def Y(v, y0=y0, ylo=ylo, sy=sy):
                return y0 + (v - ylo) * sy

            for kind, x, y, style in p.items:
                key = tuple(sorted(style.items()))
                if kind == "line":
                    lines.setdefault(key, []).append(np.column_stack([X(x), Y(y)]))
                elif kind == "fill":
                    fills.setdefault(key, []).append(np.column_stack([X(x), Y(y)]))
                elif kind == "markers":
                    mx, my = marks.setdefault(key, ([], []))
                    mx.append(X(x))
                    my.append(Y(y))
                elif kind == "hline" and ylo <= y[0] <= yhi:
                    lines.setdefault(key, []).append(np.array([[x0, Y(y[0])], [x0 + w, Y(y[0])]]))
            frames.append([(x0, y0), (x0 + w, y0), (x0 + w, y0 + h), (x0, y0 + h), (x0, y0)])
            tick = 0.05
            if p.xticks is not False:
                values = tick_values(xlo, xhi) if p.xticks is True else \
                    np.asarray(p.xticks, dtype=np.float64)
                for v, label in zip(values, tick_labels(values), strict=True):
                    ticks.append([(X(v), y0), (X(v), y0 - tick)])
                    ax.text(X(v), y0 - tick - 0.02, label, ha="center", va="top", fontsize=7)
            if p.yticks or p.ygrid:
                values = tick_values(max(ylo, 0.0) ** 2, yhi**2) if p.ysqrt else \
                    tick_values(ylo, yhi)
                at = np.sqrt(values) if p.ysqrt else values
                for v, label in zip(at, tick_labels(values), strict=True):
                    if p.ygrid:
                        grid.append([(x0, Y(v)), (x0 + w, Y(v))])
                    if p.yticks:
                        ticks.append([(x0, Y(v)), (x0 - tick, Y(v))])
                        ax.text(x0 - tick - 0.02, Y(v), label, ha="right", va="center",
                                fontsize=7)
            if p.title:
                ax.text(x0 + w / 2, y0 + h + 0.06, p.title, ha="center", va="bottom",
                        fontsize=9)
            if p.xlabel:
                ax.text(x0 + w / 2, y0 - (0.22 if p.xticks else 0.06), p.xlabel, ha="center",
                        va="top", fontsize=8)
            if p.ylabel:
                ax.text(x0 - (0.45 if p.yticks else 0.06), y0 + h / 2, p.ylabel, ha="right",
                        va="center", rotation=90, fontsize=8)
            if p.note:
                ax.text(x0 + 0.05, y0 + h - 0.05, p.note, ha="left", va="top", fontsize=7)
        if grid:
            ax.add_collection(LineCollection(grid, colors="#cccccc", linewidths=0.6,
                                             zorder=0.5))
        for key, polys in fills.items():
            style = dict(key)
            ax.add_collection(PolyCollection(polys, facecolors=style.get("color", "#9ecae1"),
                                             alpha=style.get("alpha"), edgecolors="none"))
        for key, segs in lines.items():
            style = dict(key)
            ax.add_collection(LineCollection(segs, colors=style.get("color", "black"),
                                             linewidths=style.get("lw", 1.0),
                                             linestyles=style.get("ls", "solid"),
                                             alpha=style.get("alpha")))
        for key, (mx, my) in marks.items():
            style = dict(key)
            marker = style.get("marker", "o")
            ax.plot(np.concatenate(mx), np.concatenate(my), ls="none", marker=marker,
                    ms=style.get("ms", 2.0), mew=1.0 if marker == "|" else 0,
                    color=style.get("color", "black"), alpha=style.get("alpha"))
        ax.add_collection(LineCollection(frames + ticks, colors="#444444", linewidths=0.7))
        self._draw_legend(ax, width, height)
        fig.panels = [p for _, p in sorted(self.panels.items())]
        return fig

    def _draw_legend(self, ax, width: float, height: float) -> None:
        """The legend entries in one row in the strip at the top, left to right."""
        if not self.legend:
            return
        x, y = self.outer_left + self.left, height - LEGEND_STRIP / 2
        for label, style in self.legend:
            colour = style.get("color", "black")
            if style["kind"] == "marker":
                ax.plot([x + 0.11], [y], ls="none", marker=style.get("marker", "o"),
                        ms=style.get("ms", 2.0), mew=0, color=colour)
            elif style["kind"] == "fill":
                ax.fill([x, x + 0.22, x + 0.22, x], [y - 0.05, y - 0.05, y + 0.05, y + 0.05],
                        color=colour, lw=0)
            else:
                ax.plot([x, x + 0.22], [y, y], color=colour, lw=style.get("lw", 1.0),
                        ls=style.get("ls", "solid"), alpha=style.get("alpha"))
            ax.text(x + 0.28, y, label, va="center", fontsize=8)
            x += 0.5 + 0.075 * len(label)  # about the width of an 8-point label

    def uri(self, dpi: int = 80) -> str:
        """The figure as a PNG data URI (see :func:`reports.plots.figure_uri`)."""
        from .plots import figure_uri

        return figure_uri(self.figure(), dpi=dpi, crop=False)
