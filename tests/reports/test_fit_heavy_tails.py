"""Unknown-noise regression whose posterior has no finite sd: `fit` says which quantity, why
(the Student-t degrees of freedom, the InverseGamma shape, and how they come from the rows, the
coefficients and noise_shape) and what to change, with exit 2; each remedy it names then fits.

With sigma2 ~ InvGamma(a0, b0) the posterior shape is a = a0 + n/2 (proper prior on theta) or
a0 + (n - d)/2 (flat prior); theta's marginals are Student-t with 2a degrees of freedom, whose
variance b / (a - 1) P^-1 needs a > 1; sigma2's mean needs a > 1 and its variance a > 2.
"""

import json

import pytest
from bayescheck.reports.cli import main

ROWS = ["1.0,2.0,3.1", "2.0,0.5,1.9", "3.0,1.0,4.2", "4.0,1.0,3.0", "5.0,2.0,2.0"]


def _fit(tmp_path, capsys, rows, prior):
    (tmp_path / "d.csv").write_text("x1,x2,y\n" + "\n".join(ROWS[:rows]) + "\n")
    spec = tmp_path / "spec.toml"
    spec.write_text('model = "linear_regression"\n[data]\npath = "d.csv"\ntarget = "y"\n'
                    f'features = ["x1", "x2"]\n[prior]\n{prior}\n')
    out = tmp_path / "out"
    code = main(["fit", str(spec), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    return code, err, out / "posterior.json"


def test_flat_prior_with_as_many_rows_as_coefficients(tmp_path, capsys):
    """n = d = 2, noise_shape 1: a = 1, df = 2: theta has no sd, sigma2 no mean nor sd."""
    code, err, posterior = _fit(tmp_path, capsys, 2, "flat = true")
    assert code == 2
    assert "d.csv: the posterior is proper but heavy-tailed" in err
    assert "Student-t with df = 2a = 2 <= 2 degrees of freedom" in err
    assert "theta has no sd" in err and "no finite mean nor sd" in err
    assert "a = noise_shape + (rows - coefficients) / 2 = 1 + (2 - 2) / 2" in err
    assert "fit at least 5 rows" in err and "noise_shape above 2" in err
    assert "proper prior" not in err  # a = 1 + 2/2 = 2 would still be too small
    assert "non-finite value" not in err
    assert not posterior.exists()


def test_flat_prior_one_row_more_leaves_only_the_noise_sd_infinite(tmp_path, capsys):
    code, err, _ = _fit(tmp_path, capsys, 3, "flat = true")
    assert code == 2
    assert "InverseGamma with shape a = 1.5 <= 2" in err and "sigma2 has no sd" in err
    assert "df = 2a = 3, do have one" in err
    assert "theta has no sd" not in err
    assert "or give theta a proper prior" in err  # a = 1.5 + 2/2 = 2.5 would do


def test_a_small_noise_shape_under_a_proper_prior(tmp_path, capsys):
    """One row, noise_shape 0.5, proper prior: a = 0.5 + 1/2 = 1, df = 2."""
    code, err, _ = _fit(tmp_path, capsys, 1, "mean = 0.0\ncov = 1.0\nnoise_shape = 0.5")
    assert code == 2
    assert "df = 2a = 2 <= 2" in err
    assert "a = noise_shape + rows / 2 = 0.5 + 1 / 2" in err
    assert "fit at least 4 rows" in err and "noise_shape above 1.5" in err


@pytest.mark.parametrize("rows, prior", [
    (5, "flat = true"),                                   # the rows asked for: a = 2.5
    (2, "flat = true\nnoise_shape = 2.01"),               # noise_shape above 2
    (3, "mean = 0.0\ncov = 1.0"),                         # a proper prior instead: a = 2.5
    (4, "mean = 0.0\ncov = 1.0\nnoise_shape = 0.5"),      # a = 2.5
])
def test_each_remedy_fits_with_finite_moments(tmp_path, capsys, rows, prior):
    code, err, posterior = _fit(tmp_path, capsys, rows, prior)
    assert code == 0, err
    params = json.loads(posterior.read_text())["parameters"]
    assert params["sigma2"]["shape"] > 2
    assert all(sd > 0 for sd in params["theta"]["sd"]) and params["sigma2"]["sd"] > 0


def test_known_noise_is_never_refused_for_heavy_tails(tmp_path, capsys):
    code, err, _ = _fit(tmp_path, capsys, 2, "flat = true\n[likelihood]\nnoise_sd = 1.0")
    assert code == 0, err
