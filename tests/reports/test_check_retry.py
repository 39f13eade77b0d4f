"""``check`` samples once more when only the sampler's health stood in the way of a verdict.

The first run is starved on purpose (its draws cut to 25 per chain, so the ESS limit fails);
the second, with twice the tuning and draws, is judged alone with the same thresholds: a
correct closed form then passes and a wrong one (a Beta prior shape off by one) still fails.
"""

import json
from dataclasses import replace
from pathlib import Path

import bayescheck.inference.checking.check as check_module
import pytest
from bayescheck.inference.checking.check import RETRY_SEED_OFFSET
from bayescheck.inference.families import fit
from bayescheck.models import load_spec
from bayescheck.reports.check import run_check
from bayescheck.reports.cli import main

pytestmark = pytest.mark.nuts

COIN = Path(__file__).resolve().parents[2] / "examples" / "beta_bernoulli" / "coin.toml"


@pytest.fixture
def first_run_starved(monkeypatch):
    """``sample_nuts`` whose first call keeps 25 draws per chain; the calls are recorded."""
    real = check_module.sample_nuts
    calls = []

    def sample(model, **kwargs):
        calls.append(kwargs)
        result = real(model, **kwargs)
        if len(calls) == 1:
            result.idata = result.idata.isel(draw=slice(0, 25), missing_dims="ignore")
        return result

    monkeypatch.setattr(check_module, "sample_nuts", sample)
    return calls


@pytest.fixture
def compiles(monkeypatch):
    """Calls of nutpie.compile_pymc_model, counted."""
    import nutpie

    real, calls = nutpie.compile_pymc_model, []

    def counted(model, **kwargs):
        calls.append(model)
        return real(model, **kwargs)

    monkeypatch.setattr(nutpie, "compile_pymc_model", counted)
    return calls


def _spec(draws=500, tune=500):
    spec = load_spec(COIN)
    return replace(spec, sampling=replace(spec.sampling, draws=draws, tune=tune))


def test_a_wrong_closed_form_still_fails_after_the_retry(first_run_starved, tmp_path):
    spec = _spec()
    wrong = fit(replace(spec, model=replace(spec.model, a=spec.model.a + 1.0)))
    result = run_check(spec, tmp_path, analytic=wrong)
    assert [a["verdict"] for a in result.attempts] == ["inconclusive", "fail"]
    assert result.verdict == "fail"


def test_no_retry_keeps_the_first_verdict(first_run_starved, tmp_path, capsys):
    code = main(["check", str(COIN), "--out", str(tmp_path), "--draws", "500", "--tune",
                 "500", "--no-retry", "--quiet"])
    assert code == 3
    assert len(first_run_starved) == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [a["verdict"] for a in summary["attempts"]] == ["inconclusive"]


def test_a_starved_first_run_is_sampled_again_passes_and_the_cli_says_so(first_run_starved,
                                                                         compiles, tmp_path,
                                                                         capsys):
    """Through the CLI (which calls run_check): the retry, its records and what is printed."""
    code = main(["check", str(COIN), "--out", str(tmp_path), "--draws", "500", "--tune",
                 "500", "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    assert "gave no verdict" in out and f"seed {3 + RETRY_SEED_OFFSET}" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["verdict"] == "pass"
    first, again = summary["attempts"]
    assert first["verdict"] == "inconclusive" and first["problems"]
    assert again["verdict"] == "pass"
    assert (again["draws"], again["tune"]) == (1000, 1000)
    assert again["seed"] == first["seed"] + RETRY_SEED_OFFSET
    assert [c["draws"] for c in first_run_starved] == [500, 1000]
    assert len(compiles) == 1  # the retry samples the model compiled for the first run
    # the verdict rests on the second run's draws alone: posterior.nc holds the kept run,
    # with its posterior predictive
    import xarray as xr
    with xr.open_datatree(tmp_path / "posterior.nc") as tree:
        assert tree.posterior.sizes["draw"] == 1000
        assert "posterior_predictive" in tree.children
    sentence = json.loads((tmp_path / "report.json").read_text())["verdict_sentence"]
    assert "sampled again with 1000 draws after 1000" in sentence
    assert "sampled again with 1000 draws" in (tmp_path / "report.html").read_text()
