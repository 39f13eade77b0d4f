"""The regression likelihood declared through its sufficient statistics (check at large n).

Same posterior as the row-wise declaration: the two log densities, at any (theta, sigma2),
differ by one constant. A root of other data (a wrong statistic) breaks that. Slow: each
test compiles PyMC log densities.
"""

from __future__ import annotations

import bayescheck.models.linear_regression as lr
import numpy as np
import pandas as pd
import pytest
from bayescheck.data.sources import DataSource
from bayescheck.models.linear_regression import LinearRegression, qr_root

pytest.importorskip("pymc")
pytestmark = pytest.mark.slow


def _data(rng, n=400, d=3):
    X = np.column_stack([np.ones(n), rng.normal(size=(n, d - 1)) * [3.0, 0.2][: d - 1]])
    y = X @ rng.normal(size=d) + rng.normal(scale=0.5, size=n)
    return X, y


def _models(known: bool, flat: bool):
    kw = {"noise_sd": 0.5} if known else {"noise_sd": None, "noise_shape": 2.0,
                                          "noise_scale": 1.0}
    prior = ({"prior_mean": None, "prior_cov": None} if flat else
             {"prior_mean": np.zeros(3), "prior_cov": np.diag([4.0, 2.0, 9.0])})
    return LinearRegression(features=("intercept", "x1", "x2"), target="y", **prior, **kw)


def _logp_differences(rowwise, sufficient, rng, points=6):
    """row-wise minus sufficient log density at random points (same value variables)."""
    f_row, f_suf = rowwise.compile_logp(), sufficient.compile_logp()
    names = [v.name for v in rowwise.value_vars]
    assert names == [v.name for v in sufficient.value_vars]
    out = []
    for _ in range(points):
        point = {name: rng.normal(size=np.shape(rowwise.initial_point()[name])) * 0.7
                 for name in names}
        out.append(f_row(point) - f_suf(point))
    return np.array(out)


@pytest.mark.parametrize("known", [True, False])
@pytest.mark.parametrize("flat", [True, False])
def test_sufficient_declaration_has_the_row_wise_log_density_up_to_a_constant(known, flat):
    rng = np.random.default_rng(0)
    X, y = _data(rng)
    model = _models(known, flat)
    rowwise = model.pymc_model(X, y)
    sufficient = model.pymc_model_sufficient(qr_root(np.column_stack([X, y])), len(y))
    diff = _logp_differences(rowwise, sufficient, rng)
    # the log densities are O(n) = hundreds; the difference is one constant to rounding
    assert np.ptp(diff) < 1e-8 * np.max(np.abs(diff) + 1.0)


@pytest.mark.parametrize("known", [True, False])
def test_a_wrong_statistic_changes_the_posterior(known):
    """Negative: the root of other responses is not the same posterior up to a constant."""
    rng = np.random.default_rng(1)
    X, y = _data(rng)
    model = _models(known, flat=False)
    rowwise = model.pymc_model(X, y)
    other = y + rng.normal(scale=0.1, size=y.size)
    wrong = model.pymc_model_sufficient(qr_root(np.column_stack([X, other])), len(y))
    diff = _logp_differences(rowwise, wrong, rng)
    assert np.ptp(diff) > 1e-3


def test_declare_switches_to_the_statistics_above_max_rowwise(monkeypatch):
    rng = np.random.default_rng(2)
    X, y = _data(rng, n=120)
    frames = [pd.DataFrame({"x1": X[i:i + 40, 1], "x2": X[i:i + 40, 2], "y": y[i:i + 40]})
              for i in (0, 40, 80)]
    model = LinearRegression(features=("intercept", "x1", "x2"), target="y",
                             prior_mean=np.zeros(3), prior_cov=np.eye(3) * 4.0, noise_sd=None,
                             intercept=True)
    source = DataSource.from_frame(*frames)
    assert [rv.name for rv in model.declare(source).observed_RVs] == ["y"]
    monkeypatch.setattr(lr, "MAX_ROWWISE", 100)
    declared = model.declare(source)
    assert [rv.name for rv in declared.observed_RVs] == ["z", "rss"]
    # the batch-wise roots merged give the same statistics as one QR of all rows
    diff = _logp_differences(model.pymc_model(X, y), declared, rng)
    assert np.ptp(diff) < 1e-8 * np.max(np.abs(diff) + 1.0)


def _observed(pymc_model) -> dict:
    return {rv.name: np.asarray(pymc_model.rvs_to_values[rv].data)
            for rv in pymc_model.observed_RVs}


@pytest.mark.parametrize("ahead", ["0", "2"])
def test_check_reads_the_files_once_with_the_same_declaration(tmp_path, monkeypatch, ahead):
    """fit(declaration=True), as check calls it, gathers the declaration's batch roots on its
    own pass; declare then reads no file and declares exactly (bit for bit) the statistics
    it declares when it reads the files itself. Without them (a plain fit) it reads."""
    from bayescheck.inference.families import fit
    from bayescheck.models import load_spec

    monkeypatch.setenv("BAYESCHECK_READ_AHEAD", ahead)
    rng = np.random.default_rng(4)
    (tmp_path / "parts").mkdir()
    for i in range(4):
        X = rng.normal(size=(50 + 10 * i, 2)) * [2.0, 0.5]
        y = 0.3 + X @ [1.0, -2.0] + rng.normal(scale=0.5, size=len(X))
        pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y}).to_parquet(
            tmp_path / "parts" / f"{i}.parquet", index=False)
    (tmp_path / "spec.toml").write_text(
        'model = "linear_regression"\n[data]\npath = "parts/*.parquet"\ntarget = "y"\n'
        'intercept = true\n[prior]\nmean = 0.0\ncov = 4.0\nnoise_shape = 2.0\n'
        'noise_scale = 1.0\n')
    spec = load_spec(tmp_path / "spec.toml")
    monkeypatch.setattr(lr, "MAX_ROWWISE", 100)
    read_twice = spec.model.declare(spec.data)           # reads the files
    result = fit(spec, declaration=True)
    plain = fit(spec)
    np.testing.assert_array_equal(result.posterior.state.root, plain.posterior.state.root)
    assert (
        result.record.declaration["rows"] == 260
        and len(result.record.declaration["batch_roots"]) == 4
    )
    assert plain.record.declaration == {}

    def no_reading(self, skip=None):
        raise AssertionError("the declaration read the files again")

    monkeypatch.setattr(DataSource, "loaders", no_reading)
    read_once = spec.model.declare(spec.data, fit=result)
    assert [rv.name for rv in read_once.observed_RVs] == ["z", "rss"]
    once, twice = _observed(read_once), _observed(read_twice)
    assert once.keys() == twice.keys()
    for name in once:
        np.testing.assert_array_equal(once[name], twice[name])
    with pytest.raises(AssertionError, match="read the files again"):
        spec.model.declare(spec.data, fit=plain)
