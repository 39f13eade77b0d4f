"""The ``[states]`` table: declared state spaces for the discrete models.

A declared column's states are those, in the declared order, whether the data hold each one
or not: an unseen state has its prior mass (the posterior means below are recomputed here from
the Dirichlet formula), ``predict`` accepts it, and a value outside the declared states is
refused naming file, row, column and value. An undeclared column keeps its sorted states read
from the data.
"""

import numpy as np
import pandas as pd
import pytest
from bayescheck.models.errors import DataError, SpecError

from bayescheck import fit, load_spec, predict

NETWORK = """model = "bayesian_network"
[data]
path = "data.csv"
[structure]
edges = [["A", "B"]]
[[query]]
name = "b"
target = "B"
evidence = {{ A = "z" }}
{states}"""


@pytest.fixture
def network_data(tmp_path):
    pd.DataFrame({"A": ["x", "y", "x", "y", "x"], "B": ["u", "u", "v", "u", "v"]}).to_csv(
        tmp_path / "data.csv", index=False)
    return tmp_path


def network_spec(folder, states):
    (folder / "spec.toml").write_text(NETWORK.format(states=states))
    return load_spec(folder / "spec.toml")


def test_a_declared_node_has_every_state_in_order_with_its_prior_mass(network_data):
    cpts = fit(network_spec(network_data, '[states]\nA = ["y", "x", "z"]\n')
               ).posterior.parameters["cpts"]
    assert cpts["A"]["states"] == ["y", "x", "z"]
    assert cpts["A"]["counts"] == [[2, 3, 0]]
    # Dirichlet(1, 1, 1) + counts (2, 3, 0): posterior mean (3, 4, 1) / 8
    np.testing.assert_allclose(cpts["A"]["mean"], [[3 / 8, 4 / 8, 1 / 8]], rtol=1e-15)
    assert cpts["B"]["rows"] == ["A=y", "A=x", "A=z"]
    # the row of the unseen parent state is the prior's mean
    np.testing.assert_allclose(cpts["B"]["mean"][2], [0.5, 0.5], rtol=1e-15)
    assert cpts["B"]["states"] == ["u", "v"]  # undeclared: sorted, from the data


def test_without_states_the_unseen_state_is_absent_and_the_query_refused(network_data):
    (network_data / "plain.toml").write_text(
        NETWORK.format(states="").replace('A = "z"', 'A = "x"'))
    cpts = fit(load_spec(network_data / "plain.toml")).posterior.parameters["cpts"]
    assert cpts["A"]["states"] == ["x", "y"]
    np.testing.assert_allclose(cpts["A"]["mean"], [[4 / 7, 3 / 7]], rtol=1e-15)
    with pytest.raises(SpecError, match="'z' never seen in the data nor declared"):
        fit(network_spec(network_data, ""))


def test_predict_accepts_a_declared_state_no_row_held(network_data):
    spec = network_spec(network_data, '[states]\nA = ["y", "x", "z"]\n')
    result = fit(spec)
    table = predict(spec, result, pd.DataFrame({"A": ["z", "x"]}), target="B")
    np.testing.assert_allclose(table[["p_B_u", "p_B_v"]].to_numpy(),
                               [[0.5, 0.5], [2 / 5, 3 / 5]], rtol=1e-12)
    (network_data / "plain.toml").write_text(
        NETWORK.format(states="").replace('A = "z"', 'A = "x"'))
    plain = load_spec(network_data / "plain.toml")
    assert plain.model.held_states is None
    with pytest.raises(DataError, match="'z'"):
        predict(plain, fit(plain), pd.DataFrame({"A": ["z"]}), target="B")


def test_a_value_outside_the_declared_states_is_refused_with_its_row(network_data):
    spec = network_spec(network_data, '[states]\nA = ["x", "z"]\n')
    with pytest.raises(DataError) as err:
        fit(spec)
    message = str(err.value)
    assert "data.csv" in message and "column 'A'" in message and "row 2" in message
    assert "'y'" in message and "[states] A" in message


