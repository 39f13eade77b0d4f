"""Drawing a report's figures, in two processes where the machine allows.

A report's figures are independent matplotlib drawings from arrays already in memory, and
they are most of its render time (benchmarks/REPORTS.md, "Where the time goes"). A
:func:`job` records a figure's drawing call; :func:`draw_all` runs a report's jobs, in
this process and one forked child that take the next undrawn figure from a shared counter
until none is left, so the two share the work however unequal the figures are. The child
inherits the calls through ``fork`` (nothing is pickled but the finished images), so every
posterior a call reads must be in memory before :func:`draw_all` (``xr.load_datatree``,
not a lazily read file handle). Where ``fork`` is unavailable, or only one core is usable,
or ``BAYESCHECK_REPORT_WORKERS=1``, the figures are drawn one after another.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import warnings

__all__ = ["CHILD_GRACE_SECONDS", "draw_all", "job", "workers"]

#: Seconds the parent waits for the child's figures at least, once its own share is drawn.
CHILD_GRACE_SECONDS = 20.0


def workers() -> int:
    """How many processes draw figures: 2 with ``fork`` and two usable cores, else 1."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    wanted = os.environ.get("BAYESCHECK_REPORT_WORKERS", "")
    limit = int(wanted) if wanted.isdigit() and int(wanted) > 0 else 2
    return min(limit, cores, 2)


def _draw_one(job: dict) -> dict:
    """One figure's entry; one that cannot be drawn says why instead of breaking the report."""
    entry = {"title": job["title"], "caption": job["caption"]}
    try:
        entry["uri"] = job["draw"](*job["args"])
    except Exception as exc:  # noqa: BLE001 - one bad figure must not lose the report
        # ``failed``: an exception, perhaps passing, so the figure cache keeps no copy
        entry.update(uri=None, error=f"not drawn: {type(exc).__name__}: {exc}", failed=True)
    return entry


def job(title: str, caption: str, draw, *args) -> dict:
    """A figure entry to be drawn later by ``draw(*args)`` (a PNG data URI)."""
    return {"title": title, "caption": caption, "draw": draw, "args": args}


def draw_all(entries: list[dict], processes: int | None = None) -> list[dict]:
    """Draw every :func:`job` among ``entries``; return the entries in order, all drawn.

    Entries without a drawing call (a figure drawn already, or one that says why it is
    missing) keep their place unchanged.
    """
    pending = [i for i, e in enumerate(entries) if "draw" in e]
    processes = workers() if processes is None else processes
    done = _parallel(entries, pending) if processes > 1 and len(pending) > 1 else \
        {i: _draw_one(entries[i]) for i in pending}
    return [done.get(i, e) for i, e in enumerate(entries)]


def _take(jobs, pending, counter) -> dict:
    """Draw figures from ``pending`` until the shared counter passes its end."""
    out = {}
    while True:
        with counter.get_lock():
            k = counter.value
            counter.value += 1
        if k >= len(pending):
            return out
        out[pending[k]] = _draw_one(jobs[pending[k]])


def _import_matplotlib() -> None:
    """Import matplotlib (Agg) here, so that a forked child inherits it.

    The drawing functions import it on first use; after the fork each process would pay
    for the import (0.3-1 s of CPU) on its own.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401


def _parallel(jobs, pending) -> dict:
    _import_matplotlib()
    ctx = multiprocessing.get_context("fork")
    counter = ctx.Value("i", 0)
    receive, send = ctx.Pipe(duplex=False)

    def child():
        try:
            send.send(_take(jobs, pending, counter))
        except BaseException as exc:  # noqa: BLE001 - the parent draws what is missing
            send.send({"failed": repr(exc)})
        finally:
            send.close()

    with warnings.catch_warnings():
        # Python 3.12+ warns that forking a threaded process may deadlock in the child. It
        # does happen: a lock held by another of the parent's threads at the fork (nutpie's,
        # after a check) left a child asleep in matplotlib for good. So the parent waits a
        # bounded time (below), then stops the child and draws what it did not send.
        warnings.simplefilter("ignore", DeprecationWarning)
        proc = ctx.Process(target=child, daemon=True)
        proc.start()
    send.close()
    began = time.monotonic()
    mine = _take(jobs, pending, counter)
    # Every figure is claimed once the parent's share is done: the child has at most the
    # one it is drawing left, which takes far less than the parent's whole share.
    wait = max(CHILD_GRACE_SECONDS, time.monotonic() - began)
    theirs = {}
    try:
        if receive.poll(wait):
            theirs = receive.recv()
    except EOFError:  # the child died without sending
        pass
    if proc.is_alive() and not theirs:
        proc.kill()
    proc.join()
    receive.close()
    done = {**mine, **{k: v for k, v in theirs.items() if isinstance(k, int)}}
    for i in pending:  # whatever the child took but could not send is drawn here
        if i not in done:
            done[i] = _draw_one(jobs[i])
    return done
