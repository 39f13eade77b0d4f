"""Which parameters the report's chain figures draw, and what each figure holds.

Synthetic draws, no sampling: element ``w[i]`` has mean ``10 i``, so a figure that drew the
wrong element's draws is caught by its values, not only by its labels.
"""

import numpy as np
import pytest
from bayescheck.reports import plots, report
from bayescheck.reports.figure_jobs import draw_all
from bayescheck.reports.posterior_arrays import Posterior
from bayescheck.reports.report import MAX_CHAIN_PANELS, MAX_PAIR

pytestmark = pytest.mark.slow  # draws matplotlib figures

CHAINS, DRAWS = 4, 200


def _posterior(k: int, spread=None):
    """``w[i]`` ~ N(10 i, 1); chain c shifted by ``(c - 1.5) spread[i]`` (chains that disagree,
    a high r_hat, the same overall mean)."""
    import arviz_base as azb

    rng = np.random.default_rng(0)
    w = 10.0 * np.arange(k) + rng.normal(size=(CHAINS, DRAWS, k))
    if spread is not None:
        w += (np.arange(CHAINS) - 1.5)[:, None, None] * np.asarray(spread)[None, None, :]
    return Posterior.of_tree(azb.from_dict(
        {"posterior": {"w": w},
         "sample_stats": {"energy": rng.normal(size=(CHAINS, DRAWS)),
                          "diverging": np.zeros((CHAINS, DRAWS), bool)}},
        dims={"w": ["w_dim_0"]}))


def _ppc_variables(idata, names):
    """The PPC figure's input, as the report builds it from a sampled posterior."""
    variables = report._ppc_variables(Posterior.of_tree(idata))
    return [variables[n] for n in names]


def _names(order):
    return [{"name": f"w[{i}]", "var": "w", "coords": {"w_dim_0": i}} for i in order]


def _index(name: str) -> int:
    return int(name.removeprefix("w[").removesuffix("]"))


@pytest.fixture
def figures(monkeypatch):
    """Figures drawn, kept instead of encoded: matplotlib figures handed to ``figure_uri``
    and the SVG drawings of :class:`bayescheck.reports.panels.PanelGrid` (``.panels``, ``.items``)."""
    import matplotlib.pyplot as plt
    from bayescheck.reports.panels import PanelGrid

    kept = []
    monkeypatch.setattr(plots, "figure_uri",
                        lambda fig, dpi=80, *, crop=True: kept.append(fig) or "data:,")
    monkeypatch.setattr(PanelGrid, "uri",
                        lambda self, dpi=80: kept.append(self.drawing(dpi)) or "data:,")
    yield kept
    for fig in kept:
        if not hasattr(fig, "panels"):
            plt.close(fig)


def _health(*args):
    """The health figures, drawn in this process (the recorders below see every call)."""
    return draw_all(report._health_figures(*args), processes=1)


def test_chain_figures_show_the_worst_parameters_and_say_so(monkeypatch):
    order = [5, 2, 7, 0, 3, 6, 1, 4]  # worst first, as in the cross-check table
    spread = np.zeros(8)
    spread[[3, 6, 0, 1]] = [2.0, 1.5, 1.0, 0.6]  # chains mix worst for w[3], then w[6], ...
    seen = {}

    def recorder(kind):
        def draw(draws, *_):
            seen[kind] = {name: float(np.mean(x)) for name, x in draws.items()}
            return "data:,"
        return draw

    for kind in ("rank", "trace", "pair"):
        monkeypatch.setattr(plots, f"{kind}_figure", recorder(kind))
    monkeypatch.setattr(plots, "energy_figure", lambda energy: "data:,")
    drawn = _health({}, _posterior(8, spread), _names(order), len(order))
    captions = {f["title"]: f["caption"] for f in drawn}
    mixing = [f"w[{i}]" for i in (3, 6, 0, 1)]
    assert list(seen["rank"]) == mixing[:MAX_CHAIN_PANELS]
    assert list(seen["trace"]) == mixing[:MAX_CHAIN_PANELS]
    assert list(seen["pair"]) == [f"w[{i}]" for i in order][:MAX_PAIR]
    for kind in ("rank", "trace", "pair"):
        for name, mean in seen[kind].items():
            assert mean == pytest.approx(10 * _index(name), abs=0.5), (kind, name)
    assert f"the {MAX_CHAIN_PANELS} of 8 parameters whose chains mix worst" \
        in captions["Rank plots"]
    assert f"the {MAX_CHAIN_PANELS} of 8 parameters whose chains mix worst" in captions["Traces"]
    assert f"the {MAX_PAIR} worst of 8 parameters" in captions["Pair plot"]


