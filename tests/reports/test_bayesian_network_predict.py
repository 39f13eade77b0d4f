"""`bayescheck predict` for bayesian_network: P(target | the row's observed cells) per new row.

The Asia example (1000 cases forward-sampled from the textbook network) is fitted with
`bayescheck fit`; the predictions must equal pgmpy's VariableElimination on pgmpy's own
DiscreteBayesianEstimator CPTs (same Dirichlet prior) and
`BayesianNetworkClassifier.predict_proba` to 1e-12, rows with empty cells included; a changed
CPT must give other numbers. Bad new data exits 2 naming file, column and row.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.reports.cli import main
from bayescheck.reports.posterior_file import sealed

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ASIA = EXAMPLES / "bayesian_network"
NODES = ["asia", "smoke", "tub", "lung", "bronc", "either", "xray", "dysp"]

# new cases: complete, partly observed (empty cells summed out), and nothing observed
NEW = pd.DataFrame([
    dict(asia="no", smoke="yes", tub="no", bronc="no", either="no", xray="no", dysp="no"),
    dict(asia="yes", smoke="", tub="", bronc="", either="", xray="yes", dysp="yes"),
    dict(asia="", smoke="yes", tub="", bronc="yes", either="", xray="", dysp=""),
    dict(asia="no", smoke="no", tub="", bronc="", either="yes", xray="", dysp="no"),
    dict(asia="", smoke="", tub="", bronc="", either="", xray="", dysp=""),
], columns=[n for n in NODES if n != "lung"])


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """The Asia spec and data in a folder, fitted once; returns (folder, spec, fit folder)."""
    root = tmp_path_factory.mktemp("asia")
    for name in ("asia.toml", "asia.csv"):
        shutil.copy(ASIA / name, root / name)
    assert main(["fit", str(root / "asia.toml"), "--out", str(root / "fit"), "--quiet"]) == 0
    return root, root / "asia.toml", root / "fit"


def _predict(fitted, new: pd.DataFrame, *extra, name="new.csv") -> pd.DataFrame:
    root, spec, fit_dir = fitted
    new.to_csv(root / name, index=False)
    out = root / f"{name}.predictions.csv"
    assert main(["predict", str(spec), "--model-from", str(fit_dir), "--data",
                 str(root / name), "--out", str(out), *extra]) == 0
    return pd.read_csv(out, dtype={n: str for n in NODES}, keep_default_na=False)


def _refuse(fitted, new: pd.DataFrame, capsys, *extra, spec=None) -> str:
    root, spec0, fit_dir = fitted
    new.to_csv(root / "bad.csv", index=False)
    capsys.readouterr()
    code = main(["predict", str(spec or spec0), "--model-from", str(fit_dir), "--data",
                 str(root / "bad.csv"), *extra])
    err = capsys.readouterr().err
    assert code == 2, err
    return err


# ---- against pgmpy ------------------------------------------------------------------------

def _pgmpy_model():
    pytest.importorskip("pgmpy")
    from bayescheck.models import load_spec
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteBayesianEstimator

    spec = load_spec(ASIA / "asia.toml")
    data = pd.read_csv(ASIA / "asia.csv", dtype=str)
    model = DiscreteBayesianNetwork(list(spec.model.edges))
    model.add_nodes_from(spec.model.nodes)
    return model.fit(data, estimator=DiscreteBayesianEstimator(prior_type="dirichlet",
                                                               pseudo_counts=1))


def pgmpy_mismatches(table: pd.DataFrame, new: pd.DataFrame, targets, model,
                     rtol=1e-9) -> list[str]:
    """Predicted probabilities (and log P(observed)) that differ from pgmpy's elimination."""
    from pgmpy.inference import VariableElimination

    ve = VariableElimination(model)
    bad = []
    for i, row in new.iterrows():
        evidence = {k: v for k, v in row.items() if v != "" and k not in targets}
        for t in targets:
            factor = ve.query([t], evidence=evidence or None, show_progress=False)
            for s in ("no", "yes"):
                ours, theirs = table[f"p_{t}_{s}"].iloc[i], factor.get_value(**{t: s})
                if not np.isclose(ours, theirs, rtol=rtol, atol=1e-15):
                    bad.append(f"row {i + 1} P({t}={s}): {ours} != {theirs}")
        if evidence:
            joint = ve.query(list(evidence), joint=True, show_progress=False)
            theirs = np.log(joint.get_value(**evidence))
        else:
            theirs = 0.0
        if not np.isclose(table["log_p_observed"].iloc[i], theirs, rtol=rtol, atol=1e-12):
            bad.append(f"row {i + 1} log P(observed): {table['log_p_observed'].iloc[i]} != "
                       f"{theirs}")
    return bad


