"""End to end with NUTS: the examples pass, wrong analytic posteriors fail, a starved
sampler is inconclusive, and the report escapes what users wrote.

Each example is sampled once (module fixture); the negative cases reuse its draws with a
deliberately wrong analytic posterior, so they cost no extra sampling.
"""

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.inference.checking.compare import compare_idata
from bayescheck.inference.families import fit
from bayescheck.models import load_spec
from bayescheck.reports.check import run_check
from bayescheck.reports.cli import main
from scipy import stats

pytestmark = pytest.mark.nuts

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "linear_regression"


@pytest.fixture(scope="module")
def stream_check(tmp_path_factory):
    out = tmp_path_factory.mktemp("stream")
    code = main(["check", str(EXAMPLES / "stream.toml"), "--out", str(out), "--quiet"])
    return code, out


@pytest.fixture(scope="module")
def unknown_noise_check(tmp_path_factory):
    out = tmp_path_factory.mktemp("nig")
    spec = load_spec(EXAMPLES / "unknown_noise.toml")
    return run_check(spec, out), out


def test_stream_example_passes(stream_check):
    code, out = stream_check
    summary = json.loads((out / "summary.json").read_text())
    assert code == 0, summary
    assert summary["verdict"] == "pass"
    assert summary["model"] == "linear_regression"
    assert [p["name"] for p in summary["parameters"]] == [
        "theta[intercept]", "theta[x1]", "theta[x2]"]
    assert summary["diagnostics"]["divergences"] == 0
    for name in ("posterior.json", "comparison.csv", "report.html", "posterior.nc"):
        assert (out / name).stat().st_size > 0
    html = (out / "report.html").read_text()
    assert "The stream, batch by batch" in html and "http" not in html.split("<body>")[1]
    rows = pd.read_csv(out / "comparison.csv")
    assert set(rows["verdict"]) == {"pass"}


def test_unknown_noise_example_passes(unknown_noise_check):
    result, out = unknown_noise_check
    assert result.verdict == "pass", result.comparison.summary()
    names = [p.name for p in result.comparison.parameters]
    assert names[-1] == "sigma2"


def _prior_variance_doubled(spec):
    model = replace(spec.model, prior_cov=2 * spec.model.prior_cov)
    return fit(replace(spec, model=model))


def test_prior_variance_off_by_two_fails_from_check(tmp_path):
    """Through run_check itself, on a small-data design where the prior matters (with the
    examples' data the likelihood dominates and a doubled prior variance moves the posterior
    by less than Monte Carlo error: not a case the check could or should catch)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(8, 2))
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": X @ [1.0, -1.0] + rng.normal(size=8)}
                 ).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text('model = "linear_regression"\n[data]\npath = "d.csv"\n'
                                     'target = "y"\n[prior]\ncov = 0.5\n[likelihood]\n'
                                     'noise_sd = 1.0\n')
    spec = load_spec(tmp_path / "s.toml")
    result = run_check(spec, tmp_path / "out", analytic=_prior_variance_doubled(spec))
    assert result.verdict == "fail"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["verdict"] == "fail"
    assert "FAIL" in (tmp_path / "out" / "report.html").read_text()


def test_mean_moved_by_five_mcse_fails(stream_check):
    _, out = stream_check
    import xarray as xr

    idata = xr.open_datatree(out / "posterior.nc", engine="h5netcdf")
    right = fit(load_spec(EXAMPLES / "stream.toml"))
    first = compare_idata(right.posterior.marginals, idata).parameters[0]
    direction = math.copysign(1.0, first.sampled["mean"] - first.analytic["mean"])
    moved = first.sampled["mean"] - direction * 5 * first.mcse["mean"]
    m0 = right.posterior.marginals[0]
    wrong = [replace(m0, dist=stats.norm(moved, m0.dist.std())), *right.posterior.marginals[1:]]
    result = compare_idata(wrong, idata)
    assert result.verdict == "fail"
    assert [p.verdict for p in result.parameters] == ["fail", "pass", "pass"]


def test_starved_sampler_is_inconclusive_and_report_escapes(tmp_path, capsys):
    evil = "<script>alert(1)</script>"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 1))
    pd.DataFrame({evil: X[:, 0], "y": 2 * X[:, 0] + rng.normal(size=30)}).to_csv(
        tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text('model = "linear_regression"\n[data]\npath = "d.csv"\n'
                                     'target = "y"\n[likelihood]\nnoise_sd = 1.0\n')
    code = main(["check", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out"),
                 "--chains", "1", "--draws", "20", "--tune", "20", "--quiet"])
    assert code == 3
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["verdict"] == "inconclusive"
    html = (tmp_path / "out" / "report.html").read_text()
    assert evil not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "INCONCLUSIVE" in html


def test_posterior_nc_holds_the_posterior_predictive_and_the_data(stream_check):
    """posterior.nc: the NUTS posterior predictive of y, and the observed y, next to the
    posterior; its mean per row is the exact predictive mean (Monte Carlo error only)."""
    _, out = stream_check
    import xarray as xr

    tree = xr.open_datatree(out / "posterior.nc", engine="h5netcdf")
    pp, observed = tree["posterior_predictive"]["y"], tree["observed_data"]["y"]
    assert pp.dims == ("chain", "draw", "obs") and observed.dims == ("obs",)
    spec = load_spec(EXAMPLES / "stream.toml")
    parts = [spec.model.design(b) for b in spec.data.batches()]
    X, y = np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    np.testing.assert_array_equal(observed.values, y)
    exact = fit(spec).posterior.state.predictive(X)
    n = pp.sizes["chain"] * pp.sizes["draw"]
    z = (pp.mean(("chain", "draw")).values - exact.mean()) / (exact.std() / np.sqrt(n))
    assert np.max(np.abs(z)) < 6
    # a predictive mean moved by half a predictive sd would be seen
    assert np.max(np.abs(z + 0.5 * np.sqrt(n))) > 6
