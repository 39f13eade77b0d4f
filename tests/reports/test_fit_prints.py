"""What `bayescheck fit` prints is what is used: with plug-in naive Bayes settings the printed
marginals are labelled as the Bayesian model's (what `check` compares) and the plug-in values
that the predictions use are printed, labelled, checked against counts made here with pandas."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.reports.cli import main

NB = Path(__file__).resolve().parents[2] / "examples" / "naive_bayes"
HEADING = "posterior marginals of the declared Bayesian model"
PLUG_IN = "use these plug-in values, not the marginals above"


def _fit(spec: Path, out: Path, capsys) -> list[str]:
    assert main(["fit", str(spec), "--out", str(out), "--quiet"]) == 0
    return capsys.readouterr().out.splitlines()


def _plug_in(lines: list[str]) -> dict[str, str]:
    found = [re.match(r"\s+plug-in (\S+\[[^\]]*\])\s+(.*)$", line) for line in lines]
    return {m.group(1): m.group(2) for m in found if m}


def test_ml_tennis_prints_the_frequencies_the_predictions_use(tmp_path, capsys):
    lines = _fit(NB / "play_tennis_ml.toml", tmp_path, capsys)
    heading = next(i for i, line in enumerate(lines) if HEADING in line)
    first_marginal = next(i for i, line in enumerate(lines) if "class_weight[No]" in line)
    assert heading == first_marginal - 1 and "what check compares" in lines[heading]
    assert any(PLUG_IN in line and "maximum-likelihood class frequencies" in line
               for line in lines)
    printed = _plug_in(lines)
    data = pd.read_csv(NB / "play_tennis.csv")
    counts = data["play_tennis"].value_counts()
    expected = {f"class_prior[{c}]": counts[c] / len(data) for c in counts.index}
    for f in ("outlook", "temperature", "humidity", "wind"):
        table = pd.crosstab(data["play_tennis"], data[f])
        for c in table.index:
            for v in table.columns:
                expected[f"p_{f}[{c}, {v}]"] = table.loc[c, v] / counts[c]
    assert set(printed) == set(expected)
    for key, value in expected.items():
        assert float(printed[key]) == pytest.approx(value, rel=1e-5)  # printed with 6 digits
    # the printed plug-in values give the query scores the predictions report
    post = json.loads((tmp_path / "posterior.json").read_text())
    query = post["parameters"]["query"][0]
    for c in ("No", "Yes"):
        score = expected[f"class_prior[{c}]"] * np.prod(
            [expected[f"p_{f}[{c}, {v}]"] for f, v in query["values"].items()])
        assert query["scores"][c] == pytest.approx(score, rel=1e-12)
    assert post["notes"][0].startswith("the predictions (query probabilities")


def test_bayesian_tennis_prints_no_plug_in_block(tmp_path, capsys):
    lines = _fit(NB / "play_tennis.toml", tmp_path, capsys)
    assert not any(HEADING in line or PLUG_IN in line for line in lines)
    assert _plug_in(lines) == {}


def test_ml_gaussian_features_print_the_ml_mean_and_variance(tmp_path, capsys):
    text = (NB / "cells.toml").read_text().replace('path = "cells.csv"',
                                                   f'path = {json.dumps(str(NB / "cells.csv"))}')
    text = re.sub(r"\[prior\]\n(.*\n)*?\n", "[prior]\nsmoothing = false\n\n", text, count=1)
    (tmp_path / "cells_ml.toml").write_text(text)
    lines = _fit(tmp_path / "cells_ml.toml", tmp_path / "out", capsys)
    assert any("Gaussian features = maximum-likelihood Normal" in line for line in lines)
    printed = _plug_in(lines)
    data = pd.read_csv(NB / "cells.csv")
    for c, group in data.groupby("diagnosis"):
        for f in ("radius", "texture"):
            line = printed[f"mean[{c}, {f}]"]
            mean, variance = re.match(r"(\S+)\s+variance (\S+)", line).groups()
            assert float(mean) == pytest.approx(group[f].mean(), rel=1e-5)
            assert float(variance) == pytest.approx(group[f].var(ddof=0), rel=1e-5)
