"""The z histogram stays readable with an absurd outlier, and says what it clipped; only
judged z scores go into it."""

import numpy as np
from bayescheck.reports import plots
from bayescheck.reports.check_figures import judged


def test_outliers_are_clipped_into_the_edge_bins_and_counted():
    z = [*np.random.default_rng(0).normal(size=500), 2.9e24, -80.0, 5.0, None, float("nan")]
    c = plots.clip_z(z, threshold=4.5)
    assert c["top"] == 1.5 * 4.5  # the axis does not stretch to the outlier
    assert (c["below"], c["above"]) == (1, 1)
    assert c["max_abs"] == 2.9e24
    assert c["z"].size == 503 and np.abs(c["z"]).max() == c["top"]
    assert 5.0 in c["z"]  # a fail between the threshold and the edge is shown as it is


def test_nothing_clipped_without_outliers():
    c = plots.clip_z([0.5, -1.0, 3.9], threshold=3.0)
    assert c["top"] == 4.5 and (c["below"], c["above"]) == (0, 0)
    assert list(c["z"]) == [0.5, -1.0, 3.9]


def test_figure_draws_with_an_outlier():
    uri = plots.z_histogram_figure([0.1, -0.3, 2.9e24], 4.0)
    assert uri.startswith("data:image/png;base64,")


def test_judged_reads_the_not_judged_column():
    row = {"not_judged": "mean: Pareto k-hat 1.2 > 0.7; sd: Pareto k-hat 2.4 > 0.7"}
    assert not judged(row, "mean") and not judged(row, "sd") and judged(row, "q05")
    assert judged({"not_judged": ""}, "mean") and judged({}, "sd")
