"""Every engine imports in a fresh interpreter without models, pandas or the PyMC stack."""

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import inference.engines

ROOT = Path(__file__).resolve().parents[3]
ENGINES = sorted(m.name for m in pkgutil.iter_modules(inference.engines.__path__))
FORBIDDEN = ("models", "pandas", "pymc", "pytensor", "arviz", "arviz_base", "arviz_stats",
             "arviz_plots", "matplotlib", "xarray", "reports")


def _loaded_after_import(module: str) -> list[str]:
    code = (f"import importlib, json, sys; importlib.import_module({module!r}); "
            f"print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


def test_every_engine_module_is_listed():
    assert {"linear_gaussian", "counts", "naive_bayes_stats", "mixture_em", "sbl",
            "decisions", "dist", "errors"} <= set(ENGINES)


@pytest.mark.parametrize("engine", ENGINES)
def test_engine_imports_nothing_outside_numpy_and_scipy(engine):
    loaded = _loaded_after_import(f"inference.engines.{engine}")
    bad = sorted(m for m in loaded if m.split(".")[0] in FORBIDDEN)
    assert not bad, f"inference.engines.{engine} loads {bad}"


def test_the_check_itself_can_fail():
    # the same probe on a family module (which reads specs through models) must see models
    loaded = _loaded_after_import("inference.families.linear_regression")
    assert any(m.split(".")[0] == "models" for m in loaded)
