"""A sampled posterior as plain arrays: what the report's figures read from it.

``check`` writes its draws as an ArviZ DataTree in netCDF-4 (``posterior.nc``). Opening that
with xarray imports xarray, pandas, pyarrow and dask (about 1 s of CPU, more than drawing
half the figures), so :meth:`Posterior.read` reads the HDF5 file with h5py and decodes the
few netCDF conventions xarray writes: a variable's dimensions are the HDF5 dimension scales
attached to it, a dimension scale that is a coordinate carries its labels (strings stored
as bytes), ``dtype = "bool"`` marks booleans stored as int8, ``_FillValue`` marks missing
floats. :meth:`Posterior.of_tree` takes the same arrays from a DataTree already in memory
(inside ``check``). Both give :class:`Variable` objects; tests compare them with xarray's
reading of the same file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Posterior", "Variable"]

#: The groups the report reads.
GROUPS = ("posterior", "sample_stats", "posterior_predictive", "observed_data")
#: The NAME attribute h5netcdf gives a dimension that has no coordinate variable.
_NO_COORD = "This is a netCDF dimension but not a netCDF variable"


@dataclass
class Variable:
    """One variable: its values, dimension names and the labels of labelled dimensions."""

    values: np.ndarray
    dims: tuple[str, ...]
    coords: dict[str, np.ndarray] = field(default_factory=dict)

    def sel(self, labels: dict | None) -> Variable:
        """The sub-array at ``labels`` (dimension -> one label), those dimensions dropped."""
        values, dims = self.values, list(self.dims)
        for dim, label in (labels or {}).items():
            axis = dims.index(dim)
            names = self.coords.get(dim)
            if names is None:
                index = int(label)
            else:
                hits = np.flatnonzero(names == label)
                if hits.size != 1:
                    raise KeyError(f"{dim}={label!r}")
                index = int(hits[0])
            values = np.take(values, index, axis=axis)
            dims.pop(axis)
        return Variable(values, tuple(dims), {d: c for d, c in self.coords.items() if d in dims})

    def sample_first(self) -> np.ndarray:
        """The values with ``chain`` and ``draw`` as the first two axes."""
        order = [self.dims.index(d) for d in ("chain", "draw")]
        rest = [i for i in range(len(self.dims)) if i not in order]
        return np.transpose(self.values, order + rest)

    def labels(self, dim: str):
        """The labels of ``dim``, or its positions when it has none."""
        coord = self.coords.get(dim)
        return coord if coord is not None else range(self.values.shape[self.dims.index(dim)])


class Posterior:
    """The groups of a sampled posterior that the report reads, as :class:`Variable` dicts."""

    def __init__(self, groups: dict[str, dict[str, Variable]]):
        self.groups = groups

    def __contains__(self, group: str) -> bool:
        return group in self.groups

    def group(self, name: str) -> dict[str, Variable]:
        """The variables of group ``name`` (empty when the file has no such group)."""
        return self.groups.get(name, {})

    def get(self, group: str, name: str) -> Variable | None:
        """One variable, or None."""
        return self.group(group).get(name)

    def chains(self) -> int:
        """The number of chains of the posterior group."""
        for var in self.group("posterior").values():
            if "chain" in var.dims:
                return var.values.shape[var.dims.index("chain")]
        return 1

    @classmethod
    def read(cls, path: str | Path, only: dict[str, tuple[str, ...]] | None = None
             ) -> Posterior:
        """Read the report's groups of a netCDF-4 file written by ArviZ / xarray.

        ``only`` names, for some groups, the variables to read (the others are not read:
        the report needs 2 of nutpie's 20 sample statistics, and each variable costs about
        2 ms of h5py calls); the other groups are read whole.
        """
        import h5py
        from bayescheck.models.errors import BayescheckError

        groups = {}
        try:
            f = h5py.File(path, "r")
        except FileNotFoundError:
            raise  # a run folder without it: the report says which of its files is lacking
        except OSError as exc:  # truncated, not HDF5, unreadable: name the file, not h5py
            raise BayescheckError(f"{path}: not a readable posterior file ({exc}); re-run "
                                  f"the 'bayescheck check' that writes it") from None
        with f:
            for name in GROUPS:
                if name in f:
                    groups[name] = _read_group(f[name], (only or {}).get(name))
        return cls(groups)

    @classmethod
    def of_tree(cls, tree) -> Posterior:
        """The same arrays from an ``xarray.DataTree`` in memory."""
        groups = {}
        for name in GROUPS:
            if name not in tree.children:
                continue
            ds = tree[name].ds
            groups[name] = {
                str(v): Variable(np.asarray(da.values), tuple(str(d) for d in da.dims),
                                 {str(d): np.asarray(ds[d].values) for d in da.dims
                                  if d in ds.coords})
                for v, da in ds.data_vars.items()}
        return cls(groups)


def _attr(obj, key):
    value = obj.attrs.get(key)
    if isinstance(value, bytes | np.bytes_):
        return value.decode()
    return value


def _decode(ds) -> np.ndarray:
    values = ds[()]
    if values.dtype.kind == "O" or values.dtype.kind == "S":
        values = np.array([v.decode() if isinstance(v, bytes) else v for v in values.ravel()],
                          dtype=object).reshape(values.shape)
    if _attr(ds, "dtype") == "bool":
        return values.astype(bool)
    fill = ds.attrs.get("_FillValue")
    if fill is not None and values.dtype.kind == "f":
        fill = np.asarray(fill).ravel()[0]
        if not np.isnan(fill):
            values = np.where(values == fill, np.nan, values)
    return values


def _read_group(group, names: tuple[str, ...] | None = None) -> dict[str, Variable]:
    """The variables of ``group`` (those in ``names`` only, when given), with their labels.

    A dimension's labels are its dimension scale's values when that scale is a coordinate
    variable (h5netcdf marks the others with :data:`_NO_COORD`); a variable's dimensions are
    the scales attached to it.
    """
    import h5py

    coords: dict[str, np.ndarray | None] = {}

    def labels(dim: str) -> np.ndarray | None:
        if dim not in coords:
            scale = group.get(dim)
            coords[dim] = (_decode(scale) if isinstance(scale, h5py.Dataset)
                           and _attr(scale, "CLASS") == "DIMENSION_SCALE"
                           and not str(_attr(scale, "NAME") or "").startswith(_NO_COORD)
                           else None)
        return coords[dim]

    out = {}
    for key in group:  # the file's order: the PPC panels follow it
        if names is not None and key not in names:
            continue
        ds = group[key]
        if not isinstance(ds, h5py.Dataset) or _attr(ds, "CLASS") == "DIMENSION_SCALE":
            continue
        dims = tuple(d[0].name.rsplit("/", 1)[-1] if len(d) else f"{key}_dim_{i}"
                     for i, d in enumerate(ds.dims))
        out[key] = Variable(_decode(ds), dims,
                            {d: c for d in dims if (c := labels(d)) is not None})
    return out
