"""``write_netcdf``: a DataTree written as netCDF reads back through xarray as it was."""

import numpy as np
import pytest


@pytest.mark.slow
def test_write_netcdf_round_trip(tmp_path):
    import xarray as xr
    from arviz_base import from_dict
    from bayescheck.reports.writers import write_netcdf

    tree = from_dict({"posterior": {"p": np.arange(8.0).reshape(2, 4)},
                      "sample_stats": {"diverging": np.eye(2, 4, dtype=bool)}})
    write_netcdf(tree, tmp_path / "p.nc")
    back = xr.open_datatree(tmp_path / "p.nc", engine="h5netcdf")
    np.testing.assert_array_equal(back["posterior"]["p"].values, tree["posterior"]["p"].values)
    assert back["sample_stats"]["diverging"].dtype == bool
    np.testing.assert_array_equal(back["sample_stats"]["diverging"].values, np.eye(2, 4))
    back.close()
