"""A check on PyTensor's C path imports neither Numba, nor arviz_plots, nor distributed, nor Dask.

nutpie's own import used to pull all three in (the whole ``arviz`` namespace, Numba for its
Numba path) and xarray's ``to_netcdf`` asked ``distributed`` for a scheduler: 2-3 s of CPU
of a coin's 9-10 (benchmarks/CHECK_SPEED.md); and xarray's first DataArray imported Dask
to ask whether it was a Dask array (0.3-0.5 s more, round 9: inference/no_dask.py). The
check's numbers are the same either way (benchmarks/bench_check_speed.py compares the
sampled means with main's).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.nuts

ROOT = Path(__file__).resolve().parents[2]
NOT_NEEDED = ("numba", "arviz", "arviz_plots", "distributed", "dask")

PROBE = """
import json, sys
from bayescheck.reports.cli import main
spec, out, names = json.loads(sys.argv[1])
rc = main(['check', spec, '--out', out, '--quiet'])
print('REPORT', json.dumps([rc, sorted(m for m in names if m in sys.modules)]))
"""


# The regression's declaration has a dimension without coordinate values (its rows), whose
# length nutpie used to find with a Numba-compiled ``.eval()`` (inference/nutpie_compile.py).
@pytest.mark.parametrize("spec", ["beta_bernoulli/coin.toml", "linear_regression/stream.toml"])
def test_a_check_on_the_c_path_leaves_them_out(tmp_path, spec):
    args = json.dumps([str(ROOT / "examples" / spec), str(tmp_path), list(NOT_NEEDED)])
    done = subprocess.run([sys.executable, "-c", PROBE, args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "BAYESCHECK_NUTS_BACKEND": "c"})
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("REPORT "))
    rc, loaded = json.loads(line.removeprefix("REPORT "))
    assert rc == 0
    assert loaded == []
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["nuts_backend"] == "c" and summary["verdict"] == "pass"
