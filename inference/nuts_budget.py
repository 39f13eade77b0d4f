"""nutpie on PyTensor's C path or with Numba, whichever this model's size and run say is cheaper.

The two ways :mod:`bayescheck.inference.nutpie_compile` offers cost differently. Numba pays a fixed
compile (7-19 s of CPU for the examples probed; a later process loads it from disk,
:mod:`bayescheck.inference.numba_cache`) and then evaluates the log
density and gradient 10-60x faster; the C path compiles in 1-3 s on a warm cache but pays a
Python call plus one C thunk per graph node for each leapfrog step (86 microseconds for the
coin, 4.8 ms for the 17-parameter mixture of blobs), so its cost follows the number of steps
times the graph's size. benchmarks/CHECK_SPEED.md has the measurements behind the constants
below.

``auto`` (the default of ``BAYESCHECK_NUTS_BACKEND``) first asks :mod:`bayescheck.inference.numba_cache`
whether this very model (same graph, same data) has its Numba compile on disk: if so, that
is loaded and sampled, and the C path not tried. Otherwise it decides in two stages:

1. **Up front, from the graph's size.** The log density is built (before any rewrite or
   compile) and its apply nodes counted. Above ``MAX_C_NODES`` the C path
   is not tried: per step it costs several times the small graphs', and on an empty cache
   each new op is a g++ run, so compiling such a graph with g++ only to abandon it was the
   cold test suite's extra cost.
2. **While sampling, from the cost per gradient evaluation.** Smaller graphs sample on the C
   path in nutpie's background sampler. Once ``WATCH_SECONDS`` of CPU have passed, the main
   thread projects the CPU still needed as the cost of one evaluation (CPU so far / leapfrog
   steps so far, stable after a fraction of a second) times the evaluations still expected:
   the draws left times the steps per draw of the latest half of the draws done. The first
   tuning draws, before the step size adapts, take the longest trajectories; the earlier
   projection from the share of draws done counted them for the whole run and overestimated
   naive Bayes about 5x. When the projection exceeds what Numba would cost from here (its
   compile, estimated from the graph's size, plus every evaluation at ``NUMBA_SPEEDUP`` times
   the C path's speed), or the run has used twice that, it is abandoned and the model is
   compiled with Numba and sampled again from the start with the same seed.

A C run kept after more than :data:`bayescheck.inference.numba_warmup.MIN_C_SECONDS` of CPU starts a
background Numba compile of the model (:mod:`bayescheck.inference.numba_warmup`), for its next run.

CPU time rather than wall time, so that a loaded machine does not tip the decision. The
chains run one after another on the C path (``cores=1``): they hold the GIL for each call
anyway, and two threads queueing for it only added system time. An abandoned C run is
remembered per model *shape* (:func:`shape_key`: the same graph over data of the same
shapes), so a retry, each simulation of ``calibrate --engine nuts`` and a re-declared model
go straight to Numba.
"""

from __future__ import annotations

import hashlib
import threading
import time
import weakref
from dataclasses import dataclass

from .lazy_imports import import_nutpie
from .numba_cache import is_cached, model_digest, reuse_enabled
from .numba_warmup import MIN_C_SECONDS, start_warmup
from .nutpie_compile import backend_setting, compile_for_nutpie

__all__ = ["MAX_C_NODES", "NUMBA_SPEEDUP", "WATCH_SECONDS", "Budgeted", "GraphSize",
           "graph_size", "numba_seconds", "over_budget", "sample_nutpie_budgeted",
           "too_big_for_c"]

#: Apply nodes of the log density graph above which the C path is not tried.
MAX_C_NODES = 200
#: CPU seconds of a Numba compile: ``NUMBA_BASE_SECONDS + NUMBA_NODE_SECONDS * nodes``.
NUMBA_BASE_SECONDS = 6.0
NUMBA_NODE_SECONDS = 0.04
#: How many times faster Numba evaluates the log density and gradient than the C path.
NUMBA_SPEEDUP = 10.0
#: CPU seconds of C sampling watched before a projection is trusted.
WATCH_SECONDS = 1.0

