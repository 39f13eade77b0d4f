"""Which parameters the report's chain figures draw, and what each figure holds.

Synthetic draws, no sampling: element ``w[i]`` has mean ``10 i``, so a figure that drew the
wrong element's draws is caught by its values, not only by its labels.
"""

import numpy as np
import pytest

from reports import plots, report
from reports.report import MAX_CHAIN_PANELS, MAX_PAIR

pytestmark = pytest.mark.slow  # draws matplotlib figures

CHAINS, DRAWS = 4, 200


def _posterior(k: int):
    import arviz_base as azb

    rng = np.random.default_rng(0)
    w = 10.0 * np.arange(k) + rng.normal(size=(CHAINS, DRAWS, k))
    return azb.from_dict({"posterior": {"w": w},
                          "sample_stats": {"energy": rng.normal(size=(CHAINS, DRAWS)),
                                           "diverging": np.zeros((CHAINS, DRAWS), bool)}},
                         dims={"w": ["w_dim_0"]})


def _names(order):
    return [{"name": f"w[{i}]", "var": "w", "coords": {"w_dim_0": i}} for i in order]


def _index(name: str) -> int:
    return int(name.removeprefix("w[").removesuffix("]"))


@pytest.fixture
def figures(monkeypatch):
    """Figures handed to ``figure_uri``, kept open instead of encoded."""
    import matplotlib.pyplot as plt

    kept = []
    monkeypatch.setattr(plots, "figure_uri",
                        lambda fig, dpi=80, *, crop=True: kept.append(fig) or "data:,")
    yield kept
    for fig in kept:
        plt.close(fig)


def test_chain_figures_show_the_worst_parameters_and_say_so(monkeypatch):
    order = [5, 2, 7, 0, 3, 6, 1, 4]  # worst first, as in the cross-check table
    seen = {}

    def recorder(kind):
        def draw(draws, *_):
            seen[kind] = {name: float(np.mean(x)) for name, x in draws.items()}
            return "data:,"
        return draw

    for kind in ("rank", "trace", "pair"):
        monkeypatch.setattr(plots, f"{kind}_figure", recorder(kind))
    monkeypatch.setattr(plots, "energy_figure", lambda idata: "data:,")
    drawn = report._health_figures({}, _posterior(8), _names(order), len(order))
    captions = {f["title"]: f["caption"] for f in drawn}
    worst = [f"w[{i}]" for i in order]
    assert list(seen["rank"]) == worst[:MAX_CHAIN_PANELS]
    assert list(seen["trace"]) == worst[:MAX_CHAIN_PANELS]
    assert list(seen["pair"]) == worst[:MAX_PAIR]
    for kind in ("rank", "trace", "pair"):
        for name, mean in seen[kind].items():
            assert mean == pytest.approx(10 * _index(name), abs=0.5), (kind, name)
    assert f"the {MAX_CHAIN_PANELS} worst of 8 parameters" in captions["Rank plots"]
    assert f"the {MAX_CHAIN_PANELS} worst of 8 parameters" in captions["Traces"]
    assert f"the {MAX_PAIR} worst of 8 parameters" in captions["Pair plot"]


def test_small_models_show_every_parameter(monkeypatch):
    monkeypatch.setattr(plots, "energy_figure", lambda idata: "data:,")
    for name in ("rank_figure", "trace_figure", "pair_figure"):
        monkeypatch.setattr(plots, name, lambda *_: "data:,")
    captions = {f["title"]: f["caption"]
                for f in report._health_figures({}, _posterior(2), _names([1, 0]), 2)}
    assert "for both parameters" in captions["Rank plots"]
    assert "worst" not in captions["Rank plots"] + captions["Traces"] + captions["Pair plot"]


def _draws(k: int) -> dict:
    rng = np.random.default_rng(1)
    return {f"w[{i}]": rng.normal(10.0 * i, 1.0, size=(CHAINS, DRAWS)) for i in range(k)}


def test_rank_figure_has_one_panel_per_parameter(figures):
    plots.rank_figure(_draws(3))
    (fig,) = figures
    assert [ax.get_title() for ax in fig.axes] == ["w\n[0]", "w\n[1]", "w\n[2]"]
    assert all(len(ax.lines) == CHAINS for ax in fig.axes)  # one ECDF per chain


def test_trace_figure_has_one_row_per_parameter(figures):
    draws = _draws(3)
    plots.trace_figure(draws, np.zeros((CHAINS, DRAWS), bool))
    (fig,) = figures
    traces = [ax for ax in fig.axes if ax.get_xlabel() == "Draw"]
    assert [ax.get_ylabel() for ax in traces] == ["w\n[0]", "w\n[1]", "w\n[2]"]
    for ax, x in zip(traces, draws.values(), strict=True):
        assert sorted(line.get_ydata().mean() for line in ax.lines) == \
            pytest.approx(sorted(x.mean(axis=1)))


def test_pair_figure_draws_the_lower_triangle_on_thinned_draws(figures):
    draws = _draws(3)
    plots.pair_figure(draws, max_points=100)
    (fig,) = figures
    assert len(fig.axes) == 6  # 3 histograms and 3 scatters, no upper triangle
    scatters = [ax for ax in fig.axes if ax.collections]
    assert len(scatters) == 3
    corner = next(ax for ax in scatters if ax.get_ylabel() == "w\n[2]"
                  and ax.get_xlabel() == "w\n[0]")
    xy = corner.collections[0].get_offsets()
    assert len(xy) == 100
    assert np.mean(xy[:, 0]) == pytest.approx(0.0, abs=0.5)
    assert np.mean(xy[:, 1]) == pytest.approx(20.0, abs=0.5)


def test_ppc_of_continuous_data_draws_50_predictive_densities_and_the_data(figures):
    import arviz_base as azb

    rng = np.random.default_rng(2)
    idata = azb.from_dict({"posterior_predictive": {"y": rng.normal(size=(CHAINS, DRAWS, 30))},
                           "observed_data": {"y": rng.normal(5.0, 1.0, size=30)}},
                          dims={"y": ["obs"]})
    plots.ppc_figure(idata, ["y"])
    (fig,) = figures
    ax = next(ax for ax in fig.axes if ax.get_visible())
    assert ax.get_title() == "y"
    (predictive,) = ax.collections
    assert len(predictive.get_segments()) == plots.PPC_SAMPLES
    (observed,) = ax.lines
    grid = observed.get_xdata()
    assert grid.min() < 5.0 < grid.max()  # the data's density, not a predictive one (near 0)


def test_forest_legend_when_the_first_row_has_no_analytic_interval():
    """The legend comes from the first drawn row, so a leading row without an analytic sd
    (an exact mean only) does not leave the figure without one (matplotlib would warn)."""
    import warnings

    from reports.plots import forest_figure

    def row(name, mu):
        quantiles = {f"{k}_{q}": 0.0 for k in ("analytic", "sampled")
                     for q in ("q05", "q50", "q95")}
        return {"name": name, "verdict": "pass", "analytic_mean": mu,
                "analytic_sd": None if mu is None else 1.0, **quantiles}

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert forest_figure([row("score", None), row("p", 0.5)]).startswith("data:image/png")
        assert forest_figure([row("score", None)]).startswith("data:image/png")