@pytest.mark.slow  # pgmpy's variable elimination row by row: seconds
@pytest.mark.filterwarnings(  # pgmpy's current API only; its own imports' warning aside
    "error::FutureWarning", "error::DeprecationWarning",
    "ignore:`pgmpy.estimators.StructureScore` is deprecated:FutureWarning")
def test_predictions_equal_pgmpy_variable_elimination(fitted):
    model = _pgmpy_model()
    one = _predict(fitted, NEW, "--target", "lung")
    assert list(one.columns[:1]) == ["row"] and one["row"].tolist() == [1, 2, 3, 4, 5]
    assert pgmpy_mismatches(one, NEW, ["lung"], model) == []
    assert (one["most_probable_lung"] == np.where(one["p_lung_yes"] > one["p_lung_no"],
                                                  "yes", "no")).all()
    # two targets: each predicted from the non-target cells only (either's column is ignored)
    two_new = NEW.drop(columns=["either"])
    two = _predict(fitted, two_new.assign(either=""), "--target", "lung", "--target", "either")
    assert pgmpy_mismatches(two, two_new.assign(either=""), ["lung", "either"], model) == []


@pytest.mark.filterwarnings(  # pgmpy's current API only; its own imports' warning aside
    "error::FutureWarning", "error::DeprecationWarning",
    "ignore:`pgmpy.estimators.StructureScore` is deprecated:FutureWarning")
@pytest.mark.slow  # the negative of the pgmpy comparison above: pgmpy's inference, seconds
def test_a_changed_cpt_or_another_target_is_flagged(fitted):
    model = _pgmpy_model()
    root, spec, fit_dir = fitted
    posterior = json.loads((fit_dir / "posterior.json").read_text())
    mean = np.asarray(posterior["parameters"]["cpts"]["lung"]["mean"])
    mean[1] = [0.8, 0.2]  # P(lung | smoke = yes), was about (0.9, 0.1)
    posterior["parameters"]["cpts"]["lung"]["mean"] = mean.tolist()
    (root / "changed").mkdir(exist_ok=True)
    (root / "changed" / "posterior.json").write_text(json.dumps(sealed(posterior)))
    NEW.to_csv(root / "new.csv", index=False)
    assert main(["predict", str(spec), "--model-from", str(root / "changed"), "--data",
                 str(root / "new.csv"), "--target", "lung", "--out",
                 str(root / "changed.csv")]) == 0
    changed = pd.read_csv(root / "changed.csv", keep_default_na=False)
    assert len(pgmpy_mismatches(changed, NEW, ["lung"], model)) >= 3
    # the answers for `either` are not those for `lung`: the comparison sees the target
    alt = NEW.assign(either="", lung="")
    either = _predict(fitted, alt, "--target", "either").rename(
        columns={"p_either_no": "p_lung_no", "p_either_yes": "p_lung_yes"})
    assert len(pgmpy_mismatches(either, alt, ["lung"], model)) >= 3


def test_the_default_targets_are_the_specs_queries(fitted):
    table = _predict(fitted, NEW.drop(columns=["tub", "bronc"]))
    for t in ("lung", "tub", "bronc"):  # asia.toml's [[query]] targets, in order
        assert f"most_probable_{t}" in table
    assert "p_dysp_yes" not in table and "p_either_yes" not in table


# ---- against the scikit-learn estimator ---------------------------------------------------

def test_predictions_equal_the_estimators_predict_proba(fitted):
    pytest.importorskip("sklearn")
    from bayescheck.estimators import BayesianNetworkClassifier

    data = pd.read_csv(ASIA / "asia.csv", dtype=str)
    features = [n for n in NODES if n != "lung"]
    code = {"no": 0.0, "yes": 1.0, "": np.nan}
    est = BayesianNetworkClassifier.from_spec(ASIA / "asia.toml", target="lung")
    est.fit(data[features].replace(code).astype(float), data["lung"])
    rng = np.random.default_rng(3)
    new = data.sample(200, random_state=1).reset_index(drop=True)
    new = new.mask(rng.random(new.shape) < 0.3, "")  # about 30 % of the cells empty
    table = _predict(fitted, new, "--target", "lung", name="sampled.csv")
    proba = est.predict_proba(new[features].replace(code).astype(float))
    assert list(est.classes_) == ["no", "yes"]
    np.testing.assert_allclose(table[["p_lung_no", "p_lung_yes"]].to_numpy(), proba,
                               rtol=1e-12, atol=1e-15)
    assert (table["most_probable_lung"] == est.classes_[proba.argmax(axis=1)]).all()


