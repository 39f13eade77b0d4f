"""Correct digits on the NIST StRD linear least-squares data sets, and what the statistic costs.

    .venv/bin/python benchmarks/bench_nist_strd.py [--rows N]

Digits: the log relative error (LRE) of the flat-prior posterior mean against the certified
coefficients, smallest over the coefficients, capped at 15, for

- ours: ``GaussianPosterior.flat(d).update(regression_stats(X, y))`` (the triangular root,
  TSQR), and the same over batches of 7 rows;
- ``numpy.linalg.lstsq`` and statsmodels ``OLS`` (pinv);
- the old engine's arithmetic: Cholesky of X'X;
- centred statistics merged by Chan et al.'s formulas (1979; batches of 7 rows), the other
  candidate of DESIGN "Scale": intercept from the means, slopes by Cholesky of the centred
  scatter;
- each data set stacked 200 times into one tall batch (the same least-squares problem):
  the batch root the stream takes (:func:`inference.engines.cholesky_qr.batch_root`:
  preconditioned Cholesky QR when its guard holds, and which way it went), Householder QR
  and lstsq of the same tall matrix.

Cost: seconds to form the statistic of an n x 51 block [X y] (X'X, one QR, Householder QR
or the batch root per batch of 10,000 rows merged), best of 3, interleaved, BLAS on one
thread (as in a stream). Data sets and LRE come from
``tests/inference/engines/test_nist_strd.py``. Prints a markdown table and writes it to
bench-output/nist_strd.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import linalg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "inference" / "engines"))

from test_nist_strd import DATASETS, lre, lstsq, normal_equations  # noqa: E402

from inference.engines import cholesky_qr  # noqa: E402
from inference.engines.linear_gaussian import (  # noqa: E402
    GaussianPosterior,
    RegressionStats,
    merge_roots,
    regression_stats,
    triangular_root,
)

#: Copies of a data set stacked into one tall batch (the same least-squares problem, so the
#: certified values hold), tall enough for the preconditioned Cholesky QR of a batch.
COPIES = 200


def chan(X, y, rows=7):
    """Flat-prior least squares from centred statistics merged batch by batch (Chan 1979)."""
    Z = np.column_stack([X[:, 1:], y])  # column 0 is the intercept
    n, mean, scatter = 0, np.zeros(Z.shape[1]), np.zeros((Z.shape[1],) * 2)
    for lo in range(0, len(Z), rows):
        part = Z[lo:lo + rows]
        nb, mb = len(part), part.mean(axis=0)
        centred = part - mb
        delta = mb - mean
        total = n + nb
        scatter = scatter + centred.T @ centred + np.outer(delta, delta) * n * nb / total
        mean = mean + delta * nb / total
        n = total
    slopes = linalg.cho_solve(linalg.cho_factor(scatter[:-1, :-1]), scatter[:-1, -1])
    return np.concatenate([[mean[-1] - mean[:-1] @ slopes], slopes])


def flat_mean(root):
    """Flat-prior posterior mean of a batch root."""
    return GaussianPosterior.flat(root.shape[0] - 1, noise_var=1.0).update(
        RegressionStats(0, root)).mean


def digits_table() -> list[str]:
    import statsmodels.api as sm

    lines = ["| data set | LRE ours (TSQR) | ours, batches of 7 | LRE lstsq | LRE statsmodels "
             "| LRE old X'X | LRE centred (Chan) | tall (x200): ours, batch root "
             "| tall: Householder | tall: lstsq | tall: root taken by |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, make in DATASETS.items():
        X, y, certified = make()
        d = X.shape[1]
        ours = GaussianPosterior.flat(d, noise_var=1.0).update(regression_stats(X, y)).mean
        post = GaussianPosterior.flat(d, noise_var=1.0)
        for lo in range(0, len(y), 7):
            post = post.update(regression_stats(X[lo:lo + 7], y[lo:lo + 7]))
        Xt, yt = np.tile(X, (COPIES, 1)), np.tile(y, COPIES)
        Zt = np.column_stack([Xt, yt])
        taken = []
        gram = cholesky_qr.gram_root

        def spy(Z, P, gram=gram, taken=taken):
            done = gram(Z, P)
            taken.append(done is not None and done[1] <= cholesky_qr.MAX_COND)
            return done

        cholesky_qr.gram_root = spy
        try:
            tall = flat_mean(cholesky_qr.batch_root(Zt))
        finally:
            cholesky_qr.gram_root = gram
        row = [lre(ours, certified), lre(post.mean, certified), lre(lstsq(X, y), certified),
               lre(sm.OLS(y, X).fit().params, certified),
               lre(normal_equations(X, y), certified), lre(chan(X, y), certified),
               lre(tall, certified), lre(flat_mean(triangular_root(Zt)), certified),
               lre(lstsq(Xt, yt), certified)]
        how = ("Cholesky QR" if taken and taken[-1] else
               "Householder (guard)" if taken else "Householder (no preconditioner)")
        lines.append(f"| {name} | " + " | ".join(f"{v:.1f}" for v in row) + f" | {how} |")
    return lines


def cost_table(rows: int) -> list[str]:
    Z = np.random.default_rng(0).normal(size=(rows, 51))

    def chunked(factor):
        def run():
            root = factor(Z[:10_000])
            for lo in range(10_000, rows, 10_000):
                root = merge_roots(root, factor(Z[lo:lo + 10_000]))
        return run

    methods = {"Z'Z (old statistic)": lambda: Z.T @ Z,
               "QR of Z, one block": lambda: triangular_root(Z),
               "Householder QR per 10,000 rows, merged": chunked(triangular_root),
               "batch root per 10,000 rows (Cholesky QR), merged": chunked(
                   cholesky_qr.batch_root)}
    best = dict.fromkeys(methods, np.inf)
    for _ in range(3):
        for key, f in methods.items():
            started = time.perf_counter()
            f()
            best[key] = min(best[key], time.perf_counter() - started)
    base = best["Z'Z (old statistic)"]
    lines = [f"| statistic of {rows:,} x 51 | seconds | / Z'Z |", "|---|---:|---:|"]
    lines += [f"| {k} | {v:.3f} | {v / base:.2f} |" for k, v in best.items()]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits

    from inference.engines.linear_gaussian import load_lapack

    load_lapack()  # before the limit, so that it covers the QR's library
    with threadpool_limits(1, user_api="blas"):
        text = "\n".join(digits_table() + [""] + cost_table(args.rows)) + "\n"
    print(text)
    out = ROOT / "bench-output"
    out.mkdir(exist_ok=True)
    (out / "nist_strd.md").write_text(text)


if __name__ == "__main__":
    main()
