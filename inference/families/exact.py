"""The exact posterior of a fit as ArviZ input: independent draws in a ``posterior`` group.

A family whose posterior is a known joint distribution has an ``exact_draws`` in its
:class:`~bayescheck.inference.families.registry.Family` record,
``exact_draws(posterior, *, draws, chains, rng)``, returning
``({variable: (dims, array)}, coords)`` with the PyMC declaration's names, dims (after
``("chain", "draw")``) and coordinates, all read from ``posterior.json``, and optionally a
third item, attributes of the ``posterior`` group saying what the draws are conditional on
(ARD: the type-II maximum-likelihood hyperparameters);
:func:`exact_posterior` wraps it in an ``xarray.DataTree`` so
``az.summary`` / ``az.plot_dist`` show the analytic posterior next to the NUTS draws.
xarray is imported here only when a tree is made.
"""

from __future__ import annotations

import numpy as np
from bayescheck.inference.families.registry import family
from bayescheck.models.errors import BayescheckError

__all__ = ["exact_posterior"]


def exact_posterior(model: str, posterior: dict, *, draws: int = 1000, chains: int = 4,
                    seed: int | None = 0):
    """Independent draws from a fit's exact posterior as an ``xarray.DataTree``.

    Parameters
    ----------
    model : str
        The spec's ``model`` value.
    posterior : dict
        The content of ``posterior.json`` (``AnalyticFit.to_json()``).
    draws, chains : int
        Draws per chain and number of chains (independent draws: the chains are a split).
    seed : int, optional
        Seed of the generator.

    Returns
    -------
    xarray.DataTree
        A ``posterior`` group with dims ``(chain, draw, ...)``.
    """
    import xarray as xr

    sample = family(model).exact_draws
    if sample is None:
        raise BayescheckError(f"no exact posterior draws for model {model!r}")
    if posterior.get("model") != model:
        raise BayescheckError(f"a fit of {posterior.get('model')!r}, not of {model!r}")
    variables, coords, *attrs = sample(posterior, draws=draws, chains=chains,
                                       rng=np.random.default_rng(seed))
    data = xr.Dataset(
        {name: (("chain", "draw", *dims), values) for name, (dims, values) in variables.items()},
        coords={"chain": np.arange(chains), "draw": np.arange(draws), **coords})
    data.attrs["source"] = "bayescheck exact posterior (independent draws)"
    for extra in attrs:
        data.attrs.update(extra)
    return xr.DataTree.from_dict({"posterior": data})
