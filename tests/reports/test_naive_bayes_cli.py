"""`bayescheck fit` and `bayescheck predict` for naive Bayes and the Bayes-rule calculator:
the output files, minimum-risk decisions, and bad input that exits 2 naming what is wrong."""

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.reports.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NB = EXAMPLES / "naive_bayes"


@pytest.fixture(scope="module")
def tennis_fit(tmp_path_factory):
    out = tmp_path_factory.mktemp("tennis")
    assert main(["fit", str(NB / "play_tennis.toml"), "--out", str(out), "--quiet"]) == 0
    return out


NEW = "outlook,temperature,humidity,wind\nSunny,Cool,High,Strong\nOvercast,Hot,Normal,Weak\n"


def predict(tmp_path, fit_dir, data=NEW, loss=None, spec=NB / "play_tennis.toml"):
    (tmp_path / "new.csv").write_text(data)
    args = ["predict", str(spec), "--model-from", str(fit_dir), "--data",
            str(tmp_path / "new.csv"), "--out", str(tmp_path / "pred.csv")]
    if loss is not None:
        (tmp_path / "loss.csv").write_text(loss)
        args += ["--loss", str(tmp_path / "loss.csv")]
    return main(args)


def test_fit_writes_query_probabilities(tennis_fit, capsys):
    post = json.loads((tennis_fit / "posterior.json").read_text())
    assert post["model"] == "naive_bayes"
    q = post["parameters"]["query"][0]
    assert q["decision"] == "No" and set(q["risk"]) == {"No", "Yes"}
    assert sum(q["probabilities"].values()) == pytest.approx(1.0)
    assert any("decide No" in note for note in post["notes"])


def test_predict_matches_fit_and_handles_an_unseen_category(tennis_fit, tmp_path, capsys):
    data = NEW + "Foggy,Cool,High,Strong\n"
    assert predict(tmp_path, tennis_fit, data) == 0
    err = capsys.readouterr().err
    assert "column 'outlook', row 3: category 'Foggy' never seen in training" in err
    table = pd.read_csv(tmp_path / "pred.csv")
    post = json.loads((tennis_fit / "posterior.json").read_text())
    q = post["parameters"]["query"][0]
    assert table.loc[0, "p_No"] == pytest.approx(q["probabilities"]["No"], rel=1e-12)
    assert list(table["decision"][:2]) == ["No", "Yes"]
    np.testing.assert_allclose(table["p_No"] + table["p_Yes"], 1.0)
    # zero-one loss: the risk of an option is 1 - its probability
    np.testing.assert_allclose(table["risk_No"], table["p_Yes"])
    # the unseen category says nothing: the other features decide, with finite probabilities
    assert 0 < table.loc[2, "p_No"] < 1


def test_predict_with_a_loss_file_moves_the_decision(tennis_fit, tmp_path):
    # missing a Yes day costs 50 times more than a wasted trip
    loss = "option,Yes,No\nNo,50,0\nYes,0,1\n"
    assert predict(tmp_path, tennis_fit, loss=loss) == 0
    table = pd.read_csv(tmp_path / "pred.csv")
    assert table.loc[0, "p_No"] > 0.5 and table.loc[0, "decision"] == "Yes"
    np.testing.assert_allclose(table["risk_No"], 50 * table["p_Yes"])
    np.testing.assert_allclose(table["risk_Yes"], table["p_No"])


@pytest.mark.parametrize("loss, message", [
    ("option,Yes\nNo,2\nYes,0\n", r"one column per class \['No', 'Yes'\].*shape \(2, 1\)"),
    ("option,Yes,No,Maybe\nNo,1,0,1\nYes,0,1,1\n", "one column per class"),
    ("option,Yes,No\nNo,-2,0\nYes,0,1\n", "column 'Yes', row 1: expected a finite non-negative"),
    ("option,Yes,No\nNo,x,0\nYes,0,1\n", "column 'Yes', row 1: expected a finite non-negative"),
])
def test_bad_loss_matrix_exits_2(tennis_fit, tmp_path, capsys, loss, message):
    assert predict(tmp_path, tennis_fit, loss=loss) == 2
    err = capsys.readouterr().err
    assert "loss.csv" in err
    assert re.search(message, err), err


def test_predict_bad_data_exits_2(tennis_fit, tmp_path, capsys):
    assert predict(tmp_path, tennis_fit, "outlook,temperature,wind\nSunny,Cool,Strong\n") == 2
    assert "column 'humidity': missing column" in capsys.readouterr().err
    assert predict(tmp_path, tennis_fit, NEW + "Sunny,,High,Weak\n") == 2
    assert "column 'temperature', row 3: missing value" in capsys.readouterr().err


def test_predict_without_a_fit_exits_2(tmp_path, capsys):
    assert predict(tmp_path, tmp_path / "nothing") == 2
    assert "posterior.json: not found; run 'bayescheck fit" in capsys.readouterr().err


def test_single_row_class_for_ml_gaussian_exits_2(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("x,y\n1.0,a\n2.0,a\n5.0,b\n")
    (tmp_path / "s.toml").write_text('model = "naive_bayes"\n[data]\npath = "d.csv"\n'
                                     'target = "y"\nfeatures_kind = "gaussian"\n'
                                     '[prior]\nsmoothing = false\n')
    code = main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 2
    err = capsys.readouterr().err
    assert "column 'y'" in err and "class 'b'" in err and "a single row" in err


def test_bad_decision_in_spec_exits_2(tmp_path, capsys):
    shutil.copy(NB / "cells.csv", tmp_path / "cells.csv")
    body = (NB / "cells_decision.toml").read_text().replace(
        "[0.0, 50.0]]", "[0.0, 50.0], [1.0, 1.0]]")
    (tmp_path / "s.toml").write_text(body)
    assert main(["fit", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "key 'decision.loss'" in err and "shape (2, 2)" in err and "(3, 2)" in err


def test_predict_refuses_another_model(tmp_path, capsys):
    code = main(["predict", str(EXAMPLES / "bayes_rule" / "disease.toml"), "--model-from",
                 str(tmp_path), "--data", str(tmp_path / "x.csv")])
    assert code == 2
    err = capsys.readouterr().err
    assert "predict needs one of the models" in err and "'bayes_rule'" in err


def test_bayes_rule_fit(tmp_path, capsys):
    code = main(["fit", str(EXAMPLES / "bayes_rule" / "disease.toml"), "--out", str(tmp_path),
                 "--quiet"])
    assert code == 0
    assert "P(cancer | positive test) = 0.2085" in capsys.readouterr().out
    post = json.loads((tmp_path / "posterior.json").read_text())
    p = post["parameters"]
    exact = p["joint"]["cancer"] / p["evidence"]
    assert p["posterior"]["mean"]["cancer"] == pytest.approx(exact, rel=1e-12)
