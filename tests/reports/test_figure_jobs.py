"""Figures drawn in this process and a fresh worker come back complete, in order, errors kept.

The drawing calls here are module-level functions, so that the worker (a new interpreter
with this process's ``sys.path``) can import them by name.
"""

import os
import threading
import time

import pytest
from bayescheck.reports import figure_jobs
from bayescheck.reports.figure_jobs import draw_all, job, workers


def _slow(i):
    time.sleep(0.2)  # the worker's first job imports this module (and pytest) first
    return f"data:{i}:{os.getpid()}"


def _broken():
    raise ValueError("no data")


def _entries():
    entries = [job(f"f{i}", f"caption {i}", _slow, i) for i in range(8)]
    entries.insert(3, {"title": "ready", "caption": "", "uri": "data:ready"})
    entries.append(job("bad", "", _broken))
    return entries


@pytest.mark.parametrize("processes", [1, 2])
def test_every_figure_drawn_in_place(processes):
    if processes > 1 and figure_jobs.cores() < 2:
        pytest.skip("a second core is not available")
    figure_jobs.prestart(wait=60, force=True)  # its imports take longer than these figures
    drawn = draw_all(_entries(), processes=processes)
    titles = [e["title"] for e in drawn]
    assert titles == ["f0", "f1", "f2", "ready", "f3", "f4", "f5", "f6", "f7", "bad"]
    for e in drawn:
        assert "draw" not in e and "args" not in e
    for i, e in enumerate(e for e in drawn if e["title"].startswith("f")):
        assert e["uri"].startswith(f"data:{i}:") and e["caption"] == f"caption {i}"
    assert drawn[3]["uri"] == "data:ready"
    assert drawn[-1]["uri"] is None and drawn[-1]["error"] == "not drawn: ValueError: no data"
    pids = {e["uri"].rsplit(":", 1)[1] for e in drawn if e["title"].startswith("f")}
    assert len(pids) == processes  # two processes shared the work, or this one did it all


def test_one_worker_when_asked(monkeypatch):
    monkeypatch.setenv("BAYESCHECK_REPORT_WORKERS", "1")
    assert workers() == 1


def test_one_process_on_a_busy_machine(monkeypatch):
    """A worker when a core was idle over the last moments, whatever ran a minute ago."""
    monkeypatch.delenv("BAYESCHECK_REPORT_WORKERS", raising=False)
    monkeypatch.setattr(figure_jobs, "cores", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (5.5, 5.0, 4.0))  # not what decides
    monkeypatch.setattr(figure_jobs, "free_cores", lambda: 0.3)
    assert workers() == 1
    monkeypatch.setattr(figure_jobs, "free_cores", lambda: 1.2)
    assert workers() == 2
    monkeypatch.setenv("BAYESCHECK_REPORT_WORKERS", "2")
    monkeypatch.setattr(figure_jobs, "free_cores", lambda: 0.0)
    assert workers() == 2
    # where /proc/stat cannot be read, the load average decides
    monkeypatch.delenv("BAYESCHECK_REPORT_WORKERS")
    monkeypatch.setattr(figure_jobs, "free_cores", lambda: None)
    assert workers() == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (0.3, 0.5, 0.4))
    assert workers() == 2


def test_free_cores_sees_a_busy_core(monkeypatch):
    """Measured over the window: a thread spinning in this process takes one core."""
    if figure_jobs._cpu_times() is None:
        pytest.skip("/proc/stat is not available")
    monkeypatch.setattr(figure_jobs, "CPU_WINDOW", 0.5)
    pass  # sample_cpu removed from check
    began = time.monotonic()
    while time.monotonic() - began < 0.5:  # this process: one busy core for the window
        pass
    free = figure_jobs.free_cores()
    assert free is not None and free <= figure_jobs.cores() - 0.8


def _heavy(i):
    return f"data:{i}:{os.getpid()}"


_heavy.matplotlib = True


