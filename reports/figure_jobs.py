"""Drawing a report's figures: in this process, and in one fresh worker process beside it.

A report's figures are independent drawings, and they are most of its render time
(benchmarks/REPORTS.md). A :func:`job` records a figure's drawing call; :func:`draw_all`
draws a report's jobs. Most figures are SVG written with numpy (:mod:`bayescheck.reports.svg`: a few
hundredths of a second each, no matplotlib); the others (a network's DAG, the calibration
figure) are matplotlib figures, whose import alone costs 0.45-0.9 s of CPU. Their drawing
functions say so (``draw.matplotlib = True``).

When a report has matplotlib figures and a core is free (:func:`workers`), a worker, a new
Python interpreter (:mod:`bayescheck.reports.figure_worker`), imports matplotlib and draws them while
this process reads the posterior and writes the SVG figures; it receives each job as a
pickle (the drawing function by name and its arguments: plain numbers, lists and arrays,
never a file handle or a posterior object) and sends back the data URI. This process takes
the SVG jobs from the front of the list and leaves the matplotlib ones to the worker, unless
it has matplotlib already or there is no worker; the worker takes matplotlib jobs first,
from the back, then whatever is left. Jobs without the mark are shared freely.

Why not ``fork``: a child forked while another thread of the parent holds a lock (nutpie's
sampler threads after a check, matplotlib's, a BLAS pool's) inherits the lock held for good
and can sleep on it forever (it did, in ``make test``). A new interpreter inherits no
thread and no lock, so it cannot deadlock that way.

The worker is started by :func:`prestart` as early as a report knows it will draw
matplotlib figures, and kept for the next report of the same process (``demo``). A job
that cannot be pickled (a lambda) is drawn here. With one usable core, on a busy machine
(:func:`workers`), or with ``BAYESCHECK_REPORT_WORKERS=1``, every figure is drawn here,
one after another.
"""

from __future__ import annotations

import atexit
import os
import pickle
import struct
import subprocess
import sys
import threading
import time

from bayescheck.models.settings import usable_cores as cores

__all__ = ["CHILD_GRACE_SECONDS", "cores", "draw_all", "free_cores", "job",
           "needs_matplotlib", "prestart", "sample_cpu", "workers"]

#: Seconds without a finished figure from the worker, once this process has drawn its
#: share, after which the worker is stopped and its figures drawn here.
CHILD_GRACE_SECONDS = 20.0


#: Seconds over which the free CPU is measured (at least; see :func:`sample_cpu`).
CPU_WINDOW = 0.1
#: A worker is started only when at least this much of a core was idle over the window.
FREE_CORE = 0.75

_cpu_sample: tuple[float, int, int] | None = None


