"""Which parameters the report's figures draw, and what each figure holds.

Synthetic draws, no sampling: element ``w[i]`` has mean ``10 i``, so a figure that drew the
wrong element's draws is caught by its values, not only by its labels. The figures are
kept as matplotlib figures (``plots.figure_uri`` replaced) and read through their artists.
"""

import numpy as np
import pytest
from bayescheck.reports import check_figures, plots
from bayescheck.reports.check_figures import MAX_CHAIN_PANELS, MAX_PAIR
from bayescheck.reports.posterior_views import draws, parameter_view, predictive_view

pytestmark = pytest.mark.slow  # draws matplotlib figures

CHAINS, DRAWS = 4, 200


def _tree(k: int, spread=None, diverging=None):
    """``w[i]`` ~ N(10 i, 1); chain c shifted by ``(c - 1.5) spread[i]`` (chains that disagree,
    a high r_hat, the same overall mean)."""
    import arviz_base as azb

    rng = np.random.default_rng(0)
    w = 10.0 * np.arange(k) + rng.normal(size=(CHAINS, DRAWS, k))
    if spread is not None:
        w += (np.arange(CHAINS) - 1.5)[:, None, None] * np.asarray(spread)[None, None, :]
    flags = np.zeros((CHAINS, DRAWS), bool) if diverging is None else diverging
    return azb.from_dict({"posterior": {"w": w},
                          "sample_stats": {"energy": rng.normal(size=(CHAINS, DRAWS)),
                                           "diverging": flags}},
                         dims={"w": ["w_dim_0"]})


def _names(order):
    return [{"name": f"w[{i}]", "var": "w", "coords": {"w_dim_0": i}} for i in order]


def _index(name: str) -> int:
    return int(name.removeprefix("w[").removesuffix("]"))


@pytest.fixture
def figures(monkeypatch):
    """The matplotlib figures drawn, kept instead of encoded."""
    kept = []
    monkeypatch.setattr(plots, "figure_uri", lambda fig, dpi=80: kept.append(fig) or "data:,")
    yield kept
    for fig in kept:
        plots.pyplot().close(fig)


def _panels(fig):
    """The axes that hold something (arviz_plots turns the empty cells of a grid off)."""
    return [ax for ax in fig.axes if ax.axison]


# ------------------------------------------------------------------ which parameters are drawn


def _record(monkeypatch):
    """Replace the chain figures by recorders of each drawn view's parameters and means."""
    seen = {}

    def recorder(kind):
        def draw(view, *_):
            seen[kind] = {name: float(view["posterior"][name].mean())
                          for name in view["posterior"].data_vars}
            return "data:,"
        return draw

    for kind in ("rank", "trace", "pair", "energy"):
        monkeypatch.setattr(plots, f"{kind}_figure", recorder(kind))
    return seen


def test_chain_figures_show_the_worst_parameters_and_say_so(monkeypatch):
    order = [5, 2, 7, 0, 3, 6, 1, 4]  # worst first, as in the cross-check table
    spread = np.zeros(8)
    spread[[3, 6, 0, 1]] = [2.0, 1.5, 1.0, 0.6]  # chains mix worst for w[3], then w[6], ...
    seen = _record(monkeypatch)
    drawn = check_figures._health_figures(_tree(8, spread), _names(order), len(order))
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
    from bayescheck.reports.check_figures import MAX_ROWS

    k = MAX_ROWS + 5
    spread = np.zeros(k)
    spread[k - 1] = 3.0
    seen = _record(monkeypatch)
    titles = [f["title"] for f in check_figures._health_figures(_tree(k, spread),
                                                                _names(range(k)), k)]
    assert "Rank plots" in titles and "Traces" in titles
    assert list(seen["rank"])[0] == list(seen["trace"])[0] == f"w[{k - 1}]"
    assert len(seen["rank"]) == MAX_CHAIN_PANELS


def test_small_models_show_every_parameter(monkeypatch):
    _record(monkeypatch)
    captions = {f["title"]: f["caption"]
                for f in check_figures._health_figures(_tree(2), _names([1, 0]), 2)}
    assert "for both parameters" in captions["Rank plots"]
    assert "worst" not in captions["Rank plots"] + captions["Traces"] + captions["Pair plot"]


