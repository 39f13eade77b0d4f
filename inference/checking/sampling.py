"""Running NUTS on a PyMC model through nutpie's and PyMC's public API, chains on every core.

With nutpie (the default) the model is compiled once per model object by
``nutpie.compile_pymc_model`` (PyTensor's Numba backend; PyTensor keeps its compiled pieces in
its own cache, ``config.base_compiledir``) and sampled by ``nutpie.sample``; a second sampling
of the same model (``check``'s retry, or each simulation of a calibration with its
``pm.Data`` swapped) samples the same compiled model again, given the current data with the
compiled model's public ``with_data``. The draws are then completed as
``pm.sample(nuts_sampler="nutpie")`` completes them (PyMC's ``patch_nutpie_idata``: observed
and constant data, sampling time), so callers see the DataTree ``pm.sample`` returns.

Any other sampler (``"pymc"``, whose Gibbs steps can move discrete parameters) runs through
``pm.sample(nuts_sampler=...)``.
"""

from __future__ import annotations

import os
import sys
import time
import weakref
from dataclasses import dataclass

import numpy as np
from bayescheck.models.resources import check_sampler_setting, require_draws_memory
from bayescheck.models.spec import ADAPTATIONS

__all__ = ["ADAPTATIONS", "PROGRESS_MS", "SampleResult", "check_adaptation",
           "compiled_for_nutpie", "draws_bar", "sample_nuts", "show_progress_bar"]

# nutpie's compiled models per model object, each with the start values it was compiled for:
# the compile (seconds of Numba) is paid once per model. Weak keys: a model no longer used
# takes its compiled functions with it.
_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass
class SampleResult:
    """Draws and how long they took.

    Attributes
    ----------
    idata : xarray.DataTree
        The draws as ``pm.sample`` returns them (groups ``posterior``, ``sample_stats``,
        ``observed_data``, ...).
    seconds : float
        Wall time of compiling (when not reused) and sampling.
    sampling_seconds : float or None
        Time spent sampling, as the sampler reports it.
    sampler : str
        Which NUTS implementation ran (the posterior's ``inference_library``).
    """

    idata: object
    seconds: float
    sampling_seconds: float | None
    sampler: str


def show_progress_bar(progress: bool, stream=None) -> bool:
    """Whether the sampler may draw its progress bar: asked for, and ``stream`` is a terminal.

    In a log file or a pipe the bar writes box-drawing characters and "0.00 draws/s" lines
    that nobody reads. ``stream`` defaults to ``sys.stderr``.
    """
    stream = sys.stderr if stream is None else stream
    try:
        return bool(progress) and stream.isatty()
    except (AttributeError, ValueError):  # closed or replaced by something without isatty
        return False


#: Milliseconds between two redraws of a check's progress bar.
PROGRESS_MS = 250



def draws_bar(chains: int, stream=None):
    """A callback for ``nutpie.sample``'s ``progress_callback``: draws of every chain as a bar.

    nutpie calls it from a background thread with one ``ChainProgress`` per chain
    (``finished_draws`` and ``total_draws`` count tuning steps and draws); the line is that of
    :class:`~bayescheck.inference.checking.progress.ProgressBar`, with the time left.
    """
    from bayescheck.inference.checking.progress import ProgressBar

    bars: list = []

    def update(chain_progress) -> None:
        total = sum(int(c.total_draws) for c in chain_progress)
        if not bars:
            bars.append(ProgressBar(total, stream, unit="draws"))
        tuning = sum(bool(c.tuning) for c in chain_progress)
        note = f"{chains} chain(s)" + (f", {tuning} tuning" if tuning else "")
        bars[0].update(sum(int(c.finished_draws) for c in chain_progress), note)

    return update


def _same_starts(a: dict | None, b: dict | None) -> bool:
    """The same start values: the same names bound to the very same objects (or both None)."""
    if a is None or b is None:
        return a is b
    return a.keys() == b.keys() and all(a[k] is b[k] for k in a)


def compiled_for_nutpie(model, initvals: dict | None = None):
    """nutpie's compiled model of ``model``, compiled once per model object and start values.

    Parameters
    ----------
    model : pymc.Model
        The declared model.
    initvals : dict, optional
        Where the chains start (variable name -> value, possibly symbolic and seeded so that
        each chain starts elsewhere: see ``models.interface.StartsAtEstimate``), given to
        nutpie as ``initial_points`` with PyMC's U(-1, 1) start jitter switched off
        (``jitter_rvs=set()``). Default: PyMC's initial point with its jitter.

    Returns
    -------
    nutpie.compile_pymc.CompiledPyMCModel
        With the current values of the model's ``pm.Data`` (nutpie copies them at compile
        time; a model whose data were swapped with ``pm.set_data`` since is given them with
        ``with_data``).
    """
    import nutpie

    entries = _COMPILED.setdefault(model, [])
    compiled = next((c for starts, c in entries if _same_starts(starts, initvals)), None)
    if compiled is None:
        kwargs = {} if initvals is None else {"initial_points": initvals, "jitter_rvs": set()}
        compiled = nutpie.compile_pymc_model(model, backend="numba", **kwargs)
        # the dict is kept, not copied: its values' identity is what _same_starts compares
        entries.append((initvals, compiled))
    for var in model.data_vars:
        try:
            compiled = compiled.with_data(**{var.name: var.get_value()})
        except KeyError:  # data the log density and the draws do not read
            pass
    return compiled


