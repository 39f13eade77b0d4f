"""Report render time: seconds to draw each example's report.html from its run folder.

    .venv/bin/python benchmarks/bench_reports.py DEMO_DIR [--repeat N] [--baseline CHECKOUT]

DEMO_DIR is the output of ``bayescheck demo --out DEMO_DIR`` (the runs are not redone here:
rendering never samples). Each report is rendered N times (default 3) in one warm process,
after a warm-up render that pays the imports (matplotlib, ArviZ) and the font cache; the
median and the fastest render are reported, with the figure count and the page size.

``--baseline CHECKOUT`` renders the same reports with the code of another checkout of the
project (for example ``git worktree add /tmp/base HEAD~4``) in a second warm process,
alternately with this one, so that both see the same machine: on a shared machine the
speed of one process varies by up to 2x within minutes, which sequential runs cannot tell
from a change of the code; a CPU probe (a fixed pure-Python loop) at the start and the end
says how fast the machine was. One cold ``bayescheck report`` (a fresh process, imports
included) is timed as well. Prints a Markdown table.

``--cold N`` adds a second table: ``python -m reports report RUN`` in a fresh process
(imports, reading, figures, page: what a user waits for), N times per example and
checkout, alternately, with its wall and CPU seconds (the process and its forked figure
worker).
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

WORKER = """
import json, sys, time, warnings
warnings.filterwarnings("ignore")
from reports.report import render_run
import os
def cpu():
    t = os.times()  # this process and its joined children (forked figure workers)
    return t.user + t.system + t.children_user + t.children_system
for line in sys.stdin:
    started, cpu0 = time.perf_counter(), cpu()
    html = render_run(line.strip())
    print(json.dumps({"seconds": time.perf_counter() - started, "cpu": cpu() - cpu0,
                      "figures": html.count("<img "), "mb": len(html.encode()) / 1e6}),
          flush=True)
"""


class Renderer:
    """A warm process that renders reports with the code of one checkout."""

    def __init__(self, checkout: Path):
        env = {**os.environ, "PYTHONPATH": str(checkout)}
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


def _probe() -> float:
    """Seconds for a fixed pure-Python loop: how fast the machine is right now."""
    started = time.perf_counter()
    sum(i * i for i in range(10**7))
    return time.perf_counter() - started


def _cold(checkout: Path, run: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``python -m reports report RUN`` in a new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "reports", "report", str(run)], cwd=checkout,
                   env={**os.environ, "PYTHONPATH": str(checkout)}, check=False,
                   capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cold_table(runs: list[Path], checkouts: dict[str, Path], repeat: int) -> None:
    """Median wall and CPU of cold ``bayescheck report`` per example and checkout."""
    names = list(checkouts)
    print(f"\nCold `python -m reports report RUN` (new process; median of {repeat}, "
          f"alternately; load average {os.getloadavg()[0]:.1f}, CPU probe {_probe():.2f} s):\n")
    cols = " | ".join(f"{n}: wall s | {n}: CPU s" for n in names)
    ratios = " speed-up (CPU) | speed-up (wall) |" if len(names) > 1 else ""
    print(f"| example | {cols} |{ratios}")
    print("|---|" + "---|---|" * len(names) + ("---|---|" if len(names) > 1 else ""))
    for run in runs:
        times = {n: [] for n in names}
        for _ in range(repeat):
            for n in names:
                times[n].append(_cold(checkouts[n], run))
        med = {n: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
               for n, t in times.items()}
        cells = [f"{run.parent.name}/{run.name}"]
        cells += [f"{med[n][0]:.2f} | {med[n][1]:.2f}" for n in names]
        if len(names) > 1:
            cells += [f"{med[names[1]][1] / med[names[0]][1]:.2f}x",
                      f"{med[names[1]][0] / med[names[0]][0]:.2f}x"]
        print("| " + " | ".join(cells) + " |", flush=True)


def _times(renders: list[dict]) -> str:
    seconds = [r["seconds"] for r in renders]
    cpu = statistics.median(r["cpu"] for r in renders)
    return f"{statistics.median(seconds):.2f} | {min(seconds):.2f} | {cpu:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("demo", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--cold", type=int, default=0, metavar="N",
                        help="also time N cold 'report' commands per example and checkout")
    parser.add_argument("--only", nargs="*", default=[],
                        help="examples to time (family/name), default every run")
    args = parser.parse_args()
    runs = sorted(p.parent.resolve() for p in args.demo.glob("*/*/report.json"))
    if args.only:
        runs = [r for r in runs if f"{r.parent.name}/{r.name}" in args.only]
    if not runs:
        print(f"{args.demo}: no run folders (*/*/report.json); run 'bayescheck demo' first")
        return 2
    renderers = {"this": Renderer(HERE)}
    if args.baseline:
        renderers["baseline"] = Renderer(args.baseline.resolve())
    for renderer in renderers.values():
        renderer.render(runs[0])  # warm-up: imports and font cache
    header = f"s (median of {args.repeat}) | s (fastest) | CPU s (median)"
    extra = (f" | baseline {header.replace(' | ', ' | baseline ')} | speed-up (median wall)"
             if args.baseline else "")
    print(f"Load average at the start: {os.getloadavg()[0]:.1f}; CPU probe (10^7 squares in "
          f"pure Python): {_probe():.2f} s.\n")
    print(f"| example | parameters | figures | report.html | {header}{extra} |")
    print("|---|---|---|---|---|---|---|" + ("---|---|---|---|" if args.baseline else ""))
    for run in runs:
        renders = {name: [] for name in renderers}
        for _ in range(args.repeat):
            for name, renderer in renderers.items():
                renders[name].append(renderer.render(run))
        data = json.loads((run / "report.json").read_text())
        n = len((data["exact"] or data["estimates"])["rows"])
        last = renders["this"][-1]
        cells = [f"{run.parent.name}/{run.name}", str(n), str(last["figures"]),
                 f"{last['mb']:.2f} MB", _times(renders["this"])]
        if args.baseline:
            cells.append(_times(renders["baseline"]))
            ratio = (statistics.median(r["seconds"] for r in renders["baseline"])
                     / statistics.median(r["seconds"] for r in renders["this"]))
            cells.append(f"{ratio:.2f}x")
        print("| " + " | ".join(cells) + " |", flush=True)
    for renderer in renderers.values():
        renderer.close()
    if args.cold:
        checkouts = {"this": HERE}
        if args.baseline:
            checkouts["baseline"] = args.baseline.resolve()
        _cold_table(runs, checkouts, args.cold)
    exe = Path(sys.executable).with_name("bayescheck")
    started = time.perf_counter()
    subprocess.run([str(exe), "report", str(runs[0])], check=False, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(HERE)})
    print(f"\nCold `bayescheck report {runs[0].parent.name}/{runs[0].name}` (new process, "
          f"imports included): {time.perf_counter() - started:.2f} s. "
          f"Load average at the end: {os.getloadavg()[0]:.1f}; CPU probe: {_probe():.2f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
