"""naive_bayes and bayes_rule specs: the worked numbers of the source material reproduced
through the spec path, with the expectations computed here from the table's counts (never
typed in), equivalences with scikit-learn, streaming, and errors that name the key."""

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.inference.families.bayes_rule import fit_bayes_rule
from bayescheck.inference.families.naive_bayes import fit_naive_bayes
from bayescheck.models import DataError, SpecError, load_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TENNIS = EXAMPLES / "naive_bayes" / "play_tennis.csv"
FEATURES = ["outlook", "temperature", "humidity", "wind"]
QUERY = {"outlook": "Sunny", "temperature": "Cool", "humidity": "High", "wind": "Strong"}


def tennis_scores(alpha: float):
    """P(c) prod_i P(x_i | c) for the query, from counts: alpha = 0 is the plain frequency,
    alpha = 1 the Laplace correction (|D_c,xi| + 1) / (|D_c| + N_i), (|D_c| + 1) / (|D| + N)."""
    table = pd.read_csv(TENNIS)
    classes = sorted(table["play_tennis"].unique())
    scores = {}
    for c in classes:
        rows = table[table["play_tennis"] == c]
        s = (len(rows) + alpha) / (len(table) + alpha * len(classes))
        for f, v in QUERY.items():
            s *= ((rows[f] == v).sum() + alpha) / (len(rows) + alpha * table[f].nunique())
        scores[c] = s
    return scores


def write(tmp_path, body, data=None, name="data.csv"):
    if data is not None:
        (tmp_path / name).write_text(data)
    spec = tmp_path / "spec.toml"
    spec.write_text(body)
    return spec


def test_unsmoothed_play_tennis_reproduces_the_worked_scores():
    fit = fit_naive_bayes(load_spec(EXAMPLES / "naive_bayes" / "play_tennis_ml.toml"))
    expected = tennis_scores(0.0)
    query = fit.posterior.parameters["query"][0]
    for c, s in expected.items():
        assert query["scores"][c] == pytest.approx(s, rel=1e-12)
    # the source material's rounded numbers
    assert round(query["scores"]["Yes"], 4) == 0.0053
    assert round(query["scores"]["No"], 4) == 0.0206
    total = sum(expected.values())
    assert query["probabilities"]["No"] == pytest.approx(expected["No"] / total, rel=1e-12)
    assert query["decision"] == "No" and query["most_probable"] == "No"
    assert query["cross_checked"] is False
    assert fit.record.n_rows == 14 and fit.posterior.parameters["statistics"]["class_counts"] == [
        5,
        9,
    ]


def test_laplace_play_tennis_is_the_dirichlet_posterior_mean():
    fit = fit_naive_bayes(load_spec(EXAMPLES / "naive_bayes" / "play_tennis.toml"))
    expected = tennis_scores(1.0)
    query = fit.posterior.parameters["query"][0]
    for c, s in expected.items():
        assert query["scores"][c] == pytest.approx(s, rel=1e-12)
    assert query["decision"] == "No" and query["cross_checked"] is True
    # the oracle of each score is that exact mean; every Dirichlet marginal is exact too
    oracles = {m.name: m for m in fit.posterior.marginals}
    assert oracles["score[sunny_cool_high_strong, Yes]"].exact_mean == pytest.approx(
        expected["Yes"], rel=1e-12)
    assert oracles["score[sunny_cool_high_strong, Yes]"].dist is None
    table = pd.read_csv(TENNIS)
    n_sunny_no = ((table.play_tennis == "No") & (table.outlook == "Sunny")).sum()
    n_no = (table.play_tennis == "No").sum()
    assert oracles["p_outlook[No, Sunny]"].dist.mean() == pytest.approx((n_sunny_no + 1) /
                                                                        (n_no + 3))
    assert oracles["class_weight[Yes]"].dist.mean() == pytest.approx((14 - n_no + 1) / 16)


CLASSIFIER_SPEC = """model = "naive_bayes"
[data]
path = "t.csv"
target = "play_tennis"
features = {features}
[prior]
class_prior = "frequency"
[[query]]
outlook = "Sunny"
temperature = "Cool"
humidity = "High"
wind = "Strong"
{extra}[[query]]
outlook = "Overcast"
temperature = "Mild"
humidity = "Normal"
wind = "Weak"
{extra}"""