# C runs abandoned, by shape_key: a model of the same shape goes straight to Numba.
_ABANDONED: dict[str, str] = {}
# graph_size per model object, so that a retry does not count again.
_SIZES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass
class Budgeted:
    """Draws and which path gave them.

    Attributes
    ----------
    trace : xarray.DataTree
        nutpie's result.
    backend : str
        ``"c"``, ``"numba"``, ``"numba (c abandoned after 1.2 s: ...)"`` or
        ``"numba (graph of 900 nodes ...)"``.
    sampling_seconds : float
        Wall time of the kept run's sampling (no compile, no abandoned run).
    abandoned : str or None
        Why the C path was given up or not tried (None when it was used).
    """

    trace: object
    backend: str
    sampling_seconds: float
    abandoned: str | None = None


@dataclass(frozen=True)
class GraphSize:
    """How big a model's log density graph is, and its shape.

    Attributes
    ----------
    nodes : int
        Apply nodes of the log density, before rewrites.
    key : str
        Digest of the graph's ops and their output types (static shapes included) in
        topological order: equal for the same model structure over data of the same shapes,
        whatever the data's values.
    exact : str
        :func:`bayescheck.inference.numba_cache.model_digest`: the values of constants included.
    """

    nodes: int
    key: str
    exact: str


def graph_size(model) -> GraphSize:
    """Count the apply nodes of ``model``'s log density, and key its shape.

    Builds the graph (0.02-0.8 s for the examples; nothing is compiled) and remembers the
    answer per model object.
    """
    known = _SIZES.get(model)
    if known is not None:
        return known
    from pytensor.graph.traversal import io_toposort

    # The log density alone: its gradient has 1.8-2.8x as many nodes and would double the
    # cost of counting (1.3 s instead of 0.6 s for the Asia network).
    nodes = io_toposort(model.value_vars, [model.logp()])
    digest = hashlib.sha1()
    for node in nodes:
        digest.update(f"{node.op}|{[str(o.type) for o in node.outputs]};".encode())
    for rv in model.observed_RVs:  # observed data enter as constants: their shapes count
        digest.update(f"{rv.name}:{model.rvs_to_values[rv].type};".encode())
    size = GraphSize(nodes=len(nodes), key=digest.hexdigest(),
                     exact=model_digest(model, nodes))
    _SIZES[model] = size
    return size


def shape_key(model) -> str:
    """The key under which an abandoned C run of ``model`` is remembered (:class:`GraphSize`)."""
    return graph_size(model).key


def too_big_for_c(nodes: int, max_nodes: int = MAX_C_NODES) -> str | None:
    """Why a graph of ``nodes`` apply nodes goes straight to Numba, else None."""
    if nodes > max_nodes:
        return f"graph of {nodes} nodes > {max_nodes}: c not tried"
    return None


def numba_seconds(nodes: int) -> float:
    """Estimated CPU seconds of compiling a graph of ``nodes`` apply nodes with Numba."""
    return NUMBA_BASE_SECONDS + NUMBA_NODE_SECONDS * nodes