def _cpu_times() -> tuple[int, int, int] | None:
    """Idle and total jiffies of all CPUs, and their number, from ``/proc/stat``."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            lines = stat.read().splitlines()
    except OSError:  # not Linux
        return None
    try:
        fields = lines[0].split()
        values = [int(v) for v in fields[1:9]]
        if fields[0] != "cpu" or len(values) < 4:
            return None
    except (IndexError, ValueError):  # a /proc/stat of another format: not measured
        return None
    count = sum(1 for line in lines if line.startswith("cpu") and line[3:4].isdigit())
    # idle, and iowait where the kernel gives it (2.5.41 and later)
    return values[3] + (values[4] if len(values) > 4 else 0), sum(values), count


def sample_cpu() -> None:
    """Start the window over which :func:`free_cores` measures the machine's idle CPU.

    ``bayescheck report`` calls it first thing (its imports then fill the window), ``check``
    when sampling is over.
    """
    global _cpu_sample
    times = _cpu_times()
    _cpu_sample = None if times is None else (time.monotonic(), times[0], times[1])


def free_cores() -> float | None:
    """Cores left idle by every process (this one included) since :func:`sample_cpu`.

    Measured over at least :data:`CPU_WINDOW` seconds (waiting for the rest when the window
    is shorter); None where ``/proc/stat`` is not available.
    """
    if _cpu_sample is None:
        sample_cpu()
        if _cpu_sample is None:
            return None
    wait = CPU_WINDOW - (time.monotonic() - _cpu_sample[0])
    if wait > 0:
        time.sleep(wait)
    times = _cpu_times()
    if times is None:
        return None
    idle, total, count = times
    if total <= _cpu_sample[2]:
        return None
    return (idle - _cpu_sample[1]) / (total - _cpu_sample[2]) * count


def workers() -> int:
    """How many processes draw figures: 2 (this one and a worker) or 1.

    Two when there are two usable cores and at least :data:`FREE_CORE` of a core was idle
    over the last :data:`CPU_WINDOW` seconds or more (:func:`free_cores`; where that cannot
    be measured, a 1-minute load average of at most ``cores - 1``). On a busy machine a
    second process only competes for the same cores and pays its own imports (about 0.9 s
    of CPU): ``bayescheck report`` of play_tennis took 6.2 s in one process and 9.0-9.5 s in
    two at load 5.5 on 2 cores (benchmarks/REPORTS.md). The load average, which an earlier
    rule used, says what ran over the last minute: one finished command kept it above 1,
    and the worker from starting, for a minute on an idle machine.
    ``BAYESCHECK_REPORT_WORKERS=1`` or ``2`` decides instead.
    """
    wanted = os.environ.get("BAYESCHECK_REPORT_WORKERS", "")
    if wanted.isdigit() and int(wanted) > 0:
        return min(int(wanted), cores(), 2)
    if cores() < 2:
        return 1
    free = free_cores()
    if free is None:
        try:
            free = cores() - os.getloadavg()[0]
        except OSError:
            free = 1.0
    return 2 if free >= FREE_CORE else 1


def draw_one(draw, args) -> dict:
    """``{"uri": draw(*args)}``; a figure that cannot be drawn says why instead."""
    try:
        return {"uri": draw(*args)}
    except Exception as exc:  # noqa: BLE001 - one bad figure must not lose the report
        # ``failed``: an exception, perhaps passing, so the figure cache keeps no copy
        return {"uri": None, "error": f"not drawn: {type(exc).__name__}: {exc}", "failed": True}


def job(title: str, caption: str, draw, *args) -> dict:
    """A figure entry to be drawn later by ``draw(*args)`` (a data URI)."""
    return {"title": title, "caption": caption, "draw": draw, "args": args}


def needs_matplotlib(entry: dict) -> bool:
    """Whether a job's drawing function imports matplotlib.

    ``draw.matplotlib``: True, or a function of the job's arguments that says.
    """
    flag = getattr(entry.get("draw"), "matplotlib", False)
    return bool(flag(*entry.get("args", ())) if callable(flag) else flag)


# -- the worker process ---------------------------------------------------------------------

def _send(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the figure worker closed its pipe")
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the figure worker closed its pipe")
    return pickle.loads(data)  # noqa: S301 - our own child process


class _Worker:
    """A figure worker: a new interpreter running :func:`bayescheck.reports.figure_worker.serve`."""

    def __init__(self):
        boot = (f"import sys; sys.path[:] = {list(sys.path)!r}; "
                "from bayescheck.reports.figure_worker import serve; serve()")
        env = {**os.environ, "MPLBACKEND": "Agg"}
        self.process = subprocess.Popen([sys.executable, "-c", boot], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        env=env)
        self.ready = False

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait (at most ``timeout`` seconds) for the worker's imports to finish."""
        if not self.ready:
            import select

            if timeout is not None and not select.select([self.process.stdout], [], [],
                                                         timeout)[0]:
                return False
            self.ready = _receive(self.process.stdout) == "ready"
        return self.ready

    def alive(self) -> bool:
        return self.process.poll() is None

    def draw(self, payload: bytes) -> dict:
        """Send one pickled ``(draw, args)``; return the worker's ``draw_one`` entry."""
        self.wait_ready()
        self.process.stdin.write(struct.pack("<Q", len(payload)) + payload)
        self.process.stdin.flush()
        return _receive(self.process.stdout)

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass


_worker: _Worker | None = None


def prestart(wait: float = 0.0, *, force: bool = False) -> None:
    """Start the figure worker now, if figures are to be drawn in two processes (or ``force``).

    Its imports then overlap this process's work; :func:`draw_all` uses it. With ``wait``,
    return once it is ready or after that many seconds.
    """
    global _worker
    if (force or workers() > 1) and (_worker is None or not _worker.alive()):
        _worker = _Worker()
    if wait and _worker is not None:
        _worker.wait_ready(wait)


@atexit.register
def _stop_worker() -> None:
    global _worker
    if _worker is not None:
        _worker.stop()
        _worker = None


