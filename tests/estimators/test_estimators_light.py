"""scikit-learn stays out of ``import bayescheck`` and ``bayescheck fit``: only the estimators
need it."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPECS = ["linear_regression/unknown_noise.toml", "ard/design.toml",
         "gaussian_mixture/blobs.toml", "naive_bayes/cells.toml",
         "semi_naive_bayes/play_tennis_spode.toml", "bayesian_network/asia.toml"]


def _modules_after(code: str) -> list[str]:
    probe = (code + "\nimport sys; print(sorted(m for m in sys.modules "
                    "if m.split('.')[0] == 'sklearn'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)}).stdout
    return eval(out.strip().splitlines()[-1])  # noqa: S307 - our own print of a list


@pytest.mark.slow
def test_fit_does_not_import_sklearn(tmp_path):
    runs = "\n".join(f"main(['fit', {str(ROOT / 'examples' / s)!r}, '--out', "
                     f"{str(tmp_path / str(i))!r}, '--quiet'])" for i, s in enumerate(SPECS))
    assert _modules_after("import bayescheck\nfrom reports.cli import main\n" + runs) == []
    # the probe sees scikit-learn when it is imported: the test can fail
    assert "sklearn" in _modules_after("from bayescheck.estimators import GaussianMixture")
