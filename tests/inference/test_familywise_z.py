"""The comparison's |z| threshold: scipy's ``stats.norm.isf`` bit for bit, without scipy.stats.

``summary.json`` and ``report.json`` hold the threshold to the last digit, so it must not
move.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bayescheck.inference.checking.compare import compare_draws, familywise_z
from bayescheck.inference.result import ExactMarginal
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
ALPHAS = (0.001, 0.01, 0.05, 1e-6, 0.5, 1.0)
#: numbers of comparisons: the examples' (5 per parameter) and far more (many parameters)
COUNTS = np.unique(np.concatenate([np.arange(1, 3001), np.geomspace(3001, 1e6, 400).round()]))


def _bits(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_threshold_is_scipys_isf_bit_for_bit(alpha):
    ours = np.array([familywise_z(alpha, int(n)) for n in COUNTS])
    scipys = stats.norm.isf(alpha / (2 * COUNTS))
    assert np.array_equal(_bits(ours), _bits(scipys))


def test_threshold_of_no_comparison_counts_one():
    assert familywise_z(0.001, 0) == familywise_z(0.001, 1) == float(stats.norm.isf(0.0005))


def test_a_wrong_threshold_would_be_seen():
    # the comparison above tells one ulp apart
    assert not np.array_equal(_bits([familywise_z(0.001, 30)]),
                              _bits([np.nextafter(familywise_z(0.001, 30), 5.0)]))


def test_comparison_writes_scipys_threshold():
    rng = np.random.default_rng(7)
    marginals = [ExactMarginal(f"m{i}", "m", {}, stats.norm(0, 1)) for i in range(6)]
    draws = {m.name: rng.standard_normal((4, 1000)) for m in marginals}
    comparison = compare_draws(marginals, draws)
    expected = float(stats.norm.isf(0.001 / (2 * comparison.n_comparisons)))
    assert comparison.n_comparisons == 30
    assert _bits([comparison.z_threshold]) == _bits([expected])


@pytest.mark.slow
def test_importing_compare_leaves_scipy_stats_out():
    code = ("import json, sys; import bayescheck.inference.checking.compare; "
            "print('REPORT', json.dumps('scipy.stats' in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("REPORT "))
    assert json.loads(line.removeprefix("REPORT ")) is False
