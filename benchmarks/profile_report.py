"""CPU time of each figure of one report, rendered warm (no import cost), by title.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/profile_report.py RUN_DIR`` on the --out
folder of a finished ``bayescheck check``. It renders RUN_DIR/report.html three times in one
process (the figure cache, report_figures.json, removed before each), drawing the figures
one after another in this process, and prints the CPU seconds of the third render and of
each of its figures (by drawing function). See REPORTS.md, "Where the time goes".
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main(run_dir: str) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import bayescheck.reports.figure_jobs as figure_jobs
    import bayescheck.reports.report as report

    os.environ["BAYESCHECK_REPORT_WORKERS"] = "1"  # one process, so each figure is timed
    original = figure_jobs.draw_one
    times: list[tuple[str, float]] = []

    def timed(draw, args):
        started = time.process_time()
        entry = original(draw, args)
        times.append((getattr(draw, "__name__", "figure"), time.process_time() - started))
        return entry

    figure_jobs.draw_one = timed
    total = 0.0
    for _ in range(3):
        times.clear()
        # drawn, not taken from the run folder's figure cache
        Path(run_dir, "report_figures.json").unlink(missing_ok=True)
        started = time.process_time()
        report.render_run(run_dir)
        total = time.process_time() - started
    print(f"{run_dir}: warm render CPU {total:.2f} s")
    for title, seconds in times:
        print(f"  {title:<45} {seconds:.2f}")
    print(f"  figures together {sum(s for _, s in times):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
