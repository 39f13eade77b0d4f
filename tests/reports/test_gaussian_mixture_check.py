"""gaussian_mixture end to end with NUTS: the 2-D example passes through the CLI, and an EM
estimate moved by 3 posterior sds fails. One sampler run (module fixture); the wrong estimate
reuses its draws through compare_estimates and the mixture's own criteria."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
import xarray as xr

from inference.compare import compare_estimates_idata
from inference.dispatch import fit
from inference.families.gaussian_mixture import posterior_checks
from models import load_spec
from reports.cli import main

pytestmark = pytest.mark.nuts

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "gaussian_mixture"


@pytest.fixture(scope="module")
def blobs_check(tmp_path_factory):
    out = tmp_path_factory.mktemp("blobs")
    code = main(["check", str(EXAMPLES / "blobs.toml"), "--out", str(out), "--quiet"])
    return code, out


def test_blobs_example_passes(blobs_check):
    code, out = blobs_check
    summary = json.loads((out / "summary.json").read_text())
    assert code == 0, summary
    assert summary["verdict"] == "pass"
    rows = summary["estimates"]["parameters"]
    names = [r["name"] for r in rows]
    assert "responsibilities" in names and "means[0, x1]" in names
    assert all(r["verdict"] == "pass" for r in rows)
    assert all(abs(r["posterior_mode_distance_sd"]) < 2 for r in rows
               if r["name"] != "responsibilities")
    html = (out / "report.html").read_text()
    assert "The data with the fitted components" in html
    assert "EM objective per iteration" in html


def test_estimate_moved_by_three_posterior_sds_fails(blobs_check):
    _, out = blobs_check
    spec = load_spec(EXAMPLES / "blobs.toml")
    right = fit(spec)
    idata = xr.open_datatree(out / "posterior.nc", engine="h5netcdf")
    ok = posterior_checks(right, compare_estimates_idata(right.estimates, idata), idata, spec)
    assert ok.verdict == "pass"
    target = "means[1, x2]"
    row = next(r for r in ok.parameters if r.name == target)
    moved = row.sampled["mean"] + 3 * row.sampled["sd"]
    estimates = [replace(e, value=moved) if e.name == target else e for e in right.estimates]
    state = right.state
    means = state.means.copy()
    means[1, 1] = moved
    wrong = replace(right, estimates=estimates, state=state._replace(means=means))
    result = posterior_checks(wrong, compare_estimates_idata(wrong.estimates, idata), idata,
                              spec)
    assert result.verdict == "fail"
    failed = {r.name for r in result.parameters if r.verdict == "fail"}
    assert target in failed
    assert failed <= {target, "responsibilities"}
    bad = next(r for r in result.parameters if r.name == target)
    assert not bad.inside and abs(bad.sampled["mode_distance_sd"]) > 2
