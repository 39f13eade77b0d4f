"""What every benchmark of the suite shares: the row of the table, timing, child processes.

A benchmark is a function ``bench(ctx) -> list[Row]``. :func:`interleave` times ours and the
peer alternately in one process (best of ``ctx.repeat``), :func:`command` times a fresh
process as a user waits for it. ``run.py`` reads ``/proc/loadavg`` around each benchmark.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: The scripts of the installed command (the venv run.py runs in).
BIN = Path(sys.executable).parent


@dataclass
class Row:
    """One line of RESULTS.md.

    ``ours`` and ``peer`` are numbers in ``unit``: seconds (lower is better), rows/s or
    digits (higher is better). ``ratio`` is how many times better ours is (peer / ours for
    seconds, ours / peer for rates); for digits it is the difference ours - peer.
    """

    benchmark: str
    rows: str
    ours: float
    peer_name: str
    peer: float | None
    unit: str = "s"
    target: str = ""
    met: bool | None = None
    note: str = ""
    baseline: float | None = None
    load: tuple[float, float] = (math.nan, math.nan)

    @property
    def ratio(self) -> float | None:
        return _better(self.ours, self.peer, self.unit)

    @property
    def baseline_ratio(self) -> float | None:
        return _better(self.ours, self.baseline, self.unit)


def _better(ours: float, other: float | None, unit: str) -> float | None:
    if other is None or not math.isfinite(ours) or not math.isfinite(other):
        return None
    if unit == "digits":
        return ours - other
    if unit == "s":
        return other / ours if ours > 0 else None
    return ours / other if other > 0 else None


@dataclass
class Context:
    """Settings every benchmark reads.

    quick : small sizes (the whole suite in a few minutes).
    repeat : alternations of ours and the peer; the best of them is kept.
    work : scratch folder (data files written once, outputs).
    baseline : another installation's ``bayescheck`` executable, for the command rows.
    """

    quick: bool
    repeat: int
    work: Path
    baseline: Path | None = None
    env: dict = field(default_factory=dict)

    def size(self, full, quick):
        return quick if self.quick else full


def loadavg() -> float:
    """The 1-minute load average."""
    return float(Path("/proc/loadavg").read_text().split()[0])


def interleave(fns: dict, repeat: int, min_seconds: float = 1.0, max_rounds: int = 200) -> dict:
    """``{name: (best seconds, last result)}``; the functions alternate in each of at least
    ``repeat`` rounds, so a busy spell of the machine falls on all of them alike. Calls of
    milliseconds go on for more rounds (until ``min_seconds`` have passed, ``max_rounds`` at
    most): one unlucky time slice would otherwise be the whole measurement."""
    best = dict.fromkeys(fns, math.inf)
    last = {}
    started_all, rounds = time.perf_counter(), 0
    while rounds < repeat or (time.perf_counter() - started_all < min_seconds
                              and rounds < max_rounds):
        rounds += 1
        for name, fn in fns.items():
            started = time.perf_counter()
            last[name] = fn()
            best[name] = min(best[name], time.perf_counter() - started)
    return {name: (best[name], last[name]) for name in fns}


def child_env(ctx: Context, **extra) -> dict:
    """The environment of a child process: compiled modules cached (as an installed package
    has them), a headless matplotlib, the caller's variables."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(ctx.work / "pycache"), "MPLBACKEND": "Agg",
           **ctx.env, **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    return env


def command(argv: list, ctx: Context, cwd: Path | None = None, **extra_env) -> float:
    """Wall seconds of one fresh process, from its start to its exit; a failure raises."""
    started = time.perf_counter()
    proc = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd or ctx.work,
        env=child_env(ctx, **extra_env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seconds = time.perf_counter() - started
    if proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {proc.returncode}:\n"
                           f"{proc.stderr[-3000:]}")
    return seconds


def best_of(fn, repeat: int) -> float:
    """The smallest of ``repeat`` calls of ``fn`` (which returns seconds)."""
    return min(fn() for _ in range(repeat))


def python(script: str) -> list:
    """argv running ``script`` (source text) in this interpreter."""
    return [sys.executable, "-c", script]


def bayescheck_exe(ctx: Context, baseline: bool = False) -> Path:
    """The ``bayescheck`` executable of this installation, or of the baseline."""
    return ctx.baseline if baseline else BIN / "bayescheck"


def wait_for_background(pattern: str = "numba_warmup", limit: float = 300.0) -> float:
    """Wait until no process whose command line holds ``pattern`` runs (an older check
    compiled Numba in a background process after it exited); the seconds waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        busy = False
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if pattern.encode() in (entry / "cmdline").read_bytes():
                    busy = True
                    break
            except OSError:
                continue
        if not busy:
            break
        time.sleep(1.0)
    return time.perf_counter() - started


def f1_score(estimate_nonzero, true_nonzero) -> float:
    """F1 of an estimated support against the true one (boolean arrays)."""
    import numpy as np

    est, true = np.asarray(estimate_nonzero, bool), np.asarray(true_nonzero, bool)
    tp = int(np.sum(est & true))
    total = int(est.sum() + true.sum())
    return 2 * tp / total if total else 1.0


def shape(n: int, d: int | None = None) -> str:
    return f"{n:,}" if d is None else f"{n:,} x {d:,}"
