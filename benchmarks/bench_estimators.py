"""Prediction with the scikit-learn estimators against scikit-learn's own, in one run.

    .venv/bin/python benchmarks/bench_estimators.py [--rows N] [--repeats R]

Rows (default n = 1,000,000, as in issue 17):

- regression, d = 50: ``BayesianLinearRegression.predict(X, return_std=True)`` against
  ``BayesianRidge.predict(X, return_std=True)``, our estimator set to BayesianRidge's noise and
  weight precisions on centred data, so both compute the same predictive (max relative
  difference of mean and sd reported);
- ``partial_fit`` over 100 batches against one ``fit`` (max relative difference of the
  coefficients and of their posterior covariance);
- mixture, D = 5, K = 3, full: ``GaussianMixture.predict_proba`` (responsibilities) against
  scikit-learn's, scikit-learn's set to our estimate (max absolute difference reported).

The two sides of each row are interleaved in every round, best of ``--repeats`` kept.
Prints a markdown table and writes it to bench-output/estimators.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sklearn.linear_model import BayesianRidge  # noqa: E402
from sklearn.mixture import GaussianMixture as SklearnMixture  # noqa: E402

from bayescheck.estimators import BayesianLinearRegression, GaussianMixture  # noqa: E402


def best_of(fns: dict, repeats: int) -> dict:
    best, out = dict.fromkeys(fns, np.inf), {}
    for _ in range(repeats):
        for name, fn in fns.items():
            t = time.perf_counter()
            out[name] = fn()
            best[name] = min(best[name], time.perf_counter() - t)
    return {k: (best[k], out[k]) for k in fns}


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    n, rng = args.rows, np.random.default_rng(0)
    rows = []

    # regression
    d = 50
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + rng.standard_normal(n)
    br = BayesianRidge().fit(X[:100_000], y[:100_000])
    Xc, yc = X - X[:100_000].mean(axis=0), y - y[:100_000].mean()
    ours = BayesianLinearRegression(noise_sd=1 / np.sqrt(br.alpha_), prior_precision=br.lambda_,
                                    fit_intercept=False).fit(Xc[:100_000], yc[:100_000])
    t = best_of({"sk": lambda: br.predict(X, return_std=True),
                 "ours": lambda: ours.predict(Xc, return_std=True)}, args.repeats)
    (m_sk, s_sk), (m_o, s_o) = t["sk"][1], t["ours"][1]
    diff = max(np.max(np.abs(m_o + y[:100_000].mean() - m_sk) / np.abs(m_sk).max()),
               np.max(np.abs(s_o / s_sk - 1)))
    rows.append(("regression predict(return_std=True), d = 50", n, t["sk"][0], t["ours"][0],
                 f"{diff:.1e} (rel.)"))

    # exact streaming
    one = BayesianLinearRegression(noise="unknown").fit(X, y)
    streamed = BayesianLinearRegression(noise="unknown")
    started = time.perf_counter()
    for idx in np.array_split(np.arange(n), 100):
        streamed.partial_fit(X[idx], y[idx])
    stream_s = time.perf_counter() - started
    diff = max(np.max(np.abs(streamed.coef_ / one.coef_ - 1)),
               np.max(np.abs(streamed.sigma_ - one.sigma_)) / np.abs(one.sigma_).max())
    rows.append(("partial_fit x 100 batches vs one fit (unknown noise)", n, None, stream_s,
                 f"{diff:.1e} (rel.)"))

    # mixture responsibilities
    centres = rng.normal(scale=4, size=(3, 5))
    Z = centres[rng.integers(3, size=n)] + rng.standard_normal((n, 5))
    gm = GaussianMixture(3, n_init=1).fit(Z[:50_000])
    sk = SklearnMixture(3, covariance_type="full").fit(Z[:2_000])  # then set to our estimate
    sk.weights_, sk.means_, sk.covariances_ = gm.weights_, gm.means_, gm.covariances_
    sk.precisions_cholesky_ = np.linalg.cholesky(np.linalg.inv(gm.covariances_))
    t = best_of({"sk": lambda: sk.predict_proba(Z), "ours": lambda: gm.predict_proba(Z)},
                args.repeats)
    diff = np.max(np.abs(t["sk"][1] - t["ours"][1]))
    rows.append(("mixture predict_proba, D = 5, K = 3 full", n, t["sk"][0], t["ours"][0],
                 f"{diff:.1e} (abs.)"))

    lines = ["| what | rows | scikit-learn s | bayescheck s | sk / ours | max difference |",
             "|---|---:|---:|---:|---:|---|"]
    for what, rows_n, sk_s, our_s, diff in rows:
        ratio = "" if sk_s is None else f"{sk_s / our_s:.2f}"
        sk_cell = "" if sk_s is None else f"{sk_s:.3f}"
        lines.append(f"| {what} | {rows_n:,} | {sk_cell} | {our_s:.3f} | {ratio} | {diff} |")
    table = "\n".join(lines)
    print(table)
    out = ROOT / "bench-output"
    out.mkdir(exist_ok=True)
    (out / "estimators.md").write_text(table + "\n")
    return table


if __name__ == "__main__":
    main()
