"""`bayescheck fit` stays on the analytic path: it never imports PyMC, PyTensor or ArviZ."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*/*.toml"))


@pytest.mark.parametrize("spec", EXAMPLES, ids=[f"{p.parent.name}/{p.stem}" for p in EXAMPLES])
def test_fit_imports_no_sampler(spec, tmp_path):
    code = ("import sys; from reports.cli import main; "
            f"rc = main(['fit', {str(spec)!r}, '--out', {str(tmp_path)!r}, '--quiet']); "
            "heavy = sorted(m for m in ('pymc', 'pytensor', 'arviz', 'arviz_stats', "
            "'arviz_plots', 'nutpie', 'matplotlib') if m in sys.modules); "
            "print('HEAVY', heavy); sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout, done.stdout
    assert (tmp_path / "posterior.json").exists()
