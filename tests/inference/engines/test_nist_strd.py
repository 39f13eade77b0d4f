"""The regression engines on the NIST StRD linear least-squares data sets, against lstsq.

Certified values: NIST Statistical Reference Datasets, linear least squares,
https://www.itl.nist.gov/div898/strd/lls/lls.shtml (Longley; Wampler1 and Wampler2, whose
designs are exact polynomials and are generated here: x = 0..20, y = sum_k c^k x^k for
k = 0..5 with c = 1 and c = 0.1, certified coefficients c^k, residual sd 0).
The Longley data are the copy statsmodels ships (``statsmodels.datasets.longley``).

The measure is the log relative error, LRE = -log10(|estimate - certified| / |certified|)
(McCullough 1998, "Assessing the reliability of statistical software"), capped at 15 (the
certified digits), the smallest over the coefficients. The target (issue 15): the engines'
posterior mean under a flat prior keeps as many digits as ``numpy.linalg.lstsq``, to within
one; the normal equations (X'X, the engine before the triangular root) do not, which the
negative tests show.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from bayescheck.inference.engines.linear_gaussian import (
    GaussianPosterior,
    NormalInverseGammaPosterior,
    regression_stats,
)
from scipy import linalg

LRE_CAP = 15.0

LONGLEY_COEF = np.array([-3482258.63459582, 15.0618722713733, -0.358191792925910e-01,
                         -2.02022980381683, -1.03322686717359, -0.511041056535807e-01,
                         1829.15146461355])
LONGLEY_SD = np.array([890420.383607373, 84.9149257747669, 0.334910077722432e-01,
                       0.488399681651699, 0.214274163161675, 0.226073200069370,
                       455.478499142212])
LONGLEY_RESIDUAL_SD = 304.854073561965


def longley():
    """Design (intercept first) and response of Longley (1967), with its certified values."""
    from statsmodels.datasets import longley as data

    frame = data.load_pandas()
    X = np.column_stack([np.ones(len(frame.endog)), frame.exog.to_numpy(dtype=np.float64)])
    return X, frame.endog.to_numpy(dtype=np.float64), LONGLEY_COEF


def wampler(c: Fraction):
    """Wampler's degree-5 polynomial design, y correctly rounded from the exact value."""
    x = np.arange(21)
    X = np.vander(x, 6, increasing=True).astype(np.float64)
    y = np.array([float(sum(c ** k * int(xi) ** k for k in range(6))) for xi in x])
    return X, y, np.array([float(c ** k) for k in range(6)])


DATASETS = {
    "Longley": longley,
    "Wampler1": lambda: wampler(Fraction(1)),
    "Wampler2": lambda: wampler(Fraction(1, 10)),
}


def lre(estimate, certified) -> float:
    """Smallest LRE over the entries (absolute error where the certified value is 0)."""
    estimate, certified = np.asarray(estimate, float), np.asarray(certified, float)
    err = np.abs(estimate - certified)
    rel = np.where(certified == 0, err, err / np.where(certified == 0, 1.0, np.abs(certified)))
    with np.errstate(divide="ignore"):
        digits = -np.log10(rel)
    return float(np.min(np.clip(digits, 0.0, LRE_CAP)))


def normal_equations(X, y):
    """The pre-root engine's arithmetic: Cholesky of X'X, X'y (kept as the negative control)."""
    return linalg.cho_solve(linalg.cho_factor(X.T @ X), X.T @ y)


def lstsq(X, y):
    return np.linalg.lstsq(X, y, rcond=None)[0]


def in_batches(post, X, y, cuts):
    for lo, hi in zip([0, *cuts], [*cuts, len(y)], strict=True):
        post = post.update(regression_stats(X[lo:hi], y[lo:hi]))
    return post


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_posterior_mean_keeps_the_digits_of_lstsq(name):
    X, y, certified = DATASETS[name]()
    d = X.shape[1]
    reference = lre(lstsq(X, y), certified)
    known = GaussianPosterior.flat(d, noise_var=1.0).update(regression_stats(X, y))
    unknown = NormalInverseGammaPosterior.flat(d, shape=0.5, scale=1e-300).update(
        regression_stats(X, y))
    # Cut into batches of 7 rows (fewer rows than Wampler's 6 coefficients + 1 per batch is
    # not needed: a batch's root is exact in any case).
    streamed = in_batches(GaussianPosterior.flat(d, noise_var=1.0), X, y, [7, 14])
    for post in (known, unknown, streamed):
        assert lre(post.mean, certified) >= reference - 1.0


@pytest.mark.parametrize("name", ["Longley", "Wampler1"])
def test_normal_equations_lose_digits(name):
    """Negative control: the X'X arithmetic misses the bar the engines meet (on Wampler2 it
    happens to fall just within it: 9.2 digits against lstsq's 10.1)."""
    X, y, certified = DATASETS[name]()
    assert lre(normal_equations(X, y), certified) < lre(lstsq(X, y), certified) - 1.0


def test_longley_certified_values_agree_with_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    X, y, certified = longley()
    fit = sm.OLS(y, X).fit()
    assert lre(fit.params, certified) > 8
    assert lre(fit.bse, LONGLEY_SD) > 8
    assert lre(np.sqrt(fit.scale), LONGLEY_RESIDUAL_SD) > 8


