"""sample_nuts through nutpie's and PyMC's public API: where the chains start, what is
compiled once, swapped data, cores and the progress bar, and the draws' shape."""

import io
import os
import sys

import numpy as np
import pytest
from bayescheck.inference.checking.sampling import sample_nuts

pytestmark = pytest.mark.nuts


def two_modes():
    """Two normal modes at -20 and +20, sd 1: NUTS never crosses between them."""
    import pymc as pm

    with pm.Model() as model:
        x = pm.Normal("x", 0.0, 30.0)
        modes = [pm.logp(pm.Normal.dist(mu, 1.0), x) for mu in (-20.0, 20.0)]
        pm.Potential("modes", pm.math.logsumexp(pm.math.stack(modes)))
    return model


def shifted_mean(y):
    """mu ~ N(0, 10), y ~ N(mu, 1) with y in pm.Data."""
    import pymc as pm

    with pm.Model() as model:
        data = pm.Data("y_data", np.asarray(y, dtype=np.float64))
        mu = pm.Normal("mu", 0.0, 10.0)
        pm.Normal("y", mu, 1.0, observed=data)
    return model


@pytest.fixture
def compiles(monkeypatch):
    """Calls of nutpie.compile_pymc_model, counted."""
    import nutpie

    real, calls = nutpie.compile_pymc_model, []

    def counted(model, **kwargs):
        calls.append(kwargs)
        return real(model, **kwargs)

    monkeypatch.setattr(nutpie, "compile_pymc_model", counted)
    return calls


@pytest.mark.parametrize("sampler", ["nutpie", "pymc"])
def test_the_chains_start_where_the_initial_values_say(sampler):
    model = two_modes()
    for start in (20.0, -20.0):
        ran = sample_nuts(model, draws=100, tune=100, chains=4, seed=1, sampler=sampler,
                          initvals={"x": np.array(start)})
        x = ran.idata.posterior["x"].values
        assert np.all(np.sign(x) == np.sign(start)), (start, x.min(), x.max())
        assert ran.sampler == sampler


def test_a_second_sampling_of_the_same_model_is_not_compiled_again(compiles):
    model = shifted_mean([1.0, 2.0, 3.0])
    first = sample_nuts(model, draws=200, tune=200, chains=2, seed=0)
    again = sample_nuts(model, draws=400, tune=400, chains=2, seed=7)  # check's retry
    assert len(compiles) == 1
    assert first.idata.posterior.sizes["draw"] == 200
    assert again.idata.posterior.sizes["draw"] == 400
    # the DataTree pm.sample(nuts_sampler="nutpie") returns
    assert {"posterior", "sample_stats", "observed_data"} <= set(again.idata.children)
    assert again.idata.posterior.attrs["inference_library"] == "nutpie"
    assert again.sampler == "nutpie" and again.sampling_seconds > 0
    assert "diverging" in again.idata.sample_stats


def test_swapped_data_are_sampled_without_a_new_compile(compiles):
    """Calibration's path: one declaration, its pm.Data swapped with pm.set_data."""
    import pymc as pm

    model = shifted_mean(np.zeros(50))
    means = []
    for centre in (0.0, 5.0, -5.0):
        pm.set_data({"y_data": np.full(50, centre)}, model=model)
        ran = sample_nuts(model, draws=300, tune=300, chains=2, seed=3)
        means.append(float(ran.idata.posterior["mu"].mean()))
    assert len(compiles) == 1
    # posterior mean 50 c / (50 + 1/100), sd 0.14: far from the other data sets' means
    exact = [50 * c / (50 + 0.01) for c in (0.0, 5.0, -5.0)]
    assert np.allclose(means, exact, atol=0.1), means


def test_chains_on_every_core_and_progress_only_on_a_terminal(monkeypatch):
    import nutpie

    seen = []
    real = nutpie.sample

    def spy(compiled, **kwargs):
        seen.append(kwargs)
        return real(compiled, **kwargs)

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(nutpie, "sample", spy)
    model = shifted_mean([0.5])
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a log file or a pipe
    sample_nuts(model, draws=50, tune=50, chains=4, seed=0, progress=True)
    monkeypatch.setattr(sys, "stderr", Terminal())
    sample_nuts(model, draws=50, tune=50, chains=4, seed=0, progress=False)  # --quiet
    sample_nuts(model, draws=50, tune=50, chains=4, seed=0, progress=True)
    # nutpie's own bar is off; ours (a progress_callback) is given only on a terminal
    assert [k["progress_bar"] for k in seen] == [False, False, False]
    assert [k["progress_callback"] is not None for k in seen] == [False, False, True]
    assert seen[0]["cores"] == min(4, os.cpu_count() or 1)
    assert seen[0]["chains"] == 4
