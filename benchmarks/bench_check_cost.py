"""CPU seconds of each phase of ``bayescheck check``, this tree against a peer commit.

    MPLBACKEND=Agg PYTHONPATH=. .venv/bin/python benchmarks/bench_check_cost.py \
        [--peer main] [--examples coin die stream] [--repeat 1]

Issue 18's question: what a check costs besides compiling and sampling NUTS. Each run is a
fresh process running ``reports.cli.main(["check", SPEC, "--out", DIR, "--quiet"])`` with
the code of one tree; a small driver wraps the functions ``reports.check`` calls for each
phase and takes the process's CPU time (every thread) around them, and for NUTS also the
CPU of the processes it waited for (g++). The total is the child's user + system time
measured by this script (``resource.RUSAGE_CHILDREN``, what ``/usr/bin/time`` reports:
interpreter start-up, imports, every phase, g++ and any figure worker), and "start-up,
imports, rest" is the total less the phases. "non-NUTS" is the total less the NUTS phase.

The peer is ``git archive PEER`` unpacked into a temporary folder, run with the same
interpreter. Each side has its own PyTensor compile directory and Numba cache (or both the
one given with ``--cache``, which is kept), filled by one uncounted run per side and
example; then the sides alternate within each repetition (so a shared
machine's load falls on both alike) and the table keeps each phase's best run (the run with
the least total CPU). Every number of ``summary.json`` (the timings and the attempts'
seconds aside) and ``posterior.json`` must be the same on both sides: the table says so.

Default: coin, die and the known-noise regression, one counted run per side (12 checks):
about 2.5 minutes on an idle 2-core machine with a warm ``--cache`` (estimated from the CPU
figures), plus the cold compiles (about 2 minutes more) without one. ``--repeat 3`` is best
of 3 (24 checks): about 5 minutes idle, 9 minutes at load 3-4 (measured).
Prints a markdown table and one JSON line.
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
from pathlib import Path

from bench_check_speed import EXAMPLES as ALL_EXAMPLES
from bench_check_speed import peer_tree  # the same git archive of the peer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = {name: ALL_EXAMPLES[name] for name in ("coin", "die", "stream", "unknown_noise")}
#: Phase -> the functions of ``reports.check`` whose CPU it is (names both sides have).
PHASES = {
    "analytic fit": ("fit",),
    "NUTS (compile + sample)": ("sample_nuts",),
    "comparison": ("compare_idata", "compare_estimates_idata"),
    "posterior predictive": ("add_posterior_predictive",),
    "writing files": ("write_netcdf", "_write_rows_csv"),
    "report": ("write_report_data", "render_run"),
}

DRIVER = """
import json, resource, sys, time
def cpu():
    return time.process_time()
def children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
import bayescheck.reports.cli as cli
import bayescheck.reports.check as rc
phases = json.loads(sys.argv[3])
spent = {p: 0.0 for p in phases}
def timed(phase, f):
    def wrapper(*args, **kwargs):
        t, c = cpu(), children()
        try:
            return f(*args, **kwargs)
        finally:
            spent[phase] += cpu() - t + (children() - c)
    return wrapper
for phase, names in phases.items():
    for name in names:
        if hasattr(rc, name):
            setattr(rc, name, timed(phase, getattr(rc, name)))
code = cli.main(['check', sys.argv[1], '--out', sys.argv[2], '--quiet'])
print('REPORT', json.dumps({'exit': code, 'phases': spent}))
"""


def _without(value, tree: str, keys=("seconds", "timings", "spec")):
    """``value`` without times and the spec's path, the tree's folder named ``<tree>``."""
    if isinstance(value, dict):
        return {k: _without(v, tree, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, tree, keys) for v in value]
    return value.replace(tree, "<tree>") if isinstance(value, str) else value


def _numbers(out: Path, tree: Path) -> dict:
    """The run's numbers that must not depend on the tree: summary.json and posterior.json."""
    return {name: _without(json.loads((out / name).read_text()), str(tree))
            for name in ("summary.json", "posterior.json")}


