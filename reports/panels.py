"""Small multiples drawn as one SVG, for the report's many-panel figures.

A matplotlib Axes costs about 10-30 ms to create and as much again to lay out and draw its
ticks, and a report's figures had about 50 of them (benchmarks/REPORTS.md); since round 8
these figures are not drawn by matplotlib at all. A :class:`PanelGrid` lays out its panels
in inches: each :class:`Panel` keeps what is drawn on it in its own data units, and
:meth:`PanelGrid.drawing` maps every panel into its cell, draws its frame, a few ticks
(:func:`tick_values`: matplotlib's choice of round ticks), its title and labels, and
batches the lines, filled areas and markers of all panels into one element per style of a
:class:`bayescheck.reports.svg.Svg`. The layout is fixed (margins in inches), so no text is measured.

What each panel holds stays inspectable after drawing: ``drawing().panels`` lists the panels,
each with its ``title``, ``xlabel``, ``ylabel``, limits and the ``items`` drawn in data units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .svg import Svg

__all__ = ["Panel", "PanelGrid", "tick_labels", "tick_values"]

#: Inches at the top of a figure for its legend, one row of entries.
LEGEND_STRIP = 0.3


def tick_values(lo: float, hi: float, nbins: int = 4) -> np.ndarray:
    """At most about ``nbins`` + 1 round tick positions between ``lo`` and ``hi``.

    The positions matplotlib's ``MaxNLocator(nbins, steps=[1, 2, 2.5, 5, 10])`` picks (the
    report drew its ticks with it; ``tests/reports/test_panels.py`` compares the two), without
    importing matplotlib: the smallest step of the form ``{1, 2, 2.5, 5} x 10^k`` at least
    ``(hi - lo) / nbins``, or the next smaller one while fewer than two multiples of it fall
    inside; an offset (a power of ten near the centre) is taken off first when the range is
    narrow against its distance from 0.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return np.array([])
    keep = (lo, hi)
    if max(abs(lo), abs(hi)) < 1e20 * np.finfo(float).tiny:  # as matplotlib's nonsingular
        lo, hi = -1e-13, 1e-13
    elif hi - lo <= 1e-14 * max(abs(lo), abs(hi)):  # too narrow to tick: widened
        lo, hi = lo - 1e-13 * abs(lo), hi + 1e-13 * abs(hi)
    span = hi - lo
    centre = (hi + lo) / 2
    offset = 0.0 if abs(centre) / span < 100 else \
        math.copysign(10 ** (math.log10(abs(centre)) // 1), centre)
    scale = 10 ** (math.log10(span / nbins) // 1)
    base = np.array([1.0, 2.0, 2.5, 5.0, 10.0])
    steps = np.concatenate([0.1 * base[:-1], base, [10 * base[1]]]) * scale
    a, b = lo - offset, hi - offset
    if offset:  # more slack where the offset dwarfs the step
        tol = [min(0.4999, max(1e-10, 10 ** (math.log10(abs(offset) / s) - 12))) for s in steps]
    else:
        tol = [1e-10] * len(steps)
    large = np.flatnonzero(steps >= span / nbins)
    first = int(large[0]) if large.size else len(steps) - 1
    for i in range(first, -1, -1):
        step = steps[i]
        start = (a // step) * step
        n_lo, rest = divmod(a - start, step)
        n_lo += abs(rest / step - 1) < tol[i]
        n_hi, rest = divmod(b - start, step)
        n_hi += not abs(rest / step) < tol[i]
        ticks = np.arange(n_lo, n_hi + 1) * step + start
        if ((ticks <= b) & (ticks >= a)).sum() >= 2:
            break
    ticks = ticks + offset
    lo, hi = keep
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
        # as many significant digits as tell neighbouring ticks apart (3 at least):
        # -123450 and -123440, not -1.23e+05 twice
        digits = 3 if not (top > 0 and step > 0) else \
            min(17, max(3, math.ceil(math.log10(top / step)) + 2))
        return [f"{0.0 if abs(v) < 1e-12 * top else v:.{digits}g}" for v in ticks]
    decimals = 0
    while decimals < 6 and abs(step * 10**decimals - round(step * 10**decimals)) > 1e-6:
        decimals += 1
    return [f"{0.0 if abs(v) < 1e-12 * top else v:.{decimals}f}" for v in ticks]


@dataclass
class Panel:
    """One panel: what is drawn on it, in its own data units.

    ``items`` holds ``(kind, x, y, style)`` with kind ``"line"``, ``"polygon"`` (a
    :meth:`band`), ``"fill"`` (the area
    between ``y`` and 0), ``"markers"``, ``"hline"`` or ``"vline"``.
    """

    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    #: True: a few round ticks; a sequence: ticks at these values (category codes)
    xticks: bool | tuple = True
    #: as ``xticks``; fixed ones may carry ``yticklabels`` (a forest plot's row names)
    yticks: bool | tuple = False
    yticklabels: tuple = ()
    ytick_fontsize: float = 7.0
    #: inches between the frame and the y label's right edge, when there are y ticks (None:
    #: room for the longest tick label)
    ylabel_pad: float | None = 0.45
    note: str = ""
    note_color: str = "black"
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

    def band(self, x, lo, hi, **style) -> None:
        """The filled area between the curves ``(x, lo)`` and ``(x, hi)``."""
        x = np.asarray(x, float)
        self.items.append(("polygon", np.concatenate([x, x[::-1]]),
                           np.concatenate([np.asarray(lo, float), np.asarray(hi, float)[::-1]]),
                           style))

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

    def vline(self, x: float, **style) -> None:
        """A vertical line across the panel."""
        self.items.append(("vline", np.asarray([x], float), None, style))

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

    def _legend_rows(self) -> list[list[tuple[float, str, dict]]]:
        """The legend's entries with their x, in rows that fit the figure's width."""
        width = self.outer_left + sum(self.left + w + self.gap for w in self.widths)
        start = self.outer_left + self.left
        rows, x = [[]], start
        for label, style in self.legend:
            step = 0.5 + 0.075 * len(label)  # about the width of an 8-point label
            if rows[-1] and x + step > width:
                rows.append([])
                x = start
            rows[-1].append((x, label, style))
            x += step
        return rows if self.legend else []

    def size(self) -> tuple[float, float]:
        """The figure's size in inches (a strip at the top holds the legend, if any)."""
        width = self.outer_left + sum(self.left + w + self.gap for w in self.widths)
        strip = LEGEND_STRIP * len(self._legend_rows())
        return width, (self.outer_bottom + self.rows * (self.bottom + self.height + self.top)
                       + strip)

    def drawing(self, dpi: int = 80) -> Svg:
        """Draw every panel; return the :class:`bayescheck.reports.svg.Svg` (``.panels`` lists them)."""
        width, height = self.size()
        svg = Svg(width, height, dpi)
        lines, fills, marks = {}, {}, {}
        frames, ticks, grid, texts = [], [], [], []
        for (row, col), p in sorted(self.panels.items()):
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
                elif kind in ("fill", "polygon"):
                    fills.setdefault(key, []).append(np.column_stack([X(x), Y(y)]))
                elif kind == "markers":
                    mx, my = marks.setdefault(key, ([], []))
                    mx.append(X(x))
                    my.append(Y(y))
                elif kind == "hline" and ylo <= y[0] <= yhi:
                    lines.setdefault(key, []).append(np.array([[x0, Y(y[0])], [x0 + w, Y(y[0])]]))
                elif kind == "vline" and xlo <= x[0] <= xhi:
                    lines.setdefault(key, []).append(np.array([[X(x[0]), y0], [X(x[0]), y0 + h]]))
            frames.append([(x0, y0), (x0 + w, y0), (x0 + w, y0 + h), (x0, y0 + h), (x0, y0)])
            tick = 0.05
            if p.xticks is not False:
                values = tick_values(xlo, xhi) if p.xticks is True else \
                    np.asarray(p.xticks, dtype=np.float64)
                for v, label in zip(values, tick_labels(values), strict=True):
                    ticks.append([(X(v), y0), (X(v), y0 - tick)])
                    texts.append((X(v), y0 - tick - 0.02, label, {"ha": "center", "va": "top",
                                                                  "fontsize": 7}))
            widest = 0
            if p.yticks is not False or p.ygrid:
                if p.yticks is not False and p.yticks is not True:  # fixed: rows, chains
                    values = at = np.asarray(p.yticks, dtype=np.float64)
                    labels = list(p.yticklabels) if p.yticklabels else tick_labels(values)
                else:
                    values = tick_values(max(ylo, 0.0) ** 2, yhi**2) if p.ysqrt else \
                        tick_values(ylo, yhi)
                    at = np.sqrt(values) if p.ysqrt else values
                    labels = tick_labels(values)
                widest = max(map(len, labels), default=0)
                for v, label in zip(at, labels, strict=True):
                    if p.ygrid:
                        grid.append([(x0, Y(v)), (x0 + w, Y(v))])
                    if p.yticks is not False:
                        ticks.append([(x0, Y(v)), (x0 - tick, Y(v))])
                        texts.append((x0 - tick - 0.02, Y(v), label,
                                      {"ha": "right", "va": "center",
                                       "fontsize": p.ytick_fontsize}))
            if p.title:
                texts.append((x0 + w / 2, y0 + h + 0.06, p.title,
                              {"ha": "center", "va": "bottom", "fontsize": 9}))
            if p.xlabel:
                texts.append((x0 + w / 2, y0 - (0.22 if p.xticks is not False else 0.06),
                              p.xlabel, {"ha": "center", "va": "top", "fontsize": 8}))
            if p.ylabel:
                pad = p.ylabel_pad if p.ylabel_pad is not None else 0.12 + 0.055 * widest
                texts.append((x0 - (pad if p.yticks is not False else 0.06),
                              y0 + h / 2, p.ylabel, {"ha": "right", "va": "center",
                                                      "rotation": 90, "fontsize": 8}))
            if p.note:
                texts.append((x0 + 0.05, y0 + h - 0.05, p.note,
                              {"ha": "left", "va": "top", "fontsize": 7,
                               "color": p.note_color}))
        # matplotlib's order, which this replaces: grid, areas, lines, frames, markers, text
        if grid:
            svg.lines(grid, color="#cccccc", lw=0.6)
        for key, polys in fills.items():
            style = dict(key)
            svg.polygons(polys, color=style.get("color", "#9ecae1"), alpha=style.get("alpha"))
        for key, segs in lines.items():
            style = dict(key)
            svg.lines(segs, color=style.get("color", "black"), lw=style.get("lw", 1.0),
                      ls=style.get("ls", "solid"), alpha=style.get("alpha"))
        svg.lines(frames + ticks, color="#444444", lw=0.7)
        for key, (mx, my) in marks.items():
            style = dict(key)
            marker = style.get("marker", "o")
            svg.markers(np.concatenate(mx), np.concatenate(my), marker=marker,
                        ms=style.get("ms", 2.0),
                        mew=style.get("mew", 1.0 if marker in ("|", "x") else 0.0),
                        color=style.get("color", "black"), alpha=style.get("alpha"),
                        mfc=style.get("mfc"))
        self._draw_legend(svg, height)
        for x, y, text, style in texts:
            svg.text(x, y, text, **style)
        svg.panels = [p for _, p in sorted(self.panels.items())]
        return svg

    def _draw_legend(self, svg: Svg, height: float) -> None:
        """The legend entries in rows in the strip at the top, left to right."""
        for n, row in enumerate(self._legend_rows()):
            y = height - LEGEND_STRIP * (n + 0.5)
            for x, label, style in row:
                colour = style.get("color", "black")
                if style["kind"] == "marker":
                    marker = style.get("marker", "o")
                    svg.markers([x + 0.11], [y], marker=marker, ms=style.get("ms", 2.0),
                                mew=style.get("mew", 1.0 if marker in ("|", "x") else 0.0),
                                color=colour, mfc=style.get("mfc"))
                elif style["kind"] == "fill":
                    svg.polygons([np.array([[x, y - 0.05], [x + 0.22, y - 0.05],
                                            [x + 0.22, y + 0.05], [x, y + 0.05]])],
                                 color=colour, alpha=style.get("alpha"))
                else:
                    svg.lines([np.array([[x, y], [x + 0.22, y]])], color=colour,
                              lw=style.get("lw", 1.0), ls=style.get("ls", "solid"),
                              alpha=style.get("alpha"))
                svg.text(x + 0.28, y, label, va="center", fontsize=8)

    def uri(self, dpi: int = 80) -> str:
        """The figure as an SVG data URI (:meth:`bayescheck.reports.svg.Svg.uri`)."""
        return self.drawing(dpi).uri()
