"""A mixture with a known sd, checked with NUTS: its posterior checks read the one fixed
covariance (no covariance draws exist), the converged MAP estimate passes, and the same
estimate with one mean moved by 3 posterior sds fails."""

import json
from dataclasses import replace

import numpy as np
import pytest
import xarray as xr
from bayescheck.inference.checking.compare import compare_estimates_idata
from bayescheck.inference.families import fit
from bayescheck.inference.families.gaussian_mixture import posterior_checks
from bayescheck.models import load_spec
from bayescheck.reports.cli import main

pytestmark = pytest.mark.nuts

SPEC = """model = "gaussian_mixture"
n_components = 2

[data]
path = "two.csv"
features = ["x"]

[fit]
known_sd = 1.0
equal_weights = true
init_means = [-1.0, 5.0]

[prior]
mean = 2.0
kappa = 0.01

[sampling]
draws = 1000
tune = 1000
chains = 4
seed = 0
"""


@pytest.fixture(scope="module")
def known_sd_check(tmp_path_factory):
    root = tmp_path_factory.mktemp("known_sd")
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(0.0, 1.0, 40), rng.normal(4.0, 1.0, 40)])
    (root / "two.csv").write_text("x\n" + "\n".join(repr(float(v)) for v in x) + "\n")
    (root / "spec.toml").write_text(SPEC)
    out = root / "out"
    code = main(["check", str(root / "spec.toml"), "--out", str(out), "--quiet"])
    return code, root, out


def test_known_sd_mixture_passes_with_its_responsibilities_checked(known_sd_check):
    code, _, out = known_sd_check
    summary = json.loads((out / "summary.json").read_text())
    assert code == 0, summary
    assert summary["verdict"] == "pass"
    rows = {r["name"]: r for r in summary["estimates"]["parameters"]}
    assert {"means[0, x]", "means[1, x]", "responsibilities"} <= set(rows)
    assert all(r["verdict"] == "pass" for r in rows.values())


def test_known_sd_estimate_moved_by_three_posterior_sds_fails(known_sd_check):
    _, root, out = known_sd_check
    spec = load_spec(root / "spec.toml")
    right = fit(spec)
    idata = xr.open_datatree(out / "posterior.nc", engine="h5netcdf")
    assert "covariances" not in idata.posterior and "variances" not in idata.posterior
    ok = posterior_checks(right, compare_estimates_idata(right.posterior.estimates, idata),
                          idata, spec)
    assert ok.verdict == "pass"
    target = "means[0, x]"
    row = next(r for r in ok.parameters if r.name == target)
    moved = row.sampled["mean"] + 3 * row.sampled["sd"]
    estimates = [replace(e, value=moved) if e.name == target else e
                 for e in right.posterior.estimates]
    state = right.posterior.state
    means = state.means.copy()
    means[0, 0] = moved
    wrong = replace(right, posterior=replace(right.posterior, estimates=estimates,
                                              state=state._replace(means=means)))
    result = posterior_checks(wrong, compare_estimates_idata(wrong.posterior.estimates, idata),
                              idata, spec)
    assert result.verdict == "fail"
    assert target in {r.name for r in result.parameters if r.verdict == "fail"}
