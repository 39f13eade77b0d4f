"""The sampled posterior as the report's figures read it.

``check`` writes its draws as an ArviZ DataTree in netCDF-4 (``posterior.nc``);
:func:`open_posterior` opens it with ``xarray.open_datatree`` (h5netcdf engine, values read
when a figure needs them). A figure draws a few parameters, each an element of some variable
(``w[3]``, ``mu[a, b]``): :func:`parameter_view` makes a small DataTree holding one variable
per drawn parameter, named as the report names it, so that arviz_plots draws one panel per
parameter in the report's order. :func:`predictive_view` does the same for the posterior
predictive check, one variable per panel.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from bayescheck.models.errors import BayescheckError

__all__ = ["SAMPLE_STATS_DRAWN", "draws", "open_posterior", "panel_name",
           "parameter_view", "predictive_view", "sample_stat"]

#: The sampler statistics the figures draw (the traces' divergences, the energy plot).
SAMPLE_STATS_DRAWN = ("diverging", "energy")


def open_posterior(path: str | Path):
    """Open a ``posterior.nc`` written by ``check`` as an xarray DataTree.

    Raises
    ------
    FileNotFoundError
        When there is no such file (the report says which of the run's files is lacking).
    BayescheckError
        When the file is not a netCDF file xarray can read (truncated, not HDF5), naming it.
    """
    import xarray as xr

    try:
        return xr.open_datatree(path, engine="h5netcdf")
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:
        raise BayescheckError(f"{path}: not a readable posterior file ({exc}); re-run the "
                              f"'bayescheck check' that writes it") from None


def panel_name(name: str) -> str:
    """A parameter's name as a variable of a view: ``/`` (a DataTree path) as ``∕`` (U+2215).

    A data column may be named anything; the figure shows the name with a look-alike slash.
    """
    return str(name).replace("/", "\u2215")


def _element(tree, name: dict):
    """The ``(chain, draw)`` DataArray of one parameter (``var`` at ``coords``)."""
    var = tree["posterior"][name["var"]]
    if name.get("coords"):
        var = var.sel(name["coords"])
    extra = [c for c in var.coords if c not in ("chain", "draw")]
    return var.drop_vars(extra).transpose("chain", "draw")


def draws(tree, names: list[dict]) -> dict[str, np.ndarray]:
    """The ``(chain, draw)`` float64 draws of each of ``names`` (``name``, ``var``, ``coords``)."""
    return {n["name"]: np.asarray(_element(tree, n).values, dtype=np.float64) for n in names}


def sample_stat(tree, name: str):
    """A sampler statistic's ``(chain, draw)`` values, or None when the sampler has none."""
    if "sample_stats" not in tree.children or name not in tree["sample_stats"]:
        return None
    return np.asarray(tree["sample_stats"][name].transpose("chain", "draw").values)


def parameter_view(tree, names: list[dict], *, max_draws: int | None = None):
    """A DataTree of the drawn parameters, one variable each, with the sampler statistics.

    ``posterior`` holds one ``(chain, draw)`` variable per entry of ``names``, named by its
    ``name`` (:func:`panel_name`), in that order; ``sample_stats`` the statistics of
    :data:`SAMPLE_STATS_DRAWN` the sampler recorded. With ``max_draws``, every k-th draw is
    kept so that at most that many remain, chains pooled.
    """
    import xarray as xr

    posterior = xr.Dataset({panel_name(n["name"]): _element(tree, n) for n in names})
    step = 1
    if max_draws is not None:
        step = max(1, math.ceil(posterior.sizes["chain"] * posterior.sizes["draw"] / max_draws))
    groups = {"posterior": posterior.isel(draw=slice(None, None, step))}
    if "sample_stats" in tree.children:
        stats = tree["sample_stats"].to_dataset()
        kept = [v for v in SAMPLE_STATS_DRAWN if v in stats]
        if kept:
            groups["sample_stats"] = stats[kept].isel(draw=slice(None, None, step))
    return xr.DataTree.from_dict(groups).load()  # read from the file once, not per panel


def is_discrete(values) -> bool:
    """Whether observed data hold integers or booleans (counts, codes)."""
    dtype = np.asarray(values).dtype
    return bool(np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.bool_))


def predictive_view(tree):
    """The posterior predictive check's data: one variable per panel, and which are discrete.

    Returns ``(view, discrete, continuous)``: ``view`` a DataTree with ``posterior_predictive``
    and ``observed_data`` of each observed variable that has predictive draws; a variable
    with columns (``x_gaussian``: rows x features) is split into one variable per column
    (``x_gaussian[radius]``), since the columns' scales differ. ``discrete`` and
    ``continuous`` list the view's variable names of integer or boolean data and of the rest.
    """
    import xarray as xr

    observed = tree["observed_data"].to_dataset()
    predictive = tree["posterior_predictive"].to_dataset()
    pred_out, obs_out, discrete, continuous = {}, {}, [], []
    for name in predictive.data_vars:
        if name not in observed:
            continue
        obs, pred = observed[name], predictive[name]
        if obs.ndim < 2:
            parts = {panel_name(name): (obs, pred)}
        else:  # one panel per column of the last dimension
            last = obs.dims[-1]
            labels = obs[last].values if last in obs.coords else range(obs.sizes[last])
            parts = {panel_name(f"{name}[{label}]"): (obs.isel({last: j}, drop=True),
                                          pred.isel({last: j}, drop=True))
                     for j, label in enumerate(labels)}
        for part, (o, p) in parts.items():
            obs_out[part], pred_out[part] = o, p
            (discrete if is_discrete(o.values) else continuous).append(part)
    view = xr.DataTree.from_dict({"posterior_predictive": xr.Dataset(pred_out),
                                  "observed_data": xr.Dataset(obs_out)})
    return view.load(), discrete, continuous