def test_a_figure_that_fails_says_why_and_the_others_stand(monkeypatch):
    seen = _record(monkeypatch)

    def broken(view):
        raise RuntimeError("no ink")

    monkeypatch.setattr(plots, "trace_figure", broken)
    drawn = {f["title"]: f for f in check_figures._health_figures(_tree(3), _names(range(3)),
                                                                  3)}
    assert drawn["Traces"]["uri"] is None
    assert drawn["Traces"]["error"] == "not drawn: RuntimeError: no ink"
    assert drawn["Rank plots"]["uri"] == "data:," and "rank" in seen


def test_views_hold_one_variable_per_parameter_in_order_and_thin_evenly():
    tree = _tree(4)
    view = parameter_view(tree, _names([2, 0]))
    assert list(view["posterior"].data_vars) == ["w[2]", "w[0]"]
    np.testing.assert_array_equal(view["posterior"]["w[2]"].values,
                                  tree["posterior"]["w"].values[..., 2])
    assert set(view["sample_stats"].data_vars) == {"diverging", "energy"}
    thin = parameter_view(tree, _names([1]), max_draws=100)  # 800 draws: every 8th
    assert thin["posterior"].sizes["draw"] == DRAWS // 8
    np.testing.assert_array_equal(thin["posterior"]["w[1]"].values,
                                  tree["posterior"]["w"].values[:, ::8, 1])
    assert thin["sample_stats"].sizes["draw"] == DRAWS // 8
    assert draws(tree, _names([3]))["w[3]"].shape == (CHAINS, DRAWS)
    # a name with a slash (a data column "a/b"; a DataTree refuses "/" in a variable's name)
    named = parameter_view(tree, [{**_names([1])[0], "name": "w[a/b]"}])
    (name,) = named["posterior"].data_vars
    assert name == "w[a\u2215b]" and float(named["posterior"][name].mean()) == \
        pytest.approx(10.0, abs=0.5)


# ------------------------------------------------------------------------ what figures hold


def test_rank_figure_has_one_panel_per_parameter_with_the_tests_p_value(figures):
    tree = _tree(2)
    shifted = tree["posterior"]["w"].values.copy()
    shifted[0, :, 1] += 1.0  # one chain of w[1] sits apart: its ranks are not uniform
    tree["posterior"]["w"] = tree["posterior"]["w"].copy(data=shifted)
    plots.rank_figure(parameter_view(tree, _names([0, 1])), max_draws=100)
    (fig,) = figures
    panels = _panels(fig)
    assert [ax.get_title() for ax in panels] == ["w[0]", "w[1]"]
    p_values = []
    for ax in panels:
        assert len(ax.get_lines()) == CHAINS  # one Δ-ECDF per chain
        for line in ax.get_lines():
            x = np.asarray(line.get_xdata())
            assert x.min() >= 0 and x.max() == pytest.approx(1.0, abs=0.02)
        (text,) = ax.texts
        p_values.append(float(text.get_text().split("=")[1].split("(")[0]))
    assert p_values[0] > 1e-3 and p_values[1] < 1e-3, p_values


def test_marginal_panels_hold_each_parameters_draws_and_density(figures):
    from scipy import stats

    curves = []
    for i in range(3):
        grid = np.linspace(10 * i - 4, 10 * i + 4, 300)
        curves.append({**_names([i])[0], "verdict": "pass", "grid": grid,
                       "pdf": stats.norm(10 * i, 1).pdf(grid), "prior": None})
    curves = curves[::-1]  # worst first: any order
    plots.curves_figure(parameter_view(_tree(3), curves), curves)
    (fig,) = figures
    panels = _panels(fig)
    assert [ax.get_title() for ax in panels] == [f"w[{i}]  (pass)" for i in (2, 1, 0)]
    for ax, i in zip(panels, (2, 1, 0), strict=True):
        exact = next(line for line in ax.get_lines() if line.get_label() == "exact posterior")
        assert float(exact.get_xdata()[np.argmax(exact.get_ydata())]) == \
            pytest.approx(10 * i, abs=0.05)
        histogram = [line for line in ax.get_lines() if line is not exact
                     and len(line.get_xdata()) > 10]  # the draws' step histogram
        assert histogram, "no histogram of the draws"
        x, y = (np.asarray(v, dtype=float) for v in (histogram[0].get_xdata(),
                                                      histogram[0].get_ydata()))
        assert float(np.average(x, weights=y)) == pytest.approx(10 * i, abs=0.3)


