"""Beta-Bernoulli and Dirichlet-categorical end to end with NUTS.

Three sampler runs in all (module fixtures): the coin and die examples, and the extreme data
set all zeros (the die already has a face that never came up). The negative
cases reuse the examples' draws with a deliberately wrong analytic posterior.

Why an off-by-one prior shape is detectable here: for Beta(A, B) with N = A + B, adding one to
A moves the mean by B / (N (N + 1)), which is sqrt(B / (A (N + 1))) posterior sds, and the
mean's Monte Carlo error is one sd / sqrt(ESS). The coin has A, B = 19, 13 (N = 32) and
ESS ~ 3600 over 8000 draws, so the shift is about 0.14 sd ~ 8 MCSE (a) or 0.21 sd ~ 13 MCSE
(b) (measured: 8.2 and 12.8), far above the Bonferroni threshold of ~3.7. The examples are
small on purpose: with thousands of tosses the same error would hide inside the Monte Carlo
noise.
"""

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from bayescheck.inference.checking.compare import compare_idata
from bayescheck.inference.families import fit
from bayescheck.models import load_spec
from bayescheck.reports.check import run_check
from bayescheck.reports.cli import main

pytestmark = pytest.mark.nuts

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
COIN = EXAMPLES / "beta_bernoulli" / "coin.toml"
DIE = EXAMPLES / "dirichlet_categorical" / "die.toml"


@pytest.fixture(scope="module")
def coin_check(tmp_path_factory):
    out = tmp_path_factory.mktemp("coin")
    code = main(["check", str(COIN), "--out", str(out), "--quiet"])
    return code, out


@pytest.fixture(scope="module")
def die_check(tmp_path_factory):
    out = tmp_path_factory.mktemp("die")
    return run_check(load_spec(DIE), out, report=False)


def _extreme(tmp_path_factory, name, values):
    folder = tmp_path_factory.mktemp(name)
    pd.DataFrame({"win": values}).to_csv(folder / "d.csv", index=False)
    (folder / "s.toml").write_text('model = "beta_bernoulli"\n[data]\npath = "d.csv"\n'
                                   'target = "win"\n[prior]\na = 1\nb = 1\n'
                                   '[sampling]\nseed = 5\n')
    code = main(["check", str(folder / "s.toml"), "--out", str(folder / "out"), "--quiet"])
    return code, json.loads((folder / "out" / "summary.json").read_text())


def _idata(out):
    import xarray as xr

    return xr.open_datatree(out / "posterior.nc", engine="h5netcdf")


def test_coin_example_passes(coin_check):
    code, out = coin_check
    summary = json.loads((out / "summary.json").read_text())
    assert code == 0, summary
    assert summary["verdict"] == "pass" and summary["model"] == "beta_bernoulli"
    assert [p["name"] for p in summary["parameters"]] == ["p"]
    assert summary["diagnostics"]["divergences"] == 0
    posterior = json.loads((out / "posterior.json").read_text())
    p = posterior["parameters"]["p"]
    assert (p["a"], p["b"], p["mle"], p["map"]) == (19.0, 13.0, 0.75, 0.6)
    html = (out / "report.html").read_text()
    assert "the prior (dashed)" in html and "PASS" in html


@pytest.mark.parametrize("which", ["a", "b"])
def test_prior_shape_off_by_one_fails(coin_check, which):
    _, out = coin_check
    spec = load_spec(COIN)
    wrong = fit(replace(spec, model=replace(spec.model, **{which: getattr(spec.model, which)
                                                           + 1})))
    assert wrong.posterior.parameters["p"][which] == fit(spec).posterior.parameters["p"][which] + 1
    result = compare_idata(wrong.posterior.marginals, _idata(out))
    assert result.verdict == "fail", result.summary()
    assert result.diagnostics.healthy
    # and the right posterior passes on the very same draws
    assert compare_idata(fit(spec).posterior.marginals, _idata(out)).verdict == "pass"


def test_die_example_passes_with_an_unseen_face(die_check):
    result = die_check
    assert result.verdict == "pass", result.comparison.summary()
    names = [p.name for p in result.comparison.parameters]
    assert names == [f"pi[{f}]" for f in range(1, 7)]
    assert result.fit.posterior.parameters["pi"]["counts"][5] == 0
    unseen = result.comparison.parameters[5]
    assert unseen.verdict == "pass"
    assert unseen.analytic["mean"] == pytest.approx(1 / 30)
    summary = json.loads((result.out / "summary.json").read_text())
    assert summary["verdict"] == "pass"


def test_die_concentration_off_by_one_fails(die_check):
    """One face's concentration off by one (alpha_3 = 10 -> 11, alpha_0 = 30 -> 31) moves
    pi[3]'s mean by 0.25 posterior sd, ~19 MCSE at ESS ~ 6000; every other marginal's
    second shape moves too, so several rows fail."""
    spec = load_spec(DIE)
    conc = tuple(1.0 + (i == 2) for i in range(6))
    wrong = fit(replace(spec, model=replace(spec.model, concentration=conc)))
    assert wrong.posterior.parameters["pi"]["alpha"][2] == result_alpha(die_check)[2] + 1
    result = compare_idata(wrong.posterior.marginals, die_check.sample.idata)
    assert result.verdict == "fail"
    assert {p.name: p.verdict for p in result.parameters}["pi[3]"] == "fail"


def result_alpha(check):
    return check.fit.posterior.parameters["pi"]["alpha"]


@pytest.mark.parametrize("name, values, posterior", [
    ("zeros", [0] * 8, (1.0, 9.0)),
])
def test_extreme_data_pass(tmp_path_factory, name, values, posterior):
    """All failures: the posterior piles up at a boundary (Beta(1, 9) has its mode at 0) and
    the MLE is 0; NUTS on the logit scale still agrees. All successes is the mirror image
    under p -> 1 - p (the Beta(1, 1) prior and the logit are symmetric), so the sampler sees
    the same geometry: it was a second NUTS compile proving the same thing (the engine's
    all-ones case is tested without sampling in tests/inference/engines/test_counts.py)."""
    code, summary = _extreme(tmp_path_factory, name, values)
    assert code == 0, summary
    assert summary["verdict"] == "pass"
    assert summary["parameters"][0]["analytic_mean"] == pytest.approx(
        posterior[0] / sum(posterior))