def run_check(tree: Path, spec: str, cache: Path, out: Path) -> dict:
    """One ``check`` of ``spec`` with the code of ``tree`` in a fresh process: CPU by phase."""
    if out.exists():
        shutil.rmtree(out)
    env = dict(os.environ, MPLBACKEND="Agg", BAYESCHECK_NUMBA_REUSE="0",  # the C path, as peers
               PYTENSOR_FLAGS=f"base_compiledir={cache / 'pytensor'}",
               NUMBA_CACHE_DIR=str(cache / "numba"), PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", DRIVER, str(tree / spec), str(out),
                           json.dumps(PHASES)], cwd=tree, env=env, capture_output=True,
                          text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = [x for x in done.stdout.splitlines() if x.startswith("REPORT ")]
    if not lines:
        raise SystemExit(f"check of {spec} in {tree} failed:\n{done.stderr[-3000:]}")
    report = json.loads(lines[-1].removeprefix("REPORT "))
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    phases = report["phases"]
    phases["start-up, imports, rest"] = total - sum(phases.values())
    summary = json.loads((out / "summary.json").read_text())
    return {"total": total, "phases": phases, "exit": report["exit"],
            "nuts_backend": summary.get("nuts_backend"), "numbers": _numbers(out, tree),
            "wall_timings": summary.get("timings", {})}


def differences(a, b, where: str = "") -> list[str]:
    """Where two parsed JSON documents differ: one line per number or value."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [line for k in sorted(set(a) | set(b))
                for line in differences(a.get(k), b.get(k), f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [line for i, (x, y) in enumerate(zip(a, b, strict=True))
                for line in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", default="main", help="commit to compare with")
    parser.add_argument("--examples", nargs="+", choices=sorted(EXAMPLES),
                        default=["coin", "die", "stream"])
    parser.add_argument("--repeat", type=int, default=1, help="counted runs per side")
    parser.add_argument("--cache", type=Path,
                        help="one PyTensor compile directory and Numba cache for both sides, "
                             "kept (default: one per side, in a temporary folder)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench_check_cost_"))
    sides = {"this": ROOT, "peer": peer_tree(args.peer, work / "peer")}
    caches = {side: args.cache or work / f"cache-{side}" for side in sides}
    load_before = os.getloadavg()
    results: dict = {}
    for name in args.examples:
        spec = EXAMPLES[name]
        for side, tree in sides.items():  # fill each side's warm caches, uncounted
            run_check(tree, spec, caches[side], work / f"out-{side}")
        for i in range(args.repeat):
            order = list(sides.items()) if i % 2 == 0 else list(sides.items())[::-1]
            for side, tree in order:
                results.setdefault(name, {}).setdefault(side, []).append(
                    run_check(tree, spec, caches[side], work / f"out-{side}"))
    load_after = os.getloadavg()
    print(f"\npeer {args.peer}; load average before {load_before[0]:.1f}, after "
          f"{load_after[0]:.1f}; CPU seconds, each side's run with the least total CPU "
          f"of {args.repeat}\n")
    names = [*PHASES, "start-up, imports, rest"]
    print("| example | phase | this | peer | this - peer |")
    print("|---|---|---:|---:|---:|")
    summary = {}
    for name, per_side in results.items():
        best = {s: min(runs, key=lambda r: r["total"]) for s, runs in per_side.items()}
        reference = per_side["peer"][0]["numbers"]
        diff = [line for runs in per_side.values() for r in runs
                for line in differences(reference, r["numbers"])]
        same = not diff
        rows = [(p, best["this"]["phases"][p], best["peer"]["phases"][p]) for p in names]
        nuts = "NUTS (compile + sample)"
        rows.append(("**non-NUTS** (total - NUTS)",
                     best["this"]["total"] - best["this"]["phases"][nuts],
                     best["peer"]["total"] - best["peer"]["phases"][nuts]))
        rows.append(("**total**", best["this"]["total"], best["peer"]["total"]))
        for phase, this, peer in rows:
            print(f"| {name} | {phase} | {this:.2f} | {peer:.2f} | {this - peer:+.2f} |")
        backends = {s: sorted({r["nuts_backend"] for r in runs}) for s, runs in per_side.items()}
        print(f"| {name} | same numbers (summary.json, posterior.json) | "
              f"{'yes' if same else 'NO'} | | |")
        print(f"| {name} | NUTS backend | {', '.join(backends['this'])} | "
              f"{', '.join(backends['peer'])} | |")
        for line in diff[:10]:
            print(f"    differs: {line}", file=sys.stderr)
        summary[name] = {"same_numbers": same, "differences": diff[:50],
                         "best": {s: {k: v for k, v in b.items() if k != "numbers"}
                                  for s, b in best.items()}}
    print(json.dumps({"peer": args.peer, "load_before": load_before,
                      "load_after": load_after, "repeat": args.repeat, "results": summary}))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