def test_large_models_still_get_rank_and_trace_plots(monkeypatch):
    """Beyond MAX_ROWS parameters (the mixture on iris has 45) the chain figures stay."""
    from bayescheck.reports.report import MAX_ROWS

    k = MAX_ROWS + 5
    spread = np.zeros(k)
    spread[k - 1] = 3.0
    seen = {}
    monkeypatch.setattr(plots, "rank_figure", lambda d: seen.setdefault("rank", list(d)))
    monkeypatch.setattr(plots, "trace_figure", lambda d, *_: seen.setdefault("trace", list(d)))
    monkeypatch.setattr(plots, "pair_figure", lambda d: "data:,")
    monkeypatch.setattr(plots, "energy_figure", lambda energy: "data:,")
    titles = [f["title"] for f in _health({}, _posterior(k, spread),
                                                         _names(range(k)), k)]
    assert "Rank plots" in titles and "Traces" in titles
    assert seen["rank"][0] == seen["trace"][0] == f"w[{k - 1}]"
    assert len(seen["rank"]) == MAX_CHAIN_PANELS


def test_small_models_show_every_parameter(monkeypatch):
    monkeypatch.setattr(plots, "energy_figure", lambda energy: "data:,")
    for name in ("rank_figure", "trace_figure", "pair_figure"):
        monkeypatch.setattr(plots, name, lambda *_: "data:,")
    captions = {f["title"]: f["caption"]
                for f in _health({}, _posterior(2), _names([1, 0]), 2)}
    assert "for both parameters" in captions["Rank plots"]
    assert "worst" not in captions["Rank plots"] + captions["Traces"] + captions["Pair plot"]


def _draws(k: int) -> dict:
    rng = np.random.default_rng(1)
    return {f"w[{i}]": rng.normal(10.0 * i, 1.0, size=(CHAINS, DRAWS)) for i in range(k)}


def _items(panel, kind):
    return [item for item in panel.items if item[0] == kind]


def test_rank_figure_has_one_panel_per_parameter(figures):
    plots.rank_figure(_draws(3))
    (fig,) = figures
    assert [p.title for p in fig.panels] == ["w\n[0]", "w\n[1]", "w\n[2]"]
    for panel in fig.panels:  # one Δ-ECDF per chain, and the test's p-value
        steps = _items(panel, "line")
        assert [style["color"] for *_, style in steps] == \
            [plots._chain_colour(c) for c in range(CHAINS)]
        for _, x, y, _ in steps:  # the ECDF of fractional ranks minus the uniform CDF
            assert x.min() >= 0 and x.max() == pytest.approx(1.0) and np.abs(y).max() < 0.5
        assert panel.note.startswith("p = ")
        assert panel.ylim[0] < 0 < panel.ylim[1]


def test_marginal_panels_hold_each_parameters_draws_and_density(figures):
    from scipy import stats

    draws = _draws(3)
    curves = []
    for i, name in enumerate(draws):
        grid = np.linspace(10 * i - 4, 10 * i + 4, 300)
        curves.append({"name": name, "verdict": "pass", "grid": grid,
                       "pdf": stats.norm(10 * i, 1).pdf(grid), "prior": None})
    plots.curves_figure(curves[::-1], draws)  # worst first: any order
    (fig,) = figures
    assert [p.title for p in fig.panels] == [f"w[{i}]  (pass)" for i in (2, 1, 0)]
    for panel, i in zip(fig.panels, (2, 1, 0), strict=True):
        (_, edges, heights, _), = _items(panel, "fill")
        mids = 0.5 * (edges[1:-1:2] + edges[2::2])  # the step outline's bin centres
        assert float(np.average(mids, weights=heights[1:-1:2])) == \
            pytest.approx(10 * i, abs=0.3)
        (_, grid, pdf, _), = _items(panel, "line")
        assert float(grid[np.argmax(pdf)]) == pytest.approx(10 * i, abs=0.05)
        assert panel.xlim == (10 * i - 4, 10 * i + 4)