# ---- bad new data -------------------------------------------------------------------------

def test_the_target_column_is_optional_and_its_values_are_not_used(fitted, capsys):
    capsys.readouterr()
    with_values = _predict(fitted, NEW.assign(lung=["yes", "no", "", "yes", "no"]),
                           "--target", "lung", name="with_lung.csv")
    err = capsys.readouterr().err
    assert "with_lung.csv, column 'lung', row 1: the target's values are not used" in err
    without = _predict(fitted, NEW, "--target", "lung")
    cols = ["p_lung_no", "p_lung_yes", "log_p_observed"]
    np.testing.assert_array_equal(with_values[cols].to_numpy(), without[cols].to_numpy())


def test_bad_new_data_exits_2_naming_file_column_and_row(fitted, capsys):
    err = _refuse(fitted, NEW.drop(columns=["xray"]), capsys, "--target", "lung")
    assert "bad.csv, column 'xray'" in err and "missing column" in err
    err = _refuse(fitted, NEW.assign(smoke=["yes", "no", "maybe", "no", ""]), capsys,
                  "--target", "lung")
    assert "bad.csv, column 'smoke', row 3" in err and "'maybe'" in err
    err = _refuse(fitted, NEW, capsys, "--target", "cancer")
    assert "--target 'cancer': not a node of the spec" in err
    err = _refuse(fitted, NEW.iloc[:0], capsys, "--target", "lung")
    assert "bad.csv: file has a header but no rows" in err


def test_target_without_queries_and_for_other_models(fitted, capsys, tmp_path):
    root, spec, fit_dir = fitted
    bare = root / "bare.toml"
    bare.write_text(spec.read_text().split("[[query]]")[0])
    err = _refuse(fitted, NEW, capsys, spec=bare)
    assert "bare.toml" in err and "--target NODE" in err
    coin = EXAMPLES / "naive_bayes"
    specs = sorted(coin.glob("*.toml"))
    err = _refuse(fitted, NEW, capsys, "--target", "lung", spec=specs[0])
    assert "--target applies to bayesian_network only, not to 'naive_bayes'" in err


def test_after_em_the_plug_in_answer_equals_the_estimators(tmp_path):
    pytest.importorskip("sklearn")
    from bayescheck.estimators import BayesianNetworkClassifier

    data = pd.read_csv(ASIA / "asia.csv", dtype=str)
    holes = data.mask(np.random.default_rng(0).random(data.shape) < 0.05)
    holes["lung"] = data["lung"]
    holes.to_csv(tmp_path / "asia.csv", index=False)
    (tmp_path / "asia.toml").write_text((ASIA / "asia.toml").read_text().split("[[query]]")[0])
    assert main(["fit", str(tmp_path / "asia.toml"), "--out", str(tmp_path / "fit"),
                 "--quiet"]) == 0
    posterior = json.loads((tmp_path / "fit" / "posterior.json").read_text())
    assert "em" in posterior["parameters"]  # the CPTs are EM estimates
    table = _predict((tmp_path, tmp_path / "asia.toml", tmp_path / "fit"), NEW, "--target",
                     "lung")
    features = [n for n in NODES if n != "lung"]
    code = {"no": 0.0, "yes": 1.0, "": np.nan}
    est = BayesianNetworkClassifier.from_spec(tmp_path / "asia.toml", target="lung")
    est.fit(holes[features].fillna("").replace(code).astype(float), holes["lung"])
    proba = est.predict_proba(NEW[features].replace(code).astype(float))
    # both run the same EM engine on the same cells (measured: 1.4e-15 apart)
    np.testing.assert_allclose(table[["p_lung_no", "p_lung_yes"]].to_numpy(), proba,
                               rtol=1e-12)
    # and they are not the complete-data answer of the module's fit
    assert not np.allclose(proba, est.fit(data[features].replace(code).astype(float),
                                          data["lung"]).predict_proba(
        NEW[features].replace(code).astype(float)), rtol=1e-6)


