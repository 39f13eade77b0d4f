"""Beta-Bernoulli and Dirichlet-categorical through the spec path (no sampler).

Exact posterior parameters against derivations written here (counting, the chain rule of
sequential predictive probabilities, Laplace's rule with fractions); streaming equals one
batch; label parsing; bad input exits 2 naming file, key or column and row.
"""

import csv
import json
import math
import re
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.data.sources import DataSource
from bayescheck.inference.engines.counts import CategoricalStats
from bayescheck.inference.families import fit
from bayescheck.inference.scale.streaming import CHECKPOINT_NAME, load_checkpoint, model_key
from bayescheck.models import BetaBernoulli, DirichletCategorical, Spec, load_spec
from bayescheck.models.beta_bernoulli import order_labels
from bayescheck.reports.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
COIN = EXAMPLES / "beta_bernoulli" / "coin.toml"
DIE = EXAMPLES / "dirichlet_categorical" / "die.toml"


def column(path, name):
    with open(path, newline="") as fh:
        return [row[name] for row in csv.DictReader(fh)]


# --------------------------------------------------------------------------- exact values


def test_coin_posterior_against_counting_and_the_chain_rule():
    spec = load_spec(COIN)
    result = fit(spec)
    y = [int(v) for v in column(COIN.parent / "coin.csv", "heads")]
    a, b, n, k = 10.0, 10.0, len(y), sum(y)
    p = result.posterior.parameters["p"]
    assert (p["a"], p["b"]) == (a + k, b + n - k) == (19.0, 13.0)
    assert p["successes"] == k and p["trials"] == n == result.record.n_rows
    assert p["mean"] == pytest.approx((a + k) / (a + b + n), rel=1e-14)
    A, B = a + k, b + n - k
    assert p["sd"] == pytest.approx(math.sqrt(A * B / ((A + B) ** 2 * (A + B + 1))), rel=1e-12)
    # MLE: d/dp [k log p + (n - k) log(1 - p)] = 0  =>  p = k / n
    assert p["mle"] == pytest.approx(k / n, rel=1e-14)
    # MAP: the mode of Beta(A, B), (A - 1) / (A + B - 2)
    assert p["map"] == pytest.approx((a + k - 1) / (a + b + n - 2), rel=1e-14)
    assert p["predictive"] == pytest.approx((a + k) / (a + b + n), rel=1e-14)
    assert p["prior"] == {"distribution": "beta", "a": 10.0, "b": 10.0}
    # evidence by the chain rule: P(y_1..y_n) = prod_i P(y_i | y_<i), each a Beta predictive
    log_ev, heads = 0.0, 0
    for i, yi in enumerate(y):
        p1 = (a + heads) / (a + b + i)
        log_ev += math.log(p1 if yi else 1 - p1)
        heads += yi
    assert result.posterior.log_evidence == pytest.approx(log_ev, rel=1e-12)
    (m,) = result.posterior.marginals
    assert (m.name, m.var, m.coords) == ("p", "p", {})
    assert m.dist.args == (A, B)
    assert [q.dist.args for q in result.posterior.priors] == [(10.0, 10.0)]


