"""Simulation-based calibration end to end: a correct engine passes, an engine that
disagrees with the declaration fails (variance where a standard deviation was meant, a Beta
prior with a and b swapped, a noise sd off by 1.5), and bad input exits 2.

Designs are small (few rows, small covariates) so that the prior shapes the posterior and
a prior mismatch is visible in a few hundred simulations; seeds are fixed.
"""

import json
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from bayescheck.models import load_spec
from bayescheck.reports.calibrate import run_calibration
from bayescheck.reports.check import run_check
from bayescheck.reports.cli import main
from bayescheck.reports.report import render_run

LR_SPEC = """model = "linear_regression"
[data]
path = "d.csv"
target = "y"
[prior]
cov = 0.25     # prior sd 0.5
[likelihood]
noise_sd = 1.0
"""


def regression_spec(tmp_path, rows, scale):
    rng = np.random.default_rng(0)
    X = scale * rng.normal(size=(rows, 2))
    pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": rng.normal(size=rows)}).to_csv(
        tmp_path / "d.csv", index=False)
    (tmp_path / "lr.toml").write_text(LR_SPEC)
    return load_spec(tmp_path / "lr.toml")


@pytest.fixture
def lr_spec(tmp_path):
    """Six rows of small covariates: the prior dominates the posterior."""
    return regression_spec(tmp_path, rows=6, scale=0.3)


@pytest.fixture(scope="module")
def lr_calibrations(tmp_path_factory):
    """The six-row regression calibrated with the declared prior and with a variance where the
    declaration has a standard deviation (declared sd 0.5, variance 0.25; the engine takes 0.5
    as the variance): 300 simulations each, seed 1. Run once for the module: the verdict tests
    and the report test read the same folders (each calibration is a few seconds of CPU)."""
    tmp = tmp_path_factory.mktemp("lr")
    spec = regression_spec(tmp, rows=6, scale=0.3)
    wrong = replace(spec.model, prior_cov=0.5 * np.eye(2))
    return {"right": run_calibration(spec, tmp / "right", simulations=300, seed=1),
            "wrong": run_calibration(spec, tmp / "wrong", simulations=300, seed=1,
                                     fit_model=wrong),
            "right_out": tmp / "right", "wrong_out": tmp / "wrong"}


@pytest.fixture
def coin_spec(tmp_path):
    (tmp_path / "c.csv").write_text("y\n1\n0\n0\n1\n0\n0\n0\n1\n")
    (tmp_path / "bb.toml").write_text('model = "beta_bernoulli"\n[data]\npath = "c.csv"\n'
                                      'target = "y"\n[prior]\na = 2.0\nb = 5.0\n')
    return load_spec(tmp_path / "bb.toml")


@pytest.mark.slow
def test_correct_regression_engine_passes(lr_calibrations):
    assert lr_calibrations["right"].verdict == "pass"
    saved = json.loads((lr_calibrations["right_out"] / "calibration.json").read_text())
    assert saved["verdict"] == "pass" and saved["simulations"] == 300
    assert [p["name"] for p in saved["parameters"]] == ["theta[x1]", "theta[x2]"]
    assert all(len(p["pit"]) == 300 for p in saved["parameters"])


@pytest.mark.slow
def test_variance_used_where_the_declaration_has_a_standard_deviation_fails(lr_calibrations):
    assert lr_calibrations["wrong"].verdict == "fail"


@pytest.mark.slow
def test_noise_sd_off_by_one_and_a_half_fails(tmp_path):
    # Thirty rows of unit covariates: the likelihood, and so the noise, shapes the posterior.
    spec = regression_spec(tmp_path, rows=30, scale=1.0)
    wrong = replace(spec.model, noise_sd=1.5)
    result = run_calibration(spec, tmp_path / "out", simulations=300, seed=1,
                             fit_model=wrong)
    assert result.verdict == "fail"


@pytest.mark.slow
def test_beta_prior_correct_passes_swapped_fails(coin_spec, tmp_path):
    # 100 simulations: the swapped prior's adjusted p-value is then about 1e-43
    assert run_calibration(coin_spec, tmp_path / "a", simulations=100, seed=1).verdict == "pass"
    swapped = replace(coin_spec.model, a=coin_spec.model.b, b=coin_spec.model.a)
    result = run_calibration(coin_spec, tmp_path / "b", simulations=100, seed=1,
                             fit_model=swapped)
    assert result.verdict == "fail"


