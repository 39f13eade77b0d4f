"""The NUTS backend rule (``auto``) against C alone and Numba alone, whole ``check`` per example.

    MPLBACKEND=Agg PYTHONPATH=. .venv/bin/python benchmarks/bench_nuts_backend.py --quick
    MPLBACKEND=Agg PYTHONPATH=. .venv/bin/python benchmarks/bench_nuts_backend.py \
        [--examples coin die ...] [--backends c numba auto] [--repeat 1] [--cold] [--cache DIR]

Each run is a fresh process (``python -m reports.cli check SPEC --quiet``) with
``BAYESCHECK_NUTS_BACKEND`` set; CPU is the child's user + system time, g++ children
included. The backends alternate within each repetition, so a shared machine's load falls on
all alike; the table keeps the best repetition. Warm runs share one PyTensor cache, filled by
an uncounted first run of every backend; ``--cold`` gives each run an empty cache (what CI
has). ``--quick`` (coin and stream, warm, one repetition: 10 checks, about 2.5 minutes at
load 1-3 on the 2-core machine) is the run to repeat after a change; without it every example that
samples with nutpie runs (``bayes_rule`` samples with PyMC's Gibbs step, so the backend does
not apply), plus scikit-learn's diabetes regression, unscaled with a known noise (``diabetes``:
the case where the C path takes over 190 s). Prints a markdown table (CPU s per backend,
auto / the better of C and Numba) and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = {
    "coin": "examples/beta_bernoulli/coin.toml",
    "stream": "examples/linear_regression/stream.toml",
    "unknown_noise": "examples/linear_regression/unknown_noise.toml",
    "die": "examples/dirichlet_categorical/die.toml",
    "ard": "examples/ard/design.toml",
    "worked_step": "examples/gaussian_mixture/worked_step.toml",
    "blobs": "examples/gaussian_mixture/blobs.toml",
    "asia": "examples/bayesian_network/asia.toml",
    "naive_bayes": "examples/naive_bayes/play_tennis.toml",
    "naive_bayes_ml": "examples/naive_bayes/play_tennis_ml.toml",
    "cells": "examples/naive_bayes/cells.toml",
    "cells_decision": "examples/naive_bayes/cells_decision.toml",
    "tan": "examples/semi_naive_bayes/play_tennis_tan.toml",
    "spode": "examples/semi_naive_bayes/play_tennis_spode.toml",
    "aode": "examples/semi_naive_bayes/play_tennis_aode.toml",
    "diabetes": None,  # written by diabetes_spec()
}
QUICK = ["coin", "stream"]

DIABETES_TOML = """\
# scikit-learn's diabetes data, unscaled, known noise sd 54, vague prior (bench_nuts_backend.py)
model = "linear_regression"

[data]
path = "diabetes.csv"
target = "target"
features = ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
intercept = true

[prior]
mean = 0.0
cov = 1000000.0

[likelihood]
noise_sd = 54.0

[sampling]
draws = 1000
tune = 1000
chains = 4
seed = 1
"""


def diabetes_spec(folder: Path) -> str:
    """Write scikit-learn's diabetes data (unscaled) and its spec into ``folder``."""
    from sklearn.datasets import load_diabetes

    folder.mkdir(parents=True, exist_ok=True)
    load_diabetes(as_frame=True, scaled=False).frame.to_csv(folder / "diabetes.csv",
                                                            index=False)
    (folder / "diabetes.toml").write_text(DIABETES_TOML)
    return str(folder / "diabetes.toml")


def run_check(spec: str, backend: str, cache: str, out: str) -> dict:
    """One ``check`` in a fresh process: CPU, wall, verdict and the backend it used."""
    env = dict(os.environ, BAYESCHECK_NUTS_BACKEND=backend, MPLBACKEND="Agg",
               PYTENSOR_FLAGS=f"base_compiledir={cache}",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "bayescheck.reports.cli", "check", spec, "--out", out,
                           "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary_path = Path(out) / "summary.json"
    if not summary_path.exists():
        raise SystemExit(f"check of {spec} ({backend}) wrote no summary.json:\n{done.stderr}")
    summary = json.loads(summary_path.read_text())
    summary_path.unlink()
    return {"cpu": cpu, "wall": wall, "verdict": summary["verdict"],
            "nuts_backend": summary.get("nuts_backend"), "exit": done.returncode}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", nargs="+", choices=sorted(EXAMPLES))
    parser.add_argument("--backends", nargs="+", choices=["c", "numba", "auto"],
                        default=["c", "numba", "auto"])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--quick", action="store_true", help="coin and stream only")
    parser.add_argument("--cache", help="a warm PyTensor cache to use as is (no filling runs)")
    args = parser.parse_args(argv)
    names = args.examples or (QUICK if args.quick else list(EXAMPLES))
    work = Path(tempfile.mkdtemp(prefix="bench_nuts_backend_"))
    warm_cache = args.cache or str(work / "cache")
    load = os.getloadavg()
    results: dict = {}
    for name in names:
        spec = EXAMPLES[name] or diabetes_spec(work / "diabetes")
        if not args.cold and not args.cache:  # fill the shared cache, not counted
            # auto's caches are C's and Numba's ops: filling with those two is enough.
            for backend in [b for b in args.backends if b != "auto"] or args.backends:
                run_check(spec, backend, warm_cache, str(work / "out"))
        for i in range(args.repeat):
            for backend in args.backends:
                cache = str(work / f"cold-{name}-{backend}-{i}") if args.cold else warm_cache
                runs = results.setdefault(name, {}).setdefault(backend, [])
                runs.append(run_check(spec, backend, cache, str(work / "out")))
        print(f"{name}: " + ", ".join(f"{b} {min(r['cpu'] for r in rs):.1f} s"
                                      for b, rs in results[name].items())
              + "; auto: " + ", ".join(str(r["nuts_backend"])
                                       for r in results[name].get("auto", [])),
              file=sys.stderr, flush=True)
    state = "cold" if args.cold else "warm"
    print(f"\nload average before: {load[0]:.1f}, after: {os.getloadavg()[0]:.1f}; "
          f"{state} cache; best of {args.repeat}\n")
    print("| example | " + " | ".join(f"{b} CPU s" for b in args.backends)
          + " | auto / better | auto's path | verdicts |")
    print("|---|" + "---:|" * len(args.backends) + "---:|---|---|")
    for name, per_backend in results.items():
        best = {b: min(runs, key=lambda r: r["cpu"]) for b, runs in per_backend.items()}
        ratio = ""
        if {"c", "numba", "auto"} <= best.keys():
            ratio = f"{best['auto']['cpu'] / min(best['c']['cpu'], best['numba']['cpu']):.2f}"
        path = best["auto"]["nuts_backend"] if "auto" in best else ""
        print(f"| {name} | " + " | ".join(f"{best[b]['cpu']:.1f}" for b in args.backends)
              + f" | {ratio} | {path} | "
              + ", ".join(sorted({r['verdict'] for r in best.values()})) + " |")
    print(json.dumps({"state": state, "load_before": load, "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