def _tennis_spec(tmp_path, constant: bool):
    """The tennis table and query rows; ``constant``: plus a feature ``site`` that is "A" in
    every row (a single category)."""
    table = pd.read_csv(TENNIS)
    features = [*FEATURES, "site"] if constant else FEATURES
    if constant:
        table = table.assign(site="A")
    table.to_csv(tmp_path / "t.csv", index=False)
    body = CLASSIFIER_SPEC.format(features=str(features).replace("'", '"'),
                                  extra='site = "A"\n' if constant else "")
    return table, features, write(tmp_path, body)


@pytest.mark.parametrize("constant", [False, True], ids=["tennis", "with_one_category_feature"])
def test_laplace_features_with_frequency_prior_equal_sklearn_categorical_nb(tmp_path, constant):
    # A feature with one category: the Dirichlet over one category is the point mass at 1, its
    # factor is 1 under every class, as sklearn's (c + alpha) / (n_c + alpha * 1).
    sklearn = pytest.importorskip("sklearn.naive_bayes")
    from sklearn.preprocessing import OrdinalEncoder

    table, features, spec = _tennis_spec(tmp_path, constant)
    fit = fit_naive_bayes(load_spec(spec))
    enc = OrdinalEncoder().fit(table[features])
    clf = sklearn.CategoricalNB(alpha=1.0).fit(enc.transform(table[features]),
                                               table["play_tennis"])
    queries = pd.DataFrame([q["values"] for q in fit.posterior.parameters["query"]])
    ref = clf.predict_proba(enc.transform(queries[features]))
    ours = np.array([[q["probabilities"][c] for c in clf.classes_]
                     for q in fit.posterior.parameters["query"]])
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)
    # the constant p_site = 1 has no marginal to compare; every other feature keeps its own
    names = {m.var for m in fit.posterior.marginals}
    assert "p_site" not in names and {"class_weight", "p_outlook", "p_wind"} <= names


def test_ml_gaussian_equals_sklearn_gaussian_nb(tmp_path):
    sklearn = pytest.importorskip("sklearn.naive_bayes")
    cells = pd.read_csv(EXAMPLES / "naive_bayes" / "cells.csv")
    cells.to_csv(tmp_path / "cells.csv", index=False)
    spec = write(tmp_path, """model = "naive_bayes"
[data]
path = "cells.csv"
target = "diagnosis"
features_kind = "gaussian"
[prior]
smoothing = false
[[query]]
radius = 14.0
texture = 20.0
""")
    fit = fit_naive_bayes(load_spec(spec))
    clf = sklearn.GaussianNB(var_smoothing=0.0).fit(cells[["radius", "texture"]],
                                                    cells["diagnosis"])
    ref = clf.predict_proba(pd.DataFrame({"radius": [14.0], "texture": [20.0]}))[0]
    got = [fit.posterior.parameters["query"][0]["probabilities"][c] for c in clf.classes_]
    np.testing.assert_allclose(got, ref, rtol=1e-9)
    # the maximum-likelihood variance divides by N, not N - 1
    benign = cells[cells.diagnosis == "benign"]["radius"]
    assert fit.posterior.parameters["features"]["radius"]["variance"]["benign"] == pytest.approx(
        benign.var(ddof=0), rel=1e-12)


def test_stream_of_batches_equals_one_file(tmp_path):
    table = pd.read_csv(TENNIS)
    (tmp_path / "b").mkdir()
    for i, start in enumerate((0, 5, 10)):
        part = table.iloc[start:start + 5]
        part.to_csv(tmp_path / "b" / f"{i}.csv", index=False)
    shutil.copy(TENNIS, tmp_path / "all.csv")
    body = """model = "naive_bayes"
[data]
path = "{path}"
target = "play_tennis"
features = ["outlook", "temperature", "humidity", "wind"]
[[query]]
outlook = "Sunny"
temperature = "Cool"
humidity = "High"
wind = "Strong"
"""
    one = fit_naive_bayes(load_spec(write(tmp_path, body.format(path="all.csv"))))
    (tmp_path / "out").mkdir()
    many = fit_naive_bayes(load_spec(write(tmp_path, body.format(path="b/*.csv"))),
                                out=tmp_path / "out")
    assert len(many.record.batches) == 3 and (tmp_path / "out" / "checkpoint.npz").exists()
    assert many.posterior.parameters["query"] == one.posterior.parameters["query"]
    assert many.posterior.parameters["statistics"] == one.posterior.parameters["statistics"]
    resumed = fit_naive_bayes(load_spec(write(tmp_path, body.format(path="b/*.csv"))),
                                   out=tmp_path / "out", resume=True)
    assert resumed.posterior.parameters["statistics"] == one.posterior.parameters["statistics"]


