"""Correct digits on the NIST StRD linear least-squares data sets: ours, lstsq, statsmodels.

Certified values: NIST Statistical Reference Datasets, linear least squares
(https://www.itl.nist.gov/div898/strd/lls/lls.shtml). Longley from the copy statsmodels ships
(``statsmodels.datasets.longley``); Wampler1 and Wampler2 are exact degree-5 polynomials,
generated here (x = 0..20, y = sum_k c^k x^k, c = 1 and 1/10, certified coefficients c^k).

LRE = -log10(|estimate - certified| / |certified|), smallest over the coefficients, capped at
15 (McCullough 1998). Ours is the flat-prior posterior mean of ``BayesianLinearRegression``
(``prior_precision=0``), in one ``fit`` and over ``partial_fit`` batches of 7 rows.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from harness import Context, Row, shape

LRE_CAP = 15.0
LONGLEY_COEF = np.array([-3482258.63459582, 15.0618722713733, -0.358191792925910e-01,
                         -2.02022980381683, -1.03322686717359, -0.511041056535807e-01,
                         1829.15146461355])


def longley():
    """Design (intercept first), response and certified coefficients of Longley (1967)."""
    from statsmodels.datasets import longley as data

    frame = data.load_pandas()
    X = np.column_stack([np.ones(len(frame.endog)), frame.exog.to_numpy(dtype=np.float64)])
    return X, frame.endog.to_numpy(dtype=np.float64), LONGLEY_COEF


def wampler(c: Fraction):
    """Wampler's degree-5 polynomial design; y correctly rounded from the exact value."""
    x = np.arange(21)
    X = np.vander(x, 6, increasing=True).astype(np.float64)
    y = np.array([float(sum(c ** k * int(xi) ** k for k in range(6))) for xi in x])
    return X, y, np.array([float(c ** k) for k in range(6)])


DATASETS = {"Longley": longley, "Wampler1": lambda: wampler(Fraction(1)),
            "Wampler2": lambda: wampler(Fraction(1, 10))}


def lre(estimate, certified) -> float:
    """Smallest LRE over the entries."""
    err = np.abs(np.asarray(estimate, float) - certified)
    with np.errstate(divide="ignore"):
        digits = -np.log10(err / np.abs(certified))
    return float(np.min(np.clip(digits, 0.0, LRE_CAP)))


def nist(ctx: Context) -> list[Row]:
    import statsmodels.api as sm

    from bayescheck.estimators import BayesianLinearRegression

    rows = []
    for name, make in DATASETS.items():
        X, y, certified = make()

        def flat():
            return BayesianLinearRegression(prior_precision=0.0, fit_intercept=False)

        ours = flat().fit(X, y).coef_
        batched = flat()
        for lo in range(0, len(y), 7):
            batched.partial_fit(X[lo:lo + 7], y[lo:lo + 7])
        lstsq = np.linalg.lstsq(X, y, rcond=None)[0]
        statsmodels = sm.OLS(y, X).fit().params
        rows.append(Row(f"NIST StRD {name}: correct digits (LRE) of the least-squares "
                        "coefficients", shape(*X.shape), lre(ours, certified),
                        "statsmodels OLS", lre(statsmodels, certified), unit="digits",
                        note=f"numpy lstsq {lre(lstsq, certified):.1f}; ours over batches of "
                             f"7 rows {lre(batched.coef_, certified):.1f}"))
    return rows


BENCHMARKS = {"nist": nist}
