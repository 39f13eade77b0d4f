"""Gaussian-mixture EM: bayescheck's numpy engine against scikit-learn's GaussianMixture.

Both fit the same data from the same start (k-means++ centres, nearest-centre weights and
covariances, handed to scikit-learn as ``weights_init``, ``means_init``, ``precisions_init``),
with the same covariance floor (``reg_covar``) and the same fixed number of EM iterations
(``tol=0``), so both follow the same trajectory and must end at the same log-likelihood. The
fits alternate (ours, theirs, ours, ...) so a busy machine slows both alike; the median of the
repeats is reported.

    .venv/bin/python benchmarks/bench_mixture.py [--quick] [--repeats R] [--out FILE]

Writes a markdown table to stdout and to bench-output/mixture.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.linalg import solve_triangular

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bayescheck.inference.engines.mixture_em import fit_em, log_likelihood  # noqa: E402

REG_COVAR = 1e-6
LOAD = os.getloadavg()


def make_data(n: int, d: int, k: int, seed: int) -> np.ndarray:
    """K well-overlapping Gaussian clusters with random full covariances."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 2.5, size=(k, d))
    factors = rng.normal(0.0, 0.6, size=(k, d, d)) + np.eye(d)
    labels = rng.choice(k, size=n, p=np.arange(1, k + 1) / np.arange(1, k + 1).sum())
    z = rng.standard_normal((n, d))
    return centres[labels] + np.einsum("nij,nj->ni", factors[labels], z)


