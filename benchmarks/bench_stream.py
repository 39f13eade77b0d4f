"""The stream at disk speed: ``bayescheck fit`` over Parquet batches against its floor, in one run.

    .venv/bin/python benchmarks/bench_stream.py [--rows 1e6] [--files 100] [--repeat 3]
        [--data DIR] [--csv] [--no-sklearn] [--sklearn-max-rows N] [--methods M ...]
        [--base REV | --base-tree DIR]
    .venv/bin/python benchmarks/bench_stream.py --quick   # 1e6 rows: floor, REV, fit (< 3 min)
    git archive main | tar -x -C /tmp/main-r8   # then, main beside this tree:
    .venv/bin/python benchmarks/bench_stream.py --quick --base-tree /tmp/main-r8

Data: n x 50 Gaussian features and a response in ``--files`` Parquet files (or CSV with
``--csv``), written once to ``--data`` (default ``bench-output/stream-data``) and reused.
Each method runs in a fresh interpreter, the methods alternating within each of ``--repeat``
rounds (median kept), so all see the same machine:

- ``pyarrow read + X'X``: read every file with pyarrow (the columns used), accumulate Z'Z of
  ``Z = [X | y]``: the floor of any exact method that reads the files (numpy, pyarrow and
  threadpoolctl imported; scipy only for the QR and BayesianRidge).
- ``pyarrow read + QR``: the same reading, and the per-batch statistic bayescheck keeps (one
  ``regression_stats_joint`` root per file, Householder QR, merged by TSQR): the floor of
  bayescheck's arithmetic.
- ``bayescheck fit``: the command users run (``python -m reports.cli fit SPEC --out DIR
  --quiet``): reading, vectorised validation, XXH3 fingerprints, the trajectory, checkpoints
  on a time interval, posterior.json; imports included.
- ``BayesianRidge``: scikit-learn, the data read with pyarrow into memory first (reading
  included), ``fit_intercept=False``.

- ``bayescheck fit, BAYESCHECK_READ_AHEAD=0``: the same command reading and computing in one
  thread, one batch after the other (the stream before read-ahead threads).
- ``bayescheck fit at REV``: the same command from another commit (``--base REV``, default
  02b37bf, main before round 7), unpacked with ``git archive`` into
  ``bench-output/base-REV``: before and after in the same run.

``--quick`` is ``--rows 1e6 --repeat 3 --no-sklearn --methods fit base``: the floor, the
base commit and this tree's fit, alternating (about 1.5 minutes on the idle machine, data
written on the first run).

Children cache compiled modules in ``bench-output/pycache`` (``PYTHONPYCACHEPREFIX``; an
untimed warm-up fit fills it), as an installed package has them.

"command" is the parent's clock around the child, from starting the interpreter to its
exit (what a user waits for), with that child's CPU (user + system) and peak RSS from
``wait4``. The ``bayescheck fit`` methods run the command itself, with nothing imported
before it (until round 11 they ran inside the floors' script, which first imported scipy
and threadpoolctl: 0.3-0.4 s the command does not spend). "stream" is the stream alone:
the floors' loop over the files, after their imports; for ``bayescheck fit`` its own clock,
``posterior.json``'s ``seconds``, from listing the files to the posterior. "start-up and
exit" is the difference: the interpreter, the imports, the spec, writing the result. CPU time
is given beside wall time, as it is the steadier figure when other jobs share the cores.

BLAS runs on one thread in every child (``bayescheck fit`` limits it itself on big streams;
the others through threadpoolctl), as on a shared 2-core machine threads only spin. Peak
memory is the child's peak RSS (whole process). Prints a markdown table and writes it to
``bench-output/stream.md``; ``--rows`` several values (``--rows 2e5 1e6``) show memory flat
in n.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
D = 50
#: Where the children cache their compiled modules (outside the source tree).
PYCACHE = ROOT / "bench-output" / "pycache"

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
started = time.perf_counter()
method, folder, pattern = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
import numpy as np
from threadpoolctl import threadpool_limits
# Every BLAS the method uses is loaded before the limit is set (a library loaded inside
# threadpool_limits is not limited): scipy's, and scikit-learn's through scipy.
sys.path.insert(0, sys.argv[4] if method == "qr" else ".")  # "." is the tree (cwd)
if method in ("qr", "bayesian_ridge"):
    import scipy.linalg
if method == "qr":
    from bayescheck.inference.engines.linear_gaussian import merge_roots, regression_stats_joint
if method == "bayesian_ridge":
    from sklearn.linear_model import BayesianRidge
import pyarrow.csv, pyarrow.parquet  # start-up, as the fit imports them before streaming
files = sorted(folder.glob(pattern), key=lambda p: int(''.join(c for c in p.stem if c.isdigit())))
columns = [f"x{j}" for j in range(D_FEATURES)] + ["y"]

def read(path):
    import pyarrow as pa
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq
        table = pq.read_table(path, columns=columns)
    else:
        import pyarrow.csv as pcsv
        table = pcsv.read_csv(path)
    out = np.empty((table.num_rows, len(columns)), order="F")
    for j, c in enumerate(columns):
        out[:, j] = table.column(c).to_numpy()
    return out

result = None
stream = None
ready = time.perf_counter()
with threadpool_limits(1, user_api="blas"):
    if method == "xtx":
        acc = 0.0
        for f in files:
            Z = read(f)
            acc = acc + Z.T @ Z
        result = float(acc[-1, -1])
    elif method == "qr":
        root = None
        for f in files:
            r = regression_stats_joint(read(f), overwrite=True).root
            root = r if root is None else merge_roots(root, r)
        result = float(root[-1, -1] ** 2)
    elif method == "bayesian_ridge":
        Z = np.concatenate([read(f) for f in files])
        model = BayesianRidge(fit_intercept=False).fit(Z[:, :-1], Z[:, -1])
        result = float(model.coef_[0])
stream = time.perf_counter() - ready
seconds = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": seconds, "stream": stream, "cpu": usage.ru_utime + usage.ru_stime,
                  "rss_mb": usage.ru_maxrss / 1024, "result": result}))
""".replace("D_FEATURES", str(D))


