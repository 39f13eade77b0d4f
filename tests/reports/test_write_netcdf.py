"""``write_netcdf``: the same file as ``to_netcdf``, without importing ``distributed``."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import numpy as np
import xarray as xr
from arviz_base import from_dict
from bayescheck.reports.writers import write_netcdf
if sys.argv[2] == 'with':
    import distributed  # a process that has it already keeps it
tree = from_dict({'posterior': {'p': np.arange(8.0).reshape(2, 4)}})
write_netcdf(tree, sys.argv[1])
back = xr.open_datatree(sys.argv[1], engine='h5netcdf')
print('REPORT', json.dumps({
    'same': bool((back.posterior['p'].values == tree.posterior['p'].values).all()),
    'distributed': sys.modules.get('distributed', 'absent') is not None
                   and 'distributed' in sys.modules,
    'none_left': 'distributed' in sys.modules and sys.modules['distributed'] is None,
}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("already", ["without", "with"])
def test_write_netcdf_round_trip_without_distributed(tmp_path, already):
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "p.nc"), already],
                          capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("REPORT "))
    report = json.loads(line.removeprefix("REPORT "))
    assert report == {"same": True, "distributed": already == "with", "none_left": False}