def test_rank_deviations_flag_chains_that_disagree():
    """Mixed chains: Δ-ECDF near 0 and a large p; one shifted chain: a tiny p, flagged points."""
    rng = np.random.default_rng(5)
    mixed = plots.rank_deviations(rng.normal(size=(CHAINS, 300)))
    assert mixed["p_value"] > 1e-3  # uniform ranks: p is uniform too, so not tiny
    assert mixed["suspicious"].any() == (mixed["p_value"] < plots.RANK_ALPHA)
    assert np.abs(mixed["y"]).max() < 0.15
    assert mixed["x"].shape == mixed["y"].shape == (CHAINS, 300)
    shifted = rng.normal(size=(CHAINS, 300))
    shifted[0] += 1.0
    bad = plots.rank_deviations(shifted)
    assert bad["p_value"] < 1e-6 and bad["suspicious"].any()
    assert np.abs(bad["y"][0]).max() > 0.3  # the shifted chain's ranks are far from uniform


def test_trace_figure_has_one_row_per_parameter(figures):
    draws = _draws(3)
    flags = np.zeros((CHAINS, DRAWS), bool)
    flags[1, [10, 20]] = True
    plots.trace_figure(draws, flags)
    (fig,) = figures
    densities, traces = fig.panels[0::2], fig.panels[1::2]
    assert [p.title for p in densities] == ["w\n[0]", "w\n[1]", "w\n[2]"]
    for density, trace, x in zip(densities, traces, draws.values(), strict=True):
        chains = _items(trace, "line")
        assert [float(np.mean(y)) for _, _, y, _ in chains] == \
            pytest.approx(list(x.mean(axis=1)))
        assert all(list(steps) == list(range(DRAWS)) for _, steps, _, _ in chains)
        (divergent,) = _items(trace, "markers")
        assert list(divergent[1]) == [10, 20]
        for _, grid, pdf, _ in _items(density, "line"):  # each chain's density near its mean
            assert float(grid[np.argmax(pdf)]) == pytest.approx(float(x.mean()), abs=1.0)


def test_energy_figure_shows_each_chains_bfmi(figures):
    rng = np.random.default_rng(6)
    energy = rng.normal(size=(CHAINS, DRAWS))
    energy[2] = np.cumsum(rng.normal(scale=0.1, size=DRAWS))  # slow: E-BFMI far below 0.3
    plots.energy_figure(energy)
    (fig,) = figures
    chains = _items(fig.panels[0], "markers")  # one marker per chain, at (E-BFMI, chain)
    assert [float(y[0]) for _, _, y, _ in chains] == [0.0, 1.0, 2.0, 3.0]
    bfmi = np.array([float(x[0]) for _, x, _, _ in chains])
    expected = np.mean(np.diff(energy, axis=1) ** 2, axis=1) / np.var(energy, axis=1)
    assert list(bfmi) == pytest.approx(list(expected))
    assert bfmi[2] < plots.BFMI_THRESHOLD < bfmi[[0, 1, 3]].min()