# -- sharing the jobs ---------------------------------------------------------------------

class _Queue:
    """The undrawn jobs, claimed under a lock by this process and the worker's feeder.

    This process takes them from the front, the worker from the back, so that each job
    this process cannot hand over (:meth:`keep`) is still drawn once. Jobs that need
    matplotlib (``heavy``) are the worker's first; this process takes one only when
    ``here_too`` (matplotlib imported here already, or the worker gone).
    """

    def __init__(self, pending: list[int], heavy: set[int]):
        self.lock = threading.Lock()
        self.pending = list(pending)
        self.heavy = heavy
        self.mine: list[int] = []
        self.progress = time.monotonic()

    def claim(self, *, worker: bool, here_too: bool = True) -> int | None:
        with self.lock:
            if not worker and self.mine:
                return self.mine.pop(0)
            order = self.pending[::-1] if worker else self.pending
            light = [i for i in order if i not in self.heavy]
            heavy = [i for i in order if i in self.heavy]
            if worker:
                choice = (heavy or light or [None])[0]
            else:
                choice = (light or (heavy if here_too else []) or [None])[0]
            if choice is not None:
                self.pending.remove(choice)
            return choice

    def left(self) -> bool:
        with self.lock:
            return bool(self.pending or self.mine)

    def keep(self, i: int) -> None:
        """Leave job ``i`` to this process (the worker cannot take it)."""
        with self.lock:
            self.mine.append(i)


def _feed(worker: _Worker, entries: list[dict], queue: _Queue, done: dict) -> None:
    """Hand the worker one job at a time until none is left or it fails."""
    while True:
        i = queue.claim(worker=True)
        if i is None:
            return
        try:
            payload = pickle.dumps((entries[i]["draw"], entries[i]["args"]),
                                   protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - a lambda or a local function: drawn here
            queue.keep(i)
            continue
        try:
            entry = worker.draw(payload)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            queue.keep(i)  # the worker is gone: this one and the rest are drawn here
            return
        if "unreadable" in entry:  # the worker could not import the call
            queue.keep(i)
            continue
        done[i] = entry
        queue.progress = time.monotonic()


def draw_all(entries: list[dict], processes: int | None = None) -> list[dict]:
    """Draw every :func:`job` among ``entries``; return the entries in order, all drawn.

    Entries without a drawing call (a figure drawn already, or one that says why it is
    missing) keep their place unchanged. ``processes``: 1 or 2; by default 2 when a worker
    is running already (:func:`prestart`), else 1 for SVG figures alone (a worker's start
    costs more than they do) and :func:`workers` when some need matplotlib.
    """
    global _worker
    pending = [i for i, e in enumerate(entries) if "draw" in e]
    heavy = {i for i in pending if needs_matplotlib(entries[i])}
    if processes is None:
        processes = 2 if _worker is not None and _worker.alive() else \
            (workers() if heavy else 1)
    done: dict[int, dict] = {}
    if processes > 1 and len(pending) > 1:
        prestart(force=True)
    if processes > 1 and len(pending) > 1 and _worker is not None:
        queue = _Queue(pending, heavy)
        feeder = threading.Thread(target=_feed, args=(_worker, entries, queue, done),
                                  daemon=True)
        feeder.start()
        idle_since = None
        while True:
            here_too = "matplotlib.pyplot" in sys.modules or not feeder.is_alive()
            i = queue.claim(worker=False, here_too=here_too)
            if i is not None:
                done[i] = draw_one(entries[i]["draw"], entries[i]["args"])
                continue
            idle_since = idle_since or time.monotonic()
            feeder.join(timeout=0.05)
            if not feeder.is_alive() and not queue.left():
                break
            if time.monotonic() - max(queue.progress, idle_since) > CHILD_GRACE_SECONDS:
                # No figure from the worker for that long: stop it and draw the rest here.
                _worker.process.kill()
                feeder.join()
                _worker.stop()
                _worker = None
                break
        if _worker is not None and not _worker.alive():
            _worker = None
    for i in pending:  # everything not drawn yet (one process, or the worker failed)
        if i not in done:
            done[i] = draw_one(entries[i]["draw"], entries[i]["args"])
    return [{"title": entries[i]["title"], "caption": entries[i]["caption"], **done[i]}
            if i in done else e for i, e in enumerate(entries)]
