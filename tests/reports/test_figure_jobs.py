"""Figures drawn in two forked processes come back complete, in order, errors kept."""

import os
import time

import pytest

from reports.figure_jobs import draw_all, job, workers


def _slow(i):
    time.sleep(0.05)
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
    if processes > 1 and workers() < 2:
        pytest.skip("fork or a second core is not available")
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
