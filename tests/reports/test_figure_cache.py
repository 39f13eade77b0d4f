"""The report's figure cache: the same page without drawing, drawn again on any change.

A synthetic run folder (draws from a normal, no sampling) rendered the way ``check`` does.
"""

import json

import numpy as np
import pytest
from bayescheck.reports import figure_cache, figure_jobs, report
from bayescheck.reports.report import render_run
from scipy import stats

pytestmark = pytest.mark.slow  # draws matplotlib figures


@pytest.fixture
def run(tmp_path):
    import arviz_base as azb
    import xarray as xr
    from bayescheck.inference.compare import compare_idata
    from bayescheck.inference.nuts import SampleResult
    from bayescheck.inference.result import AnalyticFit, ExactMarginal
    from bayescheck.models.spec import load_spec
    from bayescheck.reports.check import CheckResult
    from bayescheck.reports.cli import EXAMPLES

    rng = np.random.default_rng(3)
    chains, draws, k = 4, 300, 3
    azb.from_dict({"posterior": {"w": rng.normal(size=(chains, draws, k))},
                   "sample_stats": {"energy": rng.normal(size=(chains, draws)),
                                    "diverging": np.zeros((chains, draws), bool)}},
                  dims={"w": ["w_dim_0"]}).to_netcdf(tmp_path / "posterior.nc",
                                                      engine="h5netcdf")
    marginals = [ExactMarginal(name=f"w[{i}]", var="w", coords={"w_dim_0": i},
                               dist=stats.norm(0.0, 1.0)) for i in range(k)]
    idata = xr.open_datatree(tmp_path / "posterior.nc", engine="h5netcdf")
    fitted = AnalyticFit(model="synthetic", parameters={}, marginals=marginals)
    check = CheckResult(fitted, SampleResult(idata, 1.0, 0.5, "nutpie"),
                        compare_idata(marginals, idata), tmp_path, {})
    spec = load_spec(EXAMPLES / "beta_bernoulli" / "coin.toml")
    report.write_report_data(tmp_path, report.report_data(check, spec, spec.sampling, "# s"))
    idata.close()
    return tmp_path


def _count_draws(monkeypatch) -> list:
    calls = []
    real = report.draw_all
    monkeypatch.setattr(report, "draw_all", lambda entries: calls.append(1) or real(entries))
    return calls


def test_an_unchanged_run_is_rendered_from_the_cache_identically(run, monkeypatch):
    calls = _count_draws(monkeypatch)
    first = render_run(run)
    assert calls == [1] and (run / figure_cache.CACHE_FILE).exists()
    again = render_run(run)
    assert calls == [1], "the figures were drawn again for unchanged files"
    assert again == first and first.count("<img ") >= 5


def test_changed_draws_are_drawn_again(run, monkeypatch):
    import xarray as xr

    calls = _count_draws(monkeypatch)
    first = render_run(run)
    tree = xr.load_datatree(run / "posterior.nc", engine="h5netcdf")
    tree["posterior"]["w"] = tree["posterior"]["w"] + 5.0  # other draws, same report.json
    tree.to_netcdf(run / "posterior.nc", engine="h5netcdf")
    second = render_run(run)
    assert calls == [1, 1]
    assert second != first


def test_changed_report_data_is_drawn_again(run, monkeypatch):
    calls = _count_draws(monkeypatch)
    render_run(run)
    data = json.loads((run / "report.json").read_text())
    data["exact"]["curves"][0]["pdf"] = [2 * v if v is not None else None
                                         for v in data["exact"]["curves"][0]["pdf"]]
    (run / "report.json").write_text(json.dumps(data))
    render_run(run)
    assert calls == [1, 1]


def test_other_code_is_a_different_key(run, monkeypatch):
    key = figure_cache.cache_key(run, "check", report.CHECK_FILES)
    monkeypatch.setattr(figure_cache, "_code", "another version")
    assert figure_cache.cache_key(run, "check", report.CHECK_FILES) != key


def test_a_figure_that_failed_is_not_cached(run, monkeypatch):
    from bayescheck.reports import plots

    def broken(*args):
        raise RuntimeError("transient")

    monkeypatch.setattr(plots, "pair_figure", broken)
    monkeypatch.setattr(figure_jobs, "workers", lambda: 1)
    html = render_run(run)
    assert "not drawn: RuntimeError: transient" in html
    assert not (run / figure_cache.CACHE_FILE).exists()
    monkeypatch.undo()
    assert "not drawn" not in render_run(run)


def test_an_unwritable_cache_does_not_break_the_report(run, monkeypatch):
    from bayescheck.models.errors import BayescheckError

    def refuse(path, text):
        raise BayescheckError(f"{path}: cannot write")

    monkeypatch.setattr("bayescheck.reports.writers.write_text_atomic", refuse)
    html = render_run(run)
    assert html.count("<img ") >= 5 and not (run / figure_cache.CACHE_FILE).exists()
