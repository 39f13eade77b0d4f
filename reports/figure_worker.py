"""The figure worker: a new interpreter that draws the figures :mod:`bayescheck.reports.figure_jobs` sends.

It reads length-prefixed pickles of ``(draw, args)`` from its standard input and answers
each with :func:`bayescheck.reports.figure_jobs.draw_one`'s entry, until its input closes. Its own
standard output is kept for the answers: anything a library prints goes to standard error.
"""

from __future__ import annotations

import os
import sys

__all__ = ["serve"]


def _preload() -> None:
    """Import what every figure needs while the parent is still reading the run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401

    from . import figure_stats, panels, plots  # noqa: F401


def serve() -> None:
    """Draw jobs from standard input until it closes."""
    from .figure_jobs import _receive, _send, draw_one

    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a library's print must not enter the answers
    sys.stdout = sys.stderr
    stdin = sys.stdin.buffer
    _preload()
    _send(out, "ready")
    while True:
        try:
            draw, args = _receive(stdin)
        except EOFError:
            return
        except Exception as exc:  # noqa: BLE001 - e.g. a test module not importable here
            _send(out, {"unreadable": repr(exc)})
            continue
        _send(out, draw_one(draw, args))
