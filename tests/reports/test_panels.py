"""Small multiples on one Axes: each panel's data lands in its own frame, ticks are round."""

import numpy as np
import pytest
from bayescheck.reports.panels import PanelGrid, tick_labels, tick_values

pytestmark = pytest.mark.slow  # draws matplotlib figures


def test_tick_values_are_round_and_inside_the_range():
    ticks = tick_values(0.13, 0.87)
    assert list(ticks) == pytest.approx([0.2, 0.4, 0.6, 0.8])
    assert tick_values(1.0, 1.0).size == 0 and tick_values(0.0, np.nan).size == 0


@pytest.mark.parametrize(("ticks", "labels"), [
    ([0, 2.5, 5, 7.5], ["0.0", "2.5", "5.0", "7.5"]),
    ([10, 20, 30], ["10", "20", "30"]),
    ([-0.02, 0.0, 0.02], ["-0.02", "0.00", "0.02"]),
    ([0, 0.0002, 0.0004], ["0", "0.0002", "0.0004"]),
    ([1e5, 2e5], ["1e+05", "2e+05"]),
])
def test_tick_labels_carry_the_decimals_their_step_needs(ticks, labels):
    assert tick_labels(ticks) == labels


def test_tick_values_are_matplotlibs():
    """The ticks matplotlib's MaxNLocator(4, steps=[1, 2, 2.5, 5, 10]) puts inside a range
    (the report drew them with it): on ranges of every width and offset from 0."""
    from matplotlib.ticker import MaxNLocator

    rng = np.random.default_rng(0)
    cases = [(0.0, 1.0), (-4.0, 4.0), (1e5, 1e5 + 1), (-1e-12, 1e-12), (999.5, 1000.5),
             (0.0, 1e-300), (3.0, 3.0 + 1e-15)]
    for _ in range(3000):
        centre, width = rng.normal() * 10 ** rng.uniform(-5, 8), 10 ** rng.uniform(-8, 6)
        cases.append((centre - width * rng.uniform(), centre + width * rng.uniform()))
    for lo, hi in cases:
        ref = MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
        ref = ref[(ref >= lo - 1e-9 * (hi - lo)) & (ref <= hi + 1e-9 * (hi - lo))]
        got = tick_values(lo, hi)
        assert got.shape == ref.shape, (lo, hi, got, ref)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * (hi - lo))
    # a wrong step is caught: the ticks of another nbins differ
    assert tick_values(0.0, 1.0, nbins=8).shape != tick_values(0.0, 1.0).shape


def test_each_panel_is_drawn_inside_its_own_frame():
    grid = PanelGrid(2, 2, 2.0, 1.0)
    grid.panel(0, 0, title="a").line([0, 1], [0, 1])
    grid.panel(1, 1, title="d").markers([5.0, 15.0], [-1.0, 1.0], color="red")
    svg = grid.drawing()
    assert [p.title for p in svg.panels] == ["a", "d"]
    (dots,) = [data for kind, data, style in svg.items if kind == "markers"]
    x, y = dots  # the markers of every panel in one element, in inches
    x0, y0, w, h = grid._frame(1, 1)
    # the panel's limits span its data (y padded by 5 %), mapped into its frame
    assert x[0] == pytest.approx(x0) and x[1] == pytest.approx(x0 + w)
    assert y0 < y[0] < y[1] < y0 + h
    # the other panel's frame is above and to the left, apart from this one
    ax0, ay0, aw, ah = grid._frame(0, 0)
    assert ax0 + aw < x0 and ay0 > y0 + h
    assert set(svg.texts()) >= {"a", "d", "10.0", "15.0"}


def test_the_svg_holds_every_element_escaped_and_at_the_pngs_size():
    import base64
    import xml.etree.ElementTree as ET

    grid = PanelGrid(1, 2, 2.0, 1.0)
    grid.panel(0, 0, title="<script>x</script> & y").line([0, 1, np.nan, 2, 3], [0, 1, 0, 1, 0])
    rng = np.random.default_rng(1)
    grid.panel(0, 1).markers(rng.normal(size=50), rng.normal(size=50), alpha=0.3,
                             color="#08519c")
    grid.legend_entry("line", color="red")
    uri = grid.uri()
    assert uri.startswith("data:image/svg+xml;base64,")
    text = base64.b64decode(uri.split(",", 1)[1]).decode()
    root = ET.fromstring(text)  # well-formed: the title's markup is escaped
    width, height = grid.size()
    assert root.get("width") == f"{width * 80:.0f}" and root.get("height") == f"{height * 80:.0f}"
    ns = "{http://www.w3.org/2000/svg}"
    assert "<script>x</script> & y" in [t.text for t in root.iter(ns + "text")]
    # NaN breaks the line into two pieces; translucent markers are one embedded PNG layer
    paths = [p.get("d") for p in root.iter(ns + "path")]
    assert any(d.count("M") == 2 and "l" in d for d in paths)
    (layer,) = root.iter(ns + "image")
    png = base64.b64decode(layer.get("href").split(",", 1)[1])
    assert png.startswith(b"\x89PNG")


