"""The rule of the ``auto`` NUTS backend: when the C path is skipped or abandoned for Numba."""

import numpy as np
import pymc as pm
import pytest
from bayescheck.inference import nuts_budget
from bayescheck.inference.nuts import sample_nuts
from bayescheck.inference.nuts_budget import graph_size, numba_seconds, over_budget, too_big_for_c
from scipy import stats


def coin_model(heads=7, n=10):
    with pm.Model() as model:
        p = pm.Beta("p", 2.0, 2.0)
        pm.Binomial("k", n=n, p=p, observed=heads)
    return model


def regression_model(y):
    with pm.Model() as model:
        w = pm.Normal("w", 0.0, 10.0, shape=2)
        pm.Normal("y", w[0] + w[1] * pm.math.constant(list(range(len(y)))), 1.0, observed=y)
    return model


# A run of 12000 draws in all, Numba compile estimated at 8 s, Numba 8x faster a step.
RUN = dict(total=12000, numba=8.0, watch=1.0, speedup=8.0)


def test_too_big_for_c_only_above_the_limit():
    assert too_big_for_c(200, max_nodes=200) is None
    assert "201 nodes" in too_big_for_c(201, max_nodes=200)


def test_numba_seconds_grows_with_the_graph():
    assert numba_seconds(1000) > numba_seconds(100) > 0


def test_a_cheap_run_is_kept():
    # The coin: 2 steps a draw at 100 us: 10,000 draws left cost 2 s, less than Numba's 8 s.
    assert over_budget(1.0, done=2000, steps=10000, recent=2.0, **RUN) is None


def test_nothing_is_projected_before_the_watch():
    assert over_budget(0.5, done=10, steps=10230, recent=1023.0, **RUN) is None


def test_a_run_of_long_trajectories_is_abandoned():
    # Diabetes-like: 1023 steps a draw at 100 us, 0.1 s a draw: 1,190 s more.
    why = over_budget(1.0, done=10, steps=10230, recent=1023.0, **RUN)
    assert why is not None and "s more projected" in why


def test_the_projection_uses_the_recent_steps_not_the_average():
    # Early tuning took 100 steps a draw, the latest half only 3: 11,000 draws x 3 steps x
    # 10 us = 0.3 s more (the draw share would have projected 11 s).
    assert over_budget(1.0, done=1000, steps=100000, recent=3.0, **RUN) is None
    assert over_budget(1.0, done=1000, steps=100000, recent=100.0, **RUN) is not None


def test_numba_sampling_counts_on_its_side():
    # 9 s more on C against 8 s compile + 10 s of Numba sampling: C is kept.
    kept = over_budget(1.0, done=1000, steps=10000, recent=8.18, numba=8.0, watch=1.0,
                       total=12000, speedup=1.0)
    assert kept is None


def test_twice_the_numba_compile_ends_any_run():
    assert over_budget(15.9, done=11000, steps=1000, recent=0.001, **RUN) is None
    assert "after 16.0 s" in over_budget(16.0, done=11000, steps=1000, recent=0.001, **RUN)


def test_no_draw_after_the_numba_compile():
    assert over_budget(7.9, done=0, steps=0, recent=0.0, **RUN) is None
    assert "no draw" in over_budget(8.0, done=0, steps=0, recent=0.0, **RUN)


def test_a_finished_run_is_never_abandoned():
    assert over_budget(100.0, done=12000, steps=10**7, recent=1023.0, **RUN) is None


def test_graph_size_keys_the_shape_not_the_object_or_values():
    one, other = graph_size(regression_model([1.0, 2.0, 3.0])), graph_size(
        regression_model([5.0, -1.0, 0.5]))
    longer = graph_size(regression_model([1.0, 2.0, 3.0, 4.0]))
    assert one.key == other.key and one.nodes == other.nodes > 5
    assert longer.key != one.key
    assert graph_size(coin_model()).key != one.key


def test_an_abandoned_shape_goes_straight_to_numba(monkeypatch, chosen_paths):
    """A C run abandoned for one model is not tried again for another of the same shape."""
    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "auto")
    monkeypatch.setattr(nuts_budget, "_ABANDONED", {})
    compiled, Stop = chosen_paths, chosen_paths.stop
    first = regression_model([1.0, 2.0, 3.0])
    nuts_budget._ABANDONED[graph_size(first).key] = "c abandoned after 1.0 s: test"
    for model in (regression_model([0.0, 4.0, 1.0]), regression_model([9.0, 9.0, 9.0])):
        with pytest.raises(Stop):
            nuts_budget.sample_nutpie_budgeted(model, draws=10, tune=10, chains=1, seed=0,
                                               cores=1, progress_bar=False)
    with pytest.raises(Stop):  # another shape: the C path again
        nuts_budget.sample_nutpie_budgeted(regression_model([1.0, 2.0]), draws=10, tune=10,
                                           chains=1, seed=0, cores=1, progress_bar=False)
    assert compiled == ["numba", "numba", "c"]