def test_a_streamed_network_keeps_the_declared_states(network_data):
    """Batches (a glob) where the first lacks a declared state, the second another."""
    (network_data / "b").mkdir()
    pd.DataFrame({"A": ["x", "x"], "B": ["u", "v"]}).to_csv(network_data / "b" / "0.csv",
                                                             index=False)
    pd.DataFrame({"A": ["y", "y", "x"], "B": ["u", "u", "v"]}).to_csv(
        network_data / "b" / "1.csv", index=False)
    whole = fit(network_spec(network_data, '[states]\nA = ["y", "x", "z"]\n'))
    text = (network_data / "spec.toml").read_text().replace('"data.csv"', '"b/*.csv"')
    (network_data / "stream.toml").write_text(text)
    streamed = fit(load_spec(network_data / "stream.toml"))
    assert streamed.posterior.parameters["cpts"] == whole.posterior.parameters["cpts"]


@pytest.mark.parametrize("states, key, words", [
    ('[states]\nC = ["a"]\n', "states.C", "not a node"),
    ('[states]\nA = ["x", "x"]\n', "states.A", "appears twice"),
    ('[states]\nA = []\n', "states.A", "non-empty list"),
    ('[states]\nA = "x"\n', "states.A", "non-empty list"),
])
def test_bad_states_tables_are_refused_naming_the_key(network_data, states, key, words):
    with pytest.raises(SpecError, match=words) as err:
        network_spec(network_data, states)
    assert err.value.key == key


CLASSIFIER = """model = "{model}"
[data]
path = "data.csv"
target = "y"
{extra}[states]
y = ["b", "a", "c"]
f = ["w", "v", "u"]
"""


@pytest.fixture
def classifier_data(tmp_path):
    pd.DataFrame({"y": ["b", "a", "b", "a", "b", "a"], "f": ["u", "u", "v", "u", "v", "v"],
                  "g": ["p", "q", "p", "q", "p", "p"]}).to_csv(tmp_path / "data.csv",
                                                               index=False)
    return tmp_path


def classifier_spec(folder, model, extra=""):
    (folder / "spec.toml").write_text(CLASSIFIER.format(model=model, extra=extra))
    return load_spec(folder / "spec.toml")


def test_naive_bayes_declared_classes_and_categories(classifier_data):
    spec = classifier_spec(classifier_data, "naive_bayes")
    stats = fit(spec).posterior.parameters["statistics"]
    assert stats["classes"] == ["b", "a", "c"]
    assert stats["categories"] == {"f": ["w", "v", "u"], "g": ["p", "q"]}
    table = predict(spec, fit(spec), pd.DataFrame({"f": ["w"], "g": ["p"]}))
    # scores: (n_c + 1) / (n + 3) * (n_cw + 1) / (n_c + 3) * (n_cp + 1) / (n_c + 2)
    counts = {"b": (3, 0, 3), "a": (3, 0, 1), "c": (0, 0, 0)}
    scores = {c: (n + 1) / 9 * (w + 1) / (n + 3) * (p + 1) / (n + 2)
              for c, (n, w, p) in counts.items()}
    total = sum(scores.values())
    for c, s in scores.items():
        assert table[f"p_{c}"].iloc[0] == pytest.approx(s / total, rel=1e-12)


def test_semi_naive_bayes_declared_states_in_its_network(classifier_data):
    cpts = fit(classifier_spec(classifier_data, "semi_naive_bayes",
                               '[fit]\nkind = "tan"\n')).posterior.parameters["network"]["cpts"]
    assert cpts["y"]["states"] == ["b", "a", "c"]
    assert cpts["f"]["rows"] == ["y=b", "y=a", "y=c"] and cpts["f"]["states"] == ["w", "v", "u"]
    # class b holds f = u once and v twice: Dirichlet(1, 1, 1) + (0, 2, 1)
    np.testing.assert_allclose(cpts["f"]["mean"][0], [1 / 6, 3 / 6, 2 / 6], rtol=1e-15)
    np.testing.assert_allclose(cpts["f"]["mean"][2], [1 / 3] * 3, rtol=1e-15)


