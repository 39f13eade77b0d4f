"""`bayescheck fit` lets OpenBLAS's idle threads sleep instead of spinning.

Loading numpy's OpenBLAS and scipy's each starts a thread that spins for about 0.1 s of CPU
(2^28 cycles) before it sleeps; the command sets ``OPENBLAS_THREAD_TIMEOUT`` before numpy is
imported, unless the user set it. Measured in benchmarks/STREAM.md (round 11, second part).
"""

import os
import subprocess
import sys
from pathlib import Path

from bayescheck.reports.cli import BLAS_THREAD_TIMEOUT, main

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "linear_regression" / "stream.toml"

# As the console script runs it: main() with no arguments, in a fresh interpreter.
PROBE = """
import os, sys
import bayescheck.reports.cli

before = 'numpy' in sys.modules
sys.argv = ['bayescheck', 'fit', sys.argv[1], '--out', sys.argv[2], '--quiet']
rc = bayescheck.reports.cli.main()
print('PROBE', before, rc, os.environ.get('OPENBLAS_THREAD_TIMEOUT'))
"""


def _command(tmp_path, **env):
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    environ.update(env, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", PROBE, str(SPEC), str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=ROOT, env=environ, timeout=120)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("PROBE "))
    return line.split()[1:]


def test_fit_command_sets_the_timeout_before_numpy_loads(tmp_path):
    # numpy not yet imported when main() starts: set later, the variable would do nothing.
    assert _command(tmp_path) == ["False", "0", BLAS_THREAD_TIMEOUT]


def test_the_users_setting_wins(tmp_path):
    assert _command(tmp_path, OPENBLAS_THREAD_TIMEOUT="28") == ["False", "0", "28"]


def test_not_set_when_called_from_python(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    assert main(["fit", str(SPEC), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert "OPENBLAS_THREAD_TIMEOUT" not in os.environ
