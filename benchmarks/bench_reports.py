"""Report render time: seconds to draw each example's report.html from its run folder.

    .venv/bin/python benchmarks/bench_reports.py RUNS [--repeat N] [--cold N] [--baseline CHECKOUT]
    .venv/bin/python benchmarks/bench_reports.py RUNS --quick --baseline CHECKOUT   # < 3 min idle
    .venv/bin/python benchmarks/bench_reports.py RUNS --target --baseline CHECKOUT  # issue 18

RUNS holds finished check folders as ``RUNS/family/name`` (``bayescheck demo --out RUNS``, or
``bayescheck check examples/F/N.toml --out RUNS/F/N``); nothing is sampled here.

**Warm table** (what ``check`` spends on the page, imports already paid): each report is
drawn in one warm process per checkout, after a warm-up render, N times, the two checkouts
taken turn about. The figure cache (``report_figures.json``) is removed before every render,
so every figure is drawn. The figure worker: this checkout's is a new interpreter, started
(when the checkout's rule starts one at all) and waited for before each render's clock
starts, its CPU while the report is drawn counted; a baseline that forks one at each
render has it counted too. ``check`` hands the posterior it has just written to the report;
a checkout whose ``render_run`` takes ``posteriors=`` gets it read into memory before the
clock starts, the way ``check`` has it (the older code reads ``posterior.nc`` itself).

**Cold table** (what ``bayescheck report RUN`` costs a user: a new process, imports,
reading, figures, page): ``python -m reports report RUN`` N times per example, turn about:
this checkout with its figure cache removed (``miss``: every figure drawn), the same right
after (``hit``: the run folder is unchanged, the figures come from the cache), and the
baseline with the cache removed (every figure drawn). Wall and CPU seconds (the process
and its figure worker).

**Check table** (``--check N``: the report step of ``check``, as ``check`` runs it): a new
process per example and checkout that first imports what a check has loaded before its
report (``bayescheck.reports.check``, xarray, the posteriors in memory as DataTrees), then times
``write_report_data`` and ``render_run(posteriors=...)`` on a copy of the run folder: the
first render of the process, so the drawing modules' and the template's imports count, as
they do in ``check`` (``timings["report"]`` of ``summary.json``, less ``report_data``, which
needs the fit: 0.02-0.04 s). N per example, turn about.

A CPU probe (10^7 squares in pure Python; about 1.2 s of wall and CPU on the idle build
machine) and the load average are printed at the start and the end: on a shared machine
wall seconds move by 2x within minutes, which is why the checkouts are taken turn about and
CPU is given.
``--quick``: five examples (1 to 26 rows), 2 warm renders and 1 cold command each.
``--target``: issue 18's target, every run of up to 26 table rows (24 parameters: naive
Bayes play_tennis has 22 parameter rows and 4 derived scores), 1 warm render, 1 cold
command and 1 check-style render each (under 3 minutes near idle).
``--workers N`` sets ``BAYESCHECK_REPORT_WORKERS`` for this checkout (default: its own
choice, two processes only when the 1-minute load average leaves a core free).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
CACHE = "report_figures.json"
QUICK = ["beta_bernoulli/coin", "dirichlet_categorical/die", "naive_bayes/cells_decision",
         "gaussian_mixture/blobs", "naive_bayes/play_tennis"]

WORKER = """
import inspect, json, os, sys, time, warnings
from pathlib import Path
warnings.filterwarnings("ignore")
from bayescheck.reports.report import render_run
import bayescheck.reports.figure_jobs as figure_jobs
in_memory = "posteriors" in inspect.signature(render_run).parameters
# A checkout whose figure worker is a separate interpreter: ``check`` starts it before
# sampling, so at the render it is ready. Here a new one is started and waited for before
# each render's clock starts, and its CPU while the report is drawn is counted (from
# /proc); the baseline's forked child is joined, its CPU in the children's times.
stop_worker = getattr(figure_jobs, "_stop_worker", lambda: None)
# A checkout whose check started the worker before sampling (before round 8) gets one
# started here; round 8 starts one only for matplotlib figures, inside render_run.
prestart = None if hasattr(figure_jobs, "needs_matplotlib") else \
    getattr(figure_jobs, "prestart", None)
