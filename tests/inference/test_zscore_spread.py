"""The spread of each kind of z score is that of N(0, 1), also on antithetic chains.

NUTS often draws antithetically (ESS above the number of draws: up to 2.3 x on the
play_tennis example), where a Geyer-truncated ESS could in principle be biased. A conservative
MCSE (too large) makes the z's narrower than N(0, 1) and costs the check power, an
anti-conservative one raises the false-alarm rate. Each statistic is tested on its own, since
pooling the five kinds could hide one mis-scaled MCSE among four right ones
(``test_compare.py`` pools them, on positively correlated chains).
benchmarks/ZSCORES.md has the same measurement on NUTS runs of the examples.
"""

from functools import cache

import numpy as np
import pytest
from bayescheck.inference.checking.compare import compare_draws
from bayescheck.inference.result import ExactMarginal
from scipy import stats

RUNS = 300
RHO = -0.4  # antithetic: ESS about 2.3 x the draws, as NUTS gave on play_tennis
STATS = ("mean", "sd", "q05", "q50", "q95")


def ar1_draws(rng, rho, chains=4, draws=500):
    """AR(1) chains with N(0, 1) marginals; rho < 0 is antithetic (ESS > chains x draws)."""
    x = np.empty((chains, draws))
    x[:, 0] = rng.normal(size=chains)
    eps = rng.normal(size=(chains, draws)) * np.sqrt(1 - rho ** 2)
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + eps[:, t]
    return x


@cache
def z_scores(rho: float) -> dict[str, np.ndarray]:
    """Each statistic's z over RUNS independent comparisons of one correct N(0, 1) marginal."""
    marginal = [ExactMarginal("x", "x", {}, stats.norm(0.0, 1.0))]
    zs = {s: [] for s in STATS}
    for seed in range(RUNS):
        draws = {"x": ar1_draws(np.random.default_rng(seed), rho)}
        row = compare_draws(marginal, draws).parameters[0]
        for s in STATS:
            zs[s].append(row.z[s])
    return {s: np.asarray(v) for s, v in zs.items()}


def off_scale(z: np.ndarray) -> bool:
    """True when the RMS of ``z`` is more than 4 standard errors from 1.

    The runs are independent, so the standard error of mean(z^2) is sd(z^2) / sqrt(n) and
    that of the RMS about half of it near 1. It is taken from the scores' own shape (z^2 over
    its mean: an MCSE estimated from the draws makes z a little heavier-tailed than normal),
    which does not shrink when every z is scaled down.
    """
    rms = np.sqrt(np.mean(z ** 2))
    se = np.std(z ** 2 / rms ** 2, ddof=1) / np.sqrt(z.size) / 2
    return abs(rms - 1.0) > 4 * se


@pytest.mark.slow
def test_each_statistics_z_has_unit_spread_on_antithetic_chains():
    zs = z_scores(RHO)
    assert not [s for s, z in zs.items() if off_scale(z)], {
        s: round(float(np.sqrt(np.mean(z ** 2))), 3) for s, z in zs.items()}


@pytest.mark.slow
def test_an_mcse_conservative_by_forty_percent_would_be_caught():
    """The negative control: z's of an MCSE 1.4 times too large are flagged, every kind.

    With 300 runs the standard error of the RMS is 0.035-0.045, so the limit lies at
    0.82-0.86 and an RMS of about 1 / 1.4 = 0.71-0.74 about 2 standard errors beyond it.
    """
    zs = z_scores(RHO)
    assert all(off_scale(z / 1.4) for z in zs.values())