def test_translucent_markers_add_up_where_they_overlap():
    """Opacity 1 - (1 - alpha)^k where k markers overlap, as matplotlib composites them."""
    import base64
    import io
    import re

    from bayescheck.reports.svg import SUB, Svg
    from PIL import Image

    alphas = []
    for k in (1, 3):
        svg = Svg(1.0, 1.0, dpi=80)
        svg.markers([0.5] * k, [0.5] * k, ms=8.0, color="#ff0000", alpha=0.3)
        ((_, data, style),) = svg.items
        (layer,) = svg._write_markers(data, style)
        x0, y0 = (int(v) // SUB for v in re.search(r'x="(\d+)" y="(\d+)"', layer).groups())
        png = base64.b64decode(layer.split("base64,", 1)[1].split('"', 1)[0])
        rgba = np.asarray(Image.open(io.BytesIO(png)))
        centre = rgba[40 - y0, 40 - x0]  # the pixel under the discs' centre
        assert tuple(centre[:3]) == (255, 0, 0)
        alphas.append(centre[3] / 255)
        # a disc of 8 points (8.9 pixels) across: its edge is partly covered, outside empty
        row = rgba[40 - y0, :, 3]
        assert (row > 0).sum() in (9, 10, 11) and row.max() == centre[3]
    assert alphas[0] == pytest.approx(0.3, abs=0.01)
    assert alphas[1] == pytest.approx(1 - 0.7**3, abs=0.01)


def test_translucent_markers_at_the_edge_are_cut_and_those_outside_dropped():
    """A disc centred on the figure's corner shows its quarter inside; discs wholly outside
    (beyond every edge) draw nothing; one on the far side of the canvas is not wrapped."""
    import base64
    import io
    import re

    from bayescheck.reports.svg import SUB, Svg
    from PIL import Image

    def layer_of(xs, ys):
        svg = Svg(1.0, 1.0, dpi=80)  # 80 x 80 pixels
        svg.markers(xs, ys, ms=8.0, color="#ff0000", alpha=0.5)
        ((_, data, style),) = svg.items
        out = svg._write_markers(data, style)
        if not out:
            return None
        x0, y0, w, h = (int(v) // SUB for v in re.search(
            r'x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)"', out[0]).groups())
        png = base64.b64decode(out[0].split("base64,", 1)[1].split('"', 1)[0])
        return x0, y0, w, h, np.asarray(Image.open(io.BytesIO(png)))[..., 3]

    # the top-left corner: (0, 1) in inches from the bottom left; radius 4.4 pixels
    x0, y0, w, h, alpha = layer_of([0.0], [1.0])
    assert (x0, y0) == (0, 0) and 4 <= w <= 5 and 4 <= h <= 5
    assert alpha[0, 0] == pytest.approx(0.5 * 255, abs=3)  # the disc's centre is covered
    # wholly outside, on every side: nothing to draw
    assert layer_of([-0.2, 1.2, 0.5, 0.5], [0.5, 0.5, -0.2, 1.2]) is None
    # the right edge: drawn on the last columns, nothing on the first (no wrap-around)
    x0, y0, w, h, alpha = layer_of([1.0], [0.5])
    assert x0 + w == 80 and 4 <= w <= 5 and alpha.max() > 0


@pytest.mark.parametrize("ticks", [[-123450.0, -123440.0, -123430.0, -123420.0],
                                   [1.00001, 1.00002, 1.00003, 1.00004],
                                   [250000.0, 250000.1, 250000.2]])
def test_tick_labels_of_a_narrow_range_far_from_zero_tell_the_ticks_apart(ticks):
    """A log evidence near -123,456 or a coefficient near 250,000: '.3g' gave one label for
    all the ticks ('-1.23e+05' four times)."""
    labels = tick_labels(np.array(ticks))
    assert len(set(labels)) == len(ticks), labels
    assert [float(x) for x in labels] == pytest.approx(ticks, rel=1e-12)
