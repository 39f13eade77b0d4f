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
  scatter.

Cost: seconds to form the statistic of an n x 51 block [X y] (X'X, one QR, QR per batch of
10,000 rows merged), best of 3, interleaved. Data sets and LRE come from
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

from bayescheck.inference.engines.linear_gaussian import (  # noqa: E402
    GaussianPosterior,
    merge_roots,
    regression_stats,
    triangular_root,
)
from test_nist_strd import DATASETS, lre, lstsq, normal_equations  # noqa: E402


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


def digits_table() -> list[str]:
    import statsmodels.api as sm

    lines = ["| data set | LRE ours (TSQR) | ours, batches of 7 | LRE lstsq | LRE statsmodels "
             "| LRE old X'X | LRE centred (Chan) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, make in DATASETS.items():
        X, y, certified = make()
        d = X.shape[1]
        ours = GaussianPosterior.flat(d, noise_var=1.0).update(regression_stats(X, y)).mean
        post = GaussianPosterior.flat(d, noise_var=1.0)
        for lo in range(0, len(y), 7):
            post = post.update(regression_stats(X[lo:lo + 7], y[lo:lo + 7]))
        row = [lre(ours, certified), lre(post.mean, certified), lre(lstsq(X, y), certified),
               lre(sm.OLS(y, X).fit().params, certified),
               lre(normal_equations(X, y), certified), lre(chan(X, y), certified)]
        lines.append(f"| {name} | " + " | ".join(f"{v:.1f}" for v in row) + " |")
    return lines


def cost_table(rows: int) -> list[str]:
    Z = np.random.default_rng(0).normal(size=(rows, 51))

    def chunked():
        root = triangular_root(Z[:10_000])
        for lo in range(10_000, rows, 10_000):
            root = merge_roots(root, triangular_root(Z[lo:lo + 10_000]))

    methods = {"Z'Z (old statistic)": lambda: Z.T @ Z,
               "QR of Z, one block": lambda: triangular_root(Z),
               "QR per 10,000 rows, merged": chunked}
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
    text = "\n".join(digits_table() + [""] + cost_table(args.rows)) + "\n"
    print(text)
    out = ROOT / "bench-output"
    out.mkdir(exist_ok=True)
    (out / "nist_strd.md").write_text(text)


if __name__ == "__main__":
    main()
