"""A spec's key is reported in the spec's name, not in the name of its data file."""

from pathlib import Path

from bayescheck.reports.cli import main

BLOBS = Path(__file__).resolve().parents[2] / "examples" / "gaussian_mixture" / "blobs.csv"


def test_check_of_a_mixture_without_a_prior_on_the_means_names_the_spec(tmp_path, capsys):
    spec = tmp_path / "mixture.toml"
    spec.write_text(f'model = "gaussian_mixture"\nn_components = 3\n[data]\npath = "{BLOBS}"\n'
                    'features = ["x1", "x2"]\n')
    assert main(["check", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{spec}, key 'prior.kappa'" in err
    assert "blobs.csv" not in err
