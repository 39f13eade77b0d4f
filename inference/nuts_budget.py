"""nutpie on PyTensor's C path within a budget, Numba when the C path would cost more.

The two ways :mod:`inference.nutpie_compile` offers cost differently. Numba pays a fixed
compile in every process (6-7 s of CPU for a one-parameter coin, more for larger graphs) and
then samples fast; the C path compiles in well under a second on a warm cache but pays a
Python call per leapfrog step (about 40 microseconds), so its cost follows the number of
steps, which nothing cheap predicts before sampling (benchmarks/CHECK_SPEED.md: the coin
samples in 1.5 s, scikit-learn's diabetes regression would take over 190 s).

So ``auto`` (the default of ``BAYESCHECK_NUTS_BACKEND``) samples on the C path first, in the
background, and watches nutpie's progress: once ``WATCH_SECONDS`` of CPU have passed, the
CPU time still needed is projected from the share of draws done so far; when it exceeds
``BUDGET_SECONDS`` (about what the Numba compile of a small model costs), or when the C run
has already used twice the budget, it is abandoned and the model compiled with Numba and
sampled again from the start with the same seed. A wrong guess either way costs at most about
one Numba compile. CPU time rather than wall time, so that a loaded machine does not tip the
decision. The chains run one after another on the C path (``cores=1``): they hold the GIL
for each call anyway, and two threads queueing for it only added system time.
"""

from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass

from .lazy_imports import import_nutpie
from .nutpie_compile import backend_setting, compile_for_nutpie

__all__ = ["BUDGET_SECONDS", "WATCH_SECONDS", "Budgeted", "over_budget", "sample_nutpie_budgeted"]

#: CPU seconds the C path's sampling may be projected to take before Numba is used instead.
BUDGET_SECONDS = 8.0
#: CPU seconds of C sampling watched before a projection is trusted.
WATCH_SECONDS = 1.0

# Models whose C run was abandoned: a retry of the same model goes straight to Numba.
_ABANDONED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass
class Budgeted:
    """Draws and which path gave them.

    Attributes
    ----------
    trace : xarray.DataTree
        nutpie's result.
    backend : str
        ``"c"``, ``"numba"``, or ``"numba (c abandoned after 1.2 s: ...)"``.
    sampling_seconds : float
        Wall time of the kept run's sampling (no compile, no abandoned run).
    abandoned : str or None
        Why the C run was given up (None when it was not).
    """

    trace: object
    backend: str
    sampling_seconds: float
    abandoned: str | None = None


class _Progress:
    """The latest share of draws done, as nutpie's progress callback reports it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.done = 0
        self.total = 0

    def __call__(self, chains) -> None:
        done = sum(int(c.finished_draws) for c in chains)
        total = sum(int(c.total_draws) for c in chains)
        with self._lock:
            self.done, self.total = done, total

    def share(self) -> float:
        with self._lock:
            return self.done / self.total if self.total else 0.0


def over_budget(cpu: float, share: float, budget: float,
                watch: float) -> str | None:
    """Why a C run ``share`` done after ``cpu`` CPU seconds should be abandoned, else None.

    After ``watch`` seconds, when the projected remaining time ``cpu * (1 - share) / share``
    exceeds ``budget``; at any time, when ``cpu`` exceeds twice the budget.
    """
    if cpu >= 2 * budget and share < 1.0:
        return f"{100 * share:.0f} % of the draws after {cpu:.1f} s"
    if cpu < watch:
        return None
    if share <= 0.0:
        return f"no draw finished after {cpu:.1f} s" if cpu >= budget else None
    remaining = cpu * (1.0 - share) / share
    if remaining > budget:
        return f"{remaining:.0f} s more projected from {100 * share:.0f} % done"
    return None


def _finished(sampler) -> bool:
    # nutpie 0.16's is_finished raises TimeoutError while the chains are still running.
    try:
        return bool(sampler.is_finished)
    except TimeoutError:
        return False


def sample_nutpie_budgeted(model, *, draws: int, tune: int, chains: int, seed: int,
                           cores: int, progress_bar: bool, initvals: dict | None = None,
                           budget: float | None = None) -> Budgeted:
    """Sample ``model`` with nutpie on the path ``BAYESCHECK_NUTS_BACKEND`` says.

    ``numba`` and ``c`` sample on that path (the C path with one core, see the module
    docstring); ``auto`` races the C path against ``budget`` and falls back to Numba.
    ``cores`` is used on the Numba path. ``budget`` defaults to ``BUDGET_SECONDS``.
    """
    nutpie = import_nutpie()  # without arviz_plots and matplotlib

    setting = backend_setting()
    kwargs = dict(draws=draws, tune=max(tune, 1), chains=chains, seed=int(seed),
                  save_warmup=False, store_unconstrained=False, progress_bar=progress_bar)

    def numba(why):
        compiled, _ = compile_for_nutpie(model, initvals=initvals, backend="numba")
        began = time.time()
        trace = nutpie.sample(compiled, cores=cores, **kwargs)
        return Budgeted(trace, "numba" if why is None else f"numba ({why})",
                        time.time() - began, why)

    earlier = _ABANDONED.get(model)
    if setting == "numba" or earlier is not None:
        return numba(earlier)
    compiled, _ = compile_for_nutpie(model, initvals=initvals, backend="c")
    began = time.time()
    if setting == "c":
        return Budgeted(nutpie.sample(compiled, cores=1, **kwargs), "c", time.time() - began)

    watched = _Progress()
    sampler = nutpie.sample(compiled, cores=1, blocking=False, progress_callback=watched,
                            progress_rate=100, **kwargs)
    started = time.process_time()
    why = None
    while not _finished(sampler):
        time.sleep(0.05)
        why = over_budget(time.process_time() - started, watched.share(),
                          BUDGET_SECONDS if budget is None else budget, WATCH_SECONDS)
        if why is not None:
            break
    if why is None:
        trace = sampler.wait()
        return Budgeted(trace, "c", time.time() - began)
    sampler.cancel()
    why = f"c abandoned after {time.process_time() - started:.1f} s: {why}"
    _ABANDONED[model] = why
    return numba(why)
