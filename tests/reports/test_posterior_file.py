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
             "gm": EXAMPLES / "gaussian_mixture" / "blobs.toml",
             "aode": EXAMPLES / "semi_naive_bayes" / "play_tennis_aode.toml",
             "cells": EXAMPLES / "naive_bayes" / "cells_decision.toml"}
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


CELLS_NEW = "radius,texture\n19.5,21.6\n"


def par(d):
    return d["parameters"]


def stats(d):
    return d["parameters"]["statistics"]


@pytest.mark.parametrize("name, new, change, key, why", [
    # classes emptied: was "ValueError: n_classes ... received 0" as a traceback
    ("aode", NB_NEW, lambda d: par(d).update(classes=[]), "parameters.classes",
     "at least 2 label(s)"),
    ("nb", NB_NEW, lambda d: stats(d).update(classes=[]), "parameters.statistics.classes",
     "at least 2 label(s)"),
    # a class more than the counts hold: was a ValueError traceback from the decision
    ("aode", NB_NEW, lambda d: par(d)["classes"].append("Maybe"),
     "parameters.statistics.cardinality", "numbers of classes and categories"),
    # a loss matrix of another shape than options x classes
    ("cells", CELLS_NEW, lambda d: par(d)["decision"].update(loss=[[1.0, 0.0]]),
     "parameters.decision.loss", "expected shape 2 x 2, got 1 x 2"),
    ("aode", NB_NEW, lambda d: par(d)["decision"].update(loss=[[0.0, 1.0, 2.0]] * 2),
     "parameters.decision.loss", "expected shape 2 x 2, got 2 x 3"),
    # a class label edited to "": was exit 0 with a "p_" column and empty decisions
    ("nb", NB_NEW, lambda d: stats(d)["classes"].__setitem__(0, ""),
     "parameters.statistics.classes[0]", "non-empty label"),
    ("aode", NB_NEW, lambda d: par(d)["classes"].__setitem__(1, ""),
     "parameters.classes[1]", "non-empty label"),
    ("aode", NB_NEW, lambda d: par(d)["classes"].__setitem__(1, "No"),
     "parameters.classes", "appears twice"),
    # a mean no fit writes: was refused blaming the new rows ("rescale the columns")
    ("cells", CELLS_NEW, lambda d: stats(d)["gaussian_mean"][0].__setitem__(0, 1e308),
     "parameters.statistics.gaussian_mean[0][0]", "at most 1e+150"),
    ("gm", "x1,x2\n1,2\n", lambda d: par(d)["means"]["estimate"][1].__setitem__(0, 1e200),
     "parameters.means.estimate[1][0]", "at most 1e+150"),
    # covariances that are one number: was a TypeError traceback (iteration over a 0-d array)
    ("gm", "x1,x2\n1,2\n", lambda d: par(d)["covariances"].update(estimate=1.5),
     "parameters.covariances.estimate", "expected shape any x any x any"),
    # counts beyond the fit's rows: was an OverflowError traceback
    ("nb", NB_NEW, lambda d: stats(d)["class_counts"].__setitem__(0, 1e308),
     "parameters.statistics.class_counts[0]", "between 0 and 14"),
    ("aode", NB_NEW, lambda d: stats(d)["counts"].__setitem__(5, -1),
     "parameters.statistics.counts[5]", "whole number"),
    # settings of the wrong type: was an AttributeError traceback
    ("lr", LR_NEW, lambda d: d.update(settings=[1]), "settings.model", "expected a table"),
    # a scale matrix that is not positive definite: was exit 2 blaming the new rows
    ("lr", LR_NEW, lambda d: theta(d)["scale_matrix"][0].__setitem__(2, 5.0),
     "parameters.theta.scale_matrix", "not symmetric"),
    ("lr", LR_NEW, lambda d: d["parameters"]["sigma2"].update(shape=1e-300),
     "parameters.sigma2.shape", "at least (rows - coefficients) / 2 = 38.5"),
])
def test_shapes_labels_and_magnitudes_no_fit_writes_are_refused(fits, tmp_path, capsys, name,
                                                                 new, change, key, why):
    spec, folder = edited(fits, tmp_path, name, change)
    assert predict(spec, folder, new, tmp_path) == 2
    err = capsys.readouterr().err
    assert f"posterior.json: key '{key}'" in err and why in err, err


def test_an_overflowing_prediction_names_the_fits_largest_number(fits, tmp_path, capsys):
    # a resealed coefficient of 1e308 is a consistent fit; the prediction overflows, and the
    # message names posterior.json and the key, not only the new row
    spec, folder = edited(fits, tmp_path, "lr", lambda d: theta(d)["mean"].__setitem__(0, 1e308))
    assert predict(spec, folder, "size,age,dist\n1,2,3\n2,0,0\n", tmp_path) == 2
    err = capsys.readouterr().err
    assert "row 2" in err and "posterior.json is 1e+308, at key 'parameters.theta.mean[0]'" in err


def test_what_the_family_cannot_rebuild_from_is_refused_naming_the_file():
    from bayescheck.models.errors import BayescheckError
    from bayescheck.reports.predict import rebuilt

    def family_predict(spec, posterior, batch, *, level, where):
        raise ValueError("n_classes: expected an integer >= 2, received 0")

    with pytest.raises(BayescheckError, match=r"^fit/posterior.json: the fit cannot be rebuilt "
                                              r"from it \(ValueError: n_classes"):
        rebuilt(family_predict, None, {}, None, level=0.9, where="fit/posterior.json")


def test_every_example_fit_passes_the_checks(fits):
    from bayescheck.reports.posterior_file import validate_posterior

    root, specs = fits
    for name in specs:
        document = json.loads((root / name / "posterior.json").read_text())
        assert validate_posterior(document, name) is document
