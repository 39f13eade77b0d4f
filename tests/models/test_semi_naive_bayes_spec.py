"""semi_naive_bayes specs: SPODE scores and the cross-validated super-parent recomputed here
from the rows, TAN's tree equal to pgmpy's TreeSearch(tan), the network oracles equal to the
reported scores, streaming, and errors that exit 2 naming the key."""

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.inference.families import fit
from bayescheck.models import load_spec
from bayescheck.reports.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "semi_naive_bayes"
FEATURES = ["outlook", "temperature", "humidity", "wind"]


def spode_scores(train: pd.DataFrame, row: dict, sp: str, target="play_tennis", alpha=1.0,
                 levels=None):
    """P(c) P(x_s | c) prod_j P(x_j | c, x_s), Laplace, counted here."""
    levels = levels or {c: sorted(train[c].astype(str).unique()) for c in train.columns}
    out = {}
    for c in levels[target]:
        rows = train[train[target] == c]
        s = (len(rows) + alpha) / (len(train) + alpha * len(levels[target]))
        s *= ((rows[sp] == row[sp]).sum() + alpha) / (len(rows) + alpha * len(levels[sp]))
        rows_s = rows[rows[sp] == row[sp]]
        for f in FEATURES:
            if f != sp:
                s *= ((rows_s[f] == row[f]).sum() + alpha) / (len(rows_s) + alpha * len(levels[f]))
        out[c] = s
    return out


def test_spode_cross_validation_and_scores_recomputed_from_rows():
    result = fit(load_spec(EXAMPLES / "play_tennis_spode.toml"))
    table = pd.read_csv(EXAMPLES / "play_tennis.csv").astype(str)
    levels = {c: sorted(table[c].unique()) for c in table.columns}
    folds = 7
    accuracy = {}
    for sp in FEATURES:
        correct = 0
        for f in range(folds):
            test = table.iloc[[r for r in range(len(table)) if r % folds == f]]
            train = table.iloc[[r for r in range(len(table)) if r % folds != f]]
            for _, row in test.iterrows():
                s = spode_scores(train, row, sp, levels=levels)
                best = max(sorted(s), key=lambda c: s[c])
                correct += best == row["play_tennis"]
        accuracy[sp] = correct / len(table)
    cv = result.posterior.parameters["structure"]["cross_validation"]
    assert cv["accuracy"] == pytest.approx(accuracy)
    chosen = result.posterior.parameters["structure"]["super_parent"]
    assert accuracy[chosen] == max(accuracy.values())
    query = result.posterior.parameters["query"][0]
    expected = spode_scores(table, query["values"], chosen)
    for c, s in expected.items():
        assert query["scores"][c] == pytest.approx(s, rel=1e-12)
    # the network oracles (check) hold the same scores as exact means
    oracle = {m.coords["sunny_cool_high_strong__target"]: m.exact_mean
              for m in result.posterior.marginals if m.var == "joint_sunny_cool_high_strong"}
    assert oracle == pytest.approx(query["scores"], rel=1e-12)
    # a wrong super-parent gives other scores (the comparison can fail)
    other = spode_scores(table, query["values"], "wind")
    assert other["No"] != pytest.approx(query["scores"]["No"], rel=1e-3)


@pytest.mark.slow  # imports pgmpy: seconds
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_tan_tree_equals_pgmpy_tree_search(tmp_path):
    pytest.importorskip("pgmpy")
    import warnings

    from pgmpy.estimators import TreeSearch

    rng = np.random.default_rng(0)
    n = 3000
    c = rng.integers(0, 2, n)
    a = (c + rng.integers(0, 2, n) * (rng.random(n) < 0.3)) % 3
    b = (a + (rng.random(n) < 0.2)) % 3
    d = (c * 2 + (rng.random(n) < 0.25)) % 2
    e = (b + d + (rng.random(n) < 0.4)) % 2
    frame = pd.DataFrame({"c": c, "a": a, "b": b, "d": d, "e": e}).astype(str)
    frame.to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "spec.toml").write_text('model = "semi_naive_bayes"\n[data]\npath = "data.csv"\n'
                                        'target = "c"\n[fit]\nkind = "tan"\nroot = "a"\n')
    result = fit(load_spec(tmp_path / "spec.toml"))
    ours = {frozenset(e) for e in result.posterior.parameters["structure"]["edges"] if "c" not in e}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dag = TreeSearch(frame, root_node="a", n_jobs=1).estimate(
            estimator_type="tan", class_node="c", show_progress=False)
    theirs = {frozenset(e) for e in dag.edges() if "c" not in e}
    assert ours == theirs and len(ours) == 3
    # the directed edges point away from the root
    parents = result.posterior.parameters["structure"]["parents"]
    assert parents["a"] is None and all(parents[f] for f in "bde")
    cmi = result.posterior.parameters["structure"]["conditional_mutual_information"]
    weights = sorted((cmi[x][y], x, y) for x in "abde" for y in "abde" if x < y)
    assert weights[-1][0] > weights[-2][0] > weights[-3][0]  # ties do not decide


