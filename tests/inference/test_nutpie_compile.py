"""Which backend nutpie evaluates a model with, the compile reuse, and the C path's draws."""

import pymc as pm
import pytest
from scipy import stats

from inference import nutpie_compile
from inference.nuts import sample_nuts
from models.errors import SpecError


def coin_model(heads=7, n=10):
    with pm.Model() as model:
        p = pm.Beta("p", 2.0, 2.0)
        pm.Binomial("k", n=n, p=p, observed=heads)
    return model


def wide_model(k=5):
    with pm.Model() as model:
        for j in range(k):
            pm.Normal(f"x{j}", 0.0, 1.0, observed=float(j))
    return model


def test_small_models_try_c_and_large_ones_go_to_numba(monkeypatch):
    monkeypatch.delenv("BAYESCHECK_NUTS_BACKEND", raising=False)
    assert nutpie_compile.choose_backend(coin_model()) == "c"
    assert nutpie_compile.choose_backend(wide_model(nutpie_compile.C_BACKEND_MAX_VARIABLES + 1)) \
        == "numba"


def test_the_backend_can_be_forced_and_a_typo_is_refused(monkeypatch):
    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "numba")
    assert nutpie_compile.choose_backend(coin_model()) == "numba"
    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "cuda")
    with pytest.raises(SpecError, match="BAYESCHECK_NUTS_BACKEND must be .* got 'cuda'"):
        nutpie_compile.choose_backend(coin_model())


def test_a_large_c_graph_falls_back_to_numba(monkeypatch):
    """A model with few variables but a graph above C_BACKEND_MAX_NODES is given to Numba."""
    import nutpie

    monkeypatch.delenv("BAYESCHECK_NUTS_BACKEND", raising=False)
    calls = []
    monkeypatch.setattr(nutpie, "compile_pymc_model",
                        lambda model, **kwargs: calls.append(model) or "numba-compiled")
    model = coin_model()
    monkeypatch.setattr(nutpie_compile, "C_BACKEND_MAX_NODES", 1)
    assert nutpie_compile.compile_for_nutpie(model) == ("numba-compiled", "numba")
    assert calls == [model]
    monkeypatch.setattr(nutpie_compile, "C_BACKEND_MAX_NODES", 10_000)
    compiled, backend = nutpie_compile.compile_for_nutpie(coin_model())
    assert backend == "c" and compiled != "numba-compiled"


def test_the_same_model_is_compiled_once(monkeypatch):
    monkeypatch.delenv("BAYESCHECK_NUTS_BACKEND", raising=False)
    model = coin_model()
    first = nutpie_compile.compile_for_nutpie(model)
    assert nutpie_compile.compile_for_nutpie(model)[0] is first[0]
    assert nutpie_compile.compile_for_nutpie(coin_model())[0] is not first[0]


@pytest.mark.nuts
@pytest.mark.parametrize("heads, wrong", [(7, False), (7, True)])
def test_c_backend_draws_match_the_exact_beta_posterior(monkeypatch, heads, wrong):
    """Beta(2 + 7, 2 + 3): the NUTS mean within 4 MCSE of the exact one; a wrong exact fails."""
    import arviz as az

    monkeypatch.delenv("BAYESCHECK_NUTS_BACKEND", raising=False)
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