def make_data(folder: Path, rows: int, files: int, csv: bool) -> Path:
    """Write the batches (once) and a spec; returns the spec path."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    suffix = "csv" if csv else "parquet"
    data = folder / f"{rows}_{files}_{suffix}"
    spec = folder / f"{rows}_{files}_{suffix}.toml"
    if not (data / f"part{files - 1}.{suffix}").exists():
        data.mkdir(exist_ok=True)
        rng = np.random.default_rng(0)
        theta = rng.normal(size=D)
        per = rows // files
        for i in range(files):
            X = rng.normal(size=(per, D))
            y = X @ theta + rng.normal(size=per)
            table = pa.table({**{f"x{j}": X[:, j] for j in range(D)}, "y": y})
            if csv:
                pcsv.write_csv(table, data / f"part{i}.{suffix}")
            else:
                pq.write_table(table, data / f"part{i}.{suffix}")
    spec.write_text(f'model = "linear_regression"\n[data]\npath = "{data.name}/*.{suffix}"\n'
                    f'target = "y"\n[prior]\nmean = 0.0\ncov = 10.0\n[likelihood]\n'
                    f'noise_sd = 1.0\n')
    return spec


#: ``bayescheck fit`` as users run it (read-ahead on its default) and with the read-ahead
#: switched off (``BAYESCHECK_READ_AHEAD=0``: reading, then arithmetic, in one thread).
FIT_AHEAD = {"fit": None, "fit_sequential": "0", "base": None}


def base_tree(rev: str) -> Path:
    """The source tree of commit ``rev``, unpacked once into ``bench-output/base-REV``."""
    tree = ROOT / "bench-output" / f"base-{rev}"
    if not (tree / "reports" / "cli.py").exists():
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def _timed(command: list[str], env: dict, cwd: Path) -> tuple[float, float, float, str]:
    """Run ``command``; its wall seconds, CPU seconds and peak RSS (MB, this child's own, from
    ``wait4``), and its stdout."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        wall = time.perf_counter()
        child = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - wall
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        if child.returncode != 0:
            raise RuntimeError(f"{command} failed:\n{err.read().decode()}")
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read().decode()