def test_trace_figure_has_one_row_per_parameter(figures):
    flags = np.zeros((CHAINS, DRAWS), bool)
    flags[1, [10, 20]] = True
    tree = _tree(3, diverging=flags)
    plots.trace_figure(parameter_view(tree, _names(range(3))))
    (fig,) = figures
    panels = _panels(fig)
    densities, traces = panels[0::2], panels[1::2]
    assert [ax.get_xlabel() for ax in densities] == ["w[0]", "w[1]", "w[2]"]
    assert [ax.get_ylabel() for ax in traces] == ["w[0]", "w[1]", "w[2]"]
    w = tree["posterior"]["w"].values
    for i, (density, trace) in enumerate(zip(densities, traces, strict=True)):
        chains = trace.get_lines()
        assert sorted(float(np.mean(line.get_ydata())) for line in chains) == \
            pytest.approx(sorted(w[..., i].mean(axis=1)))
        assert all(len(line.get_xdata()) == DRAWS for line in chains)
        ticks = [c for c in trace.collections if len(c.get_offsets()) == 2]
        assert ticks and sorted(ticks[0].get_offsets()[:, 0]) == [10, 20]  # divergent draws
        for line in density.get_lines():  # each chain's density near its mean
            x, y = line.get_xdata(), line.get_ydata()
            assert float(x[np.argmax(y)]) == pytest.approx(10 * i, abs=1.0)


def test_energy_figure_shows_each_chains_bfmi(figures):
    import arviz_base as azb

    rng = np.random.default_rng(6)
    energy = rng.normal(size=(CHAINS, DRAWS))
    energy[2] = np.cumsum(rng.normal(scale=0.1, size=DRAWS))  # slow: E-BFMI far below 0.3
    tree = azb.from_dict({"posterior": {"w": rng.normal(size=(CHAINS, DRAWS))},
                          "sample_stats": {"energy": energy}})
    plots.energy_figure(tree)
    (fig,) = figures
    bfmi_ax = next(ax for ax in fig.axes if ax.get_title() == "BFMI")
    (points,) = bfmi_ax.collections
    xy = np.asarray(points.get_offsets())
    bfmi = xy[np.argsort(xy[:, 1]), 0]  # one point per chain, at (E-BFMI, chain)
    # Betancourt's E-BFMI: squared energy transitions over squared deviations, summed
    deviations = energy - energy.mean(axis=1, keepdims=True)
    expected = np.sum(np.diff(energy, axis=1) ** 2, axis=1) / np.sum(deviations**2, axis=1)
    np.testing.assert_allclose(bfmi, expected, rtol=1e-6)
    assert bfmi[2] < plots.BFMI_THRESHOLD < bfmi[[0, 1, 3]].min()


def test_pair_figure_draws_the_lower_triangle_on_thinned_draws(figures):
    plots.pair_figure(parameter_view(_tree(3), _names(range(3)), max_draws=100))
    (fig,) = figures
    scatters = [ax for ax in _panels(fig) if ax.collections]
    assert len(scatters) == 3  # below the diagonal only
    corner = next(ax for ax in scatters
                  if ax.get_xlabel() == "w[0]" and ax.get_ylabel() == "w[2]")
    xy = np.concatenate([c.get_offsets() for c in corner.collections])
    assert len(xy) == 100
    assert np.mean(xy[:, 0]) == pytest.approx(0.0, abs=0.5)
    assert np.mean(xy[:, 1]) == pytest.approx(20.0, abs=0.5)


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


def test_ppc_of_continuous_data_draws_50_predictive_densities_and_the_data(figures):
    import arviz_base as azb

    rng = np.random.default_rng(2)
    tree = azb.from_dict({"posterior_predictive": {"y": rng.normal(size=(CHAINS, DRAWS, 30))},
                          "observed_data": {"y": rng.normal(5.0, 1.0, size=30)}},
                         dims={"y": ["obs"]})
    view, discrete, continuous = predictive_view(tree)
    assert (discrete, continuous) == ([], ["y"])
    plots.ppc_figure(view, continuous, False)
    (fig,) = figures
    (ax,) = _panels(fig)
    assert ax.get_title() == "y"
    lines = ax.get_lines()
    assert len(lines) == plots.PPC_SAMPLES + 1
    centres = sorted(float(line.get_xdata()[np.argmax(line.get_ydata())]) for line in lines)
    assert centres[-1] == pytest.approx(5.0, abs=1.0)  # the data's density, apart from ~0
    assert centres[-2] < 2.5