def common_start(X: np.ndarray, k: int, seed: int):
    """k-means++ centres; weights and covariances of the nearest-centre partition."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    centres = np.empty((k, d))
    centres[0] = X[rng.integers(n)]
    d2 = np.square(X - centres[0]).sum(axis=1)
    for j in range(1, k):
        cdf = np.cumsum(d2)
        centres[j] = X[min(int(np.searchsorted(cdf, rng.random() * cdf[-1])), n - 1)]
        np.minimum(d2, np.square(X - centres[j]).sum(axis=1), out=d2)
    dist = np.stack([np.square(X - c).sum(axis=1) for c in centres])
    labels = np.argmin(dist, axis=0)
    weights = np.bincount(labels, minlength=k) / n
    covs = np.stack(
        [np.cov(X[labels == j], rowvar=False, bias=True).reshape(d, d) for j in range(k)]
    )
    covs += REG_COVAR * np.eye(d)
    # scikit-learn wants precisions: P = L^{-T} L^{-1} from the Cholesky factor L of Sigma.
    precs = []
    for c in covs:
        linv = solve_triangular(np.linalg.cholesky(c), np.eye(d), lower=True)
        precs.append(linv.T @ linv)
    return weights, centres, covs, np.stack(precs)


def run_ours(X, k, start, iters):
    weights, means, covs, _ = start
    t0 = time.perf_counter()
    res = fit_em(
        X,
        n_components=k,
        covariance="full",
        max_iter=iters,
        tol=0.0,
        init_means=means,
        init_weights=weights,
        init_covariances=covs,
        reg_covar=REG_COVAR,
    )
    elapsed = time.perf_counter() - t0
    assert res.n_iter == iters
    return elapsed, res.log_likelihood, (res.weights, res.means, res.covariances)


def run_sklearn(X, k, start, iters, blas_threads=None):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture
    from threadpoolctl import threadpool_limits

    weights, means, _, precs = start
    gm = GaussianMixture(
        n_components=k,
        covariance_type="full",
        max_iter=iters,
        tol=0.0,
        reg_covar=REG_COVAR,
        weights_init=weights,
        means_init=means,
        precisions_init=precs,
    )
    with warnings.catch_warnings(), threadpool_limits(blas_threads, user_api="blas"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        gm.fit(X)
        elapsed = time.perf_counter() - t0
    assert gm.n_iter_ == iters
    ll = log_likelihood(X, gm.weights_, gm.means_, gm.covariances_)
    return elapsed, ll, float(gm.score(X)) * X.shape[0]


def bench_case(name, n, d, k, iters, repeats, seed):
    X = make_data(n, d, k, seed)
    start = common_start(X, k, seed + 1)
    ours_t, theirs_t, theirs1_t = [], [], []
    for _ in range(repeats):
        t, ll_ours, params = run_ours(X, k, start, iters)
        ours_t.append(t)
        t, ll_sk, ll_sk_own = run_sklearn(X, k, start, iters)
        theirs_t.append(t)
        t, _, _ = run_sklearn(X, k, start, iters, blas_threads=1)
        theirs1_t.append(t)
    t_ours, t_sk = float(np.median(ours_t)), float(np.median(theirs_t))
    t_sk1 = float(np.median(theirs1_t))
    return {
        "case": name,
        "n": n,
        "d": d,
        "k": k,
        "iters": iters,
        "ours_ms_per_iter": 1e3 * t_ours / iters,
        "sk_ms_per_iter": 1e3 * t_sk / iters,
        "sk1_ms_per_iter": 1e3 * t_sk1 / iters,
        "ratio1": t_ours / t_sk1,
        "ratio": t_ours / t_sk,
        "ll_ours": ll_ours,
        "ll_sk": ll_sk,
        "ll_sk_own": ll_sk_own,
        "rel_diff": abs(ll_ours - ll_sk) / abs(ll_sk),
        "ours_all": ours_t,
        "sk_all": theirs_t,
        "sk1_all": theirs1_t,
    }


def table(rows, repeats) -> str:
    head = (
        "| case | n x d, K | EM iterations | bayescheck ms/iter | scikit-learn ms/iter "
        "| time ratio (ours/sk) | sk, BLAS 1 thread, ms/iter | ratio (ours/sk 1 thread) "
        "| final log-lik (ours) | final log-lik (sk) | rel. difference |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    body = "".join(
        f"| {r['case']} | {r['n']:,} x {r['d']}, {r['k']} | {r['iters']} "
        f"| {r['ours_ms_per_iter']:.1f} | {r['sk_ms_per_iter']:.1f} | {r['ratio']:.2f} "
        f"| {r['sk1_ms_per_iter']:.1f} | {r['ratio1']:.2f} "
        f"| {r['ll_ours']:.6f} | {r['ll_sk']:.6f} | {r['rel_diff']:.1e} |\n"
        for r in rows
    )
    import sklearn

    foot = (
        f"\nMedian of {repeats} alternating repeats; time per iteration = fit time / iterations "
        f"(bayescheck: {min(os.cpu_count() or 1, 4)} threads over row batches, BLAS held to 1 "
        f"thread; "
        f"scikit-learn: its default BLAS threading, and again with BLAS held to 1 thread) "
        f"(both: every iteration one E and one M step, plus one final E step); same start, "
        f"reg_covar={REG_COVAR:g}, tol=0. Log-likelihoods of both estimates evaluated by "
        f"`inference.engines.mixture_em.log_likelihood` (scikit-learn's own `score` agrees to "
        f"{max(abs(r['ll_sk_own'] - r['ll_sk']) / abs(r['ll_sk']) for r in rows):.0e}). "
        f"numpy {np.__version__}, scikit-learn {sklearn.__version__}, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores; load average "
        f"{LOAD[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (other jobs shared "
        f"the machine).\n"
    )
    return head + body + foot


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100,000 rows, 2 repeats")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "bench-output" / "mixture.md"))
    args = ap.parse_args(argv)
    n = 100_000 if args.quick else 1_000_000
    repeats = args.repeats or (2 if args.quick else 5)
    rows = [
        bench_case("5-D, full covariances", n, 5, 3, args.iters, repeats, seed=0),
        bench_case("1-D", n, 1, 3, args.iters, repeats, seed=10),
    ]
    text = table(rows, repeats)
    print(text)
    for r in rows:
        print(
            f"# {r['case']}: ours {np.round(r['ours_all'], 3).tolist()} s, "
            f"sklearn {np.round(r['sk_all'], 3).tolist()} s, "
            f"sklearn BLAS 1 thread {np.round(r['sk1_all'], 3).tolist()} s",
            file=sys.stderr,
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("# Gaussian mixture EM: bayescheck vs scikit-learn\n\n" + text)
    ok = all(r["rel_diff"] <= 1e-6 and r["ratio"] <= 1.5 for r in rows)
    print("goal (rel. difference <= 1e-6, time ratio <= 1.5):", "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