def test_die_posterior_is_laplace_smoothing_with_an_unseen_face():
    """concentration = 1: the posterior mean is (count + 1) / (n + N) exactly, and the face
    that never came up keeps its prior mass 1 / (n + N)."""
    result = fit(load_spec(DIE))
    faces = column(DIE.parent / "die.csv", "face")
    n, N = len(faces), 6
    counts = [faces.count(str(f)) for f in range(1, 7)]
    assert counts[5] == 0
    pi = result.posterior.parameters["pi"]
    assert pi["categories"] == ["1", "2", "3", "4", "5", "6"]
    assert pi["counts"] == counts
    assert pi["alpha"] == [1.0 + c for c in counts]
    laplace = [Fraction(c + 1, n + N) for c in counts]
    assert pi["mean"] == pytest.approx([float(f) for f in laplace], rel=1e-14)
    assert pi["mean"][5] == pytest.approx(1 / 30, rel=1e-14)
    assert pi["predictive"] == pytest.approx(pi["mean"], rel=1e-14)
    assert pi["mle"] == pytest.approx([c / n for c in counts], rel=1e-14)
    assert pi["map"] == pytest.approx([c / n for c in counts], rel=1e-14)  # mode of Dir(1 + c)
    # chain rule: P(y_i = k | y_<i) = (1 + c_k so far) / (N + i)
    seen, log_ev = dict.fromkeys(map(str, range(1, 7)), 0), 0.0
    for i, f in enumerate(faces):
        log_ev += math.log((1 + seen[f]) / (N + i))
        seen[f] += 1
    assert result.posterior.log_evidence == pytest.approx(log_ev, rel=1e-12)
    assert [m.name for m in result.posterior.marginals] == [f"pi[{f}]" for f in range(1, 7)]
    a0 = n + N
    for m, c in zip(result.posterior.marginals, counts, strict=True):
        assert m.coords == {"category": m.name[3]}
        assert m.dist.args == pytest.approx((1 + c, a0 - 1 - c))
    assert all(q.dist.args == pytest.approx((1.0, 5.0)) for q in result.posterior.priors)


def test_laplace_equals_dirichlet_one_posterior_mean_through_the_spec(tmp_path):
    labels = ["sunny"] * 5 + ["rain"] * 2 + ["cloudy"] * 3
    pd.DataFrame({"sky": labels}).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text(
        'model = "dirichlet_categorical"\n[data]\npath = "d.csv"\ntarget = "sky"\n'
        'categories = ["sunny", "cloudy", "rain", "snow"]\n[prior]\nconcentration = 1\n')
    code = main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 0
    pi = json.loads((tmp_path / "o" / "posterior.json").read_text())["parameters"]["pi"]
    cats = ["sunny", "cloudy", "rain", "snow"]
    assert pi["categories"] == cats  # declared order, not sorted
    laplace = [(labels.count(c) + 1) / (len(labels) + len(cats)) for c in cats]
    assert pi["mean"] == pytest.approx(laplace, rel=1e-14)
    assert pi["mean"][3] == pytest.approx(1 / 14, rel=1e-14)


def test_per_category_concentration_and_undeclared_categories(tmp_path):
    pd.DataFrame({"y": [2, 10, 2, 1, 10, 2]}).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "a.toml").write_text('model = "dirichlet_categorical"\n[data]\npath = "d.csv"\n'
                                     'target = "y"\n[prior]\nconcentration = 0.5\n')
    pi = fit(load_spec(tmp_path / "a.toml")).posterior.parameters["pi"]
    assert pi["categories"] == ["1", "2", "10"]  # numeric labels in numeric order
    assert pi["alpha"] == [1.5, 3.5, 2.5]
    (tmp_path / "b.toml").write_text('model = "dirichlet_categorical"\n[data]\npath = "d.csv"\n'
                                     'target = "y"\ncategories = [10, 2, 1]\n'
                                     '[prior]\nconcentration = [1, 2, 3]\n')
    pi = fit(load_spec(tmp_path / "b.toml")).posterior.parameters["pi"]
    assert pi["categories"] == ["10", "2", "1"]
    assert pi["alpha"] == [1 + 2, 2 + 3, 3 + 1]


def test_order_labels():
    assert order_labels(["10", "9", "2.5"]) == ("2.5", "9", "10")
    assert order_labels(["b", "a", "10"]) == ("10", "a", "b")


# --------------------------------------------------------------------------- labels


@pytest.mark.parametrize("text", [
    "y\n1\n0\n1\n1\n",
    "y\ntrue\nfalse\nTrue\nTRUE\n",
    "y\ntrue\n0\n 1\nTrUe\n",          # mixed: an object column of strings
    "y\n1.0\n0.0\n1.0\n1.0\n",
])
def test_bernoulli_labels_in_every_spelling(tmp_path, text):
    (tmp_path / "d.csv").write_text(text)
    (tmp_path / "s.toml").write_text('model = "beta_bernoulli"\n[data]\npath = "d.csv"\n'
                                     'target = "y"\n')
    p = fit(load_spec(tmp_path / "s.toml")).posterior.parameters["p"]
    assert (p["successes"], p["trials"]) == (3, 4)
    assert (p["a"], p["b"]) == (4.0, 2.0)  # default prior Beta(1, 1)