@pytest.mark.parametrize("model", ["naive_bayes", "semi_naive_bayes"])
def test_classifiers_refuse_a_label_outside_the_declared_states(classifier_data, model):
    (classifier_data / "spec.toml").write_text(
        f'model = "{model}"\n[data]\npath = "data.csv"\ntarget = "y"\n[states]\ng = ["p"]\n')
    with pytest.raises(DataError) as err:
        fit(load_spec(classifier_data / "spec.toml"))
    assert "column 'g', row 2" in str(err.value) and "'q'" in str(err.value)


def test_dirichlet_categorical_takes_its_categories_from_states(tmp_path):
    (tmp_path / "c.csv").write_text("c\nx\ny\nx\n")
    body = 'model = "dirichlet_categorical"\n[data]\npath = "c.csv"\ntarget = "c"\n'
    (tmp_path / "s.toml").write_text(body + '[states]\nc = ["y", "x", "z"]\n')
    pi = fit(load_spec(tmp_path / "s.toml")).posterior.parameters["pi"]
    assert pi["categories"] == ["y", "x", "z"]
    np.testing.assert_allclose(pi["mean"], [2 / 6, 3 / 6, 1 / 6], rtol=1e-15)
    (tmp_path / "s.toml").write_text(body + '[states]\nc = ["y", "z"]\n')
    with pytest.raises(DataError, match="row 1"):
        fit(load_spec(tmp_path / "s.toml"))
    (tmp_path / "s.toml").write_text(body.replace('target = "c"\n', 'target = "c"\n'
                                                  'categories = ["x", "y"]\n')
                                     + '[states]\nc = ["y", "x", "z"]\n')
    with pytest.raises(SpecError, match="one of the two"):
        load_spec(tmp_path / "s.toml")


@pytest.mark.nuts
def test_check_declares_the_declared_states_and_passes(network_data):
    """NUTS on the count declaration with a declared state no row holds: the Dirichlet of
    ``cpt_A`` has one entry per declared state (its unseen entry included, prior mass), the
    rows of ``cpt_B`` one per declared parent state, and every exact marginal agrees."""
    from bayescheck import check

    spec = network_spec(network_data, '[states]\nA = ["y", "x", "z"]\n')
    model = spec.model.declare(spec.data)
    assert model.coords["A__state"] == ("y", "x", "z")
    assert model.coords["B__parents"] == ("A=y", "A=x", "A=z")
    result = check(spec, draws=1000, tune=1000, chains=2, seed=3)
    assert result.verdict == "pass"
    names = {row["name"] for row in result.comparison.rows()}
    assert "cpt_A[(root), z]" in names and "cpt_B[A=z, u]" in names


@pytest.mark.nuts
def test_naive_bayes_check_declares_the_declared_classes_and_categories(classifier_data):
    from bayescheck import check

    spec = classifier_spec(classifier_data, "naive_bayes")
    model = spec.model.declare(spec.data)
    assert tuple(model.coords["class"]) == ("b", "a", "c")
    assert tuple(model.coords["f_category"]) == ("w", "v", "u")
    assert check(spec, draws=1000, tune=1000, chains=2, seed=3).verdict == "pass"


@pytest.mark.slow  # starts a Dask LocalCluster
def test_naive_bayes_on_a_dask_cluster_keeps_the_declared_states(classifier_data, capsys):
    import json

    from bayescheck.reports.cli import main

    classifier_spec(classifier_data, "naive_bayes")
    args = ["--quiet", "--scheduler", "local", "--workers", "1"]
    assert main(["fit", str(classifier_data / "spec.toml"), "--out",
                 str(classifier_data / "a"), *args]) == 0
    stats = json.loads((classifier_data / "a" / "posterior.json").read_text()
                       )["parameters"]["statistics"]
    local = fit(load_spec(classifier_data / "spec.toml")).posterior.parameters["statistics"]
    assert stats["classes"] == ["b", "a", "c"] and stats == json.loads(json.dumps(local))
    (classifier_data / "spec.toml").write_text(
        'model = "naive_bayes"\n[data]\npath = "data.csv"\ntarget = "y"\n[states]\ng = ["p"]\n')
    assert main(["fit", str(classifier_data / "spec.toml"), "--out",
                 str(classifier_data / "b"), *args]) == 2
    assert "column 'g', row 2: value 'q'" in capsys.readouterr().err
