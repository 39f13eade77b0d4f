"""A progress bar with a time estimate, on stderr: calibration's simulations, a check's draws.

On a terminal one line is redrawn at each update; otherwise (a log) a line is written after
the first update, which carries the first estimate, after every 5 % and at the end.
"""

from __future__ import annotations

import sys
import time

__all__ = ["ProgressBar"]


class ProgressBar:
    """Work done and the time left, on ``stream`` (default stderr).

    Parameters
    ----------
    total : int
        Units of work in all.
    unit : str
        What a unit is, for the line (``"simulation"``, ``"draws"``).
    stream : file, optional
        Where to write (default ``sys.stderr``).
    """

    def __init__(self, total: int, stream=None, *, unit: str = "simulation"):
        self.total, self.unit = max(int(total), 1), unit
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.every = max(1, self.total // 20)
        self.started = time.perf_counter()
        self.last = 0

    def update(self, done: int, note: str = "") -> None:
        """Report ``done`` units finished (``note``: shown after the count)."""
        done = min(int(done), self.total)
        crossed = done // self.every != self.last // self.every
        if not self.tty and done != 1 and not crossed and done != self.total:
            return
        self.last = done
        spent = time.perf_counter() - self.started
        left = f"about {spent / done * (self.total - done):.0f} s left" if done else "starting"
        filled = round(30 * done / self.total)
        line = (f"[{'#' * filled}{'.' * (30 - filled)}] {self.unit} {done}/{self.total}"
                f"{f' ({note})' if note else ''}, {spent:.1f} s, {left}")
        end = "\n" if not self.tty or done == self.total else ""
        print(("\r" if self.tty else "") + line, end=end, file=self.stream, flush=True)