def test_bernoulli_bool_frame_from_python():
    spec = Spec(model=BetaBernoulli(target="y", a=2, b=3),
                data=DataSource.from_frame(pd.DataFrame({"y": [True, False, True]})))
    p = fit(spec).posterior.parameters["p"]
    assert (p["a"], p["b"]) == (4.0, 4.0)


# --------------------------------------------------------------------------- streaming


def _write_batches(folder, values, cuts, column="y"):
    folder.mkdir()
    for i, chunk in enumerate(np.split(np.asarray(values, dtype=object), cuts)):
        pd.DataFrame({column: chunk}).to_csv(folder / f"{i}.csv", index=False)
    pd.DataFrame({column: values}).to_csv(folder.parent / "all.csv", index=False)


def _spec(tmp_path, name, body):
    (tmp_path / name).write_text(body)
    return load_spec(tmp_path / name)


def test_bernoulli_stream_equals_one_batch(tmp_path):
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 101)
    _write_batches(tmp_path / "b", y, [7, 60])
    body = ('model = "beta_bernoulli"\n[data]\npath = "{}"\ntarget = "y"\n'
            '[prior]\na = 2.5\nb = 0.5\n')
    stream = fit(_spec(tmp_path, "s.toml", body.format("b/*.csv")))
    whole = fit(_spec(tmp_path, "w.toml", body.format("all.csv")))
    assert len(stream.record.batches) == 3 and [b["rows"] for b in stream.record.batches] == [
        7,
        53,
        41,
    ]
    assert stream.posterior.parameters == whole.posterior.parameters
    assert stream.posterior.log_evidence == whole.posterior.log_evidence
    assert [t["mean"]["p"] for t in stream.record.trajectory][-1] == whole.posterior.parameters[
        "p"
    ]["mean"]


def test_categorical_stream_equals_one_batch_with_a_late_new_label(tmp_path):
    """Undeclared categories: a label first seen in the last batch still lands in its
    sorted place, so the posterior is that of one batch."""
    y = ["b"] * 4 + ["c"] * 3 + ["b", "c", "a", "c"]
    _write_batches(tmp_path / "b", y, [4, 7])
    body = 'model = "dirichlet_categorical"\n[data]\npath = "{}"\ntarget = "y"\n'
    stream = fit(_spec(tmp_path, "s.toml", body.format("b/*.csv")))
    whole = fit(_spec(tmp_path, "w.toml", body.format("all.csv")))
    assert stream.posterior.parameters == whole.posterior.parameters
    assert stream.posterior.parameters["pi"]["categories"] == ["a", "b", "c"]
    assert stream.posterior.parameters["pi"]["counts"] == [1, 5, 5]
    assert stream.posterior.log_evidence == whole.posterior.log_evidence


def test_categorical_checkpoint_resume_equals_one_batch(tmp_path):
    y = ["x", "y", "y", "z", "x", "y", "z", "z", "z"]
    _write_batches(tmp_path / "b", y, [3, 6])
    last = tmp_path / "b" / "2.csv"
    held_back = last.read_bytes()
    last.unlink()
    body = ('model = "dirichlet_categorical"\n[data]\npath = "b/*.csv"\ntarget = "y"\n'
            'categories = ["x", "y", "z"]\n')
    spec = _spec(tmp_path, "s.toml", body)
    fit(spec, out=tmp_path / "o")
    saved = load_checkpoint(tmp_path / "o" / CHECKPOINT_NAME, CategoricalStats, model_key(spec))
    assert saved.state.categories == ("x", "y", "z")
    assert saved.state.counts.tolist() == [2, 3, 1]
    last.write_bytes(held_back)
    resumed = fit(spec, out=tmp_path / "o", resume=True)
    whole = fit(_spec(tmp_path, "w.toml", body.replace("b/*.csv", "all.csv")))
    assert resumed.posterior.parameters == whole.posterior.parameters
    assert len(resumed.record.trajectory) == 3  # declared categories: a summary after each batch
    final = whole.posterior.parameters["pi"]["mean"][2]
    assert resumed.record.trajectory[-1]["mean"]["pi[z]"] == pytest.approx(final)


