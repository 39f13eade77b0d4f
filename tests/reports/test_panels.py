"""Small multiples on one Axes: each panel's data lands in its own frame, ticks are round."""

import numpy as np
import pytest

from reports.panels import PanelGrid, tick_labels, tick_values

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


def test_each_panel_is_drawn_inside_its_own_frame():
    import matplotlib.pyplot as plt

    grid = PanelGrid(2, 2, 2.0, 1.0)
    grid.panel(0, 0, title="a").line([0, 1], [0, 1])
    grid.panel(1, 1, title="d").markers([5.0, 15.0], [-1.0, 1.0], color="red")
    fig = grid.figure()
    try:
        assert [p.title for p in fig.panels] == ["a", "d"]
        (ax,) = fig.axes
        (dots,) = ax.lines  # the markers of every panel in one artist
        x, y = dots.get_xdata(), dots.get_ydata()
        x0, y0, w, h = grid._frame(1, 1)
        # the panel's limits span its data (y padded by 5 %), mapped into its frame
        assert x[0] == pytest.approx(x0) and x[1] == pytest.approx(x0 + w)
        assert y0 < y[0] < y[1] < y0 + h
        # the other panel's frame is above and to the left, apart from this one
        ax0, ay0, aw, ah = grid._frame(0, 0)
        assert ax0 + aw < x0 and ay0 > y0 + h
        assert {t.get_text() for t in ax.texts} >= {"a", "d", "10.0", "15.0"}
    finally:
        plt.close(fig)
