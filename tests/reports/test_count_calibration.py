"""NUTS calibration of the count declarations: one declaration for every simulation, its
counts (and a naive Bayes' Gaussian values and classes) swapped in ``pm.Data``.

A correct declaration passes; a prior in the declaration sampled by NUTS that differs from
the one simulated fails (a Normal-Inverse-Gamma noise scale 2.25 times the declared one; a
network's Dirichlet concentration 3 for a declared 1, on six rows). If the swapped data did
not reach the compiled model, every simulation would sample the first data set's posterior
and fail too. With seed 1 the mismatches' smallest p-values are 4e-10 (cells) and 4e-9 (the
network), the correct runs' 0.02 and 0.05 (seed 2: 7e-4 and 7e-9 against 0.015 and 0.009).
"""

from dataclasses import replace
from pathlib import Path

import pytest
from bayescheck.inference.families import fit
from bayescheck.models import load_spec
from bayescheck.reports.calibrate import run_calibration

pytestmark = [pytest.mark.nuts, pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


NETWORK_SPEC = """model = "bayesian_network"
[data]
path = "n.csv"
[structure]
edges = [["a", "b"], ["a", "c"], ["b", "c"]]
"""


def six_row_network(folder: Path) -> Path:
    """A triangle a -> b -> c, a -> c on six rows: the prior weighs against so few counts."""
    (folder / "n.csv").write_text("a,b,c\nx,u,p\nx,v,p\ny,w,q\ny,v,p\nx,u,q\ny,u,q\n")
    (folder / "n.toml").write_text(NETWORK_SPEC)
    return folder / "n.toml"


@pytest.mark.parametrize("example, mismatch", [
    ("naive_bayes/cells.toml", lambda m: replace(m, b0=2.25 * m.b0)),
    (None, lambda m: replace(m, concentration=3.0)),
])
def test_nuts_calibration_passes_and_a_prior_mismatch_fails(example, mismatch, tmp_path):
    spec = load_spec(EXAMPLES / example if example else six_row_network(tmp_path))
    held = spec.model.calibration_model(fit(spec))
    right = run_calibration(spec, tmp_path / "a", simulations=100, seed=1, engine="nuts")
    assert right.verdict == "pass"
    wrong = run_calibration(spec, tmp_path / "b", simulations=100, seed=1, engine="nuts",
                            fit_model=mismatch(held))
    assert wrong.verdict == "fail"
