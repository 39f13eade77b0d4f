"""Which backend nutpie evaluates a model with, the compile reuse, and the C path's draws."""

import numpy as np
import pymc as pm
import pytest
from bayescheck.inference import nutpie_compile
from bayescheck.inference.numba_cache import model_digest
from bayescheck.inference.nuts import sample_nuts
from bayescheck.models.errors import SpecError
from scipy import stats


def coin_model(heads=7, n=10):
    with pm.Model() as model:
        p = pm.Beta("p", 2.0, 2.0)
        pm.Binomial("k", n=n, p=p, observed=heads)
    return model


def test_auto_is_the_default_and_c_or_numba_are_asked_for(monkeypatch):
    monkeypatch.delenv("BAYESCHECK_NUTS_BACKEND", raising=False)
    assert nutpie_compile.backend_setting() == "auto"
    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", " C ")
    assert nutpie_compile.backend_setting() == "c"
    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "numba")
    assert nutpie_compile.backend_setting() == "numba"


def test_a_typo_in_the_backend_is_refused(monkeypatch):
    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "cuda")
    with pytest.raises(SpecError,
                       match="BAYESCHECK_NUTS_BACKEND must be 'auto', 'c' or 'numba', got 'cuda'"):
        nutpie_compile.backend_setting()


@pytest.mark.slow  # PyTensor compiles the coin's C module: 6 s warm, 30 s on a cold cache
def test_the_same_model_is_compiled_once_per_backend(monkeypatch):
    calls, remembered = [], []
    monkeypatch.setattr(nutpie_compile, "compile_numba_cached",
                        lambda model, **kwargs: calls.append(model) or (object(), True))
    monkeypatch.setattr(nutpie_compile, "remember",
                        lambda digest, stored, **info: remembered.append((digest, stored,
                                                                          info)))
    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "c")
    model = coin_model()
    first, backend = nutpie_compile.compile_for_nutpie(model)
    assert backend == "c" and calls == []
    assert nutpie_compile.compile_for_nutpie(model)[0] is first
    assert nutpie_compile.compile_for_nutpie(coin_model())[0] is not first
    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "numba")
    numba_compiled, backend = nutpie_compile.compile_for_nutpie(model)
    assert backend == "numba" and calls == [model] and numba_compiled is not first
    # the index: auto's next run loads it (a stand-in for the compiled model: no wrapper)
    assert remembered == [(model_digest(model), True, {"wrapper": None})]
    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "auto")  # auto compiles C; the budget decides
    assert nutpie_compile.compile_for_nutpie(model) == (first, "c")
    assert nutpie_compile.compile_for_nutpie(model, backend="numba") == (numba_compiled, "numba")


def test_new_start_values_never_find_the_compile_of_dropped_ones(monkeypatch):
    # The cache is keyed by the id() of the start values. Once the caller drops a value,
    # CPython gives its address to the next array of its size (here at once), so unless the
    # entry keeps its values alive, new values would find the old compile and start there.
    starts = []
    monkeypatch.setattr(nutpie_compile, "_compile_c",  # keeps no reference to the values
                        lambda model, **kwargs: starts.append(float(kwargs["initial_points"]["p"]))
                        or object())
    model = coin_model()
    first, _ = nutpie_compile.compile_for_nutpie(model, initvals={"p": np.array(0.3)},
                                                 backend="c")
    later = {"p": np.array(0.7)}
    second, _ = nutpie_compile.compile_for_nutpie(model, initvals=later, backend="c")
    assert second is not first and starts == [0.3, 0.7]
    assert nutpie_compile.compile_for_nutpie(model, initvals=later, backend="c")[0] is second


def test_dimensions_without_coordinates_get_nutpies_range_without_numba():
    import pandas as pd

    with pm.Model(coords={"feature": ["a", "b"]}) as model:
        data = pm.Data("X", np.zeros((7, 2)), dims=("obs", "feature"))
        pm.Normal("w", dims="feature")
    assert model.coords["obs"] is None and data.name == "X"
    seen = nutpie_compile._WithCoordinates(model)
    assert seen.coords["feature"] == ("a", "b")
    # what nutpie builds from it is its own RangeIndex(int(dim_lengths["obs"].eval()))
    assert pd.Index(seen.coords["obs"]).equals(pd.RangeIndex(7))
    assert seen.value_vars == model.value_vars and seen.named_vars_to_dims is not None


@pytest.mark.nuts
@pytest.mark.parametrize("heads, wrong", [(7, False), (7, True)])
def test_c_backend_draws_match_the_exact_beta_posterior(monkeypatch, heads, wrong):
    """Beta(2 + 7, 2 + 3): the NUTS mean within 4 MCSE of the exact one; a wrong exact fails."""
    import arviz as az

    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "c")
    sampled = sample_nuts(coin_model(heads), draws=1000, tune=500, chains=4, cores=2, seed=3)
    assert sampled.backend == "c"
    assert sampled.idata.posterior["p"].shape == (4, 1000)
    assert "observed_data" in sampled.idata.children
    summary = az.summary(sampled.idata, var_names=["p"], round_to="none")
    assert summary["r_hat"].iloc[0] < 1.01
    exact = stats.beta(2 + heads + (3 if wrong else 0), 2 + 10 - heads)
    z = (summary["mean"].iloc[0] - exact.mean()) / summary["mcse_mean"].iloc[0]
    assert (abs(z) > 4) == wrong
    if not wrong:
        z_sd = (summary["sd"].iloc[0] - exact.std()) / summary["mcse_sd"].iloc[0]
        assert abs(z_sd) < 4


def test_the_numba_model_is_given_the_current_data_of_a_reused_compile(monkeypatch):
    # nutpie's Numba model copies the pm.Data values at compile time; a calibration swaps
    # them with set_data before each simulation and reuses the compile, so each sampling
    # must get the values of that moment (the C path reads the shared variables themselves).
    class Compiled:
        def __init__(self, keys, data=None):
            self.shared_var_keys, self.data = keys, data

        def with_data(self, **data):
            return Compiled(self.shared_var_keys, data)

    with pm.Model() as model:
        heads = pm.Data("heads", 7)
        p = pm.Beta("p", 2.0, 2.0)
        pm.Binomial("k", n=10, p=p, observed=heads)
    compiles = []
    monkeypatch.setattr(nutpie_compile, "_compile_numba",
                        lambda model, **kwargs: compiles.append(model)
                        or Compiled(list(model.data_vars)))
    first, backend = nutpie_compile.compile_for_nutpie(model, backend="numba")
    assert backend == "numba" and int(first.data["heads"]) == 7
    with model:
        pm.set_data({"heads": 3})
    second, _ = nutpie_compile.compile_for_nutpie(model, backend="numba")
    assert len(compiles) == 1  # the compile is reused, with the data of now
    assert int(second.data["heads"]) == 3 and int(first.data["heads"]) == 7