def test_longley_posterior_sd_and_residual_sd():
    """With sigma2 known at its certified value, the flat-prior posterior sd is the certified
    standard error; with sigma2 unknown, b - b0 is half the residual sum of squares."""
    X, y, _ = longley()
    n, d = X.shape
    sd_reference = np.sqrt(np.diag(np.linalg.pinv(X) @ np.linalg.pinv(X).T)) * \
        LONGLEY_RESIDUAL_SD
    known = GaussianPosterior.flat(d, noise_var=LONGLEY_RESIDUAL_SD ** 2).update(
        regression_stats(X, y))
    assert lre(known.sd, LONGLEY_SD) >= lre(sd_reference, LONGLEY_SD) - 1.0
    old_sd = np.sqrt(np.diag(linalg.cho_solve(linalg.cho_factor(X.T @ X), np.eye(d)))) * \
        LONGLEY_RESIDUAL_SD
    assert lre(old_sd, LONGLEY_SD) < lre(known.sd, LONGLEY_SD) - 1.0

    unknown = NormalInverseGammaPosterior.flat(d, shape=0.5, scale=1e-300).update(
        regression_stats(X, y))
    residual_sd = np.sqrt(2.0 * (unknown.scale - unknown.scale0) / (n - d))
    # Held to the digits lstsq gives the mean (recomputing the residuals from lstsq's
    # coefficients, a second pass over the data, gets about 14).
    assert lre(residual_sd, LONGLEY_RESIDUAL_SD) >= lre(lstsq(X, y), LONGLEY_COEF) - 1.0
    old_rss = y @ y - (X.T @ y) @ normal_equations(X, y)
    assert lre(np.sqrt(max(old_rss, 0.0) / (n - d)), LONGLEY_RESIDUAL_SD) < \
        lre(residual_sd, LONGLEY_RESIDUAL_SD) - 1.0


def exact_log_evidence(X, y, prior_var, noise_var) -> float:
    """log N(y; 0, noise_var I + prior_var X X') in exact rational arithmetic, then rounded.

    Gaussian elimination over Fractions gives the determinant and the quadratic form of the
    n x n covariance exactly (the inputs are the floats themselves, read exactly).
    """
    n = len(y)
    F = [[Fraction(v) for v in row] for row in X]
    s2, t2 = Fraction(noise_var), Fraction(prior_var)
    K = [[t2 * sum(a * b for a, b in zip(F[i], F[j], strict=True)) + (s2 if i == j else 0)
          for j in range(n)] for i in range(n)]
    rhs = [Fraction(v) for v in y]
    det = Fraction(1)
    A = [row[:] + [r] for row, r in zip(K, rhs, strict=True)]
    for k in range(n):
        det *= A[k][k]
        for i in range(k + 1, n):
            f = A[i][k] / A[k][k]
            A[i] = [a - f * b for a, b in zip(A[i], A[k], strict=True)]
    # y' K^-1 y = sum over pivots of (L^-1 y)_k^2 / D_k, with the elimination's right column.
    quad = sum(A[k][n] ** 2 / A[k][k] for k in range(n))
    log_det = math.log(det.numerator) - math.log(det.denominator)
    return float(-0.5 * n * np.log(2 * np.pi) - 0.5 * log_det - 0.5 * float(quad))


@pytest.mark.parametrize(("name", "prior_var", "noise_var"),
                         [("Longley", 1e12, 1.0), ("Wampler1", 1.0, 1.0)])
def test_log_evidence_against_exact_arithmetic(name, prior_var, noise_var):
    X, y, _ = DATASETS[name]()
    d = X.shape[1]
    exact = exact_log_evidence(X, y, prior_var, noise_var)
    post = in_batches(GaussianPosterior.from_prior(np.zeros(d), prior_var * np.eye(d),
                                                   noise_var=noise_var), X, y, [5, 11])
    ours = lre(post.log_evidence, exact)
    # The evidence through the normal equations (the engine before the root): a Cholesky of
    # P = I / prior_var + X'X / noise_var and h'P^-1 h subtracted from y'y / noise_var.
    P = np.eye(d) / prior_var + X.T @ X / noise_var
    h = X.T @ y / noise_var
    c = linalg.cho_factor(P, lower=True)
    old = (-0.5 * len(y) * np.log(2 * np.pi * noise_var) - 0.5 * (y @ y / noise_var
           - h @ linalg.cho_solve(c, h)) - 0.5 * d * np.log(prior_var)
           - np.sum(np.log(np.diag(c[0]))))
    assert ours >= 10
    assert ours > lre(old, exact) + 1.0


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_tall_blocks_keep_the_digits(name):
    """A data set repeated until it spans several of the QR's row blocks (the rows after the
    first ``ROW_BLOCK`` are folded in by ``dtpqrt``): least squares of k copies of the rows is
    the same problem, so the certified values still hold, and the posterior mean keeps
    lstsq's digits on the same tall matrix, in one batch and cut into uneven batches."""
    from bayescheck.inference.engines import linear_gaussian as lg
    from threadpoolctl import threadpool_limits

    X, y, certified = DATASETS[name]()
    copies = -(-3 * lg.ROW_BLOCK // len(y)) + 1  # past three blocks, with a short last one
    X, y = np.tile(X, (copies, 1)), np.tile(y, copies)
    d = X.shape[1]
    assert len(y) > 3 * lg.ROW_BLOCK and len(y) % lg.ROW_BLOCK
    reference = lre(lstsq(X, y), certified)
    with threadpool_limits(1, user_api="blas"):  # as in a big stream: the blocked path
        whole = GaussianPosterior.flat(d, noise_var=1.0).update(regression_stats(X, y))
        cut = in_batches(GaussianPosterior.flat(d, noise_var=1.0), X, y, [5, 1500, 2600])
    for post in (whole, cut):
        assert lre(post.mean, certified) >= reference - 1.0