def test_ppc_draws_each_gaussian_feature_in_its_own_panel(figures):
    view, discrete, continuous = predictive_view(_class_and_features(np.random.default_rng(3)))
    assert discrete == ["y"]
    assert continuous == ["x_gaussian[radius]", "x_gaussian[texture]"]
    np.testing.assert_array_equal(view["observed_data"]["x_gaussian[texture]"].values,
                                  _class_and_features(np.random.default_rng(3))
                                  ["observed_data"]["x_gaussian"].values[:, 1])
    plots.ppc_figure(view, continuous, False)
    (fig,) = figures
    panels = _panels(fig)
    assert [ax.get_title() for ax in panels] == continuous
    # the observed data's density (the widest-spread line is not a predictive N(0, 1) one)
    spans = [max(np.ptp(line.get_xdata()) for line in ax.get_lines()) for ax in panels]
    assert spans[1] > 5 * spans[0]


def test_report_draws_the_class_label_as_a_rootogram_apart_from_the_features(monkeypatch):
    tree = _class_and_features(np.random.default_rng(4))
    calls = []
    monkeypatch.setattr(plots, "ppc_figure",
                        lambda view, names, discrete: calls.append((names, discrete)) or "x")
    figures, note = check_figures._ppc({}, tree)
    assert note is None
    assert calls == [(["y"], True), (["x_gaussian[radius]", "x_gaussian[texture]"], False)]
    assert "Rootogram" in figures[0]["caption"] and "Densities" in figures[1]["caption"]


def test_rootogram_draws_the_observed_counts(figures):
    tree = _class_and_features(np.random.default_rng(6))
    view, discrete, _ = predictive_view(tree)
    plots.ppc_figure(view, discrete, True)
    (fig,) = figures
    (ax,) = _panels(fig)
    assert ax.get_title() == "y"
    values, counts = np.unique(tree["observed_data"]["y"].values, return_counts=True)
    offsets = [np.asarray(c.get_offsets()) for c in ax.collections]
    # on a square-root scale of frequency: some marker set sits at the observed counts
    assert any(len(xy) == len(values) and np.allclose(xy[:, 0], values)
               and np.allclose(xy[:, 1], counts) for xy in offsets), offsets


def test_no_predictive_draws_says_why():
    figures, note = check_figures._ppc({"predictive": {"skipped": "no observed variable"}},
                                       _tree(2))
    assert figures == [] and note == "no observed variable"


# ------------------------------------------------------------- figures of the check's numbers


def test_forest_legend_when_the_first_row_has_no_analytic_interval():
    """The legend comes from the drawn rows, so a leading row without an analytic sd
    (an exact mean only) does not leave the figure without one (matplotlib would warn)."""
    import warnings

    def row(name, mu):
        quantiles = {f"{k}_{q}": 0.0 for k in ("analytic", "sampled")
                     for q in ("q05", "q50", "q95")}
        return {"name": name, "verdict": "pass", "analytic_mean": mu,
                "analytic_sd": None if mu is None else 1.0, **quantiles}

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plots.forest_figure([row("score", None), row("p", 0.5)]).startswith(
            "data:image/png;base64,")
        assert plots.forest_figure([row("score", None)]).startswith("data:image/png;base64,")


def test_forest_rows_carry_their_names_and_intervals(figures):
    """Each row's name is its y tick label; its analytic and sampled intervals are drawn at
    its row, in analytic sds from the analytic mean."""
    rows = [{"name": n, "verdict": "pass", "analytic_mean": mu, "analytic_sd": 2.0,
             "analytic_q05": mu - 3.3, "analytic_q50": mu, "analytic_q95": mu + 3.3,
             "sampled_q05": mu - 3.0, "sampled_q50": mu + 1.0, "sampled_q95": mu + 3.6}
            for n, mu in (("a", 0.0), ("b", 10.0))]
    plots.forest_figure(rows)
    (fig,) = figures
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a (pass)", "b (pass)"]
    assert list(ax.get_yticks()) == [1.0, 0.0]
    bars = {c.get_label(): c for c in ax.collections}
    segments = {k: np.asarray(v.get_segments()) for k, v in bars.items()}
    np.testing.assert_allclose(segments["analytic"][:, :, 0], [[-1.65, 1.65]] * 2)
    np.testing.assert_allclose(segments["NUTS"][:, :, 0], [[-1.5, 1.8]] * 2)
    np.testing.assert_allclose(segments["NUTS"][:, 0, 1], [1 - 0.12, 0 - 0.12])
    medians = next(line for line in ax.get_lines() if line.get_color() == plots.SAMPLED)
    np.testing.assert_allclose(medians.get_xdata(), [0.5, 0.5])