@pytest.mark.slow
def test_cli_exit_codes(lr_spec, tmp_path, capsys):
    spec = str(tmp_path / "lr.toml")
    assert main(["calibrate", spec, "--simulations", "100", "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    assert main(["report", str(tmp_path / "o")]) == 0  # a calibration-only folder re-draws
    assert main(["calibrate", spec, "--simulations", "5", "--quiet"]) == 2
    assert "--simulations must be at least 10" in capsys.readouterr().err
    assert main(["calibrate", str(tmp_path / "missing.toml")]) == 2


@pytest.mark.nuts
def test_nuts_engine_ranks(coin_spec, tmp_path):
    """NUTS as the engine: ranks of the truth among 199 thinned draws (200 levels), binned
    into whole-rank bins; a correct model passes with a fixed seed."""
    result = run_calibration(coin_spec, tmp_path / "out", simulations=10, seed=2,
                             engine="nuts")
    assert result.verdict == "pass"
    assert 200 % result.bins == 0 and sum(result.parameters[0].counts) == 10
    saved = json.loads((tmp_path / "out" / "calibration.json").read_text())
    assert saved["engine"] == "nuts"


@pytest.fixture(scope="module")
def ard_example():
    """The ARD example (60 rows, 12 features, 3 relevant after the fit) and its calibration
    model: alpha and sigma2 held at the type-II ML estimates."""
    from pathlib import Path

    from bayescheck.inference.families import fit

    spec = load_spec(Path(__file__).parents[2] / "examples" / "ard" / "design.toml")
    return spec, spec.model.calibration_model(fit(spec))


@pytest.mark.slow
def test_ard_conditional_engine_passes_noise_sd_off_fails(ard_example, tmp_path):
    spec, held = ard_example
    # 100 simulations: the wrong noise's adjusted p-value is then about 4e-6
    right = run_calibration(spec, tmp_path / "a", simulations=100, seed=1)
    assert right.verdict == "pass"
    assert [p.name for p in right.parameters] == ["w[x2]", "w[x6]", "w[x9]"]
    alpha, sigma2 = held.held
    wrong = replace(held, held=(alpha, 1.5**2 * sigma2))  # the engine's noise sd x 1.5
    assert run_calibration(spec, tmp_path / "b", simulations=100, seed=1,
                           fit_model=wrong).verdict == "fail"


def test_ard_held_fit_is_the_exact_conditional_posterior(ard_example):
    from bayescheck.inference.engines.sbl import ard_posterior
    from bayescheck.inference.families import fit

    spec, held = ard_example
    result = fit(replace(spec, model=held))
    X, y = held.read(spec.data)
    exact = ard_posterior(X, y, np.asarray(held.held[0]), held.held[1])
    by_name = {m.name: m.dist for m in result.posterior.marginals}
    for i in exact.relevant:
        dist = by_name[f"w[{held.features[i]}]"]
        assert dist.mean() == pytest.approx(exact.mean[i], rel=1e-12)
        assert dist.std() == pytest.approx(exact.sd()[i], rel=1e-12)
    assert result.posterior.parameters["sigma2"]["estimated"] is False


def test_ard_with_every_weight_pruned_cannot_be_calibrated(ard_example):
    from types import SimpleNamespace

    from bayescheck.models.errors import BayescheckError

    spec, _ = ard_example
    alpha = {"value": [None] * len(spec.model.features)}
    pruned = SimpleNamespace(posterior=SimpleNamespace(
        parameters={"alpha": alpha, "sigma2": {"value": 1.0}}))
    with pytest.raises(BayescheckError, match="every weight was pruned"):
        spec.model.calibration_model(pruned)
    with pytest.raises(ValueError, match="held sigma2"):
        replace(spec.model, held=((1.0,) * len(spec.model.features), 0.0))


def _verdict_at_top(html: str) -> str:
    return re.search(r'id="verdict" data-verdict="(\w+)"', html).group(1)


def _calibration_tag(html: str) -> str | None:
    found = re.search(r'id="calibration-verdict">(\w+)<', html)
    return found and found.group(1)


@pytest.mark.slow
def test_report_has_a_calibration_section_that_says_pass_or_fail(lr_calibrations):
    html = render_run(lr_calibrations["right_out"])
    assert _verdict_at_top(html) == "pass" and _calibration_tag(html) == "pass"
    assert 'id="calibration"' in html and 'id="crosscheck"' not in html
    assert html.count("data:image/png;base64,") == 1  # histograms and ECDF differences
    html = render_run(lr_calibrations["wrong_out"])
    assert _verdict_at_top(html) == "fail" and _calibration_tag(html) == "fail"
    assert "disagree about the model" in html


@pytest.mark.nuts
def test_check_and_calibration_in_one_folder_make_one_report(coin_spec, tmp_path):
    """A check and a calibration of the same spec share report.html; a calibration of another
    spec in that folder replaces the older check on the page, which says so."""
    out = tmp_path / "run"
    spec = replace(coin_spec, sampling=replace(coin_spec.sampling, draws=300, tune=300,
                                               chains=2))
    check = run_check(spec, out)
    run_calibration(coin_spec, out, simulations=100, seed=1)
    html = render_run(out)
    assert _verdict_at_top(html) == check.verdict and _calibration_tag(html) == "pass"
    assert 'id="crosscheck"' in html and 'id="calibration"' in html
    assert 'id="stale-note"' not in html

    other = regression_spec(tmp_path, rows=6, scale=0.3)
    run_calibration(other, out, simulations=100, seed=1)
    html = render_run(out)
    assert "<h1>bayescheck report: linear_regression</h1>" in html
    assert 'id="crosscheck"' not in html
    assert "older report.json of a different spec or data" in html


def test_same_spec_on_other_data_is_not_the_same_run():
    from bayescheck.reports.calibration_report import same_run_inputs

    check = {"spec_text": "s", "data_fingerprints": ["a1", "b2"]}
    assert same_run_inputs(check, {"spec_text": "s", "data_fingerprints": ["a1", "b2"]})
    assert not same_run_inputs(check, {"spec_text": "s", "data_fingerprints": ["a1", "XX"]})
    assert not same_run_inputs(check, {"spec_text": "t", "data_fingerprints": ["a1", "b2"]})
    assert same_run_inputs({"spec_text": "s"}, {"spec_text": "s", "data_fingerprints": []})


@pytest.fixture
def die_spec(tmp_path):
    """Nine rolls of a three-sided die, the categories not declared (seen in the data)."""
    (tmp_path / "d.csv").write_text("y\na\nb\nb\nc\na\nb\nb\nb\n")
    (tmp_path / "die.toml").write_text('model = "dirichlet_categorical"\n[data]\npath = "d.csv"\n'
                                       'target = "y"\n[prior]\nconcentration = 2.0\n')
    return load_spec(tmp_path / "die.toml")


@pytest.mark.slow
def test_dirichlet_without_declared_categories_holds_the_seen_ones(die_spec, tmp_path):
    from bayescheck.inference.families import fit

    held = die_spec.model.calibration_model(fit(die_spec))
    assert held.categories == ("a", "b", "c")
    assert run_calibration(die_spec, tmp_path / "a", simulations=300, seed=1).verdict == "pass"
    wrong = replace(held, concentration=5.0)  # the engine's prior 2.5 times as strong
    assert run_calibration(die_spec, tmp_path / "b", simulations=300, seed=1,
                           fit_model=wrong).verdict == "fail"


@pytest.mark.slow
@pytest.mark.parametrize("example, mismatch, simulations", [
    ("cells", lambda m: replace(m, b0=2.25 * m.b0), 100),  # prior noise scale sd x 1.5
    ("play_tennis", lambda m: replace(m, concentration=2.0), 300),  # declared Laplace (1)
])
def test_naive_bayes_correct_passes_prior_mismatch_fails(example, mismatch, simulations,
                                                         tmp_path):
    """Gaussian (NIG) and categorical naive Bayes: classes and categories held at the
    data's, query rows dropped; a correct engine passes, a wrong prior fails. The mismatch's
    adjusted p-value at 100 simulations: cells 5e-10 (so 100 suffice), play_tennis 0.003
    (so it keeps 300: a margin over the 0.01 threshold that a change of seed keeps)."""
    from pathlib import Path

    from bayescheck.inference.families import fit

    spec = load_spec(Path(__file__).parents[2] / "examples" / "naive_bayes" /
                     f"{example}.toml")
    held = spec.model.calibration_model(fit(spec))
    assert held.queries == () and held.held_labels[0] == tuple(
        fit(spec).posterior.parameters["classes"])
    right = run_calibration(spec, tmp_path / "a", simulations=simulations, seed=1)
    assert right.verdict == "pass"
    assert not any(p.name.startswith("score") for p in right.parameters)
    assert run_calibration(spec, tmp_path / "b", simulations=simulations, seed=1,
                           fit_model=mismatch(held)).verdict == "fail"


def test_progress_lines_carry_an_early_estimate():
    """Without a terminal: a line after the first simulation (the first estimate of the time
    left), then every 5 % and at the end."""
    import io

    from bayescheck.inference.checking.progress import ProgressBar

    stream = io.StringIO()
    bar = ProgressBar(100, stream=stream)
    for done in range(1, 101):
        bar.update(done)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 21 and "\r" not in stream.getvalue()
    assert lines[0].startswith("[") and "simulation 1/100" in lines[0] and "s left" in lines[0]
    assert "simulation 100/100" in lines[-1]


def test_models_without_an_exact_posterior_are_refused(tmp_path, capsys):
    from pathlib import Path

    spec = Path(__file__).parents[2] / "examples" / "gaussian_mixture" / "worked_step.toml"
    assert main(["calibrate", str(spec), "--out", str(tmp_path), "--quiet"]) == 2
    assert "does not support model 'gaussian_mixture'" in capsys.readouterr().err


@pytest.mark.slow
def test_ecdf_band_is_simultaneous_at_its_level():
    """Uniform samples leave the 99 % band about 1 % of the time: of 2000, 20 expected, and
    fewer than 8 (a band too wide) or more than 40 (too narrow) has probability below 0.002
    when the level is right. A hump-shaped sample (Beta(2, 2): an engine whose posterior is
    too wide) leaves it."""
    from bayescheck.reports.calibration_report import BAND_PROB, _simultaneous_band

    n = 200
    x, lower, upper = _simultaneous_band(n)
    rng = np.random.default_rng(3)

    def inside(u):
        ecdf = np.searchsorted(np.sort(u), x, side="right") / n
        return bool(np.all((ecdf >= lower) & (ecdf <= upper)))

    outside = sum(not inside(rng.uniform(size=n)) for _ in range(2000))
    assert BAND_PROB == 0.99 and 8 <= outside <= 40, outside
    assert not inside(rng.beta(2, 2, size=n))


@pytest.mark.slow
def test_naive_bayes_plug_in_settings_calibrate_the_bayesian_marginals(tmp_path):
    """play_tennis_ml (smoothing = false) has no ML estimate for a simulation that misses a
    class; its exact marginals, which are what is calibrated, are the Bayesian model's."""
    from pathlib import Path

    spec = load_spec(Path(__file__).parents[2] / "examples" / "naive_bayes" /
                     "play_tennis_ml.toml")
    assert not spec.model.smoothing
    assert run_calibration(spec, tmp_path, simulations=200, seed=1).verdict == "pass"


NETWORK_SPEC = """model = "bayesian_network"
[data]
path = "n.csv"
[structure]
edges = [["a", "b"], ["a", "c"], ["b", "c"]]
[prior]
concentration = 1.0
[[query]]
target = "a"
evidence = { c = "p" }
"""


@pytest.mark.slow
def test_bayesian_network_correct_passes_prior_mismatch_fails(tmp_path):
    """Every CPT entry's exact Beta marginal against the prior-predictive truth, states held
    at the data's (a simulation may miss one), queries dropped; a prior of 2 where the
    declaration has 1 fails."""
    from bayescheck.inference.families import fit

    (tmp_path / "n.csv").write_text("a,b,c\nx,u,p\nx,v,p\ny,w,q\ny,v,p\nx,u,q\ny,u,q\n")
    (tmp_path / "n.toml").write_text(NETWORK_SPEC)
    spec = load_spec(tmp_path / "n.toml")
    held = spec.model.calibration_model(fit(spec))
    assert held.queries == () and held.held_states["b"] == ("u", "v", "w")
    right = run_calibration(spec, tmp_path / "a", simulations=300, seed=1)
    assert right.verdict == "pass"
    assert len(right.parameters) == 2 + 2 * 3 + 6 * 2
    assert run_calibration(spec, tmp_path / "b", simulations=300, seed=1,
                           fit_model=replace(held, concentration=2.0)).verdict == "fail"


def test_bayesian_network_with_missing_cells_is_not_calibrated_analytically(tmp_path, capsys):
    """EM's point estimates have no posterior to rank the truth in (NUTS does: see
    test_bayesian_network_sbc.py)."""
    (tmp_path / "n.csv").write_text("a,b,c\nx,u,p\nx,,p\ny,w,q\ny,v,p\n")
    (tmp_path / "n.toml").write_text(NETWORK_SPEC)
    code = main(["calibrate", str(tmp_path / "n.toml"), "--simulations", "10", "--engine",
                 "analytic", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "calibrate --engine analytic needs complete data" in err, err
    assert "no posterior to rank" in err and "use --engine nuts" in err
