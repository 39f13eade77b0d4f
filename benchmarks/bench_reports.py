"""Report render time: seconds to draw each example's report.html from its run folder.

    .venv/bin/python benchmarks/bench_reports.py DEMO_DIR

DEMO_DIR is the output of ``bayescheck demo --out DEMO_DIR`` (the runs are not redone here:
rendering never samples). Each report is rendered 3 times in this process, after one warm-up
render that pays the imports (matplotlib, ArviZ); the median is reported, with the figure
count and the page size. One cold ``bayescheck report`` (a fresh process, imports included)
is timed as well. Prints a Markdown table.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    demo = Path(sys.argv[1])
    runs = sorted(p.parent for p in demo.glob("*/*/report.json"))
    if not runs:
        print(f"{demo}: no run folders (*/*/report.json); run 'bayescheck demo' first")
        return 2
    from reports.report import render_run

    render_run(runs[0])  # warm-up: imports and font cache
    print("| example | parameters | figures | report.html | render s (median of 3) |")
    print("|---|---|---|---|---|")
    for run in runs:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            html = render_run(run)
            times.append(time.perf_counter() - started)
        data = json.loads((run / "report.json").read_text())
        n = len((data["exact"] or data["estimates"])["rows"])
        print(f"| {run.parent.name}/{run.name} | {n} | {html.count('<img ')} | "
              f"{len(html.encode()) / 1e6:.2f} MB | {statistics.median(times):.2f} |",
              flush=True)
    exe = Path(sys.executable).with_name("bayescheck")
    started = time.perf_counter()
    subprocess.run([str(exe), "report", str(runs[0])], check=False, capture_output=True)
    print(f"\nCold `bayescheck report {runs[0].parent.name}/{runs[0].name}` (new process, "
          f"imports included): {time.perf_counter() - started:.2f} s. "
          f"Load average at the end: {os.getloadavg()[0]:.1f}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
