"""The DAG figures of bayesian_network and semi-naive Bayes reports: a layered layout whose
edges all point down, one figure per query with its target and evidence, SPODE / TAN
structures, none for AODE."""

from pathlib import Path

import pytest
from bayescheck.inference.families import fit
from bayescheck.models import load_spec
from bayescheck.reports.fit_figures import fit_figures
from bayescheck.reports.fit_plots import fit_figure, layered_layout

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_layers_are_longest_paths_and_every_edge_points_down():
    spec = load_spec(EXAMPLES / "bayesian_network" / "asia.toml")
    model = spec.model
    pos = layered_layout(model.nodes, model.edges)
    layers = {n: -y for n, (_, y) in pos.items()}
    assert layers == {"asia": 0, "smoke": 0, "tub": 1, "lung": 1, "bronc": 1, "either": 2,
                      "xray": 3, "dysp": 3}
    assert all(pos[a][1] > pos[b][1] for a, b in model.edges)
    # no two nodes share a place, and each layer is centred
    assert len(set(pos.values())) == len(pos)
    for d in set(layers.values()):
        assert sum(pos[n][0] for n in pos if layers[n] == d) == pytest.approx(0.0)
    # a child sits under its parents: lung under smoke rather than under asia
    assert abs(pos["lung"][0] - pos["smoke"][0]) <= abs(pos["lung"][0] - pos["asia"][0])
    with pytest.raises(ValueError, match="cycle"):
        layered_layout(["a", "b"], [("a", "b"), ("b", "a")])


def test_network_report_draws_the_dag_once_per_query():
    result = fit(load_spec(EXAMPLES / "bayesian_network" / "asia.toml"))
    figures = fit_figures(result)
    queries = result.posterior.parameters["query"]
    assert [f["kind"] for f in figures] == ["dag"] * min(3, len(queries))
    first = figures[0]
    assert first["targets"] == [queries[0]["target"]]
    assert first["evidence"] == list(queries[0]["evidence"])
    assert sorted(map(tuple, first["edges"])) == sorted(
        map(tuple, result.posterior.parameters["edges"])
    )
    drawn = fit_figure(first)
    assert drawn.startswith("data:image/png;base64,") and len(drawn) > 2000


@pytest.mark.parametrize("name, drawn", [("play_tennis_tan.toml", True),
                                         ("play_tennis_spode.toml", True),
                                         ("play_tennis_aode.toml", False)])
def test_semi_naive_structures_are_drawn_except_aode(name, drawn):
    result = fit(load_spec(EXAMPLES / "semi_naive_bayes" / name))
    figures = fit_figures(result)
    assert bool(figures) == drawn
    if drawn:
        (fig,) = figures
        assert fig["targets"] == ["play_tennis"]
        assert fig["edges"] == result.posterior.parameters["structure"]["edges"]
        assert len(fig["edges"]) == 4 + 3  # class -> 4 features, 3 extra parents
        assert fit_figure(fig).startswith("data:image/png;base64,")