def test_estimates_figure_is_in_posterior_sds(figures):
    """A covariance near 0.01 and a mean near 5 share one axis: each row in its own sds."""
    rng = np.random.default_rng(3)
    sampled = {"cov": rng.normal(0.01, 0.002, (CHAINS, DRAWS)),
               "mean": rng.normal(5.0, 0.1, (CHAINS, DRAWS))}

    def row(name, estimate, verdict="pass"):
        x = sampled[name].ravel()
        lo, hi = np.quantile(x, [0.005, 0.995])
        return {"name": name, "verdict": verdict, "estimate": estimate,
                "distance_sd": (estimate - x.mean()) / x.std(ddof=1), "lower": lo, "upper": hi}

    rows = [row("cov", 0.01 + 3 * 0.002, "fail"), row("mean", 5.0 - 0.1)]
    plots.estimates_figure(rows, sampled)
    (fig,) = figures
    (ax,) = fig.axes
    crosses = {}
    for line in ax.get_lines():
        if line.get_marker() == "x":
            crosses[line.get_color()] = (line.get_xdata()[0], line.get_ydata()[0])
    fail_x, fail_y = crosses[plots.ANALYTIC]  # the failing row, red, at the top
    pass_x, pass_y = crosses["#111111"]
    assert fail_x == pytest.approx(3.0, abs=0.2) and pass_x == pytest.approx(-1.0, abs=0.2)
    assert fail_y == 1.0 and pass_y == 0.0
    assert [t.get_text() for t in ax.get_yticklabels()] == ["cov (fail)", "mean (pass)"]
    assert "posterior sd" in ax.get_xlabel()


def test_mixture_figure_plots_the_pair_that_separates_the_components():
    """Components apart only in features 2 and 3 (and 3 more than 2): that pair, not the first
    two features."""
    from bayescheck.reports.fit_plots import separating_pair

    means = np.array([[0.0, 0.0, 0.0, 0.0], [0.1, 0.0, 4.0, 8.0], [0.0, 0.1, 8.0, 0.0]])
    covs = np.broadcast_to(np.eye(4), (3, 4, 4))
    assert separating_pair(np.full(3, 1 / 3), means, covs) == (2, 3)
    # the same means with the features reversed: the pair follows them
    assert separating_pair(np.full(3, 1 / 3), means[:, ::-1], covs) == (0, 1)
    assert separating_pair(np.ones(2) / 2, means[:2, :2], covs[:2, :2, :2]) == (0, 1)


def test_worst_mixing_takes_the_checks_r_hat_and_ess_from_its_rows():
    """The rows of report.json carry arviz_stats' r_hat and bulk ESS of the same draws: the
    order from them is the order computed from the draws; rows that say otherwise win."""
    from arviz_stats.base import array_stats

    spread = np.zeros(6)
    spread[[4, 1, 3]] = [2.0, 1.0, 0.5]
    tree = _tree(6, spread)
    names = _names(range(6))
    rows = [{"name": n, "r_hat": float(array_stats.rhat(x)),
             "ess_bulk": float(array_stats.ess(x, method="bulk"))}
            for n, x in draws(tree, names).items()]
    computed = [n["name"] for n in check_figures.worst_mixing(tree, names)]
    assert computed[:3] == ["w[4]", "w[1]", "w[3]"]
    assert [n["name"] for n in check_figures.worst_mixing(tree, names, rows)] == computed
    rows[0]["r_hat"] = 9.0  # a row that says w[0] mixes worst is believed
    assert check_figures.worst_mixing(tree, names, rows)[0]["name"] == "w[0]"
