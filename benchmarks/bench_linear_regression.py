"""Bayesian linear regression at scale: bayescheck's conjugate engine against scikit-learn's
BayesianRidge and against the bare ``X.T @ X``, in one run.

    .venv/bin/python benchmarks/bench_linear_regression.py [--quick] [--rows N] [--features D]

Rows (default n = 1,000,000 x d = 50, as in the issue):

- ``X.T @ X`` alone: the floor any exact method pays.
- BayesianRidge(fit_intercept=False): type-II ML of the noise and weight precisions.
- bayescheck in memory: ``GaussianPosterior.update(regression_stats(X, y))`` with the noise
  and prior precisions BayesianRidge found, so both compute the same posterior (max relative
  coefficient difference reported).
- bayescheck streamed: ``bayescheck fit`` over Parquet batches of 10,000 rows (reading,
  validation and checkpoints included), in a fresh process, at n/4, n/2 and n rows: its peak
  resident memory should not grow with n.

Peak memory of in-memory methods is the tracemalloc peak of the call (beyond the data);
of streamed runs the child's peak RSS (VmHWM: whole process, Python and libraries included).
Prints a markdown table and writes it to bench-output/linear_regression.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bayescheck.inference.engines.linear_gaussian import GaussianPosterior, regression_stats  # noqa: E402

BATCH_ROWS = 10_000


def timed_together(fns: dict, repeats: int) -> dict:
    """Best wall time of each function over ``repeats`` rounds, the functions interleaved in
    every round (so a busy spell of the machine hits all of them alike), then the tracemalloc
    peak of one more call of each (tracing slows allocation, so it is kept out of timing).

    Returns name -> (seconds, result, peak bytes).
    """
    best = dict.fromkeys(fns, np.inf)
    results = {}
    for _ in range(repeats):
        for name, fn in fns.items():
            t = time.perf_counter()
            results[name] = fn()
            best[name] = min(best[name], time.perf_counter() - t)
    out = {}
    for name, fn in fns.items():
        tracemalloc.start()
        fn()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        out[name] = (best[name], results[name], peak)
    return out


def write_batches(folder: Path, X, y):
    import pandas as pd

    folder.mkdir(parents=True, exist_ok=True)
    cols = [f"x{j}" for j in range(X.shape[1])]
    for i, lo in enumerate(range(0, len(y), BATCH_ROWS)):
        frame = pd.DataFrame(X[lo:lo + BATCH_ROWS], columns=cols)
        frame["y"] = y[lo:lo + BATCH_ROWS]
        frame.to_parquet(folder / f"{i}.parquet")
    return cols


def stream_fit(folder: Path, n_batches: int, noise_var: float, prior_var: float, work: Path):
    """Run `bayescheck fit` on the first n_batches files in a child; time and peak RSS."""
    sub = work / f"stream_{n_batches}"
    sub.mkdir(parents=True, exist_ok=True)
    (sub / "batches").mkdir(exist_ok=True)
    for i in range(n_batches):
        link = sub / "batches" / f"{i}.parquet"
        if not link.exists():
            link.symlink_to(folder / f"{i}.parquet")
    (sub / "spec.toml").write_text(
        'model = "linear_regression"\n[data]\npath = "batches/*.parquet"\ntarget = "y"\n'
        f"[prior]\nmean = 0.0\ncov = {float(prior_var)!r}\n[likelihood]\n"
        f"noise_sd = {float(noise_var) ** 0.5!r}\n")
    # Peak RSS from VmHWM: getrusage's ru_maxrss survives exec, so a child forked from this
    # (large) process would report the parent's high-water mark.
    code = ("import re, time; from reports.cli import main; t = time.perf_counter();"
            f" rc = main(['fit', {str(sub / 'spec.toml')!r}, '--out', {str(sub / 'out')!r},"
            " '--quiet']); s = time.perf_counter() - t;"
            " hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read());"
            " print('RESULT', s, hwm.group(1), rc)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT")]
    if not line:
        raise RuntimeError(proc.stderr)
    _, seconds, rss_kb, rc = line[0].split()
    if rc != "0":
        raise RuntimeError(f"bayescheck fit exited {rc}: {proc.stderr}")
    theta = json.loads((sub / "out" / "posterior.json").read_text())["parameters"]["theta"]
    return float(seconds), int(rss_kb) * 1024, np.array(theta["mean"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100,000 rows, one repeat")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    n = args.rows or (100_000 if args.quick else 1_000_000)
    repeats = 1 if args.quick else args.repeats
    d = args.features
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    theta = rng.normal(size=d)
    y = X @ theta + 0.5 * rng.normal(size=n)

    from sklearn.linear_model import BayesianRidge

    br_fit = BayesianRidge(fit_intercept=False).fit(X, y)
    prior = GaussianPosterior.from_prior(np.zeros(d), np.eye(d) / br_fit.lambda_,
                                         noise_var=1.0 / br_fit.alpha_)
    timings = timed_together({
        "xtx": lambda: X.T @ X,
        "br": lambda: BayesianRidge(fit_intercept=False).fit(X, y),
        "ours": lambda: prior.update(regression_stats(X, y)).mean,
    }, repeats)
    (t_xtx, _, mem_xtx), (t_br, br, mem_br), (t_ours, post, mem_ours) = (
        timings["xtx"], timings["br"], timings["ours"])
    noise_var, prior_var = 1.0 / br.alpha_, 1.0 / br.lambda_
    rel = float(np.max(np.abs(post - br.coef_)) / np.max(np.abs(br.coef_)))

    work = ROOT / "bench-output" / "lr_work"
    folder = work / f"batches_{n}_{d}"
    if not (folder / f"{(n - 1) // BATCH_ROWS}.parquet").exists():
        write_batches(folder, X, y)
    total = -(-n // BATCH_ROWS)
    streamed = []
    for k in sorted({max(1, total // 4), max(1, total // 2), total}):
        seconds, rss, mean = stream_fit(folder, k, noise_var, prior_var, work)
        streamed.append((k, min(k * BATCH_ROWS, n), seconds, rss, mean))
    rel_stream = float(np.max(np.abs(streamed[-1][4] - br.coef_)) / np.max(np.abs(br.coef_)))

    mb = 1024 ** 2
    rows = [
        ("`X.T @ X` alone", n, t_xtx, mem_xtx / mb, "", "1.00"),
        ("scikit-learn BayesianRidge", n, t_br, mem_br / mb, "(reference)", f"{t_br / t_xtx:.2f}"),
        ("bayescheck, in memory", n, t_ours, mem_ours / mb, f"{rel:.1e}", f"{t_ours / t_xtx:.2f}"),
    ]
    for k, rows_k, seconds, rss, _ in streamed:
        diff = f"{rel_stream:.1e}" if k == total else ""
        rows.append((f"bayescheck fit, {k} Parquet batches (peak RSS)", rows_k, seconds,
                     rss / mb, diff, f"{seconds / t_xtx:.2f}"))
    lines = [
        f"Bayesian linear regression, n = {n:,} x d = {d} (best of {repeats}; "
        f"numpy {np.__version__})",
        "",
        "| method | rows | seconds | peak MB | max rel. coef diff vs BayesianRidge | time / X'X |",
        "|---|---:|---:|---:|---:|---:|",
        *[f"| {m} | {r:,} | {s:.3f} | {p:.0f} | {dd} | {ratio} |"
          for m, r, s, p, dd, ratio in rows],
        "",
        f"Speed-up over BayesianRidge (in memory): {t_br / t_ours:.1f}x "
        f"(goal >= 5x); in-memory time / bare X'X: {t_ours / t_xtx:.2f} (goal <= 2).",
        f"Streamed peak RSS at {streamed[0][1]:,} / {streamed[-1][1]:,} rows: "
        f"{streamed[0][3] / mb:.0f} / {streamed[-1][3] / mb:.0f} MB (goal: flat in n).",
    ]
    text = "\n".join(lines)
    print(text)
    out = ROOT / "bench-output"
    out.mkdir(exist_ok=True)
    (out / "linear_regression.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
