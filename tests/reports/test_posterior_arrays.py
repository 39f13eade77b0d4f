"""A posterior file read with h5py (reports.posterior_arrays) holds what xarray reads."""

import numpy as np
import pytest
from bayescheck.reports.posterior_arrays import Posterior


@pytest.fixture
def written(tmp_path):
    import arviz_base as azb

    rng = np.random.default_rng(0)
    observed = rng.normal(size=(6, 2))
    observed[1, 0] = np.nan
    tree = azb.from_dict(
        {"posterior": {"p": rng.dirichlet([1, 1, 1], size=(2, 50, 2)),
                       "sigma": rng.gamma(2.0, size=(2, 50)),
                       "count": rng.integers(0, 9, size=(2, 50, 4))},
         "sample_stats": {"energy": rng.normal(size=(2, 50)),
                          "diverging": rng.random((2, 50)) < 0.1},
         "posterior_predictive": {"x": rng.normal(size=(2, 50, 6, 2)),
                                  "y": rng.integers(0, 2, size=(2, 50, 6))},
         "observed_data": {"x": observed, "y": rng.integers(0, 2, size=6)}},
        dims={"p": ["class", "category"], "x": ["row", "feature"], "y": ["row"],
              "count": ["slot"]},
        coords={"class": ["yes", "no"], "category": ["a", "b", "c"],
                "feature": ["radius", "texture"]})
    path = tmp_path / "posterior.nc"
    tree.to_netcdf(path, engine="h5netcdf")
    return path


def test_the_file_read_with_h5py_equals_xarrays_reading(written):
    import xarray as xr

    mine = Posterior.read(written)
    reference = Posterior.of_tree(xr.load_datatree(written, engine="h5netcdf"))
    assert set(mine.groups) == set(reference.groups)
    for group, variables in reference.groups.items():
        assert list(mine.group(group)) == list(variables)  # the same order: the PPC panels'
        for name, ref in variables.items():
            got = mine.group(group)[name]
            assert got.dims == ref.dims and got.values.dtype == ref.values.dtype, name
            np.testing.assert_array_equal(got.values, ref.values)
            assert got.coords.keys() == ref.coords.keys(), name
            for dim, labels in ref.coords.items():
                np.testing.assert_array_equal(got.coords[dim], labels)
    assert mine.get("sample_stats", "diverging").values.dtype == bool
    assert np.isnan(mine.get("observed_data", "x").values[1, 0])


def test_only_the_named_variables_of_a_group_are_read(written):
    post = Posterior.read(written, only={"sample_stats": ("diverging",), "posterior": ("p",)})
    assert list(post.group("sample_stats")) == ["diverging"]
    assert list(post.group("posterior")) == ["p"]
    p = post.get("posterior", "p")
    assert p.dims == ("chain", "draw", "class", "category")
    np.testing.assert_array_equal(p.coords["class"], ["yes", "no"])
    assert list(post.group("posterior_predictive")) == ["x", "y"]  # not named: read whole
    whole = Posterior.read(written)
    np.testing.assert_array_equal(p.values, whole.get("posterior", "p").values)
    assert "energy" in whole.group("sample_stats")


def test_selection_by_label_picks_the_named_element(written):
    post = Posterior.read(written)
    p = post.get("posterior", "p")
    picked = p.sel({"class": "no", "category": "c"}).sample_first()
    np.testing.assert_array_equal(picked, p.values[:, :, 1, 2])
    assert not np.array_equal(picked, p.values[:, :, 1, 1])  # another label, other draws
    assert p.sel({"class": "no"}).dims == ("chain", "draw", "category")
    with pytest.raises(KeyError):
        p.sel({"class": "maybe"})
    count = post.get("posterior", "count")
    np.testing.assert_array_equal(count.sel({"slot": 3}).values, count.values[..., 3])
    assert post.chains() == 2


def test_a_truncated_file_is_refused_naming_it(written):
    from bayescheck.models.errors import BayescheckError

    cut = written.with_name("cut.nc")
    cut.write_bytes(written.read_bytes()[:3000])
    with pytest.raises(BayescheckError, match=r"cut\.nc: not a readable posterior file"):
        Posterior.read(cut)
    assert Posterior.read(written).chains() == 2  # the whole file still reads