def test_pair_figure_draws_the_lower_triangle_on_thinned_draws(figures):
    draws = _draws(3)
    plots.pair_figure(draws, max_points=100)
    (fig,) = figures
    assert len(fig.panels) == 6  # 3 histograms and 3 scatters, no upper triangle
    scatters = [p for p in fig.panels if _items(p, "markers")]
    assert len(scatters) == 3
    corner = next(p for p in scatters if p.ylabel == "w\n[2]" and p.xlabel == "w\n[0]")
    ((_, x, y, _),) = _items(corner, "markers")
    assert len(x) == len(y) == 100
    assert np.mean(x) == pytest.approx(0.0, abs=0.5)
    assert np.mean(y) == pytest.approx(20.0, abs=0.5)
    # panels in (row, column) order: a column shares its x range, a row its y range
    assert corner is fig.panels[3]
    assert corner.xlim == fig.panels[0].xlim and corner.ylim == fig.panels[5].xlim
    assert fig.panels[0].xlim[0] < -2 and fig.panels[5].xlim[1] > 22
    # tick labels on the outer panels only: the left column's scatters, the bottom row
    assert sum(p.yticks for p in fig.panels) == 2 and sum(p.xticks for p in fig.panels) == 3


def test_ppc_of_continuous_data_draws_50_predictive_densities_and_the_data(figures):
    import arviz_base as azb

    rng = np.random.default_rng(2)
    idata = azb.from_dict({"posterior_predictive": {"y": rng.normal(size=(CHAINS, DRAWS, 30))},
                           "observed_data": {"y": rng.normal(5.0, 1.0, size=30)}},
                          dims={"y": ["obs"]})
    plots.ppc_figure(_ppc_variables(idata, ["y"]))
    (fig,) = figures
    (panel,) = fig.panels
    assert panel.title == "y"
    lines = _items(panel, "line")
    predictive = [line for line in lines if line[3]["lw"] == 1.0]
    (observed,) = [line for line in lines if line[3]["lw"] != 1.0]
    assert len(predictive) == plots.PPC_SAMPLES
    grid = observed[1]
    assert grid.min() < 5.0 < grid.max()  # the data's density, not a predictive one (near 0)


def test_forest_legend_when_the_first_row_has_no_analytic_interval():
    """The legend comes from the first drawn row, so a leading row without an analytic sd
    (an exact mean only) does not leave the figure without one (matplotlib would warn)."""
    import warnings

    from bayescheck.reports.plots import forest_figure

    def row(name, mu):
        quantiles = {f"{k}_{q}": 0.0 for k in ("analytic", "sampled")
                     for q in ("q05", "q50", "q95")}
        return {"name": name, "verdict": "pass", "analytic_mean": mu,
                "analytic_sd": None if mu is None else 1.0, **quantiles}

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert forest_figure([row("score", None), row("p", 0.5)]).startswith("data:image/svg")
        assert forest_figure([row("score", None)]).startswith("data:image/svg")


def test_forest_rows_carry_their_names_and_intervals(figures):
    """Each row's name is its y tick label; its analytic and sampled intervals are drawn at
    its row, in analytic sds from the analytic mean."""
    rows = [{"name": n, "verdict": "pass", "analytic_mean": mu, "analytic_sd": 2.0,
             "analytic_q05": mu - 3.3, "analytic_q50": mu, "analytic_q95": mu + 3.3,
             "sampled_q05": mu - 3.0, "sampled_q50": mu + 1.0, "sampled_q95": mu + 3.6}
            for n, mu in (("a", 0.0), ("b", 10.0))]
    plots.forest_figure(rows)
    (fig,) = figures
    (panel,) = fig.panels
    assert panel.yticklabels == ("a (pass)", "b (pass)") and panel.yticks == (1.0, 0.0)
    lines = _items(panel, "line")
    analytic, sampled = (next(i for i in lines if i[3]["color"] == c)
                         for c in ("#d62728", "#08519c"))
    np.testing.assert_allclose(analytic[1][[0, 1, 3, 4]], [-1.65, 1.65, -1.65, 1.65])
    np.testing.assert_allclose(sampled[1][[0, 1, 3, 4]], [-1.5, 1.8, -1.5, 1.8])
    np.testing.assert_allclose(sampled[2][[0, 3]], [1 - 0.12, 0 - 0.12])
    medians = next(i for i in _items(panel, "markers") if i[3]["color"] == "#08519c")
    np.testing.assert_allclose(medians[1], [0.5, 0.5])
    assert "a (pass)" in fig.texts() and "b (pass)" in fig.texts()


