"""`bayescheck fit` stays on the analytic path: it never imports PyMC, PyTensor, ArviZ,
matplotlib, jinja2 or scipy.stats (which alone was about half of its start-up time), nor, on
these small examples, pandas (pyarrow reads the CSV files; pandas only words an error),
scipy.optimize (the mixture's components are matched by enumeration) or scipy.sparse (only
a sparse design needs it).

One fresh interpreter fits every example in turn and reports, after each fit, the heavy
modules loaded so far: a module loaded by any one fit shows up at that example.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a fresh interpreter fitting every example

ROOT = Path(__file__).resolve().parents[2]
# a formula's design is built by formulaic from a pandas frame: its own probe, below
FORMULA = ROOT / "examples" / "linear_regression" / "formula.toml"
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*/*.toml") if p != FORMULA)
HEAVY = ("pymc", "pytensor", "nutpie", "arviz", "arviz_base", "arviz_stats", "arviz_plots",
         "xarray", "matplotlib", "jinja2", "scipy.stats", "pandas", "scipy.optimize",
         "scipy.sparse")

PROBE = """
import json, sys
from bayescheck.reports.cli import main
specs, out, heavy = json.loads(sys.argv[1])
report = []
for i, spec in enumerate(specs):
    rc = main(['fit', spec, '--out', f'{out}/{i}', '--quiet'])
    report.append([spec, rc, sorted(m for m in heavy if m in sys.modules)])
print('REPORT', json.dumps(report))
"""


def _fit_every_example(tmp_path, heavy=HEAVY, examples=EXAMPLES):
    args = json.dumps([[str(p) for p in examples], str(tmp_path), list(heavy)])
    done = subprocess.run([sys.executable, "-c", PROBE, args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("REPORT "))
    return json.loads(line.removeprefix("REPORT "))


def test_fit_imports_no_sampler_plots_or_scipy_stats(tmp_path):
    report = _fit_every_example(tmp_path)
    assert [Path(spec) for spec, _, _ in report] == EXAMPLES
    for i, (spec, rc, loaded) in enumerate(report):
        assert rc == 0, spec
        assert loaded == [], f"after fitting {spec}: {loaded}"
        assert (tmp_path / str(i) / "posterior.json").stat().st_size > 0


def test_a_formula_fit_adds_only_formulaic_s_pandas(tmp_path):
    ((spec, rc, loaded),) = _fit_every_example(tmp_path, examples=[FORMULA])
    assert rc == 0
    assert set(loaded) <= {"pandas", "scipy.sparse"}, loaded  # formulaic imports both


def test_the_probe_sees_a_module_the_fit_loads(tmp_path):
    """The same probe on modules every fit does load (numpy, the CLI) reports them."""
    report = _fit_every_example(tmp_path, heavy=("numpy", "bayescheck.reports.cli"))
    assert all(loaded == ["bayescheck.reports.cli", "numpy"] for _, _, loaded in report)