def test_matplotlib_figures_go_to_the_worker_svg_ones_stay_here():
    """The worker takes the jobs that need matplotlib; this process, without matplotlib,
    draws the others and leaves those to it."""
    import subprocess
    import sys

    if figure_jobs.cores() < 2:
        pytest.skip("a second core is not available")
    code = ("import os, sys\n"
            "from reports import figure_jobs as f\n"
            "from tests.reports.test_figure_jobs import _heavy, _slow\n"
            "f.prestart(wait=60, force=True)\n"
            "jobs = [f.job(f'h{i}', '', _heavy, i) for i in range(3)]\n"
            "jobs += [f.job(f's{i}', '', _slow, i) for i in range(3)]\n"
            "drawn = f.draw_all(jobs, processes=2)\n"
            "assert 'matplotlib.pyplot' not in sys.modules\n"
            "mine = str(os.getpid())\n"
            "print(' '.join(e['title'] for e in drawn if e['uri'].rsplit(':', 1)[1] == mine))\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=root, env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr[-2000:]
    here = done.stdout.split()
    assert not any(t.startswith("h") for t in here)  # every matplotlib job in the worker


@pytest.mark.slow
def test_arviz_stats_import_without_the_stack_walk_restores_inspect():
    """bayescheck.reports.plots imports arviz_stats with a cheap inspect.stack, then puts it back; the
    missing jax is still a placeholder that raises when used."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("jax") is not None:
        pytest.skip("jax is installed: arviz_base finds it, no placeholder to check")
    code = ("import inspect; real = inspect.stack\n"
            "import reports.plots as r; r.import_arviz_stats()\n"
            "import arviz_base.io_numpyro as m\n"
            "assert inspect.stack is real\n"
            "try:\n    m.jax.numpy\nexcept ModuleNotFoundError as e:\n    print('missing', e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "missing" in done.stdout and "jax" in done.stdout


def _hangs_in_the_worker(parent, i):
    if os.getpid() != parent:
        time.sleep(3600)  # a worker that never answers, whatever the reason
    return f"data:{i}:{os.getpid()}"


def test_a_worker_that_hangs_is_stopped_and_its_figures_drawn_here(monkeypatch):
    if figure_jobs.cores() < 2:
        pytest.skip("a second core is not available")
    monkeypatch.setattr(figure_jobs, "CHILD_GRACE_SECONDS", 0.5)
    entries = [job(f"f{i}", "", _hangs_in_the_worker, os.getpid(), i) for i in range(4)]
    began = time.monotonic()
    drawn = draw_all(entries, processes=2)
    assert time.monotonic() - began < 30
    assert [e["uri"] for e in drawn] == [f"data:{i}:{os.getpid()}" for i in range(4)]
    # the next report starts a new worker
    figure_jobs.prestart(wait=60, force=True)
    drawn = draw_all([job(f"f{i}", "", _slow, i) for i in range(6)], processes=2)
    assert len({e["uri"].rsplit(":", 1)[1] for e in drawn}) == 2


#: Held by another thread of this process while the figures are drawn.
_LOCK = threading.Lock()


def _needs_the_lock(i):
    with _LOCK:
        time.sleep(0.05)
        return f"data:{i}:{os.getpid()}"


def test_a_lock_held_by_another_thread_does_not_stop_the_worker():
    """The hang of a forked child: another thread (nutpie's, after a check) holds a lock
    at the fork, and the child, whose copy of the lock is never released, sleeps on it.
    Here a thread holds the lock the drawing needs for a second: a worker that inherited
    it would draw nothing (and be stopped after CHILD_GRACE_SECONDS); a fresh
    interpreter has its own lock and draws its share at once."""
    if figure_jobs.cores() < 2:
        pytest.skip("a second core is not available")
    figure_jobs.prestart(wait=60, force=True)
    taken, release = threading.Event(), threading.Event()

    def hold():
        with _LOCK:
            taken.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait()
    threading.Timer(1.0, release.set).start()
    try:
        drawn = draw_all([job(f"f{i}", "", _needs_the_lock, i) for i in range(8)], processes=2)
    finally:
        release.set()
        holder.join()
    pids = {e["uri"].rsplit(":", 1)[1] for e in drawn}
    assert str(os.getpid()) in pids and len(pids) == 2  # the worker drew its share
    worker_drew = sum(e["uri"].rsplit(":", 1)[1] != str(os.getpid()) for e in drawn)
    assert worker_drew >= 4  # while this process waited a second for the lock


@pytest.mark.parametrize("content", ["", "intr 1 2\n", "cpu  1 2 3\n", "cpu  a b c d e\n"])
def test_a_proc_stat_of_another_format_is_not_measured(monkeypatch, tmp_path, content):
    """A /proc/stat the parser does not know gives no measurement (the load average then
    decides), not an exception at the start of `bayescheck report`."""
    import builtins

    fake = tmp_path / "stat"
    fake.write_text(content)
    real_open = builtins.open

    def fake_open(path, *args, **kwargs):
        return real_open(fake if path == "/proc/stat" else path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    assert figure_jobs._cpu_times() is None
