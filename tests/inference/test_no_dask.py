"""xarray without Dask inside :func:`bayescheck.inference.no_dask.without_dask`, and with it after.

Each probe runs in a fresh interpreter: the test process may have imported Dask already
(then the block has nothing to do).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _probe(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("REPORT "))
    return json.loads(line.removeprefix("REPORT "))


INSIDE_AND_AFTER = """
import json, sys, tempfile, os
import numpy as np
import xarray as xr
from arviz_base import from_dict
from bayescheck.inference.no_dask import without_dask
from bayescheck.reports.writers import write_netcdf
report = {}
with without_dask() as refused:
    report['refused'] = refused
    with without_dask() as inner:
        report['inner'] = inner
    tree = from_dict({'posterior': {'p': np.arange(8.0).reshape(2, 4)}})
    da = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=('a', 'b'))
    report['sum'] = float(da.sum()); report['chunks_inside'] = da.chunks
    path = os.path.join(tempfile.mkdtemp(), 'p.nc')
    write_netcdf(tree, path)
    try:
        import dask  # noqa: F401
        report['import_inside'] = 'imported'
    except ImportError:
        report['import_inside'] = 'refused'
    report['loaded_inside'] = sorted(m for m in sys.modules
                                     if m.split('.')[0] in ('dask', 'distributed')
                                     and sys.modules[m] is not None)
back = xr.open_datatree(path, engine='h5netcdf')
report['round_trip'] = bool((back.posterior['p'].values == tree.posterior['p'].values).all())
report['none_left'] = any(v is None for k, v in sys.modules.items() if k.startswith('dask'))
# after the block xarray finds Dask again: a Dask-backed DataArray is chunked and computed
import dask.array
from xarray.namedarray.utils import is_duck_dask_array
lazy = xr.DataArray(dask.array.arange(6.0, chunks=3), dims='x')
report['chunks_after'] = [list(c) for c in lazy.chunks]
report['dask_after'] = bool(is_duck_dask_array(lazy.data))
report['sum_after'] = float((lazy * 2).sum().compute())
report['chunk_numpy_after'] = [list(c) for c in da.chunk({'b': 2}).chunks]
print('REPORT', json.dumps(report))
"""


def test_dask_refused_inside_the_block_and_found_again_after():
    report = _probe(INSIDE_AND_AFTER)
    assert report == {"refused": True, "inner": False, "sum": 15.0, "chunks_inside": None,
                      "import_inside": "refused", "loaded_inside": [], "round_trip": True,
                      "none_left": False, "chunks_after": [[3, 3]], "dask_after": True,
                      "sum_after": 30.0, "chunk_numpy_after": [[2], [2, 1]]}


ALREADY = """
import json
import dask.array
import xarray as xr
from bayescheck.inference.no_dask import without_dask
with without_dask() as refused:
    lazy = xr.DataArray(dask.array.ones(4, chunks=2), dims='x')
    chunks = [list(c) for c in lazy.chunks]
print('REPORT', json.dumps({'refused': refused, 'chunks': chunks}))
"""


def test_nothing_done_when_dask_is_already_imported():
    assert _probe(ALREADY) == {"refused": False, "chunks": [[2, 2]]}


def test_the_block_is_left_on_an_error():
    import xarray.namedarray.pycompat as pycompat
    from bayescheck.inference.no_dask import without_dask

    if "dask" in sys.modules:
        pytest.skip("Dask already imported in this process: the block does nothing")
    with pytest.raises(RuntimeError), without_dask() as refused:
        assert refused and sys.modules["dask"] is None
        raise RuntimeError("inside")
    assert "dask" not in sys.modules
    assert "dask" not in pycompat._cached_duck_array_modules