# --------------------------------------------------------------------------- declarations


@pytest.mark.slow
def test_declarations_rowwise_and_on_counts_differ_by_a_constant(monkeypatch):
    """Above MAX_ROWWISE rows the likelihood is declared on the totals (Binomial /
    Multinomial); the log density differs from the row-wise one only by the combinatorial
    constant, so the posterior is the same."""
    import bayescheck.models.beta_bernoulli as bb

    y = np.array([1, 0, 1, 1, 0, 1, 1])
    labels = np.array(["a", "c", "c", "a", "c", "c"])
    bern = BetaBernoulli(target="y", a=2.0, b=3.0)
    cat = DirichletCategorical(target="y", concentration=1.5, categories=("a", "b", "c"))
    models = [bern.pymc_model(y), cat.pymc_model(labels, cat.categories)]
    monkeypatch.setattr(bb, "MAX_ROWWISE", 0)
    models += [bern.pymc_model(y), cat.pymc_model(labels, cat.categories)]
    assert [sorted(m.named_vars) for m in models] == [
        ["p", "y"], ["pi", "y"], ["p", "successes"], ["counts", "pi"]]
    assert models[1].coords["category"] == ("a", "b", "c")
    points = {"p": [0.2, 0.5, 0.9],
              "pi": [np.array([0.2, 0.3, 0.5]), np.array([0.6, 0.1, 0.3]),
                     np.array([1 / 3, 1 / 3, 1 / 3])]}
    for rowwise, counts, var in ((models[0], models[2], "p"), (models[1], models[3], "pi")):
        f_row, f_cnt = rowwise.compile_logp(), counts.compile_logp()
        diffs = []
        for value in points[var]:
            point = {"p_logodds__": np.log(value / (1 - value))} if var == "p" else \
                {"pi_simplex__": np.log(value[:-1]) - np.log(value[-1])}
            diffs.append(f_row(point) - f_cnt(point))
        assert np.ptp(diffs) < 1e-9, diffs


# --------------------------------------------------------------------------- bad input

BERN = 'model = "beta_bernoulli"\n[data]\npath = "data.csv"\ntarget = "y"\n'
CAT = ('model = "dirichlet_categorical"\n[data]\npath = "data.csv"\ntarget = "y"\n'
       'categories = ["a", "b", "c"]\n')
CAT_DATA = "y\na\nb\na\n"


