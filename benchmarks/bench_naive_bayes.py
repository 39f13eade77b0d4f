"""Naive Bayes against scikit-learn: GaussianNB and CategoricalNB(alpha=1), in one run.

    .venv/bin/python benchmarks/bench_naive_bayes.py [--quick] [--rows N] [--repeats R]
        [--predict-rows M] [--predict-repeats P]

For each model, on the same synthetic data (1,000,000 training rows and 1,000,000 rows to
predict by default): the largest absolute difference of the predicted class probabilities,
the number of differing predictions, and the fit throughput (rows per second, best of
``--repeats``) of scikit-learn and of bayescheck, one batch and streamed in 10 batches
(statistics per batch, combined by addition). Then ``predict_proba`` on the same rows,
side by side: scikit-learn and the bayescheck variants timed in turn within each of
``--predict-repeats`` rounds (the order rotates between rounds), medians compared; the load
average is printed before and after. Prints markdown tables and writes them to
bench-output/naive_bayes.md.

Prediction variants: the ML plug-in (``smoothing=False``, ``gaussian="ml"``), the Bayesian
predictive (Student-t features, ``gaussian="nig"`` with the prior below; Dirichlet(1)
posterior-mean categories) and, for categories, the Laplace-smoothed fit of the agreement
table. scikit-learn has no Student-t classifier: the Student-t variant is timed against
GaussianNB, the classifier a user would otherwise run.

Settings compared: GaussianNB(var_smoothing=0) vs ``fit_naive_bayes(smoothing=False)``
(maximum-likelihood means and variances, frequency class prior); CategoricalNB(alpha=1) vs
``fit_naive_bayes(smoothing=True, concentration=1, class_prior="frequency")`` (Laplace-
smoothed features; scikit-learn's class prior is the class frequency).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sklearn  # noqa: E402
from bayescheck.inference.engines.naive_bayes_stats import (  # noqa: E402
    NaiveBayesSchema,
    UnivariateNIGPrior,
    fit_naive_bayes,
    fit_naive_bayes_batches,
    naive_bayes_stats,
)
from sklearn.naive_bayes import CategoricalNB, GaussianNB  # noqa: E402

N_FEATURES = 10
N_CLASSES = 3
N_CATEGORIES = 5
N_BATCHES = 10
TOLERANCE = 1e-9
NIG_PRIOR = UnivariateNIGPrior(mu0=0.0, kappa0=1.0, a0=1.0, b0=1.0)


def gaussian_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    centers = np.random.default_rng(100).normal(0.0, 1.0, size=(N_CLASSES, N_FEATURES))
    scales = np.random.default_rng(101).uniform(0.5, 2.0, size=(N_CLASSES, N_FEATURES))
    y = rng.choice(N_CLASSES, size=n, p=[0.5, 0.3, 0.2])
    X = centers[y] + scales[y] * rng.standard_normal((n, N_FEATURES))
    return X, y


def categorical_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    probs = np.random.default_rng(102).dirichlet(
        np.ones(N_CATEGORIES), size=(N_CLASSES, N_FEATURES)
    )
    y = rng.choice(N_CLASSES, size=n, p=[0.5, 0.3, 0.2])
    cum = probs.cumsum(axis=2)[y]  # (n, d, N)
    u = rng.random((n, N_FEATURES, 1))
    X = np.minimum((u > cum).sum(axis=2), N_CATEGORIES - 1).astype(np.int64)
    return X, y


def best_time(fn, repeats: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def run(kind: str, n: int, n_test: int, repeats: int, predict_repeats: int) -> dict:
    rng = np.random.default_rng(0 if kind == "gaussian" else 1)
    make = gaussian_data if kind == "gaussian" else categorical_data
    X, y = make(rng, n)
    Xt, _ = make(rng, n_test)
    if kind == "gaussian":
        schema = NaiveBayesSchema(
            classes=tuple(range(N_CLASSES)),
            kinds=("gaussian",) * N_FEATURES,
            categories=(None,) * N_FEATURES,
        )
        options = {"smoothing": False}
        sk_factory = lambda: GaussianNB(var_smoothing=0.0)  # noqa: E731
        sk_name = "GaussianNB(var_smoothing=0)"
    else:
        schema = NaiveBayesSchema(
            classes=tuple(range(N_CLASSES)),
            kinds=("categorical",) * N_FEATURES,
            categories=(tuple(range(N_CATEGORIES)),) * N_FEATURES,
        )
        options = {"smoothing": True, "concentration": 1.0, "class_prior": "frequency"}
        sk_factory = lambda: CategoricalNB(alpha=1.0)  # noqa: E731
        sk_name = "CategoricalNB(alpha=1)"

    t_sk, sk = best_time(lambda: sk_factory().fit(X, y), repeats)
    t_ours, ours = best_time(
        lambda: fit_naive_bayes(stats=naive_bayes_stats(X, y, schema=schema), **options), repeats
    )
    edges = np.linspace(0, n, N_BATCHES + 1).astype(int)
    batches = [(X[a:b], y[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=True)]
    t_stream, streamed = best_time(
        lambda: fit_naive_bayes_batches(batches, schema=schema, **options), repeats
    )

    p_sk = sk.predict_proba(Xt)
    p_ours = ours.predict_proba(Xt)
    p_stream = streamed.predict_proba(Xt)
    pred_sk = sk.classes_[np.argmax(p_sk, axis=1)]
    pred_ours = ours.predict(Xt)
    return {
        "model": sk_name,
        "rows": n,
        "test_rows": n_test,
        "max_abs_diff": float(np.max(np.abs(p_ours - p_sk))),
        "max_abs_diff_stream": float(np.max(np.abs(p_stream - p_sk))),
        "pred_diff": int(np.sum(pred_ours != pred_sk)),
        "sk_rows_s": n / t_sk,
        "ours_rows_s": n / t_ours,
        "stream_rows_s": n / t_stream,
        "predict": predict_side_by_side(kind, sk, ours, X, y, Xt, schema, predict_repeats),
    }


def predict_side_by_side(kind, sk, ours, X, y, Xt, schema, repeats: int) -> dict:
    """Median ``predict_proba`` seconds of scikit-learn and each bayescheck variant."""
    stats = naive_bayes_stats(X, y, schema=schema)
    if kind == "gaussian":
        variants = {
            "ML plug-in (smoothing=false, gaussian=ml)": ours,
            "Bayesian predictive (Student-t, gaussian=nig)": fit_naive_bayes(
                stats=stats, gaussian="nig", nig_prior=NIG_PRIOR
            ),
        }
    else:
        variants = {
            "ML plug-in (smoothing=false)": fit_naive_bayes(stats=stats, smoothing=False),
            "Bayesian predictive (Dirichlet(1) posterior mean)": fit_naive_bayes(stats=stats),
            "Laplace, frequency class prior (as CategoricalNB)": ours,
        }
    contenders = {"scikit-learn": sk, **variants}
    names = list(contenders)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names):] + names[: r % len(names)]:
            t0 = time.perf_counter()
            contenders[name].predict_proba(Xt)
            times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(t)) for name, t in times.items()}


def table(results: list[dict]) -> str:
    head = (
        "| peer | train rows | max abs diff P (one batch / 10 batches) | differing predictions | "
        "fit rows/s scikit-learn | fit rows/s bayescheck (one batch / 10 batches) | fit ratio |\n"
        "|---|---:|---|---:|---:|---|---:|\n"
    )
    lines = []
    for r in results:
        ok = (
            "ok"
            if max(r["max_abs_diff"], r["max_abs_diff_stream"]) <= TOLERANCE and r["pred_diff"] == 0
            else "FAIL"
        )
        lines.append(
            f"| {r['model']} | {r['rows']:,} | {r['max_abs_diff']:.1e} / "
            f"{r['max_abs_diff_stream']:.1e} ({ok}, tol 1e-9) "
            f"| {r['pred_diff']} of {r['test_rows']:,} | {r['sk_rows_s'] / 1e6:.2f} M "
            f"| {r['ours_rows_s'] / 1e6:.2f} M / {r['stream_rows_s'] / 1e6:.2f} M "
            f"| {r['ours_rows_s'] / r['sk_rows_s']:.2f}x |"
        )
    return head + "\n".join(lines) + "\n"


def predict_table(results: list[dict]) -> str:
    head = (
        "| peer | rows predicted | bayescheck variant | median s scikit-learn | "
        "median s bayescheck | speed ratio (scikit-learn s / bayescheck s) |\n"
        "|---|---:|---|---:|---:|---:|\n"
    )
    lines = []
    for r in results:
        t = r["predict"]
        for name, sec in t.items():
            if name == "scikit-learn":
                continue
            lines.append(
                f"| {r['model']} | {r['test_rows']:,} | {name} | {t['scikit-learn']:.3f} "
                f"| {sec:.3f} | {t['scikit-learn'] / sec:.2f}x |"
            )
    return head + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100,000 rows, one repeat")
    ap.add_argument("--rows", type=int, default=None, help="training rows (default 1,000,000)")
    ap.add_argument(
        "--repeats", type=int, default=None, help="fit timing repeats, best kept (default 3)"
    )
    ap.add_argument(
        "--predict-rows", type=int, default=None, help="rows to predict (default 1,000,000)"
    )
    ap.add_argument(
        "--predict-repeats",
        type=int,
        default=None,
        help="interleaved predict_proba rounds, median kept (default 5)",
    )
    args = ap.parse_args(argv)
    n = args.rows or (100_000 if args.quick else 1_000_000)
    repeats = args.repeats or (1 if args.quick else 3)
    n_test = args.predict_rows or (100_000 if args.quick else 1_000_000)
    predict_repeats = args.predict_repeats or (3 if args.quick else 5)
    load_before = os.getloadavg()
    results = [
        run(kind, n, n_test, repeats, predict_repeats) for kind in ("gaussian", "categorical")
    ]
    load_after = os.getloadavg()
    md = table(results) + "\n" + predict_table(results)
    env = (
        f"\n{N_FEATURES} features, {N_CLASSES} classes"
        f" ({N_CATEGORIES} categories per categorical feature); fit best of {repeats}, "
        f"predict_proba median of {predict_repeats} interleaved rounds; load average "
        f"(1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
        f"Python {platform.python_version()}, numpy {np.__version__}, scikit-learn "
        f"{sklearn.__version__}, "
        f"{platform.machine()}.\n"
    )
    print(md + env)
    out = ROOT / "bench-output"
    out.mkdir(exist_ok=True)
    (out / "naive_bayes.md").write_text(md + env)
    bad = [
        r
        for r in results
        if max(r["max_abs_diff"], r["max_abs_diff_stream"]) > TOLERANCE or r["pred_diff"]
    ]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
