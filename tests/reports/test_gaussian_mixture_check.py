"""gaussian_mixture end to end with NUTS: the 2-D example passes through the CLI, and an EM
estimate moved by 3 posterior sds fails. One sampler run (module fixture); the wrong estimate
reuses its draws through compare_estimates and the mixture's own criteria."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
import xarray as xr
from bayescheck.inference.checking.compare import compare_estimates_idata
from bayescheck.inference.checking.sampling import SampleResult
from bayescheck.inference.families import fit
from bayescheck.inference.families.gaussian_mixture import posterior_checks
from bayescheck.models import load_spec
from bayescheck.reports.cli import main

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
    modes = summary["estimates"]["modes"]
    assert modes["slow"] == [] and "and mix well" in modes["message"][0]
    html = (out / "report.html").read_text()
    assert "The data with the fitted components" in html
    assert "EM objective per iteration" in html


def test_estimate_moved_by_three_posterior_sds_fails(blobs_check):
    _, out = blobs_check
    spec = load_spec(EXAMPLES / "blobs.toml")
    right = fit(spec)
    idata = xr.open_datatree(out / "posterior.nc", engine="h5netcdf")
    ok = posterior_checks(
        right, compare_estimates_idata(right.posterior.estimates, idata), idata, spec
    )
    assert ok.verdict == "pass"
    target = "means[1, x2]"
    row = next(r for r in ok.parameters if r.name == target)
    moved = row.sampled["mean"] + 3 * row.sampled["sd"]
    estimates = [
        replace(e, value=moved) if e.name == target else e for e in right.posterior.estimates
    ]
    state = right.posterior.state
    means = state.means.copy()
    means[1, 1] = moved
    wrong = replace(right, posterior=replace(right.posterior, estimates=estimates,
                                              state=state._replace(means=means)))
    result = posterior_checks(
        wrong, compare_estimates_idata(wrong.posterior.estimates, idata), idata, spec
    )
    assert result.verdict == "fail"
    failed = {r.name for r in result.parameters if r.verdict == "fail"}
    assert target in failed
    assert failed <= {target, "responsibilities"}
    bad = next(r for r in result.parameters if r.name == target)
    assert not bad.inside and abs(bad.sampled["mode_distance_sd"]) > 2


def _with_chain_in_another_mode(idata, chain, shift_sd=20.0):
    """The blobs draws with one chain moved into a made-up second mode: its means shifted by
    ``shift_sd`` posterior sds and its weights reversed (a valid mixture, far from the first)."""
    ds = idata.posterior.ds.copy(deep=True)
    sd = ds["means"].std(("chain", "draw"))
    ds["means"][dict(chain=chain)] = ds["means"].isel(chain=chain) + shift_sd * sd
    w = ds["weights"].isel(chain=chain).values
    ds["weights"][dict(chain=chain)] = w[:, ::-1]
    return xr.DataTree.from_dict({"posterior": ds, "sample_stats": idata.sample_stats.ds})


def _render(out, spec, result, estimates, idata) -> str:
    """The report page of a check made of these parts (no sampling)."""
    from bayescheck.inference.checking.check import CheckResult
    from bayescheck.reports.report import render_run, report_data, write_report_data

    idata.to_netcdf(out / "posterior.nc", engine="h5netcdf")
    sample = SampleResult(idata=idata, seconds=0.0, sampling_seconds=None, sampler="nutpie")
    check = CheckResult(result, None, None, {}, sample, estimates, sampling=spec.sampling,
                        out=out)
    write_report_data(out, report_data(check, spec, spec.sampling, spec.text()))
    return render_run(out)


def test_chains_in_another_mode_are_reported_and_the_claimed_mode_judges(blobs_check,
                                                                         tmp_path):
    """With one chain in a far-away mode the estimate is judged on the other three (pass);
    the report of modes names the chains and their log densities; an estimate moved by 3
    posterior sds still fails there; a chain of the claimed mode that disagrees with the others
    by 1 sd (not another mode) makes the verdict inconclusive, not pass."""
    _, out = blobs_check
    spec = load_spec(EXAMPLES / "blobs.toml")
    right = fit(spec)
    idata = _with_chain_in_another_mode(
        xr.open_datatree(out / "posterior.nc", engine="h5netcdf"), chain=2)
    assert compare_estimates_idata(right.posterior.estimates, idata).verdict == "inconclusive"
    ok = posterior_checks(
        right, compare_estimates_idata(right.posterior.estimates, idata), idata, spec
    )
    assert ok.verdict == "pass", [r.reasons for r in ok.parameters if r.reasons]
    modes = ok.modes
    assert modes["split"] and modes["judged_chains"] == [0, 1, 3]
    assert [g["chains"] for g in modes["groups"]] == [[0, 1, 3], [2]]
    assert ok.diagnostics.chains == 3
    claimed, other = modes["groups"]
    assert claimed["log_density_max"] <= 0 < claimed["log_density_max"] + 50
    assert other["log_density_max"] < claimed["log_density_median"] - 100  # far worse
    assert any("Chain 2: another mode" in m for m in modes["message"])
    assert "modes" in ok.summary()
    html = _render(tmp_path, spec, right, ok, idata)
    assert 'id="modes">Chains and modes</h3>' in html and "Chain 2: another mode" in html
    assert "judged on chains 0, 1, 3, the mode the estimate claims" in html

    # a wrong estimate, judged in the mode it claims, fails
    target = "means[1, x2]"
    row = next(r for r in ok.parameters if r.name == target)
    moved = row.sampled["mean"] + 3 * row.sampled["sd"]
    state = right.posterior.state
    means = state.means.copy()
    means[1, 1] = moved
    wrong = replace(right, posterior=replace(
        right.posterior, state=state._replace(means=means),
        estimates=[replace(e, value=moved) if e.name == target else e
                   for e in right.posterior.estimates]))
    bad = posterior_checks(
        wrong, compare_estimates_idata(wrong.posterior.estimates, idata), idata, spec
    )
    assert bad.modes["judged_chains"] == [0, 1, 3]
    assert bad.verdict == "fail" and target in {r.name for r in bad.parameters
                                               if r.verdict == "fail"}

    # unhealthy within the claimed mode: chain 1 moved by 1 sd (same mode, r_hat far from 1)
    ds = idata.posterior.ds.copy(deep=True)
    ds["means"][dict(chain=1)] = ds["means"].isel(chain=1) + ds["means"].isel(
        chain=[0, 3]).std(("chain", "draw"))
    shaky = xr.DataTree.from_dict({"posterior": ds, "sample_stats": idata.sample_stats.ds})
    unsure = posterior_checks(
        right, compare_estimates_idata(right.posterior.estimates, shaky), shaky, spec
    )
    assert unsure.modes["judged_chains"] == [0, 1, 3]
    assert unsure.verdict == "inconclusive"
    assert any("r_hat" in p for p in unsure.diagnostics.problems)
    # the words say which parameters and which chain, and what the user can change
    slow = unsure.modes["slow"]
    assert slow and all(p["name"].startswith("means[") for p in slow)
    assert all(p["far_chain"] == 1 and p["chains"] == [0, 1, 3] for p in slow)
    text = " ".join(unsure.modes["message"])
    assert "separate modes" in text  # chain 2, moved away, is information
    assert f"{slow[0]['name']} (r_hat" in text and "chain 1 is furthest" in text
    assert "What can change it: more draws (--draws" in text and "fewer components" in text


def test_draws_above_the_em_objective_say_em_stopped_at_a_lower_mode(blobs_check):
    """When the chains around the estimate hold draws of higher posterior density than EM's
    objective (EM stopped at a lower mode), the words say so and name [fit] n_init; on the
    real fit (its objective the highest) they do not."""
    _, out = blobs_check
    spec = load_spec(EXAMPLES / "blobs.toml")
    right = fit(spec)
    idata = xr.open_datatree(out / "posterior.nc", engine="h5netcdf")
    ok = posterior_checks(
        right, compare_estimates_idata(right.posterior.estimates, idata), idata, spec
    )
    assert not ok.modes["groups"][0]["above_em"]
    assert not any("EM stopped at a lower mode" in m for m in ok.modes["message"])
    lower = replace(right, posterior=replace(right.posterior, state=right.posterior.state._replace(
        objective=right.posterior.state.objective - 50.0)))
    low = posterior_checks(
        lower, compare_estimates_idata(lower.posterior.estimates, idata), idata, spec
    )
    assert low.modes["groups"][0]["above_em"]
    (said,) = [m for m in low.modes["message"] if "EM stopped at a lower mode" in m]
    assert "[fit] n_init" in said and "the best of 5 start(s)" in said