def run(method: str, spec: Path, out: Path, base: Path | None = None) -> dict:
    """One method in a fresh interpreter: seconds (around it, and of its stream), CPU, RSS.

    The ``bayescheck fit`` methods run the command itself (``python -m reports.cli fit SPEC
    --out DIR --quiet``), nothing imported before it; their stream is the fit's own clock
    (``posterior.json``'s ``seconds``: from listing the files to the posterior). The floors
    run :data:`CHILD`, which times its loop over the files.
    """
    data = spec.with_suffix("")
    pattern = "*.csv" if spec.stem.endswith("csv") else "*.parquet"
    tree = base if method == "base" else ROOT
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("BAYESCHECK_READ_AHEAD", None)
    # Compiled modules are cached, as an installed package has them (pip compiles on
    # install): without, every child compiled bayescheck's ~75 modules from source.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if FIT_AHEAD.get(method) is not None:
        env["BAYESCHECK_READ_AHEAD"] = FIT_AHEAD[method]
    if method in FIT_AHEAD:
        wall, cpu, rss, _ = _timed([sys.executable, "-m", "bayescheck.reports.cli", "fit", str(spec),
                                    "--out", str(out), "--quiet"], env, tree)
        posterior = json.loads((out / "posterior.json").read_text())
        return {"command": wall, "command_cpu": cpu, "rss_mb": rss,
                "stream": posterior["seconds"], "result": posterior["log_evidence"]}
    # as `bayescheck fit` sets it for itself: OpenBLAS's idle threads sleep instead of spinning
    env.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    wall, cpu, rss, stdout = _timed([sys.executable, "-c", CHILD, method, str(data), pattern,
                                     str(ROOT)], env, tree)
    record = json.loads(stdout.strip().splitlines()[-1])
    return {**record, "command": wall, "command_cpu": cpu, "rss_mb": rss}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, nargs="+", default=[1e6])
    parser.add_argument("--files", type=int, default=100,
                        help="files per 1e6 rows (10,000 rows each by default)")
    parser.add_argument("--repeat", type=int, default=None, help="rounds (default 3)")
    parser.add_argument("--data", type=Path, default=ROOT / "bench-output" / "stream-data")
    parser.add_argument("--csv", action="store_true")
    parser.add_argument("--no-sklearn", action="store_true")
    parser.add_argument("--sklearn-max-rows", type=float, default=float("inf"),
                        help="skip BayesianRidge above this many rows (it holds the whole "
                             "matrix in memory: about 13 GB at 1e7 x 50)")
    parser.add_argument("--methods", nargs="+",
                        choices=["xtx", "qr", "fit_sequential", "base", "fit", "bayesian_ridge"],
                        help="run only these (the floor, xtx, is always run)")
    parser.add_argument("--base", default="02b37bf",
                        help="commit whose bayescheck fit runs as 'base' (default 02b37bf)")
    parser.add_argument("--base-tree", type=Path, default=None,
                        help="run 'base' from this unpacked source tree instead (e.g. "
                             "`git archive main | tar -x -C /tmp/main-r8`)")
    parser.add_argument("--quick", action="store_true",
                        help="--rows 1e6 --no-sklearn --methods fit base")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.no_sklearn = [1e6], True
        args.methods = ["fit", "base"]
    args.repeat = args.repeat or 3

    methods = (["xtx", "qr", "fit_sequential", "base", "fit"]
               + ([] if args.no_sklearn else ["bayesian_ridge"]))
    if args.methods:
        methods = [m for m in methods if m == "xtx" or m in args.methods]
    names = {"xtx": "pyarrow read + X'X", "qr": "pyarrow read + per-batch root (TSQR)",
             "fit_sequential": "bayescheck fit, BAYESCHECK_READ_AHEAD=0",
             "base": f"bayescheck fit at {args.base}",
             "fit": "**bayescheck fit** (read-ahead 2, default)",
             "bayesian_ridge": "pyarrow read + BayesianRidge"}
    base = None
    if "base" in methods:
        base = args.base_tree.resolve() if args.base_tree else base_tree(args.base)
        names["base"] = f"bayescheck fit at {args.base_tree or args.base}"
    lines = [f"| method | rows | files | command s (median of {args.repeat}) | command rows/s | "
             f"command CPU s | CPU / read + X'X | start-up and exit s | stream s | "
             f"stream rows/s | stream / read + X'X | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    loads = []
    for rows in map(int, args.rows):
        files = max(1, round(args.files * rows / 1e6))
        spec = make_data(args.data, rows, files, args.csv)
        used = [m for m in methods if m != "bayesian_ridge" or rows <= args.sklearn_max_rows]
        for warm in ("fit", "base") if base else ("fit",):  # compiles the modules once
            with tempfile.TemporaryDirectory() as tmp:
                run(warm, spec, Path(tmp) / "out", base)
        commands = {m: [] for m in methods}
        streams = {m: [] for m in methods}
        cpus = {m: [] for m in methods}
        rss = {m: [] for m in methods}
        loads.append(os.getloadavg()[0])
        for _ in range(args.repeat):
            for m in used:
                with tempfile.TemporaryDirectory() as tmp:
                    rec = run(m, spec, Path(tmp) / "out", base)
                commands[m].append(rec["command"])
                streams[m].append(rec["stream"])
                cpus[m].append(rec["command_cpu"])
                rss[m].append(rec["rss_mb"])
            loads.append(os.getloadavg()[0])
        floor = statistics.median(streams["xtx"])
        cpu_floor = statistics.median(cpus["xtx"])
        for m in used:
            c = statistics.median(cpus[m])
            st, cm = statistics.median(streams[m]), statistics.median(commands[m])
            lines.append(f"| {names[m]} | {rows:,} | {files} | {cm:.3f} | {rows / cm:,.0f} | "
                         f"{c:.3f} | {c / cpu_floor:.2f} | {cm - st:.3f} | "
                         f"{st:.3f} | {rows / st:,.0f} | {st / floor:.2f} | "
                         f"{max(rss[m]):.0f} |")
    table = "\n".join(lines) + (f"\n\nload average (1 min) before and after each round: "
                                f"{', '.join(f'{x:.1f}' for x in loads)}; "
                                f"{'CSV' if args.csv else 'Parquet'} batches\n")
    print(table)
    out = ROOT / "bench-output"
    out.mkdir(exist_ok=True)
    (out / ("stream_csv.md" if args.csv else "stream.md")).write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
