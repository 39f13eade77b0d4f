"""``bayescheck.data`` is the lowest package: it imports nothing else of bayescheck's, and
importing the package alone loads neither numpy nor pyarrow."""

import json
import subprocess
import sys

PROBE = """
import json, pkgutil, sys
import bayescheck.data
light = sorted(m for m in ("numpy", "pyarrow", "pandas") if m in sys.modules)
for info in pkgutil.iter_modules(bayescheck.data.__path__):
    __import__(f"bayescheck.data.{info.name}")
ours = sorted(m for m in sys.modules if m.startswith("bayescheck.") and
              not m.startswith("bayescheck.data"))
print(json.dumps([light, ours, "bayescheck.data.labels" in sys.modules]))
"""


def test_data_imports_nothing_above_it():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    light, ours, probed = json.loads(done.stdout.strip().splitlines()[-1])
    assert probed  # the probe did import the modules it looks behind
    assert light == []
    assert ours == []
