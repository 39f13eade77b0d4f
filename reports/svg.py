"""SVG figures written with numpy alone, for the report's small-multiple figures.

The report's figures of lines, filled areas, markers and text (:mod:`bayescheck.reports.panels`) used
to be drawn by matplotlib's Agg renderer and embedded as PNGs. Importing matplotlib costs
0.45-0.9 s of CPU, and drawing text was most of the rest (matplotlib 3.11 shapes every
string with libraqm and renders it glyph by glyph: about 1.5 ms for a tick label, 300 to 500
strings per report; benchmarks/REPORTS.md, round 8). An SVG holds the same lines, areas,
markers and words; the browser draws them. :class:`Svg` collects the primitives in inches
(origin bottom left, as matplotlib's figure coordinates) and writes the document: lengths
in points scale as matplotlib scales them at the figure's dpi, so the figure has the pixel
size the PNG had.

Markers drawn with transparency (the pair plot's 2000 points per panel, whose overlap shows
where the draws are dense) would need one SVG element per point for their opacities to add
up as matplotlib's do (about 40 bytes each); they are rasterised here instead, at the
figure's dpi (each marker a disc, a pixel's opacity ``1 - prod(1 - alpha c)`` over the
discs that cover a part ``c`` of it, as Agg composites them), and embedded as one PNG
layer.
"""

from __future__ import annotations

import base64
import math
import re
import struct
import zlib

import numpy as np

__all__ = ["Svg", "png_rgba"]

#: Fonts, the first matplotlib's default.
FONTS = "DejaVu Sans, Bitstream Vera Sans, Verdana, Arial, Helvetica, sans-serif"
#: matplotlib's dash pattern of ``ls="--"`` in multiples of the line width.
DASH = (3.7, 1.6)
#: Coordinates are written in this fraction of a pixel (integers in a scaled viewBox).
SUB = 10
#: Sub-pixel positions of a rasterised translucent marker, per axis.
PHASES = 4
#: Samples per pixel and axis of the coverage of a rasterised marker.
SAMPLES = 8

_ANCHOR = {"left": "start", "center": "middle", "right": "end"}
_BASELINE = {"top": "text-before-edge", "center": "central", "bottom": "text-after-edge",
             "baseline": "alphabetic"}


#: Characters XML 1.0 does not allow in a document (C0 controls but tab, newline and
#: carriage return; lone surrogates, which UTF-8 cannot encode; U+FFFE, U+FFFF).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape(text: str) -> str:
    """``text`` for an XML element (xml.sax.saxutils' import pulls urllib.request: 0.08 s).

    A character XML cannot hold (a control character in a column name) becomes U+FFFD:
    one such character would otherwise make the whole figure an unreadable image.
    """
    text = _NOT_XML.sub("\ufffd", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def png_rgba(rgba: np.ndarray, level: int = 6) -> bytes:
    """Encode an ``(h, w, 4)`` uint8 array as a PNG (8-bit RGBA, no filter)."""
    h, w, _ = rgba.shape
    raw = np.zeros((h, w * 4 + 1), dtype=np.uint8)
    raw[:, 1:] = rgba.reshape(h, w * 4)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), level)) + chunk(b"IEND", b""))