def test_a_fit_of_other_edges_or_no_data_is_refused(fitted, capsys):
    root, spec, fit_dir = fitted
    other = root / "other.toml"
    other.write_text(spec.read_text().replace('["bronc", "dysp"], ', ""))
    err = _refuse(fitted, NEW, capsys, "--target", "lung", spec=other)
    assert "posterior.json: was fitted with other nodes or edges" in err and "refit" in err
    capsys.readouterr()
    assert main(["predict", str(spec), "--model-from", str(fit_dir), "--target", "lung"]) == 2
    assert "needs --data NEW" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.filterwarnings(  # pgmpy's current API only; its own imports' warning aside
    "error::FutureWarning", "error::DeprecationWarning",
    "ignore:`pgmpy.estimators.StructureScore` is deprecated:FutureWarning")
def test_child_network_with_missing_cells_equals_pgmpy(tmp_path):
    """pgmpy's Child network (20 nodes, up to 6 states), forward-sampled, BDeu prior."""
    pytest.importorskip("pgmpy")
    from tests.inference.test_bayesian_network_pgmpy import (
        example_network,
        pgmpy_fit,
        sampled_spec,
    )

    child = example_network("child")
    spec, data = sampled_spec(tmp_path, child, 2000, 5, "equivalent_sample_size = 5.0")
    assert main(["fit", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "fit"),
                 "--quiet"]) == 0
    reference = pgmpy_fit(child, data, prior_type="BDeu", equivalent_sample_size=5)
    new = child.simulate(12, seed=9, show_progress=False).astype(str)
    new = new.mask(np.random.default_rng(2).random(new.shape) < 0.4, "")
    targets = ["Disease", "LungParench"]
    new[targets] = ""
    new.to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(tmp_path / "spec.toml"), "--model-from", str(tmp_path / "fit"),
                 "--data", str(tmp_path / "new.csv"), "--target", targets[0], "--target",
                 targets[1], "--out", str(tmp_path / "p.csv")]) == 0
    table = pd.read_csv(tmp_path / "p.csv", dtype=str, keep_default_na=False)
    from pgmpy.inference import VariableElimination

    ve = VariableElimination(reference)
    for i, row in new.iterrows():
        evidence = {k: v for k, v in row.items() if v != ""}
        for t in targets:
            factor = ve.query([t], evidence=evidence or None, show_progress=False)
            for s in factor.state_names[t]:
                np.testing.assert_allclose(float(table[f"p_{t}_{s}"].iloc[i]),
                                           factor.get_value(**{t: s}), rtol=1e-9, atol=1e-15)


def test_the_python_predict_takes_target(fitted):
    import bayescheck

    root, spec, fit_dir = fitted
    # in a frame a missing cell is NaN or None (an empty string would be a state)
    table = bayescheck.predict(spec, fit_dir, NEW.replace("", np.nan), target="lung")
    cli = _predict(fitted, NEW, "--target", "lung")
    np.testing.assert_array_equal(table[["p_lung_no", "p_lung_yes"]].to_numpy(),
                                  cli[["p_lung_no", "p_lung_yes"]].to_numpy())
    other = bayescheck.predict(spec, fit_dir, NEW.replace("", None).assign(lung=None),
                               target=["either"])
    assert "p_lung_no" not in other and "p_either_no" in other


def test_a_row_of_probability_zero_is_refused_naming_it(fitted, capsys):
    root, spec, fit_dir = fitted
    posterior = json.loads((fit_dir / "posterior.json").read_text())
    posterior["parameters"]["cpts"]["lung"]["mean"][1] = [1.0, 0.0]  # lung never, if smoke
    (root / "zero").mkdir(exist_ok=True)
    (root / "zero" / "posterior.json").write_text(json.dumps(sealed(posterior)))
    new = NEW.assign(lung=["no", "", "yes", "yes", ""])  # row 3: smoke = yes, lung = yes
    new.to_csv(root / "zero.csv", index=False)
    capsys.readouterr()
    assert main(["predict", str(spec), "--model-from", str(root / "zero"), "--data",
                 str(root / "zero.csv"), "--target", "either"]) == 2
    assert "zero.csv, row 3: the row's observed cells have probability 0" in \
        capsys.readouterr().err
