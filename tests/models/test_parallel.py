"""models/parallel.py: every thread is joined before on_threads returns or raises, even
through an interrupt."""

from __future__ import annotations

import threading
import time

import pytest
from bayescheck.models import parallel


def test_every_part_runs_once():
    seen = []
    parallel.on_threads(seen.append, 4, "t")
    assert sorted(seen) == [0, 1, 2, 3]


def _slow_parts(finished):
    def work(i):
        if i == 0:
            return
        time.sleep(0.3)
        finished.append(i)
    return work


def test_an_interrupt_while_waiting_is_raised_after_every_thread_finished(monkeypatch):
    """A Ctrl-C that arrives in join(): the threads still write into the caller's memory,
    so they are waited for before it is raised (a plain loop of joins would stop at once:
    the negative control)."""
    finished: list[int] = []
    real = threading.Thread.join
    calls = []

    def interrupted_once(self, timeout=None):
        calls.append(self)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real(self, timeout)

    monkeypatch.setattr(threading.Thread, "join", interrupted_once)
    with pytest.raises(KeyboardInterrupt):
        parallel.on_threads(_slow_parts(finished), 3, "t")
    assert sorted(finished) == [1, 2]

    def plain(work, count):  # the negative control: joins stop at the interrupt
        threads = [threading.Thread(target=work, args=(i,)) for i in range(1, count)]
        for t in threads:
            t.start()
        work(0)
        for t in threads:
            t.join()

    finished.clear()
    calls.clear()
    with pytest.raises(KeyboardInterrupt):
        plain(_slow_parts(finished), 3)
    assert finished == []
    monkeypatch.setattr(threading.Thread, "join", real)
    time.sleep(0.5)  # let the control's threads end


def test_an_error_of_the_calling_threads_part_waits_for_the_others():
    finished: list[int] = []

    def work(i):
        if i == 0:
            raise ValueError("part 0")
        time.sleep(0.2)
        finished.append(i)

    with pytest.raises(ValueError, match="part 0"):
        parallel.on_threads(work, 3, "t")
    assert sorted(finished) == [1, 2]
