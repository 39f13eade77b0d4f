"""CPU seconds of every test of a pytest run, per worker: a pytest plugin, and its summary.

    # the run (any pytest command; with xdist each worker writes its own file)
    PYTHONPATH=.:benchmarks SUITE_CPU_OUT=/tmp/suite-cpu .venv/bin/python -m pytest -p suite_cpu \\
        -q -n auto --dist loadfile
    # per-file and per-test CPU, and each worker's sum
    .venv/bin/python benchmarks/suite_cpu.py /tmp/suite-cpu [--top 40]

On the shared 2-core machine wall times vary 2-5x with the load; the CPU a test costs
(``os.times()`` of the worker: user + system of all its threads, and of the child processes it
waited for) varies far less, and the schedule of ``--dist loadfile`` can be replayed from it
(``suite_schedule.py``). A module fixture's cost is counted in the first test that uses it; the
worker's start-up and collection are the difference between its process CPU and its tests'.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import time

import pytest

_RECORDS: list[dict] = []
_LOCK = {"wait": 0.0, "n": 0}


def _count_lock_waits() -> None:
    """Add the wall time spent acquiring file locks (PyTensor's compile lock) to ``_LOCK``.

    PyTensor takes ``<compiledir>/.lock`` (filelock) around every C compile and cache update;
    two xdist workers sharing one compiledir may wait for each other there, which costs wall
    time but no CPU.
    """
    try:
        import filelock
    except ImportError:  # pragma: no cover - PyTensor depends on it
        return
    acquire = filelock.FileLock.acquire
    if getattr(acquire, "_suite_cpu", False):
        return

    def timed(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return acquire(self, *args, **kwargs)
        finally:
            _LOCK["wait"] += time.perf_counter() - t0
            _LOCK["n"] += 1

    timed._suite_cpu = True
    filelock.FileLock.acquire = timed


def pytest_configure(config):  # noqa: ARG001
    """Start counting lock waits."""
    _count_lock_waits()


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # noqa: ARG001 - pytest's hook signature
    """Time one test: set-up, call and tear-down."""
    cpu, wall, lock, locks = _cpu(), time.time(), _LOCK["wait"], _LOCK["n"]
    yield
    _RECORDS.append({"id": item.nodeid, "file": item.nodeid.split("::")[0],
                     "cpu": _cpu() - cpu, "wall": time.time() - wall, "start": wall,
                     "lock_wait": _LOCK["wait"] - lock, "locks": _LOCK["n"] - locks})


def pytest_sessionfinish(session):  # noqa: ARG001
    """Write this process's records to ``$SUITE_CPU_OUT/<worker>.json``."""
    if not _RECORDS:  # the xdist controller runs no test
        return
    out = os.environ.get("SUITE_CPU_OUT", "suite-cpu")
    os.makedirs(out, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    with open(os.path.join(out, f"{worker}.json"), "w") as fh:
        json.dump({"tests": _RECORDS, "total_cpu": _cpu(), "end": time.time(),
                   "lock_wait": _LOCK["wait"], "locks": _LOCK["n"]}, fh)


def load(folder: str) -> dict[str, dict]:
    """``{worker: {"tests": [...], "total_cpu": s, "end": t}}`` from a run's folder."""
    return {os.path.basename(p)[:-5]: json.load(open(p))
            for p in sorted(glob.glob(os.path.join(folder, "gw*.json")))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    workers = load(args.folder)
    per_file = collections.defaultdict(lambda: [0.0, 0, ""])
    tests = []
    for name, run in workers.items():
        own = sum(t["cpu"] for t in run["tests"])
        wall = sum(t["wall"] for t in run["tests"])
        print(f"{name}: {len(run['tests'])} tests, {own:.1f} s CPU in tests ({wall:.1f} s wall), "
              f"{run['total_cpu']:.1f} s CPU in all; compile lock: {run.get('locks', 0)} "
              f"acquisitions, {run.get('lock_wait', 0.0):.1f} s waiting")
        for t in run["tests"]:
            row = per_file[t["file"]]
            row[0] += t["cpu"]
            row[1] += 1
            row[2] = name
            tests.append((t["cpu"], t["id"]))
    print("\n| file | worker | tests | CPU s |\n|---|---|---:|---:|")
    for f, (cpu, n, w) in sorted(per_file.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"| {f} | {w} | {n} | {cpu:.1f} |")
    print("\n| test | CPU s |\n|---|---:|")
    for cpu, name in sorted(tests, reverse=True)[:args.top]:
        print(f"| {name} | {cpu:.1f} |")


if __name__ == "__main__":
    main()