def worker_cpu():
    worker = getattr(figure_jobs, "_worker", None)
    if worker is None or not worker.alive():
        return 0.0
    with open(f"/proc/{worker.process.pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
def cpu():
    t = os.times()  # this process and its joined children (the baseline's forked worker)
    return t.user + t.system + t.children_user + t.children_system + worker_cpu()
for line in sys.stdin:
    run = Path(line.strip())
    (run / "report_figures.json").unlink(missing_ok=True)
    kwargs = {}
    if in_memory:  # as check has them: the posteriors it has just written
        import xarray as xr
        kwargs["posteriors"] = {f.name: xr.load_datatree(f, engine="h5netcdf")
                                for f in sorted(run.glob("posterior*.nc"))}
    stop_worker()
    if prestart is not None:
        prestart(wait=120)
    started, cpu0 = time.perf_counter(), cpu()
    html = render_run(run, **kwargs)
    seconds, cpu1 = time.perf_counter() - started, cpu()
    stop_worker()
    print(json.dumps({"seconds": seconds, "cpu": cpu1 - cpu0,
                      "figures": html.count("<img "), "mb": len(html.encode()) / 1e6}),
          flush=True)
"""


FIRST = """
import inspect, json, os, shutil, sys, tempfile, time, warnings
from pathlib import Path
warnings.filterwarnings("ignore")
import bayescheck.reports.check  # what check has imported before its report (it imports bayescheck.reports.report)
import xarray as xr
from bayescheck.reports.report import REPORT_JSON, render_run, write_report_data
run = Path(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    out = Path(tmp) / run.name
    shutil.copytree(run, out, ignore=shutil.ignore_patterns("report_figures.json",
                                                           "report.html"))
    data = json.loads((out / REPORT_JSON).read_text())
    posteriors = {f.name: xr.load_datatree(f, engine="h5netcdf")
                  for f in sorted(out.glob("posterior*.nc"))}
    kwargs = {"posteriors": posteriors} \\
        if "posteriors" in inspect.signature(render_run).parameters else {}
    started, cpu0 = time.perf_counter(), time.process_time()
    write_report_data(out, data)
    render_run(out, **kwargs)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu0
print(json.dumps({"seconds": seconds, "cpu": cpu}))
"""


class Renderer:
    """A warm process that renders reports with the code of one checkout."""

    def __init__(self, checkout: Path, extra_env: dict | None = None):
        env = {**os.environ, "PYTHONPATH": str(checkout), "MPLBACKEND": "Agg",
               **(extra_env or {})}
        self.process = subprocess.Popen([sys.executable, "-c", WORKER], cwd=checkout, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)

    def render(self, run: Path) -> dict:
        """Render ``run``; return the seconds, the figure count and the page size."""
        self.process.stdin.write(f"{run}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the renderer died on {run}")
        return json.loads(line)

    def close(self) -> None:
        """End the process."""
        self.process.stdin.close()
        self.process.wait()


def _probe() -> tuple[float, float]:
    """Wall and CPU seconds of a fixed pure-Python loop: how fast the machine is now."""
    started, cpu = time.perf_counter(), time.process_time()
    sum(i * i for i in range(10**7))
    return time.perf_counter() - started, time.process_time() - cpu


def _state() -> str:
    wall, cpu = _probe()
    return f"load average {os.getloadavg()[0]:.1f}, CPU probe {wall:.2f} s wall / {cpu:.2f} s CPU"


STARTED = time.perf_counter()
#: Environment of this checkout's processes (``--workers``).
THIS_ENV: dict = {}


def _cold(checkout: Path, run: Path, *, keep_cache: bool) -> tuple[float, float]:
    """Wall and CPU seconds of ``python -m reports report RUN`` in a new process."""
    if not keep_cache:
        (run / CACHE).unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "reports", "report", str(run)], cwd=checkout,
                          env={**os.environ, "PYTHONPATH": str(checkout), "MPLBACKEND": "Agg",
                               **(THIS_ENV if checkout == HERE else {})},
                          check=False, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1, 3):
        raise RuntimeError(f"report {run} failed: {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _name(run: Path) -> str:
    return f"{run.parent.name}/{run.name}"


def _rows(run: Path) -> int:
    data = json.loads((run / "report.json").read_text())
    return len((data["exact"] or data["estimates"])["rows"])


def _med(values) -> float:
    return statistics.median(values)


def _warm_table(runs: list[Path], checkouts: dict[str, Path], repeat: int) -> None:
    renderers = {name: Renderer(path, THIS_ENV if name == "this" else None)
                 for name, path in checkouts.items()}
    for renderer in renderers.values():
        renderer.render(runs[0])  # warm-up: imports and font cache
    base = "baseline" in renderers
    print(f"\nWarm render, figures drawn (median of {repeat}, turn about; {_state()}):\n")
    # "figures": the embedded images (PNG or SVG data URIs)
    head = "| example | rows | figures | report.html | this: wall s | this: CPU s |"
    print(head + (" baseline: wall s | baseline: CPU s | speed-up wall | speed-up CPU |"
                  if base else ""))
    print("|---|---|---|---|---|---|" + ("---|---|---|---|" if base else ""))
    for run in runs:
        got = {name: [] for name in renderers}
        for _ in range(repeat):
            for name, renderer in renderers.items():
                got[name].append(renderer.render(run))
        last = got["this"][-1]
        wall = {n: _med(r["seconds"] for r in g) for n, g in got.items()}
        cpu = {n: _med(r["cpu"] for r in g) for n, g in got.items()}
        cells = [_name(run), str(_rows(run)), str(last["figures"]), f"{last['mb']:.2f} MB",
                 f"{wall['this']:.2f}", f"{cpu['this']:.2f}"]
        if base:
            cells += [f"{wall['baseline']:.2f}", f"{cpu['baseline']:.2f}",
                      f"{wall['baseline'] / wall['this']:.2f}x",
                      f"{cpu['baseline'] / cpu['this']:.2f}x"]
        print("| " + " | ".join(cells) + " |", flush=True)
    for renderer in renderers.values():
        renderer.close()


def _cold_table(runs: list[Path], checkouts: dict[str, Path], repeat: int) -> None:
    base = "baseline" in checkouts
    print(f"\nCold `python -m reports report RUN` (a new process; median of {repeat}, turn "
          f"about; {_state()}):\n")
    print("| example | this, cache hit: wall s / CPU s | this, figures drawn: wall s / CPU s |"
          + (" baseline, figures drawn: wall s / CPU s | speed-up drawn: wall, CPU |"
             if base else ""))
    print("|---|---|---|" + ("---|---|" if base else ""))
    for run in runs:
        got = {"miss": [], "hit": [], "baseline": []}
        for _ in range(repeat):
            got["miss"].append(_cold(checkouts["this"], run, keep_cache=False))
            got["hit"].append(_cold(checkouts["this"], run, keep_cache=True))
            if base:
                got["baseline"].append(_cold(checkouts["baseline"], run, keep_cache=False))
        med = {k: (_med(w for w, _ in v), _med(c for _, c in v)) for k, v in got.items() if v}
        cells = [_name(run)] + [f"{med[k][0]:.2f} / {med[k][1]:.2f}" for k in ("hit", "miss")]
        if base:
            cells += [f"{med['baseline'][0]:.2f} / {med['baseline'][1]:.2f}",
                      f"{med['baseline'][0] / med['miss'][0]:.2f}x, "
                      f"{med['baseline'][1] / med['miss'][1]:.2f}x"]
        print("| " + " | ".join(cells) + " |", flush=True)


def _first(checkout: Path, run: Path) -> tuple[float, float]:
    """Wall and CPU seconds of check's report step, the first render of a new process."""
    done = subprocess.run([sys.executable, "-c", FIRST, str(run)], cwd=checkout,
                          env={**os.environ, "PYTHONPATH": str(checkout), "MPLBACKEND": "Agg",
                               **(THIS_ENV if checkout == HERE else {})},
                          check=False, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"check-style render of {run} failed: {done.stderr[-2000:]}")
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return got["seconds"], got["cpu"]


def _check_table(runs: list[Path], checkouts: dict[str, Path], repeat: int) -> None:
    base = "baseline" in checkouts
    print(f"\nReport step of `check` (write report.json, render with the posteriors in memory; "
          f"the first render of a new process; median of {repeat}, turn about; {_state()}):\n")
    print("| example | rows | this: wall s / CPU s |"
          + (" baseline: wall s / CPU s | speed-up: wall, CPU |" if base else ""))
    print("|---|---|---|" + ("---|---|" if base else ""))
    for run in runs:
        got = {name: [] for name in checkouts}
        for _ in range(repeat):
            for name, checkout in checkouts.items():
                got[name].append(_first(checkout, run))
        med = {k: (_med(w for w, _ in v), _med(c for _, c in v)) for k, v in got.items()}
        cells = [_name(run), str(_rows(run)), f"{med['this'][0]:.2f} / {med['this'][1]:.2f}"]
        if base:
            cells += [f"{med['baseline'][0]:.2f} / {med['baseline'][1]:.2f}",
                      f"{med['baseline'][0] / med['this'][0]:.2f}x, "
                      f"{med['baseline'][1] / med['this'][1]:.2f}x"]
        print("| " + " | ".join(cells) + " |", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="warm renders per example")
    parser.add_argument("--cold", type=int, default=0, metavar="N",
                        help="also time N cold 'report' commands per example and checkout")
    parser.add_argument("--check", type=int, default=0, metavar="N",
                        help="also time check's report step (first render of a new process "
                             "with the posteriors in memory) N times per example and checkout")
    parser.add_argument("--baseline", type=Path, help="another checkout, taken turn about")
    parser.add_argument("--only", nargs="*", default=[],
                        help="examples to time (family/name), default every run")
    parser.add_argument("--max-rows", type=int, default=None,
                        help="skip runs whose cross-check table has more rows")
    parser.add_argument("--workers", choices=("1", "2"), default=None,
                        help="BAYESCHECK_REPORT_WORKERS for this checkout (default: unset)")
    parser.add_argument("--quick", action="store_true",
                        help=f"{', '.join(QUICK)}; --repeat 2 --cold 1")
    parser.add_argument("--target", action="store_true",
                        help="issue 18's target: every run of up to 26 rows; --repeat 1 "
                             "--cold 1 --check 1")
    args = parser.parse_args()
    if args.target:
        args.repeat, args.cold, args.check = 1, max(args.cold, 1), max(args.check, 1)
        args.max_rows = args.max_rows or 26
    if args.quick:
        args.only, args.repeat, args.cold = args.only or QUICK, 2, max(args.cold, 1)
    runs = sorted(p.parent.resolve() for p in args.runs.glob("*/*/report.json"))
    if args.only:
        runs = [r for r in runs if _name(r) in args.only]
    skipped = [r for r in runs if args.max_rows is not None and _rows(r) > args.max_rows]
    runs = [r for r in runs if r not in skipped]
    if not runs:
        print(f"{args.runs}: no run folders (*/*/report.json); run 'bayescheck demo' first")
        return 2
    if args.workers:
        THIS_ENV["BAYESCHECK_REPORT_WORKERS"] = args.workers
    checkouts = {"this": HERE}
    if args.baseline:
        checkouts["baseline"] = args.baseline.resolve()
    print(f"Start: {_state()}; {os.cpu_count()} cores; this checkout's figure processes: "
          f"{args.workers or 'its own choice'}.")
    if skipped:
        print("Skipped (more than --max-rows rows): "
              + ", ".join(f"{_name(r)} ({_rows(r)})" for r in skipped))
    if args.repeat:
        _warm_table(runs, checkouts, args.repeat)
    if args.cold:
        _cold_table(runs, checkouts, args.cold)
    if args.check:
        _check_table(runs, checkouts, args.check)
    print(f"\nEnd: {_state()}; {time.perf_counter() - STARTED:.0f} s in all.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