def sample_nuts(model, *, draws: int = 1000, tune: int = 1000, chains: int = 4, seed: int = 0,
                cores: int | None = None, sampler: str = "nutpie",
                progress: bool = False, initvals: dict | None = None,
                adaptation: str = "diag") -> SampleResult:
    """Sample a PyMC model with NUTS.

    Parameters
    ----------
    model : pymc.Model
        The declared model.
    draws, tune, chains, seed : int
        Draws kept per chain, tuning steps per chain, number of chains, random seed.
    cores : int, optional
        Chains run at once; default ``min(chains, os.cpu_count())`` (PyMC's own default of
        half the CPUs runs chains one after another on a 2-core machine).
    sampler : {"nutpie", "pymc", "numpyro", "blackjax"}
        NUTS implementation. ``"nutpie"`` compiles once per model
        (:func:`compiled_for_nutpie`); the others go through ``pm.sample``.
    progress : bool
        Show a progress bar of the draws of every chain, with the time left (only when
        stderr is a terminal, see :func:`show_progress_bar`; nutpie: :func:`draws_bar`).
    initvals : dict, optional
        Where the chains start (variable name -> value, possibly symbolic and seeded so that
        each chain starts elsewhere: see ``models.interface.StartsAtEstimate``). PyMC's own
        start jitter, U(-1, 1) on every unconstrained coordinate, is then switched off (for
        nutpie ``jitter_rvs=set()``, for PyMC's NUTS ``init="adapt_diag"``), so the chains
        start where these values say. Default: PyMC's initial point with its jitter.
    adaptation : {"diag", "low_rank"}
        The mass matrix nutpie adapts: diagonal (every sampler's default), or diagonal plus
        a low-rank correction that follows strongly correlated directions (nutpie's
        ``adaptation="low_rank"``; the other samplers offer only the diagonal here).

    Returns
    -------
    SampleResult

    Raises
    ------
    bayescheck.models.resources.TooLarge
        ``draws``, ``tune`` or ``chains`` above its limit, or draws this machine cannot hold
        (nuts-rs would abort the process).
    ValueError
        An ``adaptation`` other than those, or ``"low_rank"`` with a sampler other than nutpie.
    """
    for name, value in (("draws", draws), ("tune", tune), ("chains", chains)):
        check_sampler_setting(name, value)
    check_adaptation(adaptation, sampler)
    cores = cores or max(1, min(chains, os.cpu_count() or 1))
    started = time.perf_counter()
    if sampler == "nutpie":
        idata = _sample_nutpie(model, draws=draws, tune=tune, chains=chains, seed=seed,
                               cores=cores, progress=progress, initvals=initvals,
                               adaptation=adaptation)
    else:
        import pymc as pm

        require_draws_memory(sum(np.size(v) for v in model.initial_point().values()),
                             draws, chains)
        start = {}
        if initvals is not None:
            start = {"initvals": initvals}
            if sampler == "pymc":
                start["init"] = "adapt_diag"
        with model:
            idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=cores,
                              random_seed=seed, nuts_sampler=sampler,
                              progressbar=show_progress_bar(progress),
                              compute_convergence_checks=False, **start)
    seconds = time.perf_counter() - started
    attrs = idata.posterior.attrs
    return SampleResult(idata=idata, seconds=seconds,
                        sampling_seconds=attrs.get("sampling_time"),
                        sampler=str(attrs.get("inference_library", sampler)))


def check_adaptation(adaptation: str, sampler: str) -> None:
    """Refuse a mass-matrix adaptation that ``sampler`` does not offer (ValueError)."""
    if adaptation not in ADAPTATIONS:
        raise ValueError(f"adaptation must be one of {', '.join(ADAPTATIONS)}, "
                         f"got {adaptation!r}")
    if adaptation != "diag" and sampler != "nutpie":
        raise ValueError(f"adaptation {adaptation!r} needs the nutpie sampler "
                         f"(sampler is {sampler!r})")


def _sample_nutpie(model, *, draws, tune, chains, seed, cores, progress, initvals,
                   adaptation):
    """nutpie's draws, completed as ``pm.sample(nuts_sampler="nutpie")`` completes them."""
    import nutpie
    from pymc.backends.arviz import patch_nutpie_idata

    compiled = compiled_for_nutpie(model, initvals)
    # nuts-rs allocates the draws up front and aborts the process when it cannot
    require_draws_memory(max(compiled.n_dim, compiled.n_expanded), draws, chains)
    began = time.time()
    # nuts-rs needs at least one tuning step (PyMC's wrapper raises tune=0 to 1 as well)
    bar = draws_bar(chains) if show_progress_bar(progress) else None
    idata = nutpie.sample(compiled, draws=draws, tune=max(tune, 1), chains=chains,
                          cores=cores, seed=int(seed), save_warmup=False,
                          store_unconstrained=False, progress_bar=False,
                          progress_callback=bar, progress_rate=PROGRESS_MS,
                          adaptation=adaptation)
    patch_nutpie_idata(idata, model, sampling_time=time.time() - began)
    return idata
