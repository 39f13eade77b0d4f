"""posterior.json is read through one reader that validates it before predict trusts it."""

import json
import shutil
from pathlib import Path

import pytest
from bayescheck.reports.cli import main
from bayescheck.reports.posterior_file import sealed

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def fits(tmp_path_factory):
    root = tmp_path_factory.mktemp("fits")
    specs = {"lr": EXAMPLES / "linear_regression" / "unknown_noise.toml",
             "nb": EXAMPLES / "naive_bayes" / "play_tennis.toml",
             "bn": EXAMPLES / "bayesian_network" / "asia.toml",
             "gm": EXAMPLES / "gaussian_mixture" / "blobs.toml"}
    for name, spec in specs.items():
        assert main(["fit", str(spec), "--out", str(root / name), "--quiet"]) == 0
    return root, specs


def edited(fits, tmp_path, name, change, *, reseal=True):
    root, specs = fits
    shutil.copytree(root / name, tmp_path / name)
    path = tmp_path / name / "posterior.json"
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(sealed(document) if reseal else document))
    return specs[name], tmp_path / name


def predict(spec, folder, data, tmp_path):
    (tmp_path / "new.csv").write_text(data)
    return main(["predict", str(spec), "--model-from", str(folder), "--data",
                 str(tmp_path / "new.csv")])


LR_NEW = "size,age,dist\n1,2,3\n"
NB_NEW = "outlook,temperature,humidity,wind\nSunny,Cool,High,Strong\n"


def theta(d):
    return d["parameters"]["theta"]


@pytest.mark.parametrize("change, key, why", [
    (lambda d: theta(d)["sd"].__setitem__(0, -1.0), "parameters.theta.sd",
     "negative standard deviation"),
    (lambda d: theta(d)["mean"].__setitem__(1, None), "parameters.theta.mean[1]",
     "expected a number"),
    (lambda d: theta(d).update(mean="abc"), "parameters.theta.mean", "expected a number"),
    (lambda d: theta(d)["cov"][0].__setitem__(0, -4.0), "parameters.theta.cov",
     "not positive definite"),
    (lambda d: d["parameters"]["sigma2"].update(scale=-1.0), "parameters.sigma2.scale",
     "positive"),
])
def test_wrong_numbers_are_refused_naming_the_key(fits, tmp_path, capsys, change, key, why):
    spec, folder = edited(fits, tmp_path, "lr", change)
    assert predict(spec, folder, LR_NEW, tmp_path) == 2
    err = capsys.readouterr().err
    assert f"posterior.json: key '{key}'" in err and why in err and "Traceback" not in err


def test_an_edit_without_a_new_digest_is_refused(fits, tmp_path, capsys):
    spec, folder = edited(fits, tmp_path, "lr",
                          lambda d: theta(d)["mean"].__setitem__(0, 99.0), reseal=False)
    assert predict(spec, folder, LR_NEW, tmp_path) == 2
    assert "key 'digest'" in capsys.readouterr().err


def test_a_file_without_format_is_refused(fits, tmp_path, capsys):
    spec, folder = edited(fits, tmp_path, "lr", lambda d: d.pop("format"), reseal=False)
    assert predict(spec, folder, LR_NEW, tmp_path) == 2
    assert "key 'format'" in capsys.readouterr().err


def test_probabilities_that_do_not_sum_to_one_are_refused(fits, tmp_path, capsys):
    def change(d):
        d["parameters"]["features"]["outlook"]["probabilities"]["No"]["Sunny"] = 0.9

    spec, folder = edited(fits, tmp_path, "nb", change)
    assert predict(spec, folder, NB_NEW, tmp_path) == 2
    err = capsys.readouterr().err
    assert "key 'parameters.features.outlook.probabilities.No'" in err and "sum to 1.4" in err


def test_reordered_categories_are_refused(fits, tmp_path, capsys):
    def change(d):
        row = d["parameters"]["features"]["outlook"]["probabilities"]["No"]
        d["parameters"]["features"]["outlook"]["probabilities"]["No"] = dict(
            reversed(list(row.items())))

    spec, folder = edited(fits, tmp_path, "nb", change)
    assert predict(spec, folder, NB_NEW, tmp_path) == 2
    assert "in that order" in capsys.readouterr().err


def test_reordered_network_states_are_refused(fits, tmp_path, capsys):
    def change(d):
        d["parameters"]["cpts"]["smoke"]["states"].reverse()

    spec, folder = edited(fits, tmp_path, "bn", change)
    assert predict(spec, folder, "asia,smoke\nno,yes\n", tmp_path) == 2
    err = capsys.readouterr().err
    assert "key 'parameters.cpts.lung.rows'" in err and "order" in err


def test_a_cpt_row_summing_to_more_than_one_is_refused(fits, tmp_path, capsys):
    def change(d):
        d["parameters"]["cpts"]["asia"]["mean"][0] = [0.9, 0.9]

    spec, folder = edited(fits, tmp_path, "bn", change)
    assert predict(spec, folder, "asia,smoke\nno,yes\n", tmp_path) == 2
    assert "key 'parameters.cpts.asia.mean'" in capsys.readouterr().err


def test_a_mixture_spec_of_other_components_is_refused(fits, tmp_path, capsys):
    root, specs = fits
    two = tmp_path / "two.toml"
    shutil.copy(EXAMPLES / "gaussian_mixture" / "blobs.csv", tmp_path / "blobs.csv")
    two.write_text(specs["gm"].read_text().replace("n_components = 3", "n_components = 2"))
    assert "n_components = 2" in two.read_text()
    assert predict(two, root / "gm", "x1,x2\n1,2\n", tmp_path) == 2
    err = capsys.readouterr().err
    assert "key 'settings.model.n_components'" in err


def test_model_from_a_file_is_named(fits, tmp_path, capsys):
    root, specs = fits
    assert predict(specs["lr"], root / "lr" / "posterior.json", LR_NEW, tmp_path) == 2
    err = capsys.readouterr().err
    assert "is a file; name the folder" in err and "Errno" not in err


def test_new_values_beyond_the_fits_limit_are_refused(fits, tmp_path, capsys):
    root, specs = fits
    assert predict(specs["lr"], root / "lr", "size,age,dist\n1,2,3\n1e151,2,3\n", tmp_path) == 2
    err = capsys.readouterr().err
    assert "column 'size', row 2" in err


def test_report_json_of_a_wrong_type_is_refused(tmp_path, capsys):
    (tmp_path / "report.json").write_text(json.dumps({"verdict": "pass", "notes": 5}))
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "report.json: key 'notes': expected a list" in err


def test_an_infinity_anywhere_is_refused_even_resealed(fits, tmp_path, capsys):
    # the digest reads a NaN or an infinity as null, so a resealed Infinity in the class
    # counts (not a moment) passed, and predict failed converting it (OverflowError)
    def change(d):
        d["parameters"]["statistics"]["class_counts"][0] = float("inf")

    root, specs = fits
    shutil.copytree(root / "nb", tmp_path / "nb")
    path = tmp_path / "nb" / "posterior.json"
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(sealed(document), allow_nan=True))
    assert predict(specs["nb"], tmp_path / "nb", NB_NEW, tmp_path) == 2
    err = capsys.readouterr().err
    assert "key 'parameters.statistics.class_counts[0]'" in err and "infinity" in err
