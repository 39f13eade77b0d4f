"""posterior.json records what the fit used: the model object's values and the spec keys that
were absent and given their default (``"settings"``), for every family."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from bayescheck.models import BetaBernoulli, Spec, load_spec
from bayescheck.models.registry import MODELS
from bayescheck.reports.cli import main
from bayescheck.reports.fit_summary import model_settings

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
         "fit.method": ("method", "fast"),
         "fit.relevance_threshold": ("relevance_threshold", "auto"),
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
    "bayesian_network": (
        f'model = "bayesian_network"\n[data]\npath = {_data("bayesian_network/asia.csv")}\n'
        '[structure]\nedges = [["smoke", "lung"]]\n',
        {"prior.concentration": ("concentration", 1.0),
         "prior.equivalent_sample_size": ("equivalent_sample_size", None), "data.nodes": None},
        ("[prior]\nconcentration = 2.0\n", "prior.concentration", "concentration", 2.0)),
    "semi_naive_bayes": (
        f'model = "semi_naive_bayes"\n[data]\npath = '
        f'{_data("semi_naive_bayes/play_tennis.csv")}\ntarget = "play_tennis"\n'
        'features = ["outlook", "temperature", "humidity", "wind"]\n',
        {"fit.kind": ("kind", "tan"), "fit.folds": ("folds", 5), "fit.m_prime": ("m_prime", 30),
         "prior.concentration": ("concentration", 1.0)},
        ("[fit]\nkind = \"aode\"\n", "fit.kind", "kind", "aode")),
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
                                    "sampling": {"draws": 2000, "tune": 1000, "chains": 4,
                                                 "seed": 3, "adaptation": "diag"},
                                    "defaults_applied": []}


def test_a_spec_built_in_python_records_its_values_and_no_absent_keys():
    spec = Spec(model=BetaBernoulli(target="heads", b=3.0), data=None)
    assert model_settings(spec) == {"model": {"target": "heads", "a": 1.0, "b": 3.0},
                                    "sampling": {"draws": 1000, "tune": 1000, "chains": 4,
                                                 "seed": 0, "adaptation": "diag"},
                                    "defaults_applied": []}


# ---- docs/defaults.md's table is what the code applies ------------------------------

README = Path(__file__).resolve().parents[2] / "docs" / "defaults.md"
#: keys that select data or add output rather than set a model value: not in the table
NOT_DEFAULTS = {"data.features", "data.formula", "query", "independence", "decision.classes",
                "decision.options", "decision.loss", "fit.init_means"}


def _readme_defaults() -> list[tuple[str, list[str], object, str]]:
    text = README.read_text()
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[1].startswith("`"):
            continue
        model = cells[0].strip("`")
        keys = re.findall(r"`([^`]+)`", cells[1])
        default = json.loads(re.search(r"`([^`]+)`", cells[2]).group(1))
        rows.append((model, keys, default, cells[3].strip("`")))
    return rows


def _matches(documented, actual) -> bool:
    """A scalar stands for every element of a vector and for a multiple of the identity."""
    if isinstance(actual, list) and actual and isinstance(actual[0], list):
        return np.array_equal(np.asarray(actual), documented * np.eye(len(actual)))
    if isinstance(actual, list) and not isinstance(documented, list):
        return all(a == documented for a in actual)
    return type(actual) is type(documented) and actual == documented or (
        isinstance(actual, float) and isinstance(documented, int | float)
        and not isinstance(documented, bool) and actual == documented)


def _minimal_settings(name: str, tmp_path: Path) -> dict:
    spec_file = tmp_path / f"{name}.toml"
    spec_file.write_text(CASES[name][0])
    return model_settings(load_spec(spec_file))


def test_readme_defaults_are_what_the_code_applies(tmp_path):
    rows = _readme_defaults()
    assert len(rows) > 40
    settings = {name: _minimal_settings(name, tmp_path) for name in CASES}
    for model, keys, default, where in rows:
        names = sorted(CASES) if model == "every model" else [model]
        for name in names:
            got = settings[name]
            for key in keys:
                assert key in got["defaults_applied"], (name, key)
            if where != "—":
                block, field = where.split(".")
                assert _matches(default, got[block][field]), (name, keys, default,
                                                              got[block][field])


def test_readme_lists_every_default_the_code_applies(tmp_path):
    documented = {(m, k) for m, keys, _, _ in _readme_defaults() for k in keys}
    for name in CASES:
        for key in _minimal_settings(name, tmp_path)["defaults_applied"]:
            if key not in NOT_DEFAULTS and not key.startswith("sampling."):
                assert (name, key) in documented, (name, key)


def test_a_wrong_readme_default_is_caught():
    assert not _matches(2.0, 1.0)
    assert not _matches(1.0, [[10.0, 0.0], [0.0, 10.0]])
    assert not _matches(0.0, [0.0, 1.0])
    assert not _matches("nig", "ml")
    assert not _matches(None, 1.0)
    assert not _matches(True, 1.0)
    assert _matches(1.0, [[1.0, 0.0], [0.0, 1.0]]) and _matches(1000, 1000)