def test_loss_matrix_moves_the_decision():
    """Two classes, zero-one loss: the decision is the most probable class; a miss of the
    rare class made 50 times worse moves it (risks computed here from the probabilities)."""
    fit = fit_naive_bayes(load_spec(EXAMPLES / "naive_bayes" / "cells_decision.toml"))
    for q in fit.posterior.parameters["query"]:
        p = q["probabilities"]
        assert q["risk"]["treat"] == pytest.approx(1.0 * p["benign"])
        assert q["risk"]["discharge"] == pytest.approx(50.0 * p["malignant"])
        assert q["decision"] == min(q["risk"], key=q["risk"].get)
    borderline = next(q for q in fit.posterior.parameters["query"] if q["name"] == "borderline")
    assert borderline["most_probable"] == "benign" and borderline["decision"] == "treat"
    zero_one = fit_naive_bayes(load_spec(EXAMPLES / "naive_bayes" / "cells.toml"))
    for q in zero_one.posterior.parameters["query"]:
        assert q["decision"] == q["most_probable"]


def test_bayes_rule_disease_example():
    spec = load_spec(EXAMPLES / "bayes_rule" / "disease.toml")
    fit = fit_bayes_rule(spec)
    prior, sens, false_pos = 0.008, 0.98, 0.03  # the spec's numbers, read back below
    assert spec.model.prior.tolist() == [prior, 1 - prior]
    assert spec.model.likelihood.tolist() == [sens, false_pos]
    exact = sens * prior / (sens * prior + false_pos * (1 - prior))
    assert fit.posterior.parameters["posterior"]["mean"]["cancer"] == pytest.approx(
        exact, rel=1e-12
    )
    assert round(fit.posterior.parameters["posterior"]["mean"]["cancer"], 4) == 0.2085
    assert [m.name for m in fit.posterior.marginals] == [
        "posterior[cancer]",
        "posterior[no_cancer]",
    ]


# ---- errors ------------------------------------------------------------------------------

BASE = """model = "naive_bayes"
[data]
path = "data.csv"
target = "y"
"""
DATA = "a,b,y\nu,1.0,p\nv,2.0,p\nu,3.0,q\nv,4.5,q\n"


@pytest.mark.parametrize("extra, key, message", [
    ('features_kind = "ordinal"\n', "data.features_kind", "expected one of"),
    ('features_kind = {c = "gaussian"}\n', "data.features_kind.c", "not a feature"),
    ('[prior]\nalpha = 1\n', "prior.alpha", "valid keys here are: .*concentration"),
    ('[prior]\nconcentration = -1\n', "prior.concentration", "positive"),
    ('[prior]\nmu0 = 1\n', "prior.mu0", "only applies to Gaussian features"),
    ('[prior]\nconcentration = 1e308\n', "prior.concentration", "too large: a prior worth"),
    ('features_kind = {b = "gaussian"}\n[prior]\nkappa0 = 1e308\n', "prior.kappa0",
     "too large: a prior worth more than 1e\\+15"),
    ('features_kind = {b = "gaussian"}\n[prior]\na0 = 1e20\n', "prior.a0", "too large"),
    ('features_kind = {b = "gaussian"}\n[prior]\nb0 = 1e308\n', "prior.b0",
     "too large: the posterior's scale overflows"),
    ('features_kind = {b = "gaussian"}\n[prior]\nmu0 = 1e200\n', "prior.mu0",
     "its square overflows"),
    ('features_kind = {b = "gaussian"}\n[prior]\nmu0 = 1e150\nkappa0 = 1e15\n',
     "prior.kappa0", r"kappa0 \* mu0\^2 exceeds"),
    ('[[query]]\na = "u"\n', "query\\[0\\].b", "is required"),
    ('[[query]]\na = "u"\nb = 1.0\nc = 2\n', "query\\[0\\].c", "unknown key"),
    ('features_kind = {b = "gaussian"}\n[[query]]\na = "u"\nb = "x"\n', "query\\[0\\].b",
     "expected a finite number"),
    ('[decision]\nloss = [[0, 1], [1, 0]]\n', "decision.classes", "is required"),
    ('[decision]\nclasses = ["p", "q"]\nloss = [[0, 1, 2], [1, 0, 2]]\n', "decision.loss",
     r"shape \(2, 2\).*got shape \(2, 3\)"),
    ('[decision]\nclasses = ["p", "q"]\nloss = [[0, 1], [-1, 0]]\n', "decision.loss",
     "non-negative, got -1 at row 2"),
])
def test_spec_errors_name_the_key(tmp_path, extra, key, message):
    body = BASE.replace('target = "y"\n', 'target = "y"\n' + extra) if extra.startswith(
        "features_kind") else BASE + extra
    with pytest.raises(SpecError, match=f"key '{key}': .*{message}"):
        load_spec(write(tmp_path, body, DATA))


