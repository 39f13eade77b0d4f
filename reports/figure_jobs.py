"""Drawing a report's figures: in this process and one fresh worker process beside it.

A report's figures are independent matplotlib drawings, and they are most of its render
time (benchmarks/REPORTS.md). A :func:`job` records a figure's drawing call;
:func:`draw_all` draws a report's jobs in this process and in a worker, a new Python
interpreter (:mod:`reports.figure_worker`) that receives each job as a pickle (the drawing
function by name and its arguments: plain numbers, lists and arrays, never a file handle
or a posterior object) and sends back the PNG. The two take the next undrawn figure from
a shared list until none is left, so they share the work however unequal the figures are.

Why not ``fork``: a child forked while another thread of the parent holds a lock (nutpie's
sampler threads after a check, matplotlib's, a BLAS pool's) inherits the lock held for good
and can sleep on it forever (it did, in ``make test``). A new interpreter inherits no
thread and no lock, so it cannot deadlock that way.

The worker is started by :func:`prestart` as early as a report knows it will draw (its
imports, numpy and matplotlib, then overlap this process's reading), and kept for the next
report of the same process (``demo``). A job that cannot be pickled (a
lambda) is drawn here. With one usable core, on a busy machine (:func:`workers`), or with
``BAYESCHECK_REPORT_WORKERS=1``, every figure is drawn here, one after another.
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

__all__ = ["CHILD_GRACE_SECONDS", "cores", "draw_all", "job", "prestart", "workers"]

#: Seconds without a finished figure from the worker, once this process has drawn its
#: share, after which the worker is stopped and its figures drawn here.
CHILD_GRACE_SECONDS = 20.0


def cores() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def workers() -> int:
    """How many processes draw figures: 2 (this one and a worker) or 1.

    Two when there are two usable cores and one of them is free: the 1-minute load average
    at most ``cores - 1``. On a busy machine a second process only competes for the same
    cores and pays its own imports (about 0.9 s of CPU): ``bayescheck report`` of
    play_tennis took 6.2 s in one process and 9.0-9.5 s in two at load 5.5 on 2 cores
    (benchmarks/REPORTS.md). ``BAYESCHECK_REPORT_WORKERS=1`` or ``2`` decides instead.
    """
    wanted = os.environ.get("BAYESCHECK_REPORT_WORKERS", "")
    if wanted.isdigit() and int(wanted) > 0:
        return min(int(wanted), cores(), 2)
    try:
        busy = os.getloadavg()[0] > cores() - 1
    except OSError:
        busy = False
    return 1 if busy else min(cores(), 2)


def draw_one(draw, args) -> dict:
    """``{"uri": draw(*args)}``; a figure that cannot be drawn says why instead."""
    try:
        return {"uri": draw(*args)}
    except Exception as exc:  # noqa: BLE001 - one bad figure must not lose the report
        # ``failed``: an exception, perhaps passing, so the figure cache keeps no copy
        return {"uri": None, "error": f"not drawn: {type(exc).__name__}: {exc}", "failed": True}


def job(title: str, caption: str, draw, *args) -> dict:
    """A figure entry to be drawn later by ``draw(*args)`` (a PNG data URI)."""
    return {"title": title, "caption": caption, "draw": draw, "args": args}


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
    """A figure worker: a new interpreter running :func:`reports.figure_worker.serve`."""

    def __init__(self):
        boot = (f"import sys; sys.path[:] = {list(sys.path)!r}; "
                "from reports.figure_worker import serve; serve()")
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

    This process takes them from the front, the worker from the back (the health figures,
    which the worker draws while this process draws the marginals), so that each job
    this process cannot hand over (:meth:`keep`) is still drawn once.
    """

    def __init__(self, pending: list[int]):
        self.lock = threading.Lock()
        self.pending = list(pending)
        self.mine: list[int] = []
        self.progress = time.monotonic()

    def claim(self, *, worker: bool) -> int | None:
        with self.lock:
            if not worker and self.mine:
                return self.mine.pop(0)
            if not self.pending:
                return None
            return self.pending.pop() if worker else self.pending.pop(0)

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
    is running already (:func:`prestart`), else :func:`workers`.
    """
    global _worker
    pending = [i for i, e in enumerate(entries) if "draw" in e]
    if processes is None:
        processes = 2 if _worker is not None and _worker.alive() else workers()
    done: dict[int, dict] = {}
    if processes > 1 and len(pending) > 1:
        prestart(force=True)
    if processes > 1 and len(pending) > 1 and _worker is not None:
        queue = _Queue(pending)
        feeder = threading.Thread(target=_feed, args=(_worker, entries, queue, done),
                                  daemon=True)
        feeder.start()
        idle_since = None
        while True:
            i = queue.claim(worker=False)
            if i is not None:
                done[i] = draw_one(entries[i]["draw"], entries[i]["args"])
                continue
            idle_since = idle_since or time.monotonic()
            feeder.join(timeout=0.05)
            if not feeder.is_alive():
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
