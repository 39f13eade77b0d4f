"""Posterior predictive draws of a checked model's observed variables, for the report."""

from __future__ import annotations

import math
import time

__all__ = ["PYTHON_CATEGORICAL_CELLS", "add_posterior_predictive"]


#: Categorical values drawn per predictive (draws x observed cells) above which the draws
#: are compiled with PyTensor's default linker (Numba) rather than run op by op in Python:
#: PyTensor's Python categorical draw makes a Python call per cell, about 3 microseconds
#: (the Asia network's 8 nodes x 1000 rows x 500 draws: 12 s in Python; 0.4 s with Numba
#: from PyTensor's compile cache, 3 s on an empty cache).
PYTHON_CATEGORICAL_CELLS = 250_000


def add_posterior_predictive(pymc_model, idata, *, seed: int = 0,
                             max_draws: int = 500) -> dict:
    """Add ``posterior_predictive`` draws of the model's observed variables to ``idata``.

    At most ``max_draws`` posterior draws are used, thinned evenly. Return ``{"seconds",
    "mode"}``, or ``{"skipped": why}`` when the model has no observed variable or the draws
    fail.

    The forward graph is compiled in PyTensor's FAST_COMPILE mode (Python linker, numpy
    ``perform`` of each op): for a few hundred draws of a small model that takes hundredths
    of a second, where loading the Numba linker's compiled graph from PyTensor's cache takes
    0.3-2 s. Categorical observations are the exception: PyTensor draws them with a Python
    call per cell, so above :data:`PYTHON_CATEGORICAL_CELLS` cells the graph is compiled with
    PyTensor's default linker instead.
    """
    import pymc as pm
    from pytensor.tensor.random.basic import CategoricalRV

    observed = [rv.name for rv in pymc_model.observed_RVs]
    if not observed:
        return {"skipped": "the model has no observed variable (the data enter through "
                           "sufficient statistics or a potential), so there is nothing to "
                           "predict"}
    started = time.perf_counter()
    try:
        total = idata.posterior.sizes["chain"] * idata.posterior.sizes["draw"]
        step = max(1, math.ceil(total / max_draws))  # every step-th draw of each chain
        thinned = idata.posterior.isel(draw=slice(None, None, step))
        draws = thinned.sizes["chain"] * thinned.sizes["draw"]
        data = idata["observed_data"] if "observed_data" in idata.children else {}
        cells = sum(data[rv.name].size for rv in pymc_model.observed_RVs
                    if isinstance(rv.owner.op, CategoricalRV) and rv.name in data)
        mode = "FAST_COMPILE" if draws * cells <= PYTHON_CATEGORICAL_CELLS else None
        with pymc_model:
            pp = pm.sample_posterior_predictive(thinned, var_names=observed,
                                                random_seed=seed, progressbar=False,
                                                compile_kwargs={"mode": mode} if mode else {})
        idata["posterior_predictive"] = pp["posterior_predictive"]
        if "observed_data" not in idata.children and "observed_data" in pp.children:
            idata["observed_data"] = pp["observed_data"]
    except Exception as exc:  # noqa: BLE001 - the check stands without this figure
        return {"skipped": f"posterior predictive draws failed: {type(exc).__name__}: {exc}"}
    return {"seconds": time.perf_counter() - started, "mode": mode or "default (Numba)"}
