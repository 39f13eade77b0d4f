"""Every engine imports without models, pandas or the PyMC stack.

One fresh interpreter imports the engines one after another and reports, after each import,
the forbidden modules loaded so far: a forbidden module pulled in by any engine shows up at
that engine (or earlier). Then it imports a family module, which reads specs through models,
to prove that the probe sees what is loaded.
"""

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import bayescheck.inference.engines

ROOT = Path(__file__).resolve().parents[3]
ENGINES = sorted(m.name for m in pkgutil.iter_modules(bayescheck.inference.engines.__path__))
FORBIDDEN = (
    "bayescheck.models",
    "pandas",
    "pymc",
    "pytensor",
    "arviz",
    "arviz_base",
    "arviz_stats",
    "arviz_plots",
    "matplotlib",
    "xarray",
    "bayescheck.reports",
)
PROBE = """
import importlib, json, sys
modules, forbidden = json.loads(sys.argv[1])
report = []
for module in modules:
    importlib.import_module(module)
    report.append([module, sorted(m for m in sys.modules
                           if any(m == f or m.startswith(f + '.') for f in forbidden))])
print(json.dumps(report))
"""


def _loaded_after_each(modules: list[str]) -> list[list]:
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps([modules, FORBIDDEN])],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_every_engine_module_is_listed():
    assert {"linear_gaussian", "counts", "naive_bayes_stats", "mixture_em", "sbl",
            "decisions", "dist", "errors"} <= set(ENGINES)


def test_engines_import_nothing_outside_numpy_and_scipy_and_the_check_can_fail():
    family = "bayescheck.inference.families.linear_regression"
    report = _loaded_after_each([f"bayescheck.inference.engines.{e}" for e in ENGINES] + [family])
    assert [module for module, _ in report] == [f"bayescheck.inference.engines.{e}"
                                                for e in ENGINES] + [family]
    for module, bad in report[:-1]:
        assert not bad, f"{module} loads {bad}"
    # the same probe on a family module (which reads specs through models) must see models
    assert any(m.startswith("bayescheck.models") for m in report[-1][1])


def test_engines_import_scipy_only_inside_the_functions_that_need_it():
    """Importing scipy costs more than a small fit: no engine loads it on import (nor
    threadpoolctl); the probe sees it once something does."""
    modules = [f"bayescheck.inference.engines.{e}" for e in ENGINES] + ["scipy.special"]
    out = subprocess.run([sys.executable, "-c", PROBE,
                          json.dumps([modules, ("scipy", "threadpoolctl")])],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    report = json.loads(out)
    for module, loaded in report[:-1]:
        assert not loaded, f"{module} loads {loaded}"
    assert "scipy.special" in report[-1][1]
