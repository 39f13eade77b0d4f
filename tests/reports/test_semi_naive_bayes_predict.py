"""`bayescheck predict` and `[decision]` for semi-naive Bayes: class probabilities equal to a
direct count of the training rows (SPODE, TAN, AODE), minimum-risk decisions under the spec's
loss and under --loss, and bad new data or a mismatched fit that exits 2 naming the culprit."""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.reports.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "semi_naive_bayes"
FEATURES = ["outlook", "temperature", "humidity", "wind"]
TARGET = "play_tennis"
DECISION = """
[decision]
classes = ["No", "Yes"]
options = ["stay", "play", "ask"]
loss = [[0.0, 4.0], [6.0, 0.0], [1.5, 1.5]]
"""


def _copy(tmp_path: Path, name: str, extra: str = "") -> Path:
    shutil.copy(EXAMPLES / "play_tennis.csv", tmp_path / "play_tennis.csv")
    spec = tmp_path / name
    spec.write_text((EXAMPLES / name).read_text().replace("[sampling]", extra + "\n[sampling]"))
    return spec


def _fit(spec: Path, out: Path) -> dict:
    assert main(["fit", str(spec), "--out", str(out), "--quiet"]) == 0
    return json.loads((out / "posterior.json").read_text())


def _predict(spec, fit_dir, tmp_path, new: pd.DataFrame, *extra) -> pd.DataFrame:
    new.to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(spec), "--model-from", str(fit_dir), "--data",
                 str(tmp_path / "new.csv"), "--out", str(tmp_path / "p.csv"), *extra]) == 0
    return pd.read_csv(tmp_path / "p.csv", dtype={"decision": str})


def _laplace(num, den, r, a=1.0):
    return (num + a) / (den + r * a)


def network_joint(train, row, parents, a=1.0):
    """P(c) prod_j P(x_j | c, x_pa(j)) at the Laplace posterior means, counted here."""
    levels = {c: sorted(train[c].unique()) for c in train.columns}
    out = {}
    for c in levels[TARGET]:
        rows = train[train[TARGET] == c]
        s = _laplace(len(rows), len(train), len(levels[TARGET]), a)
        for f in FEATURES:
            given = rows if parents[f] is None else rows[rows[parents[f]] == row[parents[f]]]
            s *= _laplace((given[f] == row[f]).sum(), len(given), len(levels[f]), a)
        out[c] = s
    return out


def aode_joint(train, row, m_prime, a=1.0):
    """mean over qualifying super-parents i of P(c, x_i) prod_{j != i} P(x_j | c, x_i)."""
    levels = {c: sorted(train[c].unique()) for c in train.columns}
    K = len(levels[TARGET])
    supers = [i for i in FEATURES if (train[i] == row[i]).sum() >= m_prime]
    out = {}
    for c in levels[TARGET]:
        rows = train[train[TARGET] == c]
        total = 0.0
        for i in supers:
            rows_i = rows[rows[i] == row[i]]
            s = _laplace(len(rows_i), len(train), K * len(levels[i]), a)
            for j in FEATURES:
                if j != i:
                    s *= _laplace((rows_i[j] == row[j]).sum(), len(rows_i), len(levels[j]), a)
            total += s
        out[c] = total / len(supers)
    return out


def _new_rows():
    rng = np.random.default_rng(3)
    train = pd.read_csv(EXAMPLES / "play_tennis.csv", dtype=str)
    levels = {f: sorted(train[f].unique()) for f in FEATURES}
    rows = [{f: rng.choice(levels[f]) for f in FEATURES} for _ in range(12)]
    return train, pd.DataFrame(rows, columns=FEATURES)


@pytest.mark.parametrize("name", ["play_tennis_spode.toml", "play_tennis_tan.toml",
                                  "play_tennis_aode.toml"])
def test_probabilities_and_decisions_equal_a_direct_count(tmp_path, name):
    spec = _copy(tmp_path, name, DECISION)
    post = _fit(spec, tmp_path / "fit")
    train, new = _new_rows()
    got = _predict(spec, tmp_path / "fit", tmp_path, new)
    structure = post["parameters"]["structure"]
    loss = np.array([[0.0, 4.0], [6.0, 0.0], [1.5, 1.5]])
    for r, row in new.iterrows():
        if structure["kind"] == "aode":
            joint = aode_joint(train, row, m_prime=5)
        else:
            joint = network_joint(train, row, structure["parents"])
        p = np.array([joint["No"], joint["Yes"]]) / (joint["No"] + joint["Yes"])
        assert got.loc[r, ["p_No", "p_Yes"]].to_numpy(float) == pytest.approx(p, rel=1e-12)
        risk = loss @ p
        assert got.loc[r, ["risk_stay", "risk_play", "risk_ask"]].to_numpy(float) == \
            pytest.approx(risk, rel=1e-12)
        assert got.loc[r, "decision"] == ["stay", "play", "ask"][int(np.argmin(risk))]
        assert got.loc[r, FEATURES].tolist() == row.tolist()
    # the spec's query rows get the same decision as predict gives them
    q = post["parameters"]["query"][0]
    again = _predict(spec, tmp_path / "fit", tmp_path,
                     pd.DataFrame([q["values"]], columns=FEATURES))
    assert again.loc[0, "decision"] == q["decision"]
    assert again.loc[0, "p_Yes"] == pytest.approx(q["probabilities"]["Yes"], rel=1e-12)


