"""posterior.json records what the fit used: the model object's values and the spec keys that
were absent and given their default (``"settings"``), for every family."""

import json
from pathlib import Path

import numpy as np
import pytest

from models import BetaBernoulli, Spec, load_spec
from models.registry import MODELS
from reports.cli import main
from reports.fit_summary import model_settings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _data(relative: str) -> str:
    return json.dumps(str(EXAMPLES / relative))


#: model -> (minimal spec text, {absent key: (model field, value the default must give)},
#:           (explicit TOML lines, key, model field, value given))
CASES = {
    "linear_regression": (
        f'model = "linear_regression"\n[data]\npath = {_data("linear_regression/houses.csv")}\n'
        'target = "price"\n',
        {"prior.mean": ("prior_mean", [0.0, 0.0, 0.0]),
         "prior.cov": ("prior_cov", np.eye(3).tolist()),
         "prior.flat": None, "likelihood.noise_sd": ("noise_sd", None),
         "prior.noise_shape": ("noise_shape", 1.0), "prior.noise_scale": ("noise_scale", 1.0),
         "data.intercept": ("intercept", False)},
        ("[prior]\ncov = 10.0\n", "prior.cov", "prior_cov", (10 * np.eye(3)).tolist())),
    "beta_bernoulli": (
        f'model = "beta_bernoulli"\n[data]\npath = {_data("beta_bernoulli/coin.csv")}\n'
        'target = "heads"\n',
        {"prior.a": ("a", 1.0), "prior.b": ("b", 1.0)},
        ("[prior]\na = 10.0\n", "prior.a", "a", 10.0)),
    "dirichlet_categorical": (
        f'model = "dirichlet_categorical"\n[data]\npath = '
        f'{_data("dirichlet_categorical/die.csv")}\ntarget = "face"\n',
        {"prior.concentration": ("concentration", 1.0), "data.categories": ("categories", None)},
        ("[prior]\nconcentration = 2.5\n", "prior.concentration", "concentration", 2.5)),
    "ard": (
        f'model = "ard"\n[data]\npath = {_data("ard/design.csv")}\ntarget = "y"\n',
        {"prior.alpha_shape": ("alpha_shape", 1.0), "prior.alpha_rate": ("alpha_rate", 1.0),
         "prior.noise_shape": ("noise_shape", 1.0), "prior.noise_rate": ("noise_rate", 1.0),
         "fit.method": ("method", "fast"), "fit.relevance_threshold": ("relevance_threshold", 1.0),
         "data.intercept": ("intercept", False), "check.mode": ("mode", "conditional")},
        ("[prior]\nalpha_rate = 2.0\n", "prior.alpha_rate", "alpha_rate", 2.0)),
    "gaussian_mixture": (
        f'model = "gaussian_mixture"\nn_components = 2\n[data]\n'
        f'path = {_data("gaussian_mixture/blobs.csv")}\n',
        {"covariance": ("covariance", "full"), "prior.concentration": ("concentration", 1.0),
         "prior.mean": ("prior_mean", [0.0, 0.0]), "prior.kappa": ("kappa", 0.0),
         "prior.iw_dof": ("iw_dof", None), "fit.n_init": ("n_init", 5),
         "fit.seed": ("seed", 0)},
        ("[prior]\nconcentration = 2.0\n", "prior.concentration", "concentration", 2.0)),
    "naive_bayes": (
        f'model = "naive_bayes"\n[data]\npath = {_data("naive_bayes/play_tennis.csv")}\n'
        'target = "play_tennis"\nfeatures = ["outlook", "temperature", "humidity", "wind"]\n',
        {"prior.concentration": ("concentration", 1.0), "prior.smoothing": ("smoothing", True),
         "prior.class_prior": ("class_prior", "dirichlet"), "prior.gaussian": ("gaussian", "nig"),
         "data.features_kind": ("kinds", ["categorical"] * 4)},
        ("[prior]\nsmoothing = false\n", "prior.smoothing", "smoothing", False)),
    "bayes_rule": (
        'model = "bayes_rule"\n[prior]\nh1 = 0.3\nh2 = 0.7\n[likelihood]\nh1 = 0.9\nh2 = 0.2\n',
        {"observation": ("observation", "D")},
        ('observation = "positive"\n', "observation", "observation", "positive")),
}


def _fit(tmp_path, text: str) -> dict:
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    assert main(["fit", str(spec), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    return json.loads((tmp_path / "out" / "posterior.json").read_text())["settings"]


def test_every_family_has_a_case():
    assert set(CASES) == set(MODELS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_absent_keys_are_recorded_with_the_default_they_gave(name, tmp_path):
    text, defaults, _ = CASES[name]
    settings = _fit(tmp_path, text)
    for key, expected in defaults.items():
        assert key in settings["defaults_applied"], key
        if expected is not None:
            field, value = expected
            assert settings["model"][field] == value, (key, settings["model"][field])
    assert "sampling.draws" in settings["defaults_applied"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_explicit_value_is_recorded_as_given(name, tmp_path):
    text, _, (lines, key, field, value) = CASES[name]
    # top-level keys go before the first table, tables after the minimal spec
    text = (lines + text) if not lines.startswith("[") else (text + lines)
    settings = _fit(tmp_path, text)
    assert key not in settings["defaults_applied"]
    assert settings["model"][field] == value


def test_a_default_that_depends_on_a_given_key_is_recorded_as_applied(tmp_path):
    text, _, (lines, *_) = CASES["naive_bayes"]
    settings = _fit(tmp_path, text + lines)
    assert settings["model"]["class_prior"] == "frequency"
    assert settings["model"]["gaussian"] == "ml"
    assert "prior.class_prior" in settings["defaults_applied"]


def test_a_spec_giving_every_key_records_no_default():
    spec = load_spec(EXAMPLES / "beta_bernoulli" / "coin.toml")
    assert spec.defaults == ()
    assert model_settings(spec) == {"model": {"target": "heads", "a": 10.0, "b": 10.0},
                                    "defaults_applied": []}


def test_a_spec_built_in_python_records_its_values_and_no_absent_keys():
    spec = Spec(model=BetaBernoulli(target="heads", b=3.0), data=None)
    assert model_settings(spec) == {"model": {"target": "heads", "a": 1.0, "b": 3.0},
                                    "defaults_applied": []}