class _Progress:
    """Draws and leapfrog steps done, as nutpie's progress callback reports them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = 0
        self._seen: list[tuple[int, int]] = [(0, 0)]  # (draws, steps), draws increasing

    def __call__(self, chains) -> None:
        done = sum(int(c.finished_draws) for c in chains)
        steps = sum(int(c.total_num_steps) for c in chains)
        with self._lock:
            self.total = sum(int(c.total_draws) for c in chains)
            if done > self._seen[-1][0]:
                self._seen.append((done, steps))

    def state(self) -> tuple[int, int, int, float]:
        """Draws done, total draws, steps done, steps per draw over the latest half."""
        with self._lock:
            done, steps = self._seen[-1]
            total = self.total
            half = next(p for p in reversed(self._seen) if p[0] <= done // 2)
        recent = (steps - half[1]) / (done - half[0]) if done > half[0] else 0.0
        return done, total, steps, recent


def over_budget(cpu: float, *, done: int, total: int, steps: int, recent: float,
                numba: float, watch: float, speedup: float = NUMBA_SPEEDUP) -> str | None:
    """Why a C run should be abandoned for Numba, else None.

    Parameters
    ----------
    cpu : float
        CPU seconds the C run has used.
    done, total : int
        Draws done (tuning included, all chains) and draws in the whole run.
    steps : int
        Leapfrog steps (gradient evaluations) so far.
    recent : float
        Steps per draw over the latest half of the draws done.
    numba : float
        Estimated CPU seconds of the Numba compile (:func:`numba_seconds`).
    watch : float
        CPU seconds before any projection is trusted.
    speedup : float
        How many times cheaper a Numba evaluation is than a C one.

    Returns
    -------
    str or None
        After ``watch`` seconds, a reason when the C run's projected remaining CPU
        (``cpu / steps`` per evaluation, ``(total - done) * recent`` evaluations) exceeds
        Numba's compile plus all the run's evaluations at ``speedup``; at any time, when
        ``cpu`` exceeds twice Numba's compile; None once the run is done.
    """
    if total and done >= total:
        return None
    if cpu >= 2 * numba:
        return f"{done} of {total} draws after {cpu:.1f} s"
    if cpu < watch:
        return None
    if steps <= 0 or done <= 0:
        return f"no draw finished after {cpu:.1f} s" if cpu >= numba else None
    per_step = cpu / steps
    remaining = (total - done) * recent * per_step
    with_numba = numba + (steps + (total - done) * recent) * per_step / speedup
    if remaining > with_numba:
        return (f"{remaining:.0f} s more projected at {1e6 * per_step:.0f} us x "
                f"{recent:.0f} steps a draw > Numba's {with_numba:.0f} s")
    return None


def _finished(sampler) -> bool:
    # nutpie 0.16's is_finished raises TimeoutError while the chains are still running.
    try:
        return bool(sampler.is_finished)
    except TimeoutError:
        return False


def sample_nutpie_budgeted(model, *, draws: int, tune: int, chains: int, seed: int,
                           cores: int, progress_bar: bool, initvals: dict | None = None,
                           budget: float | None = None, warm_up: bool = False) -> Budgeted:
    """Sample ``model`` with nutpie on the path ``BAYESCHECK_NUTS_BACKEND`` says.

    ``numba`` and ``c`` sample on that path (the C path with one core, see the module
    docstring); ``auto`` decides as the module docstring says. ``cores`` is used on the
    Numba path. ``budget`` replaces the estimated Numba compile (:func:`numba_seconds`) that
    the C run's projection is weighed against. ``warm_up``: a model to be sampled again
    (``check``'s): a kept C run of more than :data:`~bayescheck.inference.numba_warmup.MIN_C_SECONDS` of
    CPU starts a background Numba compile of it for its next run, and a Numba compile is kept
    on disk; else (a simulation) neither.
    """
    nutpie = import_nutpie()  # without arviz_plots and matplotlib

    setting = backend_setting()
    kwargs = dict(draws=draws, tune=max(tune, 1), chains=chains, seed=int(seed),
                  save_warmup=False, store_unconstrained=False, progress_bar=progress_bar)

    def numba(why):
        compiled, _ = compile_for_nutpie(model, initvals=initvals, backend="numba",
                                         store=warm_up)
        began = time.time()
        trace = nutpie.sample(compiled, cores=cores, **kwargs)
        return Budgeted(trace, "numba" if why is None else f"numba ({why})",
                        time.time() - began, why)

    if setting == "numba":
        return numba(None)
    size = graph_size(model) if setting == "auto" else None
    if size is not None:
        on_disk = reuse_enabled() and is_cached(size.exact)
        why = (("compiled model on disk: c not tried" if on_disk else None)
               or _ABANDONED.get(size.key) or too_big_for_c(size.nodes, MAX_C_NODES))
        if why is not None:
            return numba(why)
    compiled, _ = compile_for_nutpie(model, initvals=initvals, backend="c")
    began = time.time()
    if size is None:
        return Budgeted(nutpie.sample(compiled, cores=1, **kwargs), "c", time.time() - began)

    numba_cost = numba_seconds(size.nodes) if budget is None else budget
    watched = _Progress()
    sampler = nutpie.sample(compiled, cores=1, blocking=False, progress_callback=watched,
                            progress_rate=100, **kwargs)
    started = time.process_time()
    why = None
    while not _finished(sampler):
        time.sleep(0.05)
        done, total, steps, recent = watched.state()
        why = over_budget(time.process_time() - started, done=done, total=total, steps=steps,
                          recent=recent, numba=numba_cost, watch=WATCH_SECONDS)
        if why is not None:
            break
    if why is None:
        trace = sampler.wait()
        if warm_up and time.process_time() - started >= MIN_C_SECONDS:
            try:  # for the next run of this model; never at the cost of this one
                start_warmup(model, size.exact)
            except Exception:  # noqa: BLE001 - a read-only cache, a full disk, no fork
                pass
        return Budgeted(trace, "c", time.time() - began)
    sampler.cancel()
    why = f"c abandoned after {time.process_time() - started:.1f} s: {why}"
    _ABANDONED[size.key] = why
    return numba(why)
