"""The C path's budget: when a run is abandoned, and the fallback to Numba it causes."""

import pymc as pm
import pytest
from scipy import stats

from inference import nuts_budget
from inference.nuts import sample_nuts


def coin_model(heads=7, n=10):
    with pm.Model() as model:
        p = pm.Beta("p", 2.0, 2.0)
        pm.Binomial("k", n=n, p=p, observed=heads)
    return model


@pytest.mark.parametrize("cpu, share, abandoned", [
    (0.5, 0.001, False),   # too early to project
    (1.5, 0.5, False),     # 1.5 s more
    (1.5, 0.1, True),      # 13.5 s more > 8
    (2.0, 0.2, False),     # 8 s more: not over
    (2.0, 0.19, True),     # 8.5 s more
    (5.0, 0.0, False),     # nothing done yet, under the budget
    (8.0, 0.0, True),      # nothing done after the budget
    (15.9, 0.99, False),   # nearly done, under twice the budget
    (16.0, 0.99, True),    # twice the budget whatever the projection
])
def test_over_budget(cpu, share, abandoned):
    why = nuts_budget.over_budget(cpu, share, budget=8.0, watch=1.0)
    assert (why is not None) == abandoned


def test_a_finished_run_is_never_abandoned():
    assert nuts_budget.over_budget(100.0, 1.0, budget=8.0, watch=1.0) is None


@pytest.mark.nuts
@pytest.mark.parametrize("budget", [100.0, 0.0])
def test_auto_keeps_c_within_the_budget_and_falls_back_to_numba(monkeypatch, budget):
    """Budget 100 s: the coin stays on C; budget 0: the C run is abandoned, Numba samples.

    Either way the draws are the exact Beta(2 + 7, 2 + 3) posterior's (mean within 4 MCSE), and
    a model abandoned once goes straight to Numba when it is sampled again (the retry).
    """
    import arviz as az

    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "auto")
    monkeypatch.setattr(nuts_budget, "BUDGET_SECONDS", budget)
    if budget == 0:
        monkeypatch.setattr(nuts_budget, "WATCH_SECONDS", 0.0)
    model = coin_model()
    sampled = sample_nuts(model, draws=1000, tune=500, chains=4, cores=2, seed=3)
    summary = az.summary(sampled.idata, var_names=["p"], round_to="none")
    z = (summary["mean"].iloc[0] - stats.beta(9, 5).mean()) / summary["mcse_mean"].iloc[0]
    assert abs(z) < 4 and summary["r_hat"].iloc[0] < 1.01
    if budget > 0:
        assert sampled.backend == "c"
        return
    assert sampled.backend.startswith("numba (c abandoned after ")
    assert sample_nuts(model, draws=100, tune=100, chains=2, seed=4).backend == sampled.backend