def test_estimates_figure_is_in_posterior_sds(figures):
    """A covariance near 0.01 and a mean near 5 share one axis: each row in its own sds."""
    from types import SimpleNamespace

    rng = np.random.default_rng(3)
    draws = {"cov": rng.normal(0.01, 0.002, (CHAINS, DRAWS)),
             "mean": rng.normal(5.0, 0.1, (CHAINS, DRAWS))}

    def row(name, estimate, verdict="pass"):
        x = draws[name].ravel()
        lo, hi = np.quantile(x, [0.005, 0.995])
        return SimpleNamespace(name=name, verdict=verdict, estimate=estimate,
                               distance_sd=(estimate - x.mean()) / x.std(ddof=1),
                               sampled={"mean": x.mean(), "lower": lo, "upper": hi})

    rows = [row("cov", 0.01 + 3 * 0.002, "fail"), row("mean", 5.0 - 0.1)]
    plots.estimates_figure(SimpleNamespace(parameters=rows), draws)
    (fig,) = figures
    (panel,) = fig.panels
    crosses = {style["color"]: (x, y) for kind, x, y, style in _items(panel, "markers")
               if style.get("marker") == "x"}
    (fail_x,), (fail_y,) = crosses["#d62728"]  # the failing row, red, at the top
    (pass_x,), (pass_y,) = crosses["#111111"]
    assert fail_x == pytest.approx(3.0, abs=0.2) and pass_x == pytest.approx(-1.0, abs=0.2)
    assert fail_y == 1.0 and pass_y == 0.0
    assert panel.yticklabels == ("cov (fail)", "mean (pass)")
    assert "posterior sd" in panel.xlabel


def test_mixture_figure_plots_the_pair_that_separates_the_components():
    """Components apart only in features 2 and 3 (and 3 more than 2): that pair, not the first
    two features."""
    means = np.array([[0.0, 0.0, 0.0, 0.0], [0.1, 0.0, 4.0, 8.0], [0.0, 0.1, 8.0, 0.0]])
    covs = np.broadcast_to(np.eye(4), (3, 4, 4))
    assert plots.separating_pair(np.full(3, 1 / 3), means, covs) == (2, 3)
    # the same means with the features reversed: the pair follows them
    assert plots.separating_pair(np.full(3, 1 / 3), means[:, ::-1], covs) == (0, 1)
    assert plots.separating_pair(np.ones(2) / 2, means[:2, :2], covs[:2, :2, :2]) == (0, 1)


def _class_and_features(rng):
    import arviz_base as azb

    n = 40
    y = rng.integers(0, 2, size=n)
    x = np.column_stack([rng.normal(0.0, 1.0, n), rng.normal(100.0, 10.0, n)])
    return azb.from_dict(
        {"posterior_predictive": {"y": rng.integers(0, 2, size=(CHAINS, DRAWS, n)),
                                  "x_gaussian": rng.normal(size=(CHAINS, DRAWS, n, 2))},
         "observed_data": {"y": y, "x_gaussian": x}},
        dims={"y": ["row"], "x_gaussian": ["row", "gaussian_feature"]},
        coords={"gaussian_feature": ["radius", "texture"]})


def test_ppc_draws_each_gaussian_feature_in_its_own_panel(figures):
    idata = _class_and_features(np.random.default_rng(3))
    plots.ppc_figure(_ppc_variables(idata, ["x_gaussian"]))
    (fig,) = figures
    assert [p.title for p in fig.panels] == ["x_gaussian[radius]", "x_gaussian[texture]"]
    observed = [next(line for line in _items(p, "line") if line[3]["lw"] != 1.0)
                for p in fig.panels]
    centres = [float(np.average(x, weights=y)) for _, x, y, _ in observed]
    assert centres[0] == pytest.approx(0.0, abs=1.0)  # each panel holds its own column
    assert centres[1] == pytest.approx(100.0, abs=10.0)