def _runs(xy: np.ndarray) -> list[np.ndarray]:
    """The finite stretches of a polyline (NaN breaks it, as in matplotlib)."""
    ok = np.isfinite(xy).all(axis=1)
    if ok.all():
        return [xy]
    edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(np.int8), [0]])))
    return [xy[a:b] for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _numbers(values: np.ndarray) -> str:
    return " ".join(map(str, values.ravel().tolist()))


class Svg:
    """An SVG figure of ``width`` x ``height`` inches at ``dpi``.

    Every method takes coordinates in inches from the bottom left and sizes in points.
    ``items`` keeps what was drawn, in those units, for tests: ``(kind, data, style)``.
    """

    def __init__(self, width: float, height: float, dpi: int = 80):
        self.width, self.height, self.dpi = width, height, dpi
        self.items: list[tuple[str, object, dict]] = []

    # --------------------------------------------------------------------- drawing

    def lines(self, polylines, *, color="black", lw: float = 1.0, ls: str = "solid",
              alpha: float | None = None) -> None:
        """Polylines (each an ``(n, 2)`` array; NaN breaks one)."""
        self.items.append(("lines", [np.asarray(p, float) for p in polylines],
                           {"color": color, "lw": lw, "ls": ls, "alpha": alpha}))

    def polygons(self, polygons, *, color="black", alpha: float | None = None) -> None:
        """Filled polygons without edges (each an ``(n, 2)`` array, closed)."""
        self.items.append(("polygons", [np.asarray(p, float) for p in polygons],
                           {"color": color, "alpha": alpha}))

    def markers(self, x, y, *, marker: str = "o", ms: float = 2.0, mew: float = 0.0,
                color="black", alpha: float | None = None, mfc: str | None = None) -> None:
        """One marker per point, as matplotlib's of size ``ms`` and edge width ``mew``.

        ``o`` (a disc; with ``mfc`` filled with that colour inside an edge of ``color``),
        ``|``, ``x``, ``d``, ``D``.
        """
        self.items.append(("markers", (np.asarray(x, float).ravel(),
                                       np.asarray(y, float).ravel()),
                           {"marker": marker, "ms": ms, "mew": mew, "color": color,
                            "alpha": alpha, "mfc": mfc}))

    def text(self, x: float, y: float, s: str, *, fontsize: float = 8.0, ha: str = "left",
             va: str = "baseline", rotation: float = 0.0, color="black") -> None:
        """A string (a newline starts a new line), anchored as matplotlib's ``ha``/``va``."""
        self.items.append(("text", (x, y, str(s)), {"fontsize": fontsize, "ha": ha,
                                                    "va": va, "rotation": rotation,
                                                    "color": color}))

    def texts(self) -> list[str]:
        """Every string drawn."""
        return [data[2] for kind, data, _ in self.items if kind == "text"]

    # --------------------------------------------------------------------- writing

    def _units(self, xy: np.ndarray) -> np.ndarray:
        """Inches (bottom left) to integer viewBox units (top left)."""
        k = self.dpi * SUB
        out = np.empty(xy.shape, dtype=np.int64)
        out[:, 0] = np.rint(xy[:, 0] * k)
        out[:, 1] = np.rint((self.height - xy[:, 1]) * k)
        return out

    def _pt(self, points: float) -> float:
        """Points to viewBox units."""
        return points * self.dpi / 72 * SUB

    def _path(self, polylines, close: bool = False) -> str:
        parts = []
        for poly in polylines:
            for run in _runs(poly):
                if len(run) == 0:
                    continue
                u = self._units(run)
                d = np.diff(u, axis=0)
                parts.append(f"M{u[0, 0]} {u[0, 1]}" + (f"l{_numbers(d)}" if len(d) else "")
                             + ("z" if close else ""))
        return "".join(parts)

    @staticmethod
    def _paint(kind: str, color, alpha) -> str:
        out = f' {kind}="{color}"'
        if alpha is not None and alpha < 1:
            out += f' {kind}-opacity="{alpha:.3g}"'
        return out

    def _write_lines(self, polylines, style) -> list[str]:
        width = self._pt(style["lw"])
        attrs = (f' fill="none" stroke-width="{width:.4g}" stroke-linejoin="round"'
                 + self._paint("stroke", style["color"], style["alpha"]))
        if style["ls"] in ("--", "dashed"):
            attrs += f' stroke-dasharray="{DASH[0] * width:.4g} {DASH[1] * width:.4g}"'
        if style["alpha"] is None or style["alpha"] >= 1:  # one element: nothing to add up
            d = self._path(polylines)
            return [f'<path d="{d}"{attrs}/>'] if d else []
        return [f'<path d="{d}"{attrs}/>' for d in (self._path([p]) for p in polylines) if d]

    def _write_polygons(self, polygons, style) -> list[str]:
        attrs = self._paint("fill", style["color"], style["alpha"])
        if style["alpha"] is None or style["alpha"] >= 1:
            d = self._path(polygons, close=True)
            return [f'<path d="{d}"{attrs}/>'] if d else []
        return [f'<path d="{d}"{attrs}/>' for d in (self._path([p], close=True)
                                                    for p in polygons) if d]

    def _write_markers(self, xy, style) -> list[str]:
        x, y = xy
        keep = np.isfinite(x) & np.isfinite(y)
        if not keep.any():
            return []
        u = self._units(np.column_stack([x[keep], y[keep]]))
        size = self._pt(style["ms"])
        marker = style["marker"]
        if marker == "o" and style["alpha"] is not None and style["alpha"] < 1:
            layer = self._raster_discs(u, size, style["color"], style["alpha"])
            return [layer] if layer else []
        paint = self._paint("stroke", style["color"], style["alpha"])
        edge = self._pt(style["mew"])
        if marker == "o":  # a zero-length stroke with round caps is a disc
            d = "".join(f"M{a} {b}h0" for a, b in u.tolist())
            out = [f'<path d="{d}" stroke-width="{size + edge:.4g}" stroke-linecap="round"'
                   f'{paint}/>']
            if style["mfc"] not in (None, style["color"]) and size > edge:  # an open circle
                out.append(f'<path d="{d}" stroke-width="{size - edge:.4g}" '
                           f'stroke-linecap="round"'
                           f'{self._paint("stroke", style["mfc"], style["alpha"])}/>')
            return out
        if marker == "x":
            half = round(size / 2)
            d = "".join(f"M{a - half} {b - half}l{2 * half} {2 * half}"
                        f"M{a - half} {b + half}l{2 * half} {-2 * half}" for a, b in u.tolist())
            return [f'<path d="{d}" stroke-width="{edge:.4g}"{paint}/>']
        if marker == "|":
            half = round(size / 2)
            d = "".join(f"M{a} {b - half}v{2 * half}" for a, b in u.tolist())
            return [f'<path d="{d}" stroke-width="{max(self._pt(style["mew"]), SUB):.4g}"'
                    f'{paint}/>']
        if marker in ("d", "D"):  # matplotlib's diamond: a unit square turned 45 degrees
            hy = round(size * math.sqrt(0.5))
            hx = round(hy * (0.6 if marker == "d" else 1.0))
            d = "".join(f"M{a} {b - hy}l{hx} {hy}l{-hx} {hy}l{-hx} {-hy}z" for a, b in u.tolist())
            return [f'<path d="{d}"{self._paint("fill", style["color"], style["alpha"])}/>']
        raise ValueError(f"marker {marker!r} is not drawn as SVG")

    def _raster_discs(self, u: np.ndarray, size: float, color: str, alpha: float) -> str:
        """Translucent discs as one PNG layer.

        A pixel's opacity is ``1 - prod(1 - alpha c)`` over the discs covering a part ``c``
        of it (as Agg composites them), from coverage kernels precomputed for
        :data:`PHASES` sub-pixel offsets of a centre.
        """
        w, h = math.ceil(self.width * self.dpi), math.ceil(self.height * self.dpi)
        radius = size / SUB / 2  # pixels
        big = math.ceil(radius + 1)
        offs = np.arange(-big, big + 1)
        # coverage of each pixel by a disc centred at each sub-pixel phase (SAMPLES^2 points)
        at = (np.arange(SAMPLES) + 0.5) / SAMPLES
        centre = (np.arange(PHASES) + 0.5) / PHASES
        d = (offs[None, :, None] + at[None, None, :]) - centre[:, None, None]  # phase, px, s
        inside = (d[:, None, :, None, :, None] ** 2 + d[None, :, None, :, None, :] ** 2
                  <= radius**2)  # y phase, x phase, y px, x px, y sample, x sample
        kernel = np.log1p(-alpha * inside.mean(axis=(4, 5)))
        # only the pixel offsets some phase's disc covers (a 2.2 pt marker: 5 of 7 a side)
        used = np.flatnonzero((kernel < 0).any(axis=(0, 1, 3)) | (kernel < 0).any(axis=(0, 1, 2)))
        if used.size == 0:  # smaller than the coverage samples: nothing drawn
            return ""
        offs, kernel = offs[used[0]:used[-1] + 1], kernel[:, :, used[0]:used[-1] + 1,
                                                           used[0]:used[-1] + 1]
        px, py = u[:, 0] / SUB, u[:, 1] / SUB
        ix, iy = np.floor(px).astype(np.int64), np.floor(py).astype(np.int64)
        fx = np.minimum(((px - ix) * PHASES).astype(np.int64), PHASES - 1)
        fy = np.minimum(((py - iy) * PHASES).astype(np.int64), PHASES - 1)
        # Summed on a canvas padded by the kernel's width, so that no pixel of a disc that
        # touches the figure falls outside it (no mask per pixel: a pixel's sum is the same,
        # adding the kernel's zeros changes no sum); discs wholly outside are dropped.
        lo, hi = int(offs[0]), int(offs[-1])
        pad = hi - lo + 1
        inside_fig = (iy + hi >= 0) & (iy + lo < h) & (ix + hi >= 0) & (ix + lo < w)
        ix, iy, fx, fy = ix[inside_fig], iy[inside_fig], fx[inside_fig], fy[inside_fig]
        wide = w + 2 * pad
        at_offset = (offs[:, None] * wide + offs[None, :]).ravel()
        index = ((iy + pad) * wide + ix + pad)[:, None] + at_offset[None, :]
        total = np.bincount(index.ravel(), kernel[fy, fx].ravel(),
                            minlength=(h + 2 * pad) * wide)
        opacity = -np.expm1(total.reshape(h + 2 * pad, wide)[pad:pad + h, pad:pad + w])
        used_rows = np.flatnonzero(opacity.any(axis=1))
        used_cols = np.flatnonzero(opacity.any(axis=0))
        if used_rows.size == 0:
            return ""
        r0, r1, c0, c1 = used_rows[0], used_rows[-1] + 1, used_cols[0], used_cols[-1] + 1
        rgba = np.zeros((r1 - r0, c1 - c0, 4), dtype=np.uint8)
        rgba[..., :3] = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
        rgba[..., 3] = np.rint(opacity[r0:r1, c0:c1] * 255)
        # zlib level 1: 5x faster than 6 on this layer, 20 % larger
        png = base64.b64encode(png_rgba(rgba, level=1)).decode("ascii")
        return (f'<image x="{c0 * SUB}" y="{r0 * SUB}" width="{(c1 - c0) * SUB}" '
                f'height="{(r1 - r0) * SUB}" preserveAspectRatio="none" '
                f'href="data:image/png;base64,{png}"/>')

    def _write_text(self, data, style) -> str:
        x, y, s = data
        u = self._units(np.array([[x, y]]))[0]
        size = self._pt(style["fontsize"])
        lines = s.split("\n")
        # matplotlib's line spacing (1.2); va places the block, not its first line
        shift = {"top": 0.0, "center": -(len(lines) - 1) / 2,
                 "bottom": -(len(lines) - 1), "baseline": -(len(lines) - 1)}[style["va"]]
        attrs = (f'x="{u[0]}" y="{u[1]}" font-size="{size:.4g}" '
                 f'text-anchor="{_ANCHOR[style["ha"]]}" '
                 f'dominant-baseline="{_BASELINE[style["va"]]}"')
        if style["color"] not in ("black", "#000000"):
            attrs += f' fill="{style["color"]}"'
        if style["rotation"]:
            attrs += f' transform="rotate({-style["rotation"]:g} {u[0]} {u[1]})"'
        if len(lines) == 1:
            return f"<text {attrs}>{escape(s)}</text>"
        spans = "".join(f'<tspan x="{u[0]}" dy="{(shift if i == 0 else 1) * 1.2:.4g}em">'
                        f"{escape(line)}</tspan>" for i, line in enumerate(lines))
        return f"<text {attrs}>{spans}</text>"

    def document(self) -> str:
        """The SVG document."""
        w, h = self.width * self.dpi, self.height * self.dpi
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
               f'viewBox="0 0 {w * SUB:.0f} {h * SUB:.0f}" font-family="{FONTS}">',
               '<rect width="100%" height="100%" fill="white"/>']
        for kind, data, style in self.items:
            if kind == "lines":
                out += self._write_lines(data, style)
            elif kind == "polygons":
                out += self._write_polygons(data, style)
            elif kind == "markers":
                out += self._write_markers(data, style)
            else:
                out.append(self._write_text(data, style))
        out.append("</svg>")
        return "\n".join(out)

    def uri(self) -> str:
        """The document as a ``data:image/svg+xml;base64,...`` URI."""
        return ("data:image/svg+xml;base64,"
                + base64.b64encode(self.document().encode("utf-8")).decode("ascii"))
