"""ARD end to end with NUTS: the example passes in conditional mode; a posterior covariance
off by a factor fails; the hierarchical model agrees with the type-II ML estimates on a small
problem (relevant sets and intervals); bad input exits 2 before any sampling.

Three sampler runs in all: the example (module fixture, its draws reused for the wrong-Sigma
comparison) and one ``mode = "both"`` run (conditional + hierarchical) fed a wrong Sigma.
"""

import json
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

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ard" / "design.toml"


@pytest.fixture(scope="module")
def example_check(tmp_path_factory):
    out = tmp_path_factory.mktemp("ard")
    code = main(["check", str(EXAMPLE), "--out", str(out), "--quiet"])
    return code, out


def _variances_doubled(result):
    """The same fit with every relevant weight's posterior variance doubled."""
    wrong = [replace(m, dist=stats.norm(m.dist.mean(), np.sqrt(2) * m.dist.std()))
             for m in result.posterior.marginals]
    return replace(result, posterior=replace(result.posterior, marginals=wrong))


def test_example_passes_in_conditional_mode(example_check):
    code, out = example_check
    summary = json.loads((out / "summary.json").read_text())
    assert code == 0, summary
    assert summary["verdict"] == "pass" and summary["model"] == "ard"
    assert [p["name"] for p in summary["parameters"]] == ["w[x2]", "w[x6]", "w[x9]"]
    assert summary["diagnostics"]["divergences"] == 0
    assert "estimates" not in summary
    for name in ("posterior.json", "comparison.csv", "report.html", "posterior.nc"):
        assert (out / name).stat().st_size > 0
    posterior = json.loads((out / "posterior.json").read_text())
    assert posterior["fit"]["relevant_features"] == ["x2", "x6", "x9"]
    html = (out / "report.html").read_text()
    for title in ("Weights", "Log evidence per iteration", "Marginal posteriors"):
        assert f"<h3>{title}</h3>" in html  # each figure is a section under "Figures"
    assert "relevant: x2, x6, x9 (3 of 12)" in html


def test_wrong_sigma_fails_on_the_example_draws(example_check):
    import xarray as xr

    _, out = example_check
    idata = xr.open_datatree(out / "posterior.nc", engine="h5netcdf")
    right = fit(load_spec(EXAMPLE))
    assert compare_idata(right.posterior.marginals, idata).verdict == "pass"
    wrong = compare_idata(_variances_doubled(right).posterior.marginals, idata)
    assert wrong.verdict == "fail"
    assert all(p.verdict == "fail" for p in wrong.parameters)
    # the deterministic w is exactly 0 for every pruned weight in the conditional model
    w = idata.posterior["w"]
    pruned = right.posterior.parameters["w"]["pruned"]
    assert float(abs(w.sel(feature=pruned)).max()) == 0.0


@pytest.fixture(scope="module")
def both_check(tmp_path_factory):
    """A small problem in mode "both", with a deliberately wrong Sigma for the exact part."""
    tmp = tmp_path_factory.mktemp("ard_both")
    rng = np.random.default_rng(11)
    X = rng.normal(size=(50, 5))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    frame["y"] = X @ [1.5, 0.0, -1.0, 0.0, 0.0] + 0.5 * rng.normal(size=50)
    frame.to_csv(tmp / "d.csv", index=False)
    (tmp / "s.toml").write_text('model = "ard"\n[data]\npath = "d.csv"\ntarget = "y"\n'
                                '[fit]\nrelevance_threshold = "ric"\n'
                                '[check]\nmode = "both"\n[sampling]\nseed = 3\n')
    spec = load_spec(tmp / "s.toml")
    right = fit(spec)
    return run_check(spec, tmp / "out", analytic=_variances_doubled(right)), tmp / "out"


def test_wrong_sigma_fails_and_hierarchical_agrees(both_check):
    result, out = both_check
    assert result.comparison.verdict == "fail"
    assert result.verdict == "fail"  # a failing check fails the whole, whatever the other says
    est = result.estimates
    support = est.support()
    assert support["estimate_nonzero"] == ["w[x0]", "w[x2]"]
    # NUTS on the hierarchical model may have trouble: then no verdict, never a pass
    if not est.diagnostics.healthy:
        assert est.verdict == "inconclusive"
        pytest.skip(f"hierarchical sampler unhealthy: {est.diagnostics.problems}")
    assert est.verdict == "pass", est.summary()
    assert support["agree"] and support["posterior_excludes_zero"] == ["w[x0]", "w[x2]"]
    rows = {p.name: p for p in est.parameters}
    assert all(abs(rows[n].distance_sd) < 1.0 for n in ("w[x0]", "w[x2]"))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdict"] == "fail"
    assert summary["estimates"]["verdict"] == "pass"
    assert summary["estimates"]["support"]["agree"] is True
    for name in ("estimates.csv", "posterior_full.nc", "posterior.nc", "comparison.csv"):
        assert (out / name).stat().st_size > 0
    html = (out / "report.html").read_text()
    assert "Point estimates against the full posterior" in html and "FAIL" in html


def test_bad_input_exits_2_before_sampling(tmp_path, capsys):
    (tmp_path / "s.toml").write_text('model = "ard"\n[data]\npath = "nope.csv"\ntarget = "y"\n')
    assert main(["check", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")]) == 2
    assert "nope.csv: data file not found" in capsys.readouterr().err
    # every column all-zero: nothing is relevant, so the conditional check has nothing to sample
    pd.DataFrame({"a": np.zeros(10), "b": np.zeros(10),
                  "y": np.random.default_rng(0).normal(size=10)}).to_csv(tmp_path / "d.csv",
                                                                          index=False)
    (tmp_path / "z.toml").write_text('model = "ard"\n[data]\npath = "d.csv"\ntarget = "y"\n')
    assert main(["check", str(tmp_path / "z.toml"), "--out", str(tmp_path / "o")]) == 2
    assert "every weight was pruned" in capsys.readouterr().err
