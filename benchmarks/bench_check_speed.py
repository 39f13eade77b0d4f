"""Whole ``bayescheck check`` of the small examples, this tree against a peer commit.

    MPLBACKEND=Agg PYTHONPATH=. .venv/bin/python benchmarks/bench_check_speed.py \
        [--peer main] [--examples coin die stream] [--repeat 2] [--cold] [--quick]
        [--backend auto]

Each run is a fresh process (``python -m reports.cli check SPEC --quiet``), as a user has
it. The peer is ``git archive PEER`` unpacked into a temporary folder, run with the same
interpreter. CPU is the child's user + system time (its threads and any compiler it starts);
wall is what the user waits. Both sides alternate within each repetition, so the load of a
shared machine falls on them alike; the table keeps the best of the repetitions and the
same-run ratio this tree / peer.

Warm: a PyTensor compile directory and Numba cache per side, filled by one uncounted run of
each side per example (separate, so that what one side leaves there, such as round 8's
remembered BLAS flags and abandoned C runs, is not read by the other). Cold (``--cold``):
every run gets an empty compile directory (``PYTENSOR_FLAGS=base_compiledir=...``) and an
empty ``NUMBA_CACHE_DIR``, as on a fresh machine or CI. After each run the script waits for
the background Numba compile the run may have started (``inference.numba_warmup``, from round
9), so that no run shares the machine with one; its CPU, which no ``check`` process counts,
is printed under the table.

Default: coin, die and the known-noise regression warm, best of 2 (about 3 minutes on an
idle 2-core machine, estimated from the CPU figures). ``--quick``: the coin only, warm best
of 2 and one cold run per side (about 1.5 minutes). ``--cold --repeat 0``: cold runs only.
Prints a markdown table and one JSON line; every verdict and every sampled mean must agree
between the sides (the table says so when they do not).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = {
    "coin": "examples/beta_bernoulli/coin.toml",
    "die": "examples/dirichlet_categorical/die.toml",
    "stream": "examples/linear_regression/stream.toml",
    "unknown_noise": "examples/linear_regression/unknown_noise.toml",
    "naive_bayes": "examples/naive_bayes/play_tennis.toml",
    "worked_step": "examples/gaussian_mixture/worked_step.toml",
}


def peer_tree(commit: str, into: Path) -> Path:
    """``git archive`` of ``commit`` unpacked into ``into``."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_check(tree: Path, spec: str, cache: Path, out: Path, backend: str) -> dict:
    """One ``check`` of ``spec`` with the code of ``tree``, in a fresh process."""
    env = dict(os.environ, MPLBACKEND="Agg", BAYESCHECK_NUTS_BACKEND=backend,
               PYTENSOR_FLAGS=f"base_compiledir={cache / 'pytensor'}",
               NUMBA_CACHE_DIR=str(cache / "numba"), PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "bayescheck.reports.cli", "check", str(tree / spec),
                           "--out", str(out), "--quiet"], cwd=tree, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary_path = out / "summary.json"
    if not summary_path.exists():
        raise SystemExit(f"check of {spec} in {tree} wrote no summary.json:\n{done.stderr}")
    summary = json.loads(summary_path.read_text())
    summary_path.unlink()
    means = {p["name"]: p.get("sampled_mean") for p in summary.get("parameters", [])}
    return {"cpu": cpu, "wall": wall, "verdict": summary["verdict"], "exit": done.returncode,
            "nuts_backend": summary.get("nuts_backend"), "sampled_means": means,
            "timings": summary.get("timings", {})}


def wait_for_warmups(cache: Path, timeout: float = 900.0) -> list[dict]:
    """Wait for the background Numba compiles a run started (inference.numba_warmup).

    Returns the index entries they wrote (their CPU seconds among them): that CPU is not in
    the ``check`` process's figures, since nothing waits for the child.
    """
    index = cache / "pytensor" / "bayescheck_nutpie" / "index"
    began = time.monotonic()
    while list(index.glob("*.warming")) and time.monotonic() - began < timeout:
        time.sleep(1.0)
    entries = []
    for path in sorted(index.glob("*")) if index.exists() else ():
        if "." not in path.name and path.stat().st_size:
            entries.append(json.loads(path.read_text()))
    return entries


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", default="main", help="commit to compare with")
    parser.add_argument("--examples", nargs="+", choices=sorted(EXAMPLES))
    parser.add_argument("--repeat", type=int, default=2, help="warm runs per side (0: none)")
    parser.add_argument("--cold", action="store_true", help="also one cold run per side")
    parser.add_argument("--quick", action="store_true", help="coin only, warm and cold")
    parser.add_argument("--backend", default="auto", choices=["auto", "c", "numba"])
    args = parser.parse_args(argv)
    examples = args.examples or (["coin"] if args.quick else ["coin", "die", "stream"])
    cold = args.cold or args.quick
    work = Path(tempfile.mkdtemp(prefix="bench_check_speed_"))
    sides = {"this": ROOT, "peer": peer_tree(args.peer, work / "peer")}
    warm = {side: work / f"warm-{side}" for side in sides}
    load_before = os.getloadavg()
    results: dict = {}
    warmups: dict = {}
    for name in examples:
        spec = EXAMPLES[name]
        for side, tree in sides.items() if args.repeat else ():  # fill the warm cache
            run_check(tree, spec, warm[side], work / f"out-{side}", args.backend)
            for entry in wait_for_warmups(warm[side]):
                warmups.setdefault(name, {}).setdefault(side, entry)
        states = [("warm", i) for i in range(args.repeat)] + ([("cold", 0)] if cold else [])
        for state, i in states:
            order = list(sides.items()) if i % 2 == 0 else list(sides.items())[::-1]
            for side, tree in order:
                cache = warm[side] if state == "warm" else work / f"cold-{name}-{side}"
                runs = results.setdefault(name, {}).setdefault(state, {}).setdefault(side, [])
                runs.append(run_check(tree, spec, cache, work / f"out-{side}", args.backend))
                wait_for_warmups(cache)  # so that no compile runs behind the next run
    load_after = os.getloadavg()
    print(f"\npeer {args.peer}; backend {args.backend}; load average before "
          f"{load_before[0]:.1f}, after {load_after[0]:.1f}; best of the runs\n")
    print("| example | cache | this CPU s | peer CPU s | CPU ratio | this wall s | "
          "peer wall s | wall ratio | verdicts | same sampled means |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---|")
    for name, per_state in results.items():
        for state, per_side in per_state.items():
            best = {s: min(r["cpu"] for r in runs) for s, runs in per_side.items()}
            wall = {s: min(r["wall"] for r in runs) for s, runs in per_side.items()}
            verdicts = sorted({r["verdict"] for runs in per_side.values() for r in runs})
            same = all(r["sampled_means"] == per_side["peer"][0]["sampled_means"]
                       for runs in per_side.values() for r in runs)
            print(f"| {name} | {state} | {best['this']:.1f} | {best['peer']:.1f} | "
                  f"{best['this'] / best['peer']:.2f} | {wall['this']:.1f} | "
                  f"{wall['peer']:.1f} | {wall['this'] / wall['peer']:.2f} | "
                  f"{', '.join(verdicts)} | {'yes' if same else 'NO'} |")
    for name, per_side in warmups.items():
        for side, entry in per_side.items():
            print(f"\n{name}, {side}: the first run's background Numba compile took "
                  f"{entry.get('cpu_seconds')} s of CPU (not in the table: nothing waits "
                  "for it)")
    print(json.dumps({"peer": args.peer, "backend": args.backend, "load_before": load_before,
                      "load_after": load_after, "results": results, "warmups": warmups}))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