def test_report_draws_the_class_label_as_a_rootogram_apart_from_the_features(monkeypatch):
    idata = _class_and_features(np.random.default_rng(4))
    calls = []
    monkeypatch.setattr(plots, "ppc_figure",
                        lambda variables: calls.append([v["name"] for v in variables]) or "x")
    figures, note = report._ppc({}, Posterior.of_tree(idata))
    figures = draw_all(figures, processes=1)
    assert note is None and calls == [["y"], ["x_gaussian"]]
    assert "Rootogram" in figures[0]["caption"] and "Densities" in figures[1]["caption"]
    assert plots.is_discrete(idata.observed_data["y"].values)
    assert not plots.is_discrete(idata.observed_data["x_gaussian"].values)


@pytest.mark.filterwarnings("ignore:Found chain dimension:UserWarning")  # arviz' own table
def test_rootogram_counts_match_arviz_stats_and_a_hand_count():
    import arviz_base as azb
    from arviz_stats.helper_stats import point_interval_unique, point_unique

    rng = np.random.default_rng(5)
    predicted = rng.integers(0, 3, size=(CHAINS, DRAWS, 14))
    observed = rng.integers(0, 3, size=14)
    idata = azb.from_dict({"posterior_predictive": {"y": predicted},
                           "observed_data": {"y": observed}}, dims={"y": ["row"]})
    c = plots.rootogram_counts(predicted, observed)
    ref = point_interval_unique(idata.posterior_predictive.ds, plots.ROOTOGRAM_PROB, "mean")
    np.testing.assert_array_equal(np.stack([c["values"], c["mean"], c["lower"], c["upper"]]),
                                  ref["y"].values)
    np.testing.assert_array_equal(np.stack([c["observed_values"], c["observed"]]),
                                  point_unique(idata.observed_data.ds)["y"].values)
    # by hand: two data sets of three rows
    small = plots.rootogram_counts(np.array([[[0, 1, 1], [1, 1, 1]]]), np.array([0, 0, 1]))
    assert list(small["values"]) == [0, 1] and list(small["mean"]) == [0.5, 2.5]
    assert list(small["observed"]) == [2, 1]
    # a wrong answer is caught: the counts of other data differ
    other = plots.rootogram_counts(predicted + 1, observed)
    assert not np.array_equal(other["values"], c["values"])


def test_rootogram_has_one_sqrt_panel_per_variable_with_the_observed_counts(figures):
    idata = _class_and_features(np.random.default_rng(6))
    plots.ppc_figure(_ppc_variables(idata, ["y"]))
    (fig,) = figures
    (panel,) = fig.panels
    assert panel.title == "y" and panel.ysqrt and panel.yticks
    observed = [i for i in _items(panel, "markers") if i[3]["color"] == "#111111"]
    (kind, x, y, _), = observed
    values, counts = np.unique(idata.observed_data["y"].values, return_counts=True)
    np.testing.assert_array_equal(x, values)
    np.testing.assert_allclose(y ** 2, counts)


def test_worst_mixing_takes_the_checks_r_hat_and_ess_from_its_rows():
    """The rows of report.json carry arviz_stats' r_hat and bulk ESS of the same draws: the
    order from them is the order computed from the draws; rows that say otherwise win."""
    from arviz_stats.base import array_stats

    spread = np.zeros(6)
    spread[[4, 1, 3]] = [2.0, 1.0, 0.5]
    post = _posterior(6, spread)
    names = _names(range(6))
    draws = report._draws(post, names)
    rows = [{"name": n, "r_hat": float(array_stats.rhat(x)),
             "ess_bulk": float(array_stats.ess(x, method="bulk"))} for n, x in draws.items()]
    computed = [n["name"] for n in report._worst_mixing(post, names)]
    assert computed[:3] == ["w[4]", "w[1]", "w[3]"]
    assert [n["name"] for n in report._worst_mixing(post, names, rows)] == computed
    rows[0]["r_hat"] = 9.0  # a row that says w[0] mixes worst is believed
    assert report._worst_mixing(post, names, rows)[0]["name"] == "w[0]"