def test_a_big_graph_is_not_compiled_for_c(monkeypatch):
    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "auto")
    monkeypatch.setattr(nuts_budget, "MAX_C_NODES", 5)
    compiled = []
    monkeypatch.setattr(nuts_budget, "compile_for_nutpie",
                        lambda model, initvals=None, backend=None, store=True:
                        compiled.append(backend)
                        or (object(), backend))
    import nutpie

    monkeypatch.setattr(nutpie, "sample", lambda _compiled, **_kwargs: "trace")
    ran = nuts_budget.sample_nutpie_budgeted(coin_model(), draws=10, tune=10, chains=1,
                                             seed=0, cores=1, progress_bar=False)
    assert compiled == ["numba"] and ran.backend.startswith("numba (graph of ")


@pytest.mark.nuts
@pytest.mark.parametrize("budget", [100.0, 0.0])
def test_auto_keeps_c_within_the_budget_and_falls_back_to_numba(monkeypatch, budget):
    """Budget 100 s: the coin stays on C; budget 0: the C run is abandoned, Numba samples.

    Either way the draws are the exact Beta(2 + 7, 2 + 3) posterior's (mean within 4 MCSE), and
    a model abandoned once goes straight to Numba when it is sampled again (the retry).
    """
    import arviz as az

    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "auto")
    monkeypatch.setattr(nuts_budget, "_ABANDONED", {})
    monkeypatch.setattr(nuts_budget, "NUMBA_BASE_SECONDS", budget)
    monkeypatch.setattr(nuts_budget, "NUMBA_NODE_SECONDS", 0.0)
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
    assert sample_nuts(coin_model(), draws=100, tune=100, chains=2, seed=4).backend == \
        sampled.backend


@pytest.mark.slow
def test_calibrate_simulations_share_one_shape(monkeypatch):
    """Each simulation of ``calibrate --engine nuts`` declares a new model: one shape key.

    The models are built as :func:`bayescheck.inference.sbc._simulate` builds them (simulated frames of
    the spec's design), so a C run abandoned in the first simulation sends every later one
    to Numba; a design with another number of rows is another shape.
    """

    from bayescheck.data.sources import DataSource
    from bayescheck.inference.sbc import _observed
    from bayescheck.models.spec import load_spec

    spec = load_spec("examples/linear_regression/stream.toml")
    frame = spec.data.read_all()
    prior = pm.sample_prior_predictive(draws=2, model=spec.model.declare(spec.data),
                                       random_seed=0)
    observed = _observed(prior.prior_predictive)

    def declared(s, rows=None):
        sim = spec.model.simulated_frame(frame, {k: v[s] for k, v in observed.items()})
        sim = sim if rows is None else sim.iloc[:rows]
        return spec.model.declare(DataSource.from_frame(sim))

    first, second = declared(0), declared(1)
    data = [m.rvs_to_values[m.observed_RVs[0]].data for m in (first, second)]
    assert data[0].shape == data[1].shape and not np.allclose(data[0], data[1])
    assert graph_size(first).key == graph_size(second).key
    assert graph_size(declared(0, rows=len(frame) - 1)).key != graph_size(first).key

    monkeypatch.setenv("BAYESCHECK_NUTS_BACKEND", "auto")
    monkeypatch.setattr(nuts_budget, "_ABANDONED", {graph_size(first).key: "c abandoned"})
    paths = []
    monkeypatch.setattr(nuts_budget, "compile_for_nutpie",
                        lambda model, initvals=None, backend=None, store=True: paths.append(backend)
                        or (object(), backend))
    import nutpie

    monkeypatch.setattr(nutpie, "sample", lambda _compiled, **_kwargs: "trace")
    ran = nuts_budget.sample_nutpie_budgeted(second, draws=10, tune=10, chains=1, seed=0,
                                             cores=1, progress_bar=False)
    assert paths == ["numba"] and ran.backend == "numba (c abandoned)"