def test_the_constructor_refuses_what_the_spec_refuses():
    """A model built in Python is refused for the same reasons, naming the argument."""
    from bayescheck.models.naive_bayes import NaiveBayes
    from bayescheck.models.validation import InvalidArgument

    base = {"features": ("b",), "kinds": ("gaussian",), "target": "y"}
    for key, value in (("concentration", 0.0), ("kappa0", 1e308), ("a0", float("inf")),
                       ("b0", -1.0), ("mu0", "x")):
        with pytest.raises(InvalidArgument, match=f"^{key}: "):
            NaiveBayes(**base, **{key: value})
    assert NaiveBayes(**base, kappa0=1e15, b0=1e299).kappa0 == 1e15  # near the limits: accepted


def test_decision_classes_must_be_the_data_classes(tmp_path):
    spec = write(tmp_path, BASE + '[decision]\nclasses = ["p", "r"]\nloss = [[0, 1], [1, 0]]\n',
                 DATA)
    with pytest.raises(SpecError, match="decision.classes.*'p', 'q'"):
        fit_naive_bayes(load_spec(spec))


def test_single_row_class_with_ml_gaussian_is_a_clear_error(tmp_path):
    data = "b,y\n1.0,p\n2.0,p\n3.0,q\n"
    gaussian = BASE.replace('target = "y"\n', 'target = "y"\nfeatures_kind = "gaussian"\n')
    spec = write(tmp_path, gaussian + "[prior]\nsmoothing = false\n", data)
    with pytest.raises(DataError, match="class 'q'.*a single row"):
        fit_naive_bayes(load_spec(spec))
    # the Bayesian (NIG) Gaussian features are defined for one row
    ok = write(tmp_path, gaussian, data)
    assert fit_naive_bayes(load_spec(ok)).record.n_rows == 3


def test_missing_label_names_column_and_row(tmp_path):
    spec = write(tmp_path, BASE, "a,b,y\nu,1.0,p\n,2.0,p\nu,3.0,q\n")
    with pytest.raises(DataError, match="column 'a', row 2: missing value"):
        fit_naive_bayes(load_spec(spec))


@pytest.mark.parametrize("body, key, message", [
    ('[prior]\na = 0.5\nb = 0.6\n[likelihood]\na = 1\nb = 1\n', "prior", "sum to 1"),
    ('[prior]\na = 0.5\nb = 0.5\n[likelihood]\na = 1\nc = 1\n', "likelihood", "'b'"),
    ('[prior]\na = 0.5\nb = 0.5\n[likelihood]\na = 0\nb = 0\n', "likelihood", "P\\(D\\) = 0"),
    ('[prior]\na = 1.5\nb = -0.5\n[likelihood]\na = 1\nb = 1\n', "prior.b", ">= 0"),
    ('[prior]\na = 1.0\n[likelihood]\na = 1\n', "prior", "at least two"),
])
def test_bayes_rule_errors(tmp_path, body, key, message):
    spec = write(tmp_path, 'model = "bayes_rule"\n' + body)
    with pytest.raises(SpecError, match=f"key '{key}': .*{message}"):
        load_spec(spec)