def test_glob_stream_equals_one_file_with_cross_validation(tmp_path):
    one = fit(load_spec(EXAMPLES / "play_tennis_spode.toml"))
    table = pd.read_csv(EXAMPLES / "play_tennis.csv")
    (tmp_path / "b").mkdir()
    table.iloc[:5].to_csv(tmp_path / "b" / "0.csv", index=False)
    table.iloc[5:].to_csv(tmp_path / "b" / "1.csv", index=False)
    text = (EXAMPLES / "play_tennis_spode.toml").read_text().replace(
        'path = "play_tennis.csv"', 'path = "b/*.csv"')
    (tmp_path / "spec.toml").write_text(text)
    streamed = fit(load_spec(tmp_path / "spec.toml"), out=tmp_path / "out")
    a, b = streamed.posterior.parameters["structure"], one.posterior.parameters["structure"]
    assert a["super_parent"] == b["super_parent"] and a["parents"] == b["parents"]
    cv_a, cv_b = a["cross_validation"], b["cross_validation"]
    assert cv_a["accuracy"] == cv_b["accuracy"]  # folds by global row index, not by file
    assert cv_a["log_loss"] == pytest.approx(cv_b["log_loss"], rel=1e-12)
    for qa, qb in zip(
        streamed.posterior.parameters["query"], one.posterior.parameters["query"], strict=True
    ):
        assert qa["probabilities"] == pytest.approx(qb["probabilities"], rel=1e-12)


def test_aode_reports_its_super_parents_and_falls_back(tmp_path):
    shutil.copy(EXAMPLES / "play_tennis.csv", tmp_path)
    text = (EXAMPLES / "play_tennis_spode.toml").read_text().replace(
        'kind = "spode"\nfolds = 7', 'kind = "aode"\nm_prime = 5')
    (tmp_path / "spec.toml").write_text(text)
    q = fit(load_spec(tmp_path / "spec.toml")).posterior.parameters["query"][0]
    table = pd.read_csv(tmp_path / "play_tennis.csv")
    expected = [f for f in FEATURES if (table[f] == q["values"][f]).sum() >= 5]
    assert q["super_parents"] == expected and not q["naive_bayes_fallback"]
    (tmp_path / "spec.toml").write_text(text.replace("m_prime = 5", "m_prime = 100"))
    q = fit(load_spec(tmp_path / "spec.toml")).posterior.parameters["query"][0]
    assert q["naive_bayes_fallback"] and q["super_parents"] == []


@pytest.mark.parametrize("old, new, expected", [
    ('folds = 7', 'folds = 7\nsuper_parent = "wind"', r"key 'fit.folds'.*nothing to cross"),
    ('kind = "spode"', 'kind = "tan"', r"key 'fit.folds'.*only applies to kind = 'spode'"),
    ('folds = 7', 'super_parent = "day_of_week"', r"key 'fit.super_parent'.*not a feature"),
    ('kind = "spode"', 'kind = "kdb"', r"key 'fit.kind'.*expected one of"),
    ('folds = 7', 'folds = 1', r"key 'fit.folds'.*>= 2"),
    ('wind = "Strong"', '', r"key 'query\[0\].wind'.*required"),
])
def test_bad_spec_exits_2_naming_the_key(tmp_path, capsys, old, new, expected):
    shutil.copy(EXAMPLES / "play_tennis.csv", tmp_path)
    text = (EXAMPLES / "play_tennis_spode.toml").read_text()
    assert old in text
    (tmp_path / "spec.toml").write_text(text.replace(old, new, 1))
    code = main(["fit", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and re.search(expected, err), err


def test_target_listed_as_a_feature_is_refused(tmp_path):
    from bayescheck.models import SpecError, load_spec

    csv = tmp_path / "d.csv"
    csv.write_text("c,x\na,u\nb,v\n")
    spec = tmp_path / "s.toml"
    spec.write_text(f'model = "semi_naive_bayes"\n[data]\npath = "{csv}"\ntarget = "c"\n'
                    f'features = ["x", "c"]\n')
    with pytest.raises(SpecError, match=r"key 'data\.features'.*target 'c' is also listed"):
        load_spec(spec)


def test_categories_spelt_like_missing_values_are_categories(tmp_path):
    """A category "None" or "NA" is read as written, not as a missing value."""
    table = pd.read_csv(EXAMPLES / "play_tennis.csv", dtype=str)
    table["wind"] = table["wind"].replace({"Weak": "None", "Strong": "NA"})
    table.to_csv(tmp_path / "play_tennis.csv", index=False)
    text = (EXAMPLES / "play_tennis_tan.toml").read_text().replace('wind = "Strong"',
                                                                  'wind = "NA"')
    (tmp_path / "spec.toml").write_text(text)
    result = fit(load_spec(tmp_path / "spec.toml"))
    assert result.posterior.parameters["categories"]["wind"] == ["NA", "None"]
    assert result.posterior.parameters["query"][0]["unseen"] == []
    assert result.record.n_rows == 14


def test_single_category_feature_is_a_point_mass_in_tan(tmp_path):
    # A feature with one category has P(x | parents) = 1: the TAN's class probabilities are
    # those without it, and its CPT (the point mass at 1) has no marginal to compare.
    table = pd.read_csv(EXAMPLES / "play_tennis.csv").assign(site="A")
    table.to_csv(tmp_path / "play_tennis.csv", index=False)
    base = (EXAMPLES / "play_tennis_tan.toml").read_text()
    (tmp_path / "without.toml").write_text(base)
    (tmp_path / "with.toml").write_text(
        base.replace('"wind"]', '"wind", "site"]').replace('wind = "Strong"',
                                                         'wind = "Strong"\nsite = "A"'))
    with_site = fit(load_spec(tmp_path / "with.toml"))
    without = fit(load_spec(tmp_path / "without.toml"))
    a, b = with_site.posterior.parameters["query"][0], without.posterior.parameters["query"][0]
    assert a["values"]["site"] == "A" and "site" not in b["values"]
    for c in ("No", "Yes"):
        assert a["probabilities"][c] == pytest.approx(b["probabilities"][c], rel=0, abs=1e-12)
    names = {m.var for m in with_site.posterior.marginals}
    assert "cpt_site" not in names and "cpt_wind" in names
    assert all(
        np.isfinite(m.dist.mean()) for m in with_site.posterior.marginals if m.dist is not None
    )
