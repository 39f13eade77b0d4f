"""A network fit's CPTs as pandas tables (``fit.cpt(node)``) and as pgmpy's TabularCPD.

The table's entries are the posterior means of ``posterior.json`` (recomputed here from the
Dirichlet formula), indexed by the parents' states; the pgmpy export builds a network that
passes ``check_model()`` and gives the same probabilities.
"""

import numpy as np
import pandas as pd
import pytest

from bayescheck import fit, load_spec


@pytest.fixture
def result(tmp_path):
    pd.DataFrame({"A": ["x", "y", "x", "y", "x"], "C": ["p", "p", "q", "q", "p"],
                  "B": ["u", "u", "v", "u", "v"]}).to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "spec.toml").write_text(
        'model = "bayesian_network"\n[data]\npath = "data.csv"\n[structure]\n'
        'edges = [["A", "B"], ["C", "B"]]\n[states]\nA = ["y", "x", "z"]\n')
    return fit(load_spec(tmp_path / "spec.toml"))


def test_cpt_is_a_table_indexed_by_the_parents_states(result):
    table = result.cpt("B")
    assert list(table.index.names) == ["A", "C"]
    assert list(table.index) == [(a, c) for a in ("y", "x", "z") for c in ("p", "q")]
    assert list(table.columns) == ["u", "v"] and table.columns.name == "B"
    # rows with A = x, C = p: B = u once, v once; Dirichlet(1, 1): (1 + 1) / (2 + 2)
    assert table.loc[("x", "p"), "u"] == pytest.approx(0.5, rel=1e-15)
    # A = y, C = q: one u -> (2/3, 1/3); A = z (declared, never seen): the prior mean
    np.testing.assert_allclose(table.loc[("y", "q")], [2 / 3, 1 / 3], rtol=1e-15)
    np.testing.assert_allclose(table.loc[("z", "q")], [0.5, 0.5], rtol=1e-15)
    np.testing.assert_allclose(table.to_numpy(),
                               result.posterior.parameters["cpts"]["B"]["mean"], rtol=0)
    root = result.cpt("A")
    assert list(root.index) == ["(root)"] and list(root.columns) == ["y", "x", "z"]
    with pytest.raises(KeyError, match="'D' is not a node"):
        result.cpt("D")


@pytest.mark.slow  # imports pgmpy: seconds
@pytest.mark.filterwarnings(  # pgmpy's current API only; its own imports' warning aside
    "error::FutureWarning", "error::DeprecationWarning",
    "ignore:`pgmpy.estimators.StructureScore` is deprecated:FutureWarning")
def test_the_pgmpy_export_is_a_valid_network_with_our_probabilities(result):
    pytest.importorskip("pgmpy")
    from pgmpy.inference import VariableElimination

    model = result.to_pgmpy()
    assert model.check_model()
    cpd = result.tabular_cpd("B")
    for a in ("y", "x", "z"):
        for c in ("p", "q"):
            for b in ("u", "v"):
                assert cpd.get_value(A=a, C=c, B=b) == result.cpt("B").loc[(a, c), b]
    # P(B = u | A = z) under pgmpy's inference: the C-weighted prior row, 0.5
    answer = VariableElimination(model).query(["B"], evidence={"A": "z"}, show_progress=False)
    assert answer.get_value(B="u") == pytest.approx(0.5, rel=1e-12)
    # and a changed table is seen by the comparison
    assert cpd.get_value(A="y", C="q", B="u") != pytest.approx(0.5)