def test_loss_file_overrides_the_spec_and_zero_one_is_the_most_probable(tmp_path):
    spec = _copy(tmp_path, "play_tennis_tan.toml")
    _fit(spec, tmp_path / "fit")
    _, new = _new_rows()
    plain = _predict(spec, tmp_path / "fit", tmp_path, new)
    most = np.where(plain["p_Yes"] > plain["p_No"], "Yes", "No")
    assert plain["decision"].tolist() == most.tolist()
    (tmp_path / "loss.csv").write_text("option,Yes,No\ngo,0,10\nhome,1,0\n")
    table = _predict(spec, tmp_path / "fit", tmp_path, new, "--loss", str(tmp_path / "loss.csv"))
    risk_go, risk_home = 10 * table["p_No"], table["p_Yes"]
    assert table["risk_go"].to_numpy() == pytest.approx(risk_go.to_numpy(), rel=1e-12)
    assert table["decision"].tolist() == np.where(risk_go <= risk_home, "go", "home").tolist()


def test_unseen_category_is_left_out_with_a_warning(tmp_path, capsys):
    spec = _copy(tmp_path, "play_tennis_spode.toml").read_text()
    spec = spec.replace("folds = 7", 'super_parent = "outlook"')
    (tmp_path / "s.toml").write_text(spec)
    _fit(tmp_path / "s.toml", tmp_path / "fit")
    capsys.readouterr()
    train, _ = _new_rows()
    new = pd.DataFrame([{"outlook": "Sunny", "temperature": "Cool", "humidity": "High",
                         "wind": "Gale"}])
    got = _predict(tmp_path / "s.toml", tmp_path / "fit", tmp_path, new)
    assert "column 'wind', row 1: category 'Gale' never seen" in capsys.readouterr().err
    parents = {f: (None if f == "outlook" else "outlook") for f in FEATURES}
    joint = network_joint(train, new.iloc[0].replace("Gale", "Weak"), parents)
    weak_wind = {c: _laplace(((train[TARGET] == c) & (train.outlook == "Sunny")
                              & (train.wind == "Weak")).sum(),
                             ((train[TARGET] == c) & (train.outlook == "Sunny")).sum(), 2)
                 for c in ("No", "Yes")}
    left_out = {c: joint[c] / weak_wind[c] for c in joint}
    assert got.loc[0, "p_Yes"] == pytest.approx(
        left_out["Yes"] / (left_out["Yes"] + left_out["No"]), rel=1e-12)


@pytest.mark.parametrize("new, extra, expected", [
    ("outlook,temperature,humidity\nSunny,Hot,High\n", (), r"column 'wind'.*missing column"),
    ("outlook,temperature,humidity,wind\nSunny,Hot,High,Weak\nRain,,High,Weak\n", (),
     r"column 'temperature', row 2: missing value"),
    ("outlook,temperature,humidity,wind\n", (), r"no rows|header but no rows"),
    ("outlook,temperature,humidity,wind\nSunny,Hot,High,Weak\n", ("--loss", "LOSS"),
     r"loss.csv.*one column per class \['No', 'Yes'\]"),
])
def test_bad_new_data_exits_2_naming_it(tmp_path, capsys, new, extra, expected):
    spec = _copy(tmp_path, "play_tennis_tan.toml")
    _fit(spec, tmp_path / "fit")
    (tmp_path / "new.csv").write_text(new)
    (tmp_path / "loss.csv").write_text("option,Yes,Maybe\ngo,0,1\n")
    extra = [str(tmp_path / "loss.csv") if e == "LOSS" else e for e in extra]
    code = main(["predict", str(spec), "--model-from", str(tmp_path / "fit"), "--data",
                 str(tmp_path / "new.csv"), *extra])
    err = capsys.readouterr().err
    assert code == 2, err
    assert __import__("re").search(expected, err), err


def test_a_fit_of_another_kind_or_a_wrong_decision_is_refused(tmp_path, capsys):
    tan = _copy(tmp_path, "play_tennis_tan.toml")
    _fit(tan, tmp_path / "fit")
    aode = _copy(tmp_path, "play_tennis_aode.toml")
    (tmp_path / "new.csv").write_text("outlook,temperature,humidity,wind\nSunny,Hot,High,Weak\n")
    code = main(["predict", str(aode), "--model-from", str(tmp_path / "fit"), "--data",
                 str(tmp_path / "new.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "kind = 'tan'; the spec has 'aode'" in err, err
    bad = _copy(tmp_path, "play_tennis_tan.toml", DECISION.replace('"No", "Yes"', '"N", "Y"'))
    code = main(["fit", str(bad), "--out", str(tmp_path / "f2"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "key 'decision.classes'" in err and "['No', 'Yes']" in err, err