def test_mixed_stream_resumes_from_the_engines_statistics(tmp_path):
    # the checkpoint holds NaiveBayesStats as they are: Gaussian moments and one count table
    # per categorical feature; resuming with the held-back batch gives the uninterrupted
    # stream exactly (and the one-file fit up to the rounding of Chan's merges)
    rng = np.random.default_rng(3)
    n = 24
    table = pd.DataFrame({"h": rng.normal(170, 8, n).round(1),
                          "colour": rng.choice(["red", "blue", "green"], n),
                          "size": rng.choice(["S", "L"], n),
                          "y": ["a", "b", "c"] * (n // 3)})
    (tmp_path / "b").mkdir()
    for i in range(3):
        table.iloc[8 * i:8 * i + 8].to_csv(tmp_path / "b" / f"{i}.csv", index=False)
    table.to_csv(tmp_path / "all.csv", index=False)
    body = ('model = "naive_bayes"\n[data]\npath = "{path}"\ntarget = "y"\n'
            'features = ["h", "colour", "size"]\n'
            'features_kind = {{h = "gaussian", colour = "categorical", size = "categorical"}}\n'
            '[prior]\nmu0 = 170.0\nkappa0 = 0.1\na0 = 1.0\nb0 = 10.0\n')
    one = fit_naive_bayes(load_spec(write(tmp_path, body.format(path="all.csv"))))
    held = (tmp_path / "b" / "2.csv").read_bytes()
    (tmp_path / "b" / "2.csv").unlink()
    stream = load_spec(write(tmp_path, body.format(path="b/*.csv")))
    # the schema comes from a pass over the files present: the first two hold every label
    assert set(table["colour"][:16]) == set(table["colour"])
    assert set(table["size"][:16]) == set(table["size"])
    (tmp_path / "out").mkdir()
    fit_naive_bayes(stream, out=tmp_path / "out")
    (tmp_path / "b" / "2.csv").write_bytes(held)
    resumed = fit_naive_bayes(stream, out=tmp_path / "out", resume=True)
    assert [b["name"] for b in resumed.record.batches][-1].endswith("2.csv")
    uninterrupted = fit_naive_bayes(stream)
    assert (
        resumed.posterior.parameters["statistics"]
        == uninterrupted.posterior.parameters["statistics"]
    )
    assert (
        resumed.posterior.parameters["features"] == uninterrupted.posterior.parameters["features"]
    )
    st, whole = resumed.posterior.parameters["statistics"], one.posterior.parameters["statistics"]
    assert st["class_counts"] == whole["class_counts"]
    assert st["category_counts"] == whole["category_counts"]
    np.testing.assert_allclose(st["gaussian_mean"], whole["gaussian_mean"], rtol=1e-14)
    np.testing.assert_allclose(st["gaussian_m2"], whole["gaussian_m2"], rtol=1e-12)
    # a class the checkpoint never knew: refused, naming the batch, column, row and class
    extra = table.iloc[:2].assign(y="d")
    extra.to_csv(tmp_path / "b" / "3.csv", index=False)
    with pytest.raises(DataError, match=r"3\.csv, column 'y', row 1: class 'd' is new: the "
                                        r"batches in the checkpoint have only \['a', 'b', 'c'\]"):
        fit_naive_bayes(stream, out=tmp_path / "out", resume=True)


@pytest.mark.slow
def test_single_category_feature_is_declared_as_a_point_mass(tmp_path):
    spec = load_spec(_tennis_spec(tmp_path, constant=True)[2])
    model = spec.model.declare(spec.data)
    point = model.initial_point()
    # one free stick fraction per class and category but the last: none for site ...
    K = len(model.coords["class"])
    fractions = (K - 1) + sum(K * (len(model.coords[f"{f}_category"]) - 1)
                              for f in spec.model.categorical)
    assert list(point) == ["stick_fractions_logodds__"]
    assert point["stick_fractions_logodds__"].shape == (fractions,)
    assert len(model.coords["outlook_category"]) == 3
    np.testing.assert_array_equal(model["p_site"].eval(), np.ones((2, 1)))  # ... the constant 1
    assert model.coords["site_category"] == ("A",)
