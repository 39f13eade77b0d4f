"""``add_posterior_predictive``: PyTensor's own draws, compiled with its default linker when
Python's per-cell categorical draws would be slow, else op by op in Python; either way the
predictive counts follow the posterior draws they were made from."""

import numpy as np
import pytest
from bayescheck.inference.checking.predictive import (
    PYTHON_CATEGORICAL_CELLS,
    add_posterior_predictive,
)

pytestmark = pytest.mark.slow  # compiles the predictive graph (Numba: seconds on a cold cache)

K = 3


def categorical(rows: int, seed: int = 0):
    """p ~ Dirichlet(1, 1, 1), y ~ Categorical(p) over ``rows`` rows; posterior draws of p
    from the exact Dirichlet posterior, in the DataTree ``pm.sample`` returns."""
    import arviz_base as azb
    import pymc as pm

    rng = np.random.default_rng(seed)
    y = rng.choice(K, size=rows, p=[0.2, 0.3, 0.5])
    with pm.Model() as model:
        p = pm.Dirichlet("p", np.ones(K))
        pm.Categorical("y", p, observed=y)
    counts = np.bincount(y, minlength=K)
    draws = rng.dirichlet(1 + counts, size=(2, 250))
    idata = azb.from_dict({"posterior": {"p": draws}, "observed_data": {"y": y}},
                          dims={"p": ["p_dim"], "y": ["obs"]})
    return model, idata


def predicted_counts_z(idata, p) -> np.ndarray:
    """z of each category's mean predicted count against n * p, p per posterior draw."""
    pp = idata["posterior_predictive"]["y"].values  # (chain, draw, row)
    n = pp.shape[-1]
    counts = np.stack([(pp == k).sum(-1) for k in range(K)], axis=-1).reshape(-1, K)
    p = np.asarray(p).reshape(-1, K)
    expected = n * p.mean(0)
    sd = np.sqrt((n * p * (1 - p)).sum(0)) / len(p)  # multinomial given each draw's p
    return (counts.mean(0) - expected) / sd


@pytest.mark.parametrize("rows, mode", [(20, "FAST_COMPILE"), (2000, "default (Numba)")])
def test_the_draws_follow_the_posterior_in_either_mode(rows, mode):
    assert (rows * 500 > PYTHON_CATEGORICAL_CELLS) == (mode != "FAST_COMPILE")
    model, idata = categorical(rows)
    done = add_posterior_predictive(model, idata, seed=1)
    assert done.get("mode") == mode, done
    assert idata["posterior_predictive"]["y"].shape == (2, 250, rows)
    thinned = idata.posterior["p"].values
    assert np.max(np.abs(predicted_counts_z(idata, thinned))) < 5
    # negative control: the same counts against a uniform p are far off
    uniform = np.full_like(thinned, 1 / K)
    assert np.max(np.abs(predicted_counts_z(idata, uniform))) > 5


def test_a_model_without_observed_variables_is_skipped():
    import pymc as pm

    with pm.Model() as model:
        pm.Normal("x")
    _, idata = categorical(5)
    assert "skipped" in add_posterior_predictive(model, idata)
