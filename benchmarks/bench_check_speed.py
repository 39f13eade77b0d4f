"""Whole ``bayescheck check`` per example and NUTS backend: CPU and wall, warm and cold.

    MPLBACKEND=Agg PYTHONPATH=. .venv/bin/python benchmarks/bench_check_speed.py \
        [--examples coin stream] [--backends c numba auto] [--repeat 2] [--cold]

Each run is a fresh process (``python -m reports.cli check SPEC --quiet``), as a user has
it, with ``BAYESCHECK_NUTS_BACKEND`` set. CPU is the child's user + system time (all its
threads); wall is what the user waits. The backends alternate within each repetition, so
the load of a shared machine falls on all of them alike; the table keeps the best of the
repetitions. Warm runs share one PyTensor cache directory, filled by a first run of every
backend that is not counted; ``--cold`` gives each run an empty one instead (what CI has).
Default: coin and the known-noise regression, the three backends, warm, two repetitions
(about 2-3 minutes on an idle 2-core machine). Prints a markdown table and one JSON line.
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
    "die": "examples/dirichlet_categorical/die.toml",
    "naive_bayes": "examples/naive_bayes/play_tennis.toml",
    "aode": "examples/semi_naive_bayes/play_tennis_aode.toml",
}


def run_check(spec: str, backend: str, cache: str, out: str) -> dict:
    """One ``check`` in a fresh process: CPU, wall, verdict and the backend it used."""
    env = dict(os.environ, BAYESCHECK_NUTS_BACKEND=backend, MPLBACKEND="Agg",
               PYTENSOR_FLAGS=f"base_compiledir={cache}",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "reports.cli", "check", spec, "--out", out,
                           "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary_path = Path(out) / "summary.json"
    if not summary_path.exists():
        raise SystemExit(f"check of {spec} ({backend}) wrote no summary.json:\n{done.stderr}")
    summary = json.loads(summary_path.read_text())
    return {"cpu": cpu, "wall": wall, "verdict": summary["verdict"],
            "nuts_backend": summary.get("nuts_backend"), "exit": done.returncode}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", nargs="+", choices=sorted(EXAMPLES),
                        default=["coin", "stream"])
    parser.add_argument("--backends", nargs="+", choices=["c", "numba", "auto"],
                        default=["c", "numba", "auto"])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cold", action="store_true")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench_check_speed_"))
    warm_cache = str(work / "cache")
    load = os.getloadavg()
    results: dict = {}
    for name in args.examples:
        spec = EXAMPLES[name]
        if not args.cold:  # fill the shared cache, not counted
            for backend in args.backends:
                run_check(spec, backend, warm_cache, str(work / "out"))
        for i in range(args.repeat):
            for backend in args.backends:
                cache = str(work / f"cold-{name}-{backend}-{i}") if args.cold else warm_cache
                runs = results.setdefault(name, {}).setdefault(backend, [])
                runs.append(run_check(spec, backend, cache, str(work / "out")))
    state = "cold" if args.cold else "warm"
    print(f"\nload average before: {load[0]:.1f}; {state} cache; best of {args.repeat}\n")
    print("| example | backend | CPU s | wall s | verdict | nuts_backend |")
    print("|---|---|---:|---:|---|---|")
    for name, per_backend in results.items():
        for backend, runs in per_backend.items():
            best = min(runs, key=lambda r: r["cpu"])
            print(f"| {name} | {backend} | {best['cpu']:.1f} | "
                  f"{min(r['wall'] for r in runs):.1f} | {best['verdict']} | "
                  f"{best['nuts_backend']} |")
    print(json.dumps({"state": state, "load_before": load, "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
