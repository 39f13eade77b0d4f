"""Networks, naive and semi-naive Bayes hold their Dirichlet concentration to one rule: below
1e-150 a table row without data has a variance that divides by zero (a ZeroDivisionError after
posterior.json was written), above 1e15 the data fall below float64's rounding. The spec is
refused naming its key before anything is written, and the estimators refuse the argument."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
from bayescheck.reports.cli import main

from bayescheck import fit
from bayescheck.estimators import (
    BayesianNetworkClassifier,
    CategoricalNaiveBayes,
    GaussianNaiveBayes,
    SemiNaiveBayesClassifier,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# a declared class and a declared category no row holds: rows of the tables without data
STATES = '[states]\nplay_tennis = ["No", "Yes", "Maybe"]\nwind = ["Weak", "Strong", "Calm"]\n'
SPECS = {"naive_bayes": EXAMPLES / "naive_bayes" / "play_tennis.toml",
         "bayesian_network": EXAMPLES / "bayesian_network" / "asia.toml",
         **{kind: EXAMPLES / "semi_naive_bayes" / f"play_tennis_{kind}.toml"
            for kind in ("aode", "spode", "tan")}}


def _spec(tmp_path: Path, which: str, concentration: str) -> Path:
    source = SPECS[which]
    data = "asia.csv" if which == "bayesian_network" else "play_tennis.csv"
    (tmp_path / data).write_bytes((source.parent / data).read_bytes())
    text = source.read_text()
    assert "concentration = 1.0" in text
    text = text.replace("concentration = 1.0", f"concentration = {concentration}", 1)
    path = tmp_path / "s.toml"
    path.write_text(text.split("[sampling]")[0] + ("" if data == "asia.csv" else STATES))
    return path


@pytest.mark.parametrize("which", sorted(SPECS))
@pytest.mark.parametrize("concentration, message", [
    ("1e-200", "1e-200 is below 1e-150: the table rows without data"),
    ("1e-151", "1e-151 is below 1e-150"),
    ("1e300", "1e[+]300 is too large: a prior worth more than 1e[+]15 observations"),
])
def test_a_concentration_beyond_the_limits_is_refused_before_writing(tmp_path, capsys, which,
                                                                     concentration, message):
    spec = _spec(tmp_path, which, concentration)
    out = tmp_path / "out"
    assert main(["fit", str(spec), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert re.search(f"s.toml, key 'prior.concentration': {message}", err), err
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("which", sorted(set(SPECS) - {"bayesian_network"}))
def test_a_small_concentration_within_the_limit_fits_finite_numbers(tmp_path, which):
    fitted = fit(_spec(tmp_path, which, "1e-140"))
    stats = [(m.name, m.dist.mean(), m.dist.std()) for m in fitted.posterior.marginals
             if m.dist is not None]
    assert stats
    for name, mean, sd in stats:
        assert math.isfinite(mean) and math.isfinite(sd), name


X = np.array([[0, 1, 0], [1, 0, 1], [0, 0, 1], [1, 1, 0]] * 5)
Y = np.array([0, 1, 0, 1] * 5)


@pytest.mark.parametrize("make", [
    lambda c: CategoricalNaiveBayes(concentration=c),
    lambda c: GaussianNaiveBayes(concentration=c),
    *(lambda c, kind=kind: SemiNaiveBayesClassifier(kind=kind, concentration=c)
      for kind in ("aode", "spode", "tan")),
    lambda c: BayesianNetworkClassifier(concentration=c),
])
def test_the_estimators_refuse_what_the_spec_refuses(make):
    for c, message in ((1e-200, "concentration: 1e-200 is below 1e-150"),
                       (1e16, "concentration: 1e[+]16 is too large")):
        with pytest.raises(ValueError, match=message):
            make(c).fit(X, Y)
    assert np.isfinite(make(1e-140).fit(X, Y).predict_proba(X)).all()
