"""What a NUTS run will cost, said before it starts, and refused where it cannot finish.

The estimate is made from the compiled model the sampler will run (nutpie's, compiled once per
model, see :func:`~bayescheck.inference.checking.sampling.compiled_for_nutpie`): its number of
free parameters, and the cost of one evaluation of the log density and its gradient, timed at
the chains' start point. NUTS spends almost all of its time in such evaluations, one per
leapfrog step, so a run of ``draws + tune`` iterations per chain, ``chains`` chains on ``cores``
cores, takes about::

    ceil(chains / cores) x (draws + tune) x leapfrog steps per iteration x gradient cost

with :data:`TYPICAL_LEAPFROG_STEPS` steps per iteration (a well-adapted sampler on a
well-conditioned posterior takes 3 to 31; a badly conditioned one up to 1023). The figure is
an order of magnitude, said up front on stderr, and a run whose estimate exceeds the time
limit (``--max-hours``, default :data:`DEFAULT_MAX_HOURS`) is refused before it starts.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from bayescheck.models.resources import TooLarge, draws_bytes, readable_bytes

__all__ = ["DEFAULT_MAX_HOURS", "TYPICAL_LEAPFROG_STEPS", "SamplingCost", "gradient_seconds",
           "require_affordable", "sampling_cost"]

#: Leapfrog steps per NUTS iteration assumed by the estimate (a tree depth of about 4).
TYPICAL_LEAPFROG_STEPS = 15
#: The longest sampling a check starts without being told to (``--max-hours``).
DEFAULT_MAX_HOURS = 6.0
#: Time spent timing the gradient: enough calls for a stable median, within this budget.
_TIMING_BUDGET_SECONDS = 0.2


@dataclass(frozen=True)
class SamplingCost:
    """The size of a NUTS run and its estimated time.

    Attributes
    ----------
    parameters : int
        Free (unconstrained) parameters the sampler moves.
    stored : int
        Values kept per draw (parameters on their own scale and deterministics).
    gradient_seconds : float or None
        One evaluation of the log density and its gradient (None: not measured, for a
        sampler other than nutpie).
    draws, tune, chains, cores : int
        The run's settings: draws and tuning steps per chain, chains, chains run at once.
    """

    parameters: int
    stored: int
    gradient_seconds: float | None
    draws: int
    tune: int
    chains: int
    cores: int

    @property
    def seconds(self) -> float | None:
        """Estimated sampling time (None without a measured gradient)."""
        if self.gradient_seconds is None:
            return None
        rounds = math.ceil(self.chains / max(self.cores, 1))
        return (rounds * (self.draws + self.tune) * TYPICAL_LEAPFROG_STEPS
                * self.gradient_seconds)

    @property
    def memory(self) -> int:
        """Bytes of the kept draws."""
        return draws_bytes(self.stored, self.draws, self.chains)

    def describe(self) -> str:
        """One line for stderr: the size, the gradient's cost and the time estimate."""
        size = (f"{self.parameters:,} free parameter(s), {self.draws:,} draws + "
                f"{self.tune:,} tuning steps x {self.chains} chain(s) on {self.cores} core(s), "
                f"draws {readable_bytes(self.memory)}")
        if self.seconds is None:
            return f"{size}; gradient not timed"
        return (f"{size}; one gradient {_duration(self.gradient_seconds)}: about "
                f"{_duration(self.seconds)} of sampling (at {TYPICAL_LEAPFROG_STEPS} leapfrog "
                f"steps per iteration)")


def _duration(seconds: float) -> str:
    """``seconds`` in a readable unit (``"12 us"``, ``"3.4 s"``, ``"2.5 h"``)."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


def gradient_seconds(logp_and_gradient, point) -> float:
    """Median time of ``logp_and_gradient(point)``, after one call that is not counted.

    Called as often as fits in a fifth of a second (at least three times, at most 50).
    """
    logp_and_gradient(point)  # the first call may still compile or page in data
    times: list[float] = []
    began = time.perf_counter()
    while len(times) < 3 or (len(times) < 50
                             and time.perf_counter() - began < _TIMING_BUDGET_SECONDS):
        t = time.perf_counter()
        logp_and_gradient(point)
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def sampling_cost(model, *, draws: int, tune: int, chains: int, cores: int,
                  sampler: str = "nutpie", initvals: dict | None = None) -> SamplingCost:
    """The cost of sampling ``model`` with these settings.

    Parameters
    ----------
    model : pymc.Model
        The declared model.
    draws, tune, chains, cores : int
        The sampler's settings.
    sampler : str
        With ``"nutpie"`` the gradient is timed on the compiled model the sampler will run
        (compiled here once; sampling reuses it). Others are not timed.
    initvals : dict, optional
        The chains' start values, as given to the sampler.

    Returns
    -------
    SamplingCost
    """
    if sampler == "nutpie":
        from bayescheck.inference.checking.sampling import compiled_for_nutpie

        compiled = compiled_for_nutpie(model, initvals)
        point = compiled.initial_point_func(0)
        seconds = gradient_seconds(compiled.logp_func, point)
        parameters, stored = int(compiled.n_dim), int(compiled.n_expanded)
    else:
        import numpy as np

        values = model.initial_point()
        parameters = stored = int(sum(np.size(v) for v in values.values()))
        seconds = None
    return SamplingCost(parameters=parameters, stored=max(stored, parameters),
                        gradient_seconds=seconds, draws=int(draws), tune=int(tune),
                        chains=int(chains), cores=int(cores))


def require_affordable(cost: SamplingCost, *, max_hours: float | None = DEFAULT_MAX_HOURS,
                       what: str = "the check") -> None:
    """Refuse a run whose estimated time is above ``max_hours``.

    Parameters
    ----------
    cost : SamplingCost
        From :func:`sampling_cost`.
    max_hours : float or None
        The limit (None or ``inf``: none).
    what : str
        The run, for the message.

    Raises
    ------
    bayescheck.models.resources.TooLarge
        Naming the estimate, the limit, the option that raises it and what makes it shorter.
    """
    seconds = cost.seconds
    if max_hours is None or seconds is None or seconds <= max_hours * 3600:
        return
    raise TooLarge(f"{what} would sample for about {_duration(seconds)} ({cost.describe()}), "
                   f"above the limit of {max_hours:g} h; declare the data through fewer cells "
                   f"or rows (a smaller model, or a sample of the rows), lower draws, tune or "
                   f"chains, or raise the limit with --max-hours (max_hours= in Python; inf: "
                   f"no limit)", key="--max-hours")
