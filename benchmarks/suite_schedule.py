"""Replay ``pytest -n 2 --dist loadfile`` from measured per-test CPU: when would each worker end?

    .venv/bin/python benchmarks/suite_schedule.py /tmp/suite-cpu            # this checkout's order
    .venv/bin/python benchmarks/suite_schedule.py /tmp/suite-cpu --reorder  # xdist's default order

Reads the per-test CPU seconds that ``suite_cpu.py`` recorded in a run, collects this checkout's
tests (``pytest --collect-only -q``: the order ``tests/conftest.py`` sets, ~20 s) and hands
whole files to the workers the way pytest-xdist 3.8's ``LoadFileScheduling`` does: one file
each to start, then a worker gets the next file when at most 2 of its tests are left. Each test
takes its measured CPU seconds (as on an idle machine, one worker per core) and each worker
starts after the mean start-up and collection CPU of the run's workers. ``--reorder`` first
sorts the files by number of tests, largest first (xdist's ``--loadscope-reorder``, its
default, which tests/conftest.py turns off). Tests not in the measured run count 0 s.
"""

from __future__ import annotations

import argparse
import collections
import heapq
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from suite_cpu import load  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def collected() -> list[str]:
    """Test ids in this checkout's collection order."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q"], cwd=ROOT,
                          capture_output=True, text=True, env=env)
    return [line.strip() for line in done.stdout.splitlines() if "::" in line]


def replay(ids: list[str], cost: dict[str, float], start: float, workers: int = 2,
           reorder: bool = False) -> tuple[list[float], list[list[str]]]:
    """End time of each worker and the files it ran, in order."""
    files: dict[str, list[float]] = collections.OrderedDict()
    for i in ids:
        files.setdefault(i.split("::")[0], []).append(cost.get(i, 0.0))
    order = sorted(files, key=lambda f: -len(files[f])) if reorder else list(files)
    queue = collections.deque(order)
    pending = [collections.deque() for _ in range(workers)]
    clock = [start] * workers
    ran: list[list[str]] = [[] for _ in range(workers)]

    def give(w: int) -> None:
        if queue:
            f = queue.popleft()
            ran[w].append(f)
            pending[w].extend(files[f])

    for w in range(workers):
        give(w)
    for w in range(workers):
        if len(pending[w]) <= 2:
            give(w)
    events = [(clock[w] + pending[w][0], w) for w in range(workers) if pending[w]]
    heapq.heapify(events)
    while events:
        now, w = heapq.heappop(events)
        pending[w].popleft()
        clock[w] = now
        if len(pending[w]) <= 2:
            give(w)
        if pending[w]:
            heapq.heappush(events, (now + pending[w][0], w))
    return clock, ran


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="suite_cpu.py's output folder of a measured run")
    parser.add_argument("--reorder", action="store_true")
    args = parser.parse_args()
    runs = load(args.folder)
    cost = {t["id"]: t["cpu"] for run in runs.values() for t in run["tests"]}
    start = sum(r["total_cpu"] - sum(t["cpu"] for t in r["tests"]) for r in runs.values())
    start /= len(runs)
    ends, ran = replay(collected(), cost, start, reorder=args.reorder)
    print(f"measured: {sum(cost.values()):.1f} s CPU in tests, {start:.1f} s start-up per worker")
    for w, (end, files) in enumerate(zip(ends, ran, strict=True)):
        first = ", ".join(Path(f).name for f in files[:4])
        print(f"worker {w}: ends at {end:.1f} s CPU, {len(files)} files, first: {first}")


if __name__ == "__main__":
    main()