@pytest.mark.parametrize("body, data, expected", [
    (BERN, "y\n1\n0\n2\n", r"data\.csv, column 'y', row 3: expected 0/1 or true/false, got 2$"),
    (BERN, "y\n0\n-1\n", r"data\.csv, column 'y', row 2: expected 0/1 or true/false, got -1$"),
    (BERN, "y\n1\nyes\n0\n", r"data\.csv, column 'y', row 2: expected 0/1 or true/false, "
                             r"got 'yes'$"),
    (BERN, "y\ntrue\nfalse\nno\n", r"column 'y', row 3: expected 0/1 or true/false, got 'no'"),
    (BERN, "y\n1\n0\nNaN\n", r"data\.csv, column 'y', row 3: missing value \(NaN\)$"),
    (BERN, "x,y\n1,1\n2,\n", r"data\.csv, column 'y', row 2: missing value \(NaN\)$"),
    (BERN, "y\n1\n0.5\n", r"data\.csv, column 'y', row 2: expected 0/1 or true/false, got 0\.5"),
    (BERN, "", r"data\.csv: file is empty"),
    (BERN, "y\n", r"data\.csv: file has a header but no rows"),
    (BERN, "x\n1\n", r"key 'data\.target': column 'y' is not in .*data\.csv; it has: x"),
    (BERN + "[prior]\na = 0\n", "y\n1\n", r"key 'prior\.a': expected a positive number, got 0$"),
    (BERN + "[prior]\nb = -1.5\n", "y\n1\n", r"key 'prior\.b': expected a positive number, "
                                             r"got -1\.5"),
    (BERN + "[prior]\nalpha = 2\n", "y\n1\n", r"key 'prior\.alpha': unknown key; valid keys "
                                              r"here are: a, b$"),
    (BERN.replace('target = "y"\n', 'target = "y"\ncategories = ["0", "1"]\n'), "y\n1\n",
     r"key 'data\.categories': unknown key; valid keys here are: path, target$"),
    (CAT, "y\na\nb\nd\n", r"data\.csv, column 'y', row 3: label 'd' is not one of the declared "
                          r"categories \['a', 'b', 'c'\]"),
    (CAT, "y\na\n\nb\nNA\n", r"data\.csv, column 'y', row 3: missing value \(NaN\)$"),
    (CAT + "[prior]\nconcentration = 0\n", CAT_DATA,
     r"key 'prior\.concentration': expected a positive number, got 0\.0$"),
    (CAT + "[prior]\nconcentration = [1, -2, 1]\n", CAT_DATA,
     r"key 'prior\.concentration': expected positive numbers, got \[1\.0, -2\.0, 1\.0\]"),
    (CAT + "[prior]\nconcentration = [1, 2]\n", CAT_DATA,
     r"key 'prior\.concentration': expected a number or 3 numbers \(one per category: a, b, "
     r"c\), got 2"),
    (CAT.replace('categories = ["a", "b", "c"]\n', "") + "[prior]\nconcentration = [1, 2]\n",
     CAT_DATA, r"key 'prior\.concentration': one value per category needs \[data\] categories"),
    (CAT.replace('["a", "b", "c"]', '["a", "b", "a"]'), CAT_DATA,
     r"key 'data\.categories': labels must be distinct; 'a' appears twice"),
    (CAT.replace('["a", "b", "c"]', '["a"]'), CAT_DATA,
     r"key 'data\.categories': expected at least 2 categories"),
    (CAT.replace('["a", "b", "c"]', '"abc"'), CAT_DATA,
     r"key 'data\.categories': expected a list of labels"),
    (CAT.replace('categories = ["a", "b", "c"]\n', ""), "y\na\na\n",
     r"data\.csv: only one category \('a'\) occurs in column 'y'; declare the others"),
    (CAT + "[prior]\nconc = 1\n", CAT_DATA,
     r"key 'prior\.conc': unknown key; valid keys here are: concentration$"),
])
def test_bad_input_exits_2_naming_the_culprit(tmp_path, capsys, body, data, expected):
    (tmp_path / "data.csv").write_text(data)
    (tmp_path / "spec.toml").write_text(body)
    code = main(["fit", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("bayescheck: error: ")
    assert re.search(expected, err), err


def test_bad_label_in_second_batch_names_that_file(tmp_path, capsys):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "1.csv").write_text("y\n1\n0\n")
    (tmp_path / "b" / "2.csv").write_text("y\n0\n1\n1\n3\n")
    (tmp_path / "spec.toml").write_text(BERN.replace("data.csv", "b/*.csv"))
    code = main(["fit", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 2
    assert "2.csv, column 'y', row 4: expected 0/1 or true/false, got 3" in capsys.readouterr().err


def test_model_objects_validate_hyperparameters():
    with pytest.raises(ValueError, match="a: expected a positive number, got 0.0"):
        BetaBernoulli(target="y", a=0.0)
    with pytest.raises(ValueError, match="needs the categories declared"):
        DirichletCategorical(target="y", concentration=(1.0, 2.0))
    model = DirichletCategorical(target="y", concentration=(1.0, 2.0), categories=(1, 2))
    assert model.categories == ("1", "2")
    assert replace(model, concentration=3.0).alpha(model.categories).tolist() == [3.0, 3.0]
